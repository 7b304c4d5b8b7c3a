#!/usr/bin/env bash
# The second README command: install, build, run the whole test suite —
# the Release build and an AddressSanitizer + UBSan build of the same suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
(cd build && ctest --output-on-failure -j2)
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DLG_SANITIZE=ON -DLG_WERROR=ON >/dev/null
cmake --build build-asan -j"$(nproc)"
(cd build-asan && LG_TEST_QUICK=1 ASAN_OPTIONS=detect_leaks=1 ctest --output-on-failure -j2)
# Reliability: valgrind memcheck over the CLI's main paths, and
# each parser fuzzed for a short bounded time (LG_FUZZ_SECONDS, default 15 s).
bash scripts/valgrind.sh build
bash scripts/fuzz.sh "${LG_FUZZ_SECONDS:-15}"
bash scripts/install_check.sh build
bash scripts/python_check.sh build
