#!/usr/bin/env bash
# VNN-COMP tool interface: install_tool.sh v1
# Installs lgelu's Debian dependencies (scripts/setup.sh, needs root when
# packages are missing) and builds build/lgelu (Release).
set -euo pipefail
TOOL_NAME=lgelu
VERSION_STRING=v1
if [ "$#" -ne 1 ] || [ "$1" != "$VERSION_STRING" ]; then
  echo "usage: $0 $VERSION_STRING (got: $*)" >&2
  exit 1
fi
cd "$(dirname "$0")/.."
echo "installing $TOOL_NAME"
bash scripts/setup.sh
bash scripts/build.sh
build/lgelu --version
