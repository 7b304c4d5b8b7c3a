/* relax_plane.h — a plane of a node kind applied to one coefficient of a
 * back-substitution row, with its rounding (DESIGN.md §3 "Relaxations of the
 * Transformer node kinds", "Floating point and overflow in the bounds").
 *
 * Given the planes  Σ_j lo_w[j]·x_j + lo_c ≤ f(x) ≤ Σ_j up_w[j]·x_j + up_c
 * of one output f on the box |x_j| ≤ xmax[j] (relax_bilinear.h,
 * relax_softmax.h, relax_layernorm.h) and the row's coefficient λ of f,
 * lg_relax_plane_apply returns coef[n], icpt and err with
 *
 *   λ·f(x) ≥ Σ_j coef[j]·x_j + icpt − err      for every x of the box,
 *
 * read with exact reals: λ ≥ 0 takes the lower plane, λ < 0 the upper
 * (λ·f ≥ λ·upper then). coef[j] = fl(λ·w_j) and icpt = fl(λ·c) err by at
 * most u·|result| each, plus 2^-1075 if they underflow, so
 *   err = Σ_j (2^-51·|coef[j]| + 2^-1073)·xmax[j] + 2^-51·|icpt| + 2^-1072,
 * summed rounded up, covers both with room for its own rounding (the rule
 * of relax.h's lg_relax_relu_apply). λ = 0 gives zeros. A coefficient,
 * intercept or err that is not finite gives err = +∞ (the row's bound is
 * then −∞, never wrong). An upper bound of λ·f is minus the lower bound of
 * (−λ)·f. Pure; the caller owns coef.
 */
#ifndef LG_RELAX_PLANE_H
#define LG_RELAX_PLANE_H

#include <stddef.h>

void lg_relax_plane_apply(size_t n, const double *lo_w, double lo_c, const double *up_w, double up_c,
                          const double *xmax, double lam, double *coef, double *icpt, double *err);

#endif
