/* act_mpfr.c — outward MPFR interval arithmetic and the activations'
 * interval images (act_mpfr.h). */
#include "core/act_mpfr.h"

#include <math.h>

void lg_iv_init(lg_iv *v)
{
    mpfr_init2(v->lo, LG_IV_PREC);
    mpfr_init2(v->hi, LG_IV_PREC);
}

void lg_iv_clear(lg_iv *v)
{
    mpfr_clear(v->lo);
    mpfr_clear(v->hi);
}

void lg_iv_work_init(lg_iv_work *w)
{
    lg_iv_init(&w->u);
    lg_iv_init(&w->g);
    lg_iv_init(&w->r2);
    mpfr_init2(w->t1, LG_IV_PREC);
    mpfr_init2(w->t2, LG_IV_PREC);
    mpfr_set_ui(w->t1, 2, MPFR_RNDN);
    mpfr_rec_sqrt(w->r2.lo, w->t1, MPFR_RNDD); /* [1/√2] */
    mpfr_rec_sqrt(w->r2.hi, w->t1, MPFR_RNDU);
}

void lg_iv_work_clear(lg_iv_work *w)
{
    lg_iv_clear(&w->u);
    lg_iv_clear(&w->g);
    lg_iv_clear(&w->r2);
    mpfr_clear(w->t1);
    mpfr_clear(w->t2);
}

void lg_iv_scale(lg_iv *r, double a, const lg_iv *b, mpfr_t t)
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
 * stands for every real in its one-ulp interval. r must not alias b. */
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
static void lg_iv_sig(lg_iv *g, const lg_iv *u, mpfr_t t)
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

/* z ← z·[g], outward (the gated kinds x·gate(x)). */
static void lg_iv_times_gate(lg_iv *z, lg_iv_work *w)
{
    lg_iv_mul(&w->u, z, &w->g, w->t1, w->t2);
    mpfr_set(z->lo, w->u.lo, MPFR_RNDD);
    mpfr_set(z->hi, w->u.hi, MPFR_RNDU);
}

int lg_iv_identity(lg_iv *z, double p, lg_iv_work *w)
{
    (void)z, (void)p, (void)w;
    return 0;
}

int lg_iv_relu(lg_iv *z, double p, lg_iv_work *w)
{
    (void)p, (void)w;
    if (mpfr_sgn(z->lo) < 0) mpfr_set_ui(z->lo, 0, MPFR_RNDN);
    if (mpfr_sgn(z->hi) < 0) mpfr_set_ui(z->hi, 0, MPFR_RNDN);
    return 0;
}

/* image of [l, h]: the part above 0 as is, the part below 0 times a */
int lg_iv_prelu(lg_iv *z, double p, lg_iv_work *w)
{
    int neg = mpfr_sgn(z->lo) < 0, pos = mpfr_sgn(z->hi) > 0;
    if (!neg) return 0;
    if (!pos) {
        lg_iv_scale(z, p, z, w->t1);
        return 0;
    }
    mpfr_set(w->u.lo, z->lo, MPFR_RNDN);
    mpfr_set_ui(w->u.hi, 0, MPFR_RNDN);
    lg_iv_scale(&w->u, p, &w->u, w->t1);
    mpfr_set_ui(z->lo, 0, MPFR_RNDN);
    mpfr_min(z->lo, z->lo, w->u.lo, MPFR_RNDD);
    mpfr_max(z->hi, z->hi, w->u.hi, MPFR_RNDU);
    return 0;
}

int lg_iv_sigmoid(lg_iv *z, double p, lg_iv_work *w)
{
    (void)p;
    lg_iv_sig(&w->g, z, w->t1);
    mpfr_set(z->lo, w->g.lo, MPFR_RNDD);
    mpfr_set(z->hi, w->g.hi, MPFR_RNDU);
    return 0;
}

int lg_iv_swish(lg_iv *z, double p, lg_iv_work *w)
{
    if (!(p > 0)) return -1;
    lg_iv_param(&w->u, p, z);
    lg_iv_sig(&w->g, &w->u, w->t1);
    lg_iv_times_gate(z, w);
    return 0;
}

/* Φ(λz) = ½·erfc(−λz/√2) */
int lg_iv_lgelu(lg_iv *z, double p, lg_iv_work *w)
{
    if (!(p > 0)) return -1;
    lg_iv *u = &w->u;
    const lg_iv *r2 = &w->r2;
    lg_iv_param(u, p, z);
    /* u ← u·[1/√2] (r2 > 0): each end times the bound of r2 that moves it outward */
    mpfr_mul(u->lo, u->lo, mpfr_sgn(u->lo) >= 0 ? r2->lo : r2->hi, MPFR_RNDD);
    mpfr_mul(u->hi, u->hi, mpfr_sgn(u->hi) >= 0 ? r2->hi : r2->lo, MPFR_RNDU);
    lg_iv_phi_scaled(&w->g, u, w->t1);
    lg_iv_times_gate(z, w);
    return 0;
}

int lg_iv_gelu(lg_iv *z, double p, lg_iv_work *w)
{
    (void)p;
    return lg_iv_lgelu(z, 1.0, w);
}
