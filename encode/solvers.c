/* solvers.c — the one solver table (problem.h: lg_solver_find).
 *
 * "z3" and "glpk" are the two complete back-ends; their text forms are
 * SMT-LIB 2 and CPLEX LP. Z3's UNSAT is exact; GLPK's is certified (its
 * own branch and bound closes every node with encode/lp_cert.h). "smt2"
 * and "lp" name the same back-ends by their text form (so `lgelu encode
 * --format smt2` and `--solver smt2` both work): write emits the file,
 * solve runs the native solver on the same encoding. "auto" and "none" are
 * verify/'s modes: a portfolio (GLPK, then Z3) and no back-end.
 * "z3-exact" is "z3" with its theory named in the result; "z3-lp" is Z3's
 * CDCL over lgelu's certified LP theory (z3lp.h; "z3-lp-lemmas" the same
 * as lemmas on demand); "z3-auto" picks exact or lp by input dimension.
 * `verify --solver z3 --z3-theory T` names "z3-T". */
#include <stdio.h>
#include <string.h>

#include "core/clock.h"
#include "encode/backends.h"
#include "encode/isolate.h"
#include "encode/z3lp.h"

/* One isolation, one deadline for every back-end: with a time limit or a
 * memory cap the query runs in a child (isolate.h) that is killed
 * LG_SOLVE_GRACE_S after the deadline o->run.deadline; the back-end's own
 * limits (Z3 timeout + interrupt, GLPK tm_lim per simplex + a check per node) aim at the same
 * deadline. Without limits it runs in this process. The grace is the time a back-end that
 * stopped at its own limit has to ship its result: 0.5 s, so that a whole run, start-up,
 * clean-up and the killed child included, stays within about a second of its deadline
 * (benchmarks/VERIFY.md "Deadline"). */
#define LG_SOLVE_GRACE_S 0.5

static lg_status lg_solve_limited(lg_solve_fn fn, const lg_problem *p, const lg_solve_opts *o, lg_result *r)
{
    if (!o || (!(o->run.deadline > 0) && o->run.memory_mb <= 0)) return fn(p, o, r);
    return lg_isolate_solve(fn, p, o, r, o->run.deadline > 0 ? o->run.deadline + LG_SOLVE_GRACE_S : 1e300);
}

static lg_status lg_z3_limited(const lg_problem *p, const lg_solve_opts *o, lg_result *r)
{
    return lg_solve_limited(lg_z3_solve, p, o, r);
}

static lg_status lg_glpk_limited(const lg_problem *p, const lg_solve_opts *o, lg_result *r)
{
    return lg_solve_limited(lg_glpk_solve, p, o, r);
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

/* The order of the verify choices here is the order of the usage text. */
static const lg_solver_ops lg_solvers[] = {
    {"auto", NULL, NULL, LG_UNSAT_EXACT, NULL, {"glpk", "z3", NULL}, 1, 0},
    {"glpk", lg_glpk_limited, lg_lp_write, LG_UNSAT_CERTIFIED, NULL, {"glpk", NULL, NULL}, 1, 1},
    {"z3", lg_z3_limited, lg_smt2_write, LG_UNSAT_EXACT, NULL, {"z3", NULL, NULL}, 1, 2},
    {"none", NULL, NULL, LG_UNSAT_EXACT, NULL, {NULL, NULL, NULL}, 1, 3},
    {"smt2", lg_z3_limited, lg_smt2_write, LG_UNSAT_EXACT, NULL, {"z3", NULL, NULL}, 0, 4},
    {"lp", lg_glpk_limited, lg_lp_write, LG_UNSAT_CERTIFIED, NULL, {"glpk", NULL, NULL}, 0, 5},
    {"z3-exact", lg_z3_exact_limited, lg_smt2_write, LG_UNSAT_EXACT, NULL, {"z3-exact", NULL, NULL}, 0, 6},
    {"z3-lp", lg_z3_lp_limited, NULL, LG_UNSAT_CERTIFIED, NULL, {"z3-lp", NULL, NULL}, 0, 7},
    {"z3-lp-lemmas", lg_z3_lemmas_limited, NULL, LG_UNSAT_CERTIFIED, NULL, {"z3-lp-lemmas", NULL, NULL}, 0, 8},
    {"z3-auto", lg_z3_auto_limited, lg_smt2_write, LG_UNSAT_CERTIFIED, NULL, {"z3-auto", NULL, NULL}, 0, 9},
};
#define LG_N_SOLVERS ((int)(sizeof lg_solvers / sizeof lg_solvers[0]))

const lg_solver_ops *lg_solver_find(const char *name)
{
    if (!name) return NULL;
    for (int i = 0; i < LG_N_SOLVERS; i++)
        if (strcmp(lg_solvers[i].name, name) == 0) return &lg_solvers[i];
    return NULL;
}

const lg_solver_ops *lg_solver_at(int i) { return i >= 0 && i < LG_N_SOLVERS ? &lg_solvers[i] : NULL; }

int lg_solver_for_verify(const char *name)
{
    const lg_solver_ops *s = lg_solver_find(name);
    return s && s->for_verify;
}

const char *lg_solver_verify_names(char *buf, size_t n)
{
    int k = 0, total = 0;
    for (int i = 0; i < LG_N_SOLVERS; i++) total += lg_solvers[i].for_verify;
    size_t used = 0;
    if (n) buf[0] = '\0';
    for (int i = 0; i < LG_N_SOLVERS && used < n; i++) {
        if (!lg_solvers[i].for_verify) continue;
        const char *sep = k == 0 ? "" : k == total - 1 ? " or " : ", ";
        int w = snprintf(buf + used, n - used, "%s%s", sep, lg_solvers[i].name);
        if (w < 0) break;
        used += (size_t)w;
        k++;
    }
    return buf;
}
