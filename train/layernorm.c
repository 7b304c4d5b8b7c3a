/* layernorm.c — float LayerNorm forward/backward (layernorm.h). */
#include "train/layernorm.h"

#include <math.h>

/* Σ x[0..n) with 8 partial sums (a fixed order the compiler vectorises). */
static float lg_ln_sum(const float *x, int n)
{
    float acc[8] = {0};
    int j = 0;
    for (; j + 8 <= n; j += 8)
        for (int k = 0; k < 8; k++) acc[k] += x[j + k];
    float s = 0;
    for (; j < n; j++) s += x[j];
    for (int k = 0; k < 8; k++) s += acc[k];
    return s;
}

void lg_ln_forward(float *y, float *xhat, float *rstd, const float *x, const float *gamma, const float *beta, int n,
                   int g, float eps)
{
    for (int i = 0; i < n; i++) {
        const float *xi = x + (long)i * g;
        float *hi = xhat + (long)i * g, *yi = y + (long)i * g;
        /* two passes in float: no cancellation; y holds the squares for a moment */
        float mu = lg_ln_sum(xi, g) / (float)g;
        for (int j = 0; j < g; j++) {
            float d = xi[j] - mu;
            hi[j] = d;
            yi[j] = d * d;
        }
        float var = lg_ln_sum(yi, g) / (float)g;
        float r = 1.0f / sqrtf(var + eps);
        rstd[i] = r;
        for (int j = 0; j < g; j++) {
            float h = hi[j] * r;
            hi[j] = h;
            yi[j] = gamma[j] * h + beta[j];
        }
    }
}

void lg_ln_backward(float *dx, float *dgamma, float *dbeta, const float *dy, const float *xhat, const float *rstd,
                    const float *gamma, int n, int g)
{
    for (int i = 0; i < n; i++) {
        const float *dyi = dy + (long)i * g, *hi = xhat + (long)i * g;
        float m1 = 0, m2 = 0;
        for (int j = 0; j < g; j++) {
            float gh = gamma[j] * dyi[j];
            m1 += gh;
            m2 += gh * hi[j];
            dgamma[j] += dyi[j] * hi[j];
            dbeta[j] += dyi[j];
        }
        m1 /= (float)g, m2 /= (float)g;
        float r = rstd[i];
        for (int j = 0; j < g; j++) dx[(long)i * g + j] += r * (gamma[j] * dyi[j] - m1 - hi[j] * m2);
    }
}
