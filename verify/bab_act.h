/* bab_act.h — branch and bound on a smooth network's activations
 * (DESIGN.md §3 "Smooth activations"): a node is the root's pre-activation
 * bounds with some neurons' input intervals cut in two; its bound is CROWN
 * through the certified relaxations of its (narrower, hence tighter)
 * intervals, valid on the inputs whose pre-activations lie in them, plus
 * β·σ·(z − t) ≤ 0 for every split constraint z ≤ t (σ = +1) or z ≥ t
 * (σ = −1) of the node, β ≥ 0 optimised (β-CROWN, as GenBaB). The
 * children of a node cover its region, so a case whose every leaf refutes
 * every term is `robust`; a node whose bounds become empty is closed.
 *
 * Branching: the open term with the weakest bound picks the neuron whose
 * relaxation gap at its midpoint, weighted by the term's back-substitution
 * coefficient, is largest; its interval is split where the relaxation
 * tightens most: of 0 (when inside), the middle and the quarter points, the
 * one whose worse half has the smaller gap between its lines.
 * Order: depth first (the newest node; LG_BAB_ACT_DEPTH, the default) or
 * best first (the open node whose parent's worst open bound is lowest,
 * ties to the older node; LG_BAB_ACT_BEST). A node's children depend only
 * on the node (its bounds, splits, and α, β warm start), so both orders
 * bound the same tree and prove with the same nodes; the order decides
 * which part of it a deadline or node cap leaves unexplored, and how many
 * nodes are open at once (depth first: at most two per level; best first
 * can hold a whole level, so past LG_BAB_ACT_QUEUE_MB of open nodes, or
 * half the run's memory cap, it goes depth first). Stops at the
 * run's deadline (checked before every node, and inside every bound),
 * max_nodes, or when the open nodes would exceed the run's memory cap.
 * Finds no counterexamples (the driver's attack does).
 * A node's bounds interrupted by the deadline make it return LG_ERR_TIMEOUT
 * (not proved; the driver answers timeout).
 *
 * net, terms and root are borrowed; everything else is freed on return.
 */
#ifndef LG_BAB_ACT_H
#define LG_BAB_ACT_H

#include "core/net.h"
#include "core/runctx.h"
#include "core/term.h"
#include "verify/bounds.h"

typedef struct lg_bab_act_out {
    int proved;   /* 1: every node closed: no term holds anywhere in the box */
    long nodes;   /* nodes bounded */
    int max_depth;
    int out_of_memory; /* stopped because the open nodes reached the run's memory cap (run->memory_mb) */
} lg_bab_act_out;

/* beta_steps > 0: every node optimises the lower-line positions α of its
 * smooth neurons (verify/backsub.h) and the multipliers β ≥ 0 of its split
 * constraints (α,β-CROWN, alpha.h) by that many projected Adam steps of
 * rate lr, warm-started from its parent's (each open node keeps its rows'
 * α and β: 2 × constraints × neurons doubles, so above LG_BAB_ACT_BETA_MAX
 * of them both are off); 0: plain CROWN. */
#define LG_BAB_ACT_BETA_MAX ((size_t)1 << 17)
typedef enum lg_bab_act_order { LG_BAB_ACT_DEPTH = 0, LG_BAB_ACT_BEST = 1 } lg_bab_act_order;
#define LG_BAB_ACT_QUEUE_MB 512.0
lg_status lg_bab_act_run(const lg_net *net, const lg_bounds *root, int n_terms, const lg_term *terms,
                         const lg_runctx *run, long max_nodes, int beta_steps, double lr, lg_bab_act_order order,
                         lg_bab_act_out *out);
/* "best", "depth"; parse one of them (LG_ERR_ARG otherwise). */
const char *lg_bab_act_order_name(lg_bab_act_order o);
lg_status lg_bab_act_order_parse(const char *s, lg_bab_act_order *o);

#endif
