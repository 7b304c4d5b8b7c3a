/* devnet_refine.h — tightening the difference network's deviation bound
 * where it misses a threshold (DESIGN.md §1 "Deviation bound", devnet.h).
 *
 * Two sound refinements, the cheap one first:
 *  - α-CROWN on D's outputs: the rows ±e_j of y_relu − y_ref are bounded
 *    again by the α back-substitution (verify/alpha.h) over the bounds of the
 *    last lg_devnet_bound (its intermediate bounds and its noisy input box,
 *    so the magnitude induction of devnet.h is unchanged), with the slopes
 *    of every unstable ReLU and every smooth neuron optimised per row. Every
 *    α gives a sound bound, rounding included; the result is intersected
 *    with CROWN's.
 *  - branch and bound on the input box: the leaf whose bound is largest is
 *    split in two halves along the input coordinate whose interval
 *    contributes most to its worst α row (|coefficient| × width; the widest
 *    coordinate without one); each half gets lg_devnet_bound, α-CROWN and the
 *    propagation with both nets' bounds (lg_dev_bound_box_pair) and the
 *    joint relaxation (devnet_joint.h), each
 *    intersected with its parent's bound (a half is inside its parent). The
 *    box's bound is the per-output maximum over the leaves, whose union is
 *    the box: sound at every stage, so the search stops at the threshold,
 *    the deadline, LG_DEVNET_LEAVES leaves or a stall (LG_DEVNET_STALL) with a
 *    valid answer.
 *
 * Everything is borrowed; scratch is allocated per call.
 */
#ifndef LG_DEVNET_REFINE_H
#define LG_DEVNET_REFINE_H

#include "anneal/deviation.h"
#include "verify/devnet.h"

/* Most leaves of one box's branch and bound. */
#define LG_DEVNET_LEAVES 64
/* The search stops once this many splits in a row lowered the box's bound
 * by less than 1 % in all (the bound it reached stands). */
#define LG_DEVNET_STALL 4
/* α-CROWN steps of one box (Adam, rate 0.1). */
#define LG_DEVNET_ALPHA_STEPS 20

/* α-CROWN on D's outputs over the box of the last lg_devnet_bound, which
 * must have v->valid == 1 (else e is left as it is): e[j] is lowered to the
 * α bound of |y_relu,j − y_ref,j| (exact and computed outputs) where that is
 * smaller. ain (NULL to skip): [n_out][D's n_in], row j the coefficients of
 * the worse of the two α rows of output j over D's normalised input. run's
 * deadline ends the optimisation early with the best finished bound (no
 * bound finished: e unchanged, LG_OK). */
lg_status lg_devnet_alpha(lg_devnet *v, const lg_runctx *run, double *e, double *ain);

/* e[n_out] on entry: a sound per-output deviation bound on the raw box
 * [lo, hi] (transfer.h), and v's last lg_devnet_bound on that same box.
 * Refines e (never raises it) by α-CROWN and then branch and bound until
 * max_j e[j] ≤ want, run's deadline, LG_DEVNET_LEAVES leaves or a stall;
 * LG_OK with the bound reached in every case. dev is the same pair's lg_dev. v's
 * bounds then describe the last leaf bounded: *split is set to 1 when a
 * leaf other than the box was bounded (lg_devnet_pre must not be read as
 * the box's bounds then). Errors other than the deadline are returned. */
lg_status lg_devnet_refine(lg_dev *dev, lg_devnet *v, const double *lo, const double *hi, double want,
                           const lg_runctx *run, double *e, int *split);

#endif
