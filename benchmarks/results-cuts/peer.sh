#!/bin/bash
# peer.sh: lgelu (auto, main 01d351c binary) and alpha-beta-CROWN 8250d5f (mnistfc.yaml, --complete_verifier bab)
# on fc4/fc6 images 0-49 at eps 0.02, 30 s, core 1, one thread, interleaved per instance, one run.
cd /tmp/c43
export OPENBLAS_NUM_THREADS=1
for i in $(seq 0 49); do for n in fc4 fc6; do
  l=$(taskset -c 1 ./lgelu_base verify $n.onnx --vnnlib props/${n}_$i.vnnlib --timeout 30 -j 1 --json 2>/dev/null | tail -1)
  echo "lgelu ${n}_$i $l" >> peer_lgelu.txt
  r=$(ABCROWN_EXTRA="--input_shape -1 784" PEERS=/tmp/peers-r43 CPU=1 LOGDIR=/tmp/c43/abl bash /work/shared/peers/run_abcrown.sh $n.onnx props_ab/${n}_$i.vnnlib 30 mnist_fc)
  echo "${n}_$i $r" >> peer_ab.txt
done; done
echo done $(date -u) >> peer_ab.txt
