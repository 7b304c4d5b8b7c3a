/* refine.h — certified LP refinement of the intermediate bounds of a ReLU
 * network (DESIGN.md §3 "Refined intermediate bounds").
 *
 * Single-neuron relaxations (CROWN, α-CROWN: the triangle of each ReLU
 * given its own bounds) lose most where many ReLUs of the early layers are
 * unstable: every later bound inherits their slack. lg_refine_bounds goes
 * through the relu layers in order; on each it runs the intermediate
 * α-CROWN of alpha.h (α_steps, as branch and bound's root does), then, on
 * the first max_layers relu layers after the first (whose bounds are exact)
 * that have unstable neurons, it tightens
 * the per_layer most unstable of them (largest −l·u/(u − l)) by the
 * triangle LP of all earlier layers (bounds_lp.h), each bound searched over
 * up to 2^splits sub-LPs in which the earlier unstable ReLUs with the
 * largest dual weight on their chord rows are fixed active or inactive
 * (a small LP branch and bound: the bound is the smallest over the leaves,
 * each at least its parent's, so it is a bound of the exact MILP over
 * the box of b); then CROWN on the later layers' unstable neurons.
 *
 * Soundness: every LP bound is lg_lp_relax_min's (the row duals' safe
 * Lagrangian bound, outward rounded: encode/lp_cert.h), never GLPK's
 * optimum; a sub-LP without a certified bound takes its parent's. b keeps
 * the tighter of its own and each new bound, so at any stop (the run's
 * deadline, LG_ERR_TIMEOUT) its bounds still hold.
 *
 * The net and run are borrowed; b is updated in place.
 */
#ifndef LG_REFINE_H
#define LG_REFINE_H

#include "core/net.h"
#include "core/runctx.h"
#include "verify/bounds.h"

typedef struct lg_refine_opts {
    int alpha_steps;   /* intermediate α-CROWN steps per layer (0: none) */
    double alpha_lr;   /* their Adam rate */
    int max_layers;    /* relu layers with unstable neurons refined by LP, from the first */
    int per_layer;     /* neurons per layer (the most unstable; ≤ 0: every unstable one) */
    int splits;        /* ReLU splits per bound inside the LP (0: the LP alone) */
} lg_refine_opts;

typedef struct lg_refine_stats {
    long n_lp;         /* LPs solved */
    long n_tight;      /* bounds the LPs tightened */
    long n_stable;     /* neurons they made stable */
    int layers;        /* layers refined by LP */
    double seconds;
} lg_refine_stats;

lg_refine_opts lg_refine_opts_default(void);

/* Refine b (symbolic bounds of net over b's box; net relu/identity, no
 * max-pool nodes) within run. LG_ERR_TIMEOUT at run's deadline (b sound,
 * unfinished). *s is set (may be NULL). */
lg_status lg_refine_bounds(lg_bounds *b, const lg_net *net, const lg_refine_opts *o, const lg_runctx *run,
                           lg_refine_stats *s);

#endif
