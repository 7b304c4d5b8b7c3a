#!/usr/bin/python3
"""oval21-style CIFAR CNNs with random weights, and targeted L-inf properties on them.

  oval21_make.py OUTDIR IMAGES EPS[,EPS...]

writes, for NAME in cifar_base_kw, cifar_wide_kw, cifar_deep_kw (the three architectures of
VNN-COMP 2021's oval21 category; its weights and CIFAR-10 images are not on this machine):
  base: Conv 8 (4x4, stride 2, pad 1) Relu, Conv 16 (4x4, s2, p1) Relu, Gemm 100 Relu, Gemm 10
  wide: Conv 16 (4x4, s2, p1) Relu, Conv 32 (4x4, s2, p1) Relu, Gemm 100 Relu, Gemm 10
  deep: Conv 8 (4x4, s2, p1) Relu, Conv 8 (3x3, s1, p1) Relu, Conv 8 (3x3, s1, p1) Relu,
        Conv 8 (4x4, s2, p1) Relu, Gemm 100 Relu, Gemm 10
OUTDIR/NAME.onnx (3x32x32 input in [0, 1], He-scaled normal weights, seed 11 + net index,
opset 13, built with the onnx package) and OUTDIR/NAME_I_EPS.vnnlib for the first IMAGES random
images (uniform in [0, 1]^3072, seed 5) and each EPS: the box of radius EPS clipped to [0, 1] and,
as oval21's properties do, one target class t: (assert (>= Y_t Y_label)), t the class with the
network's second largest output on the image (float64 numpy forward pass). NAME_check.npy and
NAME_check_y.txt: 4 other random images and the numpy outputs on them (for `lgelu eval --input`). The networks are not
trained: the point is the size and shape of the bound computation, not a meaningful verdict.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ARCH = {  # (out channels, kernel, stride, pad) per conv, then the hidden dense width
    "cifar_base_kw": ([(8, 4, 2, 1), (16, 4, 2, 1)], 100),
    "cifar_wide_kw": ([(16, 4, 2, 1), (32, 4, 2, 1)], 100),
    "cifar_deep_kw": ([(8, 4, 2, 1), (8, 3, 1, 1), (8, 3, 1, 1), (8, 4, 2, 1)], 100),
}


def conv_ref(x, W, b, s, p):
    C, H, Wd = x.shape
    k = W.shape[2]
    xp = np.pad(x, ((0, 0), (p, p), (p, p)))
    ho, wo = (H + 2 * p - k) // s + 1, (Wd + 2 * p - k) // s + 1
    y = np.zeros((W.shape[0], ho, wo))
    for di in range(k):
        for dj in range(k):
            y += np.einsum("mc,chw->mhw", W[:, :, di, dj], xp[:, di:di + s * ho:s, dj:dj + s * wo:s])
    return y + b[:, None, None]


def build(name, seed):
    convs, hid = ARCH[name]
    rng = np.random.default_rng(seed)
    nodes, inits, layers = [], [], []
    x, c, hw = "x", 3, 32
    for i, (m, k, s, p) in enumerate(convs):
        W = rng.normal(0, np.sqrt(2 / (c * k * k)), (m, c, k, k)).astype(np.float32)
        b = rng.normal(0, 0.01, m).astype(np.float32)
        inits += [numpy_helper.from_array(W, f"W{i}"), numpy_helper.from_array(b, f"b{i}")]
        nodes += [helper.make_node("Conv", [x, f"W{i}", f"b{i}"], [f"c{i}"], kernel_shape=[k, k],
                                   strides=[s, s], pads=[p, p, p, p]),
                  helper.make_node("Relu", [f"c{i}"], [f"r{i}"])]
        layers.append(("conv", W, b, s, p))
        x, c, hw = f"r{i}", m, (hw + 2 * p - k) // s + 1
    nodes.append(helper.make_node("Flatten", [x], ["f"], axis=1))
    x, n = "f", c * hw * hw
    for j, width in enumerate((hid, 10)):
        W = rng.normal(0, np.sqrt(2 / n), (width, n)).astype(np.float32)
        b = rng.normal(0, 0.01, width).astype(np.float32)
        inits += [numpy_helper.from_array(W, f"G{j}"), numpy_helper.from_array(b, f"g{j}")]
        nodes.append(helper.make_node("Gemm", [x, f"G{j}", f"g{j}"], [f"d{j}"], transB=1))
        x, n = f"d{j}", width
        layers.append(("dense", W, b))
        if j == 0:
            nodes.append(helper.make_node("Relu", ["d0"], ["q0"]))
            x = "q0"
    graph = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 32, 32])],
                              [helper.make_tensor_value_info(x, TensorProto.FLOAT, [1, 10])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    onnx.checker.check_model(model, full_check=True)

    def forward(v):
        h = v.reshape(3, 32, 32)
        for L in layers:
            if L[0] == "conv":
                h = np.maximum(conv_ref(h, L[1].astype(np.float64), L[2].astype(np.float64), L[3], L[4]), 0)
            else:
                h = L[1].astype(np.float64) @ h.reshape(-1) + L[2].astype(np.float64)
                if L[1].shape[0] != 10:
                    h = np.maximum(h, 0)
        return h

    return model, forward


def write_target(path, x0, eps, label, target, comment):
    lines = ["; " + comment]
    lines += ["(declare-const X_%d Real)" % i for i in range(len(x0))]
    lines += ["(declare-const Y_%d Real)" % j for j in range(10)]
    for i, v in enumerate(x0):
        lines.append("(assert (>= X_%d %.9f))" % (i, max(0.0, float(v) - eps)))
        lines.append("(assert (<= X_%d %.9f))" % (i, min(1.0, float(v) + eps)))
    lines.append("(assert (>= Y_%d Y_%d))" % (target, label))
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def main(out, n_img, eps_list):
    os.makedirs(out, exist_ok=True)
    X = np.random.default_rng(5).uniform(0, 1, (n_img, 3072))
    for k, name in enumerate(ARCH):
        model, forward = build(name, 11 + k)
        onnx.save(model, os.path.join(out, name + ".onnx"))
        C = np.random.default_rng(6).uniform(0, 1, (4, 3072))  # the import check: lgelu eval --input
        np.save(os.path.join(out, name + "_check.npy"), C)
        np.savetxt(os.path.join(out, name + "_check_y.txt"), np.array([forward(c) for c in C]), fmt="%.17g")
        for i in range(n_img):
            y = forward(X[i])
            order = np.argsort(-y)
            label, target = int(order[0]), int(order[1])
            for eps in eps_list:
                write_target(os.path.join(out, f"{name}_{i}_{eps:g}.vnnlib"), X[i], eps, label, target,
                             f"{name}: random image {i}, label {label}, target {target}, eps {eps}")


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(sys.argv[1], int(sys.argv[2]), [float(e) for e in sys.argv[3].split(",")])
