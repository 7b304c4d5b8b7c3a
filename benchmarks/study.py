#!/usr/bin/env python3
"""study.py — the end-to-end study: how do verification time and correctness
change across annealing settings, versus a GELU net swapped to ReLU directly?

For every configuration it trains a network with `lgelu train`, substitutes
ReLU with `lgelu relu`, measures accuracy before and after (`lgelu eval`),
certifies the deviation (`lgelu bound`), and verifies local robustness of the
first N test images with Z3 and GLPK (`lgelu verify`). Verdicts are then
checked against the network the user trained:
  * column `smooth`: `lgelu verify --ref` decides robustness of the smooth
    (λ-GELU/GELU) network itself — robust with the certified margin 2Δ on the
    ReLU net, violated only by an input that fools the smooth net;
  * every ReLU counterexample of the z3/glpk columns is re-run through the
    smooth net (`lgelu eval --input`) to count how many also fool it.
Writes results.csv (one row per instance), summary.csv (one row per
configuration), a table on stdout and gnuplot PNGs. Only the standard library.
"""
import argparse
import csv
import json
import os
import shutil
import statistics
import subprocess
import sys
import time


def log(msg):
    """Progress on stderr, only when it is a terminal (the table goes to stdout)."""
    if sys.stderr.isatty():
        print(msg, file=sys.stderr, flush=True)


def run(cmd, capture=True, check=True):
    p = subprocess.run(cmd, stdout=subprocess.PIPE if capture else None, stderr=subprocess.PIPE, text=True)
    if check and p.returncode != 0:
        raise SystemExit("study: command failed (%d): %s\n%s" % (p.returncode, " ".join(cmd), p.stderr.strip()))
    return p


def json_line(out):
    for line in reversed(out.strip().splitlines()):
        line = line.strip()
        if line.startswith("{"):
            return json.loads(line)
    raise SystemExit("study: no JSON line in output:\n" + out)


def read_counterexample(path):
    """X values of a VNN-COMP result file: ((X_0 v) ... (Y_0 v) ...)."""
    xs = {}
    with open(path) as f:
        for tok in f.read().replace("(", " ( ").replace(")", " ) ").split("("):
            parts = tok.replace(")", " ").split()
            if len(parts) == 2 and parts[0].startswith("X_"):
                xs[int(parts[0][2:])] = float(parts[1])
    return [xs[i] for i in sorted(xs)]


def configurations(args):
    confs = []
    for f in args.anneal_starts:
        for lt in args.lambda_targets:
            confs.append(("anneal_f%g_l%g" % (f, lt), ["--act", "lgelu", "--anneal-start", str(f),
                                                        "--lambda-target", str(lt)]))
    confs.append(("lgelu_learned", ["--act", "lgelu"]))
    confs.append(("gelu_swap", ["--act", "gelu"]))
    confs.append(("relu", ["--act", "relu"]))
    return confs


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lgelu", default=os.path.join(os.path.dirname(__file__), "..", "build", "lgelu"))
    ap.add_argument("--out", default="out/study", help="output directory (default out/study)")
    ap.add_argument("--data", default=None, help="IDX data directory (default: lgelu's default)")
    ap.add_argument("--arch", default="784,256,256,10")
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--subset", type=int, default=0, help="train on the first N examples (0 = all)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--anneal-starts", type=float, nargs="+", default=[0.25])
    ap.add_argument("--lambda-targets", type=float, nargs="+", default=[159.6])
    ap.add_argument("--n", type=int, default=20, help="test images verified per configuration")
    ap.add_argument("--eps", type=float, default=0.01)
    ap.add_argument("--timeout", type=float, default=30.0)
    ap.add_argument("--solvers", nargs="+", default=["z3", "glpk"])
    ap.add_argument("--check", action="store_true",
                    help="exit 1 if the back-ends disagree on an instance both decide, a substituted net's "
                         "observed deviation exceeds its certified bound, or an output file is missing")
    args = ap.parse_args()

    lg = os.path.abspath(args.lgelu)
    if not os.access(lg, os.X_OK):
        raise SystemExit("study: %s is not an executable (build first: bash scripts/build.sh)" % lg)
    os.makedirs(args.out, exist_ok=True)
    data = ["--data", args.data] if args.data else []
    rows, summary = [], []
    t_start = time.time()
    for name, targs in configurations(args):
        net = os.path.join(args.out, name + ".lgnet")
        rnet = os.path.join(args.out, name + "_relu.lgnet")
        log("== %s: train (%d epochs)" % (name, args.epochs))
        cmd = [lg, "train"] + data + ["--arch", args.arch, "--epochs", str(args.epochs), "--seed", str(args.seed),
                                      "--log", os.path.join(args.out, name + "_train.csv"), "-o", net] + targs
        if args.subset:
            cmd += ["--subset", str(args.subset)]
        run(cmd)
        if name == "relu":
            shutil.copyfile(net, rnet)
        else:
            run([lg, "relu", net, "-o", rnet])
        acc_before = json_line(run([lg, "eval", net, "--json"] + data).stdout)["accuracy"]
        acc_after = json_line(run([lg, "eval", rnet, "--json"] + data).stdout)["accuracy"]
        bound = json_line(run([lg, "bound", rnet, "--ref", net, "--eps", str(args.eps), "--n", str(max(args.n, 1)),
                               "--json"] + data).stdout)
        s = {"config": name, "acc_before": acc_before, "acc_after": acc_after, "delta_global": bound["global"],
             "delta_median": bound["per_input_median"], "delta_max": bound["per_input_max"],
             "observed_max": bound["observed_max"], "class_changes": bound["class_changes"]}
        log("   accuracy %.2f%% -> %.2f%% after substitution; Δ(eps) max %.3g" % (100 * acc_before, 100 * acc_after,
                                                                                 bound["per_input_max"]))
        for solver in args.solvers + ["smooth"]:
            times, verdicts = [], {"robust": 0, "violated": 0, "unknown": 0}
            transfer_ok = transfer_n = 0
            for i in range(args.n):
                resf = os.path.join(args.out, "%s_%s_%d.result" % (name, solver, i))
                sol = solver if solver != "smooth" else "auto"
                ref = ["--ref", net] if solver == "smooth" and name != "relu" else []
                out = run([lg, "verify", rnet, "--index", str(i), "--eps", str(args.eps), "--solver", sol,
                           "--timeout", str(args.timeout), "--out", resf, "--json"] + ref + data).stdout
                v = json_line(out)
                verdict = v["verdict"]
                verdicts[verdict] = verdicts.get(verdict, 0) + 1
                times.append(v["seconds"])
                fools_smooth = ""
                if verdict == "violated" and name != "relu" and solver != "smooth":
                    x = read_counterexample(resf)
                    xin = os.path.join(args.out, "cex.txt")
                    with open(xin, "w") as f:
                        f.write(" ".join(repr(a) for a in x) + "\n")
                    y = [float(t) for t in run([lg, "eval", net, "--input", xin]).stdout.split()]
                    label = v["label"]
                    others = max(y[j] for j in range(len(y)) if j != label)
                    fools_smooth = int(y[label] - others <= 0)
                    transfer_n += 1
                    transfer_ok += fools_smooth
                rows.append({"config": name, "solver": solver, "index": i, "verdict": verdict,
                             "reason": v.get("reason", ""), "seconds": v["seconds"], "unstable": v["unstable"],
                             "nodes": v.get("nodes", ""), "method": v.get("method", ""),
                             "delta": v.get("delta", ""), "cex_fools_smooth": fools_smooth})
            s["%s_robust" % solver] = verdicts["robust"]
            s["%s_violated" % solver] = verdicts["violated"]
            s["%s_unknown" % solver] = verdicts["unknown"]
            s["%s_median_s" % solver] = statistics.median(times) if times else 0.0
            s["%s_total_s" % solver] = sum(times)
            if transfer_n:
                s["%s_cex_transfer" % solver] = "%d/%d" % (transfer_ok, transfer_n)
            log("   %-8s robust %d violated %d unknown %d  median %.3fs total %.1fs" % (
                solver, verdicts["robust"], verdicts["violated"], verdicts["unknown"], s["%s_median_s" % solver],
                s["%s_total_s" % solver]))
        summary.append(s)

    # disagreements between back-ends on instances both decide
    by = {}
    for r in rows:
        by.setdefault((r["config"], r["index"]), {})[r["solver"]] = r["verdict"]
    disagree = sum(1 for d in by.values()
                   if {"robust", "violated"} <= {v for k, v in d.items() if k in args.solvers})
    with open(os.path.join(args.out, "results.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    keys = []
    for s in summary:
        keys += [k for k in s if k not in keys]
    with open(os.path.join(args.out, "summary.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        w.writerows(summary)
    print_table(summary, args, disagree, time.time() - t_start)
    plot(summary, args)
    if args.check:
        problems = []
        if disagree:
            problems.append("%d back-end disagreements" % disagree)
        for s in summary:
            if s["observed_max"] > s["delta_max"]:
                problems.append("%s: observed deviation %g above the certified %g" % (
                    s["config"], s["observed_max"], s["delta_max"]))
        for f in ("results.csv", "summary.csv"):
            if not os.path.getsize(os.path.join(args.out, f)):
                problems.append(f + " is empty")
        if problems:
            raise SystemExit("study: check failed: " + "; ".join(problems))
        print("study: check passed (%d configurations, %d verification rows)" % (len(summary), len(rows)))


def print_table(summary, args, disagree, wall):
    print("\nlgelu study: %s, %d epochs, first %d test images, eps %g, timeout %gs" % (
        args.arch, args.epochs, args.n, args.eps, args.timeout))
    hdr = "%-18s %7s %7s %9s %9s" % ("config", "acc%", "relu%", "Δglobal", "Δ(ε)max")
    solvers = args.solvers + ["smooth"]
    for s in solvers:
        hdr += " | %-8s %7s %7s" % (s, "median", "total")
    print(hdr)
    print("-" * len(hdr))
    for s in summary:
        line = "%-18s %7.2f %7.2f %9.3g %9.3g" % (s["config"], 100 * s["acc_before"], 100 * s["acc_after"],
                                              s["delta_global"], s["delta_max"])
        for v in solvers:
            line += " | %-8s %6.3fs %6.1fs" % ("%d/%d/%d" % (s[v + "_robust"], s[v + "_violated"], s[v + "_unknown"]),
                                               s[v + "_median_s"], s[v + "_total_s"])
        print(line)
    print("\nR/V/U = robust/violated/unknown. z3, glpk: the substituted ReLU net (quick paths, then that"
          " back-end).\nsmooth: the trained smooth net itself via `lgelu verify --ref` (ReLU net proved with"
          " margin 2Δ on\neach box; violated only by an input that fools the smooth net).")
    for s in summary:
        for v in args.solvers:
            if v + "_cex_transfer" in s:
                print("%s: %s counterexamples of the ReLU net also fool the smooth net: %s" % (
                    s["config"], v, s[v + "_cex_transfer"]))
    print("back-end disagreements on instances both decided: %d" % disagree)
    print("wall time %.0fs; CSV and plots in %s" % (wall, args.out))


def plot(summary, args):
    if not shutil.which("gnuplot"):
        print("study: gnuplot not found, no plots", file=sys.stderr)
        return
    dat = os.path.join(args.out, "summary.dat")
    solvers = args.solvers + ["smooth"]
    with open(dat, "w") as f:
        for s in summary:
            f.write("%s %g %g %s %s\n" % (s["config"], 100 * s["acc_before"], 100 * s["acc_after"],
                                          " ".join("%g" % max(s[v + "_total_s"], 1e-3) for v in solvers),
                                          " ".join("%d" % s[v + "_robust"] for v in solvers)))
    png = os.path.join(args.out, "study.png")
    cols_t = ", ".join("'%s' using %d:xtic(1) title '%s'" % (dat, 4 + i, v) for i, v in enumerate(solvers))
    cols_r = ", ".join("'%s' using %d:xtic(1) title '%s'" % (dat, 4 + len(solvers) + i, v)
                       for i, v in enumerate(solvers))
    script = """set terminal pngcairo size 1400,450
set output '%s'
set multiplot layout 1,3
set termoption noenhanced
set style data histograms
set style fill solid 0.8
set xtics rotate by -30
set key outside bottom center horizontal
set title 'test accuracy (%%), before and after substitution'
plot '%s' using 2:xtic(1) title 'before', '' using 3 title 'after (ReLU)'
set logscale y
set title 'total verification time (s, log scale)'
plot %s
unset logscale y
set yrange [0:*]
set title 'robust instances (of %d)'
plot %s
unset multiplot
""" % (png, dat, cols_t, args.n, cols_r)
    p = subprocess.run(["gnuplot"], input=script, text=True, capture_output=True)
    if p.returncode != 0:
        print("study: gnuplot failed: " + p.stderr.strip(), file=sys.stderr)
    else:
        log("study: plot written to " + png)


if __name__ == "__main__":
    main()
