/* devnet_joint.h — the differential (joint) deviation bound of a
 * substitution pair (DESIGN.md §1 "Deviation bound", the joint relaxation).
 *
 * Both nets share their weights; only the activation differs (relu in the
 * ReLU net, a relu-like smooth one or the same in the reference). The
 * bound back-substitutes, from the output rows ±(y_relu,j − y_ref,j) to the
 * input box, two quantities per node together:
 *   - the ReLU net's output h = relu(z) (DeepPoly's planes: slope u/(u − l)
 *     above, 0 or 1 below, over its bounds [l, u]), and
 *   - the output difference δ = relu(z) − f(z − d), d = z_ReLU − z_ref the
 *     pre-activation difference (the biases cancel; a residual sum adds the
 *     terms' differences; the input's difference is 0),
 * where at every neuron δ = [relu(z) − relu(w)] + [relu(w) − f(w)], w = z − d
 * the reference's pre-activation. The first bracket is relaxed JOINTLY in
 * (z, d) over z ∈ [l, u], w ∈ [l_G, u_G] (both from the difference
 * network's last run) and d ∈ [d_l, d_u] (d's own bounds, back-substituted
 * the same way for the neurons whose pair is not stable on one side, and
 * intersected with [l − u_G, u − l_G]; z = w + d and w = z − d then tighten
 * each other):
 *   z ≥ 0, w ≥ 0: d;   z ≤ 0, w ≤ 0: 0;   z ≥ 0, w ≤ 0: [l, u];
 *   z ≤ 0, w ≥ 0: [−u_G, −l_G];
 *   one side stable: the planes of the other relu (d + relu(−z) when w ≥ 0,
 *   d − relu(−w) when z ≥ 0, relu(z) when w ≤ 0, −relu(w) when z ≤ 0), or the
 *   chords below when those are looser;
 *   both unstable: the chords of min(0, d) below and max(0, d) above over
 *   [d_l, d_u] (relu is monotone and 1-Lipschitz, so the bracket lies
 *   between them; [0, d] when d_l ≥ 0, [d, 0] when d_u ≤ 0),
 * every plane's constant chosen from its endpoint checks and rounded
 * outward. The second bracket is the certified gap of the activation over
 * [l_G, u_G] (anneal/deviation.h lg_dev_act_gap_certified): [0, gap] for the
 * activations below relu (core/act.h below_relu), else [−gap, gap].
 * Because d is bounded by itself, its bounds stay the size of the deviation
 * where the difference network subtracts two wide copies.
 *
 * Soundness under rounding: every product and sum of the back-substitution
 * in double adds a bound on its rounding (γ of the sum times |coefficients|
 * times the magnitudes of the values they multiply) to its row's constant,
 * and the double forward passes are the exact nets with noise |ν| ≤ τ at
 * every neuron (lg_dev_noise, the radii of the last lg_devnet_bound): a row
 * adds |coefficient|·τ_ReLU for z and |coefficient|·(τ_ReLU + τ_ref) for d,
 * and the output adds both nets' ξ. The neuron
 * bounds used (devnet.h lg_devnet_pre) hold the exact and the computed
 * pre-activations; the noise radii hold for the computed pass because every
 * one of those bounds lies within the magnitudes τ was computed for
 * (checked here: otherwise no claim). So the result bounds the exact and
 * the computed deviation, like every other deviation bound.
 *
 * Nets with max-pool or Transformer nodes are not taken (no claim). Rows
 * are back-substituted JROWS at a time (coefficients of at most a few nodes
 * live at once); a net whose rows would exceed LG_DEVJOINT_MAX_DOUBLES is
 * refused (no claim). Everything is borrowed; scratch is allocated per call.
 */
#ifndef LG_DEVNET_JOINT_H
#define LG_DEVNET_JOINT_H

#include "verify/devnet.h"

/* Largest number of doubles the back-substitution rows of one call may hold. */
#define LG_DEVJOINT_MAX_DOUBLES ((size_t)1 << 27)

/* e[n_out]: e[j] ≥ sup over the box of the last lg_devnet_bound of
 * |y_relu,j − y_ref,j| for the exact and the computed outputs; +∞ where no
 * claim (v->valid 0, an unsupported node, the magnitude check fails, too
 * much memory, overflow). v must hold the bounds of that box (call right
 * after lg_devnet_bound). run (may be NULL): past its deadline, no claim
 * (LG_OK, +∞). LG_ERR_NOMEM only when the scratch cannot be allocated. */
lg_status lg_devjoint_bound(lg_devnet *v, const lg_runctx *run, double *e);

#endif
