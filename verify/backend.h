/* backend.h — the one back-end decision: call a complete back-end on a
 * query, confirm what it claims, accept its witness (DESIGN.md §3).
 *
 * Used for whole cases (verify.c) and for branch-and-bound leaves
 * (bab_node.c) alike, so the rule cannot drift between them:
 *   - the back-end runs isolated (isolate.h) in a child process whenever
 *     there is a deadline or a memory cap, killed one second after the
 *     deadline; its own limits (time, memory_mb) are set too;
 *   - UNSAT counts only if made in exact arithmetic (lg_result.exact): a
 *     floating-point infeasibility (GLPK) is re-decided by Z3 on the same
 *     query (QF_LRA over the file's doubles as exact rationals) in the time
 *     left, and is `unknown` if Z3 does not confirm it;
 *   - SAT counts only with a witness that passes lg_recheck on the case's
 *     box and terms, as given or after the nudges below (clip into the
 *     query box and a few repair steps of sizes 1e-6, 1e-4, 1e-2); the
 *     exact rational check of the final verdict is verify.c's witness gate;
 *   - "auto" is GLPK, then Z3 when GLPK leaves it open.
 * Everything is borrowed; x [n_in] is the caller's.
 */
#ifndef LG_BACKEND_H
#define LG_BACKEND_H

#include "core/net.h"
#include "core/runctx.h"
#include "encode/problem.h"

typedef struct lg_backend_call {
    const lg_net *net;
    const lg_problem *p;               /* the query (its box may be a node's sub-box) */
    const double *case_lo, *case_hi;   /* box a witness must lie in */
    int n_case_terms;                  /* region a witness must reach */
    const lg_term *case_terms;
    const lg_runctx *run;              /* deadline, seed, memory cap per call; verbose > 1: solver chatter */
    double max_s;                      /* seconds per back-end call; ≤ 0 no extra limit */
} lg_backend_call;

typedef struct lg_backend_out {
    lg_answer answer;     /* UNSAT: proved; SAT: x holds an accepted witness; else UNKNOWN */
    int timed_out;        /* UNKNOWN because of the deadline */
    char reason[256];     /* why UNKNOWN */
    char method[32];      /* "glpk", "z3", "glpk+z3" (GLPK's infeasibility confirmed by Z3), or for the
                             solvers "z3-exact", "z3-lp", "z3-auto" the theory that ran: "z3-exact", "z3-lp" */
    long nodes;           /* back-end nodes/decisions */
    long lps, lemmas;     /* Z3's LP theory: LPs solved, clauses learned from it */
    double seconds;       /* wall-clock in back-ends */
    int calls;            /* back-end calls made */
} lg_backend_out;

/* solver: "glpk", "z3", "z3-exact", "z3-lp", "z3-auto" or "auto". LG_ERR_ARG for an unknown name, LG_ERR_NOMEM;
 * every answer (including a back-end failure, which is UNKNOWN) is LG_OK. */
lg_status lg_backend_decide(const char *solver, const lg_backend_call *c, lg_backend_out *out, double *x);

#endif
