/* act.c — float activation kernels (DESIGN.md §1).
 *
 * The λ-GELU pair is the hot loop of training: it lives in act_simd.c,
 * vectorised with runtime CPU dispatch (erfc by Numerical Recipes' erfcc,
 * exp by Cody–Waite reduction and the Cephes polynomial; both tails keep
 * their relative accuracy down to FLT_MIN). The other kinds are written to
 * be auto-vectorised (no calls, no branches in the element loops), with
 * the same exp below. */
#include "train/act.h"
#include "train/expf.h"
#include "train/act_simd.h"
#include "train/act_baseline.h"

#include <stdint.h>
#include <string.h>

/* σ(x) with e = e^{−|x|} (never overflows): 1/(1+e) for x ≥ 0, e/(1+e)
 * below; σ'(x) = σ(1−σ) = e/(1+e)², accurate in both tails. lg_v_expf maps
 * NaN to a finite value, so NaN is passed through explicitly. */
static void lg_act_sigmoid_forward(float *out, const float *inp, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        float x = inp[i];
        float ax = x < 0.0f ? -x : x;
        float e = lg_v_expf(-ax), r = 1.0f / (1.0f + e);
        float s = x >= 0.0f ? r : e * r;
        out[i] = x == x ? s : x;
    }
}

static void lg_act_sigmoid_backward(float *dinp, const float *dout, const float *inp, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        float x = inp[i];
        float ax = x < 0.0f ? -x : x;
        float e = lg_v_expf(-ax), r = 1.0f / (1.0f + e);
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
    case LG_ACT_GELU: lg_simd_lgelu_forward(out, NULL, NULL, inp, 1.0f, n); return;
    case LG_ACT_LGELU: lg_simd_lgelu_forward(out, NULL, NULL, inp, lambda, n); return;
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
    case LG_ACT_GELU: lg_simd_lgelu_backward(dinp, NULL, dout, inp, 1.0f, n); return;
    case LG_ACT_LGELU: lg_simd_lgelu_backward(dinp, dlambda, dout, inp, lambda, n); return;
    case LG_ACT_SIGMOID: lg_act_sigmoid_backward(dinp, dout, inp, n); return;
    case LG_ACT_SWISH: lg_act_swish_backward(dinp, dlambda, dout, inp, lambda, n); return;
    case LG_ACT_PRELU: lg_act_prelu_backward(dinp, dlambda, dout, inp, lambda, n); return;
    case LG_ACT_IDENTITY: break;
    }
    for (size_t i = 0; i < n; i++) dinp[i] += dout[i];
}

size_t lg_act_keep_count(lg_act kind) { return kind == LG_ACT_LGELU || kind == LG_ACT_GELU ? 2 : 0; }

void lg_act_forward_keep(float *out, float *keep, const float *inp, lg_act kind, float lambda, size_t n)
{
    if (keep && lg_act_keep_count(kind) == 2)
        lg_simd_lgelu_forward(out, keep, keep + n, inp, kind == LG_ACT_GELU ? 1.0f : lambda, n);
    else
        lg_act_forward(out, inp, kind, lambda, n);
}

void lg_act_backward_kept(float *dinp, float *dlambda, const float *dout, const float *keep, const float *inp,
                          lg_act kind, float lambda, size_t n)
{
    if (keep && lg_act_keep_count(kind) == 2)
        lg_simd_lgelu_backward_kept(dinp, kind == LG_ACT_LGELU ? dlambda : NULL, dout, keep, keep + n, n);
    else
        lg_act_backward(dinp, dlambda, dout, inp, kind, lambda, n);
}
