#!/bin/bash
export OPENBLAS_NUM_THREADS=1
F=/work/wt-gnum/tests/fixtures/acasxu
for rep in 4 5 6 7 8; do for np in 1_1:prop_2 1_7:prop_2 1_1:prop_3; do n=${np%%:*}; p=${np##*:}
 for b in old gnum; do
  echo "$b $n $p $rep $(/work/wt-$b/build/lgelu verify $F/ACASXU_run2a_${n}_batch_2000.onnx --vnnlib $F/$p.vnnlib --timeout 60 -j 1 --json | /usr/bin/python3 -c 'import sys,json; r=json.loads(sys.stdin.read()); print(r["verdict"], r["seconds"], r.get("bab_nodes"))')"
 done; done; done
