/* schedule.h — the annealing schedule of DESIGN.md §1 as a training hook.
 *
 * Until the switch step floor(start·total) λ is learned; from the switch on,
 * s is frozen and each lgelu layer's λ moves linearly, step by step, from its
 * value at the switch to λ_target, reaching λ_target exactly at the last
 * step (step total−1) while the weights keep training. start = 1 means no
 * annealing; start = 0 anneals from the very first step (`lgelu anneal`).
 * The annealed baselines (DESIGN.md §1 "Annealed baselines") follow
 * the same schedule: a swish layer's β moves to β_target, the β with the same
 * Heaviside tolerance E as λ_target (∫|σ(βx) − H(x)|dx = 2·ln2/β = E, so
 * β_target = 2·ln2/E = ln2·√(2π)·λ_target ≈ 277.3 for E = 0.005), and a
 * prelu layer's slope a moves to 0 (relu itself).
 * The schedule object is a plain value owned by the caller; it records the
 * parameter of each layer at the switch (up to LG_ANNEAL_MAX_LAYERS layers).
 */
#ifndef LG_ANNEAL_SCHEDULE_H
#define LG_ANNEAL_SCHEDULE_H

#include "train/model.h"
#include "train/vit.h"

#define LG_ANNEAL_MAX_LAYERS LG_NET_MAX_LAYERS /* every net lg_net_build allows (deep residual nets) */
/* Default Heaviside tolerance E and the λ_target = 2/(E·√(2π)) it gives. */
#define LG_ANNEAL_DEFAULT_TOLERANCE 0.005

typedef struct lg_anneal_schedule {
    double start;          /* switch fraction in [0,1] */
    double lambda_target;  /* ≥ 1 */
    long switch_step;      /* set on the first call: floor(start·total) */
    int started;           /* 1 once λ at the switch has been recorded */
    double lambda0[LG_ANNEAL_MAX_LAYERS]; /* λ of each layer at the switch */
} lg_anneal_schedule;

/* λ_target = 2/(E·√(2π)) for a Heaviside tolerance E > 0. */
double lg_anneal_lambda_target(double tolerance);
/* β_target = 2·ln2/E for a Heaviside tolerance E > 0 (swish). */
double lg_anneal_beta_target(double tolerance);
/* The end point of annealing for a layer of kind a, given the schedule's
 * λ_target: λ_target for lgelu, the β of the same tolerance E =
 * 2/(λ_target·√(2π)) for swish, 0 for prelu; NAN for other kinds. */
double lg_anneal_target_for(lg_act a, double lambda_target);

/* Validate and initialise: start in [0,1], lambda_target ≥ 1 finite, a
 * network of at most LG_ANNEAL_MAX_LAYERS layers. */
lg_status lg_anneal_schedule_init(lg_anneal_schedule *s, double start, double lambda_target, int n_layers);

/* floor(start·total), clamped to [0, total]. */
long lg_anneal_switch_step(double start, long total);

/* λ at step (0-based) for a layer whose λ at the switch was lambda0:
 * lambda0 + (target − lambda0)·(step − sw + 1)/(total − sw) for step ≥ sw,
 * exactly target at step total−1; lambda0 before the switch. */
double lg_anneal_lambda_at(double lambda0, double target, long sw, long total, long step);

/* Make every gelu layer of net an lgelu layer at λ = 1 (its s is frozen
 * while annealing). Fails with LG_ERR_ARG, naming `name`, if net has no
 * gelu, lgelu, swish or prelu layer (relu nets are already piecewise linear). */
lg_status lg_anneal_prepare_net(lg_net *net, const char *name);

/* The training hook (lg_train_hook_fn); ctx is an lg_anneal_schedule. */
void lg_anneal_hook(void *ctx, lg_model *m, long step, long total);

/* The same schedule for a ViT (lg_vit_hook_fn): the MLP parameter of block
 * l plays the part of layer l's (the schedule is initialised for depth
 * layers); from the switch on m->act_frozen is set. */
void lg_anneal_vit_hook(void *ctx, lg_vit *m, long step, long total);

#endif
