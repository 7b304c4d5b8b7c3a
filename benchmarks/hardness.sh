#!/usr/bin/env bash
# hardness.sh — learned hardness profiles of λ-GELU MLPs.
#
# Trains ARCH with `lgelu train` for every init × s-update × seed (plus a
# plain-gelu baseline per init × seed), reads λ per hidden layer from the
# per-epoch CSV log at the switch point (the end of epoch SWITCH, default
# the first quarter of the epochs, where `--anneal-start 0.25` would freeze
# s) and at the end, and prints
#   runs.csv      one row per run: kind,init,update,seed,test_acc,λ at switch…,λ at end…
#   summary.txt   per configuration: test accuracy (mean ± sd), smallest λ,
#                 layers with λ < 1.01, and the Spearman rank correlation of
#                 the layer profiles between every pair of seeds (mean, min)
#   lambda.png    λ per layer at the end, one line per seed, one panel per
#                 init × update (gnuplot, when installed)
# into OUTDIR. No annealing is applied (λ is learned for the whole run), so
# the end profile is the learned one. Needs only bash, awk and, for the
# plot, gnuplot.
#
# usage: benchmarks/hardness.sh [-b LGELU] [-a ARCH] [-e EPOCHS] [-w SWITCH]
#          [-n SUBSET] [-s "1 2 3 4 5"] [-i "he xavier torch"] [-u "lambda s"]
#          [-G] [-S] [-o OUTDIR] [-x "extra lgelu train options"]
#   -G  skip the gelu baseline
#   -S  train nothing: summarise and plot OUTDIR/runs.csv as it stands
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
lgelu=${LGELU:-$here/../build/lgelu}
arch=784,256,256,256,256,256,256,10
epochs=4
switch=
subset=
seeds="1 2 3 4 5"
inits="he xavier torch"
updates="lambda s"
gelu=1
summarise_only=0
out=hardness-out
extra=
while getopts "b:a:e:w:n:s:i:u:GSo:x:h" opt; do
  case $opt in
  b) lgelu=$OPTARG ;;
  a) arch=$OPTARG ;;
  e) epochs=$OPTARG ;;
  w) switch=$OPTARG ;;
  n) subset=$OPTARG ;;
  s) seeds=$OPTARG ;;
  i) inits=$OPTARG ;;
  u) updates=$OPTARG ;;
  G) gelu=0 ;;
  S) summarise_only=1 ;;
  o) out=$OPTARG ;;
  x) extra=$OPTARG ;;
  *) sed -n '2,26p' "$0"; exit 2 ;;
  esac
done
[ "$summarise_only" = 1 ] || [ -x "$lgelu" ] || { echo "hardness.sh: no lgelu executable at $lgelu (build first or pass -b)" >&2; exit 1; }
[ -n "$switch" ] || switch=$(( (epochs + 3) / 4 ))
mkdir -p "$out/logs"
nh=$(( $(echo "$arch" | tr ',' '\n' | wc -l) - 2 ))
sub=()
[ -n "$subset" ] && sub=(--subset "$subset")

# run KIND INIT UPDATE SEED: train once, append one row to runs.csv
run() {
  local kind=$1 init=$2 upd=$3 seed=$4
  local tag="$kind-$init-$upd-$seed" log="$out/logs/$kind-$init-$upd-$seed.csv"
  local uopt=()
  [ "$kind" = lgelu ] && uopt=(--s-update "$upd")
  # shellcheck disable=SC2086
  "$lgelu" train --arch "$arch" --act "$kind" --init "$init" "${uopt[@]}" --epochs "$epochs" --seed "$seed" \
    "${sub[@]}" $extra --log "$log" -o "$out/logs/$tag.net" >"$out/logs/$tag.txt" 2>&1 ||
    { echo "hardness.sh: run $tag failed (see $out/logs/$tag.txt)" >&2; exit 1; }
  rm -f "$out/logs/$tag.net"
  # columns: epoch,step,loss,train_acc,test_acc,lambda_0..lambda_{nh-1},samples_per_s
  awk -F, -v sw="$switch" -v nh="$nh" -v pre="$kind,$init,$upd,$seed" '
    NR > 1 { if ($1 == sw) for (k = 0; k < nh; k++) s[k] = $(6 + k)
             for (k = 0; k < nh; k++) e[k] = $(6 + k); acc = $5; sps += $(6 + nh); n++ }
    END { printf "%s,%.4f,%.0f", pre, 100 * acc, sps / n
          for (k = 0; k < nh; k++) printf ",%.6g", s[k]
          for (k = 0; k < nh; k++) printf ",%.6g", e[k]
          printf "\n" }' "$log" >>"$out/runs.csv"
  tail -n 1 "$out/runs.csv" >&2
}

t0=0 t1=0
if [ "$summarise_only" = 0 ]; then
  {
    printf "kind,init,update,seed,test_acc,samples_per_s"
    for ((k = 0; k < nh; k++)); do printf ",lambda_switch_%d" "$k"; done
    for ((k = 0; k < nh; k++)); do printf ",lambda_end_%d" "$k"; done
    printf "\n"
  } >"$out/runs.csv"
  t0=$(date +%s)
  echo "hardness.sh: arch $arch, $epochs epochs (switch after epoch $switch), subset ${subset:-all}," \
    "seeds {$seeds}, inits {$inits}, updates {$updates}" >&2
  for init in $inits; do
    for seed in $seeds; do
      for upd in $updates; do run lgelu "$init" "$upd" "$seed"; done
      [ "$gelu" = 1 ] && run gelu "$init" - "$seed"
    done
  done
  t1=$(date +%s)
fi

# Summary: accuracy, collapse count and Spearman of the profiles across seeds
# (ranks with ties averaged; ρ = Pearson correlation of the ranks; a profile
# with all λ equal has no ranking and its pairs are skipped).
awk -F, -v nh="$nh" -v secs=$((t1 - t0)) -v arch="$arch" -v ep="$epochs" -v sw="$switch" -v subs="${subset:-all}" '
  function rank(v, r,    i, j, less, eq) {
    for (i = 0; i < nh; i++) { less = 0; eq = 0
      for (j = 0; j < nh; j++) { if (v[j] < v[i]) less++; else if (v[j] == v[i]) eq++ }
      r[i] = less + (eq + 1) / 2 }
  }
  function rho(a, b,    i, ma, mb, sab, saa, sbb) {
    ma = mb = 0
    for (i = 0; i < nh; i++) { ma += a[i] / nh; mb += b[i] / nh }
    sab = saa = sbb = 0
    for (i = 0; i < nh; i++) { sab += (a[i]-ma)*(b[i]-mb); saa += (a[i]-ma)^2; sbb += (b[i]-mb)^2 }
    return (saa > 1e-9 && sbb > 1e-9) ? sab / sqrt(saa * sbb) : "nan"
  }
  NR == 1 { next }
  { c = $1 "/" $2 "/" $3
    if (!(c in n)) order[++nc] = c
    i = n[c]++; acc[c, i] = $5; sps[c] += $6
    for (k = 0; k < nh; k++) { S[c, i, k] = $(7 + k); E[c, i, k] = $(7 + nh + k) } }
  END {
    wall = "summary of existing runs"
    if (secs > 0) wall = secs " s wall"
    printf "arch %s, %s epochs, switch after epoch %s, subset %s, %s\n\n", arch, ep, sw, subs, wall
    printf "%-22s %5s %15s %9s %9s %8s %17s %17s\n", "kind/init/update", "seeds", "test acc %", "min λ", "λ<1.01",
           "samp/s", "ρ switch mean/min", "ρ end mean/min"
    for (o = 1; o <= nc; o++) { c = order[o]; m = n[c]; s1 = s2 = 0; mn = 1e30; low = 0
      for (i = 0; i < m; i++) { s1 += acc[c, i]; s2 += acc[c, i]^2
        for (k = 0; k < nh; k++) { if (E[c, i, k] < mn) mn = E[c, i, k]; if (E[c, i, k] < 1.01) low++ } }
      mean = s1 / m; sd = m > 1 ? sqrt((s2 - m * mean^2) / (m - 1) > 0 ? (s2 - m * mean^2) / (m - 1) : 0) : 0
      for (w = 0; w < 2; w++) { tot[w] = 0; cnt[w] = 0; mi[w] = 2 }
      for (i = 0; i < m; i++) for (j = i + 1; j < m; j++) for (w = 0; w < 2; w++) {
        for (k = 0; k < nh; k++) { a[k] = w ? E[c, i, k] : S[c, i, k]; b[k] = w ? E[c, j, k] : S[c, j, k] }
        rank(a, ra); rank(b, rb); r = rho(ra, rb)
        if (r != "nan") { tot[w] += r; cnt[w]++; if (r < mi[w]) mi[w] = r } }
      for (w = 0; w < 2; w++) f[w] = cnt[w] ? sprintf("%+.2f/%+.2f", tot[w] / cnt[w], mi[w]) : "-"
      printf "%-22s %5d %8.2f ± %4.2f %9.4g %5d/%-3d %8.0f %17s %17s\n", c, m, mean, sd, mn, low, m * nh,
             sps[c] / m, f[0], f[1] }
  }' "$out/runs.csv" | tee "$out/summary.txt"

# Plot: λ per layer at the end, one line per seed, one panel per lgelu configuration.
if command -v gnuplot >/dev/null; then
  confs=$(awk -F, 'NR > 1 && $1 == "lgelu" && !seen[$2 "," $3]++ { print $2 "," $3 }' "$out/runs.csv")
  np=$(echo "$confs" | wc -l)
  cols=$(( np < 3 ? np : 3 )); rows=$(( (np + cols - 1) / cols ))
  {
    echo "set terminal pngcairo size $((420 * cols)),$((340 * rows)) font ',9' noenhanced"
    echo "set output '$out/lambda.png'"
    echo "set multiplot layout $rows,$cols title 'learned λ per hidden layer at the end ($arch, $epochs epochs), one line per seed'"
    echo "set xlabel 'hidden layer'; set ylabel 'λ'; set key top left; set grid; set xtics 1"
    for c in $confs; do
      init=${c%,*}; upd=${c#*,}
      awk -F, -v i="$init" -v u="$upd" -v nh="$nh" 'NR > 1 && $1 == "lgelu" && $2 == i && $3 == u {
          for (k = 0; k < nh; k++) print k, $(7 + nh + k), $4; print ""; print "" }' "$out/runs.csv" >"$out/plot-$init-$upd.dat"
      echo "set title 'init $init, s-update $upd'"
      awk -F, -v i="$init" -v u="$upd" -v f="$out/plot-$init-$upd.dat" 'NR > 1 && $1 == "lgelu" && $2 == i && $3 == u {
          printf "%s'\''%s'\'' index %d using 1:2 with linespoints title '\''seed %s'\''", j++ ? ", " : "plot ", f, j - 1, $4 }
          END { print "" }' "$out/runs.csv"
    done
    echo "unset multiplot"
  } >"$out/lambda.gp"
  gnuplot "$out/lambda.gp" && echo "hardness.sh: wrote $out/lambda.png" >&2
fi
