#!/usr/bin/env python3
"""pilot.py — the pilot that chooses a study's radii and sizes its run.

Runs a cut-down copy of a study grid (its architectures, [train] and regimes,
the first seed, a few test images, a ladder of radii) with `lgelu study`, then
reads the rows and prints, per architecture and radius:

  - how many `auto` instances bounds and attack decided, and how many went on
    to branch and bound or a back-end (stage not `bounds`/`attack`): the share
    that "needs branch and bound";
  - the mean unstable ReLUs, and the mean seconds per instance in every mode
    that was run (timeouts counted at their full time).

It proposes, per architecture, the smallest radius of the ladder where at
least --target (default 30 %) of the instances need branch and bound, and,
with --size FULL.ini, predicts the wall time of the full grid on --jobs
workers from those mean seconds: Σ over its (architecture, mode) of
regimes × seeds × inputs × radii × mean seconds, divided by the jobs (a
radius of FULL.ini that the ladder lacks takes the nearest measured one).

    python3 benchmarks/pilot.py benchmarks/full.ini --out out/pilot \\
        --eps "0.005 0.01 0.02 0.03 0.05" --inputs 10 --modes auto \\
        --cache out/full/nets --size benchmarks/full.ini

The networks are trained into --cache (default OUT/nets) under the same hash
as in the full run, so pointing --cache at the full run's cache (OUT_FULL/nets)
trains nothing twice. Only the Python standard library is used.
"""
import argparse
import configparser
import json
import math
import os
import subprocess
import sys
from collections import defaultdict


def read_grid(path):
    cp = configparser.ConfigParser(inline_comment_prefixes=(";",), comment_prefixes=(";", "#"),
                                   interpolation=None, strict=True)
    cp.optionxform = str
    with open(path) as f:
        cp.read_file(f)
    return cp


def regime_count(cp):
    """Regimes after the anneal_start × lambda_target expansion (study/grid.h)."""
    n = 0
    for s in cp.sections():
        if s.startswith("regime "):
            sec = cp[s]
            n += len(sec.get("anneal_start", "x").split()) * len(sec.get("lambda_target", "x").split())
    return n


def arch_modes(cp, arch):
    sec = "arch " + arch
    if cp.has_section(sec) and "modes" in cp[sec]:
        return cp[sec]["modes"].split()
    return cp["study"].get("modes", "auto z3 glpk smooth").split()


def write_pilot(cp, path, a):
    out = configparser.ConfigParser(interpolation=None)
    out.optionxform = str
    st = cp["study"]
    archs = a.archs.split() if a.archs else st["archs"].split()
    out["study"] = {
        "archs": " ".join(archs),
        "seeds": st.get("seeds", "1").split()[0],
        "eps": a.eps,
        "inputs": str(a.inputs),
        "input_offset": st.get("input_offset", "0"),
        "modes": a.modes,
        "timeout": str(a.timeout) if a.timeout else st.get("timeout", "30"),
    }
    if "data" in st:
        out["study"]["data"] = st["data"]
    if cp.has_section("train"):
        out["train"] = dict(cp["train"])
    keep = set(a.regimes.split(",")) if a.regimes else None
    for s in cp.sections():
        if s.startswith("regime ") and (keep is None or s[7:].strip() in keep):
            out[s] = dict(cp[s])
    with open(path, "w") as f:
        f.write("; written by benchmarks/pilot.py\n")
        out.write(f)


def needs_bab(row):
    return row.get("stage") not in ("bounds", "attack")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("grid")
    ap.add_argument("--out", default="out/pilot")
    ap.add_argument("--eps", default="0.005 0.01 0.02 0.03 0.05", help="ladder of radii (blank-separated)")
    ap.add_argument("--inputs", type=int, default=10)
    ap.add_argument("--modes", default="auto", help="modes of the pilot (auto is needed for the choice)")
    ap.add_argument("--archs", default="", help="architectures (default: the grid's)")
    ap.add_argument("--regimes", default="", help="comma-separated regime sections to keep (default: all)")
    ap.add_argument("--timeout", type=float, default=0, help="seconds per instance (default: the grid's)")
    ap.add_argument("--target", type=float, default=0.30, help="share of instances that must need branch and bound")
    ap.add_argument("--cache", default="", help="network cache (default OUT/nets)")
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("--size", default="", help="a full grid whose wall time to predict from the pilot's means")
    ap.add_argument("--lgelu", default=os.environ.get("LGELU", "build/lgelu"))
    ap.add_argument("--no-run", action="store_true", help="only read OUT/results.jsonl")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    pilot = os.path.join(a.out, "pilot.ini")
    if not a.no_run:
        write_pilot(read_grid(a.grid), pilot, a)
        cmd = [a.lgelu, "study", pilot, "--out", a.out, "-j", str(a.jobs), "--quiet"]
        if a.cache:
            cmd += ["--cache", a.cache]
        print("pilot:", " ".join(cmd), flush=True)
        r = subprocess.run(cmd)
        if r.returncode:
            sys.exit(r.returncode)
    rows = [json.loads(l) for l in open(os.path.join(a.out, "results.jsonl")) if l.strip()]
    latest = {}
    for r in rows:  # the latest row of each instance, as study-report counts
        latest[(r["regime"], r["arch"], r["seed"], r["input"], r["eps"], r["mode"])] = r
    rows = list(latest.values())
    by = defaultdict(list)
    secs = defaultdict(list)
    for r in rows:
        secs[(r["arch"], r["eps"], r["mode"])].append(r["seconds"])
        if r["mode"] == "auto":
            by[(r["arch"], r["eps"])].append(r)
    modes = sorted({r["mode"] for r in rows})
    archs = list(dict.fromkeys(r["arch"] for r in rows))  # first-seen order (conv archs are not numbers)
    versions = sorted({"lgelu %s (commit %s)" % (r.get("version", "?"), r.get("commit", "?")) for r in rows})
    print("pilot rows by", "; ".join(versions))
    chosen = {}
    for arch in archs:
        print("\n%s (%d regimes, first seed, %d images; auto rows)" % (arch, len({r["regime"] for r in rows if r["arch"] == arch}),
                                                                     len({r["input"] for r in rows if r["arch"] == arch})))
        print("| eps | instances | bounds+attack decided | need BaB | decided | timeouts | mean unstable | " +
              " | ".join("mean s %s" % m for m in modes) + " |")
        print("|---" * (7 + len(modes)) + "|")
        for eps in sorted({e for (ar, e) in by if ar == arch}):
            rs = by[(arch, eps)]
            n = len(rs)
            hard = sum(needs_bab(r) for r in rs)
            dec = sum(r["verdict"] in ("robust", "violated") for r in rs)
            to = sum(bool(r.get("timed_out")) for r in rs)
            un = sum(r.get("unstable_total", 0) for r in rs) / n
            ms = []
            for m in modes:
                v = secs.get((arch, eps, m), [])
                ms.append("%.3g" % (sum(v) / len(v)) if v else "-")
            print("| %g | %d | %d | %d (%.0f%%) | %d | %d | %.1f | %s |" % (eps, n, n - hard, hard, 100.0 * hard / n, dec, to, un,
                                                                         " | ".join(ms)))
            if arch not in chosen and hard >= a.target * n:
                chosen[arch] = eps
        if arch in chosen:
            ladder = sorted(e for (ar, e) in by if ar == arch and e <= chosen[arch])
            print("-> %s: at eps = %g, %.0f%% or more need branch and bound; a grid reaching the hard regime: eps = %s" %
                  (arch, chosen[arch], 100 * a.target, " ".join("%g" % e for e in ladder)))
        else:
            print("-> %s: no radius of the ladder reaches %.0f%% needing branch and bound; extend --eps" % (arch, 100 * a.target))
    if a.size:
        full = read_grid(a.size)
        st = full["study"]
        n_reg = regime_count(full)
        n_seed = len(st.get("seeds", "1").split())
        n_in = int(st["inputs"])
        radii = [float(e) for e in st["eps"].split()]
        total = 0.0
        missing = set()
        print("\nsize of %s on %d jobs (from the pilot's mean seconds per instance):" % (a.size, a.jobs))
        full_to = float(st.get("timeout", "30"))
        pilot_to = sorted({float(r.get("timeout", 0)) for r in rows})
        if any(t != full_to for t in pilot_to):
            print("  (the pilot ran with timeout %s s, the grid has %g s: instances that time out are under-counted;"
                  " run the pilot without --timeout to size)" % ("/".join("%g" % t for t in pilot_to), full_to))
        for arch in st["archs"].split():
            for m in arch_modes(full, arch):
                for e in radii:
                    have = [k for k in secs if k[0] == arch and k[2] == m]
                    if not have:
                        missing.add((arch, m))
                        continue
                    near = min(have, key=lambda k: abs(math.log(k[1]) - math.log(e)) if k[1] > 0 and e > 0 else abs(k[1] - e))
                    v = secs[near]
                    t = n_reg * n_seed * n_in * (sum(v) / len(v))
                    total += t
            print("  %s: %s" % (arch, ", ".join(arch_modes(full, arch))))
        for arch, m in sorted(missing):
            print("  (no pilot rows for %s mode %s: not counted; run the pilot with --modes including it)" % (arch, m))
        n_inst = sum(n_reg * n_seed * n_in * len(radii) * len(arch_modes(full, ar)) for ar in st["archs"].split())
        print("  %d instances (%d regimes x %d seeds x %d images x %d radii x modes); predicted %.0f s of verification"
              " = %.1f h wall on %d jobs (training not included)" % (n_inst, n_reg, n_seed, n_in, len(radii), total,
                                                                    total / a.jobs / 3600, a.jobs))


if __name__ == "__main__":
    main()
