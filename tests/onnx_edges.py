#!/usr/bin/env python3
"""Write the ONNX files of the Check suite `edges` (test-only).

  onnx_edges.py DIR

Every tensor is float64, so each constant is exactly the number written:
  div3.onnx      y = (1·x + 0) / 3            (1/3 is not a double)
  gemm2.onnx     y = 10·(fl(0.1)·x)           (fl(0.1)·10 is not a double)
  mul3div3.onnx  y = (x·3) / 3                (exact: y = x)
  gelu_s.onnx    h = x·0.5·(1 + erf(x/1.41421)), y = h (a GELU-like pattern whose
                 divisor is within 1e-6 of √2 but is not √2)
  gelu_k.onnx    the same with the factor 0.5000001 instead of 0.5
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

D = sys.argv[1]
os.makedirs(D, exist_ok=True)
n = helper.make_node


def T(name, v):
    return numpy_helper.from_array(np.asarray(v, dtype=np.float64), name)


def save(name, nodes, inits):
    g = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", TensorProto.DOUBLE, [1, 1])],
                          [helper.make_tensor_value_info("y", TensorProto.DOUBLE, [1, 1])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(D, name + ".onnx"))


gemm = [n("Gemm", ["x", "w", "b"], ["z"], transB=1)]
one = [T("w", [[1.0]]), T("b", [0.0])]
save("div3", gemm + [n("Div", ["z", "c3"], ["y"])], one + [T("c3", 3.0)])
save("gemm2", [n("Gemm", ["x", "w1", "b1"], ["z"], transB=1), n("Gemm", ["z", "w2", "b2"], ["y"], transB=1)],
     [T("w1", [[0.1]]), T("b1", [0.0]), T("w2", [[10.0]]), T("b2", [0.0])])
save("mul3div3", gemm + [n("Mul", ["z", "c3"], ["u"]), n("Div", ["u", "c3"], ["y"])], one + [T("c3", 3.0)])
for name, s, k in (("gelu_s", 1.41421, 0.5), ("gelu_k", 1.4142135623730949, 0.5000001)):
    save(name, gemm + [n("Div", ["z", "s2"], ["a"]), n("Erf", ["a"], ["e"]), n("Add", ["e", "one"], ["c"]),
                       n("Mul", ["z", "c"], ["d"]), n("Mul", ["d", "half"], ["h"]),
                       n("Gemm", ["h", "w", "b"], ["y"], transB=1)],
         one + [T("s2", s), T("one", 1.0), T("half", k)])
print("ok")
