/* act_float.c — the float training kernels of every activation
 * (act_float.h). The λ-GELU pair is the hot loop of training: it lives in
 * act_simd.c, vectorised with runtime CPU dispatch; the other kinds are
 * written to be auto-vectorised (no calls, no branches in the element loops
 * of relu, sigmoid and prelu).
 *
 * Sigmoid: σ(x) with e = e^{−|x|} (never overflows): 1/(1+e) for x ≥ 0,
 * e/(1+e) below; σ'(x) = σ(1−σ) = e/(1+e)², accurate in both tails.
 * lg_v_expf maps NaN to a finite value, so NaN is passed through explicitly.
 *
 * Swish: σ(u) is computed from e = e^{−|u|} (never overflows): 1/(1+e) for u ≥ 0,
 * e/(1+e) below, and σ' = σ(1−σ) = e/(1+e)² in both tails; e underflows to
 * 0 for |u| ≳ 104, so a huge βx gives exactly x or −0 and σ' = 0. In the
 * backward, u·σ'(u) uses u clamped to ±LG_SWISH_CLAMP (σ' is 0 or below
 * 1e-34 beyond it) and x²σ' is formed as x·(x·σ'), so infinite products
 * never meet a zero σ'. NaN inputs stay NaN. The parameter gradient is
 * summed in double. */
#include "core/act_float.h"

#include <math.h>
#include <string.h>

#include "core/act_simd.h"
#include "core/expf.h"

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

void lg_actf_swish_fwd(float *out, float *keep, const float *inp, float beta, size_t n)
{
    (void)keep;
    for (size_t i = 0; i < n; i++) {
        float x = inp[i], s, ds;
        lg_sig_pair(beta * x, &s, &ds);
        out[i] = x * s;
    }
}

void lg_actf_swish_bwd(float *dinp, float *dbeta, const float *dout, const float *keep, const float *inp, float beta,
                       size_t n)
{
    (void)keep;
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

void lg_actf_prelu_fwd(float *out, float *keep, const float *inp, float a, size_t n)
{
    (void)keep;
    for (size_t i = 0; i < n; i++) {
        float x = inp[i];
        out[i] = x > 0.0f ? x : a * x;
    }
}

void lg_actf_prelu_bwd(float *dinp, float *da, const float *dout, const float *keep, const float *inp, float a,
                       size_t n)
{
    (void)keep;
    double sum = 0.0;
    for (size_t i = 0; i < n; i++) {
        float x = inp[i];
        int pos = x > 0.0f;
        dinp[i] += dout[i] * (pos ? 1.0f : a);
        sum += pos ? 0.0 : (double)(dout[i] * x);
    }
    if (da) *da += (float)sum;
}

void lg_actf_identity_fwd(float *out, float *keep, const float *inp, float p, size_t n)
{
    (void)keep, (void)p;
    if (out != inp) memmove(out, inp, n * sizeof *out);
}

void lg_actf_identity_bwd(float *dinp, float *dp, const float *dout, const float *keep, const float *inp, float p,
                          size_t n)
{
    (void)dp, (void)keep, (void)inp, (void)p;
    for (size_t i = 0; i < n; i++) dinp[i] += dout[i];
}

void lg_actf_relu_fwd(float *out, float *keep, const float *inp, float p, size_t n)
{
    (void)keep, (void)p;
    for (size_t i = 0; i < n; i++) out[i] = inp[i] > 0.0f ? inp[i] : 0.0f;
}

void lg_actf_relu_bwd(float *dinp, float *dp, const float *dout, const float *keep, const float *inp, float p, size_t n)
{
    (void)dp, (void)keep, (void)p;
    for (size_t i = 0; i < n; i++) dinp[i] += inp[i] > 0.0f ? dout[i] : 0.0f;
}

void lg_actf_lgelu_fwd(float *out, float *keep, const float *inp, float lambda, size_t n)
{
    lg_simd_lgelu_forward(out, keep, keep ? keep + n : NULL, inp, lambda, n);
}

void lg_actf_lgelu_bwd(float *dinp, float *dlambda, const float *dout, const float *keep, const float *inp,
                       float lambda, size_t n)
{
    if (keep) lg_simd_lgelu_backward_kept(dinp, dlambda, dout, keep, keep + n, n);
    else lg_simd_lgelu_backward(dinp, dlambda, dout, inp, lambda, n);
}

/* GELU is λ-GELU at λ = 1 with no λ to learn. */
void lg_actf_gelu_fwd(float *out, float *keep, const float *inp, float p, size_t n)
{
    (void)p;
    lg_actf_lgelu_fwd(out, keep, inp, 1.0f, n);
}

void lg_actf_gelu_bwd(float *dinp, float *dp, const float *dout, const float *keep, const float *inp, float p, size_t n)
{
    (void)dp, (void)p;
    lg_actf_lgelu_bwd(dinp, NULL, dout, keep, inp, 1.0f, n);
}

void lg_actf_sigmoid_fwd(float *out, float *keep, const float *inp, float p, size_t n)
{
    (void)keep, (void)p;
    for (size_t i = 0; i < n; i++) {
        float x = inp[i];
        float ax = x < 0.0f ? -x : x;
        float e = lg_v_expf(-ax), r = 1.0f / (1.0f + e);
        float s = x >= 0.0f ? r : e * r;
        out[i] = x == x ? s : x;
    }
}

void lg_actf_sigmoid_bwd(float *dinp, float *dp, const float *dout, const float *keep, const float *inp, float p,
                         size_t n)
{
    (void)dp, (void)keep, (void)p;
    for (size_t i = 0; i < n; i++) {
        float x = inp[i];
        float ax = x < 0.0f ? -x : x;
        float e = lg_v_expf(-ax), r = 1.0f / (1.0f + e);
        float ds = e * r * r;
        dinp[i] += dout[i] * (x == x ? ds : x);
    }
}
