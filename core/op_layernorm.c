/* op_layernorm.c — the layernorm node's forward pass in double (net.h,
 * DESIGN.md §1 "Transformer nodes"): per contiguous group of g values,
 * out = gamma·(x − μ)/sqrt(σ² + ε) + beta, σ² the biased variance (as ONNX
 * LayerNormalization and PyTorch). No allocation. */
#include "core/net.h"

#include <math.h>

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
