#!/usr/bin/python3
"""torch_throughput.py — OPTIONAL comparison: PyTorch one-thread training
throughput of 784-256-256-10 (batch 128, SGD momentum 0.9, lr 0.05) on
Fashion-MNIST, for the comparison in benchmarks/throughput.sh. Needs Debian's
python3-torch (PyTorch 1.13) and numpy; nothing in lgelu's build or tests
depends on it.

For each activation it times several implementations and prints, per
variant, the samples/s of every epoch (training steps only, as `lgelu train`
reports them); the best variant's median is PyTorch's number:
  lgelu: eager x·Φ(λx) with λ = 1 + softplus(s/t) (t = 0.1) per layer;
         the same under torch.jit.script; a custom autograd.Function whose
         forward keeps Φ and φ for the backward.
  gelu:  F.gelu (ATen's fused kernel).  relu: F.relu.

With --cnn the model is the small CNN of `lgelu train --arch
1x28x28,c8k3s2,c16k3s2,10`: Conv2d(1, 8, 3, stride 2) → act → Conv2d(8, 16,
3, stride 2) → act → Linear(576, 10), one λ per conv layer.

usage: torch_throughput.py [--data DIR] [--act lgelu|gelu|relu] [--epochs N] [--cnn]
"""
import argparse
import gzip
import math
import os
import statistics
import sys
import time

# one thread everywhere, also inside the BLAS torch links (before importing it)
for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[v] = "1"
import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402


def load_idx(path):
    with gzip.open(path, "rb") as f:
        raw = f.read()
    ndim = raw[3]
    dims = [int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    return np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


T = 0.1
INV_SQRT2 = 1.0 / math.sqrt(2.0)
INV_SQRT2PI = 1.0 / math.sqrt(2.0 * math.pi)


def lgelu_eager(x, s):
    lam = 1.0 + F.softplus(s / T)
    return x * 0.5 * (1.0 + torch.erf(lam * x * INV_SQRT2))


@torch.jit.script
def lgelu_jit(x, s):
    lam = 1.0 + F.softplus(s / 0.1)
    return x * 0.5 * (1.0 + torch.erf(lam * x * 0.7071067811865476))


class LGeluFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, lam):
        u = lam * x
        Phi = 0.5 * (1.0 + torch.erf(u * INV_SQRT2))
        phi = torch.exp(-0.5 * u * u) * INV_SQRT2PI
        ctx.save_for_backward(x, u, Phi, phi)
        return x * Phi

    @staticmethod
    def backward(ctx, g):
        x, u, Phi, phi = ctx.saved_tensors
        dx = g * (Phi + u * phi)
        dlam = (g * x * x * phi).sum().reshape(1)
        return dx, dlam


def lgelu_fn(x, s):
    return LGeluFn.apply(x, 1.0 + F.softplus(s / T))


class MLP(torch.nn.Module):
    def __init__(self, act):
        super().__init__()
        self.l = torch.nn.ModuleList([torch.nn.Linear(784, 256), torch.nn.Linear(256, 256), torch.nn.Linear(256, 10)])
        self.s = torch.nn.Parameter(torch.zeros(2))
        self.act = act

    def forward(self, x):
        for k in range(2):
            z = self.l[k](x)
            if self.act is None:
                x = z
            elif self.act in (F.gelu, F.relu):
                x = self.act(z)
            else:
                x = self.act(z, self.s[k:k + 1])
        return self.l[2](x)


class CNN(MLP):
    def __init__(self, act):
        torch.nn.Module.__init__(self)
        self.l = torch.nn.ModuleList([torch.nn.Conv2d(1, 8, 3, stride=2), torch.nn.Conv2d(8, 16, 3, stride=2),
                                      torch.nn.Linear(576, 10)])
        self.s = torch.nn.Parameter(torch.zeros(2))
        self.act = act

    def forward(self, x):
        x = x.reshape(-1, 1, 28, 28)
        for k in range(2):
            z = self.l[k](x)
            if self.act in (F.gelu, F.relu):
                x = self.act(z)
            else:
                x = self.act(z, self.s[k:k + 1])
        return self.l[2](x.flatten(1))


def run(act, X, Y, epochs, batch=128, lr=0.05, cnn=False):
    torch.manual_seed(1)
    m = CNN(act) if cnn else MLP(act)
    params = [p for n, p in m.named_parameters() if n != "s"]
    groups = [{"params": params}]
    if act not in (F.gelu, F.relu):
        groups.append({"params": [m.s], "lr": 9 * lr})
    opt = torch.optim.SGD(groups, lr=lr, momentum=0.9)
    n = X.shape[0]
    rates = []
    for _ in range(epochs):
        perm = torch.randperm(n)
        t0 = time.perf_counter()
        for b in range(0, n, batch):
            idx = perm[b:b + batch]
            loss = F.cross_entropy(m(X[idx]), Y[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        rates.append(n / (time.perf_counter() - t0))
    return rates


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    ap.add_argument("--act", default="lgelu", choices=["lgelu", "gelu", "relu"])
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--cnn", action="store_true")
    a = ap.parse_args()
    torch.set_num_threads(1)
    X = torch.from_numpy(load_idx(f"{a.data}/train-images-idx3-ubyte.gz").reshape(-1, 784).astype(np.float32) / 255.0)
    Y = torch.from_numpy(load_idx(f"{a.data}/train-labels-idx1-ubyte.gz").astype(np.int64))
    variants = {"lgelu": {"eager": lgelu_eager, "jit": lgelu_jit, "autograd.Function": lgelu_fn},
                "gelu": {"F.gelu": F.gelu}, "relu": {"F.relu": F.relu}}[a.act]
    best = 0.0
    for name, fn in variants.items():
        rates = run(fn, X, Y, a.epochs, cnn=a.cnn)
        med = statistics.median(rates)
        best = max(best, med)
        print(f"torch {torch.__version__} {a.act} {name}: " + " ".join(f"{r:.0f}" for r in rates) +
              f" samples/s (median {med:.0f})")
        sys.stdout.flush()
    print(f"torch best {a.act} {best:.0f}")


if __name__ == "__main__":
    main()
