/* enclose.c — certified enclosure of a smooth network's outputs (exact.h,
 * DESIGN.md §3 "A `violated` witness"): interval arithmetic on MPFR numbers
 * of LG_ENCLOSE_PREC bits (128: a product of two doubles is exact) in which every operation is rounded outward (the
 * lower end toward −∞, the upper toward +∞). MPFR's erfc, exp and division
 * are correctly rounded in the direction asked for, so each interval holds
 * the exact real value; nothing else is assumed about erf or exp. */
#include "core/exact.h"
#include "core/linop.h"

#include <math.h>
#include <mpfr.h>
#include <stdlib.h>

#define LG_ENCLOSE_PREC 128

typedef struct lg_iv {
    mpfr_t lo, hi;
} lg_iv;

static void lg_iv_init(lg_iv *v)
{
    mpfr_init2(v->lo, LG_ENCLOSE_PREC);
    mpfr_init2(v->hi, LG_ENCLOSE_PREC);
}

static void lg_iv_clear(lg_iv *v)
{
    mpfr_clear(v->lo);
    mpfr_clear(v->hi);
}

/* r = a·[b] for a finite double a (exact), b an interval; r may alias b. */
static void lg_iv_scale(lg_iv *r, double a, const lg_iv *b, mpfr_t t)
{
    if (mpfr_equal_p(b->lo, b->hi) && r != b) { /* a point: one product, exact when it fits */
        if (mpfr_mul_d(r->lo, b->lo, a, MPFR_RNDD) == 0) mpfr_set(r->hi, r->lo, MPFR_RNDN);
        else mpfr_mul_d(r->hi, b->lo, a, MPFR_RNDU);
        return;
    }
    if (a >= 0) {
        mpfr_mul_d(r->lo, b->lo, a, MPFR_RNDD);
        mpfr_mul_d(r->hi, b->hi, a, MPFR_RNDU);
    } else {
        mpfr_mul_d(t, b->hi, a, MPFR_RNDD);
        mpfr_mul_d(r->hi, b->lo, a, MPFR_RNDU);
        mpfr_set(r->lo, t, MPFR_RNDD);
    }
}

/* r = [p, next(p)]·[b] for p > 0: the parameter of a smooth activation
 * stands for every real in its one-ulp interval (an imported file's λ or β
 * need not be a double, DESIGN.md §3). r must not alias b. */
static void lg_iv_param(lg_iv *r, double p, const lg_iv *b)
{
    double q = nextafter(p, INFINITY);
    mpfr_mul_d(r->lo, b->lo, mpfr_sgn(b->lo) >= 0 ? p : q, MPFR_RNDD);
    mpfr_mul_d(r->hi, b->hi, mpfr_sgn(b->hi) >= 0 ? q : p, MPFR_RNDU);
}

/* r = [a]·[b] (general signs); r must not alias a or b. t1, t2 scratch. */
static void lg_iv_mul(lg_iv *r, const lg_iv *a, const lg_iv *b, mpfr_t t1, mpfr_t t2)
{
    mpfr_srcptr A[2] = {a->lo, a->hi}, B[2] = {b->lo, b->hi};
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) {
            mpfr_mul(t1, A[i], B[j], MPFR_RNDD);
            mpfr_mul(t2, A[i], B[j], MPFR_RNDU);
            if ((i | j) == 0 || mpfr_less_p(t1, r->lo)) mpfr_set(r->lo, t1, MPFR_RNDD);
            if ((i | j) == 0 || mpfr_greater_p(t2, r->hi)) mpfr_set(r->hi, t2, MPFR_RNDU);
        }
}

/* g = [σ(u)] for u ∈ [u] (σ increasing): lo = 1/(1 + e^{−u_lo}) rounded down. */
static void lg_iv_sigmoid(lg_iv *g, const lg_iv *u, mpfr_t t)
{
    mpfr_neg(t, u->lo, MPFR_RNDN); /* exact */
    mpfr_exp(t, t, MPFR_RNDU);
    mpfr_add_ui(t, t, 1, MPFR_RNDU);
    mpfr_ui_div(g->lo, 1, t, MPFR_RNDD);
    mpfr_neg(t, u->hi, MPFR_RNDN);
    mpfr_exp(t, t, MPFR_RNDD);
    mpfr_add_ui(t, t, 1, MPFR_RNDD);
    mpfr_ui_div(g->hi, 1, t, MPFR_RNDU);
}

/* g = [Φ(u·√2)] = [½·erfc(−u)] for u ∈ [u] (Φ increasing, erfc decreasing). */
static void lg_iv_phi_scaled(lg_iv *g, const lg_iv *u, mpfr_t t)
{
    mpfr_neg(t, u->lo, MPFR_RNDN);
    mpfr_erfc(g->lo, t, MPFR_RNDD);
    mpfr_div_2ui(g->lo, g->lo, 1, MPFR_RNDD);
    mpfr_neg(t, u->hi, MPFR_RNDN);
    mpfr_erfc(g->hi, t, MPFR_RNDU);
    mpfr_div_2ui(g->hi, g->hi, 1, MPFR_RNDU);
}

/* z ← f(z) for activation act with parameter p, outward. */
static void lg_iv_act(lg_iv *z, lg_act act, double p, lg_iv *u, lg_iv *g, const lg_iv *r2, mpfr_t t1, mpfr_t t2)
{
    switch (act) {
    case LG_ACT_IDENTITY: return;
    case LG_ACT_RELU:
        if (mpfr_sgn(z->lo) < 0) mpfr_set_ui(z->lo, 0, MPFR_RNDN);
        if (mpfr_sgn(z->hi) < 0) mpfr_set_ui(z->hi, 0, MPFR_RNDN);
        return;
    case LG_ACT_PRELU: { /* image of [l, h]: the part above 0 as is, the part below 0 times a */
        int neg = mpfr_sgn(z->lo) < 0, pos = mpfr_sgn(z->hi) > 0;
        if (!neg) return;
        if (!pos) {
            lg_iv_scale(z, p, z, t1);
            return;
        }
        mpfr_set(u->lo, z->lo, MPFR_RNDN);
        mpfr_set_ui(u->hi, 0, MPFR_RNDN);
        lg_iv_scale(u, p, u, t1);
        mpfr_set_ui(z->lo, 0, MPFR_RNDN);
        mpfr_min(z->lo, z->lo, u->lo, MPFR_RNDD);
        mpfr_max(z->hi, z->hi, u->hi, MPFR_RNDU);
        return;
    }
    case LG_ACT_SIGMOID:
        lg_iv_sigmoid(g, z, t1);
        mpfr_set(z->lo, g->lo, MPFR_RNDD);
        mpfr_set(z->hi, g->hi, MPFR_RNDU);
        return;
    case LG_ACT_SWISH:
        lg_iv_param(u, p, z);
        lg_iv_sigmoid(g, u, t1);
        break;
    default: /* gelu (λ = 1), lgelu: Φ(λz) = ½·erfc(−λz/√2) */
        lg_iv_param(u, act == LG_ACT_GELU ? 1.0 : p, z);
        /* u ← u·[1/√2] (r2 > 0): each end times the bound of r2 that moves it outward */
        mpfr_mul(u->lo, u->lo, mpfr_sgn(u->lo) >= 0 ? r2->lo : r2->hi, MPFR_RNDD);
        mpfr_mul(u->hi, u->hi, mpfr_sgn(u->hi) >= 0 ? r2->hi : r2->lo, MPFR_RNDU);
        lg_iv_phi_scaled(g, u, t1);
        break;
    }
    lg_iv_mul(u, z, g, t1, t2);
    mpfr_set(z->lo, u->lo, MPFR_RNDD);
    mpfr_set(z->hi, u->hi, MPFR_RNDU);
}

int lg_enclose_first_holding(const lg_net *net, const double *x, int n_terms, const lg_term *terms,
                             const double *slack)
{
    int w = lg_net_max_width(net), n_out = lg_net_n_out(net);
    for (int i = 0; i < net->n_in; i++)
        if (!isfinite(x[i])) return -2;
    for (int k = 0; k < net->n_layers; k++) {
        const lg_layer *L = &net->layers[k];
        if (L->act < 0 || L->act >= LG_ACT_COUNT || !isfinite(L->lambda)) return -2;
        if ((L->act == LG_ACT_LGELU || L->act == LG_ACT_SWISH) && !(L->lambda > 0)) return -2;
    }
    int *idx;
    double *wv;
    if (lg_net_row_alloc(net, &idx, &wv)) return -3;
    lg_iv *a = malloc(((size_t)2 * (size_t)w + 4) * sizeof *a);
    if (!a) {
        free(idx);
        free(wv);
        return -3;
    }
    lg_iv *z = a + w, *u = z + w, *g = u + 1, *r2 = g + 1, *s = r2 + 1;
    for (int i = 0; i < 2 * w + 4; i++) lg_iv_init(&a[i]);
    mpfr_t t1, t2;
    mpfr_init2(t1, LG_ENCLOSE_PREC);
    mpfr_init2(t2, LG_ENCLOSE_PREC);
    mpfr_set_ui(t1, 2, MPFR_RNDN);
    mpfr_rec_sqrt(r2->lo, t1, MPFR_RNDD); /* [1/√2] */
    mpfr_rec_sqrt(r2->hi, t1, MPFR_RNDU);
    int rc = 0, found = -1;
    for (int i = 0; i < net->n_in; i++) { /* (x − sub)/div, outward */
        mpfr_set_d(a[i].lo, x[i], MPFR_RNDN); /* exact: 128 ≥ 53 bits */
        mpfr_set_d(a[i].hi, x[i], MPFR_RNDN);
        if (net->in_sub) {
            if (!isfinite(net->in_sub[i])) rc = -2;
            mpfr_sub_d(a[i].lo, a[i].lo, net->in_sub[i], MPFR_RNDD);
            mpfr_sub_d(a[i].hi, a[i].hi, net->in_sub[i], MPFR_RNDU);
        }
        if (net->in_div) {
            double dv = net->in_div[i];
            if (!isfinite(dv) || dv == 0) rc = -2;
            else if (dv > 0) {
                mpfr_div_d(a[i].lo, a[i].lo, dv, MPFR_RNDD);
                mpfr_div_d(a[i].hi, a[i].hi, dv, MPFR_RNDU);
            } else {
                mpfr_div_d(t1, a[i].hi, dv, MPFR_RNDD);
                mpfr_div_d(a[i].hi, a[i].lo, dv, MPFR_RNDU);
                mpfr_set(a[i].lo, t1, MPFR_RNDD);
            }
        }
    }
    for (int k = 0; k < net->n_layers && !rc; k++) {
        const lg_layer *L = &net->layers[k];
        for (int o = 0; o < L->n_out && !rc; o++) {
            int nz = lg_layer_row_nz(L, o, idx, wv); /* a conv's row through its structure (core/linop.h) */
            if (!isfinite(L->b[o])) rc = -2;
            mpfr_set_d(z[o].lo, L->b[o], MPFR_RNDN);
            mpfr_set_d(z[o].hi, L->b[o], MPFR_RNDN);
            for (int q = 0; q < nz; q++) {
                int i = idx[q];
                if (wv[q] == 0) continue;
                if (!isfinite(wv[q])) rc = -2;
                lg_iv_scale(u, wv[q], &a[i], t1);
                mpfr_add(z[o].lo, z[o].lo, u->lo, MPFR_RNDD);
                mpfr_add(z[o].hi, z[o].hi, u->hi, MPFR_RNDU);
            }
            lg_iv_act(&z[o], L->act, L->lambda, u, g, r2, t1, t2);
        }
        lg_iv *sw = a;
        a = z;
        z = sw;
    }
    /* a term is certified when the upper end of every Σ coef·y + d + slack is ≤ 0 */
    for (int t = 0, r = 0; t < n_terms && !rc && found < 0; r += terms[t].n_cons, t++) {
        int all = 1;
        for (int k = 0; k < terms[t].n_cons && all; k++) {
            const lg_lincon *L = &terms[t].cons[k];
            double sl = slack ? slack[r + k] : 0.0;
            if (!isfinite(L->d) || !isfinite(sl)) {
                rc = -2;
                break;
            }
            mpfr_set_d(s->hi, L->d, MPFR_RNDN);
            mpfr_add_d(s->hi, s->hi, sl, MPFR_RNDU);
            for (int j = 0; j < n_out; j++) {
                double c = L->coef[j];
                if (c == 0) continue;
                if (!isfinite(c)) rc = -2;
                mpfr_mul_d(t1, c > 0 ? a[j].hi : a[j].lo, c, MPFR_RNDU);
                mpfr_add(s->hi, s->hi, t1, MPFR_RNDU);
            }
            all = !rc && !mpfr_nan_p(s->hi) && mpfr_sgn(s->hi) <= 0;
        }
        if (all && !rc) found = t;
    }
    /* a and z were swapped once per layer: free from whichever holds the block start */
    lg_iv *base = a < z ? a : z;
    for (int i = 0; i < 2 * w + 4; i++) lg_iv_clear(&base[i]);
    mpfr_clear(t1);
    mpfr_clear(t2);
    free(base);
    free(idx);
    free(wv);
    mpfr_free_cache(); /* MPFR's constant caches (π, log 2 for erf/exp) would outlive the call */
    return rc ? rc : found;
}
