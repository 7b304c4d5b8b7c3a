/* op_bilinear.c — the product node (core/op.h entry "product", DESIGN.md §1
 * "Transformer nodes"): its forward pass in double, its exact forms
 * (integers, rationals) and the shape and value
 * checks of the Transformer nodes (their table entries point here). No
 * allocation; the index tables live in the net's maps allocation. */
#include "core/op.h"

#include <gmp.h>
#include <math.h>
#include <stdint.h>

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

lg_status lg_tnode_check_shape(const lg_net *net, int k, const lg_linear *A, int n_out, lg_status code)
{
    const char *nm = lg_kind_name(A->kind);
    if (A->kind == LG_LAYER_BILINEAR) {
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
    const lg_nodeop *p = &A->op;
    if (p->src_b != 0 || p->n_in_b != 0 || p->K != 0)
        return lg_fail(code, "layer %d: %s node with a second source or K (product fields)", k, nm);
    if (A->n_in != n_out)
        return lg_fail(code, "layer %d: %s node maps %d values to %d, expected the same number", k, nm, A->n_in,
                       n_out);
    if (p->group < 1 || n_out % p->group != 0)
        return lg_fail(code, "layer %d: %s node with group size %d, expected a divisor of its width %d", k, nm,
                       p->group, n_out);
    if (A->kind == LG_LAYER_SOFTMAX && p->eps != 0.0)
        return lg_fail(code, "layer %d: softmax node with eps = %g, expected 0", k, p->eps);
    if (A->kind == LG_LAYER_LAYERNORM && (!(p->eps > 0.0) || !isfinite(p->eps)))
        return lg_fail(code, "layer %d: layernorm node with eps = %g, expected a finite value > 0", k, p->eps);
    return LG_OK;
}

lg_status lg_tnode_check_values(const lg_net *net, int k, const lg_linear *A)
{
    lg_status st = lg_tnode_check_shape(net, k, A, A->n_out, LG_ERR_FORMAT);
    if (st != LG_OK || A->kind != LG_LAYER_BILINEAR) return st;
    size_t nk = (size_t)A->n_out * (size_t)A->op.K;
    for (size_t q = 0; q < 2 * nk; q++) {
        int lim = q < nk ? A->n_in : A->op.n_in_b;
        if (A->map[q] < 0 || A->map[q] >= lim)
            return lg_fail(LG_ERR_FORMAT, "layer %d: product node's index table %s entry %zu = %d, expected 0..%d", k,
                           q < nk ? "ia" : "ib", q < nk ? q : q - nk, A->map[q], lim - 1);
    }
    return LG_OK;
}
