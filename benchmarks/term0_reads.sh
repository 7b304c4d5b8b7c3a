#!/usr/bin/env bash
# Count reads of term 0's fields through lg_layer's anonymous union: compile every library
# file against a net.h whose union member has the fields renamed; each "no member" error
# on an lg_layer is one such read (benchmarks/OPTABLE.md "Fourth pass"). Since the fifth pass
# core/net.h has no such copy (the compiler refuses the reads; benchmarks/term0_rewrite.sh), and
# on such a tree the count is the reads that fail to compile: 0.
# Usage: benchmarks/term0_reads.sh REPO OUTDIR  (a copy of the sources in OUTDIR/tree.*; reads.txt, byfile.txt, byfield.txt)
set -u
REPO=$1; OUT=$(mkdir -p "$2" && cd "$2" && pwd)
mkdir -p "$OUT"; T=$(mktemp -d "$OUT/tree.XXXXXX")
cp -r "$REPO"/core "$REPO"/verify "$REPO"/onnx "$REPO"/cli "$REPO"/encode "$REPO"/train "$REPO"/anneal "$REPO"/study "$REPO"/lib "$T"/ 2>/dev/null
python3 - "$T/core/net.h" <<'PY'
import sys
p=sys.argv[1]; s=open(p).read()
old='''        struct {
            LG_LINEAR_FIELDS
        };'''
new='''        struct {
            lg_layer_kind kind_u0; int n_in_u0, n_out; double *W_u0; lg_conv conv_u0; int *map_u0; int src_u0; lg_nodeop op_u0;
        };'''
if s.count(old)==1: s=s.replace(old,new); open(p,'w').write(s)
else: sys.stderr.write("core/net.h's union has no anonymous copy of term 0's fields: every read names its term (0 by construction)\n")
PY
cd "$T"
for f in $(ls core/*.c verify/*.c onnx/*.c cli/*.c encode/*.c train/*.c anneal/*.c study/*.c); do
  gcc -std=c11 -fsyntax-only -fmax-errors=0 -I. -I/usr/include/glpk $(pkg-config --cflags jansson 2>/dev/null) "$f" 2>&1 | grep -E "lg_layer. has no member named .(kind|n_in|W|conv|map|src|op).$" | sed "s|^|$f: |" 
done > "$OUT/reads.txt"
awk -F': ' '{print $1}' "$OUT/reads.txt" | sort | uniq -c | sort -rn > "$OUT/byfile.txt"
grep -oE 'named .[a-z_A-Z]+.$' "$OUT/reads.txt" | sort | uniq -c > "$OUT/byfield.txt"
wc -l < "$OUT/reads.txt"
