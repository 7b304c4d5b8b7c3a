#!/usr/bin/env bash
# check_gate.sh — the target for `lgelu check`: an annealed net
# passes at a threshold its direct-swap counterpart fails, both from .npy
# inputs. Trains two 784-256-256-10 nets on Fashion-MNIST with the same
# budget (λ-GELU annealed to λ = 160 from 25% of the steps; plain GELU),
# substitutes ReLU, writes the first N test images to X.npy/y.npy with
# numpy, and runs `lgelu check` on both at the threshold D.
#   usage: benchmarks/check_gate.sh [LGELU] [OUT_DIR] [EPOCHS] [N] [D] [EPS]
set -euo pipefail
LG=${1:-build/lgelu}
OUT=${2:-out/check_gate}
EPOCHS=${3:-2}
N=${4:-200}
D=${5:-0.25}
EPS=${6:-0.01}
mkdir -p "$OUT"
"$LG" train --act lgelu --epochs "$EPOCHS" --anneal-start 0.25 --lambda-target 160 -o "$OUT/annealed.lgnet" >"$OUT/train_annealed.log"
"$LG" train --act gelu --epochs "$EPOCHS" -o "$OUT/gelu.lgnet" >"$OUT/train_gelu.log"
"$LG" relu "$OUT/annealed.lgnet" -o "$OUT/annealed_relu.lgnet" >/dev/null
"$LG" relu "$OUT/gelu.lgnet" -o "$OUT/gelu_relu.lgnet" >/dev/null
/usr/bin/python3 - "$OUT" "$N" <<'PY'
import gzip, sys, numpy as np
out, n = sys.argv[1], int(sys.argv[2])
d = '/usr/share/datasets/fashion-mnist/'
with gzip.open(d + 't10k-images-idx3-ubyte.gz') as f:
    X = np.frombuffer(f.read(), np.uint8, offset=16).reshape(-1, 784)
with gzip.open(d + 't10k-labels-idx1-ubyte.gz') as f:
    y = np.frombuffer(f.read(), np.uint8, offset=8)
np.save(out + '/X.npy', (X[:n] / 255.0).astype(np.float32))
np.save(out + '/y.npy', y[:n].astype(np.int64))
PY
for net in annealed gelu; do
  set +e
  "$LG" check "$OUT/${net}_relu.lgnet" --ref "$OUT/$net.lgnet" --inputs "$OUT/X.npy" --eps "$EPS" \
    --max-deviation "$D" --no-class-change --json >"$OUT/check_$net.json" 2>/dev/null
  rc=$?
  set -e
  acc=$(grep -o 'final test accuracy: [0-9.]*%' "$OUT/train_$net.log")
  echo "$net ($acc): exit $rc  $(cat "$OUT/check_$net.json")"
done
