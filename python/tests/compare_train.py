"""Train the MLP and CNN of test_torch.py in PyTorch as `lgelu train` would
(300 steps of batch 64 over the first 6400 Fashion-MNIST training images,
SGD 0.05/0.9, c = 9, λ-space update), without annealing and annealed from
0.5, two seeds; prints test accuracy on 10 000 images and λ per layer
(docs/LIBRARY.md "Torch against lgelu train"). Not part of CI."""
import os
import sys

import numpy as np
import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lgelu.torch as lt  # noqa: E402
from test_torch import fashion  # noqa: E402


def run(make, shape, start, seed, Xtr, ytr, Xte, yte):
    torch.manual_seed(seed)
    model = make()
    opt = lt.LambdaSpace(torch.optim.SGD(lt.param_groups(model, lr=0.05), lr=0.05, momentum=0.9))
    anneal = lt.Anneal(model, 300, start=start)
    X, y = torch.from_numpy(Xtr), torch.from_numpy(ytr)
    g = torch.Generator().manual_seed(seed)
    for ep in range(3):
        perm = torch.randperm(6400, generator=g)
        for b in range(100):
            anneal(ep * 100 + b)
            i = perm[b * 64:(b + 1) * 64]
            loss = nn.functional.cross_entropy(model(X[i].reshape(shape)), y[i])
            opt.zero_grad()
            loss.backward()
            opt.step()
    with torch.no_grad():
        acc = float((model(torch.from_numpy(Xte).reshape(shape)).argmax(1).numpy() == yte).mean())
    return acc, [round(m.lam, 4) for m in lt.hardness_modules(model)]


def main():
    torch.set_num_threads(1)
    Xtr, ytr = fashion("train", 6400)
    Xte, yte = fashion("test", 10000)
    mlp = lambda: nn.Sequential(nn.Linear(784, 64), lt.LambdaGELU(), nn.Linear(64, 64), lt.LambdaGELU(),  # noqa: E731
                                nn.Linear(64, 10))
    cnn = lambda: nn.Sequential(nn.Conv2d(1, 4, 3, stride=2), lt.LambdaGELU(), nn.Conv2d(4, 8, 3, stride=2),  # noqa: E731
                                lt.LambdaGELU(), nn.Flatten(), nn.Linear(288, 10))
    for name, make, shape in (("mlp", mlp, (-1, 784)), ("cnn", cnn, (-1, 1, 28, 28))):
        for start in (1.0, 0.5):
            for seed in (1, 2):
                print(name, "anneal-start", start, "seed", seed, *run(make, shape, start, seed, Xtr, ytr, Xte, yte))


if __name__ == "__main__":
    main()
