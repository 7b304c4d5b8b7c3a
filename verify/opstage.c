/* opstage.c — the verify stages' node-kind table (opstage.h). */
#include "verify/opstage.h"

#include <string.h>

#include "verify/attack.h"
#include "verify/backsub.h"
#include "verify/backsub_tnode.h"
#include "verify/relax_softmax.h"
#include "verify/bounds.h"
#include "verify/devgrad.h"

static const lg_vopdef lg_vops[LG_LAYER_KIND_COUNT] = {
    [LG_LAYER_MAX] = {.kind = LG_LAYER_MAX, .interval = lg_bounds_max_node, .attack_backward = lg_attack_max_backward,
                      .smear = lg_bab_smear_max, .n_diff = lg_max_n_diff, .symbolic = lg_max_symbolic,
                      .bs_addends = lg_bs_max_addends, .bs_prepare = lg_bs_max_planes, .bs_mag = lg_bs_max_mag,
                      .bs_step = lg_bs_max_step, .bs_terms = lg_bs_max_terms, .bs_value = lg_backsub_max_value,
                      .n_split = lg_bab_max_n_split, .split_score = lg_bab_max_split_score,
                      .split = lg_bab_window_split},
    [LG_LAYER_BILINEAR] = {.kind = LG_LAYER_BILINEAR, .interval = lg_bounds_product,
                           .attack_backward = lg_attack_product_backward, .smear = lg_bab_smear_product,
                           .bs_taddends = lg_bs_product_addends, .bs_n_alpha = 2, .bs_tlen = lg_bs_product_len,
                           .bs_tplanes = lg_bs_product_planes, .bs_tstep = lg_bs_product_step,
                           .reach = lg_reach_product, .relax_rows = lg_product_relax_rows,
                           .dev_vjp = lg_devgrad_product},
    [LG_LAYER_SOFTMAX] = {.kind = LG_LAYER_SOFTMAX, .interval = lg_bounds_softmax,
                          .attack_backward = lg_attack_softmax_backward, .smear = lg_bab_smear_group,
                          .bs_taddends = lg_bs_group_addends, .bs_tlen = lg_bs_group_len,
                          .bs_tplanes = lg_bs_group_planes, .bs_tstep = lg_bs_group_step,
                          .bs_gplanes = lg_bs_softmax_planes, .bs_shift = lg_softmax_shift,
                          .reach = lg_reach_group, .relax_rows = lg_softmax_relax_rows,
                          .dev_vjp = lg_devgrad_softmax},
    [LG_LAYER_LAYERNORM] = {.kind = LG_LAYER_LAYERNORM, .interval = lg_bounds_layernorm,
                            .attack_backward = lg_attack_layernorm_backward, .smear = lg_bab_smear_group,
                            .n_diff = lg_ln_n_diff, .symbolic = lg_ln_symbolic, .diff_forget = lg_ln_forget,
                            .diff_centred = lg_ln_centred,
                            .bs_taddends = lg_bs_group_addends, .bs_tlen = lg_bs_group_len,
                            .bs_tplanes = lg_bs_group_planes, .bs_tstep = lg_bs_group_step,
                            .bs_gplanes = lg_bs_layernorm_planes, .bs_row_len = lg_bs_layernorm_row_len,
                            .bs_row_icpt = lg_layernorm_row_icpt, .reach = lg_reach_group,
                            .relax_rows = lg_layernorm_relax_rows, .dev_vjp = lg_devgrad_layernorm},
};

const lg_vopdef *lg_vop(lg_layer_kind k)
{
    return (unsigned)k < LG_LAYER_KIND_COUNT && lg_vops[k].interval ? &lg_vops[k] : NULL;
}

const lg_vopdef *lg_layer_vop(const lg_layer *L) { return lg_vop(L->lin.kind); }

void lg_bounds_diff_forget(lg_bounds *b, const lg_net *net)
{
    if (!b->dlo) return;
    for (int k = 0; k < net->n_layers && k < b->n_layers; k++) {
        const lg_vopdef *vop = lg_layer_vop(&net->layers[k]);
        if (vop && vop->diff_forget && b->dlo[k]) vop->diff_forget(b, net, k);
    }
}

void lg_reach_group(const lg_layer *L, int o, unsigned char **rel)
{
    int G0 = o / L->lin.op.group * L->lin.op.group;
    if (L->lin.src >= 0) memset(rel[L->lin.src] + G0, 1, (size_t)L->lin.op.group);
}

int lg_bs_group_addends(const lg_layer *L)
{
    return L->lin.op.group;
}
