/* ball.c — outward and inward boxes of an L∞ ball (ball.h). */
#include "core/ball.h"

#include <math.h>

double lg_add_dir(double a, double b, int dir)
{
    double s = a + b, bb = s - a, err = (a - (s - bb)) + (b - bb);
    if (!isfinite(s)) return s;
    if (dir < 0 && err < 0) return nextafter(s, -INFINITY);
    if (dir > 0 && err > 0) return nextafter(s, INFINITY);
    return s;
}

static double lg_ball_clip(double v, double lo, double hi) { return v < lo ? lo : (v > hi ? hi : v); }

void lg_ball_boxes(const double *x0, size_t n, double eps, double clip_lo, double clip_hi, double *lo, double *hi,
                   double *lo_in, double *hi_in)
{
    for (size_t i = 0; i < n; i++) {
        lo[i] = lg_ball_clip(lg_add_dir(x0[i], -eps, -1), clip_lo, clip_hi);
        hi[i] = lg_ball_clip(lg_add_dir(x0[i], eps, 1), clip_lo, clip_hi);
        if (!lo_in || !hi_in) continue;
        double a = lg_add_dir(x0[i], -eps, 1), b = lg_add_dir(x0[i], eps, -1);
        if (a > clip_hi || b < clip_lo) { /* the exact ball misses the clip range: no double lies in both */
            lo_in[i] = INFINITY;
            hi_in[i] = -INFINITY;
            continue;
        }
        lo_in[i] = lg_ball_clip(a, clip_lo, clip_hi);
        hi_in[i] = lg_ball_clip(b, clip_lo, clip_hi);
    }
}
