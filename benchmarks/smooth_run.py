"""Run several `lgelu verify` binaries (or option sets) on the same smooth-net instances, interleaved.

    python3 benchmarks/smooth_run.py --net NET.onnx --vnnlib 'DIR/*_eps0.03_*.vnnlib' --timeout 30 \
        --run before=/path/to/old/lgelu --run after=build/lgelu [--run 'depth=build/lgelu --bab-order depth'] \
        [--csv out.csv]

For every instance (sorted by name) each run goes once, in the order given, with `-j 1 --json` and the
given `--timeout`: so old and new see the same load. Prints one CSV row per instance and run (verdict,
method, wall seconds, nodes) and a summary per run: decided (robust / violated), unknown, total and median
wall seconds, and the largest overshoot of the wall time past `--timeout`. Standard library only.
"""
import argparse
import csv
import glob
import json
import os
import shlex
import statistics
import subprocess
import sys
import time


def run_one(cmd, net, prop, timeout):
    argv = [cmd[0], "verify", net, "--vnnlib", prop, "--timeout", str(timeout), "-j", "1", "--json"] + cmd[1:]
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    t0 = time.monotonic()
    p = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=timeout + 120)
    wall = time.monotonic() - t0
    line = next((l for l in p.stdout.splitlines() if l.startswith("{")), None)
    if line is None:
        return {"verdict": "error", "method": p.stderr.strip()[-80:], "wall": wall, "nodes": 0}
    j = json.loads(line)
    return {"verdict": j.get("verdict", "?"), "method": j.get("method", ""), "wall": wall,
            "nodes": j.get("bab_nodes", 0)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--net", required=True)
    ap.add_argument("--vnnlib", required=True, action="append", help="glob (repeatable)")
    ap.add_argument("--timeout", type=float, default=30)
    ap.add_argument("--run", action="append", required=True, help="NAME=BINARY [options]")
    ap.add_argument("--csv")
    a = ap.parse_args()
    runs = []
    for r in a.run:
        name, cmd = r.split("=", 1)
        runs.append((name, shlex.split(cmd)))
    props = sorted({p for g in a.vnnlib for p in glob.glob(g)})
    if not props:
        sys.exit("no instances")
    rows = []
    w = csv.writer(sys.stdout)
    w.writerow(["instance", "run", "verdict", "method", "wall_s", "nodes"])
    for prop in props:
        for name, cmd in runs:
            r = run_one(cmd, a.net, prop, a.timeout)
            row = [os.path.basename(prop), name, r["verdict"], r["method"], "%.2f" % r["wall"], r["nodes"]]
            rows.append(row)
            w.writerow(row)
            sys.stdout.flush()
    if a.csv:
        with open(a.csv, "w", newline="") as f:
            cw = csv.writer(f)
            cw.writerow(["instance", "run", "verdict", "method", "wall_s", "nodes"])
            cw.writerows(rows)
    print()
    print("run, instances, robust, violated, unknown, total_s, median_s, median_decided_s, max_overshoot_s")
    for name, _ in runs:
        rs = [r for r in rows if r[1] == name]
        walls = [float(r[4]) for r in rs]
        dec = [float(r[4]) for r in rs if r[2] in ("robust", "violated")]
        print("%s, %d, %d, %d, %d, %.1f, %.2f, %.2f, %.2f" % (
            name, len(rs), sum(r[2] == "robust" for r in rs), sum(r[2] == "violated" for r in rs),
            sum(r[2] not in ("robust", "violated") for r in rs), sum(walls), statistics.median(walls),
            statistics.median(dec) if dec else float("nan"), max(x - a.timeout for x in walls)))
    # a verdict that differs between runs (robust vs violated) is a soundness bug somewhere
    for prop in props:
        v = {r[2] for r in rows if r[0] == os.path.basename(prop) and r[2] in ("robust", "violated")}
        if len(v) > 1:
            print("CONFLICT", os.path.basename(prop), v)


if __name__ == "__main__":
    main()
