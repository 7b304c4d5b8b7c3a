/* vit_train.h — the training loop of a ViT (train/vit.h): seeded shuffling,
 * mini-batches, SGD or AdamW with the warm-up of lg_optim_opts, per-epoch
 * report (samples per second of wall time and of process CPU time, which a
 * loaded machine does not dilute) and CSV log, NaN/Inf guard, an optional per-step hook (annealing
 * lives outside train/ and plugs in here). The MLP parameter of each block
 * steps as itself with rate c·η (λ and β floored at LG_LAMBDA_FLOOR; no
 * weight decay) unless m->act_frozen.
 * Same seed and thread count ⇒ bit-identical weights. Datasets and options
 * are borrowed; the model is updated in place. `lgelu train`/`anneal` and
 * the study train a ViT as its graph instead (train/vit_fit.h), which steps
 * as this loop (up to float rounding and AdamW's ε); it stays as the
 * reference that is compared against.
 */
#ifndef LG_TRAIN_VIT_TRAIN_H
#define LG_TRAIN_VIT_TRAIN_H

#include "core/idx.h"
#include "train/loop.h"
#include "train/vit.h"

/* Called at the start of every step, before its forward pass, with the
 * 0-based step and the total number of steps; it may set the MLP
 * parameters (params[blk[l][LG_VB_ACT]]) and m->act_frozen. */
typedef void (*lg_vit_hook_fn)(void *ctx, lg_vit *m, long step, long total);

/* Train m on train (test may be NULL) with o's epochs, batch (≤ m's
 * max_batch), optim, seed, threads, out (per-epoch lines) and log_path (CSV
 * per epoch: epoch,step,loss,train_acc,test_acc,lambda_0..,samples_per_s);
 * o's hook is not used (it takes an lg_model): hook (or NULL) is called
 * with ctx instead. Errors: LG_ERR_ARG (options, shapes, labels),
 * LG_ERR_NUMERIC (divergence), LG_ERR_IO (log file). */
lg_status lg_vit_train(lg_vit *m, const lg_dataset *train, const lg_dataset *test, const lg_train_opts *o,
                       lg_vit_hook_fn hook, void *ctx, lg_train_result *res);

/* Test accuracy of m on ds. */
double lg_vit_accuracy(lg_vit *m, const lg_dataset *ds);

/* One optimiser update of every parameter from m->grads (step ≥ 1). */
void lg_vit_step(lg_vit *m, const lg_optim_opts *o, long step);

#endif
