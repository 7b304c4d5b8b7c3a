/* onnx_ops.c — the ONNX op table and the dispatch of one node with a
 * network-valued input (onnx_run.h; DESIGN.md "Adding an ONNX op").
 *
 * Each op is one entry {op, handler, flags, aux, doc}: the name is written
 * here once; the supported-ops text and the unsupported-op message are
 * generated from the table (and from the activation table's single-op
 * kinds, core/act.h, which the reader takes as they are). The dispatcher
 * counts the network-valued inputs, takes a value set aside back into the
 * pending map, and does the checks the entry's flags ask for; the handler
 * does the rest.
 */
#include <ctype.h>
#include <stdlib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "onnx/onnx.h"
#include "onnx/onnx_run.h"

static const lg_ox_const *lg_ox_other_const(const lg_ox_run *R, const lg_ox_call *c)
{
    return &R->G.vals[c->in[1 - c->dpos]].c;
}

/* A binary op with one network value and one constant input. */
static lg_status lg_ox_need_two(const lg_ox_run *R, const lg_ox_call *c)
{
    if (c->nd->n_input != 2 || c->in[1 - c->dpos] < 0)
        return lg_fail(LG_ERR_FORMAT, "%s: %s: expected 2 inputs", R->G.file, lg_ox_name(R, c->node));
    return LG_OK;
}

/* out is x under a new name (an op that changes nothing). */
static void lg_ox_same(lg_ox_val *out, const lg_ox_val *x)
{
    lg_ox_val keep = *out;
    *out = *x;
    out->name = keep.name;
    out->uses = keep.uses;
    out->producer = keep.producer;
}

/* ---- handlers ---- */

static lg_status lg_ox_h_shape(lg_ox_run *R, lg_ox_call *c, lg_ox_val *out)
{ /* the value's known shape, a constant (onnx_shape.c) */
    lg_status st = lg_ox_shape_fold(&R->G, c->node, c->x->gen == R->gen ? &R->B.shape : &c->x->shape, &out->c);
    if (st == LG_OK) out->kind = LG_OX_CONST;
    return st;
}

static lg_status lg_ox_h_arith(lg_ox_run *R, lg_ox_call *c, lg_ox_val *out)
{
    if (c->nd_dyn == 2 && c->op->aux != '*') return lg_ox_sum(R, c->node, c->dyn[0], c->dyn[1], c->op->aux == '-', out);
    if (c->nd_dyn == 2) { /* a product of two values: the GELU or Swish pattern only */
        lg_ox_val *a = c->dyn[0], *h = c->dyn[1];
        lg_status st;
        if (a->form != LG_OX_LIN) a = c->dyn[1], h = c->dyn[0];
        if (a->form == LG_OX_LIN && h->form == LG_OX_SIG) return lg_ox_swish(R, c->node, a, h, c->sole);
        if (a->form == LG_OX_LIN && h->form == LG_OX_LIN) /* a product node */
            return lg_ox_product(R, c->node, c->dyn[0], c->dyn[1], 1, out);
        if (a->form != LG_OX_LIN || h->form != LG_OX_HALF1)
            return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: product of two network values inside an unfinished GELU or "
                           "Swish pattern", R->G.file, lg_ox_name(R, c->node));
        out->form = LG_OX_PROD;
        out->k = a->kmul / a->kdiv * h->k;
        out->lambda = h->lambda;
        if (lg_ox_pattern_is(a->kmul, a->kdiv, h->k, 0.5)) {
            out->k = 0.5;
            if (!c->sole && (st = lg_ox_release(R, c->node)) != LG_OK) return st;
            if ((st = lg_ox_close_pattern(R, &R->B, c->node, LG_ACT_ONNX_ERF, out->lambda)) != LG_OK) return st;
            out->form = LG_OX_LIN;
            out->kmul = out->kdiv = 1.0;
        }
        return LG_OK;
    }
    lg_status st = lg_ox_need_two(R, c);
    if (st != LG_OK) return st;
    return lg_ox_arith(R, c->node, (char)c->op->aux, c->x, c->dpos == 0, lg_ox_other_const(R, c), out);
}

static lg_status lg_ox_h_neg(lg_ox_run *R, lg_ox_call *c, lg_ox_val *out)
{ /* −x: the product with the constant −1 (exact) */
    double m1 = -1.0;
    lg_ox_const k = {.shape = {0, {0}}, .n = 1, .dtype = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, .v = &m1};
    return lg_ox_arith(R, c->node, '*', c->x, 1, &k, out);
}

static lg_status lg_ox_take_back(lg_ox_run *R, lg_ox_call *c);

/* Concat of one network value and constants (a class token before the patches): an index map
 * placing the value (zeros at the constants' places), then the constants as a bias; exact. */
static lg_status lg_ox_concat_const(lg_ox_run *R, lg_ox_call *c)
{
    lg_ox_b *B = &R->B;
    const Onnx__NodeProto *nd = c->nd;
    lg_status st;
    int64_t axis = 0;
    if (lg_ox_attr_int(&R->G, c->node, "axis", &axis) < 0) return LG_ERR_FORMAT;
    if ((st = lg_ox_take_back(R, c)) != LG_OK) return st;
    if (c->x->form != LG_OX_LIN || lg_ox_live_gen(R) != 0) return lg_ox_pattern_fail(R, c->node);
    if ((st = lg_ox_b_fold(B, c->x)) != LG_OK) return st;
    const lg_ox_shape s0 = B->shape;
    int rank = s0.rank;
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank)
        return lg_fail(LG_ERR_FORMAT, "%s: %s: axis out of range for rank %d", R->G.file, lg_ox_name(R, c->node), rank);
    lg_ox_shape os = s0;
    os.d[axis] = 0;
    for (size_t p = 0; p < nd->n_input; p++) {
        const lg_ox_shape *sp = (int)p == c->dpos ? &s0 : &R->G.vals[c->in[p]].c.shape;
        if ((int)p != c->dpos && !R->G.vals[c->in[p]].c.v)
            return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: Concat with a constant of integers", R->G.file,
                           lg_ox_name(R, c->node));
        if (sp->rank != rank) goto shape;
        for (int a = 0; a < rank; a++)
            if (a != axis && sp->d[a] != s0.d[a]) goto shape;
        os.d[axis] += sp->d[axis];
    }
    size_t nout = lg_ox_shape_count(&os), outer = 1, inner = 1, A = (size_t)os.d[axis], off = 0;
    if (nout == 0 || nout > LG_NET_MAX_DIM) goto shape;
    for (int a = 0; a < axis; a++) outer *= (size_t)os.d[a];
    for (int a = (int)axis + 1; a < rank; a++) inner *= (size_t)os.d[a];
    int *map = malloc(nout * sizeof *map);
    double *bias = calloc(nout, sizeof *bias);
    if (!map || !bias) {
        free(map);
        free(bias);
        return lg_fail(LG_ERR_NOMEM, "%s: out of memory", R->G.file);
    }
    for (size_t p = 0; p < nd->n_input; p++) {
        int dyn = (int)p == c->dpos;
        const lg_ox_const *k = dyn ? NULL : &R->G.vals[c->in[p]].c;
        size_t ap = (size_t)(dyn ? s0.d[axis] : k->shape.d[axis]);
        for (size_t o = 0; o < outer; o++)
            for (size_t j = 0; j < ap; j++)
                for (size_t i = 0; i < inner; i++) {
                    size_t f = (o * ap + j) * inner + i, g = (o * A + off + j) * inner + i;
                    map[g] = dyn ? (int)f : -1;
                    if (!dyn) bias[g] = k->v[f];
                }
        off += ap;
    }
    if ((st = lg_ox_b_index(B, map, (int)nout)) == LG_OK) {
        B->shape = os;
        st = lg_ox_b_shift(B, bias, 1.0);
    }
    free(bias);
    return st;
shape:
    return lg_fail(LG_ERR_FORMAT, "%s: %s: Concat inputs' shapes differ off the axis", R->G.file,
                   lg_ox_name(R, c->node));
}

static lg_status lg_ox_h_concat(lg_ox_run *R, lg_ox_call *c, lg_ox_val *out)
{
    int consts = 0;
    for (size_t p = 0; p < c->nd->n_input; p++)
        consts += c->in[p] >= 0 && R->G.vals[c->in[p]].kind == LG_OX_CONST;
    if (c->nd_dyn == 1 && consts + 1 == (int)c->nd->n_input) return lg_ox_concat_const(R, c);
    return lg_ox_concat(R, c->node, out);
}

static lg_status lg_ox_h_split(lg_ox_run *R, lg_ox_call *c, lg_ox_val *out)
{
    (void)out;
    if (c->nd_dyn != 1 || c->dpos != 0)
        return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: Split's sizes must be constants", R->G.file,
                       lg_ox_name(R, c->node));
    return lg_ox_split(R, c->node, c->x);
}

static lg_status lg_ox_h_slice(lg_ox_run *R, lg_ox_call *c, lg_ox_val *out)
{
    return c->op->aux ? lg_ox_gather(R, c->node, c->x, out) : lg_ox_slice(R, c->node, c->x, out);
}

static lg_status lg_ox_h_dropout(lg_ox_run *R, lg_ox_call *c, lg_ox_val *out)
{ /* the identity at inference; a constant true training_mode is refused */
    const lg_ox_val *tm = c->nd->n_input >= 3 && c->in[2] >= 0 ? &R->G.vals[c->in[2]] : NULL;
    if (c->dpos != 0 ||
        (tm && (tm->kind != LG_OX_CONST || (tm->c.iv && tm->c.iv[0]) || (tm->c.v && tm->c.v[0] != 0.0))))
        return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: Dropout in training mode is not supported", R->G.file,
                       lg_ox_name(R, c->node));
    lg_ox_same(out, c->x);
    return LG_OK;
}

static lg_status lg_ox_h_identity(lg_ox_run *R, lg_ox_call *c, lg_ox_val *out)
{ /* closes a layer after a matrix op (keeps identity layers apart) */
    lg_ox_b *B = &R->B;
    lg_status st;
    if (c->x->form == LG_OX_LIN && c->sole && (B->W || B->K || B->map || B->n_xt)) {
        if ((st = lg_ox_b_fold(B, c->x)) != LG_OK) return st;
        return lg_ox_b_close(B, LG_ACT_IDENTITY, 1.0);
    }
    lg_ox_same(out, c->x);
    return LG_OK;
}

static lg_status lg_ox_h_erf(lg_ox_run *R, lg_ox_call *c, lg_ox_val *out)
{
    if (c->x->form != LG_OX_LIN) return lg_ox_pattern_fail(R, c->node);
    out->form = LG_OX_ERF;
    out->k = 1.0;
    return lg_ox_erf_lambda(R, c->node, c->x, out);
}

/* An activation of the activation table read as one node (act.h onnx_op). */
static lg_status lg_ox_close_act(lg_ox_run *R, lg_ox_call *c, lg_act act, int alias)
{
    lg_status st;
    if (lg_act_has_param(act)) return lg_ox_act_param_op(R, c->node, c->x, c->dpos, c->sole, act, alias);
    if (c->x->form != LG_OX_LIN || !c->sole) return lg_ox_pattern_fail(R, c->node);
    if ((st = lg_ox_b_fold(&R->B, c->x)) != LG_OK) return st;
    return lg_ox_b_close(&R->B, act, 1.0);
}

static lg_status lg_ox_h_sigmoid(lg_ox_run *R, lg_ox_call *c, lg_ox_val *out)
{
    if (c->x->form == LG_OX_LIN && !c->sole) {
        /* the value forks into σ(β·z) and z: the gate of a Swish pattern */
        out->form = LG_OX_SIG;
        out->k = 1.0;
        if (lg_ox_param_down(c->x->kmul, c->x->kdiv, 0, &out->lambda))
            return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: Sigmoid of %.17g/%.17g times the value: the Swish pattern "
                           "needs a positive finite beta", R->G.file, lg_ox_name(R, c->node), c->x->kmul, c->x->kdiv);
        return LG_OK;
    }
    return lg_ox_close_act(R, c, LG_ACT_SIGMOID, 0);
}

static lg_status lg_ox_h_tanh(lg_ox_run *R, lg_ox_call *c, lg_ox_val *out)
{ /* 2·σ(2z) − 1 (onnx_affine.c) */
    (void)c, (void)out;
    return lg_ox_b_tanh(&R->B);
}

/* HardSigmoid: clip(alpha·x + beta, 0, 1) as ReLU layers (exact: the scale and shift fold like
 * any Mul and Add; alpha and beta are the file's float attributes, doubles exactly). */
static lg_status lg_ox_h_hardsigmoid(lg_ox_run *R, lg_ox_call *c, lg_ox_val *out)
{
    (void)out;
    lg_ox_b *B = &R->B;
    double alpha = (double)0.2f, beta = 0.5; /* the defaults are float attributes, as written ones are */
    if (lg_ox_attr_float(&R->G, c->node, "alpha", &alpha) < 0 || lg_ox_attr_float(&R->G, c->node, "beta", &beta) < 0)
        return LG_ERR_FORMAT;
    if (!isfinite(alpha) || !isfinite(beta))
        return lg_fail(LG_ERR_FORMAT, "%s: %s: alpha and beta must be finite", R->G.file, lg_ox_name(R, c->node));
    double *v = malloc((size_t)(B->n ? B->n : 1) * sizeof *v);
    if (!v) return lg_fail(LG_ERR_NOMEM, "%s: out of memory", R->G.file);
    lg_status st = LG_OK;
    if (alpha != 1.0) {
        for (int i = 0; i < B->n; i++) v[i] = alpha;
        st = lg_ox_b_scale(B, v, 0);
    }
    if (st == LG_OK && beta != 0.0) {
        for (int i = 0; i < B->n; i++) v[i] = beta;
        st = lg_ox_b_shift(B, v, 1.0);
    }
    free(v);
    if (st != LG_OK) return st;
    return lg_ox_b_clip(B, 1, 0.0, 1, 1.0);
}

/* Abs: |z| = relu(z) + relu(−z), one ReLU layer of twice the width [z; −z] and the sum of its
 * halves (exact). */
static lg_status lg_ox_h_abs(lg_ox_run *R, lg_ox_call *c, lg_ox_val *out)
{
    (void)out;
    lg_ox_b *B = &R->B;
    size_t n = (size_t)B->n;
    if (2 * n * n * sizeof(double) > LG_OX_DENSE_MAX_BYTES || 2 * n > LG_NET_MAX_DIM)
        return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: Abs of %zu values is too wide", R->G.file,
                       lg_ox_name(R, c->node), n);
    double *M = calloc(2 * n * n, sizeof *M);
    if (!M) return lg_fail(LG_ERR_NOMEM, "%s: out of memory", R->G.file);
    for (size_t i = 0; i < n; i++) M[i * n + i] = 1.0, M[(n + i) * n + i] = -1.0;
    lg_ox_shape keep = B->shape;
    lg_status st = lg_ox_b_linear(B, M, (int)(2 * n), NULL);
    if (st == LG_OK) st = lg_ox_b_close(B, LG_ACT_RELU, 1.0);
    if (st != LG_OK) return st;
    if (!(M = calloc(2 * n * n, sizeof *M))) return lg_fail(LG_ERR_NOMEM, "%s: out of memory", R->G.file);
    for (size_t i = 0; i < n; i++) M[i * 2 * n + i] = M[i * 2 * n + n + i] = 1.0;
    if ((st = lg_ox_b_linear(B, M, (int)n, NULL)) == LG_OK) B->shape = keep;
    return st;
}

/* Max or Min (aux '>' or '<') of the network value and constants: max(z, c) = c + relu(z − c),
 * min(z, c) = c − relu(c − z), the one-sided Clip; of two network values: onnx_maxmin.c. */
static lg_status lg_ox_h_maxmin(lg_ox_run *R, lg_ox_call *c, lg_ox_val *out)
{
    if (c->nd_dyn == 2 && c->in[0] == c->in[1]) { /* Max(x, x) = x */
        lg_status st = lg_ox_settle(R, c->node, c->in, 1);
        if (st == LG_OK) st = lg_ox_attach(R, c->node, c->dyn[0]);
        lg_ox_val t = *c->dyn[0];
        t.pm = NULL;
        out->gen = R->gen; /* the pending map, after the settle's new generation */
        return st == LG_OK ? lg_ox_b_fold(&R->B, &t) : st;
    }
    if (c->nd_dyn == 2) return lg_ox_maxmin2(R, c->node, c->dyn[0], c->dyn[1], c->op->aux == '>', out);
    (void)out;
    if (c->nd_dyn != 1)
        return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: %s of %d network values is not supported (one network value "
                       "and scalar constants: the one-sided Clip)", R->G.file, lg_ox_name(R, c->node), c->op->op,
                       c->nd_dyn);
    int have = 0;
    double b = 0;
    for (size_t j = 0; j < c->nd->n_input; j++) {
        if ((int)j == c->dpos || c->in[j] < 0) continue;
        const lg_ox_val *v = &R->G.vals[c->in[j]];
        if (v->kind != LG_OX_CONST || !lg_ox_is_scalar(&v->c))
            return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: %s with a constant of more than one value is not supported "
                           "(a scalar constant: the one-sided Clip)", R->G.file, lg_ox_name(R, c->node), c->op->op);
        if (!isfinite(v->c.v[0]))
            return lg_fail(LG_ERR_FORMAT, "%s: %s: %s with a constant %g", R->G.file, lg_ox_name(R, c->node),
                           c->op->op, v->c.v[0]);
        b = !have ? v->c.v[0] : c->op->aux == '>' ? fmax(b, v->c.v[0]) : fmin(b, v->c.v[0]);
        have = 1;
    }
    if (!have) return LG_OK; /* Max of one value: the value */
    return c->op->aux == '>' ? lg_ox_b_clip(&R->B, 1, b, 0, 0.0) : lg_ox_b_clip(&R->B, 0, 0.0, 1, b);
}

static lg_status lg_ox_h_softmax(lg_ox_run *R, lg_ox_call *c, lg_ox_val *out)
{
    (void)out;
    return lg_ox_softmax(R, c->node);
}

static lg_status lg_ox_h_layernorm(lg_ox_run *R, lg_ox_call *c, lg_ox_val *out)
{
    (void)out;
    return lg_ox_layernorm(R, c->node);
}

static lg_status lg_ox_h_reduce(lg_ox_run *R, lg_ox_call *c, lg_ox_val *out)
{
    (void)out;
    return lg_ox_reduce(R, c->node, c->x, c->op->aux);
}

static lg_status lg_ox_h_decomposed(lg_ox_run *R, lg_ox_call *c, lg_ox_val *out)
{
    (void)out;
    return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: %s of a network value is read only inside a LayerNorm written as "
                   "ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div (nearest supported: LayerNormalization)",
                   R->G.file, lg_ox_name(R, c->node), c->op->op);
}

static lg_status lg_ox_h_conv(lg_ox_run *R, lg_ox_call *c, lg_ox_val *out)
{
    (void)out;
    return lg_ox_conv(&R->G, &R->B, c->node);
}
static lg_status lg_ox_h_convt(lg_ox_run *R, lg_ox_call *c, lg_ox_val *out)
{
    (void)out;
    return lg_ox_convtranspose(&R->G, &R->B, c->node);
}
static lg_status lg_ox_h_resize(lg_ox_run *R, lg_ox_call *c, lg_ox_val *out)
{
    (void)out;
    return lg_ox_resize(&R->G, &R->B, c->node, c->op->aux);
}
static lg_status lg_ox_h_avgpool(lg_ox_run *R, lg_ox_call *c, lg_ox_val *out)
{
    (void)out;
    return lg_ox_avgpool(&R->G, &R->B, c->node, c->op->aux);
}
static lg_status lg_ox_h_maxpool(lg_ox_run *R, lg_ox_call *c, lg_ox_val *out)
{
    (void)out;
    return lg_ox_maxpool(&R->G, &R->B, c->node, c->op->aux);
}
static lg_status lg_ox_h_pad(lg_ox_run *R, lg_ox_call *c, lg_ox_val *out)
{
    (void)out;
    return lg_ox_pad(&R->G, &R->B, c->node);
}
static lg_status lg_ox_h_transpose(lg_ox_run *R, lg_ox_call *c, lg_ox_val *out)
{
    (void)out;
    return lg_ox_transpose(&R->G, &R->B, c->node);
}
static lg_status lg_ox_h_batchnorm(lg_ox_run *R, lg_ox_call *c, lg_ox_val *out)
{
    (void)out;
    return lg_ox_batchnorm(&R->G, &R->B, c->node);
}

static lg_status lg_ox_h_clip(lg_ox_run *R, lg_ox_call *c, lg_ox_val *out)
{
    (void)out;
    return lg_ox_clip(R, c->node, c->x, c->dpos, c->sole);
}

/* Flatten, Squeeze/Unsqueeze and Reshape change the shape only (aux 0, 1, 2). */
static lg_status lg_ox_h_reshape(lg_ox_run *R, lg_ox_call *c, lg_ox_val *out)
{
    lg_ox_b *B = &R->B;
    out->kmul = c->x->kmul, out->kdiv = c->x->kdiv, out->has_mul = c->x->has_mul;
    if (c->op->aux == 0) return lg_ox_flatten_shape(&R->G, c->node, &B->shape, &B->shape);
    if (c->op->aux == 1) return lg_ox_squeeze_shape(&R->G, c->node, &B->shape, &B->shape);
    if (c->nd->n_input != 2 || c->in[1] < 0)
        return lg_fail(LG_ERR_FORMAT, "%s: %s: expected data and a constant shape", R->G.file, lg_ox_name(R, c->node));
    lg_ox_shape ns;
    lg_status st = lg_ox_reshape_shape(&R->G, c->node, &B->shape, &R->G.vals[c->in[1]].c, &ns);
    if (st == LG_OK) B->shape = ns;
    return st;
}

static lg_status lg_ox_h_gemm(lg_ox_run *R, lg_ox_call *c, lg_ox_val *out)
{
    (void)out;
    return lg_ox_gemm(R, c->node);
}

static lg_status lg_ox_h_matmul(lg_ox_run *R, lg_ox_call *c, lg_ox_val *out)
{
    (void)out;
    if (c->nd_dyn == 2) return lg_ox_product(R, c->node, c->dyn[0], c->dyn[1], 0, out);
    lg_status st = lg_ox_need_two(R, c);
    if (st == LG_OK && (st = lg_ox_b_fold(&R->B, c->x)) == LG_OK)
        st = lg_ox_matmul(R, c->node, c->dpos == 0, lg_ox_other_const(R, c));
    return st;
}

/* ---- the table ---- */
#define LIN_ LG_OXF_LIN
#define IMG_ (LG_OXF_LIN | LG_OXF_FIRST | LG_OXF_FOLD)
static const lg_ox_op lg_ox_ops[] = {
    {"Gemm", lg_ox_h_gemm, IMG_, 0, " (transA, transB, alpha, beta)"},
    {"MatMul", lg_ox_h_matmul, LIN_ | LG_OXF_PAIR, 0,
     " (a constant on either side, applied to every token; or two network values, batched: a product node)"},
    {"Conv", lg_ox_h_conv, IMG_, 0, " (any group, no dilation)"},
    {"ConvTranspose", lg_ox_h_convt, IMG_, 0, ""},
    {"Resize", lg_ox_h_resize, IMG_, 0, " (nearest)"},
    {"Upsample", lg_ox_h_resize, IMG_, 1, " (nearest)"},
    {"AveragePool", lg_ox_h_avgpool, IMG_, 0, ""},
    {"GlobalAveragePool", lg_ox_h_avgpool, IMG_, 1, ""},
    {"MaxPool", lg_ox_h_maxpool, IMG_, 0, " (a max-pool node: any window and stride, symmetric pads)"},
    {"GlobalMaxPool", lg_ox_h_maxpool, IMG_, 1, ""},
    {"BatchNormalization", lg_ox_h_batchnorm, IMG_ | LG_OXF_MULTIOUT, 0, " (folded)"},
    {"Pad", lg_ox_h_pad, IMG_, 0, " (zeros)"},
    {"Transpose", lg_ox_h_transpose, IMG_, 0, ""},
    {"Slice", lg_ox_h_slice, LIN_ | LG_OXF_FIRST, 0, ""},
    {"Gather", lg_ox_h_slice, LIN_ | LG_OXF_FIRST, 1, " (constant indices)"},
    {"Split", lg_ox_h_split, LG_OXF_RAW | LG_OXF_OUTPUTS, 0, ""},
    {"Concat", lg_ox_h_concat, LG_OXF_RAW, 0, " (of network values, or of one and constants)"},
    {"Dropout", lg_ox_h_dropout, LG_OXF_MULTIOUT, 0, " (the identity)"},
    {"Add", lg_ox_h_arith, LG_OXF_PAIR | LG_OXF_SCALAR | LG_OXF_ADD, '+', " (a constant or a second network value)"},
    {"Sub", lg_ox_h_arith, LG_OXF_PAIR | LG_OXF_SCALAR | LG_OXF_ADD, '-', " (a constant or a second network value)"},
    {"Mul", lg_ox_h_arith, LG_OXF_PAIR | LG_OXF_SCALAR, '*', " (a constant, or a second network value: a product node)"},
    {"Div", lg_ox_h_arith, LG_OXF_SCALAR, '/', " (by a constant)"},
    {"Neg", lg_ox_h_neg, 0, 0, ""},
    {"Abs", lg_ox_h_abs, IMG_, 0, " (relu(x) + relu(-x))"},
    {"Max", lg_ox_h_maxmin, LIN_ | LG_OXF_FOLD | LG_OXF_PAIR, '>', " (with a scalar constant, or of two network values: a + relu(b - a))"},
    {"Min", lg_ox_h_maxmin, LIN_ | LG_OXF_FOLD | LG_OXF_PAIR, '<', " (with a scalar constant, or of two network values)"},
    {"Clip", lg_ox_h_clip, 0, 0, " (as ReLUs)"},
    {"HardSigmoid", lg_ox_h_hardsigmoid, IMG_, 0, " (as ReLUs)"},
    {"Sigmoid", lg_ox_h_sigmoid, LG_OXF_PATTERN, 0, ""},
    {"Tanh", lg_ox_h_tanh, LIN_ | LG_OXF_FOLD, 0, " (as 2*Sigmoid(2x)-1)"},
    {"Erf", lg_ox_h_erf, LG_OXF_PATTERN, 0,
     " (inside the GELU pattern x*0.5*(1+erf(x/sqrt(2))) or x*0.5*(1+erf(lambda*x/sqrt(2))))"},
    {"Flatten", lg_ox_h_reshape, LIN_, 0, ""},
    {"Squeeze", lg_ox_h_reshape, LIN_ | LG_OXF_FIRST, 1, ""},
    {"Unsqueeze", lg_ox_h_reshape, LIN_ | LG_OXF_FIRST, 1, ""},
    {"Reshape", lg_ox_h_reshape, LIN_, 2, " (its shape may be computed from the value's Shape)"},
    {"Identity", lg_ox_h_identity, 0, 0, ""},
    {"Shape", lg_ox_h_shape, LG_OXF_RAW, 0, " (folded)"},
    {"Softmax", lg_ox_h_softmax, IMG_, 0, " (a softmax node; any axis)"},
    {"LayerNormalization", lg_ox_h_layernorm, IMG_ | LG_OXF_MULTIOUT, 0, " (a layernorm node)"},
    {"ReduceMean", lg_ox_h_reduce, IMG_, 1,
     " (a mean that divides exactly, or the start of LayerNorm as ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div, "
     "Mul, Add: a layernorm node)"},
    {"ReduceSum", lg_ox_h_reduce, IMG_, 0, ""},
    {"Pow", lg_ox_h_decomposed, 0, 0, NULL},
    {"Sqrt", lg_ox_h_decomposed, 0, 0, NULL},
};
#undef LIN_
#undef IMG_
#define LG_OX_N_OPS (sizeof lg_ox_ops / sizeof lg_ox_ops[0])

/* An entry for a single-op kind of the activation table (Relu, PRelu, LeakyRelu, ...). */
static lg_status lg_ox_h_act(lg_ox_run *R, lg_ox_call *c, lg_ox_val *out)
{
    (void)out;
    lg_act act;
    int alias = 0;
    lg_act_onnx_kind(LG_ACT_ONNX_OP, 1.0, c->nd->op_type, &alias, &act);
    return lg_ox_close_act(R, c, act, alias);
}
static const lg_ox_op lg_ox_act_op = {"(activation)", lg_ox_h_act, 0, 0, ""};

const lg_ox_op *lg_ox_op_find(const char *op)
{
    for (size_t i = 0; i < LG_OX_N_OPS; i++)
        if (strcmp(op, lg_ox_ops[i].op) == 0) return &lg_ox_ops[i];
    lg_act a;
    if (lg_act_onnx_kind(LG_ACT_ONNX_OP, 1.0, op, NULL, &a) == 0) return &lg_ox_act_op;
    return NULL;
}

static void lg_ox_cat(char *buf, size_t cap, size_t *len, const char *a, const char *b)
{
    int k = snprintf(buf + *len, cap - *len, "%s%s", a, b);
    if (k > 0) *len = *len + (size_t)k < cap ? *len + (size_t)k : cap - 1;
}

const char *lg_ox_ops_text(void)
{
    static char text[4096];
    if (text[0]) return text;
    size_t len = 0;
    for (size_t i = 0; i < LG_OX_N_OPS; i++) {
        if (!lg_ox_ops[i].doc) continue; /* recognised and refused */
        lg_ox_cat(text, sizeof text, &len, len ? ", " : "", lg_ox_ops[i].op);
        lg_ox_cat(text, sizeof text, &len, lg_ox_ops[i].doc, "");
    }
    for (int a = 0; a < LG_ACT_COUNT; a++) {
        const lg_act_info *ai = lg_act_info_of((lg_act)a);
        if (ai->onnx_pattern != LG_ACT_ONNX_OP || !ai->onnx_op || lg_ox_op_find(ai->onnx_op) != &lg_ox_act_op) continue;
        lg_ox_cat(text, sizeof text, &len, ", ", ai->onnx_op);
        if (ai->onnx_op_alias) lg_ox_cat(text, sizeof text, &len, ", ", ai->onnx_op_alias);
    }
    lg_ox_cat(text, sizeof text, &len, ", Constant, and the Swish pattern x*Sigmoid(beta*x); constant folding of ",
              lg_ox_folds_text());
    return text;
}

int lg_ox_edit(const char *a, const char *b)
{
    int la = (int)strnlen(a, 31), lb = (int)strnlen(b, 31), d[32];
    for (int j = 0; j <= lb; j++) d[j] = j;
    for (int i = 1; i <= la; i++) {
        int diag = d[0];
        d[0] = i;
        for (int j = 1; j <= lb; j++) {
            int up = d[j], cost = tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]);
            int v = diag + cost;
            if (up + 1 < v) v = up + 1;
            if (d[j - 1] + 1 < v) v = d[j - 1] + 1;
            d[j] = v;
            diag = up;
        }
    }
    return d[lb];
}

const char *lg_ox_op_nearest(const char *op)
{
    const char *best = lg_ox_ops[0].op;
    int bd = 1 << 30;
    for (size_t i = 0; i < LG_OX_N_OPS; i++) {
        int e = lg_ox_ops[i].doc ? lg_ox_edit(op, lg_ox_ops[i].op) : 1 << 30;
        if (e < bd) bd = e, best = lg_ox_ops[i].op;
    }
    for (int a = 0; a < LG_ACT_COUNT; a++) {
        const lg_act_info *ai = lg_act_info_of((lg_act)a);
        if (ai->onnx_pattern != LG_ACT_ONNX_OP || !ai->onnx_op) continue;
        int e = lg_ox_edit(op, ai->onnx_op);
        if (e < bd) bd = e, best = ai->onnx_op;
    }
    return best;
}

const char *lg_onnx_supported_ops(void) { return lg_ox_ops_text(); }

/* ---- the dispatch ---- */

/* 1 if the node may continue a GELU or Swish pattern on a value that other nodes also read:
 * Erf, Sigmoid, or arithmetic with a scalar constant (an Add only on erf(·): the 1 + erf step). */
static int lg_ox_continues_pattern(const lg_ox_run *R, const lg_ox_call *c)
{
    unsigned f = c->op->flags;
    if (f & LG_OXF_PATTERN) return 1;
    if (!(f & LG_OXF_SCALAR)) return 0;
    int scalar = 0, lin = 0;
    for (size_t j = 0; j < c->nd->n_input; j++) {
        int v = c->in[j];
        if (v >= 0 && R->G.vals[v].kind == LG_OX_CONST) scalar = lg_ox_is_scalar(&R->G.vals[v].c);
        if (v >= 0 && R->G.vals[v].kind == LG_OX_DYN) lin = R->G.vals[v].form == LG_OX_LIN;
    }
    return scalar && !((f & LG_OXF_ADD) && lin);
}

/* A value set aside is taken back; a value others still read is set aside first (except
 * inside a GELU or Swish pattern, which forks the value on purpose). */
static lg_status lg_ox_take_back(lg_ox_run *R, lg_ox_call *c)
{
    lg_status st;
    int pat = lg_ox_continues_pattern(R, c);
    if (c->x->gen == R->gen && lg_ox_live_gen(R) > 0 && !pat) {
        int keep = c->in[c->dpos];
        if ((st = lg_ox_settle(R, c->node, &keep, 1)) != LG_OK) return st;
    }
    if (c->x->gen != R->gen) {
        if ((st = lg_ox_attach(R, c->node, c->x)) != LG_OK) return st;
        if (!c->x->pm && c->x->uses > 0 && pat) { /* a pattern starts on a node that others read too */
            c->x->gen = R->gen;
            R->cur[R->n_cur++] = c->in[c->dpos];
        } else {
            c->tmp = *c->x;
            c->tmp.pm = NULL;
            c->tmp.gen = R->gen;
            c->x = &c->tmp;
        }
    }
    return LG_OK;
}

lg_status lg_ox_dyn_node(lg_ox_run *R, int node, lg_ox_val *out)
{
    lg_ox_call c = {.node = node, .nd = R->G.g->node[node], .in = R->G.in_idx[node], .dpos = -1};
    lg_status st;
    for (size_t j = 0; j < c.nd->n_input; j++)
        if (c.in[j] >= 0 && R->G.vals[c.in[j]].kind == LG_OX_DYN) {
            if (c.nd_dyn < 2) c.dyn[c.nd_dyn] = &R->G.vals[c.in[j]];
            if (c.dpos < 0) c.dpos = (int)j;
            c.nd_dyn++;
        }
    c.x = c.dyn[0];
    if (!(c.op = lg_ox_op_find(c.nd->op_type)))
        return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: op type '%s' is not supported (nearest supported: %s; "
                       "`lgelu info --help` lists all)", R->G.file, lg_ox_name(R, node), c.nd->op_type,
                       lg_ox_op_nearest(c.nd->op_type));
    unsigned f = c.op->flags;
    out->kind = LG_OX_DYN;
    out->form = LG_OX_LIN;
    out->kmul = out->kdiv = 1.0;
    out->gen = R->gen;
    out->pm = NULL;
    if (f & LG_OXF_RAW) return c.op->fn(R, &c, out);
    if (c.nd_dyn == 1) {
        if ((st = lg_ox_take_back(R, &c)) != LG_OK) return st;
        out->gen = R->gen;
    }
    c.sole = lg_ox_live_gen(R) == 0;
    if ((f & LG_OXF_PAIR) && c.nd_dyn == 2 && c.nd->n_input == 2) return c.op->fn(R, &c, out);
    if (c.nd_dyn != 1)
        return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: uses %d network values; only one (a chain) is supported",
                       R->G.file, lg_ox_name(R, node), c.nd_dyn);
    if (c.nd->n_output != 1 && !(f & LG_OXF_MULTIOUT))
        return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: has %zu outputs, expected 1", R->G.file, lg_ox_name(R, node),
                       c.nd->n_output);
    if ((f & LG_OXF_LIN) && (c.x->form != LG_OX_LIN || !c.sole)) return lg_ox_pattern_fail(R, node);
    if ((f & LG_OXF_FIRST) && c.dpos != 0)
        return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: the network value must be the first input", R->G.file,
                       lg_ox_name(R, node));
    if ((f & LG_OXF_FOLD) && (st = lg_ox_b_fold(&R->B, c.x)) != LG_OK) return st;
    return c.op->fn(R, &c, out);
}
