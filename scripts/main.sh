#!/usr/bin/env bash
# The first README command: install, build, run the end-to-end study on
# Fashion-MNIST (train λ-GELU with annealing, GELU, learned-λ and ReLU nets;
# substitute ReLU; certify the deviation; verify with Z3 and GLPK; compare
# with the direct swap; print the table). Extra arguments go to study.py,
# e.g. `bash scripts/main.sh --epochs 10 --n 100`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
python3 benchmarks/study.py --lgelu build/lgelu --out out/study "$@"
