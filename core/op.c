/* op.c — the node-kind table (op.h): one entry per lg_layer_kind, pointing
 * at the kind's own file (op_tokmap.c, op_max.c, op_bilinear.c, op_softmax.c,
 * op_layernorm.c; the linear kinds' parts are net.c and linop.c), and the
 * helpers every stage reads the table through. No allocation except
 * lg_net_lower_nodes (op_max_lower.c). */
#include "core/op.h"

#include <stddef.h>
#include <stdio.h>

#include "core/linop.h"

static size_t lg_op_w_dense(const lg_linear *A) { return (size_t)A->n_out * (size_t)A->n_in; }
static size_t lg_op_w_conv(const lg_linear *A)
{
    return (size_t)A->conv.c_out * (size_t)A->conv.c_in * (size_t)A->conv.kh * (size_t)A->conv.kw;
}
static size_t lg_op_w_tokmap(const lg_linear *A) { return (size_t)A->conv.c_out * (size_t)A->conv.c_in; }
static size_t lg_op_w_none(const lg_linear *A)
{
    (void)A;
    return 0;
}
static size_t lg_op_map_index(const lg_linear *A) { return (size_t)(A->n_out > 0 ? A->n_out : 0); }

static lg_status lg_op_values_index(const lg_net *net, int k, int t, const lg_linear *A)
{
    (void)net;
    for (int o = 0; o < A->n_out; o++)
        if (A->map[o] < -1 || A->map[o] >= A->n_in)
            return lg_fail(LG_ERR_FORMAT, "layer %d, term %d: index map entry %d = %d, expected -1..%d", k, t, o,
                           A->map[o], A->n_in - 1);
    return LG_OK;
}

lg_status lg_group_check_shape(const lg_net *net, int k, const lg_linear *A, int n_out, lg_status code)
{
    (void)net;
    const char *nm = lg_kind_name(A->kind);
    const lg_nodeop *p = &A->op;
    if (p->src_b != 0 || p->n_in_b != 0 || p->K != 0)
        return lg_fail(code, "layer %d: %s node with a second source or K (product fields)", k, nm);
    if (A->n_in != n_out)
        return lg_fail(code, "layer %d: %s node maps %d values to %d, expected the same number", k, nm, A->n_in,
                       n_out);
    if (p->group < 1 || n_out % p->group != 0)
        return lg_fail(code, "layer %d: %s node with group size %d, expected a divisor of its width %d", k, nm,
                       p->group, n_out);
    return LG_OK;
}

enum { LIN_ = LG_OPF_LINEAR | LG_OPF_PWL | LG_OPF_RATIONAL };

static const lg_opdef lg_ops[LG_LAYER_KIND_COUNT] = {
    [LG_LAYER_DENSE] = {.kind = LG_LAYER_DENSE, .name = "dense", .flags = LIN_, .n_weights = lg_op_w_dense},
    [LG_LAYER_CONV2D] = {.kind = LG_LAYER_CONV2D, .name = "conv", .flags = LIN_ | LG_OPF_CONV_GEOM,
                         .n_weights = lg_op_w_conv, .check_shape = lg_conv_check_shape,
                         .describe = lg_conv_describe},
    [LG_LAYER_INDEX] = {.kind = LG_LAYER_INDEX, .name = "index map", .flags = LIN_ | LG_OPF_MAP,
                        .n_weights = lg_op_w_none, .n_map = lg_op_map_index, .check_values = lg_op_values_index},
    [LG_LAYER_TOKMAP] = {.kind = LG_LAYER_TOKMAP, .name = "per-token map", .flags = LIN_ | LG_OPF_CONV_GEOM,
                         .n_weights = lg_op_w_tokmap, .check_shape = lg_tokmap_check_shape,
                         .describe = lg_tokmap_describe},
    [LG_LAYER_MAX] = {.kind = LG_LAYER_MAX, .name = "max-pool",
                      .flags = LG_OPF_NODE | LG_OPF_PWL | LG_OPF_RATIONAL | LG_OPF_CONV_GEOM,
                      .n_weights = lg_op_w_none, .check_shape = lg_max_check_shape, .forward = lg_max_node_forward,
                      .exact_z = lg_max_exact_z, .exact_q = lg_max_exact_q, .describe = lg_max_describe, .enclose = lg_max_enclose, .lower = lg_net_lower_max},
    [LG_LAYER_BILINEAR] = {.kind = LG_LAYER_BILINEAR, .name = "product",
                           .flags = LG_OPF_NODE | LG_OPF_TNODE | LG_OPF_RATIONAL | LG_OPF_MAP | LG_OPF_TWO_SRC,
                           .n_weights = lg_op_w_none, .n_map = lg_bilinear_n_map,
                           .check_shape = lg_bilinear_check_shape, .check_values = lg_bilinear_check_values,
                           .forward = lg_bilinear_forward, .exact_z = lg_bilinear_exact_z,
                           .exact_q = lg_bilinear_exact_q, .describe = lg_bilinear_describe,
                           .enclose = lg_bilinear_enclose},
    [LG_LAYER_SOFTMAX] = {.kind = LG_LAYER_SOFTMAX, .name = "softmax", .flags = LG_OPF_NODE | LG_OPF_TNODE,
                          .n_weights = lg_op_w_none, .check_shape = lg_softmax_check_shape,
                          .check_values = lg_softmax_check_values, .forward = lg_softmax_node_forward,
                          .describe = lg_softmax_describe, .enclose = lg_softmax_enclose},
    [LG_LAYER_LAYERNORM] = {.kind = LG_LAYER_LAYERNORM, .name = "layernorm", .flags = LG_OPF_NODE | LG_OPF_TNODE,
                            .n_weights = lg_layernorm_n_weights, .check_shape = lg_layernorm_check_shape,
                            .check_values = lg_layernorm_check_values, .forward = lg_layernorm_node_forward,
                            .describe = lg_layernorm_describe, .enclose = lg_layernorm_enclose},
};
/* A kind out of range (a hostile file before validation): no flags; weights counted as dense. */
static const lg_opdef lg_op_unknown = {.kind = LG_LAYER_DENSE, .name = "unknown", .n_weights = lg_op_w_dense};

const lg_opdef *lg_op(lg_layer_kind k)
{
    return (unsigned)k < LG_LAYER_KIND_COUNT ? &lg_ops[k] : &lg_op_unknown;
}

int lg_op_is(lg_layer_kind k, unsigned flags) { return (lg_op(k)->flags & flags) == flags; }
const lg_opdef *lg_layer_op(const lg_layer *L) { return lg_op(L->lin.kind); }
int lg_layer_is(const lg_layer *L, unsigned flags) { return lg_op_is(L->lin.kind, flags); }
int lg_layer_single(const lg_layer *L) { return L->n_terms == 0; }

size_t lg_linear_n_map(const lg_linear *A)
{
    const lg_opdef *op = lg_op(A->kind);
    return op->n_map ? op->n_map(A) : 0;
}

const char *lg_kind_name(lg_layer_kind k) { return lg_op(k)->name; }
int lg_kind_is_tnode(lg_layer_kind k) { return lg_op_is(k, LG_OPF_TNODE); }
int lg_layer_is_tnode(const lg_layer *L) { return lg_kind_is_tnode(L->lin.kind); }

int lg_net_first_without(const lg_net *net, unsigned flags)
{
    for (int k = 0; k < net->n_layers; k++)
        if (!(lg_layer_op(&net->layers[k])->flags & flags)) return k;
    return -1;
}

int lg_net_has_lowering(const lg_net *net)
{
    for (int k = 0; k < net->n_layers; k++)
        if (lg_layer_op(&net->layers[k])->lower) return 1;
    return 0;
}

int lg_net_first_tnode(const lg_net *net)
{
    for (int k = 0; k < net->n_layers; k++)
        if (lg_layer_is_tnode(&net->layers[k])) return k;
    return -1;
}

lg_status lg_net_require_no_tnode(const lg_net *net, const char *stage)
{
    int k = lg_net_first_tnode(net);
    if (k < 0) return LG_OK;
    return lg_fail(LG_ERR_UNSUPPORTED, "%s does not take the %s node (layer %d) yet", stage,
                   lg_layer_op(&net->layers[k])->name, k);
}

lg_status lg_net_require_no_max(const lg_net *net, const char *stage)
{
    if (lg_net_require_no_tnode(net, stage) != LG_OK) return LG_ERR_UNSUPPORTED;
    for (int k = 0; k < net->n_layers; k++) { /* a node kind with an exact ReLU form: max-pool */
        const lg_opdef *op = lg_layer_op(&net->layers[k]);
        if (op->lower) return lg_fail(LG_ERR_UNSUPPORTED, "%s does not take networks with %s nodes", stage, op->name);
    }
    return LG_OK;
}

void lg_tnode_forward(const lg_net *net, const lg_layer *L, const double *vals, double *z)
{
    const lg_opdef *op = lg_layer_op(L);
    op->forward(&L->lin, vals + lg_net_node_offset(net, lg_layer_src(L, 0)),
                (op->flags & LG_OPF_TWO_SRC) ? vals + lg_net_node_offset(net, lg_layer_src(L, 1)) : NULL, z);
}
