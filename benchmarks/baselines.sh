#!/usr/bin/env bash
# benchmarks/baselines.sh — the annealed baselines against λ-GELU:
# train 784-256-256-10 on Fashion-MNIST with each activation (same budget:
# epochs, batch, lr, seed), substitute ReLU, and print test accuracy before
# and after the substitution plus the certified deviation bound (global and
# the median over eps = 0.01 balls around the first N test inputs).
#
#   bash benchmarks/baselines.sh [LGELU_BINARY] [EPOCHS] [SEEDS...]
#
# Defaults: build/lgelu, 10 epochs, seed 1. Each run anneals from the
# usual switch point 0.25 to the targets of E = 0.005 (λ = 159.6, β = 277.3,
# PReLU slope 0); rows marked "no anneal" substitute directly (the direct
# swap). Output: one Markdown table row per run; work files in $OUT
# (default a temporary directory).
set -euo pipefail
LG=${1:-build/lgelu}
EPOCHS=${2:-10}
shift $(( $# > 2 ? 2 : $# )) || true
SEEDS=${*:-1}
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
N=${N:-200}
echo "| activation | schedule | seed | acc before | acc after ReLU | Δ global | Δ median (ε=0.01) | final parameter per layer |"
echo "|---|---|---|---|---|---|---|---|"
for seed in $SEEDS; do
  for act in lgelu swish prelu gelu; do
    for anneal in 0.25 1; do
      [ "$act" = gelu ] && [ "$anneal" != 1 ] && continue
      tag="$act-$anneal-$seed"
      args=(--arch 784,256,256,10 --act "$act" --epochs "$EPOCHS" --seed "$seed" -o "$OUT/$tag.lgnet")
      [ "$anneal" != 1 ] && args+=(--anneal-start "$anneal")
      "$LG" train "${args[@]}" >"$OUT/$tag.train.txt"
      "$LG" relu "$OUT/$tag.lgnet" -o "$OUT/$tag.relu.lgnet" >/dev/null
      before=$(sed -n 's/^final test accuracy: \([0-9.]*\)%.*/\1/p' "$OUT/$tag.train.txt")
      params=$(sed -n 's/^λ per hidden layer: //p' "$OUT/$tag.train.txt")
      after=$("$LG" eval "$OUT/$tag.relu.lgnet" --json | sed 's/.*"accuracy": \([0-9.e-]*\).*/\1/')
      bj=$("$LG" bound "$OUT/$tag.relu.lgnet" --ref "$OUT/$tag.lgnet" --n "$N" --json)
      glob=$(echo "$bj" | sed 's/.*"global": \([0-9.e+-]*\).*/\1/')
      med=$(echo "$bj" | sed 's/.*"per_input_median": \([0-9.e+-]*\).*/\1/')
      sched=$([ "$anneal" = 1 ] && echo "no anneal" || echo "anneal from $anneal")
      printf '| %s | %s | %s | %s%% | %.2f%% | %.4g | %.4g | %s |\n' "$act" "$sched" "$seed" "$before" \
        "$(awk -v a="$after" 'BEGIN{print a*100}')" "$glob" "$med" "$params"
    done
  done
done
