#!/usr/bin/env python3
"""Summarise rver.sh output: per tag robust/violated/unknown, how decided, median seconds,
and every image where two tags disagree (robust against violated)."""
import json, statistics, sys
from collections import defaultdict

rows = defaultdict(dict)  # tag -> image -> result
for path in sys.argv[1:]:
    for line in open(path):
        tag, img, js = line.split(' ', 2)
        try:
            rows[tag][int(img)] = json.loads(js)
        except json.JSONDecodeError:
            rows[tag][int(img)] = {'verdict': 'error', 'seconds': float('nan'), 'method': ''}
for tag, res in rows.items():
    v = defaultdict(int)
    how = defaultdict(int)
    for r in res.values():
        v[r['verdict']] += 1
        m = 'clean input' if r.get('misclassified') else (r.get('method') or '?') if r['verdict'] != 'unknown' \
            else 'unknown: ' + r.get('reason', '')
        how[m] += 1
    secs = [r['seconds'] for r in res.values()]
    dec = [r['seconds'] for r in res.values() if r['verdict'] != 'unknown' and not r.get('misclassified')]
    unk = sorted(i for i, r in res.items() if r['verdict'] == 'unknown')
    print(f"{tag}: n={len(res)} robust={v['robust']} violated={v['violated']} unknown={v['unknown']} "
          f"decided={v['robust'] + v['violated']} median_s={statistics.median(secs):.2f} "
          f"median_decided_s={statistics.median(dec) if dec else float('nan'):.2f} max_s={max(secs):.1f}")
    print('   by:', dict(sorted(how.items(), key=lambda kv: -kv[1])))
    print('   unknown:', unk)
tags = list(rows)
bad = 0
for i in sorted(set().union(*[set(r) for r in rows.values()])):
    vs = {t: rows[t][i]['verdict'] for t in tags if i in rows[t]}
    if 'robust' in vs.values() and 'violated' in vs.values():
        bad += 1
        print('DISAGREE', i, vs)
print('disagreements:', bad)
common = set.intersection(*[set(r) for r in rows.values()]) if rows else set()
if len(tags) >= 2:
    for a in tags:
        for b in tags:
            if a < b:
                ra = [rows[a][i]['seconds'] for i in sorted(common)]
                rb = [rows[b][i]['seconds'] for i in sorted(common)]
                both = [i for i in sorted(common) if rows[a][i]['verdict'] != 'unknown' and rows[b][i]['verdict'] != 'unknown']
                print(f"{a} vs {b} on {len(common)} common images: median s {statistics.median(ra):.2f} / {statistics.median(rb):.2f};"
                      f" decided by both ({len(both)}): median s {statistics.median([rows[a][i]['seconds'] for i in both]) if both else 0:.2f} / "
                      f"{statistics.median([rows[b][i]['seconds'] for i in both]) if both else 0:.2f}")
