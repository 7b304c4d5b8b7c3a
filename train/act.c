/* act.c — float activation kernels (DESIGN.md §1).
 *
 * The λ-GELU pair is the hot loop of training, so it is written to be
 * auto-vectorised (no calls, no branches in the element loops): erfc by the
 * Chebyshev-fitted form erfc(z) = t·exp(−z² + P(t)), t = 1/(1 + z/2)
 * (Numerical Recipes' erfcc, fractional error < 1.2e-7 for all z ≥ 0), and
 * exp by Cody–Waite range reduction with the Cephes expf polynomial and an exact
 * power of two (relative error ~1e-7). Both tails keep their relative
 * accuracy down to FLT_MIN; results below that are flushed to 0. */
#include "train/act.h"
#include "train/act_baseline.h"

#include <stdint.h>
#include <string.h>

#define LG_INV_SQRT2 0.70710678118654752440f
#define LG_INV_SQRT2PI 0.39894228040143267794f
#define LG_CHUNK 64

/* e^x for x ≤ 88; returns 0 for x < −87 (below FLT_MIN). */
static inline float lg_expf(float x)
{
    /* written so that NaN clamps too (the int conversion below must see a
     * finite value); callers multiply by x, so a NaN input still gives NaN */
    float lo = x > -87.0f ? x : -87.0f;
    float xc = lo < 88.0f ? lo : 88.0f;
    /* n = round(x/ln2) by the 1.5·2^23 trick; r = x − n·ln2 in two parts */
    float n = (xc * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
    float r = xc - n * 0.693359375f;
    r = r + n * 2.12194440e-4f;
    float p = 1.0f + r + r * r * (5.0000001201e-1f + r * (1.6666665459e-1f + r * (4.1665795894e-2f +
                                    r * (8.3334519073e-3f + r * (1.3981999507e-3f + r * 1.9875691500e-4f)))));
    int32_t bits = ((int32_t)n + 127) << 23;
    float scale;
    memcpy(&scale, &bits, sizeof scale);
    float e = p * scale;
    return x < -87.0f ? 0.0f : e;
}

/* erfc(z) for z ≥ 0 and e^{−z²} beside it (the Gaussian factor of φ). */
static inline float lg_erfc_pos(float z)
{
    float t = 1.0f / (1.0f + 0.5f * z);
    float poly = -1.26551223f +
                 t * (1.00002368f +
                      t * (0.37409196f +
                           t * (0.09678418f +
                                t * (-0.18628806f +
                                     t * (0.27886807f +
                                          t * (-1.13520398f + t * (1.48851587f + t * (-0.82215223f + t * 0.17087277f))))))));
    return t * lg_expf(-z * z + poly);
}

/* Φ(u) = ½·erfc(−u/√2) */
static inline float lg_Phif(float u)
{
    float mu = -u;
    float z = (u < 0.0f ? mu : u) * LG_INV_SQRT2;
    float h = 0.5f * lg_erfc_pos(z), omh = 1.0f - h;
    return u < 0.0f ? h : omh;
}

/* out[i] = inp[i]·Φ(λ·inp[i]) */
static void lg_act_lgelu_forward(float *out, const float *inp, float lambda, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        float x = inp[i];
        out[i] = x * lg_Phif(lambda * x);
    }
}

/* dinp += dout·(Φ(λx) + λx·φ(λx)); dλ += Σ dout·x²·φ(λx). u is clamped to
 * ±40 for φ (φ(40) is 0 in float) so huge or infinite λx give 0, not NaN. */
static void lg_act_lgelu_backward(float *dinp, float *dlambda, const float *dout, const float *inp, float lambda,
                                  size_t n)
{
    float dl[LG_CHUNK];
    double sum = 0.0;
    for (size_t c = 0; c < n; c += LG_CHUNK) {
        size_t m = n - c < LG_CHUNK ? n - c : LG_CHUNK;
        const float *x = inp + c, *g = dout + c;
        float *d = dinp + c;
        for (size_t i = 0; i < m; i++) {
            float u = lambda * x[i];
            float ul = u < -40.0f ? -40.0f : u;
            float uc = ul > 40.0f ? 40.0f : ul;
            float phi = LG_INV_SQRT2PI * lg_expf(-0.5f * uc * uc);
            d[i] += g[i] * (lg_Phif(u) + uc * phi);
            dl[i] = g[i] * x[i] * (x[i] * phi);
        }
        if (dlambda)
            for (size_t i = 0; i < m; i++) sum += (double)dl[i];
    }
    if (dlambda) *dlambda += (float)sum;
}

/* σ(x) with e = e^{−|x|} (never overflows): 1/(1+e) for x ≥ 0, e/(1+e)
 * below; σ'(x) = σ(1−σ) = e/(1+e)², accurate in both tails. lg_expf maps
 * NaN to a finite value, so NaN is passed through explicitly. */
static void lg_act_sigmoid_forward(float *out, const float *inp, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        float x = inp[i];
        float ax = x < 0.0f ? -x : x;
        float e = lg_expf(-ax), r = 1.0f / (1.0f + e);
        float s = x >= 0.0f ? r : e * r;
        out[i] = x == x ? s : x;
    }
}

static void lg_act_sigmoid_backward(float *dinp, const float *dout, const float *inp, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        float x = inp[i];
        float ax = x < 0.0f ? -x : x;
        float e = lg_expf(-ax), r = 1.0f / (1.0f + e);
        float ds = e * r * r;
        dinp[i] += dout[i] * (x == x ? ds : x);
    }
}

void lg_act_forward(float *out, const float *inp, lg_act kind, float lambda, size_t n)
{
    switch (kind) {
    case LG_ACT_RELU:
        for (size_t i = 0; i < n; i++) out[i] = inp[i] > 0.0f ? inp[i] : 0.0f;
        return;
    case LG_ACT_GELU: lg_act_lgelu_forward(out, inp, 1.0f, n); return;
    case LG_ACT_LGELU: lg_act_lgelu_forward(out, inp, lambda, n); return;
    case LG_ACT_SIGMOID: lg_act_sigmoid_forward(out, inp, n); return;
    case LG_ACT_SWISH: lg_act_swish_forward(out, inp, lambda, n); return;
    case LG_ACT_PRELU: lg_act_prelu_forward(out, inp, lambda, n); return;
    case LG_ACT_IDENTITY: break;
    }
    if (out != inp) memmove(out, inp, n * sizeof *out);
}

void lg_act_backward(float *dinp, float *dlambda, const float *dout, const float *inp, lg_act kind, float lambda,
                     size_t n)
{
    switch (kind) {
    case LG_ACT_RELU:
        for (size_t i = 0; i < n; i++) dinp[i] += inp[i] > 0.0f ? dout[i] : 0.0f;
        return;
    case LG_ACT_GELU: lg_act_lgelu_backward(dinp, NULL, dout, inp, 1.0f, n); return;
    case LG_ACT_LGELU: lg_act_lgelu_backward(dinp, dlambda, dout, inp, lambda, n); return;
    case LG_ACT_SIGMOID: lg_act_sigmoid_backward(dinp, dout, inp, n); return;
    case LG_ACT_SWISH: lg_act_swish_backward(dinp, dlambda, dout, inp, lambda, n); return;
    case LG_ACT_PRELU: lg_act_prelu_backward(dinp, dlambda, dout, inp, lambda, n); return;
    case LG_ACT_IDENTITY: break;
    }
    for (size_t i = 0; i < n; i++) dinp[i] += dout[i];
}
