#!/usr/bin/env bash
# submit.sh GRID OUT N [sbatch options...] — submit an lgelu study as a Slurm job array of
# N shards and a merge+report job that runs after all of them succeed. Prints both job ids.
set -euo pipefail
grid=$(realpath "$1") out=$(realpath -m "$2") n=$3
shift 3
here=$(cd "$(dirname "$0")" && pwd)
jid=$(sbatch --parsable "$@" --array=1-"$n" "$here/study.sbatch" "$grid" "$out")
mid=$(sbatch --parsable "$@" --dependency=afterok:"${jid%%;*}" "$here/study.sbatch" --merge "$grid" "$out" "$n")
echo "shards: job ${jid%%;*} (array 1-$n); merge and report: job ${mid%%;*}"
