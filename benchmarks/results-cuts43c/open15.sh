#!/bin/bash
# The 15 images auto leaves open on the residual net: one auto run each, 30 s, verbose log kept.
export OPENBLAS_NUM_THREADS=1
L=${L:-/work/wt-cuts43c/build/lgelu}; NET=${NET:-/tmp/cuts43c/relu.lgnet}; OUT=${OUT:-/tmp/cuts43c/open15}
mkdir -p "$OUT"
for i in 4 8 11 12 37 45 52 63 70 71 75 84 90 91 96; do
  line=$(nice taskset -c 1 "$L" verify "$NET" --index $i --eps 0.01 --timeout 30 -j 1 --solver auto --json --verbose 2> "$OUT/auto_$i.err")
  echo "auto $i $line"
done
