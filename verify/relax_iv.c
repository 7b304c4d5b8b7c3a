/* relax_iv.c — outward-rounded double intervals (relax_iv.h). */
#include "verify/relax_iv.h"

#include <mpfr.h>

lg_dv lg_dv_mul(lg_dv a, lg_dv b)
{
    double p[4] = {a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi};
    double lo = p[0], hi = p[0];
    for (int k = 1; k < 4; k++) {
        if (isnan(p[k])) return (lg_dv){NAN, NAN};
        if (p[k] < lo) lo = p[k];
        if (p[k] > hi) hi = p[k];
    }
    if (isnan(p[0])) return (lg_dv){NAN, NAN};
    return (lg_dv){lg_dn(lo), lg_up(hi)};
}

lg_dv lg_dv_sqr(lg_dv a)
{
    double x = fabs(a.lo), y = fabs(a.hi);
    double m = x > y ? x : y;
    double n = (a.lo <= 0.0 && a.hi >= 0.0) ? 0.0 : (x < y ? x : y);
    return (lg_dv){n == 0.0 ? 0.0 : lg_dn(n * n), lg_up(m * m)};
}

lg_dv lg_dv_div(lg_dv a, lg_dv b)
{
    if (!(b.lo > 0.0)) return (lg_dv){-INFINITY, INFINITY};
    double p[4] = {a.lo / b.lo, a.lo / b.hi, a.hi / b.lo, a.hi / b.hi};
    double lo = p[0], hi = p[0];
    for (int k = 0; k < 4; k++) {
        if (isnan(p[k])) return (lg_dv){NAN, NAN};
        if (p[k] < lo) lo = p[k];
        if (p[k] > hi) hi = p[k];
    }
    return (lg_dv){lg_dn(lo), lg_up(hi)};
}

static double lg_mp1(double x, int up, int rsqrt)
{
    if (isnan(x)) return NAN;
    mpfr_t t;
    mpfr_init2(t, 53);
    mpfr_rnd_t r = up ? MPFR_RNDU : MPFR_RNDD;
    mpfr_set_d(t, x, MPFR_RNDN); /* exact: 53 bits */
    if (rsqrt) mpfr_rec_sqrt(t, t, r);
    else mpfr_exp(t, t, r);
    double v = mpfr_get_d(t, r);
    mpfr_clear(t);
    mpfr_free_cache(); /* exp's constant caches (log 2) would outlive the call, as in core/enclose.c */
    return v;
}

lg_dv lg_dv_exp(lg_dv a) { return (lg_dv){lg_mp1(a.lo, 0, 0), lg_mp1(a.hi, 1, 0)}; }

lg_dv lg_dv_rsqrt(lg_dv a)
{
    if (!(a.lo > 0.0)) return (lg_dv){a.hi > 0.0 ? lg_mp1(a.hi, 0, 1) : 0.0, INFINITY};
    return (lg_dv){lg_mp1(a.hi, 0, 1), lg_mp1(a.lo, 1, 1)};
}
