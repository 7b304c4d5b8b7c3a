/* alpha_tnode.h — the objective's bound through the Transformer nodes with
 * the products' McCormick α optimised (DESIGN.md §3 "Back-substitution
 * through the Transformer nodes"): a coordinate search over one α per
 * product node and side (relax_bilinear.h; every α ∈ [0, 1] gives sound
 * planes, so every bound the search evaluates is a bound, and each row keeps
 * the best one it saw), jointly with the lower slope of every unstable ReLU
 * (relax.h: any slope in [0, 1] is sound; one slope per neuron shared by the
 * rows).
 *
 * The search starts at LG_BS_BILINEAR_ALPHA everywhere and tries, per
 * product node and side in turn, the values of LG_ALPHA_TNODE_GRID, and per
 * unstable ReLU (from the area heuristic's slope) the slopes 0, 0.5, 1, in
 * layer order; a move is
 * kept when it raises Σ_r min(bound_r, 0) (a row refutes its violation when
 * its bound is > 0: the rows not yet there are pushed up together). It stops
 * when every row is > 0, after a pass without a move, or after
 * LG_ALPHA_TNODE_SWEEPS passes or LG_ALPHA_TNODE_EVALS back-substitutions.
 * Softmax and layernorm keep their planes at the box's centre.
 *
 * Memory: nothing kept; the caller owns every array.
 */
#ifndef LG_ALPHA_TNODE_H
#define LG_ALPHA_TNODE_H

#include "core/net.h"
#include "verify/bounds.h"

/* The α values tried per node and side (LG_BS_BILINEAR_ALPHA is the start). */
#define LG_ALPHA_TNODE_GRID {0.0, 0.25, 0.75, 1.0}
/* Full passes over the product nodes and the unstable ReLUs. */
#define LG_ALPHA_TNODE_SWEEPS 4
/* Back-substitutions the search may run at most. */
#define LG_ALPHA_TNODE_EVALS 1200

/* out[r] (a lower bound of C_r·y + d_r over b's box, or −∞) raised to the
 * best back-substitution bound the search finds (never lowered). The
 * search stops early, keeping what it has, at b->run's deadline (returns
 * LG_OK then: out stays sound). Returns at once for a net without product
 * nodes. LG_ERR_NOMEM. */
lg_status lg_alpha_tnode_objective(const lg_bounds *b, const lg_net *net, int m, const double *C, const double *d,
                                   double *out);

#endif
