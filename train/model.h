/* model.h — the trainer's float copy of an lg_net: parameters, gradients,
 * optimiser moments and activations, one allocation per role (llm.c's
 * malloc_and_point_parameters), plus MLP forward/backward with softmax
 * cross-entropy (mean over the batch).
 *
 * Flat parameter layout: W_0 [n_out][n_in] row-major, b_0 [n_out], W_1, b_1,
 * (a conv layer: its kernel [c_out][c_in·kh·kw] and one bias per channel
 * [c_out] — the bias is tied over positions; lg_model_init takes each
 * channel's first position from the net and lg_model_to_net writes it to
 * every position),
 * ..., then s [n_layers] (one raw hardness parameter per layer; lgelu and
 * swish layers use theirs through λ (β) = 1 + softplus(s/t), prelu layers
 * hold their slope a = s directly; the others ignore it). grads, mom1 and
 * mom2 have the same layout, so an optimiser loops over one flat array.
 * λ lives beside the parameters as a double per layer: λ = 1 + softplus(s/t) while learned (DESIGN.md §1; for
 * swish the same field holds β, for prelu the slope a = s); a
 * training hook may fix it (lambda_fixed = 1), which also freezes s.
 *
 * The model owns every array; lg_model_free releases them. The lg_net it is
 * built from is only read; lg_model_to_net writes back (float → double is
 * exact).
 */
#ifndef LG_TRAIN_MODEL_H
#define LG_TRAIN_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "core/net.h"

typedef struct lg_mlayer {
    int n_in, n_out;
    lg_act act;
    lg_conv conv;         /* conv layer geometry (c_out = 0: dense) */
    size_t n_w, n_b;      /* sizes of W and b */
    float *W, *b, *s;     /* into params: [n_out][n_in], [n_out], [1] */
    float *dW, *db, *ds;  /* into grads, same shapes */
    float *z, *a;         /* into acts: [max_batch][n_out] pre- and post-activation */
    float *col;           /* conv: into acts, [c_in·kh·kw][max_batch·h_out·w_out] im2col of the last forward */
    float *keep;          /* into acts: room for keep_count·max_batch·n_out floats, what the
                           * activation's backward needs (train/act.h; a batch of B uses
                           * [keep_count][B·n_out]), or NULL */
    double lambda;        /* current hardness (1 unless lgelu) */
    float dlambda;        /* ∂L/∂λ of the last backward */
    int lambda_fixed;     /* 1: λ set by a hook, s frozen */
} lg_mlayer;

typedef struct lg_model {
    int n_in, n_layers, max_batch, max_width;
    double t;             /* temperature of λ = 1 + softplus(s/t) */
    lg_mlayer *layers;    /* [n_layers] */
    float *in_sub, *in_div; /* [n_in] or NULL: input normalisation copied from the net */
    size_t n_params;      /* all W, b and the n_layers s entries */
    float *params, *grads, *mom1, *mom2; /* [n_params] each */
    size_t n_acts;
    float *acts;          /* one allocation: x, every z and a, probs, two deltas */
    float *x;             /* [max_batch][n_in] the gathered, normalised input batch */
    float *probs;         /* [max_batch][n_out] softmax of the logits */
    float *d0, *d1;       /* [max_batch][max_width] backward scratch */
    float *dcol;          /* [max over conv layers of c_in·kh·kw · max_batch·h_out·w_out] backward scratch */
    float *zt;            /* [max_batch·max_width] a conv's z (or dz) as [c_out][batch·positions] */
} lg_model;

/* Build a model for batches of up to max_batch rows from net (dense and
 * conv layers; a conv is im2col + sgemm over the whole batch). λ and s are
 * taken from the net as they are. */
lg_status lg_model_init(lg_model *m, const lg_net *net, int max_batch);
void lg_model_free(lg_model *m);

/* Copy rows idx[0..B) of X [..][n_in] into m->x, normalised like the net. */
void lg_model_gather(lg_model *m, const float *X, const uint32_t *idx, int B);

/* Forward pass of the first B rows of m->x (1 ≤ B ≤ max_batch; every label
 * must be < n_out, which lg_train_run checks up front). If labels is non-NULL, *loss
 * (may be NULL) receives the mean cross-entropy and *correct (may be NULL)
 * the number of argmax hits. Logits end in layers[n_layers−1].a. */
void lg_model_forward(lg_model *m, int B, const uint8_t *labels, double *loss, int *correct);

/* The linear part of layer L with the weights W (L's shape: L->W, or a
 * same-shaped array such as |W|), over B rows, for terms other than the
 * network's own pass (the RS loss). A conv goes through im2col into m->dcol
 * and m->zt, which these overwrite (the forward's L->col is kept):
 *   lg_model_linear:    y[B][n_out] = W·x (no bias);
 *   lg_model_linear_t:  gx[B][n_in] = Wᵀ·gy;
 *   lg_model_linear_dw: G[n_w] = Σ_rows gy ⊗ x, the gradient of Σ gy·(W·x)
 *                       with respect to W (overwrites G);
 *   lg_model_bias_add:  y += b (a conv's per channel);
 *   lg_model_bias_grad: L->db += the bias gradient of gy. */
void lg_model_linear(lg_model *m, const lg_mlayer *L, const float *W, const float *x, int B, float *y);
void lg_model_linear_t(lg_model *m, const lg_mlayer *L, const float *W, const float *gy, int B, float *gx);
void lg_model_linear_dw(lg_model *m, const lg_mlayer *L, const float *gy, const float *x, int B, float *G);
void lg_model_bias_add(const lg_mlayer *L, int B, float *y);
void lg_model_bias_grad(lg_mlayer *L, const float *gy, int B);

/* Set every gradient (and dlambda) to zero. */
void lg_model_zero_grad(lg_model *m);

/* Backward of the last forward (same B, labels): ACCUMULATES into grads;
 * ds = ∂L/∂λ · σ(s/t)/t for learned lgelu and swish layers, ∂L/∂a for
 * learned prelu layers, 0 otherwise. */
void lg_model_backward(lg_model *m, int B, const uint8_t *labels);

/* Recompute λ = 1 + softplus(s/t) for learned (not fixed) lgelu and swish
 * layers, and a = s for learned prelu layers. */
void lg_model_sync_lambda(lg_model *m);

/* 1 if every parameter is finite. */
int lg_model_finite(const lg_model *m);

/* Write W, b, s and λ back into net (which must have the same shapes; the
 * activations are set to the model's, e.g. gelu → lgelu after annealing).
 * A fixed λ is stored exactly and s = t·log(e^{λ−1} − 1) beside it. */
lg_status lg_model_to_net(const lg_model *m, lg_net *net);

/* He (relu, gelu, lgelu) or Xavier (identity) normal initialisation of every
 * W of net, biases 0, lgelu/swish s = 0 (λ = 1 + ln 2), prelu a = s = 0.25,
 * from a seeded lg_rng. The values are float-representable so the model
 * copy is exact. Same as lg_init_weights(net, seed, LG_INIT_HE)
 * (train/init.h has the others). */
void lg_model_init_weights(lg_net *net, uint64_t seed);

#endif
