/* op_softmax.c — the softmax node (core/op.h entry "softmax", net.h,
 * DESIGN.md §1 "Transformer nodes"): its forward pass in double, shape and
 * value checks and info line (its enclosure: op_softmax_exact.c). No
 * allocation. */
#include "core/op.h"

#include <math.h>
#include <stdio.h>

void lg_softmax_forward(const lg_linear *A, const double *x, double *out)
{
    int g = A->op.group;
    for (int s = 0; s < A->n_out; s += g) {
        double m = x[s];
        for (int i = 1; i < g; i++) m = fmax(m, x[s + i]);
        double sum = 0.0; /* shifted by the group's largest value: the same real function, no overflow */
        for (int i = 0; i < g; i++) sum += (out[s + i] = exp(x[s + i] - m));
        for (int i = 0; i < g; i++) out[s + i] /= sum;
    }
}

void lg_softmax_node_forward(const lg_linear *A, const double *a, const double *b, double *z)
{
    (void)b;
    lg_softmax_forward(A, a, z);
}

lg_status lg_softmax_check_shape(const lg_net *net, int k, int t, const lg_linear *A, int n_out, lg_status code)
{
    (void)t;
    lg_status st = lg_group_check_shape(net, k, A, n_out, code);
    if (st != LG_OK) return st;
    if (A->op.eps != 0.0) return lg_fail(code, "layer %d: softmax node with eps = %g, expected 0", k, A->op.eps);
    return LG_OK;
}

lg_status lg_softmax_check_values(const lg_net *net, int k, int t, const lg_linear *A)
{
    return lg_softmax_check_shape(net, k, t, A, A->n_out, LG_ERR_FORMAT);
}

int lg_softmax_describe(const lg_linear *A, const char *from, char *buf, size_t cap)
{
    return snprintf(buf, cap, "softmax from %s over groups of %d (%d groups)", from, A->op.group,
                    A->n_out / A->op.group);
}
