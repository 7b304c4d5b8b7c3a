/* op_max_exact.c — the max-pool node's exact forms (core/op.h entry
 * "max-pool": exact_z, exact_q and enclose; core/exact.h): the largest
 * value of each window in integers, in rationals, and the max of the ends
 * in MPFR (a max rounds nothing). Windows in ascending input order; no
 * allocation. */
#include "core/act_mpfr.h"
#include "core/op.h"

int lg_max_enclose(const lg_net *net, const lg_layer *L, struct lg_iv *v, const size_t *off, struct lg_iv_work *w)
{
    (void)w;
    const lg_conv *c = &L->lin.conv;
    const lg_iv *in = v + off[L->lin.src + 1];
    lg_iv *z = v + off[(L - net->layers) + 1];
    for (int o = 0; o < L->n_out; o++) {
        lg_window wb = lg_max_window_box(c, o);
        int first = 1;
        for (int iy = wb.y0; iy < wb.y1; iy++)
            for (int ix = wb.x0; ix < wb.x1; ix++) {
                const lg_iv *a = &in[(wb.ch * c->h_in + iy) * c->w_in + ix];
                if (first) {
                    mpfr_set(z[o].lo, a->lo, MPFR_RNDD);
                    mpfr_set(z[o].hi, a->hi, MPFR_RNDU);
                    first = 0;
                } else {
                    mpfr_max(z[o].lo, z[o].lo, a->lo, MPFR_RNDD);
                    mpfr_max(z[o].hi, z[o].hi, a->hi, MPFR_RNDU);
                }
            }
    }
    return 0;
}

long lg_max_exact_z(const lg_linear *A, const mpz_t *a, long ea, const mpz_t *b, long eb, mpz_t *z)
{
    (void)b, (void)eb;
    const lg_conv *c = &A->conv;
    for (int o = 0; o < A->n_out; o++) {
        lg_window wb = lg_max_window_box(c, o);
        int first = 1;
        for (int iy = wb.y0; iy < wb.y1; iy++)
            for (int ix = wb.x0; ix < wb.x1; ix++) {
                const mpz_t *x = &a[(wb.ch * c->h_in + iy) * c->w_in + ix];
                if (first || mpz_cmp(*x, z[o]) > 0) mpz_set(z[o], *x);
                first = 0;
            }
    }
    return ea; /* the source's exponent */
}

void lg_max_exact_q(const lg_linear *A, const mpq_t *a, const mpq_t *b, mpq_t *z, mpq_t t)
{
    (void)b, (void)t;
    const lg_conv *c = &A->conv;
    for (int o = 0; o < A->n_out; o++) {
        lg_window wb = lg_max_window_box(c, o);
        int first = 1;
        for (int iy = wb.y0; iy < wb.y1; iy++)
            for (int ix = wb.x0; ix < wb.x1; ix++) {
                const mpq_t *x = &a[(wb.ch * c->h_in + iy) * c->w_in + ix];
                if (first || mpq_cmp(*x, z[o]) > 0) mpq_set(z[o], *x);
                first = 0;
            }
    }
}
