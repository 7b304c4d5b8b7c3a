#!/usr/bin/env python3
"""Random ONNX graphs with MaxPool / GlobalMaxPool (max-pool nodes of lgelu:
any window, stride and symmetric padding), for the soundness
fuzzer's pool class (soundfuzz.h, lg_fuzz_pool; test-only).

  onnx_poolfuzz.py SEED N DIR

Writes DIR/g<i>.onnx for i < N: an input 1xCxHxW (C*H*W <= 16), one or two
blocks of [Conv (1-2 channels, kernels 1-3, strides 1-2, pads 0-1 below the kernel)] [Relu]
MaxPool (kernel 1-3 each way; strides = kernel, 1-3 (overlapping or gapped
windows) or absent; pads below the kernel or none; the floor drops what is
left past the last window) or GlobalMaxPool, then Flatten and an
optional [Relu] Gemm. Weights are float64 or float32 (both exact doubles).
DIR/g<i>.txt describes the same graph for the fuzzer's own evaluator, one op
a line, every number a hex float (exact):
  in C H W
  conv CO KH KW SH SW PH PW : w... : b...     (weights in OIHW order)
  relu
  maxpool KH KW SH SW PH PW   (padding is -inf: left out of the max)
  flatten
  gemm M N : w... : b...                       (y = W x + b, W is M x N)
"""
import os
import random
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

seed, N, D = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
os.makedirs(D, exist_ok=True)


def hexs(a):
    return " ".join(float(v).hex() for v in np.asarray(a, dtype=np.float64).ravel())


def build(r, i):
    dt = np.float64 if r.random() < 0.5 else np.float32
    et = TensorProto.DOUBLE if dt == np.float64 else TensorProto.FLOAT
    C = r.randint(1, 2)
    H, W = r.randint(2, 5), r.randint(2, 5)
    while C * H * W > 16:
        if W > H:
            W -= 1
        else:
            H -= 1
    nodes, inits, desc = [], [], ["in %d %d %d" % (C, H, W)]
    cur, k = "x", 0
    n_rng = np.random.default_rng(r.randrange(1 << 30))

    def T(name, arr):
        inits.append(numpy_helper.from_array(np.asarray(arr, dtype=dt), name))
        return name

    def name():
        nonlocal k
        k += 1
        return "t%d" % k

    for block in range(r.randint(1, 2)):
        if r.random() < 0.7:  # a conv first
            co, kh, kw = r.randint(1, 2), r.randint(1, 3), r.randint(1, 3)
            sh, sw = r.randint(1, 2), r.randint(1, 2)
            ph, pw = r.randint(0, min(1, kh - 1)), r.randint(0, min(1, kw - 1))  # the importer takes pads < kernel
            kh, kw = min(kh, H + 2 * ph), min(kw, W + 2 * pw)
            w = n_rng.normal(0, 1.0 / np.sqrt(C * kh * kw), (co, C, kh, kw)).astype(dt)
            b = (0.3 * n_rng.normal(0, 1, co)).astype(dt)
            out = name()
            nodes.append(helper.make_node("Conv", [cur, T("w%d" % k, w), T("b%d" % k, b)], [out],
                                          kernel_shape=[kh, kw], strides=[sh, sw], pads=[ph, pw, ph, pw]))
            desc.append("conv %d %d %d %d %d %d %d : %s : %s" % (co, kh, kw, sh, sw, ph, pw, hexs(w), hexs(b)))
            cur, C = out, co
            H, W = (H + 2 * ph - kh) // sh + 1, (W + 2 * pw - kw) // sw + 1
            if r.random() < 0.5:
                out = name()
                nodes.append(helper.make_node("Relu", [cur], [out]))
                desc.append("relu")
                cur = out
        out = name()
        if r.random() < 0.25:
            nodes.append(helper.make_node("GlobalMaxPool", [cur], [out]))
            desc.append("maxpool %d %d %d %d 0 0" % (H, W, 1, 1))
            H = W = 1
        else:
            kh, kw = r.randint(1, min(3, H)), r.randint(1, min(3, W))
            attrs = dict(kernel_shape=[kh, kw])
            sh, sw, ph, pw = 1, 1, 0, 0
            u = r.random()
            if u < 0.4:  # non-overlapping
                sh, sw = kh, kw
                attrs["strides"] = [kh, kw]
            elif u < 0.8:  # overlapping or gapped windows
                sh, sw = r.randint(1, 3), r.randint(1, 3)
                attrs["strides"] = [sh, sw]
            if r.random() < 0.4:  # padding (-inf semantics), below the kernel
                ph, pw = r.randint(0, kh - 1), r.randint(0, kw - 1)
                attrs["pads"] = [ph, pw, ph, pw]
            nodes.append(helper.make_node("MaxPool", [cur], [out], **attrs))
            desc.append("maxpool %d %d %d %d %d %d" % (kh, kw, sh, sw, ph, pw))
            H, W = (H + 2 * ph - kh) // sh + 1, (W + 2 * pw - kw) // sw + 1
        cur = out
    out = name()
    nodes.append(helper.make_node("Flatten", [cur], [out]))
    desc.append("flatten")
    cur, n = out, C * H * W
    if r.random() < 0.8:
        if r.random() < 0.4:
            out = name()
            nodes.append(helper.make_node("Relu", [cur], [out]))
            desc.append("relu")
            cur = out
        m = r.randint(1, 3)
        w = n_rng.normal(0, 1.0 / np.sqrt(n), (m, n)).astype(dt)
        b = (0.3 * n_rng.normal(0, 1, m)).astype(dt)
        out = name()
        nodes.append(helper.make_node("Gemm", [cur, T("w%d" % k, w), T("b%d" % k, b)], [out], transB=1))
        desc.append("gemm %d %d : %s : %s" % (m, n, hexs(w), hexs(b)))
        cur, n = out, m
    nodes.append(helper.make_node("Identity", [cur], ["y"]))
    x0 = desc[0].split()
    g = helper.make_graph(nodes, "pool%d" % i,
                          [helper.make_tensor_value_info("x", et, [1, int(x0[1]), int(x0[2]), int(x0[3])])],
                          [helper.make_tensor_value_info("y", et, [1, n])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(D, "g%d.onnx" % i))
    with open(os.path.join(D, "g%d.txt" % i), "w") as f:
        f.write("\n".join(desc) + "\n")


r = random.Random(seed)
for i in range(N):
    build(r, i)
