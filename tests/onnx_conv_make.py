#!/usr/bin/env python3
"""Conv graph variants for the Check suite `conv` (test-only; PyTorch-free).

  onnx_conv_make.py OUTDIR

writes OUTDIR/NAME.onnx for each model below and, for the models lgelu must
import, OUTDIR/NAME.txt: pairs of lines (input vector, output vector, %.17g)
computed by an independent float64 numpy evaluation (explicit zero padding
and window sums, BatchNormalization as written in the ONNX spec).
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

RNG = np.random.default_rng(7)


def f32(a):
    return np.asarray(a, dtype=np.float32)


def init(name, a):
    return numpy_helper.from_array(np.asarray(a), name)


def conv_ref(x, W, b, strides=(1, 1), pads=(0, 0, 0, 0)):
    x = np.pad(x, ((0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    C, H, Wd = x.shape
    M, _, kh, kw = W.shape
    ho, wo = (H - kh) // strides[0] + 1, (Wd - kw) // strides[1] + 1
    y = np.zeros((M, ho, wo))
    for m in range(M):
        for i in range(ho):
            for j in range(wo):
                win = x[:, i * strides[0]:i * strides[0] + kh, j * strides[1]:j * strides[1] + kw]
                y[m, i, j] = np.sum(win * W[m]) + (b[m] if b is not None else 0.0)
    return y


def avg_ref(x, k, s):
    C, H, W = x.shape
    ho, wo = (H - k[0]) // s[0] + 1, (W - k[1]) // s[1] + 1
    y = np.zeros((C, ho, wo))
    for i in range(ho):
        for j in range(wo):
            y[:, i, j] = x[:, i * s[0]:i * s[0] + k[0], j * s[1]:j * s[1] + k[1]].mean(axis=(1, 2))
    return y


def save(out, name, graph, ref=None, shape=None, opset=13):
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 7
    if ref is not None:
        onnx.checker.check_model(model, full_check=True)
    onnx.save(model, os.path.join(out, name + ".onnx"))
    if ref is None:
        return
    with open(os.path.join(out, name + ".txt"), "w") as f:
        for _ in range(4):
            x = RNG.uniform(-1, 1, size=shape)
            y = np.ravel(ref(x.astype(np.float64)))
            f.write(" ".join("%.17g" % v for v in np.ravel(x)) + "\n")
            f.write(" ".join("%.17g" % v for v in y) + "\n")


def vi(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def main(out):
    os.makedirs(out, exist_ok=True)
    # 1. Sub/Div normalisation, Conv 3@3x2 stride (2,1) pads (1,0), BatchNorm, Relu, Dropout, Flatten, Gemm
    mean = f32(RNG.uniform(-0.2, 0.2, (1, 2, 1, 1)))
    W1, b1 = f32(RNG.normal(0, 0.5, (3, 2, 3, 2))), f32(RNG.normal(0, 0.1, 3))
    g, be, mu, var = (f32(RNG.uniform(0.5, 1.5, 3)), f32(RNG.normal(0, 0.1, 3)), f32(RNG.normal(0, 0.1, 3)),
                      f32(RNG.uniform(0.5, 2.0, 3)))
    G = f32(RNG.normal(0, 0.3, (3 * 3 * 4, 2)))
    nodes = [
        helper.make_node("Sub", ["x", "mean"], ["xs"]),
        helper.make_node("Div", ["xs", "four"], ["xn"]),
        helper.make_node("Conv", ["xn", "W1", "b1"], ["c1"], strides=[2, 1], pads=[1, 0, 1, 0], kernel_shape=[3, 2]),
        helper.make_node("BatchNormalization", ["c1", "g", "be", "mu", "var"], ["bn"], epsilon=1e-3),
        helper.make_node("Relu", ["bn"], ["r1"]),
        helper.make_node("Dropout", ["r1", "ratio"], ["d1"]),
        helper.make_node("Flatten", ["d1"], ["f1"]),
        helper.make_node("Gemm", ["f1", "G"], ["y"]),
    ]
    inits = [init("mean", mean), init("four", f32(4.0)), init("W1", W1), init("b1", b1), init("g", g), init("be", be),
             init("mu", mu), init("var", var), init("ratio", f32(0.5)), init("G", G)]

    def ref1(x):
        z = conv_ref((x[0] - mean[0]) / 4.0, W1.astype(float), b1.astype(float), (2, 1), (1, 0, 1, 0))
        d = lambda a: a.astype(np.float64)[:, None, None]
        z = (z - d(mu)) / np.sqrt(d(var) + float(np.float32(1e-3))) * d(g) + d(be)
        return np.maximum(z, 0).reshape(1, -1) @ G.astype(float)

    save(out, "conv_bn", helper.make_graph(nodes, "conv_bn", [vi("x", [1, 2, 6, 5])], [vi("y", [1, 2])], inits),
         ref1, (1, 2, 6, 5))

    # 2. zero Pad, Conv 2@3x3, Relu, AveragePool 2x2 s2, Flatten, Gemm
    W2 = f32(RNG.normal(0, 0.4, (2, 1, 3, 3)))
    G2 = f32(RNG.normal(0, 0.3, (2 * 3 * 3, 3)))
    nodes = [
        helper.make_node("Pad", ["x", "pads"], ["p"], mode="constant"),
        helper.make_node("Conv", ["p", "W2"], ["c"]),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("AveragePool", ["r"], ["a"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Flatten", ["a"], ["f"]),
        helper.make_node("Gemm", ["f", "G2"], ["y"]),
    ]
    inits = [init("pads", np.array([0, 0, 1, 1, 0, 0, 1, 1], dtype=np.int64)), init("W2", W2), init("G2", G2)]

    def ref2(x):
        z = conv_ref(np.pad(x[0], ((0, 0), (1, 1), (1, 1))), W2.astype(float), None)
        return avg_ref(np.maximum(z, 0), (2, 2), (2, 2)).reshape(1, -1) @ G2.astype(float)

    save(out, "pad_avgpool", helper.make_graph(nodes, "pad_avgpool", [vi("x", [1, 1, 6, 6])], [vi("y", [1, 3])],
                                               inits), ref2, (1, 1, 6, 6))

    # 3. NHWC input: Transpose to NCHW, Conv, Relu, Transpose back, Reshape, MatMul
    W3 = f32(RNG.normal(0, 0.4, (3, 2, 2, 3)))
    M3 = f32(RNG.normal(0, 0.3, (4 * 3 * 3, 2)))
    nodes = [
        helper.make_node("Transpose", ["x"], ["t"], perm=[0, 3, 1, 2]),
        helper.make_node("Conv", ["t", "W3"], ["c"], pads=[0, 1, 0, 1]),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("Transpose", ["r"], ["tb"], perm=[0, 2, 3, 1]),
        helper.make_node("Reshape", ["tb", "shape"], ["f"]),
        helper.make_node("MatMul", ["f", "M3"], ["y"]),
    ]
    inits = [init("W3", W3), init("shape", np.array([1, -1], dtype=np.int64)), init("M3", M3)]

    def ref3(x):
        z = conv_ref(np.transpose(x[0], (2, 0, 1)), W3.astype(float), None, (1, 1), (0, 1, 0, 1))
        return np.transpose(np.maximum(z, 0), (1, 2, 0)).reshape(1, -1) @ M3.astype(float)

    save(out, "nhwc", helper.make_graph(nodes, "nhwc", [vi("x", [1, 5, 3, 2])], [vi("y", [1, 2])], inits), ref3,
         (1, 5, 3, 2))

    # 4. GlobalAveragePool (16 = 4x4 positions: an exact division)
    W4 = f32(RNG.normal(0, 0.4, (3, 1, 3, 3)))
    nodes = [
        helper.make_node("Conv", ["x", "W4"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("GlobalAveragePool", ["r"], ["a"]),
        helper.make_node("Flatten", ["a"], ["y"]),
    ]

    def ref4(x):
        z = np.maximum(conv_ref(x[0], W4.astype(float), None, (1, 1), (1, 1, 1, 1)), 0)
        return z.mean(axis=(1, 2))

    save(out, "global_avg", helper.make_graph(nodes, "global_avg", [vi("x", [1, 1, 4, 4])], [vi("y", [1, 3])],
                                              [init("W4", W4)]), ref4, (1, 1, 4, 4))

    # 5. MaxPool (a max-pool node) on values of either sign and after a ReLU,
    #    against a direct float64 max over each window
    def max_ref(x, k):
        C, H, W = x.shape
        ho, wo = H // k[0], W // k[1]
        y = np.zeros((C, ho, wo))
        for i in range(ho):
            for j in range(wo):
                y[:, i, j] = x[:, i * k[0]:(i + 1) * k[0], j * k[1]:(j + 1) * k[1]].max(axis=(1, 2))
        return y

    # 5a. at the input (no layer before it), a 2x3 window (6 values: an odd level), H, W not multiples
    nodes = [helper.make_node("MaxPool", ["x"], ["m"], kernel_shape=[2, 3], strides=[2, 3], pads=[0, 0, 0, 0]),
             helper.make_node("Flatten", ["m"], ["y"])]
    save(out, "maxpool_in", helper.make_graph(nodes, "maxpool_in", [vi("x", [1, 2, 5, 7])], [vi("y", [1, 8])], []),
         lambda x: max_ref(x[0], (2, 3)), (1, 2, 5, 7))
    # 5b. Conv, Relu, MaxPool 3x3 (9 values, inputs >= 0), Flatten, Gemm
    W5 = f32(RNG.normal(0, 0.5, (2, 1, 3, 3)))
    G5 = f32(RNG.normal(0, 0.4, (2 * 2 * 2, 3)))
    nodes = [helper.make_node("Conv", ["x", "W5"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("MaxPool", ["r"], ["m"], kernel_shape=[3, 3], strides=[3, 3]),
             helper.make_node("Flatten", ["m"], ["f"]),
             helper.make_node("Gemm", ["f", "G5"], ["y"])]
    save(out, "maxpool_relu", helper.make_graph(nodes, "maxpool_relu", [vi("x", [1, 1, 6, 7])], [vi("y", [1, 3])],
                                                [init("W5", W5), init("G5", G5)]),
         lambda x: max_ref(np.maximum(conv_ref(x[0], W5.astype(float), None, (1, 1), (1, 1, 1, 1)), 0),
                           (3, 3)).reshape(1, -1) @ G5.astype(float), (1, 1, 6, 7))
    # 5c. Conv (no activation), GlobalMaxPool over 4x4 = 16 values of either sign
    nodes = [helper.make_node("Conv", ["x", "W4"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("GlobalMaxPool", ["c"], ["m"]),
             helper.make_node("Flatten", ["m"], ["y"])]
    save(out, "maxpool_global", helper.make_graph(nodes, "maxpool_global", [vi("x", [1, 1, 4, 4])], [vi("y", [1, 3])],
                                                  [init("W4", W4)]),
         lambda x: conv_ref(x[0], W4.astype(float), None, (1, 1), (1, 1, 1, 1)).max(axis=(1, 2)), (1, 1, 4, 4))

    # 5d. overlapping padded windows: MaxPool 3x3, stride 2, pads 1 (-inf) at the input, either sign
    def max_ref_pad(x, k, st, p):
        C, H, W = x.shape
        xp = np.full((C, H + 2 * p[0], W + 2 * p[1]), -np.inf)
        xp[:, p[0]:p[0] + H, p[1]:p[1] + W] = x
        ho, wo = (H + 2 * p[0] - k[0]) // st[0] + 1, (W + 2 * p[1] - k[1]) // st[1] + 1
        y = np.zeros((C, ho, wo))
        for i in range(ho):
            for j in range(wo):
                y[:, i, j] = xp[:, i * st[0]:i * st[0] + k[0], j * st[1]:j * st[1] + k[1]].max(axis=(1, 2))
        return y

    nodes = [helper.make_node("MaxPool", ["x"], ["m"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
             helper.make_node("Flatten", ["m"], ["y"])]
    save(out, "maxpool_overlap", helper.make_graph(nodes, "maxpool_overlap", [vi("x", [1, 2, 5, 6])],
                                                   [vi("y", [1, 18])], []),
         lambda x: max_ref_pad(x[0], (3, 3), (2, 2), (1, 1)), (1, 2, 5, 6))

    # grouped convs: depthwise (group 4 on 4 channels, stride 2, pads 1) then group 2 (4 -> 6 channels)
    Wd, bd = f32(RNG.normal(0, 0.5, (4, 1, 3, 3))), f32(RNG.normal(0, 0.1, 4))
    Wg = f32(RNG.normal(0, 0.5, (6, 2, 2, 2)))
    Gg = f32(RNG.normal(0, 0.3, (6 * 2 * 2, 2)))
    nodes = [helper.make_node("Conv", ["x", "Wd", "bd"], ["c1"], group=4, strides=[2, 2], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c1"], ["r1"]),
             helper.make_node("Conv", ["r1", "Wg"], ["c2"], group=2),
             helper.make_node("Relu", ["c2"], ["r2"]),
             helper.make_node("Flatten", ["r2"], ["f"]),
             helper.make_node("Gemm", ["f", "Gg"], ["y"])]

    def grouped_ref(x, W, b, group, strides=(1, 1), pads=(0, 0, 0, 0)):
        C, M = x.shape[0], W.shape[0]
        parts = [conv_ref(x[g * C // group:(g + 1) * C // group], W[g * M // group:(g + 1) * M // group],
                          None if b is None else b[g * M // group:(g + 1) * M // group], strides, pads)
                 for g in range(group)]
        return np.concatenate(parts, axis=0)

    def refg(x):
        z = np.maximum(grouped_ref(x[0], Wd.astype(float), bd.astype(float), 4, (2, 2), (1, 1, 1, 1)), 0)
        z = np.maximum(grouped_ref(z, Wg.astype(float), None, 2), 0)
        return z.reshape(1, -1) @ Gg.astype(float)

    save(out, "conv_group", helper.make_graph(nodes, "conv_group", [vi("x", [1, 4, 5, 6])], [vi("y", [1, 2])],
                                              [init("Wd", Wd), init("bd", bd), init("Wg", Wg), init("Gg", Gg)]),
         refg, (1, 4, 5, 6))

    # ReLU6 (Clip 0..6) after a conv and after a depthwise conv (MobileNet style): the Clip's
    # negations are per-channel constants, 1x1 convs, never n x n diagonals
    Wr, br = f32(RNG.normal(0, 3.0, (4, 2, 3, 3))), f32(RNG.normal(0, 1.0, 4))
    Wr2 = f32(RNG.normal(0, 1.5, (4, 1, 3, 3)))
    Gr = f32(RNG.normal(0, 0.3, (4 * 6 * 6, 2)))
    nodes = [helper.make_node("Conv", ["x", "Wr", "br"], ["c1"], pads=[1, 1, 1, 1]),
             helper.make_node("Clip", ["c1", "zero", "six"], ["r1"]),
             helper.make_node("Conv", ["r1", "Wr2"], ["c2"], group=4, pads=[1, 1, 1, 1]),
             helper.make_node("Clip", ["c2", "zero", "six"], ["r2"]),
             helper.make_node("Flatten", ["r2"], ["f"]),
             helper.make_node("Gemm", ["f", "Gr"], ["y"])]

    def refr(x):
        z = np.clip(conv_ref(x[0], Wr.astype(float), br.astype(float), pads=(1, 1, 1, 1)), 0, 6)
        parts = [conv_ref(z[c:c + 1], Wr2[c:c + 1].astype(float), None, pads=(1, 1, 1, 1)) for c in range(4)]
        return np.clip(np.concatenate(parts, axis=0), 0, 6).reshape(1, -1) @ Gr.astype(float)

    save(out, "conv_relu6", helper.make_graph(nodes, "conv_relu6", [vi("x", [1, 2, 6, 6])], [vi("y", [1, 2])],
                                              [init("Wr", Wr), init("br", br), init("Wr2", Wr2), init("Gr", Gr),
                                               init("zero", f32(0.0)), init("six", f32(6.0))]),
         refr, (1, 2, 6, 6))

    # Resize, nearest: by sizes (half_pixel, round_prefer_floor: the defaults), by scales 1.5 and
    # 0.5 (align_corners, round_prefer_ceil), by scales 3 and 2 (pytorch_half_pixel, ceil), by
    # sizes (tf_half_pixel_for_nn, floor); an opset-9 Upsample (floor of x / scale)
    from fractions import Fraction as Fr
    modes = [("half_pixel", "round_prefer_floor"), ("align_corners", "round_prefer_ceil"),
             ("pytorch_half_pixel", "ceil"), ("tf_half_pixel_for_nn", "floor")]

    def src(x, scale, lo, lr, coord, rnd):
        """The ONNX Resize spec's source index of output coordinate x, in exact fractions."""
        if coord == "half_pixel":
            v = (x + Fr(1, 2)) / scale - Fr(1, 2)
        elif coord == "pytorch_half_pixel":
            v = (x + Fr(1, 2)) / scale - Fr(1, 2) if lr > 1 else Fr(0)
        elif coord == "align_corners":
            v = Fr(x * (lo - 1), lr - 1) if lr > 1 else Fr(0)
        elif coord == "tf_half_pixel_for_nn":
            v = (x + Fr(1, 2)) / scale
        else:
            v = x / scale
        fl = v.numerator // v.denominator
        fr = v - fl
        i = {"floor": fl, "ceil": fl + (fr > 0), "round_prefer_floor": fl + (fr > Fr(1, 2)),
             "round_prefer_ceil": fl + (fr >= Fr(1, 2))}[rnd]
        return min(max(i, 0), lo - 1)

    def resize_ref(x, scales, coord, rnd):
        C, H, W = x.shape
        lr = [int(H * scales[0]), int(W * scales[1])]
        ys = [src(y, scales[0], H, lr[0], coord, rnd) for y in range(lr[0])]
        xs = [src(v, scales[1], W, lr[1], coord, rnd) for v in range(lr[1])]
        return x[:, ys][:, :, xs]

    steps = [("sizes", (5, 7)), ("scales", (Fr(3, 2), Fr(1, 2))), ("scales", (Fr(3), Fr(2))), ("sizes", (4, 6))]
    nodes, inits, cur, hw = [], [], "x", (3, 4)
    scale_list = []
    for k, ((kind, v), (coord, rnd)) in enumerate(zip(steps, modes)):
        if kind == "sizes":
            inits.append(init("sz%d" % k, np.array([1, 2, v[0], v[1]], dtype=np.int64)))
            ins = [cur, "", "", "sz%d" % k]
            sc = (Fr(v[0], hw[0]), Fr(v[1], hw[1]))
            hw = v
        else:
            inits.append(init("sc%d" % k, f32([1, 1, float(v[0]), float(v[1])])))
            ins = [cur, "", "sc%d" % k]
            sc = v
            hw = (int(hw[0] * v[0]), int(hw[1] * v[1]))
        scale_list.append(sc)
        nodes.append(helper.make_node("Resize", ins, ["rs%d" % k], mode="nearest", coordinate_transformation_mode=coord,
                                      nearest_mode=rnd))
        nodes.append(helper.make_node("Relu", ["rs%d" % k], ["rr%d" % k]))
        cur = "rr%d" % k
    Gz = f32(RNG.normal(0, 0.3, (2 * hw[0] * hw[1], 2)))
    nodes += [helper.make_node("Flatten", [cur], ["f"]), helper.make_node("Gemm", ["f", "Gz"], ["y"])]
    inits.append(init("Gz", Gz))

    def refz(x):
        z = x[0]
        for sc, (coord, rnd) in zip(scale_list, modes):
            z = np.maximum(resize_ref(z, sc, coord, rnd), 0)
        return z.reshape(1, -1) @ Gz.astype(float)

    save(out, "resize", helper.make_graph(nodes, "resize", [vi("x", [1, 2, 3, 4])], [vi("y", [1, 2])], inits),
         refz, (1, 2, 3, 4))
    nodes = [helper.make_node("Upsample", ["x", "us"], ["u"], mode="nearest"),
             helper.make_node("Flatten", ["u"], ["y"])]
    save(out, "upsample9", helper.make_graph(nodes, "upsample9", [vi("x", [1, 1, 2, 3])], [vi("y", [1, 48])],
                                             [init("us", f32([1, 1, 2, 4]))]),
         lambda x: resize_ref(x[0], (Fr(2), Fr(4)), "asymmetric", "floor").reshape(1, -1), (1, 1, 2, 3), opset=9)

    # ConvTranspose: group 2, strides (2, 3), asymmetric pads, output_padding; then one whose pads
    # exceed kernel - 1 (a crop)
    Wt, bt = f32(RNG.normal(0, 0.5, (2, 2, 3, 4))), f32(RNG.normal(0, 0.1, 4))
    Wt2 = f32(RNG.normal(0, 0.5, (4, 1, 2, 2)))
    Gt = f32(RNG.normal(0, 0.3, (1 * 6 * 13, 2)))
    nodes = [helper.make_node("ConvTranspose", ["x", "Wt", "bt"], ["t1"], group=2, strides=[2, 3],
                              pads=[1, 0, 0, 2], output_padding=[1, 2]),
             helper.make_node("Relu", ["t1"], ["r1"]),
             helper.make_node("ConvTranspose", ["r1", "Wt2"], ["t2"], pads=[2, 2, 2, 2]),
             helper.make_node("Relu", ["t2"], ["r2"]),
             helper.make_node("Flatten", ["r2"], ["f"]),
             helper.make_node("Gemm", ["f", "Gt"], ["y"])]

    def convt_ref(x, W, b, strides=(1, 1), pads=(0, 0, 0, 0), outpad=(0, 0), group=1):
        """ConvTranspose by its definition: each input pixel adds its value times the kernel
        at stride offsets; then the pads are cut off."""
        C, H, Wd = x.shape
        _, Mg, kh, kw = W.shape
        M, Cg = Mg * group, C // group
        full = np.zeros((M, (H - 1) * strides[0] + kh + outpad[0], (Wd - 1) * strides[1] + kw + outpad[1]))
        for c in range(C):
            g = c // Cg
            for i in range(H):
                for j in range(Wd):
                    full[g * Mg:(g + 1) * Mg, i * strides[0]:i * strides[0] + kh,
                         j * strides[1]:j * strides[1] + kw] += x[c, i, j] * W[c]
        ho = strides[0] * (H - 1) + outpad[0] + kh - pads[0] - pads[2]
        wo = strides[1] * (Wd - 1) + outpad[1] + kw - pads[1] - pads[3]
        y = full[:, pads[0]:pads[0] + ho, pads[1]:pads[1] + wo]
        return y + (b[:, None, None] if b is not None else 0.0)

    def reft(x):
        z = np.maximum(convt_ref(x[0], Wt.astype(float), bt.astype(float), (2, 3), (1, 0, 0, 2), (1, 2), 2), 0)
        z = np.maximum(convt_ref(z, Wt2.astype(float), None, pads=(2, 2, 2, 2)), 0)
        return z.reshape(1, -1) @ Gt.astype(float)

    save(out, "conv_transpose", helper.make_graph(nodes, "conv_transpose", [vi("x", [1, 2, 4, 5])],
                                                  [vi("y", [1, 2])],
                                                  [init("Wt", Wt), init("bt", bt), init("Wt2", Wt2), init("Gt", Gt)]),
         reft, (1, 2, 4, 5))

    # refused: asymmetric or too large pads, dilated and ceil_mode MaxPool, group 2 on 3 channels (invalid), a 3x3 average (1/9 is not a double), dilation 2
    def refused(name, node, inits, shape):
        g = helper.make_graph([helper.make_node("Conv", ["x", "W"], ["c"]), helper.make_node("Relu", ["c"], ["r"]), node],
                              name, [vi("x", shape)], [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              [init("W", W4)] + inits)
        save(out, name, g)

    refused("bad_maxpool", helper.make_node("MaxPool", ["r"], ["y"], kernel_shape=[2, 2], pads=[0, 0, 1, 1]), [],
            [1, 1, 6, 6])
    refused("bad_maxpool_pads", helper.make_node("MaxPool", ["r"], ["y"], kernel_shape=[2, 2], strides=[2, 2],
                                                 pads=[2, 2, 2, 2]), [], [1, 1, 6, 6])
    refused("bad_maxpool_dil", helper.make_node("MaxPool", ["r"], ["y"], kernel_shape=[2, 2], strides=[2, 2],
                                                dilations=[2, 2]), [], [1, 1, 6, 6])
    refused("bad_maxpool_ceil", helper.make_node("MaxPool", ["r"], ["y"], kernel_shape=[2, 2], strides=[2, 2],
                                                 ceil_mode=1), [], [1, 1, 7, 7])
    refused("bad_avg3", helper.make_node("AveragePool", ["r"], ["y"], kernel_shape=[3, 3]), [], [1, 1, 6, 6])
    refused("bad_group", helper.make_node("Conv", ["r", "Wg"], ["y"], group=2),
            [init("Wg", f32(RNG.normal(0, 1, (3, 1, 1, 1))))], [1, 1, 6, 6])
    refused("bad_dilation", helper.make_node("Conv", ["r", "Wd"], ["y"], dilations=[2, 2]),
            [init("Wd", f32(RNG.normal(0, 1, (2, 3, 2, 2))))], [1, 1, 6, 6])


if __name__ == "__main__":
    main(sys.argv[1])
