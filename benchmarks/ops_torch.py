#!/usr/bin/env python3
"""Third-party-style PyTorch models with the ONNX ops of docs/FORMATS.md beyond chains
(benchmarks/VERIFY.md "Third-party ops"; needs python3-torch, python3-numpy).

  ops_torch.py OUTDIR [EPOCHS]

Trains two small Fashion-MNIST classifiers with PyTorch (seed 0, Adam, batch 128, EPOCHS
epochs, default 1), exports each with torch.onnx (opset 13, dynamic batch axis) and writes
OUTDIR/NAME.onnx, OUTDIR/NAME_x.txt (the first 20 test images, one per line) and
OUTDIR/NAME_y.txt (PyTorch's float32 logits for them, %.9g):

  mobile   MobileNet-style: Conv s2, BatchNorm, ReLU6; depthwise Conv, BatchNorm, ReLU6;
           1x1 Conv, ReLU; Flatten, Linear
  unet     U-Net-style: Conv, ReLU; MaxPool; Conv, ReLU; ConvTranspose s2 (up); Concat with the
           skip; Conv, ReLU; nearest Upsample x0.5 is avoided (a strided Conv instead); chunk
           into two halves added (Slice from Shape arithmetic); Flatten, Linear
"""
import gzip
import os
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

D = "/usr/share/datasets/fashion-mnist"


def idx(name, images):
    with gzip.open(os.path.join(D, name)) as f:
        b = f.read()
    if images:
        return np.frombuffer(b, np.uint8, offset=16).reshape(-1, 1, 28, 28).astype(np.float32) / 255.0
    return np.frombuffer(b, np.uint8, offset=8).astype(np.int64)


class Mobile(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1, self.b1 = nn.Conv2d(1, 8, 3, stride=2, padding=1), nn.BatchNorm2d(8)
        self.dw, self.b2 = nn.Conv2d(8, 8, 3, padding=1, groups=8), nn.BatchNorm2d(8)
        self.pw = nn.Conv2d(8, 8, 1)
        self.fc = nn.Linear(8 * 14 * 14, 10)

    def forward(self, x):
        h = F.relu6(self.b1(self.c1(x)))
        h = F.relu6(self.b2(self.dw(h)))
        return self.fc(F.relu(self.pw(h)).flatten(1))


class UNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.e1 = nn.Conv2d(1, 4, 3, stride=2, padding=1)          # 4x14x14
        self.e2 = nn.Conv2d(4, 8, 3, padding=1)                    # 8x7x7 after the pool
        self.up = nn.ConvTranspose2d(8, 4, 2, stride=2)            # 4x14x14
        self.d1 = nn.Conv2d(8, 8, 3, stride=2, padding=1)          # 8x7x7 from the concat
        self.fc = nn.Linear(4 * 7 * 7, 10)

    def forward(self, x):
        s = F.relu(self.e1(x))
        h = F.relu(self.e2(F.max_pool2d(s, 2)))
        u = F.relu(self.up(h))
        d = F.relu(self.d1(torch.cat([u, s], dim=1)))
        a, b = d.chunk(2, dim=1)
        return self.fc((a + b).flatten(1))


def main(out, epochs):
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    torch.set_num_threads(2)
    xtr, ytr = torch.from_numpy(idx("train-images-idx3-ubyte.gz", 1)), torch.from_numpy(idx("train-labels-idx1-ubyte.gz", 0))
    xte, yte = idx("t10k-images-idx3-ubyte.gz", 1), idx("t10k-labels-idx1-ubyte.gz", 0)
    for name, model in (("mobile", Mobile()), ("unet", UNet())):
        opt = torch.optim.Adam(model.parameters(), lr=2e-3)
        for _ in range(epochs):
            model.train()
            perm = torch.randperm(len(xtr))
            for i in range(0, len(xtr), 128):
                j = perm[i:i + 128]
                opt.zero_grad()
                F.cross_entropy(model(xtr[j]), ytr[j]).backward()
                opt.step()
        model.eval()
        with torch.no_grad():
            acc = (model(torch.from_numpy(xte)).argmax(1).numpy() == yte).mean()
            y = model(torch.from_numpy(xte[:20])).numpy()
        torch.onnx.export(model, torch.from_numpy(xte[:1]), os.path.join(out, name + ".onnx"), opset_version=13,
                          input_names=["input"], output_names=["output"],
                          dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}})
        np.savetxt(os.path.join(out, name + "_x.txt"), xte[:20].reshape(20, -1), fmt="%.9g")
        np.savetxt(os.path.join(out, name + "_y.txt"), y, fmt="%.9g")
        print("%s: test accuracy %.2f %%" % (name, 100 * acc))


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        raise SystemExit(__doc__)
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 1)
