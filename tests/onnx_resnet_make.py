#!/usr/bin/env python3
"""Graph-shaped ONNX models in third-party styles for the Check suite
`graph_onnx` (test-only; PyTorch-free).

  onnx_resnet_make.py OUTDIR

writes OUTDIR/NAME.onnx for each model below and OUTDIR/NAME.txt: pairs of
lines (input vector, output vector, %.17g) from an independent float64 numpy
interpreter of the graph (this file's `run`: explicit zero padding and
window sums, BatchNormalization as the ONNX spec writes it, numpy's MatMul).

  resnet_torch       torchvision BasicBlock style: Conv-BN-Relu-Conv-BN, identity and
                     1x1 strided conv+BN shortcuts, Add, Relu; GlobalAveragePool, Flatten, Gemm
  resnet_torch_flat  the same blocks ending in Flatten, Gemm; symbolic batch dimension
  resnet_vnn         VNN-COMP style: Conv (bias)/Relu/Add, 1x1 strided shortcuts (before the
                     main branch in node order), Flatten, Gemm, Relu, Gemm; no BN
  resnet_keras       tf2onnx/Keras style: NHWC input, Transpose, asymmetric Pad before a
                     strided Conv, Add, Relu, Transpose back, Reshape, MatMul + Add
  mscn               MSCN-like: Slice and Split of the input through separate Gemm+Relu
                     branches, Concat, Gemm, Relu, Gemm
  mm_tiny            VNN-COMP test_tiny style: 1-D input [1], MatMul(W, x), Add, Relu, MatMul
  mm_small           1-D input [2]: MatMul(x, W), Add, Relu, MatMul with a 1-D weight (scalar out)
  pad_conv           Pad then Conv on a 3x32x32 input, Relu, Flatten, Gemm
  gemm_conv          Gemm, Reshape to an image, Conv, Relu, Flatten, Gemm (the conv stays a conv)
  gelu_res           a residual sum into the GELU pattern x*0.5*(1+erf(x/sqrt(2))), and a sum
                     of two Gemm values over different nodes
  norm_fork          a Sub of the input read by one branch while another reads the raw input
  const_fork         Add and Mul of a scalar constant on a node two nodes read
  sig_fork           a Sigmoid of a value another Gemm reads too (a sigmoid layer, not a Swish gate)
  twice              Add(z, z) of a pending map, Concat(h, h) of one node
  gelu_fork          the GELU pattern on a node another Gemm reads too
  bad_*              refused: Mul of two network values, Concat with a constant, Add that broadcasts,
                     a constant 1/3 (folded only when exact)
  sub_nodes          Sub of two plain node outputs (the subtracted one a layer of its own, times -1)
  chunk_neg          torch's chunk(2, dim=1) with a dynamic batch axis (int64 Add/Div/Mul on the
                     shape), Neg
  clips              Clip as ReLU6, Hardtanh and one-sided clamps, one on a residual sum, one
                     right after a Relu
"""
import math
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

RNG = np.random.default_rng(29)


def f32(a):
    return np.asarray(a, dtype=np.float32)


def attr(node, name, default):
    for a in node.attribute:
        if a.name == name:
            return helper.get_attribute_value(a)
    return default


def conv(x, W, b, strides, pads):
    x = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    _, C, H, Wd = x.shape
    M, _, kh, kw = W.shape
    ho, wo = (H - kh) // strides[0] + 1, (Wd - kw) // strides[1] + 1
    y = np.zeros((1, M, ho, wo))
    for i in range(ho):
        for j in range(wo):
            win = x[0, :, i * strides[0]:i * strides[0] + kh, j * strides[1]:j * strides[1] + kw]
            y[0, :, i, j] = np.tensordot(W, win, axes=([1, 2, 3], [0, 1, 2]))
    if b is not None:
        y += b.reshape(1, -1, 1, 1)
    return y


def run(graph, x):
    """Evaluate graph at x in float64 (the ops of the models below only)."""
    env = {t.name: numpy_helper.to_array(t).astype(np.float64) if t.data_type in (1, 11)
           else numpy_helper.to_array(t) for t in graph.initializer}
    inp = [i for i in graph.input if i.name not in env][0]
    dims = [d.dim_value if d.dim_value > 0 else 1 for d in inp.type.tensor_type.shape.dim]
    env[inp.name] = np.asarray(x, dtype=np.float64).reshape(dims)
    for n in graph.node:
        a = [env[i] if i else None for i in n.input]
        op = n.op_type
        if op == "Conv":
            r = conv(a[0], a[1], a[2] if len(a) > 2 else None, attr(n, "strides", [1, 1]),
                     attr(n, "pads", [0, 0, 0, 0]))
        elif op == "BatchNormalization":
            s = lambda v: v.reshape(1, -1, *([1] * (a[0].ndim - 2)))
            r = (a[0] - s(a[3])) / np.sqrt(s(a[4]) + attr(n, "epsilon", 1e-5)) * s(a[1]) + s(a[2])
        elif op == "Relu":
            r = np.maximum(a[0], 0.0)
        elif op == "Add":
            r = a[0] + a[1]
        elif op == "Sub":
            r = a[0] - a[1]
        elif op == "Mul":
            r = a[0] * a[1]
        elif op == "Div":
            ints = a[0].dtype.kind == "i" and a[1].dtype.kind == "i"
            r = a[0] // a[1] if ints else a[0] / a[1]
        elif op == "Neg":
            r = -a[0]
        elif op == "Clip":
            lo = a[1] if len(a) > 1 and a[1] is not None else -np.inf
            hi = a[2] if len(a) > 2 and a[2] is not None else np.inf
            r = np.minimum(np.maximum(a[0], lo), hi)
        elif op == "Shape":
            r = np.array(a[0].shape, dtype=np.int64)
        elif op == "Gather":
            r = np.take(a[0], a[1], axis=attr(n, "axis", 0))
        elif op == "Sigmoid":
            r = 1.0 / (1.0 + np.exp(-a[0]))
        elif op == "Erf":
            r = np.vectorize(math.erf)(a[0])
        elif op == "Pad":
            p = a[1].astype(np.int64)
            k = len(p) // 2
            r = np.pad(a[0], [(p[i], p[i + k]) for i in range(k)])
        elif op == "GlobalAveragePool":
            r = a[0].mean(axis=(2, 3), keepdims=True)
        elif op == "Flatten":
            ax = attr(n, "axis", 1)
            r = a[0].reshape(int(np.prod(a[0].shape[:ax])), -1)
        elif op == "Reshape":
            r = a[0].reshape([a[0].shape[i] if s == 0 else s for i, s in enumerate(a[1].astype(np.int64))])
        elif op == "Transpose":
            r = np.transpose(a[0], attr(n, "perm", None))
        elif op == "Gemm":
            A = a[0].T if attr(n, "transA", 0) else a[0]
            B = a[1].T if attr(n, "transB", 0) else a[1]
            r = A @ B + (a[2] if len(a) > 2 else 0.0)
        elif op == "MatMul":
            r = np.matmul(a[0], a[1])
        elif op == "Identity":
            r = a[0]
        elif op == "Slice":
            st, en = a[1].astype(np.int64), a[2].astype(np.int64)
            ax = a[3].astype(np.int64) if len(a) > 3 else range(len(st))
            sl = [slice(None)] * a[0].ndim
            for s0, e0, x0 in zip(st, en, ax):
                sl[x0] = slice(s0, e0)
            r = a[0][tuple(sl)]
        elif op == "Split":
            ax = attr(n, "axis", 0)
            cuts = np.cumsum(a[1].astype(np.int64))[:-1]
            for name, part in zip(n.output, np.split(a[0], cuts, axis=ax)):
                env[name] = part
            continue
        elif op == "Concat":
            r = np.concatenate(a, axis=attr(n, "axis", 0))
        else:
            raise SystemExit("onnx_resnet_make.py: no evaluator for " + op)
        env[n.output[0]] = r
    return env[graph.output[0].name].reshape(-1)


def vi(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


class G:
    """Nodes and initializers of one graph under construction."""

    def __init__(self):
        self.nodes, self.inits, self.k = [], [], 0

    def c(self, a, dtype=np.float32):
        self.k += 1
        name = "c%d" % self.k
        self.inits.append(numpy_helper.from_array(np.asarray(a, dtype=dtype), name))
        return name

    def op(self, op, ins, n_out=1, **kw):
        self.k += 1
        outs = ["v%d_%d" % (self.k, i) for i in range(n_out)]
        self.nodes.append(helper.make_node(op, ins, outs, name="%s_%d" % (op, self.k), **kw))
        return outs[0] if n_out == 1 else outs

    def conv(self, x, cin, cout, k, s=1, p=None, bias=True, sd=0.4):
        p = k // 2 if p is None else p
        W = f32(RNG.normal(0, sd / np.sqrt(cin * k * k) * 3, (cout, cin, k, k)))
        ins = [x, self.c(W)] + ([self.c(f32(RNG.normal(0, 0.1, cout)))] if bias else [])
        return self.op("Conv", ins, kernel_shape=[k, k], strides=[s, s], pads=[p, p, p, p])

    def bn(self, x, c):
        ins = [x, self.c(f32(RNG.uniform(0.5, 1.5, c))), self.c(f32(RNG.normal(0, 0.1, c))),
               self.c(f32(RNG.normal(0, 0.1, c))), self.c(f32(RNG.uniform(0.5, 1.5, c)))]
        return self.op("BatchNormalization", ins, epsilon=1e-5)

    def gemm(self, x, nin, nout):
        W = f32(RNG.normal(0, 1.0 / np.sqrt(nin), (nout, nin)))
        return self.op("Gemm", [x, self.c(W), self.c(f32(RNG.normal(0, 0.1, nout)))], transB=1)


def save(out, name, g, x, y, in_shape, out_shape, rows=4):
    graph = helper.make_graph(g.nodes, name, [vi(x, in_shape)], [vi(y, out_shape)], g.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, os.path.join(out, name + ".onnx"))
    shape = [d if isinstance(d, int) else 1 for d in in_shape]
    with open(os.path.join(out, name + ".txt"), "w") as f:
        for _ in range(rows):
            xv = RNG.uniform(-1, 1, size=shape)
            yv = run(graph, xv)
            f.write(" ".join("%.17g" % v for v in np.ravel(xv)) + "\n")
            f.write(" ".join("%.17g" % v for v in yv) + "\n")


def torch_block(g, x, cin, cout, stride, shortcut_first=False):
    """torchvision BasicBlock: relu(bn2(conv2(relu(bn1(conv1 x)))) + shortcut x)."""
    sc = None
    if shortcut_first and (stride != 1 or cin != cout):
        sc = g.bn(g.conv(x, cin, cout, 1, stride, 0, bias=False), cout)
    h = g.op("Relu", [g.bn(g.conv(x, cin, cout, 3, stride, bias=False), cout)])
    h = g.bn(g.conv(h, cout, cout, 3, 1, bias=False), cout)
    if sc is None:
        sc = x if stride == 1 and cin == cout else g.bn(g.conv(x, cin, cout, 1, stride, 0, bias=False), cout)
    return g.op("Relu", [g.op("Add", [h, sc])])


def resnet_torch(out, flat):
    g = G()
    x = g.op("Relu", [g.bn(g.conv("x", 3, 4, 3, bias=False), 4)])
    x = torch_block(g, x, 4, 4, 1)
    x = torch_block(g, x, 4, 8, 2)
    if flat:
        y = g.gemm(g.op("Flatten", [x], axis=1), 8 * 4 * 4, 10)
        save(out, "resnet_torch_flat", g, "x", y, ["batch", 3, 8, 8], ["batch", 10])
    else:
        y = g.gemm(g.op("Flatten", [g.op("GlobalAveragePool", [x])], axis=1), 8, 10)
        save(out, "resnet_torch", g, "x", y, [1, 3, 8, 8], [1, 10])


def resnet_vnn(out):
    g = G()
    x = g.op("Relu", [g.conv("x", 3, 4, 3)])
    for cin, cout, s in ((4, 4, 1), (4, 8, 2)):
        sc = x if s == 1 else g.conv(x, cin, cout, 1, s, 0)
        h = g.op("Relu", [g.conv(x, cin, cout, 3, s)])
        h = g.conv(h, cout, cout, 3, 1)
        x = g.op("Relu", [g.op("Add", [sc, h])])
    h = g.op("Relu", [g.gemm(g.op("Flatten", [x], axis=1), 8 * 4 * 4, 16)])
    y = g.gemm(h, 16, 10)
    save(out, "resnet_vnn", g, "x", y, [1, 3, 8, 8], [1, 10])


def resnet_keras(out):
    g = G()
    t = g.op("Transpose", ["x"], perm=[0, 3, 1, 2])
    a = g.op("Relu", [g.conv(t, 3, 4, 3)])
    p = g.op("Pad", [a, g.c([0, 0, 0, 0, 0, 0, 1, 1], np.int64)])
    h = g.op("Relu", [g.conv(p, 4, 4, 3, 2, 0)])
    h = g.conv(h, 4, 4, 3, 1)
    sc = g.conv(a, 4, 4, 1, 2, 0)
    r = g.op("Relu", [g.op("Add", [h, sc])])
    f = g.op("Reshape", [g.op("Transpose", [r], perm=[0, 2, 3, 1]), g.c([1, -1], np.int64)])
    m = g.op("MatMul", [f, g.c(f32(RNG.normal(0, 0.2, (4 * 4 * 4, 5))))])
    y = g.op("Add", [m, g.c(f32(RNG.normal(0, 0.1, 5)))])
    save(out, "resnet_keras", g, "x", y, [1, 8, 8, 3], [1, 5])


def mscn(out):
    g = G()
    s0 = g.op("Slice", ["x", g.c([0], np.int64), g.c([4], np.int64), g.c([1], np.int64)])
    parts = g.op("Split", ["x", g.c([4, 4, 4], np.int64)], n_out=3, axis=1)
    a = g.op("Relu", [g.gemm(s0, 4, 6)])
    b = g.op("Relu", [g.gemm(parts[1], 4, 5)])
    c = g.op("Relu", [g.gemm(g.op("Identity", [parts[2]]), 4, 3)])
    cat = g.op("Concat", [a, b, c], axis=1)
    h = g.op("Relu", [g.gemm(cat, 14, 8)])
    y = g.gemm(h, 8, 2)
    save(out, "mscn", g, "x", y, [1, 12], [1, 2])


def mm_tiny(out):
    g = G()
    h = g.op("Relu", [g.op("Add", [g.op("MatMul", [g.c(f32(RNG.normal(0, 1, (2, 1)))), "x"]),
                                   g.c(f32(RNG.normal(0, 0.2, 2)))])])
    y = g.op("MatMul", [g.c(f32(RNG.normal(0, 1, (1, 2)))), h])
    save(out, "mm_tiny", g, "x", y, [1], [1])


def mm_small(out):
    g = G()
    h = g.op("Relu", [g.op("Add", [g.op("MatMul", ["x", g.c(f32(RNG.normal(0, 1, (2, 3))))]),
                                   g.c(f32(RNG.normal(0, 0.2, 3)))])])
    y = g.op("MatMul", [h, g.c(f32(RNG.normal(0, 1, 3)))])
    save(out, "mm_small", g, "x", y, [2], [])


def pad_conv(out):
    g = G()
    p = g.op("Pad", ["x", g.c([0, 0, 1, 1, 0, 0, 1, 1], np.int64)])
    h = g.op("Relu", [g.conv(p, 3, 8, 3, 1, 0)])
    y = g.gemm(g.op("Flatten", [h], axis=1), 8 * 32 * 32, 10)
    save(out, "pad_conv", g, "x", y, [1, 3, 32, 32], [1, 10], rows=2)


def gemm_conv(out):
    g = G()
    h = g.op("Reshape", [g.gemm("x", 48, 3 * 8 * 8), g.c([1, 3, 8, 8], np.int64)])
    h = g.op("Relu", [g.conv(h, 3, 4, 3)])
    y = g.gemm(g.op("Flatten", [h], axis=1), 4 * 8 * 8, 3)
    save(out, "gemm_conv", g, "x", y, [1, 48], [1, 3])


def gelu(g, z):
    e = g.op("Erf", [g.op("Div", [z, g.c(np.float32(math.sqrt(2)))])])
    return g.op("Mul", [g.op("Mul", [z, g.c(np.float32(0.5))]), g.op("Add", [e, g.c(np.float32(1.0))])])


def gelu_res(out):
    g = G()
    h0 = g.op("Relu", [g.gemm("x", 6, 5)])
    s = g.op("Add", [g.gemm(h0, 5, 5), h0])
    a = gelu(g, s)
    y = g.op("Add", [g.gemm(a, 5, 3), g.gemm(h0, 5, 3)])
    save(out, "gelu_res", g, "x", y, [1, 6], [1, 3])


def gelu_fork(out):
    g = G()
    h0 = g.op("Relu", [g.gemm("x", 6, 5)])
    y = g.op("Add", [g.gemm(gelu(g, h0), 5, 3), g.gemm(h0, 5, 3)])
    save(out, "gelu_fork", g, "x", y, [1, 6], [1, 3])


def bad_models(out):
    """Refused graphs: each message names the node and its op."""
    g = G()
    h0 = g.op("Relu", [g.gemm("x", 4, 3)])
    h1 = g.op("Relu", [g.gemm(h0, 3, 3)])
    y = g.op("Div", [h1, h0])
    graph = helper.make_graph(g.nodes, "bad_div2", [vi("x", [1, 4])], [vi(y, [1, 3])], g.inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), os.path.join(out, "bad_div2.onnx"))
    g = G()
    h0 = g.op("Relu", [g.gemm("x", 4, 3)])
    h1 = g.op("Relu", [g.gemm("x", 4, 1)])
    y = g.op("Add", [h0, h1])
    graph = helper.make_graph(g.nodes, "bad_add_bcast", [vi("x", [1, 4])], [vi(y, [1, 3])], g.inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]),
              os.path.join(out, "bad_add_bcast.onnx"))
    g = G()
    third = g.op("Div", [g.c(np.float32(1.0)), g.c(np.float32(3.0))])
    y = g.op("Mul", [g.op("Relu", [g.gemm("x", 4, 3)]), third])
    graph = helper.make_graph(g.nodes, "bad_const_div", [vi("x", [1, 4])], [vi(y, [1, 3])], g.inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]),
              os.path.join(out, "bad_const_div.onnx"))


def norm_fork(out):
    g = G()
    a = g.op("Relu", [g.gemm(g.op("Sub", ["x", g.c(f32(RNG.uniform(-0.5, 0.5, (1, 4))))]), 4, 3)])
    y = g.op("Add", [g.gemm(a, 3, 2), g.gemm("x", 4, 2)])
    save(out, "norm_fork", g, "x", y, [1, 4], [1, 2])


def twice(out):
    g = G()
    z = g.gemm("x", 4, 3)
    h = g.op("Relu", [g.op("Add", [z, z])])
    c = g.op("Concat", [h, h], axis=1)
    y = g.gemm(g.op("Relu", [g.op("Add", [g.gemm(c, 6, 3), h])]), 3, 2)
    save(out, "twice", g, "x", y, [1, 4], [1, 2])


def const_fork(out):
    g = G()
    z = g.op("Relu", [g.gemm("x", 4, 3)])
    a = g.op("Add", [z, g.c(np.float32(0.5))])
    m = g.op("Mul", [z, g.c(np.float32(2.0))])
    y = g.op("Add", [g.gemm(a, 3, 2), g.gemm(m, 3, 2)])
    save(out, "const_fork", g, "x", y, [1, 4], [1, 2])


def sig_fork(out):
    g = G()
    z = g.gemm("x", 4, 3)
    y = g.op("Add", [g.gemm(g.op("Sigmoid", [z]), 3, 2), g.gemm(z, 3, 2)])
    save(out, "sig_fork", g, "x", y, [1, 4], [1, 2])


def sub_nodes(out):
    g = G()
    h0 = g.op("Relu", [g.gemm("x", 4, 3)])
    h1 = g.op("Relu", [g.gemm(h0, 3, 3)])
    y = g.op("Sub", [h1, h0])
    save(out, "sub_nodes", g, "x", y, [1, 4], [1, 3])


def chunk_neg(out):
    """torch's z.chunk(2, dim=1) under a dynamic batch axis (the Slice ends computed from
    Shape by Gather, Add, Div, Mul on int64) and torch's -v (Neg)."""
    g = G()
    z = g.gemm("x", 4, 6)
    d = g.op("Gather", [g.op("Shape", [z]), g.c(np.array([1]), np.int64)], axis=0)
    half = g.op("Div", [g.op("Add", [d, g.c([1], np.int64)]), g.c([2], np.int64)])
    e1 = g.op("Mul", [half, g.c([1], np.int64)])
    e2 = g.op("Mul", [half, g.c([2], np.int64)])
    u = g.op("Slice", [z, g.c([0], np.int64), e1, g.c([1], np.int64)])
    v = g.op("Slice", [z, e1, e2, g.c([1], np.int64)])
    h = g.op("Add", [g.op("Relu", [u]), g.op("Relu", [g.op("Neg", [v])])])
    y = g.gemm(g.op("Neg", [h]), 3, 2)
    save(out, "chunk_neg", g, "x", y, ["batch", 4], ["batch", 2])


def clips(out):
    """Clip as torch exports ReLU6 (0, 6), Hardtanh (-1, 1) and clamp with one bound (an
    empty input name for the other), on pre-activations that cross the bounds; the last
    Clip on a residual sum."""
    g = G()
    z = g.op("Mul", [g.gemm("x", 4, 6), g.c(np.float32(8.0))])
    a = g.op("Clip", [z, g.c(np.float32(0.0)), g.c(np.float32(6.0))])
    b = g.op("Clip", [g.op("Mul", [g.gemm(a, 6, 5), g.c(np.float32(0.5))]), g.c(np.float32(-1.0)),
                      g.c(np.float32(1.0))])
    c = g.op("Clip", [g.gemm(b, 5, 5), g.c(np.float32(0.25))])
    e = g.op("Clip", [g.gemm(c, 5, 5), "", g.c(np.float32(-0.125))])
    f = g.op("Clip", [g.op("Add", [g.gemm(e, 5, 5), b]), g.c(np.float32(-0.5)), g.c(np.float32(1.5))])
    h = g.op("Clip", [g.op("Relu", [g.op("Mul", [g.gemm(f, 5, 5), g.c(np.float32(4.0))])]), g.c(np.float32(-0.5)),
                      g.c(np.float32(1.0))])  # PyTorch's ReLU6 form: Relu, then Clip (the lower bound is moot)
    y = g.gemm(h, 5, 2)
    save(out, "clips", g, "x", y, [1, 4], [1, 2], rows=8)


def main(out):
    os.makedirs(out, exist_ok=True)
    resnet_torch(out, False)
    resnet_torch(out, True)
    resnet_vnn(out)
    resnet_keras(out)
    mscn(out)
    mm_tiny(out)
    mm_small(out)
    pad_conv(out)
    gemm_conv(out)
    gelu_res(out)
    sub_nodes(out)
    gelu_fork(out)
    norm_fork(out)
    twice(out)
    sig_fork(out)
    const_fork(out)
    chunk_neg(out)
    clips(out)
    bad_models(out)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    main(sys.argv[1])
