#!/usr/bin/env bash
# Configure and build lgelu into build/ (Release, warnings as errors).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DLG_WERROR=ON >/dev/null
cmake --build build -j"$(nproc)"
