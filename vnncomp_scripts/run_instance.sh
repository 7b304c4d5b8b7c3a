#!/usr/bin/env bash
# VNN-COMP tool interface:
#   run_instance.sh v1 CATEGORY ONNX VNNLIB RESULTS_FILE TIMEOUT
# Verifies the instance with `lgelu verify NET --vnnlib P --timeout T -o
# RESULTS_FILE` and leaves in RESULTS_FILE one of: unsat, sat followed by the
# counterexample ((X_i v) ... (Y_j v)), unknown, timeout. The file is written
# atomically; a run that fails writes `unknown`. The tool stops itself about
# one second after TIMEOUT (the competition kills it later). Bad usage (the
# argument count, the version, a TIMEOUT that is not a positive number of
# seconds) exits 2 without running anything.
set -uo pipefail
VERSION_STRING=v1
if [ "$#" -ne 6 ] || [ "$1" != "$VERSION_STRING" ]; then
  echo "usage: $0 $VERSION_STRING CATEGORY ONNX VNNLIB RESULTS_FILE TIMEOUT (got: $*)" >&2
  exit 2
fi
if ! [[ "$6" =~ ^([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][+-]?[0-9]+)?$ ]] ||
   ! awk -v t="$6" 'BEGIN { exit !(t + 0 > 0 && t + 0 <= 1e7) }'; then
  echo "$0: TIMEOUT: expected a number of seconds in (0, 1e7], got '$6'" >&2
  exit 2
fi
CATEGORY=$2
ONNX=$3
VNNLIB=$4
RESULTS_FILE=$5
TIMEOUT=$6
LGELU=${LGELU:-"$(cd "$(dirname "$0")/.." && pwd)/build/lgelu"}
echo "running lgelu on category '$CATEGORY', network '$ONNX', property '$VNNLIB', timeout $TIMEOUT s"
# keep a second for start-up and writing the result
LIMIT=$(awk -v t="$TIMEOUT" 'BEGIN { l = t - 1; if (l < 0.5 * t) l = 0.5 * t; printf "%.3f", l }')
if ! "$LGELU" verify "$ONNX" --vnnlib "$VNNLIB" --timeout "$LIMIT" -o "$RESULTS_FILE"; then
  echo unknown > "$RESULTS_FILE"
fi
exit 0
