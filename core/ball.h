/* ball.h — the one rule that turns a point and a radius into boxes
 * (DESIGN.md §3 "Semantics"): the L∞ ball [x0 − ε, x0 + ε] of the real
 * numbers, clipped to [clip_lo, clip_hi], held in doubles two ways —
 * rounded outward (every real point of the ball lies inside: what a bound or
 * a proof must cover) and rounded inward (every double inside is a point of
 * the ball: where a witness must lie). Every box built from x and ε (verify,
 * check, bound, study, the deviation bound) comes from here. Also the
 * directed sum the rule and the property constants use. Stateless; the
 * caller owns every array.
 */
#ifndef LG_BALL_H
#define LG_BALL_H

#include <stddef.h>

/* a + b rounded down (dir < 0), up (dir > 0) or to nearest (dir = 0):
 * exact whenever a + b is a double; otherwise the nearest sum moved one ulp
 * when it went the wrong way (TwoSum gives the exact error). */
double lg_add_dir(double a, double b, int dir);

/* Outward box lo/hi [n] and, when lo_in/hi_in are not NULL, inward box
 * [n] of the ball around x0 [n] of radius eps ≥ 0, clipped to
 * [clip_lo, clip_hi]. The inward box may be empty in a coordinate only if
 * the ball misses the clip range there (lo_in > hi_in). */
void lg_ball_boxes(const double *x0, size_t n, double eps, double clip_lo, double clip_hi, double *lo, double *hi,
                   double *lo_in, double *hi_in);

#endif
