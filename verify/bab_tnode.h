/* bab_tnode.h — branch and bound on the unstable ReLUs of a net with
 * Transformer nodes (DESIGN.md §3 "Back-substitution through the
 * Transformer nodes"), for nets with too many inputs to split them.
 *
 * A split of ReLU neuron j (pre-activation bounds [l, u], l < 0 < u) makes
 * two domains, z_j ≥ 0 and z_j ≤ 0, which cover the box; in each the
 * neuron's bounds become [0, u] or [l, 0] (so it is stable there: the
 * identity or zero, no relaxation) and every other bound stays the root's
 * (still sound: each holds on the whole box). A domain is closed when every
 * term has a constraint whose back-substitution lower bound through the
 * nodes (lg_bounds_objective_lower on the domain's bounds) is > 0; the
 * property is proved when every leaf is closed. No β: the split constraint
 * is not carried to the input, the concretisation is over the whole box
 * (a relaxation of the domain, so sound and weaker than β-CROWN).
 *
 * Order: one static order of the unstable neurons, by the root's
 * back-substitution coefficient of the property's open rows times the
 * triangle relaxation's gap −l·u/(u − l) (a BaBSR-like score), largest
 * first; depth d splits the d-th neuron. Depth first; the search gives up
 * (OPEN) at the first leaf it cannot close at depth LG_BAB_TNODE_DEPTH or
 * when the neurons run out, and at run's deadline (lg_bab_run then splits
 * the inputs in the time left).
 *
 * Memory: one working copy of the bounds; the caller owns the rest.
 */
#ifndef LG_BAB_TNODE_H
#define LG_BAB_TNODE_H

#include "verify/bab.h"

#define LG_BAB_TNODE_DEPTH 40

/* 1 when net has a ReLU layer with an unstable neuron in root. */
int lg_bab_tnode_has_unstable(const lg_net *net, const lg_bounds *root);

/* The search above on root's bounds (those of the box) against the terms
 * (a disjunction; each a conjunction of coef·y + d ≤ 0). out: answer
 * PROVED or OPEN (how.stage RELU_SPLIT, how.reason on OPEN), nodes,
 * max_depth, t_bounds. LG_ERR_NOMEM; a timeout is OPEN, not an error. */
lg_status lg_bab_tnode_relu(const lg_net *net, int n_terms, const lg_term *terms, const lg_bounds *root,
                            const lg_runctx *run, lg_bab_out *out);

#endif
