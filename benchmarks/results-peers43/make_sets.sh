#!/bin/bash
# make_sets.sh DIR: the three instance sets of "Against α,β-CROWN's complete verifier: sigmoid, max-pool and
# CIFAR CNNs" (benchmarks/VERIFY.md) and their peer.sh lists DIR/{mp,oval,sig}.list; then, e.g.
#   ABCROWN_RUN=.../run_abcrown.sh PEERS=... LGELU=build/lgelu bash peer.sh DIR/sig.list DIR/out_sig
# Needs the system Python with PyTorch 1.13 and onnx (generation only).
set -eu
D=$(realpath -m "${1:?usage: make_sets.sh DIR}"); B=$(cd "$(dirname "$0")/.." && pwd); mkdir -p "$D"; cd "$D"
PY=/usr/bin/python3
$PY "$B/../tests/fixtures/sigmoid3p/gen.py" bench sig sigmoid_6x200          # 6x200 sigmoid MLP, eps 0.005/0.01/0.015
$PY "$B/../tests/fixtures/sigmoid3p/gen.py" more sig sigmoid_6x200 0.03
$PY "$B/cifar_maxpool_make.py" mp 0.0005 0.001 0.002 0.005 0.01
$PY "$B/cifar_maxpool_make.py" --overlap mp 0.0005 0.001 0.002 0.005 0.01
$PY "$B/results-peers43/oval21_make.py" oval 5 0.002,0.004
for n in cifar_maxpool cifar_maxpool3s2; do for e in 0.0005 0.001 0.002 0.005 0.01; do
  echo "${n}_$e mp/$n.onnx mp/${n}_$e.vnnlib oval21"; done; done > mp.list
for i in 0 1 2 3 4; do for n in base wide deep; do for e in 0.002 0.004; do
  echo "${n}_${i}_$e oval/cifar_${n}_kw.onnx oval/cifar_${n}_kw_${i}_$e.vnnlib oval21"; done; done; done > oval.list
for e in 0.015 0.03; do  # the first 15 instances (by image) of each radius
  for i in $(ls sig | grep "eps${e}_" | sed 's/.*_\([0-9]*\)\.vnnlib/\1/' | sort -n | head -15); do
    echo "s${e}_$i sig/sigmoid_6x200.onnx sig/sigmoid_6x200_eps${e}_$i.vnnlib eran_sigmoid --complete_verifier bab --branching_method nonlinear"
  done; done > sig.list
