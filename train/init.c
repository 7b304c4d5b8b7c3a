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

/* Fan-in and fan-out of one term A: a conv's are c_in·kh·kw and c_out·kh·kw, a dense term's n_in and n_out. */
static double lg_init_fan_in(const lg_linear *A)
{
    const lg_conv *c = &A->conv;
    return A->kind == LG_LAYER_CONV2D ? (double)c->c_in * c->kh * c->kw : (double)A->n_in;
}

static double lg_init_fan_out(const lg_linear *A)
{
    const lg_conv *c = &A->conv;
    return A->kind == LG_LAYER_CONV2D ? (double)c->c_out * c->kh * c->kw : (double)A->n_out;
}

/* Draw the weights of one term A of a layer with activation act (index maps have none). */
static void lg_init_term(lg_linear *A, lg_act act, lg_rng *r, lg_init_kind kind)
{
    size_t nw = lg_linear_n_weights(A);
    double fan_in = lg_init_fan_in(A), fan_out = lg_init_fan_out(A);
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
        /* the bias belongs to term 0, the layer's own Linear or Conv module (PyTorch's default draws
         * a module's bias from its own fan-in; the further terms are bias-free projections and
         * skips): torch U(±1/√fan_in of term 0), one per channel when term 0 is a conv; else 0 */
        const lg_linear *A0 = lg_layer_lin(L, 0);
        size_t hw = A0->kind == LG_LAYER_CONV2D ? (size_t)A0->conv.h_out * (size_t)A0->conv.w_out : 1;
        lg_init_term(&L->lin, L->act, &r, kind);
        if (kind == LG_INIT_TORCH) {
            double a = 1.0 / sqrt(lg_init_fan_in(A0));
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
