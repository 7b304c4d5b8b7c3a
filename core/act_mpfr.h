/* act_mpfr.h — outward-rounded MPFR interval arithmetic (DESIGN.md §3 "A
 * `violated` witness") and each activation's interval image, the `iv` hook
 * of its entry in the activation table (act.h).
 *
 * An lg_iv is [lo, hi] of LG_IV_PREC-bit MPFR numbers; every operation
 * rounds the lower end toward −∞ and the upper toward +∞, and MPFR's erfc,
 * exp and division are correctly rounded in the direction asked for, so an
 * interval holds the exact real value; nothing else is assumed about erf or
 * exp. The caller owns every lg_iv (lg_iv_init / lg_iv_clear) and the
 * scratch lg_iv_work (lg_iv_work_init / lg_iv_work_clear); nothing is kept
 * between calls.
 */
#ifndef LG_ACT_MPFR_H
#define LG_ACT_MPFR_H

#include <mpfr.h>

#define LG_IV_PREC 128 /* a product of two doubles is exact */

typedef struct lg_iv {
    mpfr_t lo, hi;
} lg_iv;

/* Scratch of an activation's image: two intervals, [1/√2] and two numbers. */
typedef struct lg_iv_work {
    lg_iv u, g, r2; /* r2 = [1/√2], set by lg_iv_work_init */
    mpfr_t t1, t2;
} lg_iv_work;

void lg_iv_init(lg_iv *v);
void lg_iv_clear(lg_iv *v);
void lg_iv_work_init(lg_iv_work *w);
void lg_iv_work_clear(lg_iv_work *w);

/* r = a·[b] for a finite double a (exact when it fits); r may alias b.
 * t is scratch. */
void lg_iv_scale(lg_iv *r, double a, const lg_iv *b, mpfr_t t);

/* The interval images, one per activation (the `iv` hook of act.h): z ←
 * an interval holding f(x; q) for every x ∈ z and, for a kind with a
 * parameter, every real q ∈ [p, next(p)] (an imported file's λ or β need
 * not be a double, DESIGN.md §3). Return 0, or −1 when p is outside what
 * the image handles (a softplus kind's p must be > 0); z is then
 * unspecified. */
int lg_iv_identity(lg_iv *z, double p, lg_iv_work *w);
int lg_iv_relu(lg_iv *z, double p, lg_iv_work *w);
int lg_iv_gelu(lg_iv *z, double p, lg_iv_work *w);
int lg_iv_lgelu(lg_iv *z, double p, lg_iv_work *w);
int lg_iv_sigmoid(lg_iv *z, double p, lg_iv_work *w);
int lg_iv_swish(lg_iv *z, double p, lg_iv_work *w);
int lg_iv_prelu(lg_iv *z, double p, lg_iv_work *w);

#endif
