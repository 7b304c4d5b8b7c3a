#!/usr/bin/env bash
# deep_direct.sh — the study's `direct` mode (the smooth net verified as it
# is) on the gelu_swap networks of benchmarks/full.ini, one command for a
# before/after comparison.
#
# Runs the instances the study runs for one architecture's two gelu_swap
# nets (seeds 1 and 2): test images 0..4, ε 0.01 and 0.02, the study's
# settings (study/run.c: lg_study_verify_settings: --timeout 10, one
# branch-and-bound thread, default seed), so the 20 rows reproduce the
# `direct` rows of out/full/results.jsonl. Prints one line per instance and
# the decided counts and median seconds.
#
# usage: benchmarks/deep_direct.sh LGELU [NETS_DIR] [ARCH] [-- extra verify options]
#   NETS_DIR  the study's network cache (default out/full/nets)
#   ARCH      deep (784,256,256,256,256,10; default) or shallow (784,256,256,10)
# env: TIMEOUT (10), INPUTS (5), EPS ("0.01 0.02"), HASHES_OVERRIDE (the two nets' hashes in
#      networks.csv instead of ARCH's gelu_swap ones, e.g. another regime)
set -euo pipefail
LG=${1:?usage: deep_direct.sh LGELU [NETS_DIR] [ARCH] [-- options]}
NETS=${2:-out/full/nets}
ARCH=${3:-deep}
shift $(( $# < 3 ? $# : 3 ))
[ "${1:-}" = "--" ] && shift
TIMEOUT=${TIMEOUT:-10}
INPUTS=${INPUTS:-5}
EPS=${EPS:-0.01 0.02}
case $ARCH in
  deep) HASHES="7b7c1ed7bee096a0 7b7c21d7bee09bb9" ;;     # networks.csv: gelu_swap seeds 1, 2
  shallow) HASHES="543c222a8d882708 543c252a8d882c21" ;;
  *) echo "ARCH: deep or shallow" >&2; exit 2 ;;
esac
HASHES=${HASHES_OVERRIDE:-$HASHES}
TMP=$(mktemp)
trap 'rm -f "$TMP"' EXIT
seed=0
for h in $HASHES; do
  seed=$((seed + 1))
  for ((i = 0; i < INPUTS; i++)); do
    for e in $EPS; do
      "$LG" verify "$NETS/$h.lgnet" --index "$i" --eps "$e" --timeout "$TIMEOUT" -j 1 --json "$@" 2>/dev/null \
        | sed "s/^{/{\"net_seed\":$seed,\"input\":$i,\"eps\":$e,/" >> "$TMP" || true
    done
  done
done
python3 - "$TMP" <<'PY'
import json, sys, collections
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
for r in rows:
    print(f"seed {r['net_seed']} input {r['input']} eps {r['eps']:<5} {r['verdict']:9} {r['seconds']:7.2f} s"
          f"  bab_nodes {r.get('bab_nodes', 0) or 0:6}  {r.get('reason', '')}")
v = collections.Counter(r['verdict'] for r in rows)
t = sorted(r['seconds'] for r in rows)
med = (t[(len(t) - 1) // 2] + t[len(t) // 2]) / 2 if t else 0
print(f"decided {v['robust'] + v['violated']}/{len(rows)} (robust {v['robust']}, violated {v['violated']}, "
      f"unknown {len(rows) - v['robust'] - v['violated']}), median {med:.2f} s")
PY
