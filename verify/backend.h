/* backend.h — the one back-end decision: call a complete back-end on a
 * query, confirm what it claims, accept its witness (DESIGN.md §3).
 *
 * Used for whole cases (verify.c) and for branch-and-bound leaves
 * (bab_node.c) alike, so the rule cannot drift between them:
 *   - the back-end runs isolated (isolate.h) in a child process whenever
 *     there is a deadline or a memory cap, killed 0.5 s after the
 *     deadline; its own limits (time, memory_mb) are set too;
 *   - UNSAT counts as the solver table says (encode/problem.h,
 *     lg_solver_ops.unsat): exact (Z3) and certified (GLPK: every node
 *     closed by encode/lp_cert.h) count as they are; a back-end whose UNSAT
 *     needs confirmation is re-decided by the table's `confirm` back-end on
 *     the same query in the time left, and is `unknown` if not confirmed;
 *   - SAT counts only with a witness that passes lg_recheck on the case's
 *     box and terms, as given or after the nudges below (clip into the
 *     query box and a few repair steps of sizes 1e-6, 1e-4, 1e-2); the
 *     exact rational check of the final verdict is verify.c's witness gate;
 *   - a pick (encode/problem.h: lg_solver_pick) calls its rows in order
 *     while the answer is unknown ("auto": GLPK, then Z3).
 * Everything is borrowed; x [n_in] is the caller's.
 */
#ifndef LG_BACKEND_H
#define LG_BACKEND_H

#include "core/net.h"
#include "core/runctx.h"
#include "encode/problem.h"
#include "verify/outcome.h"

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
    lg_outcome how;       /* stage BACKEND: the row that decided (its confirming row, the theory that
                             ran), or why UNKNOWN */
    long nodes;           /* back-end nodes/decisions */
    lg_lp_stats lp;       /* LP work of the back-ends (GLPK) */
    double seconds;       /* wall-clock in back-ends */
    int calls;            /* back-end calls made */
} lg_backend_out;

/* LG_ERR_NOMEM, LG_ERR_ARG for a row whose UNSAT needs a confirmation it
 * has no row for; every answer (including a back-end failure, which is
 * UNKNOWN) is LG_OK. */
lg_status lg_backend_decide(const lg_solver_pick *solver, const lg_backend_call *c, lg_backend_out *out, double *x);

#endif
