/* relax_bilinear.c — McCormick planes with α and corner intercepts
 * (relax_bilinear.h). */
#include "verify/relax_bilinear.h"

#include <math.h>

#include "verify/relax_iv.h"

/* x·y − a·x − b·y at one corner, moved outward (dir < 0 down, > 0 up). */
static double lg_bil_corner(double x, double y, double a, double b, int dir)
{
    double p1 = x * y, p2 = a * x, p3 = b * y;
    double v = (p1 - p2) - p3;
    double mass = fabs(p1) + fabs(p2) + fabs(p3);
    double e = (fabs(v) + mass) * 0x1p-48 + 0x1p-1000; /* (|v| + mass)·(3 + 1)·2^-50 */
    if (!isfinite(v) || !isfinite(e)) return dir < 0 ? -INFINITY : INFINITY;
    return dir < 0 ? lg_dn(v - e) : lg_up(v + e);
}

double lg_bilinear_intercept(double lx, double ux, double ly, double uy, double a, double b, int dir)
{
    double bad = dir < 0 ? -INFINITY : INFINITY;
    if (!isfinite(lx) || !isfinite(ux) || !isfinite(ly) || !isfinite(uy) || !isfinite(a) || !isfinite(b)) return bad;
    double xs[2] = {lx, ux}, ys[2] = {ly, uy};
    double c = dir < 0 ? INFINITY : -INFINITY;
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) {
            double v = lg_bil_corner(xs[i], ys[j], a, b, dir);
            if (!isfinite(v)) return bad;
            if (dir < 0 ? v < c : v > c) c = v;
        }
    return c;
}

static double lg_bil_clamp(double al)
{
    if (isnan(al)) return 1.0;
    return al < 0.0 ? 0.0 : (al > 1.0 ? 1.0 : al);
}

int lg_relax_bilinear(double lx, double ux, double ly, double uy, double alpha_lo, double alpha_up,
                      lg_bilinear_planes *p)
{
    double al = lg_bil_clamp(alpha_lo), au = lg_bil_clamp(alpha_up);
    /* the slopes in double: any value is sound, the intercept follows them */
    p->lo_a = al * ly + (1.0 - al) * uy;
    p->lo_b = al * lx + (1.0 - al) * ux;
    p->up_a = au * uy + (1.0 - au) * ly;
    p->up_b = au * lx + (1.0 - au) * ux;
    p->lo_c = lg_bilinear_intercept(lx, ux, ly, uy, p->lo_a, p->lo_b, -1);
    p->up_c = lg_bilinear_intercept(lx, ux, ly, uy, p->up_a, p->up_b, 1);
    int ok = 1;
    if (!isfinite(p->lo_c)) {
        p->lo_a = p->lo_b = 0.0;
        p->lo_c = -INFINITY;
        ok = 0;
    }
    if (!isfinite(p->up_c)) {
        p->up_a = p->up_b = 0.0;
        p->up_c = INFINITY;
        ok = 0;
    }
    return ok;
}

void lg_bilinear_image(double lx, double ux, double ly, double uy, double *lo, double *hi)
{
    lg_dv r = lg_dv_mul((lg_dv){lx, ux}, (lg_dv){ly, uy});
    if (!lg_dv_finite(r)) r = (lg_dv){-INFINITY, INFINITY};
    *lo = r.lo;
    *hi = r.hi;
}
