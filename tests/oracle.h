/* oracle.h — test support for the solver back-ends: random small
 * verification instances and the enumeration oracle (DESIGN.md §4).
 *
 * The oracle shares no code with encode/'s back-ends: it enumerates the
 * activation patterns of the unstable ReLUs (depth-first, layer by layer,
 * pruning patterns whose partial LP is infeasible); for each complete
 * pattern and each term it solves the LP
 *
 *   x ∈ box, normalisation, z_k = W_k·a_{k−1} + b_k,
 *   active:   a = z, z ≥ 0        inactive: a = 0, z ≤ 0
 *   (stable neurons use the phase given by the bounds, with the same
 *   constraint; unfixed ones in a partial pattern only a ≥ 0, a ≥ z),
 *   term:     c·y + d ≤ 0 for each of its constraints
 *
 * with GLPK's exact rational simplex (glp_simplex for a basis, then
 * glp_exact), so it shares neither the big-M formulation nor floating
 * tolerances. glp_exact approximates non-integral doubles by continued
 * fractions (relative error 1e-9, glpapi07.c set_d_eps) but reads integral
 * ones exactly, so every row is scaled by a power of two that makes its data
 * integral and all bounds are moved into rows: the LPs are the doubles'
 * exact rationals. SAT iff some pattern+term LP
 * is feasible; its x is then a true counterexample. Pre-activation bounds
 * are only used to decide which neurons are stable.
 *
 * lg_test_inst owns its network and arrays; lg_test_inst_free releases them.
 */
#ifndef LG_ORACLE_H
#define LG_ORACLE_H

#include "core/rng.h"
#include "encode/problem.h"

#define LG_ORACLE_MAX_UNSTABLE 12

typedef struct lg_test_inst {
    lg_net net;
    double *lo, *hi;           /* [n_in] */
    double **pre_lo, **pre_hi; /* [n_layers][n_out_k], interval arithmetic */
    int n_terms;
    lg_term *terms;
    lg_problem prob;           /* points into the fields above */
    int label;
    double margin;
} lg_test_inst;

/* Shape of a random instance. */
typedef struct lg_test_shape {
    int n_layers;   /* affine layers, the last one identity */
    int dims[8];    /* dims[0] inputs .. dims[n_layers] outputs */
    double box;     /* half-width of the input box around a random centre */
    int normalise;  /* give the net a random in_sub/in_div */
} lg_test_shape;

/* A random relu net of shape s (weights N(0,1/fan_in)), a box around a
 * random centre, interval-arithmetic pre-activation bounds (widened outward
 * by 1e-9 relative so rounding cannot make them unsound) and a
 * robustness-style condition: label ℓ = argmax at the centre, one term
 * y_ℓ − y_j − κ ≤ 0 per j ≠ ℓ (sometimes one term of two such constraints),
 * with κ drawn around the centre's gap so that both verdicts occur. */
lg_status lg_test_inst_random(lg_test_inst *in, lg_rng *r, const lg_test_shape *s);

/* Recompute pre_lo/pre_hi by interval arithmetic from the box. */
void lg_test_inst_bounds(lg_test_inst *in);

void lg_test_inst_free(lg_test_inst *in);

/* The enumeration oracle. *answer is LG_ANSWER_SAT (x filled, n_in doubles,
 * when x is not NULL) or LG_ANSWER_UNSAT. LG_ERR_ARG if more than
 * LG_ORACLE_MAX_UNSTABLE unstable neurons; LG_ERR_SOLVER if GLPK's exact
 * simplex fails. *n_lp counts the exact LPs solved (may be NULL). */
lg_status lg_oracle_solve(const lg_problem *p, lg_answer *answer, double *x, long *n_lp);

/* 1 if x is in the box and the double forward pass satisfies term t within
 * tol (coef·y + d ≤ tol). */
int lg_test_term_holds(const lg_problem *p, int t, const double *x, double tol);
/* 1 if some term holds (as above). */
int lg_test_any_term_holds(const lg_problem *p, const double *x, double tol);

#endif
