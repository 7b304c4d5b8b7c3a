#!/usr/bin/env python3
"""Table of ops.sh rows (benchmarks/VERIFY.md "Third-party ops"): per net and mode the
verdict counts and median seconds, and the images where two modes disagree (robust
against violated).   ops_table.py ROWS.txt"""
import json
import statistics
import sys

rows = {}
for line in open(sys.argv[1]):
    net, mode, i, js = line.split(" ", 3)
    rows.setdefault(net, {}).setdefault(mode, {})[int(i)] = json.loads(js)
print("| net | mode | robust | violated (clean input) | unknown | median s | decided by |")
print("|---|---|---|---|---|---|---|")
for net, modes in rows.items():
    for mode, res in modes.items():
        v = [r["verdict"] for r in res.values()]
        clean = sum(r["verdict"] == "violated" and r["misclassified"] for r in res.values())
        by = {}
        for r in res.values():
            if r["verdict"] != "unknown":
                by[r["method"]] = by.get(r["method"], 0) + 1
        print("| %s | %s | %d | %d (%d) | %d | %.2f | %s |" % (
            net, mode, v.count("robust"), v.count("violated"), clean, v.count("unknown"),
            statistics.median(r["seconds"] for r in res.values()),
            ", ".join("%s %d" % kv for kv in sorted(by.items()))))
    images = set.intersection(*(set(r) for r in modes.values()))
    bad = [i for i in sorted(images)
           if {"robust", "violated"} <= {modes[m][i]["verdict"] for m in modes}]
    print("\n%s: %d images in every mode, disagreements: %d %s" % (net, len(images), len(bad), bad or ""))
