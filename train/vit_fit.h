/* vit_fit.h — training a ViT (train/vit.h) as its graph: lg_vit_to_net,
 * then the graph trainer (train/loop.h lg_train_run) through the node
 * entries in the ViT's parameterisation (train/vit_net.h
 * lg_vit_model_param), so every step is train/vit.c's step, up to float
 * rounding and AdamW's ε (DESIGN.md §1
 * "Training through the node entries"); then the trained graph read back
 * (lg_net_to_vit). The one way `lgelu train`/`anneal` and the study train
 * a ViT.
 *
 * Ownership: m is the caller's; on success it is replaced by the trained
 * ViT (same spec and max_batch; lg_vit_free releases it as before), on
 * failure it is left as it was. Datasets and options are borrowed.
 */
#ifndef LG_TRAIN_VIT_FIT_H
#define LG_TRAIN_VIT_FIT_H

#include "core/idx.h"
#include "train/loop.h"
#include "train/vit.h"

/* Train m on train (test may be NULL) with lg_train_run's options; o->hook
 * (an lg_model hook such as lg_anneal_hook, or NULL) is called at every step
 * after the parameterisation is set. Errors as lg_train_run's. */
lg_status lg_vit_fit(lg_vit *m, const lg_dataset *train, const lg_dataset *test, const lg_train_opts *o,
                     lg_train_result *res);

#endif
