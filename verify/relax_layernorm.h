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
 *   summed and divided by g, intersected with the centred form at the
 *   box's centre m: v(x) = v(m) + Σ_j (2·c_j(m)/g)·δ_j + |Pδ|²/g exactly
 *   (δ = x − m, P the centring, 0 ≤ |Pδ|² ≤ |δ|²);
 * - r: 1/√ is decreasing, r ∈ [1/√(v⁺ + eps), 1/√(v⁻ + eps)] (MPFR rec_sqrt
 *   rounded down / up);
 * - the product γ_i·c_i·r and + β_i, outward, with c_i·r cut to
 *   [−√(g − 1), √(g − 1)] (Σ c = 0 and Cauchy–Schwarz give c_i² ≤ (g − 1)·v).
 * The planes are those of relax_softmax.h (slopes the gradient at the point
 * m, the smaller of two remainders) with the Jacobian
 *   ∂y_i/∂x_j = γ_i·r·(δ_ij − 1/g − c_i·c_j·r²/g)
 * enclosed over the box by the same intervals (the mean-value remainder) and
 * Taylor's remainder from the second derivative along the segment, with
 * ĉ = c·r (Σ ĉ = 0, |ĉ|₂² ≤ g), δc = Pδ, p = ĉ·δc = ĉ·δx and n = |δc|₂:
 *   γ_i·(r²/g)·[−2·δc_i·p − ĉ_i·n² + 3·ĉ_i·p²/g],
 * bounded by ½·|γ_i|·(r⁺²/g)·(2·(rad_i + Σ_j rad_j/g)·Q + h_i·max(S2,
 * min(2·S2, 3·Q²/g))), h_k ≥ |ĉ_k| on the box, S2 = Σ rad_j² ≥ n²,
 * Q = min(Σ_k h_k·rad_k, √(g·S2)) ≥ |p|; the value y_i(m) and the gradient
 * at m certified by the same arithmetic on the point.
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

#define LG_LAYERNORM_WORK(g) (5 * (g) + 2)

/* Image of every output: ylo[i] ≤ y_i(x) ≤ yhi[i] on the box. */
void lg_layernorm_image(size_t g, const double *l, const double *u, double eps, const double *gamma,
                        const double *beta, double *ylo, double *yhi, lg_dv *work);

/* The planes of every output (lo_w, up_w: g·g, row i = output i); pt: the
 * linearisation point (g values) or NULL for the centre. */
int lg_relax_layernorm(size_t g, const double *l, const double *u, double eps, const double *gamma,
                       const double *beta, const double *pt, double *lo_w, double *lo_c, double *up_w,
                       double *up_c, lg_dv *work);

/* What is known of the reachable inputs beyond their box (lg_relax_layernorm_ex), each
 * part NULL / infinite when unknown:
 * - clo, chi (g doubles): clo[k] ≤ c_k = x_k − μ ≤ chi[k] (a back-substitution bound of
 *   the row g·e_k − 1 over the source, which keeps what the box loses: the common part
 *   of the x_k and their correlations);
 * - a (g doubles) and plo ≤ Σ_k a[k]·x_k ≤ phi: one linear form's range, a ≈ ĉ(m) (the
 *   direction of |p| below). */
typedef struct lg_ln_region {
    const double *clo, *chi, *a;
    double plo, phi;
} lg_ln_region;

/* lg_relax_layernorm, keeping in rd (LG_LN_ROW_LEN(g) doubles, or NULL) what
 * lg_layernorm_row_icpt needs: a bound for one weighted sum of the group's
 * outputs at once, tighter than the sum of their planes.
 *
 * reg (or NULL): the planes then hold on R = {x ∈ [l, u] : c(x) in the hull of
 * [clo, chi] and c(m), Σ a·x ∈ [plo, phi]}, which holds every reachable input; the
 * segments [m, x] stay in the first two conditions' convex set (it holds m), so
 * Taylor's and the mean-value remainder are taken there: c's intervals are cut to
 * the hull (so are v, r and ĉ), and |δc_k| ≤ dc_k = the largest distance from
 * c_k(m) to an end of c_k's interval, n² ≤ Σ dc², and
 * |p| = |ĉ(ξ)·δc| ≤ |a·δc| + Σ_k max|ĉ_k − a_k|·dc_k with
 * a·δc = (Σ a·x − Σ a·m) − (Σ_k a_k)·δμ, |δμ| ≤ Σ rad/g — each the smaller of that
 * and the box's bound. Where the centred box is narrower than the input's (a
 * residual stream's common part) or the form's range narrower than the box's,
 * the remainder shrinks with it. Per side: the term ĉ_i·(3p²/g − n²) lies in
 * [ĉ_i]·[−n², 3p²/g − n²], so its two sides differ when ĉ_i has a sign. */
#define LG_LN_ROW_HEAD 4
#define LG_LN_ROW_PER 12
#define LG_LN_ROW_LEN(g) (LG_LN_ROW_HEAD + LG_LN_ROW_PER * (g))
int lg_relax_layernorm_ex(size_t g, const double *l, const double *u, const lg_ln_region *reg, double eps,
                          const double *gamma, const double *beta, const double *pt, double *lo_w, double *lo_c,
                          double *up_w, double *up_c, double *rd, lg_dv *work);

/* A lower bound, exact for the reals, of Σ_o lam[o]·(y_o(x) − w_o·x) over the box
 * of the lg_relax_layernorm_ex call that filled rd, w_o the slopes it returned
 * (when lam[o] ≠ 0 the output's planes must be linear on both sides with the
 * same slopes; otherwise, or when rd is unusable, −∞). Taylor at m for the
 * weighted sum φ = Σ_o lam[o]·y_o: with a_o = lam[o]·γ_o,
 *   ½·|D²φ| ≤ ½·(r⁺²/g)·(2·|a·δc|·Q + |a·ĉ|·quad)
 * (the bounds of lg_relax_layernorm), |a·δc| = |(a − ā)·δx| ≤ Σ_j |a_j − ā|·rad_j
 * (and ≤ Σ_j |a_j − ā|·dc_j, Σ δc = 0)
 * and a·ĉ = (a − t)·ĉ for any t (Σ ĉ = 0), over the box's intervals of ĉ —
 * the weights' signs cancel where the per-output planes add magnitudes. */
double lg_layernorm_row_icpt(size_t g, const double *rd, const double *lam, const double *gamma);

/* An enclosure J[i·g + j] of ∂y_i/∂x_j at every point of the box (the one
 * the planes use); [−∞, +∞] entries and 0 when it is not finite. */
int lg_layernorm_jacobian(size_t g, const double *l, const double *u, double eps, const double *gamma, lg_dv *J,
                          lg_dv *work);

#endif
