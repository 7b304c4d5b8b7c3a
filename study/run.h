/* run.h — the study runner: every (network, input, ε, mode) instance of a
 * grid, in-process, with N worker threads, resumable and shardable.
 *
 * Instances are enumerated in one canonical order (architecture, regime,
 * seed, then input, ε, mode); instance number p belongs to shard K of N when
 * p mod N = K − 1, so shards are disjoint, cover the grid and do not depend
 * on what has already run. Phase 1 gets every network the shard needs
 * (nets.h: cache or train); phase 2 verifies the instances whose key is not
 * yet in OUT/results.jsonl and appends one row per finished instance
 * (results.h). Network rows go to OUT/networks.jsonl.
 *
 * A run into a directory that already has rows refuses when DIR/grid.ini
 * (the grid of the earlier run) differs from this grid — naming what changed
 * (lg_study_grid_diff) — or when the rows were made by another lgelu
 * version; with force it goes on, keeps the earlier grid as
 * DIR/grid-N.ini, and adds only the rows whose key is new (results.h: the
 * key holds the network hash, the settings and the version, so nothing is
 * duplicated and nothing is taken for a row of another recipe).
 *
 * Row fields: key, regime, arch, seed, input, label, eps, mode, verdict,
 * reason, timed_out, seconds, unstable (per layer), unstable_total, nodes,
 * bab_nodes, stage (what decided or was tried last: bounds, attack, glpk,
 * z3, relu-bab, ...), delta_ball (certified Δ on the ball, 0 for relu
 * nets), delta_transfer (smooth mode: the Δ the transfer used), cex_fools_smooth
 * (violated rows of smooth regimes in auto/z3/glpk: does the ReLU net's
 * counterexample fool the smooth net; null otherwise), timeout, hash,
 * settings (lg_study_verify_settings), version and commit (core/version.h),
 * misclassified (the clean input is itself a counterexample: violated, stage
 * "clean input", nothing else ran; verify.h), the LP work (lps, seconds_lp,
 * seconds_cert) and seconds_solver.
 *
 * Modes (grid.h): auto = lg_verify_run with the default pipeline; z3/glpk =
 * lg_verify_run with backend_only (same symbolic bounds, then that back-end
 * on every term, nothing else); smooth = lg_verify_transfer (verify --ref).
 * Every instance gets the grid's timeout; branch and bound runs one thread
 * per worker so verdicts do not depend on -j.
 *
 * Everything passed in is borrowed.
 */
#ifndef LG_STUDY_RUN_H
#define LG_STUDY_RUN_H

#include <stdio.h>

#include "study/grid.h"
#include "verify/verify.h"

typedef struct lg_study_opts {
    const char *out_dir;   /* created if missing */
    const char *cache_dir; /* networks; NULL = OUT/nets */
    int jobs;              /* worker threads (≥ 1) */
    int shard_k, shard_n;  /* 1 ≤ K ≤ N; 1/1 = everything */
    int progress;          /* 1: progress line with ETA on stderr, redrawn; 2: one line per 5% (logs) */
    FILE *log;             /* one line per network and a closing line, or NULL */
    const char *grid_path; /* compared with, then copied to OUT/grid.ini (provenance, report order), or NULL */
    int force;             /* 1: go on although OUT/grid.ini or the rows' version differ (adds only new rows) */
} lg_study_opts;

lg_study_opts lg_study_opts_default(void);

/* The verification options of an instance of mode m on architecture a of
 * grid g (from lg_verify_opts_default, the architecture's timeout), and their
 * canonical text "timeout=10 bab_threads=1 ..." for the row key and the row's
 * "settings": one function decides both, so a grid option that changes how an
 * instance is verified belongs here, and is then in every key. */
void lg_study_verify_settings(const lg_study_grid *g, const lg_study_arch *a, lg_study_mode m, lg_verify_opts *vo,
                              char *desc, size_t n);

/* Create directory d and its missing parents (mkdir -p). */
lg_status lg_study_mkdir(const char *d);

/* Copy the file src to dir/name atomically (the grid into a study directory). */
lg_status lg_study_copy_file(const char *src, const char *dir, const char *name);

typedef struct lg_study_stats {
    long n_instances;   /* in this shard */
    long n_skipped;     /* already in results.jsonl */
    long n_run;         /* run now */
    int n_nets;
    double seconds;
} lg_study_stats;

/* Parse "K/N" (1 ≤ K ≤ N ≤ 100000): 0 or −1. */
int lg_study_shard_parse(const char *s, int *k, int *n);

lg_status lg_study_run(const lg_study_grid *g, const lg_study_opts *o, lg_study_stats *stats);

#endif
