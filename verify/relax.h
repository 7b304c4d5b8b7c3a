/* relax.h — THE linear relaxation of a ReLU a = max(0, z) over a
 * pre-activation interval z ∈ [l, u], and its sound application to a
 * coefficient in floating point. Every bound computation that relaxes a ReLU
 * uses this module and nothing else: CROWN/DeepPoly back-substitution
 * (backsub.c, behind bounds_symbolic.c and alpha.c), α-CROWN's slopes and
 * their gradient (alpha.c), the triangle rows of the LP tightening
 * (bounds_lp.c, which hands them to encode/lp_relax.h). β-CROWN (issue 13) is meant to build on the same lines.
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
 * A smooth activation's neuron (gelu, lgelu, swish, sigmoid, prelu) has the
 * phase LG_RELU_SMOOTH and the two certified lines of core/act_relax.h,
 * a ≥ lo_s·z + lo_c and a ≤ up_s·z + up_c; lg_relax_relu_apply applies them
 * the same way (the intercept λ·c rounded, its error added to err).
 *
 * Pure functions of their arguments; nothing is allocated.
 */
#ifndef LG_RELAX_H
#define LG_RELAX_H

#include <math.h>

typedef enum lg_relu_phase { LG_RELU_ACTIVE = 0, LG_RELU_INACTIVE, LG_RELU_UNSTABLE, LG_RELU_SMOOTH } lg_relu_phase;

typedef struct lg_relu_lines {
    lg_relu_phase phase;
    double lo_s;  /* a ≥ lo_s·z */
    double up_s;  /* a ≤ up_s·(z − up_x0) */
    double up_x0;
    double zmax;  /* max(|l|, |u|) (+∞ if unbounded or NaN): scale of the rounding terms */
    double lo_c, up_c; /* LG_RELU_SMOOTH only: a ≥ lo_s·z + lo_c, a ≤ up_s·z + up_c */
} lg_relu_lines;

/* The chord slope: the s used with a ≤ s·(z − l) on [l, u] (l < 0 < u),
 * u/(u − l) rounded up, s ∈ (0, 1] (relax.c). */
double lg_relax_chord(double l, double u);

/* The functions below are inline: they run once per coefficient in the
 * back-substitution's inner loop. */

/* The area heuristic (DeepPoly): lower slope 1 iff u > −l, else 0. */
static inline double lg_relax_alpha_default(double l, double u) { return u > -l ? 1.0 : 0.0; }

/* The phase of [l, u]: active iff l ≥ 0, else inactive iff u ≤ 0, else
 * unstable. A NaN bound counts as unstable (never as stable). */
static inline lg_relu_phase lg_relax_phase(double l, double u)
{
    if (l >= 0.0) return LG_RELU_ACTIVE;
    if (u <= 0.0) return LG_RELU_INACTIVE;
    return LG_RELU_UNSTABLE;
}

/* Replace the lower slope of an unstable neuron by alpha clamped into
 * [0, 1] (NaN → 0); stable lines are left as they are. */
static inline void lg_relax_set_alpha(lg_relu_lines *r, double alpha)
{
    if (r->phase == LG_RELU_UNSTABLE) r->lo_s = alpha > 0.0 ? (alpha < 1.0 ? alpha : 1.0) : 0.0;
}

/* The lines above for z ∈ [l, u]; alpha is the lower slope of an unstable
 * neuron (clamped as lg_relax_set_alpha). */
static inline void lg_relax_relu_lines(double l, double u, double alpha, lg_relu_lines *r)
{
    double al = l < 0 ? -l : l, au = u < 0 ? -u : u;
    r->phase = lg_relax_phase(l, u);
    r->zmax = al > au ? al : au;
    if (isnan(r->zmax)) r->zmax = INFINITY;
    r->up_x0 = 0.0;
    if (r->phase == LG_RELU_ACTIVE) {
        r->lo_s = r->up_s = 1.0;
    } else if (r->phase == LG_RELU_INACTIVE) {
        r->lo_s = r->up_s = 0.0;
    } else {
        lg_relax_set_alpha(r, alpha);
        r->up_s = lg_relax_chord(l, u);
        r->up_x0 = l;
    }
}

/* λ·relu(z) ≥ coef·z + icpt − err on [l, u] (see above). Non-finite λ
 * or bounds make err = +∞ unless the step is exact.
 *
 * λs·z − λs·x0 = coef·z + icpt + (λs − coef)(z − x0) + (−coef·x0 − icpt)
 * with |λs − coef| ≤ u·|coef|(1 + u) (+ 2^-1075 if it underflowed) and
 * |z|, |x0| ≤ zmax: the two errors are ≤ 3u(1 + u)|coef|·zmax (+ the
 * underflow shares, 2^-1074·zmax and 2^-1075 for icpt); 4u = 2^-51 and the
 * absolute terms below cover them and the rounding of err itself. */
static inline void lg_relax_relu_apply(const lg_relu_lines *r, double lam, double *coef, double *icpt, double *err)
{
    *icpt = 0.0;
    *err = 0.0;
    if (r->phase == LG_RELU_SMOOTH) {
        /* λs·z + λc = coef·z + icpt + (λs − coef)·z + (λc − icpt) */
        double s = lam > 0.0 ? r->lo_s : r->up_s, c = lam > 0.0 ? r->lo_c : r->up_c;
        *coef = lam * s;
        *icpt = lam * c;
        if (lam == 0.0) {
            *coef = *icpt = 0.0;
            return;
        }
        double ac = *coef < 0 ? -*coef : *coef, ai = *icpt < 0 ? -*icpt : *icpt;
        *err = (ac * 0x1p-51 + 0x1p-1073) * r->zmax + ai * 0x1p-51 + 0x1p-1072;
        if (!(*err < INFINITY) || !(ac < INFINITY) || !(ai < INFINITY)) *err = INFINITY;
        return;
    }
    double s = lam > 0.0 ? r->lo_s : r->up_s;
    if (lam == 0.0 || s == 0.0) {
        *coef = 0.0;
        return;
    }
    double x0 = lam > 0.0 ? 0.0 : r->up_x0;
    *coef = lam * s;
    if (s == 1.0 && x0 == 0.0) return; /* exact: coef = λ */
    if (x0 != 0.0) *icpt = -(*coef) * x0;
    double ac = *coef < 0 ? -*coef : *coef, ai = *icpt < 0 ? -*icpt : *icpt;
    *err = (ac * 0x1p-51 + 0x1p-1073) * r->zmax + 0x1p-1072;
    if (!(*err < INFINITY) || !(ac < INFINITY) || !(ai < INFINITY)) *err = INFINITY;
}

#endif
