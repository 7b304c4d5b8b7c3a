/* onnx_conv.c — the image ops of the ONNX importer (onnx_internal.h):
 * Conv, AveragePool / GlobalAveragePool, MaxPool / GlobalMaxPool (a
 * max-pool node, see lg_ox_maxpool), zero Pad, Transpose and
 * BatchNormalization, each applied to the pending affine map of onnx_read.c.
 *
 * A Conv is always a structured conv (lg_ox_b.K): whatever is pending before
 * it (a matrix, an index map, a sum, another conv) is closed into a layer of
 * its own first, except a symmetric zero Pad of the image, which becomes the
 * conv's padding. The conv stays structured through a bias shift and a
 * BatchNormalization fold and becomes a conv layer at its activation; a
 * Conv or another linear op met before that closes it as an identity conv
 * layer. Pad and Transpose are index maps (lg_ox_b_index), never matrices.
 * A Conv whose bottom/right padding differs from its top/left and
 * AveragePool are linear maps of the flat NCHW value written as a dense
 * matrix M (every entry a kernel weight, 1 or 0, so M is the file's exact
 * function) and composed by lg_ox_b_linear. The matrix must fit
 * LG_OX_DENSE_MAX_BYTES. AveragePool
 * sums with M and then divides by the window's count (lg_ox_b_scale: exact
 * for a power-of-two count, otherwise refused). BatchNormalization is the
 * one op that cannot be exact (a square root): it is folded into the
 * pending map z ← a·z + (B − mean·a) with a = scale/sqrt(var + eps) per
 * channel, every operation rounded to nearest in double: the verified
 * network is this folded one (DESIGN.md §3 "Semantics").
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx/onnx.h"
#include "onnx/onnx_internal.h"

/* Int-list attribute: 1 with *n values in out[0..max), 0 absent, -1 error. */
static int lg_ox_attr_ints(const lg_ox_graph *G, int node, const char *name, int64_t *out, int max, int *n)
{
    const Onnx__AttributeProto *a = lg_ox_attr(G->g->node[node], name);
    if (!a) return 0;
    if ((a->has_type && a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS) || (int)a->n_ints > max) {
        lg_fail(LG_ERR_FORMAT, "%s: %s: attribute '%s' must be a list of at most %d ints", G->file,
                lg_ox_node_desc(G, node), name, max);
        return -1;
    }
    for (size_t i = 0; i < a->n_ints; i++) out[i] = a->ints[i];
    *n = (int)a->n_ints;
    return 1;
}

/* C, H, W of a [1, C, H, W] (or [C, H, W]) value. */
static lg_status lg_ox_chw(const lg_ox_graph *G, int node, const lg_ox_shape *s, int64_t *C, int64_t *H, int64_t *W)
{
    if (!((s->rank == 4 && s->d[0] == 1) || s->rank == 3))
        return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: expected a [1, C, H, W] image, got rank %d", G->file,
                       lg_ox_node_desc(G, node), s->rank);
    int o = s->rank - 3;
    *C = s->d[o];
    *H = s->d[o + 1];
    *W = s->d[o + 2];
    return LG_OK;
}

/* A dense n2 × n matrix within the import cap, zeroed; NULL with lg_fail set. */
static double *lg_ox_dense(const lg_ox_graph *G, int node, size_t n2, size_t n)
{
    if (n2 == 0 || n == 0 || n2 > LG_OX_DENSE_MAX_BYTES / sizeof(double) / n) {
        lg_fail(LG_ERR_UNSUPPORTED,
                "%s: %s: the op as a dense %zu x %zu matrix would exceed %zu MB (lgelu imports image ops as dense "
                "layers)",
                G->file, lg_ox_node_desc(G, node), n2, n, LG_OX_DENSE_MAX_BYTES >> 20);
        return NULL;
    }
    double *M = calloc(n2 * n, sizeof *M);
    if (!M) lg_fail(LG_ERR_NOMEM, "%s: out of memory for a %zu x %zu matrix", G->file, n2, n);
    return M;
}

/* Window geometry shared by Conv and AveragePool: kernel kh×kw, strides,
 * pads [top, left, bottom, right]; output size. Refuses dilation ≠ 1,
 * auto_pad other than NOTSET/VALID and ceil_mode. */
typedef struct lg_ox_win {
    int64_t kh, kw, sh, sw, pt, pl, pb, pr, ho, wo;
} lg_ox_win;

/* auto_pad NOTSET (or absent) and VALID only: the pads are explicit. */
static lg_status lg_ox_auto_pad(const lg_ox_graph *G, int node)
{
    const Onnx__AttributeProto *ap = lg_ox_attr(G->g->node[node], "auto_pad");
    if (ap && ap->s.len && !(ap->s.len == 6 && memcmp(ap->s.data, "NOTSET", 6) == 0) &&
        !(ap->s.len == 5 && memcmp(ap->s.data, "VALID", 5) == 0))
        return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: auto_pad '%.*s' is not supported (use explicit pads)", G->file,
                       lg_ox_node_desc(G, node), (int)ap->s.len, (const char *)ap->s.data);
    return LG_OK;
}

static lg_status lg_ox_window(const lg_ox_graph *G, int node, int64_t H, int64_t W, int64_t kh, int64_t kw,
                              lg_ox_win *w)
{
    int64_t v[8];
    int n = 0, r;
    *w = (lg_ox_win){kh, kw, 1, 1, 0, 0, 0, 0, 0, 0};
    if (lg_ox_auto_pad(G, node) != LG_OK) return LG_ERR_UNSUPPORTED;
    if ((r = lg_ox_attr_ints(G, node, "kernel_shape", v, 8, &n)) < 0) return LG_ERR_FORMAT;
    if (r && (n != 2 || v[0] != kh || v[1] != kw))
        return lg_fail(LG_ERR_FORMAT, "%s: %s: kernel_shape does not match a %lldx%lld kernel", G->file,
                       lg_ox_node_desc(G, node), (long long)kh, (long long)kw);
    if ((r = lg_ox_attr_ints(G, node, "dilations", v, 8, &n)) < 0) return LG_ERR_FORMAT;
    for (int i = 0; r && i < n; i++)
        if (v[i] != 1)
            return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: dilation %lld is not supported (only 1)", G->file,
                           lg_ox_node_desc(G, node), (long long)v[i]);
    if ((r = lg_ox_attr_ints(G, node, "strides", v, 8, &n)) < 0) return LG_ERR_FORMAT;
    if (r) {
        if (n != 2 || v[0] < 1 || v[1] < 1)
            return lg_fail(LG_ERR_FORMAT, "%s: %s: strides must be two positive ints", G->file, lg_ox_node_desc(G, node));
        w->sh = v[0];
        w->sw = v[1];
    }
    if ((r = lg_ox_attr_ints(G, node, "pads", v, 8, &n)) < 0) return LG_ERR_FORMAT;
    if (r) {
        if (n != 4 || v[0] < 0 || v[1] < 0 || v[2] < 0 || v[3] < 0 || v[0] >= kh || v[2] >= kh || v[1] >= kw ||
            v[3] >= kw)
            return lg_fail(LG_ERR_FORMAT, "%s: %s: pads must be four ints in 0..kernel-1", G->file,
                           lg_ox_node_desc(G, node));
        w->pt = v[0], w->pl = v[1], w->pb = v[2], w->pr = v[3];
    }
    int64_t ceil_mode = 0;
    if (lg_ox_attr_int(G, node, "ceil_mode", &ceil_mode) < 0) return LG_ERR_FORMAT;
    if (ceil_mode) return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: ceil_mode is not supported", G->file, lg_ox_node_desc(G, node));
    if (kh < 1 || kw < 1 || H + w->pt + w->pb < kh || W + w->pl + w->pr < kw || kh > LG_NET_MAX_DIM || kw > LG_NET_MAX_DIM)
        return lg_fail(LG_ERR_FORMAT, "%s: %s: a %lldx%lld window does not fit the %lldx%lld input", G->file,
                       lg_ox_node_desc(G, node), (long long)kh, (long long)kw, (long long)H, (long long)W);
    w->ho = (H + w->pt + w->pb - kh) / w->sh + 1;
    w->wo = (W + w->pl + w->pr - kw) / w->sw + 1;
    return LG_OK;
}

static lg_ox_shape lg_ox_image_shape(const lg_ox_shape *in, int64_t C, int64_t H, int64_t W)
{
    lg_ox_shape s = *in;
    int o = s.rank - 3;
    s.d[o] = C, s.d[o + 1] = H, s.d[o + 2] = W;
    return s;
}

static lg_status lg_ox_conv_full(const lg_ox_graph *G, lg_ox_b *B, int node, int64_t C, int64_t H, int64_t W,
                                 int64_t M, const double *kv, int64_t KH, int64_t KW, const lg_ox_win *w0, int biased);

lg_status lg_ox_conv(const lg_ox_graph *G, lg_ox_b *B, int node)
{
    const Onnx__NodeProto *nd = G->g->node[node];
    const int *in = G->in_idx[node];
    int64_t C = 0, H = 0, W = 0, group = 1;
    lg_status st = lg_ox_chw(G, node, &B->shape, &C, &H, &W);
    if (st != LG_OK) return st;
    if (nd->n_input < 2 || in[1] < 0 || G->vals[in[1]].kind != LG_OX_CONST || !G->vals[in[1]].c.v ||
        G->vals[in[1]].c.shape.rank != 4)
        return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: the kernel must be a 4-D float constant", G->file,
                       lg_ox_node_desc(G, node));
    if (lg_ox_attr_int(G, node, "group", &group) < 0) return LG_ERR_FORMAT;
    const lg_ox_const *K = &G->vals[in[1]].c;
    int64_t M = K->shape.d[0];
    if (group < 1 || group > C || C % group != 0 || M % group != 0 || K->shape.d[1] != C / group)
        return lg_fail(LG_ERR_FORMAT, "%s: %s: kernel has %lld input channels per group and %lld output channels "
                       "in group = %lld; the value has %lld channels", G->file, lg_ox_node_desc(G, node),
                       (long long)K->shape.d[1], (long long)M, (long long)group, (long long)C);
    /* grouped (depthwise) convs: the full kernel [M][C][kh][kw], zero between groups (exact) */
    size_t nk = (size_t)M * (size_t)C * (size_t)K->shape.d[2] * (size_t)K->shape.d[3];
    if (nk > LG_NET_MAX_PARAMS)
        return lg_fail(LG_ERR_FORMAT, "%s: %s: the kernel has more than %zu weights", G->file,
                       lg_ox_node_desc(G, node), (size_t)LG_NET_MAX_PARAMS);
    double *kfull = NULL;
    if (group > 1) {
        size_t kk = (size_t)K->shape.d[2] * (size_t)K->shape.d[3], cg = (size_t)K->shape.d[1];
        size_t mg = (size_t)(M / group);
        if (!(kfull = calloc(nk, sizeof *kfull))) return lg_fail(LG_ERR_NOMEM, "%s: out of memory", G->file);
        for (size_t m = 0; m < (size_t)M; m++)
            for (size_t j = 0; j < cg; j++)
                memcpy(kfull + (m * (size_t)C + (m / mg) * cg + j) * kk, K->v + (m * cg + j) * kk, kk * sizeof *kfull);
    }
    st = lg_ox_conv_full(G, B, node, C, H, W, M, kfull ? kfull : K->v, K->shape.d[2], K->shape.d[3], NULL, 1);
    free(kfull);
    return st;
}

/* The conv of node with the full kernel kv [M][C][kh][kw] (group 1); its window from the
 * node's attributes, or w0 when given; the node's input 2 is its bias when biased (Conv,
 * ConvTranspose; not a pool's or a Resize's conv). */
static lg_status lg_ox_conv_full(const lg_ox_graph *G, lg_ox_b *B, int node, int64_t C, int64_t H, int64_t W,
                                 int64_t M, const double *kv, int64_t KH, int64_t KW, const lg_ox_win *w0, int biased)
{
    const Onnx__NodeProto *nd = G->g->node[node];
    const int *in = G->in_idx[node];
    lg_status st;
    const double *bias = NULL;
    if (biased && nd->n_input >= 3 && in[2] >= 0) {
        const lg_ox_val *bv = &G->vals[in[2]];
        if (bv->kind != LG_OX_CONST || !bv->c.v || bv->c.n != (size_t)M)
            return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: bias must be a constant of %lld values", G->file,
                           lg_ox_node_desc(G, node), (long long)M);
        bias = bv->c.v;
    }
    lg_ox_win w;
    if (w0)
        w = *w0;
    else if ((st = lg_ox_window(G, node, H, W, KH, KW, &w)) != LG_OK)
        return st;
    size_t n = (size_t)B->n, n2 = (size_t)M * (size_t)w.ho * (size_t)w.wo, hw = (size_t)w.ho * (size_t)w.wo;
    if (n != (size_t)(C * H * W) || n2 > LG_NET_MAX_DIM)
        return lg_fail(LG_ERR_FORMAT, "%s: %s: inconsistent sizes", G->file, lg_ox_node_desc(G, node));
    /* a zero Pad of the image right before (nothing else pending) is the conv's own padding */
    if (B->map && B->is_pad && !B->b && !B->n_xt) {
        int64_t H0 = H - 2 * B->pad_h, W0 = W - 2 * B->pad_w, pt = w.pt + B->pad_h, pl = w.pl + B->pad_w;
        if (H0 >= 1 && W0 >= 1 && lg_conv_out_size((int)H0, (int)w.kh, (int)w.sh, (int)pt) == w.ho &&
            lg_conv_out_size((int)W0, (int)w.kw, (int)w.sw, (int)pl) == w.wo) {
            free(B->map);
            B->map = NULL;
            B->is_pad = 0;
            B->n = B->m;
            H = H0, W = W0, w.pt = pt, w.pl = pl;
            n = (size_t)(C * H * W);
        }
    }
    /* whatever else is pending (a matrix, a conv with no activation after it, an index map, a
     * sum) becomes its own identity layer, so this conv stays a structured conv */
    if (!lg_ox_b_identity(B) && (st = lg_ox_b_close(B, LG_ACT_IDENTITY, 1.0)) != LG_OK) return st;
    if (lg_ox_b_identity(B) && lg_conv_out_size((int)H, (int)w.kh, (int)w.sh, (int)w.pt) == w.ho &&
        lg_conv_out_size((int)W, (int)w.kw, (int)w.sw, (int)w.pl) == w.wo) {
        /* nothing pending: the conv stays a structured conv (core/net.h) until its activation;
         * padding bottom/right only needs to give the same output size as top/left */
        size_t nk = (size_t)M * (size_t)C * (size_t)w.kh * (size_t)w.kw;
        double *Kc = lg_ox_dup(kv, nk), *c = bias ? malloc(n2 * sizeof *c) : NULL;
        if (!Kc || (bias && !c)) {
            free(Kc);
            free(c);
            return lg_fail(LG_ERR_NOMEM, "%s: out of memory", G->file);
        }
        for (size_t i = 0; c && i < n2; i++) c[i] = bias[i / hw];
        B->K = Kc;
        B->b = c;
        B->conv = (lg_conv){(int)C, (int)H, (int)W, (int)M, (int)w.ho, (int)w.wo,
                            (int)w.kh, (int)w.kw, (int)w.sh, (int)w.sw, (int)w.pt, (int)w.pl};
        B->n = (int)n2;
        B->shape = lg_ox_image_shape(&B->shape, M, w.ho, w.wo);
        return LG_OK;
    }
    double *A = lg_ox_dense(G, node, n2, n), *c = bias ? malloc(n2 * sizeof *c) : NULL;
    if (!A || (bias && !c)) {
        free(A);
        free(c);
        return A ? lg_fail(LG_ERR_NOMEM, "%s: out of memory", G->file) : LG_ERR_UNSUPPORTED;
    }
    /* row (m, oy, ox), column (ci, iy, ix) with iy = oy·sh − pt + ky: the kernel weight */
    for (int64_t m = 0; m < M; m++)
        for (int64_t oy = 0; oy < w.ho; oy++)
            for (int64_t ox = 0; ox < w.wo; ox++) {
                size_t row = (size_t)m * hw + (size_t)(oy * w.wo + ox);
                if (c) c[row] = bias[m];
                for (int64_t ci = 0; ci < C; ci++)
                    for (int64_t ky = 0; ky < w.kh; ky++) {
                        int64_t iy = oy * w.sh - w.pt + ky;
                        if (iy < 0 || iy >= H) continue;
                        for (int64_t kx = 0; kx < w.kw; kx++) {
                            int64_t ix = ox * w.sw - w.pl + kx;
                            if (ix < 0 || ix >= W) continue;
                            A[row * n + (size_t)((ci * H + iy) * W + ix)] = kv[((m * C + ci) * w.kh + ky) * w.kw + kx];
                        }
                    }
            }
    st = lg_ox_b_linear(B, A, (int)n2, c);
    free(c);
    if (st == LG_OK) B->shape = lg_ox_image_shape(&B->shape, M, w.ho, w.wo);
    return st;
}

/* Two ints of attribute name (default d when absent); -1 on a wrong count (message set). */
static int lg_ox_attr_pair(const lg_ox_graph *G, int node, const char *name, int64_t d, int want, int64_t *v)
{
    int n = 0, r = lg_ox_attr_ints(G, node, name, v, 8, &n);
    if (r < 0) return -1;
    if (!r) {
        for (int i = 0; i < want; i++) v[i] = d;
        return 0;
    }
    if (n != want) {
        lg_fail(LG_ERR_FORMAT, "%s: %s: '%s' must be %d ints", G->file, lg_ox_node_desc(G, node), name, want);
        return -1;
    }
    return 0;
}

lg_status lg_ox_convtranspose(const lg_ox_graph *G, lg_ox_b *B, int node)
{
    const Onnx__NodeProto *nd = G->g->node[node];
    const int *in = G->in_idx[node];
    const char *f = G->file, *desc = lg_ox_node_desc(G, node);
    int64_t C = 0, H = 0, W = 0, group = 1, st_[8], pads[8], op_[8], dil[8];
    lg_status st = lg_ox_chw(G, node, &B->shape, &C, &H, &W);
    if (st != LG_OK) return st;
    if (nd->n_input < 2 || in[1] < 0 || G->vals[in[1]].kind != LG_OX_CONST || !G->vals[in[1]].c.v ||
        G->vals[in[1]].c.shape.rank != 4)
        return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: the kernel must be a 4-D float constant", f, desc);
    const lg_ox_const *K = &G->vals[in[1]].c;
    if (lg_ox_auto_pad(G, node) != LG_OK) return LG_ERR_UNSUPPORTED;
    if (lg_ox_attr(nd, "output_shape"))
        return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: output_shape is not supported (use pads and output_padding)", f,
                       desc);
    if (lg_ox_attr_int(G, node, "group", &group) < 0) return LG_ERR_FORMAT;
    int64_t kh = K->shape.d[2], kw = K->shape.d[3], Mg = K->shape.d[1];
    if (group < 1 || group > C || C % group != 0 || K->shape.d[0] != C || kh < 1 || kw < 1)
        return lg_fail(LG_ERR_FORMAT, "%s: %s: the kernel [%lld, %lld, %lld, %lld] with group = %lld does not fit "
                       "%lld input channels", f, desc, (long long)K->shape.d[0], (long long)Mg, (long long)kh,
                       (long long)kw, (long long)group, (long long)C);
    if (lg_ox_attr_pair(G, node, "strides", 1, 2, st_) < 0 || lg_ox_attr_pair(G, node, "pads", 0, 4, pads) < 0 ||
        lg_ox_attr_pair(G, node, "output_padding", 0, 2, op_) < 0 ||
        lg_ox_attr_pair(G, node, "dilations", 1, 2, dil) < 0)
        return LG_ERR_FORMAT;
    if (dil[0] != 1 || dil[1] != 1)
        return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: dilation is not supported (only 1)", f, desc);
    if (st_[0] < 1 || st_[1] < 1 || st_[0] > LG_NET_MAX_DIM || st_[1] > LG_NET_MAX_DIM || pads[0] < 0 ||
        pads[1] < 0 || pads[2] < 0 || pads[3] < 0 || op_[0] < 0 || op_[1] < 0 || op_[0] >= st_[0] ||
        op_[1] >= st_[1] || kh > LG_NET_MAX_DIM || kw > LG_NET_MAX_DIM)
        return lg_fail(LG_ERR_FORMAT, "%s: %s: strides must be positive, pads non-negative, output_padding below the "
                       "stride", f, desc);
    /* ConvTranspose = a stride-1 conv with the flipped, transposed kernel over the input with
     * stride − 1 zeros between pixels and k − 1 − pad zeros around (a negative count crops):
     * the zeros and the crop are an index map, never a matrix */
    int64_t top = kh - 1 - pads[0], left = kw - 1 - pads[1];
    int64_t Hp = st_[0] * (H - 1) + 1 + top + (kh - 1 - pads[2] + op_[0]);
    int64_t Wp = st_[1] * (W - 1) + 1 + left + (kw - 1 - pads[3] + op_[1]);
    if (Hp < kh || Wp < kw || Hp > LG_NET_MAX_DIM || Wp > LG_NET_MAX_DIM || C * Hp * Wp > LG_NET_MAX_DIM)
        return lg_fail(LG_ERR_FORMAT, "%s: %s: the output would be %lldx%lld", f, desc, (long long)(Hp - kh + 1),
                       (long long)(Wp - kw + 1));
    int64_t M = Mg * group, Cg = C / group;
    size_t nk = (size_t)M * (size_t)C * (size_t)kh * (size_t)kw, n2 = (size_t)(C * Hp * Wp);
    if (nk > LG_NET_MAX_PARAMS) return lg_fail(LG_ERR_FORMAT, "%s: %s: the kernel is too large", f, desc);
    if (!lg_ox_b_identity(B) && (st = lg_ox_b_close(B, LG_ACT_IDENTITY, 1.0)) != LG_OK) return st;
    int *op = malloc(n2 * sizeof *op);
    double *kf = calloc(nk, sizeof *kf);
    if (!op || !kf) {
        free(op);
        free(kf);
        return lg_fail(LG_ERR_NOMEM, "%s: out of memory", f);
    }
    for (int64_t c = 0; c < C; c++)
        for (int64_t y = 0; y < Hp; y++)
            for (int64_t x = 0; x < Wp; x++) {
                int64_t yy = y - top, xx = x - left, o = (c * Hp + y) * Wp + x;
                int inside = yy >= 0 && xx >= 0 && yy % st_[0] == 0 && xx % st_[1] == 0 && yy / st_[0] < H &&
                             xx / st_[1] < W;
                op[o] = inside ? (int)((c * H + yy / st_[0]) * W + xx / st_[1]) : -1;
            }
    /* kf[m][c][ky][kx] = K[c][m − g·Mg][kh−1−ky][kw−1−kx] for c and m in the same group g */
    for (int64_t m = 0; m < M; m++) {
        int64_t g = m / Mg;
        for (int64_t c = g * Cg; c < (g + 1) * Cg; c++)
            for (int64_t ky = 0; ky < kh; ky++)
                for (int64_t kx = 0; kx < kw; kx++)
                    kf[((m * C + c) * kh + ky) * kw + kx] =
                        K->v[((c * Mg + (m - g * Mg)) * kh + (kh - 1 - ky)) * kw + (kw - 1 - kx)];
    }
    if ((st = lg_ox_b_index(B, op, (int)n2)) == LG_OK) {
        B->shape = lg_ox_image_shape(&B->shape, C, Hp, Wp);
        lg_ox_win w = {kh, kw, 1, 1, 0, 0, 0, 0, Hp - kh + 1, Wp - kw + 1};
        st = lg_ox_conv_full(G, B, node, C, Hp, Wp, M, kf, kh, kw, &w, 1);
    }
    free(kf);
    return st;
}

/* The weight 1/k of a window of k values: exact (1 when it is a double), rounded to nearest with
 * --round-weights (0, a note added once per node), else refused (-1, message set). */
static int lg_ox_avg_weight(const lg_ox_graph *G, int node, double k, double *r, int *noted)
{
    if (lg_ox_div_exact(1.0, k, r)) return 1;
    if (!lg_onnx_get_import_opts()->round_weights) {
        lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: the average over a window of %.0f values needs the weight 1/%.0f, which "
                "is not a double (lgelu verifies the file's exact function; --round-weights verifies the net with "
                "1/%.0f rounded to the nearest double instead, and says so)", G->file, lg_ox_node_desc(G, node), k, k,
                k);
        return -1;
    }
    *r = 1.0 / k; /* correctly rounded */
    if (!*noted)
        lg_ox_note_add(1, "%s: the weight 1/%.0f rounded to the nearest double %.17g (--round-weights)",
                       lg_ox_node_desc(G, node), k, *r);
    *noted = 1;
    return 0;
}

/* AveragePool as a conv whose kernel is r on its own channel (exact: each output is r times its
 * window's sum), for an image too large for the dense matrix; every window of the same count. */
static lg_status lg_ox_avgpool_conv(const lg_ox_graph *G, lg_ox_b *B, int node, int64_t C, int64_t H, int64_t W,
                                    const lg_ox_win *w, double r)
{
    size_t kk = (size_t)w->kh * (size_t)w->kw, nk = (size_t)C * (size_t)C * kk;
    if (nk > LG_NET_MAX_PARAMS)
        return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: the pool as a conv of %lld channels would have %zu weights",
                       G->file, lg_ox_node_desc(G, node), (long long)C, nk);
    double *K = calloc(nk, sizeof *K);
    if (!K) return lg_fail(LG_ERR_NOMEM, "%s: out of memory", G->file);
    for (size_t c = 0; c < (size_t)C; c++)
        for (size_t k = 0; k < kk; k++) K[(c * (size_t)C + c) * kk + k] = r;
    lg_status st = lg_ox_conv_full(G, B, node, C, H, W, C, K, w->kh, w->kw, w, 0);
    free(K);
    return st;
}

/* A dense pool or linear Resize matrix above this size becomes an index map and a conv when it
 * can (lg_ox_avgpool_conv, lg_ox_resize_linear_conv). */
#define LG_OX_AVG_DENSE_BYTES ((size_t)64 << 20)

lg_status lg_ox_avgpool(const lg_ox_graph *G, lg_ox_b *B, int node, int global)
{
    int64_t C = 0, H = 0, W = 0, v[8], include = 0;
    int n_k = 0;
    lg_status st = lg_ox_chw(G, node, &B->shape, &C, &H, &W);
    if (st != LG_OK) return st;
    int64_t kh = H, kw = W;
    if (!global) {
        if (lg_ox_attr_ints(G, node, "kernel_shape", v, 8, &n_k) != 1 || n_k != 2)
            return lg_fail(LG_ERR_FORMAT, "%s: %s: kernel_shape must be two ints", G->file, lg_ox_node_desc(G, node));
        kh = v[0], kw = v[1];
        if (lg_ox_attr_int(G, node, "count_include_pad", &include) < 0) return LG_ERR_FORMAT;
    }
    lg_ox_win w = {kh, kw, 1, 1, 0, 0, 0, 0, 1, 1};
    if (!global && (st = lg_ox_window(G, node, H, W, kh, kw, &w)) != LG_OK) return st;
    size_t n = (size_t)B->n, hw = (size_t)w.ho * (size_t)w.wo, n2 = (size_t)C * hw;
    /* the count of every window (padding counted with count_include_pad) and its weight 1/count */
    double *rc = malloc(n2 * sizeof *rc);
    if (!rc) return lg_fail(LG_ERR_NOMEM, "%s: out of memory", G->file);
    int uniform = 1, exact = 1, noted = 0;
    for (size_t row = 0; row < n2; row++) {
        int64_t oy = (int64_t)(row % hw) / w.wo, ox = (int64_t)(row % hw) % w.wo, count = 0;
        for (int64_t ky = 0; ky < kh; ky++)
            for (int64_t kx = 0; kx < kw; kx++) {
                int64_t iy = oy * w.sh - w.pt + ky, ix = ox * w.sw - w.pl + kx;
                count += iy >= 0 && iy < H && ix >= 0 && ix < W;
            }
        double k = include ? (double)(kh * kw) : (double)count;
        int e = lg_ox_avg_weight(G, node, k, &rc[row], &noted);
        if (e < 0) {
            free(rc);
            return LG_ERR_UNSUPPORTED;
        }
        exact &= e;
        uniform &= rc[row] == rc[0];
    }
    if (uniform && (n == 0 || n2 > LG_OX_AVG_DENSE_BYTES / sizeof(double) / n)) {
        st = lg_ox_avgpool_conv(G, B, node, C, H, W, &w, rc[0]);
        free(rc);
        return st;
    }
    double *A = lg_ox_dense(G, node, n2, n);
    if (!A) {
        free(rc);
        return LG_ERR_UNSUPPORTED;
    }
    for (int64_t ch = 0; ch < C; ch++)
        for (int64_t oy = 0; oy < w.ho; oy++)
            for (int64_t ox = 0; ox < w.wo; ox++) {
                size_t row = (size_t)ch * hw + (size_t)(oy * w.wo + ox);
                for (int64_t ky = 0; ky < kh; ky++)
                    for (int64_t kx = 0; kx < kw; kx++) {
                        int64_t iy = oy * w.sh - w.pt + ky, ix = ox * w.sw - w.pl + kx;
                        if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
                        A[row * n + (size_t)((ch * H + iy) * W + ix)] = 1.0;
                    }
            }
    /* the window's sum (exact), then the division by its count (exact: 1/count is a double),
     * or the product with the rounded weight (--round-weights) */
    st = lg_ox_b_linear(B, A, (int)n2, NULL);
    if (st == LG_OK) {
        B->shape = lg_ox_image_shape(&B->shape, C, w.ho, w.wo);
        if (exact)
            for (size_t i = 0; i < n2; i++) rc[i] = 1.0 / rc[i]; /* the count itself, exactly */
        st = lg_ox_b_scale(B, rc, exact);
    }
    free(rc);
    return st;
}

lg_status lg_ox_pad(const lg_ox_graph *G, lg_ox_b *B, int node)
{
    const Onnx__NodeProto *nd = G->g->node[node];
    const int *in = G->in_idx[node];
    const lg_ox_shape *s = &B->shape;
    int64_t pads[2 * LG_OX_MAX_RANK];
    int n_p = 0;
    const Onnx__AttributeProto *mode = lg_ox_attr(nd, "mode");
    if (mode && mode->s.len && !(mode->s.len == 8 && memcmp(mode->s.data, "constant", 8) == 0))
        return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: only constant (zero) padding is supported", G->file,
                       lg_ox_node_desc(G, node));
    if (nd->n_input >= 2 && in[1] >= 0) {
        const lg_ox_val *pv = &G->vals[in[1]];
        if (pv->kind != LG_OX_CONST || !pv->c.iv || pv->c.n > 2 * LG_OX_MAX_RANK)
            return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: pads must be an int64 constant", G->file, lg_ox_node_desc(G, node));
        n_p = (int)pv->c.n;
        memcpy(pads, pv->c.iv, (size_t)n_p * sizeof *pads);
    } else if (lg_ox_attr_ints(G, node, "pads", pads, 2 * LG_OX_MAX_RANK, &n_p) != 1) {
        return lg_fail(LG_ERR_FORMAT, "%s: %s: no pads", G->file, lg_ox_node_desc(G, node));
    }
    double value = 0.0;
    if (lg_ox_attr_float(G, node, "value", &value) < 0) return LG_ERR_FORMAT;
    if (nd->n_input >= 3 && in[2] >= 0) {
        const lg_ox_val *cv = &G->vals[in[2]];
        if (cv->kind != LG_OX_CONST || !cv->c.v || cv->c.n != 1)
            return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: the pad value must be a scalar constant", G->file,
                           lg_ox_node_desc(G, node));
        value = cv->c.v[0];
    }
    if (nd->n_input >= 4 && in[3] >= 0)
        return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: Pad with axes is not supported", G->file, lg_ox_node_desc(G, node));
    if (value != 0.0)
        return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: pad value %g is not supported (only zero padding)", G->file,
                       lg_ox_node_desc(G, node), value);
    if (n_p != 2 * s->rank)
        return lg_fail(LG_ERR_FORMAT, "%s: %s: %d pads for rank %d", G->file, lg_ox_node_desc(G, node), n_p, s->rank);
    lg_ox_shape o = *s;
    for (int a = 0; a < s->rank; a++) {
        if (pads[a] < 0 || pads[a + s->rank] < 0 || pads[a] > LG_NET_MAX_DIM || pads[a + s->rank] > LG_NET_MAX_DIM)
            return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: negative or huge pads are not supported", G->file,
                           lg_ox_node_desc(G, node));
        o.d[a] = s->d[a] + pads[a] + pads[a + s->rank];
    }
    size_t n = (size_t)B->n, n2 = lg_ox_shape_count(&o);
    if (n2 == 0 || n2 > LG_NET_MAX_DIM)
        return lg_fail(LG_ERR_FORMAT, "%s: %s: padded value too large", G->file, lg_ox_node_desc(G, node));
    int *A = malloc(n2 * sizeof *A);
    if (!A) return lg_fail(LG_ERR_NOMEM, "%s: out of memory", G->file);
    for (size_t g = 0; g < n2; g++) A[g] = -1;
    int64_t idx[LG_OX_MAX_RANK] = {0};
    for (size_t f = 0; f < n; f++) {
        size_t g = 0;
        for (int a = 0; a < s->rank; a++) g = g * (size_t)o.d[a] + (size_t)(idx[a] + pads[a]);
        A[g] = (int)f;
        for (int a = s->rank - 1; a >= 0; a--) {
            if (++idx[a] < s->d[a]) break;
            idx[a] = 0;
        }
    }
    /* a symmetric zero pad of the last two axes of an image, with nothing pending: a conv
     * right after takes it as its padding (lg_ox_conv) */
    int fresh = lg_ox_b_identity(B), sym = s->rank >= 3;
    for (int a = 0; sym && a < s->rank - 2; a++) sym = pads[a] == 0 && pads[a + s->rank] == 0;
    sym = sym && pads[s->rank - 2] == pads[2 * s->rank - 2] && pads[s->rank - 1] == pads[2 * s->rank - 1];
    int64_t ph = pads[s->rank - 2], pw = pads[s->rank - 1];
    lg_status st = lg_ox_b_index(B, A, (int)n2);
    if (st == LG_OK) {
        B->shape = o;
        if (fresh && sym) B->is_pad = 1, B->pad_h = (int)ph, B->pad_w = (int)pw;
    }
    return st;
}

lg_status lg_ox_transpose(const lg_ox_graph *G, lg_ox_b *B, int node)
{
    const lg_ox_shape *s = &B->shape;
    int64_t perm[LG_OX_MAX_RANK];
    int n_p = 0, r = lg_ox_attr_ints(G, node, "perm", perm, LG_OX_MAX_RANK, &n_p);
    if (r < 0) return LG_ERR_FORMAT;
    if (!r) {
        n_p = s->rank;
        for (int a = 0; a < s->rank; a++) perm[a] = s->rank - 1 - a;
    }
    int seen[LG_OX_MAX_RANK] = {0};
    if (n_p != s->rank)
        return lg_fail(LG_ERR_FORMAT, "%s: %s: perm has %d entries for rank %d", G->file, lg_ox_node_desc(G, node), n_p,
                       s->rank);
    for (int a = 0; a < n_p; a++) {
        if (perm[a] < 0 || perm[a] >= s->rank || seen[perm[a]]++)
            return lg_fail(LG_ERR_FORMAT, "%s: %s: perm is not a permutation", G->file, lg_ox_node_desc(G, node));
    }
    lg_ox_shape o = {s->rank, {0}};
    for (int a = 0; a < s->rank; a++) o.d[a] = s->d[perm[a]];
    size_t n = (size_t)B->n;
    int *A = malloc((n ? n : 1) * sizeof *A);
    if (!A) return lg_fail(LG_ERR_NOMEM, "%s: out of memory", G->file);
    /* in-strides of the source axes; walk the output in order */
    size_t stride[LG_OX_MAX_RANK];
    size_t acc = 1;
    for (int a = s->rank - 1; a >= 0; a--) {
        stride[a] = acc;
        acc *= (size_t)s->d[a];
    }
    int64_t idx[LG_OX_MAX_RANK] = {0};
    for (size_t g = 0; g < n; g++) {
        size_t f = 0;
        for (int a = 0; a < o.rank; a++) f += (size_t)idx[a] * stride[perm[a]];
        A[g] = (int)f;
        for (int a = o.rank - 1; a >= 0; a--) {
            if (++idx[a] < o.d[a]) break;
            idx[a] = 0;
        }
    }
    lg_status st = lg_ox_b_index(B, A, (int)n);
    if (st == LG_OK) B->shape = o;
    return st;
}

/* 1 if string attribute name is absent (then *v = dflt) or one of the n values in list; its
 * index in *v. -1 with a message if it is another value. */
static int lg_ox_attr_pick(const lg_ox_graph *G, int node, const char *name, const char *const *list, int n, int dflt,
                           int *v)
{
    const Onnx__AttributeProto *a = lg_ox_attr(G->g->node[node], name);
    *v = dflt;
    if (!a || !a->s.len) return 1;
    for (int i = 0; i < n; i++)
        if (a->s.len == strlen(list[i]) && memcmp(a->s.data, list[i], a->s.len) == 0) {
            *v = i;
            return 1;
        }
    lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: %s '%.*s' is not supported", G->file, lg_ox_node_desc(G, node), name,
            (int)a->s.len, (const char *)a->s.data);
    return -1;
}

/* x_original = N/D (D > 0) of output coordinate x under the coordinate mode, the scale being
 * P/Q (output length Lr, input length Lo); nearest index under the rounding mode, clamped. */
enum { LG_RS_HALF, LG_RS_PT_HALF, LG_RS_ALIGN, LG_RS_ASYM, LG_RS_TF_HALF };
enum { LG_RS_PREFER_FLOOR, LG_RS_PREFER_CEIL, LG_RS_FLOOR, LG_RS_CEIL };
static void lg_ox_resize_coord(int64_t x, int64_t P, int64_t Q, int64_t Lo, int64_t Lr, int coord, int64_t *pN,
                               int64_t *pD)
{
    int64_t N, D; /* every product below stays under 2^62: P, Q, Lo, Lr, x ≤ 2^20 */
    switch (coord) {
    case LG_RS_ALIGN: N = Lr > 1 ? x * (Lo - 1) : 0, D = Lr > 1 ? Lr - 1 : 1; break;
    case LG_RS_ASYM: N = x * Q, D = P; break;                        /* x / scale */
    case LG_RS_TF_HALF: N = (2 * x + 1) * Q, D = 2 * P; break;       /* (x + 1/2) / scale */
    case LG_RS_PT_HALF:
        if (Lr <= 1) {
            N = 0, D = 1;
            break;
        }
        /* fall through */
    default: N = (2 * x + 1) * Q - P, D = 2 * P; break;              /* (x + 1/2) / scale − 1/2 */
    }
    *pN = N, *pD = D;
}

static int64_t lg_ox_resize_src(int64_t x, int64_t P, int64_t Q, int64_t Lo, int64_t Lr, int coord, int round)
{
    int64_t N, D;
    lg_ox_resize_coord(x, P, Q, Lo, Lr, coord, &N, &D);
    int64_t fl = N >= 0 ? N / D : -((-N + D - 1) / D), r = N - fl * D; /* floor and 0 ≤ r < D */
    int64_t i = fl;
    if (round == LG_RS_CEIL) i = fl + (r > 0);
    else if (round != LG_RS_FLOOR) i = fl + (2 * r > D || (2 * r == D && round == LG_RS_PREFER_CEIL));
    return i < 0 ? 0 : i >= Lo ? Lo - 1 : i;
}

/* The scale of a Resize axis as P/Q from a double s (exact: s = m·2^-e), within 2^20. */
static int lg_ox_scale_frac(double s, int64_t *P, int64_t *Q)
{
    if (!(s > 0) || !isfinite(s)) return 0;
    int64_t q = 1;
    while (s != floor(s) && q < (1 << 20)) s *= 2, q *= 2;
    if (s != floor(s) || s > (double)(1 << 20)) return 0;
    *P = (int64_t)s, *Q = q;
    return 1;
}

/* The two source indices (clamped) and weights of output coordinate x of a linear Resize axis:
 * x_original = N/D, weights 1 − r/D and r/D at floor and floor + 1 (r = N − floor·D), each
 * exact when it is a double; rounded to nearest with --round-weights (*rounded set), else -1. */
static int lg_ox_linear_taps(int64_t x, int64_t P, int64_t Q, int64_t Lo, int64_t Lr, int coord, int64_t idx[2],
                             double wt[2], int *rounded)
{
    int64_t N, D;
    lg_ox_resize_coord(x, P, Q, Lo, Lr, coord, &N, &D);
    int64_t fl = N >= 0 ? N / D : -((-N + D - 1) / D), r = N - fl * D;
    idx[0] = fl < 0 ? 0 : fl >= Lo ? Lo - 1 : fl;
    idx[1] = fl + 1 < 0 ? 0 : fl + 1 >= Lo ? Lo - 1 : fl + 1;
    int e0 = lg_ox_div_exact((double)(D - r), (double)D, &wt[0]), e1 = lg_ox_div_exact((double)r, (double)D, &wt[1]);
    if (e0 && e1) return 0;
    if (!lg_onnx_get_import_opts()->round_weights) return -1;
    *rounded = 1;
    return 0;
}

/* The 1-D kernel of a linear Resize axis by an integer factor sc (half_pixel, pytorch_half_pixel
 * or asymmetric): output sc·i + t reads in[i + k_t] and in[i + k_t + 1] (k_t ∈ {−1, 0}) with
 * weights 1 − f_t and f_t, the same for every i (indices clamped). Over the input spread out
 * with sc − 1 zeros before each pixel and its border pixel repeated once on each side, a stride-1
 * conv with kernel ker[3·sc] reads in[i − 1], in[i], in[i + 1] at ker[sc−1−t], ker[2sc−1−t],
 * ker[3sc−1−t]. 1 if every weight is a double (or rounded with --round-weights: *rounded), 0 if
 * not, -1 if the axis is not of this form. */
static int lg_ox_linear_kernel(int64_t sc, int64_t L, int coord, double *ker, int *rounded)
{
    for (int64_t j = 0; j < 3 * sc; j++) ker[j] = 0.0;
    for (int64_t t = 0; t < sc; t++) {
        int64_t N, D;
        lg_ox_resize_coord(t, sc, 1, L, L * sc, coord, &N, &D);
        int64_t fl = N >= 0 ? N / D : -((-N + D - 1) / D), r = N - fl * D;
        if (fl < -1 || fl > 0) return -1;
        double w0, w1;
        int e = lg_ox_div_exact((double)(D - r), (double)D, &w0) & lg_ox_div_exact((double)r, (double)D, &w1);
        if (!e && !lg_onnx_get_import_opts()->round_weights) return 0;
        *rounded |= !e;
        ker[(fl == -1 ? sc : 2 * sc) - 1 - t] = w0;
        ker[(fl == -1 ? 2 * sc : 3 * sc) - 1 - t] = w1;
    }
    return 1;
}

/* A linear Resize by integer factors on a large image: an index map (the pixels spread out, the
 * border repeated) and a conv of kernel kery ⊗ kerx on each channel; exact as the dense form. 1
 * done (or failed: *st), 0 not of this form (the caller writes the dense matrix). */
static int lg_ox_resize_linear_conv(const lg_ox_graph *G, lg_ox_b *B, int node, int64_t C, int64_t H, int64_t W,
                                    const int64_t s[2], int coord, lg_status *st)
{
    if (coord != LG_RS_HALF && coord != LG_RS_PT_HALF && coord != LG_RS_ASYM) return 0;
    if (s[0] < 1 || s[1] < 1 || s[0] > 64 || s[1] > 64 || (coord == LG_RS_PT_HALF && (H * s[0] <= 1 || W * s[1] <= 1)))
        return 0;
    double ky[192], kx[192];
    int rounded = 0;
    if (lg_ox_linear_kernel(s[0], H, coord, ky, &rounded) != 1 || lg_ox_linear_kernel(s[1], W, coord, kx, &rounded) != 1)
        return 0; /* the dense form refuses or rounds it, naming the option */
    int64_t KH = 3 * s[0], KW = 3 * s[1], Hu = s[0] * H + KH - 1, Wu = s[1] * W + KW - 1;
    size_t nu = (size_t)(C * Hu * Wu), nk = (size_t)(C * C * KH * KW);
    if (nu > LG_NET_MAX_DIM || nk > LG_NET_MAX_PARAMS) return 0;
    int *op = malloc(nu * sizeof *op);
    double *K = calloc(nk, sizeof *K);
    if (!op || !K) {
        free(op);
        free(K);
        *st = lg_fail(LG_ERR_NOMEM, "%s: out of memory", G->file);
        return 1;
    }
    for (int64_t c = 0; c < C; c++)
        for (int64_t y = 0; y < Hu; y++)
            for (int64_t x = 0; x < Wu; x++) {
                int64_t my = (y - (s[0] - 1)) / s[0] - 1, mx = (x - (s[1] - 1)) / s[1] - 1;
                int on = (y % s[0]) == s[0] - 1 && (x % s[1]) == s[1] - 1;
                my = my < 0 ? 0 : my >= H ? H - 1 : my;
                mx = mx < 0 ? 0 : mx >= W ? W - 1 : mx;
                op[(c * Hu + y) * Wu + x] = on ? (int)((c * H + my) * W + mx) : -1;
            }
    for (int64_t c = 0; c < C; c++)
        for (int64_t a = 0; a < KH; a++)
            for (int64_t b = 0; b < KW; b++)
                if (!lg_ox_mul_exact(ky[a], kx[b], &K[((c * C + c) * KH + a) * KW + b])) rounded = 1;
    if (rounded && !lg_onnx_get_import_opts()->round_weights) {
        free(op);
        free(K);
        return 0;
    }
    if (rounded)
        lg_ox_note_add(1, "%s: linear Resize weights rounded to the nearest double (--round-weights)",
                       lg_ox_node_desc(G, node));
    if ((*st = lg_ox_b_index(B, op, (int)nu)) == LG_OK) {
        B->shape = lg_ox_image_shape(&B->shape, C, Hu, Wu);
        lg_ox_win w = {KH, KW, 1, 1, 0, 0, 0, 0, Hu - KH + 1, Wu - KW + 1};
        *st = lg_ox_conv_full(G, B, node, C, Hu, Wu, C, K, KH, KW, &w, 0);
    }
    free(K);
    return 1;
}

/* Resize in linear mode (bilinear over H and W): each output is w_y·w_x-weighted sum of its four
 * source pixels (indices clamped at the border, as the ONNX reference and PyTorch do), written
 * as a dense matrix; exact when every weight and product is a double. */
static lg_status lg_ox_resize_linear(const lg_ox_graph *G, lg_ox_b *B, int node, int64_t C, int64_t H, int64_t W,
                                     const int64_t Lr[2], const int64_t P[2], const int64_t Q[2], int coord)
{
    const char *f = G->file, *desc = lg_ox_node_desc(G, node);
    if (coord == LG_RS_TF_HALF)
        return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: coordinate mode tf_half_pixel_for_nn is for nearest only", f, desc);
    size_t n = (size_t)B->n, n2 = (size_t)C * (size_t)Lr[0] * (size_t)Lr[1];
    if (n != (size_t)(C * H * W)) return lg_fail(LG_ERR_FORMAT, "%s: %s: inconsistent sizes", f, desc);
    int64_t fac[2] = {P[0] / Q[0], P[1] / Q[1]}; /* the scale P/Q (from sizes: Lr/L) when an integer */
    if (n2 > LG_OX_AVG_DENSE_BYTES / sizeof(double) / n && P[0] % Q[0] == 0 && P[1] % Q[1] == 0 &&
        Lr[0] == H * fac[0] && Lr[1] == W * fac[1]) { /* integer factors on a large image: an index map and a conv */
        lg_status st = LG_OK;
        if (lg_ox_resize_linear_conv(G, B, node, C, H, W, fac, coord, &st)) return st;
    }
    int64_t *iy = malloc((size_t)Lr[0] * 2 * sizeof *iy), *ix = malloc((size_t)Lr[1] * 2 * sizeof *ix);
    double *wy = malloc((size_t)Lr[0] * 2 * sizeof *wy), *wx = malloc((size_t)Lr[1] * 2 * sizeof *wx);
    lg_status st = LG_OK;
    int rounded = 0;
    if (!iy || !ix || !wy || !wx) st = lg_fail(LG_ERR_NOMEM, "%s: out of memory", f);
    for (int64_t y = 0; st == LG_OK && y < Lr[0]; y++)
        if (lg_ox_linear_taps(y, P[0], Q[0], H, Lr[0], coord, iy + 2 * y, wy + 2 * y, &rounded) < 0) goto inexact;
    for (int64_t x = 0; st == LG_OK && x < Lr[1]; x++)
        if (lg_ox_linear_taps(x, P[1], Q[1], W, Lr[1], coord, ix + 2 * x, wx + 2 * x, &rounded) < 0) goto inexact;
    double *A = st == LG_OK ? lg_ox_dense(G, node, n2, n) : NULL;
    if (st == LG_OK && !A) st = LG_ERR_UNSUPPORTED;
    for (int64_t c = 0; st == LG_OK && c < C; c++)
        for (int64_t y = 0; y < Lr[0]; y++)
            for (int64_t x = 0; x < Lr[1]; x++) {
                size_t row = (size_t)((c * Lr[0] + y) * Lr[1] + x);
                for (int a = 0; a < 2; a++)
                    for (int b = 0; b < 2; b++) {
                        double p, *e = &A[row * n + (size_t)((c * H + iy[2 * y + a]) * W + ix[2 * x + b])];
                        if (!lg_ox_mul_exact(wy[2 * y + a], wx[2 * x + b], &p)) rounded = 1;
                        if (!lg_ox_add_exact(*e, p, e)) rounded = 1; /* two taps on one clamped pixel */
                    }
            }
    if (st == LG_OK && rounded && !lg_onnx_get_import_opts()->round_weights) {
        free(A);
        goto inexact;
    }
    free(iy), free(ix), free(wy), free(wx);
    if (st != LG_OK) return st;
    if (rounded) lg_ox_note_add(1, "%s: linear Resize weights rounded to the nearest double (--round-weights)", desc);
    if ((st = lg_ox_b_linear(B, A, (int)n2, NULL)) == LG_OK) B->shape = lg_ox_image_shape(&B->shape, C, Lr[0], Lr[1]);
    return st;
inexact:
    free(iy), free(ix), free(wy), free(wx);
    return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: a linear Resize weight is not a double at this scale (lgelu verifies "
                   "the file's exact function; --round-weights rounds it and says so)", f, desc);
}

lg_status lg_ox_resize(const lg_ox_graph *G, lg_ox_b *B, int node, int upsample)
{
    const Onnx__NodeProto *nd = G->g->node[node];
    const int *in = G->in_idx[node];
    const char *f = G->file, *desc = lg_ox_node_desc(G, node);
    int old = upsample || nd->n_input == 2;
    int64_t C = 0, H = 0, W = 0;
    lg_status st = lg_ox_chw(G, node, &B->shape, &C, &H, &W);
    if (st != LG_OK) return st;
    static const char *const modes[] = {"nearest", "linear"};
    static const char *const coords[] = {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
                                         "tf_half_pixel_for_nn"};
    static const char *const rounds[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
    int mode, coord, round;
    if (lg_ox_attr_pick(G, node, "mode", modes, 2, 0, &mode) < 0 ||
        lg_ox_attr_pick(G, node, "coordinate_transformation_mode", coords, 5, old ? LG_RS_ASYM : LG_RS_HALF,
                        &coord) < 0 ||
        lg_ox_attr_pick(G, node, "nearest_mode", rounds, 4, old ? LG_RS_FLOOR : LG_RS_PREFER_FLOOR, &round) < 0)
        return LG_ERR_UNSUPPORTED; /* cubic interpolation, tf_crop_and_resize: refused by name */
    if (lg_ox_attr(nd, "axes") || lg_ox_attr(nd, "antialias") || lg_ox_attr(nd, "keep_aspect_ratio_policy"))
        return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: axes, antialias and keep_aspect_ratio_policy are not supported",
                       f, desc);
    /* scales (input 1 of Upsample and opset-10 Resize, 2 of later Resize; Upsample-7's attribute)
     * or sizes (input 3), one per axis of the [1, C, H, W] value */
    double sc[4] = {1, 1, 1, 1};
    int64_t sz[4] = {0, 0, 0, 0};
    int has_sc = 0, has_sz = 0, ix_sc = old ? 1 : 2;
    const Onnx__AttributeProto *sa = lg_ox_attr(nd, "scales");
    if (sa && sa->n_floats == 4) {
        for (int a = 0; a < 4; a++) sc[a] = sa->floats[a];
        has_sc = 1;
    }
    if ((int)nd->n_input > ix_sc && in[ix_sc] >= 0) {
        const lg_ox_val *v = &G->vals[in[ix_sc]];
        if (v->kind != LG_OX_CONST) return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: scales must be a constant", f, desc);
        if (v->c.n == 4 && v->c.v) {
            for (int a = 0; a < 4; a++) sc[a] = v->c.v[a];
            has_sc = 1;
        } else if (v->c.n != 0) {
            return lg_fail(LG_ERR_FORMAT, "%s: %s: scales must hold 4 values (N, C, H, W)", f, desc);
        }
    }
    if (!old && (int)nd->n_input > 3 && in[3] >= 0) {
        const lg_ox_val *v = &G->vals[in[3]];
        if (v->kind != LG_OX_CONST || !v->c.iv || v->c.n != 4)
            return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: sizes must be a constant of 4 int64 values", f, desc);
        for (int a = 0; a < 4; a++) sz[a] = v->c.iv[a];
        has_sz = 1;
    }
    if (has_sc == has_sz)
        return lg_fail(LG_ERR_FORMAT, "%s: %s: exactly one of scales and sizes must be given", f, desc);
    int64_t L[2] = {H, W}, Lr[2], P[2], Q[2];
    for (int a = 0; a < 2; a++) {
        if (has_sz) {
            Lr[a] = sz[2 + a], P[a] = Lr[a], Q[a] = L[a];
        } else {
            if (!lg_ox_scale_frac(sc[2 + a], &P[a], &Q[a]))
                return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: scale %.17g is not a positive dyadic number within 2^20",
                               f, desc, sc[2 + a]);
            Lr[a] = L[a] * P[a] / Q[a]; /* floor(L·scale) */
        }
        if (Lr[a] < 1 || Lr[a] > (1 << 20))
            return lg_fail(LG_ERR_FORMAT, "%s: %s: output length %lld", f, desc, (long long)Lr[a]);
    }
    if ((has_sz && (sz[0] != 1 || sz[1] != C)) || (has_sc && (sc[0] != 1 || sc[1] != 1)))
        return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: only the H and W axes may be resized", f, desc);
    size_t n2 = (size_t)C * (size_t)Lr[0] * (size_t)Lr[1];
    if (n2 > LG_NET_MAX_DIM) return lg_fail(LG_ERR_FORMAT, "%s: %s: the output has %zu values", f, desc, n2);
    if (mode == 1) return lg_ox_resize_linear(G, B, node, C, H, W, Lr, P, Q, coord);
    int *op = malloc(n2 * sizeof *op);
    int64_t *sy = malloc((size_t)Lr[0] * sizeof *sy), *sx = malloc((size_t)Lr[1] * sizeof *sx);
    if (!op || !sy || !sx) {
        free(op);
        free(sy);
        free(sx);
        return lg_fail(LG_ERR_NOMEM, "%s: out of memory", f);
    }
    for (int64_t y = 0; y < Lr[0]; y++) sy[y] = lg_ox_resize_src(y, P[0], Q[0], H, Lr[0], coord, round);
    for (int64_t x = 0; x < Lr[1]; x++) sx[x] = lg_ox_resize_src(x, P[1], Q[1], W, Lr[1], coord, round);
    for (int64_t c = 0; c < C; c++)
        for (int64_t y = 0; y < Lr[0]; y++)
            for (int64_t x = 0; x < Lr[1]; x++) op[(c * Lr[0] + y) * Lr[1] + x] = (int)((c * H + sy[y]) * W + sx[x]);
    free(sy);
    free(sx);
    if ((st = lg_ox_b_index(B, op, (int)n2)) == LG_OK) B->shape = lg_ox_image_shape(&B->shape, C, Lr[0], Lr[1]);
    return st;
}

lg_status lg_ox_batchnorm(const lg_ox_graph *G, lg_ox_b *B, int node)
{
    const Onnx__NodeProto *nd = G->g->node[node];
    const int *in = G->in_idx[node];
    const lg_ox_shape *s = &B->shape;
    double eps = 1e-5;
    int64_t training = 0;
    if (lg_ox_attr_float(G, node, "epsilon", &eps) < 0 || lg_ox_attr_int(G, node, "training_mode", &training) < 0)
        return LG_ERR_FORMAT;
    if (training || nd->n_output > 1)
        if (training || (nd->n_output > 1 && G->out_idx[node][1] >= 0 && G->vals[G->out_idx[node][1]].uses > 0))
            return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: BatchNormalization in training mode is not supported", G->file,
                           lg_ox_node_desc(G, node));
    if (s->rank < 2 || s->d[0] != 1)
        return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: expected a [1, C, ...] value", G->file, lg_ox_node_desc(G, node));
    int64_t C = s->d[1];
    size_t n = (size_t)B->n, per = n / (size_t)C;
    const double *p[4];
    for (int j = 0; j < 4; j++) {
        const lg_ox_val *v = nd->n_input > (size_t)j + 1 && in[j + 1] >= 0 ? &G->vals[in[j + 1]] : NULL;
        if (!v || v->kind != LG_OX_CONST || !v->c.v || v->c.n != (size_t)C)
            return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: scale, B, mean and var must be constants of %lld values",
                           G->file, lg_ox_node_desc(G, node), (long long)C);
        p[j] = v->c.v;
    }
    double *a = malloc(n * sizeof *a), *sh = malloc(n * sizeof *sh);
    if (!a || !sh) {
        free(a);
        free(sh);
        return lg_fail(LG_ERR_NOMEM, "%s: out of memory", G->file);
    }
    lg_status st = LG_OK;
    for (int64_t ch = 0; ch < C && st == LG_OK; ch++) {
        double den = sqrt(p[3][ch] + eps), ac = p[0][ch] / den;
        if (!(p[3][ch] + eps > 0) || !isfinite(ac))
            st = lg_fail(LG_ERR_FORMAT, "%s: %s: channel %lld has variance + epsilon %g", G->file,
                         lg_ox_node_desc(G, node), (long long)ch, p[3][ch] + eps);
        for (size_t f = 0; f < per; f++) {
            a[(size_t)ch * per + f] = ac;
            sh[(size_t)ch * per + f] = p[1][ch];
        }
    }
    /* y = (z − mean)·a + B: fold into the pending map, rounded to nearest */
    if (st == LG_OK) {
        for (int64_t ch = 0; ch < C; ch++)
            for (size_t f = 0; f < per; f++) sh[(size_t)ch * per + f] -= p[2][ch] * a[(size_t)ch * per + f];
        st = lg_ox_b_affine_rounded(B, a, sh);
    }
    free(a);
    free(sh);
    return st;
}

/* MaxPool / GlobalMaxPool as a max-pool node (core/net.h LG_LAYER_MAX):
 * whatever is pending is closed into a layer first (the node reads a node).
 * Any kernel and stride; symmetric pads below the kernel (padding is −∞:
 * left out of the max); dilations 1, ceil_mode 0, auto_pad NOTSET or VALID,
 * no Indices output. */
static lg_status lg_ox_maxpool_refuse(const lg_ox_graph *G, int node, const char *what)
{
    return lg_fail(LG_ERR_UNSUPPORTED,
                   "%s: %s: MaxPool %s is not supported; lgelu takes 2-D MaxPool with any kernel_shape and strides, "
                   "pads equal at both ends of an axis and below the kernel, dilations 1, ceil_mode 0 and no "
                   "Indices output",
                   G->file, lg_ox_node_desc(G, node), what);
}

lg_status lg_ox_maxpool(const lg_ox_graph *G, lg_ox_b *B, int node, int global)
{
    int64_t C = 0, H = 0, W = 0, v[8];
    int n = 0, r;
    char what[160];
    lg_status st = lg_ox_chw(G, node, &B->shape, &C, &H, &W);
    if (st != LG_OK) return st;
    int64_t kh = H, kw = W, sh = 1, sw = 1, ph = 0, pw = 0;
    const Onnx__NodeProto *nd = G->g->node[node];
    if (nd->n_output > 1 && nd->output[1] && nd->output[1][0])
        return lg_ox_maxpool_refuse(G, node, "with an Indices output");
    if (!global) {
        if (lg_ox_attr_ints(G, node, "kernel_shape", v, 8, &n) != 1 || n != 2 || v[0] < 1 || v[1] < 1)
            return lg_fail(LG_ERR_FORMAT, "%s: %s: kernel_shape must be two positive ints (2-D MaxPool)", G->file,
                           lg_ox_node_desc(G, node));
        kh = v[0], kw = v[1];
        const Onnx__AttributeProto *ap = lg_ox_attr(nd, "auto_pad");
        if (ap && ap->s.len && !(ap->s.len == 6 && memcmp(ap->s.data, "NOTSET", 6) == 0) &&
            !(ap->s.len == 5 && memcmp(ap->s.data, "VALID", 5) == 0)) {
            snprintf(what, sizeof what, "auto_pad '%.*s'", (int)(ap->s.len > 40 ? 40 : ap->s.len),
                     (const char *)ap->s.data);
            return lg_ox_maxpool_refuse(G, node, what);
        }
        if ((r = lg_ox_attr_ints(G, node, "strides", v, 8, &n)) < 0) return LG_ERR_FORMAT;
        if (r && (n != 2 || v[0] < 1 || v[1] < 1))
            return lg_fail(LG_ERR_FORMAT, "%s: %s: strides must be two positive ints (2-D MaxPool)", G->file,
                           lg_ox_node_desc(G, node));
        if (r) sh = v[0], sw = v[1];
        if ((r = lg_ox_attr_ints(G, node, "pads", v, 8, &n)) < 0) return LG_ERR_FORMAT;
        if (r && n != 4)
            return lg_fail(LG_ERR_FORMAT, "%s: %s: pads must be four ints (2-D MaxPool)", G->file,
                           lg_ox_node_desc(G, node));
        if (r) {
            if (v[0] != v[2] || v[1] != v[3]) return lg_ox_maxpool_refuse(G, node, "with asymmetric pads");
            if (v[0] < 0 || v[1] < 0 || v[0] >= kh || v[1] >= kw)
                return lg_ox_maxpool_refuse(G, node, "with pads that are negative or not below the kernel");
            ph = v[0], pw = v[1];
        }
        if ((r = lg_ox_attr_ints(G, node, "dilations", v, 8, &n)) < 0) return LG_ERR_FORMAT;
        for (int i = 0; r && i < n; i++)
            if (v[i] != 1) return lg_ox_maxpool_refuse(G, node, "with dilations other than 1");
        int64_t ceil_mode = 0;
        if (lg_ox_attr_int(G, node, "ceil_mode", &ceil_mode) < 0) return LG_ERR_FORMAT;
        if (ceil_mode) return lg_ox_maxpool_refuse(G, node, "with ceil_mode 1");
        if (kh > H + 2 * ph || kw > W + 2 * pw)
            return lg_fail(LG_ERR_FORMAT, "%s: %s: a %lldx%lld window does not fit the %lldx%lld input", G->file,
                           lg_ox_node_desc(G, node), (long long)kh, (long long)kw, (long long)H, (long long)W);
    }
    if (kh > LG_NET_MAX_DIM || kw > LG_NET_MAX_DIM || sh > LG_NET_MAX_DIM || sw > LG_NET_MAX_DIM)
        return lg_fail(LG_ERR_UNSUPPORTED, "%s: %s: MaxPool window or stride too large", G->file,
                       lg_ox_node_desc(G, node));
    int64_t ho = (H + 2 * ph - kh) / sh + 1, wo = (W + 2 * pw - kw) / sw + 1;
    if (kh * kw == 1 && sh == 1 && sw == 1) return LG_OK; /* a 1x1 window with stride 1 is the identity */
    if (!lg_ox_b_identity(B) && (st = lg_ox_b_close(B, LG_ACT_IDENTITY, 1.0)) != LG_OK) return st;
    lg_conv c = {(int)C, (int)H, (int)W, (int)C, (int)ho, (int)wo, (int)kh, (int)kw, (int)sh, (int)sw, (int)ph, (int)pw};
    if ((st = lg_ox_b_max(B, &c)) != LG_OK) return st;
    B->shape = lg_ox_image_shape(&B->shape, C, ho, wo);
    return LG_OK;
}
