/* arch_vit.h — the ViT/DeiT encoder form of the `--arch` grammar
 * (docs/USAGE.md "Architectures", DESIGN.md §1 "Training a Transformer").
 *
 *   CxHxW,vit:p<P>,d<D>,h<NH>,L<L>,m<M>,cls|mean,<N>
 *
 * P×P patches (P divides H and W), each mapped linearly to a token of width
 * D; a learned class token (cls) or mean pooling over the tokens (mean);
 * learned position embeddings; L pre-norm encoder blocks
 *   x ↦ x + Attn(LN₁(x)),  x ↦ x + W₂·act(W₁·LN₂(x) + b₁) + b₂
 * with NH heads (NH divides D) and MLP width M; a final LayerNorm and a dense
 * head of width N (the classes). The fields after "vit:" may come in any
 * order; each is required once, the pooling defaults to cls. The MLPs get
 * the hidden activation of `train --act`, one λ per MLP.
 *
 * Plain values, nothing owned.
 */
#ifndef LG_ARCH_VIT_H
#define LG_ARCH_VIT_H

#include "core/status.h"

typedef struct lg_vit_spec {
    int C, H, W;      /* input image */
    int patch;        /* P */
    int dim;          /* D, token width */
    int heads;        /* NH, D % NH == 0 */
    int depth;        /* L ≥ 1 encoder blocks */
    int mlp;          /* M, MLP hidden width */
    int cls;          /* 1: class token, 0: mean pooling */
    int n_out;        /* classes */
} lg_vit_spec;

/* 1 when the architecture text has a "vit:" token (it is then parsed by
 * lg_arch_vit_parse, not lg_arch_parse). */
int lg_arch_is_vit(const char *s);

/* Parse s. LG_OK, or LG_ERR_ARG naming the token and what was expected. */
lg_status lg_arch_vit_parse(lg_vit_spec *v, const char *s);

/* Tokens (patches, plus the class token) and floats per patch. */
int lg_vit_n_patches(const lg_vit_spec *v);
int lg_vit_n_tokens(const lg_vit_spec *v);
int lg_vit_patch_len(const lg_vit_spec *v);

#endif
