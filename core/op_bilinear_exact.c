/* op_bilinear_exact.c — the product node's exact forms (core/op.h entry
 * "product": exact_z, exact_q and enclose; core/exact.h): its sums of
 * products in integers and in rationals, and its certified MPFR enclosure
 * by interval multiplication, summed outward (enclose_tnode.h). The
 * enclosure's scratch is allocated per call and released before returning. */
#include "core/enclose_tnode.h"
#include "core/op.h"

long lg_bilinear_exact_z(const lg_linear *A, const mpz_t *a, long ea, const mpz_t *b, long eb, mpz_t *z)
{ /* integer products at the sum of the exponents */
    const int *ia = A->map, *ib = A->map + (size_t)A->n_out * (size_t)A->op.K;
    for (size_t o = 0, q = 0; o < (size_t)A->n_out; o++) {
        mpz_set_ui(z[o], 0);
        for (int kk = 0; kk < A->op.K; kk++, q++) mpz_addmul(z[o], a[ia[q]], b[ib[q]]);
    }
    return ea + eb;
}

void lg_bilinear_exact_q(const lg_linear *A, const mpq_t *a, const mpq_t *b, mpq_t *z, mpq_t t)
{
    const int *ia = A->map, *ib = A->map + (size_t)A->n_out * (size_t)A->op.K;
    for (size_t o = 0, q = 0; o < (size_t)A->n_out; o++) {
        mpq_set_ui(z[o], 0, 1);
        for (int kk = 0; kk < A->op.K; kk++, q++) {
            mpq_mul(t, a[ia[q]], b[ib[q]]);
            mpq_add(z[o], z[o], t);
        }
    }
}

/* out_o = Σ_k [a_ia]·[b_ib], summed outward. */
static void lg_bilinear_enclose_sum(const lg_layer *L, const lg_iv *a, const lg_iv *b, lg_iv *z, lg_tn_scr *s)
{
    size_t K = (size_t)L->lin.op.K;
    const int *ia = L->lin.map, *ib = L->lin.map + (size_t)L->n_out * K;
    for (size_t o = 0; o < (size_t)L->n_out; o++) {
        mpfr_set_zero(z[o].lo, 1);
        mpfr_set_zero(z[o].hi, 1);
        for (size_t q = o * K; q < (o + 1) * K; q++) {
            lg_tn_iv_mul(&s->p, &a[ia[q]], &b[ib[q]], s->t);
            mpfr_add(z[o].lo, z[o].lo, s->p.lo, MPFR_RNDD);
            mpfr_add(z[o].hi, z[o].hi, s->p.hi, MPFR_RNDU);
        }
    }
}

int lg_bilinear_enclose(const lg_net *net, const lg_layer *L, struct lg_iv *v, const size_t *off,
                        struct lg_iv_work *w)
{
    (void)w;
    lg_iv *z;
    const lg_iv *x;
    lg_tn_scr s;
    if (lg_tn_begin(net, L, v, off, 0, &z, &x, &s)) return -3;
    lg_bilinear_enclose_sum(L, x, v + off[L->lin.op.src_b + 1], z, &s);
    return lg_tn_end(L, z, &s, 0);
}
