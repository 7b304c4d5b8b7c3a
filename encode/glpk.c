/* glpk.c — the GLPK back-end: one big-M MILP per term (glp_intopt).
 *
 * The network part is milp.h's encoding. For term T = ∧_k (c_k·y + d_k ≤ 0):
 *
 *   minimise t   subject to   c_k·y − t ≤ −d_k  (every k),
 *                             t ∈ [max_k L_k − 1, safety]
 *
 * where [L_k, U_k] is the interval range of c_k·y + d_k over the output
 * bounds. So t* = min over the box of max_k (c_k·y + d_k), and the cap
 * t ≤ safety lets branch-and-bound prune every node whose LP bound exceeds
 * the safety margin. Verdict per term:
 *   max_k L_k > safety                  → UNSAT (interval bounds alone)
 *   no feasible solution (t* > safety)  → UNSAT
 * Every UNSAT is a floating-point claim (r->exact = 0): GLPK 5.0 declares
 * feasible problems infeasible (narrow column bounds at large magnitude),
 * and no Farkas certificate of a branch-and-bound tree is available, so
 * verify/backend.c confirms it in exact arithmetic before any verdict.
 *   t* ≤ 0 and the double forward pass of the rounded x satisfies T
 *                                       → SAT with that x
 *   otherwise (0 < t* ≤ safety, witness fails, time limit, solver failure)
 *                                       → UNKNOWN for this term.
 * SAT on the first satisfiable term; UNSAT when every term is UNSAT; else
 * UNKNOWN with the first reason. The search of a term stops at the first
 * incumbent with t ≤ 0 (its x is the candidate). The time limit is shared
 * across terms (glp_iocp.tm_lim gets the remaining time, and the callback
 * stops the search at the deadline). GLPK's float tolerances are why
 * only t* beyond ±safety is trusted; "infeasible" relies on the bounds being
 * sound (with sound bounds the network part always has a solution).
 * Inputs are validated before any GLPK call; a GLPK fatal error is caught
 * with glp_error_hook + longjmp (then glp_free_env) and reported as
 * LG_ERR_SOLVER instead of aborting.
 */
#include <glpk.h>
#include <math.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include "encode/backends.h"
#include "encode/milp.h"
#include "core/clock.h"
#include "encode/pwl.h"

static _Thread_local jmp_buf *glpk_jmp;

static void glpk_on_error(void *info)
{
    (void)info;
    if (glpk_jmp) longjmp(*glpk_jmp, 1);
}

/* Per-query state, heap-allocated so it survives a longjmp intact. */
typedef struct glpq {
    lg_milp m;
    glp_prob *P;
    int *ind;       /* [n_cols + 2] 1-based scratch */
    double *val;    /* [n_cols + 2] */
    double *x;      /* [n_in] candidate */
    double *scratch;
    long nodes;
    double deadline;  /* lg_now() seconds, 0 = none */
    int stopped;      /* 1: our deadline passed, 2: incumbent with t ≤ 0 */
} glpq;

/* GLPK writes to stdout; route its chatter (verbose only) to stderr so that
 * machine-readable output on stdout stays clean. */
static int glpk_to_stderr(void *info, const char *s)
{
    (void)info;
    fputs(s, stderr);
    return 1;
}

/* Count nodes; stop at the first incumbent with t ≤ 0 (a candidate, the
 * rest of the search cannot change the answer) and at our deadline (GLPK's
 * tm_lim alone overshot by seconds on large models). */
static void glpk_callback(glp_tree *T, void *info)
{
    glpq *q = info;
    int why = glp_ios_reason(T);
    if (why == GLP_ISELECT) q->nodes++;
    if (why == GLP_IBINGO && glp_mip_obj_val(glp_ios_get_prob(T)) <= 0) {
        q->stopped = 2;
        glp_ios_terminate(T);
    } else if (q->deadline > 0 && lg_now() >= q->deadline) {
        q->stopped = 1;
        glp_ios_terminate(T);
    }
}

/* Load q->m into a fresh q->P with the term rows and the t column. */
static void glpk_load(glpq *q, const lg_term *T, double t_lo, double t_hi)
{
    const lg_milp *m = &q->m;
    glp_prob *P = q->P = glp_create_prob();
    glp_set_obj_dir(P, GLP_MIN);
    glp_add_cols(P, m->n_cols + 1);
    for (int j = 0; j < m->n_cols; j++) {
        const lg_milp_col *c = &m->cols[j];
        int type = isinf(c->lo) ? (isinf(c->hi) ? GLP_FR : GLP_UP) : isinf(c->hi) ? GLP_LO : c->lo == c->hi ? GLP_FX : GLP_DB;
        glp_set_col_bnds(P, j + 1, type, isinf(c->lo) ? 0.0 : c->lo, isinf(c->hi) ? 0.0 : c->hi);
        if (c->binary) glp_set_col_kind(P, j + 1, GLP_BV);
    }
    int tc = m->n_cols + 1;
    glp_set_col_bnds(P, tc, t_lo == t_hi ? GLP_FX : GLP_DB, t_lo, t_hi);
    glp_set_obj_coef(P, tc, 1.0);
    glp_add_rows(P, m->n_rows + T->n_cons);
    for (int i = 0; i < m->n_rows; i++) {
        const lg_milp_row *r = &m->rows[i];
        int type = r->sense == 'E' ? GLP_FX : r->sense == 'L' ? GLP_UP : GLP_LO;
        glp_set_row_bnds(P, i + 1, type, r->rhs, r->rhs);
        for (int k = 0; k < r->n; k++) {
            q->ind[k + 1] = m->ind[r->start + k] + 1;
            q->val[k + 1] = m->val[r->start + k];
        }
        glp_set_mat_row(P, i + 1, r->n, q->ind, q->val);
    }
    for (int c = 0; c < T->n_cons; c++) {
        /* c·y − t ≤ −d */
        int n = 0;
        for (int j = 0; j < m->n_out; j++) {
            if (m->y_col[j] < 0 || T->cons[c].coef[j] == 0) continue;
            n++;
            q->ind[n] = m->y_col[j] + 1;
            q->val[n] = T->cons[c].coef[j];
        }
        n++;
        q->ind[n] = tc;
        q->val[n] = -1.0;
        int row = m->n_rows + c + 1;
        glp_set_row_bnds(P, row, GLP_UP, 0.0, -T->cons[c].d);
        glp_set_mat_row(P, row, n, q->ind, q->val);
    }
}

/* Solve term t; sets *ans and reason (if UNKNOWN). Returns 1 if out of time. */
static int glpk_term(glpq *q, const lg_problem *p, const lg_solve_opts *o, int t, double deadline, lg_answer *ans,
                     char *reason, size_t rsz)
{
    const lg_term *T = &p->terms[t];
    double max_lo = -INFINITY; /* max_k L_k: a lower bound on t */
    for (int c = 0; c < T->n_cons; c++) {
        double lo, hi;
        lg_milp_con_range(&q->m, &T->cons[c], &lo, &hi);
        if (lo > max_lo) max_lo = lo;
    }
    if (max_lo > o->safety) { /* some constraint exceeds safety on the whole output box */
        *ans = LG_ANSWER_UNSAT;
        return 0;
    }
    double t_lo = T->n_cons ? max_lo - 1.0 : -1.0;
    glpk_load(q, T, t_lo, o->safety);
    glp_iocp parm;
    glp_init_iocp(&parm);
    parm.presolve = GLP_ON;
    parm.msg_lev = o->run.verbose > 0 ? GLP_MSG_ON : GLP_MSG_OFF;
    parm.cb_func = glpk_callback;
    parm.cb_info = q;
    parm.mip_gap = 0.0;
    if (deadline > 0) {
        double left = (deadline - lg_now()) * 1000.0;
        if (left < 1) {
            snprintf(reason, rsz, "timeout");
            *ans = LG_ANSWER_UNKNOWN;
            return 1;
        }
        parm.tm_lim = left > 2e9 ? 2000000000 : (int)left;
    }
    q->deadline = deadline;
    q->stopped = 0;
    int ret = glp_intopt(q->P, &parm);
    int status = glp_mip_status(q->P);
    *ans = LG_ANSWER_UNKNOWN;
    if (ret == GLP_ESTOP) ret = q->stopped == 2 ? 0 : GLP_ETMLIM;
    if ((ret == 0 && status == GLP_NOFEAS) || ret == GLP_ENOPFS) {
        *ans = LG_ANSWER_UNSAT;
        return 0;
    }
    if (ret == 0 || ret == GLP_ETMLIM) {
        if (status == GLP_OPT || status == GLP_FEAS) {
            double obj = glp_mip_obj_val(q->P);
            if (obj <= 0) {
                for (int i = 0; i < p->net->n_in; i++) {
                    double v = glp_mip_col_val(q->P, q->m.x_col[i] + 1);
                    q->x[i] = v < p->lo[i] ? p->lo[i] : v > p->hi[i] ? p->hi[i] : v;
                }
                if (lg_pwl_term_holds(p, t, q->x, 0.0, q->scratch)) {
                    *ans = LG_ANSWER_SAT;
                    return 0;
                }
                snprintf(reason, rsz, "glpk: term %d: witness (t* = %.3g) fails the double-precision re-check", t, obj);
            } else if (status == GLP_OPT) {
                snprintf(reason, rsz, "glpk: term %d: optimum t* = %.3g within GLPK tolerance (safety %.3g)", t, obj,
                         o->safety);
            }
        }
        if (ret == GLP_ETMLIM) {
            snprintf(reason, rsz, "timeout");
            return 1;
        }
        return 0;
    }
    snprintf(reason, rsz, "glpk: term %d: glp_intopt failed (code %d)", t, ret);
    return 0;
}

static lg_status glpk_run(glpq *q, const lg_problem *p, const lg_solve_opts *o, lg_result *r)
{
    lg_status st = lg_milp_add_net(&q->m, p);
    if (st) return st;
    int n_in = p->net->n_in;
    q->ind = malloc(((size_t)q->m.n_cols + 2) * sizeof *q->ind);
    q->val = malloc(((size_t)q->m.n_cols + 2) * sizeof *q->val);
    q->x = malloc((size_t)n_in * sizeof *q->x);
    q->scratch = malloc((2 * (size_t)lg_net_max_width(p->net) + (size_t)q->m.n_out) * sizeof *q->scratch);
    if (!q->ind || !q->val || !q->x || !q->scratch) return lg_fail(LG_ERR_NOMEM, "glpk: cannot allocate buffers");
    if (o->run.verbose > 0)
        fprintf(stderr, "glpk: %d columns, %d rows, %d unstable relu, %d terms\n", q->m.n_cols, q->m.n_rows,
                lg_pwl_count_unstable(p), p->n_terms);
    double deadline = o->run.deadline;
    int n_unsat = 0;
    r->answer = LG_ANSWER_UNKNOWN;
    for (int t = 0; t < p->n_terms; t++) {
        lg_answer a;
        char why[200] = "";
        int out = glpk_term(q, p, o, t, deadline, &a, why, sizeof why);
        if (q->P) glp_delete_prob(q->P);
        q->P = NULL;
        if (a == LG_ANSWER_SAT) {
            r->answer = LG_ANSWER_SAT;
            r->x = q->x;
            q->x = NULL;
            return LG_OK;
        }
        if (a == LG_ANSWER_UNSAT)
            n_unsat++;
        else if (!r->reason[0])
            snprintf(r->reason, sizeof r->reason, "%s", why[0] ? why : "glpk: undecided");
        if (out) {
            r->timed_out = 1;
            break;
        }
    }
    if (n_unsat == p->n_terms) {
        r->answer = LG_ANSWER_UNSAT;
        r->reason[0] = '\0';
    }
    return LG_OK;
}

/* glpk_run under an error hook: a GLPK fatal error longjmps back here. */
static lg_status glpk_guarded(glpq *q, const lg_problem *p, const lg_solve_opts *o, lg_result *r)
{
    jmp_buf jb;
    jmp_buf *volatile saved = glpk_jmp;
    volatile lg_status st = LG_OK;
    if (setjmp(jb) == 0) {
        glpk_jmp = &jb;
        glp_error_hook(glpk_on_error, NULL);
        st = glpk_run(q, p, o, r);
        if (q->P) glp_delete_prob(q->P);
        q->P = NULL;
        glp_error_hook(NULL, NULL);
    } else {
        /* GLPK hit a fatal error; its environment is unusable: free it all. */
        glp_error_hook(NULL, NULL);
        glp_free_env();
        q->P = NULL;
        st = lg_fail(LG_ERR_SOLVER, "glpk: internal error (see the GLPK message above)");
    }
    glpk_jmp = saved;
    return st;
}

lg_status lg_glpk_solve(const lg_problem *p, const lg_solve_opts *o, lg_result *r)
{
    lg_solve_opts defaults = lg_solve_opts_default();
    if (!o) o = &defaults;
    memset(r, 0, sizeof *r);
    double t0 = lg_now();
    if (!(o->safety >= 0) || !isfinite(o->safety)) return lg_fail(LG_ERR_ARG, "glpk: safety %g (expected >= 0)", o->safety);
    glpq *q = calloc(1, sizeof *q);
    if (!q) return lg_fail(LG_ERR_NOMEM, "glpk: cannot allocate the query");
    lg_milp_init(&q->m);
    if (o->run.memory_mb > 0) glp_mem_limit(o->run.memory_mb >= 2e9 ? 2000000000 : (int)o->run.memory_mb);
    int term = glp_term_out(o->run.verbose > 0 ? GLP_ON : GLP_OFF);
    glp_term_hook(glpk_to_stderr, NULL);
    lg_status st = glpk_guarded(q, p, o, r);
    glp_term_hook(NULL, NULL);
    glp_term_out(term);
    r->nodes = q->nodes;
    lg_milp_free(&q->m);
    free(q->ind);
    free(q->val);
    free(q->x);
    free(q->scratch);
    free(q);
    if (st) lg_result_free(r);
    r->seconds = lg_now() - t0;
    return st;
}

void lg_encode_thread_done(void) { glp_free_env(); }
