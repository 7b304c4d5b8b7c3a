#!/usr/bin/env bash
# Install every Debian package lgelu needs (idempotent, noninteractive).
# Run as root on Debian 12. Skips apt entirely when everything is present.
set -euo pipefail
PKGS=(build-essential cmake pkg-config
      libopenblas-dev zlib1g-dev libz3-dev libglpk-dev check
      libgmp-dev libmpfr-dev
      dataset-fashion-mnist
      libonnx-dev protobuf-c-compiler libprotobuf-c-dev
      z3 cvc5 glpk-utils python3 python3-onnx python3-numpy
      python3-venv python3-pip python3-setuptools python3-wheel python3-pytest python3-torch
      gnuplot-nox valgrind
      libjansson-dev libinih-dev slurm-wlm munge
      clang-14 libfuzzer-14-dev libclang-rt-14-dev)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#PKGS[@]} packages present" >&2
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "setup: missing packages: ${missing[*]}; run this script as root" >&2
  exit 1
fi
echo "setup: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
