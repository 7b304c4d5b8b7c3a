/* solvers.c — the table of back-ends (problem.h: lg_solver_find).
 *
 * "z3" and "glpk" are the two complete back-ends; their text forms are
 * SMT-LIB 2 and CPLEX LP. "smt2" and "lp" name the same back-ends by their
 * text form (so `lgelu encode --format smt2` and `--solver smt2` both work):
 * write emits the file, solve runs the native solver on the same encoding.
 * "z3-exact" is "z3" with its theory named in the result; "z3-lp" is Z3's
 * CDCL over lgelu's certified LP theory (z3lp.h); "z3-auto" picks one of
 * them by input dimension. */
#include <stdio.h>
#include <string.h>

#include "core/clock.h"
#include "encode/backends.h"
#include "encode/isolate.h"
#include "encode/z3lp.h"

/* One isolation, one deadline for every back-end: with a time limit or a
 * memory cap the query runs in a child (isolate.h) that is killed
 * LG_SOLVE_GRACE_S after the deadline o->run.deadline; the back-end's own
 * limits (Z3 timeout + interrupt, GLPK tm_lim + callback) aim at the same
 * deadline. Without limits it runs in this process. */
#define LG_SOLVE_GRACE_S 1.0

static lg_status lg_solve_limited(lg_solve_fn fn, const lg_problem *p, const lg_solve_opts *o, lg_result *r)
{
    if (!o || (!(o->run.deadline > 0) && o->run.memory_mb <= 0)) return fn(p, o, r);
    return lg_isolate_solve(fn, p, o, r, o->run.deadline > 0 ? o->run.deadline + LG_SOLVE_GRACE_S : 1e300);
}

static lg_status lg_z3_limited(const lg_problem *p, const lg_solve_opts *o, lg_result *r)
{
    return lg_solve_limited(lg_z3_solve, p, o, r);
}

static lg_status lg_solve_theory(lg_solve_fn fn, const char *theory, const lg_problem *p, const lg_solve_opts *o,
                                 lg_result *r)
{
    lg_status st = lg_solve_limited(fn, p, o, r);
    if (!r->theory[0]) snprintf(r->theory, sizeof r->theory, "%s", theory); /* also when the child was killed */
    return st;
}

static lg_status lg_z3_exact_limited(const lg_problem *p, const lg_solve_opts *o, lg_result *r)
{
    return lg_solve_theory(lg_z3_solve, "exact", p, o, r);
}

static lg_status lg_z3_lp_limited(const lg_problem *p, const lg_solve_opts *o, lg_result *r)
{
    return lg_solve_theory(lg_z3lp_solve, "lp", p, o, r);
}

static lg_status lg_z3_lemmas_limited(const lg_problem *p, const lg_solve_opts *o, lg_result *r)
{
    return lg_solve_theory(lg_z3lp_lemmas_solve, "lp", p, o, r);
}

/* "z3-auto": the exact theory up to LG_Z3_AUTO_EXACT_MAX_IN inputs (where it
 * was measured to win, benchmarks/Z3.md), the LP theory above. */
static lg_status lg_z3_auto_limited(const lg_problem *p, const lg_solve_opts *o, lg_result *r)
{
    if (p && p->net && p->net->n_in <= LG_Z3_AUTO_EXACT_MAX_IN) return lg_z3_exact_limited(p, o, r);
    return lg_z3_lp_limited(p, o, r);
}

static lg_status lg_glpk_limited(const lg_problem *p, const lg_solve_opts *o, lg_result *r)
{
    return lg_solve_limited(lg_glpk_solve, p, o, r);
}

static const lg_solver_ops lg_solvers[] = {
    {"z3", lg_z3_limited, lg_smt2_write},
    {"z3-exact", lg_z3_exact_limited, lg_smt2_write},
    {"z3-lp", lg_z3_lp_limited, NULL},
    {"z3-lp-lemmas", lg_z3_lemmas_limited, NULL},
    {"z3-auto", lg_z3_auto_limited, lg_smt2_write},
    {"glpk", lg_glpk_limited, lg_lp_write},
    {"smt2", lg_z3_limited, lg_smt2_write},
    {"lp", lg_glpk_limited, lg_lp_write},
};

const lg_solver_ops *lg_solver_find(const char *name)
{
    if (!name) return NULL;
    for (size_t i = 0; i < sizeof lg_solvers / sizeof lg_solvers[0]; i++)
        if (strcmp(lg_solvers[i].name, name) == 0) return &lg_solvers[i];
    return NULL;
}
