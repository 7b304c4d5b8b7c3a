/* op_softmax.c — the softmax node's forward pass in double (net.h,
 * DESIGN.md §1 "Transformer nodes"). No allocation. */
#include "core/net.h"

#include <math.h>

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
