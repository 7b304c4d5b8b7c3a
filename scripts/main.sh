#!/usr/bin/env bash
# The first README command: install, build, run the main study job (benchmarks/small.ini:
# train ReLU, GELU and annealed λ-GELU networks on Fashion-MNIST; substitute ReLU; certify
# the deviation; verify every instance in the modes auto, z3, glpk, smooth and direct), write the
# report (out/study/REPORT.md, CSVs, plots) and print the summary table.
# Arguments: an optional grid file (default benchmarks/small.ini), then options for
# `lgelu study` (default: --out out/study -j 2). Re-running resumes where it stopped.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
grid=benchmarks/small.ini
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then grid=$1; shift; fi
out=out/study
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do [ "${args[$i]}" = --out ] && out=${args[$((i + 1))]}; done
[ $# -eq 0 ] && args=(-j 2)
start=$(date +%s)
build/lgelu study "$grid" --out "$out" "${args[@]}"
build/lgelu study-report "$out"
echo "main job: $(($(date +%s) - start)) s for study + report; report in $out/REPORT.md"
