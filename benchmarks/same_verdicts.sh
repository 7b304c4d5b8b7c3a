#!/usr/bin/env bash
# Same verdicts, methods and node counts from two lgelu binaries on the
# fixtures (ACAS Xu, mnist_fc, the conv net, the max-pool nets, two
# third-party ResNets, a ReLU ViT), every run deterministic: --timeout 0,
# --seed 1, branch and bound capped by --bab-nodes, --solver none except for
# a few small max-pool cases with the back-ends.
#
#   benchmarks/same_verdicts.sh OLD_LGELU NEW_LGELU     (from the repository root)
#
# prints one line per differing case and "identical" or "N differ"; exit 1
# when any case differs. `run_cases` alone (CASES_ONLY=1 ... NEW_LGELU OUT)
# runs one binary, for timing: CASES_ONLY=1 benchmarks/same_verdicts.sh - BIN OUT
set -euo pipefail
PY=/usr/bin/python3
ROOT=$(cd "$(dirname "$0")/.." && pwd)
F=$ROOT/tests/fixtures
W=${LG_SAME_DIR:-$(mktemp -d)}
export OPENBLAS_NUM_THREADS=1

prepare() {
    [ -f "$W/ready" ] && return
    "$PY" "$ROOT/tests/onnx_resnet_make.py" "$W" >/dev/null
    "$PY" - "$F" "$W" <<'PYEOF'
import sys, numpy as np
F, W = sys.argv[1], sys.argv[2]
X = np.abs(np.load(F + '/maxpool/X.npy').astype(np.float64))
for i in range(3):
    np.save('%s/pool%d.npy' % (W, i), X[i])
    np.save('%s/tiny%d.npy' % (W, i), X[i][:4])
for n in ['resnet_torch', 'resnet_vnn']:
    v = np.abs(np.array([float(t) for t in open('%s/%s.txt' % (W, n)).readline().split()]))
    np.save('%s/%s.npy' % (W, n), v)
r = np.random.default_rng(3)
for i in range(2):
    np.save('%s/vit%d.npy' % (W, i), r.random(784))
PYEOF
    "$1" relu "$F/vit/tiny_vit.lgnet" -o "$W/vit_relu.lgnet" >/dev/null
    touch "$W/ready"
}

run_cases() { # BIN OUT
    local B=$1 OUT=$2 SOLVER=none
    : >"$OUT"
    run() { "$B" verify "$@" --json --timeout 0 --seed 1 --solver $SOLVER 2>/dev/null | head -c 4000 >>"$OUT" || true; echo >>"$OUT"; }
    for p in 1 2 3 4; do run "$F/acasxu/ACASXU_run2a_1_1_batch_2000.onnx" --vnnlib "$F/acasxu/prop_$p.vnnlib" --bab-nodes 2000; done
    run "$F/acasxu/ACASXU_run2a_1_7_batch_2000.onnx" --vnnlib "$F/acasxu/prop_3.vnnlib" --bab-nodes 2000
    for v in "$F"/conv/*.vnnlib; do run "$F/conv/NN_rul_small_window_20.onnx" --vnnlib "$v" --bab-nodes 2000; done
    for v in prop_1_0.05 prop_2_0.05 prop_3_0.05 prop_7_0.03; do
        run "$F/vnncomp/mnist-net_256x2.onnx" --vnnlib "$F/vnncomp/$v.vnnlib" --bab-nodes 500
    done
    for n in relu_pool conv_pool gelu_pool; do for i in 0 1 2; do for e in 0.02 0.1 0.3; do
        run "$F/maxpool/$n.onnx" --input "$W/pool$i.npy" --eps $e --bab-nodes 2000
    done; done; done
    for i in 0 1 2; do run "$F/maxpool/tiny_pool.onnx" --input "$W/tiny$i.npy" --eps 0.3 --bab-nodes 2000; done
    for n in resnet_torch resnet_vnn; do for e in 0.002 0.01 0.05; do
        run "$W/$n.onnx" --input "$W/$n.npy" --eps $e --bab-nodes 300
    done; done
    SOLVER=auto
    for i in 0 1; do
        run "$F/maxpool/tiny_pool.onnx" --input "$W/tiny$i.npy" --eps 0.3 --bab-nodes 200
        run "$F/maxpool/relu_pool.onnx" --input "$W/pool$i.npy" --eps 0.05 --bab-nodes 200
    done
    SOLVER=none
    for i in 0 1; do for e in 0.0001 0.002 0.01; do
        run "$W/vit_relu.lgnet" --input "$W/vit$i.npy" --eps $e --bab-nodes 100
    done; done
}

if [ "${CASES_ONLY:-0}" = 1 ]; then
    prepare "$2"
    run_cases "$2" "$3"
    exit 0
fi
prepare "$1" # the old binary writes the fixtures' ReLU ViT: a file both binaries read
run_cases "$1" "$W/old.jsonl"
run_cases "$2" "$W/new.jsonl"
"$PY" - "$W/old.jsonl" "$W/new.jsonl" <<'PYEOF'
import json, sys
from collections import Counter
def load(p):
    rows = []
    for l in open(p):
        l = l.strip()
        if not l:
            continue
        d = json.loads(l)
        rows.append({k: v for k, v in d.items() if not k.startswith('seconds')})
    return rows
a, b = load(sys.argv[1]), load(sys.argv[2])
n = sum(x != y for x, y in zip(a, b)) + abs(len(a) - len(b))
for x, y in zip(a, b):
    if x != y:
        print('differs:', x.get('instance'), {k: (x.get(k), y.get(k)) for k in set(x) | set(y) if x.get(k) != y.get(k)})
print('%d cases; verdicts %s; bab nodes %d' % (len(a), dict(Counter(d['verdict'] for d in a)),
                                               sum(d.get('bab_nodes', 0) for d in a)))
print('identical' if n == 0 else '%d differ' % n)
sys.exit(1 if n else 0)
PYEOF
