/* rs.h — the ReLU-stability (RS) loss of Xiao et al. (ICLR 2019) on the
 * training ε-ball: a verification-aware training term that pushes every
 * hidden ReLU of the network that will be verified towards being stable
 * (DESIGN.md §1, "Verification-aware training: the RS loss").
 *
 * For each example x of a batch, interval arithmetic through the network's
 * ReLU substitution (the same weights with every hidden activation replaced
 * by ReLU: the net `lgelu verify` proves things about) bounds every hidden
 * pre-activation over the box {x' : ‖x' − x‖∞ ≤ ε} ∩ [0,1]^n:
 *   input:    a⁻ = max(x − ε, 0), a⁺ = min(x + ε, 1), then the net's input
 *             normalisation (x − sub)/div
 *   layer k:  μ = (a⁺ + a⁻)/2, ρ = (a⁺ − a⁻)/2,
 *             l = Wμ + b − |W|ρ,  u = Wμ + b + |W|ρ
 *   next:     a⁻ = max(l, 0), a⁺ = max(u, 0)
 * and the loss is
 *   L_RS = w · (1/B) Σ_examples Σ_hidden neurons −tanh(1 + l·u),
 * close to +w for an unstable neuron (l < 0 < u, l·u ≪ 0) and to −w for a
 * stable one. Its gradient reaches W and b of every hidden layer (not λ or s,
 * and not the output layer, whose bounds do not enter the loss).
 *
 * Dense and conv layers alike: each layer's linear part is the model's
 * (lg_model_linear and its adjoints), applied to μ with W and to ρ with |W|.
 * A graph (core/net.h): a layer's centre and radius are the sums over its
 * terms of A_t·μ and |A_t|·ρ of each term's source node, and a node read by
 * several layers sums the gradients of its box from all of them. A hidden
 * layer with the identity activation (the sum of a Transformer-style MLP
 * block) has no ReLU in the substitution: it adds no loss term and passes
 * its box [l, u] on unclamped.
 *
 * Ownership: lg_rs_init allocates the scratch, sized once from the model's
 * shapes and batch (one allocation); lg_rs_free releases it. The model is
 * borrowed.
 */
#ifndef LG_TRAIN_RS_H
#define LG_TRAIN_RS_H

#include <stddef.h>

#include "train/model.h"

typedef struct lg_rs {
    int n_hidden;          /* model layers − 1 */
    float *buf;            /* the one allocation */
    float **mu, **rho;     /* [n_hidden] → [max_batch][width of node k − 1]: centre and radius of the box of
                            * node k − 1 (k = 0: the input), the input box of a chain's layer k */
    float **dmu, **drho;   /* [n_hidden] → same shapes: ∂L/∂μ, ∂L/∂ρ summed over the node's consumers */
    float **lo, **hi;      /* [n_hidden] → [max_batch][n_out of layer k]: pre-activation bounds l, u */
    float *g_lo, *g_hi;    /* [max_batch][max_width]: ∂L/∂l, ∂L/∂u of the current layer */
    float *absw;           /* [max n_w over the hidden layers' terms]: |W|, then a gradient product */
    unsigned char *set;    /* [n_hidden]: dmu[k], drho[k] hold a gradient */
} lg_rs;

lg_status lg_rs_init(lg_rs *rs, const lg_model *m);
void lg_rs_free(lg_rs *rs);

/* The RS loss of the first B rows of m->x (as lg_model_gather left them:
 * normalised) with radius eps (in [0,1] input units) and weight w. With
 * grad = 1 its gradient is ACCUMULATED into m's dW and db. *unstable (may be
 * NULL) receives the number of hidden neurons with l < 0 < u, summed over
 * the B examples. Needs a model with at least one hidden layer (else 0). */
double lg_rs_loss(lg_rs *rs, lg_model *m, int B, double eps, double w, int grad, long *unstable);

#endif
