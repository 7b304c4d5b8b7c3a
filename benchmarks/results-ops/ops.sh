#!/bin/bash
# benchmarks/VERIFY.md "Third-party ops": PyTorch models of benchmarks/ops_torch.py, test images
# FROM..TO at ε EPS, 30 s, one thread, each mode in turn per image; one JSON line per run.
#   ops.sh DIR OUT EPS FROM TO MODE...      (MODE: auto, glpk, z3 — the --solver pipelines)
set -u
dir=$1 out=$2 eps=$3 from=$4 to=$5
shift 5
export OPENBLAS_NUM_THREADS=1
L=${LGELU:-build/lgelu}
for net in mobile unet; do
  for i in $(seq "$from" "$to"); do
    for mode in "$@"; do
      line=$("$L" verify "$dir/$net.onnx" --index "$i" --eps "$eps" --timeout 30 -j 1 --solver "$mode" --json 2>/dev/null)
      echo "$net $mode $i $line" >> "$out"
    done
  done
done
