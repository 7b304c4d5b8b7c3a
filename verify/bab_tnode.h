/* bab_tnode.h — branch and bound on the unstable ReLUs of a net with
 * Transformer nodes (DESIGN.md §3 "Back-substitution through the
 * Transformer nodes"), for nets with too many inputs to split them.
 *
 * A split of ReLU neuron j of layer k (pre-activation bounds [l, u],
 * l < 0 < u) makes two domains, z_j ≥ 0 and z_j ≤ 0, which cover the
 * parent's; in each the neuron's bounds become [0, u] or [l, 0] (stable
 * there: the identity or zero, no relaxation), and the intermediate bounds
 * of every layer after k — the Transformer nodes' sources and the later
 * ReLU layers — are recomputed on the domain (lg_bounds_symbolic_from, each
 * kept where tighter than the parent's: the parent's bounds hold on the
 * child, so every earlier split stays in force), so a split in one block's
 * MLP tightens the later blocks' products, softmax and layernorm planes.
 * A domain whose recomputed bounds cross (lo > hi) holds no input: closed.
 * A domain is closed when every term has a constraint whose
 * back-substitution lower bound through the nodes (lg_bounds_objective_lower
 * on the domain's bounds, then the α search of alpha_tnode.h) is > 0; the
 * property is proved when every domain is closed. No β: the split
 * constraint enters only through the bounds, the concretisation is over the
 * whole box (a relaxation of the domain, so sound and weaker than
 * β-CROWN).
 *
 * Order: the unstable neurons ranked once at the root by the
 * back-substitution coefficient of the property's rows times the triangle
 * relaxation's gap −l·u/(u − l) (a BaBSR-like score); a domain is split on
 * the best-ranked neuron still unstable in it. Best first: the open domain
 * with the lowest bound (its worst term's best row) is split next, so a
 * hard domain does not end the search while time remains. The search gives
 * up (OPEN) when an open domain has nothing left to split or reaches depth
 * LG_BAB_TNODE_DEPTH, when the open domains' bounds would pass
 * LG_BAB_TNODE_OPEN_MB, and at run's deadline (lg_bab_run then splits the
 * inputs in the time left).
 *
 * Memory: one working copy of the bounds and each open domain's bounds
 * (freed on return); the caller owns the rest.
 */
#ifndef LG_BAB_TNODE_H
#define LG_BAB_TNODE_H

#include "verify/bab.h"

#define LG_BAB_TNODE_DEPTH 40
/* Memory for the open domains' bounds, in MB. */
#define LG_BAB_TNODE_OPEN_MB 256.0

/* 1 when net has a ReLU layer with an unstable neuron in root. */
int lg_bab_tnode_has_unstable(const lg_net *net, const lg_bounds *root);

/* The search above on root's bounds (those of the box) against the terms
 * (a disjunction; each a conjunction of coef·y + d ≤ 0). out: answer
 * PROVED or OPEN (how.stage RELU_SPLIT, how.reason on OPEN), nodes,
 * max_depth, t_bounds. LG_ERR_NOMEM; a timeout is OPEN, not an error. */
lg_status lg_bab_tnode_relu(const lg_net *net, int n_terms, const lg_term *terms, const lg_bounds *root,
                            const lg_runctx *run, lg_bab_out *out);

/* Tests only: the same search with one child of every split dropped (side
 * 0: z ≥ 0, 1: z ≤ 0; unsound: a mutant the tests must catch). */
lg_status lg_bab_tnode_relu_mutant(const lg_net *net, int n_terms, const lg_term *terms, const lg_bounds *root,
                                   const lg_runctx *run, lg_bab_out *out, int side);

#endif
