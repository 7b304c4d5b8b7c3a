#!/usr/bin/env bash
# deep_bab.sh — branch and bound on deep ReLU networks:
# before/after numbers for β-CROWN and filtered smart branching.
#
# Trains (once, cached in OUT) Fashion-MNIST ReLU nets 784-256x4-10 and
# 784-256x6-10 (2 epochs, one thread), then verifies N test images of each
# at an ε where CROWN leaves hundreds of unstable ReLUs, with ReLU branch
# and bound given the whole time (--bab relu), one thread, TIMEOUT seconds;
# and the four mnist_fc fixture properties (tests/fixtures/vnncomp). Every
# variant of an instance runs at the same time as the others, so a loaded
# machine slows them alike. Prints decided counts, BaB nodes and nodes/s per
# variant and writes OUT/results.jsonl.
#
# usage: benchmarks/deep_bab.sh LGELU_AFTER [LGELU_BEFORE] [OUT]
# env:   N (instances per net, default 8), TIMEOUT (30), EPS4 (0.012),
#        EPS6 (0.02), DATA (IDX folder; lgelu's default otherwise)
set -euo pipefail
AFTER=${1:?usage: deep_bab.sh LGELU_AFTER [LGELU_BEFORE] [OUT]}
BEFORE=${2:-}
OUT=${3:-deep_bab_results}
N=${N:-8}
TIMEOUT=${TIMEOUT:-30}
EPS4=${EPS4:-0.012}
EPS6=${EPS6:-0.02}
HERE=$(cd "$(dirname "$0")/.." && pwd)
FIX=$HERE/tests/fixtures/vnncomp
mkdir -p "$OUT"
DATA_OPT=()
[ -n "${DATA:-}" ] && DATA_OPT=(--data "$DATA")

train() { # name arch seed
  [ -f "$OUT/$1.lgnet" ] || "$AFTER" train "${DATA_OPT[@]}" --arch "$2" --act relu --epochs 2 --threads 1 \
    --seed "$3" -o "$OUT/$1.lgnet" > "$OUT/$1.train.log"
}
train fm256x4 784,256,256,256,256,10 1
train fm256x6 784,256,256,256,256,256,256,10 2

# variants: name|binary|extra options
VARIANTS=("after-fsb|$AFTER|" "after-babsr|$AFTER|--bab-branch babsr")
[ -n "$BEFORE" ] && VARIANTS=("before|$BEFORE|" "${VARIANTS[@]}")
RES=$OUT/results.jsonl
: > "$RES"

run_all() { # instance-name, then the verify arguments
  local inst=$1; shift
  local pids=() k=0 q
  for v in "${VARIANTS[@]}"; do
    IFS='|' read -r name bin extra <<< "$v"
    # shellcheck disable=SC2086
    ( "$bin" verify "$@" --bab relu -j 1 --timeout "$TIMEOUT" --json $extra 2>/dev/null \
        | sed "s/^{/{\"variant\":\"$name\",\"inst\":\"$inst\",/" > "$OUT/.part.$k" ) &
    pids+=($!)
    k=$((k + 1))
  done
  wait "${pids[@]}" || true
  for ((q = 0; q < k; q++)); do cat "$OUT/.part.$q" >> "$RES"; rm -f "$OUT/.part.$q"; done
}

for ((i = 0; i < N; i++)); do
  run_all "fm256x4-i$i" "$OUT/fm256x4.lgnet" "${DATA_OPT[@]}" --index "$i" --eps "$EPS4"
  run_all "fm256x6-i$i" "$OUT/fm256x6.lgnet" "${DATA_OPT[@]}" --index "$i" --eps "$EPS6"
done
for p in "$FIX"/prop_*.vnnlib; do
  run_all "mnist_fc-$(basename "$p" .vnnlib)" "$FIX/mnist-net_256x2.onnx" --vnnlib "$p"
done

python3 - "$RES" <<'PY'
import json, sys, collections
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
by = collections.OrderedDict()
for r in rows:
    grp = 'mnist_fc' if r['inst'].startswith('mnist_fc') else r['inst'].split('-')[0]
    by.setdefault((grp, r['variant']), []).append(r)
print(f"{'set':10} {'variant':12} {'n':>3} {'robust':>6} {'violated':>8} {'unknown':>7} {'bab nodes':>9} {'wall s':>7} {'nodes/s':>8} {'median s':>8}")
for (grp, var), rs in by.items():
    v = collections.Counter(r['verdict'] for r in rs)
    nodes = sum(r.get('bab_nodes', 0) or 0 for r in rs)
    secs = sum(r['seconds'] for r in rs)
    wall = sorted(r['seconds'] for r in rs)
    med = wall[len(wall) // 2]
    print(f"{grp:10} {var:12} {len(rs):3d} {v['robust']:6d} {v['violated']:8d} {len(rs)-v['robust']-v['violated']:7d} "
          f"{nodes:9d} {secs:7.1f} {nodes / secs if secs > 0 else 0:8.1f} {med:8.2f}")
PY
