/* solvers.c — the one solver table (problem.h: lg_solver_ops).
 *
 * "z3" and "glpk" are the two complete back-ends; their text forms are
 * SMT-LIB 2 and CPLEX LP. Z3's UNSAT is exact; GLPK's is certified (its
 * own branch and bound closes every node with encode/lp_cert.h). "smt2"
 * and "lp" are aliases that name the same rows by their text form (so
 * `lgelu encode --format smt2` and `--solver smt2` both work): write emits
 * the file, solve runs the native solver on the same encoding. "auto" and
 * "none" are verify/'s modes (lg_solver_pick): a portfolio (GLPK, then Z3)
 * and no back-end. The z3 family names its theory in the result:
 * "z3-exact" is "z3" labelled by its theory; "z3-lp" is Z3's CDCL over
 * lgelu's certified LP theory (z3lp.h; "z3-lp-lemmas" the same as lemmas on
 * demand); "z3-auto" picks exact or lp by input dimension. `verify --solver
 * z3 --z3-theory T` is the row of theory T (lg_solver_theory).
 *
 * Adding a back-end: its code in encode/, its entry point in backends.h,
 * one row here (docs/DESIGN.md §3 "Solver table"). */
#include <stdio.h>
#include <string.h>

#include "core/clock.h"
#include "encode/backends.h"
#include "encode/pwl.h"
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
    /* every row is LG_SOLVER_FORK: its wrapper below comes through here */
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
 * was measured to win, benchmarks/Z3.md) and on Transformer nodes, the LP theory above. */
static lg_status lg_z3_auto_limited(const lg_problem *p, const lg_solve_opts *o, lg_result *r)
{
    if (p && p->net && (p->net->n_in <= LG_Z3_AUTO_EXACT_MAX_IN || p->trelax)) /* the LP theory: no Transformer nodes */
        return lg_z3_exact_limited(p, o, r);
    return lg_z3_lp_limited(p, o, r);
}

/* Row numbers; the order of the verify choices here is the order of the usage text. */
enum { LG_ROW_GLPK, LG_ROW_Z3, LG_ROW_Z3_EXACT, LG_ROW_Z3_LP, LG_ROW_Z3_LEMMAS, LG_ROW_Z3_AUTO, LG_N_SOLVERS };

#define LG_BACKEND (LG_SOLVER_PWL_ONLY | LG_SOLVER_COMPLETE | LG_SOLVER_FORK)

static const lg_solver_ops lg_solvers[LG_N_SOLVERS];

/* z3's theories, by the name `--z3-theory` and the grid's z3_theory take */
static const lg_solver_ops *const lg_z3_theories[] = {&lg_solvers[LG_ROW_Z3_AUTO], &lg_solvers[LG_ROW_Z3_EXACT],
                                                      &lg_solvers[LG_ROW_Z3_LP], &lg_solvers[LG_ROW_Z3_LEMMAS], NULL};

static const lg_solver_ops lg_solvers[LG_N_SOLVERS] = {
    [LG_ROW_GLPK] = {"glpk", lg_glpk_limited, lg_lp_write, LG_UNSAT_CERTIFIED, NULL, LG_BACKEND, NULL, NULL, NULL, 1,
                     LG_ROW_GLPK, lg_pwl_supports},
    [LG_ROW_Z3] = {"z3", lg_z3_limited, lg_smt2_write, LG_UNSAT_EXACT, NULL, LG_BACKEND, NULL, NULL, lg_z3_theories, 1,
                   LG_ROW_Z3, lg_pwl_supports},
    [LG_ROW_Z3_EXACT] = {"z3-exact", lg_z3_exact_limited, lg_smt2_write, LG_UNSAT_EXACT, NULL, LG_BACKEND, "z3", "exact",
                         NULL, 0, LG_ROW_Z3_EXACT, lg_pwl_supports},
    [LG_ROW_Z3_LP] = {"z3-lp", lg_z3_lp_limited, NULL, LG_UNSAT_CERTIFIED, NULL, LG_BACKEND, "z3", "lp", NULL, 0,
                      LG_ROW_Z3_LP, lg_pwl_supports},
    [LG_ROW_Z3_LEMMAS] = {"z3-lp-lemmas", lg_z3_lemmas_limited, NULL, LG_UNSAT_CERTIFIED, NULL, LG_BACKEND, "z3",
                          "lp-lemmas", NULL, 0, LG_ROW_Z3_LEMMAS, lg_pwl_supports},
    [LG_ROW_Z3_AUTO] = {"z3-auto", lg_z3_auto_limited, lg_smt2_write, LG_UNSAT_CERTIFIED, NULL,
                        LG_BACKEND | LG_SOLVER_PICKS_THEORY, "z3", "auto", NULL, 0, LG_ROW_Z3_AUTO, lg_pwl_supports},
};

const lg_solver_ops *const lg_solver_glpk = &lg_solvers[LG_ROW_GLPK];
const lg_solver_ops *const lg_solver_z3 = &lg_solvers[LG_ROW_Z3];

/* "auto": the rows it calls in order while the answer stays unknown */
static const lg_solver_ops *const lg_portfolio[] = {&lg_solvers[LG_ROW_GLPK], &lg_solvers[LG_ROW_Z3]};

/* Names that are not rows: the text forms of `lgelu encode --format`. */
static const struct {
    const char *name;
    const lg_solver_ops *row;
} lg_solver_aliases[] = {{"smt2", &lg_solvers[LG_ROW_Z3]}, {"lp", &lg_solvers[LG_ROW_GLPK]}};

const lg_solver_ops *lg_solver_find(const char *name)
{
    if (!name) return NULL;
    for (int i = 0; i < LG_N_SOLVERS; i++)
        if (strcmp(lg_solvers[i].name, name) == 0) return &lg_solvers[i];
    for (size_t i = 0; i < sizeof lg_solver_aliases / sizeof lg_solver_aliases[0]; i++)
        if (strcmp(lg_solver_aliases[i].name, name) == 0) return lg_solver_aliases[i].row;
    return NULL;
}

const lg_solver_ops *lg_solver_at(int i) { return i >= 0 && i < LG_N_SOLVERS ? &lg_solvers[i] : NULL; }

const lg_solver_ops *lg_solver_theory(const lg_solver_ops *family, const char *theory)
{
    if (!family || !family->theories || !theory) return NULL;
    for (int i = 0; family->theories[i]; i++)
        if (strcmp(family->theories[i]->theory, theory) == 0) return family->theories[i];
    return NULL;
}

/* The words of a list as "a, b, c or d" into buf; returns buf. */
static const char *lg_solver_list(const char *const *words, int n_words, char *buf, size_t n)
{
    size_t used = 0;
    if (n) buf[0] = '\0';
    for (int k = 0; k < n_words && used < n; k++) {
        const char *sep = k == 0 ? "" : k == n_words - 1 ? " or " : ", ";
        int w = snprintf(buf + used, n - used, "%s%s", sep, words[k]);
        if (w < 0) break;
        used += (size_t)w;
    }
    return buf;
}

const char *lg_solver_theory_names(const lg_solver_ops *family, char *buf, size_t n)
{
    const char *words[8];
    int k = 0;
    for (int i = 0; family && family->theories && family->theories[i] && k < 8; i++) words[k++] = family->theories[i]->theory;
    return lg_solver_list(words, k, buf, n);
}

const char *lg_solver_label(const lg_solver_ops *row, const char *theory_ran, char *buf, size_t n)
{
    if (!row) snprintf(buf, n, "none");
    else if (row->family) snprintf(buf, n, "%s-%.8s", row->family, theory_ran && theory_ran[0] ? theory_ran : row->theory);
    else snprintf(buf, n, "%s", row->name);
    return buf;
}

/* The verify choices: "auto", the rows marked for_verify in table order, "none". */
static int lg_solver_choices(const char *words[LG_N_SOLVERS + 2])
{
    int k = 0;
    words[k++] = "auto";
    for (int i = 0; i < LG_N_SOLVERS; i++)
        if (lg_solvers[i].for_verify) words[k++] = lg_solvers[i].name;
    words[k++] = "none";
    return k;
}

const char *lg_solver_verify_names(char *buf, size_t n)
{
    const char *words[LG_N_SOLVERS + 2];
    return lg_solver_list(words, lg_solver_choices(words), buf, n);
}

lg_status lg_solver_parse(const char *name, lg_solver_pick *p)
{
    lg_solver_pick q = {LG_SOLVER_AUTO, NULL};
    const lg_solver_ops *row = lg_solver_find(name);
    if (name && strcmp(name, "none") == 0) q.mode = LG_SOLVER_NONE;
    else if (row && row->for_verify && strcmp(row->name, name) == 0) q = (lg_solver_pick){LG_SOLVER_ONE, row};
    else if (!name || strcmp(name, "auto") != 0) {
        char names[96];
        return lg_fail(LG_ERR_ARG, "expected %s, got '%s'", lg_solver_verify_names(names, sizeof names),
                       name ? name : "(null)");
    }
    *p = q;
    return LG_OK;
}

int lg_solver_chain(const lg_solver_pick *p, const lg_solver_ops *chain[3])
{
    int n = 0;
    if (p->mode == LG_SOLVER_AUTO)
        for (size_t i = 0; i < sizeof lg_portfolio / sizeof lg_portfolio[0] && n < 3; i++) chain[n++] = lg_portfolio[i];
    else if (p->mode == LG_SOLVER_ONE && p->row)
        chain[n++] = p->row;
    for (int i = n; i < 3; i++) chain[i] = NULL;
    return n;
}

const char *lg_solver_pick_name(const lg_solver_pick *p)
{
    return p->mode == LG_SOLVER_NONE ? "none" : p->mode == LG_SOLVER_ONE && p->row ? p->row->name : "auto";
}
