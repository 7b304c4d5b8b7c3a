/* problem.h — the self-contained query a solver back-end receives, and the
 * back-end interface (one table of function pointers per back-end).
 *
 * An lg_problem is read-only for the back-end and borrowed from verify/:
 * the ReLU network (activations identity or relu only; in_sub/in_div, if
 * present, is an exact affine map of the inputs the encoder must include),
 * one input box, the output condition (a disjunction of conjunctions, the
 * counterexample region as in verify/prop.h, a disjunction of lg_term), and sound pre-activation
 * bounds pre_lo[k][i] ≤ z_k[i] ≤ pre_hi[k][i] for every layer k and neuron i
 * (z = W·a + b before the activation). Only neurons with pre_lo < 0 < pre_hi
 * (unstable) get a case split (Z3) or a binary (GLPK).
 *
 * A back-end answers with an lg_result: UNSAT (no counterexample exists;
 * `exact` says whether that claim was made in exact arithmetic — GLPK's is
 * not and is only a hint until verify/backend.h confirms it), SAT with a
 * candidate input x (to be re-checked by verify/ — only verify/ declares
 * "violated"), or UNKNOWN with a reason (timed_out set for the deadline). lg_result owns its x;
 * lg_result_free releases it. Nothing solver-typed leaves encode/.
 */
#ifndef LG_PROBLEM_H
#define LG_PROBLEM_H

#include <stdio.h>

#include "core/net.h"
#include "core/runctx.h"
#include "core/term.h" /* lg_lincon, lg_term */

typedef struct lg_problem {
    const lg_net *net;       /* borrowed; relu/identity activations only */
    const double *lo, *hi;   /* input box [n_in] */
    int n_terms;             /* counterexample region: OR of terms */
    const lg_term *terms;    /* borrowed */
    double *const *pre_lo;   /* [n_layers][n_out_k] pre-activation bounds */
    double *const *pre_hi;
    int rounded;             /* 1 when the property's box or a constant was not a double and was
                                rounded toward the counterexample region (box outward, constants
                                down): exports then say so (DESIGN.md §3) */
    const char *property_smt; /* exports only, or NULL: the exact property as SMT-LIB text over
                                 X_i and Y_j (declarations and assertions); the SMT-LIB writer
                                 then asserts it instead of the box and terms above */
} lg_problem;

typedef enum lg_answer { LG_ANSWER_UNKNOWN = 0, LG_ANSWER_UNSAT, LG_ANSWER_SAT } lg_answer;

/* The query's run context (core/runctx.h) and the back-end's own option.
 * run.deadline: the one deadline (lg_now() seconds; ≤ 0 none) — the
 * back-end's own limits (Z3 timeout + interrupt, GLPK tm_lim + callback)
 * and the isolation's kill (isolate.h) all aim at it; run.verbose > 0:
 * solver chatter on stderr; run.seed: the solver's random seed;
 * run.memory_mb: the solver's own memory limit (Z3 memory_max_size, GLPK
 * glp_mem_limit) and the isolated child's cap; ≤ 0 none. */
typedef struct lg_solve_opts {
    lg_runctx run;
    double safety;      /* GLPK: margin against its tolerances (default 1e-6) */
} lg_solve_opts;

/* No deadline, seed 0, quiet, no memory cap, safety 1e-6. */
lg_solve_opts lg_solve_opts_default(void);

typedef struct lg_result {
    lg_answer answer;
    double *x;             /* [n_in] candidate counterexample when SAT, else NULL */
    char reason[256];      /* why UNKNOWN (timeout, tolerance, ...) */
    int timed_out;         /* UNKNOWN because the time limit was reached */
    int exact;             /* UNSAT decided in exact arithmetic (Z3); 0 for a floating-point
                              solver (GLPK), whose infeasibility verify/ must confirm */
    double seconds;
    long nodes;            /* B&B nodes (GLPK) or decisions (Z3) */
} lg_result;

void lg_result_free(lg_result *r);

typedef struct lg_solver_ops {
    const char *name;
    lg_status (*solve)(const lg_problem *p, const lg_solve_opts *o, lg_result *r);
    lg_status (*write)(const lg_problem *p, FILE *f);  /* NULL if no text form */
} lg_solver_ops;

/* "z3", "glpk", "smt2", "lp"; NULL if unknown. */
const lg_solver_ops *lg_solver_find(const char *name);

/* Release the calling thread's solver state (GLPK keeps a thread-local
 * environment); a worker thread that used encode/ calls it before it ends. */
void lg_encode_thread_done(void);

#endif
