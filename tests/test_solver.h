/* test_solver.h — a solver pick by name for tests (the edges of the real
 * program resolve names with lg_solver_parse; tests also name rows that
 * are not `--solver` choices, such as "z3-lp"). */
#ifndef LG_TEST_SOLVER_H
#define LG_TEST_SOLVER_H

#include "encode/problem.h"

/* "auto", "none", a verify choice, or any row of the table; an unknown
 * name gives a pick of one NULL row (no back-end). */
static inline lg_solver_pick lg_test_solver(const char *name)
{
    lg_solver_pick p = {LG_SOLVER_AUTO, NULL};
    if (lg_solver_parse(name, &p) == LG_OK) return p;
    p.mode = LG_SOLVER_ONE;
    p.row = lg_solver_find(name);
    return p;
}

#endif
