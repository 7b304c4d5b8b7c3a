/* bounds_lp.c — LP tightening of unstable neurons (bounds.h): builds the
 * triangle relaxation of the network and hands it to encode/lp_relax.h,
 * which solves it and returns sound dual bounds.
 *
 * For target layer k the LP has columns x' (normalised input), z_j and a_j
 * for every layer j < k (a_j is z_j itself for identity layers), each boxed
 * by the current bounds, and rows
 *     z_j − Σ_t A_t·a_src(t) = b_j                    (affine layers; a chain: W_j·a_{j−1})
 *     a − z = 0                  (relu, l ≥ 0)
 *     a fixed to 0               (relu, u ≤ 0: column bounds)
 *     a − z ≥ 0,  a − s·z ≤ −s·l,  s the chord of relax.h   (relu unstable, a ≥ 0 by bounds)
 * and minimises ±(Σ_t A_t[i]·a_src(t)) + b_k[i]. Where two terms of a
 * layer read one node, their weights on one column are summed when the
 * double sum is exact; else that LP (or bound) is not solved and the bounds
 * stay as they are. The solver's optimum is not
 * trusted as such: lg_lp_relax_min returns the certified Lagrangian bound
 * of its row duals (encode/lp_cert.h).
 */
#include "core/linop.h"
#include "core/traverse.h"
#include "encode/lp_relax.h"
#include "verify/bounds.h"
#include "verify/bounds_lp.h"
#include "verify/relax.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Column of a_j[o] (j = −1: input). */
static int lg_lp_acol(const int *base_a, int j, int o) { return (j < 0 ? 0 : base_a[j]) + o; }

/* base_a[j] for j < k as lg_lp_build lays the columns out. */
static void lg_lp_bases(const lg_net *net, int k, int *base_a)
{
    int col = net->n_in;
    for (int j = 0; j < k; j++) {
        const lg_layer *L = &net->layers[j];
        int bz = col;
        col += L->n_out;
        if (L->act == LG_ACT_RELU) {
            base_a[j] = col;
            col += L->n_out;
        } else {
            base_a[j] = bz;
        }
    }
}

/* 1 if the terms of layer L read distinct nodes: each LP row then lists
 * every column once, with its weight as stored. */
static int lg_lp_distinct(const lg_layer *L)
{
    for (int t = 1; t < lg_layer_n_lin(L); t++)
        for (int u = 0; u < t; u++)
            if (lg_layer_lin(L, t)->src == lg_layer_lin(L, u)->src) return 0;
    return 1;
}

/* *acc += v when the double sum is exact (two-sum error 0): 1, else 0 and
 * *acc unchanged. Two terms reading one node put two weights on one column;
 * the LP row (and objective) must be the real sum, and GLPK refuses a
 * column twice in a row. */
static int lg_lp_add_exact(double *acc, double v)
{
    double a = *acc, sum = a + v, bv = sum - a, err = (a - (sum - bv)) + (v - bv);
    if (err != 0.0 || !isfinite(sum)) return 0;
    *acc = sum;
    return 1;
}

/* One weight w of a layer's row on input i of term T (lg_layer_row_visit): its entry on
 * the source's column, or, where terms share a source (dist 0), merged into the column's
 * sum (cset, cval; the columns in first-seen order in ecol[ne]); inexact = 1 when a merge
 * is not exact (lg_lp_add_exact). */
typedef struct lg_lp_row_at {
    lg_lp_relax *lp;
    const int *base_a;
    int dist;
    unsigned char *cset;
    double *cval;
    int *ecol;
    int ne, inexact;
} lg_lp_row_at;
static void lg_lp_row_ent(void *ctx, const lg_linear *T, int i, double w)
{
    lg_lp_row_at *at = ctx;
    int c = lg_lp_acol(at->base_a, T->src, i);
    if (at->dist) {
        lg_lp_relax_ent(at->lp, c, -w);
        return;
    }
    if (!at->cset[c]) {
        at->cset[c] = 1;
        at->cval[c] = -w;
        at->ecol[at->ne++] = c;
    } else if (!lg_lp_add_exact(&at->cval[c], -w)) {
        at->inexact = 1;
    }
}

/* The triangle LP of layers < k into lp (loaded). row_ge and row_up (NULL: not
 * wanted; else indexed off[j] + o for neuron o of layer j < k) receive the
 * row index of an unstable relu neuron's rows a − z ≥ 0 and a − s·z ≤ −s·l,
 * −1 for the other neurons. */
static lg_status lg_lp_build(lg_lp_relax *lp, const lg_bounds *b, const lg_net *net, int k, int *row_ge, int *row_up,
                             const size_t *off)
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
        size_t rl = 1 + lg_layer_sum_row_cap(L); /* core/traverse.h */
        nnz += (size_t)L->n_out * rl;
        if (L->act == LG_ACT_RELU) {
            rows += 2 * L->n_out;
            nnz += 4 * (size_t)L->n_out;
        }
    }
    int *idx;
    double *wv; /* a row's nonzeros (core/linop.h) */
    if (lg_net_row_alloc(net, &idx, &wv) != 0) return lg_fail(LG_ERR_NOMEM, "bounds lp: out of memory");
    /* a row of a layer whose terms share a source: its entries, merged by column */
    size_t rcap = 1;
    for (int j = 0; j < k; j++) {
        size_t r = lg_layer_sum_row_cap(&net->layers[j]);
        if (r > rcap) rcap = r;
    }
    int *ecol = malloc(rcap * sizeof *ecol);    /* the row's columns in first-seen order */
    double *cval = calloc((size_t)col, sizeof *cval); /* [col] the row's merged weight of each column */
    unsigned char *cset = calloc((size_t)col, 1);     /* [col] 1 while the row has the column */
    if (!ecol || !cval || !cset) {
        free(idx);
        free(wv);
        free(ecol);
        free(cval);
        free(cset);
        return lg_fail(LG_ERR_NOMEM, "bounds lp: out of memory");
    }
    int inexact = 0;
    lg_status st = lg_lp_relax_init(lp, col, rows, nnz);
    if (st != LG_OK) {
        free(idx);
        free(wv);
        free(ecol);
        free(cval);
        free(cset);
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
            /* every term's row over its source's columns; where terms share a source, the
             * entries of one column merged (exactly, else no LP: lg_lp_add_exact) */
            lg_lp_row_at at = {lp, base_a, lg_lp_distinct(L), cset, cval, ecol, 0, 0};
            lg_layer_row_visit(L, o, idx, wv, lg_lp_row_ent, &at); /* the term sum's row (core/traverse.h) */
            int ne = at.ne;
            inexact |= at.inexact;
            for (int e = 0; e < ne; e++) {
                int c = ecol[e];
                if (cval[c] != 0.0) lg_lp_relax_ent(lp, c, cval[c]);
                cset[c] = 0;
                cval[c] = 0.0;
            }
            if (row_ge) row_ge[off[j] + o] = row_up[off[j] + o] = -1;
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
                if (row_ge) {
                    row_ge[off[j] + o] = lp->n_rows;
                    row_up[off[j] + o] = lp->n_rows + 1;
                }
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
    free(ecol);
    free(cval);
    free(cset);
    if (inexact) {
        lg_lp_relax_free(lp);
        return lg_fail(LG_ERR_NUMERIC, "bounds lp: two weights on one column do not sum exactly");
    }
    if ((st = lg_lp_relax_load(lp)) != LG_OK) lg_lp_relax_free(lp);
    return st;
}

/* One weight of the objective's row (lg_layer_row_visit): obj[column] += g·w, ok = 0 when
 * that sum is not exact. */
typedef struct lg_lp_obj_at {
    double *obj;
    const int *base_a;
    double g;
    int ok;
} lg_lp_obj_at;
static void lg_lp_obj_ent(void *ctx, const lg_linear *T, int i, double w)
{
    lg_lp_obj_at *at = ctx;
    at->ok &= lg_lp_add_exact(&at->obj[lg_lp_acol(at->base_a, T->src, i)], at->g * w);
}

/* obj [n_cols] = g·(Σ_t A_t[o]·a_src(t)) of neuron o of layer k, a column two
 * terms share summed exactly: 1, else 0 (no LP for this bound). idx, wv: a
 * row's scratch (lg_net_row_alloc). */
static int lg_lp_objective(const lg_net *net, int k, int o, double g, const int *base_a, int n_cols, double *obj,
                           int *idx, double *wv)
{
    const lg_layer *L = &net->layers[k];
    memset(obj, 0, (size_t)n_cols * sizeof *obj);
    lg_lp_obj_at at = {obj, base_a, g, 1};
    lg_layer_row_visit(L, o, idx, wv, lg_lp_obj_ent, &at); /* the term sum's row (core/traverse.h) */
    return at.ok;
}

lg_status lg_lp_net_build(lg_lp_net *n, const lg_bounds *b, const lg_net *net, int k)
{
    memset(n, 0, sizeof *n);
    n->k = k;
    n->off = malloc(((size_t)k + 1) * sizeof *n->off);
    n->base_z = malloc(((size_t)k + 1) * sizeof *n->base_z);
    n->base_a = malloc(((size_t)k + 1) * sizeof *n->base_a);
    if (!n->off || !n->base_z || !n->base_a) goto nomem;
    n->off[0] = 0;
    for (int j = 0; j < k; j++) n->off[j + 1] = n->off[j] + (size_t)net->layers[j].n_out;
    n->row_ge = malloc((n->off[k] + 1) * sizeof *n->row_ge);
    n->row_up = malloc((n->off[k] + 1) * sizeof *n->row_up);
    if (!n->row_ge || !n->row_up || lg_net_row_alloc(net, &n->idx, &n->wv) != 0) goto nomem;
    lg_lp_bases(net, k, n->base_a);
    int col = net->n_in;
    for (int j = 0; j < k; j++) {
        n->base_z[j] = col;
        col += net->layers[j].n_out * (net->layers[j].act == LG_ACT_RELU ? 2 : 1);
    }
    lg_status st = lg_lp_build(&n->lp, b, net, k, n->row_ge, n->row_up, n->off);
    if (st != LG_OK) {
        n->lp.P = NULL;
        memset(&n->lp, 0, sizeof n->lp);
        lg_lp_net_free(n);
        return st;
    }
    n->built = 1;
    return LG_OK;
nomem:
    lg_lp_net_free(n);
    return lg_fail(LG_ERR_NOMEM, "bounds lp: out of memory");
}

void lg_lp_net_free(lg_lp_net *n)
{
    if (n->built) lg_lp_relax_free(&n->lp);
    free(n->off);
    free(n->base_z);
    free(n->base_a);
    free(n->row_ge);
    free(n->row_up);
    free(n->idx);
    free(n->wv);
    memset(n, 0, sizeof *n);
}

int lg_lp_net_objective(lg_lp_net *n, const lg_net *net, int o, double g, double *obj)
{
    return lg_lp_objective(net, n->k, o, g, n->base_a, n->lp.n_cols, obj, n->idx, n->wv);
}

lg_status lg_bounds_lp(lg_bounds *b, const lg_net *net, const lg_runctx *run, long *n_lp)
{
    if (lg_net_require_no_max(net, "LP tightening (run it on lg_net_lower_max's ReLU form)") != LG_OK) return LG_ERR_UNSUPPORTED;
    lg_status st = lg_bounds_check_net(net);
    if (st != LG_OK) return st;
    long count = 0;
    for (int k = 1; k < net->n_layers; k++) {
        const lg_layer *L = &net->layers[k];
        if (L->act != LG_ACT_RELU || lg_bounds_unstable(b, net, k) == 0) continue;
        if (run && lg_runctx_expired(run)) break;
        lg_lp_relax lp;
        if ((st = lg_lp_build(&lp, b, net, k, NULL, NULL, NULL)) != LG_OK) {
            if (st == LG_ERR_NUMERIC) continue; /* keep the bounds we have */
            goto fail;
        }
        double *obj = calloc((size_t)lp.n_cols + 1, sizeof *obj);
        int *idx = NULL;
        double *wv = NULL; /* a row's nonzeros (core/linop.h) */
        if (!obj || lg_net_row_alloc(net, &idx, &wv) != 0) {
            free(obj);
            lg_lp_relax_free(&lp);
            st = lg_fail(LG_ERR_NOMEM, "bounds lp: out of memory");
            goto fail;
        }
        int base_a[LG_NET_MAX_LAYERS];
        lg_lp_bases(net, k, base_a);
        for (int o = 0; o < L->n_out; o++) {
            if (!(b->lo[k][o] < 0 && b->hi[k][o] > 0)) continue;
            for (int sign = 0; sign < 2; sign++) {
                if (run && lg_runctx_expired(run)) break;
                double g = sign ? -1.0 : 1.0;
                /* ±(Σ_t A_t[o]·a_src(t)) + b[o]: every term's row on its source's columns,
                 * a column two terms share summed exactly (else no LP for this bound) */
                if (!lg_lp_objective(net, k, o, g, base_a, lp.n_cols, obj, idx, wv)) continue;
                double lb;
                int ok = lg_lp_relax_min(&lp, obj, g * L->b[o], run, &lb); /* the time left */
                count++;
                if (!ok) continue;
                if (sign == 0 && lb > b->lo[k][o]) b->lo[k][o] = lb;
                if (sign == 1 && -lb < b->hi[k][o]) b->hi[k][o] = -lb;
            }
        }
        free(obj);
        free(idx);
        free(wv);
        lg_lp_relax_free(&lp);
        if ((st = lg_bounds_symbolic_from(b, net, k + 1)) != LG_OK) goto fail;
    }
    st = LG_OK;
fail:
    if (n_lp) *n_lp = count;
    return st;
}
