/* relax.c — the chord slope of the ReLU relaxation (relax.h; the rest of
 * the module is inline in the header). */
#include "verify/relax.h"

#include <math.h>

double lg_relax_chord(double l, double u)
{
    double d = u - l;
    if (!(d < INFINITY)) return 1.0; /* l = −∞ or overflow: a ≤ z − l */
    /* fl(u/fl(u − l)) ≥ s_true·(1 − 2.0001u); +8u (exact power-of-two
     * scaling, rounded to nearest: ≥ +6u) covers it for a normal quotient,
     * + 2^-1074 (absorbed then) for a subnormal one, whose error is at most
     * half of that plus a relative 2u of a subnormal */
    double s = u / d;
    s = (s + s * 0x1p-50) + 0x1p-1074;
    return s < 1.0 ? s : 1.0;
}
