/* solvers.c — the table of back-ends (problem.h: lg_solver_find).
 *
 * "z3" and "glpk" are the two complete back-ends; their text forms are
 * SMT-LIB 2 and CPLEX LP. "smt2" and "lp" name the same back-ends by their
 * text form (so `lgelu encode --format smt2` and `--solver smt2` both work):
 * write emits the file, solve runs the native solver on the same encoding. */
#include <string.h>

#include "encode/backends.h"

static const lg_solver_ops lg_solvers[] = {
    {"z3", lg_z3_solve, lg_smt2_write},
    {"glpk", lg_glpk_solve, lg_lp_write},
    {"smt2", lg_z3_solve, lg_smt2_write},
    {"lp", lg_glpk_solve, lg_lp_write},
};

const lg_solver_ops *lg_solver_find(const char *name)
{
    if (!name) return NULL;
    for (size_t i = 0; i < sizeof lg_solvers / sizeof lg_solvers[0]; i++)
        if (strcmp(lg_solvers[i].name, name) == 0) return &lg_solvers[i];
    return NULL;
}
