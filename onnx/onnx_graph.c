/* onnx_graph.c — ONNX constant decoding, tensor-name table, topological
 * order and attribute access (see onnx_internal.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/net.h"
#include "onnx/onnx_internal.h"

static const char *lg_ox_str(const char *s) { return s ? s : ""; }

size_t lg_ox_shape_count(const lg_ox_shape *s)
{
    size_t n = 1;
    for (int i = 0; i < s->rank; i++) {
        if (s->d[i] < 1 || (uint64_t)s->d[i] > LG_NET_MAX_PARAMS) return 0;
        n *= (size_t)s->d[i];
        if (n > LG_NET_MAX_PARAMS) return 0;
    }
    return n;
}

static uint32_t lg_ox_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t lg_ox_le64(const uint8_t *p) { return (uint64_t)lg_ox_le32(p) | (uint64_t)lg_ox_le32(p + 4) << 32; }

lg_status lg_ox_const_decode(lg_ox_const *c, const Onnx__TensorProto *t, const char *file, const char *what)
{
    memset(c, 0, sizeof *c);
    if (t->has_data_location && t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL)
        return lg_fail(LG_ERR_UNSUPPORTED, "%s: tensor %s: external data is not supported", file, what);
    if (t->n_dims > LG_OX_MAX_RANK)
        return lg_fail(LG_ERR_FORMAT, "%s: tensor %s: rank %zu, at most %d supported", file, what, t->n_dims,
                       LG_OX_MAX_RANK);
    c->shape.rank = (int)t->n_dims;
    for (size_t i = 0; i < t->n_dims; i++) {
        if (t->dims[i] < 1 || (uint64_t)t->dims[i] > LG_NET_MAX_PARAMS)
            return lg_fail(LG_ERR_FORMAT, "%s: tensor %s: dimension %zu is %lld, expected 1..%zu", file, what, i,
                           (long long)t->dims[i], LG_NET_MAX_PARAMS);
        c->shape.d[i] = t->dims[i];
    }
    size_t n = lg_ox_shape_count(&c->shape);
    if (n == 0)
        return lg_fail(LG_ERR_FORMAT, "%s: tensor %s: more than %zu elements", file, what, LG_NET_MAX_PARAMS);
    c->n = n;
    c->dtype = t->has_data_type ? t->data_type : 0;
    const int raw = t->has_raw_data;
    const uint8_t *rp = t->raw_data.data;
    size_t rl = t->raw_data.len;
    switch (c->dtype) {
    case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT:
        if (raw ? rl != 4 * n : t->n_float_data != n)
            return lg_fail(LG_ERR_FORMAT, "%s: tensor %s: float data holds %zu values, shape needs %zu", file, what,
                           raw ? rl / 4 : t->n_float_data, n);
        if (!(c->v = malloc(n * sizeof *c->v))) goto oom;
        for (size_t i = 0; i < n; i++) {
            float f;
            if (raw) {
                uint32_t u = lg_ox_le32(rp + 4 * i);
                memcpy(&f, &u, 4);
            } else {
                f = t->float_data[i];
            }
            c->v[i] = (double)f;
        }
        goto check_finite;
    case ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE:
        if (raw ? rl != 8 * n : t->n_double_data != n)
            return lg_fail(LG_ERR_FORMAT, "%s: tensor %s: double data holds %zu values, shape needs %zu", file, what,
                           raw ? rl / 8 : t->n_double_data, n);
        if (!(c->v = malloc(n * sizeof *c->v))) goto oom;
        for (size_t i = 0; i < n; i++) {
            if (raw) {
                uint64_t u = lg_ox_le64(rp + 8 * i);
                memcpy(&c->v[i], &u, 8);
            } else {
                c->v[i] = t->double_data[i];
            }
        }
        goto check_finite;
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT64:
        if (raw ? rl != 8 * n : t->n_int64_data != n)
            return lg_fail(LG_ERR_FORMAT, "%s: tensor %s: int64 data holds %zu values, shape needs %zu", file, what,
                           raw ? rl / 8 : t->n_int64_data, n);
        if (!(c->iv = malloc(n * sizeof *c->iv))) goto oom;
        for (size_t i = 0; i < n; i++) c->iv[i] = raw ? (int64_t)lg_ox_le64(rp + 8 * i) : t->int64_data[i];
        return LG_OK;
    default:
        return lg_fail(LG_ERR_UNSUPPORTED, "%s: tensor %s: data type %d not supported (expected float, double or int64)",
                       file, what, c->dtype);
    }
check_finite:
    /* NaN/Inf never belong in a network's constants: refuse at the tensor */
    for (size_t i = 0; i < n; i++)
        if (!isfinite(c->v[i])) {
            lg_status st = lg_fail(LG_ERR_FORMAT, "%s: tensor %s: value %zu is %g; NaN/Inf refused", file, what, i,
                                   c->v[i]);
            lg_ox_const_free(c);
            return st;
        }
    return LG_OK;
oom:
    return lg_fail(LG_ERR_NOMEM, "%s: tensor %s: out of memory (%zu values)", file, what, n);
}

void lg_ox_const_free(lg_ox_const *c)
{
    free(c->v);
    free(c->iv);
    memset(c, 0, sizeof *c);
}

/* ---- protobuf nesting guard ---- */

static int lg_ox_varint(const uint8_t *p, size_t len, size_t *pos, uint64_t *v)
{
    *v = 0;
    for (int shift = 0; shift < 64 && *pos < len; shift += 7) {
        uint8_t b = p[(*pos)++];
        *v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) return 0;
    }
    return -1;
}

/* Walk the wire format of one message of type desc. Returns -1 if message
 * nesting exceeds max_depth, else 0 (malformed data is left to the real
 * decoder, which reports it). Each byte is visited once. */
static int lg_ox_depth_walk(const uint8_t *p, size_t len, const ProtobufCMessageDescriptor *desc, int depth,
                            int max_depth)
{
    if (depth > max_depth) return -1;
    size_t pos = 0;
    while (pos < len) {
        uint64_t tag, v;
        if (lg_ox_varint(p, len, &pos, &tag)) return 0;
        switch (tag & 7) {
        case 0:
            if (lg_ox_varint(p, len, &pos, &v)) return 0;
            break;
        case 1:
            if (len - pos < 8) return 0;
            pos += 8;
            break;
        case 5:
            if (len - pos < 4) return 0;
            pos += 4;
            break;
        case 2: {
            if (lg_ox_varint(p, len, &pos, &v) || v > len - pos) return 0;
            const ProtobufCFieldDescriptor *f =
                tag >> 3 <= UINT32_MAX ? protobuf_c_message_descriptor_get_field(desc, (unsigned)(tag >> 3)) : NULL;
            if (f && f->type == PROTOBUF_C_TYPE_MESSAGE &&
                lg_ox_depth_walk(p + pos, (size_t)v, f->descriptor, depth + 1, max_depth))
                return -1;
            pos += (size_t)v;
            break;
        }
        default:
            return 0;
        }
    }
    return 0;
}

int lg_ox_nesting_ok(const uint8_t *buf, size_t len, int max_depth)
{
    return lg_ox_depth_walk(buf, len, &onnx__model_proto__descriptor, 0, max_depth) == 0;
}

/* ---- name table ---- */

static size_t lg_ox_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return (size_t)h;
}

long lg_ox_find(const lg_ox_graph *G, const char *name)
{
    if (!G->hcap) return -1;
    for (size_t i = lg_ox_hash(name) & (G->hcap - 1);; i = (i + 1) & (G->hcap - 1)) {
        size_t v = G->hash[i];
        if (v == SIZE_MAX) return -1;
        if (strcmp(G->vals[v].name, name) == 0) return (long)v;
    }
}

/* Add a value; returns its index, or -1 (with message) if the name exists. */
static long lg_ox_add(lg_ox_graph *G, const char *name, int producer)
{
    if (lg_ox_find(G, name) >= 0) return -1;
    LG_ASSERT(G->n_vals < G->cap && 2 * G->cap <= G->hcap);
    size_t k = G->n_vals++;
    memset(&G->vals[k], 0, sizeof G->vals[k]);
    G->vals[k].name = name;
    G->vals[k].producer = producer;
    size_t i = lg_ox_hash(name) & (G->hcap - 1);
    while (G->hash[i] != SIZE_MAX) i = (i + 1) & (G->hcap - 1);
    G->hash[i] = k;
    return (long)k;
}

const char *lg_ox_node_desc(const lg_ox_graph *G, int node)
{
    static _Thread_local char buf[512];
    const Onnx__NodeProto *nd = G->g->node[node];
    snprintf(buf, sizeof buf, "node %d '%.200s' (%.100s)", node, lg_ox_str(nd->name), lg_ox_str(nd->op_type));
    return buf;
}

lg_status lg_ox_graph_init(lg_ox_graph *G, const Onnx__GraphProto *g, const char *file)
{
    memset(G, 0, sizeof *G);
    G->g = g;
    G->file = file;
    lg_status st = LG_OK;
    size_t n_node = g->n_node;
    if (n_node > 1000000 || g->n_initializer > 1000000 || g->n_input > 1000000)
        return lg_fail(LG_ERR_FORMAT, "%s: graph too large (%zu nodes, %zu initializers)", file, n_node,
                       g->n_initializer);
    size_t cap = g->n_initializer + g->n_input + 1;
    for (size_t i = 0; i < n_node; i++) {
        if (g->node[i]->n_output > 64 || g->node[i]->n_input > 64)
            return lg_fail(LG_ERR_FORMAT, "%s: %s has %zu inputs and %zu outputs, expected at most 64", file,
                           lg_ox_node_desc(G, (int)i), g->node[i]->n_input, g->node[i]->n_output);
        cap += g->node[i]->n_output;
    }
    G->cap = cap;
    G->hcap = 16;
    while (G->hcap < 2 * cap) G->hcap *= 2;
    G->vals = calloc(cap, sizeof *G->vals);
    G->hash = malloc(G->hcap * sizeof *G->hash);
    G->order = malloc((n_node + 1) * sizeof *G->order);
    G->in_idx = calloc(n_node + 1, sizeof *G->in_idx);
    G->out_idx = calloc(n_node + 1, sizeof *G->out_idx);
    int *pending = calloc(n_node + 1, sizeof *pending);
    size_t *cons_start = calloc(cap + 1, sizeof *cons_start);
    int *cons = NULL;
    if (!G->vals || !G->hash || !G->order || !G->in_idx || !G->out_idx || !pending || !cons_start) goto oom;
    for (size_t i = 0; i < G->hcap; i++) G->hash[i] = SIZE_MAX;
    /* initializers first, then graph inputs without an initializer */
    for (size_t i = 0; i < g->n_initializer; i++) {
        const char *nm = g->initializer[i]->name;
        if (!nm || !*nm) {
            st = lg_fail(LG_ERR_FORMAT, "%s: initializer %zu has no name", file, i);
            goto fail;
        }
        if (lg_ox_add(G, nm, -1) < 0) {
            st = lg_fail(LG_ERR_FORMAT, "%s: initializer '%s' defined twice", file, nm);
            goto fail;
        }
    }
    for (size_t i = 0; i < g->n_input; i++) {
        const char *nm = g->input[i]->name;
        if (!nm || !*nm) {
            st = lg_fail(LG_ERR_FORMAT, "%s: graph input %zu has no name", file, i);
            goto fail;
        }
        if (lg_ox_find(G, nm) < 0) lg_ox_add(G, nm, -1);
    }
    for (size_t i = 0; i < n_node; i++) {
        const Onnx__NodeProto *nd = g->node[i];
        if (!(G->out_idx[i] = malloc((nd->n_output + 1) * sizeof(int)))) goto oom;
        for (size_t o = 0; o < nd->n_output; o++) {
            const char *nm = nd->output[o];
            if (!nm || !*nm) {
                G->out_idx[i][o] = -1;
                continue;
            }
            long v = lg_ox_add(G, nm, (int)i);
            if (v < 0) {
                st = lg_fail(LG_ERR_FORMAT, "%s: %s: output '%s' is already produced elsewhere", file,
                             lg_ox_node_desc(G, (int)i), nm);
                goto fail;
            }
            G->out_idx[i][o] = (int)v;
        }
    }
    /* resolve inputs; count uses; consumers in CSR form */
    for (size_t i = 0; i < n_node; i++) {
        const Onnx__NodeProto *nd = g->node[i];
        if (!(G->in_idx[i] = malloc((nd->n_input + 1) * sizeof(int)))) goto oom;
        for (size_t j = 0; j < nd->n_input; j++) {
            const char *nm = nd->input[j];
            if (!nm || !*nm) {
                G->in_idx[i][j] = -1;
                continue;
            }
            long v = lg_ox_find(G, nm);
            if (v < 0) {
                st = lg_fail(LG_ERR_FORMAT, "%s: %s: input '%s' is not produced by any node, input or initializer",
                             file, lg_ox_node_desc(G, (int)i), nm);
                goto fail;
            }
            G->in_idx[i][j] = (int)v;
            G->vals[v].uses++;
            cons_start[v + 1]++;
            if (G->vals[v].producer >= 0) pending[i]++;
        }
    }
    for (size_t i = 0; i < g->n_output; i++) {
        const char *nm = g->output[i]->name;
        long v = nm ? lg_ox_find(G, nm) : -1;
        if (v < 0) {
            st = lg_fail(LG_ERR_FORMAT, "%s: graph output '%s' is not produced by any node", file, lg_ox_str(nm));
            goto fail;
        }
        G->vals[v].uses++;
    }
    for (size_t v = 0; v < G->n_vals; v++) cons_start[v + 1] += cons_start[v];
    if (!(cons = malloc((cons_start[G->n_vals] + 1) * sizeof *cons))) goto oom;
    {
        size_t *fill = calloc(G->n_vals + 1, sizeof *fill);
        if (!fill) goto oom;
        for (size_t i = 0; i < n_node; i++)
            for (size_t j = 0; j < g->node[i]->n_input; j++) {
                int v = G->in_idx[i][j];
                if (v >= 0) cons[cons_start[v] + fill[v]++] = (int)i;
            }
        free(fill);
    }
    /* Kahn's algorithm taking the ready node that comes first in the file (a min-heap), so a
     * file in topological order, as ONNX requires, is read in its own order */
    size_t tail = 0, nh = 0;
    int *heap = malloc((n_node + 1) * sizeof *heap);
    if (!heap) goto oom;
    for (size_t i = 0; i < n_node; i++)
        if (pending[i] == 0) heap[nh++] = (int)i; /* ascending: already a heap */
    while (nh > 0) {
        int i = heap[0];
        heap[0] = heap[--nh];
        for (size_t q = 0;;) { /* sift down */
            size_t l = 2 * q + 1, r = l + 1, sm = q;
            if (l < nh && heap[l] < heap[sm]) sm = l;
            if (r < nh && heap[r] < heap[sm]) sm = r;
            if (sm == q) break;
            int t = heap[q];
            heap[q] = heap[sm];
            heap[sm] = t;
            q = sm;
        }
        G->order[tail++] = i;
        for (size_t o = 0; o < g->node[i]->n_output; o++) {
            int v = G->out_idx[i][o];
            if (v < 0) continue;
            for (size_t c = cons_start[v]; c < cons_start[v + 1]; c++)
                if (--pending[cons[c]] == 0) { /* sift up */
                    size_t q = nh++;
                    heap[q] = cons[c];
                    while (q > 0 && heap[(q - 1) / 2] > heap[q]) {
                        int t = heap[q];
                        heap[q] = heap[(q - 1) / 2];
                        heap[(q - 1) / 2] = t;
                        q = (q - 1) / 2;
                    }
                }
        }
    }
    free(heap);
    if (tail != n_node) {
        size_t bad = 0;
        while (bad < n_node && pending[bad] == 0) bad++;
        st = lg_fail(LG_ERR_FORMAT, "%s: the graph has a cycle (%s depends on its own output)", file,
                     lg_ox_node_desc(G, (int)bad));
        goto fail;
    }
    free(pending);
    free(cons_start);
    free(cons);
    return LG_OK;
oom:
    st = lg_fail(LG_ERR_NOMEM, "%s: out of memory building the graph", file);
fail:
    free(pending);
    free(cons_start);
    free(cons);
    lg_ox_graph_free(G);
    return st;
}

void lg_ox_graph_free(lg_ox_graph *G)
{
    for (size_t v = 0; v < G->n_vals; v++) lg_ox_const_free(&G->vals[v].c);
    if (G->g) {
        for (size_t i = 0; i < G->g->n_node; i++) {
            if (G->in_idx) free(G->in_idx[i]);
            if (G->out_idx) free(G->out_idx[i]);
        }
    }
    free(G->in_idx);
    free(G->out_idx);
    free(G->vals);
    free(G->hash);
    free(G->order);
    memset(G, 0, sizeof *G);
}

const Onnx__AttributeProto *lg_ox_attr(const Onnx__NodeProto *nd, const char *name)
{
    for (size_t i = 0; i < nd->n_attribute; i++)
        if (nd->attribute[i]->name && strcmp(nd->attribute[i]->name, name) == 0) return nd->attribute[i];
    return NULL;
}

int lg_ox_attr_int(const lg_ox_graph *G, int node, const char *name, int64_t *out)
{
    const Onnx__AttributeProto *a = lg_ox_attr(G->g->node[node], name);
    if (!a) return 0;
    if ((a->has_type && a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT) || (!a->has_type && !a->has_i)) {
        lg_fail(LG_ERR_FORMAT, "%s: %s: attribute '%s' must be an int", G->file, lg_ox_node_desc(G, node), name);
        return -1;
    }
    *out = a->i;
    return 1;
}

int lg_ox_attr_float(const lg_ox_graph *G, int node, const char *name, double *out)
{
    const Onnx__AttributeProto *a = lg_ox_attr(G->g->node[node], name);
    if (!a) return 0;
    if ((a->has_type && a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT) || (!a->has_type && !a->has_f)) {
        lg_fail(LG_ERR_FORMAT, "%s: %s: attribute '%s' must be a float", G->file, lg_ox_node_desc(G, node), name);
        return -1;
    }
    if (!isfinite(a->f)) {
        lg_fail(LG_ERR_FORMAT, "%s: %s: attribute '%s' is %g; NaN/Inf refused", G->file, lg_ox_node_desc(G, node), name,
                (double)a->f);
        return -1;
    }
    *out = (double)a->f;
    return 1;
}
