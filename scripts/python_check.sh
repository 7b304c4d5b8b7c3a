#!/usr/bin/env bash
# `pip install ./python` into a fresh venv (offline: Debian's setuptools,
# numpy, torch and pytest through --system-site-packages) and run the Python
# tests there against the built liblgelu and lgelu executable.
# Usage: scripts/python_check.sh [BUILD_DIR] (default build; must be built).
set -euo pipefail
cd "$(dirname "$0")/.."
R=$PWD
B=$(cd "${1:-build}" && pwd)
PY=python3; [ -x /usr/bin/python3 ] && PY=/usr/bin/python3   # Debian's, not a pyenv shim
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
"$PY" -m venv --system-site-packages "$T/venv"
# from a copy, so that setuptools' build/ and egg-info stay out of the source tree
cp -r "$R/python" "$T/src"
rm -rf "$T/src/build" "$T/src"/*.egg-info
"$T/venv/bin/pip" install -q --no-build-isolation --no-deps --no-index "$T/src"
export LGELU_LIB="$B/liblgelu.so" LGELU_CLI="$B/lgelu" LGELU_FIXTURES="$R/tests/fixtures"
# from an empty directory, so that `import lgelu` is the installed package
cd "$T"
"$T/venv/bin/python" -c "import lgelu; assert lgelu.__file__.startswith('$T/venv'), lgelu.__file__"
"$T/venv/bin/python" -m pytest -q -p no:cacheprovider "$R/python/tests"
