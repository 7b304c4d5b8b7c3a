"""lgelu.torch: a λ-GELU MLP and a λ-GELU CNN trained in PyTorch on
Fashion-MNIST with the annealing callback, exported to ONNX and read by
lgelu (each λ, the outputs), then `lgelu relu` + `check` + `verify` on the
export; and the reparameterisation step against the C trainer's own."""
import gzip
import math
import os
import re
import tempfile
import unittest

import numpy as np

import lgelu
from common import FASHION, cli, cli_json

try:
    import torch
    from torch import nn

    import lgelu.torch as lt
except ImportError:  # pragma: no cover - CI installs python3-torch
    torch = None

STEPS = 300
BATCH = 64


def read_idx(path):
    """An IDX file (gzip or not) as a numpy array."""
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rb") as f:
        data = f.read()
    nd = data[3]
    shape = tuple(int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(nd))
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * nd).reshape(shape)


def fashion(split, n):
    pre = "train" if split == "train" else "t10k"
    for ext in (".gz", ""):
        xi = os.path.join(FASHION, f"{pre}-images-idx3-ubyte{ext}")
        if os.path.exists(xi):
            X = read_idx(xi)[:n].reshape(-1, 784).astype(np.float32) / 255.0
            y = read_idx(os.path.join(FASHION, f"{pre}-labels-idx1-ubyte{ext}"))[:n].astype(np.int64)
            return X, y
    raise unittest.SkipTest(f"Fashion-MNIST not found in {FASHION}")


def ulp32(v):
    return float(np.spacing(np.float32(v)))


def info_params(path):
    """(act, λ) per layer from `lgelu info`."""
    out = cli("info", path).stdout
    return [(m.group(1), float(m.group(2))) for m in
            re.finditer(r"^\d+\s+\d+\s+\d+\s+(lgelu|swish|prelu)\s+(\S+)", out, re.M)]


@unittest.skipIf(torch is None, "PyTorch is not installed")
class TestTrainExport(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        torch.manual_seed(1)
        torch.set_num_threads(1)
        cls.Xtr, cls.ytr = fashion("train", STEPS * BATCH // 3)
        cls.Xte, cls.yte = fashion("test", 1000)
        cls.tmp = tempfile.TemporaryDirectory()

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def train(self, model, shape):
        """STEPS SGD steps (lr 0.05, momentum 0.9, s at 9·lr in λ-space, as
        `lgelu train`'s defaults) with annealing from the half-way point;
        returns the model at the switch (learned λ) and at the end."""
        opt = lt.LambdaSpace(torch.optim.SGD(lt.param_groups(model, lr=0.05, c=9.0), lr=0.05, momentum=0.9))
        anneal = lt.Anneal(model, STEPS, start=0.5, tolerance=0.005)
        X, y = torch.from_numpy(self.Xtr), torch.from_numpy(self.ytr)
        g = torch.Generator().manual_seed(2)
        perm = torch.randperm(X.shape[0], generator=g)
        at_switch = None
        for step in range(STEPS):
            if step == anneal.switch_step:
                at_switch = __import__("copy").deepcopy(model)
            anneal(step)
            i = perm[(step * BATCH) % X.shape[0]:][:BATCH]
            loss = nn.functional.cross_entropy(model(X[i].reshape(shape)), y[i])
            opt.zero_grad()
            loss.backward()
            opt.step()
        for m in lt.hardness_modules(model):
            self.assertAlmostEqual(m.value(), lt.lambda_target(0.005), places=9)
        return at_switch, model

    def accuracy(self, model, shape):
        with torch.no_grad():
            p = model(torch.from_numpy(self.Xte).reshape(shape)).argmax(1).numpy()
        return float(np.mean(p == self.yte))

    def check_export(self, model, shape, name):
        path = os.path.join(self.tmp.name, name + ".onnx")
        ex = torch.zeros((1,) + tuple(shape[1:]))
        lams = lt.export_onnx(model, path, ex)
        got = info_params(path)
        self.assertEqual(len(got), len(lams), f"{name}: {got}")
        self.assertEqual([(a, v) for a, _, v in lgelu.load(path).layers if a == "lgelu"], got)  # the API agrees
        for (act, v), lam, m in zip(got, lams, lt.hardness_modules(model)):
            self.assertEqual(act, "lgelu")
            self.assertEqual(lam, m.lam)
            self.assertLessEqual(abs(v - lam), ulp32(lam), f"{name}: lgelu reads λ {v!r}, the module has {lam!r}")
        # outputs on 100 test images: torch float32 vs lgelu's double evaluation
        X = self.Xte[:100]
        with torch.no_grad():
            yt = model(torch.from_numpy(X).reshape(shape)).numpy().astype(np.float64)
        net = lgelu.load(path)
        yl = net.eval(X.astype(np.float64))
        err = np.max(np.abs(yl - yt))
        scale = max(1.0, float(np.max(np.abs(yl))))
        self.assertLess(err, 64 * np.finfo(np.float32).eps * scale, f"{name}: max |torch − lgelu| = {err}")
        print(f"\n{name}: max |torch float32 − lgelu double| on 100 test images {err:.3g} (outputs up to {scale:.3g}); "
              f"λ module {', '.join(repr(v) for v in lams)}, lgelu info {', '.join(repr(v) for _, v in got)}")
        return path, net, X

    def pipeline(self, model, shape, name):
        at_switch, final = self.train(model, shape)
        acc = self.accuracy(final, shape)
        self.assertGreater(acc, 0.6, f"{name}: test accuracy {acc}")
        learned = [m.lam for m in lt.hardness_modules(at_switch)]
        self.assertTrue(all(v > 1.0 for v in learned))
        self.check_export(at_switch, shape, name + "_switch")
        path, net, X = self.check_export(final, shape, name)
        # lgelu relu + check + verify on the export
        rp = os.path.join(self.tmp.name, name + "_relu.lgnet")
        cli("relu", path, "-o", rp)
        relu = lgelu.load(rp)
        with torch.no_grad():
            yr = lt.to_relu(final)(torch.from_numpy(X).reshape(shape)).numpy()
        self.assertLess(np.max(np.abs(relu.eval(X.astype(np.float64)) - yr)), 1e-4)
        xp = os.path.join(self.tmp.name, name + "_X.npy")
        np.save(xp, X.astype(np.float64))
        c = cli_json("check", rp, "--ref", path, "--inputs", xp, "--eps", 0.001, "--max-deviation", 0.5)
        self.assertTrue(c["pass"], c)
        self.assertLess(c["bound_max"], 0.5)
        d = lgelu.deviation(relu, net, X[:10].astype(np.float64), 0.001)
        self.assertAlmostEqual(float(np.max(d)), float(np.max(d)))
        self.assertTrue(np.all(d <= c["bound_max"]))
        x0 = X[0].astype(np.float64)
        x0p = os.path.join(self.tmp.name, name + "_x0.npy")
        np.save(x0p, x0.reshape(1, -1))
        v = cli_json("verify", rp, "--input", x0p, "--eps", 0.002, "--timeout", 30)
        r = lgelu.verify(relu, x0, 0.002, timeout=30)
        self.assertEqual(r.verdict, v["verdict"])
        self.assertNotEqual(r.verdict, "unknown", r.reason)
        print(f"\n{name}: test accuracy {acc:.3f} (1000 images); λ at the switch "
              f"{', '.join(f'{v:.4g}' for v in learned)}; check bound_max {c['bound_max']:.3g}; "
              f"verify eps 0.002: {r.verdict} ({r.seconds:.2f} s)")

    def test_mlp(self):
        torch.manual_seed(3)
        model = nn.Sequential(nn.Linear(784, 64), lt.LambdaGELU(), nn.Linear(64, 64), lt.LambdaGELU(),
                              nn.Linear(64, 10))
        self.pipeline(model, (-1, 784), "mlp")

    def test_cnn(self):
        torch.manual_seed(4)
        model = nn.Sequential(nn.Conv2d(1, 4, 3, stride=2), lt.LambdaGELU(), nn.Conv2d(4, 8, 3, stride=2),
                              lt.LambdaGELU(), nn.Flatten(), nn.Linear(8 * 6 * 6, 10))
        self.pipeline(model, (-1, 1, 28, 28), "cnn")

    def test_swish_and_prelu_export(self):
        torch.manual_seed(5)
        model = nn.Sequential(nn.Linear(784, 16), lt.SwishBeta(beta=3.3), nn.Linear(16, 16), lt.PReLU(0.1),
                              nn.Linear(16, 16), lt.LambdaGELU(lam=7.25), nn.Linear(16, 10))
        path = os.path.join(self.tmp.name, "mixed.onnx")
        params = lt.export_onnx(model, path)  # example input from the first Linear
        got = info_params(path)
        self.assertEqual([a for a, _ in got], ["swish", "prelu", "lgelu"])
        for (_, v), p in zip(got, params):
            self.assertLessEqual(abs(v - p), ulp32(p))
        X = self.Xte[:20]
        with torch.no_grad():
            yt = model(torch.from_numpy(X)).numpy()
        self.assertLess(np.max(np.abs(lgelu.load(path).eval(X.astype(np.float64)) - yt)), 1e-5)
        relu = lt.to_relu(model)
        self.assertEqual(sum(isinstance(m, nn.ReLU) for m in relu.modules()), 3)
        self.assertIsInstance(model[1], lt.SwishBeta)  # the original is untouched


@unittest.skipIf(torch is None, "PyTorch is not installed")
class TestReparam(unittest.TestCase):
    def torch_steps(self, s0, t, grads, lr, c, optim, momentum, s_update):
        m = lt.LambdaGELU(t=t, s=s0)
        groups = lt.param_groups(m, lr=lr, c=c)
        if optim == "sgd":
            base = torch.optim.SGD(groups, lr=lr, momentum=momentum)
        else:
            base = torch.optim.AdamW(groups, lr=lr, betas=(0.9, 0.999), eps=1e-8)
        opt = lt.LambdaSpace(base, s_update=s_update)
        for g in grads:
            opt.zero_grad()
            (m.param() * g).backward()  # ∂L/∂λ = g
            opt.step()
        return float(m.s), m.lam

    def test_step_matches_c_trainer(self):
        cases = [(0.0, 0.1, [0.5]), (0.0, 0.1, [-2.0, 0.3, 1.1]), (0.37, 0.1, [0.05, 0.05, -0.2, 0.4]),
                 (-0.2, 0.5, [1.5, -0.7]), (1.3, 0.05, [-3.0, 2.0, 0.1]), (0.0, 0.1, [40.0, 1.0])]  # last: the floor
        n = 0
        for optim in ("sgd", "adamw"):
            for s_update in ("lambda", "s"):
                for lr, c in ((0.05, 9.0), (0.01, 3.0)):
                    for s0, t, grads in cases:
                        with self.subTest(optim=optim, s_update=s_update, lr=lr, c=c, s0=s0, t=t, grads=grads):
                            s_c, lam_c = lgelu.hardness_step(s0, t, grads, lr, c=c, optim=optim, momentum=0.9,
                                                             s_update=s_update)
                            s_t, lam_t = self.torch_steps(s0, t, grads, lr, c, optim, 0.9, s_update)
                            # AdamW: the C optimiser forms v with β2 rounded to float (1 − 0.999f =
                            # 0.000999987) but corrects its bias with β2 in double, so its steps are up to
                            # 6.4e-6 relatively larger than torch's; SGD agrees to float rounding
                            tol = 1e-5 if optim == "adamw" else 1e-6
                            self.assertTrue(math.isclose(lam_t, lam_c, rel_tol=tol, abs_tol=1e-6),
                                            f"λ torch {lam_t!r} vs C {lam_c!r}")
                            if optim == "sgd" and s_update == "lambda" and grads[0] == 40.0:
                                self.assertAlmostEqual(lam_c, 1.001, places=6)
                            n += 1
        self.assertEqual(n, 48)

    def test_parameterisation(self):
        m = lt.LambdaGELU()
        self.assertAlmostEqual(m.lam, 1.0 + math.log(2.0), places=12)
        m = lt.LambdaGELU(t=0.1, lam=5.0)
        self.assertAlmostEqual(m.lam, 5.0, places=5)
        x = torch.linspace(-3, 3, 101, dtype=torch.float64)
        want = x * 0.5 * (1 + torch.erf(m.param() * x / math.sqrt(2)))
        self.assertTrue(torch.allclose(m(x), want))
        self.assertAlmostEqual(lt.lambda_target(0.005), 159.57691216057308, places=9)

    def test_anneal_schedule(self):
        model = nn.Sequential(nn.Linear(2, 2), lt.LambdaGELU(lam=3.0), nn.Linear(2, 2), lt.PReLU())
        a = lt.Anneal(model, 10, start=0.5, lambda_target=11.0)
        for step in range(10):
            a(step)
            if step == 4:
                self.assertAlmostEqual(model[1].lam, 3.0, places=5)
                self.assertTrue(model[1].s.requires_grad)
            if step == 5:  # the first annealed step: 1/(total − switch) of the way
                self.assertAlmostEqual(model[1].lam, 3.0 + (11.0 - 3.0) / 5, places=5)
                self.assertFalse(model[1].s.requires_grad)
        self.assertEqual(model[1].lam, 11.0)
        self.assertEqual(model[3].value(), 0.0)


if __name__ == "__main__":
    unittest.main()
