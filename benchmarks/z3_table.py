#!/usr/bin/env python3
"""z3_table.py — the tables of benchmarks/Z3.md from study directories.

    python3 benchmarks/z3_table.py DIR [DIR ...]

Reads DIR/results.jsonl of every directory (study rows, README "The study"),
keeps the last row per key and prints, as Markdown:
  1. per (architecture, mode, z3_theory, eps): instances, robust, violated,
     unknown, decided %, median and mean seconds, mean conflicts and LPs;
  2. disagreements: instances (key without the mode) where two modes or
     directories gave robust and violated;
  3. with --per-instance: one line per z3 row (conflicts, learned clauses,
     LPs, seconds, verdict) beside the glpk row of the same instance.
"""
import json
import statistics
import sys
from collections import defaultdict


def rows_of(dirs):
    rows = {}
    for d in dirs:
        with open(f"{d}/results.jsonl") as f:
            for line in f:
                r = json.loads(line)
                r["_dir"] = d
                rows[(d, r["key"])] = r
    return list(rows.values())


def instance(r):
    return (r["regime"], r["arch"], r["seed"], r["input"], r["eps"])


def main(argv):
    per = "--per-instance" in argv
    dirs = [a for a in argv if not a.startswith("--")]
    if not dirs:
        print(__doc__)
        return 2
    rows = rows_of(dirs)
    groups = defaultdict(list)
    for r in rows:
        th = r.get("z3_theory") or "-"
        groups[(r["arch"], r["mode"], th if r["mode"] == "z3" else "-", r["eps"])].append(r)
    print("| arch | mode | theory | ε | n | robust | violated | unknown | decided | median s | mean s | "
          "mean conflicts | mean LPs |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for k in sorted(groups):
        g = groups[k]
        n = len(g)
        rob = sum(r["verdict"] == "robust" for r in g)
        vio = sum(r["verdict"] == "violated" for r in g)
        s = [r["seconds"] for r in g]
        conf = statistics.mean(r["nodes"] for r in g) if k[1] == "z3" else float("nan")
        lps = statistics.mean(r.get("lps", 0) for r in g) if k[1] == "z3" else float("nan")
        print(f"| {k[0]} | {k[1]} | {k[2]} | {k[3]:g} | {n} | {rob} | {vio} | {n - rob - vio} | "
              f"{100.0 * (rob + vio) / n:.0f} % | {statistics.median(s):.2f} | {statistics.mean(s):.2f} | "
              f"{conf:.1f} | {lps:.1f} |")
    verdicts = defaultdict(set)
    who = defaultdict(list)
    for r in rows:
        if r["verdict"] in ("robust", "violated") and r["mode"] != "smooth":
            verdicts[instance(r)].add(r["verdict"])
            who[instance(r)].append(f'{r["mode"]}/{r.get("z3_theory") or "-"}:{r["verdict"]}')
    bad = [k for k, v in verdicts.items() if len(v) > 1]
    print(f"\ndisagreements (robust vs violated on one instance): {len(bad)}")
    for k in bad:
        print("  ", k, who[k])
    if per:
        glpk = {instance(r): r for r in rows if r["mode"] == "glpk"}
        print("\n| regime | arch | input | ε | unstable | z3 verdict | conflicts (= learned clauses) | LPs | z3 s | "
              "glpk verdict | glpk s |")
        print("|---|---|---|---|---|---|---|---|---|---|---|")
        for r in sorted((r for r in rows if r["mode"] == "z3"), key=instance):
            g = glpk.get(instance(r))
            print(f'| {r["regime"]} | {r["arch"]} | {r["input"]} | {r["eps"]:g} | {r["unstable_total"]} | '
                  f'{r["verdict"]} | {r["nodes"]} | {r.get("lps", "")} | {r["seconds"]:.2f} | '
                  f'{g["verdict"] if g else ""} | {g["seconds"]:.2f} |' if g else
                  f'| {r["regime"]} | {r["arch"]} | {r["input"]} | {r["eps"]:g} | {r["unstable_total"]} | '
                  f'{r["verdict"]} | {r["nodes"]} | {r.get("lps", "")} | {r["seconds"]:.2f} | | |')
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
