/* act_onnx.c — each activation's ONNX form (act_onnx.h). */
#include "onnx/act_onnx.h"

#include <stddef.h>

/* an explicit Identity keeps the layer boundary (the reader closes a layer
 * there) so a hidden identity layer survives the round trip */
const char *lg_act_onnx_identity(lg_ow *w, double p, int k, const char *z, const char *out)
{
    (void)p, (void)k;
    return lg_ow_op(w, "Identity", out, z, NULL) ? out : NULL;
}

const char *lg_act_onnx_relu(lg_ow *w, double p, int k, const char *z, const char *out)
{
    (void)p, (void)k;
    return lg_ow_op(w, "Relu", out, z, NULL) ? out : NULL;
}

const char *lg_act_onnx_sigmoid(lg_ow *w, double p, int k, const char *z, const char *out)
{
    (void)p, (void)k;
    return lg_ow_op(w, "Sigmoid", out, z, NULL) ? out : NULL;
}

/* PRelu(z, slope) with the slope as a [1] tensor */
const char *lg_act_onnx_prelu(lg_ow *w, double p, int k, const char *z, const char *out)
{
    const char *a = lg_ow_value(w, lg_ow_str(w, "L%d_slope", k), p, 1);
    return lg_ow_op(w, "PRelu", out, z, a) ? out : NULL;
}

/* x·σ(β·x): Mul(x, β), Sigmoid, Mul */
const char *lg_act_onnx_swish(lg_ow *w, double p, int k, const char *z, const char *out)
{
    const char *beta = lg_ow_value(w, lg_ow_str(w, "L%d_beta", k), p, 0);
    const char *u = lg_ow_str(w, "L%d_scaled", k), *g = lg_ow_str(w, "L%d_gate", k);
    int ok = lg_ow_op(w, "Mul", u, z, beta);
    ok &= lg_ow_op(w, "Sigmoid", g, u, NULL);
    ok &= lg_ow_op(w, "Mul", out, z, g);
    return ok ? out : NULL;
}

/* x·0.5·(1 + erf(u/√2)) with u = x (gelu) or Mul(x, λ) (lgelu) */
static const char *lg_act_onnx_erf(lg_ow *w, int k, const char *z, const char *u, const char *out)
{
    const char *half = lg_ow_shared(w, "c_half", 0.5), *one = lg_ow_shared(w, "c_one", 1.0);
    const char *sqrt2 = lg_ow_shared(w, "c_sqrt2", LG_ONNX_SQRT2_DOWN);
    const char *q = lg_ow_str(w, "L%d_erf_in", k), *e = lg_ow_str(w, "L%d_erf", k);
    const char *h = lg_ow_str(w, "L%d_one_plus_erf", k), *p = lg_ow_str(w, "L%d_x_one_plus_erf", k);
    int ok = lg_ow_op(w, "Div", q, u, sqrt2);
    ok &= lg_ow_op(w, "Erf", e, q, NULL);
    ok &= lg_ow_op(w, "Add", h, e, one);
    ok &= lg_ow_op(w, "Mul", p, z, h);
    ok &= lg_ow_op(w, "Mul", out, p, half);
    return ok ? out : NULL;
}

const char *lg_act_onnx_gelu(lg_ow *w, double p, int k, const char *z, const char *out)
{
    (void)p;
    return lg_act_onnx_erf(w, k, z, z, out);
}

const char *lg_act_onnx_lgelu(lg_ow *w, double p, int k, const char *z, const char *out)
{
    const char *lam = lg_ow_value(w, lg_ow_str(w, "L%d_lambda", k), p, 0);
    const char *u = lg_ow_str(w, "L%d_scaled", k);
    if (!lg_ow_op(w, "Mul", u, z, lam)) return NULL;
    return lg_act_onnx_erf(w, k, z, u, out);
}

lg_act_onnx_write_fn lg_act_onnx_writer(lg_act a)
{
    static const lg_act_onnx_write_fn writers[LG_ACT_COUNT] = {
        [LG_ACT_IDENTITY] = lg_act_onnx_identity, [LG_ACT_RELU] = lg_act_onnx_relu,
        [LG_ACT_GELU] = lg_act_onnx_gelu,         [LG_ACT_LGELU] = lg_act_onnx_lgelu,
        [LG_ACT_SIGMOID] = lg_act_onnx_sigmoid,   [LG_ACT_SWISH] = lg_act_onnx_swish,
        [LG_ACT_PRELU] = lg_act_onnx_prelu};
    return (int)a >= 0 && (int)a < LG_ACT_COUNT ? writers[a] : NULL;
}
