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
 * i.e. an estimate of how much of the bound's looseness the neuron causes. */
#include <math.h>

#include "verify/alpha.h"
#include "verify/bab_internal.h"

lg_status lg_bab_relu_bound(const lg_bab_ctx *cx, const lg_bab_node *n, lg_bounds *b)
{
    if (!n->pre) return lg_bounds_symbolic(b, cx->net, n->lo, n->hi);
    lg_bab_bounds_load(cx, b, n->pre);
    if (n->split_k < 0) return LG_OK;
    int k = n->split_k, j = n->split_j;
    if (n->split_active) {
        if (b->lo[k][j] < 0) b->lo[k][j] = 0;
    } else {
        if (b->hi[k][j] > 0) b->hi[k][j] = 0;
    }
    if (lg_bab_bounds_empty(b)) return LG_OK;
    return lg_bounds_symbolic_unstable_from(b, cx->net, k + 1);
}

lg_status lg_bab_relu_split(const lg_bab_ctx *cx, const lg_bab_node *n, const lg_bounds *b, const double *lam,
                            lg_bab_node **c0, lg_bab_node **c1, const char **why)
{
    const lg_net *net = cx->net;
    *c0 = *c1 = NULL;
    int bk = -1, bj = -1, fk = -1, fj = -1;
    double best = 0, fall = 0;
    for (int k = 0; k < net->n_layers; k++) {
        if (net->layers[k].act != LG_ACT_RELU) continue;
        int off = lg_alpha_offset(net, k);
        for (int j = 0; j < b->width[k]; j++) {
            double l = b->lo[k][j], u = b->hi[k][j];
            if (!(l < 0 && u > 0)) continue;
            double h = -l * u / (u - l);
            double s = fabs(lam[off + j]) * h;
            if (s > best) {
                best = s;
                bk = k;
                bj = j;
            }
            if (h > fall) {
                fall = h;
                fk = k;
                fj = j;
            }
        }
    }
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
    for (int i = 0; i < 2; i++) {
        lg_bab_bounds_save(cx, b, c[i]->pre);
        c[i]->split_k = bk;
        c[i]->split_j = bj;
        c[i]->split_active = i;
    }
    return LG_OK;
}
