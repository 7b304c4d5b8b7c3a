/* train_common.h — what `lgelu train` and `lgelu anneal` share: optimiser
 * and schedule options, data loading with --subset/--val, the final report.
 * Everything is owned by the lg_cli_train value; free with
 * lg_cli_train_free. Only cli/ uses this.
 */
#ifndef LG_CLI_TRAIN_COMMON_H
#define LG_CLI_TRAIN_COMMON_H

#include <getopt.h>

#include "anneal/schedule.h"
#include "core/idx.h"
#include "train/loop.h"
#include "train/vit.h"

/* getopt_long codes of the shared options. */
enum {
    LG_OPT_DATA = 256, LG_OPT_EPOCHS, LG_OPT_BATCH, LG_OPT_LR, LG_OPT_MOMENTUM, LG_OPT_OPT, LG_OPT_WD, LG_OPT_T,
    LG_OPT_C, LG_OPT_SEED, LG_OPT_THREADS, LG_OPT_VAL, LG_OPT_SUBSET, LG_OPT_ANNEAL_START, LG_OPT_LAMBDA_TARGET,
    LG_OPT_TOLERANCE, LG_OPT_LOG, LG_OPT_ARCH, LG_OPT_ACT,
    LG_OPT_INIT, LG_OPT_S_UPDATE, LG_OPT_PROGRESS, LG_OPT_RS, LG_OPT_RS_EPS, LG_OPT_WARMUP,
    LG_OPT_LR_SCHEDULE
};

typedef struct lg_cli_train {
    lg_train_opts tr;
    const char *dir, *out;
    double t;
    long val, subset;
    int epochs_set, wd_set;
    int no_output;         /* 1: -o is not required (a ViT, which trains without a network file) */
    double anneal_start;   /* 1 = none */
    double lambda_target;
    int target_set, tolerance_set, anneal_set;
    lg_dataset train, val_ds, test;
    lg_anneal_schedule sched;
    const char *init_name; /* printed in the report when set (`train --init`) */
} lg_cli_train;

void lg_cli_train_defaults(lg_cli_train *ct);

/* The help lines of the options train and anneal share whose defaults come
 * from lg_train_opts_default / lg_cli_train_defaults (never retyped). */
void lg_cli_train_help_common(int with_t_c);
void lg_cli_train_free(lg_cli_train *ct);

/* Handle a shared option code c with argument arg: 0 handled, −1 bad value
 * (message printed), 1 not a shared option. */
int lg_cli_train_option(const char *cmd, lg_cli_train *ct, int c, const char *arg);

/* Checks after parsing (required options, exclusive ones): 0 or the exit
 * code 2 with a usage message printed. */
int lg_cli_train_finish_args(const char *cmd, lg_cli_train *ct);

/* Load train (first --subset, last --val carved off) and test splits, fitted
 * to n_in inputs (lg_dataset_fit: pooled if the network is smaller; what
 * names the network or option in errors). */
lg_status lg_cli_train_load(lg_cli_train *ct, int n_in, const char *what);

/* Train net with the options (and the schedule when annealing), then print
 * the final test accuracy (double precision) and λ per layer, and write
 * the net to ct->out. */
lg_status lg_cli_train_run(const char *cmd, lg_cli_train *ct, lg_net *net, int anneal);

/* The same for a ViT (train/vit.h; DESIGN.md §1 "Training a Transformer"):
 * train m (annealing its MLP parameters when anneal), print the test
 * accuracy (and, annealed, that of the ReLU substitution), the parameter
 * per block, and write m as a net to ct->out when set. */
lg_status lg_cli_train_vit_run(const char *cmd, lg_cli_train *ct, lg_vit *m, int anneal);

#endif
