/* relax_bilinear.h — sound linear planes of a product x·y over a box
 * x ∈ [lx, ux], y ∈ [ly, uy] (the bilinear node kind; DESIGN.md §3
 * "Relaxations of the Transformer node kinds"):
 *
 *   lo_a·x + lo_b·y + lo_c  ≤  x·y  ≤  up_a·x + up_b·y + up_c
 *
 * for every real point of the box, read with exact real arithmetic on the
 * six returned doubles.
 *
 * Slopes: McCormick's two planes on each side and, as in auto_LiRPA's
 * BoundMul, a convex combination of them weighted by α ∈ [0, 1]
 * (α-CROWN's variable; α = 1 is the first plane, NaN counts as 1):
 *
 *   lower  α·(ly, lx) + (1 − α)·(uy, ux)      (tight on x = lx, y = ly at α = 1)
 *   upper  α·(uy, lx) + (1 − α)·(ly, ux)      (tight on x = lx, y = uy at α = 1)
 *
 * Intercept: for ANY slopes (a, b), g(x, y) = x·y − a·x − b·y is affine in
 * each variable on its own, so its minimum and maximum over the box are at
 * corners. lo_c is the smallest of g at the four corners and up_c the
 * largest, each corner value evaluated in double and moved outward by the
 * summation rule (|v| + mass)·4·2^-50 + 2^-1000 (three products and two
 * sums: the error is at most ≈ 3u·mass plus underflow), so the plane holds
 * exactly; the slopes' own rounding needs no term, since the intercept is
 * computed for the slopes as stored. With the exact McCormick slopes the
 * corner intercept is McCormick's (tight at its corners, up to the margin).
 *
 * A bound that is not finite, or a corner value that overflows, gives the
 * vacuous planes (slopes 0, lo_c = −∞, up_c = +∞) and returns 0 (1 when the
 * planes are finite). Pure; nothing is allocated.
 */
#ifndef LG_RELAX_BILINEAR_H
#define LG_RELAX_BILINEAR_H

typedef struct lg_bilinear_planes {
    double lo_a, lo_b, lo_c; /* x·y ≥ lo_a·x + lo_b·y + lo_c */
    double up_a, up_b, up_c; /* x·y ≤ up_a·x + up_b·y + up_c */
} lg_bilinear_planes;

int lg_relax_bilinear(double lx, double ux, double ly, double uy, double alpha_lo, double alpha_up,
                      lg_bilinear_planes *p);

/* The interval image of x·y on the box (the four corner products rounded
 * outward; [−∞, +∞] when a bound is not finite). */
void lg_bilinear_image(double lx, double ux, double ly, double uy, double *lo, double *hi);

/* The sound intercept of the slopes (a, b) on the box: dir < 0 the lower
 * plane's (≤ min of x·y − a·x − b·y), dir > 0 the upper's (≥ max);
 * ∓∞ when not finite. */
double lg_bilinear_intercept(double lx, double ux, double ly, double uy, double a, double b, int dir);

#endif
