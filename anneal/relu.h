/* relu.h — ReLU substitution (DESIGN.md §1 "Substitution").
 *
 * lg_anneal_to_relu() turns a λ-GELU (or plain GELU) network into the
 * piecewise-linear network that verify/ and encode/ work on: every gelu,
 * lgelu, swish and prelu activation (lg_act_relu_like) becomes relu (λ = 1, s = 0, as lg_net_init gives relu
 * layers); relu and identity layers stay; shapes, every weight and bias, the
 * input normalisation and the temperature t are copied bit for bit. Applied
 * to a plain GELU network this is the "direct swap" baseline.
 *
 * Ownership: src is borrowed; dst is initialised here (it need not be zeroed)
 * and the caller frees it with lg_net_free(). On failure dst is left zeroed.
 */
#ifndef LG_ANNEAL_RELU_H
#define LG_ANNEAL_RELU_H

#include "core/net.h"

/* 1 if activation a can be replaced by relu (gelu, lgelu, swish, prelu) or is already
 * piecewise linear and kept (relu, identity); 0 for any other value. */
int lg_anneal_act_substitutable(lg_act a);

/* Substitute ReLU for every gelu/lgelu/swish/prelu layer of src into dst.
 * Returns LG_ERR_FORMAT if src fails lg_net_validate, LG_ERR_UNSUPPORTED
 * (naming the layer) for an activation it cannot substitute, LG_ERR_NOMEM. */
lg_status lg_anneal_to_relu(lg_net *dst, const lg_net *src);

/* Number of layers of net whose activation is gelu, lgelu, swish or prelu, i.e. the layers
 * the substitution changes. */
int lg_anneal_count_smooth(const lg_net *net);

#endif
