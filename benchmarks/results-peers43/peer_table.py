#!/usr/bin/python3
"""Summarise one peer.sh output folder: per group of instances (the KEY's prefix before the first '_'
unless --group-by-net), decided counts of both tools, median wall times, lgelu's time over the peer's
where both decide, disagreements, and the instances each decides alone, per lgelu deciding stage.

    peer_table.py OUTDIR [--prefix-len N]     (N: how many '_'-separated fields of KEY name the group)
"""
import json
import statistics as S
import sys


def load(out):
    L, A = {}, {}
    for line in open(out + "/lgelu.txt"):
        k, _, rest = line.partition(" ")
        try:
            L[k] = json.loads(rest)
        except ValueError:
            L[k] = {"verdict": "error", "seconds": float("nan"), "method": "-", "reason": rest.strip()}
    for line in open(out + "/ab.txt"):
        k, v = line.split()
        res, t = v.split(",")
        A[k] = (res, float(t))
    return L, A


def stage(r):
    if r["verdict"] not in ("robust", "violated"):
        return "open (%s)" % r["verdict"]
    return "%s by %s" % (r["verdict"], r["method"])


def main():
    out = sys.argv[1]
    plen = int(sys.argv[3]) if len(sys.argv) > 3 and sys.argv[2] == "--prefix-len" else 1
    L, A = load(out)
    keys = [k for k in A if k in L]
    groups = {}
    for k in keys:
        groups.setdefault("_".join(k.split("_")[:plen]), []).append(k)
    groups["all"] = keys
    print("| group | n | lgelu decided (robust / violated) | α,β-CROWN decided (unsat / sat) | median s lgelu / α,β-CROWN | "
          "lgelu / α,β-CROWN time where both decide (median) | only lgelu | only α,β-CROWN |")
    print("|---|---|---|---|---|---|---|---|")
    for g, ks in groups.items():
        ld = [k for k in ks if L[k]["verdict"] in ("robust", "violated")]
        ad = [k for k in ks if A[k][0] in ("sat", "unsat")]
        lr = sum(L[k]["verdict"] == "robust" for k in ks)
        ar = sum(A[k][0] == "unsat" for k in ks)
        both = [k for k in ld if k in ad]
        rt = [L[k]["seconds"] / A[k][1] for k in both]
        print("| %s | %d | %d (%d / %d) | %d (%d / %d) | %.2f / %.2f | %s | %d | %d |" % (
            g, len(ks), len(ld), lr, len(ld) - lr, len(ad), ar, len(ad) - ar,
            S.median(L[k]["seconds"] for k in ks), S.median(A[k][1] for k in ks),
            "%.3f" % S.median(rt) if rt else "-", len([k for k in ld if k not in ad]), len([k for k in ad if k not in ld])))
    dis = [k for k in keys if (L[k]["verdict"], A[k][0]) in (("robust", "sat"), ("violated", "unsat"))]
    print("\ndisagreements:", dis or "none")
    cats = {}
    for k in keys:
        cats.setdefault(stage(L[k]), []).append(k)
    print("\nper lgelu stage: instances, α,β-CROWN unsat / sat / timeout / error")
    for c, ks in sorted(cats.items()):
        cnt = {r: sum(A[k][0] == r for k in ks) for r in ("unsat", "sat", "timeout", "error")}
        print("  %-28s %3d   %d / %d / %d / %d" % (c, len(ks), cnt["unsat"], cnt["sat"], cnt["timeout"], cnt["error"]))
    print("\nα,β-CROWN decides, lgelu open:", [(k, A[k][0], A[k][1], L[k]["verdict"], L[k].get("reason", "")) for k in keys
                                           if A[k][0] in ("sat", "unsat") and L[k]["verdict"] not in ("robust", "violated")])
    print("errors:", [(k, "lgelu", L[k].get("reason", "")) for k in keys if L[k]["verdict"] == "error"] +
          [(k, "abcrown") for k in keys if A[k][0] == "error"])


if __name__ == "__main__":
    main()
