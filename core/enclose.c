/* enclose.c — certified enclosure of a smooth network's outputs (exact.h,
 * DESIGN.md §3 "A `violated` witness"): outward MPFR interval arithmetic
 * (act_mpfr.h) through the affine maps, and each layer's activation through
 * its entry's interval image (the `iv` hook of act.h). */
#include "core/act_mpfr.h"
#include "core/exact.h"
#include "core/linop.h"

#include <math.h>
#include <mpfr.h>
#include <stdlib.h>

int lg_enclose_first_holding(const lg_net *net, const double *x, int n_terms, const lg_term *terms,
                             const double *slack)
{
    if (!lg_net_is_chain(net)) return -1; /* graphs: none certified until the enclosure takes them */
    int w = lg_net_max_width(net), n_out = lg_net_n_out(net);
    for (int i = 0; i < net->n_in; i++)
        if (!isfinite(x[i])) return -2;
    for (int k = 0; k < net->n_layers; k++) {
        const lg_layer *L = &net->layers[k];
        if (!lg_act_info_of(L->act) || !isfinite(L->lambda)) return -2;
    }
    int *idx;
    double *wv;
    if (lg_net_row_alloc(net, &idx, &wv)) return -3;
    lg_iv *a = malloc(((size_t)2 * (size_t)w + 2) * sizeof *a);
    if (!a) {
        free(idx);
        free(wv);
        return -3;
    }
    lg_iv *z = a + w, *u = z + w, *s = u + 1;
    for (int i = 0; i < 2 * w + 2; i++) lg_iv_init(&a[i]);
    lg_iv_work work;
    lg_iv_work_init(&work);
    mpfr_ptr t1 = work.t1;
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
        const lg_act_info *I = lg_act_info_of(L->act);
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
            if (I->iv(&z[o], L->lambda, &work)) rc = -2;
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
    for (int i = 0; i < 2 * w + 2; i++) lg_iv_clear(&base[i]);
    lg_iv_work_clear(&work);
    free(base);
    free(idx);
    free(wv);
    mpfr_free_cache(); /* MPFR's constant caches (π, log 2 for erf/exp) would outlive the call */
    return rc ? rc : found;
}
