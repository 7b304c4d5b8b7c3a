/* act_baseline.c — float Swish-β and PReLU kernels (see act_baseline.h).
 *
 * σ(u) is computed from e = e^{−|u|} (never overflows): 1/(1+e) for u ≥ 0,
 * e/(1+e) below, and σ(1−σ) = e/(1+e)² in both tails; u = βx is clamped
 * to ±80 first (σ is 0 or 1 in float there) so infinite βx gives 0·x or x
 * rather than NaN. NaN inputs stay NaN. The sums over the parameter
 * gradient are accumulated in double. */
#include "train/act_baseline.h"

#include <math.h>

#define LG_SWISH_CLAMP 80.0f

/* σ(u) and σ'(u) = σ(1−σ) for one value. */
static inline void lg_sig_pair(float u, float *sig, float *dsig)
{
    float ul = u < -LG_SWISH_CLAMP ? -LG_SWISH_CLAMP : u;
    float uc = ul > LG_SWISH_CLAMP ? LG_SWISH_CLAMP : ul;
    float au = uc < 0.0f ? -uc : uc;
    float e = expf(-au), r = 1.0f / (1.0f + e);
    *sig = uc >= 0.0f ? r : e * r;
    *dsig = e * r * r;
}

void lg_act_swish_forward(float *out, const float *inp, float beta, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        float x = inp[i], s, ds;
        lg_sig_pair(beta * x, &s, &ds);
        out[i] = x * s;
    }
}

void lg_act_swish_backward(float *dinp, float *dbeta, const float *dout, const float *inp, float beta, size_t n)
{
    double sum = 0.0;
    for (size_t i = 0; i < n; i++) {
        float x = inp[i], s, ds;
        lg_sig_pair(beta * x, &s, &ds);
        dinp[i] += dout[i] * (s + beta * x * ds);
        sum += (double)(dout[i] * x * x * ds);
    }
    if (dbeta) *dbeta += (float)sum;
}

void lg_act_prelu_forward(float *out, const float *inp, float a, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        float x = inp[i];
        out[i] = x > 0.0f ? x : a * x;
    }
}

void lg_act_prelu_backward(float *dinp, float *da, const float *dout, const float *inp, float a, size_t n)
{
    double sum = 0.0;
    for (size_t i = 0; i < n; i++) {
        float x = inp[i];
        int pos = x > 0.0f;
        dinp[i] += dout[i] * (pos ? 1.0f : a);
        sum += pos ? 0.0 : (double)(dout[i] * x);
    }
    if (da) *da += (float)sum;
}
