/* vit_net.h — a trained ViT (train/vit.h) as an lg_net, so every stage that
 * takes the Transformer node kinds (product, softmax, layernorm; core/net.h)
 * works on it (DESIGN.md §1 "Training a Transformer", "A ViT as a graph").
 *
 * Nodes, tokens row-major [T][D]: a conv (the patch embedding, kernel and
 * stride P) and an index map to the tokens (class token and position
 * embedding as its bias); per block a layernorm node, the Q, K, V sums
 * (per-token maps, 1/√d_h folded into Q), a product node Q_h·K_hᵀ
 * (K = d_h), a softmax node (groups of T), a product node P·V_h (K = T), the
 * output projection plus an identity shortcut, a layernorm node, the MLP's
 * first layer with the activation and its λ, the second plus a shortcut;
 * a final layernorm node, the head as a per-token map on every token
 * (block W_h, bias b_h; both over T for mean pooling) and the logits: an
 * index term reading the class token's outputs, or for mean pooling the
 * sum of T index terms, one per token (bias 0). So the graph trainer
 * trains the same parameters as the ViT's head, which reads only the class
 * token (or the mean).
 *
 * lg_net_to_vit is the inverse: it reads such a net back into a trainable
 * ViT (also the earlier form whose head is one dense term over every
 * token's values, zero outside the class token's row or 1/T of each row;
 * the ViT it returns writes the form above), refusing (LG_ERR_ARG, naming the first layer that differs) any net
 * that is not exactly of this form. The class token and the first row of
 * the position embedding are one bias in the net; they come back as
 * cls = that bias rounded to float, pos = the rest; the head's two biases
 * come back as b_h = their sum (per token, times T for mean pooling), so the round trip
 * net → ViT → net is exact (when the rest fits a float: DESIGN.md §1
 * "Training a Transformer").
 *
 * Ownership: lg_vit_to_net allocates net (lg_net_free releases it);
 * lg_net_to_vit initialises m (lg_vit_free releases it; on failure m is
 * zeroed) and only reads net.
 */
#ifndef LG_TRAIN_VIT_NET_H
#define LG_TRAIN_VIT_NET_H

#include "core/net.h"
#include "train/model.h"
#include "train/vit.h"

/* The net computing m's logits (in double, from the float parameters). */
lg_status lg_vit_to_net(const lg_vit *m, lg_net *net);

/* Layers per encoder block in that net, and the total for L blocks. */
#define LG_VIT_NET_PER_BLOCK 11
#define LG_VIT_NET_LAYERS(L) (5 + LG_VIT_NET_PER_BLOCK * (L))

/* 1 if net has a product, softmax or layernorm node (a Transformer). */
int lg_net_has_tnode(const lg_net *net);

/* The ViT (batches up to max_batch) whose lg_vit_to_net is net; name is the
 * file named in errors. */
lg_status lg_net_to_vit(const lg_net *net, lg_vit *m, int max_batch, const char *name);

/* Set m's reference parameterisation (train/model.h p_scale, p_count) to the
 * ViT's, so the graph trainer on m (built from net, the form lg_vit_to_net
 * writes) steps as train/vit.c steps the ViT: W_q, b_q at scale 1/√d_h, the
 * class token's row of the token bias as cls + pos (two copies), the head's
 * per-token bias held (b_h trains in the logits layer), W_h at 1/T for mean
 * pooling. LG_ERR_ARG for a net not of that form; m owns the arrays. */
lg_status lg_vit_model_param(lg_model *m, const lg_net *net);

#endif
