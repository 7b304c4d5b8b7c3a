"""lgelu: Python bindings of liblgelu (docs/LIBRARY.md).

    import lgelu
    net = lgelu.load("net.onnx")
    y = net.eval(x)                                   # numpy in, numpy out
    r = lgelu.verify(net, x, eps=0.01, timeout=30)    # r.verdict, r.counterexample
    r = lgelu.verify_vnnlib(net, "prop.vnnlib")
    d = lgelu.deviation(net.relu(), net, x, eps=0.01)

`lgelu.torch` (needs PyTorch) holds LambdaGELU, SwishBeta, PReLU, the
annealing callback, ReLU substitution and export_onnx.
"""
from ._core import (LgeluError, Net, Result, deviation, hardness_step, library_path, load, verify, verify_vnnlib,
                    version)

__all__ = ["LgeluError", "Net", "Result", "load", "verify", "verify_vnnlib", "deviation", "hardness_step",
           "library_path", "version"]
__version__ = "0.4.0"
