#!/usr/bin/python3
"""A CIFAR-sized max-pooling CNN with random weights, and L-inf robustness
properties on it, for the deadline benchmark (benchmarks/deadline.sh).

  cifar_maxpool_make.py OUTDIR [EPS ...]
  cifar_maxpool_make.py --overlap OUTDIR [EPS ...]
  cifar_maxpool_make.py --big-mlp OUTDIR


writes OUTDIR/cifar_maxpool.onnx:
  3x32x32 -> Conv 16 (3x3, pad 1) -> Relu -> MaxPool 2x2
          -> Conv 32 (3x3, pad 1) -> Relu -> MaxPool 2x2 -> Flatten -> Gemm 10
(He-scaled normal weights, seed 7; opset 13, built with the onnx package, no
PyTorch), and OUTDIR/cifar_maxpool_EPS.vnnlib for each EPS (default 0.002
0.01): the box of radius EPS around one random image in [0, 1]^3072 (clipped
to [0, 1]) and the negation of "the label the network gives the image wins".
The network is not trained: its purpose is the size of the bound computation
(max-pool nodes, whose exact ReLU form is chains of ReLUs), not a meaningful
verdict. OUTDIR/cifar_maxpool_check.npy and _check_y.txt hold 4 random
images and the network's float64 numpy outputs on them (the oracle for
`lgelu eval --input`).

--overlap writes OUTDIR/cifar_maxpool3s2.onnx (and its properties and check
files) instead: the same net with MaxPool 3x3, stride 2, pads 1 (overlapping
windows, -inf padding) in place of each 2x2 pool; the shapes are the same.

--big-mlp writes OUTDIR/big_mlp.onnx instead, a 3072-4096-4096-10 ReLU MLP
(118 MB of float32 weights: the import of a large file), and
OUTDIR/big_mlp_0.001.vnnlib (the same kind of property, eps 0.001).
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
import vnnlib_write  # noqa: E402  (tests/vnnlib_write.py)


def conv_ref(x, W, b):
    """Float64 3x3 convolution, stride 1, zero padding 1 (C,H,W layout)."""
    C, H, Wd = x.shape
    xp = np.pad(x, ((0, 0), (1, 1), (1, 1)))
    y = np.zeros((W.shape[0], H, Wd))
    for di in range(3):
        for dj in range(3):
            y += np.einsum("mc,chw->mhw", W[:, :, di, dj], xp[:, di:di + H, dj:dj + Wd])
    return y + b[:, None, None]


def pool_ref(x, overlap=False):
    C, H, W = x.shape
    if not overlap:
        return x.reshape(C, H // 2, 2, W // 2, 2).max(axis=(2, 4))
    xp = np.full((C, H + 2, W + 2), -np.inf)  # MaxPool 3x3, stride 2, pads 1: padding is -inf
    xp[:, 1:H + 1, 1:W + 1] = x
    ho, wo = (H - 1) // 2 + 1, (W - 1) // 2 + 1
    y = np.empty((C, ho, wo))
    for i in range(ho):
        for j in range(wo):
            y[:, i, j] = xp[:, 2 * i:2 * i + 3, 2 * j:2 * j + 3].max(axis=(1, 2))
    return y


def write_vnnlib(path, x0, label, eps, n_out, what):
    vnnlib_write.robustness(path, x0, eps, label, n_out, f"{what}: random image, label {label}, eps {eps}",
                            fmt="%.9f", lo=0.0, hi=1.0)


def big_mlp(out):
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(1)
    dims = [3072, 4096, 4096, 10]
    nodes, inits, x = [], [], "x"
    Ws = []
    for i in range(3):
        W = rng.normal(0, np.sqrt(2 / dims[i]), (dims[i], dims[i + 1])).astype(np.float32)
        b = np.zeros(dims[i + 1], np.float32)
        Ws.append(W)
        inits += [numpy_helper.from_array(W, f"W{i}"), numpy_helper.from_array(b, f"b{i}")]
        nodes.append(helper.make_node("MatMul", [x, f"W{i}"], [f"m{i}"]))
        nodes.append(helper.make_node("Add", [f"m{i}", f"b{i}"], [f"a{i}"]))
        x = f"a{i}"
        if i < 2:
            nodes.append(helper.make_node("Relu", [x], [f"r{i}"]))
            x = f"r{i}"
    graph = helper.make_graph(nodes, "big_mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3072])],
                              [helper.make_tensor_value_info(x, TensorProto.FLOAT, [1, 10])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    onnx.save(model, os.path.join(out, "big_mlp.onnx"))
    x0 = rng.uniform(0, 1, 3072)
    h = x0
    for i, W in enumerate(Ws):
        h = h @ W.astype(np.float64)
        if i < 2:
            h = np.maximum(h, 0)
    write_vnnlib(os.path.join(out, "big_mlp_0.001.vnnlib"), x0, int(np.argmax(h)), 0.001, 10, "big_mlp")


def main(out, eps_list, overlap=False):
    os.makedirs(out, exist_ok=True)
    name = "cifar_maxpool3s2" if overlap else "cifar_maxpool"
    pool = dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]) if overlap else \
        dict(kernel_shape=[2, 2], strides=[2, 2])
    rng = np.random.default_rng(7)
    W1 = rng.normal(0, np.sqrt(2 / 27), (16, 3, 3, 3)).astype(np.float32)
    b1 = rng.normal(0, 0.01, 16).astype(np.float32)
    W2 = rng.normal(0, np.sqrt(2 / 144), (32, 16, 3, 3)).astype(np.float32)
    b2 = rng.normal(0, 0.01, 32).astype(np.float32)
    W3 = rng.normal(0, np.sqrt(2 / 2048), (10, 2048)).astype(np.float32)
    b3 = rng.normal(0, 0.01, 10).astype(np.float32)
    nodes = [
        helper.make_node("Conv", ["x", "W1", "b1"], ["c1"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("MaxPool", ["r1"], ["p1"], **pool),
        helper.make_node("Conv", ["p1", "W2", "b2"], ["c2"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c2"], ["r2"]),
        helper.make_node("MaxPool", ["r2"], ["p2"], **pool),
        helper.make_node("Flatten", ["p2"], ["f"], axis=1),
        helper.make_node("Gemm", ["f", "W3", "b3"], ["y"], transB=1),
    ]
    inits = [numpy_helper.from_array(a, n) for n, a in
             (("W1", W1), ("b1", b1), ("W2", W2), ("b2", b2), ("W3", W3), ("b3", b3))]
    graph = helper.make_graph(nodes, name,
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 32, 32])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, os.path.join(out, name + ".onnx"))

    def forward(x):
        h = pool_ref(np.maximum(conv_ref(x, W1.astype(np.float64), b1.astype(np.float64)), 0), overlap)
        h = pool_ref(np.maximum(conv_ref(h, W2.astype(np.float64), b2.astype(np.float64)), 0), overlap)
        return W3.astype(np.float64) @ h.reshape(-1) + b3

    x0 = rng.uniform(0, 1, (3, 32, 32))
    label = int(np.argmax(forward(x0)))
    X = rng.uniform(0, 1, (4, 3, 32, 32))
    np.save(os.path.join(out, name + "_check.npy"), X.reshape(4, -1))
    np.savetxt(os.path.join(out, name + "_check_y.txt"), np.array([forward(x) for x in X]), fmt="%.17g")
    x0 = x0.reshape(-1)
    for eps in eps_list:
        write_vnnlib(os.path.join(out, f"{name}_{eps:g}.vnnlib"), x0, label, eps, 10, name)

if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    if sys.argv[1] == "--big-mlp":
        big_mlp(sys.argv[2])
        sys.exit(0)
    ov = sys.argv[1] == "--overlap"
    main(sys.argv[1 + ov], [float(e) for e in sys.argv[2 + ov:]] or [0.002, 0.01], ov)
