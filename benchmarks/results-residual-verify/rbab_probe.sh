#!/bin/bash
# The root's bound after the root tightening and the root node's alpha/beta steps (the
# "root bound" line of --verbose), one line per image: rbab_probe.sh OUT BINARY "OPTIONS" IMAGES...
# (rbab_root.txt: rate 0.1 = main's code with that --verbose line, rate 0.5 = LG_BAB_ROOT_ALPHA_LR)
export OPENBLAS_NUM_THREADS=1
out=$1 bin=$2 extra=$3; shift 3
for i in "$@"; do
  e=$($bin verify relu.lgnet --index $i --eps 0.01 --timeout 60 -j 1 --json --verbose --bab relu --solver none \
      --bab-nodes 1 $extra 2>&1 >/dev/null | grep -E "root" | tr '\n' ' ')
  echo "$i [$extra] $e" >> "$out"
done
