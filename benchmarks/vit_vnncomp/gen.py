"""Generate ViTs in the VNN-COMP 2023 `vit` style and their VNN-LIB properties.

Usage: /usr/bin/python3 benchmarks/vit_vnncomp/gen.py OUTDIR [N_PER_NET] [EPS[,EPS...]]

Two nets like the competition's (CIFAR-10 shape 3x32x32, conv patch embedding, class token,
BatchNorm over tokens in place of LayerNorm, softmax attention with 3 heads, ReLU MLP, 10
classes): p16_L2 (patch 16, 2 blocks) and p8_L3 (patch 8, 3 blocks), width 48 (head width
16, so PyTorch's 1/sqrt(16) scale is exact), MLP width 96. No CIFAR-10 data is on this
machine, so the weights are random (PyTorch's default initialisation; BatchNorm statistics
set from 256 random images so the tokens are normalised as in a trained net). Properties:
N_PER_NET random images (pixels uniform in [0, 1]), L-inf radius EPS (default 1/255; several
comma-separated give each image each radius) clipped to [0, 1], label = the net's argmax, one file per instance, and instances.csv listing
`onnx,vnnlib,timeout` as VNN-COMP does.
"""
import os
import sys

import numpy as np
import torch
import torch.nn as nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests"))
import vnnlib_write  # noqa: E402  (tests/vnnlib_write.py)


class Block(nn.Module):
    def __init__(self, D, H, M):
        super().__init__()
        self.H = H
        self.scale = (D // H) ** -0.5
        self.n1 = nn.BatchNorm1d(D)
        self.q = nn.Linear(D, D)
        self.k = nn.Linear(D, D)
        self.v = nn.Linear(D, D)
        self.proj = nn.Linear(D, D)
        self.n2 = nn.BatchNorm1d(D)
        self.fc1 = nn.Linear(D, M)
        self.fc2 = nn.Linear(M, D)

    def forward(self, x):
        B, T, D = x.shape
        h = self.n1(x.transpose(1, 2)).transpose(1, 2)
        q, k, v = (f(h).reshape(B, T, self.H, D // self.H).transpose(1, 2) for f in (self.q, self.k, self.v))
        a = torch.softmax((q @ k.transpose(-2, -1)) * self.scale, dim=-1)
        x = x + self.proj((a @ v).transpose(1, 2).reshape(B, T, D))
        h = self.n2(x.transpose(1, 2)).transpose(1, 2)
        return x + self.fc2(torch.relu(self.fc1(h)))


class Vit(nn.Module):
    def __init__(self, P, L, D=48, H=3, M=96):
        super().__init__()
        self.patch = nn.Conv2d(3, D, P, P)
        self.cls = nn.Parameter(0.02 * torch.randn(1, 1, D))
        self.pos = nn.Parameter(0.02 * torch.randn(1, (32 // P) ** 2 + 1, D))
        self.blocks = nn.Sequential(*[Block(D, H, M) for _ in range(L)])
        self.norm = nn.BatchNorm1d(D)
        self.head = nn.Linear(D, 10)

    def forward(self, x):
        t = self.patch(x.reshape(-1, 3, 32, 32)).flatten(2).transpose(1, 2)
        t = torch.cat([self.cls.expand(t.shape[0], -1, -1), t], 1) + self.pos
        t = self.blocks(t)
        t = self.norm(t.transpose(1, 2)).transpose(1, 2)
        return self.head(t[:, 0])


def vnnlib(path, x0, eps, label):
    vnnlib_write.robustness(path, x0, eps, label, 10, "L-inf ball of radius %.9g, label %d" % (eps, label),
                            lo=0.0, hi=1.0)


def main():
    out = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    epss = [float(e) for e in sys.argv[3].split(",")] if len(sys.argv) > 3 else [1 / 255]
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(2023)
    rng = np.random.default_rng(2023)
    rows = []
    for P, L in ((16, 2), (8, 3)):
        name = "vit_p%d_L%d" % (P, L)
        m = Vit(P, L)
        with torch.no_grad():  # BatchNorm statistics from random images (train-mode forward)
            for mod in m.modules():
                if isinstance(mod, nn.BatchNorm1d):
                    mod.momentum = None
            m.train()
            m(torch.rand(256, 3, 32, 32))
        m.eval()
        path = os.path.join(out, name + ".onnx")
        torch.onnx.export(m, torch.rand(1, 3, 32, 32), path, opset_version=13,
                          input_names=["input"], output_names=["output"])
        for k in range(n):
            x = rng.uniform(0, 1, size=3072)
            with torch.no_grad():
                y = m(torch.tensor(x[None], dtype=torch.float32)).numpy().reshape(-1)
            for e, eps in enumerate(epss):
                v = "%s_%d_e%d.vnnlib" % (name, k, e)
                vnnlib(os.path.join(out, v), x, eps, int(np.argmax(y)))
                rows.append("%s.onnx,%s,30" % (name, v))
    with open(os.path.join(out, "instances.csv"), "w") as f:
        f.write("\n".join(rows) + "\n")
    print("wrote %d instances to %s" % (len(rows), out))


if __name__ == "__main__":
    main()
