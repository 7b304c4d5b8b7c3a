#!/usr/bin/env python3
"""Independent ONNX oracle for the Check suite `onnx` (test-only).

  onnx_eval.py check MODEL         run onnx.checker (full_check) and print "ok"
  onnx_eval.py eval MODEL INPUTS   evaluate MODEL in float64 numpy, one input
                                   vector per line of INPUTS; print the outputs
                                   per line as %.17g

The evaluator reads initializers with onnx.numpy_helper and does the matmuls
itself (onnx.reference does not exist in onnx 1.12). It knows the ops of the
fixture networks and of lgelu's exporter only.
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
            r = numpy_helper.to_array(attr(n, "value", None)).astype(np.float64)
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
            r = a[0] / a[1]
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
        else:
            raise SystemExit("onnx_eval.py: unsupported op " + op)
        env[n.output[0]] = r
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
