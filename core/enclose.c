/* enclose.c — certified enclosure of a smooth network's outputs (exact.h,
 * DESIGN.md §3 "A `violated` witness"): outward MPFR interval arithmetic
 * (act_mpfr.h) through the affine maps of the graph (each layer's
 * pre-activation sums every term's products over its source node's
 * enclosure), and each layer's activation through its entry's interval
 * image (the `iv` hook of act.h). */
#include "core/act_mpfr.h"
#include "core/exact.h"
#include "core/op.h"
#include "core/linop.h"

#include <math.h>
#include <mpfr.h>
#include <stdlib.h>

/* The enclosure run; ylo/yhi (may be NULL) receive the outputs' ends rounded outward. */
/* A row of the term sum as an interval, outward (lg_layer_row_visit): z += w·a_i. */
typedef struct lg_iv_row {
    lg_iv *z;
    const lg_iv *v;    /* every node's intervals, node j's at off[j + 1] */
    const size_t *off;
    lg_iv *u;          /* scratch */
    mpfr_ptr t1;       /* scratch */
    int *rc;           /* set to −2 on a weight that is not finite */
} lg_iv_row;

static void lg_iv_row_add(void *ctx, const lg_linear *A, int i, double w)
{
    lg_iv_row *r = ctx;
    if (!isfinite(w)) *r->rc = -2;
    lg_iv_scale(r->u, w, &r->v[r->off[A->src + 1] + (size_t)i], r->t1);
    mpfr_add(r->z->lo, r->z->lo, r->u->lo, MPFR_RNDD);
    mpfr_add(r->z->hi, r->z->hi, r->u->hi, MPFR_RNDU);
}

static int lg_enclose_run(const lg_net *net, const double *x, int n_terms, const lg_term *terms, const double *slack,
                          double *ylo, double *yhi)
{
    size_t len = lg_net_nodes_len(net);
    int n_out = lg_net_n_out(net);
    for (int i = 0; i < net->n_in; i++)
        if (!isfinite(x[i])) return -2;
    for (int k = 0; k < net->n_layers; k++) {
        const lg_layer *L = &net->layers[k];
        if (!lg_act_info_of(L->act) || !isfinite(L->lambda)) return -2;
    }
    int *idx;
    double *wv;
    if (lg_net_row_alloc(net, &idx, &wv)) return -3;
    /* v: [nodes_len] every node's enclosure (the normalised input at 0, then each layer's
     * outputs at lg_net_node_offset), then two scratch intervals u, s */
    lg_iv *v = malloc((len + 2) * sizeof *v);
    size_t *off = malloc(((size_t)net->n_layers + 1) * sizeof *off);
    if (!v || !off) {
        free(v);
        free(off);
        free(idx);
        free(wv);
        return -3;
    }
    for (int k = -1; k < net->n_layers; k++) off[k + 1] = lg_net_node_offset(net, k);
    lg_iv *a = v, *u = v + len, *s = u + 1;
    for (size_t i = 0; i < len + 2; i++) lg_iv_init(&v[i]);
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
        lg_iv *z = v + off[k + 1];
        const lg_opdef *op = lg_layer_op(L);
        if (op->flags & LG_OPF_NODE) { /* max-pool, product, softmax, layernorm: the kind's entry (core/op.h) */
            rc = op->enclose(net, L, v, off, &work);
            continue;
        }
        for (int o = 0; o < L->n_out && !rc; o++) {
            if (!isfinite(L->b[o])) rc = -2;
            mpfr_set_d(z[o].lo, L->b[o], MPFR_RNDN);
            mpfr_set_d(z[o].hi, L->b[o], MPFR_RNDN);
            lg_iv_row row = {&z[o], v, off, u, t1, &rc};
            lg_layer_row_visit(L, o, idx, wv, lg_iv_row_add, &row); /* the term sum (core/op.h) */
            if (I->iv(&z[o], L->lambda, &work)) rc = -2;
        }
    }
    a = v + off[net->n_layers]; /* the outputs */
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
    if (ylo && yhi)
        for (int j = 0; j < n_out; j++) {
            ylo[j] = rc ? -INFINITY : mpfr_get_d(a[j].lo, MPFR_RNDD);
            yhi[j] = rc ? INFINITY : mpfr_get_d(a[j].hi, MPFR_RNDU);
            if (ylo[j] != ylo[j]) ylo[j] = -INFINITY;
            if (yhi[j] != yhi[j]) yhi[j] = INFINITY;
        }
    for (size_t i = 0; i < len + 2; i++) lg_iv_clear(&v[i]);
    lg_iv_work_clear(&work);
    free(v);
    free(off);
    free(idx);
    free(wv);
    mpfr_free_cache(); /* MPFR's constant caches (π, log 2 for erf/exp) would outlive the call */
    return rc ? rc : found;
}

int lg_enclose_first_holding(const lg_net *net, const double *x, int n_terms, const lg_term *terms,
                             const double *slack)
{
    return lg_enclose_run(net, x, n_terms, terms, slack, NULL, NULL);
}

int lg_enclose_outputs(const lg_net *net, const double *x, double *ylo, double *yhi)
{
    int rc = lg_enclose_run(net, x, 0, NULL, NULL, ylo, yhi);
    return rc < -1 ? rc : 0;
}
