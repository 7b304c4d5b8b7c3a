#!/usr/bin/env bash
# VNN-COMP tool interface: prepare_instance.sh v1 CATEGORY ONNX VNNLIB
# Checks that the network and the property can be read (plain or .gz) and
# fit each other; nothing is cached, so run_instance.sh needs no state.
# Exit 0: ready; non-zero: the instance will be skipped.
set -uo pipefail
VERSION_STRING=v1
if [ "$#" -ne 4 ] || [ "$1" != "$VERSION_STRING" ]; then
  echo "usage: $0 $VERSION_STRING CATEGORY ONNX VNNLIB (got: $*)" >&2
  exit 1
fi
CATEGORY=$2
ONNX=$3
VNNLIB=$4
LGELU=${LGELU:-"$(cd "$(dirname "$0")/.." && pwd)/build/lgelu"}
echo "preparing lgelu for category '$CATEGORY', network '$ONNX', property '$VNNLIB'"
# reading the pair is the whole preparation: `encode` parses the network and
# the property and fails (naming the problem) when they do not fit
"$LGELU" encode "$ONNX" --vnnlib "$VNNLIB" --format lp -o /dev/null || exit 1
exit 0
