#!/usr/bin/python3
"""vit_torch.py — OPTIONAL comparison: PyTorch one-thread training of the ViT
that `lgelu train --arch 1x28x28,vit:pP,dD,hNH,LL,mM,cls,10 --act lgelu` trains
(same architecture, same optimiser and schedule: AdamW, linear warm-up, batch
64), on Fashion-MNIST; prints samples/s per epoch (training steps only, as
lgelu reports them) and the test accuracy. Needs Debian's python3-torch (1.13)
and numpy; nothing in lgelu's build or tests depends on it.

Architecture (benchmarks/TRAINING.md "ViT"): P x P patches → Linear(P², D),
class token and learned position embedding, L pre-norm blocks
x + MHA(LN(x)), x + W2·λgelu(W1·LN(x)) with one learned λ per MLP (stepped
as itself, floored at 1.001, rate c·lr), final LN, class token → Linear(D, 10).

usage: vit_torch.py [--data DIR] [--epochs N] [--patch P] [--dim D] [--heads NH]
                    [--depth L] [--mlp M] [--lr LR] [--warmup N] [--wd W] [--c C]
                    [--subset N] [--lr-schedule constant|cosine]
"""
import argparse
import gzip
import math
import os
import sys
import time

for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[v] = "1"
import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402


def load_idx(path):
    with gzip.open(path, "rb") as f:
        raw = f.read()
    ndim = raw[3]
    dims = [int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    return np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


class Block(nn.Module):
    def __init__(self, d, nh, m):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.att = nn.MultiheadAttention(d, nh, batch_first=True)
        self.fc1, self.fc2 = nn.Linear(d, m), nn.Linear(m, d)
        self.lam = nn.Parameter(torch.tensor(1.0 + math.log(2.0)))

    def forward(self, x):
        y = self.ln1(x)
        x = x + self.att(y, y, y, need_weights=False)[0]
        z = self.fc1(self.ln2(x))
        z = z * 0.5 * (1.0 + torch.erf(self.lam * z * (1.0 / math.sqrt(2.0))))
        return x + self.fc2(z)


class ViT(nn.Module):
    def __init__(self, p, d, nh, depth, m, n_out=10, side=28):
        super().__init__()
        self.p, n = p, (side // p) ** 2
        self.emb = nn.Linear(p * p, d)
        self.cls = nn.Parameter(0.02 * torch.randn(1, 1, d))
        self.pos = nn.Parameter(0.02 * torch.randn(1, n + 1, d))
        self.blocks = nn.ModuleList([Block(d, nh, m) for _ in range(depth)])
        self.lnf, self.head = nn.LayerNorm(d), nn.Linear(d, n_out)

    def forward(self, x):
        B, p = x.shape[0], self.p
        x = x.view(B, 28 // p, p, 28 // p, p).permute(0, 1, 3, 2, 4).reshape(B, -1, p * p)
        x = torch.cat([self.cls.expand(B, -1, -1), self.emb(x)], 1) + self.pos
        for b in self.blocks:
            x = b(x)
        return self.head(self.lnf(x)[:, 0])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--patch", type=int, default=7)
    ap.add_argument("--dim", type=int, default=32)
    ap.add_argument("--heads", type=int, default=2)
    ap.add_argument("--depth", type=int, default=2)
    ap.add_argument("--mlp", type=int, default=64)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--warmup", type=int, default=100)
    ap.add_argument("--wd", type=float, default=0.05)
    ap.add_argument("--c", type=float, default=1.0)
    ap.add_argument("--subset", type=int, default=0, help="train on the first N examples only")
    ap.add_argument("--lr-schedule", choices=("constant", "cosine"), default="constant")
    a = ap.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(1)
    X = torch.tensor(load_idx(os.path.join(a.data, "train-images-idx3-ubyte.gz")), dtype=torch.float32) / 255.0
    y = torch.tensor(load_idx(os.path.join(a.data, "train-labels-idx1-ubyte.gz")).astype(np.int64))
    Xt = torch.tensor(load_idx(os.path.join(a.data, "t10k-images-idx3-ubyte.gz")), dtype=torch.float32) / 255.0
    yt = torch.tensor(load_idx(os.path.join(a.data, "t10k-labels-idx1-ubyte.gz")).astype(np.int64))
    if a.subset:
        X, y = X[:a.subset], y[:a.subset]
    net = ViT(a.patch, a.dim, a.heads, a.depth, a.mlp)
    lams = [b.lam for b in net.blocks]
    decay = [p for n, p in net.named_parameters() if p.dim() == 2 and "pos" not in n]
    rest = [p for n, p in net.named_parameters() if not (p.dim() == 2 and "pos" not in n) and not n.endswith("lam")]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": a.wd}, {"params": rest, "weight_decay": 0.0},
                             {"params": lams, "weight_decay": 0.0, "lr": a.c * a.lr}], lr=a.lr)
    base = [g["lr"] for g in opt.param_groups]
    step, total = 0, a.epochs * ((len(X) + a.batch - 1) // a.batch)
    for e in range(1, a.epochs + 1):
        perm = torch.randperm(len(X))
        t0, c0 = time.perf_counter(), time.process_time()
        for s in range(0, len(X), a.batch):
            step += 1
            for g, b0 in zip(opt.param_groups, base):
                f = min(1.0, step / a.warmup) if a.warmup else 1.0
                if a.lr_schedule == "cosine" and step > a.warmup:
                    f = 0.5 * (1.0 + math.cos(math.pi * (step - a.warmup) / max(1, total - a.warmup)))
                g["lr"] = b0 * f
            idx = perm[s:s + a.batch]
            loss = F.cross_entropy(net(X[idx]), y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            with torch.no_grad():
                for lam in lams:
                    lam.clamp_(min=1.001)
        dt, dc = time.perf_counter() - t0, time.process_time() - c0
        with torch.no_grad():
            acc = sum((net(Xt[i:i + 1000]).argmax(1) == yt[i:i + 1000]).sum().item() for i in range(0, len(Xt), 1000))
        print(f"epoch {e}/{a.epochs}  test {100.0 * acc / len(Xt):.2f}%  λ "
              + " ".join(f"{lam.item():.4g}" for lam in lams) + f"  {len(X) / dt:.0f} samples/s ({len(X) / dc:.0f} per CPU second)", flush=True)


if __name__ == "__main__":
    sys.exit(main())
