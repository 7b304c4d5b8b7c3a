/* onnx_read.c — ONNX model → lg_net (see onnx.h).
 *
 * The graph is interpreted symbolically in topological order (file order
 * when the file is sorted). Constants are decoded tensors. One affine map is
 * pending at a time, over one node a (the input or a layer):
 * z = A·a + Σ further terms + b (A dense W [n][m], a diagonal d, a conv, an
 * index map, or the identity). Linear ops compose into the map; Relu, Sigmoid
 * or a recognised GELU pattern closes a layer. Inside a GELU or Swish pattern
 * values are tracked in closed forms relative to z (lg_ox_form), so the
 * pattern is matched in any node order. Any other value that several nodes
 * read is set aside as a node (lg_ox_settle) and taken back by each reader
 * (lg_ox_attach); Add/Sub of two network values sum their terms (lg_ox_sum).
 * Each node is dispatched through the op table (onnx_ops.c); the handlers call
 * the helpers here (onnx_run.h).
 */
#include <errno.h>
#include <math.h>
#include <mpfr.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/netfile.h"
#include "core/op.h"
#include "onnx/onnx.h"
#include "onnx/onnx_internal.h"
#include "onnx/onnx_run.h"

#define LG_OX_MAX_NESTING 64

/* ---- interpreter ---- */

const char *lg_ox_name(const lg_ox_run *R, int node) { return lg_ox_node_desc(&R->G, node); }

/* Dynamic values of the current generation that later nodes still read. */
int lg_ox_live_gen(const lg_ox_run *R)
{
    int n = 0;
    for (int i = 0; i < R->n_cur; i++) {
        const lg_ox_val *v = &R->G.vals[R->cur[i]];
        n += v->kind == LG_OX_DYN && v->gen == R->gen && v->uses > 0;
    }
    return n;
}

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

int lg_ox_is_scalar(const lg_ox_const *c) { return c->v && c->n == 1; }

/* New shape for Flatten(axis) of s. */
lg_status lg_ox_flatten_shape(const lg_ox_graph *G, int node, const lg_ox_shape *s, lg_ox_shape *o)
{
    int64_t axis = 1;
    int r = lg_ox_attr_int(G, node, "axis", &axis);
    if (r < 0) return LG_ERR_FORMAT;
    if (axis < 0) axis += s->rank;
    if (axis < 0 || axis > s->rank)
        return lg_fail(LG_ERR_FORMAT, "%s: %s: axis %lld out of range for rank %d", G->file, lg_ox_node_desc(G, node),
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
lg_status lg_ox_reshape_shape(const lg_ox_graph *G, int node, const lg_ox_shape *s, const lg_ox_const *spec,
                                     lg_ox_shape *o)
{
    if (!spec->iv || spec->shape.rank != 1 || spec->n > LG_OX_MAX_RANK)
        return lg_fail(LG_ERR_FORMAT, "%s: %s: shape must be a 1-D int64 constant of at most %d values", G->file,
                       lg_ox_node_desc(G, node), LG_OX_MAX_RANK);
    int64_t allowzero = 0;
    if (lg_ox_attr_int(G, node, "allowzero", &allowzero) < 0) return LG_ERR_FORMAT;
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
    return lg_fail(LG_ERR_FORMAT, "%s: %s: shape constant does not fit %zu elements", G->file, lg_ox_node_desc(G, node),
                   total);
}

/* The flags of op's entry in the folding table and in the op table (0: no entry). */
static unsigned lg_ox_fold_flags(const char *op)
{
    const lg_ox_fold *k = lg_ox_fold_find(op);
    return k ? k->flags : 0;
}
static unsigned lg_ox_op_flags(const char *op)
{
    const lg_ox_op *k = lg_ox_op_find(op);
    return k ? k->flags : 0;
}

/* Node whose inputs are all constants: folded through the table (onnx_shape.c). */
static lg_status lg_ox_const_node(lg_ox_run *R, int node, lg_ox_val *out)
{
    lg_status st = lg_ox_shape_fold(&R->G, node, NULL, &out->c);
    if (st == LG_OK) out->kind = LG_OX_CONST;
    return st;
}

lg_status lg_ox_pattern_fail(const lg_ox_run *R, int node)
{
    return lg_fail(LG_ERR_UNSUPPORTED,
                   "%s: %s: the network forks here inside a pattern; only the GELU pattern "
                   "x*0.5*(1+erf(lambda*x/sqrt(2))) and the Swish pattern x*Sigmoid(beta*x) may use an intermediate "
                   "value twice (incomplete or different pattern)",
                   R->G.file, lg_ox_name(R, node));
}

/* A GELU or Swish pattern closes while other nodes still read its input z
 * (a graph node read elsewhere too): z becomes a node first (an identity
 * layer unless it is one already) and those readers are set aside on it. */
lg_status lg_ox_release(lg_ox_run *R, int node)
{
    lg_ox_b *B = &R->B;
    lg_status st;
    for (int i = 0; i < R->n_cur; i++) {
        const lg_ox_val *v = &R->G.vals[R->cur[i]];
        if (v->kind == LG_OX_DYN && v->gen == R->gen && v->uses > 0 && v->form != LG_OX_LIN)
            return lg_ox_pattern_fail(R, node);
    }
    if (!lg_ox_b_identity(B) && (st = lg_ox_b_close(B, LG_ACT_IDENTITY, 1.0)) != LG_OK) return st;
    for (int i = 0; i < R->n_cur; i++) {
        lg_ox_val *v = &R->G.vals[R->cur[i]];
        if (v->kind == LG_OX_DYN && v->gen == R->gen && v->uses > 0) {
            v->gen = 0;
            v->node = B->src;
            v->shape = B->shape;
        }
    }
    return LG_OK;
}

/* The parameter of a smooth activation from the file's own constants
 * (DESIGN.md §3 "Which function is verified"): p = num/den (times √2 when
 * sqrt2), an exact real number that need not be a double, held as the
 * double p_lo ≤ p with p < next(p_lo); every bound uses p_lo (the gap to
 * relu only shrinks as λ or β grows) and the witness enclosure the interval
 * [p_lo, next(p_lo)] (core/enclose.c). 0, or −1 when p is not a positive
 * finite number. */
int lg_ox_param_down(double num, double den, int sqrt2, double *p_lo)
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
lg_status lg_ox_erf_lambda(const lg_ox_run *R, int node, const lg_ox_val *x, lg_ox_val *o)
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
int lg_ox_pattern_is(double kmul, double kdiv, double k, double want)
{
    double p, q;
    return lg_ox_mul_exact(kmul, k, &p) && lg_ox_div_exact(p, kdiv, &q) && q == want;
}

/* Close a layer of the kind whose ONNX pattern pat (act.h) was recognised
 * with parameter p (a kind without a parameter matches only p = 1). */
lg_status lg_ox_close_pattern(const lg_ox_run *R, lg_ox_b *B, int node, lg_act_onnx_pattern pat, double p)
{
    lg_act a;
    if (lg_act_onnx_kind(pat, p, NULL, NULL, &a) != 0) return lg_ox_pattern_fail(R, node);
    return lg_ox_b_close(B, a, lg_act_has_param(a) ? p : 1.0);
}

/* Add/Sub/Mul/Div with one dynamic operand x and one constant c. */
lg_status lg_ox_arith(lg_ox_run *R, int node, char op, lg_ox_val *x, int x_first, const lg_ox_const *c, lg_ox_val *out)
{
    lg_ox_b *B = &R->B;
    lg_status st;
    int sole = lg_ox_live_gen(R) == 0;
    int is_mul = op == '*', is_div = op == '/', is_add = op == '+';
    if (is_div && !x_first)
        return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: division by a network value is not linear", R->G.file,
                       lg_ox_name(R, node));
    *out = (lg_ox_val){.name = out->name, .uses = out->uses, .producer = out->producer, .kind = LG_OX_DYN, .gen = R->gen};
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
            if (!sole && (st = lg_ox_release(R, node)) != LG_OK) return st;
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
    } else if (op == '-') {
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

static lg_status lg_ox_matmul_tokens(lg_ox_run *R, int node, const lg_ox_const *W, int64_t T, int64_t K, int64_t N,
                                     const lg_ox_shape *os);

/* Gemm with a dynamic A of T > 1 rows (tokens): alpha·B on every row (lg_ox_matmul_tokens), then
 * beta·C; exact products only. */
static lg_status lg_ox_gemm_rows(lg_ox_run *R, int node, const lg_ox_const *Bc, int64_t tb, double alpha, double beta)
{
    const Onnx__NodeProto *nd = R->G.g->node[node];
    const int *in = R->G.in_idx[node];
    lg_ox_b *B = &R->B;
    int64_t T = B->shape.d[0], K = B->shape.d[1];
    if (!Bc->v || Bc->shape.rank != 2 || Bc->shape.d[tb ? 1 : 0] != K)
        return lg_fail(LG_ERR_FORMAT, "%s: %s: B must be a 2-D float or double constant of %lld rows", R->G.file,
                       lg_ox_name(R, node), (long long)K);
    int64_t N = Bc->shape.d[tb ? 0 : 1];
    if (N < 1 || T * N > LG_NET_MAX_DIM)
        return lg_fail(LG_ERR_FORMAT, "%s: %s: %lld outputs, at most %d", R->G.file, lg_ox_name(R, node),
                       (long long)(T * N), LG_NET_MAX_DIM);
    lg_ox_const W = {.shape = {2, {K, N}}, .n = (size_t)(K * N), .dtype = ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE};
    double *c = NULL;
    int exact = 1;
    if (!(W.v = malloc(W.n * sizeof *W.v))) return lg_fail(LG_ERR_NOMEM, "%s: out of memory", R->G.file);
    for (int64_t k = 0; k < K; k++)
        for (int64_t j = 0; j < N; j++)
            exact &= lg_ox_mul_exact(alpha, tb ? Bc->v[j * K + k] : Bc->v[k * N + j], &W.v[k * N + j]);
    lg_ox_shape os = {2, {T, N}};
    lg_status st = LG_OK;
    if (nd->n_input >= 3 && in[2] >= 0) {
        lg_ox_shape cs;
        if (R->G.vals[in[2]].kind != LG_OX_CONST)
            st = lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: C must be a constant", R->G.file, lg_ox_name(R, node));
        else
            st = lg_ox_bcast(R, node, &R->G.vals[in[2]].c, &os, &cs, &c);
        for (int64_t j = 0; st == LG_OK && j < T * N; j++) exact &= lg_ox_mul_exact(beta, c[j], &c[j]);
    }
    if (st == LG_OK && !exact)
        st = lg_fail(LG_ERR_UNSUPPORTED,
                     "%s: %s: alpha = %.17g or beta = %.17g times a constant is not a double; the layer would not "
                     "be the file's exact function",
                     R->G.file, lg_ox_name(R, node), alpha, beta);
    if (st == LG_OK) st = lg_ox_matmul_tokens(R, node, &W, T, K, N, &os);
    if (st == LG_OK && c) st = lg_ox_b_shift(B, c, 1.0);
    free(W.v);
    free(c);
    return st;
}

/* Gemm with dynamic A. */
lg_status lg_ox_gemm(lg_ox_run *R, int node)
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
    if (s->rank == 2 && !ta && s->d[0] > 1) return lg_ox_gemm_rows(R, node, Bc, tb, alpha, beta);
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

/* x[T][K] @ W[K][N] with T > 1 rows (tokens): the same matrix on every row, the block-diagonal map
 * z' = (I_T ⊗ Wᵀ)·z, exact (every weight the file's), built as a per-token map of Wᵀ's N·K
 * weights (lg_ox_b_tokmap); its width T·N is bounded like any map's. */
static lg_status lg_ox_matmul_tokens(lg_ox_run *R, int node, const lg_ox_const *W, int64_t T, int64_t K, int64_t N,
                                     const lg_ox_shape *os)
{
    lg_ox_b *B = &R->B;
    if (T * K != B->n || T * N > LG_NET_MAX_DIM)
        return lg_fail(LG_ERR_FORMAT, "%s: %s: inconsistent shapes for MatMul (%lld rows of %lld, network value has "
                       "%d elements)", R->G.file, lg_ox_name(R, node), (long long)T, (long long)K, B->n);
    if ((size_t)K * (size_t)N > LG_NET_MAX_PARAMS)
        return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: MatMul by a %lld x %lld matrix: more than %zu weights", R->G.file,
                       lg_ox_name(R, node), (long long)K, (long long)N, (size_t)LG_NET_MAX_PARAMS);
    double *A = malloc((size_t)(K * N) * sizeof *A);
    if (!A) return lg_fail(LG_ERR_NOMEM, "%s: out of memory", R->G.file);
    for (int64_t j = 0; j < N; j++)
        for (int64_t k = 0; k < K; k++) A[j * K + k] = W->v[k * N + j];
    lg_status st = lg_ox_b_tokmap(B, A, (int)T, (int)K, (int)N);
    if (st == LG_OK) B->shape = *os;
    return st;
}

/* MatMul with one dynamic operand. */
lg_status lg_ox_matmul(lg_ox_run *R, int node, int dyn_first, const lg_ox_const *W)
{
    lg_ox_b *B = &R->B;
    lg_ox_shape s = B->shape, os;
    if (!W->v)
        return lg_fail(LG_ERR_FORMAT, "%s: %s: weight must be a float or double constant", R->G.file,
                       lg_ox_name(R, node));
    int rw = W->shape.rank;
    for (int i = 0; i + 2 < rw; i++)
        if (W->shape.d[i] != 1) goto batched;
    int64_t K, N, T = 1;
    double *M;
    if (dyn_first) {
        if (s.rank < 1) goto shape;
        K = s.d[s.rank - 1];
        for (int i = 0; i + 1 < s.rank; i++) T *= s.d[i]; /* tokens: the same matrix applied to each row */
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
        if (T > 1) return lg_ox_matmul_tokens(R, node, W, T, K, N, &os);
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
    } else if (rw == 1) {
        /* numpy: w[K] @ x[K] is a scalar; w[K] @ x[..., K, C] is [..., C], out[c] = Σ_k w[k]·x[k][c] */
        K = W->shape.d[0];
        if (s.rank < 1 || K != (s.rank == 1 ? s.d[0] : s.d[s.rank - 2])) goto shape;
        int64_t C = s.rank == 1 ? 1 : s.d[s.rank - 1];
        for (int i = 0; i + 2 < s.rank; i++)
            if (s.d[i] != 1) goto batched;
        N = C;
        os = s;
        if (s.rank == 1) {
            os.rank = 0;
        } else {
            os.d[s.rank - 2] = C;
            os.rank--;
        }
        if (K * C != B->n || (size_t)C * (size_t)K * (size_t)C > LG_NET_MAX_PARAMS) goto shape;
        if (!(M = calloc((size_t)C * (size_t)K * (size_t)C, sizeof *M))) goto oom;
        for (int64_t c = 0; c < C; c++)
            for (int64_t k = 0; k < K; k++) M[c * K * C + k * C + c] = W->v[k];
        K = K * C;
    } else {
        N = W->shape.d[rw - 2];
        K = W->shape.d[rw - 1];
        os = s;
        if (s.rank < 1) goto shape; /* W @ a scalar: not a matrix product */
        if (s.rank == 1) {
            if (s.d[0] != K) goto shape;
            os.d[0] = N;
        } else {
            if (s.d[s.rank - 1] != 1 || s.d[s.rank - 2] != K) goto shape;
            for (int i = 0; i + 2 < s.rank; i++)
                if (s.d[i] != 1) goto batched;
            os.d[s.rank - 2] = N;
            if (rw > s.rank) goto shape;
        }
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
lg_status lg_ox_swish(lg_ox_run *R, int node, const lg_ox_val *a, const lg_ox_val *h, int sole)
{
    double k = a->kmul / a->kdiv * h->k;
    if (!lg_ox_pattern_is(a->kmul, a->kdiv, h->k, 1.0))
        return lg_fail(LG_ERR_UNSUPPORTED,
                       "%s: %s: product of a network value and a sigmoid gate is not the Swish pattern x*Sigmoid(beta*x) "
                       "(factor %g, expected 1, or the value is used elsewhere too)",
                       R->G.file, lg_ox_name(R, node), k);
    lg_status st;
    if (!sole && (st = lg_ox_release(R, node)) != LG_OK) return st;
    return lg_ox_close_pattern(R, &R->B, node, LG_ACT_ONNX_GATE, h->lambda);
}

/* A single-op activation of kind act with a parameter (its entry's
 * onnx_op, act.h): the op's second input, one constant value for the whole
 * layer (PRelu's slope), or for the entry's alias the attribute alpha,
 * default 0.01 (LeakyRelu). Kinds without a parameter close in
 * lg_ox_dyn_node. */
lg_status lg_ox_act_param_op(lg_ox_run *R, int node, lg_ox_val *x, int dpos, int sole, lg_act act, int alias)
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

/* ---- the graph: values set aside, sums, Concat, Slice, Split ----
 * One pending map (R->B) at a time. A node reading a value of another
 * generation first sets aside the values still needing the current z
 * (lg_ox_settle), then takes the value back (lg_ox_attach). A value set
 * aside is (kmul/kdiv)·v with v the output of a node, or, when one value
 * alone needs z, the pending map itself (carried in v->pm, so a conv
 * followed by a residual Add is one term of the sum layer, not a layer of
 * its own). */

int lg_ox_node_width(const lg_ox_b *B, int node) { return node < 0 ? B->n_in : B->layers[node].n_out; }

/* Set aside every value of the current generation that is still needed,
 * and the values keep[0..nk) read now. */
lg_status lg_ox_settle(lg_ox_run *R, int node, const int *keep, int nk)
{
    lg_ox_b *B = &R->B;
    int n = 0, one = -1, sig = 0;
    lg_status st;
    for (int i = 0; i < R->n_cur; i++) {
        int vi = R->cur[i];
        lg_ox_val *v = &R->G.vals[vi];
        int kept = 0;
        for (int j = 0; j < nk; j++) kept |= keep[j] == vi;
        if (v->kind != LG_OX_DYN || v->gen != R->gen || (v->uses <= 0 && !kept)) continue;
        /* a Sigmoid of a value others read too is a sigmoid layer (it looked like a Swish gate) */
        if (v->form == LG_OX_SIG && v->lambda == 1.0) sig = 1;
        else if (v->form != LG_OX_LIN) return lg_ox_pattern_fail(R, node);
        if (one != vi) n++;
        one = vi;
    }
    if (sig) {
        if (!lg_ox_b_identity(B) && (st = lg_ox_b_close(B, LG_ACT_IDENTITY, 1.0)) != LG_OK) return st;
        int z = B->src;
        lg_ox_shape zs = B->shape;
        for (size_t i = 0; i < R->G.n_vals; i++) {
            lg_ox_val *v = &R->G.vals[i];
            if (v->kind != LG_OX_DYN || v->gen != R->gen) continue;
            v->gen = 0;
            if (v->form != LG_OX_SIG) {
                v->node = z;
                v->shape = zs;
                continue;
            }
            /* k·σ(out(z)): a sigmoid layer over z, its factor k kept on the value */
            lg_ox_pm_free(&B->pm);
            B->src = z;
            B->n = B->m = lg_ox_node_width(B, z);
            B->shape = zs;
            if ((st = lg_ox_b_close(B, LG_ACT_SIGMOID, 1.0)) != LG_OK) return st;
            v->form = LG_OX_LIN;
            v->node = B->src;
            v->shape = zs;
            v->kmul = v->k;
            v->kdiv = 1.0;
        }
        lg_ox_pm_free(&B->pm);
        R->n_cur = 0;
        R->gen++;
        return LG_OK;
    }
    R->n_cur = 0;
    if (n == 0) {
        lg_ox_pm_free(&B->pm);
        R->gen++;
        return LG_OK;
    }
    lg_ox_val *v1 = &R->G.vals[one];
    int kept1 = 0; /* times the node reads it now (Add(x, x) reads it twice) */
    for (int j = 0; j < nk; j++) kept1 += keep[j] == one;
    if (n == 1 && !lg_ox_b_identity(B) && ((v1->uses == 0 && kept1 <= 1) || (v1->uses == 1 && !kept1))) {
        /* one reader left: the pending map goes with the value */
        if (!(v1->pm = malloc(sizeof *v1->pm))) return lg_fail(LG_ERR_NOMEM, "%s: out of memory", R->G.file);
        *v1->pm = B->pm;
        memset(&B->pm, 0, sizeof B->pm);
        v1->gen = 0;
        v1->shape = v1->pm->shape;
        R->gen++;
        return LG_OK;
    }
    if (!lg_ox_b_identity(B) && (st = lg_ox_b_close(B, LG_ACT_IDENTITY, 1.0)) != LG_OK) return st;
    for (size_t i = 0; i < R->G.n_vals; i++) {
        lg_ox_val *v = &R->G.vals[i];
        if (v->kind == LG_OX_DYN && v->gen == R->gen) {
            v->gen = 0;
            v->node = B->src;
            v->shape = B->shape;
        }
    }
    lg_ox_pm_free(&B->pm);
    R->gen++;
    return LG_OK;
}

/* Make the pending map the set-aside value v: its map (copied when later
 * nodes read v too) or the identity over its node. The caller folds v's
 * factor. */
lg_status lg_ox_attach(lg_ox_run *R, int node, lg_ox_val *v)
{
    lg_ox_b *B = &R->B;
    lg_status st = lg_ox_settle(R, node, NULL, 0);
    if (st != LG_OK) return st;
    if (v->pm) {
        if (v->uses > 0) {
            if ((st = lg_ox_pm_copy(&B->pm, v->pm)) != LG_OK) return st;
        } else {
            B->pm = *v->pm;
            free(v->pm);
            v->pm = NULL;
        }
    } else {
        memset(&B->pm, 0, sizeof B->pm);
        B->src = v->node;
        B->n = B->m = lg_ox_node_width(B, v->node);
        B->shape = v->shape;
    }
    return LG_OK;
}

/* The value v as the output of a node with factor 1 (closing its map, or
 * folding its factor, into a layer when needed): *node; or, when v is an
 * index map alone over a node, that node and the map (*map, owned by the
 * caller, else NULL). */
lg_status lg_ox_as_node(lg_ox_run *R, int node, lg_ox_val *v, int *src, int **map)
{
    lg_ox_b *B = &R->B;
    lg_status st;
    *map = NULL;
    if (!v->pm && v->kmul == 1.0 && v->kdiv == 1.0) {
        *src = v->node;
        return LG_OK;
    }
    const lg_ox_pm *p = v->pm;
    if (p && p->map && !p->W && !p->d && !p->b && !p->K && !p->n_xt && v->kmul == 1.0 && v->kdiv == 1.0) {
        if (!(*map = malloc((size_t)p->n * sizeof **map))) return lg_fail(LG_ERR_NOMEM, "%s: out of memory", R->G.file);
        memcpy(*map, p->map, (size_t)p->n * sizeof **map);
        *src = p->src;
        return LG_OK;
    }
    if ((st = lg_ox_attach(R, node, v)) != LG_OK) return st;
    lg_ox_val t = *v;
    t.pm = NULL;
    if ((st = lg_ox_b_fold(B, &t)) != LG_OK) return st;
    if (!lg_ox_b_identity(B) && (st = lg_ox_b_close(B, LG_ACT_IDENTITY, 1.0)) != LG_OK) return st;
    *src = B->src;
    return LG_OK;
}

/* Flat element counts equal and the shapes equal up to leading 1s. */
int lg_ox_same_shape(const lg_ox_shape *a, const lg_ox_shape *b)
{
    int i = 0, j = 0;
    while (i < a->rank && a->d[i] == 1 && a->rank - i > b->rank) i++;
    while (j < b->rank && b->d[j] == 1 && b->rank - j > a->rank) j++;
    if (a->rank - i != b->rank - j) return 0;
    for (; i < a->rank; i++, j++)
        if (a->d[i] != b->d[j]) return 0;
    return 1;
}

/* Add or Sub of two network values: one layer-to-be summing the terms of both. */
lg_status lg_ox_sum(lg_ox_run *R, int node, lg_ox_val *a, lg_ox_val *b, int sub, lg_ox_val *out)
{
    lg_ox_b *B = &R->B;
    lg_status st;
    const int *in = R->G.in_idx[node];
    if (a->form != LG_OX_LIN || b->form != LG_OX_LIN) return lg_ox_pattern_fail(R, node);
    int keep[2] = {in[0], in[1]};
    if ((st = lg_ox_settle(R, node, keep, 2)) != LG_OK) return st;
    if (!lg_ox_same_shape(&a->shape, &b->shape))
        return lg_fail(LG_ERR_UNSUPPORTED,
                       "%s: %s: the two network values have different shapes (%zu and %zu values); a sum of network "
                       "values must not broadcast",
                       R->G.file, lg_ox_name(R, node), lg_ox_shape_count(&a->shape), lg_ox_shape_count(&b->shape));
    lg_ox_shape os = a->shape.rank >= b->shape.rank ? a->shape : b->shape;
    /* the second operand's terms and bias */
    lg_ox_term *tb = NULL;
    int ntb = 0;
    double *bb = NULL;
    if ((st = lg_ox_attach(R, node, b)) != LG_OK) return st;
    lg_ox_val t = *b;
    t.pm = NULL;
    if ((st = lg_ox_b_fold(B, &t)) != LG_OK) return st;
    /* −b: a matrix or conv (and dense or conv further terms) negated in place after taking
     * the terms (exact); anything else (a node read as it is, an index map) is scaled by −1
     * and so closed into a layer of its own */
    int neg_direct = sub && (B->W || B->K);
    for (int k = 0; neg_direct && k < B->n_xt; k++) neg_direct = B->xt[k].kind != LG_LAYER_INDEX;
    if (sub && !neg_direct) {
        double *neg = malloc((size_t)B->n * sizeof *neg);
        if (!neg) return lg_fail(LG_ERR_NOMEM, "%s: out of memory", R->G.file);
        for (int i = 0; i < B->n; i++) neg[i] = -1.0;
        st = lg_ox_b_scale(B, neg, 0);
        free(neg);
        if (st != LG_OK) return st;
    }
    int rounded = B->bn_rounded;
    if ((st = lg_ox_b_take_terms(B, &tb, &ntb, &bb)) != LG_OK) return st;
    int n = B->n;
    if (neg_direct) { /* −b: every weight and the bias negated (exact) */
        for (int k = 0; k < ntb && st == LG_OK; k++) {
            lg_ox_term *A = &tb[k];
            size_t nw = A->kind == LG_LAYER_CONV2D || A->kind == LG_LAYER_TOKMAP
                            ? (size_t)A->conv.c_out * (size_t)A->conv.c_in * (size_t)A->conv.kh * (size_t)A->conv.kw
                            : (size_t)n * (size_t)A->n_in;
            for (size_t i = 0; i < nw; i++) A->W[i] = -A->W[i];
        }
        for (int i = 0; bb && i < n; i++) bb[i] = -bb[i];
    }
    if (st == LG_OK) st = lg_ox_attach(R, node, a);
    if (st == LG_OK) {
        t = *a;
        t.pm = NULL;
        st = lg_ox_b_fold(B, &t);
    }
    if (st == LG_OK && B->n != n)
        st = lg_fail(LG_ERR_FORMAT, "%s: %s: operands of %d and %d values", R->G.file, lg_ox_name(R, node), B->n, n);
    if (st == LG_OK && bb && B->b) {
        /* the biases add exactly, or a's map closes into a layer first; two biases of which
         * one is a BatchNormalization fold (already rounded) add rounded to nearest */
        int exact = 1;
        rounded |= B->bn_rounded;
        double *s2 = malloc((size_t)n * sizeof *s2);
        if (!s2) st = lg_fail(LG_ERR_NOMEM, "%s: out of memory", R->G.file);
        for (int i = 0; s2 && i < n && (exact || rounded); i++) exact &= lg_ox_add_exact(B->b[i], bb[i], &s2[i]);
        if (s2 && (exact || rounded)) {
            B->bn_rounded = rounded;
            free(bb);
            free(B->b);
            B->b = s2;
            bb = NULL;
        } else {
            free(s2);
            if (st == LG_OK) st = lg_ox_b_close(B, LG_ACT_IDENTITY, 1.0);
        }
    }
    if (st == LG_OK && bb) {
        B->b = bb;
        bb = NULL;
    }
    if (st == LG_OK) {
        lg_ox_term *nx = realloc(B->xt, (size_t)(B->n_xt + ntb) * sizeof *nx);
        if (!nx) {
            st = lg_fail(LG_ERR_NOMEM, "%s: out of memory", R->G.file);
        } else {
            memcpy(nx + B->n_xt, tb, (size_t)ntb * sizeof *nx);
            B->xt = nx;
            B->n_xt += ntb;
            free(tb);
            tb = NULL;
            ntb = 0;
        }
    }
    for (int k = 0; k < ntb; k++) {
        free(tb[k].W);
        free(tb[k].map);
    }
    free(tb);
    free(bb);
    if (st != LG_OK) return st;
    B->shape = os;
    out->form = LG_OX_LIN;
    out->kmul = out->kdiv = 1.0;
    out->gen = R->gen;
    return LG_OK;
}

/* Concat of network values along axis: the pending map is a sum of one
 * index-map term per part (a layer of its own when the next op needs one). */
lg_status lg_ox_concat(lg_ox_run *R, int node, lg_ox_val *out)
{
    const Onnx__NodeProto *nd = R->G.g->node[node];
    const int *in = R->G.in_idx[node];
    lg_ox_b *B = &R->B;
    lg_status st;
    int np = (int)nd->n_input;
    int64_t axis = 0;
    if (lg_ox_attr_int(&R->G, node, "axis", &axis) < 0) return LG_ERR_FORMAT;
    for (int p = 0; p < np; p++)
        if (in[p] < 0 || R->G.vals[in[p]].kind != LG_OX_DYN || R->G.vals[in[p]].form != LG_OX_LIN)
            return lg_fail(LG_ERR_UNSUPPORTED,
                           "%s: %s: Concat of a network value with a constant (or inside a GELU pattern) is not "
                           "supported",
                           R->G.file, lg_ox_name(R, node));
    if ((st = lg_ox_settle(R, node, in, np)) != LG_OK) return st;
    const lg_ox_shape *s0 = &R->G.vals[in[0]].shape;
    int rank = s0->rank;
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank)
        return lg_fail(LG_ERR_FORMAT, "%s: %s: axis out of range for rank %d", R->G.file, lg_ox_name(R, node), rank);
    lg_ox_shape os = *s0;
    os.d[axis] = 0;
    for (int p = 0; p < np; p++) {
        const lg_ox_shape *sp = &R->G.vals[in[p]].shape;
        if (sp->rank != rank) goto shape;
        for (int a = 0; a < rank; a++)
            if (a != axis && sp->d[a] != s0->d[a]) goto shape;
        os.d[axis] += sp->d[axis];
    }
    size_t nout = lg_ox_shape_count(&os);
    if (nout == 0 || nout > LG_NET_MAX_DIM) goto shape;
    size_t outer = 1, inner = 1;
    for (int a = 0; a < axis; a++) outer *= (size_t)os.d[a];
    for (int a = (int)axis + 1; a < rank; a++) inner *= (size_t)os.d[a];
    int **maps = calloc((size_t)np, sizeof *maps), *srcs = calloc((size_t)np, sizeof *srcs),
        *widths = calloc((size_t)np, sizeof *widths);
    if (!maps || !srcs || !widths) {
        free(maps);
        free(srcs);
        free(widths);
        return lg_fail(LG_ERR_NOMEM, "%s: out of memory", R->G.file);
    }
    size_t off = 0;
    for (int p = 0; p < np && st == LG_OK; p++) {
        lg_ox_val *v = &R->G.vals[in[p]];
        int *pmap = NULL;
        if ((st = lg_ox_as_node(R, node, v, &srcs[p], &pmap)) != LG_OK) break;
        widths[p] = lg_ox_node_width(B, srcs[p]);
        if (!(maps[p] = malloc(nout * sizeof *maps[p]))) {
            free(pmap);
            st = lg_fail(LG_ERR_NOMEM, "%s: out of memory", R->G.file);
            break;
        }
        for (size_t o = 0; o < nout; o++) maps[p][o] = -1;
        size_t ap = (size_t)v->shape.d[axis], A = (size_t)os.d[axis];
        for (size_t o = 0; o < outer; o++)
            for (size_t j = 0; j < ap; j++)
                for (size_t i = 0; i < inner; i++) {
                    size_t f = (o * ap + j) * inner + i, g = (o * A + off + j) * inner + i;
                    maps[p][g] = pmap ? pmap[f] : (int)f;
                }
        off += ap;
        free(pmap);
    }
    if (st == LG_OK) {
        if ((st = lg_ox_settle(R, node, NULL, 0)) == LG_OK) {
            /* the pending map: part 0's index map over its node plus the others' as further terms */
            lg_ox_pm_free(&B->pm);
            lg_ox_term *xt = np > 1 ? calloc((size_t)np - 1, sizeof *xt) : NULL;
            if (np > 1 && !xt) {
                st = lg_fail(LG_ERR_NOMEM, "%s: out of memory", R->G.file);
            } else {
                for (int p = 1; p < np; p++) {
                    xt[p - 1] = (lg_ox_term){LG_LAYER_INDEX, srcs[p], widths[p], NULL, maps[p], {0}};
                    maps[p] = NULL;
                }
                B->n = (int)nout;
                B->m = widths[0];
                B->src = srcs[0];
                B->map = maps[0];
                maps[0] = NULL;
                B->xt = xt;
                B->n_xt = np - 1;
                B->shape = os;
            }
        }
    }
    for (int p = 0; p < np; p++) free(maps[p]);
    free(maps);
    free(srcs);
    free(widths);
    if (st != LG_OK) return st;
    out->form = LG_OX_LIN;
    out->kmul = out->kdiv = 1.0;
    out->gen = R->gen;
    return LG_OK;
shape:
    return lg_fail(LG_ERR_FORMAT, "%s: %s: parts of shapes that do not concatenate along axis %lld", R->G.file,
                   lg_ox_name(R, node), (long long)axis);
}

/* Index map of a box of the value of shape s: output element (multi-index
 * over lens) reads s at start[a] + step[a]·i[a] on every axis a. */
static int *lg_ox_box_map(const lg_ox_shape *s, const int64_t *start, const int64_t *step, const int64_t *lens,
                          size_t *n2)
{
    size_t n = 1;
    for (int a = 0; a < s->rank; a++) n *= (size_t)lens[a];
    *n2 = n;
    int *map = malloc((n ? n : 1) * sizeof *map);
    if (!map) return NULL;
    int64_t idx[LG_OX_MAX_RANK] = {0};
    for (size_t o = 0; o < n; o++) {
        size_t f = 0;
        for (int a = 0; a < s->rank; a++) f = f * (size_t)s->d[a] + (size_t)(start[a] + step[a] * idx[a]);
        map[o] = (int)f;
        for (int a = s->rank - 1; a >= 0; a--) {
            if (++idx[a] < lens[a]) break;
            idx[a] = 0;
        }
    }
    return map;
}

/* Int64 list from a constant input j or (older opsets) an attribute. */
static int lg_ox_ints_in(const lg_ox_run *R, int node, size_t j, const char *attr, int64_t *v, int *n)
{
    const Onnx__NodeProto *nd = R->G.g->node[node];
    const int *in = R->G.in_idx[node];
    if (nd->n_input > j && in[j] >= 0) {
        const lg_ox_val *c = &R->G.vals[in[j]];
        if (c->kind != LG_OX_CONST || !c->c.iv || c->c.n > LG_OX_MAX_RANK) return -1;
        for (size_t i = 0; i < c->c.n; i++) v[i] = c->c.iv[i];
        *n = (int)c->c.n;
        return 1;
    }
    const Onnx__AttributeProto *a = attr ? lg_ox_attr(nd, attr) : NULL;
    if (!a) return 0;
    if (a->n_ints > LG_OX_MAX_RANK) return -1;
    for (size_t i = 0; i < a->n_ints; i++) v[i] = a->ints[i];
    *n = (int)a->n_ints;
    return 1;
}

/* Slice of the network value (constant starts, ends, axes, steps): an index map. */
lg_status lg_ox_slice(lg_ox_run *R, int node, lg_ox_val *x, lg_ox_val *out)
{
    lg_ox_b *B = &R->B;
    const lg_ox_shape *s = &B->shape;
    int64_t st_[LG_OX_MAX_RANK], en[LG_OX_MAX_RANK], ax[LG_OX_MAX_RANK], sp[LG_OX_MAX_RANK];
    int ns = 0, ne = 0, na = 0, nsp = 0;
    if (lg_ox_ints_in(R, node, 1, "starts", st_, &ns) != 1 || lg_ox_ints_in(R, node, 2, "ends", en, &ne) != 1 ||
        ns != ne || lg_ox_ints_in(R, node, 3, "axes", ax, &na) < 0 || lg_ox_ints_in(R, node, 4, NULL, sp, &nsp) < 0 ||
        (na && na != ns) || (nsp && nsp != ns))
        return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: starts, ends, axes and steps must be int64 constants of one length",
                       R->G.file, lg_ox_name(R, node));
    int64_t start[LG_OX_MAX_RANK], step[LG_OX_MAX_RANK], lens[LG_OX_MAX_RANK];
    for (int a = 0; a < s->rank; a++) start[a] = 0, step[a] = 1, lens[a] = s->d[a];
    for (int i = 0; i < ns; i++) {
        int64_t a = na ? ax[i] : i, dim, k = nsp ? sp[i] : 1;
        if (a < 0) a += s->rank;
        if (a < 0 || a >= s->rank || k == 0)
            return lg_fail(LG_ERR_FORMAT, "%s: %s: axis or step out of range", R->G.file, lg_ox_name(R, node));
        dim = s->d[a];
        int64_t b = st_[i], e = en[i];
        if (b < 0) b += dim;
        if (e < 0 && e > INT64_MIN / 2) e += dim;
        if (k > 0) {
            b = b < 0 ? 0 : b > dim ? dim : b;
            e = e < 0 ? 0 : e > dim ? dim : e;
            lens[a] = e > b ? (e - b + k - 1) / k : 0;
        } else {
            b = b < 0 ? -1 : b > dim - 1 ? dim - 1 : b;
            e = e < -1 ? -1 : e > dim - 1 ? dim - 1 : e;
            lens[a] = b > e ? (b - e - k - 1) / (-k) : 0;
        }
        start[a] = b;
        step[a] = k;
        if (lens[a] < 1)
            return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: an empty slice is not supported", R->G.file,
                           lg_ox_name(R, node));
    }
    size_t n2;
    int *map = lg_ox_box_map(s, start, step, lens, &n2);
    if (!map) return lg_fail(LG_ERR_NOMEM, "%s: out of memory", R->G.file);
    lg_status st = lg_ox_b_fold(B, x);
    if (st != LG_OK) {
        free(map);
        return st;
    }
    if ((st = lg_ox_b_index(B, map, (int)n2)) != LG_OK) return st;
    for (int a = 0; a < B->shape.rank; a++) B->shape.d[a] = lens[a];
    out->form = LG_OX_LIN;
    out->kmul = out->kdiv = 1.0;
    return LG_OK;
}

/* Split of the network value: each output an index map over the value's node, set aside. */
lg_status lg_ox_split(lg_ox_run *R, int node, lg_ox_val *x)
{
    const Onnx__NodeProto *nd = R->G.g->node[node];
    lg_ox_b *B = &R->B;
    lg_status st;
    lg_ox_shape s = x->gen == R->gen ? B->shape : x->shape;
    int64_t axis = 0, num = 0, parts[64];
    int np = 0, r;
    if (lg_ox_attr_int(&R->G, node, "axis", &axis) < 0 || lg_ox_attr_int(&R->G, node, "num_outputs", &num) < 0)
        return LG_ERR_FORMAT;
    if (axis < 0) axis += s.rank;
    if (axis < 0 || axis >= s.rank)
        return lg_fail(LG_ERR_FORMAT, "%s: %s: axis out of range", R->G.file, lg_ox_name(R, node));
    const int *in = R->G.in_idx[node];
    if (nd->n_input > 1 && in[1] >= 0) {
        const lg_ox_val *c = &R->G.vals[in[1]];
        if (c->kind != LG_OX_CONST || !c->c.iv || c->c.n != nd->n_output || c->c.n > 64)
            return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: split must be an int64 constant, one size per output",
                           R->G.file, lg_ox_name(R, node));
        np = (int)c->c.n;
        for (int i = 0; i < np; i++) parts[i] = c->c.iv[i];
    } else if ((r = lg_ox_ints_in(R, node, 99, "split", parts, &np)) != 0) {
        if (r < 0 || np != (int)nd->n_output)
            return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: split must list one size per output", R->G.file,
                           lg_ox_name(R, node));
    } else {
        np = (int)nd->n_output;
        int64_t q = (s.d[axis] + np - 1) / np;
        for (int i = 0; i < np; i++) parts[i] = i < np - 1 ? q : s.d[axis] - q * (np - 1);
    }
    int64_t tot = 0;
    for (int i = 0; i < np; i++) {
        if (parts[i] < 1) return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: empty split part", R->G.file, lg_ox_name(R, node));
        if (parts[i] > s.d[axis])
            return lg_fail(LG_ERR_FORMAT, "%s: %s: split part of %lld on an axis of %lld", R->G.file,
                           lg_ox_name(R, node), (long long)parts[i], (long long)s.d[axis]);
        tot += parts[i];
    }
    if (tot != s.d[axis])
        return lg_fail(LG_ERR_FORMAT, "%s: %s: split sizes add up to %lld, the axis has %lld", R->G.file,
                       lg_ox_name(R, node), (long long)tot, (long long)s.d[axis]);
    int keep = in[0];
    if ((st = lg_ox_settle(R, node, &keep, 1)) != LG_OK) return st;
    int src;
    int *pmap = NULL;
    if ((st = lg_ox_as_node(R, node, x, &src, &pmap)) != LG_OK) return st;
    int64_t start[LG_OX_MAX_RANK] = {0}, step[LG_OX_MAX_RANK], lens[LG_OX_MAX_RANK];
    for (int a = 0; a < s.rank; a++) step[a] = 1, lens[a] = s.d[a];
    for (int i = 0; i < np && st == LG_OK; i++) {
        lens[axis] = parts[i];
        size_t n2;
        int *map = lg_ox_box_map(&s, start, step, lens, &n2);
        start[axis] += parts[i];
        int oi = R->G.out_idx[node][i];
        if (!map) {
            st = lg_fail(LG_ERR_NOMEM, "%s: out of memory", R->G.file);
            break;
        }
        if (oi < 0) {
            free(map);
            continue;
        }
        for (size_t o = 0; pmap && o < n2; o++) map[o] = pmap[map[o]];
        lg_ox_val *o = &R->G.vals[oi];
        lg_ox_pm *p = calloc(1, sizeof *p);
        if (!p) {
            free(map);
            st = lg_fail(LG_ERR_NOMEM, "%s: out of memory", R->G.file);
            break;
        }
        p->src = src;
        p->n = (int)n2;
        p->m = lg_ox_node_width(B, src);
        p->map = map;
        p->shape = s;
        p->shape.d[axis] = parts[i];
        *o = (lg_ox_val){.name = o->name, .uses = o->uses, .producer = o->producer, .kind = LG_OX_DYN,
                         .form = LG_OX_LIN, .kmul = 1.0, .kdiv = 1.0, .gen = 0, .node = src, .pm = p,
                         .shape = p->shape};
    }
    free(pmap);
    return st;
}

/* Gather of the network value with constant indices along axis: an index map. */
lg_status lg_ox_gather(lg_ox_run *R, int node, lg_ox_val *x, lg_ox_val *out)
{
    const Onnx__NodeProto *nd = R->G.g->node[node];
    const int *in = R->G.in_idx[node];
    lg_ox_b *B = &R->B;
    const lg_ox_shape *s = &B->shape;
    int64_t axis = 0;
    if (lg_ox_attr_int(&R->G, node, "axis", &axis) < 0) return LG_ERR_FORMAT;
    if (axis < 0) axis += s->rank;
    const lg_ox_val *iv = nd->n_input == 2 && in[1] >= 0 ? &R->G.vals[in[1]] : NULL;
    if (!iv || iv->kind != LG_OX_CONST || !iv->c.iv)
        return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: the indices must be an int64 constant", R->G.file,
                       lg_ox_name(R, node));
    if (axis < 0 || axis >= s->rank || s->rank - 1 + iv->c.shape.rank > LG_OX_MAX_RANK)
        return lg_fail(LG_ERR_FORMAT, "%s: %s: axis out of range for rank %d", R->G.file, lg_ox_name(R, node),
                       s->rank);
    size_t outer = 1, inner = 1, ni = iv->c.n, dim = (size_t)s->d[axis];
    for (int a = 0; a < axis; a++) outer *= (size_t)s->d[a];
    for (int a = (int)axis + 1; a < s->rank; a++) inner *= (size_t)s->d[a];
    size_t n2 = outer * ni * inner;
    if (n2 == 0 || n2 > LG_NET_MAX_DIM)
        return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: %zu gathered values (expected 1..%d)", R->G.file,
                       lg_ox_name(R, node), n2, LG_NET_MAX_DIM);
    int *map = malloc(n2 * sizeof *map);
    if (!map) return lg_fail(LG_ERR_NOMEM, "%s: out of memory", R->G.file);
    for (size_t j = 0; j < ni; j++) {
        int64_t q = iv->c.iv[j] < 0 ? iv->c.iv[j] + (int64_t)dim : iv->c.iv[j];
        if (q < 0 || q >= (int64_t)dim) {
            free(map);
            return lg_fail(LG_ERR_FORMAT, "%s: %s: index %lld out of range for a dimension of %zu", R->G.file,
                           lg_ox_name(R, node), (long long)iv->c.iv[j], dim);
        }
        for (size_t o = 0; o < outer; o++)
            for (size_t i = 0; i < inner; i++) map[(o * ni + j) * inner + i] = (int)((o * dim + (size_t)q) * inner + i);
    }
    lg_ox_shape os = {0, {0}};
    for (int a = 0; a < axis; a++) os.d[os.rank++] = s->d[a];
    for (int a = 0; a < iv->c.shape.rank; a++) os.d[os.rank++] = iv->c.shape.d[a];
    for (int a = (int)axis + 1; a < s->rank; a++) os.d[os.rank++] = s->d[a];
    lg_status st = lg_ox_b_fold(B, x);
    if (st != LG_OK) {
        free(map);
        return st;
    }
    if ((st = lg_ox_b_index(B, map, (int)n2)) != LG_OK) return st;
    B->shape = os;
    out->form = LG_OX_LIN;
    out->kmul = out->kdiv = 1.0;
    return LG_OK;
}

/* Clip of the network value (ReLU6, Hardtanh, clamp): its bounds from the optional constant
 * inputs min and max (opset ≥ 11) or the attributes of the same names; an infinite bound
 * is no bound. */
lg_status lg_ox_clip(lg_ox_run *R, int node, lg_ox_val *x, int dpos, int sole)
{
    const Onnx__NodeProto *nd = R->G.g->node[node];
    const int *in = R->G.in_idx[node];
    if (dpos != 0)
        return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: Clip's bounds must be constants", R->G.file, lg_ox_name(R, node));
    if (x->form != LG_OX_LIN || !sole) return lg_ox_pattern_fail(R, node);
    double bnd[2] = {-INFINITY, INFINITY};
    static const char *names[2] = {"min", "max"};
    for (int k = 0; k < 2; k++) {
        if ((int)nd->n_input > k + 1 && in[k + 1] >= 0) {
            const lg_ox_val *v = &R->G.vals[in[k + 1]];
            if (v->kind != LG_OX_CONST || !lg_ox_is_scalar(&v->c))
                return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: Clip's %s must be a constant scalar", R->G.file,
                               lg_ox_name(R, node), names[k]);
            bnd[k] = v->c.v[0];
        } else if (lg_ox_attr_float(&R->G, node, names[k], &bnd[k]) < 0) {
            return LG_ERR_FORMAT;
        }
        if (isnan(bnd[k]))
            return lg_fail(LG_ERR_FORMAT, "%s: %s: Clip's %s is NaN", R->G.file, lg_ox_name(R, node), names[k]);
    }
    if (bnd[0] > bnd[1])
        return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: Clip with min %.17g above max %.17g (a constant output) is not "
                       "supported", R->G.file, lg_ox_name(R, node), bnd[0], bnd[1]);
    lg_status st = lg_ox_b_fold(&R->B, x);
    if (st != LG_OK) return st;
    return lg_ox_b_clip(&R->B, isfinite(bnd[0]), bnd[0], isfinite(bnd[1]), bnd[1]);
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
    R->B.src = LG_NET_INPUT;
    R->B.shape = s;
    R->B.n = R->B.m = R->B.n_in = (int)n;
    return LG_OK;
}

/* Turn the finished builder into an lg_net; metadata restores t and s. */
static lg_status lg_ox_finish(lg_ox_run *R, const Onnx__ModelProto *mp, lg_net *net)
{
    lg_ox_b *B = &R->B;
    int L = B->n_layers;
    size_t nt = 0;
    for (int k = 0; k < L; k++) nt += 1 + (size_t)B->layers[k].n_xt;
    lg_layer_spec *sp = calloc((size_t)L, sizeof *sp);
    lg_linear *tm = calloc(nt, sizeof *tm);
    if (!sp || !tm) {
        free(sp);
        free(tm);
        return lg_fail(LG_ERR_NOMEM, "%s: out of memory", B->file);
    }
    lg_linear *tp = tm;
    for (int k = 0; k < L; k++) {
        const lg_ox_layer *Lb = &B->layers[k];
        sp[k] = (lg_layer_spec){Lb->n_out, LG_ACT_IDENTITY, 1 + Lb->n_xt, tp};
        tp->kind = lg_kind_is_tnode(Lb->tkind) ? Lb->tkind
                   : Lb->is_max ? LG_LAYER_MAX
                   : Lb->map  ? LG_LAYER_INDEX
                   : Lb->tok  ? LG_LAYER_TOKMAP
                   : Lb->conv.c_out > 0 ? LG_LAYER_CONV2D
                                        : LG_LAYER_DENSE;
        tp->n_in = Lb->n_in;
        tp->conv = Lb->conv;
        tp->src = Lb->src;
        tp->op = Lb->op;
        tp++;
        for (int t = 0; t < Lb->n_xt; t++, tp++) {
            tp->kind = Lb->xt[t].kind;
            tp->n_in = Lb->xt[t].n_in;
            tp->conv = Lb->xt[t].conv;
            tp->src = Lb->xt[t].src;
        }
    }
    lg_status st = lg_net_build(net, B->n_in, L, sp);
    free(sp);
    free(tm);
    if (st != LG_OK) return st;
    for (int k = 0; k < L; k++) {
        lg_layer *Ln = &net->layers[k];
        const lg_ox_layer *Lb = &B->layers[k];
        if ((st = lg_runctx_check(R->run, "onnx import")) != LG_OK) {
            lg_net_free(net);
            return st;
        }
        for (int t = 0; t < lg_layer_n_lin(Ln); t++) {
            lg_linear *A = lg_layer_lin_mut(Ln, t);
            const double *W = t == 0 ? Lb->W : Lb->xt[t - 1].W;
            const int *map = t == 0 ? Lb->map : Lb->xt[t - 1].map;
            const lg_opdef *op = lg_op(A->kind); /* index tables or weights, as the kind stores them */
            if (op->n_map)
                memcpy(A->map, map, op->n_map(A) * sizeof *A->map);
            else if (lg_linear_n_weights(A))
                memcpy(A->W, W, lg_linear_n_weights(A) * sizeof *A->W);
        }
    }
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
    /* a MatMul by a constant over tokens (kron(I_T, W)) becomes a per-token map (core/op.h) */
    if ((st = lg_net_compact_tokmap(net, NULL)) != LG_OK) goto fail;
    return LG_OK;
fail:
    lg_net_free(net);
    return st;
}

/* --drop-final-softmax: the Softmax node producing the graph output is skipped and its input
 * becomes the output (*yv; *skip the node). Anything else producing the output is refused. */
static lg_status lg_ox_drop_softmax(lg_ox_run *R, long *yv, int *skip)
{
    lg_ox_graph *G = &R->G;
    int p = G->vals[*yv].producer;
    const Onnx__NodeProto *nd = p >= 0 ? G->g->node[p] : NULL;
    if (!nd || !nd->op_type || strcmp(nd->op_type, "Softmax") != 0 || nd->n_input < 1 || G->in_idx[p][0] < 0)
        return lg_fail(LG_ERR_UNSUPPORTED, "%s: --drop-final-softmax: the graph output '%s' is %s, not the output of "
                       "a Softmax", G->file, G->vals[*yv].name,
                       nd ? lg_ox_node_desc(G, p) : "a graph input or initializer");
    if (G->vals[*yv].uses > 1)
        return lg_fail(LG_ERR_UNSUPPORTED, "%s: --drop-final-softmax: %s: other nodes read the Softmax's output",
                       G->file, lg_ox_node_desc(G, p));
    G->vals[*yv].uses--;
    *skip = p;
    *yv = G->in_idx[p][0]; /* its use by the Softmax becomes the graph output's */
    lg_ox_note_add(0, "the final Softmax (%s) was dropped: the outputs are its input, the logits",
                   lg_ox_node_desc(G, p));
    return LG_OK;
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
    if (!(R->cur = malloc((2 * G->n_vals + 8) * sizeof *R->cur)) || !(R->skip = calloc(g->n_node, 1)))
        return lg_fail(LG_ERR_NOMEM, "%s: out of memory", G->file);
    for (size_t i = 0; i < mp->n_opset_import; i++) {
        const Onnx__OperatorSetIdProto *os = mp->opset_import[i];
        if (os && (!os->domain || !*os->domain || strcmp(os->domain, "ai.onnx") == 0) && os->has_version)
            R->opset = (int)os->version;
    }
    R->gen = 1;
    /* in_sub/in_div would change what every reader of the input sees: only for one reader (a
     * Shape reads no value) */
    int readers = 0;
    for (size_t i = 0; i < g->n_node; i++)
        for (size_t j = 0; j < g->node[i]->n_input; j++)
            readers += G->in_idx[i][j] == (int)vin && g->node[i]->op_type && !(lg_ox_fold_flags(g->node[i]->op_type) & LG_OXK_SHAPE);
    R->B.input_shared = readers > 1;
    G->vals[vin].gen = R->gen;
    G->vals[vin].shape = R->B.shape;
    R->cur[R->n_cur++] = (int)vin;
    /* the part of the graph that does not depend on the input is folded first, so a pattern
     * read at its first node (the decomposed LayerNorm) sees its constants; a node that does
     * not fold is left to the main loop, which reports it */
    for (size_t oi = 0; oi < g->n_node; oi++) {
        int node = G->order[oi];
        const Onnx__NodeProto *nd = g->node[node];
        int ok = nd->op_type && nd->n_output >= 1 && G->out_idx[node][0] >= 0 &&
                 (!nd->domain || !*nd->domain || strcmp(nd->domain, "ai.onnx") == 0) &&
                 (nd->n_input > 0 || (lg_ox_fold_flags(nd->op_type) & LG_OXK_SOURCE));
        for (size_t j = 0; ok && j < nd->n_input; j++)
            ok = G->in_idx[node][j] < 0 || G->vals[G->in_idx[node][j]].kind == LG_OX_CONST;
        lg_ox_val *out = ok ? &G->vals[G->out_idx[node][0]] : NULL;
        if (!ok || out->kind != LG_OX_UNDEF) continue;
        if (lg_ox_const_node(R, node, out) != LG_OK) {
            lg_ox_const_free(&out->c);
            out->kind = LG_OX_UNDEF;
            break;
        }
        for (size_t j = 0; j < nd->n_input; j++)
            if (G->in_idx[node][j] >= 0) G->vals[G->in_idx[node][j]].uses--;
        R->skip[node] = 1;
    }
    int skip = -1; /* a final Softmax removed (--drop-final-softmax) */
    long yv = lg_ox_find(G, g->output[0]->name);
    if (lg_onnx_get_import_opts()->drop_final_softmax && (st = lg_ox_drop_softmax(R, &yv, &skip)) != LG_OK)
        return st;
    for (size_t oi = 0; oi < g->n_node; oi++) {
        if ((st = lg_runctx_check(R->run, "onnx import")) != LG_OK) return st;
        int node = G->order[oi];
        if (node == skip) continue;
        const Onnx__NodeProto *nd = g->node[node];
        if (R->skip[node]) continue;
        if (!nd->op_type || !*nd->op_type)
            return lg_fail(LG_ERR_FORMAT, "%s: %s has no op type", G->file, lg_ox_node_desc(G, node));
        if (nd->domain && *nd->domain && strcmp(nd->domain, "ai.onnx") != 0)
            return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: operator domain '%s' is not supported (only the default)",
                           G->file, lg_ox_node_desc(G, node), nd->domain);
        if (nd->n_output < 1 || G->out_idx[node][0] < 0)
            return lg_fail(LG_ERR_FORMAT, "%s: %s has no output", G->file, lg_ox_node_desc(G, node));
        for (size_t o = 1; o < nd->n_output && !(lg_ox_op_flags(nd->op_type) & LG_OXF_OUTPUTS); o++)
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
            if (iv->kind == LG_OX_DYN) any_dyn = 1;
            iv->uses--;
        }
        lg_ox_val *out = &G->vals[G->out_idx[node][0]];
        st = any_dyn ? lg_ox_dyn_node(R, node, out) : lg_ox_const_node(R, node, out);
        if (st != LG_OK) {
            if (!*lg_errmsg()) lg_fail(st, "%s: %s failed", G->file, lg_ox_node_desc(G, node));
            return st;
        }
        if (out->kind == LG_OX_DYN && out->gen == R->gen) {
            out->shape = R->B.shape;
            if (R->n_cur < (int)(2 * G->n_vals + 8)) R->cur[R->n_cur++] = G->out_idx[node][0];
        }
    }
    lg_ox_val *y = &G->vals[yv];
    if (y->kind != LG_OX_DYN)
        return lg_fail(LG_ERR_FORMAT, "%s: graph output '%s' does not depend on the input", G->file, y->name);
    int dangling = 0;
    for (size_t i = 0; i < G->n_vals; i++)
        dangling |= G->vals[i].kind == LG_OX_DYN && G->vals[i].uses > 0 && &G->vals[i] != y;
    if (y->form != LG_OX_LIN || dangling)
        return lg_fail(LG_ERR_UNSUPPORTED, "%s: graph output '%s' ends inside an incomplete GELU pattern or a fork",
                       G->file, y->name);
    lg_ox_val ytmp = *y;
    if (y->gen != R->gen) {
        if ((st = lg_ox_attach(R, G->order[g->n_node - 1], y)) != LG_OK) return st;
        ytmp.pm = NULL;
        ytmp.gen = R->gen;
        y = &ytmp;
    }
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
    if (R->B.n_layers == 0 || !lg_ox_b_identity(&R->B) || R->B.src != R->B.n_layers - 1)
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
    lg_ox_note_begin();
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
    for (size_t i = 0; i < R.G.n_vals; i++)
        if (R.G.vals[i].pm) {
            lg_ox_pm_free(R.G.vals[i].pm);
            free(R.G.vals[i].pm);
        }
    free(R.cur);
    free(R.skip);
    lg_ox_graph_free(&R.G);
    lg_ox_b_free(&R.B);
    onnx__model_proto__free_unpacked(mp, NULL);
    if (st != LG_OK) {
        memset(net, 0, sizeof *net);
        lg_ox_note_begin();
    }
    return st;
}

lg_status lg_onnx_read(lg_net *net, const char *path)
{
    return lg_net_read_with(net, path, LG_ONNX_MAX_BYTES, lg_onnx_parse);
}
