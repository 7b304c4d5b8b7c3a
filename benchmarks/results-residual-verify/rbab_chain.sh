#!/bin/bash
# interleaved old/new (./old/lgelu, ./new/lgelu) on the fixtures: OUT [REPS]; rows "bin net prop rep verdict seconds bab bab_nodes"
export OPENBLAS_NUM_THREADS=1
F=/work/wt-rbab/tests/fixtures
out=$1; reps=${2:-1}
for rep in $(seq $reps); do
 for np in acasxu/ACASXU_run2a_1_1_batch_2000.onnx:acasxu/prop_1.vnnlib acasxu/ACASXU_run2a_1_1_batch_2000.onnx:acasxu/prop_2.vnnlib acasxu/ACASXU_run2a_1_1_batch_2000.onnx:acasxu/prop_3.vnnlib acasxu/ACASXU_run2a_1_1_batch_2000.onnx:acasxu/prop_4.vnnlib acasxu/ACASXU_run2a_1_7_batch_2000.onnx:acasxu/prop_1.vnnlib acasxu/ACASXU_run2a_1_7_batch_2000.onnx:acasxu/prop_3.vnnlib vnncomp/mnist-net_256x2.onnx:vnncomp/prop_1_0.05.vnnlib vnncomp/mnist-net_256x2.onnx:vnncomp/prop_2_0.05.vnnlib vnncomp/mnist-net_256x2.onnx:vnncomp/prop_3_0.05.vnnlib vnncomp/mnist-net_256x2.onnx:vnncomp/prop_7_0.03.vnnlib; do
  n=${np%%:*}; p=${np##*:}
  for b in old new; do
   o=$(./$b/lgelu verify $F/$n --vnnlib $F/$p --timeout 60 -j 1 --json 2>/dev/null | tail -1)
   echo "$b $(basename $n .onnx) $(basename $p .vnnlib) $rep $(echo "$o" | python3 -c 'import sys,json; r=json.loads(sys.stdin.read()); print(r["verdict"], round(r["seconds"],3), r.get("bab"), r.get("bab_nodes"))')" >> $out
  done
 done
done
