#!/bin/bash
# meas.sh: cuts measurements on core 0 (the peer comparison runs on core 1)
cd /tmp/c43
export OPENBLAS_NUM_THREADS=1
echo "fuzz start $(date -u)" >> progress.txt
(cd /work/wt-cuts43 && taskset -c 0 /tmp/c43/soundfuzz_cuts --seed 43 --hours 0.1 --timeout 1 --cuts on > /tmp/c43/fuzz_cuts.txt 2>&1)
echo "fuzz done $(date -u)" >> progress.txt
for i in 4 8 11 12 37 45 52 63 70 71 75 84 90 91 96; do
  taskset -c 0 ./lgelu_cuts verify relu.lgnet --index $i --eps 0.01 --timeout 30 -j 1 --solver auto --bab-cuts on --verbose --json > res_cuts_$i.json 2> res_cuts_$i.err
done
echo "residual done $(date -u)" >> progress.txt
