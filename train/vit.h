/* vit.h — float forward/backward of a ViT/DeiT-style pre-norm encoder
 * (core/arch_vit.h for the shape; DESIGN.md §1 "Training a Transformer" for
 * every formula): patch embedding, class token and learned position
 * embedding, L blocks of LayerNorm → multi-head self-attention → residual,
 * LayerNorm → MLP with the hidden activation → residual, final LayerNorm,
 * pooling (class token or mean) and a dense head; mean softmax
 * cross-entropy loss.
 *
 * All parameters live in one flat float array (params, grads and the two
 * optimiser moments beside it); lg_vit_param_ranges lists them with their
 * role. The MLP parameter of block l (λ for lgelu, β for swish, the slope
 * for prelu) is stored as itself in params[p_act[l]], its gradient
 * ∂L/∂p in grads; kinds without a parameter keep 0 there.
 *
 * Ownership: lg_vit_init allocates everything; lg_vit_free releases it (a
 * zeroed model frees as a no-op). The input batch x[B][C·H·W] is copied in
 * by lg_vit_gather.
 */
#ifndef LG_TRAIN_VIT_H
#define LG_TRAIN_VIT_H

#include <stddef.h>
#include <stdint.h>

#include "core/act.h"
#include "core/arch_vit.h"
#include "core/status.h"

/* Offsets of one block's parameters in params. */
enum {
    LG_VB_G1, LG_VB_B1N, LG_VB_WQ, LG_VB_BQ, LG_VB_WK, LG_VB_BK, LG_VB_WV, LG_VB_BV, LG_VB_WO, LG_VB_BO,
    LG_VB_G2, LG_VB_B2N, LG_VB_W1, LG_VB_B1, LG_VB_W2, LG_VB_B2, LG_VB_ACT, LG_VB_N
};
/* Offsets of the global parameters. */
enum { LG_VG_WP, LG_VG_BP, LG_VG_CLS, LG_VG_POS, LG_VG_GF, LG_VG_BF, LG_VG_WH, LG_VG_BH, LG_VG_N };

typedef struct lg_vit_range {
    size_t off, n;
    int decay;     /* a weight matrix: AdamW's decoupled weight decay applies */
    int act;       /* the MLP parameter of a block (λ, β or slope); else 0 */
} lg_vit_range;

typedef struct lg_vit_block_acts {
    float *x;                /* [BT][D] block input (the previous block's output) */
    float *y1, *h1, *r1;     /* LN₁ output, x̂, 1/σ */
    float *q, *k, *v, *p, *o;
    float *xm;               /* [BT][D] after the attention residual */
    float *y2, *h2, *r2;
    float *z, *a, *keep;     /* [BT][M] MLP pre-activation, activation, what its backward keeps */
} lg_vit_block_acts;

typedef struct lg_vit {
    lg_vit_spec spec;
    lg_act act;
    int T, NP, PL, D, M;      /* tokens, patches, floats per patch, width, MLP width */
    int max_batch;
    size_t n_params;
    float *params, *grads, *mom1, *mom2;
    size_t glob[LG_VG_N];
    size_t (*blk)[LG_VB_N];   /* [depth][LG_VB_N] */
    int n_ranges;
    lg_vit_range *ranges;
    int act_frozen;           /* 1: the MLP parameters are set from outside (annealing), not learned */
    /* activations for max_batch */
    float *x, *patches, *xout, *yf, *hf, *rf, *pooled, *logits;
    lg_vit_block_acts *ba;    /* [depth] */
    /* backward scratch */
    float *dx, *dy, *dq, *dk, *dv, *dO, *da, *dz, *dP, *dE, *dpool, *dlog;
    float *mem;               /* one allocation for every activation above */
} lg_vit;

/* Allocate a model for spec with MLP activation act and batches up to
 * max_batch; parameters zero (lg_vit_init_weights fills them). */
lg_status lg_vit_init(lg_vit *m, const lg_vit_spec *spec, lg_act act, int max_batch);
void lg_vit_free(lg_vit *m);

/* Xavier-normal linear maps, class token and position embedding N(0, 0.02²),
 * LayerNorm γ = 1, β = 0, biases 0, λ = 1 + ln 2 (lgelu), β = 1 + ln 2
 * (swish), slope 0.25 (prelu), 1 (gelu); from a seeded lg_rng. */
void lg_vit_init_weights(lg_vit *m, uint64_t seed);

/* Copy rows idx[0..B) of X[n][C·H·W] into the batch. */
void lg_vit_gather(lg_vit *m, const float *X, const uint32_t *idx, int B);

/* Forward of the batch: logits[B][n_out]; with labels also *loss (mean
 * cross-entropy) and *correct (argmax hits); either may be NULL. */
void lg_vit_forward(lg_vit *m, int B, const uint8_t *labels, double *loss, int *correct);

/* Backward of the last forward with the same B and labels: ACCUMULATES
 * ∂loss/∂params into grads. */
void lg_vit_backward(lg_vit *m, int B, const uint8_t *labels);

void lg_vit_zero_grad(lg_vit *m);

/* The MLP parameter of block l (λ, β or slope; 1 for gelu, 0 without one). */
float lg_vit_act_param(const lg_vit *m, int l);

/* 1 if every parameter is finite. */
int lg_vit_finite(const lg_vit *m);

#endif
