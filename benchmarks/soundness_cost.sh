#!/usr/bin/env bash
# soundness_cost.sh — what the soundness work costs in speed:
# the same instances verified by two `lgelu` binaries, interleaved per
# instance (A B, then B A for the next, ...) so both see the same machine
# load. Instances: the first N Fashion-MNIST test images at ε (default 100
# at 0.01) on a ReLU network NET, and the 12 fixture instances (ACAS Xu 1_1
# and 1_7 × prop_1..4, mnist-net_256x2 prop_1/2/3/7). Every run is the full
# default pipeline (`lgelu verify ... --timeout T --json`: solver auto, bab
# auto, attack on). Prints per set and binary: decided counts, median and
# total seconds (the verifier's own `seconds`), the after/before ratios, and
# verdict agreement (robust→unknown is expected where a GLPK-only proof now
# needs Z3's confirmation; robust↔violated would be a soundness bug).
# Writes every run to CSV (-o); -s CSV only summarises such a file again.
# Asserts nothing; exit 1 only if a run fails.
#
# usage: benchmarks/soundness_cost.sh -A BEFORE_LGELU -B AFTER_LGELU -n RELU_NET
#                 [-i IMAGES (100)] [-e EPS (0.01)] [-t TIMEOUT (30)] [-d DATA_DIR] [-o CSV]
#        benchmarks/soundness_cost.sh -s CSV
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
fx=$here/../tests/fixtures
before="" after="" net="" images=100 eps=0.01 timeout=30 data="" csv="" summary=""
while getopts "A:B:n:i:e:t:d:o:s:h" opt; do
  case $opt in
  A) before=$OPTARG ;;
  B) after=$OPTARG ;;
  n) net=$OPTARG ;;
  i) images=$OPTARG ;;
  e) eps=$OPTARG ;;
  t) timeout=$OPTARG ;;
  d) data=$OPTARG ;;
  o) csv=$OPTARG ;;
  s) summary=$OPTARG ;;
  *) sed -n '2,18p' "$0"; exit 2 ;;
  esac
done
if [ -z "$summary" ] && { [ -z "$before" ] || [ -z "$after" ] || [ -z "$net" ]; }; then sed -n '16,18p' "$0"; exit 2; fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
[ -n "$csv" ] || csv=$tmp/runs.csv
if [ -n "$summary" ]; then csv=$summary; else
echo "set,instance,binary,verdict,method,reason,seconds" >"$csv"
field() { sed -n "s/.*\"$1\": \"\{0,1\}\([^\",}]*\).*/\1/p"; }

# one_run SET INSTANCE WHICH BIN ARGS...: append one CSV row.
one_run() {
  local set=$1 inst=$2 which=$3 bin=$4
  shift 4
  local out
  out=$("$bin" verify "$@" --timeout "$timeout" --json 2>/dev/null) || { echo "failed: $bin verify $*" >&2; exit 1; }
  printf '%s,%s,%s,%s,%s,%s,%s\n' "$set" "$inst" "$which" "$(field verdict <<<"$out")" "$(field method <<<"$out")" \
    "$(field reason <<<"$out" | tr ', ' '__')" "$(field seconds <<<"$out")" >>"$csv"
}
# both SET INSTANCE K ARGS...: the two binaries in the order given by K's parity.
both() {
  local set=$1 inst=$2 k=$3
  shift 3
  if [ $((k % 2)) -eq 0 ]; then
    one_run "$set" "$inst" before "$before" "$@"; one_run "$set" "$inst" after "$after" "$@"
  else
    one_run "$set" "$inst" after "$after" "$@"; one_run "$set" "$inst" before "$before" "$@"
  fi
}

k=0
for i in $(seq 0 $((images - 1))); do
  both fmnist "img$i" $k "$net" ${data:+--data "$data"} --index "$i" --eps "$eps"
  k=$((k + 1))
done
for n in 1_1 1_7; do
  for p in 1 2 3 4; do
    both fixtures "acasxu_${n}_prop_$p" $k "$fx/acasxu/ACASXU_run2a_${n}_batch_2000.onnx" --vnnlib "$fx/acasxu/prop_$p.vnnlib"
    k=$((k + 1))
  done
done
for p in prop_1_0.05 prop_2_0.05 prop_3_0.05 prop_7_0.03; do
  both fixtures "mnist_$p" $k "$fx/vnncomp/mnist-net_256x2.onnx" --vnnlib "$fx/vnncomp/$p.vnnlib"
  k=$((k + 1))
done

echo "runs: $csv (eps $eps, timeout $timeout s, $images images)"
fi
awk -F, '
function median(s, n,   a, i, j, t) {
  n = split(s, a, " ")
  for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] + 0 > t + 0; j--) a[j + 1] = a[j]; a[j + 1] = t }
  return n == 0 ? 0 : (n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2)
}
NR == 1 { next }
{
  key = $1 SUBSEP $3; sets[$1] = 1
  n[key]++; cnt[key, $4]++; tot[key] += $7; secs[key] = secs[key] " " $7
  v[$1, $2, $3] = $4; t[$1, $2, $3] = $7; inst[$1, $2] = 1
}
END {
  printf "%-9s %-7s %5s %7s %9s %8s %10s %10s\n", "set", "binary", "n", "robust", "violated", "unknown", "median_s", "total_s"
  for (s in sets) for (b = 0; b < 2; b++) {
    w = b ? "after" : "before"; key = s SUBSEP w
    med[key] = median(secs[key])
    printf "%-9s %-7s %5d %7d %9d %8d %10.3f %10.2f\n", s, w, n[key], cnt[key, "robust"], cnt[key, "violated"],
      cnt[key, "unknown"], med[key], tot[key]
  }
  for (s in sets) {
    kb = s SUBSEP "before"; ka = s SUBSEP "after"
    printf "%s: after/before total %.3f, median %.3f\n", s, tot[kb] ? tot[ka] / tot[kb] : 0,
      med[kb] ? med[ka] / med[kb] : 0
  }
  for (si in inst) {
    split(si, p, SUBSEP); a = v[p[1], p[2], "after"]; b = v[p[1], p[2], "before"]
    if (a == b) { same[p[1]]++; sa[p[1]] += t[p[1], p[2], "after"]; sb[p[1]] += t[p[1], p[2], "before"] }
    else { chg[p[1], b "->" a]++; print "  changed: " p[1] " " p[2] " " b " -> " a }
    if ((a == "robust" && b == "violated") || (a == "violated" && b == "robust")) bad++
  }
  for (s in sets) {
    printf "%s: same verdict %d; robust->unknown %d; unknown->robust %d; violated->unknown %d; unknown->violated %d\n",
      s, same[s], chg[s, "robust->unknown"], chg[s, "unknown->robust"], chg[s, "violated->unknown"], chg[s, "unknown->violated"]
  }
  for (s in sets)
    printf "%s, instances with the same verdict: total before %.2f s, after %.2f s, ratio %.3f\n", s, sb[s], sa[s],
      sb[s] ? sa[s] / sb[s] : 0
  printf "robust<->violated contradictions: %d\n", bad
}' "$csv"
