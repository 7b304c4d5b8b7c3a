/* act_baseline.c — float Swish-β and PReLU kernels (see act_baseline.h).
 *
 * σ(u) is computed from e = e^{−|u|} (never overflows): 1/(1+e) for u ≥ 0,
 * e/(1+e) below, and σ' = σ(1−σ) = e/(1+e)² in both tails; e underflows to
 * 0 for |u| ≳ 104, so a huge βx gives exactly x or −0 and σ' = 0. In the
 * backward, u·σ'(u) uses u clamped to ±LG_SWISH_CLAMP (σ' is 0 or below
 * 1e-34 beyond it) and x²σ' is formed as x·(x·σ'), so infinite products
 * never meet a zero σ'. NaN inputs stay NaN. The parameter gradient is
 * summed in double. */
#include "train/act_baseline.h"

#include <math.h>

#define LG_SWISH_CLAMP 80.0f

/* σ(u) and σ'(u) = σ(1−σ) for one value. */
static inline void lg_sig_pair(float u, float *sig, float *dsig)
{
    float au = u < 0.0f ? -u : u;
    float e = expf(-au), r = 1.0f / (1.0f + e);
    *sig = u >= 0.0f ? r : e * r;
    *dsig = e * r * r;
    if (u != u) *sig = *dsig = u;
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
        float x = inp[i], u = beta * x, s, ds;
        lg_sig_pair(u, &s, &ds);
        float ul = u < -LG_SWISH_CLAMP ? -LG_SWISH_CLAMP : u;
        float uc = ul > LG_SWISH_CLAMP ? LG_SWISH_CLAMP : ul;
        dinp[i] += dout[i] * (s + uc * ds);
        sum += (double)(dout[i] * (x * (x * ds)));
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
