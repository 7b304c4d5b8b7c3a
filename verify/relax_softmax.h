/* relax_softmax.h — sound linear planes of softmax over one group of g
 * inputs x ∈ [l, u] (the softmax node kind; DESIGN.md §3 "Relaxations of the
 * Transformer node kinds"): for every output i of the group,
 *
 *   Σ_j lo_w[i·g + j]·x_j + lo_c[i]  ≤  s_i(x)  ≤  Σ_j up_w[i·g + j]·x_j + up_c[i]
 *
 * for every real x of the box, read with exact real arithmetic on the
 * returned doubles, s_i(x) = exp(x_i) / Σ_j exp(x_j) of the reals.
 *
 * How (a first-order plane at a point, its remainder bounded two ways):
 * - Interval image: s_i is increasing in x_i and decreasing in every other
 *   x_j, so s_i ∈ [E_i⁻/(E_i⁻ + Σ_{j≠i} E_j⁺), E_i⁺/(E_i⁺ + Σ_{j≠i} E_j⁻)]
 *   with E_j = exp([l_j, u_j] − max_k u_k) (shifted: no overflow), exp
 *   rounded down / up by MPFR and every +, / rounded outward
 *   (verify/relax_iv.h); the upper end is capped at 1.
 * - Jacobian enclosure: ∂s_i/∂x_i = s_i(1 − s_i) (t(1 − t) over the image
 *   interval of s_i, concave) and ∂s_i/∂x_j = −s_i·s_j (j ≠ i), from the
 *   images, outward; over the box (J) and at the point m (Jm, a few ulps).
 * - A point m of the box (its centre, or the caller's point clamped into the
 *   box: α-CROWN's variable), slopes w_j = the midpoint of Jm_ij (the
 *   gradient at m; any double slopes are sound), rad_j = max(u_j − m_j,
 *   m_j − l_j), and two remainders, each sound for these slopes, the
 *   smaller taken per side:
 *   - mean value on the segment from m to x (inside the box):
 *     s_i(x) − w·x = s_i(m) − w·m + Σ_j (∂_j s_i(ξ) − w_j)(x_j − m_j), so
 *     ρ = Σ_j max|J_ij − w_j|·rad_j on both sides;
 *   - Taylor: s_i(x) = s_i(m) + ∇s_i(m)·δ + ½·δᵀH(ξ)δ, δ = x − m, with
 *     δᵀHδ = s_i·[(δ_i − ⟨δ⟩)² − Var(δ)] (mean and variance under the
 *     weights s_j(ξ), which sum to 1), so
 *     ρ_lo = Σ_j max|Jm_ij − w_j|·rad_j + ½·s_i⁺·min(Σ_j s_j⁺·rad_j², max_j rad_j²),
 *     ρ_up = the same first sum + ½·s_i⁺·((1 − s_i⁻)·rad_i + Σ_j s_j⁺·rad_j)²,
 *     every step rounded up;
 *   lo_c = ⌊S_i(m)⁻ − (w·m)⁺ − ρ_lo⌋ and up_c = ⌈S_i(m)⁺ − (w·m)⁻ + ρ_up⌉,
 *   S_i(m) the certified image of the point. The gap is second order in the
 *   box's width (tight on small boxes).
 * - Per side, the constant plane of the image (slopes 0) is used instead
 *   when it is better at the box's centre (wide boxes).
 * g = 1: s = 1 exactly. A bound that is not finite gives the constant planes
 * 0 ≤ s_i ≤ 1. Returns 1 when every plane is finite (always, for g ≥ 1).
 *
 * work: LG_SOFTMAX_WORK(g) lg_dv, caller-owned scratch; the caller owns
 * every array; nothing is allocated.
 */
#ifndef LG_RELAX_SOFTMAX_H
#define LG_RELAX_SOFTMAX_H

#include <stddef.h>

#include "verify/relax_iv.h"

#define LG_SOFTMAX_WORK(g) (4 * (g))

/* Image of every output: slo[i] ≤ s_i(x) ≤ shi[i] on the box. */
void lg_softmax_image(size_t g, const double *l, const double *u, double *slo, double *shi, lg_dv *work);

/* The planes of every output (lo_w, up_w: g·g, row i = output i). pt: the
 * linearisation point (g values, clamped into the box) or NULL for the
 * centre. */
int lg_relax_softmax(size_t g, const double *l, const double *u, const double *pt, double *lo_w, double *lo_c,
                     double *up_w, double *up_c, lg_dv *work);

/* An enclosure J[i·g + j] of ∂s_i/∂x_j at every point of the box (the one
 * the planes use; [0, 1/4] and [−1/4, 0] when a bound is not finite, valid
 * everywhere). Returns 1. */
int lg_softmax_jacobian(size_t g, const double *l, const double *u, lg_dv *J, lg_dv *work);

/* A weighted sum Σ_i lam[i]·s_i of one group through the identity Σ_i s_i = 1
 * (exact for the reals): for any t,
 *   Σ_i lam[i]·s_i = t + Σ_i mu[i]·s_i + Σ_i (lam[i] − t − mu[i])·s_i,
 * mu[i] = fl(lam[i] − t), |lam[i] − t − mu[i]| ≤ 2^-53·|mu[i]| and
 * 0 ≤ s_i ≤ 1, so t + Σ_i mu[i]·s_i − *err ≤ Σ_i lam[i]·s_i ≤ t + Σ_i
 * mu[i]·s_i + *err with *err = 2^-52·Σ_i |mu[i]| rounded up. The planes
 * then bound mu's sum. t maximises h(t) = t + Σ_i (lam[i] − t)·(lo_c[i] when
 * lam[i] > t, up_c[i] otherwise), the constant part of the lower bound when
 * both planes of each output share their slopes (their part is then the
 * same for every t, as Σ_i ∇s_i = 0): h is concave with breakpoints at the
 * lam, so t is the first lam (ascending) where h's right slope
 * 1 − Σ_{lam > t} lo_c − Σ_{lam ≤ t} up_c is ≤ 0. t = 0 when lam is 0 or an
 * intercept is not finite. Returns t; idx: g ints of scratch. Pure. */
double lg_softmax_shift(size_t g, const double *lam, const double *lo_c, const double *up_c, double *mu, double *err,
                        int *idx);

#endif
