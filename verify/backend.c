/* backend.c — the one back-end decision (backend.h). */
#include "verify/backend.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "verify/attack.h"
#include "verify/recheck.h"

/* msg prefixed with the row's name ("glpk: ..."), once: into why (n bytes). */
static void lg_backend_msg(char *why, size_t n, const lg_solver_ops *row, const char *msg)
{
    size_t l = strlen(row->name);
    if (strncmp(msg, row->name, l) == 0) snprintf(why, n, "%.250s", msg); /* says who already */
    else snprintf(why, n, "%.16s: %.200s", row->name, msg);
}

/* One back-end call under the limits of c. *skipped = 1 when no time is left. */
static lg_status lg_backend_call1(const lg_solver_ops *ops, const lg_backend_call *c, lg_backend_out *out,
                                  lg_result *res, int *skipped)
{
    memset(res, 0, sizeof *res);
    *skipped = 0;
    const char *name = ops->name;
    static const char *kinds[] = {" (exact)", " (certified)", " (needs confirmation)"};
    const lg_runctx *run = c->run;
    if (run->deadline > 0 && lg_runctx_remaining(run) < 0.05) {
        *skipped = 1;
        return LG_OK;
    }
    double t0 = lg_now();
    lg_solve_opts so = lg_solve_opts_default();
    so.run = lg_runctx_sooner(run, c->max_s > 0 ? t0 + c->max_s : 0); /* a per-call budget inside the run's */
    so.run.verbose = run->verbose > 1;
    if (run->verbose) fprintf(stderr, "%s: solving with %.1f s left\n", name, lg_runctx_remaining(&so.run));
    lg_status st = ops->solve(c->p, &so, res); /* isolated by the solver table when limited */
    out->seconds += lg_now() - t0;
    out->nodes += res->nodes;
    out->calls++;
    lg_lp_stats_add(&out->lp, &res->lp);
    if (run->verbose)
        fprintf(stderr, "%s: status %s, answer %d%s, %.2f s\n", name, lg_status_str(st), (int)res->answer,
                res->answer == LG_ANSWER_UNSAT ? kinds[ops->unsat] : "", lg_now() - t0);
    if (st == LG_ERR_TIMEOUT) {
        lg_result_free(res);
        res->answer = LG_ANSWER_UNKNOWN;
        res->timed_out = 1;
        snprintf(res->reason, sizeof res->reason, "timeout");
        return LG_OK;
    }
    if (st == LG_ERR_SOLVER || st == LG_ERR_NUMERIC || st == LG_ERR_UNSUPPORTED || st == LG_ERR_NOMEM) {
        /* a back-end failure (including its memory limit) is an unknown, never a crash */
        char why[256];
        lg_backend_msg(why, sizeof why, ops, lg_errmsg());
        lg_result_free(res);
        res->answer = LG_ANSWER_UNKNOWN;
        snprintf(res->reason, sizeof res->reason, "%s", why);
        return LG_OK;
    }
    if (st == LG_OK && res->answer == LG_ANSWER_UNKNOWN && lg_runctx_expired(run))
        res->timed_out = 1;
    return st;
}

/* Accept a back-end's candidate: the re-check on the case, as given or
 * after the nudges. *ok = 1 with x set. */
static lg_status lg_backend_witness(const lg_backend_call *c, const double *wx, double *x, int *ok)
{
    const lg_net *net = c->net;
    const lg_problem *p = c->p;
    memcpy(x, wx, (size_t)net->n_in * sizeof *x);
    *ok = lg_recheck(net, c->case_lo, c->case_hi, c->n_case_terms, c->case_terms, x, NULL);
    if (*ok < 0) return lg_fail(LG_ERR_NOMEM, "verify: out of memory in the re-check");
    static const double steps[] = {1e-6, 1e-4, 1e-2};
    for (size_t i = 0; i < sizeof steps / sizeof steps[0] && !*ok; i++) {
        memcpy(x, wx, (size_t)net->n_in * sizeof *x);
        int rep = 0;
        lg_status st = lg_attack_repair(net, p->lo, p->hi, p->n_terms, p->terms, 20, steps[i], x, &rep);
        if (st != LG_OK) return st;
        if (rep) *ok = lg_recheck(net, c->case_lo, c->case_hi, c->n_case_terms, c->case_terms, x, NULL);
        if (*ok < 0) return lg_fail(LG_ERR_NOMEM, "verify: out of memory in the re-check");
    }
    return LG_OK;
}

/* UNKNOWN at row (confirmed by confirm, theory ran): the first reason is
 * kept unless this one is the deadline. */
static void lg_backend_unknown(lg_backend_out *out, const lg_solver_ops *row, const lg_solver_ops *confirm,
                               const char *theory, lg_reason why, int timed_out, const char *msg)
{
    lg_outcome *h = &out->how;
    if (h->reason[0] && !timed_out) return; /* keep the first reason */
    out->answer = LG_ANSWER_UNKNOWN;
    h->by = row;
    h->confirm = confirm;
    snprintf(h->theory, sizeof h->theory, "%s", theory ? theory : "");
    lg_outcome_unknown(h, timed_out ? LG_REASON_TIMEOUT : why, timed_out, "%s", timed_out ? "timeout" : msg);
}

/* Decided by row (confirmed by confirm, theory ran). */
static void lg_backend_answer(lg_backend_out *out, lg_answer a, const lg_solver_ops *row, const lg_solver_ops *confirm,
                              const char *theory)
{
    out->answer = a;
    lg_outcome_decided(&out->how, LG_STAGE_BACKEND);
    out->how.by = row;
    out->how.confirm = confirm;
    snprintf(out->how.theory, sizeof out->how.theory, "%s", theory);
}

lg_status lg_backend_decide(const lg_solver_pick *solver, const lg_backend_call *c, lg_backend_out *out, double *x)
{
    const lg_solver_ops *chain[3];
    int n_chain = lg_solver_chain(solver, chain);
    lg_status st = LG_OK;
    for (int i = 0; i < n_chain; i++) /* a network a row does not take is refused before any call */
        if ((st = chain[i]->supports(c->p)) != LG_OK) return st;
    memset(out, 0, sizeof *out);
    out->how.stage = LG_STAGE_BACKEND;
    lg_result res;
    memset(&res, 0, sizeof res);
    for (int i = 0; i < n_chain; i++) {
        const lg_solver_ops *ops = chain[i];
        const char *name = ops->name;
        int skipped = 0;
        if ((st = lg_backend_call1(ops, c, out, &res, &skipped)) != LG_OK) goto done;
        if (skipped) {
            lg_backend_unknown(out, ops, NULL, "", LG_REASON_TIMEOUT, 1, "timeout");
            goto done;
        }
        char theory[8]; /* the theory that ran (a row of the z3 family is labelled by it) */
        snprintf(theory, sizeof theory, "%s", res.theory);
        const lg_solver_ops *by = NULL;
        if (res.answer == LG_ANSWER_UNSAT && ops->unsat == LG_UNSAT_CONFIRM) {
            /* a claim that is only a hint: re-decide the same query with the confirming back-end */
            lg_result_free(&res);
            /* with a per-call limit (branch-and-bound leaves) the confirmation gets a fifth of it,
             * at least 1 s: an unconfirmed leaf is split further, which is cheaper than waiting */
            lg_backend_call cc = *c;
            if (cc.max_s > 0) cc.max_s = cc.max_s / 5 > 1.0 ? cc.max_s / 5 : 1.0;
            by = ops->confirm;
            if (!by || by->unsat == LG_UNSAT_CONFIRM) {
                st = lg_fail(LG_ERR_ARG, "verify: solver '%s' has no confirming back-end", name);
                goto done;
            }
            if ((st = lg_backend_call1(by, &cc, out, &res, &skipped)) != LG_OK) goto done;
            if (skipped) {
                lg_backend_unknown(out, ops, by, "", LG_REASON_TIMEOUT, 1, "timeout");
                goto done;
            }
            if (res.answer != LG_ANSWER_UNSAT) {
                char why[256];
                snprintf(why, sizeof why, "%.16s: infeasible in floating point, not confirmed (%.16s: %.160s)", name,
                         by->name, res.reason[0] ? res.reason : "no answer");
                lg_backend_unknown(out, ops, by, "", LG_REASON_UNCONFIRMED, res.timed_out, why);
                goto done; /* the confirming back-end has had its turn */
            }
        }
        if (res.answer == LG_ANSWER_UNSAT) {
            lg_backend_answer(out, LG_ANSWER_UNSAT, ops, by, theory);
            goto done;
        }
        if (res.answer == LG_ANSWER_SAT && res.x) {
            int ok = 0;
            if ((st = lg_backend_witness(c, res.x, x, &ok)) != LG_OK) goto done;
            if (ok) {
                lg_backend_answer(out, LG_ANSWER_SAT, ops, by, theory);
                goto done;
            }
            lg_backend_unknown(out, ops, by, theory, LG_REASON_WITNESS, 0, "witness failed re-check");
        } else {
            char why[256];
            lg_backend_msg(why, sizeof why, ops, res.reason[0] ? res.reason : "no answer");
            lg_backend_unknown(out, ops, by, theory, LG_REASON_BACKEND, res.timed_out, why);
        }
        lg_result_free(&res);
        if (out->how.timed_out) goto done;
    }
    if (n_chain == 0) lg_backend_unknown(out, NULL, NULL, "", LG_REASON_NO_BACKEND, 0, "no back-end");
done:
    lg_result_free(&res);
    return st;
}
