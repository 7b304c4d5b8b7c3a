/* onnx_write.c — lg_net → ONNX model (see onnx.h for the graph layout).
 *
 * Every protobuf-c object is allocated from a small arena (lg_ow) freed in
 * one go after packing, so error paths have one cleanup.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx/act_onnx.h"
#include "onnx/onnx.h"
#include "core/op.h"
#include "onnx.pb-c.h"

typedef struct lg_ow {
    void **ptrs;
    size_t n, cap;
    int oom;
    int dtype;  /* ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT or __DOUBLE */
    int opset;  /* 13, or 17 when a LayerNormalization node is written */
    Onnx__NodeProto **nodes;
    size_t n_nodes;
    Onnx__TensorProto **inits;
    size_t n_inits;
} lg_ow;

static void *lg_ow_alloc(lg_ow *w, size_t size)
{
    if (w->oom) return NULL;
    if (w->n == w->cap) {
        size_t cap = w->cap ? 2 * w->cap : 256;
        void **np = realloc(w->ptrs, cap * sizeof *np);
        if (!np) {
            w->oom = 1;
            return NULL;
        }
        w->ptrs = np;
        w->cap = cap;
    }
    void *p = calloc(1, size ? size : 1);
    if (!p) {
        w->oom = 1;
        return NULL;
    }
    w->ptrs[w->n++] = p;
    return p;
}

char *lg_ow_str(lg_ow *w, const char *fmt, int k)
{
    char tmp[64];
    snprintf(tmp, sizeof tmp, fmt, k);
    char *s = lg_ow_alloc(w, strlen(tmp) + 1);
    if (s) memcpy(s, tmp, strlen(tmp) + 1);
    return s;
}

static void lg_ow_free(lg_ow *w)
{
    for (size_t i = 0; i < w->n; i++) free(w->ptrs[i]);
    free(w->ptrs);
}

/* Initializer `name` with values v[n] and shape dims[rank] in w->dtype. */
static const char *lg_ow_tensor(lg_ow *w, const char *name, const double *v, size_t n, const int64_t *dims, int rank)
{
    Onnx__TensorProto *t = lg_ow_alloc(w, sizeof *t);
    int64_t *d = lg_ow_alloc(w, (size_t)rank * sizeof *d);
    size_t es = w->dtype == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT ? 4 : 8;
    uint8_t *raw = lg_ow_alloc(w, n * es);
    if (!t || !d || !raw || !name) return NULL;
    onnx__tensor_proto__init(t);
    t->name = (char *)name;
    t->n_dims = (size_t)rank;
    if (rank) memcpy(d, dims, (size_t)rank * sizeof *d);
    t->dims = d;
    t->has_data_type = 1;
    t->data_type = w->dtype;
    for (size_t i = 0; i < n; i++) {
        uint64_t u;
        if (es == 4) {
            float f = (float)v[i];
            uint32_t u32;
            memcpy(&u32, &f, 4);
            u = u32;
        } else {
            memcpy(&u, &v[i], 8);
        }
        for (size_t b = 0; b < es; b++) raw[i * es + b] = (uint8_t)(u >> (8 * b));
    }
    t->has_raw_data = 1;
    t->raw_data.len = n * es;
    t->raw_data.data = raw;
    w->inits[w->n_inits++] = t;
    return name;
}

/* Int64 initializer `name` with values v[n] (1-D). */
static const char *lg_ow_tensor_i64(lg_ow *w, const char *name, const int64_t *v, size_t n)
{
    Onnx__TensorProto *t = lg_ow_alloc(w, sizeof *t);
    int64_t *d = lg_ow_alloc(w, sizeof *d);
    uint8_t *raw = lg_ow_alloc(w, n * 8);
    if (!t || !d || !raw || !name) return NULL;
    onnx__tensor_proto__init(t);
    t->name = (char *)name;
    t->n_dims = 1;
    d[0] = (int64_t)n;
    t->dims = d;
    t->has_data_type = 1;
    t->data_type = ONNX__TENSOR_PROTO__DATA_TYPE__INT64;
    for (size_t i = 0; i < n; i++)
        for (size_t b = 0; b < 8; b++) raw[i * 8 + b] = (uint8_t)((uint64_t)v[i] >> (8 * b));
    t->has_raw_data = 1;
    t->raw_data.len = n * 8;
    t->raw_data.data = raw;
    w->inits[w->n_inits++] = t;
    return name;
}

/* Append an attribute to node nd: ints v[n] (n > 0) or one int (n = 0). */
static int lg_ow_attr_ints(lg_ow *w, Onnx__NodeProto *nd, const char *name, const int64_t *v, size_t n)
{
    Onnx__AttributeProto *a = lg_ow_alloc(w, sizeof *a);
    Onnx__AttributeProto **ap = lg_ow_alloc(w, (nd->n_attribute + 1) * sizeof *ap);
    int64_t *vv = lg_ow_alloc(w, (n ? n : 1) * sizeof *vv);
    if (!a || !ap || !vv) return 0;
    onnx__attribute_proto__init(a);
    a->name = (char *)name;
    a->has_type = 1;
    if (n) {
        a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
        memcpy(vv, v, n * sizeof *vv);
        a->n_ints = n;
        a->ints = vv;
    } else {
        a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
        a->has_i = 1;
        a->i = v[0];
    }
    if (nd->n_attribute) memcpy(ap, nd->attribute, nd->n_attribute * sizeof *ap);
    ap[nd->n_attribute++] = a;
    nd->attribute = ap;
    return 1;
}

static const char *lg_ow_scalar(lg_ow *w, const char *name, double v) { return lg_ow_tensor(w, name, &v, 1, NULL, 0); }

/* Node op(in0, in1[, in2]) → out. */
static Onnx__NodeProto *lg_ow_node(lg_ow *w, const char *op, const char *out, const char *in0, const char *in1,
                                   const char *in2)
{
    Onnx__NodeProto *nd = lg_ow_alloc(w, sizeof *nd);
    char **ins = lg_ow_alloc(w, 3 * sizeof *ins), **outs = lg_ow_alloc(w, sizeof *outs);
    char *name = lg_ow_str(w, "n%d", (int)w->n_nodes);
    if (!nd || !ins || !outs || !out || !in0) {
        w->oom = 1;
        return NULL;
    }
    onnx__node_proto__init(nd);
    ins[0] = (char *)in0;
    ins[1] = (char *)in1;
    ins[2] = (char *)in2;
    nd->n_input = in2 ? 3 : in1 ? 2 : 1;
    nd->input = ins;
    outs[0] = (char *)out;
    nd->n_output = 1;
    nd->output = outs;
    nd->op_type = (char *)op;
    nd->name = name;
    w->nodes[w->n_nodes++] = nd;
    return nd;
}

int lg_ow_op(lg_ow *w, const char *op, const char *out, const char *in0, const char *in1)
{
    return lg_ow_node(w, op, out, in0, in1, NULL) != NULL && !w->oom;
}

const char *lg_ow_value(lg_ow *w, const char *name, double v, int vec1)
{
    int64_t one_dim = 1;
    return lg_ow_tensor(w, name, &v, 1, vec1 ? &one_dim : NULL, vec1);
}

const char *lg_ow_shared(lg_ow *w, const char *name, double v)
{
    for (size_t i = 0; i < w->n_inits; i++)
        if (strcmp(w->inits[i]->name, name) == 0) return w->inits[i]->name;
    return lg_ow_scalar(w, name, v);
}

/* Conv term A of layer k (tag "L%d" or "L%d_t%d" names its tensors) on the
 * flat value x: Reshape to [1, c_in, h_in, w_in], Conv (per-channel bias
 * when b is constant per channel), Flatten, and an Add of b otherwise; b
 * may be NULL (a further term). Returns the flat value z. */
static const char *lg_ow_conv_term(lg_ow *w, const lg_linear *A, const double *b, const char *tag, int k, const char *x,
                                   const char *z)
{
    const lg_conv *c = &A->conv;
    char nm[64];
    size_t hw = (size_t)c->h_out * (size_t)c->w_out;
    int tied = 1;
    for (int co = 0; b && co < c->c_out && tied; co++)
        for (size_t f = 1; f < hw && tied; f++) tied = b[(size_t)co * hw + f] == b[(size_t)co * hw];
    double *cb = lg_ow_alloc(w, (size_t)c->c_out * sizeof *cb);
    if (!cb) return NULL;
    for (int co = 0; b && co < c->c_out; co++) cb[co] = b[(size_t)co * hw];
    int64_t shape[4] = {1, c->c_in, c->h_in, c->w_in}, kd[4] = {c->c_out, c->c_in, c->kh, c->kw}, cd = c->c_out;
    int64_t strides[2] = {c->sh, c->sw}, pads[4] = {c->ph, c->pw, c->ph, c->pw}, one = 1;
    int64_t bd = A->n_out;
#define LG_OW_NAME(suffix) (snprintf(nm, sizeof nm, "%s" suffix, tag), lg_ow_str(w, nm, k))
    const char *sn = lg_ow_tensor_i64(w, LG_OW_NAME("_shape"), shape, 4);
    const char *img = LG_OW_NAME("_image"), *cv = LG_OW_NAME("_conv");
    const char *Wn = lg_ow_tensor(w, LG_OW_NAME("_W"), A->W, lg_linear_n_weights(A), kd, 4);
    const char *bn = b && tied ? lg_ow_tensor(w, LG_OW_NAME("_b"), cb, (size_t)c->c_out, &cd, 1) : NULL;
    const char *flat = !b || tied ? z : LG_OW_NAME("_flat");
    lg_ow_node(w, "Reshape", img, x, sn, NULL);
    Onnx__NodeProto *nd = lg_ow_node(w, "Conv", cv, img, Wn, bn);
    if (!nd || !lg_ow_attr_ints(w, nd, "strides", strides, 2) || !lg_ow_attr_ints(w, nd, "pads", pads, 4)) return NULL;
    Onnx__NodeProto *fl = lg_ow_node(w, "Flatten", flat, cv, NULL, NULL);
    if (!fl || !lg_ow_attr_ints(w, fl, "axis", &one, 0)) return NULL;
    if (b && !tied) {
        const char *ba = lg_ow_tensor(w, LG_OW_NAME("_b"), b, (size_t)A->n_out, &bd, 1);
        lg_ow_node(w, "Add", z, flat, ba, NULL);
    }
#undef LG_OW_NAME
    return w->oom ? NULL : z;
}

/* A per-token map (core/net.h LG_LAYER_TOKMAP) on the flat x → z: Reshape to [T, i],
 * MatMul by the block's transpose [i, o] (the same matrix on every token), Reshape to
 * [1, T·o], and an Add of b (may be NULL: a further term). The reader takes it back as
 * kron(I_T, A) and compacts it to the same map (core/op.h lg_net_compact_tokmap). */
static const char *lg_ow_tokmap_term(lg_ow *w, const lg_linear *A, const double *b, const char *tag, int k,
                                     const char *x, const char *z)
{
    int T = A->conv.h_in, bi = A->conv.c_in, bo = A->conv.c_out;
    char nm[64];
    double *Wt = lg_ow_alloc(w, (size_t)bi * (size_t)bo * sizeof *Wt);
    if (!Wt) return NULL;
    for (int r = 0; r < bo; r++)
        for (int c = 0; c < bi; c++) Wt[(size_t)c * (size_t)bo + (size_t)r] = A->W[(size_t)r * (size_t)bi + (size_t)c];
    int64_t tin[2] = {T, bi}, flat[2] = {1, A->n_out}, wd[2] = {bi, bo}, bd = A->n_out;
#define LG_OW_NAME(suffix) (snprintf(nm, sizeof nm, "%s" suffix, tag), lg_ow_str(w, nm, k))
    const char *sin = lg_ow_tensor_i64(w, LG_OW_NAME("_tokens"), tin, 2);
    const char *sout = lg_ow_tensor_i64(w, LG_OW_NAME("_flatshape"), flat, 2);
    const char *Wn = lg_ow_tensor(w, LG_OW_NAME("_W"), Wt, (size_t)bi * (size_t)bo, wd, 2);
    const char *xt = LG_OW_NAME("_x_tokens"), *mm = LG_OW_NAME("_matmul");
    const char *fl = b ? LG_OW_NAME("_flat") : z;
    lg_ow_node(w, "Reshape", xt, x, sin, NULL);
    lg_ow_node(w, "MatMul", mm, xt, Wn, NULL);
    lg_ow_node(w, "Reshape", fl, mm, sout, NULL);
    if (b) {
        const char *bn = lg_ow_tensor(w, LG_OW_NAME("_b"), b, (size_t)A->n_out, &bd, 1);
        lg_ow_node(w, "Add", z, fl, bn, NULL);
    }
#undef LG_OW_NAME
    return w->oom ? NULL : z;
}

/* Gemm(x, W, b) with transB = 1 → z (b may be NULL). */
static int lg_ow_gemm(lg_ow *w, const char *z, const char *x, const char *Wn, const char *bn)
{
    Onnx__NodeProto *g = lg_ow_node(w, "Gemm", z, x, Wn, bn);
    int64_t one = 1;
    return g && lg_ow_attr_ints(w, g, "transB", &one, 0);
}

/* A dense term on the flat [1, n_in] value x → z: Gemm(x, W, b) with transB = 1 (b may be NULL). */
static const char *lg_ow_dense_term(lg_ow *w, const lg_linear *A, const double *b, const char *tag, int k,
                                    const char *x, const char *z)
{
    char nm[64];
#define LG_OW_NAME(suffix) (snprintf(nm, sizeof nm, "%s" suffix, tag), lg_ow_str(w, nm, k))
    int64_t wd[2] = {A->n_out, A->n_in}, bd = A->n_out;
    const char *Wn = lg_ow_tensor(w, LG_OW_NAME("_W"), A->W, (size_t)A->n_out * (size_t)A->n_in, wd, 2);
    const char *bn = b ? lg_ow_tensor(w, LG_OW_NAME("_b"), b, (size_t)A->n_out, &bd, 1) : NULL;
#undef LG_OW_NAME
    return lg_ow_gemm(w, z, x, Wn, bn) && !w->oom ? z : NULL;
}

/* An index map on the flat [1, n_in] value x → z: Gather over axis 1 (a zero entry reads one
 * zero padded on by Pad), and an Add of b (may be NULL: a further term). */
static const char *lg_ow_index_term(lg_ow *w, const lg_linear *A, const double *b, const char *tag, int k,
                                    const char *x, const char *z)
{
    char nm[64];
#define LG_OW_NAME(suffix) (snprintf(nm, sizeof nm, "%s" suffix, tag), lg_ow_str(w, nm, k))
    int64_t bd = A->n_out;
    int zeros = 0;
    int64_t *idx = lg_ow_alloc(w, (size_t)A->n_out * sizeof *idx);
    if (!idx) return NULL;
    for (int o = 0; o < A->n_out; o++) {
        zeros |= A->map[o] < 0;
        idx[o] = A->map[o] < 0 ? A->n_in : A->map[o];
    }
    const char *src = x;
    if (zeros) {
        int64_t pads[4] = {0, 0, 0, 1};
        const char *pn = lg_ow_tensor_i64(w, LG_OW_NAME("_pads"), pads, 4);
        src = LG_OW_NAME("_padded");
        lg_ow_node(w, "Pad", src, x, pn, NULL);
    }
    const char *in = lg_ow_tensor_i64(w, LG_OW_NAME("_index"), idx, (size_t)A->n_out);
    const char *g = b ? LG_OW_NAME("_gather") : z;
    Onnx__NodeProto *nd = lg_ow_node(w, "Gather", g, src, in, NULL);
    int64_t one = 1;
    if (!nd || !lg_ow_attr_ints(w, nd, "axis", &one, 0)) return NULL;
    if (b) {
        const char *bn = lg_ow_tensor(w, LG_OW_NAME("_b"), b, (size_t)A->n_out, &bd, 1);
        lg_ow_node(w, "Add", z, g, bn, NULL);
    }
#undef LG_OW_NAME
    return w->oom ? NULL : z;
}

/* Node op(in0) → out with an int attribute name = v (NULL: none); NULL on failure. */
static Onnx__NodeProto *lg_ow_node_i(lg_ow *w, const char *op, const char *out, const char *in0, const char *in1,
                                     const char *name, int64_t v)
{
    Onnx__NodeProto *nd = lg_ow_node(w, op, out, in0, in1, NULL);
    if (!nd || (name && !lg_ow_attr_ints(w, nd, name, &v, 0))) return NULL;
    return nd;
}

/* The nodes (core/net.h) of layer k reading the flat values x (term 0's source) and xb (a
 * product's second source, else NULL) → z, in forms the reader takes back as the same node. */

/* Shape [1, n] of layer k's flat output (the nodes' last Reshape). */
static const char *lg_ow_flat_shape(lg_ow *w, int k, int64_t n)
{
    int64_t flat[2] = {1, n};
    return lg_ow_tensor_i64(w, lg_ow_str(w, "L%d_flat_shape", k), flat, 2);
}

/* x Reshaped to [1, n/g, g] (g = op.group), or NULL. */
static const char *lg_ow_groups(lg_ow *w, const lg_linear *A, int k, const char *x)
{
    int64_t n = A->n_out, g = A->op.group, grp[3] = {1, n / g, g};
    const char *gs = lg_ow_tensor_i64(w, lg_ow_str(w, "L%d_group_shape", k), grp, 3), *xg = lg_ow_str(w, "L%d_groups", k);
    return lg_ow_node_i(w, "Reshape", xg, x, gs, NULL, 0) ? xg : NULL;
}

/* y Reshaped to the flat shape fl → z, or NULL. */
static const char *lg_ow_flatten_to(lg_ow *w, const char *y, const char *fl, const char *z)
{
    if (!lg_ow_node_i(w, "Reshape", z, y, fl, NULL, 0)) return NULL;
    return w->oom ? NULL : z;
}

/* product: Gather(x, ia) and Gather(xb, ib) along axis 1, Reshape to [n, 1, K] and [n, K, 1],
 * MatMul (batched over the n outputs), Reshape to [1, n]. */
static const char *lg_ow_product(lg_ow *w, const lg_layer *Ly, int k, const char *x, const char *xb, const char *z)
{
    const lg_linear *A = &Ly->lin;
    int64_t n = A->n_out, one = 1;
#define LG_OW_T(suffix) lg_ow_str(w, "L%d" suffix, k)
    const char *fl = lg_ow_flat_shape(w, k, n);
    size_t nk = (size_t)n * (size_t)A->op.K;
    int64_t *ia = lg_ow_alloc(w, nk * sizeof *ia), *ib = lg_ow_alloc(w, nk * sizeof *ib);
    if (!ia || !ib) return NULL;
    for (size_t i = 0; i < nk; i++) ia[i] = A->map[i], ib[i] = A->map[nk + i];
    int64_t sa[3] = {n, 1, A->op.K}, sb[3] = {n, A->op.K, 1};
    const char *ga = LG_OW_T("_pa"), *gb = LG_OW_T("_pb"), *ra = LG_OW_T("_pa3"), *rb = LG_OW_T("_pb3");
    const char *mm = LG_OW_T("_prod");
    if (!lg_ow_node_i(w, "Gather", ga, x, lg_ow_tensor_i64(w, LG_OW_T("_ia"), ia, nk), "axis", one) ||
        !lg_ow_node_i(w, "Gather", gb, xb, lg_ow_tensor_i64(w, LG_OW_T("_ib"), ib, nk), "axis", one) ||
        !lg_ow_node_i(w, "Reshape", ra, ga, lg_ow_tensor_i64(w, LG_OW_T("_sa"), sa, 3), NULL, 0) ||
        !lg_ow_node_i(w, "Reshape", rb, gb, lg_ow_tensor_i64(w, LG_OW_T("_sb"), sb, 3), NULL, 0) ||
        !lg_ow_node_i(w, "MatMul", mm, ra, rb, NULL, 0))
        return NULL;
#undef LG_OW_T
    return lg_ow_flatten_to(w, mm, fl, z);
}

/* softmax: Reshape to [1, n/g, g], Softmax (axis −1), Reshape to [1, n]. */
static const char *lg_ow_softmax(lg_ow *w, const lg_layer *Ly, int k, const char *x, const char *xb, const char *z)
{
    (void)xb;
    int64_t m1 = -1;
    const char *fl = lg_ow_flat_shape(w, k, Ly->lin.n_out), *xg = lg_ow_groups(w, &Ly->lin, k, x);
    const char *yg = lg_ow_str(w, "L%d_node", k);
    if (!xg || !lg_ow_node_i(w, "Softmax", yg, xg, NULL, "axis", m1)) return NULL;
    return lg_ow_flatten_to(w, yg, fl, z);
}

/* layernorm: Reshape to [1, n/g, g], LayerNormalization (axis −1, γ, β; opset 17) when ε is
 * a float, else PyTorch's decomposition with ε a tensor (ReduceMean, Sub, Pow 2, ReduceMean,
 * Add ε, Sqrt, Div, Mul γ, Add β), Reshape to [1, n]. */
static const char *lg_ow_layernorm(lg_ow *w, const lg_layer *Ly, int k, const char *x, const char *xb, const char *z)
{
    (void)xb;
    const lg_linear *A = &Ly->lin;
    int64_t g = A->op.group, m1 = -1;
#define LG_OW_T(suffix) lg_ow_str(w, "L%d" suffix, k)
    const char *fl = lg_ow_flat_shape(w, k, A->n_out), *xg = lg_ow_groups(w, A, k, x);
    const char *yg = LG_OW_T("_node");
    if (!xg) return NULL;
    const char *gm = lg_ow_tensor(w, LG_OW_T("_gamma"), A->W, (size_t)g, &g, 1);
    const char *bt = lg_ow_tensor(w, LG_OW_T("_beta"), A->W + g, (size_t)g, &g, 1);
    if ((double)(float)A->op.eps == A->op.eps) {
        Onnx__NodeProto *nd = lg_ow_node(w, "LayerNormalization", yg, xg, gm, bt);
        Onnx__AttributeProto *a = lg_ow_alloc(w, sizeof *a), **ap = lg_ow_alloc(w, 2 * sizeof *ap);
        if (!nd || !a || !ap || !lg_ow_attr_ints(w, nd, "axis", &m1, 0)) return NULL;
        onnx__attribute_proto__init(a);
        a->name = "epsilon";
        a->has_type = 1;
        a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT;
        a->has_f = 1;
        a->f = (float)A->op.eps;
        memcpy(ap, nd->attribute, nd->n_attribute * sizeof *ap);
        ap[nd->n_attribute++] = a;
        nd->attribute = ap;
        w->opset = 17;
    } else {
        const char *mu = LG_OW_T("_mean"), *c = LG_OW_T("_centred"), *c2 = LG_OW_T("_sq"), *v = LG_OW_T("_var");
        const char *ve = LG_OW_T("_var_eps"), *sd = LG_OW_T("_std"), *nn = LG_OW_T("_normed");
        const char *sc = LG_OW_T("_scaled");
        const char *two = lg_ow_scalar(w, LG_OW_T("_two"), 2.0), *eps = lg_ow_scalar(w, LG_OW_T("_eps"), A->op.eps);
        Onnx__NodeProto *r1 = lg_ow_node(w, "ReduceMean", mu, xg, NULL, NULL);
        Onnx__NodeProto *r2 = r1 && lg_ow_attr_ints(w, r1, "axes", &m1, 1) ? lg_ow_node(w, "Sub", c, xg, mu, NULL)
                                                                            : NULL;
        r2 = r2 && lg_ow_node(w, "Pow", c2, c, two, NULL) ? lg_ow_node(w, "ReduceMean", v, c2, NULL, NULL) : NULL;
        if (!r2 || !lg_ow_attr_ints(w, r2, "axes", &m1, 1) || !lg_ow_op(w, "Add", ve, v, eps) ||
            !lg_ow_op(w, "Sqrt", sd, ve, NULL) || !lg_ow_op(w, "Div", nn, c, sd) || !lg_ow_op(w, "Mul", sc, nn, gm) ||
            !lg_ow_op(w, "Add", yg, sc, bt))
            return NULL;
    }
#undef LG_OW_T
    return lg_ow_flatten_to(w, yg, fl, z);
}

/* max-pool: Reshape to [1, c, h, w], MaxPool (kernel, strides, pads), Flatten (axis 1). */
static const char *lg_ow_maxpool(lg_ow *w, const lg_layer *Ly, int k, const char *x, const char *xb, const char *z)
{
    (void)xb;
    const lg_conv *c = &Ly->lin.conv;
    int64_t shape[4] = {1, c->c_in, c->h_in, c->w_in}, ks[2] = {c->kh, c->kw}, sd[2] = {c->sh, c->sw};
    int64_t pads[4] = {c->ph, c->pw, c->ph, c->pw}, one = 1;
    const char *sn = lg_ow_tensor_i64(w, lg_ow_str(w, "L%d_shape", k), shape, 4);
    const char *img = lg_ow_str(w, "L%d_image", k), *mp = lg_ow_str(w, "L%d_pool", k);
    lg_ow_node(w, "Reshape", img, x, sn, NULL);
    Onnx__NodeProto *nd = lg_ow_node(w, "MaxPool", mp, img, NULL, NULL);
    if (!nd || !lg_ow_attr_ints(w, nd, "kernel_shape", ks, 2) || !lg_ow_attr_ints(w, nd, "strides", sd, 2) ||
        !lg_ow_attr_ints(w, nd, "pads", pads, 4))
        return NULL;
    Onnx__NodeProto *fl = lg_ow_node(w, "Flatten", z, mp, NULL, NULL);
    if (!fl || !lg_ow_attr_ints(w, fl, "axis", &one, 0)) return NULL;
    return z;
}

static int lg_ow_float_ok(double v) { return (double)(float)v == v; }

/* Values of a layernorm node outside the params (ε) that float does not hold exactly. */
static int lg_ow_layernorm_rounded(const lg_linear *A) { return !lg_ow_float_ok(A->op.eps); }

/* The export of a kind of term (core/net.h lg_layer_kind): one entry per kind, indexed by it;
 * the writer dispatches through it and compares no kinds. */
typedef struct lg_ow_kind {
    /* A linear term (any term of a layer) on the flat value x → z, b: term 0's bias, or NULL
     * for a further term; tag: "L%d…" (with k) naming its tensors. NULL for a node. */
    const char *(*term)(lg_ow *w, const lg_linear *A, const double *b, const char *tag, int k, const char *x,
                        const char *z);
    /* A node (its layer's only term) reading x (and xb, a second source) → z. NULL for a term. */
    const char *(*node)(lg_ow *w, const lg_layer *Ly, int k, const char *x, const char *xb, const char *z);
    /* The tag of term 0 when it is its layer's only term, and when further terms follow. */
    const char *tag0_alone, *tag0_sum;
    /* Values of the kind outside the params (written as attributes or scalars) that float does
     * not hold exactly, or NULL: none. */
    int (*n_rounded)(const lg_linear *A);
    /* 1: a layer of this kind alone writes lgelu.s even when its λ is rounded to float. */
    int s_always_alone;
} lg_ow_kind;

static const lg_ow_kind lg_ow_kinds[LG_LAYER_KIND_COUNT] = {
    [LG_LAYER_DENSE] = {.term = lg_ow_dense_term, .tag0_alone = "L%d", .tag0_sum = "L%d_t0"},
    [LG_LAYER_CONV2D] = {.term = lg_ow_conv_term, .tag0_alone = "L%d", .tag0_sum = "L%d", .s_always_alone = 1},
    [LG_LAYER_INDEX] = {.term = lg_ow_index_term, .tag0_alone = "L%d_t0", .tag0_sum = "L%d_t0"},
    [LG_LAYER_MAX] = {.node = lg_ow_maxpool},
    [LG_LAYER_BILINEAR] = {.node = lg_ow_product},
    [LG_LAYER_SOFTMAX] = {.node = lg_ow_softmax},
    [LG_LAYER_LAYERNORM] = {.node = lg_ow_layernorm, .n_rounded = lg_ow_layernorm_rounded},
    [LG_LAYER_TOKMAP] = {.term = lg_ow_tokmap_term, .tag0_alone = "L%d_t0", .tag0_sum = "L%d_t0"},
};

static const lg_ow_kind *lg_ow_kind_of(const lg_linear *A) { return &lg_ow_kinds[A->kind]; }

/* Values of term A outside the params that float does not hold exactly (its entry's n_rounded). */
static int lg_ow_term_rounded(const lg_linear *A)
{
    const lg_ow_kind *e = lg_ow_kind_of(A);
    return e->n_rounded ? e->n_rounded(A) : 0;
}

int lg_onnx_write_form(lg_layer_kind k)
{
    if ((unsigned)k >= LG_LAYER_KIND_COUNT) return 0;
    return lg_ow_kinds[k].term ? 1 : lg_ow_kinds[k].node ? 2 : 0;
}

/* Term t ≥ 1 of layer k (no bias) on the flat value x → z through its kind's entry. */
static const char *lg_ow_term(lg_ow *w, const lg_linear *A, int k, int t, const char *x, const char *z)
{
    char tag[32];
    snprintf(tag, sizeof tag, "L%%d_t%d", t);
    return lg_ow_kind_of(A)->term(w, A, NULL, tag, k, x, z);
}

static Onnx__ValueInfoProto *lg_ow_value_info(lg_ow *w, const char *name, int n)
{
    Onnx__ValueInfoProto *vi = lg_ow_alloc(w, sizeof *vi);
    Onnx__TypeProto *tp = lg_ow_alloc(w, sizeof *tp);
    Onnx__TypeProto__Tensor *tt = lg_ow_alloc(w, sizeof *tt);
    Onnx__TensorShapeProto *sh = lg_ow_alloc(w, sizeof *sh);
    Onnx__TensorShapeProto__Dimension **dp = lg_ow_alloc(w, 2 * sizeof *dp);
    Onnx__TensorShapeProto__Dimension *d = lg_ow_alloc(w, 2 * sizeof *d);
    if (!vi || !tp || !tt || !sh || !dp || !d) return NULL;
    onnx__value_info_proto__init(vi);
    onnx__type_proto__init(tp);
    onnx__type_proto__tensor__init(tt);
    onnx__tensor_shape_proto__init(sh);
    for (int i = 0; i < 2; i++) {
        onnx__tensor_shape_proto__dimension__init(&d[i]);
        d[i].value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
        d[i].dim_value = i == 0 ? 1 : n;
        dp[i] = &d[i];
    }
    sh->n_dim = 2;
    sh->dim = dp;
    tt->has_elem_type = 1;
    tt->elem_type = w->dtype;
    tt->shape = sh;
    tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    tp->tensor_type = tt;
    vi->name = (char *)name;
    vi->type = tp;
    return vi;
}

/* 1 if every value of net is exactly representable as float. */
static int lg_ow_all_float(const lg_net *net)
{
    for (size_t i = 0; i < net->n_params; i++)
        if (!lg_ow_float_ok(net->params[i])) return 0;
    for (int i = 0; i < net->n_in; i++)
        if ((net->in_sub && !lg_ow_float_ok(net->in_sub[i])) || (net->in_div && !lg_ow_float_ok(net->in_div[i])))
            return 0;
    for (int k = 0; k < net->n_layers; k++)
        if ((lg_act_has_param(net->layers[k].act) && !lg_ow_float_ok(net->layers[k].lambda)) ||
            lg_ow_term_rounded(&net->layers[k].lin))
            return 0;
    return 1;
}

/* Key/value metadata entry. */
static Onnx__StringStringEntryProto *lg_ow_meta(lg_ow *w, char *key, double v)
{
    Onnx__StringStringEntryProto *e = lg_ow_alloc(w, sizeof *e);
    char *val = lg_ow_alloc(w, 32);
    if (!e || !val || !key) return NULL;
    onnx__string_string_entry_proto__init(e);
    snprintf(val, 32, "%.17g", v);
    e->key = key;
    e->value = val;
    return e;
}

/* Append the activation of layer k on z through its entry's ONNX form
 * (act_onnx.h); returns the activation output. */
static const char *lg_ow_act(lg_ow *w, const lg_layer *L, int k, const char *z, const char *out)
{
    return lg_act_onnx_writer(L->act)(w, L->lambda, k, z, out);
}

lg_status lg_onnx_write(const lg_net *net, const char *path)
{
    return lg_onnx_write_dtype(net, path, LG_ONNX_DTYPE_AUTO, NULL);
}

/* The first term of a layer without an export entry (t = −1: none). */
typedef struct lg_ow_missing {
    int t;
    lg_layer_kind kind;
} lg_ow_missing;

static void lg_ow_missing_at(void *ctx, int t, const lg_linear *A)
{
    lg_ow_missing *ms = ctx;
    if (ms->t < 0 && !lg_onnx_write_form(A->kind)) ms->t = t, ms->kind = A->kind;
}

lg_status lg_onnx_write_dtype(const lg_net *net, const char *path, lg_onnx_dtype dtype, size_t *n_rounded)
{
    lg_status st = lg_net_validate(net);
    if (n_rounded) *n_rounded = 0;
    if (st != LG_OK) return st;
    for (int k = 0; k < net->n_layers; k++) {
        lg_ow_missing ms = {-1, LG_LAYER_DENSE};
        lg_layer_terms_visit(&net->layers[k], lg_ow_missing_at, &ms);
        if (ms.t >= 0)
            return lg_fail(LG_ERR_UNSUPPORTED, "%s: layer %d, term %d: the ONNX writer has no form for a %s term", path,
                           k, ms.t, lg_kind_name(ms.kind));
    }
    lg_ow w;
    memset(&w, 0, sizeof w);
    uint8_t *buf = NULL;
    int L = net->n_layers;
    int exact_float = lg_ow_all_float(net);
    int use_float = dtype == LG_ONNX_DTYPE_FLOAT32 || (dtype == LG_ONNX_DTYPE_AUTO && exact_float);
    w.dtype = use_float ? ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT : ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE;
    if (use_float && !exact_float && n_rounded) {
        for (size_t i = 0; i < net->n_params; i++) *n_rounded += !lg_ow_float_ok(net->params[i]);
        for (int i = 0; i < net->n_in; i++)
            *n_rounded += (net->in_sub && !lg_ow_float_ok(net->in_sub[i])) +
                          (net->in_div && !lg_ow_float_ok(net->in_div[i]));
        for (int k = 0; k < L; k++)
            *n_rounded += (lg_act_has_param(net->layers[k].act) && !lg_ow_float_ok(net->layers[k].lambda)) +
                          lg_ow_term_rounded(&net->layers[k].lin);
    }
    size_t T = (size_t)net->n_terms + (size_t)L;
    w.opset = 13;
    w.nodes = lg_ow_alloc(&w, (2 + 13 * (size_t)L + 6 * T) * sizeof *w.nodes);
    w.inits = lg_ow_alloc(&w, (5 + 8 * (size_t)L + 5 * T) * sizeof *w.inits);
    Onnx__StringStringEntryProto **meta = lg_ow_alloc(&w, (1 + (size_t)L) * sizeof *meta);
    const char **outs = lg_ow_alloc(&w, (size_t)L * sizeof *outs); /* each layer's output value */
    if (!w.nodes || !w.inits || !meta || !outs) goto oom;
    const char *x = "input";
    int64_t nin = net->n_in;
    if (net->in_sub) {
        const char *c = lg_ow_tensor(&w, "in_sub", net->in_sub, (size_t)nin, &nin, 1);
        lg_ow_node(&w, "Sub", "input_shifted", x, c, NULL);
        x = "input_shifted";
    }
    if (net->in_div) {
        const char *c = lg_ow_tensor(&w, "in_div", net->in_div, (size_t)nin, &nin, 1);
        lg_ow_node(&w, "Div", "input_scaled", x, c, NULL);
        x = "input_scaled";
    }
    size_t n_meta = 0;
    meta[n_meta++] = lg_ow_meta(&w, "lgelu.t", net->t);
    const char *x_in = x;
    for (int k = 0; k < L; k++) {
        const lg_layer *Ly = &net->layers[k];
        int last = k == L - 1;
        x = Ly->lin.src < 0 ? x_in : outs[Ly->lin.src];
        const lg_ow_kind *e = lg_ow_kind_of(&Ly->lin);
        if (e->node) { /* identity activation, bias 0, the layer's only term */
            const char *xb = lg_layer_is(Ly, LG_OPF_TWO_SRC) ? (Ly->lin.op.src_b < 0 ? x_in : outs[Ly->lin.op.src_b]) : NULL;
            if (!(outs[k] = x = e->node(&w, Ly, k, x, xb, last ? "output" : lg_ow_str(&w, "L%d_a", k)))) goto oom;
            continue;
        }
        /* the terms summed by Add (term 0 carries the bias), then the activation */
        const char *z = last && Ly->act == LG_ACT_IDENTITY && Ly->n_terms == 0 ? "output" : lg_ow_str(&w, "L%d_z", k);
        const char *zt = Ly->n_terms ? lg_ow_str(&w, "L%d_t0_z", k) : z;
        if (!(zt = e->term(&w, &Ly->lin, Ly->b, Ly->n_terms ? e->tag0_sum : e->tag0_alone, k, x, zt))) goto oom;
        for (int t = 1; t <= Ly->n_terms; t++) {
            const lg_linear *A = &Ly->terms[t - 1];
            char nm[48];
            snprintf(nm, sizeof nm, "L%%d_t%d_z", t);
            const char *zi = lg_ow_term(&w, A, k, t, A->src < 0 ? x_in : outs[A->src], lg_ow_str(&w, nm, k));
            snprintf(nm, sizeof nm, "L%%d_s%d", t);
            const char *sum = t == Ly->n_terms ? (last && Ly->act == LG_ACT_IDENTITY ? "output" : z)
                                               : lg_ow_str(&w, nm, k);
            if (!zi || !lg_ow_op(&w, "Add", sum, zt, zi)) goto oom;
            zt = sum;
        }
        z = zt;
        x = last && Ly->act == LG_ACT_IDENTITY ? z
                                                : lg_ow_act(&w, Ly, k, z, last ? "output" : lg_ow_str(&w, "L%d_a", k));
        if (!x) goto oom;
        outs[k] = x;
        /* s describes the exact λ; a λ rounded to float32 gets s solved back on reading */
        if (lg_act_info_of(Ly->act)->softplus &&
            (!use_float || lg_ow_float_ok(Ly->lambda) || (Ly->n_terms == 0 && e->s_always_alone)))
            meta[n_meta++] = lg_ow_meta(&w, lg_ow_str(&w, "lgelu.s.%d", k), Ly->s);
    }
    if (w.oom) goto oom;
    Onnx__ValueInfoProto *vin = lg_ow_value_info(&w, "input", net->n_in);
    Onnx__ValueInfoProto *vout = lg_ow_value_info(&w, "output", lg_net_n_out(net));
    Onnx__GraphProto graph;
    Onnx__ModelProto model;
    Onnx__OperatorSetIdProto opset, *opsets[1] = {&opset};
    if (!vin || !vout || w.oom) goto oom;
    onnx__graph_proto__init(&graph);
    graph.name = "lgelu";
    graph.n_node = w.n_nodes;
    graph.node = w.nodes;
    graph.n_initializer = w.n_inits;
    graph.initializer = w.inits;
    graph.n_input = 1;
    graph.input = &vin;
    graph.n_output = 1;
    graph.output = &vout;
    onnx__operator_set_id_proto__init(&opset);
    opset.domain = "";
    opset.has_version = 1;
    opset.version = w.opset;
    onnx__model_proto__init(&model);
    model.has_ir_version = 1;
    model.ir_version = 7;
    model.producer_name = "lgelu";
    model.producer_version = "1";
    model.n_opset_import = 1;
    model.opset_import = opsets;
    model.graph = &graph;
    model.n_metadata_props = n_meta;
    model.metadata_props = meta;
    size_t len = onnx__model_proto__get_packed_size(&model);
    if (!(buf = malloc(len))) goto oom;
    onnx__model_proto__pack(&model, buf);
    FILE *f = fopen(path, "wb");
    if (!f) {
        st = lg_fail(LG_ERR_IO, "%s: cannot open for writing: %s", path, strerror(errno));
        goto done;
    }
    if (fwrite(buf, 1, len, f) != len) st = lg_fail(LG_ERR_IO, "%s: write failed: %s", path, strerror(errno));
    if (fclose(f) != 0 && st == LG_OK) st = lg_fail(LG_ERR_IO, "%s: close failed: %s", path, strerror(errno));
    goto done;
oom:
    st = lg_fail(LG_ERR_NOMEM, "%s: out of memory building the ONNX model", path);
done:
    free(buf);
    lg_ow_free(&w);
    return st;
}
