/* model.h — the trainer's float copy of an lg_net: parameters, gradients,
 * optimiser moments and activations, one allocation per role (llm.c's
 * malloc_and_point_parameters), plus MLP forward/backward with softmax
 * cross-entropy (mean over the batch).
 *
 * Flat parameter layout: W_0 [n_out][n_in] row-major (a node's weights:
 * layernorm's γ, β), b_0 [n_out] (none for a node), the
 * weights of layer 0's further terms (a graph's shortcuts, in term order;
 * none for a chain or an index map), W_1, b_1,
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
 * built from is only read, and borrowed for the model's life (the forward and
 * backward visit its terms); lg_model_to_net writes back (float → double is
 * exact). A graph (core/net.h) trains through the same calls: each layer
 * sums its terms, each node's gradient sums over its consumers.
 */
#ifndef LG_TRAIN_MODEL_H
#define LG_TRAIN_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "core/net.h"

/* One linear term of a layer (core/net.h lg_linear) in float: a dense
 * matrix, a conv kernel or an index map, applied to the output of node src
 * (LG_NET_INPUT: the normalised input batch m->x). */
#define LG_MTERM_FIELDS                                                                            \
    lg_layer_kind kind;                                                                            \
    int n_in, n_out;                                                                               \
    int src;          /* LG_NET_INPUT or an earlier layer */                                       \
    lg_conv conv;     /* conv: geometry; else zero (c_out = 0) */                                  \
    size_t n_w;       /* weights: n_out·n_in dense, c_out·c_in·kh·kw conv, 0 index */              \
    float *W, *dW;    /* into params, grads: [n_out][n_in] or [c_out][c_in·kh·kw]; NULL index */   \
    const int *map;   /* index: [n_out] into m->maps (out[o] = in[map[o]], 0 where −1); else NULL */ \
    float *col;       /* conv: into acts, [c_in·kh·kw][max_batch·h_out·w_out] im2col of the last forward */
typedef struct lg_mterm {
    LG_MTERM_FIELDS
} lg_mterm;

/* A layer: z = Σ_t A_t·out(src_t) + b, a = act(z) (core/net.h). Term 0 is
 * the layer's own (its fields are the layer's: L->W, L->conv, L->n_in, …,
 * or L->lin as an lg_mterm), so a chain layer reads as it always has;
 * further terms (residual shortcuts, Concat parts, skips) are
 * terms[0..n_terms). The bias is one per channel when term 0 is a conv. */
typedef struct lg_mlayer {
    union {
        lg_mterm lin; /* term 0 */
        struct {
            LG_MTERM_FIELDS
        };
    };
    int n_terms;          /* further terms (0 for a chain layer) */
    lg_mterm *terms;      /* [n_terms] into m->terms, or NULL */
    lg_act act;
    size_t n_b;           /* size of b (0 for a node: its bias is 0) */
    size_t b_div;         /* output j adds b[(j / b_div) % n_b] (lg_mlayer_bias_at): per channel of a
                           * conv term 0 (b_div = h_out·w_out), per row of a per-token map's block
                           * (b_div = 1, n_b = its rows), else per output */
    float *b, *s;         /* into params: [n_b], [1] */
    float *db, *ds;       /* into grads, same shapes */
    float *z, *a;         /* into acts: [max_batch][n_out] pre- and post-activation */
    float *da;            /* into acts: [max_batch][n_out] ∂L/∂a, summed over the layer's consumers (backward) */
    float *keep;          /* into acts: room for keep_count·max_batch·n_out floats, what the
                           * activation's backward needs (train/act.h; a batch of B uses
                           * [keep_count][B·n_out]), or NULL */
    float *nkeep;         /* into acts: a node's kept arrays (train/node.h keep, [max_batch·keep]), or NULL */
    const struct lg_train_op *op; /* a node's training entry (train/node.h), or NULL: a term sum */
    const int *plan;      /* into m->plans: the node's plan (train/node.h), or NULL */
    double lambda;        /* current hardness (1 unless lgelu) */
    float dlambda;        /* ∂L/∂λ of the last backward */
    int lambda_fixed;     /* 1: λ set by a hook, s frozen */
} lg_mlayer;

/* Number of linear terms of L (1 + L->n_terms) and term t of it (0: &L->lin). */
static inline int lg_mlayer_n_lin(const lg_mlayer *L) { return 1 + L->n_terms; }
static inline lg_mterm *lg_mlayer_term(lg_mlayer *L, int t) { return t == 0 ? &L->lin : &L->terms[t - 1]; }
/* Index into L->b of output j's bias (L->n_b > 0). */
static inline size_t lg_mlayer_bias_at(const lg_mlayer *L, size_t j) { return j / L->b_div % L->n_b; }

typedef struct lg_model {
    const lg_net *net;    /* the net it was built from (borrowed): the forward and backward visit its
                           * layers' terms (core/traverse.h); it must outlive the model, its terms unchanged */
    int n_in, n_layers, max_batch, max_width;
    double t;             /* temperature of λ = 1 + softplus(s/t) */
    lg_mlayer *layers;    /* [n_layers] */
    lg_mterm *terms;      /* every layer's further terms, layer by layer, or NULL */
    int *maps;            /* every index map (copied from the net), or NULL */
    int *plans;           /* every node's plan (train/node.h), or NULL */
    float *in_sub, *in_div; /* [n_in] or NULL: input normalisation copied from the net */
    size_t n_params;      /* all W, b and the n_layers s entries */
    float *params, *grads, *mom1, *mom2; /* [n_params] each */
    size_t n_acts;
    float *acts;          /* one allocation: x, every z, a, da, probs, one delta */
    float *x;             /* [max_batch][n_in] the gathered, normalised input batch */
    float *probs;         /* [max_batch][n_out] softmax of the logits */
    float *d0;            /* [max_batch][max_width] backward scratch (∂L/∂z of the current layer) */
    float *dcol;          /* [max over conv terms of c_in·kh·kw · max_batch·h_out·w_out] backward scratch */
    float *zt;            /* [max_batch·max_width] a conv's z (or dz) as [c_out][batch·positions] */
    float *dx;            /* [max_batch][n_in] ∂L/∂x (of the normalised input m->x), written by the
                           * backward when want_dx is set (else scratch) */
    int want_dx;          /* 1: the backward computes dx (the caller sets it; 0 after init) */
    float *p_scale, *p_count; /* [n_params] each (one allocation, p_scale's), or NULL (0 after init): the
                           * parameterisation of a reference model the optimiser steps as (below) */
} lg_model;

/* A reference parameterisation (m->p_scale, m->p_count; lg_vit_model_param
 * sets it for the graph of a ViT, train/vit_net.h): parameter i is a·p of a
 * reference model's parameter p (a = p_scale[i] > 0), or the sum of c =
 * p_count[i] reference parameters that always receive the same gradient, or
 * (c = 0) a redundant copy held fixed. lg_optim_step then moves it as the
 * reference's optimiser moves the reference: its rate is multiplied by
 * k = c·a² (SGD) or c·a (AdamW, whose step ignores the gradient's scale) and
 * its weight decay divided by k, so training the model is training the
 * reference (up to float rounding and AdamW's ε). NULL: every parameter is
 * its own (a = c = 1). */

/* Output of node `node` over the batch: m->x for LG_NET_INPUT, else layers[node].a. */
static inline float *lg_model_node(lg_model *m, int node) { return node < 0 ? m->x : m->layers[node].a; }

/* Build a model for batches of up to max_batch rows from net, a chain or a
 * graph (dense, conv, index-map and per-token-map terms — a conv is im2col +
 * sgemm over the whole batch, a per-token map one sgemm over batch·tokens
 * with its bias tied over the tokens — and the nodes with a training entry,
 * train/node.h: product, softmax, layernorm with its γ and β). λ and s are taken from the net as they are. The model keeps
 * a pointer to net (m->net): net must outlive it and keep its layers and
 * terms (lg_model_to_net writes only its values). */
lg_status lg_model_init(lg_model *m, const lg_net *net, int max_batch);
void lg_model_free(lg_model *m);

/* Copy rows idx[0..B) of X [..][n_in] into m->x, normalised like the net. */
void lg_model_gather(lg_model *m, const float *X, const uint32_t *idx, int B);

/* Forward pass of the first B rows of m->x (1 ≤ B ≤ max_batch; every label
 * must be < n_out, which lg_train_run checks up front). If labels is non-NULL, *loss
 * (may be NULL) receives the mean cross-entropy and *correct (may be NULL)
 * the number of argmax hits. Logits end in layers[n_layers−1].a. */
void lg_model_forward(lg_model *m, int B, const uint8_t *labels, double *loss, int *correct);

/* One linear term T with the weights W (T's shape: T->W, or a same-shaped
 * array such as |W|; an index map ignores W and is its own |A|), over B
 * rows, for passes other than the network's own (the RS loss). A conv goes
 * through im2col into m->dcol and m->zt, which these overwrite (the
 * forward's T->col is kept):
 *   lg_model_linear:    y[B][n_out] = W·x (no bias), or y += W·x with accumulate;
 *   lg_model_linear_t:  gx[B][n_in] = Wᵀ·gy, or gx += Wᵀ·gy with accumulate;
 *   lg_model_linear_dw: G[n_w] = Σ_rows gy ⊗ x, the gradient of Σ gy·(W·x)
 *                       with respect to W (overwrites G; nothing for an index map);
 *   lg_model_bias_add:  y += b (a conv's per channel);
 *   lg_model_bias_grad: L->db += the bias gradient of gy. */
void lg_model_linear(lg_model *m, const lg_mterm *T, const float *W, const float *x, int B, float *y, int accumulate);
void lg_model_linear_t(lg_model *m, const lg_mterm *T, const float *W, const float *gy, int B, float *gx,
                       int accumulate);
void lg_model_linear_dw(lg_model *m, const lg_mterm *T, const float *gy, const float *x, int B, float *G);
void lg_model_bias_add(const lg_mlayer *L, int B, float *y);
void lg_model_bias_grad(lg_mlayer *L, const float *gy, int B);

/* Set every gradient (and dlambda) to zero. */
void lg_model_zero_grad(lg_model *m);

/* Backward of the last forward (same B, labels): ACCUMULATES into grads;
 * a node read by several layers sums its gradient from all of them before
 * its own backward (DESIGN.md §1 "Training through a sum node"); a node
 * layer goes through its training entry (train/node.h); with want_dx set,
 * m->dx receives ∂L/∂x of the normalised input batch (written, not added);
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
