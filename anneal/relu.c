/* relu.c — ReLU substitution; see relu.h and DESIGN.md §1. */
#include "anneal/relu.h"

#include <stdio.h>
#include <string.h>

int lg_anneal_act_substitutable(lg_act a)
{
    /* sigmoid is bounded and saturating: no ReLU stands for it */
    return a == LG_ACT_IDENTITY || a == LG_ACT_RELU || lg_act_relu_like(a);
}

int lg_anneal_count_smooth(const lg_net *net)
{
    int n = 0;
    for (int k = 0; k < net->n_layers; k++)
        n += lg_act_relu_like(net->layers[k].act);
    return n;
}

lg_status lg_anneal_to_relu(lg_net *dst, const lg_net *src)
{
    memset(dst, 0, sizeof *dst);
    /* Check the activations first so an unknown kind gets its own message
     * (lg_net_validate would call it a format error). */
    for (int k = 0; k < src->n_layers; k++)
        if (!lg_anneal_act_substitutable(src->layers[k].act)) {
            const char *name = lg_act_name(src->layers[k].act);
            char code[48];
            snprintf(code, sizeof code, "of unknown kind %d", (int)src->layers[k].act);
            return lg_fail(LG_ERR_UNSUPPORTED,
                           "layer %d: activation %s has no ReLU substitution; only gelu, lgelu, swish and prelu "
                           "are replaced, relu and identity are kept",
                           k, name ? name : code);
        }
    lg_status st = lg_net_validate(src);
    if (st != LG_OK) return st;
    if ((st = lg_net_copy(dst, src)) != LG_OK) return st;
    for (int k = 0; k < dst->n_layers; k++) {
        lg_layer *L = &dst->layers[k];
        if (lg_act_relu_like(L->act)) {
            L->act = LG_ACT_RELU;
            L->lambda = 1.0;
            L->s = 0.0;
        }
    }
    return LG_OK;
}
