#!/bin/bash
# chain.sh: chains and fixtures, old (main 01d351c) vs new (cuts43, default = cuts off) vs new --bab-cuts on,
# interleaved, one run, core 0; then same_verdicts.sh old vs new
cd /tmp/c43
export OPENBLAS_NUM_THREADS=1
F=/work/wt-cuts43/tests/fixtures
for np in acasxu/ACASXU_run2a_1_1_batch_2000.onnx:acasxu/prop_1.vnnlib acasxu/ACASXU_run2a_1_1_batch_2000.onnx:acasxu/prop_2.vnnlib acasxu/ACASXU_run2a_1_1_batch_2000.onnx:acasxu/prop_3.vnnlib acasxu/ACASXU_run2a_1_1_batch_2000.onnx:acasxu/prop_4.vnnlib acasxu/ACASXU_run2a_1_7_batch_2000.onnx:acasxu/prop_1.vnnlib acasxu/ACASXU_run2a_1_7_batch_2000.onnx:acasxu/prop_2.vnnlib acasxu/ACASXU_run2a_1_7_batch_2000.onnx:acasxu/prop_3.vnnlib acasxu/ACASXU_run2a_1_7_batch_2000.onnx:acasxu/prop_4.vnnlib vnncomp/mnist-net_256x2.onnx:vnncomp/prop_1_0.05.vnnlib vnncomp/mnist-net_256x2.onnx:vnncomp/prop_2_0.05.vnnlib vnncomp/mnist-net_256x2.onnx:vnncomp/prop_3_0.05.vnnlib vnncomp/mnist-net_256x2.onnx:vnncomp/prop_7_0.03.vnnlib; do
  n=${np%%:*}; p=${np##*:}
  for b in old new on; do
    bin=./lgelu_base; extra=; [ $b != old ] && bin=./lgelu_cuts; [ $b = on ] && extra="--bab-cuts on"
    o=$(taskset -c 0 $bin verify $F/$n --vnnlib $F/$p --timeout 60 -j 1 --json $extra 2>/dev/null | tail -1)
    echo "$b $(basename $n .onnx) $(basename $p .vnnlib) $(echo "$o" | python3 -c 'import sys,json; r=json.loads(sys.stdin.read()); print(r["verdict"], round(r["seconds"],3), r.get("bab_nodes"))')" >> chain.txt
  done
done
echo "chain done $(date -u)" >> progress.txt
(cd /work/wt-cuts43 && LG_SAME_DIR=/tmp/c43/same taskset -c 0 bash benchmarks/same_verdicts.sh /tmp/c43/lgelu_base /tmp/c43/lgelu_cuts > /tmp/c43/same.txt 2>&1)
echo "same done $(date -u)" >> progress.txt
