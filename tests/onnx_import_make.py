#!/usr/bin/env python3
"""ONNX models for the Check suite `onnx_import` (test-only).

  onnx_import_make.py OUTDIR

writes OUTDIR/NAME.onnx and OUTDIR/NAME.txt: pairs of lines (input vector, output
vector, %.17g) from an independent float64 evaluation (numpy; PyTorch's interpolate
for the linear Resize), for:
  softmax_final    Gemm, Relu, Gemm, Softmax: the reference is the logits (the
                   import drops the Softmax with --drop-final-softmax)
  no_softmax       Gemm only (refused with --drop-final-softmax)
  avgpool3         Conv, Relu, AveragePool 3x3 (1/9 is not a double), Flatten, Gemm
  avgpool_big      AveragePool 2x2/2 of an 8x64x64 image (a dense matrix of 2 GiB)
  avgpool_big3     AveragePool 3x3/2 with pads (count_include_pad) of the same image
  maxmin2          Max and Min of two network values (flat)
  maxmin_reuse     Max of a value and its negation, read again; Min(q, q)
  maxmin2_img      Max of two conv outputs, then a Min with a third
  resize_linear    Resize linear x2, half_pixel (weights 1/4, 3/4)
  resize_linear_pt Resize linear x2, pytorch_half_pixel, then a conv
  resize_align     Resize linear, align_corners 4 -> 8 (weights k/7: not doubles)
  resize_big       Resize linear x2 half_pixel of a 4x64x64 image (the dense map: 8 GiB)
  resize_big_asym  Resize linear x4 (H), x2 (W), asymmetric, of the same image
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

RNG = np.random.default_rng(5)
n = helper.make_node
relu = lambda v: np.maximum(v, 0)


def f32(*shape, s=0.5):
    return RNG.normal(0, s, size=shape).astype(np.float32)


def init(name, a):
    return numpy_helper.from_array(np.asarray(a), name)


def vi(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def save(out, name, nodes, inits, in_shape, out_shape, ref, rows=3, opset=13):
    g = helper.make_graph(nodes, name, [vi("x", in_shape)], [vi("y", out_shape)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 7
    onnx.checker.check_model(m, full_check=True)
    onnx.save(m, os.path.join(out, name + ".onnx"))
    with open(os.path.join(out, name + ".txt"), "w") as f:
        for _ in range(rows):
            x = RNG.normal(0, 1.0, size=in_shape)
            y = ref(x.astype(np.float64))
            f.write(" ".join("%.17g" % v for v in x.ravel()) + "\n")
            f.write(" ".join("%.17g" % v for v in np.asarray(y).ravel()) + "\n")


def conv2d(x, k, stride=1, pad=0):
    """x [C, H, W], k [M, C, kh, kw] in float64."""
    C, H, W = x.shape
    M, _, kh, kw = k.shape
    xp = np.pad(x, ((0, 0), (pad, pad), (pad, pad)))
    ho, wo = (H + 2 * pad - kh) // stride + 1, (W + 2 * pad - kw) // stride + 1
    y = np.zeros((M, ho, wo))
    for oy in range(ho):
        for ox in range(wo):
            win = xp[:, oy * stride:oy * stride + kh, ox * stride:ox * stride + kw]
            y[:, oy, ox] = np.tensordot(k, win, axes=([1, 2, 3], [0, 1, 2]))
    return y


def avgpool(x, k, stride, pad):
    """count_include_pad: the window's sum over k*k (exact rational, then rounded once)."""
    C = x.shape[0]
    s = conv2d(x, np.eye(C).reshape(C, C, 1, 1) * np.ones((1, 1, k, k)), stride, pad)
    return s / (k * k)


def main(out):
    os.makedirs(out, exist_ok=True)
    w1, b1, w2, b2 = f32(8, 5), f32(8), f32(4, 8), f32(4)
    W1, W2 = w1.astype(np.float64), w2.astype(np.float64)
    logits = lambda x: relu(x @ W1.T + b1) @ W2.T + b2
    save(out, "softmax_final",
         [n("Gemm", ["x", "w1", "b1"], ["h"], transB=1), n("Relu", ["h"], ["r"]),
          n("Gemm", ["r", "w2", "b2"], ["z"], transB=1), n("Softmax", ["z"], ["y"], axis=1)],
         [init("w1", w1), init("b1", b1), init("w2", w2), init("b2", b2)], [1, 5], [1, 4], logits)
    save(out, "no_softmax", [n("Gemm", ["x", "w1", "b1"], ["y"], transB=1)], [init("w1", w1), init("b1", b1)],
         [1, 5], [1, 8], lambda x: x @ W1.T + b1)
    # AveragePool 3x3, stride 1, pad 1 (count_include_pad = 1, PyTorch's default)
    kc, wg = f32(3, 2, 3, 3), f32(2, 3 * 6 * 6, s=0.1)
    save(out, "avgpool3",
         [n("Conv", ["x", "kc"], ["c"], pads=[1, 1, 1, 1]), n("Relu", ["c"], ["r"]),
          n("AveragePool", ["r"], ["p"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], count_include_pad=1),
          n("Flatten", ["p"], ["f"], axis=1), n("Gemm", ["f", "wg"], ["y"], transB=1)],
         [init("kc", kc), init("wg", wg)], [1, 2, 6, 6], [1, 2],
         lambda x: avgpool(relu(conv2d(x[0], kc.astype(np.float64), 1, 1)), 3, 1, 1).reshape(1, -1)
         @ wg.astype(np.float64).T)
    # large feature maps: the dense matrix would be 8192 x 32768 doubles (2 GiB)
    wb = f32(3, 8 * 32 * 32, s=0.05)
    save(out, "avgpool_big",
         [n("AveragePool", ["x"], ["p"], kernel_shape=[2, 2], strides=[2, 2]), n("Flatten", ["p"], ["f"], axis=1),
          n("Gemm", ["f", "wb"], ["y"], transB=1)],
         [init("wb", wb)], [1, 8, 64, 64], [1, 3],
         lambda x: avgpool(x[0], 2, 2, 0).reshape(1, -1) @ wb.astype(np.float64).T, rows=2)
    save(out, "avgpool_big3",
         [n("AveragePool", ["x"], ["p"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1],
            count_include_pad=1), n("Flatten", ["p"], ["f"], axis=1),
          n("Gemm", ["f", "wb"], ["y"], transB=1)],
         [init("wb", wb)], [1, 8, 64, 64], [1, 3],
         lambda x: avgpool(x[0], 3, 2, 1).reshape(1, -1) @ wb.astype(np.float64).T, rows=2)
    # Max and Min of network values
    wa, wbb, wc, wo = f32(6, 4), f32(6, 4), f32(6, 4), f32(3, 6)
    A, Bm, Cm, Wo = (v.astype(np.float64) for v in (wa, wbb, wc, wo))
    save(out, "maxmin2",
         [n("Gemm", ["x", "wa"], ["a"], transB=1), n("Gemm", ["x", "wb"], ["b0"], transB=1), n("Relu", ["b0"], ["b"]),
          n("Max", ["a", "b"], ["m"]), n("Gemm", ["x", "wc"], ["c"], transB=1), n("Min", ["c", "m"], ["q"]),
          n("Gemm", ["q", "wo"], ["y"], transB=1)],
         [init("wa", wa), init("wb", wbb), init("wc", wc), init("wo", wo)], [1, 4], [1, 3],
         lambda x: np.minimum(x @ Cm.T, np.maximum(x @ A.T, relu(x @ Bm.T))) @ Wo.T)
    # a value read again after a Max, and Min(q, q) = q
    save(out, "maxmin_reuse",
         [n("Gemm", ["x", "wa"], ["a"], transB=1), n("Neg", ["a"], ["b"]), n("Max", ["a", "b"], ["m"]),
          n("Max", ["m", "a"], ["q"]), n("Min", ["q", "q"], ["s"]), n("Gemm", ["s", "wo"], ["y"], transB=1)],
         [init("wa", wa), init("wo", wo)], [1, 4], [1, 3], lambda x: np.abs(x @ A.T) @ Wo.T)
    k1, k2, k3, wi = f32(3, 2, 3, 3), f32(3, 2, 3, 3), f32(3, 2, 3, 3), f32(2, 3 * 4 * 4)
    K1, K2, K3 = (v.astype(np.float64) for v in (k1, k2, k3))
    save(out, "maxmin2_img",
         [n("Conv", ["x", "k1"], ["a"]), n("Conv", ["x", "k2"], ["b"]), n("Max", ["a", "b"], ["m"]),
          n("Conv", ["x", "k3"], ["c"]), n("Min", ["m", "c"], ["q"]), n("Flatten", ["q"], ["f"], axis=1),
          n("Gemm", ["f", "wi"], ["y"], transB=1)],
         [init("k1", k1), init("k2", k2), init("k3", k3), init("wi", wi)], [1, 2, 6, 6], [1, 2],
         lambda x: np.minimum(np.maximum(conv2d(x[0], K1), conv2d(x[0], K2)), conv2d(x[0], K3)).reshape(1, -1)
         @ wi.astype(np.float64).T)
    # linear Resize, against PyTorch's interpolate in float64
    import torch
    import torch.nn.functional as F

    def interp(x, size=None, scale=None, align=False):
        t = torch.from_numpy(np.asarray(x, np.float64))
        return F.interpolate(t, size=size, scale_factor=scale, mode="bilinear", align_corners=align).numpy()

    wr = f32(3, 2 * 8 * 8, s=0.2)
    scales = init("scales", np.array([1, 1, 2, 2], np.float32))
    save(out, "resize_linear",
         [n("Resize", ["x", "", "scales"], ["u"], mode="linear", coordinate_transformation_mode="half_pixel"),
          n("Flatten", ["u"], ["f"], axis=1), n("Gemm", ["f", "wr"], ["y"], transB=1)],
         [scales, init("wr", wr)], [1, 2, 4, 4], [1, 3],
         lambda x: interp(x, scale=2.0).reshape(1, -1) @ wr.astype(np.float64).T)
    kr, wq = f32(2, 2, 3, 3), f32(3, 2 * 6 * 6, s=0.2)
    save(out, "resize_linear_pt",
         [n("Resize", ["x", "", "scales"], ["u"], mode="linear", coordinate_transformation_mode="pytorch_half_pixel"),
          n("Conv", ["u", "kr"], ["c"]), n("Relu", ["c"], ["r"]), n("Flatten", ["r"], ["f"], axis=1),
          n("Gemm", ["f", "wq"], ["y"], transB=1)],
         [scales, init("kr", kr), init("wq", wq)], [1, 2, 4, 4], [1, 3],
         lambda x: relu(conv2d(interp(x, scale=2.0)[0], kr.astype(np.float64))).reshape(1, -1)
         @ wq.astype(np.float64).T)
    # large images: the dense map would be 8 GiB; read as an index map and a conv
    def resize_asym(x, sy, sx):
        C, H, W = x.shape
        ys, xs = np.arange(H * sy) / sy, np.arange(W * sx) / sx
        y0, x0 = np.floor(ys).astype(int), np.floor(xs).astype(int)
        fy, fx = ys - y0, xs - x0
        y1, x1 = np.minimum(y0 + 1, H - 1), np.minimum(x0 + 1, W - 1)
        rows = x[:, y0, :] * (1 - fy)[None, :, None] + x[:, y1, :] * fy[None, :, None]
        return rows[:, :, x0] * (1 - fx)[None, None, :] + rows[:, :, x1] * fx[None, None, :]

    wbig = f32(3, 4 * 16 * 16, s=0.05)
    save(out, "resize_big",
         [n("Resize", ["x", "", "scales"], ["u"], mode="linear", coordinate_transformation_mode="half_pixel"),
          n("AveragePool", ["u"], ["p"], kernel_shape=[8, 8], strides=[8, 8]), n("Flatten", ["p"], ["f"], axis=1),
          n("Gemm", ["f", "wbig"], ["y"], transB=1)],
         [scales, init("wbig", wbig)], [1, 4, 64, 64], [1, 3],
         lambda x: avgpool(interp(x, scale=2.0)[0], 8, 8, 0).reshape(1, -1) @ wbig.astype(np.float64).T, rows=2)
    wba = f32(3, 4 * 32 * 16, s=0.05)
    save(out, "resize_big_asym",
         [n("Resize", ["x", "", "scales3"], ["u"], mode="linear", coordinate_transformation_mode="asymmetric"),
          n("AveragePool", ["u"], ["p"], kernel_shape=[8, 8], strides=[8, 8]), n("Flatten", ["p"], ["f"], axis=1),
          n("Gemm", ["f", "wba"], ["y"], transB=1)],
         [init("scales3", np.array([1, 1, 4, 2], np.float32)), init("wba", wba)], [1, 4, 64, 64], [1, 3],
         lambda x: avgpool(resize_asym(x[0], 4, 2), 8, 8, 0).reshape(1, -1) @ wba.astype(np.float64).T, rows=2)
    save(out, "resize_align",
         [n("Resize", ["x", "", "", "sizes"], ["u"], mode="linear", coordinate_transformation_mode="align_corners"),
          n("Flatten", ["u"], ["f"], axis=1), n("Gemm", ["f", "wr"], ["y"], transB=1)],
         [init("sizes", np.array([1, 2, 8, 8], np.int64)), init("wr", wr)], [1, 2, 4, 4], [1, 3],
         lambda x: interp(x, size=(8, 8), align=True).reshape(1, -1) @ wr.astype(np.float64).T)


if __name__ == "__main__":
    main(sys.argv[1])
