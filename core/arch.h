/* arch.h — the `--arch` grammar (docs/USAGE.md "Architectures"): one text
 * names a network's shape, chain or residual, for `train`, the study grid and
 * the benchmarks. Parsing yields the layer specs of lg_net_build; building
 * allocates the net and fills its index maps (every index map an architecture
 * makes is the identity of a shortcut).
 *
 * Tokens, comma-separated, the input first (N or CxHxW):
 *   N                      dense layer of width N
 *   c<C>k<K>[x<K2>][s<S>[x<S2>]][p<P>[x<P2>]]
 *                          conv layer (needs an image before it)
 *   r<N>[x<R>]             R residual dense blocks (default 1): h ↦ act(W₂·act(W₁·h + b₁) + b₂ + P·h),
 *                          P the identity when h has width N, else a dense projection
 *   m<N>:<H>[x<R>]         R Transformer-style MLP blocks: h ↦ h + W₂·act(W₁·h + b₁) + b₂, hidden
 *                          width H, no activation after the sum; h must have width N
 *   rc<C>k<K>[s<S>][x<R>]  R residual conv blocks (ResNet's basic block, no normalisation): two
 *                          K×K convs with "same" padding (K odd), the first with stride S, and a
 *                          shortcut that is the identity when the shape is kept, else a 1×1 conv of
 *                          stride S
 * The last token is the output layer (dense, identity activation); every
 * other layer gets the hidden activation given at build time, except an m
 * block's second layer (identity).
 *
 * Ownership: lg_arch_parse allocates the specs and terms (one allocation
 * each); lg_arch_free releases them; a zeroed lg_arch frees as a no-op.
 */
#ifndef LG_ARCH_H
#define LG_ARCH_H

#include "core/net.h"

typedef struct lg_arch {
    int n_in;               /* input width (C·H·W for an image) */
    int n_layers;
    lg_layer_spec *specs;   /* [n_layers]; act = LG_ACT_IDENTITY, see hidden */
    unsigned char *hidden;  /* [n_layers]: 1 where the layer gets the hidden activation */
    lg_linear *terms;       /* every layer's terms, layer by layer (specs point here) */
    int chain;              /* 1 when the text has no block token (a chain of dense and conv layers) */
} lg_arch;

/* Parse s. LG_OK, or LG_ERR_ARG with a message naming the token (its number
 * and text) and what was expected there; *a is then zeroed. */
lg_status lg_arch_parse(lg_arch *a, const char *s);
/* Build the net of a parsed architecture with hidden activation `hidden`
 * (parameters zero, λ as lg_net_init; identity maps filled). */
lg_status lg_arch_build(lg_net *net, const lg_arch *a, lg_act hidden);
/* Parse and build in one call. */
lg_status lg_arch_net(lg_net *net, const char *s, lg_act hidden);
void lg_arch_free(lg_arch *a);

#endif
