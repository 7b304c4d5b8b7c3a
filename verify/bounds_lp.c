/* bounds_lp.c — LP tightening of unstable neurons (bounds.h): builds the
 * triangle relaxation of the network and hands it to encode/lp_relax.h,
 * which solves it and returns sound dual bounds.
 *
 * For target layer k the LP has columns x' (normalised input), z_j and a_j
 * for every layer j < k (a_j is z_j itself for identity layers), each boxed
 * by the current bounds, and rows
 *     z_j − W_j·a_{j−1} = b_j                          (affine layers)
 *     a − z = 0                  (relu, l ≥ 0)
 *     a fixed to 0               (relu, u ≤ 0: column bounds)
 *     a − z ≥ 0,  a − s·z ≤ −s·l,  s the chord of relax.h   (relu unstable, a ≥ 0 by bounds)
 * and minimises ±(W_k[i]·a_{k−1}) + b_k[i]. The solver's optimum is not
 * trusted as such: lg_lp_relax_min returns the certified Lagrangian bound
 * of its row duals (encode/lp_cert.h).
 */
#include "core/linop.h"
#include "encode/lp_relax.h"
#include "verify/bounds.h"
#include "verify/relax.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Column of a_j[o] (j = −1: input). */
static int lg_lp_acol(const int *base_a, int j, int o) { return (j < 0 ? 0 : base_a[j]) + o; }

static lg_status lg_lp_build(lg_lp_relax *lp, const lg_bounds *b, const lg_net *net, int k)
{
    int base_z[LG_NET_MAX_LAYERS], base_a[LG_NET_MAX_LAYERS];
    int col = net->n_in;
    size_t nnz = 0;
    int rows = 0;
    for (int j = 0; j < k; j++) {
        const lg_layer *L = &net->layers[j];
        base_z[j] = col;
        col += L->n_out;
        if (L->act == LG_ACT_RELU) {
            base_a[j] = col;
            col += L->n_out;
        } else {
            base_a[j] = base_z[j];
        }
        rows += L->n_out;
        nnz += (size_t)L->n_out * ((size_t)lg_layer_row_cap(L) + 1);
        if (L->act == LG_ACT_RELU) {
            rows += 2 * L->n_out;
            nnz += 4 * (size_t)L->n_out;
        }
    }
    int cap = 1;
    for (int j = 0; j < k; j++)
        if (lg_layer_row_cap(&net->layers[j]) > cap) cap = lg_layer_row_cap(&net->layers[j]);
    int *idx = malloc((size_t)cap * sizeof *idx);
    double *wv = malloc((size_t)cap * sizeof *wv); /* a row's nonzeros (core/linop.h) */
    if (!idx || !wv) {
        free(idx);
        free(wv);
        return lg_fail(LG_ERR_NOMEM, "bounds lp: out of memory");
    }
    lg_status st = lg_lp_relax_init(lp, col, rows, nnz);
    if (st != LG_OK) {
        free(idx);
        free(wv);
        return st;
    }
    for (int i = 0; i < net->n_in; i++) lg_lp_relax_col(lp, i, b->xlo[i], b->xhi[i]);
    for (int j = 0; j < k; j++) {
        const lg_layer *L = &net->layers[j];
        for (int o = 0; o < L->n_out; o++) {
            double l = b->lo[j][o], u = b->hi[j][o];
            int zc = base_z[j] + o;
            lg_lp_relax_col(lp, zc, l, u);
            lg_lp_relax_row_add(lp, 'E', L->b[o]);
            lg_lp_relax_ent(lp, zc, 1.0);
            int nz = lg_layer_row_nz(L, o, idx, wv);
            for (int t = 0; t < nz; t++)
                if (wv[t] != 0.0) lg_lp_relax_ent(lp, lg_lp_acol(base_a, j - 1, idx[t]), -wv[t]);
            if (L->act != LG_ACT_RELU) continue;
            int ac = base_a[j] + o;
            lg_lp_relax_col(lp, ac, l > 0 ? l : 0, u > 0 ? u : 0);
            if (l >= 0) {
                lg_lp_relax_row_add(lp, 'E', 0.0);
                lg_lp_relax_ent(lp, ac, 1.0);
                lg_lp_relax_ent(lp, zc, -1.0);
            } else if (u > 0) {
                /* a ≤ s·(z − l) with the chord of relax.h (s rounded up); the
                 * right-hand side −s·l rounded up too, so true points satisfy it */
                double s = lg_relax_chord(l, u);
                lg_lp_relax_row_add(lp, 'G', 0.0);
                lg_lp_relax_ent(lp, ac, 1.0);
                lg_lp_relax_ent(lp, zc, -1.0);
                lg_lp_relax_row_add(lp, 'L', nextafter(-s * l, INFINITY));
                lg_lp_relax_ent(lp, ac, 1.0);
                lg_lp_relax_ent(lp, zc, -s);
            }
        }
    }
    free(idx);
    free(wv);
    if ((st = lg_lp_relax_load(lp)) != LG_OK) lg_lp_relax_free(lp);
    return st;
}

lg_status lg_bounds_lp(lg_bounds *b, const lg_net *net, const lg_runctx *run, long *n_lp)
{
    lg_status st = lg_bounds_check_net(net);
    if (st != LG_OK) return st;
    long count = 0;
    for (int k = 1; k < net->n_layers; k++) {
        const lg_layer *L = &net->layers[k];
        if (L->act != LG_ACT_RELU || lg_bounds_unstable(b, net, k) == 0) continue;
        if (run && lg_runctx_expired(run)) break;
        lg_lp_relax lp;
        if ((st = lg_lp_build(&lp, b, net, k)) != LG_OK) {
            if (st == LG_ERR_NUMERIC) continue; /* keep the bounds we have */
            goto fail;
        }
        double *obj = calloc((size_t)lp.n_cols + 1, sizeof *obj);
        double *row = malloc(((size_t)L->n_in + 1) * sizeof *row); /* a conv row written out (core/linop.h) */
        if (!obj || !row) {
            free(row);
            lg_lp_relax_free(&lp);
            st = lg_fail(LG_ERR_NOMEM, "bounds lp: out of memory");
            goto fail;
        }
        const lg_layer *P = &net->layers[k - 1];
        int base = lp.n_cols - P->n_out; /* a_{k−1} (z_{k−1} for identity) are the last columns */
        for (int o = 0; o < L->n_out; o++) {
            if (!(b->lo[k][o] < 0 && b->hi[k][o] > 0)) continue;
            for (int sign = 0; sign < 2; sign++) {
                if (run && lg_runctx_expired(run)) break;
                double g = sign ? -1.0 : 1.0;
                const double *Wr = lg_layer_row(L, o, row);
                for (int i = 0; i < P->n_out; i++) obj[base + i] = g * Wr[i];
                double lb;
                int ok = lg_lp_relax_min(&lp, obj, g * L->b[o], run, &lb); /* the time left */
                count++;
                if (!ok) continue;
                if (sign == 0 && lb > b->lo[k][o]) b->lo[k][o] = lb;
                if (sign == 1 && -lb < b->hi[k][o]) b->hi[k][o] = -lb;
            }
        }
        free(obj);
        free(row);
        lg_lp_relax_free(&lp);
        if ((st = lg_bounds_symbolic_from(b, net, k + 1)) != LG_OK) goto fail;
    }
    st = LG_OK;
fail:
    if (n_lp) *n_lp = count;
    return st;
}
