/* onnx_read.c — ONNX model → lg_net (see onnx.h).
 *
 * The graph is interpreted symbolically in topological order. Constants are
 * decoded tensors. The one dynamic chain is kept as a pending affine map of
 * the last layer boundary a:  z = W·a + b  (W [n][m] dense, or a diagonal
 * d [n] when no matrix op has been seen since the boundary). Linear ops
 * compose into the map; Relu, Sigmoid or a recognised GELU pattern closes a layer.
 * While the chain forks (only inside a GELU pattern) values are tracked in
 * closed forms relative to z (lg_ox_form), so the pattern is matched in any
 * node order; any other fork is refused.
 */
#include <errno.h>
#include <math.h>
#include <mpfr.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/netfile.h"
#include "core/onnx.h"
#include "core/onnx_internal.h"

#define LG_OX_MAX_NESTING 64

/* ---- interpreter ---- */

typedef struct lg_ox_run {
    lg_ox_graph G;
    lg_ox_b B;
    int live;  /* dynamic values with remaining uses */
    const lg_runctx *run; /* deadline checked per initializer and per node (NULL none) */
} lg_ox_run;

static const char lg_ox_supported[] =
    "supported: Gemm, MatMul, Conv (one group, no dilation), AveragePool, GlobalAveragePool, MaxPool and "
    "GlobalMaxPool (non-overlapping windows, rewritten exactly into ReLU layers), BatchNormalization "
    "(folded), zero Pad, Transpose, Dropout (identity), Add, Sub, Mul, Div (by constants), Relu, Sigmoid, Tanh "
    "(as 2*Sigmoid(2x)-1), PRelu and "
    "LeakyRelu (one slope per layer), Flatten, Squeeze, Unsqueeze, Reshape (its shape may be computed by Shape, "
    "Gather, Unsqueeze, Squeeze, Concat, Slice, Cast), Identity, Constant, the Swish pattern x*Sigmoid(beta*x), "
    "and Erf inside the GELU pattern x*0.5*(1+erf(x/sqrt(2))) or x*0.5*(1+erf(lambda*x/sqrt(2)))";

static const char *lg_ox_name(const lg_ox_run *R, int node) { return lg_ox_node_desc(&R->G, node); }

/* Broadcast constant c against the dynamic shape D (result must have D's
 * element count); fills vec[n(D)] and *out with the broadcast shape. */
static lg_status lg_ox_bcast(const lg_ox_run *R, int node, const lg_ox_const *c, const lg_ox_shape *D,
                             lg_ox_shape *out, double **vec)
{
    *vec = NULL;
    if (!c->v)
        return lg_fail(LG_ERR_FORMAT, "%s: %s: expected a float or double constant operand", R->G.file,
                       lg_ox_name(R, node));
    int rc = c->shape.rank, rd = D->rank, ro = rc > rd ? rc : rd;
    lg_ox_shape o = {ro, {0}};
    int64_t cdim[LG_OX_MAX_RANK], ddim[LG_OX_MAX_RANK];
    for (int a = 0; a < ro; a++) {
        int ic = a - (ro - rc), id = a - (ro - rd);
        cdim[a] = ic >= 0 ? c->shape.d[ic] : 1;
        ddim[a] = id >= 0 ? D->d[id] : 1;
        if (cdim[a] != ddim[a] && cdim[a] != 1)
            return lg_fail(LG_ERR_FORMAT,
                           "%s: %s: constant of dimension %lld cannot broadcast onto dimension %lld of the input "
                           "(axis %d); broadcasting may not enlarge the data",
                           R->G.file, lg_ox_name(R, node), (long long)cdim[a], (long long)ddim[a], a);
        o.d[a] = ddim[a];
    }
    size_t n = lg_ox_shape_count(D);
    double *v = malloc((n ? n : 1) * sizeof *v);
    if (!v) return lg_fail(LG_ERR_NOMEM, "%s: out of memory", R->G.file);
    int64_t idx[LG_OX_MAX_RANK] = {0};
    for (size_t f = 0; f < n; f++) {
        size_t ci = 0;
        for (int a = 0; a < ro; a++) ci = ci * (size_t)cdim[a] + (size_t)(cdim[a] == 1 ? 0 : idx[a]);
        v[f] = c->v[ci];
        for (int a = ro - 1; a >= 0; a--) {
            if (++idx[a] < ddim[a]) break;
            idx[a] = 0;
        }
    }
    *out = o;
    *vec = v;
    return LG_OK;
}

static int lg_ox_is_scalar(const lg_ox_const *c) { return c->v && c->n == 1; }

static lg_status lg_ox_const_copy(lg_ox_const *dst, const lg_ox_const *src)
{
    *dst = *src;
    dst->v = NULL;
    dst->iv = NULL;
    if (src->v && !(dst->v = lg_ox_dup(src->v, src->n))) return lg_fail(LG_ERR_NOMEM, "out of memory");
    if (src->iv) {
        if (!(dst->iv = malloc(src->n * sizeof *dst->iv))) return lg_fail(LG_ERR_NOMEM, "out of memory");
        memcpy(dst->iv, src->iv, src->n * sizeof *dst->iv);
    }
    return LG_OK;
}

/* New shape for Flatten(axis) of s. */
static lg_status lg_ox_flatten_shape(const lg_ox_run *R, int node, const lg_ox_shape *s, lg_ox_shape *o)
{
    int64_t axis = 1;
    int r = lg_ox_attr_int(&R->G, node, "axis", &axis);
    if (r < 0) return LG_ERR_FORMAT;
    if (axis < 0) axis += s->rank;
    if (axis < 0 || axis > s->rank)
        return lg_fail(LG_ERR_FORMAT, "%s: %s: axis %lld out of range for rank %d", R->G.file, lg_ox_name(R, node),
                       (long long)axis, s->rank);
    int64_t a = 1, b = 1;
    for (int i = 0; i < s->rank; i++) {
        if (i < axis) a *= s->d[i];
        else b *= s->d[i];
    }
    o->rank = 2;
    o->d[0] = a;
    o->d[1] = b;
    return LG_OK;
}

/* New shape for Reshape(s, spec). */
static lg_status lg_ox_reshape_shape(const lg_ox_run *R, int node, const lg_ox_shape *s, const lg_ox_const *spec,
                                     lg_ox_shape *o)
{
    if (!spec->iv || spec->shape.rank != 1 || spec->n > LG_OX_MAX_RANK)
        return lg_fail(LG_ERR_FORMAT, "%s: %s: shape must be a 1-D int64 constant of at most %d values", R->G.file,
                       lg_ox_name(R, node), LG_OX_MAX_RANK);
    int64_t allowzero = 0;
    if (lg_ox_attr_int(&R->G, node, "allowzero", &allowzero) < 0) return LG_ERR_FORMAT;
    size_t total = lg_ox_shape_count(s), known = 1;
    int infer = -1;
    o->rank = (int)spec->n;
    for (int i = 0; i < o->rank; i++) {
        int64_t v = spec->iv[i];
        if (v == 0 && !allowzero) {
            if (i >= s->rank) goto bad;
            v = s->d[i];
        }
        if (v == -1) {
            if (infer >= 0) goto bad;
            infer = i;
            v = 1;
        } else if (v < 1 || (uint64_t)v > LG_NET_MAX_PARAMS) {
            goto bad;
        }
        o->d[i] = v;
        known *= (size_t)v;
        if (known > LG_NET_MAX_PARAMS) goto bad;
    }
    if (infer >= 0) {
        if (total % known) goto bad;
        o->d[infer] = (int64_t)(total / known);
        known = total;
    }
    if (known != total) goto bad;
    return LG_OK;
bad:
    return lg_fail(LG_ERR_FORMAT, "%s: %s: shape constant does not fit %zu elements", R->G.file, lg_ox_name(R, node),
                   total);
}

/* Node whose inputs are all constants. */
static lg_status lg_ox_const_node(lg_ox_run *R, int node, lg_ox_val *out)
{
    const Onnx__NodeProto *nd = R->G.g->node[node];
    const char *op = nd->op_type;
    const int *in = R->G.in_idx[node];
    lg_status st;
    if (strcmp(op, "Constant") == 0) {
        const Onnx__AttributeProto *a;
        if ((a = lg_ox_attr(nd, "value")) && a->t) {
            st = lg_ox_const_decode(&out->c, a->t, R->G.file, out->name);
        } else if ((a = lg_ox_attr(nd, "value_float")) && a->has_f) {
            if (!isfinite(a->f))
                return lg_fail(LG_ERR_FORMAT, "%s: %s: value_float is %g; NaN/Inf refused", R->G.file,
                               lg_ox_name(R, node), (double)a->f);
            out->c.n = 1;
            out->c.dtype = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
            st = (out->c.v = malloc(sizeof(double))) ? LG_OK : LG_ERR_NOMEM;
            if (st == LG_OK) out->c.v[0] = a->f;
        } else if ((a = lg_ox_attr(nd, "value_ints")) && a->n_ints >= 1 && a->n_ints <= LG_NET_MAX_PARAMS) {
            out->c.n = a->n_ints;
            out->c.shape.rank = 1;
            out->c.shape.d[0] = (int64_t)a->n_ints;
            out->c.dtype = ONNX__TENSOR_PROTO__DATA_TYPE__INT64;
            st = (out->c.iv = malloc(a->n_ints * sizeof(int64_t))) ? LG_OK : LG_ERR_NOMEM;
            if (st == LG_OK) memcpy(out->c.iv, a->ints, a->n_ints * sizeof(int64_t));
        } else {
            return lg_fail(LG_ERR_UNSUPPORTED,
                           "%s: %s: expected a 'value' tensor, 'value_float' or 'value_ints' attribute", R->G.file,
                           lg_ox_name(R, node));
        }
        if (st == LG_ERR_NOMEM) return lg_fail(st, "%s: out of memory", R->G.file);
        if (st == LG_OK) out->kind = LG_OX_CONST;
        return st;
    }
    if (nd->n_input < 1 || in[0] < 0)
        return lg_fail(LG_ERR_FORMAT, "%s: %s: missing input", R->G.file, lg_ox_name(R, node));
    const lg_ox_const *src = &R->G.vals[in[0]].c;
    lg_ox_shape s = src->shape;
    if (strcmp(op, "Identity") == 0) {
    } else if (strcmp(op, "Flatten") == 0) {
        if ((st = lg_ox_flatten_shape(R, node, &src->shape, &s)) != LG_OK) return st;
    } else if (strcmp(op, "Reshape") == 0 && nd->n_input == 2 && in[1] >= 0) {
        if ((st = lg_ox_reshape_shape(R, node, &src->shape, &R->G.vals[in[1]].c, &s)) != LG_OK) return st;
    } else if (lg_ox_is_shape_op(op)) {
        if ((st = lg_ox_shape_fold(&R->G, node, NULL, &out->c)) != LG_OK) return st;
        out->kind = LG_OX_CONST;
        return LG_OK;
    } else {
        return lg_fail(LG_ERR_UNSUPPORTED,
                       "%s: %s: computes on constants only; constant folding is supported for Constant, Identity, "
                       "Flatten, Reshape, Shape, Gather, Unsqueeze, Squeeze, Concat, Slice and Cast",
                       R->G.file, lg_ox_name(R, node));
    }
    if ((st = lg_ox_const_copy(&out->c, src)) != LG_OK) return st;
    out->c.shape = s;
    out->kind = LG_OX_CONST;
    return LG_OK;
}

static lg_status lg_ox_pattern_fail(const lg_ox_run *R, int node)
{
    return lg_fail(LG_ERR_UNSUPPORTED,
                   "%s: %s: the network forks here; only the GELU pattern x*0.5*(1+erf(lambda*x/sqrt(2))) and the "
                   "Swish pattern x*Sigmoid(beta*x) may use a value twice (incomplete or different pattern)",
                   R->G.file, lg_ox_name(R, node));
}

/* The parameter of a smooth activation from the file's own constants
 * (DESIGN.md §3 "Which function is verified"): p = num/den (times √2 when
 * sqrt2), an exact real number that need not be a double, held as the
 * double p_lo ≤ p with p < next(p_lo); every bound uses p_lo (the gap to
 * relu only shrinks as λ or β grows) and the witness enclosure the interval
 * [p_lo, next(p_lo)] (core/enclose.c). 0, or −1 when p is not a positive
 * finite number. */
static int lg_ox_param_down(double num, double den, int sqrt2, double *p_lo)
{
    if (!(num / den > 0) || !isfinite(num) || !isfinite(den)) return -1;
    mpfr_t lo, hi;
    mpfr_init2(lo, 160);
    mpfr_init2(hi, 160);
    mpfr_set_d(lo, fabs(num), MPFR_RNDN); /* exact */
    mpfr_set_d(hi, fabs(num), MPFR_RNDN);
    mpfr_div_d(lo, lo, fabs(den), MPFR_RNDD);
    mpfr_div_d(hi, hi, fabs(den), MPFR_RNDU);
    if (sqrt2) {
        mpfr_t r;
        mpfr_init2(r, 160);
        mpfr_set_ui(r, 2, MPFR_RNDN);
        mpfr_sqrt(r, r, MPFR_RNDD);
        mpfr_mul(lo, lo, r, MPFR_RNDD);
        mpfr_set_ui(r, 2, MPFR_RNDN);
        mpfr_sqrt(r, r, MPFR_RNDU);
        mpfr_mul(hi, hi, r, MPFR_RNDU);
        mpfr_clear(r);
    }
    double l = mpfr_get_d(lo, MPFR_RNDD), h = mpfr_get_d(hi, MPFR_RNDU);
    mpfr_clear(lo);
    mpfr_clear(hi);
    /* p ∈ [lo, hi] ⊆ [l, h]; the one-ulp interval must hold it */
    if (!(l > 0) || !isfinite(h) || h > nextafter(l, INFINITY)) return -1;
    *p_lo = l;
    return 0;
}

/* λ of Erf(k·z) with k = kmul/kdiv: erf(k·z) = erf(λz/√2) for λ = √2·k.
 * GELU is the layer whose λ interval [1, next(1)) holds it (λ_lo = 1). */
static lg_status lg_ox_erf_lambda(const lg_ox_run *R, int node, const lg_ox_val *x, lg_ox_val *o)
{
    if (lg_ox_param_down(x->kmul, x->kdiv, 1, &o->lambda))
        return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: Erf of %.17g/%.17g times the value: the GELU pattern needs a "
                       "positive finite scale", R->G.file, lg_ox_name(R, node), x->kmul, x->kdiv);
    return LG_OK;
}

/* k·s (divide = 0) or k/s into *r, only when exact: a pattern's constants are the file's. */
static int lg_ox_pattern_scale(double k, double s, int divide, double *r)
{
    return divide ? lg_ox_div_exact(k, s, r) : lg_ox_mul_exact(k, s, r);
}

/* 1 if (kmul/kdiv)·k is exactly want. */
static int lg_ox_pattern_is(double kmul, double kdiv, double k, double want)
{
    double p, q;
    return lg_ox_mul_exact(kmul, k, &p) && lg_ox_div_exact(p, kdiv, &q) && q == want;
}

/* Close a layer of the kind whose ONNX pattern pat (act.h) was recognised
 * with parameter p (a kind without a parameter matches only p = 1). */
static lg_status lg_ox_close_pattern(const lg_ox_run *R, lg_ox_b *B, int node, lg_act_onnx_pattern pat, double p)
{
    lg_act a;
    if (lg_act_onnx_kind(pat, p, NULL, NULL, &a) != 0) return lg_ox_pattern_fail(R, node);
    return lg_ox_b_close(B, a, lg_act_has_param(a) ? p : 1.0);
}

/* Add/Sub/Mul/Div with one dynamic operand x and one constant c. */
static lg_status lg_ox_arith(lg_ox_run *R, int node, const char *op, lg_ox_val *x, int x_first, const lg_ox_const *c,
                             lg_ox_val *out)
{
    lg_ox_b *B = &R->B;
    lg_status st;
    int sole = R->live == 0;
    int is_mul = strcmp(op, "Mul") == 0, is_div = strcmp(op, "Div") == 0, is_add = strcmp(op, "Add") == 0;
    if (is_div && !x_first)
        return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: division by a network value is not linear", R->G.file,
                       lg_ox_name(R, node));
    *out = (lg_ox_val){.name = out->name, .uses = out->uses, .producer = out->producer, .kind = LG_OX_DYN};
    if (x->form != LG_OX_LIN || !sole) {
        /* inside a GELU pattern: scalar constants only */
        if (!lg_ox_is_scalar(c)) return lg_ox_pattern_fail(R, node);
        double s = c->v[0];
        lg_ox_val keep = *out;
        *out = *x;
        out->name = keep.name;
        out->uses = keep.uses;
        out->producer = keep.producer;
        if (is_mul || is_div) {
            if (is_div && s == 0.0)
                return lg_fail(LG_ERR_FORMAT, "%s: %s: division by zero", R->G.file, lg_ox_name(R, node));
            int exact;
            if (x->form == LG_OX_LIN) {
                if (is_mul) exact = lg_ox_pattern_scale(out->kmul, s, 0, &out->kmul), out->has_mul = 1;
                else exact = lg_ox_pattern_scale(out->kdiv, s, 0, &out->kdiv);
            } else {
                exact = lg_ox_pattern_scale(out->k, s, !is_mul, &out->k);
            }
            if (!exact)
                return lg_fail(LG_ERR_UNSUPPORTED,
                               "%s: %s: the pattern's constants do not combine exactly in double (%.17g); lgelu "
                               "verifies only the file's exact function",
                               R->G.file, lg_ox_name(R, node), s);
        } else if (is_add && x->form == LG_OX_ERF && s == x->k) {
            out->form = LG_OX_HALF1;
        } else {
            return lg_ox_pattern_fail(R, node);
        }
        if (out->form == LG_OX_PROD && out->k == 0.5) {
            if (!sole) return lg_ox_pattern_fail(R, node);
            if ((st = lg_ox_close_pattern(R, B, node, LG_ACT_ONNX_ERF, out->lambda)) != LG_OK) return st;
            out->form = LG_OX_LIN;
            out->kmul = out->kdiv = 1.0;
            out->has_mul = 0;
        }
        return LG_OK;
    }
    if ((st = lg_ox_b_fold(B, x)) != LG_OK) return st;
    double *vec = NULL;
    lg_ox_shape os;
    if ((st = lg_ox_bcast(R, node, c, &B->shape, &os, &vec)) != LG_OK) return st;
    if (is_add) {
        st = lg_ox_b_shift(B, vec, 1.0);
    } else if (strcmp(op, "Sub") == 0) {
        if (x_first) {
            st = lg_ox_b_shift(B, vec, -1.0);
        } else {
            double *neg = malloc((size_t)B->n * sizeof *neg);
            if (!neg) st = lg_fail(LG_ERR_NOMEM, "%s: out of memory", R->G.file);
            for (int i = 0; neg && i < B->n; i++) neg[i] = -1.0;
            if (neg && (st = lg_ox_b_scale(B, neg, 0)) == LG_OK) st = lg_ox_b_shift(B, vec, 1.0);
            free(neg);
        }
    } else {
        st = lg_ox_b_scale(B, vec, is_div);
    }
    free(vec);
    if (st != LG_OK) return st;
    B->shape = os;
    out->form = LG_OX_LIN;
    out->kmul = out->kdiv = 1.0;
    return LG_OK;
}

/* Gemm with dynamic A. */
static lg_status lg_ox_gemm(lg_ox_run *R, int node)
{
    const Onnx__NodeProto *nd = R->G.g->node[node];
    const int *in = R->G.in_idx[node];
    lg_ox_b *B = &R->B;
    int64_t ta = 0, tb = 0;
    double alpha = 1.0, beta = 1.0;
    if (lg_ox_attr_int(&R->G, node, "transA", &ta) < 0 || lg_ox_attr_int(&R->G, node, "transB", &tb) < 0 ||
        lg_ox_attr_float(&R->G, node, "alpha", &alpha) < 0 || lg_ox_attr_float(&R->G, node, "beta", &beta) < 0)
        return LG_ERR_FORMAT;
    if (nd->n_input < 2 || in[0] < 0 || in[1] < 0 || R->G.vals[in[1]].kind != LG_OX_CONST)
        return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: expected the network value as A and a constant B", R->G.file,
                       lg_ox_name(R, node));
    const lg_ox_const *Bc = &R->G.vals[in[1]].c;
    const lg_ox_shape *s = &B->shape;
    if (s->rank != 2 || s->d[ta ? 1 : 0] != 1)
        return lg_fail(LG_ERR_FORMAT, "%s: %s: input A must have shape %s, got rank %d", R->G.file,
                       lg_ox_name(R, node), ta ? "[K, 1]" : "[1, K]", s->rank);
    if (!Bc->v || Bc->shape.rank != 2)
        return lg_fail(LG_ERR_FORMAT, "%s: %s: B must be a 2-D float or double constant", R->G.file,
                       lg_ox_name(R, node));
    int64_t K = s->d[ta ? 0 : 1];
    int64_t bK = Bc->shape.d[tb ? 1 : 0], N = Bc->shape.d[tb ? 0 : 1];
    if (bK != K || K != B->n)
        return lg_fail(LG_ERR_FORMAT, "%s: %s: A has %lld columns but B has %lld rows", R->G.file, lg_ox_name(R, node),
                       (long long)K, (long long)bK);
    if (N > LG_NET_MAX_DIM)
        return lg_fail(LG_ERR_FORMAT, "%s: %s: %lld outputs, at most %d", R->G.file, lg_ox_name(R, node),
                       (long long)N, LG_NET_MAX_DIM);
    double *M = malloc((size_t)N * (size_t)K * sizeof *M), *c = NULL;
    if (!M) return lg_fail(LG_ERR_NOMEM, "%s: out of memory", R->G.file);
    int exact = 1; /* alpha·B and beta·C must be the file's exact products (onnx_affine.c) */
    for (int64_t j = 0; j < N; j++) {
        lg_status sj = (j & 63) ? LG_OK : lg_runctx_check(R->run, "onnx import"); /* per 64 rows */
        if (sj != LG_OK) {
            free(M);
            return sj;
        }
        for (int64_t k = 0; k < K; k++)
            exact &= lg_ox_mul_exact(alpha, tb ? Bc->v[j * K + k] : Bc->v[k * N + j], &M[j * K + k]);
    }
    lg_ox_shape os = {2, {1, N}};
    if (nd->n_input >= 3 && in[2] >= 0) {
        if (R->G.vals[in[2]].kind != LG_OX_CONST) {
            free(M);
            return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: C must be a constant", R->G.file, lg_ox_name(R, node));
        }
        lg_ox_shape cs;
        lg_status st = lg_ox_bcast(R, node, &R->G.vals[in[2]].c, &os, &cs, &c);
        if (st == LG_OK && cs.rank != 2) st = lg_fail(LG_ERR_FORMAT, "%s: %s: C has rank > 2", R->G.file, lg_ox_name(R, node));
        if (st != LG_OK) {
            free(M);
            free(c);
            return st;
        }
        for (int64_t j = 0; j < N; j++) exact &= lg_ox_mul_exact(beta, c[j], &c[j]);
    }
    if (!exact) {
        free(M);
        free(c);
        return lg_fail(LG_ERR_UNSUPPORTED,
                       "%s: %s: alpha = %.17g or beta = %.17g times a constant is not a double; the layer would not "
                       "be the file's exact function",
                       R->G.file, lg_ox_name(R, node), alpha, beta);
    }
    lg_status st = lg_ox_b_linear(B, M, (int)N, c);
    free(c);
    if (st == LG_OK) B->shape = os;
    return st;
}

/* MatMul with one dynamic operand. */
static lg_status lg_ox_matmul(lg_ox_run *R, int node, int dyn_first, const lg_ox_const *W)
{
    lg_ox_b *B = &R->B;
    lg_ox_shape s = B->shape, os;
    if (!W->v)
        return lg_fail(LG_ERR_FORMAT, "%s: %s: weight must be a float or double constant", R->G.file,
                       lg_ox_name(R, node));
    int rw = W->shape.rank;
    for (int i = 0; i + 2 < rw; i++)
        if (W->shape.d[i] != 1) goto batched;
    int64_t K, N;
    double *M;
    if (dyn_first) {
        if (s.rank < 1) goto shape;
        K = s.d[s.rank - 1];
        for (int i = 0; i + 1 < s.rank; i++)
            if (s.d[i] != 1) goto batched;
        if (rw == 1) {
            N = 1;
            if (W->shape.d[0] != K) goto shape;
        } else {
            if (rw < 2 || W->shape.d[rw - 2] != K) goto shape;
            N = W->shape.d[rw - 1];
        }
        os = s;
        if (rw == 1) {
            os.rank--;
        } else {
            os.d[os.rank - 1] = N;
            while (os.rank < rw) {
                memmove(os.d + 1, os.d, (size_t)os.rank * sizeof os.d[0]);
                os.d[0] = 1;
                os.rank++;
            }
        }
        if (K != B->n || N > LG_NET_MAX_DIM) goto shape;
        if (!(M = malloc((size_t)N * (size_t)K * sizeof *M))) goto oom;
        for (int64_t j = 0; j < N; j++) { /* the transpose: 0.3 s for 4096 x 3072, so the deadline per 64 rows */
            lg_status sj = (j & 63) ? LG_OK : lg_runctx_check(R->run, "onnx import");
            if (sj != LG_OK) {
                free(M);
                return sj;
            }
            for (int64_t k = 0; k < K; k++) M[j * K + k] = W->v[k * N + j];
        }
    } else {
        if (rw < 2) goto shape;
        N = W->shape.d[rw - 2];
        K = W->shape.d[rw - 1];
        os = s;
        if (s.rank == 1) {
            if (s.d[0] != K) goto shape;
            os.d[0] = N;
        } else {
            if (s.d[s.rank - 1] != 1 || s.d[s.rank - 2] != K) goto shape;
            for (int i = 0; i + 2 < s.rank; i++)
                if (s.d[i] != 1) goto batched;
            os.d[s.rank - 2] = N;
        }
        if (rw > s.rank) goto shape;
        if (K != B->n || N > LG_NET_MAX_DIM) goto shape;
        if (!(M = malloc((size_t)N * (size_t)K * sizeof *M))) goto oom;
        memcpy(M, W->v, (size_t)N * (size_t)K * sizeof *M);
    }
    lg_status st = lg_ox_b_linear(B, M, (int)N, NULL);
    if (st == LG_OK) B->shape = os;
    return st;
batched:
    return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: batched MatMul (leading dimension > 1) is not supported", R->G.file,
                   lg_ox_name(R, node));
shape:
    return lg_fail(LG_ERR_FORMAT, "%s: %s: inconsistent shapes for MatMul (network value has %d elements)", R->G.file,
                   lg_ox_name(R, node), B->n);
oom:
    return lg_fail(LG_ERR_NOMEM, "%s: out of memory", R->G.file);
}

/* Mul(a, h) with a = c·z and h = k·σ(βz): the Swish pattern z·σ(βz) when
 * c·k = 1 and the chain no longer forks; closes a swish layer with β. */
static lg_status lg_ox_swish(lg_ox_run *R, int node, const lg_ox_val *a, const lg_ox_val *h, int sole)
{
    double k = a->kmul / a->kdiv * h->k;
    if (!sole || !lg_ox_pattern_is(a->kmul, a->kdiv, h->k, 1.0))
        return lg_fail(LG_ERR_UNSUPPORTED,
                       "%s: %s: product of a network value and a sigmoid gate is not the Swish pattern x*Sigmoid(beta*x) "
                       "(factor %g, expected 1, or the value is used elsewhere too)",
                       R->G.file, lg_ox_name(R, node), k);
    return lg_ox_close_pattern(R, &R->B, node, LG_ACT_ONNX_GATE, h->lambda);
}

/* A single-op activation of kind act with a parameter (its entry's
 * onnx_op, act.h): the op's second input, one constant value for the whole
 * layer (PRelu's slope), or for the entry's alias the attribute alpha,
 * default 0.01 (LeakyRelu). Kinds without a parameter close in
 * lg_ox_dyn_node. */
static lg_status lg_ox_act_param_op(lg_ox_run *R, int node, lg_ox_val *x, int dpos, int sole, lg_act act, int alias)
{
    const Onnx__NodeProto *nd = R->G.g->node[node];
    const int *in = R->G.in_idx[node];
    lg_status st;
    double a = 0.01;
    if (x->form != LG_OX_LIN || !sole || dpos != 0) return lg_ox_pattern_fail(R, node);
    if (alias) {
        if (lg_ox_attr_float(&R->G, node, "alpha", &a) < 0) return LG_ERR_FORMAT;
    } else {
        if (nd->n_input != 2 || in[1] < 0 || R->G.vals[in[1]].kind != LG_OX_CONST || !R->G.vals[in[1]].c.v)
            return lg_fail(LG_ERR_FORMAT, "%s: %s: expected the network value and a constant float slope", R->G.file,
                           lg_ox_name(R, node));
        const lg_ox_const *c = &R->G.vals[in[1]].c;
        a = c->v[0];
        for (size_t i = 1; i < c->n; i++)
            if (c->v[i] != a)
                return lg_fail(LG_ERR_UNSUPPORTED,
                               "%s: %s: slope differs between neurons (%g and %g); lg_net has one %s %s per layer",
                               R->G.file, lg_ox_name(R, node), a, c->v[i], lg_act_name(act),
                               lg_act_info_of(act)->param_sym);
        if (c->n > (size_t)R->B.n)
            return lg_fail(LG_ERR_FORMAT, "%s: %s: slope has %zu values for %d neurons", R->G.file,
                           lg_ox_name(R, node), c->n, R->B.n);
    }
    if ((st = lg_ox_b_fold(&R->B, x)) != LG_OK) return st;
    return lg_ox_b_close(&R->B, act, a);
}

static lg_status lg_ox_dyn_node(lg_ox_run *R, int node, lg_ox_val *out)
{
    const Onnx__NodeProto *nd = R->G.g->node[node];
    const char *op = nd->op_type;
    const int *in = R->G.in_idx[node];
    lg_ox_b *B = &R->B;
    lg_status st = LG_OK;
    lg_ox_val *dyn[2] = {NULL, NULL};
    int nd_dyn = 0, dpos = -1;
    for (size_t j = 0; j < nd->n_input; j++)
        if (in[j] >= 0 && R->G.vals[in[j]].kind == LG_OX_DYN) {
            if (nd_dyn < 2) dyn[nd_dyn] = &R->G.vals[in[j]];
            if (dpos < 0) dpos = (int)j;
            nd_dyn++;
        }
    lg_ox_val *x = dyn[0];
    int sole = R->live == 0;
    if (strcmp(op, "Shape") == 0) { /* the value's known shape, a constant (onnx_shape.c) */
        if ((st = lg_ox_shape_fold(&R->G, node, &B->shape, &out->c)) != LG_OK) return st;
        out->kind = LG_OX_CONST;
        return LG_OK;
    }
    out->kind = LG_OX_DYN;
    out->form = LG_OX_LIN;
    out->kmul = out->kdiv = 1.0;
    if (strcmp(op, "Mul") == 0 && nd_dyn == 2 && nd->n_input == 2) {
        lg_ox_val *a = dyn[0], *h = dyn[1];
        if (a->form != LG_OX_LIN) a = dyn[1], h = dyn[0];
        if (a->form == LG_OX_LIN && h->form == LG_OX_SIG) return lg_ox_swish(R, node, a, h, sole);
        if (a->form != LG_OX_LIN || h->form != LG_OX_HALF1)
            return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: product of two network values is not linear (and not a GELU "
                           "pattern)", R->G.file, lg_ox_name(R, node));
        out->form = LG_OX_PROD;
        out->k = a->kmul / a->kdiv * h->k;
        out->lambda = h->lambda;
        if (lg_ox_pattern_is(a->kmul, a->kdiv, h->k, 0.5)) {
            out->k = 0.5;
            if (!sole) return lg_ox_pattern_fail(R, node);
            if ((st = lg_ox_close_pattern(R, B, node, LG_ACT_ONNX_ERF, out->lambda)) != LG_OK) return st;
            out->form = LG_OX_LIN;
            out->kmul = out->kdiv = 1.0;
        }
        return LG_OK;
    }
    if (nd_dyn != 1)
        return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: uses %d network values; only one (a chain) is supported",
                       R->G.file, lg_ox_name(R, node), nd_dyn);
    if (strcmp(op, "Dropout") == 0) {
        /* the identity at inference; a constant true training_mode is refused */
        if (dpos != 0 || (nd->n_input >= 3 && in[2] >= 0 && (R->G.vals[in[2]].kind != LG_OX_CONST ||
                                                          (R->G.vals[in[2]].c.iv && R->G.vals[in[2]].c.iv[0]) ||
                                                          (R->G.vals[in[2]].c.v && R->G.vals[in[2]].c.v[0] != 0.0))))
            return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: Dropout in training mode is not supported", R->G.file,
                           lg_ox_name(R, node));
        lg_ox_val keep = *out;
        *out = *x;
        out->name = keep.name;
        out->uses = keep.uses;
        out->producer = keep.producer;
        return LG_OK;
    }
    if (nd->n_output != 1 && strcmp(op, "BatchNormalization") != 0)
        return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: has %zu outputs, expected 1", R->G.file, lg_ox_name(R, node),
                       nd->n_output);
    int is_arith = strcmp(op, "Add") == 0 || strcmp(op, "Sub") == 0 || strcmp(op, "Mul") == 0 || strcmp(op, "Div") == 0;
    if (is_arith) {
        if (nd->n_input != 2 || in[1 - dpos] < 0)
            return lg_fail(LG_ERR_FORMAT, "%s: %s: expected 2 inputs", R->G.file, lg_ox_name(R, node));
        return lg_ox_arith(R, node, op, x, dpos == 0, &R->G.vals[in[1 - dpos]].c, out);
    }
    if (strcmp(op, "Identity") == 0) {
        /* closes a layer after a matrix op (keeps identity layers apart) */
        if (x->form == LG_OX_LIN && sole && (B->W || B->K)) {
            if ((st = lg_ox_b_fold(B, x)) != LG_OK) return st;
            return lg_ox_b_close(B, LG_ACT_IDENTITY, 1.0);
        }
        lg_ox_val keep = *out;
        *out = *x;
        out->name = keep.name;
        out->uses = keep.uses;
        out->producer = keep.producer;
        return LG_OK;
    }
    if (strcmp(op, "Erf") == 0) {
        if (x->form != LG_OX_LIN) return lg_ox_pattern_fail(R, node);
        out->form = LG_OX_ERF;
        out->k = 1.0;
        return lg_ox_erf_lambda(R, node, x, out);
    }
    if (strcmp(op, "Sigmoid") == 0 && x->form == LG_OX_LIN && !sole) {
        /* the value forks into σ(β·z) and z: the gate of a Swish pattern */
        out->form = LG_OX_SIG;
        out->k = 1.0;
        if (lg_ox_param_down(x->kmul, x->kdiv, 0, &out->lambda))
            return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: Sigmoid of %.17g/%.17g times the value: the Swish pattern "
                           "needs a positive finite beta", R->G.file, lg_ox_name(R, node), x->kmul, x->kdiv);
        return LG_OK;
    }
    lg_act op_act;
    int alias = 0;
    if (lg_act_onnx_kind(LG_ACT_ONNX_OP, 1.0, op, &alias, &op_act) == 0 && lg_act_has_param(op_act))
        return lg_ox_act_param_op(R, node, x, dpos, sole, op_act, alias);
    if (strcmp(op, "Tanh") == 0) { /* 2·σ(2z) − 1 (onnx_affine.c) */
        if (x->form != LG_OX_LIN || !sole) return lg_ox_pattern_fail(R, node);
        if ((st = lg_ox_b_fold(B, x)) != LG_OK) return st;
        return lg_ox_b_tanh(B);
    }
    if (strcmp(op, "Softmax") == 0) {
        char kinds[256] = ""; /* the table's names */
        for (int a = 0; a < LG_ACT_COUNT; a++)
            snprintf(kinds + strlen(kinds), sizeof kinds - strlen(kinds), "%s%s", a ? ", " : "", lg_act_name((lg_act)a));
        return lg_fail(LG_ERR_UNSUPPORTED,
                       "%s: %s: activation %s cannot be represented (lg_net has %s; Tanh is read as 2*sigmoid(2x)-1); %s",
                       R->G.file, lg_ox_name(R, node), op, kinds, lg_ox_supported);
    }
    int image = strcmp(op, "Conv") == 0 || strcmp(op, "AveragePool") == 0 || strcmp(op, "GlobalAveragePool") == 0 ||
                strcmp(op, "MaxPool") == 0 || strcmp(op, "GlobalMaxPool") == 0 || strcmp(op, "Pad") == 0 ||
                strcmp(op, "Transpose") == 0 || strcmp(op, "BatchNormalization") == 0;
    if (image) {
        if (x->form != LG_OX_LIN || !sole) return lg_ox_pattern_fail(R, node);
        if (dpos != 0)
            return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: the network value must be the first input", R->G.file,
                           lg_ox_name(R, node));
        if ((st = lg_ox_b_fold(B, x)) != LG_OK) return st;
        if (strcmp(op, "Conv") == 0) return lg_ox_conv(&R->G, B, node);
        if (strcmp(op, "AveragePool") == 0) return lg_ox_avgpool(&R->G, B, node, 0);
        if (strcmp(op, "GlobalAveragePool") == 0) return lg_ox_avgpool(&R->G, B, node, 1);
        if (strcmp(op, "MaxPool") == 0) return lg_ox_maxpool(&R->G, B, node, 0);
        if (strcmp(op, "GlobalMaxPool") == 0) return lg_ox_maxpool(&R->G, B, node, 1);
        if (strcmp(op, "Pad") == 0) return lg_ox_pad(&R->G, B, node);
        if (strcmp(op, "Transpose") == 0) return lg_ox_transpose(&R->G, B, node);
        return lg_ox_batchnorm(&R->G, B, node);
    }
    int is_act = lg_act_onnx_kind(LG_ACT_ONNX_OP, 1.0, op, NULL, &op_act) == 0;
    int known = is_act || strcmp(op, "Flatten") == 0 || strcmp(op, "Squeeze") == 0 || strcmp(op, "Unsqueeze") == 0 ||
                strcmp(op, "Reshape") == 0 || strcmp(op, "Gemm") == 0 || strcmp(op, "MatMul") == 0;
    if (!known)
        return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: op type '%s' is not supported; %s", R->G.file,
                       lg_ox_name(R, node), op, lg_ox_supported);
    if (x->form != LG_OX_LIN || !sole) return lg_ox_pattern_fail(R, node);
    if (strcmp(op, "Flatten") == 0) {
        out->kmul = x->kmul, out->kdiv = x->kdiv, out->has_mul = x->has_mul;
        return lg_ox_flatten_shape(R, node, &B->shape, &B->shape);
    }
    if (strcmp(op, "Squeeze") == 0 || strcmp(op, "Unsqueeze") == 0) { /* reshapes (onnx_shape.c) */
        if (dpos != 0)
            return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: the network value must be the data input", R->G.file,
                           lg_ox_name(R, node));
        out->kmul = x->kmul, out->kdiv = x->kdiv, out->has_mul = x->has_mul;
        return lg_ox_squeeze_shape(&R->G, node, &B->shape, &B->shape);
    }
    if (strcmp(op, "Reshape") == 0) {
        if (dpos != 0 || nd->n_input != 2 || in[1] < 0)
            return lg_fail(LG_ERR_FORMAT, "%s: %s: expected data and a constant shape", R->G.file, lg_ox_name(R, node));
        out->kmul = x->kmul, out->kdiv = x->kdiv, out->has_mul = x->has_mul;
        lg_ox_shape ns;
        if ((st = lg_ox_reshape_shape(R, node, &B->shape, &R->G.vals[in[1]].c, &ns)) != LG_OK) return st;
        B->shape = ns;
        return LG_OK;
    }
    if ((st = lg_ox_b_fold(B, x)) != LG_OK) return st;
    if (is_act) return lg_ox_b_close(B, op_act, 1.0);
    if (strcmp(op, "Gemm") == 0) {
        if (dpos != 0)
            return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: the network value must be input A", R->G.file,
                           lg_ox_name(R, node));
        return lg_ox_gemm(R, node);
    }
    if (nd->n_input != 2 || in[1 - dpos] < 0)
        return lg_fail(LG_ERR_FORMAT, "%s: %s: expected 2 inputs", R->G.file, lg_ox_name(R, node));
    return lg_ox_matmul(R, node, dpos == 0, &R->G.vals[in[1 - dpos]].c);
}

/* Find and describe the one dynamic graph input. */
static lg_status lg_ox_input(lg_ox_run *R, long *vin)
{
    const Onnx__GraphProto *g = R->G.g;
    const Onnx__ValueInfoProto *vi = NULL;
    for (size_t i = 0; i < g->n_input; i++) {
        /* initializers occupy the first n_initializer value slots */
        long v = lg_ox_find(&R->G, g->input[i]->name);
        if (v >= 0 && (size_t)v < g->n_initializer) continue;
        if (vi)
            return lg_fail(LG_ERR_UNSUPPORTED, "%s: graph has more than one input ('%s' and '%s'); expected one",
                           R->G.file, vi->name, g->input[i]->name);
        vi = g->input[i];
    }
    if (!vi) return lg_fail(LG_ERR_FORMAT, "%s: graph has no input without an initializer", R->G.file);
    const Onnx__TypeProto *tp = vi->type;
    if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type)
        return lg_fail(LG_ERR_FORMAT, "%s: input '%s' is not a tensor", R->G.file, vi->name);
    const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
    if (tt->elem_type != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT && tt->elem_type != ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE)
        return lg_fail(LG_ERR_UNSUPPORTED, "%s: input '%s' has element type %d, expected float (1) or double (11)",
                       R->G.file, vi->name, tt->elem_type);
    if (!tt->shape)
        return lg_fail(LG_ERR_FORMAT, "%s: input '%s' has no shape", R->G.file, vi->name);
    if (tt->shape->n_dim > LG_OX_MAX_RANK)
        return lg_fail(LG_ERR_FORMAT, "%s: input '%s' has rank %zu, at most %d", R->G.file, vi->name,
                       tt->shape->n_dim, LG_OX_MAX_RANK);
    lg_ox_shape s = {(int)tt->shape->n_dim, {0}};
    for (int i = 0; i < s.rank; i++) {
        const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[i];
        int64_t v = d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE ? d->dim_value : 0;
        if (v < 1 && i == 0) v = 1; /* symbolic or unset batch dimension */
        if (v < 1 || v > LG_NET_MAX_DIM)
            return lg_fail(LG_ERR_FORMAT, "%s: input '%s': dimension %d is not a number in 1..%d", R->G.file,
                           vi->name, i, LG_NET_MAX_DIM);
        s.d[i] = v;
    }
    size_t n = lg_ox_shape_count(&s);
    if (n == 0 || n > LG_NET_MAX_DIM)
        return lg_fail(LG_ERR_FORMAT, "%s: input '%s' has more than %d elements", R->G.file, vi->name, LG_NET_MAX_DIM);
    *vin = lg_ox_find(&R->G, vi->name);
    R->B.shape = s;
    R->B.n = R->B.m = R->B.n_in = (int)n;
    return LG_OK;
}

/* Turn the finished builder into an lg_net; metadata restores t and s. */
static lg_status lg_ox_finish(lg_ox_run *R, const Onnx__ModelProto *mp, lg_net *net)
{
    lg_ox_b *B = &R->B;
    int L = B->n_layers;
    int *dims = malloc(((size_t)L + 1) * sizeof *dims);
    if (!dims) return lg_fail(LG_ERR_NOMEM, "%s: out of memory", B->file);
    dims[0] = B->n_in;
    const lg_conv **convs = calloc((size_t)L + 1, sizeof *convs);
    if (!convs) {
        free(dims);
        return lg_fail(LG_ERR_NOMEM, "%s: out of memory", B->file);
    }
    for (int k = 0; k < L; k++) {
        dims[k + 1] = B->layers[k].n_out;
        convs[k] = B->layers[k].conv.c_out > 0 ? &B->layers[k].conv : NULL;
    }
    lg_status st = lg_net_init_conv(net, L, dims, convs, LG_ACT_IDENTITY);
    free(dims);
    free(convs);
    if (st != LG_OK) return st;
    double t = 0.1;
    for (size_t i = 0; i < mp->n_metadata_props; i++) {
        const Onnx__StringStringEntryProto *e = mp->metadata_props[i];
        if (e->key && strcmp(e->key, "lgelu.t") == 0 && e->value) {
            char *end;
            double v = strtod(e->value, &end);
            if (*end || !(v > 0) || !isfinite(v)) {
                st = lg_fail(LG_ERR_FORMAT, "%s: metadata lgelu.t = '%s', expected a positive number", B->file, e->value);
                goto fail;
            }
            t = v;
        }
    }
    net->t = t;
    for (int k = 0; k < L; k++) {
        lg_layer *Ln = &net->layers[k];
        lg_ox_layer *Lb = &B->layers[k];
        if ((st = lg_runctx_check(R->run, "onnx import")) != LG_OK) goto fail;
        memcpy(Ln->W, Lb->W, lg_layer_n_weights(Ln) * sizeof(double));
        memcpy(Ln->b, Lb->b, (size_t)Lb->n_out * sizeof(double));
        Ln->act = Lb->act;
        Ln->lambda = lg_act_has_param(Lb->act) ? Lb->lambda : 1.0;
        Ln->s = 0.0;
        const lg_act_info *ai = lg_act_info_of(Lb->act);
        if (ai->softplus) Ln->s = Lb->lambda > 1.0 ? lg_s_from_lambda(Lb->lambda, t) : -700.0 * t;
        else if (ai->has_param) Ln->s = Lb->lambda;
        char key[32];
        snprintf(key, sizeof key, "lgelu.s.%d", k);
        for (size_t i = 0; i < mp->n_metadata_props; i++) {
            const Onnx__StringStringEntryProto *e = mp->metadata_props[i];
            if (e->key && strcmp(e->key, key) == 0 && e->value) {
                char *end;
                double v = strtod(e->value, &end);
                if (*end || !isfinite(v)) {
                    st = lg_fail(LG_ERR_FORMAT, "%s: metadata %s = '%s', expected a number", B->file, key, e->value);
                    goto fail;
                }
                if (ai->softplus) Ln->s = v;
            }
        }
    }
    /* an all-zero shift or all-one divisor is the identity exactly (MATLAB's
     * ACAS Xu export subtracts a zero image): drop it */
    int zero = B->in_sub != NULL, one = B->in_div != NULL;
    for (int i = 0; i < B->n_in; i++) {
        if (B->in_sub && B->in_sub[i] != 0.0) zero = 0;
        if (B->in_div && B->in_div[i] != 1.0) one = 0;
    }
    if (!zero) net->in_sub = B->in_sub, B->in_sub = NULL;
    if (!one) net->in_div = B->in_div, B->in_div = NULL;
    if ((st = lg_net_validate(net)) != LG_OK) {
        char msg[900];
        snprintf(msg, sizeof msg, "%s", lg_errmsg());
        st = lg_fail(st, "%s: %s", B->file, msg);
        goto fail;
    }
    return LG_OK;
fail:
    lg_net_free(net);
    return st;
}

static lg_status lg_ox_run_graph(lg_ox_run *R, const Onnx__ModelProto *mp, lg_net *net)
{
    lg_ox_graph *G = &R->G;
    const Onnx__GraphProto *g = G->g;
    lg_status st;
    for (size_t i = 0; i < g->n_initializer; i++) {
        if ((st = lg_runctx_check(R->run, "onnx import")) != LG_OK) return st;
        lg_ox_val *v = &G->vals[lg_ox_find(G, g->initializer[i]->name)];
        if ((st = lg_ox_const_decode(&v->c, g->initializer[i], G->file, v->name)) != LG_OK) return st;
        v->kind = LG_OX_CONST;
    }
    long vin = -1;
    if ((st = lg_ox_input(R, &vin)) != LG_OK) return st;
    if (g->n_output != 1)
        return lg_fail(LG_ERR_UNSUPPORTED, "%s: graph has %zu outputs, expected 1", G->file, g->n_output);
    G->vals[vin].kind = LG_OX_DYN;
    G->vals[vin].kmul = G->vals[vin].kdiv = 1.0;
    R->live = G->vals[vin].uses > 0;
    for (size_t oi = 0; oi < g->n_node; oi++) {
        if ((st = lg_runctx_check(R->run, "onnx import")) != LG_OK) return st;
        int node = G->order[oi];
        const Onnx__NodeProto *nd = g->node[node];
        if (!nd->op_type || !*nd->op_type)
            return lg_fail(LG_ERR_FORMAT, "%s: %s has no op type", G->file, lg_ox_node_desc(G, node));
        if (nd->domain && *nd->domain && strcmp(nd->domain, "ai.onnx") != 0)
            return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: operator domain '%s' is not supported (only the default)",
                           G->file, lg_ox_node_desc(G, node), nd->domain);
        if (nd->n_output < 1 || G->out_idx[node][0] < 0)
            return lg_fail(LG_ERR_FORMAT, "%s: %s has no output", G->file, lg_ox_node_desc(G, node));
        for (size_t o = 1; o < nd->n_output; o++)
            if (G->out_idx[node][o] >= 0 && G->vals[G->out_idx[node][o]].uses > 0)
                return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: only one output per node is supported", G->file,
                               lg_ox_node_desc(G, node));
        int any_dyn = 0;
        for (size_t j = 0; j < nd->n_input; j++) {
            int v = G->in_idx[node][j];
            if (v < 0) continue;
            lg_ox_val *iv = &G->vals[v];
            if (iv->kind == LG_OX_UNDEF)
                return lg_fail(LG_ERR_FORMAT, "%s: %s: input '%s' has no value (graph input without data?)",
                               G->file, lg_ox_node_desc(G, node), iv->name);
            if (iv->kind == LG_OX_DYN) {
                any_dyn = 1;
                if (--iv->uses == 0) R->live--;
            } else {
                iv->uses--;
            }
        }
        lg_ox_val *out = &G->vals[G->out_idx[node][0]];
        st = any_dyn ? lg_ox_dyn_node(R, node, out) : lg_ox_const_node(R, node, out);
        if (st != LG_OK) {
            if (!*lg_errmsg()) lg_fail(st, "%s: %s failed", G->file, lg_ox_node_desc(G, node));
            return st;
        }
        if (out->kind == LG_OX_DYN && out->uses > 0) R->live++;
    }
    lg_ox_val *y = &G->vals[lg_ox_find(G, g->output[0]->name)];
    if (y->kind != LG_OX_DYN)
        return lg_fail(LG_ERR_FORMAT, "%s: graph output '%s' does not depend on the input", G->file, y->name);
    if (y->form != LG_OX_LIN || R->live != 1)
        return lg_fail(LG_ERR_UNSUPPORTED, "%s: graph output '%s' ends inside an incomplete GELU pattern or a fork",
                       G->file, y->name);
    const Onnx__TypeProto *tp = g->output[0]->type;
    if (tp && tp->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE && tp->tensor_type && tp->tensor_type->shape) {
        const Onnx__TensorShapeProto *sh = tp->tensor_type->shape;
        uint64_t prod = 1;
        int known = 1;
        for (size_t i = 0; i < sh->n_dim && known; i++) {
            const Onnx__TensorShapeProto__Dimension *d = sh->dim[i];
            if (d->value_case != ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE || d->dim_value < 1 ||
                d->dim_value > LG_NET_MAX_DIM)
                known = i == 0; /* a symbolic batch dimension counts as 1 */
            else
                prod *= (uint64_t)d->dim_value;
            if (prod > LG_NET_MAX_DIM) known = 0;
        }
        if (known && prod != (uint64_t)R->B.n)
            return lg_fail(LG_ERR_FORMAT, "%s: graph output '%s' is declared with %llu elements but the graph computes %d",
                           G->file, y->name, (unsigned long long)prod, R->B.n);
    }
    if ((st = lg_ox_b_fold(&R->B, y)) != LG_OK) return st;
    if ((st = lg_runctx_check(R->run, "onnx import")) != LG_OK) return st;
    if (R->B.n_layers == 0 || !lg_ox_b_identity(&R->B))
        if ((st = lg_ox_b_close(&R->B, LG_ACT_IDENTITY, 1.0)) != LG_OK) return st;
    return lg_ox_finish(R, mp, net);
}

lg_status lg_onnx_parse(lg_net *net, const unsigned char *buf, size_t len, const char *name)
{
    return lg_onnx_parse_in(net, buf, len, name, NULL);
}

lg_status lg_onnx_parse_in(lg_net *net, const unsigned char *buf, size_t len, const char *name, const lg_runctx *run)
{
    memset(net, 0, sizeof *net);
    if (!lg_ox_nesting_ok(buf, len, LG_OX_MAX_NESTING))
        return lg_fail(LG_ERR_FORMAT, "%s: protobuf messages nested deeper than %d levels (corrupt or hostile file)",
                       name, LG_OX_MAX_NESTING);
    Onnx__ModelProto *mp = onnx__model_proto__unpack(NULL, len, buf);
    if (!mp)
        return lg_fail(LG_ERR_FORMAT,
                       "%s: not an lgelu network file (no LGELUNET magic) and not a valid ONNX protobuf (truncated or "
                       "corrupt)",
                       name);
    lg_status st;
    lg_ox_run R;
    memset(&R, 0, sizeof R);
    R.B.file = name;
    R.run = run;
    if ((st = lg_runctx_check(run, "onnx import")) != LG_OK) goto done; /* after the protobuf decode */
    if (!mp->graph || mp->graph->n_node == 0) {
        st = lg_fail(LG_ERR_FORMAT, "%s: ONNX model has no graph nodes", name);
        goto done;
    }
    if ((st = lg_ox_graph_init(&R.G, mp->graph, name)) != LG_OK) goto done;
    st = lg_ox_run_graph(&R, mp, net);
done:
    lg_ox_graph_free(&R.G);
    lg_ox_b_free(&R.B);
    onnx__model_proto__free_unpacked(mp, NULL);
    if (st != LG_OK) memset(net, 0, sizeof *net);
    return st;
}

lg_status lg_onnx_read(lg_net *net, const char *path)
{
    return lg_net_read_with(net, path, LG_ONNX_MAX_BYTES, lg_onnx_parse);
}
