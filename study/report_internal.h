/* report_internal.h — what report.c computes (with the shared helpers of
 * report_data.c) and report_md.c,
 * report_csv.c, report_plot.c write. Only study/ uses this. The lg_rep
 * owns the row arrays (jansson); groups are plain values. */
#ifndef LG_STUDY_REPORT_INTERNAL_H
#define LG_STUDY_REPORT_INTERNAL_H

#include <jansson.h>
#include <stdio.h>

#include "core/status.h"
#include "study/grid.h"

#define LG_REP_MAX_GROUPS 256
#define LG_REP_MAX_EPS 16
#define LG_REP_MAX_LAYERS 16
#define LG_REP_MAX_DISAGREE 32

typedef struct lg_rep_modest {
    int n, robust, violated, unknown, timeouts;
    int misclassified;  /* violated rows whose clean input is itself a counterexample (counted in violated) */
    int stage_backend;  /* z3/glpk rows whose recorded stage is that back-end */
    double median_s, total_s;
    long nodes;
} lg_rep_modest;

typedef struct lg_rep_groupst {
    char arch[LG_STUDY_NAME], regime[LG_STUDY_NAME];
    int n_nets, smooth, n_layers;
    int annealed;         /* a smooth net whose λ was annealed (train.anneal_start < 1 or anneal_epochs > 0) */
    long order;           /* grid order (networks.jsonl "order"), then first appearance */
    double acc_before, acc_after, delta_global; /* mean accuracies over seeds; max Δ */
    double delta_ball_median, delta_ball_max;
    lg_rep_modest mode[LG_STUDY_N_MODES];
    double unstable_sum[LG_REP_MAX_EPS];        /* auto rows: Σ unstable_total */
    int unstable_n[LG_REP_MAX_EPS];
    double unstable_layer[LG_REP_MAX_EPS][LG_REP_MAX_LAYERS];
    int relu_robust;      /* auto rows robust */
    int transfer_robust;  /* ... of which the smooth mode is robust too (margin 2Δ) */
    int false_robust;     /* ... of which the smooth mode found a smooth-net counterexample */
    int cex_n, cex_fool;  /* auto rows violated (the same rows as relu_robust's mode) and how many of their
                             counterexamples fool the smooth net */
    int both_decided, disagree; /* pairs of ReLU-net modes that both decided; of which disagree */
} lg_rep_groupst;

typedef struct lg_rep {
    char dir[4096];
    json_t *nets, *rows, *index; /* the latest row of each network and each instance cell; index: cell → row */
    int n_superseded;     /* instance rows replaced by a later row of the same cell (a --force re-run) */
    int n_nets_superseded;
    json_t *versions;     /* "lgelu VERSION (commit C)" → number of instance rows */
    json_t *z3_theories;  /* the theory under Z3 that ran in the z3 mode's rows → number of rows */
    int n_groups;
    lg_rep_groupst groups[LG_REP_MAX_GROUPS];
    int n_eps;
    double eps[LG_REP_MAX_EPS];
    int has_mode[LG_STUDY_N_MODES];
    int n_disagree;
    char disagree[LG_REP_MAX_DISAGREE][256];
    int plots;            /* 1 if gnuplot made the plots */
} lg_rep;

const char *lg_rep_str(json_t *o, const char *k);
/* The row's mode (its "mode" field read once through lg_study_mode_parse), or −1 for a
 * name no mode has. */
int lg_rep_mode(json_t *o);
double lg_rep_num(json_t *o, const char *k);
/* Sorts v. NAN for n = 0. */
double lg_rep_median(double *v, int n);
/* Row o belongs to group g and mode m. */
int lg_rep_row_in(const lg_rep *R, json_t *o, int g, lg_study_mode m);
/* The decided rows' seconds of group g in mode m, sorted (cactus), into buf; returns the count. */
int lg_rep_solved_times(lg_rep *R, int g, lg_study_mode m, double *buf);
/* Every row of architecture arch in mode m, all regimes: *n rows, *decided robust or violated, *timeouts,
 * the median and mean seconds (NAN without rows); buf holds at least the number of rows. */
void lg_rep_arch_mode_stats(lg_rep *R, const char *arch, lg_study_mode m, double *buf, int *n, int *decided,
                            int *timeouts, double *median, double *mean);
/* 1 if some regime of arch has rows of mode m (an [arch] section may leave modes out). */
int lg_rep_arch_has_mode(const lg_rep *R, const char *arch, lg_study_mode m);

/* Run-to-run noise (docs/STUDY.md "Reading the report"): two regimes differ
 * on a measure only beyond it. Instance counts: fewer than
 * max(2, ⌈5 % of n⌉) instances apart is noise; seconds and mean unstable
 * ReLUs: a ratio under LG_REP_NOISE_RATIO; accuracy: under
 * LG_REP_NOISE_ACC percentage points. */
#define LG_REP_NOISE_RATIO 1.2
#define LG_REP_NOISE_ACC 0.5
int lg_rep_noise_count(int n);

lg_status lg_rep_write_csv(lg_rep *R);
lg_status lg_rep_write_plots(lg_rep *R);
lg_status lg_rep_write_md(lg_rep *R, FILE *out);

#endif
