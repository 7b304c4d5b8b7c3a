/* devgrad_net.h — the interval-gradient deviation bound of a substitution
 * pair on one box, end to end (DESIGN.md §1 "Deviation bound", *the interval
 * gradient*): the region's node bounds, the gradient (devgrad.h) and the
 * rounding of both double forward passes.
 *
 * Region. F(x, δ) (devgrad.h) is written as a network F' over the input
 * (x, δ'), δ' = −δ: the ReLU net's layers with, after every substituted
 * layer k, an identity layer out_k + δ'_k (two index maps: the layer and δ's
 * slice of the input). CROWN on F' (lg_bounds_symbolic) over the box × the
 * bands [−Dhi, −Dlo] bounds F over the region R. The bands need z̃'s range,
 * which needs the bands: an induction over the substituted layers in order.
 * Each band is computed over an interval I_k guessed from F' with zero bands
 * (the ReLU net) widened; after the run, if F's bounds of every substituted
 * pre-activation lie within its I_k, then layer by layer the reference net's
 * exact z̃_k is a value of F over R (the earlier δ* lie in their bands), so
 * δ*_k lies in its band; else the guess is widened from F's bounds and the
 * run repeated (three tries, then no claim: +∞).
 *
 * Gradient. lg_devgrad_bound over R met with lg_devgrad_bound_affine (K symbols,
 * LG_DEVGRAD_AFFINE_K; the estimate: LG_DEVGRAD_AFFINE_K_EST); both hold.
 *
 * Rounding. The exact-real difference is bounded by devgrad.h over R. Each
 * double forward pass's error is carried forward as an envelope over R (the
 * exact route's of verify/devnet.h, extended to the Transformer nodes): at a
 * sum err_k ≤ Σ|A|·err_src + γ_n·(|b| + Σ|A|·|â_src|), |â| from R's bounds
 * plus err; after an activation Lip·err (lg_devnet_lip), plus 16ε·fs·|ẑ| for
 * a smooth one; at a Transformer node its kind's envelope entry
 * (lg_devtf_envelope, verify/devtf.h: its deviation rule over R's source
 * intervals with e = the sources' errors, plus its rounding ρ). Each output's
 * envelope is met with the backward bound Σ_k |a_k|·ρ_k (lg_devgrad_round_bound:
 * the adjoints of node k's output over R widened by the envelope, ρ_k the node's
 * local rounding alone; DESIGN.md §1 "Deviation bound" 5., *the backward
 * rounding bound*): lg_devgrad_rounding. The result adds both nets' bounds:
 *     e_i ≥ |ŷ_relu,i − ŷ_ref,i|   for every x in the box, exact and computed.
 *
 * lg_devgrad_net owns F' and its bounds; it borrows relu and ref, which
 * must outlive it. lg_devgrad_net_free of a zeroed object is a no-op. Not
 * thread-safe per object.
 */
#ifndef LG_DEVGRAD_NET_H
#define LG_DEVGRAD_NET_H

#include "core/net.h"
#include "core/runctx.h"
#include "verify/bounds.h"
#include "verify/devgrad.h"

/* The affine adjoint's symbols (lg_devgrad_bound_affine) of the bound, and of the estimate. */
#define LG_DEVGRAD_AFFINE_K 256
#define LG_DEVGRAD_AFFINE_K_EST 64

typedef struct lg_devgrad_net {
    const lg_net *relu, *ref; /* borrowed */
    lg_net F;                 /* F', owned */
    lg_bounds b;              /* F''s bounds over the last box, owned */
    int *at;                  /* [L] F' layer of the ReLU net's layer k */
    int *dat;                 /* [L] offset of layer k's δ' in F''s input, −1: not substituted */
    int n_in;                 /* F''s input width: n_in + the substituted neurons */
    double *lo, *hi;          /* [n_in] F''s box */
    int tries;                /* runs of CROWN the last box took */
    unsigned char *reach;     /* [N] 1 for a neuron of the ReLU net some output reads (lg_bounds_reach) */
    size_t K;                 /* the affine adjoint's symbols (init: LG_DEVGRAD_AFFINE_K); 0: interval only */
    int affine_only;          /* 1: the affine enclosure alone, not met with the interval one (init 0) */
} lg_devgrad_net;

/* Build F' for a pair (lg_dev_check_pair must accept it; checked). LG_ERR_UNSUPPORTED for a
 * pair with max-pool nodes. */
lg_status lg_devgrad_net_init(lg_devgrad_net *g, const lg_net *relu, const lg_net *ref);
void lg_devgrad_net_free(lg_devgrad_net *g);

/* e[n_out] ≥ sup over the raw box [lo, hi] of |y_relu,i − y_ref,i|, exact and computed (+∞
 * where no claim). run: the bound engine's deadline (LG_ERR_TIMEOUT past it; e unusable). */
lg_status lg_devgrad_net_bound(lg_devgrad_net *g, const double *lo, const double *hi, const lg_runctx *run,
                               double *e);

/* out[n_out] ≥ |ŷ_o − y_o| of net's double forward pass (lg_net_forward) at every x of R's box:
 * the forward envelope met with the backward rounding bound (lg_devgrad_round_bound over R
 * widened by the envelope). R: bounds that hold net's exact values (its pre-activations lo, hi,
 * the input box, centred bounds or NULL, and every node's post-activation intervals alo, ahi,
 * which must be set); its bands are not read. fwd[n_out] (or NULL): the forward envelope alone.
 * LG_ERR_NOMEM. */
lg_status lg_devgrad_rounding(const lg_net *net, const lg_devgrad_region *R, double *out, double *fwd);

/* A cheap estimate (no claim) of the exact part of that bound from the ReLU net's own bounds b of
 * the box (the region without the bands' widening): the gradient pass alone. Callers use it to
 * skip the bound where it cannot reach their threshold. *est: max over the outputs (+∞ when
 * not finite). */
lg_status lg_devgrad_net_estimate(const lg_devgrad_net *g, const lg_bounds *b, double *est);

#endif
