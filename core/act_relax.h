/* act_relax.h — sound linear relaxations of a smooth activation (gelu,
 * lgelu, swish, sigmoid, prelu; core/act.h) over a pre-activation interval
 * [l, u] (DESIGN.md §3 "Smooth activations"):
 *
 *   lo_s·x + lo_c  ≤  f(x)  ≤  up_s·x + up_c      for every real x ∈ [l, u],
 *
 * read with exact real arithmetic on the four returned doubles, for the
 * exact f (erfc, exp of the reals) and, for lgelu and swish, for every
 * parameter in [p, next(p)] (f grows with λ and β: ∂f/∂λ = x²φ(λx) ≥ 0,
 * ∂f/∂β = x²σ'(βx) ≥ 0, so the lower line is certified with p and the upper
 * with next(p)).
 *
 * How: candidate lines are chosen by the curvature regions of f (the
 * activation table's inflection points): a tangent where f is convex
 * (below) or concave (above), the chord where f is concave (below) or
 * convex (above), the tangent at a caller's point (α-CROWN's α is that
 * point's position in [l, u]) and the flat line at the sampled minimum
 * (maximum), which covers the non-convex, non-monotone part of x·Φ(λx)
 * below −0.75/λ. Each candidate is then CERTIFIED, whatever chose it: the
 * gap g = f − line is evaluated at N + 1 points of [l, u] (the ends, the
 * inflection points inside, the tangent point) with a rounding margin per
 * value, and between neighbours x_i < x_{i+1}
 *
 *   g(x) ≥ min(g(x_i), g(x_{i+1})) − K_i·(x_{i+1} − x_i)²/8,
 *   K_i ≥ sup |f''| on [x_i, x_{i+1}] (lg_act_info.d2max),
 *
 * so the constant is moved by the certified minimum (rounded outward) until
 * the line holds everywhere. The best certified candidate by area (its
 * value at the midpoint) is returned. libm's erfc and exp are trusted to a
 * relative 2^-39 (as the deviation bound's 1e-12, anneal/deviation.h); the
 * tests check the lines against 256-bit MPFR.
 *
 * Infinite or NaN bounds give the vacuous lines (constants ∓∞, slopes 0),
 * except for sigmoid (0 ≤ σ ≤ 1). Pure functions of their arguments;
 * lg_act_relax keeps a per-thread memo of recent results (one allocation per
 * thread, freed when the thread exits), which never changes what it returns.
 */
#ifndef LG_ACT_RELAX_H
#define LG_ACT_RELAX_H

#include "core/act.h"

/* The relative error to which libm's exp and erfc are trusted (the one value every certified
 * relaxation, bound and deviation rule that evaluates them uses). */
#define LG_LIBM_REL_ERR 0x1p-39

typedef struct lg_act_lines {
    double lo_s, lo_c; /* f(x) ≥ lo_s·x + lo_c on [l, u] */
    double up_s, up_c; /* f(x) ≤ up_s·x + up_c on [l, u] */
} lg_act_lines;

/* Samples per interval (besides the inflection and tangent points). */
#define LG_ACT_RELAX_N 48

/* The lines of kind a (parameter p as in lg_layer.lambda) on [l, u].
 * tlo, tup ∈ [0, 1]: tangent points l + t·(u − l) of the lower and upper
 * line (α-CROWN); NAN for the area-best of the candidates above. Kinds
 * that are not smooth (identity, relu) get the vacuous lines. */
void lg_act_relax(lg_act a, double p, double l, double u, double tlo, double tup, lg_act_lines *r);

/* Interval image: *flo ≤ f(x) ≤ *fhi for every x ∈ [l, u] (sound, from
 * the same certification with flat lines). */
void lg_act_image(lg_act a, double p, double l, double u, double *flo, double *fhi);

#endif
