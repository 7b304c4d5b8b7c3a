#!/usr/bin/python3
"""lgelu verify against auto_LiRPA's alpha-CROWN (the bound engine of alpha-beta-CROWN), same machine, same instances.

auto_LiRPA is NOT installable here: it is not a Debian package and PyPI is not reachable from the project's
machines. This script therefore does not install or ship it; it needs an auto_LiRPA importable from PYTHONPATH
(CPU only). The run recorded in benchmarks/VERIFY.md ("Against auto_LiRPA (alpha-CROWN)") used a partial CPU copy
of auto_LiRPA 0.5.0 (commit bfb7997115c5e66327de81b43c42b23c8a0ffb1e), rebuilt from its public source outside this
repository (the modules CROWN / alpha-CROWN need for Linear, Conv, ReLU, Sigmoid, MaxPool, AveragePool, Pad and
Flatten graphs, conv_mode 'matrix'), with Debian's python3-torch 1.13 and /usr/bin/python3.

    /usr/bin/python3 tests/fixtures/sigmoid3p/gen.py bench DIR sigmoid_6x200
    /usr/bin/python3 tests/fixtures/sigmoid3p/gen.py more DIR sigmoid_6x200 0.03,0.05
    PYTHONPATH=/path/to/auto_lirpa /usr/bin/python3 benchmarks/lirpa_compare.py sigmoid DIR sigmoid_6x200 \
        --eps 0.015,0.03,0.05 --csv out.csv
    /usr/bin/python3 benchmarks/cifar_maxpool_make.py CNNDIR 0.0005 0.001 0.002 0.005 0.01      (and --overlap)
    PYTHONPATH=... /usr/bin/python3 benchmarks/lirpa_compare.py onnx CNNDIR/cifar_maxpool.onnx \
        CNNDIR/cifar_maxpool_*.vnnlib --check CNNDIR/cifar_maxpool_check --csv out.csv

For every instance, in alternating order (lgelu first on even instances, auto_LiRPA first on odd ones):
  - `lgelu verify NET --vnnlib P --timeout T -j 1 --json -o RES`, wall time of the process;
  - a fresh `python3 lirpa_compare.py worker ...` process (wall time includes Python, torch and auto_LiRPA
    start-up), killed at T seconds: a PGD attack in torch (restarts x steps, sign steps, the box of the property),
    then CROWN, then alpha-CROWN ('CROWN-Optimized', --iters steps, Adam lr --lr, early stop when every margin
    bound is > 0) on the margins y_label - y_j. Verdicts: violated (PGD point re-checked in float64: inside the
    box and y_j >= y_label), robust (every lower bound > 0, auto_LiRPA's float32 bound: not certified),
    unknown, or timeout (killed; the CROWN bound printed before the kill is kept).
--lirpa-only runs auto_LiRPA alone (lgelu columns empty), e.g. with a longer --timeout on --instances A,B.
Cross-checks printed per instance (column `check`): lgelu `robust` with a torch counterexample, or lgelu
`violated` where auto_LiRPA proved the margins, is reported as SOUNDNESS; every lgelu counterexample is re-evaluated
in float64 torch (inside the box, misclassified).
"""
import argparse
import csv
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def vnnlib_read(path):
    """The input box (lo, hi) and the disjunction's (j, t) pairs: the property is violated where some Y_j >= Y_t."""
    txt = open(path).read()
    n = max(int(i) for i in re.findall(r"X_(\d+)", txt)) + 1
    lo, hi = np.full(n, np.nan), np.full(n, np.nan)
    for m in re.finditer(r"\(assert \((<=|>=) X_(\d+) ([-+0-9.eE]+)\)\)", txt):
        (hi if m.group(1) == "<=" else lo)[int(m.group(2))] = float(m.group(3))
    pairs = [(int(a), int(b)) for a, b in re.findall(r"\(>= Y_(\d+) Y_(\d+)\)", txt)]
    if np.isnan(lo).any() or np.isnan(hi).any() or not pairs:
        sys.exit(f"{path}: not a box + (>= Y_j Y_t) disjunction")
    labels = {t for _, t in pairs}
    if len(labels) != 1:
        sys.exit(f"{path}: more than one target label")
    return lo, hi, labels.pop(), [j for j, _ in pairs]


# ---------------------------------------------------------------------------------------------------------------
# torch models

def torch_from_onnx(path):
    """A torch.nn.Sequential of a chain graph: Conv, Relu, Sigmoid, MaxPool, AveragePool, Pad, Flatten, Gemm."""
    import onnx
    import torch
    from onnx import numpy_helper
    m = onnx.load(path)
    init = {i.name: numpy_helper.to_array(i) for i in m.graph.initializer}
    mods = []
    for n in m.graph.node:
        a = {x.name: onnx.helper.get_attribute_value(x) for x in n.attribute}
        if n.op_type == "Conv":
            W = init[n.input[1]]
            b = init[n.input[2]] if len(n.input) > 2 else None
            p = a.get("pads", [0, 0, 0, 0])
            assert p[0] == p[2] and p[1] == p[3] and a.get("group", 1) == 1
            c = torch.nn.Conv2d(W.shape[1], W.shape[0], tuple(W.shape[2:]), stride=tuple(a.get("strides", [1, 1])),
                                padding=(p[0], p[1]), bias=b is not None)
            c.weight.data = torch.from_numpy(W.copy()).float()
            if b is not None:
                c.bias.data = torch.from_numpy(b.copy()).float()
            mods.append(c)
        elif n.op_type == "Gemm":
            W = init[n.input[1]]
            if not a.get("transB", 0):
                W = W.T
            lin = torch.nn.Linear(W.shape[1], W.shape[0])
            lin.weight.data = torch.from_numpy(np.array(W, dtype=np.float32)) * a.get("alpha", 1.0)
            lin.bias.data = torch.from_numpy(init[n.input[2]].copy()).float() * a.get("beta", 1.0)
            mods.append(lin)
        elif n.op_type == "Relu":
            mods.append(torch.nn.ReLU())
        elif n.op_type == "Sigmoid":
            mods.append(torch.nn.Sigmoid())
        elif n.op_type == "MaxPool":
            p = a.get("pads", [0, 0, 0, 0])
            mods.append(torch.nn.MaxPool2d(tuple(a["kernel_shape"]), tuple(a.get("strides", a["kernel_shape"])),
                                           padding=(p[0], p[1])))
        elif n.op_type == "AveragePool":
            p = a.get("pads", [0, 0, 0, 0])
            mods.append(torch.nn.AvgPool2d(tuple(a["kernel_shape"]), tuple(a.get("strides", a["kernel_shape"])),
                                           padding=(p[0], p[1]), count_include_pad=bool(a.get("count_include_pad", 0))))
        elif n.op_type == "Flatten":
            mods.append(torch.nn.Flatten())
        else:
            sys.exit(f"{path}: node {n.op_type} not handled by this script")
    d = m.graph.input[0].type.tensor_type.shape.dim
    shape = [max(1, x.dim_value) for x in d]
    return torch.nn.Sequential(*mods), shape


def torch_sigmoid_mlp(pt):
    """gen.py's mlp() from its state_dict, with Norm ((x - mean) / std, scalars) folded into the first Linear so
    the graph is Gemm/Sigmoid only; input [1, 784] raw pixels."""
    import torch
    sd = torch.load(pt)
    mean, std = float(sd["0.mean"].reshape(-1)[0]), float(sd["0.std"].reshape(-1)[0])
    idx = sorted({int(k.split(".")[0]) for k in sd if k.endswith(".weight")})
    mods = []
    for i, k in enumerate(idx):
        W, b = sd[f"{k}.weight"].double(), sd[f"{k}.bias"].double()
        if i == 0:
            b = b - (mean / std) * W.sum(1)
            W = W / std
        lin = torch.nn.Linear(W.shape[1], W.shape[0])
        lin.weight.data, lin.bias.data = W.float(), b.float()
        mods.append(lin)
        if i < len(idx) - 1:
            mods.append(torch.nn.Sigmoid())
    return torch.nn.Sequential(*mods), [1, 784]


def torch_sigmoid_reference(pt):
    """gen.py's mlp() itself in float64 (Norm, Flatten, Linear, Sigmoid), to re-check counterexamples."""
    import torch
    sd = torch.load(pt)
    idx = sorted({int(k.split(".")[0]) for k in sd if k.endswith(".weight")})
    mean, std = sd["0.mean"].double().reshape(-1)[0], sd["0.std"].double().reshape(-1)[0]

    def f(x):
        h = (x.double().reshape(x.shape[0], -1) - mean) / std
        for i, k in enumerate(idx):
            h = h @ sd[f"{k}.weight"].double().t() + sd[f"{k}.bias"].double()
            if i < len(idx) - 1:
                h = torch.sigmoid(h)
        return h
    return f


def build(kind, net):
    """(float32 model for auto_LiRPA, float64 reference function, input shape)."""
    import copy
    import torch
    if kind == "sigmoid":
        model, shape = torch_sigmoid_mlp(net)
        return model, torch_sigmoid_reference(net), shape
    model, shape = torch_from_onnx(net)
    ref = copy.deepcopy(model).double().eval()
    return model, (lambda x: ref(x.double().reshape(x.shape[0], *shape[1:]))), shape


# ---------------------------------------------------------------------------------------------------------------
# the auto_LiRPA worker (a fresh process per instance)

def worker(a):
    t0 = time.time()
    import torch
    torch.set_num_threads(1)
    from auto_LiRPA import BoundedModule, BoundedTensor, PerturbationLpNorm
    from auto_LiRPA.utils import stop_criterion_all
    t_import = time.time() - t0
    out = {"import_s": round(t_import, 3)}

    def emit(**kw):
        out.update(kw)
        out["worker_s"] = round(time.time() - t0, 3)
        print(json.dumps(out), flush=True)

    model, ref, shape = build(a.kind, a.net)
    model.eval()
    lo, hi, label, others = vnnlib_read(a.vnnlib)
    xl = torch.from_numpy(lo).float().reshape(shape)
    xu = torch.from_numpy(hi).float().reshape(shape)
    lo64, hi64 = torch.from_numpy(lo).reshape(shape), torch.from_numpy(hi).reshape(shape)

    # PGD: all restarts in one batch, restart 0 at the centre
    g = torch.Generator().manual_seed(a.seed)
    z = xl + (xu - xl) * torch.rand((a.restarts, *shape[1:]), generator=g)
    z[0] = (xl[0] + xu[0]) / 2
    best, arg = float("inf"), None
    for t in range(a.steps):
        z.requires_grad_(True)
        y = model(z)
        m = (y[:, [label]] - y[:, others]).min(1).values
        k = int(m.argmin())
        if m[k].item() < best:
            best, arg = m[k].item(), z[k:k + 1].detach().clone()
        gr, = torch.autograd.grad(m.sum(), z)
        step = (xu - xl) * (0.25 if t < a.steps // 2 else 0.05)
        z = torch.min(torch.max(z.detach() - step * gr.sign(), xl), xu)
    out["pgd_margin"] = best
    if arg is not None:
        x64 = torch.min(torch.max(arg.double(), lo64), hi64)
        with torch.no_grad():
            y64 = ref(x64)[0]
        m64 = float((y64[label] - y64[others]).min())
        if m64 <= 0:
            emit(verdict="violated", method="pgd", pgd_margin64=m64)
            return

    C = torch.zeros(1, len(others), int(np.prod(model(xl).shape[1:])))
    for i, j in enumerate(others):
        C[0, i, label], C[0, i, j] = 1.0, -1.0
    t1 = time.time()
    bm = BoundedModule(model, torch.zeros(shape), bound_opts={
        "conv_mode": "matrix",
        "optimize_bound_args": {"iteration": a.iters, "lr_alpha": a.lr,
                                "stop_criterion_func": stop_criterion_all(0.0)}})
    bx = BoundedTensor((xl + xu) / 2, PerturbationLpNorm(norm=float("inf"), x_L=xl, x_U=xu))
    lb, _ = bm.compute_bounds(x=(bx,), C=C, method="CROWN", bound_upper=False)
    crown = float(lb.min())
    out.update(crown_lb=crown, crown_s=round(time.time() - t1, 3))
    if crown > 0:
        emit(verdict="robust", method="crown")
        return
    emit(verdict="unknown", method="crown")  # kept if the alpha-CROWN step is killed
    t2 = time.time()
    lb, _ = bm.compute_bounds(x=(bx,), C=C, method="CROWN-Optimized", bound_upper=False)
    alpha = float(lb.min())
    out.update(alpha_lb=alpha, alpha_s=round(time.time() - t2, 3))
    emit(verdict="robust" if alpha > 0 else "unknown", method="alpha-crown")


# ---------------------------------------------------------------------------------------------------------------
# the driver

def run_lgelu(a, onnx_path, vnnlib, res):
    t = time.time()
    p = subprocess.run([a.lgelu, "verify", onnx_path, "--vnnlib", vnnlib, "--timeout", str(a.timeout), "-j", "1",
                        "--json", "-o", res], capture_output=True, text=True)
    wall = time.time() - t
    if p.returncode != 0:
        sys.exit(f"{vnnlib}: lgelu failed: {p.stderr.strip()}")
    return json.loads(p.stdout.strip().splitlines()[-1]), wall


def run_lirpa(a, kind, net, vnnlib):
    cmd = [sys.executable, os.path.abspath(__file__), "worker", kind, net, vnnlib, "--iters", str(a.iters),
           "--lr", str(a.lr), "--restarts", str(a.restarts), "--steps", str(a.steps)]
    t = time.time()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=a.timeout)
        stdout, killed = p.stdout, False
        if p.returncode != 0:
            return {"verdict": "error", "method": p.stderr.strip().splitlines()[-1][:120]}, time.time() - t
    except subprocess.TimeoutExpired as e:
        stdout, killed = (e.stdout or b"").decode() if isinstance(e.stdout, bytes) else (e.stdout or ""), True
    wall = time.time() - t
    lines = [ln for ln in stdout.splitlines() if ln.startswith("{")]
    r = json.loads(lines[-1]) if lines else {"method": "startup"}
    if killed:
        r["verdict"] = "timeout"
    return r, wall


def lgelu_cex_check(ref, res, lo, hi, label, others, shape):
    import torch
    txt = open(res).read()
    xs = {int(i): float(v) for i, v in re.findall(r"\(X_(\d+) ([-+0-9.eE]+)\)", txt)}
    if len(xs) != len(lo):
        return "BAD RESULT FILE"
    x = np.array([xs[i] for i in range(len(lo))])
    inside = bool(np.all(x >= lo) and np.all(x <= hi))
    with torch.no_grad():
        y = ref(torch.from_numpy(x).reshape(shape))[0].numpy()
    fools = bool(max(y[j] for j in others) >= y[label])
    return "cex ok" if inside and fools else f"BAD CEX (inside {inside}, misclassified {fools})"


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "worker":
        ap = argparse.ArgumentParser()
        ap.add_argument("mode")
        ap.add_argument("kind")
        ap.add_argument("net")
        ap.add_argument("vnnlib")
        ap.add_argument("--iters", type=int, default=100)
        ap.add_argument("--lr", type=float, default=0.1)
        ap.add_argument("--restarts", type=int, default=20)
        ap.add_argument("--steps", type=int, default=50)
        ap.add_argument("--seed", type=int, default=0)
        worker(ap.parse_args())
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("kind", choices=["sigmoid", "onnx"])
    ap.add_argument("args", nargs="+", help="sigmoid: DIR NAME; onnx: NET.onnx P.vnnlib ...")
    ap.add_argument("--eps", default="", help="sigmoid: the radii to run")
    ap.add_argument("--check", default="", help="onnx: PREFIX of PREFIX.npy / PREFIX_y.txt (inputs, outputs)")
    ap.add_argument("--timeout", type=float, default=30)
    ap.add_argument("--iters", type=int, default=100)
    ap.add_argument("--lr", type=float, default=0.1)
    ap.add_argument("--restarts", type=int, default=20)
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--lgelu", default=os.path.join(ROOT, "build/lgelu"))
    ap.add_argument("--set", default="", help="set name for the CSV")
    ap.add_argument("--instances", default="", help="only these vnnlib file names (comma-separated)")
    ap.add_argument("--lirpa-only", action="store_true", help="run auto_LiRPA only (lgelu columns left empty)")
    ap.add_argument("--csv", default="")
    a = ap.parse_args()
    import torch
    torch.set_num_threads(1)

    if a.kind == "sigmoid":
        d, name = a.args
        net = os.path.join(d, name + ".pt")
        onnx_path = os.path.join(d, name + ".onnx")
        rows = list(csv.DictReader(open(os.path.join(d, name + "_pgd.csv"))))
        if a.eps:
            keep = {float(e) for e in a.eps.split(",")}
            rows = [r for r in rows if float(r["eps"]) in keep]
        insts = [(os.path.join(d, r["vnnlib"]), r["eps"]) for r in rows]
        x = np.load(os.path.join(d, name + "_x.npy"))
        yref = np.load(os.path.join(d, name + "_y.npy"))
    else:
        onnx_path, name = a.args[0], os.path.basename(a.args[0])[:-5]
        net = onnx_path
        insts = [(v, re.findall(r"_([0-9.]+)\.vnnlib$", v)[0] if re.findall(r"_([0-9.]+)\.vnnlib$", v) else "")
                 for v in a.args[1:]]
        x = yref = None
        if a.check:
            x = np.load(a.check + ".npy")
            yref = np.loadtxt(a.check + "_y.txt")
    if a.instances:
        keep = set(a.instances.split(","))
        insts = [(v, e) for v, e in insts if os.path.basename(v) in keep]
    model, ref, shape = build(a.kind, net)
    if x is not None:  # the torch copies against the stored float64 outputs
        with torch.no_grad():
            got32 = model(torch.from_numpy(x).float().reshape(-1, *shape[1:])).double().numpy()
            got64 = ref(torch.from_numpy(x).reshape(-1, *shape[1:])).numpy()
        e32 = float(np.max(np.abs(got32 - yref) / (1 + np.abs(yref))))
        e64 = float(np.max(np.abs(got64 - yref) / (1 + np.abs(yref))))
        print(f"{name}: torch float32 copy matches the stored outputs to {e32:.1e}, float64 to {e64:.1e}")
        if e32 > 1e-4 or e64 > 1e-9:
            sys.exit(f"{name}: the torch model does not match the network")

    tmp = tempfile.mkdtemp(prefix="lirpa_cmp_")
    out = []
    setname = a.set or name
    for k, (v, eps) in enumerate(insts):
        lo, hi, label, others = vnnlib_read(v)
        res = os.path.join(tmp, "res")
        if a.lirpa_only:
            jl, wl = {"verdict": ""}, float("nan")
            jr, wr = run_lirpa(a, a.kind, net, v)
        elif k % 2 == 0:
            jl, wl = run_lgelu(a, onnx_path, v, res)
            jr, wr = run_lirpa(a, a.kind, net, v)
        else:
            jr, wr = run_lirpa(a, a.kind, net, v)
            jl, wl = run_lgelu(a, onnx_path, v, res)
        check = []
        if jl["verdict"] == "violated":
            check.append(lgelu_cex_check(ref, res, lo, hi, label, others, shape))
            if jr["verdict"] == "robust":
                check.append("SOUNDNESS: lgelu violated, auto_LiRPA robust")
        if jl["verdict"] == "robust" and jr["verdict"] == "violated":
            check.append("SOUNDNESS: lgelu robust, torch counterexample")
        if jl["verdict"] == "robust" and jr.get("crown_lb") is not None and jr.get("pgd_margin", 1) < 0:
            check.append("SOUNDNESS: lgelu robust, negative PGD margin")
        row = dict(set=setname, net=name, instance=os.path.basename(v), eps=eps, label=label,
                   lgelu=jl["verdict"], lgelu_method=jl.get("method", ""), lgelu_s=round(wl, 3),
                   lgelu_nodes=jl.get("bab_nodes", ""),
                   lirpa=jr["verdict"], lirpa_method=jr.get("method", ""), lirpa_s=round(wr, 3),
                   lirpa_import_s=jr.get("import_s", ""), crown_lb=jr.get("crown_lb", ""),
                   alpha_lb=jr.get("alpha_lb", ""), pgd_margin=jr.get("pgd_margin", ""),
                   check="; ".join(check))
        out.append(row)
        print(",".join(str(row[c]) for c in row), flush=True)
        if "SOUNDNESS" in row["check"] or "BAD" in row["check"]:
            print(f"!!!!! {row['check']} on {v} !!!!!", file=sys.stderr, flush=True)
    if a.csv:
        with open(a.csv, "a") as f:
            w = csv.DictWriter(f, fieldnames=list(out[0].keys()))
            if f.tell() == 0:
                w.writeheader()
            w.writerows(out)
    summary(out)


def summary(rows):
    by = {}
    for r in rows:
        by.setdefault((r["set"], r["eps"]), []).append(r)
    for (s, e), k in by.items():
        def cnt(col, v):
            return sum(r[col] == v for r in k)
        print(f"{s} eps {e}: {len(k)} instances")
        for col in ("lgelu", "lirpa"):
            ts = [r[col + "_s"] for r in k]
            if any(t != t for t in ts):
                continue
            print(f"  {col:6s} robust {cnt(col, 'robust')}, violated {cnt(col, 'violated')}, "
                  f"unknown {len(k) - cnt(col, 'robust') - cnt(col, 'violated')}; "
                  f"median {statistics.median(ts):.2f} s, max {max(ts):.2f} s")
        only = [r["instance"] for r in k if r["lirpa"] in ("robust", "violated") and
                r["lgelu"] not in ("robust", "violated")]
        print(f"  decided by auto_LiRPA only: {only}")


if __name__ == "__main__":
    main()
