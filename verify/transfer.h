/* transfer.h — verdicts for the smooth network a ReLU network came from.
 *
 * DESIGN.md §1/§3: if R = lgelu relu(G) and, on a box B, every output obeys
 * |y_R,j(x) − y_G,j(x)| ≤ e_j (the certified per-output deviation of
 * anneal/deviation.h, computed here from R's symbolic pre-activation bounds
 * on B, and the bound of the difference network, devnet.h; the smaller per
 * output), then for any constraint coef·y + d ≤ 0
 *
 *     coef·y_G + d ≤ 0  ⇒  coef·y_R + d − Σ_j |coef_j|·e_j ≤ 0,
 *
 * so if R has no point in the enlarged counterexample region (each d lowered
 * by Σ|coef_j|e_j — for robustness terms y_ℓ − y_j that is e_ℓ + e_j ≤ 2Δ),
 * G has none: `robust` transfers to G. A counterexample found for R in the
 * enlarged region is re-run through G in double; only if G's own outputs
 * satisfy the ORIGINAL property is the verdict `violated` (the report's x is
 * the input and y holds G's outputs). Otherwise the verdict is `unknown`.
 *
 * relu, ref and prop are borrowed; the report is initialised here and owned
 * by the caller (lg_verify_report_free).
 */
#ifndef LG_TRANSFER_H
#define LG_TRANSFER_H

#include "anneal/deviation.h"
#include "verify/devnet.h"
#include "verify/verify.h"

/* Decide prop for the smooth network ref through its substitution relu
 * (the 2Δ margin, DESIGN.md §3); a ReLU counterexample that does not fool
 * ref, or a run left unknown with time to spare, is followed by the attack
 * on ref itself; every counterexample passes the witness gate on ref.
 * *delta receives the largest certified deviation over the cases (‖e‖∞).
 * One run context (core/runctx.h) from o covers the whole call: the
 * deviation bound's time counts against o->timeout_s. */
lg_status lg_verify_transfer(const lg_net *relu, const lg_net *ref, const lg_prop *prop, const lg_verify_opts *o,
                             lg_verify_report *r, double *delta);

/* Certified deviation ‖f_relu − f_ref‖∞ on one box [lo, hi] for the pair in
 * dev: per output the smallest of the interval bound, the bound tightened
 * with relu's symbolic (CROWN) pre-activation bounds on the box, and (v not
 * NULL, lg_devnet_init on the same pair) the difference network's bound
 * and the propagation with both nets' bounds from it (devnet.h). b is a
 * workspace from lg_bounds_init(relu), overwritten: it holds relu's
 * symbolic bounds on the box afterwards (with v, the difference network's
 * ReLU-copy bounds, which also hold the rounding noise). b->run is the
 * deadline. A point box (lo = hi) of a net with Transformer nodes also
 * takes the two nets' MPFR enclosures of the outputs at the point and the
 * computed outputs (the exact and the computed deviation there). The one routine behind
 * `lgelu bound --symbolic` and `lgelu check`. */
lg_status lg_transfer_box_delta(lg_dev *dev, lg_devnet *v, const lg_net *relu, lg_bounds *b, const double *lo,
                                const double *hi, double *delta);

#endif
