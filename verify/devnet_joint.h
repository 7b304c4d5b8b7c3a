/* devnet_joint.h — the differential (joint) deviation bound of a
 * substitution pair (DESIGN.md §1 "Deviation bound", the joint relaxation).
 *
 * Both nets share their weights; only the activation differs (relu in the
 * ReLU net, a relu-like smooth one or the same in the reference). Layer by
 * layer this bound carries, as linear forms over the normalised input x'
 * (n_in coefficients and a constant, each with a scalar slack),
 *   - lower and upper forms of the ReLU net's pre-activation z and output
 *     h = relu(z) (DeepPoly's relaxation: slope u/(u − l) above, 0 or 1
 *     below), and
 *   - lower and upper forms of the difference d = z_ReLU − z_ref (the biases
 *     cancel; a residual sum adds the terms' differences) and of the output
 *     difference δ = relu(z) − f(z − d),
 * where at every neuron δ = [relu(z) − relu(z − d)] + [relu(w) − f(w)],
 * w = z − d the reference's pre-activation. The first bracket is relaxed
 * JOINTLY in (z, d) over z ∈ [l, u] (the ReLU net's bounds), w ∈ [l_G, u_G]
 * (the reference's) and d ∈ [d_l, d_u] (the forms' own range intersected
 * with [l − u_G, u − l_G]):
 *   z ≥ 0, w ≥ 0: d;   z ≤ 0, w ≤ 0: 0;   z ≥ 0, w ≤ 0: z;   z ≤ 0, w ≥ 0: d − z;
 *   otherwise the chords of min(0, d) below and max(0, d) above over
 *   [d_l, d_u] (relu is monotone and 1-Lipschitz, so the bracket lies
 *   between them; [0, d] when d_l ≥ 0, [d, 0] when d_u ≤ 0),
 * every plane's constant chosen from its endpoint checks and rounded
 * outward. The second bracket is the certified gap of the activation over
 * [l_G, u_G] (anneal/deviation.h lg_dev_act_gap_certified), an interval.
 * Because d is propagated by itself, its forms stay as narrow as the
 * deviation, and the exact cases keep their dependence on x.
 *
 * Soundness under rounding: every form operation in double adds to its
 * neuron's slack a bound on its rounding (the products' γ times the
 * forms' magnitude over the box), and the double forward passes are the
 * exact nets with noise |ν| ≤ τ at every neuron (lg_dev_noise, the radii
 * of the last lg_devnet_bound): the slacks add τ_ReLU to z and
 * τ_ReLU + τ_ref to d, and the output adds both nets' ξ. The neuron
 * bounds used (devnet.h lg_devnet_pre) hold the exact and the computed
 * pre-activations; the noise radii hold for the computed pass because every
 * one of those bounds lies within the magnitudes τ was computed for
 * (checked here: otherwise no claim). So the result bounds the exact and
 * the computed deviation, like every other deviation bound.
 *
 * Nets with max-pool or Transformer nodes are not taken (no claim). Memory:
 * four forms of (n_in + 1) doubles per neuron of the nodes still read by a
 * later layer; a box needing more than LG_DEVJOINT_MAX_DOUBLES is refused
 * (no claim). Everything is borrowed; scratch is allocated per call.
 */
#ifndef LG_DEVNET_JOINT_H
#define LG_DEVNET_JOINT_H

#include "verify/devnet.h"

/* Largest number of doubles the forms of one call may hold. */
#define LG_DEVJOINT_MAX_DOUBLES ((size_t)1 << 27)

/* e[n_out]: e[j] ≥ sup over the box of the last lg_devnet_bound of
 * |y_relu,j − y_ref,j| for the exact and the computed outputs; +∞ where no
 * claim (v->valid 0, an unsupported node, the magnitude check fails, too
 * much memory, overflow). v must hold the bounds of that box (call right
 * after lg_devnet_bound). run (may be NULL): LG_ERR_TIMEOUT past its
 * deadline. LG_ERR_NOMEM only when the scratch cannot be allocated. */
lg_status lg_devjoint_bound(lg_devnet *v, const lg_runctx *run, double *e);

#endif
