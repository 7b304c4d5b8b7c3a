#!/usr/bin/env python3
"""Independent ONNX oracle for the Check suite `onnx` (test-only).

  onnx_eval.py check MODEL         run onnx.checker (full_check) and print "ok"
  onnx_eval.py eval MODEL INPUTS   evaluate MODEL in float64 numpy, one input
                                   vector per line of INPUTS; print the outputs
                                   per line as %.17g

The evaluator reads initializers with onnx.numpy_helper and does the matmuls
itself (onnx.reference does not exist in onnx 1.12). It knows the ops of the
fixture networks, of PyTorch's Transformer exports (opsets 13-17) and of
lgelu's exporter only.
"""
import math
import sys

import numpy as np
import onnx
from onnx import numpy_helper

_erf = np.vectorize(math.erf)


def attr(node, name, default):
    for a in node.attribute:
        if a.name == name:
            return onnx.helper.get_attribute_value(a)
    return default


def _axes(n, a, rank):
    ax = attr(n, "axes", None)
    if ax is None and len(a) > 1 and a[1] is not None:
        ax = list(a[1])
    return tuple(range(rank)) if ax is None else tuple(int(v) % rank for v in ax)


def _softmax(x, axis):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def run_tf(n, op, a):
    """The Transformer ops and PyTorch's shape arithmetic; None for an unknown op."""
    if op == "Transpose":
        return np.transpose(a[0], attr(n, "perm", None))
    if op == "Softmax":
        return _softmax(a[0], attr(n, "axis", -1))
    if op == "LayerNormalization":
        ax = attr(n, "axis", -1) % a[0].ndim
        axes = tuple(range(ax, a[0].ndim))
        mu = a[0].mean(axis=axes, keepdims=True)
        var = ((a[0] - mu) ** 2).mean(axis=axes, keepdims=True)
        r = (a[0] - mu) / np.sqrt(var + np.float64(np.float32(attr(n, "epsilon", 1e-5)))) * a[1]
        return r + a[2] if len(a) > 2 and a[2] is not None else r
    if op in ("ReduceMean", "ReduceSum"):
        f = np.mean if op == "ReduceMean" else np.sum
        return f(a[0], axis=_axes(n, a, a[0].ndim), keepdims=bool(attr(n, "keepdims", 1)))
    if op == "Pow":
        return a[0] ** a[1]
    if op == "Sqrt":
        return np.sqrt(a[0])
    if op == "Shape":
        return np.array(a[0].shape, dtype=np.int64)
    if op == "Gather":
        return np.take(a[0], a[1].astype(np.int64), axis=attr(n, "axis", 0))
    if op == "Unsqueeze":
        r = a[0]
        for ax in sorted(_axes(n, a, a[0].ndim + len(attr(n, "axes", None) or a[1]))):
            r = np.expand_dims(r, ax)
        return r
    if op == "Squeeze":
        return np.squeeze(a[0], axis=_axes(n, a, a[0].ndim))
    if op == "Concat":
        return np.concatenate(a, axis=attr(n, "axis", 0))
    if op == "Slice":
        axes = list(a[3]) if len(a) > 3 and a[3] is not None else list(range(len(a[1])))
        steps = list(a[4]) if len(a) > 4 and a[4] is not None else [1] * len(axes)
        sl = [slice(None)] * a[0].ndim
        for s0, e0, ax, st in zip(a[1], a[2], axes, steps):
            sl[int(ax)] = slice(int(s0), int(max(min(e0, 2**62), -2**62)), int(st))
        return a[0][tuple(sl)]
    if op == "ConstantOfShape":
        v = attr(n, "value", None)
        v = numpy_helper.to_array(v) if v is not None else np.zeros(1, np.float32)
        return np.full(tuple(int(d) for d in a[0]), v.reshape(-1)[0], dtype=v.dtype)
    if op == "Equal":
        return a[0] == a[1]
    if op == "Where":
        return np.where(a[0], a[1], a[2])
    if op == "Expand":
        return a[0] * np.ones(tuple(int(d) for d in a[1]), dtype=a[0].dtype)
    if op == "Cast":
        return a[0]
    if op == "Range":
        return np.arange(a[0], a[1], a[2])
    if op == "Dropout":
        return a[0]
    if op == "Pad":
        p = [int(v) for v in (a[1] if len(a) > 1 else attr(n, "pads", None))]
        r = a[0].ndim
        return np.pad(a[0], [(p[i], p[r + i]) for i in range(r)])
    if op == "Split":
        ax = attr(n, "axis", 0)
        sp = attr(n, "split", None)
        sp = list(a[1]) if sp is None and len(a) > 1 and a[1] is not None else sp
        sp = sp or [a[0].shape[ax] // len(n.output)] * len(n.output)
        return np.split(a[0], np.cumsum(sp)[:-1], axis=ax)
    if op == "Conv":
        x, W = a[0], a[1]
        s = attr(n, "strides", [1, 1])
        p = attr(n, "pads", [0, 0, 0, 0])
        x = np.pad(x, ((0, 0), (0, 0), (p[0], p[2]), (p[1], p[3])))
        co, ci, kh, kw = W.shape
        ho, wo = (x.shape[2] - kh) // s[0] + 1, (x.shape[3] - kw) // s[1] + 1
        r = np.zeros((1, co, ho, wo))
        for i in range(ho):
            for j in range(wo):
                patch = x[0, :, i * s[0]:i * s[0] + kh, j * s[1]:j * s[1] + kw]
                r[0, :, i, j] = np.tensordot(W, patch, axes=3)
        return r + a[2].reshape(1, -1, 1, 1) if len(a) > 2 and a[2] is not None else r
    if op == "BatchNormalization":
        x, g, b, m, v = a[:5]
        shp = (1, -1) + (1,) * (x.ndim - 2)
        eps = np.float64(np.float32(attr(n, "epsilon", 1e-5)))
        return (x - m.reshape(shp)) / np.sqrt(v.reshape(shp) + eps) * g.reshape(shp) + b.reshape(shp)
    return None


def run(graph, x):
    env = {t.name: numpy_helper.to_array(t).astype(np.float64) if t.data_type in (1, 11)
           else numpy_helper.to_array(t) for t in graph.initializer}
    inp = [i for i in graph.input if i.name not in env]
    assert len(inp) == 1, "expected one dynamic input"
    dims = [d.dim_value if d.dim_value > 0 else 1 for d in inp[0].type.tensor_type.shape.dim]
    env[inp[0].name] = np.asarray(x, dtype=np.float64).reshape(dims)
    for n in graph.node:
        a = [env[i] if i else None for i in n.input]
        op = n.op_type
        if op == "Constant":
            r = numpy_helper.to_array(attr(n, "value", None))
            r = r.astype(np.float64) if r.dtype.kind == "f" else r
        elif op == "Identity":
            r = a[0]
        elif op == "Flatten":
            ax = attr(n, "axis", 1)
            r = a[0].reshape(int(np.prod(a[0].shape[:ax])), -1)
        elif op == "Reshape":
            shape = [a[0].shape[i] if s == 0 else s for i, s in enumerate(a[1].astype(np.int64))]
            r = a[0].reshape(shape)
        elif op == "Gemm":
            A = a[0].T if attr(n, "transA", 0) else a[0]
            B = a[1].T if attr(n, "transB", 0) else a[1]
            r = attr(n, "alpha", 1.0) * (A @ B)
            if len(a) > 2 and a[2] is not None:
                r = r + attr(n, "beta", 1.0) * a[2]
        elif op == "MatMul":
            r = a[0] @ a[1]
        elif op == "Add":
            r = a[0] + a[1]
        elif op == "Sub":
            r = a[0] - a[1]
        elif op == "Mul":
            r = a[0] * a[1]
        elif op == "Div":
            r = a[0] // a[1] if a[0].dtype.kind == "i" and a[1].dtype.kind == "i" else a[0] / a[1]
        elif op == "Relu":
            r = np.maximum(a[0], 0.0)
        elif op == "Sigmoid":
            r = np.exp(-np.logaddexp(0.0, -a[0]))  # 1/(1+e^-x) without overflow
        elif op == "PRelu":
            r = np.where(a[0] > 0, a[0], a[0] * a[1])
        elif op == "LeakyRelu":
            r = np.where(a[0] > 0, a[0], a[0] * attr(n, "alpha", 0.01))
        elif op == "Erf":
            r = _erf(a[0])
        elif op == "Tanh":
            r = np.tanh(a[0])
        else:
            r = run_tf(n, op, a)
        if r is None:
            raise SystemExit("onnx_eval.py: unsupported op " + op)
        for o, v in zip(n.output, r if isinstance(r, list) else [r]):
            env[o] = v
    return env[graph.output[0].name].reshape(-1)


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "check":
        onnx.checker.check_model(onnx.load(sys.argv[2]), full_check=True)
        print("ok")
        return
    if len(sys.argv) != 4 or sys.argv[1] != "eval":
        raise SystemExit(__doc__)
    graph = onnx.load(sys.argv[2]).graph
    with open(sys.argv[3]) as f:
        for line in f:
            line = line.split("#")[0].replace(",", " ").split()
            if line:
                y = run(graph, [float(v) for v in line])
                print(" ".join("%.17g" % v for v in y))


if __name__ == "__main__":
    main()
