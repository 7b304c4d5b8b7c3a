#!/usr/bin/env python3
"""ONNX op variants for the Check suite `onnx` (test-only; PyTorch-free).

  onnx_ops_make.py OUTDIR

writes OUTDIR/NAME.onnx for each model below and, for the models lgelu must
import, OUTDIR/NAME.txt: pairs of lines (input vector, output vector, %.17g)
computed by an independent float64 numpy evaluation; for the models it must
refuse, OUTDIR/NAME.expect: a substring of the message.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

RNG = np.random.default_rng(11)
n = helper.make_node


def f32(*shape):
    return RNG.normal(0, 0.5, size=shape).astype(np.float32)


def init(name, a):
    return numpy_helper.from_array(np.asarray(a), name)


def vi(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def save(out, name, nodes, inits, in_shape, out_shape, ref=None, expect=None, opset=13):
    g = helper.make_graph(nodes, name, [vi("x", in_shape)], [vi("y", out_shape)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 7
    if expect is None:
        onnx.checker.check_model(m, full_check=True)
    onnx.save(m, os.path.join(out, name + ".onnx"))
    if expect is not None:
        with open(os.path.join(out, name + ".expect"), "w") as f:
            f.write(expect)
    if ref is None:
        return
    with open(os.path.join(out, name + ".txt"), "w") as f:
        for _ in range(4):
            x = RNG.normal(0, 1.5, size=in_shape)
            y = ref(x.astype(np.float64))
            f.write(" ".join("%.17g" % v for v in x.ravel()) + "\n")
            f.write(" ".join("%.17g" % v for v in np.asarray(y).ravel()) + "\n")


def main(out):
    os.makedirs(out, exist_ok=True)
    relu = lambda v: np.maximum(v, 0)
    # a per-token linear map on (1, 4, 16): the same matrix on every token, then a ReLU and a head
    w, b = f32(16, 8), f32(8)
    w2 = f32(32, 3)
    save(out, "tokens_matmul",
         [n("MatMul", ["x", "w"], ["t"]), n("Add", ["t", "b"], ["u"]), n("Relu", ["u"], ["r"]),
          n("Flatten", ["r"], ["f"], axis=1), n("MatMul", ["f", "w2"], ["y"])],
         [init("w", w), init("b", b), init("w2", w2)], [1, 4, 16], [1, 3],
         lambda x: relu(x[0] @ w.astype(np.float64) + b).reshape(1, 32) @ w2.astype(np.float64))
    # HardSigmoid with its attributes, and its defaults
    wh = f32(5, 4)
    save(out, "hardsigmoid",
         [n("Gemm", ["x", "wh"], ["z"], transB=1), n("HardSigmoid", ["z"], ["h"], alpha=0.25, beta=0.375),
          n("HardSigmoid", ["h"], ["y"])],
         [init("wh", wh)], [1, 4], [1, 5],
         lambda x: (lambda h: np.clip(np.float64(np.float32(0.2)) * h + 0.5, 0, 1))(
             np.clip(0.25 * (x @ wh.astype(np.float64).T) + 0.375, 0, 1)))
    # Abs, Max and Min with scalar constants
    wa = f32(6, 4)
    c1, c2 = np.float32(0.25), np.float32(1.5)
    save(out, "abs_max_min",
         [n("Gemm", ["x", "wa"], ["z"], transB=1), n("Abs", ["z"], ["a"]), n("Max", ["a", "c1"], ["m"]),
          n("Min", ["c2", "m"], ["y"])],
         [init("wa", wa), init("c1", c1), init("c2", c2)], [1, 4], [1, 6],
         lambda x: np.minimum(np.maximum(np.abs(x @ wa.astype(np.float64).T), 0.25), 1.5))
    # a class token (PyTorch's cls.expand(B, -1, -1): Equal, Where, ConstantOfShape, Expand folded) before
    # per-token features, a position embedding, a ReLU and a head
    wt, cls, pos, wo = f32(16, 8), f32(1, 1, 8), f32(1, 5, 8), f32(40, 2)
    ci = lambda name, v: n("Constant", [], [name], value=numpy_helper.from_array(np.asarray(v, np.int64), name))
    save(out, "class_token",
         [ci("spec", [1, -1, -1]), ci("m1", -1), ci("three", [3]), n("Equal", ["spec", "m1"], ["eq"]),
          n("ConstantOfShape", ["three"], ["ones"], value=numpy_helper.from_array(np.array([1], np.int64), "v")),
          n("Where", ["eq", "ones", "spec"], ["tgt"]), n("Expand", ["cls", "tgt"], ["clsx"]),
          n("MatMul", ["x", "wt"], ["t"]), n("Concat", ["clsx", "t"], ["c"], axis=1), n("Add", ["c", "pos"], ["p"]),
          n("Relu", ["p"], ["r"]), n("Reshape", ["r", "flat"], ["f"]), n("MatMul", ["f", "wo"], ["y"])],
         [init("wt", wt), init("cls", cls), init("pos", pos), init("wo", wo), init("flat", np.array([1, 40], np.int64))],
         [1, 4, 16], [1, 2],
         lambda x: relu(np.concatenate([cls[0].astype(np.float64), x[0] @ wt.astype(np.float64)]) + pos[0]).reshape(1, 40)
         @ wo.astype(np.float64))
    # refusals: a short message that names the op and its nearest supported form
    save(out, "bad_op_typo", [n("Rellu", ["x"], ["y"])], [], [1, 4], [1, 4],
         expect="op type 'Rellu' is not supported (nearest supported: Relu;")
    # Transformer ops: product, softmax and layernorm nodes
    f64 = lambda a: a.astype(np.float64)

    def softmax(v, axis=-1):
        e = np.exp(v - v.max(axis=axis, keepdims=True))
        return e / e.sum(axis=axis, keepdims=True)

    def lnorm(v, g, b, eps):
        mu = v.mean(-1, keepdims=True)
        return (v - mu) / np.sqrt(((v - mu) ** 2).mean(-1, keepdims=True) + eps) * f64(g) + f64(b)

    g4, b4 = f32(4), f32(4)
    save(out, "layernorm", [n("LayerNormalization", ["x", "g", "bb"], ["y"], axis=-1, epsilon=1e-3)],
         [init("g", g4), init("bb", b4)], [1, 2, 4], [1, 2, 4],
         lambda x: lnorm(x, g4, b4, np.float64(np.float32(1e-3))), opset=17)
    eps = np.float32(1e-5)
    save(out, "layernorm_decomposed",
         [n("ReduceMean", ["x"], ["m"], axes=[-1]), n("Sub", ["x", "m"], ["d"]), n("Pow", ["d", "two"], ["p"]),
          n("ReduceMean", ["p"], ["v"], axes=[-1]), n("Add", ["v", "eps"], ["ve"]), n("Sqrt", ["ve"], ["s"]),
          n("Div", ["d", "s"], ["q"]), n("Mul", ["q", "g"], ["r"]), n("Add", ["r", "bb"], ["y"])],
         [init("two", np.float32(2)), init("eps", eps), init("g", g4), init("bb", b4)], [1, 3, 4], [1, 3, 4],
         lambda x: lnorm(x, g4, b4, np.float64(eps)))
    # one attention head on the tokens themselves: softmax(x xᵀ / 2) x, and softmax over axis 1
    save(out, "attention",
         [n("Transpose", ["x"], ["t"], perm=[0, 2, 1]), n("MatMul", ["x", "t"], ["s"]), n("Div", ["s", "two"], ["h"]),
          n("Softmax", ["h"], ["a"], axis=-1), n("MatMul", ["a", "x"], ["y"])],
         [init("two", np.float32(2))], [1, 3, 4], [1, 3, 4],
         lambda x: softmax(x @ np.swapaxes(x, 1, 2) / 2) @ x)
    save(out, "softmax_axis1_mul", [n("Softmax", ["x"], ["a"], axis=1), n("Mul", ["a", "x"], ["y"])], [], [1, 3, 4],
         [1, 3, 4], lambda x: softmax(x, 1) * x)
    # opset 11: Softmax over the axes from `axis` on, coalesced
    save(out, "softmax_opset11", [n("Softmax", ["x"], ["y"], axis=1)], [], [1, 3, 4], [1, 3, 4],
         lambda x: softmax(x.reshape(1, 12), 1).reshape(1, 3, 4), opset=11)
    save(out, "mean_tokens", [n("ReduceMean", ["x"], ["y"], axes=[1], keepdims=0)], [], [1, 4, 3], [1, 3],
         lambda x: x.mean(1))
    # GELU in tanh form as PyTorch writes it: products of the value with itself, Tanh, the gate
    k0, k1 = np.float32(0.7978845834732056), np.float32(0.044715)
    save(out, "gelu_tanh",
         [n("Mul", ["x", "x"], ["x2"]), n("Mul", ["x2", "x"], ["x3"]), n("Mul", ["x3", "k1"], ["a"]),
          n("Add", ["x", "a"], ["b"]), n("Mul", ["b", "k0"], ["c"]), n("Tanh", ["c"], ["t"]),
          n("Add", ["t", "one"], ["u"]), n("Mul", ["x", "u"], ["v"]), n("Mul", ["v", "half"], ["y"])],
         [init("k0", k0), init("k1", k1), init("one", np.float32(1)), init("half", np.float32(0.5))], [1, 5], [1, 5],
         lambda x: 0.5 * x * (1 + np.tanh(np.float64(k0) * (x + np.float64(k1) * x ** 3))))
    save(out, "bad_reducemean", [n("ReduceMean", ["x"], ["y"], axes=[1], keepdims=0)], [], [1, 3, 4], [1, 4],
         expect="the mean of 3 values: 1/3 is not a double")
    save(out, "bad_pow", [n("Pow", ["x", "three"], ["y"])], [init("three", np.float32(3))], [1, 4], [1, 4],
         expect="read only inside a LayerNorm")
    save(out, "bad_max2", [n("Max", ["x", "x", "x"], ["y"])], [], [1, 4], [1, 4], expect="uses 3 network values")
    # an op on constants only that the folding table lacks: the refusal names it and the nearest folded op
    save(out, "bad_const_op", [n("Sin", ["c"], ["s"]), n("Add", ["x", "s"], ["y"])], [init("c", np.ones(4, np.float32))],
         [1, 4], [1, 4], expect="computes on constants only, and 'Sin' is not folded (nearest folded: ")


if __name__ == "__main__":
    main(sys.argv[1])
