/* opstage.c — the verify stages' node-kind table (opstage.h). */
#include "verify/opstage.h"

#include "verify/attack.h"
#include "verify/backsub.h"
#include "verify/bounds.h"

static const lg_vopdef lg_vops[LG_LAYER_KIND_COUNT] = {
    [LG_LAYER_MAX] = {.kind = LG_LAYER_MAX, .interval = lg_bounds_max_node, .attack_backward = lg_attack_max_backward,
                      .smear = lg_bab_smear_max, .n_diff = lg_max_n_diff, .symbolic = lg_max_symbolic,
                      .bs_addends = lg_bs_max_addends, .bs_prepare = lg_bs_max_planes, .bs_mag = lg_bs_max_mag,
                      .bs_step = lg_bs_max_step, .bs_terms = lg_bs_max_terms, .bs_value = lg_backsub_max_value,
                      .n_split = lg_bab_max_n_split, .split_score = lg_bab_max_split_score,
                      .split = lg_bab_window_split},
    [LG_LAYER_BILINEAR] = {.kind = LG_LAYER_BILINEAR, .interval = lg_bounds_product,
                           .attack_backward = lg_attack_product_backward, .smear = lg_bab_smear_product,
                           .bs_n_alpha = 2, .relax_rows = lg_product_relax_rows},
    [LG_LAYER_SOFTMAX] = {.kind = LG_LAYER_SOFTMAX, .interval = lg_bounds_softmax,
                          .attack_backward = lg_attack_softmax_backward, .smear = lg_bab_smear_group,
                          .relax_rows = lg_softmax_relax_rows},
    [LG_LAYER_LAYERNORM] = {.kind = LG_LAYER_LAYERNORM, .interval = lg_bounds_layernorm,
                            .attack_backward = lg_attack_layernorm_backward, .smear = lg_bab_smear_group,
                            .n_diff = lg_ln_n_diff, .symbolic = lg_ln_symbolic,
                            .relax_rows = lg_layernorm_relax_rows},
};

const lg_vopdef *lg_vop(lg_layer_kind k)
{
    return (unsigned)k < LG_LAYER_KIND_COUNT && lg_vops[k].interval ? &lg_vops[k] : NULL;
}

const lg_vopdef *lg_layer_vop(const lg_layer *L) { return lg_vop(L->lin.kind); }
