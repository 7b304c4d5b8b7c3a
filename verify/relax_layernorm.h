/* relax_layernorm.h — sound linear planes of layernorm over one group of g
 * inputs x ∈ [l, u] (the layernorm node kind; DESIGN.md §3 "Relaxations of
 * the Transformer node kinds"): with μ = Σ_k x_k / g, c_k = x_k − μ,
 * v = Σ_k c_k² / g (biased), r = 1/√(v + eps) and
 * y_i = gamma[i]·c_i·r + beta[i], for every output i of the group
 *
 *   Σ_j lo_w[i·g + j]·x_j + lo_c[i]  ≤  y_i(x)  ≤  Σ_j up_w[i·g + j]·x_j + up_c[i]
 *
 * for every real x of the box, read with exact real arithmetic on the
 * returned doubles and on eps, gamma, beta.
 *
 * How: the composition centring → variance → 1/√ → product, each in
 * outward-rounded interval arithmetic (verify/relax_iv.h):
 * - centring is exact linear: c_k = ((g − 1)·x_k − Σ_{j≠k} x_j)/g, its
 *   interval from the ends (no dependency lost);
 * - variance: c_k² over the interval of c_k (convex: 0 when it holds 0),
 *   summed and divided by g;
 * - r: 1/√ is decreasing, r ∈ [1/√(v⁺ + eps), 1/√(v⁻ + eps)] (MPFR rec_sqrt
 *   rounded down / up);
 * - the product γ_i·c_i·r and + β_i, outward, with c_i·r cut to
 *   [−√(g − 1), √(g − 1)] (Σ c = 0 and Cauchy–Schwarz give c_i² ≤ (g − 1)·v).
 * The planes are the mean-value form of relax_softmax.h with the Jacobian
 *   ∂y_i/∂x_j = γ_i·r·(δ_ij − 1/g − c_i·c_j·r²/g)
 * enclosed over the box by the same intervals, slopes at the enclosure's
 * midpoint, the point m the box's centre or the caller's point clamped into
 * the box, the value y_i(m) certified by the same arithmetic on the point.
 * Per side the constant plane of the image is used when it is better at the
 * box's centre. eps must be > 0 or the box must keep v away from 0;
 * otherwise, and for a bound that is not finite, the planes are the
 * constant ones of the image ([−∞, +∞] if that is all there is) and 0 is
 * returned (1 when every plane is finite).
 *
 * work: LG_LAYERNORM_WORK(g) lg_dv, caller-owned; the caller owns every
 * array; nothing is allocated.
 */
#ifndef LG_RELAX_LAYERNORM_H
#define LG_RELAX_LAYERNORM_H

#include <stddef.h>

#include "verify/relax_iv.h"

#define LG_LAYERNORM_WORK(g) (4 * (g) + 2)

/* Image of every output: ylo[i] ≤ y_i(x) ≤ yhi[i] on the box. */
void lg_layernorm_image(size_t g, const double *l, const double *u, double eps, const double *gamma,
                        const double *beta, double *ylo, double *yhi, lg_dv *work);

/* The planes of every output (lo_w, up_w: g·g, row i = output i); pt: the
 * linearisation point (g values) or NULL for the centre. */
int lg_relax_layernorm(size_t g, const double *l, const double *u, double eps, const double *gamma,
                       const double *beta, const double *pt, double *lo_w, double *lo_c, double *up_w,
                       double *up_c, lg_dv *work);

/* An enclosure J[i·g + j] of ∂y_i/∂x_j at every point of the box (the one
 * the planes use); [−∞, +∞] entries and 0 when it is not finite. */
int lg_layernorm_jacobian(size_t g, const double *l, const double *u, double eps, const double *gamma, lg_dv *J,
                          lg_dv *work);

#endif
