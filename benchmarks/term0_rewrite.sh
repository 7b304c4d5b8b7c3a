#!/usr/bin/env bash
# Rewrite every read of a layer's term-0 fields behind lg_layer's union (L->W, L->kind,
# layers[k].conv, …) into the named term-0 member (L->lin.W, …), driven by the compiler:
# core/net.h's lg_layer no longer has those fields (only lin and the layer's width n_out),
# so each such read is a "'lg_layer' has no member named 'X'" error with its file, line and
# byte column; `lin.` is inserted before the member at that column. Idempotent: a tree
# without such errors is left as it is. Re-run it after merging branches that still read
# the old fields (benchmarks/OPTABLE.md "Fifth pass").
# Usage: benchmarks/term0_rewrite.sh [BUILD_DIR]   (from the repository root; BUILD_DIR
# default build/, configured or not: it is (re)configured with compile_commands.json and
# the generated headers are made). Prints the number of reads rewritten per round.
set -euo pipefail
cd "$(dirname "$0")/.."
B=${1:-build}
cmake -S . -B "$B" -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >/dev/null
cmake --build "$B" --target lg_commit_header lg_onnxpb >/dev/null
for round in 1 2 3 4 5; do
  n=$(python3 - "$B/compile_commands.json" "$PWD" <<'PY'
import json, os, re, shlex, subprocess, sys
from concurrent.futures import ThreadPoolExecutor
cc, root = json.load(open(sys.argv[1])), os.path.realpath(sys.argv[2])
fields = {'kind', 'n_in', 'W', 'conv', 'map', 'src', 'op'}
pat = re.compile(r"^(.*?):(\d+):(\d+): error: '(?:const )?(?:volatile )?lg_layer'"
                 r"(?: \{aka '[^']*'\})? has no member named '(\w+)'")
def check(e):
    f = os.path.realpath(os.path.join(e['directory'], e['file']))
    if not f.startswith(root + '/') or f.startswith(os.path.realpath(os.path.join(root, sys.argv[1], '..')) + '/'):
        return e['directory'], ''
    args = e['arguments'] if 'arguments' in e else shlex.split(e['command'])
    out, skip = [], False
    for a in args:
        if skip: skip = False; continue
        if a == '-o': skip = True; continue
        if a in ('-c', '-Werror') or a.startswith('-fdiagnostics'): continue
        out.append(a)
    out += ['-fsyntax-only', '-fmax-errors=0', '-fdiagnostics-column-unit=byte', '-fno-diagnostics-show-caret']
    r = subprocess.run(out, cwd=e['directory'], capture_output=True, text=True,
                       env=dict(os.environ, LC_ALL='C'))
    return e['directory'], r.stderr
edits, fatal = set(), []
with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as ex:
    for d, err in ex.map(check, cc):
        for line in err.splitlines():
            if 'fatal error' in line: fatal.append(line)
            m = pat.match(line)
            if m and m.group(4) in fields:
                p = os.path.realpath(os.path.join(d, m.group(1)))
                if p.startswith(root + '/'):
                    edits.add((p, int(m.group(2)), int(m.group(3)), m.group(4)))
if fatal:
    sys.stderr.write('\n'.join(sorted(set(fatal))) + '\n'); sys.exit(2)
byfile = {}
for p, l, c, fld in edits: byfile.setdefault(p, []).append((l, c, fld))
for p, es in byfile.items():
    data = open(p, 'rb').read().split(b'\n')
    for l, c, fld in sorted(es, reverse=True):
        s, i = data[l - 1], c - 1  # gcc points at the member or at the '->' / '.' before it
        while s[i:i + 2] == b'->' or s[i:i + 1] in (b'.', b' ', b'\t'):
            i += 2 if s[i:i + 2] == b'->' else 1
        assert s[i:i + len(fld)] == fld.encode(), (p, l, c, fld, s)
        data[l - 1] = s[:i] + b'lin.' + s[i:]
    open(p, 'wb').write(b'\n'.join(data))
print(len(edits))
PY
)
  echo "round $round: $n reads rewritten"
  [ "$n" = 0 ] && exit 0
done
echo "reads remain after 5 rounds" >&2
exit 1
