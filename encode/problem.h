/* problem.h — the self-contained query a solver back-end receives, and the
 * back-end interface (one table of function pointers per back-end).
 *
 * An lg_problem is read-only for the back-end and borrowed from verify/:
 * the ReLU network (activations identity or relu only; in_sub/in_div, if
 * present, is an exact affine map of the inputs the encoder must include),
 * one input box, the output condition (a disjunction of conjunctions, the
 * counterexample region as in verify/prop.h, a disjunction of lg_term), and sound pre-activation
 * bounds pre_lo[k][i] ≤ z_k[i] ≤ pre_hi[k][i] for every layer k and neuron i
 * (z = Σ_t A_t·a_src(t) + b before the activation; the net may be a graph,
 * core/net.h). Only neurons with pre_lo < 0 < pre_hi
 * (unstable) get a case split (Z3) or a binary (GLPK).
 *
 * A back-end answers with an lg_result: UNSAT (no counterexample exists;
 * what that claim is worth — exact, certified, or a hint that needs
 * confirmation — is the solver table's lg_solver_ops.unsat), SAT with a
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

/* The query's run context (core/runctx.h).
 * run.deadline: the one deadline (lg_now() seconds; ≤ 0 none) — the
 * back-end's own limits (Z3 timeout + interrupt, GLPK tm_lim per simplex + a check per node)
 * and the isolation's kill (isolate.h) all aim at it; run.verbose > 0:
 * solver chatter on stderr; run.seed: the solver's random seed;
 * run.memory_mb: the solver's own memory limit (Z3 memory_max_size, GLPK
 * glp_mem_limit) and the isolated child's cap; ≤ 0 none. */
typedef struct lg_solve_opts {
    lg_runctx run;
} lg_solve_opts;

/* No deadline, seed 0, quiet, no memory cap. */
lg_solve_opts lg_solve_opts_default(void);

/* The LP work behind an answer (GLPK): LPs solved, seconds in the simplex,
 * seconds checking certificates (encode/lp_cert.h), certificate checks
 * that did not close their LP (the node was split, or its term left
 * unknown). Summed by whoever aggregates results. */
typedef struct lg_lp_stats {
    long n_lp;
    double lp_seconds, cert_seconds;
    long n_open;
} lg_lp_stats;

/* a += b */
void lg_lp_stats_add(lg_lp_stats *a, const lg_lp_stats *b);

typedef struct lg_result {
    lg_answer answer;
    double *x;             /* [n_in] candidate counterexample when SAT, else NULL */
    char reason[256];      /* why UNKNOWN (timeout, tolerance, ...) */
    int timed_out;         /* UNKNOWN because the time limit was reached */
    double seconds;
    long nodes;            /* B&B nodes (GLPK), decisions (Z3, exact theory) or theory
                              conflicts (Z3, LP theory: each a learned clause) */
    lg_lp_stats lp;        /* LP work of an LP-based back-end (GLPK, Z3's LP theory); zero otherwise */
    char theory[8];        /* Z3: the theory that ran, "exact" or "lp"; "" otherwise */
} lg_result;

void lg_result_free(lg_result *r);

/* What a back-end's UNSAT proves. */
typedef enum lg_unsat_kind {
    LG_UNSAT_EXACT = 0,   /* decided in exact arithmetic (Z3: QF_LRA over the doubles as rationals) */
    LG_UNSAT_CERTIFIED,   /* floating-point search, every pruned node closed by a checked
                             certificate (GLPK, encode/lp_cert.h) */
    LG_UNSAT_CONFIRM      /* a floating-point claim: a hint until the table's `confirm`
                             back-end re-decides the same query */
} lg_unsat_kind;

/* The one solver table (solvers.c). Its entries are the back-ends and the
 * two modes of verify/ that are not a back-end themselves:
 *   "auto"  — a portfolio: verify/'s quick paths, then the back-ends in
 *             `chain` in order while the answer stays unknown;
 *   "none"  — no back-end (bounds, attack and branch and bound only).
 * Everything that takes a solver name (CLI, bench, the back-end decision,
 * branch-and-bound leaves) asks this table. */
typedef struct lg_solver_ops {
    const char *name;
    lg_status (*solve)(const lg_problem *p, const lg_solve_opts *o, lg_result *r); /* NULL for a mode */
    lg_status (*write)(const lg_problem *p, FILE *f);  /* NULL if no text form */
    lg_unsat_kind unsat;       /* what its UNSAT proves (back-ends) */
    const char *confirm;       /* LG_UNSAT_CONFIRM: the back-end that re-decides; else NULL */
    const char *chain[3];      /* the back-ends this name calls, in order (a back-end: itself;
                                  "auto": glpk, z3; "none": none), NULL-terminated */
    int for_verify;            /* a choice of `lgelu verify --solver` / `lgelu bench --solver` */
    int index;                 /* position in the table (bit masks of back-ends used) */
} lg_solver_ops;

/* "z3", "glpk", "smt2", "lp", "auto", "none", and Z3 by theory (encode/z3lp.h):
 * "z3-exact" (= "z3"), "z3-lp", "z3-lp-lemmas", "z3-auto"; NULL if unknown. */
const lg_solver_ops *lg_solver_find(const char *name);
/* Table entry number i (0-based), NULL past the end. */
const lg_solver_ops *lg_solver_at(int i);
/* The names accepted by `verify --solver`, as "auto, glpk, z3 or none", into
 * buf (n bytes). */
const char *lg_solver_verify_names(char *buf, size_t n);
/* 1 if name is a choice of `verify --solver`. */
int lg_solver_for_verify(const char *name);

/* Release the calling thread's solver state (GLPK keeps a thread-local
 * environment); a worker thread that used encode/ calls it before it ends. */
void lg_encode_thread_done(void);

#endif
