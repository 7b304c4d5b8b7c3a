/* vit_train.h — the training loop of a ViT (train/vit.h): seeded shuffling,
 * mini-batches, SGD or AdamW with the warm-up of lg_optim_opts, per-epoch
 * report, NaN/Inf guard. The MLP parameter of each block steps as itself
 * with rate c·η (λ and β floored at LG_LAMBDA_FLOOR; no weight decay).
 * Same seed and thread count ⇒ bit-identical weights. Datasets and options
 * are borrowed; the model is updated in place.
 */
#ifndef LG_TRAIN_VIT_TRAIN_H
#define LG_TRAIN_VIT_TRAIN_H

#include "core/idx.h"
#include "train/loop.h"
#include "train/vit.h"

/* Train m on train (test may be NULL) with o's epochs, batch (≤ m's
 * max_batch), optim, seed, threads and out (per-epoch lines). Errors:
 * LG_ERR_ARG (options, shapes, labels), LG_ERR_NUMERIC (divergence). */
lg_status lg_vit_train(lg_vit *m, const lg_dataset *train, const lg_dataset *test, const lg_train_opts *o,
                       lg_train_result *res);

/* Test accuracy of m on ds. */
double lg_vit_accuracy(lg_vit *m, const lg_dataset *ds);

/* One optimiser update of every parameter from m->grads (step ≥ 1). */
void lg_vit_step(lg_vit *m, const lg_optim_opts *o, long step);

#endif
