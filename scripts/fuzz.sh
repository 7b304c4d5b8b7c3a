#!/usr/bin/env bash
# Fuzz lgelu's parsers with libFuzzer (clang-14, ASan + UBSan).
#
#   scripts/fuzz.sh [--seed] [SECONDS] [PARSER...]
#
# Builds the harnesses in build-fuzz/ (-DLG_FUZZ=ON), then runs each PARSER
# (default: all: idx netfile onnx vnnlib vnnlib_assign npy npy_dataset inputs grid) for
# SECONDS (default 60) of wall time, LG_FUZZ_JOBS (default: the core count)
# side by side. Seeds are read from
# fuzz/corpus/<parser>/ (tracked, small); new inputs go to the working corpus
# build-fuzz/corpus/<parser>/ (kept between runs, so coverage accumulates).
# A crash, leak, sanitizer report, timeout (> 10 s per input) or an input
# needing more than 2 GB is written to build-fuzz/crashes/<parser>/ and makes
# the script exit 1 after all parsers ran. Every run appends a line
#   date  parser  seconds  executions  exec/s  crashes
# to build-fuzz/fuzz-stats.tsv (benchmarks/FUZZING.md's figures are sums over it).
#
# --seed regenerates fuzz/corpus/*/gen_* (small networks, IDX pairs, .npy
# files written by numpy, input vector files) and
# copies the real files of tests/fixtures into the seed corpora, then exits.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
B=$ROOT/build-fuzz

seed=0
if [ "${1:-}" = "--seed" ]; then seed=1; shift; fi
SECS=${1:-60}
if [ $# -gt 0 ]; then shift; fi

if [ -z "${LG_FUZZ_NOBUILD:-}" ]; then  # set it to run what is built (e.g. two runs side by side)
  CC=${LG_FUZZ_CC:-clang-14} cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLG_FUZZ=ON >/dev/null
  cmake --build "$B" -j2 --target fuzz_all fuzz_make_seeds >/dev/null
fi

if [ $seed -eq 1 ]; then
  for p in idx netfile onnx vnnlib vnnlib_assign npy npy_dataset inputs grid; do mkdir -p fuzz/corpus/$p; done
  "$B/fuzz/fuzz_make_seeds" fuzz/corpus
  PY=python3; [ -x /usr/bin/python3 ] && PY=/usr/bin/python3   # Debian's, with python3-numpy
  "$PY" fuzz/make_npy_seeds.py fuzz/corpus
  F=tests/fixtures
  cp $F/acasxu/ACASXU_run2a_1_1_batch_2000.onnx fuzz/corpus/onnx/acasxu_1_1.onnx
  for f in $F/acasxu/prop_*.vnnlib; do cp "$f" fuzz/corpus/vnnlib/acasxu_$(basename "$f"); done
  # assignment files: two leading bytes pick n_in, n_out (lg_fuzz_vnnlib_assign)
  printf '\x04\x01sat\n((X_0 0.5)\n(X_1 -1)\n(X_2 1e-3)\n(X_3 2.5e+1)\n(Y_0 0.25))\n' >fuzz/corpus/vnnlib_assign/small.txt
  printf '\x01\x02((X_0 0.0) (Y_0 1.0) (Y_1 -2))' >fuzz/corpus/vnnlib_assign/noheader.txt
  { printf '\x10\x0a'; head -c 400 $F/vnncomp/prop_1_0.05.counterexample; } >fuzz/corpus/vnnlib_assign/mnist_head.txt
  cp benchmarks/*.ini fuzz/corpus/grid/
  du -sh fuzz/corpus/*
  exit 0
fi

parsers=("$@")
if [ ${#parsers[@]} -eq 0 ]; then
  for f in "$B"/fuzz/fuzz_*; do
    n=$(basename "$f"); n=${n#fuzz_}
    [ "$n" = make_seeds ] || parsers+=("$n")
  done
fi

mkdir -p "$B/logs"
fuzz_one() { # parser → exit 0 when clean, 1 on a finding
  local p=$1 exe=$B/fuzz/fuzz_$1
  mkdir -p "$B/corpus/$p" "$B/crashes/$p" "fuzz/corpus/$p"
  local dict=()
  [ -f "fuzz/$p.dict" ] && dict=(-dict="fuzz/$p.dict")
  local log=$B/logs/$p.$(date -u +%Y%m%dT%H%M%S).$$.log  # one per run (runs may go side by side)
  local before after new rc=0 execs rate
  before=$(ls "$B/crashes/$p" | wc -l)
  ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1 \
    "$exe" -max_total_time="$SECS" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$B/crashes/$p/" "${dict[@]}" "$B/corpus/$p" "fuzz/corpus/$p" >"$log" 2>&1 || rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  after=$(ls "$B/crashes/$p" | wc -l)
  new=$((after - before))
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$(date -u +%FT%TZ)" "$p" "$SECS" "${execs:-0}" "${rate:-0}" "$new" >>"$B/fuzz-stats.tsv"
  echo "fuzz: $p: ${execs:-0} executions in ${SECS} s (${rate:-0}/s), $new new crash file(s), exit $rc"
  if [ $rc -ne 0 ] || [ $new -gt 0 ]; then
    echo "fuzz: $p FAILED; log $log, inputs in $B/crashes/$p/:" >&2
    grep -E 'ERROR|SUMMARY|runtime error' "$log" | head -5 >&2 || true
    return 1
  fi
  return 0
}

for p in "${parsers[@]}"; do
  [ -x "$B/fuzz/fuzz_$p" ] || { echo "fuzz: no harness fuzz_$p (known: $(ls "$B/fuzz" | grep -v make_seeds | tr '\n' ' '))" >&2; exit 2; }
done
# LG_FUZZ_JOBS parsers side by side (default: one per core); each still
# runs SECS seconds of wall time.
jobs_max=${LG_FUZZ_JOBS:-$(nproc)}
status=0
running=0
for p in "${parsers[@]}"; do
  if [ "$running" -ge "$jobs_max" ]; then
    wait -n || status=1
    running=$((running - 1))
  fi
  fuzz_one "$p" &
  running=$((running + 1))
done
while [ "$running" -gt 0 ]; do
  wait -n || status=1
  running=$((running - 1))
done
exit $status
