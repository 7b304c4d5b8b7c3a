#!/usr/bin/env bash
# VNN-COMP tool interface: prepare_instance.sh v1 CATEGORY ONNX VNNLIB
# Checks that the network and the property can be read (plain or .gz) and
# fit each other; nothing is cached, so run_instance.sh needs no state.
# Exit 0: ready; non-zero: the instance will be skipped.
set -uo pipefail
VERSION_STRING=v1
if [ "$#" -ne 4 ] || [ "$1" != "$VERSION_STRING" ]; then
  echo "usage: $0 $VERSION_STRING CATEGORY ONNX VNNLIB (got: $*)" >&2
  exit 2
fi
CATEGORY=$2
ONNX=$3
VNNLIB=$4
LGELU=${LGELU:-"$(cd "$(dirname "$0")/.." && pwd)/build/lgelu"}
echo "preparing lgelu for category '$CATEGORY', network '$ONNX', property '$VNNLIB'"
# reading the pair is the whole preparation: `encode` parses the network and
# the property and fails (naming the problem) when they do not fit. A smooth
# network (sigmoid, gelu, ...) has no LP encoding and is verified directly:
# `verify` then reads the pair (a one-second bounds pass; every verdict,
# unknown included, exits 0; a file it cannot read or that does not fit exits
# non-zero)
if ! "$LGELU" encode "$ONNX" --vnnlib "$VNNLIB" --format lp -o /dev/null 2>/dev/null; then
  "$LGELU" verify "$ONNX" --vnnlib "$VNNLIB" --solver none --no-attack --bab none --alpha-steps 0 --timeout 1 >/dev/null || exit 1
fi
exit 0
