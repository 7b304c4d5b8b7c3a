/* act.h — batched float forward/backward of the hidden activations, for
 * training (DESIGN.md §1).
 *
 * f(x;λ) = x·Φ(λx) (lgelu; gelu is λ = 1), ∂f/∂x = Φ(λx) + λx·φ(λx),
 * ∂f/∂λ = x²·φ(λx); relu max(0,x) (derivative 0 at x = 0); identity x;
 * sigmoid σ(x) = 1/(1+e^{−x}), σ' = σ(1−σ) (no λ); swish x·σ(λx) and prelu
 * (slope λ below 0), whose λ-gradients are in train/act_baseline.h. Unknown
 * kinds act as identity.
 * Outputs first, as llm.c: forward writes out[n]; backward ACCUMULATES into
 * dinp[n] and *dlambda (zeroing is the caller's job). dlambda may be NULL
 * when the λ-gradient is not needed. No allocation, nothing to free; the
 * arrays are borrowed. out may alias inp for the forward pass.
 */
#ifndef LG_TRAIN_ACT_H
#define LG_TRAIN_ACT_H

#include <stddef.h>

#include "core/act.h"

void lg_act_forward(float *out, const float *inp, lg_act kind, float lambda, size_t n);

void lg_act_backward(float *dinp, float *dlambda, const float *dout, const float *inp, lg_act kind, float lambda,
                     size_t n);

#endif
