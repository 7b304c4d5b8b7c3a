/* op_layernorm_exact.c — the layernorm node's certified MPFR enclosure
 * (core/op.h entry "layernorm": enclose; core/exact.h) through its centred
 * values, variance and reciprocal square root, every operation rounded
 * outward (enclose_tnode.h). Scratch is allocated per call and released
 * before returning. */
#include "core/enclose_tnode.h"
#include "core/op.h"

#include <math.h>

/* [a]² (r may alias a; t scratch). */
static void lg_ln_iv_sqr(lg_iv *r, const lg_iv *a, mpfr_t t)
{
    if (mpfr_sgn(a->lo) >= 0) {
        mpfr_sqr(t, a->lo, MPFR_RNDD);
        mpfr_sqr(r->hi, a->hi, MPFR_RNDU);
        mpfr_set(r->lo, t, MPFR_RNDD);
    } else if (mpfr_sgn(a->hi) <= 0) {
        mpfr_sqr(t, a->hi, MPFR_RNDD);
        mpfr_sqr(r->hi, a->lo, MPFR_RNDU);
        mpfr_set(r->lo, t, MPFR_RNDD);
    } else {
        mpfr_sqr(t, a->lo, MPFR_RNDU);
        mpfr_sqr(r->hi, a->hi, MPFR_RNDU);
        mpfr_max(r->hi, r->hi, t, MPFR_RNDU);
        mpfr_set_zero(r->lo, 1);
    }
}

/* Layernorm per group: μ ∈ Σ[x]/g, c_i = [x_i] − μ, σ² ∈ Σ c_i²/g (≥ 0),
 * r = 1/√(σ² + ε) (decreasing: ends swapped), out_i = gamma_i·(c_i·r) + beta_i. */
static int lg_layernorm_enclose_groups(const lg_layer *L, const lg_iv *x, lg_iv *z, lg_tn_scr *s)
{
    int g = L->lin.op.group;
    const double *gamma = L->lin.W, *beta = L->lin.W + g;
    for (int i = 0; i < 2 * g; i++)
        if (!isfinite(L->lin.W[i])) return -2;
    for (int st = 0; st < L->n_out; st += g) {
        mpfr_set_zero(s->m.lo, 1);
        mpfr_set_zero(s->m.hi, 1);
        for (int i = 0; i < g; i++) {
            mpfr_add(s->m.lo, s->m.lo, x[st + i].lo, MPFR_RNDD);
            mpfr_add(s->m.hi, s->m.hi, x[st + i].hi, MPFR_RNDU);
        }
        mpfr_div_ui(s->m.lo, s->m.lo, (unsigned long)g, MPFR_RNDD);
        mpfr_div_ui(s->m.hi, s->m.hi, (unsigned long)g, MPFR_RNDU);
        mpfr_set_zero(s->var.lo, 1);
        mpfr_set_zero(s->var.hi, 1);
        for (int i = 0; i < g; i++) {
            lg_iv *c = &s->e[i];
            mpfr_sub(c->lo, x[st + i].lo, s->m.hi, MPFR_RNDD);
            mpfr_sub(c->hi, x[st + i].hi, s->m.lo, MPFR_RNDU);
            lg_ln_iv_sqr(&s->p, c, s->t[0]);
            mpfr_add(s->var.lo, s->var.lo, s->p.lo, MPFR_RNDD);
            mpfr_add(s->var.hi, s->var.hi, s->p.hi, MPFR_RNDU);
        }
        mpfr_div_ui(s->var.lo, s->var.lo, (unsigned long)g, MPFR_RNDD);
        mpfr_div_ui(s->var.hi, s->var.hi, (unsigned long)g, MPFR_RNDU);
        mpfr_add_d(s->var.lo, s->var.lo, L->lin.op.eps, MPFR_RNDD);
        mpfr_add_d(s->var.hi, s->var.hi, L->lin.op.eps, MPFR_RNDU);
        if (!(mpfr_sgn(s->var.lo) > 0)) return -2; /* ε > 0 keeps it positive: only NaN lands here */
        mpfr_rec_sqrt(s->r.lo, s->var.hi, MPFR_RNDD);
        mpfr_rec_sqrt(s->r.hi, s->var.lo, MPFR_RNDU);
        for (int i = 0; i < g; i++) {
            lg_tn_iv_mul(&s->p, &s->e[i], &s->r, s->t);
            lg_iv_scale(&z[st + i], gamma[i], &s->p, s->t[0]);
            mpfr_add_d(z[st + i].lo, z[st + i].lo, beta[i], MPFR_RNDD);
            mpfr_add_d(z[st + i].hi, z[st + i].hi, beta[i], MPFR_RNDU);
        }
    }
    return 0;
}

int lg_layernorm_enclose(const lg_net *net, const lg_layer *L, struct lg_iv *v, const size_t *off,
                         struct lg_iv_work *w)
{
    (void)w;
    return lg_tn_enclose(net, L, v, off, lg_layernorm_enclose_groups);
}
