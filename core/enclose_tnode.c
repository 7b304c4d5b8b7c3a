/* enclose_tnode.c — what the Transformer nodes' MPFR enclosures share
 * (enclose_tnode.h): the interval product, the scratch, the start and the
 * finiteness check at the end. Scratch is allocated per call (lg_tn_begin)
 * and released by lg_tn_end. */
#include "core/enclose_tnode.h"

#include <stdlib.h>

void lg_tn_iv_mul(lg_iv *r, const lg_iv *a, const lg_iv *b, mpfr_t *t)
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

int lg_tn_begin(const lg_net *net, const lg_layer *L, lg_iv *v, const size_t *off, int n, lg_iv **z,
                const lg_iv **x, lg_tn_scr *s)
{
    int k = (int)(L - net->layers);
    *z = v + off[k + 1];
    *x = v + off[L->lin.src + 1];
    return lg_tn_scr_init(s, n);
}

int lg_tn_end(const lg_layer *L, const lg_iv *z, lg_tn_scr *s, int rc)
{
    for (int o = 0; o < L->n_out && !rc; o++)
        if (mpfr_nan_p(z[o].lo) || mpfr_nan_p(z[o].hi) || mpfr_inf_p(z[o].lo) || mpfr_inf_p(z[o].hi)) rc = -2;
    lg_tn_scr_clear(s);
    return rc;
}

int lg_tn_enclose(const lg_net *net, const lg_layer *L, lg_iv *v, const size_t *off, lg_tn_groups_fn groups)
{
    lg_iv *z;
    const lg_iv *x;
    lg_tn_scr s;
    if (lg_tn_begin(net, L, v, off, L->lin.op.group, &z, &x, &s)) return -3;
    int rc = groups(L, x, z, &s);
    return lg_tn_end(L, z, &s, rc);
}
