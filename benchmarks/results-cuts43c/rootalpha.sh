#!/bin/bash
# Root bound of ReLU branch and bound with more intermediate α-CROWN steps (one node, no back-end):
# how far the single-neuron relaxation goes on the open residual images.
# Usage: rootalpha.sh LGELU NET OUTDIR "IMAGES" "STEPS"
L=$1; NET=$2; OUT=$3; mkdir -p "$OUT"
export OPENBLAS_NUM_THREADS=1
for i in $4; do
  for s in $5; do
    nice taskset -c 1 "$L" verify "$NET" --index "$i" --eps 0.01 --timeout 600 -j 1 --solver none \
      --bab-nodes 1 --bab-root-alpha "$s" --verbose > /dev/null 2> "$OUT/root_${i}_a$s.err"
    echo "$i $s $(grep -o 'root bound [^,]*' "$OUT/root_${i}_a$s.err" | head -1) $(grep -o 'made [0-9]* neurons stable ([0-9.]* s)' "$OUT/root_${i}_a$s.err")"
  done
done
