#!/usr/bin/env bash
# Side by side on the instances gen.py wrote: lgelu verify (auto, one thread) and, when PEERS is
# set, alpha-beta-CROWN's own VNN-COMP 2023 vit configuration through the peers' run_abcrown.sh
# (RUN_ABCROWN: its path). Same core (CPU, default 0), one run each, TIMEOUT seconds (default 30).
# Usage: benchmarks/vit_vnncomp/run.sh DIR LGELU [TIMEOUT]  -> DIR/results.csv
# Columns: onnx,vnnlib,lgelu_result,lgelu_s,abcrown_result,abcrown_s (sat = violated,
# unsat = robust, unknown/timeout = undecided).
set -u
DIR=${1:?usage: run.sh DIR LGELU [TIMEOUT]}; LG=$(realpath "${2:?}"); TO=${3:-30}; CPU=${CPU:-0}
cd "$DIR" || exit 2
echo "onnx,vnnlib,lgelu_result,lgelu_s,abcrown_result,abcrown_s" > results.csv
while IFS=, read -r onnx prop _; do
  [ -n "$onnx" ] || continue
  t0=$(date +%s.%N)
  out=$(OPENBLAS_NUM_THREADS=1 taskset -c "$CPU" timeout $((TO + 5)) "$LG" verify "$onnx" --vnnlib "$prop" \
        --timeout "$TO" -j 1 2>/dev/null | head -1)
  t1=$(date +%s.%N)
  case "$out" in robust) r=unsat ;; violated) r=sat ;; *) r=unknown ;; esac
  lg_s=$(echo "$t1 - $t0" | bc)
  ab="-,-"
  if [ -n "${PEERS:-}" ]; then
    ab=$(PEERS=$PEERS CPU=$CPU bash "${RUN_ABCROWN:?}" "$onnx" "$prop" "$TO" vit | tail -1)
  fi
  echo "$onnx,$prop,$r,$lg_s,$ab" | tee -a results.csv
done < instances.csv
