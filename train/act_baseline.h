/* act_baseline.h — float forward/backward of the annealed baselines of
 * (DESIGN.md §1 "Annealed baselines"), called by lg_act_forward /
 * lg_act_backward (train/act.h) for LG_ACT_SWISH and LG_ACT_PRELU; not
 * meant to be called directly.
 *
 * Swish-β: f(x;β) = x·σ(βx), ∂f/∂x = σ(βx) + βx·σ(βx)(1 − σ(βx)),
 *          ∂f/∂β = x²·σ(βx)(1 − σ(βx)).
 * PReLU:   f(x;a) = x (x > 0), a·x (x ≤ 0); ∂f/∂x = 1 or a (a at x = 0),
 *          ∂f/∂a = min(x, 0).
 * Same contract as train/act.h: outputs first, the backward ACCUMULATES
 * into dinp[n] and *dparam (which may be NULL); out may alias inp; nothing
 * allocated.
 */
#ifndef LG_TRAIN_ACT_BASELINE_H
#define LG_TRAIN_ACT_BASELINE_H

#include <stddef.h>

void lg_act_swish_forward(float *out, const float *inp, float beta, size_t n);
void lg_act_swish_backward(float *dinp, float *dbeta, const float *dout, const float *inp, float beta, size_t n);
void lg_act_prelu_forward(float *out, const float *inp, float a, size_t n);
void lg_act_prelu_backward(float *dinp, float *da, const float *dout, const float *inp, float a, size_t n);

#endif
