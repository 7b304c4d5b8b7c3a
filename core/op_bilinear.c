/* op_bilinear.c — the product node (core/op.h entry "product", DESIGN.md §1
 * "Transformer nodes"): its index tables' length, forward pass in double,
 * exact forms (integers, rationals), shape and value checks and info line
 * (its enclosure: op_bilinear_exact.c). No allocation; the index tables
 * live in the net's maps allocation. */
#include "core/op.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>

size_t lg_bilinear_n_map(const lg_linear *A)
{
    if (A->op.K < 1 || A->n_out < 1) return 0;
    return 2 * (size_t)A->n_out * (size_t)A->op.K;
}

void lg_bilinear_forward(const lg_linear *A, const double *a, const double *b, double *out)
{
    size_t K = (size_t)A->op.K;
    const int *ia = A->map, *ib = A->map + (size_t)A->n_out * K;
    for (size_t o = 0; o < (size_t)A->n_out; o++) {
        double s = 0.0;
        for (size_t q = o * K; q < (o + 1) * K; q++) s += a[ia[q]] * b[ib[q]];
        out[o] = s;
    }
}

lg_status lg_bilinear_check_shape(const lg_net *net, int k, int t, const lg_linear *A, int n_out, lg_status code)
{
    (void)t;
    const lg_nodeop *p = &A->op;
    if (p->K < 1 || p->K > LG_NET_MAX_DIM || (size_t)n_out * (size_t)p->K > LG_NET_MAX_DIM)
        return lg_fail(code, "layer %d: product node with K = %d products per output, expected 1..%d (n_out·K "
                       "at most %d)", k, p->K, LG_NET_MAX_DIM, LG_NET_MAX_DIM);
    if (p->src_b < LG_NET_INPUT || p->src_b >= k)
        return lg_fail(code, "layer %d: product node reads node %d as its second source, expected the input (%d) "
                       "or an earlier layer (0..%d)", k, p->src_b, LG_NET_INPUT, k - 1);
    int w = lg_net_node_width(net, p->src_b);
    if (p->n_in_b != w)
        return lg_fail(code, "layer %d: product node's second source takes %d values but node %d gives %d", k,
                       p->n_in_b, p->src_b, w);
    if (p->group != 0 || p->eps != 0.0)
        return lg_fail(code, "layer %d: product node with a group size or eps (softmax/layernorm fields)", k);
    return LG_OK;
}

lg_status lg_bilinear_check_values(const lg_net *net, int k, int t, const lg_linear *A)
{
    lg_status st = lg_bilinear_check_shape(net, k, t, A, A->n_out, LG_ERR_FORMAT);
    if (st != LG_OK) return st;
    size_t nk = (size_t)A->n_out * (size_t)A->op.K;
    for (size_t q = 0; q < 2 * nk; q++) {
        int lim = q < nk ? A->n_in : A->op.n_in_b;
        if (A->map[q] < 0 || A->map[q] >= lim)
            return lg_fail(LG_ERR_FORMAT, "layer %d: product node's index table %s entry %zu = %d, expected 0..%d", k,
                           q < nk ? "ia" : "ib", q < nk ? q : q - nk, A->map[q], lim - 1);
    }
    return LG_OK;
}

int lg_bilinear_describe(const lg_linear *A, const char *from, char *buf, size_t cap)
{
    char fb[32];
    if (A->op.src_b < 0) snprintf(fb, sizeof fb, "input");
    else snprintf(fb, sizeof fb, "layer %d", A->op.src_b);
    return snprintf(buf, cap, "product of %s (%d) and %s (%d), %d products per output", from, A->n_in, fb,
                    A->op.n_in_b, A->op.K);
}
