/* bab_relu.c — ReLU splitting (bab.h): a node is the case's box plus a set
 * of fixed ReLU phases, carried as intersected pre-activation intervals:
 * active  z ≥ 0: [l, u] ∩ [0, u]  (the relaxation becomes the identity),
 * inactive z ≤ 0: [l, u] ∩ [l, 0]  (the relaxation becomes 0),
 * after which the back-substitution is re-run from the next layer on
 * (lg_bounds_symbolic_from keeps the tighter bound per neuron). Every bound
 * is then sound on the region {x in the box : split constraints hold}.
 *
 * Neuron choice (BaBSR-style): the unstable neuron with the largest
 * |λ_j|·(−l_j·u_j)/(u_j − l_j), λ_j the hardest objective's coefficient on
 * a_k[j] and the second factor the height of the ReLU triangle relaxation,
 * i.e. an estimate of how much of the bound's looseness the neuron causes.
 * A max-pool window's difference x_q − x_p (bounds.h) competes the same way
 * (DESIGN.md §1 "The max-pool node"): its split is the intersection of the
 * difference bounds with [0, ∞) or (−∞, 0], node->split_j = o·K + q. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "verify/alpha.h"
#include "verify/bab_internal.h"
#include "verify/opstage.h"

static lg_status lg_bab_relu_bound(const lg_bab_ctx *cx, const lg_bab_node *n, lg_bounds *b)
{
    if (!n->pre) return lg_bounds_symbolic(b, cx->net, n->lo, n->hi);
    lg_bab_bounds_load(cx, b, n->pre);
    if (n->split_k < 0) return LG_OK;
    int k = n->split_k, j = n->split_j;
    const lg_vopdef *vop = lg_vop(cx->net->layers[k].lin.kind);
    if (vop && vop->split) { /* a node's own split on its entry j (opstage.h) */
        vop->split(b, k, j, n->split_active);
        if (lg_bab_bounds_empty(b)) return LG_OK;
        return lg_bounds_symbolic_unstable_from(b, cx->net, k + 1);
    }
    if (n->split_active) {
        if (b->lo[k][j] < 0) b->lo[k][j] = 0;
    } else {
        if (b->hi[k][j] > 0) b->hi[k][j] = 0;
    }
    if (lg_bab_bounds_empty(b)) return LG_OK;
    return lg_bounds_symbolic_unstable_from(b, cx->net, k + 1);
}

/* FSB: the worse of the two children's bounds of the hardest row for each
 * candidate neuron (ck[c], cj[c]) fixed (intermediate bounds kept, current
 * α, β; the new split's own β is 0), all 2·nc children bounded as one
 * batch (alpha.h: lg_alpha_bound_batch, one dgemm per layer). score[nc]. */
static lg_status lg_bab_fsb_eval(const lg_bab_ctx *cx, const lg_bab_node *n, const lg_bounds *b, int nc,
                                 const int *ck, const int *cj, const double *crow, double drow, const double *alpha,
                                 const double *beta, double *score)
{
    const lg_net *net = cx->net;
    int G = 2 * nc, no = cx->n_out;
    size_t sz = (size_t)cx->size;
    lg_status st = LG_OK;
    lg_bounds *cb = calloc((size_t)G, sizeof *cb);
    const lg_bounds **pb = calloc((size_t)G, sizeof *pb);
    const signed char **ps = calloc((size_t)G, sizeof *ps);
    signed char *sg = malloc((size_t)G * sz);
    int *gi = malloc((size_t)G * sizeof *gi);
    /* pre [n_pre]; al, be [G][size]; C [G][n_out]; d, v [G] */
    double *pre = malloc((cx->n_pre + 2 * (size_t)G * sz + (size_t)G * ((size_t)no + 2)) * sizeof *pre);
    if (!cb || !pb || !ps || !sg || !gi || !pre) {
        st = lg_fail(LG_ERR_NOMEM, "bab: out of memory");
        goto fail;
    }
    double *al = pre + cx->n_pre, *be = al + (size_t)G * sz, *C = be + (size_t)G * sz, *d = C + (size_t)G * no;
    double *v = d + G;
    lg_bab_bounds_save(cx, b, pre);
    for (int g = 0; g < G; g++) {
        int c = g / 2, side = g % 2, k = ck[c], j = cj[c], off = lg_alpha_offset(net, k);
        if ((st = lg_bounds_init(&cb[g], net)) != LG_OK) goto fail;
        cb[g].run = cx->run;
        lg_bab_bounds_load(cx, &cb[g], pre);
        pb[g] = &cb[g];
        memcpy(sg + (size_t)g * sz, n->sign, sz);
        const lg_vopdef *vop = lg_vop(net->layers[k].lin.kind);
        if (vop && vop->split) {
            vop->split(&cb[g], k, j, side); /* no multiplier: the plane reads the bound */
        } else {
            if (side) cb[g].lo[k][j] = 0; /* active */
            else cb[g].hi[k][j] = 0;      /* inactive */
            sg[(size_t)g * sz + (size_t)(off + j)] = side ? -1 : 1;
        }
        ps[g] = sg + (size_t)g * sz;
        if (alpha) memcpy(al + (size_t)g * sz, alpha, sz * sizeof *al);
        if (beta) memcpy(be + (size_t)g * sz, beta, sz * sizeof *be);
        memcpy(C + (size_t)g * no, crow, (size_t)no * sizeof *C);
        d[g] = drow;
    }
    for (int g = 0; g < G; g++) gi[g] = g; /* row g: child g */
    lg_alpha_batch bt = {G, pb, beta ? ps : NULL, gi, NULL, 0};
    st = lg_alpha_bound_batch(&bt, net, G, C, d, alpha ? al : NULL, beta ? be : NULL, v, NULL, NULL, NULL, NULL);
    if (st == LG_OK)
        for (int c = 0; c < nc; c++) score[c] = fmin(v[2 * c], v[2 * c + 1]);
fail:
    for (int g = 0; cb && g < G; g++) lg_bounds_free(&cb[g]);
    free(cb);
    free(pb);
    free(ps);
    free(sg);
    free(gi);
    free(pre);
    return st;
}

/* Candidate (k, j) with score sc into the top-K list cs/ck/cj of *nc
 * entries, best first (ties: the first seen stays first). */
static void lg_bab_topk_insert(double *cs, int *ck, int *cj, int *nc, int K, double sc, int k, int j)
{
    if (*nc >= K && !(sc > cs[*nc - 1])) return;
    int p = *nc < K ? (*nc)++ : K - 1;
    while (p > 0 && cs[p - 1] < sc) {
        cs[p] = cs[p - 1];
        ck[p] = ck[p - 1];
        cj[p] = cj[p - 1];
        p--;
    }
    cs[p] = sc;
    ck[p] = k;
    cj[p] = j;
}

static lg_status lg_bab_relu_split(const lg_bab_ctx *cx, const lg_bab_node *n, lg_bounds *b,
                                   const lg_bab_split_in *in, lg_bab_node **c0, lg_bab_node **c1, const char **why)
{
    const double *lam = in->lam, *crow = in->crow, *alpha = in->alpha, *beta = in->beta;
    double drow = in->drow;
    const lg_net *net = cx->net;
    *c0 = *c1 = NULL;
    int bk = -1, bj = -1, fk = -1, fj = -1;
    double best = 0, fall = 0;
    int K = cx->o->branch == LG_BAB_BRANCH_FSB ? (cx->o->branch_k > 0 ? cx->o->branch_k : 8) : 1;
    if (K > 64) K = 64;
    int ck[64], cj[64], nc = 0; /* top K by score, best first */
    double cs[64];
    for (int k = 0; k < net->n_layers; k++) {
        if (net->layers[k].act != LG_ACT_RELU) continue;
        int off = lg_alpha_offset(net, k);
        for (int j = 0; j < b->width[k]; j++) {
            double l = b->lo[k][j], u = b->hi[k][j];
            if (!(l < 0 && u > 0)) continue;
            double h = -l * u / (u - l);
            double s = fabs(lam[off + j]) * h;
            if (s > 0) lg_bab_topk_insert(cs, ck, cj, &nc, K, s, k, j);
            if (h > fall) {
                fall = h;
                fk = k;
                fj = j;
            }
        }
    }
    for (int k = 0; k < net->n_layers; k++) { /* the nodes' own splits (opstage.h), e.g. max-pool windows */
        const lg_vopdef *vop = lg_vop(net->layers[k].lin.kind);
        if (!vop || !vop->n_split) continue;
        int ns = vop->n_split(net, b, k);
        const double *lam_k = lam + lg_alpha_offset(net, k);
        for (int e = 0; e < ns; e++) {
            double sc = vop->split_score(net, b, k, e, lam_k);
            if (sc > 0) lg_bab_topk_insert(cs, ck, cj, &nc, K, sc, k, e);
        }
    }
    if (nc > 0) {
        bk = ck[0];
        bj = cj[0];
        best = cs[0];
    }
    if (nc > 1) { /* filtered smart branching: evaluate the candidates */
        double sc[64];
        lg_status st = lg_bab_fsb_eval(cx, n, b, nc, ck, cj, crow, drow, alpha, beta, sc);
        if (st != LG_OK) return st;
        double top = -INFINITY;
        for (int c = 0; c < nc; c++)
            if (sc[c] > top) { /* strictly better: ties keep the higher BaBSR score */
                top = sc[c];
                bk = ck[c];
                bj = cj[c];
            }
    }
    (void)best;
    if (bk < 0) {
        bk = fk;
        bj = fj;
    }
    if (bk < 0) {
        *why = "no unstable ReLU left to split";
        return LG_OK;
    }
    *c0 = lg_bab_node_child(cx, n);
    *c1 = lg_bab_node_child(cx, n);
    if (!*c0 || !*c1) {
        lg_bab_node_free(*c0);
        lg_bab_node_free(*c1);
        *c0 = *c1 = NULL;
        return lg_fail(LG_ERR_NOMEM, "bab: out of memory for a node");
    }
    lg_bab_node *c[2] = {*c0, *c1};
    int off_b = lg_alpha_offset(net, bk);
    for (int i = 0; i < 2; i++) {
        lg_bab_bounds_save(cx, b, c[i]->pre);
        c[i]->split_k = bk;
        c[i]->split_j = bj;
        c[i]->split_active = i;
        const lg_vopdef *vop = lg_vop(net->layers[bk].lin.kind);
        if (!vop || !vop->split) /* a node's own split has no multiplier */
            c[i]->sign[off_b + bj] = i ? -1 : 1; /* β-CROWN: active z ≥ 0, inactive z ≤ 0 (alpha.h) */
    }
    return LG_OK;
}

const lg_bab_strategy lg_bab_relu_strategy = {LG_BAB_RELU, lg_bab_relu_bound, lg_bab_relu_split};
