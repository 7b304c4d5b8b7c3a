#!/usr/bin/env bash
# valgrind memcheck over the CLI's main paths: train a tiny net
# (with annealing), relu, bound, check (the CI gate, .npy inputs), verify
# with each solver (z3, glpk, auto, and a VNN-LIB property on an ONNX net),
# encode (SMT-LIB 2 and LP), export, info,
# eval (training also evaluates the test set). Fails (exit 1) on any invalid
# read/write, use of uninitialised values, invalid free or definite leak, in
# the CLI process or in any forked solver child (valgrind follows fork;
# --trace-children follows exec).
#
#   scripts/valgrind.sh [BUILD_DIR]      (default build; Release with -g is fine)
#
# Tiny nets and a 300-example training subset keep it to a few minutes on one
# core (about 4 min on a busy 2-core machine). Logs: $LG_VG_DIR (default a
# fresh temp dir, kept on failure).
set -euo pipefail
cd "$(dirname "$0")/.."
B=${1:-build}
LG=$PWD/$B/lgelu
[ -x "$LG" ] || { echo "valgrind.sh: $LG not built" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "valgrind.sh: valgrind not installed (scripts/setup.sh)" >&2; exit 2; }
W=${LG_VG_DIR:-$(mktemp -d /tmp/lgelu-vg.XXXXXX)}
mkdir -p "$W"
export OPENBLAS_NUM_THREADS=1
VG=(valgrind --tool=memcheck --leak-check=full --errors-for-leak-kinds=definite --show-leak-kinds=definite
    --error-exitcode=99 --trace-children=yes --child-silent-after-fork=no --num-callers=30 --quiet)
FX=tests/fixtures
fail=0
n=0
run() { # name expected-exit args...
  local name=$1 want=$2; shift 2
  local t0=$SECONDS rc=0
  n=$((n + 1))
  "${VG[@]}" --log-file="$W/$name.%p.vg" "$LG" "$@" >"$W/$name.out" 2>"$W/$name.err" || rc=$?
  local errs
  # with --quiet a log holds only reports; a forked child's report does not
  # change the CLI's exit status, so every process's log must be empty
  errs=$(cat "$W/$name".*.vg 2>/dev/null | grep -c . || true)
  if [ "$rc" -ne "$want" ] || [ "$errs" -ne 0 ]; then
    echo "valgrind: FAIL $name (exit $rc, want $want; $errs report lines): lgelu $*" >&2
    cat "$W/$name".*.vg "$W/$name.err" 2>/dev/null | head -40 >&2
    fail=1
  else
    echo "valgrind: ok   $name ($((SECONDS - t0)) s)"
  fi
}

run train 0 train --arch 784,8,8,10 --act lgelu --epochs 1 --subset 300 --anneal-start 0.5 --seed 3 -o "$W/net.lgnet"
run relu 0 relu "$W/net.lgnet" -o "$W/relu.lgnet"
run bound 0 bound "$W/relu.lgnet" --ref "$W/net.lgnet" --eps 0.01 --n 3 --json
run info 0 info "$W/relu.lgnet"
# the CI gate on .npy inputs (first 3 test images; written by numpy)
PY=python3; [ -x /usr/bin/python3 ] && PY=/usr/bin/python3
"$PY" -c "import numpy as np, sys; np.save(sys.argv[1], np.linspace(0, 1, 3 * 784).reshape(3, 784))" "$W/x3.npy"
run check 0 check "$W/relu.lgnet" --ref "$W/net.lgnet" --inputs "$W/x3.npy" --eps 0.01 --max-deviation 10 --json
# the trained net (784 inputs) with the MILP back-end and auto; z3 on a
# 5-input net of the seed corpus (z3 under valgrind is slow on 784 inputs)
for s in glpk auto; do
  run "verify_$s" 0 verify "$W/relu.lgnet" --index 0 --eps 0.05 --solver "$s" --bab none --no-attack \
    --timeout 300 --json -o "$W/verify_$s.txt"
done
SMALL=fuzz/corpus/netfile/gen_relu_2h_norm.lgnet
echo "0.5 0.4 0.3 0.2 0.1" >"$W/x.txt"
for s in z3 glpk auto; do
  run "verify_small_$s" 0 verify "$SMALL" --input "$W/x.txt" --eps 0.3 --solver "$s" --bab none --no-attack \
    --timeout 300 --json
done
run export_small 0 export "$SMALL" -o "$W/small.onnx"
{
  for i in 0 1 2 3 4; do echo "(declare-const X_$i Real)"; done
  echo "(declare-const Y_0 Real)"; echo "(declare-const Y_1 Real)"
  for i in 0 1 2 3 4; do echo "(assert (>= X_$i 0.0))"; echo "(assert (<= X_$i 0.6))"; done
  echo "(assert (or (and (>= Y_0 Y_1)) (and (<= Y_0 (- Y_1 100)))))"
} >"$W/small.vnnlib"
run verify_vnnlib_bab 0 verify "$W/small.onnx" --vnnlib "$W/small.vnnlib" --no-attack --timeout 300 --json
run eval_input 0 eval "$SMALL" --input "$W/x.txt"
run encode_vnnlib 0 encode "$FX/acasxu/ACASXU_run2a_1_1_batch_2000.onnx" --vnnlib "$FX/acasxu/prop_3.vnnlib" \
  --format smt2 -o "$W/acas.smt2"
run encode_smt2 0 encode "$W/relu.lgnet" --index 0 --eps 0.05 --format smt2 -o "$W/q.smt2"
run encode_lp 0 encode "$W/relu.lgnet" --index 1 --eps 0.05 --format lp -o "$W/q.lp"
run export 0 export "$W/net.lgnet" -o "$W/net.onnx"
run export_read 0 info "$W/net.onnx"
run bad_file 1 info "$FX/acasxu/prop_1.vnnlib"

if [ $fail -ne 0 ]; then
  echo "valgrind: FAILED; logs in $W" >&2
  exit 1
fi
echo "valgrind: all $n runs clean (memcheck, definite leaks, invalid accesses; fork children included)"
[ -n "${LG_VG_DIR:-}" ] || rm -rf "$W"
