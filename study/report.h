/* report.h — `lgelu study-report DIR` and `lgelu study-merge`: turn
 * results.jsonl and networks.jsonl into REPORT.md, CSVs and gnuplot plots,
 * and join the directories of shards.
 *
 * The report answers the study's three questions per (architecture,
 * regime): accuracy before/after substitution, certified Δ (global, per
 * ball), unstable ReLUs per ε, robust/violated/unknown per mode with median
 * and total seconds, solver agreement (a robust/violated disagreement is a
 * soundness bug and is listed), transfer to the smooth network (robust with
 * margin 2Δ, ReLU counterexamples that fool the smooth net, ReLU `robust`
 * verdicts contradicted by a smooth-net counterexample — the false-robust
 * rate), and a generated reading of which regime wins each measure.
 * The header names the lgelu version and commit of the rows; only the
 * latest row of each instance and network counts (a --force re-run appends
 * rows of the same cell under new keys), and the number set aside is said.
 * Files written into DIR: REPORT.md, networks.csv, modes.csv, unstable.csv,
 * transfer.csv, agreement.csv, lambda.csv, plots/ (cactus per architecture
 * and mode, accuracy, unstable ReLUs, unstable ReLUs vs seconds per mode, λ
 * over training as a panel per regime, median seconds per architecture and
 * mode; PNG and SVG when gnuplot is installed, else only the .dat/.gp inputs
 * and a note).
 * Nothing is owned by the caller.
 */
#ifndef LG_STUDY_REPORT_H
#define LG_STUDY_REPORT_H

#include <stdio.h>

#include "core/status.h"

/* Write the report into dir; the summary table is also printed to out (may be NULL). */
lg_status lg_study_report(const char *dir, FILE *out);

/* Join the results.jsonl and networks.jsonl of the directories in[0..n) into
 * out_dir (created; rows already there are kept): one row per key; the same
 * key with a different verdict in two inputs is an error (LG_ERR_FORMAT).
 * *n_rows receives the number of instance rows in out_dir afterwards. */
lg_status lg_study_merge(const char *out_dir, const char *const *in, int n, long *n_rows);

#endif
