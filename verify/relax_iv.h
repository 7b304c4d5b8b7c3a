/* relax_iv.h — outward-rounded interval arithmetic in double for the
 * relaxations of the Transformer node kinds (bilinear product, softmax,
 * layernorm; DESIGN.md §3 "Relaxations of the Transformer node kinds").
 *
 * An lg_dv is [lo, hi] of doubles holding an exact real value. Every
 * operation is evaluated rounded to nearest (the C default; nothing here
 * changes the rounding mode) and then moved one ulp outward with
 * nextafter (lg_up, lg_dn): a correctly rounded +, −, ·, / or sqrt is within half an ulp of
 * the exact result, so the moved end is on the right side of it, in the
 * subnormal range too, and an overflow to ±∞ becomes ∓DBL_MAX on the side
 * where that is still a bound. exp and 1/√ go through MPFR at 53 bits with
 * directed rounding (correctly rounded in the direction asked for), so no
 * accuracy of libm is assumed. NaN propagates; callers treat a non-finite
 * end as "no bound". Pure functions; nothing is allocated.
 */
#ifndef LG_RELAX_IV_H
#define LG_RELAX_IV_H

#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct lg_dv {
    double lo, hi;
} lg_dv;
/* scratch of g lg_dv also serves as 2g doubles (relax_softmax.c, devtf.c) */
_Static_assert(sizeof(lg_dv) == 2 * sizeof(double), "lg_dv has no padding");

/* nextafter(v, ∓∞) on the bits (the libm call dominated the interval passes): the neighbour
 * one ulp down / up, 0 → ∓2^-1074, ±∞ → ±DBL_MAX on the side it moves to, NaN and the end
 * itself (−∞ down, +∞ up) unchanged; the same doubles as nextafter (suite devgrad checks it). */
static inline double lg_dn(double v)
{
    if (!(v > -INFINITY)) return v;
    if (v == 0.0) return -DBL_TRUE_MIN;
    uint64_t b;
    memcpy(&b, &v, sizeof b);
    b = v > 0.0 ? b - 1u : b + 1u;
    memcpy(&v, &b, sizeof v);
    return v;
}
static inline double lg_up(double v)
{
    if (!(v < INFINITY)) return v;
    if (v == 0.0) return DBL_TRUE_MIN;
    uint64_t b;
    memcpy(&b, &v, sizeof b);
    b = v > 0.0 ? b + 1u : b - 1u;
    memcpy(&v, &b, sizeof v);
    return v;
}

static inline lg_dv lg_dv_pt(double v) { return (lg_dv){v, v}; }
static inline lg_dv lg_dv_add(lg_dv a, lg_dv b) { return (lg_dv){lg_dn(a.lo + b.lo), lg_up(a.hi + b.hi)}; }
static inline lg_dv lg_dv_sub(lg_dv a, lg_dv b) { return (lg_dv){lg_dn(a.lo - b.hi), lg_up(a.hi - b.lo)}; }
static inline lg_dv lg_dv_neg(lg_dv a) { return (lg_dv){-a.hi, -a.lo}; }

/* a·b: the min and max of the four end products, each rounded outward.
 * A zero end times an infinite one gives NaN, which the callers refuse. */
lg_dv lg_dv_mul(lg_dv a, lg_dv b);
/* a·a, ≥ 0 (tighter than lg_dv_mul(a, a) when a straddles 0). */
lg_dv lg_dv_sqr(lg_dv a);
/* a/b for b.lo > 0 (else [−∞, +∞]). */
lg_dv lg_dv_div(lg_dv a, lg_dv b);
/* exp(a), ends from MPFR exp rounded down / up. */
lg_dv lg_dv_exp(lg_dv a);
/* 1/√a for a.lo > 0 (else hi = +∞), from MPFR rec_sqrt rounded down / up. */
lg_dv lg_dv_rsqrt(lg_dv a);
/* max(|a.lo|, |a.hi|). */
static inline double lg_dv_mag(lg_dv a)
{
    double x = fabs(a.lo), y = fabs(a.hi);
    return x > y ? x : y;
}
static inline int lg_dv_finite(lg_dv a) { return isfinite(a.lo) && isfinite(a.hi); }
/* max |J − w| over the interval J, rounded up (∞ for NaN). */
static inline double lg_dv_dev(lg_dv J, double w)
{
    double d1 = lg_up(w - J.lo), d2 = lg_up(J.hi - w);
    double d = d1 > d2 ? d1 : d2;
    return isnan(d) ? INFINITY : d;
}
/* max(u_j − m_j, m_j − l_j), rounded up: the radius of [l_j, u_j] about m_j. */
static inline double lg_box_rad(const double *l, const double *u, const double *m, size_t j)
{
    double r1 = lg_up(u[j] - m[j]), r2 = lg_up(m[j] - l[j]);
    return r1 > r2 ? r1 : r2;
}

#endif
