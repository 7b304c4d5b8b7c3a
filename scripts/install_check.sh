#!/usr/bin/env bash
# Install lgelu into a temporary prefix and build examples/verify_net.c
# against the installed tree as an embedding user would: through pkg-config
# and through find_package(lgelu), each against the shared and the static
# library, then run each build on the mnist_fc and ACAS Xu fixtures.
# Usage: scripts/install_check.sh [BUILD_DIR] (default build; must be built).
set -euo pipefail
cd "$(dirname "$0")/.."
B=${1:-build}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
P=$T/prefix
cmake --install "$B" --prefix "$P" >/dev/null
for f in bin/lgelu include/lgelu/lgelu.h lib/pkgconfig/lgelu.pc lib/pkgconfig/lgelu-static.pc \
  lib/cmake/lgelu/lgelu-config.cmake; do
  [ -e "$P/$f" ] || { echo "install_check: $P/$f missing" >&2; exit 1; }
done
ls "$P"/lib*/liblgelu.so "$P"/lib*/liblgelu.a >/dev/null
# only the public header is installed
[ "$(find "$P/include" -type f | wc -l)" -eq 1 ] || { echo "install_check: internal headers installed" >&2; exit 1; }
export PKG_CONFIG_PATH="$P/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
# shellcheck disable=SC2046
cc -std=c11 -Wall -Wextra -Werror examples/verify_net.c -o "$T/verify_net_pc" $(pkg-config --cflags --libs lgelu) \
  -Wl,-rpath,"$P/lib"
# static through pkg-config: lgelu-static names liblgelu.a, its dependencies come from its Requires
# (the same flags with and without --static); the program must not need liblgelu.so
for flags in "--libs" "--static --libs"; do
  # shellcheck disable=SC2046,SC2086
  cc -std=c11 -Wall -Wextra -Werror examples/verify_net.c -o "$T/verify_net_pc_static" \
    $(pkg-config --cflags lgelu-static) $(pkg-config $flags lgelu-static)
  if ldd "$T/verify_net_pc_static" | grep -q liblgelu; then
    echo "install_check: pkg-config $flags lgelu-static links liblgelu.so" >&2; exit 1
  fi
done
# and runs with the shared library out of reach
mkdir "$T/hidden" && mv "$P"/lib*/liblgelu.so* "$T/hidden/"
out=$("$T/verify_net_pc_static" tests/fixtures/vnncomp/mnist-net_256x2.onnx tests/fixtures/vnncomp/prop_2_0.05.vnnlib 2>&1 || true)
if ! echo "$out" | grep -q "prop_2_0.05.vnnlib: violated"; then
  echo "$out" >&2; echo "install_check: the static build does not run without liblgelu.so" >&2; exit 1
fi
mv "$T/hidden"/liblgelu.so* "$(dirname "$(ls "$P"/lib*/liblgelu.a)")/"
cmake -S examples -B "$T/ex" -DCMAKE_PREFIX_PATH="$P" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$T/ex" -j2 >/dev/null
F=tests/fixtures
for exe in "$T/verify_net_pc" "$T/verify_net_pc_static" "$T/ex/verify_net" "$T/ex/verify_net_static"; do
  out=$("$exe" "$F/vnncomp/mnist-net_256x2.onnx" "$F/vnncomp/prop_2_0.05.vnnlib")
  echo "$out" | grep -q "prop_2_0.05.vnnlib: violated" || { echo "$out" >&2; echo "install_check: $exe: expected violated" >&2; exit 1; }
  out=$("$exe" "$F/acasxu/ACASXU_run2a_1_1_batch_2000.onnx" "$F/acasxu/prop_1.vnnlib")
  echo "$out" | grep -q "prop_1.vnnlib: robust" || { echo "$out" >&2; echo "install_check: $exe: expected robust" >&2; exit 1; }
done
"$P/bin/lgelu" --version >/dev/null 2>&1 || "$P/bin/lgelu" help >/dev/null
echo "install_check: installed tree OK (pkg-config and find_package, shared and static)"
