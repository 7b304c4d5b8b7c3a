/* oracle.h — test support for the solver back-ends and the soundness
 * fuzzer: random small verification instances and the exact enumeration
 * oracle (DESIGN.md §4).
 *
 * The oracle shares no code and no arithmetic with encode/ or verify/: it
 * reads every double of the network, box and property as the exact rational
 * it denotes (mpq_set_d is exact) and works in GMP rationals only, so its
 * verdict is about the real-valued network with the file's weights taken as
 * exact values (DESIGN.md §3). It computes exact interval bounds to find the
 * stable ReLUs, then enumerates the activation patterns of the unstable ones
 * depth-first, layer by layer: with the phases of layers < k fixed, every
 * pre-activation of layer k is an exact affine form in x, a phase adds
 * z ≥ 0 (active, a = z) or z ≤ 0 (inactive, a = 0), and a prefix whose
 * constraints are infeasible is pruned. Each LP (x in the box, phase rows,
 * a term's rows c·y + d ≤ 0) is solved by the exact simplex of xlp.h.
 * SAT iff some pattern+term LP is feasible; its x is then an exact rational
 * counterexample. The caller's pre_lo/pre_hi are not read.
 *
 * lg_test_inst owns its network and arrays; lg_test_inst_free releases them.
 */
#ifndef LG_ORACLE_H
#define LG_ORACLE_H

#include <gmp.h>

#include "core/rng.h"
#include "encode/problem.h"
#include "gen_graph.h"

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

/* The shape of the back-end suites' random instances: 2–4 inputs, 1–2 hidden
 * layers of 3–6, 2–3 outputs, a box of half-width 0.05–0.65, normalised one
 * time in three. */
lg_test_shape lg_test_shape_small(lg_rng *r);

/* "sat", "unsat" or "unknown" (for test messages). */
const char *lg_test_answer_name(lg_answer a);

/* A random relu net of shape s (weights N(0,1/fan_in)), a box around a
 * random centre, interval-arithmetic pre-activation bounds (widened outward
 * by 1e-9 relative so rounding cannot make them unsound) and a
 * robustness-style condition: label ℓ = argmax at the centre, one term
 * y_ℓ − y_j − κ ≤ 0 per j ≠ ℓ (sometimes one term of two such constraints),
 * with κ drawn around the centre's gap so that both verdicts occur. */
lg_status lg_test_inst_random(lg_test_inst *in, lg_rng *r, const lg_test_shape *s);
/* The same over a random DAG (gen_graph.h: residual sums, Concat, Slice,
 * conv terms); a box of half-width 0.05–0.65, normalised one time in three. */
lg_status lg_test_inst_random_dag(lg_test_inst *in, lg_rng *r, const lg_test_dag_opts *o);
/* Give in->net (already built, weights set) a box of half-width about
 * `box` around a random centre, optionally a random normalisation, interval
 * pre-activation bounds and the robustness-style property above. */
void lg_test_inst_finish(lg_test_inst *in, lg_rng *r, double box, int normalise);

/* Recompute pre_lo/pre_hi by interval arithmetic from the box. */
void lg_test_inst_bounds(lg_test_inst *in);

void lg_test_inst_free(lg_test_inst *in);

/* The enumeration oracle. *answer is LG_ANSWER_SAT or LG_ANSWER_UNSAT
 * (exact). On SAT, x (when not NULL, n_in doubles) receives the witness
 * rounded to double (it may miss the region by that rounding; use
 * lg_oracle_decide for the exact point). LG_ERR_ARG if more than
 * LG_ORACLE_MAX_UNSTABLE neurons are unstable under exact interval bounds;
 * LG_ERR_UNSUPPORTED for activations other than relu/identity. *n_lp counts
 * the exact LPs solved (may be NULL). */
lg_status lg_oracle_solve(const lg_problem *p, lg_answer *answer, double *x, long *n_lp);

/* As lg_oracle_solve, the witness exact: x[n_in] initialised mpq_t or NULL. */
lg_status lg_oracle_decide(const lg_problem *p, lg_answer *answer, mpq_t *x, long *n_lp);

/* The exact depth of the property: gap = min over x in the box, over terms,
 * of max over the term's constraints of coef·f(x) + d. The property is
 * violated iff gap ≤ 0; subtracting gap − τ from every d of every term
 * leaves a property whose true margin is exactly τ. Every term needs at
 * least one constraint (else LG_ERR_ARG). x (may be NULL): a minimiser. */
lg_status lg_oracle_gap(const lg_problem *p, mpq_t gap, mpq_t *x, long *n_lp);

/* Exact forward pass of the real-valued network at the rational point x
 * (normalisation included): y[n_out] initialised mpq_t. */
void lg_oracle_forward(const lg_net *net, const mpq_t *x, mpq_t *y);

/* 1 if the double point x lies in the box and the exact forward pass
 * satisfies some term exactly (a true counterexample), else 0. */
int lg_oracle_is_counterexample(const lg_problem *p, const double *x);
/* The same for the region with every constant lowered by K ≥ 0 exactly:
 * Σ coef·y + d − K ≤ 0 in rationals (K need not make d − K a double). */
int lg_oracle_is_counterexample_k(const lg_problem *p, const double *x, double K);

/* |y_rn,j − y_ref,j| maximised over the box [lo, hi] (n_in ≤ 64) by projected sign-gradient
 * ascent from x (finite-difference gradients; `steps` steps of size a0·0.9^step times the
 * box's width); x ends at the best point found, whose deviation is returned. yr, yg hold the
 * two nets' outputs, scratch is lg_net_forward's. The sampling side of the deviation oracles. */
double lg_test_pgd_deviation(const lg_net *rn, const lg_net *ref, int j, const double *lo, const double *hi,
                             double *x, int steps, double a0, double *yr, double *yg, double *scratch);

/* 1 if x is in the box and the double forward pass satisfies term t within
 * tol (coef·y + d ≤ tol). */
int lg_test_term_holds(const lg_problem *p, int t, const double *x, double tol);
/* 1 if some term holds (as above). */
int lg_test_any_term_holds(const lg_problem *p, const double *x, double tol);

#endif
