/* bounds_lp.h — the triangle LP of a network's first k layers as an object
 * (bounds_lp.c builds it; internal to verify/): what lg_bounds_lp solves
 * layer by layer, opened for the refinement of selected neurons
 * (refine.h), which also splits unstable ReLUs of the earlier layers inside
 * it.
 *
 * Columns: the normalised input, then per layer j < k its z_j
 * (base_z[j] + o) and, for relu layers, its a_j (base_a[j] + o; identity
 * layers: a_j is z_j). Rows as bounds_lp.c's header says; for each unstable
 * relu neuron (j, o) row_ge[off[j] + o] is the row a − z ≥ 0 and
 * row_up[off[j] + o] the chord row a − s·z ≤ −s·l (−1 for the other
 * neurons). A ReLU split inside the LP is sound with these alone: active
 * (z ≥ 0) is z's lower column bound 0 and row_ge switched to 'E' (a = z);
 * inactive (z ≤ 0) is z's and a's upper column bounds 0.
 *
 * Bounds come from lg_lp_relax_min (encode/lp_relax.h): certified by the
 * row duals, never GLPK's optimum. An lg_lp_net owns its LP and arrays
 * (lg_lp_net_free); the net and bounds are read at build only.
 */
#ifndef LG_BOUNDS_LP_H
#define LG_BOUNDS_LP_H

#include <stddef.h>

#include "encode/lp_relax.h"
#include "verify/bounds.h"

typedef struct lg_lp_net {
    lg_lp_relax lp;
    int k;               /* the layer whose pre-activations the objectives are */
    int built;           /* lp is loaded (freed by lg_lp_net_free) */
    size_t *off;         /* [k + 1] first flat index of each layer j < k's neurons */
    int *base_z, *base_a;/* [k] first column of z_j, a_j */
    int *row_ge, *row_up;/* [off[k]] rows of the unstable relu neurons (−1: none) */
    int *idx;            /* a row's scratch (core/linop.h) */
    double *wv;
} lg_lp_net;

/* Build and load the LP of layers < k from b's bounds. LG_ERR_NUMERIC when
 * two weights on one column do not sum exactly (no LP: keep the bounds). */
lg_status lg_lp_net_build(lg_lp_net *n, const lg_bounds *b, const lg_net *net, int k);
void lg_lp_net_free(lg_lp_net *n);

/* obj [lp.n_cols] = g·(the linear part of neuron o of layer k): 1, or 0 when
 * two of its weights on one column do not sum exactly (no LP for it). The
 * bias is the caller's (net->layers[k].b[o], times g). */
int lg_lp_net_objective(lg_lp_net *n, const lg_net *net, int o, double g, double *obj);

#endif
