/* loop.h — the training loop: seeded shuffling, mini-batches, per-step hook
 * (annealing lives outside train/ and plugs in here), per-epoch report and
 * CSV log, NaN/Inf guard, write-back into the lg_net. Optionally the RS
 * loss on the training ε-ball (train/rs.h) is added to the cross-entropy.
 *
 * Same seed and same thread count ⇒ bit-identical weights. The datasets and
 * the options are borrowed; the net is updated in place only on success
 * (on failure it is left untouched).
 */
#ifndef LG_TRAIN_LOOP_H
#define LG_TRAIN_LOOP_H

#include <stdint.h>
#include <stdio.h>

#include "core/idx.h"
#include "train/model.h"
#include "train/optim.h"

/* Called at the start of every step, before its forward pass (so before its
 * optimizer step), with the 0-based step index and the total number of
 * steps. It may set layers[k].lambda and lambda_fixed (freezing s). */
typedef void (*lg_train_hook_fn)(void *ctx, lg_model *m, long step, long total);

typedef struct lg_train_opts {
    int epochs;            /* ≥ 1 (default 10) */
    int batch;             /* mini-batch size (default 128) */
    lg_optim_opts optim;
    uint64_t seed;         /* shuffling (weights are initialised by the caller) */
    int threads;           /* OpenBLAS threads (default 1) */
    FILE *out;             /* per-epoch lines, or NULL for silence (default NULL) */
    const char *log_path;  /* CSV log file, or NULL */
    int progress;          /* 1: progress bar on stderr (a terminal); 2: progress lines with an ETA (logs) */
    lg_train_hook_fn hook; /* or NULL */
    void *hook_ctx;
    double rs_weight;      /* > 0: add the RS loss (train/rs.h) with this weight (default 0: off) */
    double rs_eps;         /* its ε-ball radius in input units (default 0.03) */
} lg_train_opts;

lg_train_opts lg_train_opts_default(void);

typedef struct lg_train_result {
    long steps;
    double loss;          /* mean training loss of the last epoch */
    double train_acc;     /* running accuracy over the last epoch */
    double val_acc;       /* −1 when no validation set */
    double test_acc;      /* −1 when no test set */
    double samples_per_s; /* of the last epoch, training steps only */
    double rs_loss;       /* mean RS loss per example over the last epoch (weight included; 0 when off) */
    double rs_unstable;   /* mean interval-unstable hidden ReLUs per example on the ε-ball, last epoch */
} lg_train_result;

/* Train net on train, reporting accuracy on val and test (either may be
 * NULL) after every epoch. Errors: LG_ERR_ARG (bad options, shape or label
 * mismatch), LG_ERR_NUMERIC (loss became NaN/Inf; net unchanged),
 * LG_ERR_IO (log file), LG_ERR_NOMEM. res may be NULL. */
lg_status lg_train_run(lg_net *net, const lg_dataset *train, const lg_dataset *val, const lg_dataset *test,
                       const lg_train_opts *o, lg_train_result *res);

/* Rows idx[0..B) of X loaded into `model` and classified: the number whose
 * predicted class equals labels[r] (the model's batch forward). */
typedef int (*lg_batch_hits_fn)(void *model, const float *X, const uint32_t *idx, int B, const uint8_t *labels);
/* The share of ds that hits_of classifies correctly, in batches of at most
 * max_batch rows; 0 for an empty set, −1 when out of memory. The one
 * accuracy loop of every trainer (lg_model_accuracy, lg_vit_accuracy). */
double lg_batched_accuracy(void *model, int max_batch, const lg_dataset *ds, lg_batch_hits_fn hits_of);
/* Accuracy of the model in float on ds (batches of m->max_batch). */
double lg_model_accuracy(lg_model *m, const lg_dataset *ds);

#endif
