/* node.c — the table of the trainer's node entries (node.h). */
#include "train/node.h"

static const lg_train_op lg_train_ops[LG_LAYER_KIND_COUNT] = {
    [LG_LAYER_BILINEAR] = {.kind = LG_LAYER_BILINEAR, .plan_len = lg_tnode_bilinear_plan_len,
                           .plan = lg_tnode_bilinear_plan, .forward = lg_tnode_bilinear_forward,
                           .backward = lg_tnode_bilinear_backward},
    [LG_LAYER_SOFTMAX] = {.kind = LG_LAYER_SOFTMAX, .forward = lg_tnode_softmax_forward,
                          .backward = lg_tnode_softmax_backward},
    [LG_LAYER_LAYERNORM] = {.kind = LG_LAYER_LAYERNORM, .keep = lg_tnode_layernorm_keep,
                            .forward = lg_tnode_layernorm_forward, .backward = lg_tnode_layernorm_backward},
};

const lg_train_op *lg_train_op_of(lg_layer_kind k)
{
    if ((int)k < 0 || (int)k >= LG_LAYER_KIND_COUNT || !lg_train_ops[k].forward) return NULL;
    return &lg_train_ops[k];
}

size_t lg_train_op_keep(const lg_linear *A)
{
    const lg_train_op *e = lg_train_op_of(A->kind);
    return e && e->keep ? e->keep(A) : 0;
}

size_t lg_train_op_plan_len(const lg_linear *A)
{
    const lg_train_op *e = lg_train_op_of(A->kind);
    return e && e->plan_len ? e->plan_len(A) : 0;
}
