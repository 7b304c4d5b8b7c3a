#!/bin/bash
# peer.sh: lgelu (auto) and alpha-beta-CROWN's complete verifier, interleaved per instance on one core.
#
#   ABCROWN_RUN=.../run_abcrown.sh PEERS=... LGELU=.../lgelu bash peer.sh LIST OUTDIR
#
# LIST: one instance per line, "KEY NET.onnx PROP.vnnlib CONFIG [abcrown extra args...]" (paths relative to
# LIST's folder). Per instance: `lgelu verify NET --vnnlib PROP --timeout 30 -j 1 --json` (its last line
# appended to OUTDIR/lgelu.txt as "KEY JSON"), then ABCROWN_RUN NET PROP 30 CONFIG (its `result,wall_s` to
# OUTDIR/ab.txt as "KEY result,wall_s"); lgelu runs first on even lines, alpha-beta-CROWN on odd ones.
# ONLY=ab runs the peer alone (a second configuration on instances of a first run).
# Both pinned to core CPU (default 1), one thread; `uptime` after every instance goes to OUTDIR/load.txt.
# The peer is not part of this repository: ABCROWN_RUN points at its runner (a script that prints
# `sat|unsat|timeout|error,wall_s` for NET PROP TIMEOUT CONFIG, as run_abcrown.sh does).
set -u
LIST=$(realpath "${1:?usage: peer.sh LIST OUTDIR}"); OUT=$(realpath -m "${2:?}")
: "${ABCROWN_RUN:?set ABCROWN_RUN to the peer runner}" "${LGELU:?set LGELU to the lgelu binary}"
CPU=${CPU:-1}; TO=${TO:-30}
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
mkdir -p "$OUT"; cd "$(dirname "$LIST")"
n=0
while read -r key net prop cfg extra; do
  [ -z "$key" ] || [ "${key#\#}" != "$key" ] && continue
  run_l() {
    l=$(taskset -c "$CPU" "$LGELU" verify "$net" --vnnlib "$prop" --timeout "$TO" -j 1 --json </dev/null 2>/dev/null | tail -1)
    echo "$key $l" >> "$OUT/lgelu.txt"
  }
  run_a() {
    r=$(ABCROWN_EXTRA="$extra" CPU=$CPU LOGDIR="$OUT/ablog" bash "$ABCROWN_RUN" "$net" "$prop" "$TO" "$cfg" </dev/null)
    echo "$key $r" >> "$OUT/ab.txt"
  }
  if [ "${ONLY:-}" = ab ]; then run_a
  elif [ $((n % 2)) -eq 0 ]; then run_l; run_a; else run_a; run_l; fi
  echo "$key $(date -u +%H:%M:%S) $(uptime | sed 's/.*load/load/')" >> "$OUT/load.txt"
  n=$((n + 1))
done < "$LIST"
echo "done $(date -u)" >> "$OUT/load.txt"
