/* opstage.h — the verify stages' part of the node-kind table (core/op.h):
 * one entry per node kind (max-pool, product, softmax, layernorm) with the
 * kind's interval bound, its attack gradient and its branching smear
 * (DESIGN.md "Adding an operator"). The complete back-ends take a node
 * only in its exact ReLU form (core/op.h lg_net_lower_nodes) and refuse
 * the others (lg_net_require_no_max). The
 * entries point at each kind's own file: verify/opstage_max.c for max-pool,
 * verify/bounds_tnode.c and verify/attack_tnode.c for the Transformer
 * nodes. The back-substitution planes and their α (backsub.c,
 * backsub_tnode.c, alpha.c) and the window splits (bab_relu.c) read the
 * kind there. Static and constant; nothing allocates.
 */
#ifndef LG_OPSTAGE_H
#define LG_OPSTAGE_H

#include "core/op.h"
#include "verify/bounds.h"

typedef struct lg_vopdef {
    lg_layer_kind kind;
    /* Interval bound of node L: lo, hi [n_out] from the post-activation intervals al, ah of
     * every node (node j at noff[j + 1]); outward, ∓∞ where unknown. */
    void (*interval)(const lg_net *net, const lg_layer *L, const double *al, const double *ah, const size_t *noff,
                     double *lo, double *hi);
    /* The attack's backward step through node L: from its sources' values a (b: the second
     * source's, else a), its outputs out and ∂g/∂out = dz, add ∂g/∂a into da (∂g/∂b into db). */
    void (*attack_backward)(const lg_layer *L, const double *a, const double *b, const double *out,
                            const double *dz, double *da, double *db);
    /* Branching (the input-split smear, bab_input.c; a heuristic, not a bound): from node L's
     * centres cen and radii rad, add each output's weight into cn, rd at its sources' offsets
     * (seen: which nodes hold values already; tc, tr: scratch of the widest node). */
    void (*smear)(const lg_net *net, const lg_bounds *b, const lg_layer *L, const double *cen, const double *rad,
                  double *cn, double *rd, unsigned char *seen, double *tc, double *tr);
} lg_vopdef;

/* The entry of node kind k, or NULL for a linear term kind. */
const lg_vopdef *lg_vop(lg_layer_kind k);

/* Max-pool's entries (verify/opstage_max.c). */
void lg_bounds_max_node(const lg_net *net, const lg_layer *L, const double *al, const double *ah, const size_t *noff,
                        double *lo, double *hi);
void lg_attack_max_backward(const lg_layer *L, const double *a, const double *b, const double *out, const double *dz,
                            double *da, double *db);
void lg_bab_smear_max(const lg_net *net, const lg_bounds *b, const lg_layer *L, const double *cen, const double *rad,
                      double *cn, double *rd, unsigned char *seen, double *tc, double *tr);
/* The Transformer nodes' smear (bab_input.c). */
void lg_bab_smear_tnode(const lg_net *net, const lg_bounds *b, const lg_layer *L, const double *cen, const double *rad,
                        double *cn, double *rd, unsigned char *seen, double *tc, double *tr);

#endif
