/* term.h — the counterexample-region types shared by properties (verify/),
 * back-ends (encode/) and the re-check, and the one "does y satisfy a
 * term" check (DESIGN.md §3).
 *
 * A constraint is coef·y + d ≤ 0 over the outputs y. When a property's
 * constant could not be held exactly in a double, d is rounded toward the
 * larger region and the property keeps the other rounding beside it
 * (verify/prop.h: lg_prop.inner); the exact check (core/exact.h) takes it.
 *
 * A term is a conjunction of constraints; a property case is a disjunction
 * of terms. All arrays are owned by whoever built them (verify/prop.h).
 */
#ifndef LG_TERM_H
#define LG_TERM_H

/* One linear constraint over the outputs y: coef·y + d ≤ 0. */
typedef struct lg_lincon {
    double *coef;  /* [n_out] dense coefficients over the outputs y */
    double d;      /* constant: constraint is coef·y + d ≤ 0 */
} lg_lincon;

/* A conjunction of constraints. */
typedef struct lg_term {
    int n_cons;
    lg_lincon *cons;
} lg_term;

/* 1 if y[n_out] satisfies every constraint of T in double arithmetic:
 * Σ coef·y + d + slack[k] ≤ tol (slack: [n_cons] or NULL for zeros). */
int lg_term_holds(int n_out, const lg_term *T, const double *y, double tol, const double *slack);

/* Index of the first of terms[0..n_terms) that y satisfies (lg_term_holds,
 * tol 0), or −1. slack: every constraint of every term in order, or NULL. */
int lg_terms_first_holding(int n_out, int n_terms, const lg_term *terms, const double *y, const double *slack);

#endif
