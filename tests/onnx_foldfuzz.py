#!/usr/bin/env python3
"""Random foldable ONNX graphs with exact expected outputs (the soundness
fuzzer's ONNX class, soundfuzz.h; test-only).

  onnx_foldfuzz.py SEED N DIR

Writes DIR/g<i>.onnx for i < N: a float64 chain of Gemm/MatMul layers, Relu,
Neg, Clip (both, one or no bounds), and constant Add/Sub/Mul/Div by numbers
chosen to be exactly foldable or not (2, 0.5, 3, 0.1, 1.5, 7, 2^-60, 2^40,
1/3, ...), the constant itself sometimes the Add/Sub/Mul/Div of two
constants, sometimes a Sub/Div normalisation at the input. DIR/g<i>.txt holds lines `x_0 ... x_{n-1} :
y_0 ... y_{m-1}`, the inputs as hex floats and the outputs as exact fractions
p/q computed here with Python's Fraction on the file's numbers: the truth the
importer must reproduce exactly, or refuse the file.
"""
import os
import random
import sys
from fractions import Fraction as F

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

seed, N, D = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
os.makedirs(D, exist_ok=True)
CONSTS = [2.0, 0.5, 3.0, 0.1, 1.5, 7.0, 2.0 ** -60, 2.0 ** 40, 1 / 3, -0.25, 10.0, 1e-3]


def num(r):
    return r.choice(CONSTS) * r.choice([1, 1, -1]) if r.random() < 0.5 else r.choice([0.125, 0.375, 1.0, -2.0, 0.1, 0.3])


def build(r, i):
    n_in = r.randint(1, 3)
    nodes, inits, ops = [], [], []  # ops: exact evaluators on lists of Fractions
    cur, width, k = "x", n_in, 0

    def T(name, arr):
        inits.append(numpy_helper.from_array(np.asarray(arr, dtype=np.float64), name))
        return name

    if r.random() < 0.4:  # normalisation first
        sub = [r.choice([0.5, 0.1, 0.25, 3.0]) for _ in range(width)]
        div = [r.choice([0.3, 2.0 ** -60, 2.0 ** 50, 0.5, 3.0]) for _ in range(width)]
        nodes.append(helper.make_node("Sub", [cur, T("sub", [sub])], ["n0"]))
        nodes.append(helper.make_node("Div", ["n0", T("div", [div])], ["n1"]))
        ops.append(lambda v, s=sub, d=div: [(a - F(b)) / F(c) for a, b, c in zip(v, s, d)])
        cur = "n1"
    for _ in range(r.randint(1, 5)):
        kind = r.choice(["gemm", "gemm", "matmul", "mul", "div", "add", "sub", "relu", "neg", "clip"])
        out = "t%d" % k
        k += 1
        if kind in ("gemm", "matmul"):
            m = r.randint(1, 3)
            W = [[num(r) for _ in range(width)] for _ in range(m)]
            b = [num(r) for _ in range(m)]
            if kind == "gemm":
                nodes.append(helper.make_node("Gemm", [cur, T("w%d" % k, W), T("b%d" % k, b)], [out], transB=1))
                ops.append(lambda v, W=W, b=b: [F(bj) + sum(F(w) * a for w, a in zip(row, v)) for row, bj in zip(W, b)])
            else:
                Wt = [list(col) for col in zip(*W)]
                nodes.append(helper.make_node("MatMul", [cur, T("w%d" % k, Wt)], [out]))
                ops.append(lambda v, W=W: [sum(F(w) * a for w, a in zip(row, v)) for row in W])
            width = m
        elif kind == "relu":
            nodes.append(helper.make_node("Relu", [cur], [out]))
            ops.append(lambda v: [a if a > 0 else F(0) for a in v])
        elif kind == "neg":
            nodes.append(helper.make_node("Neg", [cur], [out]))
            ops.append(lambda v: [-a for a in v])
        elif kind == "clip":  # bounds: both, one (the other an empty input name), or none
            lo, hi = sorted([num(r), num(r)])
            side = r.choice(["both", "both", "lo", "hi", "none"])
            ins = [cur, T("lo%d" % k, lo) if side in ("both", "lo") else "",
                   T("hi%d" % k, hi) if side in ("both", "hi") else ""]
            while ins[-1] == "":
                ins.pop()
            nodes.append(helper.make_node("Clip", ins, [out]))
            L = F(lo) if side in ("both", "lo") else None
            H = F(hi) if side in ("both", "hi") else None
            ops.append(lambda v, L=L, H=H: [min(max(a, L) if L is not None else a, H) if H is not None
                                            else (max(a, L) if L is not None else a) for a in v])
        else:
            c = [num(r) for _ in range(width)] if r.random() < 0.5 else [num(r)]
            if kind == "div" and any(x == 0 for x in c):
                c = [3.0] * len(c)
            op = {"mul": "Mul", "div": "Div", "add": "Add", "sub": "Sub"}[kind]
            ops2 = {"mul": lambda a, b: a * b, "div": lambda a, b: a / b, "add": lambda a, b: a + b,
                    "sub": lambda a, b: a - b}
            cname = T("c%d" % k, [c] if len(c) > 1 else c[0])
            cval = [F(x) for x in c]
            if r.random() < 0.3:  # the constant computed from two constants (folded only when exact)
                kind2 = r.choice(["mul", "div", "add", "sub"])
                c2 = [num(r) for _ in range(len(c))] if r.random() < 0.5 else [num(r)]
                if kind2 == "div" and any(x == 0 for x in c2):
                    c2 = [0.5] * len(c2)
                cname2 = T("d%d" % k, [c2] if len(c2) > 1 else c2[0])
                op2 = {"mul": "Mul", "div": "Div", "add": "Add", "sub": "Sub"}[kind2]
                nodes.append(helper.make_node(op2, [cname, cname2], ["f%d" % k]))
                n = max(len(c), len(c2))
                cval = [ops2[kind2](cval[j if len(cval) > 1 else 0], F(c2[j if len(c2) > 1 else 0])) for j in range(n)]
                cname = "f%d" % k
                if any(q == 0 for q in cval) and kind == "div":
                    nodes.pop()
                    cname, cval = T("e%d" % k, 3.0), [F(3)]
            nodes.append(helper.make_node(op, [cur, cname], [out]))
            f = ops2[kind]
            ops.append(lambda v, c=cval, f=f: [f(a, c[j if len(c) > 1 else 0]) for j, a in enumerate(v)])
        cur = out
    nodes.append(helper.make_node("Identity", [cur], ["y"]))
    g = helper.make_graph(nodes, "g%d" % i, [helper.make_tensor_value_info("x", TensorProto.DOUBLE, [1, n_in])],
                          [helper.make_tensor_value_info("y", TensorProto.DOUBLE, [1, width])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    onnx.save(m, os.path.join(D, "g%d.onnx" % i))
    with open(os.path.join(D, "g%d.txt" % i), "w") as f:
        for _ in range(3):
            x = [r.choice([0.0, 1.0, -1.0, 0.1, 0.7, 3.0, 1e-3]) for _ in range(n_in)]
            v = [F(a) for a in x]
            for op in ops:
                v = op(v)
            f.write(" ".join(a.hex() for a in x) + " : " + " ".join("%d/%d" % (q.numerator, q.denominator) for q in v) + "\n")


r = random.Random(seed)
for i in range(N):
    build(r, i)
print("ok")
