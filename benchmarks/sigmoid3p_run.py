"""Run `lgelu verify` on the third-party-style sigmoid benchmark nets and check every verdict against torch.

    /usr/bin/python3 tests/fixtures/sigmoid3p/gen.py bench out/sigmoid3p          # the nets (once)
    /usr/bin/python3 benchmarks/sigmoid3p_run.py out/sigmoid3p NAME [--eps E,...] [--timeout T] [--scripts K]

For every instance of NAME_pgd.csv (written by gen.py: VNN-COMP 2021 eran-style properties and the best margin
of a 50-restart torch PGD attack) it runs `lgelu verify NET --vnnlib P --timeout T -j 1 --json -o RES` and
checks: lgelu's forward pass matches torch's on the stored images (1e-5); no `robust` where PGD found a counterexample; every `violated` counterexample (from the VNN-COMP result
file) lies in the box and misclassifies when evaluated by torch in float64 with the net's state_dict. The first
K instances of each radius also go through vnncomp_scripts/prepare_instance.sh and run_instance.sh, whose
result must agree with `verify`. Prints one CSV row per instance and a summary per radius (decided counts,
median seconds). Needs PyTorch for the system Python; never used by the tests.
"""
import argparse
import csv
import importlib.util
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

import numpy as np
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load_gen():
    spec = importlib.util.spec_from_file_location("gen", os.path.join(ROOT, "tests/fixtures/sigmoid3p/gen.py"))
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def torch_net(gen, d, name):
    if "convsmall" in name:
        net = gen.convsmall("sigmoid")
    else:
        depth, width = (int(v) for v in name.split("_")[1].split("x"))
        net = gen.mlp(name.split("_")[0], depth, width)
    net.load_state_dict(torch.load(os.path.join(d, name + ".pt")))
    return net.double().eval()


def vnnlib_box(path):
    lo, hi = np.zeros(784), np.zeros(784)
    for m in re.finditer(r"\(assert \((<=|>=) X_(\d+) ([-0-9.e]+)\)\)", open(path).read()):
        (hi if m.group(1) == "<=" else lo)[int(m.group(2))] = float(m.group(3))
    return lo, hi


def result_x(path):
    txt = open(path).read()
    xs = {int(i): float(v) for i, v in re.findall(r"\(X_(\d+) ([-0-9.e+]+)\)", txt)}
    return txt.split("\n", 1)[0].strip(), (np.array([xs[i] for i in range(784)]) if len(xs) == 784 else None)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("name")
    ap.add_argument("--eps", default="")
    ap.add_argument("--timeout", type=float, default=10)
    ap.add_argument("--scripts", type=int, default=2)
    ap.add_argument("--lgelu", default=os.path.join(ROOT, "build/lgelu"))
    ap.add_argument("--csv", default="")
    a = ap.parse_args()
    gen = load_gen()
    net = torch_net(gen, a.dir, a.name)
    # the import first: lgelu's double forward pass against torch's float64 one on the stored images
    p = subprocess.run([a.lgelu, "eval", os.path.join(a.dir, a.name + ".onnx"), "--input",
                        os.path.join(a.dir, a.name + "_x.npy")], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"{a.name}: lgelu eval failed: {p.stderr.strip()}")
    ref = np.load(os.path.join(a.dir, a.name + "_y.npy"))
    got = np.array([[float(v) for v in line.split()] for line in p.stdout.strip().splitlines()])
    err = float(np.max(np.abs(got - ref) / (1 + np.abs(ref))))
    print(f"{a.name}: import matches torch to {err:.1e} (relative, {ref.shape[0]} images)")
    if err > 1e-5:
        sys.exit(f"{a.name}: lgelu's outputs differ from torch's by {err}")
    rows = list(csv.DictReader(open(os.path.join(a.dir, a.name + "_pgd.csv"))))
    if a.eps:
        keep = {float(e) for e in a.eps.split(",")}
        rows = [r for r in rows if float(r["eps"]) in keep]
    onnx = os.path.join(a.dir, a.name + ".onnx")
    out = []
    tmp = tempfile.mkdtemp(prefix="sigmoid3p_")
    per_eps = {}
    for r in rows:
        v = os.path.join(a.dir, r["vnnlib"])
        res = os.path.join(tmp, "res")
        p = subprocess.run(["nice", "-n", "10", a.lgelu, "verify", onnx, "--vnnlib", v, "--timeout", str(a.timeout),
                            "-j", "1", "--json", "-o", res], capture_output=True, text=True)
        if p.returncode != 0:
            print(f"{r['vnnlib']}: lgelu failed: {p.stderr.strip()}", file=sys.stderr)
            sys.exit(1)
        j = json.loads(p.stdout.strip().splitlines()[-1])
        pgd = float(r["pgd_margin"])
        label = int(r["label"])
        check = ""
        if j["verdict"] == "robust" and pgd > 0:
            check = "UNSOUND: robust but torch PGD found a counterexample"
        if j["verdict"] == "violated":
            first, x = result_x(res)
            lo, hi = vnnlib_box(v)
            if first != "sat" or x is None:
                check = f"BAD RESULT FILE ({first})"
            else:
                with torch.no_grad():
                    y = net(torch.from_numpy(x).reshape(1, 1, 28, 28))[0].numpy()
                inside = bool(np.all(x >= lo) and np.all(x <= hi))
                fools = bool(max(y[k] for k in range(10) if k != label) >= y[label])
                check = "cex ok" if inside and fools else f"BAD CEX (inside {inside}, misclassified {fools})"
        k = per_eps.setdefault(r["eps"], [])
        if len(k) < a.scripts:  # the VNN-COMP scripts on the same instance
            sres = os.path.join(tmp, "sres")
            env = dict(os.environ, LGELU=a.lgelu)
            ok = subprocess.run(["bash", os.path.join(ROOT, "vnncomp_scripts/prepare_instance.sh"), "v1", "sigmoid3p",
                                 onnx, v], capture_output=True, env=env).returncode == 0
            subprocess.run(["nice", "-n", "10", "bash", os.path.join(ROOT, "vnncomp_scripts/run_instance.sh"), "v1",
                            "sigmoid3p", onnx, v, sres, str(a.timeout + 1)], capture_output=True, env=env)
            got = open(sres).read().split("\n", 1)[0].strip()
            want = {"robust": "unsat", "violated": "sat"}.get(j["verdict"])
            agree = ok and (got == want or (want is None and got in ("unknown", "timeout")) or
                            (want is not None and got in ("unknown", "timeout")))
            check += f"; scripts: prepare {'ok' if ok else 'FAILED'}, run {got}{'' if agree else ' DISAGREES'}"
        row = dict(net=a.name, vnnlib=r["vnnlib"], eps=r["eps"], verdict=j["verdict"], method=j["method"],
                   seconds=round(j["seconds"], 3), bab_nodes=j["bab_nodes"], pgd_margin=round(pgd, 6), check=check)
        k.append(row)
        out.append(row)
        print(",".join(str(row[c]) for c in row), flush=True)
    if a.csv:
        with open(a.csv, "a") as f:
            w = csv.DictWriter(f, fieldnames=list(out[0].keys()))
            if f.tell() == 0:
                w.writeheader()
            w.writerows(out)
    print(f"\n{a.name}: timeout {a.timeout} s, -j 1")
    for e, k in per_eps.items():
        n = len(k)
        rob = sum(r["verdict"] == "robust" for r in k)
        vio = sum(r["verdict"] == "violated" for r in k)
        pgd = sum(r["pgd_margin"] > 0 for r in k)
        bad = sum("UNSOUND" in r["check"] or "BAD" in r["check"] or "DISAGREES" in r["check"] for r in k)
        med = statistics.median(r["seconds"] for r in k)
        dec = [r["seconds"] for r in k if r["verdict"] != "unknown"]
        print(f"  eps {e}: {n} instances, robust {rob}, violated {vio}, unknown {n - rob - vio}; torch PGD found "
              f"{pgd}; median {med:.2f} s (decided: {statistics.median(dec) if dec else float('nan'):.2f} s); "
              f"check failures {bad}")


if __name__ == "__main__":
    main()
