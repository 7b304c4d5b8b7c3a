/* init.c — He / Xavier / PyTorch-default weight initialisation. */
#include "train/init.h"

#include <math.h>
#include <string.h>

#include "core/act.h"
#include "core/net.h"
#include "core/rng.h"

int lg_init_parse(const char *name, lg_init_kind *out)
{
    if (strcmp(name, "he") == 0) *out = LG_INIT_HE;
    else if (strcmp(name, "xavier") == 0) *out = LG_INIT_XAVIER;
    else if (strcmp(name, "torch") == 0) *out = LG_INIT_TORCH;
    else return -1;
    return 0;
}

const char *lg_init_name(lg_init_kind kind)
{
    switch (kind) {
    case LG_INIT_HE: return "he";
    case LG_INIT_XAVIER: return "xavier";
    case LG_INIT_TORCH: return "torch";
    }
    return "?";
}

/* Draw the weights of one term A of a layer with activation act (index maps have none). */
static void lg_init_term(lg_linear *A, lg_act act, lg_rng *r, lg_init_kind kind)
{
    size_t nw = lg_linear_n_weights(A);
    /* a conv's fan-in is c_in·kh·kw, its fan-out c_out·kh·kw */
    const lg_conv *c = &A->conv;
    int conv = A->kind == LG_LAYER_CONV2D;
    double fan_in = conv ? (double)c->c_in * c->kh * c->kw : (double)A->n_in;
    double fan_out = conv ? (double)c->c_out * c->kh * c->kw : (double)A->n_out;
    if (kind == LG_INIT_TORCH) {
        /* U(−a, a), a = 1/√fan_in: (2u − 1)·a, u ∈ [0, 1) */
        double a = 1.0 / sqrt(fan_in);
        for (size_t i = 0; i < nw; i++) A->W[i] = (double)(float)((2.0 * lg_rng_uniform(r) - 1.0) * a);
    } else {
        int xavier = kind == LG_INIT_XAVIER || act == LG_ACT_IDENTITY;
        double sd = sqrt(xavier ? 2.0 / (fan_in + fan_out) : 2.0 / fan_in);
        for (size_t i = 0; i < nw; i++) A->W[i] = (double)(float)(sd * lg_rng_normal(r));
    }
}

void lg_init_weights(lg_net *net, uint64_t seed, lg_init_kind kind)
{
    lg_rng r;
    lg_rng_init(&r, seed, 1);
    for (int k = 0; k < net->n_layers; k++) {
        lg_layer *L = &net->layers[k];
        /* the bias: torch U(±1/√fan_in of term 0), one per channel for a conv; else 0 */
        const lg_conv *c = &L->conv;
        int conv = L->kind == LG_LAYER_CONV2D;
        size_t hw = conv ? (size_t)c->h_out * (size_t)c->w_out : 1;
        lg_init_term(&L->lin, L->act, &r, kind);
        if (kind == LG_INIT_TORCH) {
            double a = 1.0 / sqrt(conv ? (double)c->c_in * c->kh * c->kw : (double)L->n_in);
            for (int i = 0; i < L->n_out; i++)
                L->b[i] = (size_t)i % hw ? L->b[i - 1] : (double)(float)((2.0 * lg_rng_uniform(&r) - 1.0) * a);
        } else {
            for (int i = 0; i < L->n_out; i++) L->b[i] = 0.0;
        }
        /* a graph's further terms (shortcut projections, skips), after the layer's own */
        for (int t = 0; t < L->n_terms; t++) lg_init_term(&L->terms[t], L->act, &r, kind);
        L->lambda = lg_act_param_init(L->act, net->t, &L->s);
    }
}
