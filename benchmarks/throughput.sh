#!/usr/bin/env bash
# throughput.sh — one-thread `lgelu train` samples/s per epoch against
# PyTorch's best one-thread loop (benchmarks/torch_throughput.py), measured
# in the same run, for lgelu, gelu and relu on 784-256-256-10, batch 128,
# full Fashion-MNIST training split. OPTIONAL: needs Debian's python3-torch
# (PyTorch 1.13), which lgelu itself never uses. Prints the per-epoch rates,
# the medians and the ratio lgelu/PyTorch; asserts nothing.
#
# -c: the small CNN instead (lgelu --arch 1x28x28,c8k3s2,c16k3s2,10; torch --cnn).
#
# usage: benchmarks/throughput.sh [-b LGELU] [-e EPOCHS] [-a "lgelu gelu relu"] [-c]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
lgelu=$here/../build/lgelu
epochs=3
acts="lgelu gelu relu"
arch=()
cnn=()
while getopts "b:e:a:ch" opt; do
  case $opt in
  b) lgelu=$OPTARG ;;
  e) epochs=$OPTARG ;;
  a) acts=$OPTARG ;;
  c) arch=(--arch 1x28x28,c8k3s2,c16k3s2,10); cnn=(--cnn) ;;
  *) sed -n '2,12p' "$0"; exit 2 ;;
  esac
done
py=/usr/bin/python3
"$py" -c "import torch" 2>/dev/null || { echo "throughput.sh: python3-torch is not installed (optional)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
printf "%-6s %12s %12s %7s\n" act "lgelu s/s" "torch s/s" ratio >"$tmp/table"
for act in $acts; do
  "$lgelu" train "${arch[@]}" --act "$act" --epochs "$epochs" --threads 1 --log "$tmp/$act.csv" -o "$tmp/$act.net" >"$tmp/$act.txt"
  ours=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "samples_per_s") c = i; next } { print $c }' \
    "$tmp/$act.csv" | median)
  echo "lgelu train --act $act: $(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "samples_per_s") c = i; next }
    { printf "%.0f ", $c }' "$tmp/$act.csv")samples/s (median $ours)"
  "$py" "$here/torch_throughput.py" "${cnn[@]}" --act "$act" --epochs "$epochs" | tee "$tmp/$act.torch"
  theirs=$(awk '/^torch best/ { print $4 }' "$tmp/$act.torch")
  awk -v a="$act" -v o="$ours" -v t="$theirs" 'BEGIN { printf "%-6s %12.0f %12.0f %6.2fx\n", a, o, t, o / t }' >>"$tmp/table"
done
echo
cat "$tmp/table"
