/* netfile.c — the native network file format, read and write (netfile.h). */
#include "core/netfile.h"
#include "core/op.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define LG_NETFILE_MAX_BYTES ((size_t)16 << 30)
#define LG_NETFILE_LAYER_BYTES 32u
#define LG_NETFILE_HEAD_BYTES 32u

/* ---- little-endian writer over a growing buffer ---- */

typedef struct lg_wbuf {
    unsigned char *p;
    size_t len, cap;
    int oom;
} lg_wbuf;

static void lg_wbuf_put(lg_wbuf *w, const void *src, size_t n)
{
    if (w->oom) return;
    if (w->len + n > w->cap) {
        size_t cap = w->cap ? w->cap : 4096;
        while (cap < w->len + n) cap *= 2;
        unsigned char *np = realloc(w->p, cap);
        if (!np) {
            w->oom = 1;
            return;
        }
        w->p = np;
        w->cap = cap;
    }
    memcpy(w->p + w->len, src, n);
    w->len += n;
}

static void lg_put_u32(lg_wbuf *w, uint32_t v)
{
    unsigned char b[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
                          (unsigned char)(v >> 24)};
    lg_wbuf_put(w, b, 4);
}

static void lg_put_f64(lg_wbuf *w, double d)
{
    uint64_t v;
    memcpy(&v, &d, 8);
    unsigned char b[8];
    for (int i = 0; i < 8; i++) b[i] = (unsigned char)(v >> (8 * i));
    lg_wbuf_put(w, b, 8);
}

/* Geometry of a conv term as the 12 u32 fields of the file. */
static void lg_put_conv(lg_wbuf *w, const lg_conv *c)
{
    const int g[LG_NETFILE_CONV_FIELDS] = {c->c_in, c->h_in, c->w_in, c->c_out, c->h_out, c->w_out,
                                          c->kh,   c->kw,   c->sh,   c->sw,    c->ph,    c->pw};
    for (int i = 0; i < LG_NETFILE_CONV_FIELDS; i++) lg_put_u32(w, (uint32_t)g[i]);
}

/* The native format's part of each kind (netfile.h): for a node, the bytes of its fields
 * after the layer header (version 6), their writer, their reader and their check against
 * the layers before it (widths, the layer's n_out); for a kind with index tables, their
 * check as read (term t of layer k). Each reader and check returns LG_OK or a message
 * naming the layer. NULL where a kind has none. Filled after the reader's primitives below. */
struct lg_rbuf;
typedef struct lg_nf_node {
    size_t bytes;
    void (*put)(lg_wbuf *w, const lg_linear *A);
    lg_status (*get)(struct lg_rbuf *r, lg_linear *A, const char *name, uint32_t k);
    lg_status (*check)(const lg_linear *A, uint32_t k, const int *widths, int n_out, const char *name);
    lg_status (*check_maps)(struct lg_rbuf *mr, const lg_linear *A, uint32_t k, int t, const char *name);
} lg_nf_node;
static const lg_nf_node *lg_nf_node_of(lg_layer_kind kind);

static void lg_put_product(lg_wbuf *w, const lg_linear *A)
{
    lg_put_u32(w, (uint32_t)A->op.K);
    lg_put_u32(w, (uint32_t)(int32_t)A->op.src_b);
    lg_put_u32(w, (uint32_t)A->op.n_in_b);
}
static void lg_put_group(lg_wbuf *w, const lg_linear *A) { lg_put_u32(w, (uint32_t)A->op.group); }
static void lg_put_group_eps(lg_wbuf *w, const lg_linear *A)
{
    lg_put_u32(w, (uint32_t)A->op.group);
    lg_put_f64(w, A->op.eps);
}

lg_status lg_netfile_write(const lg_net *net, const char *path)
{
    lg_status st = lg_net_validate(net);
    if (st != LG_OK) return st;
    lg_wbuf w = {0};
    uint32_t version = LG_NETFILE_VERSION_MIN;
    for (int k = 0; k < net->n_layers; k++)
        if ((uint32_t)net->layers[k].act >= LG_NETFILE_V1_ACT_COUNT && version < 2u) version = 2u;
    if (lg_net_has_conv(net)) version = 3u;
    int graph = !lg_net_is_chain(net);
    if (graph) version = 4u; /* the lowest version that holds the net: chains keep writing 1 to 3 */
    if (lg_net_has_max(net)) version = 5u;
    if (lg_net_first_tnode(net) >= 0) version = 6u;
    for (int k = 0; k < net->n_layers; k++)
        for (int t = 0; t < lg_layer_n_lin(&net->layers[k]); t++)
            if (lg_layer_lin(&net->layers[k], t)->kind == LG_LAYER_TOKMAP) version = 7u;
    lg_wbuf_put(&w, LG_NETFILE_MAGIC, 8);
    lg_put_u32(&w, version);
    lg_put_u32(&w, (uint32_t)net->n_in);
    lg_put_u32(&w, (uint32_t)net->n_layers);
    lg_put_u32(&w, (net->in_sub ? 1u : 0u) | (net->in_div ? 2u : 0u));
    lg_put_f64(&w, net->t);
    for (int k = 0; k < net->n_layers; k++) {
        const lg_layer *L = &net->layers[k];
        lg_put_u32(&w, (uint32_t)L->lin.kind);
        lg_put_u32(&w, (uint32_t)L->lin.n_in);
        lg_put_u32(&w, (uint32_t)L->n_out);
        lg_put_u32(&w, (uint32_t)L->act);
        lg_put_f64(&w, L->lambda);
        lg_put_f64(&w, L->s);
        if (lg_layer_is(L, LG_OPF_CONV_GEOM)) lg_put_conv(&w, &L->lin.conv);
        const lg_nf_node *nf = lg_nf_node_of(L->lin.kind); /* a node's fields (its only term) */
        if (nf->put) nf->put(&w, &L->lin);
        if (!graph) continue;
        lg_put_u32(&w, (uint32_t)(int32_t)L->lin.src);
        lg_put_u32(&w, (uint32_t)L->n_terms);
        for (int t = 0; t < L->n_terms; t++) {
            const lg_linear *A = &L->terms[t];
            lg_put_u32(&w, (uint32_t)A->kind);
            lg_put_u32(&w, (uint32_t)A->n_in);
            lg_put_u32(&w, (uint32_t)(int32_t)A->src);
            if (lg_op_is(A->kind, LG_OPF_CONV_GEOM)) lg_put_conv(&w, &A->conv);
        }
    }
    for (int i = 0; net->in_sub && i < net->n_in; i++) lg_put_f64(&w, net->in_sub[i]);
    for (int i = 0; net->in_div && i < net->n_in; i++) lg_put_f64(&w, net->in_div[i]);
    for (size_t i = 0; i < net->n_params; i++) lg_put_f64(&w, net->params[i]);
    for (size_t i = 0; graph && i < net->n_maps; i++) lg_put_u32(&w, (uint32_t)(int32_t)net->maps[i]);
    if (!w.oom) lg_put_u32(&w, (uint32_t)crc32_z(0L, w.p, w.len));
    if (w.oom) {
        free(w.p);
        return lg_fail(LG_ERR_NOMEM, "%s: cannot build the file image", path);
    }
    st = LG_OK;
    FILE *f = fopen(path, "wb");
    if (!f) {
        st = lg_fail(LG_ERR_IO, "%s: cannot open for writing: %s", path, strerror(errno));
        goto done;
    }
    if (fwrite(w.p, 1, w.len, f) != w.len) st = lg_fail(LG_ERR_IO, "%s: write failed: %s", path, strerror(errno));
    if (fclose(f) != 0 && st == LG_OK) st = lg_fail(LG_ERR_IO, "%s: close failed: %s", path, strerror(errno));
done:
    free(w.p);
    return st;
}

/* ---- bounds-checked little-endian reader ---- */

typedef struct lg_rbuf {
    const unsigned char *p;
    size_t len, pos;
} lg_rbuf;

static uint32_t lg_get_u32(lg_rbuf *r)
{
    const unsigned char *b = r->p + r->pos;
    r->pos += 4;
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static double lg_get_f64(lg_rbuf *r)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | r->p[r->pos + (size_t)i];
    r->pos += 8;
    double d;
    memcpy(&d, &v, 8);
    return d;
}

/* Read 12 u32 of conv geometry into *c (each at most LG_NET_MAX_DIM, c_out ≥ 1);
 * LG_OK or a message naming the layer and term. */
static lg_status lg_get_conv(lg_rbuf *r, lg_conv *c, const char *name, uint32_t k, int t)
{
    uint32_t g[LG_NETFILE_CONV_FIELDS];
    if (r->len - 4 - r->pos < 4u * LG_NETFILE_CONV_FIELDS)
        return lg_fail(LG_ERR_FORMAT, "%s: truncated: layer %u, term %d: conv geometry", name, k, t);
    for (int i = 0; i < LG_NETFILE_CONV_FIELDS; i++) {
        g[i] = lg_get_u32(r);
        if (g[i] > LG_NET_MAX_DIM)
            return lg_fail(LG_ERR_FORMAT, "%s: layer %u, term %d: conv geometry field %d = %u out of range", name, k, t,
                           i, g[i]);
    }
    *c = (lg_conv){(int)g[0], (int)g[1], (int)g[2], (int)g[3], (int)g[4],  (int)g[5],
                   (int)g[6], (int)g[7], (int)g[8], (int)g[9], (int)g[10], (int)g[11]};
    if (c->c_out < 1) return lg_fail(LG_ERR_FORMAT, "%s: layer %u, term %d: conv with no output channel", name, k, t);
    return LG_OK;
}

/* Check one term read from the file against the layers before it (no
 * allocation): kind allowed by the version, src earlier, n_in the width of
 * src, conv geometry consistent with the sizes (lg_net_build checks the
 * geometry itself again). */
static lg_status lg_netfile_term_check(const lg_linear *A, uint32_t version, uint32_t k, int t, const int *widths,
                                       int n_out, const char *name)
{
    int kind_ok = A->kind == LG_LAYER_DENSE || (A->kind == LG_LAYER_CONV2D && version >= 3u) ||
                  (A->kind == LG_LAYER_INDEX && version >= 4u) || (A->kind == LG_LAYER_MAX && version >= 5u && t == 0) ||
                  (lg_kind_is_tnode(A->kind) && version >= 6u && t == 0) ||
                  (A->kind == LG_LAYER_TOKMAP && version >= 7u);
    if (!kind_ok)
        return lg_fail(LG_ERR_FORMAT, "%s: layer %u, term %d: unknown layer kind %u in a version %u file", name, k, t,
                       (unsigned)A->kind, version);
    if (A->src < LG_NET_INPUT || A->src >= (int)k)
        return lg_fail(LG_ERR_FORMAT, "%s: layer %u, term %d: reads node %d, expected the input (-1) or an earlier "
                       "layer (0..%d)", name, k, t, A->src, (int)k - 1);
    int w = widths[A->src + 1];
    if (A->n_in != w) {
        if (version < 4u)
            return lg_fail(LG_ERR_FORMAT, "%s: layer %u takes %d inputs, previous layer gives %d", name, k, A->n_in, w);
        return lg_fail(LG_ERR_FORMAT, "%s: layer %u, term %d: takes %d inputs but node %d gives %d", name, k, t, A->n_in,
                       A->src, w);
    }
    if (lg_op_is(A->kind, LG_OPF_CONV_GEOM)) {
        const lg_conv *c = &A->conv;
        if ((size_t)c->c_in * c->h_in * c->w_in != (size_t)A->n_in ||
            (size_t)c->c_out * c->h_out * c->w_out != (size_t)n_out)
            return lg_fail(LG_ERR_FORMAT, "%s: layer %u, term %d: conv geometry %dx%dx%d -> %dx%dx%d does not match "
                           "sizes %d -> %d", name, k, t, c->c_in, c->h_in, c->w_in, c->c_out, c->h_out, c->w_out,
                           A->n_in, n_out);
    }
    const lg_nf_node *nf = lg_nf_node_of(A->kind); /* a node's own fields (the table below) */
    if (nf->check) return nf->check(A, k, widths, n_out, name);
    return LG_OK;
}

/* The readers of the node fields (lg_nf_node). */
static lg_status lg_get_product(lg_rbuf *r, lg_linear *A, const char *name, uint32_t k)
{
    uint32_t K = lg_get_u32(r);
    int32_t sb = (int32_t)lg_get_u32(r);
    uint32_t nb = lg_get_u32(r);
    if (K > LG_NET_MAX_DIM || nb > LG_NET_MAX_DIM)
        return lg_fail(LG_ERR_FORMAT, "%s: layer %u: product node with K = %u, second width %u out of range", name,
                       k, K, nb);
    A->op.K = (int)K;
    A->op.src_b = (int)sb;
    A->op.n_in_b = (int)nb;
    return LG_OK;
}
static lg_status lg_get_group(lg_rbuf *r, lg_linear *A, const char *name, uint32_t k)
{
    uint32_t g = lg_get_u32(r);
    if (g > LG_NET_MAX_DIM)
        return lg_fail(LG_ERR_FORMAT, "%s: layer %u: %s node with group size %u out of range", name, k,
                       lg_kind_name(A->kind), g);
    A->op.group = (int)g;
    return LG_OK;
}
static lg_status lg_get_group_eps(lg_rbuf *r, lg_linear *A, const char *name, uint32_t k)
{
    lg_status st = lg_get_group(r, A, name, k);
    if (st != LG_OK) return st;
    A->op.eps = lg_get_f64(r);
    if (!(A->op.eps > 0.0) || !isfinite(A->op.eps))
        return lg_fail(LG_ERR_FORMAT, "%s: layer %u: layernorm node with eps = %g, expected a finite value > 0",
                       name, k, A->op.eps);
    return LG_OK;
}

/* The checks of the node fields against the layers before the node (lg_nf_node). */
static lg_status lg_check_product(const lg_linear *A, uint32_t k, const int *widths, int n_out, const char *name)
{
    if (A->op.src_b < LG_NET_INPUT || A->op.src_b >= (int)k)
        return lg_fail(LG_ERR_FORMAT, "%s: layer %u: product node reads node %d as its second source, expected the "
                       "input (-1) or an earlier layer (0..%d)", name, k, A->op.src_b, (int)k - 1);
    if (A->op.n_in_b != widths[A->op.src_b + 1])
        return lg_fail(LG_ERR_FORMAT, "%s: layer %u: product node's second source takes %d values but node %d "
                       "gives %d", name, k, A->op.n_in_b, A->op.src_b, widths[A->op.src_b + 1]);
    if (A->op.K < 1 || (size_t)A->op.K * (size_t)n_out > LG_NET_MAX_DIM)
        return lg_fail(LG_ERR_FORMAT, "%s: layer %u: product node with K = %d, expected 1..%d / n_out", name, k,
                       A->op.K, LG_NET_MAX_DIM);
    return LG_OK;
}
static lg_status lg_check_group(const lg_linear *A, uint32_t k, const int *widths, int n_out, const char *name)
{
    (void)widths;
    if (A->op.group < 1 || A->n_in != n_out || n_out % A->op.group != 0)
        return lg_fail(LG_ERR_FORMAT, "%s: layer %u: %s node of width %d -> %d with group size %d, expected the same "
                       "width, a multiple of the group", name, k, lg_kind_name(A->kind), A->n_in, n_out, A->op.group);
    return LG_OK;
}
/* The index tables as read from the maps section (lg_nf_node.check_maps). */
static lg_status lg_maps_product(lg_rbuf *mr, const lg_linear *A, uint32_t k, int t, const char *name)
{
    (void)t;
    size_t nk = (size_t)A->n_out * (size_t)A->op.K;
    for (size_t q = 0; q < 2 * nk; q++) {
        int32_t v = (int32_t)lg_get_u32(mr), lim = q < nk ? A->n_in : A->op.n_in_b;
        if (v < 0 || v >= lim)
            return lg_fail(LG_ERR_FORMAT, "%s: layer %u: product node's index table %s entry %zu = %d, "
                           "expected 0..%d", name, k, q < nk ? "ia" : "ib", q < nk ? q : q - nk, (int)v,
                           (int)lim - 1);
    }
    return LG_OK;
}
static lg_status lg_maps_index(lg_rbuf *mr, const lg_linear *A, uint32_t k, int t, const char *name)
{
    for (int o = 0; o < A->n_out; o++) {
        int32_t v = (int32_t)lg_get_u32(mr);
        if (v < -1 || v >= A->n_in)
            return lg_fail(LG_ERR_FORMAT, "%s: layer %u, term %d: index map entry %d = %d, expected -1..%d",
                           name, k, t, o, (int)v, A->n_in - 1);
    }
    return LG_OK;
}

static const lg_nf_node lg_nf_nodes[LG_LAYER_KIND_COUNT] = {
    [LG_LAYER_INDEX] = {.check_maps = lg_maps_index},
    [LG_LAYER_BILINEAR] = {12u, lg_put_product, lg_get_product, lg_check_product, lg_maps_product},
    [LG_LAYER_SOFTMAX] = {4u, lg_put_group, lg_get_group, lg_check_group, NULL},
    [LG_LAYER_LAYERNORM] = {12u, lg_put_group_eps, lg_get_group_eps, lg_check_group, NULL},
};
static const lg_nf_node *lg_nf_node_of(lg_layer_kind kind)
{
    static const lg_nf_node none = {0};
    return (unsigned)kind < LG_LAYER_KIND_COUNT ? &lg_nf_nodes[kind] : &none;
}

/* Read the fields of a node that follow its layer header (netfile.h, version 6) into
 * A->op; LG_OK or a message naming the layer. */
static lg_status lg_get_tnode(lg_rbuf *r, lg_linear *A, const char *name, uint32_t k)
{
    const lg_nf_node *nf = lg_nf_node_of(A->kind);
    if (r->len - 4 - r->pos < nf->bytes)
        return lg_fail(LG_ERR_FORMAT, "%s: truncated: layer %u: %s node fields", name, k, lg_kind_name(A->kind));
    return nf->get(r, A, name, k);
}

/* Layer k's header: kind, sizes, activation, its conv or node fields, and (version ≥ 4) its
 * source and the count of further terms, into *A0 (term 0), *lo, *act, *nt. */
static lg_status lg_netfile_layer_head(lg_rbuf *r, uint32_t version, uint32_t k, const char *name, lg_linear *A0,
                                       uint32_t *lo, uint32_t *act, uint32_t *nt)
{
    if (r->len - 4 - r->pos < LG_NETFILE_LAYER_BYTES)
        return lg_fail(LG_ERR_FORMAT, "%s: truncated: layer %u's header", name, k);
    lg_status st;
    memset(A0, 0, sizeof *A0);
    uint32_t kind = lg_get_u32(r), li = lg_get_u32(r);
    *lo = lg_get_u32(r);
    *act = lg_get_u32(r);
    r->pos += 16;
    int kind_bad = kind >= LG_LAYER_KIND_COUNT || (kind == LG_LAYER_MAX && version < 5u) ||
                   (lg_kind_is_tnode((lg_layer_kind)kind) && version < 6u) ||
                   (kind == LG_LAYER_TOKMAP && version < 7u);
    if (kind_bad)
        return lg_fail(LG_ERR_FORMAT, "%s: layer %u: unknown layer kind %u in a version %u file", name, k, kind,
                       version);
    if (li > LG_NET_MAX_DIM) return lg_fail(LG_ERR_FORMAT, "%s: layer %u: input size %u out of range", name, k, li);
    A0->kind = (lg_layer_kind)kind;
    A0->n_in = (int)li;
    A0->src = (int)k - 1;
    if (lg_op_is((lg_layer_kind)kind, LG_OPF_CONV_GEOM) && version >= 3u &&
        (st = lg_get_conv(r, &A0->conv, name, k, 0)) != LG_OK)
        return st;
    if (lg_nf_node_of(A0->kind)->get && (st = lg_get_tnode(r, A0, name, k)) != LG_OK) return st;
    if (*lo < 1 || *lo > LG_NET_MAX_DIM)
        return lg_fail(LG_ERR_FORMAT, "%s: layer %u: output size %u out of range", name, k, *lo);
    if (*act >= LG_ACT_COUNT || (version < 2u && *act >= LG_NETFILE_V1_ACT_COUNT))
        return lg_fail(LG_ERR_FORMAT, "%s: layer %u: unknown activation code %u in a version %u file", name, k, *act,
                       version);
    *nt = 0;
    if (version >= 4u) {
        if (r->len - 4 - r->pos < 8)
            return lg_fail(LG_ERR_FORMAT, "%s: truncated: layer %u's source and term count", name, k);
        A0->src = (int)(int32_t)lg_get_u32(r);
        *nt = lg_get_u32(r);
        /* each further term takes at least 12 bytes of the file */
        if (*nt > LG_NET_MAX_LAYERS || (size_t)*nt * 12u > r->len - 4 - r->pos)
            return lg_fail(LG_ERR_FORMAT, "%s: layer %u: %u further terms, expected at most %d (or truncated)", name,
                           k, *nt, LG_NET_MAX_LAYERS);
    }
    return LG_OK;
}

/* Layer k of the header pass: its header and further terms into tm[k] (owned by the caller,
 * freed with tm) and sp[k], each term checked against the widths of the nodes before it;
 * the parameter, index-map and term counts summed. */
static lg_status lg_netfile_layer(lg_rbuf *r, uint32_t version, uint32_t k, const char *name, int *widths,
                                  lg_linear **tm, lg_layer_spec *sp, size_t *n_params, size_t *n_maps, size_t *n_terms)
{
    lg_linear A0;
    uint32_t lo = 0, act = 0, nt = 0;
    lg_status st = lg_netfile_layer_head(r, version, k, name, &A0, &lo, &act, &nt);
    if (st != LG_OK) return st;
    if (!(tm[k] = calloc((size_t)nt + 1, sizeof *tm[k])))
        return lg_fail(LG_ERR_NOMEM, "%s: out of memory", name);
    tm[k][0] = A0;
    for (uint32_t j = 1; j <= nt; j++) {
        lg_linear *A = &tm[k][j];
        if (r->len - 4 - r->pos < 12)
            return lg_fail(LG_ERR_FORMAT, "%s: truncated: layer %u, term %u", name, k, j);
        uint32_t tk = lg_get_u32(r), ti = lg_get_u32(r);
        A->src = (int)(int32_t)lg_get_u32(r);
        if ((tk > LG_LAYER_INDEX && !(tk == LG_LAYER_TOKMAP && version >= 7u)) || ti > LG_NET_MAX_DIM)
            return lg_fail(LG_ERR_FORMAT, "%s: layer %u, term %u: kind %u or input size %u out of range", name, k, j,
                           tk, ti);
        A->kind = (lg_layer_kind)tk;
        A->n_in = (int)ti;
        if (lg_op_is(A->kind, LG_OPF_CONV_GEOM) && (st = lg_get_conv(r, &A->conv, name, k, (int)j)) != LG_OK) return st;
    }
    for (uint32_t j = 0; j <= nt; j++) {
        lg_linear *A = &tm[k][j];
        A->n_out = (int)lo;
        if ((st = lg_netfile_term_check(A, version, k, (int)j, widths, (int)lo, name)) != LG_OK) return st;
        *n_params += lg_linear_n_weights(A);
        if (lg_op(A->kind)->n_map) *n_maps += lg_op(A->kind)->n_map(A);
    }
    *n_params += lo;
    *n_terms += nt;
    widths[k + 1] = (int)lo;
    sp[k] = (lg_layer_spec){(int)lo, (lg_act)act, (int)nt + 1, tm[k]};
    if (*n_params > LG_NET_MAX_PARAMS || *n_maps > LG_NET_MAX_PARAMS)
        return lg_fail(LG_ERR_FORMAT, "%s: more than %zu parameters", name, LG_NET_MAX_PARAMS);

    return LG_OK;
}

/* Every index-map entry (index terms, product nodes' tables) in range, read at pos_maps before
 * the net is allocated. */
static lg_status lg_netfile_check_maps(const unsigned char *buf, size_t len, size_t pos_maps, uint32_t n_layers,
                                       const lg_layer_spec *sp, const char *name)
{
    lg_rbuf mr = {buf, len, pos_maps};
    for (uint32_t k = 0; k < n_layers; k++)
        for (int j = 0; j < sp[k].n_terms; j++) {
            const lg_linear *A = &sp[k].terms[j];
            const lg_nf_node *nf = lg_nf_node_of(A->kind); /* its index tables (the table above) */
            lg_status st = nf->check_maps ? nf->check_maps(&mr, A, k, j, name) : LG_OK;
            if (st != LG_OK) return st;
        }
    return LG_OK;
}

/* The per-layer activation fields (from the layer headers at lpos), the input normalisation
 * and the parameters and index maps into the built net (which owns them). */
static lg_status lg_netfile_values(lg_net *net, lg_rbuf *r, size_t lpos, uint32_t version, uint32_t flags,
                                   const char *name, size_t n_params, size_t n_maps)
{
    r->pos = lpos;
    for (int k = 0; k < net->n_layers; k++) {
        lg_layer *L = &net->layers[k];
        r->pos += 12;
        L->act = (lg_act)lg_get_u32(r);
        L->lambda = lg_get_f64(r);
        L->s = lg_get_f64(r);
        if (lg_layer_is(L, LG_OPF_CONV_GEOM)) r->pos += 4u * LG_NETFILE_CONV_FIELDS;
        r->pos += lg_nf_node_of(L->lin.kind)->bytes;
        if (version < 4u) continue;
        r->pos += 8;
        for (int j = 0; j < L->n_terms; j++)
            r->pos += 12u + (lg_op_is(L->terms[j].kind, LG_OPF_CONV_GEOM) ? 4u * LG_NETFILE_CONV_FIELDS : 0u);
    }
    if (flags & 1u) {
        if (!(net->in_sub = malloc((size_t)net->n_in * sizeof(double))))
            return lg_fail(LG_ERR_NOMEM, "%s: out of memory", name);
        for (int i = 0; i < net->n_in; i++) net->in_sub[i] = lg_get_f64(r);
    }
    if (flags & 2u) {
        if (!(net->in_div = malloc((size_t)net->n_in * sizeof(double))))
            return lg_fail(LG_ERR_NOMEM, "%s: out of memory", name);
        for (int i = 0; i < net->n_in; i++) net->in_div[i] = lg_get_f64(r);
    }
    for (size_t i = 0; i < n_params; i++) net->params[i] = lg_get_f64(r);
    for (size_t i = 0; i < n_maps; i++) net->maps[i] = (int)(int32_t)lg_get_u32(r);
    return LG_OK;
}

lg_status lg_netfile_parse(lg_net *net, const unsigned char *buf, size_t len, const char *name)
{
    memset(net, 0, sizeof *net);
    lg_rbuf r = {buf, len, 0};
    if (len < 8 || memcmp(buf, LG_NETFILE_MAGIC, 8) != 0)
        return lg_fail(LG_ERR_FORMAT, "%s: not an lgelu network file (bad magic)", name);
    if (len < LG_NETFILE_HEAD_BYTES + 4)
        return lg_fail(LG_ERR_FORMAT, "%s: truncated header (%zu bytes)", name, len);
    r.pos = 8;
    uint32_t version = lg_get_u32(&r);
    if (version < LG_NETFILE_VERSION_MIN || version > LG_NETFILE_VERSION)
        return lg_fail(LG_ERR_FORMAT, "%s: file format version %u, this lgelu reads versions %u to %u", name, version,
                       LG_NETFILE_VERSION_MIN, LG_NETFILE_VERSION);
    uint32_t n_in = lg_get_u32(&r), n_layers = lg_get_u32(&r), flags = lg_get_u32(&r);
    double t = lg_get_f64(&r);
    if (n_in < 1 || n_in > LG_NET_MAX_DIM)
        return lg_fail(LG_ERR_FORMAT, "%s: input size %u out of range 1..%d", name, n_in, LG_NET_MAX_DIM);
    if (n_layers < 1 || n_layers > LG_NET_MAX_LAYERS)
        return lg_fail(LG_ERR_FORMAT, "%s: %u layers, expected 1..%d", name, n_layers, LG_NET_MAX_LAYERS);
    if (flags > 3u) return lg_fail(LG_ERR_FORMAT, "%s: unknown flags 0x%x", name, flags);
    if (!(t > 0) || !isfinite(t)) return lg_fail(LG_ERR_FORMAT, "%s: temperature t = %g, expected > 0", name, t);
    if (len - r.pos < (size_t)n_layers * LG_NETFILE_LAYER_BYTES + 4)
        return lg_fail(LG_ERR_FORMAT, "%s: truncated: %zu bytes cannot hold %u layer headers", name, len, n_layers);
    /* read every header first so the expected size is known before any big allocation */
    int *widths = malloc(((size_t)n_layers + 1) * sizeof *widths); /* [1 + k]: width of node k */
    lg_layer_spec *sp = calloc(n_layers, sizeof *sp);
    lg_linear **tm = calloc(n_layers, sizeof *tm);
    if (!widths || !sp || !tm) {
        free(widths);
        free(sp);
        free(tm);
        return lg_fail(LG_ERR_NOMEM, "%s: out of memory", name);
    }
    widths[0] = (int)n_in;
    size_t lpos = r.pos;
    size_t n_params = 0, n_maps = 0, n_terms = 0;
    lg_status st = LG_OK;
    for (uint32_t k = 0; k < n_layers; k++)
        if ((st = lg_netfile_layer(&r, version, k, name, widths, tm, sp, &n_params, &n_maps, &n_terms)) != LG_OK)
            goto fail;
    size_t nnorm = (size_t)((flags & 1u) + ((flags >> 1) & 1u)) * n_in;
    size_t pos_params = r.pos + 8 * nnorm, pos_maps = pos_params + 8 * n_params;
    size_t expect = pos_maps + 4 * n_maps + 4;
    if (len != expect) {
        st = lg_fail(LG_ERR_FORMAT, "%s: %s: file has %zu bytes, header implies %zu", name,
                     len < expect ? "truncated" : "trailing data", len, expect);
        goto fail;
    }
    uint32_t crc_stored;
    {
        lg_rbuf c = {buf, len, len - 4};
        crc_stored = lg_get_u32(&c);
    }
    if ((uint32_t)crc32_z(0L, buf, len - 4) != crc_stored) {
        st = lg_fail(LG_ERR_FORMAT, "%s: checksum mismatch (file is corrupt)", name);
        goto fail;
    }
    if ((st = lg_netfile_check_maps(buf, len, pos_maps, n_layers, sp, name)) != LG_OK) goto fail;
    (void)n_terms;
    st = lg_net_build(net, (int)n_in, (int)n_layers, sp);
    if (st != LG_OK) {
        char msg[900];
        snprintf(msg, sizeof msg, "%s", lg_errmsg());
        st = lg_fail(LG_ERR_FORMAT, "%s: %s", name, msg);
        goto fail;
    }
    net->t = t;
    if ((st = lg_netfile_values(net, &r, lpos, version, flags, name, n_params, n_maps)) != LG_OK) goto fail;
    for (uint32_t k = 0; k < n_layers; k++) free(tm[k]);
    free(tm);
    free(sp);
    free(widths);
    st = lg_net_validate(net);
    if (st != LG_OK) {
        char msg[900];
        snprintf(msg, sizeof msg, "%s", lg_errmsg());
        lg_net_free(net);
        return lg_fail(st, "%s: %s", name, msg);
    }
    if ((st = lg_net_compact_tokmap(net, NULL)) != LG_OK) { /* dense kron(I_T, A) terms of older files */
        lg_net_free(net);
        return lg_fail(st, "%s: out of memory", name);
    }
    return LG_OK;
fail:
    for (uint32_t k = 0; k < n_layers; k++) free(tm[k]);
    free(tm);
    free(sp);
    free(widths);
    lg_net_free(net);
    return st;
}

lg_status lg_netfile_read(lg_net *net, const char *path)
{
    return lg_net_read_with(net, path, LG_NETFILE_MAX_BYTES, lg_netfile_parse);
}
