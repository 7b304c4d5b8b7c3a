/* relax.c — the ReLU relaxation and its rounding (relax.h). */
#include "verify/relax.h"

#include <math.h>

double lg_relax_alpha_default(double l, double u) { return u > -l ? 1.0 : 0.0; }

lg_relu_phase lg_relax_phase(double l, double u)
{
    if (l >= 0.0) return LG_RELU_ACTIVE;
    if (u <= 0.0) return LG_RELU_INACTIVE;
    return LG_RELU_UNSTABLE;
}

double lg_relax_chord(double l, double u)
{
    double d = u - l;
    if (!(d < INFINITY)) return 1.0; /* l = −∞ or overflow: a ≤ z − l */
    /* fl(u/fl(u − l)) ≥ s_true·(1 − 2.0001u); +8u (exact power-of-two
     * scaling, rounded to nearest: ≥ +6u) and one ulp up cover it, also
     * when the quotient is subnormal (relax.h) */
    double s = u / d;
    s = nextafter(s + s * 0x1p-50, INFINITY);
    return s < 1.0 ? s : 1.0;
}

void lg_relax_set_alpha(lg_relu_lines *r, double alpha)
{
    if (r->phase == LG_RELU_UNSTABLE) r->lo_s = alpha > 0.0 ? (alpha < 1.0 ? alpha : 1.0) : 0.0;
}

void lg_relax_relu_lines(double l, double u, double alpha, lg_relu_lines *r)
{
    double al = fabs(l), au = fabs(u);
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

void lg_relax_relu_apply(const lg_relu_lines *r, double lam, double *coef, double *icpt, double *err)
{
    *icpt = 0.0;
    *err = 0.0;
    if (lam == 0.0) {
        *coef = 0.0;
        return;
    }
    double s = lam > 0.0 ? r->lo_s : r->up_s;
    double x0 = lam > 0.0 ? 0.0 : r->up_x0;
    *coef = lam * s;
    if (s == 0.0) {
        *coef = 0.0;
        return;
    }
    if (s == 1.0 && x0 == 0.0) return; /* exact: coef = λ */
    /* λs·z − λs·x0 = coef·z + icpt + (λs − coef)(z − x0) + (−coef·x0 − icpt),
     * |λs − coef| ≤ u·|coef|(1 + u) (+ 2^-1075 if it underflowed),
     * |z|, |x0| ≤ zmax: the two errors are ≤ 3u(1 + u)|coef|·zmax (+ the
     * underflow share, and 2^-1075 for icpt underflowing); 4u = 2^-51 covers
     * them and this product's rounding. */
    if (x0 != 0.0) *icpt = -(*coef) * x0;
    *err = (fabs(*coef) * 0x1p-51 + 0x1p-1073) * r->zmax + 0x1p-1072; /* + icpt's and err's underflow */
    if (!(*err < INFINITY) || !isfinite(*coef) || !isfinite(*icpt)) *err = INFINITY;
}
