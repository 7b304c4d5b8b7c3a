#!/bin/bash
# fcon.sh: the fc instances auto does not decide by bounds or attack (from peer_lgelu.txt so far),
# --bab-cuts on (new binary) vs off (new binary, default) interleaved, 30 s, core 0
cd /tmp/c43
export OPENBLAS_NUM_THREADS=1
for k in $(python3 - <<'PY'
import json
for line in open('peer_lgelu.txt'):
    p=line.split(' ',2)
    r=json.loads(p[2])
    if r['method'] not in ('bounds','attack','clean input'): print(p[1])
PY
); do
  n=${k%_*}
  for b in off on; do
    [ $b = off ] && grep -q "unknown" <(grep " $k " peer_lgelu.txt) && continue  # open ones: off = the peer run's row
    o=$(taskset -c 0 ./lgelu_cuts verify $n.onnx --vnnlib props/$k.vnnlib --timeout 30 -j 1 --json --verbose --bab-cuts $b 2>fcon_${k}_$b.err | tail -1)
    echo "$b $k $(echo "$o" | python3 -c 'import sys,json; r=json.loads(sys.stdin.read()); print(r["verdict"], round(r["seconds"],3), r["method"], r.get("bab_nodes"))') $(grep -h 'cuts learnt' fcon_${k}_$b.err)" >> fcon.txt
  done
done
echo "fcon done $(date -u)" >> progress.txt
