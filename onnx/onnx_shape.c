/* onnx_shape.c — the shape arithmetic of an imported graph and the
 * constant-folding table (import only; onnx_internal.h).
 *
 * A node whose inputs are all constants is folded through the table at the
 * end of this file: one entry {op, fold, flags, aux} per op (Constant,
 * Identity, Flatten, Reshape and the shape ops below); the list in the
 * supported-ops text and the refusal of any other op are generated from it.
 *
 * Exporters often compute a Reshape's target from the running value's shape:
 * torch's x.view(x.size(0), -1) with a dynamic batch axis becomes
 * Shape → Gather → Unsqueeze → Concat → Reshape. The Shape of the dynamic
 * value is its known shape (a symbolic batch dimension is 1, as at the graph
 * input, see onnx_read.c), and the ops below are folded on constants: Shape,
 * Gather, Concat and Slice on tensors of rank ≤ 1 (shape vectors and
 * scalars), Unsqueeze and Squeeze (also of the network value itself, as the
 * reshapes they are), Cast between int64 and float/double, and Add, Sub, Mul,
 * Div of two constants of any rank (elementwise) (torch's x.chunk(2, dim) computes its Slice ends
 * as (size + 1) / 2 · k): int64 with overflow refused and Div defined only
 * where truncation and floor agree; doubles only when the result is exact
 * (an inexact fold is refused, never rounded). The result only
 * feeds a Reshape, whose element count is checked against the value's, so a
 * wrong fold is refused, never silently wrong.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx/onnx_internal.h"

/* out = a 1-D (rank 1) or scalar (rank 0) int64 tensor of n values. */
static lg_status lg_ox_int_alloc(lg_ox_const *out, int rank, size_t n)
{
    memset(out, 0, sizeof *out);
    out->shape.rank = rank;
    if (rank == 1) out->shape.d[0] = (int64_t)n;
    out->n = n;
    out->dtype = ONNX__TENSOR_PROTO__DATA_TYPE__INT64;
    if (!(out->iv = malloc((n ? n : 1) * sizeof *out->iv))) return lg_fail(LG_ERR_NOMEM, "out of memory");
    return LG_OK;
}

/* A copy of src's values under a new shape (element count unchanged). */
static lg_status lg_ox_reshaped(lg_ox_const *out, const lg_ox_const *src, const lg_ox_shape *s)
{
    *out = *src;
    out->shape = *s;
    out->v = NULL;
    out->iv = NULL;
    size_t n = src->n ? src->n : 1;
    if (src->v) {
        if (!(out->v = malloc(n * sizeof *out->v))) return lg_fail(LG_ERR_NOMEM, "out of memory");
        memcpy(out->v, src->v, src->n * sizeof *out->v);
    }
    if (src->iv) {
        if (!(out->iv = malloc(n * sizeof *out->iv))) return lg_fail(LG_ERR_NOMEM, "out of memory");
        memcpy(out->iv, src->iv, src->n * sizeof *out->iv);
    }
    return LG_OK;
}

/* out: x's element type and dtype under shape s, n values allocated, not filled. */
static lg_status lg_ox_alloc_like(lg_ox_const *out, const lg_ox_const *x, const lg_ox_shape *s, size_t n)
{
    memset(out, 0, sizeof *out);
    out->shape = *s;
    out->n = n;
    out->dtype = x->dtype;
    if (x->iv && !(out->iv = malloc((n ? n : 1) * sizeof *out->iv))) return lg_fail(LG_ERR_NOMEM, "out of memory");
    if (x->v && !(out->v = malloc((n ? n : 1) * sizeof *out->v))) return lg_fail(LG_ERR_NOMEM, "out of memory");
    return LG_OK;
}

/* The int64 list of an `axes`-like attribute or constant input (opset ≥ 13
 * moved axes from attributes to inputs). Returns the count, 0 if absent, -1
 * on error (message set). */
static int lg_ox_axes(const lg_ox_graph *G, int node, const char *attr, int input, int64_t *axes, int max)
{
    const Onnx__NodeProto *nd = G->g->node[node];
    const Onnx__AttributeProto *a = lg_ox_attr(nd, attr);
    if (a) {
        if ((int)a->n_ints > max) goto bad;
        for (size_t i = 0; i < a->n_ints; i++) axes[i] = a->ints[i];
        return (int)a->n_ints;
    }
    if ((int)nd->n_input > input && G->in_idx[node][input] >= 0) {
        const lg_ox_const *c = &G->vals[G->in_idx[node][input]].c;
        if (!c->iv || c->shape.rank > 1 || (int)c->n > max) goto bad;
        for (size_t i = 0; i < c->n; i++) axes[i] = c->iv[i];
        return (int)c->n;
    }
    return 0;
bad:
    lg_fail(LG_ERR_FORMAT, "%s: %s: '%s' must be at most %d int64 values", G->file, lg_ox_node_desc(G, node), attr, max);
    return -1;
}

static lg_status lg_ox_rank1(const lg_ox_graph *G, int node, const lg_ox_const *c, const char *what)
{
    if (c->shape.rank > 1)
        return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: %s has rank %d; shape arithmetic is folded on scalars and 1-D "
                       "tensors only", G->file, lg_ox_node_desc(G, node), what, c->shape.rank);
    return LG_OK;
}

lg_status lg_ox_squeeze_shape(const lg_ox_graph *G, int node, const lg_ox_shape *in, lg_ox_shape *o)
{
    const char *f = G->file, *desc = lg_ox_node_desc(G, node);
    int unsq = G->g->node[node]->op_type[0] == 'U';
    int64_t axes[LG_OX_MAX_RANK];
    int na = lg_ox_axes(G, node, "axes", 1, axes, LG_OX_MAX_RANK);
    if (na < 0) return LG_ERR_FORMAT;
    if (unsq && na == 0) return lg_fail(LG_ERR_FORMAT, "%s: %s: Unsqueeze needs axes", f, desc);
    lg_ox_shape s = {0, {0}};
    if (unsq) {
        int r = in->rank + na;
        if (r > LG_OX_MAX_RANK) return lg_fail(LG_ERR_FORMAT, "%s: %s: rank %d above %d", f, desc, r, LG_OX_MAX_RANK);
        int one[LG_OX_MAX_RANK] = {0};
        for (int i = 0; i < na; i++) {
            int64_t a = axes[i] < 0 ? axes[i] + r : axes[i];
            if (a < 0 || a >= r || one[a])
                return lg_fail(LG_ERR_FORMAT, "%s: %s: axis %lld out of range or repeated", f, desc, (long long)axes[i]);
            one[a] = 1;
        }
        s.rank = r;
        for (int i = 0, j = 0; i < r; i++) s.d[i] = one[i] ? 1 : in->d[j++];
    } else {
        int drop[LG_OX_MAX_RANK] = {0};
        for (int i = 0; i < na; i++) {
            int64_t a = axes[i] < 0 ? axes[i] + in->rank : axes[i];
            if (a < 0 || a >= in->rank || in->d[a] != 1)
                return lg_fail(LG_ERR_FORMAT, "%s: %s: axis %lld is not a dimension of size 1", f, desc,
                               (long long)axes[i]);
            drop[a] = 1;
        }
        for (int i = 0; i < in->rank; i++)
            if (!(na ? drop[i] : in->d[i] == 1)) s.d[s.rank++] = in->d[i];
    }
    *o = s;
    return LG_OK;
}

/* a op b on int64: 0 and *r set, or -1 (overflow, division by zero, or a quotient
 * where ONNX's truncation and numpy's floor differ) */
static int lg_ox_iop(char op, int64_t a, int64_t b, int64_t *r)
{
    switch (op) {
    case 'A': return __builtin_add_overflow(a, b, r) ? -1 : 0;
    case 'S': return __builtin_sub_overflow(a, b, r) ? -1 : 0;
    case 'M': return __builtin_mul_overflow(a, b, r) ? -1 : 0;
    default:
        if (b == 0 || (a == INT64_MIN && b == -1) || (a % b != 0 && (a < 0) != (b < 0))) return -1;
        *r = a / b;
        return 0;
    }
}

/* a op b on doubles: 0 and *r set when the rounded result is the exact one, else -1 */
static int lg_ox_dop(char op, double a, double b, double *r)
{
    int exact = op == 'A'   ? lg_ox_add_exact(a, b, r)
                : op == 'S' ? lg_ox_add_exact(a, -b, r)
                : op == 'M' ? lg_ox_mul_exact(a, b, r)
                            : b != 0 && lg_ox_div_exact(a, b, r);
    return exact ? 0 : -1;
}

/* Dims of c right-aligned to rank r (leading 1s). */
static void lg_ox_dims_right(const lg_ox_const *c, int r, int64_t *d)
{
    for (int i = 0; i < r; i++) {
        int j = i - (r - c->shape.rank);
        d[i] = j >= 0 ? c->shape.d[j] : 1;
    }
}

/* Add, Sub, Mul, Div of two constants of any rank, elementwise: the same shape up to
 * leading 1s, or one of them a single value; both int64 or both floating point. */
static lg_status lg_ox_arith_fold(const lg_ox_graph *G, int node, lg_ox_const *out)
{
    const Onnx__NodeProto *nd = G->g->node[node];
    const int *in = G->in_idx[node];
    const char *f = G->file, *desc = lg_ox_node_desc(G, node);
    char op = nd->op_type[0];
    if (nd->n_input != 2 || in[0] < 0 || in[1] < 0) return lg_fail(LG_ERR_FORMAT, "%s: %s: needs two inputs", f, desc);
    const lg_ox_const *a = &G->vals[in[0]].c, *b = &G->vals[in[1]].c;
    lg_status st;
    if (!a->iv != !b->iv)
        return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: one input is int64, the other floating point", f, desc);
    int r = a->shape.rank > b->shape.rank ? a->shape.rank : b->shape.rank;
    int64_t da[LG_OX_MAX_RANK], db[LG_OX_MAX_RANK];
    lg_ox_dims_right(a, r, da);
    lg_ox_dims_right(b, r, db);
    int same = 1;
    for (int i = 0; i < r; i++) same &= da[i] == db[i];
    if (!same && a->n != 1 && b->n != 1)
        return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: constants of %zu and %zu values are folded only when their shapes "
                       "agree or one is a single value", f, desc, a->n, b->n);
    const lg_ox_const *big = a->n != 1 || b->n == 1 ? a : b;
    lg_ox_shape so = {r, {0}};
    for (int i = 0; i < r; i++) so.d[i] = big == a ? da[i] : db[i];
    if (a->n == 1 && b->n == 1)
        for (int i = 0; i < r; i++) so.d[i] = 1;
    if ((st = lg_ox_alloc_like(out, big, &so, big->n)) != LG_OK) return st;
    if (!a->iv && (a->dtype == ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE || b->dtype == ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE))
        out->dtype = ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE;
    for (size_t i = 0; i < big->n; i++) {
        size_t ia = a->n == 1 ? 0 : i, ib = b->n == 1 ? 0 : i;
        int bad = a->iv ? lg_ox_iop(op, a->iv[ia], b->iv[ib], &out->iv[i]) : lg_ox_dop(op, a->v[ia], b->v[ib], &out->v[i]);
        if (bad) {
            lg_ox_const_free(out);
            if (a->iv)
                return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: %s of the int64 constants %lld and %lld overflows, divides "
                               "by zero or rounds toward zero where floor would not", f, desc, nd->op_type,
                               (long long)a->iv[ia], (long long)b->iv[ib]);
            return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: %s of the constants %.17g and %.17g is not exact in double "
                           "(constants are folded only when exact)", f, desc, nd->op_type, a->v[ia], b->v[ib]);
        }
    }
    return LG_OK;
}

/* The numpy broadcast of shapes a and b into o; 0 if they do not broadcast. */
static int lg_ox_bshape(const lg_ox_shape *a, const lg_ox_shape *b, lg_ox_shape *o)
{
    int r = a->rank > b->rank ? a->rank : b->rank;
    o->rank = r;
    for (int i = 0; i < r; i++) {
        int64_t x = i < r - a->rank ? 1 : a->d[i - (r - a->rank)], y = i < r - b->rank ? 1 : b->d[i - (r - b->rank)];
        if (x != y && x != 1 && y != 1) return 0;
        o->d[i] = x == 1 ? y : x;
    }
    return 1;
}

/* The flat index into c (shape broadcast to o) of the flat output index k. */
static size_t lg_ox_bindex(const lg_ox_const *c, const lg_ox_shape *o, size_t k)
{
    size_t idx = 0, stride = 1;
    for (int i = o->rank - 1; i >= 0; i--) {
        int64_t oi = (int64_t)(k % (size_t)o->d[i]);
        k /= (size_t)o->d[i];
        int ci = i - (o->rank - c->shape.rank);
        if (ci < 0) continue;
        if (c->shape.d[ci] != 1) idx += (size_t)oi * stride;
        stride *= (size_t)c->shape.d[ci];
    }
    return idx;
}

static double lg_ox_cval(const lg_ox_const *c, size_t i) { return c->iv ? (double)c->iv[i] : c->v[i]; }

/* ConstantOfShape, Equal, Where, Expand and Range on constants (PyTorch's expand and class
 * token arithmetic); Equal's booleans are int64 0/1. */
static lg_status lg_ox_fold_more(const lg_ox_graph *G, int node, lg_ox_const *out)
{
    const Onnx__NodeProto *nd = G->g->node[node];
    const char *op = nd->op_type, *f = G->file, *desc = lg_ox_node_desc(G, node);
    const int *in = G->in_idx[node];
    const lg_ox_const *x = &G->vals[in[0]].c;
    lg_status st;
    lg_ox_shape o;
    if (op[0] == 'C') { /* ConstantOfShape(shape), value attribute: one element, default float 0 */
        if (!x->iv || x->shape.rank != 1 || x->n > LG_OX_MAX_RANK)
            return lg_fail(LG_ERR_FORMAT, "%s: %s: the shape must be a 1-D int64 constant", f, desc);
        o.rank = (int)x->n;
        for (size_t i = 0; i < x->n; i++) {
            if (x->iv[i] < 0 || x->iv[i] > LG_NET_MAX_DIM)
                return lg_fail(LG_ERR_FORMAT, "%s: %s: dimension %lld", f, desc, (long long)x->iv[i]);
            o.d[i] = x->iv[i];
        }
        size_t n = lg_ox_shape_count(&o);
        if (n == 0 && o.rank > 0) {
            for (int i = 0; i < o.rank; i++)
                if (o.d[i] == 0) goto empty;
            return lg_fail(LG_ERR_FORMAT, "%s: %s: too many elements", f, desc);
        }
    empty:;
        lg_ox_const v = {.n = 1, .dtype = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT};
        double zero = 0;
        v.v = &zero;
        const Onnx__AttributeProto *a = lg_ox_attr(nd, "value");
        lg_ox_const dec;
        memset(&dec, 0, sizeof dec);
        if (a && a->t) {
            if ((st = lg_ox_const_decode(&dec, a->t, f, "value")) != LG_OK) return st;
            if (dec.n != 1) {
                lg_ox_const_free(&dec);
                return lg_fail(LG_ERR_FORMAT, "%s: %s: value must hold one element", f, desc);
            }
            v = dec;
        }
        if ((st = lg_ox_alloc_like(out, &v, &o, n)) == LG_OK)
            for (size_t i = 0; i < n; i++) {
                if (out->iv) out->iv[i] = v.iv[0];
                if (out->v) out->v[i] = v.v[0];
            }
        lg_ox_const_free(&dec);
        return st;
    }
    if (op[0] == 'R') { /* Range(start, limit, delta) */
        if (nd->n_input != 3 || in[1] < 0 || in[2] < 0)
            return lg_fail(LG_ERR_FORMAT, "%s: %s: expected start, limit and delta", f, desc);
        const lg_ox_const *l = &G->vals[in[1]].c, *d = &G->vals[in[2]].c;
        if (!x->iv || !l->iv || !d->iv || x->n != 1 || l->n != 1 || d->n != 1 || d->iv[0] == 0)
            return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: Range is folded on int64 scalars with a nonzero delta", f, desc);
        int64_t a = x->iv[0], b = l->iv[0], s = d->iv[0];
        double cnt = ceil(((double)b - (double)a) / (double)s);
        if (cnt > LG_NET_MAX_DIM) return lg_fail(LG_ERR_FORMAT, "%s: %s: %g values", f, desc, cnt);
        size_t n = cnt > 0 ? (size_t)cnt : 0;
        if ((st = lg_ox_int_alloc(out, 1, n)) != LG_OK) return st;
        for (size_t i = 0; i < n; i++) out->iv[i] = a + (int64_t)i * s;
        return LG_OK;
    }
    if (op[0] == 'E' && op[1] == 'x') { /* Expand(x, shape): x broadcast to shape (numpy rules) */
        const lg_ox_const *sh = nd->n_input == 2 && in[1] >= 0 ? &G->vals[in[1]].c : NULL;
        if (!sh || !sh->iv || sh->shape.rank != 1 || sh->n > LG_OX_MAX_RANK)
            return lg_fail(LG_ERR_FORMAT, "%s: %s: the shape must be a 1-D int64 constant", f, desc);
        lg_ox_shape t = {(int)sh->n, {0}};
        for (size_t i = 0; i < sh->n; i++) {
            if (sh->iv[i] < 1 || sh->iv[i] > LG_NET_MAX_DIM)
                return lg_fail(LG_ERR_FORMAT, "%s: %s: dimension %lld", f, desc, (long long)sh->iv[i]);
            t.d[i] = sh->iv[i];
        }
        size_t n;
        if (!lg_ox_bshape(&x->shape, &t, &o) || !(n = lg_ox_shape_count(&o)))
            return lg_fail(LG_ERR_FORMAT, "%s: %s: shapes do not broadcast", f, desc);
        if ((st = lg_ox_alloc_like(out, x, &o, n)) != LG_OK) return st;
        for (size_t k = 0; k < n; k++) {
            size_t j = lg_ox_bindex(x, &o, k);
            if (out->iv) out->iv[k] = x->iv[j];
            if (out->v) out->v[k] = x->v[j];
        }
        return LG_OK;
    }
    int where = op[0] == 'W';
    if (nd->n_input != (where ? 3u : 2u) || in[where] < 0 || in[1 + where] < 0)
        return lg_fail(LG_ERR_FORMAT, "%s: %s: expected %d inputs", f, desc, where ? 3 : 2);
    const lg_ox_const *a = &G->vals[in[where]].c, *b = &G->vals[in[1 + where]].c;
    lg_ox_shape ab;
    size_t n;
    if (!lg_ox_bshape(&a->shape, &b->shape, &ab) || !lg_ox_bshape(&x->shape, &ab, &o) ||
        (!(n = lg_ox_shape_count(&o)) && o.rank > 0))
        return lg_fail(LG_ERR_FORMAT, "%s: %s: shapes do not broadcast", f, desc);
    if (o.rank == 0) n = 1;
    if (!where) { /* Equal: int64 0/1 */
        if ((st = lg_ox_int_alloc(out, 1, n)) != LG_OK) return st;
        out->shape = o;
        for (size_t k = 0; k < n; k++)
            out->iv[k] = lg_ox_cval(x, lg_ox_bindex(x, &o, k)) == lg_ox_cval(a, lg_ox_bindex(a, &o, k));
        return LG_OK;
    }
    if (!x->iv || (!a->iv != !b->iv))
        return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: Where is folded on a boolean condition and two constants of one "
                       "type", f, desc);
    if ((st = lg_ox_alloc_like(out, a, &o, n)) != LG_OK) return st;
    for (size_t k = 0; k < n; k++) {
        const lg_ox_const *c = x->iv[lg_ox_bindex(x, &o, k)] ? a : b;
        size_t j = lg_ox_bindex(c, &o, k);
        if (out->iv) out->iv[k] = c->iv[j];
        if (out->v) out->v[k] = c->v[j];
    }
    return LG_OK;
}

/* ---- the constant-folding table: one entry per op folded on constant inputs ---- */

static lg_status lg_ox_k_constant(const lg_ox_graph *G, int node, const lg_ox_fold_in *a, lg_ox_const *out)
{
    const Onnx__NodeProto *nd = G->g->node[node];
    const char *f = G->file, *desc = lg_ox_node_desc(G, node);
    const Onnx__AttributeProto *at;
    lg_status st;
    (void)a;
    if ((at = lg_ox_attr(nd, "value")) && at->t) {
        st = lg_ox_const_decode(out, at->t, f, G->vals[G->out_idx[node][0]].name);
    } else if ((at = lg_ox_attr(nd, "value_float")) && at->has_f) {
        if (!isfinite(at->f))
            return lg_fail(LG_ERR_FORMAT, "%s: %s: value_float is %g; NaN/Inf refused", f, desc, (double)at->f);
        out->n = 1;
        out->dtype = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
        st = (out->v = malloc(sizeof(double))) ? LG_OK : LG_ERR_NOMEM;
        if (st == LG_OK) out->v[0] = at->f;
    } else if ((at = lg_ox_attr(nd, "value_ints")) && at->n_ints >= 1 && at->n_ints <= LG_NET_MAX_PARAMS) {
        out->n = at->n_ints;
        out->shape.rank = 1;
        out->shape.d[0] = (int64_t)at->n_ints;
        out->dtype = ONNX__TENSOR_PROTO__DATA_TYPE__INT64;
        st = (out->iv = malloc(at->n_ints * sizeof(int64_t))) ? LG_OK : LG_ERR_NOMEM;
        if (st == LG_OK) memcpy(out->iv, at->ints, at->n_ints * sizeof(int64_t));
    } else {
        return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: expected a 'value' tensor, 'value_float' or 'value_ints' attribute",
                       f, desc);
    }
    if (st == LG_ERR_NOMEM) return lg_fail(st, "%s: out of memory", f);
    return st;
}

static lg_status lg_ox_k_reshape(const lg_ox_graph *G, int node, const lg_ox_fold_in *a, lg_ox_const *out)
{ /* Identity (aux 0), Flatten (1), Reshape (2): the values under a new shape */
    const Onnx__NodeProto *nd = G->g->node[node];
    const int *in = G->in_idx[node];
    lg_ox_shape s = a->x->shape;
    lg_status st = LG_OK;
    if (a->aux == 1) st = lg_ox_flatten_shape(G, node, &a->x->shape, &s);
    if (a->aux == 2 && (nd->n_input != 2 || in[1] < 0)) return lg_ox_fold_refuse(G, node);
    if (a->aux == 2) st = lg_ox_reshape_shape(G, node, &a->x->shape, &G->vals[in[1]].c, &s);
    if (st != LG_OK) return st;
    return lg_ox_reshaped(out, a->x, &s);
}

static lg_status lg_ox_k_shape(const lg_ox_graph *G, int node, const lg_ox_fold_in *a, lg_ox_const *out)
{
    const lg_ox_shape *s = a->dyn ? a->dyn : &a->x->shape;
    int64_t start = 0, end = s->rank;
    lg_status st;
    if (lg_ox_attr_int(G, node, "start", &start) < 0 || lg_ox_attr_int(G, node, "end", &end) < 0)
        return LG_ERR_FORMAT;
    if (start < 0) start += s->rank;
    if (end < 0) end += s->rank;
    start = start < 0 ? 0 : start > s->rank ? s->rank : start;
    end = end < start ? start : end > s->rank ? s->rank : end;
    if ((st = lg_ox_int_alloc(out, 1, (size_t)(end - start))) != LG_OK) return st;
    for (int64_t i = start; i < end; i++) out->iv[i - start] = s->d[i];
    return LG_OK;
}

static lg_status lg_ox_k_arith(const lg_ox_graph *G, int node, const lg_ox_fold_in *a, lg_ox_const *out)
{
    (void)a;
    return lg_ox_arith_fold(G, node, out);
}

static lg_status lg_ox_k_more(const lg_ox_graph *G, int node, const lg_ox_fold_in *a, lg_ox_const *out)
{
    (void)a;
    return lg_ox_fold_more(G, node, out);
}

static lg_status lg_ox_k_cast(const lg_ox_graph *G, int node, const lg_ox_fold_in *a, lg_ox_const *out)
{
    const lg_ox_const *x = a->x;
    const char *f = G->file, *desc = lg_ox_node_desc(G, node);
    lg_status st;
    int64_t to = 0;
    if (lg_ox_attr_int(G, node, "to", &to) != 1)
        return lg_fail(LG_ERR_FORMAT, "%s: %s: Cast needs an int 'to' attribute", f, desc);
    lg_ox_shape s = x->shape;
    if (to == ONNX__TENSOR_PROTO__DATA_TYPE__INT64) {
        if ((st = lg_ox_int_alloc(out, 1, x->n)) != LG_OK) return st;
        out->shape = s;
        for (size_t i = 0; i < x->n; i++) {
            double v = x->iv ? (double)x->iv[i] : x->v[i];
            if (!x->iv && (v != floor(v) || fabs(v) > 9007199254740992.0))
                return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: Cast of %g to int64 is not exact", f, desc, v);
            out->iv[i] = x->iv ? x->iv[i] : (int64_t)v;
        }
        return LG_OK;
    }
    if (to == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT || to == ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE) {
        if (x->v && x->dtype == to) return lg_ox_reshaped(out, x, &s);
        if (!x->iv || to == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT)
            return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: Cast to type %lld is folded from int64 to double only", f,
                           desc, (long long)to);
        *out = *x;
        out->iv = NULL;
        out->dtype = (int)to;
        if (!(out->v = malloc((x->n ? x->n : 1) * sizeof *out->v))) return lg_fail(LG_ERR_NOMEM, "out of memory");
        for (size_t i = 0; i < x->n; i++) {
            if (llabs(x->iv[i]) > (1LL << 53))
                return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: Cast of %lld is not exact", f, desc, (long long)x->iv[i]);
            out->v[i] = (double)x->iv[i];
        }
        return LG_OK;
    }
    return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: Cast to element type %lld is not supported", f, desc, (long long)to);
}

static lg_status lg_ox_k_squeeze(const lg_ox_graph *G, int node, const lg_ox_fold_in *a, lg_ox_const *out)
{
    lg_ox_shape s;
    lg_status st = lg_ox_squeeze_shape(G, node, &a->x->shape, &s);
    if (st != LG_OK) return st;
    return lg_ox_reshaped(out, a->x, &s);
}

static lg_status lg_ox_k_gather(const lg_ox_graph *G, int node, const lg_ox_fold_in *a, lg_ox_const *out)
{
    const Onnx__NodeProto *nd = G->g->node[node];
    const int *in = G->in_idx[node];
    const lg_ox_const *x = a->x;
    const char *f = G->file, *desc = lg_ox_node_desc(G, node);
    lg_status st;
    int64_t axis = 0;
    if (lg_ox_attr_int(G, node, "axis", &axis) < 0) return LG_ERR_FORMAT;
    if (nd->n_input != 2 || in[1] < 0 || x->shape.rank != 1 || (axis != 0 && axis != -1))
        return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: Gather is folded on a 1-D constant along axis 0 only", f, desc);
    const lg_ox_const *ix = &G->vals[in[1]].c;
    if (!ix->iv || ix->shape.rank > 1)
        return lg_fail(LG_ERR_FORMAT, "%s: %s: indices must be a scalar or 1-D int64 constant", f, desc);
    if ((st = lg_ox_alloc_like(out, x, &ix->shape, ix->n)) != LG_OK) return st;
    for (size_t i = 0; i < ix->n; i++) {
        int64_t k = ix->iv[i] < 0 ? ix->iv[i] + (int64_t)x->n : ix->iv[i];
        if (k < 0 || k >= (int64_t)x->n)
            return lg_fail(LG_ERR_FORMAT, "%s: %s: index %lld out of range for %zu values", f, desc,
                           (long long)ix->iv[i], x->n);
        if (out->iv) out->iv[i] = x->iv[k];
        if (out->v) out->v[i] = x->v[k];
    }
    return LG_OK;
}

static lg_status lg_ox_k_concat(const lg_ox_graph *G, int node, const lg_ox_fold_in *a, lg_ox_const *out)
{
    const Onnx__NodeProto *nd = G->g->node[node];
    const int *in = G->in_idx[node];
    const char *f = G->file, *desc = lg_ox_node_desc(G, node);
    lg_status st;
    int64_t axis = 0;
    (void)a;
    if (lg_ox_attr_int(G, node, "axis", &axis) < 0) return LG_ERR_FORMAT;
    size_t n = 0;
    for (size_t j = 0; j < nd->n_input; j++) {
        const lg_ox_const *c = in[j] >= 0 ? &G->vals[in[j]].c : NULL;
        if (!c || !c->iv || c->shape.rank != 1 || (axis != 0 && axis != -1))
            return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: Concat is folded on 1-D int64 constants only", f, desc);
        n += c->n;
    }
    if (n > LG_OX_MAX_RANK * 64) return lg_fail(LG_ERR_FORMAT, "%s: %s: %zu values", f, desc, n);
    if ((st = lg_ox_int_alloc(out, 1, n)) != LG_OK) return st;
    n = 0;
    for (size_t j = 0; j < nd->n_input; j++) {
        const lg_ox_const *c = &G->vals[in[j]].c;
        memcpy(out->iv + n, c->iv, c->n * sizeof *c->iv);
        n += c->n;
    }
    return LG_OK;
}

/* Slice: starts/ends/axes/steps as inputs (opset ≥ 10) or attributes */
static lg_status lg_ox_k_slice(const lg_ox_graph *G, int node, const lg_ox_fold_in *a, lg_ox_const *out)
{
    const lg_ox_const *x = a->x;
    const char *f = G->file, *desc = lg_ox_node_desc(G, node);
    lg_status st;
    int64_t sv[4][1];
    int has[4];
    const char *names[4] = {"starts", "ends", "axes", "steps"};
    for (int k = 0; k < 4; k++) {
        int64_t tmp[LG_OX_MAX_RANK];
        int c = lg_ox_axes(G, node, names[k], k + 1, tmp, LG_OX_MAX_RANK);
        if (c < 0) return LG_ERR_FORMAT;
        if (c > 1) return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: Slice of a 1-D constant takes one %s", f, desc, names[k]);
        has[k] = c;
        sv[k][0] = c ? tmp[0] : 0;
    }
    if (!has[0] || !has[1] || x->shape.rank != 1 || (has[2] && sv[2][0] != 0 && sv[2][0] != -1) ||
        (has[3] && sv[3][0] < 1))
        return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: Slice is folded on a 1-D constant with a positive step only", f,
                       desc);
    int64_t len = (int64_t)x->n, step = has[3] ? sv[3][0] : 1;
    int64_t b = sv[0][0] < 0 ? sv[0][0] + len : sv[0][0], e = sv[1][0] < 0 ? sv[1][0] + len : sv[1][0];
    b = b < 0 ? 0 : b > len ? len : b;
    e = e < 0 ? 0 : e > len ? len : e;
    size_t n = e > b ? (size_t)((e - b - 1) / step + 1) : 0; /* no overflow for any step ≥ 1 */
    lg_ox_shape s = {1, {(int64_t)n}};
    if ((st = lg_ox_alloc_like(out, x, &s, n)) != LG_OK) return st;
    for (size_t i = 0; i < n; i++) {
        int64_t k = b + (int64_t)i * step;
        if (out->iv) out->iv[i] = x->iv[k];
        if (out->v) out->v[i] = x->v[k];
    }
    return LG_OK;
}

/* Flags of a folding entry: what the dispatcher checks or does before the fold. */
enum {
    LG_OXK_RANK1 = 1 << 2, /* the data (input 0) must be of rank ≤ 1 */
    LG_OXK_EXACT = 1 << 3  /* arithmetic: folded only when the result is exact (listed as such) */
};

static const lg_ox_fold lg_ox_folds[] = {
    {"Constant", lg_ox_k_constant, LG_OXK_SOURCE, 0},
    {"Identity", lg_ox_k_reshape, 0, 0},
    {"Flatten", lg_ox_k_reshape, 0, 1},
    {"Reshape", lg_ox_k_reshape, 0, 2},
    {"Shape", lg_ox_k_shape, LG_OXK_SHAPE, 0},
    {"Gather", lg_ox_k_gather, LG_OXK_RANK1, 0},
    {"Unsqueeze", lg_ox_k_squeeze, 0, 0},
    {"Squeeze", lg_ox_k_squeeze, 0, 0},
    {"Concat", lg_ox_k_concat, LG_OXK_RANK1, 0},
    {"Slice", lg_ox_k_slice, LG_OXK_RANK1, 0},
    {"Cast", lg_ox_k_cast, 0, 0},
    {"ConstantOfShape", lg_ox_k_more, 0, 0},
    {"Equal", lg_ox_k_more, 0, 0},
    {"Where", lg_ox_k_more, 0, 0},
    {"Expand", lg_ox_k_more, 0, 0},
    {"Range", lg_ox_k_more, 0, 0},
    {"Add", lg_ox_k_arith, LG_OXK_EXACT, 0},
    {"Sub", lg_ox_k_arith, LG_OXK_EXACT, 0},
    {"Mul", lg_ox_k_arith, LG_OXK_EXACT, 0},
    {"Div", lg_ox_k_arith, LG_OXK_EXACT, 0},
};
#define LG_OX_N_FOLDS (sizeof lg_ox_folds / sizeof lg_ox_folds[0])

const lg_ox_fold *lg_ox_fold_find(const char *op)
{
    for (size_t i = 0; i < LG_OX_N_FOLDS; i++)
        if (strcmp(op, lg_ox_folds[i].op) == 0) return &lg_ox_folds[i];
    return NULL;
}

const char *lg_ox_folds_text(void)
{
    static char text[512];
    if (text[0]) return text;
    size_t len = 0;
    for (int exact = 0; exact < 2; exact++)
        for (size_t i = 0; i < LG_OX_N_FOLDS; i++) {
            if (!(lg_ox_folds[i].flags & LG_OXK_EXACT) != !exact || (lg_ox_folds[i].flags & LG_OXK_SOURCE)) continue;
            const char *sep = !len ? "" : exact && !(lg_ox_folds[i - 1].flags & LG_OXK_EXACT) ? ", and exact " : ", ";
            int k = snprintf(text + len, sizeof text - len, "%s%s", sep, lg_ox_folds[i].op);
            if (k > 0) len = len + (size_t)k < sizeof text ? len + (size_t)k : sizeof text - 1;
        }
    return text;
}

lg_status lg_ox_fold_refuse(const lg_ox_graph *G, int node)
{
    const char *op = G->g->node[node]->op_type, *best = lg_ox_folds[0].op;
    int bd = 1 << 30;
    for (size_t i = 0; i < LG_OX_N_FOLDS; i++) {
        int e = (lg_ox_folds[i].flags & LG_OXK_SOURCE) ? 1 << 30 : lg_ox_edit(op, lg_ox_folds[i].op);
        if (e < bd) bd = e, best = lg_ox_folds[i].op;
    }
    return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: computes on constants only, and '%s' is not folded (nearest folded: "
                   "%s; `lgelu info --help` lists all)", G->file, lg_ox_node_desc(G, node), op, best);
}

lg_status lg_ox_shape_fold(const lg_ox_graph *G, int node, const lg_ox_shape *dyn, lg_ox_const *out)
{
    const Onnx__NodeProto *nd = G->g->node[node];
    const int *in = G->in_idx[node];
    const char *f = G->file, *desc = lg_ox_node_desc(G, node);
    const lg_ox_fold *k = lg_ox_fold_find(nd->op_type);
    lg_status st;
    memset(out, 0, sizeof *out);
    lg_ox_fold_in a = {.dyn = dyn, .aux = k ? k->aux : 0};
    if (k && (k->flags & LG_OXK_SOURCE)) return k->fn(G, node, &a, out);
    if (nd->n_input < 1 || in[0] < 0) return lg_fail(LG_ERR_FORMAT, "%s: %s: missing input", f, desc);
    if (!k) return lg_ox_fold_refuse(G, node);
    a.x = &G->vals[in[0]].c;
    if (dyn && !(k->flags & LG_OXK_SHAPE))
        return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: %s of the network value is not supported (only Shape reads it)", f,
                       desc, nd->op_type);
    if ((k->flags & LG_OXK_RANK1) && (st = lg_ox_rank1(G, node, a.x, "the data")) != LG_OK) return st;
    return k->fn(G, node, &a, out);
}
