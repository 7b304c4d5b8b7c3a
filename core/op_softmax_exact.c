/* op_softmax_exact.c — the softmax node's certified MPFR enclosure (core/op.h
 * entry "softmax": enclose; core/exact.h) by its monotone bounds, every
 * operation rounded outward (enclose_tnode.h). Scratch is allocated per
 * call and released before returning. */
#include "core/enclose_tnode.h"
#include "core/op.h"

/* Softmax per group: with E_i = [exp(l_i − c), exp(u_i − c)] (c the group's
 * largest lower end, the same ratio), out_o ∈ [E_o.lo/(E_o.lo + Σ_{i≠o} E_i.hi),
 * E_o.hi/(E_o.hi + Σ_{i≠o} E_i.lo)], clamped to [0, 1]. */
static int lg_softmax_enclose_groups(const lg_layer *L, const lg_iv *x, lg_iv *z, lg_tn_scr *s)
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
    return 0;
}

int lg_softmax_enclose(const lg_net *net, const lg_layer *L, struct lg_iv *v, const size_t *off,
                       struct lg_iv_work *w)
{
    (void)w;
    return lg_tn_enclose(net, L, v, off, lg_softmax_enclose_groups);
}
