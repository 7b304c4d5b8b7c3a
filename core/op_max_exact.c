/* op_max_exact.c — the max-pool node's certified enclosure (core/op.h entry
 * "max-pool", `enclose`; core/exact.h): the max of the ends of each window,
 * exact in MPFR (a max rounds nothing). No allocation. */
#include "core/act_mpfr.h"
#include "core/op.h"

int lg_max_enclose(const lg_net *net, const lg_layer *L, struct lg_iv *v, const size_t *off, struct lg_iv_work *w)
{
    (void)w;
    const lg_conv *c = &L->conv;
    const lg_iv *in = v + off[L->src + 1];
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
