/* onnx_tnode.c — ONNX ops that become Transformer nodes (core/net.h, DESIGN.md §1
 * "Transformer nodes"): MatMul and Mul of two network values (product nodes), Softmax,
 * LayerNormalization and PyTorch's decomposition of it (layernorm nodes), and the
 * reductions ReduceMean / ReduceSum (a linear map, or the start of that decomposition).
 *
 * Every node is the file's exact function: index tables are integers, gamma, beta and ε
 * are the file's numbers, and a mean divides by the count only when that is exact
 * (lg_ox_b_scale). Index tables and weights handed to lg_ox_b_tnode are owned by it.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "onnx/onnx_run.h"

/* Flat index into a value of shape s for the multi-index mi over the broadcast shape os
 * (s right-aligned in os, its dimensions of size 1 broadcast). */
static size_t lg_tn_flat(const lg_ox_shape *s, const lg_ox_shape *os, const int64_t *mi)
{
    size_t f = 0;
    int off = os->rank - s->rank;
    for (int a = 0; a < s->rank; a++) f = f * (size_t)s->d[a] + (size_t)(s->d[a] == 1 ? 0 : mi[a + off]);
    return f;
}

/* Numpy broadcast of a and b into o; 0 if they do not broadcast. */
static int lg_tn_bcast(const lg_ox_shape *a, const lg_ox_shape *b, lg_ox_shape *o)
{
    o->rank = a->rank > b->rank ? a->rank : b->rank;
    for (int i = 0; i < o->rank; i++) {
        int ia = i - (o->rank - a->rank), ib = i - (o->rank - b->rank);
        int64_t da = ia >= 0 ? a->d[ia] : 1, db = ib >= 0 ? b->d[ib] : 1;
        if (da != db && da != 1 && db != 1) return 0;
        o->d[i] = da == 1 ? db : da;
    }
    return 1;
}

/* Next multi-index of shape s (row-major); 0 after the last. */
static int lg_tn_next(const lg_ox_shape *s, int64_t *mi)
{
    for (int a = s->rank - 1; a >= 0; a--) {
        if (++mi[a] < s->d[a]) return 1;
        mi[a] = 0;
    }
    return 0;
}

/* v as node *src read through *map (always set, owned by the caller, no zero entries). */
static lg_status lg_tn_node(lg_ox_run *R, int node, lg_ox_val *v, int *src, int **map, size_t n)
{
    lg_ox_b *B = &R->B;
    int pmn = v->pm ? v->pm->n : -1; /* the length of the map as_node may return */
    lg_status st = lg_ox_as_node(R, node, v, src, map);
    if (st != LG_OK) return st;
    if (*map && (size_t)pmn != n) {
        free(*map);
        *map = NULL;
        return lg_fail(LG_ERR_FORMAT, "%s: %s: an operand of %zu values is a map of %d", R->G.file,
                       lg_ox_name(R, node), n, pmn);
    }
    int zero = 0;
    for (size_t i = 0; *map && i < n; i++) zero |= (*map)[i] < 0;
    if (zero) { /* a map with zeros (a Pad) reads nothing there: it becomes a layer of its own */
        free(*map);
        *map = NULL;
        if ((st = lg_ox_attach(R, node, v)) != LG_OK) return st;
        lg_ox_val t = *v;
        t.pm = NULL;
        if ((st = lg_ox_b_fold(B, &t)) != LG_OK) return st;
        if ((st = lg_ox_b_close(B, LG_ACT_IDENTITY, 1.0)) != LG_OK) return st;
        *src = B->src;
    }
    if (!*map) {
        if ((size_t)lg_ox_node_width(B, *src) != n)
            return lg_fail(LG_ERR_FORMAT, "%s: %s: an operand of %zu values reads a node of %d", R->G.file,
                           lg_ox_name(R, node), n, lg_ox_node_width(B, *src));
        if (!(*map = malloc((n ? n : 1) * sizeof **map))) return lg_fail(LG_ERR_NOMEM, "%s: out of memory", R->G.file);
        for (size_t i = 0; i < n; i++) (*map)[i] = (int)i;
    }
    return LG_OK;
}

lg_status lg_ox_product(lg_ox_run *R, int node, lg_ox_val *a, lg_ox_val *b, int elementwise, lg_ox_val *out)
{
    lg_ox_b *B = &R->B;
    const int *in = R->G.in_idx[node];
    lg_status st;
    if (a->form != LG_OX_LIN || b->form != LG_OX_LIN) return lg_ox_pattern_fail(R, node);
    int keep[2] = {in[0], in[1]};
    if ((st = lg_ox_settle(R, node, keep, 2)) != LG_OK) return st;
    const lg_ox_shape sa = a->shape, sb = b->shape;
    lg_ox_shape os, bs = {0, {0}};
    size_t K = 1;
    if (elementwise) {
        if (!lg_tn_bcast(&sa, &sb, &os)) goto shape;
    } else {
        if (sa.rank < 2 || sb.rank < 2 || sa.d[sa.rank - 1] != sb.d[sb.rank - 2]) goto shape;
        lg_ox_shape ba = sa, bb = sb;
        ba.rank -= 2, bb.rank -= 2;
        if (!lg_tn_bcast(&ba, &bb, &bs)) goto shape;
        os = bs;
        os.d[os.rank++] = sa.d[sa.rank - 2];
        os.d[os.rank++] = sb.d[sb.rank - 1];
        K = (size_t)sa.d[sa.rank - 1];
    }
    size_t n = lg_ox_shape_count(&os), na = lg_ox_shape_count(&sa), nb = lg_ox_shape_count(&sb);
    if (n == 0 || na == 0 || nb == 0 || n > LG_NET_MAX_DIM || K == 0 || n * K > LG_NET_MAX_PARAMS / 2)
        return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: a product of %zu outputs of %zu terms each is too large", R->G.file,
                       lg_ox_name(R, node), n, K);
    int src_a, src_b, *ma = NULL, *mb = NULL;
    if ((st = lg_tn_node(R, node, a, &src_a, &ma, na)) != LG_OK) return st;
    if ((st = lg_tn_node(R, node, b, &src_b, &mb, nb)) != LG_OK) {
        free(ma);
        return st;
    }
    int *map = malloc(2 * n * K * sizeof *map);
    if (!map) {
        free(ma);
        free(mb);
        return lg_fail(LG_ERR_NOMEM, "%s: out of memory", R->G.file);
    }
    int64_t mi[LG_OX_MAX_RANK] = {0};
    size_t o = 0;
    do {
        if (elementwise) {
            map[o] = ma[lg_tn_flat(&sa, &os, mi)];
            map[n + o] = mb[lg_tn_flat(&sb, &os, mi)];
        } else {
            /* A[batch, i, k] · B[batch, k, j]: the batch part of mi broadcast into each */
            int r = os.rank;
            lg_ox_shape sab = sa, sbb = sb;
            sab.rank -= 2, sbb.rank -= 2;
            size_t fa = lg_tn_flat(&sab, &bs, mi), fb = lg_tn_flat(&sbb, &bs, mi);
            size_t M = (size_t)sa.d[sa.rank - 2], N = (size_t)sb.d[sb.rank - 1];
            size_t i = (size_t)mi[r - 2], j = (size_t)mi[r - 1];
            for (size_t k = 0; k < K; k++) {
                map[o * K + k] = ma[(fa * M + i) * K + k];
                map[n * K + o * K + k] = mb[(fb * K + k) * N + j];
            }
        }
        o++;
    } while (lg_tn_next(&os, mi));
    free(ma);
    free(mb);
    if ((st = lg_ox_settle(R, node, NULL, 0)) != LG_OK) {
        free(map);
        return st;
    }
    lg_nodeop op = {.src_b = src_b, .n_in_b = lg_ox_node_width(B, src_b), .K = (int)K};
    if ((st = lg_ox_b_tnode(B, LG_LAYER_BILINEAR, &op, src_a, lg_ox_node_width(B, src_a), (int)n, NULL, map)) != LG_OK)
        return st;
    B->shape = os;
    out->form = LG_OX_LIN;
    out->kmul = out->kdiv = 1.0;
    out->gen = R->gen;
    return LG_OK;
shape:
    return lg_fail(LG_ERR_FORMAT, "%s: %s: operands of shapes that do not %s (ranks %d and %d)", R->G.file,
                   lg_ox_name(R, node), elementwise ? "broadcast" : "multiply as matrices", sa.rank, sb.rank);
}

/* The pending map as a node of its own (closed into a layer unless it is the identity). */
static lg_status lg_tn_bare(lg_ox_b *B)
{
    if (lg_ox_b_identity(B) && B->n == lg_ox_node_width(B, B->src)) return LG_OK;
    return lg_ox_b_close(B, LG_ACT_IDENTITY, 1.0);
}

/* Index map moving axis ax of s to the end (inv = 0) or back from the end (inv = 1). */
static int *lg_tn_axis_map(const lg_ox_shape *s, int ax, int inv)
{
    size_t n = lg_ox_shape_count(s);
    int *map = malloc((n ? n : 1) * sizeof *map);
    if (!map) return NULL;
    lg_ox_shape t = {0, {0}}; /* s with ax moved last */
    for (int a = 0; a < s->rank; a++)
        if (a != ax) t.d[t.rank++] = s->d[a];
    t.d[t.rank++] = s->d[ax];
    int64_t mi[LG_OX_MAX_RANK] = {0}, ms[LG_OX_MAX_RANK];
    size_t o = 0;
    do { /* mi over t; ms the same element's index in s */
        for (int a = 0, j = 0; a < s->rank; a++) ms[a] = a == ax ? mi[t.rank - 1] : mi[j++];
        size_t fs = 0;
        for (int a = 0; a < s->rank; a++) fs = fs * (size_t)s->d[a] + (size_t)ms[a];
        if (inv) map[fs] = (int)o;
        else map[o] = (int)fs;
        o++;
    } while (lg_tn_next(&t, mi));
    return map;
}

/* A softmax or layernorm node over the trailing group of g elements of the pending map (after
 * moving axis `move` last when move ≥ 0, and back after); W as lg_ox_b_tnode takes it. */
static lg_status lg_tn_grouped(lg_ox_run *R, lg_layer_kind kind, int move, int g, double eps, double *W)
{
    lg_ox_b *B = &R->B;
    const lg_ox_shape s = B->shape;
    lg_status st = LG_OK;
    int *map = NULL;
    if (move >= 0) {
        if (!(map = lg_tn_axis_map(&s, move, 0))) goto oom;
        if ((st = lg_ox_b_index(B, map, B->n)) != LG_OK) goto fail;
    }
    if ((st = lg_tn_bare(B)) != LG_OK) goto fail;
    lg_nodeop op = {.group = g, .eps = eps};
    st = lg_ox_b_tnode(B, kind, &op, B->src, B->n, B->n, W, NULL);
    W = NULL;
    if (st == LG_OK && move >= 0) {
        if (!(map = lg_tn_axis_map(&s, move, 1))) goto oom;
        st = lg_ox_b_index(B, map, B->n);
    }
    B->shape = s;
    return st;
oom:
    st = lg_fail(LG_ERR_NOMEM, "%s: out of memory", B->file);
fail:
    free(W);
    return st;
}

lg_status lg_ox_softmax(lg_ox_run *R, int node)
{
    lg_ox_b *B = &R->B;
    const lg_ox_shape s = B->shape;
    int old = R->opset > 0 && R->opset < 13;
    int64_t axis = old ? 1 : -1;
    if (lg_ox_attr_int(&R->G, node, "axis", &axis) < 0) return LG_ERR_FORMAT;
    if (axis < 0) axis += s.rank;
    if (axis < 0 || axis >= s.rank)
        return lg_fail(LG_ERR_FORMAT, "%s: %s: axis out of range for rank %d", R->G.file, lg_ox_name(R, node), s.rank);
    /* opset < 13: the axes from `axis` on, coalesced (contiguous); later: one axis, moved last
     * by an index map unless only dimensions of 1 follow it */
    int64_t g = 1;
    for (int a = (int)axis; a < (old ? s.rank : axis + 1); a++) g *= s.d[a];
    int move = -1;
    for (int a = (int)axis + 1; !old && a < s.rank; a++)
        if (s.d[a] != 1) move = (int)axis;
    if (g < 1 || B->n % g) return lg_fail(LG_ERR_FORMAT, "%s: %s: bad shape", R->G.file, lg_ox_name(R, node));
    return lg_tn_grouped(R, LG_LAYER_SOFTMAX, move, (int)g, 0.0, NULL);
}

/* gamma then beta of a layernorm over g elements from constants (either may be NULL: 1, 0),
 * each of g values or one; NULL with lg_fail set when they do not fit. */
static double *lg_tn_gamma_beta(const lg_ox_run *R, int node, const lg_ox_const *gm, const lg_ox_const *bt, size_t g)
{
    const lg_ox_const *c[2] = {gm, bt};
    for (int i = 0; i < 2; i++)
        if (c[i] && (!c[i]->v || (c[i]->n != g && c[i]->n != 1))) {
            lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: the layer norm's %s must be a float constant of %zu values (or one)",
                    R->G.file, lg_ox_name(R, node), i ? "bias" : "scale", g);
            return NULL;
        }
    double *W = malloc(2 * g * sizeof *W);
    if (!W) {
        lg_fail(LG_ERR_NOMEM, "%s: out of memory", R->G.file);
        return NULL;
    }
    for (size_t j = 0; j < g; j++) {
        W[j] = gm ? gm->v[gm->n == 1 ? 0 : j] : 1.0;
        W[g + j] = bt ? bt->v[bt->n == 1 ? 0 : j] : 0.0;
    }
    for (size_t j = 0; j < 2 * g; j++)
        if (!isfinite(W[j])) {
            free(W);
            lg_fail(LG_ERR_FORMAT, "%s: %s: a scale or bias of the layer norm is not finite", R->G.file,
                    lg_ox_name(R, node));
            return NULL;
        }
    return W;
}

/* Group of the trailing axes from axis on; 0 with lg_fail set if out of range. */
static int64_t lg_tn_trailing(const lg_ox_run *R, int node, int64_t axis)
{
    const lg_ox_shape *s = &R->B.shape;
    if (axis < 0) axis += s->rank;
    if (axis < 0 || axis >= s->rank) {
        lg_fail(LG_ERR_FORMAT, "%s: %s: axis out of range for rank %d", R->G.file, lg_ox_name(R, node), s->rank);
        return 0;
    }
    int64_t g = 1;
    for (int a = (int)axis; a < s->rank; a++) g *= s->d[a];
    return g;
}

static const lg_ox_const *lg_tn_const_in(const lg_ox_run *R, int node, size_t j)
{
    const Onnx__NodeProto *nd = R->G.g->node[node];
    int v = j < nd->n_input ? R->G.in_idx[node][j] : -1;
    return v >= 0 && R->G.vals[v].kind == LG_OX_CONST ? &R->G.vals[v].c : NULL;
}

lg_status lg_ox_layernorm(lg_ox_run *R, int node)
{
    const Onnx__NodeProto *nd = R->G.g->node[node];
    int64_t axis = -1;
    double eps = (double)1e-5f;
    if (lg_ox_attr_int(&R->G, node, "axis", &axis) < 0 || lg_ox_attr_float(&R->G, node, "epsilon", &eps) < 0)
        return LG_ERR_FORMAT;
    for (size_t o = 1; o < nd->n_output; o++) {
        int v = R->G.out_idx[node][o];
        if (v >= 0 && R->G.vals[v].uses > 0)
            return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: the Mean and InvStdDev outputs are not supported", R->G.file,
                           lg_ox_name(R, node));
    }
    if (!(eps > 0) || !isfinite(eps))
        return lg_fail(LG_ERR_FORMAT, "%s: %s: epsilon %g must be positive and finite", R->G.file, lg_ox_name(R, node),
                       eps);
    int64_t g = lg_tn_trailing(R, node, axis);
    if (!g) return LG_ERR_FORMAT;
    for (size_t j = 1; j < nd->n_input && j < 3; j++)
        if (R->G.in_idx[node][j] >= 0 && !lg_tn_const_in(R, node, j))
            return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: the scale and bias must be constants", R->G.file,
                           lg_ox_name(R, node));
    const lg_ox_const *gm = lg_tn_const_in(R, node, 1), *bt = lg_tn_const_in(R, node, 2);
    if (!gm) return lg_fail(LG_ERR_FORMAT, "%s: %s: expected a Scale input", R->G.file, lg_ox_name(R, node));
    double *W = lg_tn_gamma_beta(R, node, gm, bt, (size_t)g);
    if (!W) return LG_ERR_UNSUPPORTED;
    return lg_tn_grouped(R, LG_LAYER_LAYERNORM, -1, (int)g, eps, W);
}

/* ---- reductions and the decomposed LayerNorm ---- */

/* The reduced axes of node (attribute `axes`, or input 1 from opset 18), normalised against
 * rank into red[rank] flags; every axis when none are given. */
static lg_status lg_tn_axes(const lg_ox_run *R, int node, int rank, int *red)
{
    const Onnx__NodeProto *nd = R->G.g->node[node];
    const Onnx__AttributeProto *at = lg_ox_attr(nd, "axes");
    const lg_ox_const *ac = lg_tn_const_in(R, node, 1);
    if (nd->n_input > 1 && R->G.in_idx[node][1] >= 0 && (!ac || !ac->iv))
        return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: the axes must be an int64 constant", R->G.file, lg_ox_name(R, node));
    size_t na = at ? at->n_ints : ac ? ac->n : 0;
    for (int a = 0; a < rank; a++) red[a] = na == 0;
    for (size_t i = 0; i < na; i++) {
        int64_t a = at ? at->ints[i] : ac->iv[i];
        if (a < 0) a += rank;
        if (a < 0 || a >= rank)
            return lg_fail(LG_ERR_FORMAT, "%s: %s: axis out of range for rank %d", R->G.file, lg_ox_name(R, node), rank);
        red[a] = 1;
    }
    return LG_OK;
}

/* The one node reading value v (by its index), or -1 (none, several, or a graph output). */
static int lg_tn_sole_reader(const lg_ox_run *R, int v, const char *op)
{
    if (v < 0 || R->G.vals[v].uses != 1) return -1;
    const Onnx__GraphProto *g = R->G.g;
    int found = -1;
    for (size_t i = 0; i < g->n_node; i++)
        for (size_t j = 0; j < g->node[i]->n_input; j++)
            if (R->G.in_idx[i][j] == v) {
                if (found >= 0 && found != (int)i) return -1;
                found = (int)i;
            }
    if (found < 0 || !g->node[found]->op_type || strcmp(g->node[found]->op_type, op) != 0) return -1;
    return found;
}

/* The constant input of binary node nd other than value v (or NULL). */
static const lg_ox_const *lg_tn_other(const lg_ox_run *R, int nd, int v)
{
    const int *in = R->G.in_idx[nd];
    if (R->G.g->node[nd]->n_input != 2) return NULL;
    int o = in[0] == v ? in[1] : in[1] == v ? in[0] : -1;
    return o >= 0 && o != v && R->G.vals[o].kind == LG_OX_CONST && R->G.vals[o].c.v ? &R->G.vals[o].c : NULL;
}

static int lg_tn_out(const lg_ox_run *R, int nd) { return R->G.out_idx[nd][0]; }

/* 1 if ReduceMean node rm on value x (keepdims, the trailing g elements) starts PyTorch's
 * LayerNorm decomposition; fills the nodes it reads (skip[0..*ns)), ε, γ, β and the last value. */
static int lg_tn_ln_pattern(const lg_ox_run *R, int rm, int x, int *skip, int *ns, double *eps,
                            const lg_ox_const **gm, const lg_ox_const **bt, int *last)
{
    const Onnx__GraphProto *g = R->G.g;
    int m = lg_tn_out(R, rm), sub = -1, n = 0;
    /* Sub(x, m) is the mean's only reader */
    if ((sub = lg_tn_sole_reader(R, m, "Sub")) < 0 || g->node[sub]->n_input != 2 || R->G.in_idx[sub][0] != x ||
        R->G.in_idx[sub][1] != m)
        return 0;
    int d = lg_tn_out(R, sub), pw = -1, dv = -1;
    if (R->G.vals[d].uses != 2) return 0;
    for (size_t i = 0; i < g->n_node; i++)
        for (size_t j = 0; j < g->node[i]->n_input; j++)
            if (R->G.in_idx[i][j] == d && g->node[i]->op_type) {
                if (strcmp(g->node[i]->op_type, "Pow") == 0 && j == 0) pw = (int)i;
                else if (strcmp(g->node[i]->op_type, "Div") == 0 && j == 0) dv = (int)i;
                else if (strcmp(g->node[i]->op_type, "Mul") == 0 && R->G.in_idx[i][1 - j] == d) pw = (int)i;
            }
    if (pw < 0 || dv < 0) return 0;
    if (strcmp(g->node[pw]->op_type, "Pow") == 0) {
        const lg_ox_const *e = lg_tn_other(R, pw, d);
        if (!e || e->n != 1 || e->v[0] != 2.0) return 0;
    }
    int rm2 = lg_tn_sole_reader(R, lg_tn_out(R, pw), "ReduceMean");
    if (rm2 < 0) return 0;
    /* the same axes and keepdims as the first mean */
    int r1[LG_OX_MAX_RANK], r2[LG_OX_MAX_RANK];
    int rank = R->B.shape.rank;
    if (lg_tn_axes(R, rm, rank, r1) != LG_OK || lg_tn_axes(R, rm2, rank, r2) != LG_OK) return 0;
    if (memcmp(r1, r2, (size_t)rank * sizeof *r1) != 0) return 0;
    int64_t kd = 1;
    if (lg_ox_attr_int(&R->G, rm2, "keepdims", &kd) < 0 || kd != 1) return 0;
    int ad = lg_tn_sole_reader(R, lg_tn_out(R, rm2), "Add");
    const lg_ox_const *ec = ad >= 0 ? lg_tn_other(R, ad, lg_tn_out(R, rm2)) : NULL;
    if (!ec || ec->n != 1 || !(ec->v[0] > 0) || !isfinite(ec->v[0])) return 0;
    int sq = lg_tn_sole_reader(R, lg_tn_out(R, ad), "Sqrt");
    if (sq < 0 || lg_tn_sole_reader(R, lg_tn_out(R, sq), "Div") != dv || R->G.in_idx[dv][1] != lg_tn_out(R, sq))
        return 0;
    *eps = ec->v[0];
    skip[n++] = sub, skip[n++] = pw, skip[n++] = rm2, skip[n++] = ad, skip[n++] = sq, skip[n++] = dv;
    *last = lg_tn_out(R, dv);
    *gm = *bt = NULL;
    int mu = lg_tn_sole_reader(R, *last, "Mul");
    if (mu >= 0 && (*gm = lg_tn_other(R, mu, *last)) != NULL) {
        skip[n++] = mu;
        *last = lg_tn_out(R, mu);
        int ab = lg_tn_sole_reader(R, *last, "Add");
        if (ab >= 0 && (*bt = lg_tn_other(R, ab, *last)) != NULL) {
            skip[n++] = ab;
            *last = lg_tn_out(R, ab);
        }
    }
    *ns = n;
    return 1;
}

lg_status lg_ox_reduce(lg_ox_run *R, int node, lg_ox_val *x, int mean)
{
    lg_ox_b *B = &R->B;
    const lg_ox_shape s = B->shape;
    int red[LG_OX_MAX_RANK];
    int64_t keep = 1;
    lg_status st;
    if (lg_ox_attr_int(&R->G, node, "keepdims", &keep) < 0) return LG_ERR_FORMAT;
    if ((st = lg_tn_axes(R, node, s.rank, red)) != LG_OK) return st;
    /* the reduced axes trailing: a group of the last ones */
    int first = s.rank, trailing = 1;
    for (int a = 0; a < s.rank; a++)
        if (red[a] && first == s.rank) first = a;
    for (int a = first; a < s.rank; a++) trailing &= red[a];
    int xv = R->G.in_idx[node][0];
    if (mean && keep && trailing && first < s.rank) {
        int skip[8], ns = 0, last = -1;
        double eps = 0;
        const lg_ox_const *gm = NULL, *bt = NULL;
        if (lg_tn_ln_pattern(R, node, xv, skip, &ns, &eps, &gm, &bt, &last)) {
            int64_t g = lg_tn_trailing(R, node, first);
            if (!g) return LG_ERR_FORMAT;
            double *W = lg_tn_gamma_beta(R, ns > 6 ? skip[6] : node, gm, bt, (size_t)g);
            if (!W) return LG_ERR_UNSUPPORTED;
            if ((st = lg_tn_grouped(R, LG_LAYER_LAYERNORM, -1, (int)g, eps, W)) != LG_OK) return st;
            /* the nodes of the pattern are read: x once more (the Sub), the mean by nobody */
            for (int i = 0; i < ns; i++) R->skip[skip[i]] = 1;
            R->G.vals[xv].uses--;
            R->G.vals[lg_tn_out(R, node)].uses = 0;
            lg_ox_val *y = &R->G.vals[last];
            y->kind = LG_OX_DYN;
            y->form = LG_OX_LIN;
            y->kmul = y->kdiv = 1.0;
            y->has_mul = 0;
            y->gen = R->gen;
            y->pm = NULL;
            y->shape = B->shape;
            R->cur[R->n_cur++] = last;
            return LG_OK;
        }
    }
    (void)x;
    /* a linear map: each output sums its group (then divides by the count) */
    lg_ox_shape os = {0, {0}};
    size_t n = (size_t)B->n, cnt = 1;
    for (int a = 0; a < s.rank; a++) {
        if (!red[a]) os.d[os.rank++] = s.d[a];
        else if (keep) os.d[os.rank++] = 1;
        if (red[a]) cnt *= (size_t)s.d[a];
    }
    size_t n2 = lg_ox_shape_count(&os);
    if (os.rank == 0) n2 = 1;
    if (n2 == 0 || n2 * n > LG_OX_DENSE_MAX_BYTES / sizeof(double))
        return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: the reduction would be a dense %zu x %zu matrix (too large)",
                       R->G.file, lg_ox_name(R, node), n2, n);
    double *M = calloc(n2 * n, sizeof *M);
    if (!M) return lg_fail(LG_ERR_NOMEM, "%s: out of memory", R->G.file);
    int64_t mi[LG_OX_MAX_RANK] = {0};
    size_t f = 0;
    do {
        size_t o = 0;
        for (int a = 0; a < s.rank; a++)
            if (!red[a]) o = o * (size_t)s.d[a] + (size_t)mi[a];
        M[o * n + f] = 1.0;
        f++;
    } while (lg_tn_next(&s, mi));
    if ((st = lg_ox_b_linear(B, M, (int)n2, NULL)) != LG_OK) return st;
    if (mean && cnt > 1) {
        double *c = malloc(n2 * sizeof *c);
        if (!c) return lg_fail(LG_ERR_NOMEM, "%s: out of memory", R->G.file);
        for (size_t i = 0; i < n2; i++) c[i] = (double)cnt;
        st = lg_ox_b_scale(B, c, 1);
        free(c);
        if (st == LG_ERR_UNSUPPORTED)
            return lg_fail(st, "%s: %s: the mean of %zu values: 1/%zu is not a double, so the map would not be the "
                           "file's exact function (a power of two is; nearest supported: ReduceSum; --round-weights rounds 1/%zu "
                           "to the nearest double and says so)", R->G.file,
                           lg_ox_name(R, node), cnt, cnt, cnt);
        if (st != LG_OK) return st;
    }
    if (os.rank == 0) os.rank = 1, os.d[0] = 1;
    B->shape = os;
    return LG_OK;
}
