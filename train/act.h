/* act.h — batched float forward/backward of the hidden activations, for
 * training (DESIGN.md §1), through the activation table of core/act.h:
 * each kind's kernels are its entry's fwd/bwd (core/act_float.h has their
 * formulas). Unknown kinds act as identity.
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

/* What the backward of a kind needs, kept by the forward: floats per
 * element of a keep array (the entry's keep: 2 for lgelu and gelu, ∂f/∂x
 * and ∂f/∂λ; 0 for the rest, whose backward is cheap from inp alone). */
size_t lg_act_keep_count(lg_act kind);

/* lg_act_forward that also fills keep[lg_act_keep_count(kind)·n] (may be
 * NULL: nothing kept); out must not alias inp when keeping. */
void lg_act_forward_keep(float *out, float *keep, const float *inp, lg_act kind, float lambda, size_t n);

/* lg_act_backward from what lg_act_forward_keep kept for the same inp and
 * λ (keep NULL: recomputed from inp). Same accumulation semantics. */
void lg_act_backward_kept(float *dinp, float *dlambda, const float *dout, const float *keep, const float *inp,
                          lg_act kind, float lambda, size_t n);

#endif
