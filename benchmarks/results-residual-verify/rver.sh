#!/bin/bash
# Residual ReLU net of VERIFY.md "Residual networks": test images FROM..TO at ε 0.01, 30 s,
# one thread, one JSON line per run with the run's tag in front.
#   rver.sh NET OUT FROM TO TAG=BINARY[:EXTRA OPTIONS] ...
# Every image runs each TAG in turn (old and new interleaved: the same load for both).
set -u
net=$1 out=$2 from=$3 to=$4
shift 4
export OPENBLAS_NUM_THREADS=1
for i in $(seq "$from" "$to"); do
  for spec in "$@"; do
    tag=${spec%%=*} rest=${spec#*=}
    bin=${rest%%:*} extra=""
    [ "$bin" != "$rest" ] && extra=${rest#*:}
    # shellcheck disable=SC2086
    line=$("$bin" verify "$net" --index "$i" --eps 0.01 --timeout 30 -j 1 --json $extra 2>/dev/null)
    echo "$tag $i $line" >> "$out"
  done
done
