#!/usr/bin/env python3
"""Write small ONNX models for the Check suite `onnx` (test-only).

  onnx_make.py DIR

Writes DIR/ok_*.onnx (graphs lgelu must import: GELU in the node orders
PyTorch and others export, MatMul with the constant on either side, Reshape,
Identity, Constant nodes, typed float_data/double_data fields, normalisation,
Sigmoid, the Swish pattern x*Sigmoid(beta*x), PRelu and LeakyRelu)
and DIR/bad_*.onnx (graphs it must refuse), plus DIR/bad_*.expect holding a
substring the error message must contain. Weights come from a fixed seed.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(7)
D = sys.argv[1]
os.makedirs(D, exist_ok=True)


def W(*shape):
    return rng.normal(0, 0.5, size=shape).astype(np.float32)


def T(name, arr, typed=False):
    arr = np.asarray(arr)
    if not typed:
        return numpy_helper.from_array(arr, name)
    if arr.dtype == np.float64:
        return helper.make_tensor(name, TensorProto.DOUBLE, arr.shape, arr.flatten().tolist())
    return helper.make_tensor(name, TensorProto.FLOAT, arr.shape, arr.flatten().tolist())


def save(name, nodes, inits, in_shape=(1, 4), out_dim=3, elem=TensorProto.FLOAT, extra_inputs=(), expect=None,
         check=True, opset=13):
    g = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", elem, list(in_shape))] + list(extra_inputs),
                          [helper.make_tensor_value_info("y", elem, [1, out_dim])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 7
    if check:
        onnx.checker.check_model(m)
    onnx.save(m, os.path.join(D, name + ".onnx"))
    if expect is not None:
        with open(os.path.join(D, name + ".expect"), "w") as f:
            f.write(expect)


def gelu_nodes(x, out, order, p):
    """x*0.5*(1+erf(x/sqrt2)) in several node orders; constants named p_*."""
    n = helper.make_node
    if order == "torch":  # Div -> Erf -> Add -> Mul(x) -> Mul(0.5)
        return [n("Div", [x, p + "s2"], [p + "a"]), n("Erf", [p + "a"], [p + "b"]), n("Add", [p + "b", p + "one"], [p + "c"]),
                n("Mul", [x, p + "c"], [p + "d"]), n("Mul", [p + "d", p + "half"], [out])]
    if order == "half_first":  # 0.5*x first, Mul by 1/sqrt2, constants on the left
        return [n("Mul", [p + "half", x], [p + "h"]), n("Mul", [p + "is2", x], [p + "a"]), n("Erf", [p + "a"], [p + "b"]),
                n("Add", [p + "one", p + "b"], [p + "c"]), n("Mul", [p + "h", p + "c"], [out])]
    if order == "half_erf":  # 0.5*(1+erf) then times x
        return [n("Div", [x, p + "s2"], [p + "a"]), n("Erf", [p + "a"], [p + "b"]), n("Add", [p + "b", p + "one"], [p + "c"]),
                n("Mul", [p + "c", p + "half"], [p + "e"]), n("Mul", [p + "e", x], [out])]
    raise ValueError(order)


def gelu_consts(p, dtype=np.float32):
    return [T(p + "s2", np.array(np.sqrt(2.0), dtype)), T(p + "is2", np.array(1 / np.sqrt(2.0), dtype)),
            T(p + "one", np.array(1.0, dtype)), T(p + "half", np.array(0.5, dtype))]


n = helper.make_node
w1, b1, w2, b2 = W(5, 4), W(5), W(3, 5), W(3)

for order in ("torch", "half_first", "half_erf"):
    save("ok_gelu_" + order,
         [n("Gemm", ["x", "w1", "b1"], ["z"], transB=1)] + gelu_nodes("z", "a", order, "g_") +
         [n("Gemm", ["a", "w2", "b2"], ["y"], transB=1)],
         [T("w1", w1), T("b1", b1), T("w2", w2), T("b2", b2)] + gelu_consts("g_"))

# MatMul both ways, Reshape with -1 and 0, Identity, Constant nodes, typed fields, Sub/Div normalisation
save("ok_matmul_reshape",
     [n("Constant", [], ["mu"], value=T("mu_t", np.array([0.5, -1, 2, 0.25], np.float32))),
      n("Sub", ["x", "mu"], ["x1"]), n("Div", ["x1", "sd"], ["x2"]),
      n("Reshape", ["x2", "shape_col"], ["x3"]),
      n("MatMul", ["w1", "x3"], ["z0"]), n("Reshape", ["z0", "shape_row"], ["z1"]),
      n("Add", ["z1", "b1"], ["z"]), n("Relu", ["z"], ["r"]), n("Identity", ["r"], ["r1"]),
      n("Reshape", ["r1", "shape_keep"], ["r2"]), n("MatMul", ["r2", "w2t"], ["z2"]), n("Add", ["b2", "z2"], ["y"])],
     [T("sd", np.array([2, 4, 0.5, 8], np.float32), typed=True), T("shape_col", np.array([4, -1], np.int64)),
      T("shape_row", np.array([1, -1], np.int64)), T("shape_keep", np.array([0, 5], np.int64)), T("w1", w1.reshape(5, 4)), T("b1", b1.reshape(1, 5), typed=True),
      T("w2t", w2.T.copy()), T("b2", b2)], in_shape=(1, 4))

# double initialisers, Gemm with alpha/beta/transA, input [N,2,2] flattened, scalar Mul
save("ok_double_gemm",
     [n("Flatten", ["x"], ["f"]), n("Mul", ["f", "k"], ["f2"]),
      n("Gemm", ["f2", "w1", "b1"], ["z"], alpha=0.5, beta=2.0), n("Relu", ["z"], ["r"]),
      n("Gemm", ["r", "w2", "b2"], ["y"], transB=1)],
     [T("k", np.array(3.0)), T("w1", w1.T.astype(np.float64).copy(), typed=True), T("b1", b1.astype(np.float64)),
      T("w2", w2.astype(np.float64)), T("b2", b2.astype(np.float64), typed=True)],
     in_shape=("N", 2, 2), elem=TensorProto.DOUBLE)

# Sigmoid as a hidden activation (PyTorch's Linear -> Sigmoid -> Linear: MatMul + Add) and
# as the output activation of the last layer too
save("ok_sigmoid",
     [n("Gemm", ["x", "w1", "b1"], ["z"], transB=1), n("Sigmoid", ["z"], ["a"]),
      n("MatMul", ["a", "w2t"], ["z2"]), n("Add", ["z2", "b2"], ["y"])],
     [T("w1", w1), T("b1", b1), T("w2t", w2.T.copy()), T("b2", b2)])
save("ok_sigmoid_out",
     [n("Gemm", ["x", "w1", "b1"], ["z"], transB=1), n("Sigmoid", ["z"], ["a"]),
      n("Gemm", ["a", "w2", "b2"], ["z2"], transB=1), n("Sigmoid", ["z2"], ["y"])],
     [T("w1", w1), T("b1", b1), T("w2", w2), T("b2", b2)])

# Swish-beta and PReLU: PyTorch's SiLU export z*Sigmoid(z); the beta form with
# the constant and the gate on the left; PRelu with a per-neuron slope vector whose values
# are all equal (nn.PReLU(num_parameters=5) at its init); LeakyRelu(alpha)
save("ok_silu_torch",
     [n("Gemm", ["x", "w1", "b1"], ["z"], transB=1), n("Sigmoid", ["z"], ["g"]), n("Mul", ["z", "g"], ["a"]),
      n("Gemm", ["a", "w2", "b2"], ["y"], transB=1)],
     [T("w1", w1), T("b1", b1), T("w2", w2), T("b2", b2)])
save("ok_swish_beta_rev",
     [n("Gemm", ["x", "w1", "b1"], ["z"], transB=1), n("Mul", ["beta", "z"], ["u"]), n("Sigmoid", ["u"], ["g"]),
      n("Mul", ["g", "z"], ["a"]), n("Gemm", ["a", "w2", "b2"], ["y"], transB=1)],
     [T("beta", np.array(7.5, dtype=np.float32)), T("w1", w1), T("b1", b1), T("w2", w2), T("b2", b2)])
save("ok_prelu_vec",
     [n("Gemm", ["x", "w1", "b1"], ["z"], transB=1), n("PRelu", ["z", "slope"], ["a"]),
      n("Gemm", ["a", "w2", "b2"], ["y"], transB=1)],
     [T("slope", np.full((5,), 0.25, dtype=np.float32)), T("w1", w1), T("b1", b1), T("w2", w2), T("b2", b2)])
save("ok_leakyrelu",
     [n("Gemm", ["x", "w1", "b1"], ["z"], transB=1), n("LeakyRelu", ["z"], ["a"], alpha=0.125),
      n("Gemm", ["a", "w2", "b2"], ["y"], transB=1)],
     [T("w1", w1), T("b1", b1), T("w2", w2), T("b2", b2)])

# --- graphs that must be refused ---
base_init = [T("w1", w1), T("b1", b1), T("w2", w2), T("b2", b2)]
save("bad_prelu_per_neuron",
     [n("Gemm", ["x", "w1", "b1"], ["z"], transB=1), n("PRelu", ["z", "slope"], ["a"]),
      n("Gemm", ["a", "w2", "b2"], ["y"], transB=1)],
     [T("slope", np.array([0.1, 0.2, 0.3, 0.4, 0.5], dtype=np.float32))] + base_init,
     expect="one prelu slope per layer")
save("bad_swish_scaled",
     [n("Gemm", ["x", "w1", "b1"], ["z"], transB=1), n("Sigmoid", ["z"], ["g"]), n("Mul", ["z", "half"], ["h"]),
      n("Mul", ["h", "g"], ["a"]), n("Gemm", ["a", "w2", "b2"], ["y"], transB=1)],
     [T("half", np.array(0.5, dtype=np.float32))] + base_init,
     expect="not the Swish pattern")
save("bad_swish_small_beta",
     [n("Gemm", ["x", "w1", "b1"], ["z"], transB=1), n("Mul", ["z", "beta"], ["u"]), n("Sigmoid", ["u"], ["g"]),
      n("Mul", ["z", "g"], ["a"]), n("Gemm", ["a", "w2", "b2"], ["y"], transB=1)],
     [T("beta", np.array(0.5, dtype=np.float32))] + base_init,
     expect="expected a finite β ≥ 1")
save("bad_pow", [n("Gemm", ["x", "w1", "b1"], ["z"], transB=1), n("Pow", ["z", "three"], ["y"])],
     [T("three", np.array(3, dtype=np.float32))] + base_init, out_dim=5,
     expect="Pow of a network value is read only inside a LayerNorm")
save("bad_unknown_op", [n("Gemm", ["x", "w1", "b1"], ["z"], transB=1), n("Softplus", ["z"], ["y"])], base_init,
     expect="op type 'Softplus' is not supported")
save("bad_out_shape", [n("Gemm", ["x", "w1", "b1"], ["y"], transB=1)], base_init, out_dim=7,
     expect="declared with 7 elements but the graph computes 5", check=False)
save("bad_conv", [n("Conv", ["x", "w1"], ["y"])], base_init, expect="expected a [1, C, H, W] image")
save("bad_shape", [n("Gemm", ["x", "w2", "b2"], ["y"], transB=1)], base_init, expect="columns", check=False)
save("bad_attr_type", [n("Gemm", ["x", "w1", "b1"], ["y"], transB=1.0)], base_init, expect="must be an int",
     check=False)
save("bad_cycle", [n("Gemm", ["x", "w1", "b1"], ["z"], transB=1), n("Add", ["z", "y"], ["u"]), n("Relu", ["u"], ["y"])],
     base_init, expect="cycle", check=False)
save("bad_dangling", [n("Gemm", ["x", "w1", "nowhere"], ["y"], transB=1)], base_init,
     expect="not produced by any node", check=False)
save("bad_two_inputs", [n("Add", ["x", "x2"], ["y"])], [],
     extra_inputs=[helper.make_tensor_value_info("x2", TensorProto.FLOAT, [1, 4])], expect="more than one input")
save("bad_nonlinear", [n("Div", ["one", "x"], ["y"])], [T("one", np.array(1, dtype=np.float32))], out_dim=4,
     expect="not linear")
save("bad_fork", [n("Relu", ["x"], ["a"]), n("Gemm", ["x", "w1", "b1"], ["c"], transB=1),
                  n("Gemm", ["a", "w1", "b1"], ["d"], transB=1), n("Add", ["c", "d"], ["y"])], base_init,
     expect="fork")
save("bad_erf_alone", [n("Erf", ["x"], ["y"])], [], expect="GELU")
save("bad_huge_input", [n("Relu", ["x"], ["y"])], [], in_shape=(1, 1 << 26), expect="dimension 1")
save("bad_batch", [n("MatMul", ["x", "w"], ["y"])], [T("w", W(2, 4, 3))], in_shape=(1, 4), expect="batched",
     check=False)
big = T("w1", w1)
del big.dims[:]
big.dims.extend([1 << 20, 1 << 20])
save("bad_huge_dims", [n("Gemm", ["x", "w1", "b1"], ["y"], transB=1)], [big, T("b1", b1)], expect="elements",
     check=False)
neg = T("w1", w1)
neg.dims[0] = -5
save("bad_negative_dim", [n("Gemm", ["x", "w1", "b1"], ["y"], transB=1)], [neg, T("b1", b1)],
     expect="dimension 0 is -5", check=False)
short = T("w1", w1)
short.raw_data = short.raw_data[:-4]
save("bad_short_data", [n("Gemm", ["x", "w1", "b1"], ["y"], transB=1)], [short, T("b1", b1)],
     expect="float data holds 19 values", check=False)
i32 = helper.make_tensor("w1", TensorProto.INT32, [5, 4], [1] * 20)
save("bad_int_weights", [n("Gemm", ["x", "w1", "b1"], ["y"], transB=1)], [i32, T("b1", b1)], expect="data type 6",
     check=False)
with open(os.path.join(D, "bad_truncated.onnx"), "wb") as f:
    f.write(open(os.path.join(D, "ok_gelu_torch.onnx"), "rb").read()[:-37])
with open(os.path.join(D, "bad_truncated.expect"), "w") as f:
    f.write("not a valid ONNX protobuf")
print("ok")
