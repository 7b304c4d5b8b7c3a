/* op_layernorm.c — the layernorm node (core/op.h entry "layernorm", net.h,
 * DESIGN.md §1 "Transformer nodes"): per contiguous group of g values,
 * out = gamma·(x − μ)/sqrt(σ² + ε) + beta, σ² the biased variance (as ONNX
 * LayerNormalization and PyTorch). Its weights' count (gamma, beta), forward
 * pass in double, shape and value checks and info line (its enclosure:
 * op_layernorm_exact.c). No allocation. */
#include "core/op.h"

#include <math.h>
#include <stdio.h>

void lg_layernorm_forward(const lg_linear *A, const double *x, double *out)
{
    int g = A->op.group;
    const double *gamma = A->W, *beta = A->W + g;
    for (int s = 0; s < A->n_out; s += g) {
        double mu = 0.0, var = 0.0;
        for (int i = 0; i < g; i++) mu += x[s + i];
        mu /= g;
        for (int i = 0; i < g; i++) var += (x[s + i] - mu) * (x[s + i] - mu);
        var /= g;
        double r = 1.0 / sqrt(var + A->op.eps);
        for (int i = 0; i < g; i++) out[s + i] = gamma[i] * ((x[s + i] - mu) * r) + beta[i];
    }
}

void lg_layernorm_node_forward(const lg_linear *A, const double *a, const double *b, double *z)
{
    (void)b;
    lg_layernorm_forward(A, a, z);
}

size_t lg_layernorm_n_weights(const lg_linear *A) { return 2 * (size_t)(A->op.group > 0 ? A->op.group : 0); }

lg_status lg_layernorm_check_shape(const lg_net *net, int k, int t, const lg_linear *A, int n_out, lg_status code)
{
    (void)t;
    lg_status st = lg_group_check_shape(net, k, A, n_out, code);
    if (st != LG_OK) return st;
    if (!(A->op.eps > 0.0) || !isfinite(A->op.eps))
        return lg_fail(code, "layer %d: layernorm node with eps = %g, expected a finite value > 0", k, A->op.eps);
    return LG_OK;
}

lg_status lg_layernorm_check_values(const lg_net *net, int k, int t, const lg_linear *A)
{
    return lg_layernorm_check_shape(net, k, t, A, A->n_out, LG_ERR_FORMAT);
}

int lg_layernorm_describe(const lg_linear *A, const char *from, char *buf, size_t cap)
{
    return snprintf(buf, cap, "layernorm from %s over groups of %d (%d groups), eps %g", from, A->op.group,
                    A->n_out / A->op.group, A->op.eps);
}
