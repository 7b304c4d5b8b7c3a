/* isolate.h — run a solver back-end in a child process under a hard deadline
 * and a memory cap (internal to encode/: the solver table in solvers.c wraps
 * every back-end with it, so every caller of lg_solver_find(...)->solve gets
 * the same single isolation whenever a time or memory limit is set).
 *
 * A back-end receives its deadline in lg_solve_opts, but a native solver
 * may not stop when asked (an interrupt ignored in some phase, or memory
 * growing without bound). lg_isolate_solve forks, runs ops->solve in the
 * child, ships the lg_result back through a pipe, and SIGKILLs the child if
 * nothing has arrived by hard_deadline (lg_now() seconds): the answer
 * is then UNKNOWN with reason "timeout" and timed_out set. With
 * o->run.memory_mb > 0 the child's address space is capped (RLIMIT_AS) at its
 * size at the fork plus memory_mb: a back-end that runs out of memory fails
 * or dies there, which is UNKNOWN, never a crash of the caller. A child that dies is UNKNOWN with
 * the signal in the reason. Errors the back-end returns (status and message)
 * are passed through. r is filled as by ops->solve (r->x malloc'd, freed
 * with lg_result_free).
 */
#ifndef LG_ENCODE_ISOLATE_H
#define LG_ENCODE_ISOLATE_H

#include "encode/problem.h"

typedef lg_status (*lg_solve_fn)(const lg_problem *p, const lg_solve_opts *o, lg_result *r);

lg_status lg_isolate_solve(lg_solve_fn solve, const lg_problem *p, const lg_solve_opts *o, lg_result *r,
                           double hard_deadline);

#endif
