/* backends.h — entry points of the back-ends behind lg_solver_find
 * (internal to encode/; callers outside use lg_solver_find from problem.h).
 * All take a validated-or-not problem (each validates) and borrow it. */
#ifndef LG_BACKENDS_H
#define LG_BACKENDS_H

#include "encode/problem.h"

lg_status lg_z3_solve(const lg_problem *p, const lg_solve_opts *o, lg_result *r);
lg_status lg_glpk_solve(const lg_problem *p, const lg_solve_opts *o, lg_result *r);
lg_status lg_smt2_write(const lg_problem *p, FILE *f);
lg_status lg_lp_write(const lg_problem *p, FILE *f);

#endif
