/* enclose_tnode.c — certified MPFR enclosures of the Transformer nodes'
 * outputs (exact.h lg_enclose_tnode, DESIGN.md §1 "Transformer nodes"):
 * interval products, softmax by its monotone bounds, layernorm through its
 * centred values, variance and reciprocal square root; every operation is
 * rounded outward (MPFR_RNDD for a lower end, MPFR_RNDU for an upper one).
 * Scratch is allocated per call and released before returning. */
#include "core/act_mpfr.h"
#include "core/exact.h"

#include <math.h>
#include <mpfr.h>
#include <stdlib.h>

/* r = [a]·[b] (r may not alias a or b); t scratch of 4 numbers. */
static void lg_iv_mul(lg_iv *r, const lg_iv *a, const lg_iv *b, mpfr_t *t)
{
    const mpfr_srcptr ea[2] = {a->lo, a->hi}, eb[2] = {b->lo, b->hi};
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) {
            mpfr_mul(t[0], ea[i], eb[j], MPFR_RNDD);
            mpfr_mul(t[1], ea[i], eb[j], MPFR_RNDU);
            if (i + j == 0 || mpfr_less_p(t[0], r->lo)) mpfr_set(r->lo, t[0], MPFR_RNDD);
            if (i + j == 0 || mpfr_greater_p(t[1], r->hi)) mpfr_set(r->hi, t[1], MPFR_RNDU);
        }
}

/* Scratch intervals for one node. */
typedef struct lg_tn_scr {
    lg_iv *e; /* [n]: per-value work (exp, centred values) */
    lg_iv p, m, var, r;
    mpfr_t t[4];
    int n;
} lg_tn_scr;

static int lg_tn_scr_init(lg_tn_scr *s, int n)
{
    s->n = n;
    s->e = malloc((size_t)(n > 0 ? n : 1) * sizeof *s->e);
    if (!s->e) return -3;
    for (int i = 0; i < n; i++) lg_iv_init(&s->e[i]);
    lg_iv_init(&s->p);
    lg_iv_init(&s->m);
    lg_iv_init(&s->var);
    lg_iv_init(&s->r);
    for (int i = 0; i < 4; i++) mpfr_init2(s->t[i], LG_IV_PREC);
    return 0;
}

static void lg_tn_scr_clear(lg_tn_scr *s)
{
    for (int i = 0; i < s->n; i++) lg_iv_clear(&s->e[i]);
    free(s->e);
    lg_iv_clear(&s->p);
    lg_iv_clear(&s->m);
    lg_iv_clear(&s->var);
    lg_iv_clear(&s->r);
    for (int i = 0; i < 4; i++) mpfr_clear(s->t[i]);
}

/* out_o = Σ_k [a_ia]·[b_ib], summed outward. */
static void lg_enclose_product(const lg_layer *L, const lg_iv *a, const lg_iv *b, lg_iv *z, lg_tn_scr *s)
{
    size_t K = (size_t)L->lin.op.K;
    const int *ia = L->lin.map, *ib = L->lin.map + (size_t)L->n_out * K;
    for (size_t o = 0; o < (size_t)L->n_out; o++) {
        mpfr_set_zero(z[o].lo, 1);
        mpfr_set_zero(z[o].hi, 1);
        for (size_t q = o * K; q < (o + 1) * K; q++) {
            lg_iv_mul(&s->p, &a[ia[q]], &b[ib[q]], s->t);
            mpfr_add(z[o].lo, z[o].lo, s->p.lo, MPFR_RNDD);
            mpfr_add(z[o].hi, z[o].hi, s->p.hi, MPFR_RNDU);
        }
    }
}

/* Softmax per group: with E_i = [exp(l_i − c), exp(u_i − c)] (c the group's
 * largest lower end, the same ratio), out_o ∈ [E_o.lo/(E_o.lo + Σ_{i≠o} E_i.hi),
 * E_o.hi/(E_o.hi + Σ_{i≠o} E_i.lo)], clamped to [0, 1]. */
static void lg_enclose_softmax(const lg_layer *L, const lg_iv *x, lg_iv *z, lg_tn_scr *s)
{
    int g = L->lin.op.group;
    mpfr_ptr c = s->t[0], slo = s->t[1], shi = s->t[2], d = s->t[3];
    for (int st = 0; st < L->n_out; st += g) {
        mpfr_set(c, x[st].lo, MPFR_RNDN);
        for (int i = 1; i < g; i++) mpfr_max(c, c, x[st + i].lo, MPFR_RNDN);
        mpfr_set_zero(slo, 1);
        mpfr_set_zero(shi, 1);
        for (int i = 0; i < g; i++) {
            lg_iv *e = &s->e[i];
            mpfr_sub(e->lo, x[st + i].lo, c, MPFR_RNDD);
            mpfr_exp(e->lo, e->lo, MPFR_RNDD);
            mpfr_sub(e->hi, x[st + i].hi, c, MPFR_RNDU);
            mpfr_exp(e->hi, e->hi, MPFR_RNDU);
            mpfr_add(slo, slo, e->lo, MPFR_RNDD);
            mpfr_add(shi, shi, e->hi, MPFR_RNDU);
        }
        for (int i = 0; i < g; i++) {
            const lg_iv *e = &s->e[i];
            lg_iv *out = &z[st + i];
            /* lower: E.lo / (E.lo + (Σ hi − E.hi)); the rest of the sum bounded above */
            mpfr_sub(d, shi, e->hi, MPFR_RNDU);
            if (mpfr_sgn(d) < 0) mpfr_set_zero(d, 1);
            mpfr_add(d, d, e->lo, MPFR_RNDU);
            mpfr_div(out->lo, e->lo, d, MPFR_RNDD);
            /* upper: E.hi / (E.hi + (Σ lo − E.lo)) */
            mpfr_sub(d, slo, e->lo, MPFR_RNDD);
            if (mpfr_sgn(d) < 0) mpfr_set_zero(d, 1);
            mpfr_add(d, d, e->hi, MPFR_RNDD);
            mpfr_div(out->hi, e->hi, d, MPFR_RNDU);
            if (mpfr_sgn(out->lo) < 0) mpfr_set_zero(out->lo, 1);
            if (mpfr_cmp_ui(out->hi, 1) > 0) mpfr_set_ui(out->hi, 1, MPFR_RNDU);
        }
    }
}

/* [a]² (r may alias a; t scratch). */
static void lg_iv_sqr(lg_iv *r, const lg_iv *a, mpfr_t t)
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
static int lg_enclose_layernorm(const lg_layer *L, const lg_iv *x, lg_iv *z, lg_tn_scr *s)
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
            lg_iv_sqr(&s->p, c, s->t[0]);
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
            lg_iv_mul(&s->p, &s->e[i], &s->r, s->t);
            lg_iv_scale(&z[st + i], gamma[i], &s->p, s->t[0]);
            mpfr_add_d(z[st + i].lo, z[st + i].lo, beta[i], MPFR_RNDD);
            mpfr_add_d(z[st + i].hi, z[st + i].hi, beta[i], MPFR_RNDU);
        }
    }
    return 0;
}

int lg_enclose_tnode(const lg_net *net, const lg_layer *L, struct lg_iv *v, const size_t *off, struct lg_iv_work *w)
{
    (void)w;
    int k = (int)(L - net->layers);
    lg_iv *z = v + off[k + 1];
    const lg_iv *x = v + off[L->lin.src + 1];
    lg_tn_scr s;
    if (lg_tn_scr_init(&s, L->lin.kind == LG_LAYER_BILINEAR ? 0 : L->lin.op.group)) return -3;
    int rc = 0;
    if (L->lin.kind == LG_LAYER_BILINEAR)
        lg_enclose_product(L, x, v + off[L->lin.op.src_b + 1], z, &s);
    else if (L->lin.kind == LG_LAYER_SOFTMAX)
        lg_enclose_softmax(L, x, z, &s);
    else
        rc = lg_enclose_layernorm(L, x, z, &s);
    for (int o = 0; o < L->n_out && !rc; o++)
        if (mpfr_nan_p(z[o].lo) || mpfr_nan_p(z[o].hi) || mpfr_inf_p(z[o].lo) || mpfr_inf_p(z[o].hi)) rc = -2;
    lg_tn_scr_clear(&s);
    return rc;
}
