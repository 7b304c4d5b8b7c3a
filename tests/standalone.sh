#!/usr/bin/env bash
# standalone.sh — the repository stands alone: no tracked file (other than
# this check) may refer to the folder that sits beside the repository on the
# developers' machines, and every fixture the tests read lives in it.
# Usage: standalone.sh SOURCE_DIR FIXTURES_DIR
set -euo pipefail
src=$1 fixtures=$2
cd "$src"
self=tests/standalone.sh
pat='\.\./'"shared"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  hits=$(git grep -nE "$pat" -- . ":(exclude)$self" || true)
else
  hits=$(grep -rnE --exclude-dir=build --exclude-dir=build-asan "$pat" . | grep -v "^\./$self:" || true)
fi
if [ -n "$hits" ]; then
  echo "standalone: files refer to a folder outside the repository:" >&2
  echo "$hits" >&2
  exit 1
fi
case "$(cd "$fixtures" && pwd -P)" in
  "$(pwd -P)"/*) ;;
  *) echo "standalone: LG_FIXTURES_DIR=$fixtures is outside the repository" >&2; exit 1 ;;
esac
for d in acasxu vnncomp golden; do
  [ -f "$fixtures/$d/README.md" ] || { echo "standalone: $fixtures/$d/README.md missing" >&2; exit 1; }
  grep -qi 'licen' "$fixtures/$d/README.md" || { echo "standalone: $fixtures/$d/README.md names no licence" >&2; exit 1; }
done
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  untracked=$(git ls-files --others -- "$fixtures")
  [ -z "$untracked" ] || { echo "standalone: fixtures not tracked by git (a clone lacks them): $untracked" >&2; exit 1; }
fi
[ -f docs/DESIGN.md ] || { echo "standalone: docs/DESIGN.md missing" >&2; exit 1; }
# README links only to files inside the repository
grep -oE '\]\([^)#]+' README.md | sed 's/^](//' | grep -vE '^(https?|mailto):' | while read -r f; do
  [ -e "$f" ] || { echo "standalone: README links to missing $f" >&2; exit 1; }
done
echo "standalone: ok"
