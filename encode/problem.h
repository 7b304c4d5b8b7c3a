/* problem.h — the self-contained query a solver back-end receives, and the
 * back-end interface (one table of function pointers per back-end).
 *
 * An lg_problem is read-only for the back-end and borrowed from verify/:
 * the ReLU network (activations identity or relu only, and Transformer
 * nodes with their relaxation lg_trelax; in_sub/in_div, if
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

/* The Transformer nodes' relaxation over the query's box (DESIGN.md §3
 * "Back-ends on Transformer nodes"), built by verify/tnode_planes.h from the
 * query's bounds and borrowed by the problem. A back-end encodes a
 * Transformer layer's outputs as free values within their bounds
 * pre_lo/pre_hi (no row of their own) plus these rows, read with exact real
 * arithmetic on the doubles:
 *   Σ_q coef[q]·v(var[q])  sense  rhs      sense 'L' (≤), 'G' (≥), 'E' (=)
 * over the flat node positions (lg_net_node_offset: the normalised input,
 * then each layer's outputs; a position whose value is the constant 0 — a
 * stably inactive ReLU — drops out) and auxiliary values (var ≥ nodes_len:
 * auxiliary var − nodes_len, within [aux_lo, aux_hi]: a product's value
 * when an output sums several). Every row holds at every real point of the
 * network on the query's box, so the relaxed query has every real
 * trajectory among its solutions. No row names a value twice. The object
 * owns its arrays (lg_trelax_init / lg_trelax_free in trelax.c). */
typedef struct lg_trow {
    char sense;     /* 'L', 'G', 'E' */
    double rhs;
    int start, n;   /* entries var/coef[start .. start+n) */
} lg_trow;

typedef struct lg_trelax {
    size_t nodes_len;       /* lg_net_nodes_len of the net it was built for */
    int n_aux, cap_aux;
    double *aux_lo, *aux_hi; /* [n_aux] finite */
    int n_rows, cap_rows;
    lg_trow *rows;
    int *var;               /* [n_nz] */
    double *coef;           /* [n_nz] nonzero, finite */
    int n_nz, cap_nz;
    int n_product, n_softmax, n_layernorm; /* nodes relaxed, for the exports' comment */
} lg_trelax;

void lg_trelax_init(lg_trelax *r, size_t nodes_len);
void lg_trelax_free(lg_trelax *r);
/* A new auxiliary value in [lo, hi] (finite); its var into *var. LG_ERR_NOMEM / LG_ERR_ARG. */
lg_status lg_trelax_add_aux(lg_trelax *r, double lo, double hi, int *var);
/* Append Σ coef[j]·v(var[j]) sense rhs; zero coefficients are left out, a
 * var named twice, a coefficient or rhs that is not finite refused (LG_ERR_ARG). */
lg_status lg_trelax_add_row(lg_trelax *r, char sense, double rhs, int n, const int *var, const double *coef);
/* LG_OK when r is well formed for a net with nodes_len positions (every var in range, finite data). */
lg_status lg_trelax_check(const lg_trelax *r, size_t nodes_len);

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
    const lg_trelax *trelax;  /* a net with Transformer nodes: their relaxation over this query's box
                                 (above; borrowed); NULL otherwise. A back-end's UNSAT then proves the
                                 property; its SAT is a candidate of the relaxation, which verify/
                                 re-checks on the real net */
} lg_problem;

typedef enum lg_answer { LG_ANSWER_UNKNOWN = 0, LG_ANSWER_UNSAT, LG_ANSWER_SAT } lg_answer;

/* The query's run context (core/runctx.h).
 * run.deadline: the one deadline (lg_now() seconds; ≤ 0 none) — the
 * back-end's own limits (Z3 timeout + interrupt, GLPK tm_lim per simplex + a check per node)
 * and the isolation's kill (isolate.h) all aim at it; run.verbose > 0:
 * solver chatter on stderr; run.seed: the solver's random seed;
 * run.memory_mb: the solver's own memory limit (Z3 memory_max_size, GLPK
 * glp_mem_limit) and the isolated child's cap; ≤ 0 none.
 * z3lp: the knobs of Z3's LP theory (z3lp.h), for measurement; zeroed = the
 * defaults. */
typedef struct lg_z3lp_opts {
    int no_bases;      /* 1: no per-term simplex bases (each term's LP restarts from GLPK's last) */
    int no_lazy;       /* 1: online mode checks every literal, not only once a term is true */
    int propagate;     /* phase-propagation LPs per partial check (default LG_Z3LP_PROPAGATE_DEFAULT: off) */
    int propagate_it;  /* simplex iterations per propagation LP (0: LG_Z3LP_PROPAGATE_IT_DEFAULT; < 0 no limit) */
} lg_z3lp_opts;

typedef struct lg_solve_opts {
    lg_runctx run;
    lg_z3lp_opts z3lp;
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

/* What a back-end row of the solver table can do (bits of lg_solver_ops.caps). */
enum {
    LG_SOLVER_PWL_ONLY = 1 << 0, /* encodes piecewise-linear (relu/identity) networks only */
    LG_SOLVER_COMPLETE = 1 << 1, /* decides every query given the time (UNSAT or a candidate) */
    LG_SOLVER_FORK = 1 << 2,     /* under a time or memory limit it runs in a child process
                                    (isolate.h): its native library may not stop when asked */
    LG_SOLVER_PICKS_THEORY = 1 << 3 /* chooses its theory per query (the result's theory says which ran) */
};

/* The one solver table (solvers.c): one row per back-end. Rows refer to
 * rows by pointer. Verify's modes ("auto": a portfolio; "none": no
 * back-end) are not rows (lg_solver_pick below), and neither are the
 * names that only alias a row ("smt2" = z3, "lp" = glpk: the text forms
 * `lgelu encode --format` takes). A name is resolved once, at the edge
 * (CLI, the study's grid), into a row pointer; past that nobody compares
 * solver names. */
typedef struct lg_solver_ops lg_solver_ops;
struct lg_solver_ops {
    const char *name;
    lg_status (*solve)(const lg_problem *p, const lg_solve_opts *o, lg_result *r);
    lg_status (*write)(const lg_problem *p, FILE *f);  /* NULL if no text form */
    lg_unsat_kind unsat;           /* what its UNSAT proves */
    const lg_solver_ops *confirm;  /* LG_UNSAT_CONFIRM: the row that re-decides; else NULL */
    unsigned caps;                 /* LG_SOLVER_* bits */
    const char *family;            /* rows that name their theory: the family ("z3"), else NULL */
    const char *theory;            /* the theory's name in that family ("auto", "exact", "lp", "lp-lemmas");
                                      the result is labelled "<family>-<theory that ran>" (z3-exact, z3-lp) */
    const lg_solver_ops *const *theories; /* a family's rows by theory (z3: auto, exact, lp, lp-lemmas),
                                             NULL-terminated, or NULL */
    int for_verify;                /* a choice of `lgelu verify --solver` / `lgelu bench --solver` */
    int index;                     /* position in the table (bit masks of back-ends used) */
    lg_status (*supports)(const lg_problem *p); /* LG_OK when the row takes p's network; else
                                                   LG_ERR_UNSUPPORTED saying why (lg_fail) */
};

/* The rows named "glpk" and "z3" (the portfolio's back-ends; the defaults
 * of a branch-and-bound leaf and of `--z3-theory`). */
extern const lg_solver_ops *const lg_solver_glpk;
extern const lg_solver_ops *const lg_solver_z3;

/* A row by name: a row's own name ("z3", "glpk", "z3-exact", "z3-lp",
 * "z3-lp-lemmas", "z3-auto") or an alias ("smt2", "lp"); NULL if unknown.
 * For the edges only (CLI, grid, tests). */
const lg_solver_ops *lg_solver_find(const char *name);
/* Table row number i (0-based), NULL past the end. */
const lg_solver_ops *lg_solver_at(int i);
/* The row of family's theory named theory ("auto", "exact", "lp",
 * "lp-lemmas" for z3); NULL if family has no such theory. */
const lg_solver_ops *lg_solver_theory(const lg_solver_ops *family, const char *theory);
/* The names of family's theories as "auto, exact, lp or lp-lemmas" into buf. */
const char *lg_solver_theory_names(const lg_solver_ops *family, char *buf, size_t n);
/* What names the result of row when theory_ran ("exact", "lp" or "") ran:
 * "<family>-<theory>" for a row that names its theory, else the row's name.
 * Into buf (n bytes); returns buf. */
const char *lg_solver_label(const lg_solver_ops *row, const char *theory_ran, char *buf, size_t n);

/* Verify's use of the table: a mode, and for LG_SOLVER_ONE the row. The
 * zeroed pick is "auto". */
typedef enum lg_solver_mode {
    LG_SOLVER_AUTO = 0, /* a portfolio: verify/'s quick paths, then the portfolio's rows in order while
                           the answer stays unknown (GLPK, then Z3) */
    LG_SOLVER_NONE,     /* no back-end (bounds, attack and branch and bound only) */
    LG_SOLVER_ONE       /* one back-end: row */
} lg_solver_mode;

typedef struct lg_solver_pick {
    lg_solver_mode mode;
    const lg_solver_ops *row; /* LG_SOLVER_ONE: the back-end; else NULL */
} lg_solver_pick;

/* Resolve a `verify --solver` name ("auto", "none", or a row with
 * for_verify) into *p. LG_ERR_ARG ("expected auto, glpk, z3 or none, got
 * 'x'") otherwise. */
lg_status lg_solver_parse(const char *name, lg_solver_pick *p);
/* The back-ends p calls, in order (auto: the portfolio; one: its row;
 * none: none), into chain[3]; returns how many. */
int lg_solver_chain(const lg_solver_pick *p, const lg_solver_ops *chain[3]);
/* "auto", "none", or the row's name. */
const char *lg_solver_pick_name(const lg_solver_pick *p);
/* The names accepted by `verify --solver`, as "auto, glpk, z3 or none", into
 * buf (n bytes). */
const char *lg_solver_verify_names(char *buf, size_t n);

/* Release the calling thread's solver state (GLPK keeps a thread-local
 * environment); a worker thread that used encode/ calls it before it ends. */
void lg_encode_thread_done(void);

#endif
