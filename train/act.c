/* act.c — float activation kernels (DESIGN.md §1). The λ-GELU pair is the
 * hot loop of training; Φ uses erfcf so both tails keep their relative
 * accuracy. */
#include "train/act.h"

#include <math.h>

#define LG_INV_SQRT2 0.70710678118654752440f
#define LG_INV_SQRT2PI 0.39894228040143267794f

/* out[i] = inp[i]·Φ(λ·inp[i]), Φ(u) = ½·erfc(−u/√2) */
static void lg_act_lgelu_forward(float *out, const float *inp, float lambda, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        float x = inp[i];
        out[i] = x * 0.5f * erfcf(-lambda * x * LG_INV_SQRT2);
    }
}

/* dinp += dout·(Φ(λx) + λx·φ(λx)); dλ += Σ dout·x²·φ(λx) */
static void lg_act_lgelu_backward(float *dinp, float *dlambda, const float *dout, const float *inp, float lambda,
                                  size_t n)
{
    double dl = 0.0;
    for (size_t i = 0; i < n; i++) {
        float x = inp[i], u = lambda * x;
        float Phi = 0.5f * erfcf(-u * LG_INV_SQRT2);
        float phi = LG_INV_SQRT2PI * expf(-0.5f * u * u);
        dinp[i] += dout[i] * (Phi + u * phi);
        dl += (double)(dout[i] * x * x * phi);
    }
    if (dlambda) *dlambda += (float)dl;
}

void lg_act_forward(float *out, const float *inp, lg_act kind, float lambda, size_t n)
{
    switch (kind) {
    case LG_ACT_RELU:
        for (size_t i = 0; i < n; i++) out[i] = inp[i] > 0.0f ? inp[i] : 0.0f;
        return;
    case LG_ACT_GELU: lg_act_lgelu_forward(out, inp, 1.0f, n); return;
    case LG_ACT_LGELU: lg_act_lgelu_forward(out, inp, lambda, n); return;
    case LG_ACT_IDENTITY: break;
    }
    if (out != inp)
        for (size_t i = 0; i < n; i++) out[i] = inp[i];
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
    case LG_ACT_IDENTITY: break;
    }
    for (size_t i = 0; i < n; i++) dinp[i] += dout[i];
}
