#!/bin/bash
# benchmarks/VERIFY.md "Refined intermediate bounds": the measurements, one heavy job at a time,
# every run on one core (taskset -c 1), one thread, OPENBLAS_NUM_THREADS=1.
#   refine_bench.sh WORKDIR NEW_LGELU OLD_LGELU FIXTURES [PEERS]
# WORKDIR holds relu.lgnet (VERIFY.md "Residual networks": train, then `lgelu relu`), res.onnx
# (`lgelu export relu.lgnet`), fc4/fc6.lgnet and .onnx (`lgelu train --arch 784,256×4|6,10 --act
# relu --epochs 2 --seed 2 --threads 1`, then `lgelu export`) and props/ (`lgelu encode --index I
# --eps E --format vnnlib`). PEERS (optional): where the peers bundle's install_peers.sh put
# alpha-beta-CROWN, with ABCROWN_RUN the bundle's run_abcrown.sh; without them the peer's rows
# are skipped.
set -u
W=$1 N=$2 O=$3 F=$4 PEERS=${5:-}
cd "$W" || exit 2
export OPENBLAS_NUM_THREADS=1
# chains and fixtures: old (main) and new, auto, one run (chain.txt)
for np in acasxu/ACASXU_run2a_1_1_batch_2000.onnx:acasxu/prop_1.vnnlib acasxu/ACASXU_run2a_1_1_batch_2000.onnx:acasxu/prop_2.vnnlib \
          acasxu/ACASXU_run2a_1_1_batch_2000.onnx:acasxu/prop_3.vnnlib acasxu/ACASXU_run2a_1_1_batch_2000.onnx:acasxu/prop_4.vnnlib \
          acasxu/ACASXU_run2a_1_7_batch_2000.onnx:acasxu/prop_1.vnnlib acasxu/ACASXU_run2a_1_7_batch_2000.onnx:acasxu/prop_2.vnnlib \
          acasxu/ACASXU_run2a_1_7_batch_2000.onnx:acasxu/prop_3.vnnlib acasxu/ACASXU_run2a_1_7_batch_2000.onnx:acasxu/prop_4.vnnlib \
          vnncomp/mnist-net_256x2.onnx:vnncomp/prop_1_0.05.vnnlib vnncomp/mnist-net_256x2.onnx:vnncomp/prop_2_0.05.vnnlib \
          vnncomp/mnist-net_256x2.onnx:vnncomp/prop_3_0.05.vnnlib vnncomp/mnist-net_256x2.onnx:vnncomp/prop_7_0.03.vnnlib; do
  n=${np%%:*}; p=${np##*:}
  for b in old new; do
    bin=$O; [ $b = new ] && bin=$N
    o=$(taskset -c 1 "$bin" verify "$F/$n" --vnnlib "$F/$p" --timeout 60 -j 1 --json 2>/dev/null | tail -1)
    echo "$b $(basename "$n" .onnx) $(basename "$p" .vnnlib) $(echo "$o" | python3 -c 'import sys,json; r=json.loads(sys.stdin.read()); print(r["verdict"], round(r["seconds"],3), r.get("bab_nodes"))')" >> chain.txt
  done
done
# the residual net's 15 open images: --refine on (30 s), and the root bound without refinement
for i in 4 8 11 12 37 45 52 63 70 71 75 84 90 91 96; do
  taskset -c 1 "$N" verify relu.lgnet --index $i --eps 0.01 --timeout 30 -j 1 --refine on --verbose --json > res_on_$i.json 2> res_on_$i.err
  taskset -c 1 "$N" verify relu.lgnet --index $i --eps 0.01 --timeout 30 -j 1 --refine off --bab-nodes 1 --solver none --verbose > /dev/null 2> res_root_off_$i.err
done
# the mnist_fc-style set (fc_auto.txt, fc_on.txt)
for n in fc4 fc6; do for i in $(seq 0 9); do
  for m in auto on; do
    line=$(taskset -c 1 "$N" verify $n.onnx --vnnlib props/${n}_$i.vnnlib --timeout 30 -j 1 --json --refine $m 2>/dev/null)
    echo "${n}_$i $line" >> fc_$m.txt
  done
done; done
# alpha-beta-CROWN (its mnist_fc configuration as run_abcrown.sh sets it, input shape 784), same core
[ -n "$PEERS" ] && [ -f "${ABCROWN_RUN:-}" ] || exit 0
mkdir -p props_ab
for f in props/*.vnnlib; do # its VNN-LIB reader takes (<= Y_a Y_b), not (<= (- Y_a Y_b) 0)
  sed -E 's/\(<= \(- (Y_[0-9]+) (Y_[0-9]+)\) ?0\)/(<= \1 \2)/g' "$f" > props_ab/$(basename "$f")
done
for f in props_ab/fc*.vnnlib props_ab/res_*.vnnlib; do
  n=$(basename "$f" .vnnlib); net=${n%_*}; [ "$net" = res ] || net=$net
  r=$(ABCROWN_EXTRA="--input_shape -1 784" PEERS=$PEERS CPU=1 bash "$ABCROWN_RUN" $net.onnx "$f" 30 mnist_fc)
  echo "$n $r" >> ab.txt
done
