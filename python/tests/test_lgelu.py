"""lgelu's Python bindings against the `lgelu` executable on the ACAS Xu and
mnist_fc fixtures: same verdicts, counterexamples that pass `lgelu cex`,
outputs equal to `lgelu eval`, the deviation bound of `lgelu check`, and
errors raised with lgelu's message."""
import os
import tempfile
import threading
import time
import unittest

import numpy as np

import lgelu
from common import cli, cli_json, fixture

ACAS = [("1_1", 1), ("1_1", 2), ("1_1", 4), ("1_7", 1), ("1_7", 2), ("1_7", 3), ("1_7", 4)]
MNIST = ["prop_1_0.05", "prop_2_0.05", "prop_3_0.05", "prop_7_0.03"]
MNIST_NET = fixture("vnncomp", "mnist-net_256x2.onnx")


def acas_net(n):
    return fixture("acasxu", f"ACASXU_run2a_{n}_batch_2000.onnx")


class TestVerify(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def check_cex(self, net_path, prop, r):
        """A violated result's counterexample passes `lgelu cex`'s exact re-check."""
        self.assertIsInstance(r.counterexample, np.ndarray)
        path = os.path.join(self.tmp.name, "cex.txt")
        r.write_counterexample(path)
        out = cli("cex", net_path, "--vnnlib", prop, path).stdout
        self.assertTrue(out.startswith("violated"), out)

    def compare(self, net_path, prop):
        net = lgelu.load(net_path)
        r = lgelu.verify_vnnlib(net, prop, timeout=60)
        c = cli_json("verify", net_path, "--vnnlib", prop, "--timeout", 60)
        self.assertEqual(r.verdict, c["verdict"], f"{net_path} {prop}")
        self.assertNotEqual(r.verdict, "unknown", f"{net_path} {prop}: {r.reason}")
        self.assertEqual(r.unstable.tolist(), c["unstable_per_layer"], f"{net_path} {prop}")
        self.assertEqual(r.unstable_total, c["unstable"])
        self.assertGreater(r.seconds, 0.0)
        if r.violated:
            self.assertEqual(r.counterexample.shape, (net.n_in,))
            np.testing.assert_array_equal(net.eval(r.counterexample), r.outputs)
            self.check_cex(net_path, prop, r)
        return r

    def test_acasxu_verdicts_equal_cli(self):
        for n, p in ACAS:
            with self.subTest(net=n, prop=p):
                self.compare(acas_net(n), fixture("acasxu", f"prop_{p}.vnnlib"))

    def test_mnist_fc_verdicts_equal_cli(self):
        want = {"prop_1_0.05": "violated", "prop_2_0.05": "violated", "prop_3_0.05": "robust",
                "prop_7_0.03": "robust"}
        for p in MNIST:
            with self.subTest(prop=p):
                r = self.compare(MNIST_NET, fixture("vnncomp", p + ".vnnlib"))
                self.assertEqual(r.verdict, want[p])

    def test_robustness_in_memory_equals_cli(self):
        """verify(net, x, eps) is `lgelu verify --input x.npy --eps E` (label: the prediction)."""
        net = lgelu.load(MNIST_NET)
        rng = np.random.default_rng(7)
        x = rng.uniform(0.0, 1.0, net.n_in)
        xp = os.path.join(self.tmp.name, "x.npy")
        np.save(xp, x.reshape(1, -1))
        for eps in (0.0005, 0.02):
            with self.subTest(eps=eps):
                r = lgelu.verify(net, x, eps, timeout=60)
                c = cli_json("verify", MNIST_NET, "--input", xp, "--eps", eps, "--timeout", 60)
                self.assertEqual(r.verdict, c["verdict"])
                self.assertEqual(r.label, int(np.argmax(net.eval(x))))
                if r.violated:  # inside the clipped box, and the label lost
                    self.assertTrue(np.all(r.counterexample >= np.maximum(x - eps, 0) - 1e-15))
                    self.assertTrue(np.all(r.counterexample <= np.minimum(x + eps, 1) + 1e-15))
                    y = net.eval(r.counterexample)
                    self.assertGreaterEqual(np.max(np.delete(y, r.label)), y[r.label])

    def test_explicit_label_and_solver_none(self):
        net = lgelu.load(MNIST_NET)
        x = np.full(net.n_in, 0.5)
        top = int(np.argmax(net.eval(x)))
        other = (top + 1) % net.n_out
        self.assertEqual(lgelu.verify(net, x, 0.0, label=other, solver="none").verdict, "violated")
        self.assertEqual(lgelu.verify(net, x, 0.0, label=top, solver="none").verdict, "robust")


class TestNet(unittest.TestCase):
    def test_eval_equals_cli(self):
        net = lgelu.load(acas_net("1_7"))
        X = np.random.default_rng(3).uniform(-0.5, 0.5, (4, net.n_in))
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "X.npy")
            np.save(p, X)
            lines = cli("eval", acas_net("1_7"), "--input", p).stdout.split("\n")
        want = np.array([[float(v) for v in ln.split()] for ln in lines if ln.strip()])
        np.testing.assert_array_equal(net.eval(X), want)
        np.testing.assert_array_equal(net.eval(X[1]), want[1])

    def test_save_roundtrip(self):
        net = lgelu.load(MNIST_NET)
        x = np.linspace(0, 1, net.n_in)
        with tempfile.TemporaryDirectory() as d:
            for name in ("n.lgnet", "n.onnx"):
                net.save(os.path.join(d, name))
                np.testing.assert_array_equal(lgelu.load(os.path.join(d, name)).eval(x), net.eval(x))

    def test_deviation_equals_cli_check(self):
        ref_path = fixture("torch_smooth", "gelu.onnx")
        ref = lgelu.load(ref_path)
        relu = ref.relu()
        X = np.load(fixture("torch_smooth", "X.npy")).astype(np.float64)[:5]
        X = np.clip(X.reshape(X.shape[0], -1), 0, 1)
        with tempfile.TemporaryDirectory() as d:
            rp, xp = os.path.join(d, "relu.lgnet"), os.path.join(d, "X.npy")
            relu.save(rp)
            np.save(xp, X)
            c = cli_json("check", rp, "--ref", ref_path, "--inputs", xp, "--eps", 0.01, "--max-deviation", 1e9,
                         "--tightest")
        d = lgelu.deviation(relu, ref, X, 0.01)
        self.assertEqual(d.shape, (5,))
        self.assertEqual(float(np.max(d)), c["bound_max"])
        self.assertEqual(lgelu.deviation(relu, ref, X[0], 0.01), d[0])
        obs = np.max(np.abs(relu.eval(X) - ref.eval(X)), axis=1)
        self.assertTrue(np.all(obs <= d))


class TestErrors(unittest.TestCase):
    def test_bad_path(self):
        with self.assertRaises(lgelu.LgeluError) as cm:
            lgelu.load("/nonexistent/net.onnx")
        self.assertEqual(cm.exception.status, "io")
        self.assertIn("/nonexistent/net.onnx", str(cm.exception))

    def test_not_a_network(self):
        with self.assertRaises(lgelu.LgeluError) as cm:
            lgelu.load(fixture("acasxu", "prop_1.vnnlib"))
        self.assertIn("prop_1.vnnlib", cm.exception.message)

    def test_bad_shape(self):
        net = lgelu.load(acas_net("1_1"))
        for bad in (np.zeros(4), np.zeros((2, 6)), np.zeros((1, 1, 5))):
            with self.subTest(shape=bad.shape):
                with self.assertRaises(lgelu.LgeluError) as cm:
                    net.eval(bad)
                self.assertIn("expected shape (5,)", str(cm.exception))
        with self.assertRaises(lgelu.LgeluError) as cm:
            lgelu.verify(net, np.zeros(7), 0.1)
        self.assertIn("(5,)", str(cm.exception))

    def test_bad_vnnlib_and_options(self):
        net = lgelu.load(acas_net("1_1"))
        with self.assertRaises(lgelu.LgeluError) as cm:
            lgelu.verify_vnnlib(net, "/nonexistent/p.vnnlib")
        self.assertIn("/nonexistent/p.vnnlib", str(cm.exception))
        with self.assertRaises(lgelu.LgeluError) as cm:  # mnist property on a 5-input net: a value error
            lgelu.verify_vnnlib(net, fixture("vnncomp", "prop_1_0.05.vnnlib"))
        self.assertEqual(cm.exception.status, "arg")
        with self.assertRaises(lgelu.LgeluError) as cm:
            lgelu.verify(net, np.zeros(5), 0.1, solver="cplex")
        self.assertIn("cplex", str(cm.exception))
        with self.assertRaises(lgelu.LgeluError) as cm:
            lgelu.verify(net, np.zeros(5), 0.1, label=9)
        self.assertIn("label", str(cm.exception))

    def test_smooth_net_refused_by_verify(self):
        net = lgelu.load(fixture("torch_smooth", "gelu.onnx"))
        with self.assertRaises(lgelu.LgeluError) as cm:
            lgelu.verify(net, np.full(net.n_in, 0.5), 0.01, solver="z3")
        self.assertTrue(cm.exception.message)


class TestThreads(unittest.TestCase):
    def test_concurrent_calls_share_a_net(self):
        """One Net, several threads: each gets the CLI's verdict (the GIL is released in C)."""
        net = lgelu.load(MNIST_NET)
        props = [fixture("vnncomp", p + ".vnnlib") for p in MNIST]
        out = {}

        def work(p):
            out[p] = lgelu.verify_vnnlib(net, p, threads=1).verdict

        ts = [threading.Thread(target=work, args=(p,)) for p in props]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        self.assertEqual([out[p] for p in props], ["violated", "violated", "robust", "robust"])

    def test_ctrl_c_interrupts_the_wait(self):
        """SIGINT during a long verification raises KeyboardInterrupt at once and cancels
        the C call (branch and bound stops at its next check)."""
        import signal
        # Python's own Ctrl-C handler, whatever this process inherited: a shell that starts a job in
        # the background without job control leaves SIGINT ignored, and Python then installs none
        old = signal.signal(signal.SIGINT, signal.default_int_handler)
        self.addCleanup(signal.signal, signal.SIGINT, old)
        net = lgelu.load(acas_net("1_1"))
        timer = threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT))
        t0 = time.monotonic()
        timer.start()
        with self.assertRaises(KeyboardInterrupt):
            lgelu.verify_vnnlib(net, fixture("acasxu", "prop_3.vnnlib"), timeout=30, attack=False, threads=1,
                                solver="none")
        self.assertLess(time.monotonic() - t0, 2.0)
        timer.join()
        # the cancelled call ends at its next deadline check, long before its 30 s
        while any(t.name == "lgelu-call" for t in threading.enumerate()):
            self.assertLess(time.monotonic() - t0, 5.0, "the cancelled call is still running")
            time.sleep(0.05)

    def test_timeout_bounds_a_call(self):
        net = lgelu.load(acas_net("1_1"))
        t0 = time.monotonic()
        r = lgelu.verify_vnnlib(net, fixture("acasxu", "prop_3.vnnlib"), timeout=0.2, attack=False)
        self.assertLess(time.monotonic() - t0, 5.0)
        if r.verdict == "unknown":
            self.assertTrue(r.timed_out, r.reason)


if __name__ == "__main__":
    unittest.main()
