/* rational.h — exact dyadic rationals from doubles, as decimal strings.
 *
 * Every finite double is m·2^e exactly (m an integer < 2^53). lg_rat holds
 * that value as sign, numerator and denominator in decimal (no rounding, no
 * %g text): num/den in lowest terms, den a power of two. Solvers that read
 * rationals (Z3's Z3_mk_numeral, SMT-LIB 2 text) receive these strings, so
 * the encoded network is the double network exactly. Plain value type: the
 * strings live inside the struct; nothing to free.
 */
#ifndef LG_RATIONAL_H
#define LG_RATIONAL_H

#include <stdio.h>

#include "core/status.h"

/* 2^1074 has 324 decimal digits; DBL_MAX has 309. */
#define LG_RAT_DIGITS 340

typedef struct lg_rat {
    int neg;                  /* 1 if the value is < 0 */
    char num[LG_RAT_DIGITS];  /* decimal numerator, no sign, "0" for zero */
    char den[LG_RAT_DIGITS];  /* decimal denominator, a power of two, ≥ 1 */
} lg_rat;

/* Exact value of v. LG_ERR_NUMERIC if v is not finite. */
lg_status lg_rat_from_double(lg_rat *r, double v);

/* 1/r, exact (swaps num and den). LG_ERR_NUMERIC if r is zero. */
lg_status lg_rat_inverse(lg_rat *r);

/* 1 if r is zero. */
int lg_rat_is_zero(const lg_rat *r);

/* "[-]num/den" into buf (size ≥ 2·LG_RAT_DIGITS + 2), the form Z3_mk_numeral
 * accepts for Real sorts. Returns buf. */
char *lg_rat_str(const lg_rat *r, char *buf);

/* SMT-LIB 2 term: "(/ num den)" or "(- (/ num den))", "0.0" for zero. */
void lg_rat_write_smt(const lg_rat *r, FILE *f);

#endif
