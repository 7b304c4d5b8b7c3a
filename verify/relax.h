/* relax.h — THE linear relaxation of a ReLU a = max(0, z) over a
 * pre-activation interval z ∈ [l, u], and its sound application to a
 * coefficient in floating point. Every bound computation that relaxes a ReLU
 * uses this module and nothing else: CROWN/DeepPoly back-substitution
 * (backsub.c, behind bounds_symbolic.c and alpha.c), α-CROWN's slopes and
 * their gradient (alpha.c), the triangle rows of the LP tightening
 * (bounds_lp.c). β-CROWN (issue 13) is meant to build on the same lines.
 *
 * The two lines (DESIGN.md §3 "Floating point"):
 *
 *   lower  a ≥ lo_s·z                      for every z ∈ [l, u]
 *   upper  a ≤ up_s·(z − up_x0)            for every z ∈ [l, u]
 *
 *   phase      lo_s          up_s                          up_x0
 *   l ≥ 0      1             1                             0      (a = z)
 *   u ≤ 0      0             0                             0      (a = 0)
 *   l < 0 < u  α ∈ [0, 1]    s ≥ u/(u − l), s ≤ 1          l      (chord)
 *
 * The chord slope s is u/(u − l) computed in double and then rounded UP by
 * a few ulps (and capped at 1, which is always valid), so the upper line is
 * above the ReLU at both ends of [l, u] for the exact reals, hence on the
 * whole interval (the ReLU is convex). With l = −∞ or u − l overflowing,
 * s = 1 (a ≤ z − l, still valid). The lower slope α is the caller's
 * (α-CROWN) or the area heuristic lg_relax_alpha_default: 1 iff u > −l.
 *
 * lg_relax_relu_apply turns one coefficient λ of a_j in a lower-bound
 * function into a coefficient of z_j, an intercept and a rounding term:
 *
 *   λ·relu(z) ≥ coef·z + icpt − err      for every z ∈ [l, u],
 *
 * read with exact real arithmetic on the returned doubles (λ ≥ 0 uses the
 * lower line, λ < 0 the upper). err bounds the rounding of coef = fl(λ·s)
 * and icpt = fl(−coef·x0) over |z| ≤ zmax = max(|l|, |u|); it is 0 when
 * nothing was rounded (stable neurons, α ∈ {0, 1}). An upper bound of λ·a
 * is minus the lower bound of (−λ)·a.
 *
 * Pure functions of their arguments; nothing is allocated.
 */
#ifndef LG_RELAX_H
#define LG_RELAX_H

typedef enum lg_relu_phase { LG_RELU_ACTIVE = 0, LG_RELU_INACTIVE, LG_RELU_UNSTABLE } lg_relu_phase;

typedef struct lg_relu_lines {
    lg_relu_phase phase;
    double lo_s;  /* a ≥ lo_s·z */
    double up_s;  /* a ≤ up_s·(z − up_x0) */
    double up_x0;
    double zmax;  /* max(|l|, |u|) (+∞ if unbounded): scale of the rounding terms */
} lg_relu_lines;

/* The area heuristic (DeepPoly): lower slope 1 iff u > −l, else 0. */
double lg_relax_alpha_default(double l, double u);

/* The phase of [l, u]: active iff l ≥ 0, else inactive iff u ≤ 0, else
 * unstable. A NaN bound counts as unstable (never as stable). */
lg_relu_phase lg_relax_phase(double l, double u);

/* The lines above for z ∈ [l, u]. alpha is the lower slope of an unstable
 * neuron, clamped into [0, 1] (NaN → 0). */
void lg_relax_relu_lines(double l, double u, double alpha, lg_relu_lines *r);

/* Replace the lower slope of an unstable neuron by alpha clamped into
 * [0, 1] (NaN → 0); stable lines are left as they are. */
void lg_relax_set_alpha(lg_relu_lines *r, double alpha);

/* The chord slope alone: the smallest s the module uses with
 * a ≤ s·(z − l) on [l, u] (l < 0 < u); s ∈ (0, 1]. */
double lg_relax_chord(double l, double u);

/* λ·relu(z) ≥ coef·z + icpt − err on [l, u] (see above). Non-finite λ
 * or bounds make err = +∞ unless the step is exact. */
void lg_relax_relu_apply(const lg_relu_lines *r, double lam, double *coef, double *icpt, double *err);

#endif
