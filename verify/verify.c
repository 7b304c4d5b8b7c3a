/* verify.c — the verdict driver (verify.h). */
#include "core/clock.h"
#include "verify/verify.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "verify/alpha.h"
#include "verify/bab_act.h"
#include "verify/backend.h"
#include "verify/recheck.h"

/* Share of a case's time that ReLU branch and bound gets first in auto mode
 * on a net with conv layers (the rest goes to the whole-case back-end). */
#define LG_VERIFY_CONV_BAB_SHARE 0.8

lg_verify_opts lg_verify_opts_default(void)
{
    lg_verify_opts o;
    memset(&o, 0, sizeof o);
    o.solver = "auto";
    o.timeout_s = 60.0;
    o.tighten = LG_TIGHTEN_NONE;
    o.attack = 1;
    o.atk = lg_attack_opts_default();
    o.seed = 1;
    o.bab = lg_bab_opts_default();
    return o;
}

int lg_verify_opts_settings(const lg_verify_opts *o, char *buf, size_t n)
{
    const lg_verify_opts d = lg_verify_opts_default();
    char tmp[512];
    int w = 0;
#define LG_SET(...) w += snprintf(tmp + w, w < (int)sizeof tmp ? sizeof tmp - (size_t)w : 0, __VA_ARGS__)
    const char *solver = o->solver ? o->solver : "auto";
    if (strcmp(solver, d.solver) != 0) LG_SET(" solver=%s", solver);
    if (o->backend_only) LG_SET(" backend_only=1");
    if (!o->attack) LG_SET(" attack=0");
    if (o->bab.mode != d.bab.mode) LG_SET(" bab=%s", lg_bab_mode_name(o->bab.mode));
    if (o->tighten == LG_TIGHTEN_LP) LG_SET(" tighten=lp");
    if (o->seed != d.seed) LG_SET(" seed=%lu", o->seed);
    if (o->memory_mb > 0) LG_SET(" memory=%g", o->memory_mb);
    if (o->bab.max_nodes != d.bab.max_nodes) LG_SET(" bab_nodes=%ld", o->bab.max_nodes);
    if (o->bab.alpha_steps != d.bab.alpha_steps) LG_SET(" alpha_steps=%d", o->bab.alpha_steps);
    if (o->bab.branch != d.bab.branch) LG_SET(" bab_branch=%s", o->bab.branch == LG_BAB_BRANCH_BABSR ? "babsr" : "fsb");
    if (o->bab.beta != d.bab.beta) LG_SET(" beta=%d", o->bab.beta);
    if (o->bab.group != d.bab.group) LG_SET(" bab_group=%d", o->bab.group);
    if (o->bab.root_alpha_steps != d.bab.root_alpha_steps) LG_SET(" bab_root_alpha=%d", o->bab.root_alpha_steps);
    if (o->bab.solver_unstable != d.bab.solver_unstable) LG_SET(" bab_solver_relus=%d", o->bab.solver_unstable);
#undef LG_SET
    return snprintf(buf, n, "%s", w ? tmp : "");
}

/* The value of key in a settings text, or NULL; *len its length. */
static const char *lg_settings_get(const char *s, const char *key, size_t klen, size_t *len)
{
    for (const char *p = s; *p;) {
        while (*p == ' ') p++;
        const char *e = p + strcspn(p, " ");
        const char *eq = memchr(p, '=', (size_t)(e - p));
        if (eq && (size_t)(eq - p) == klen && strncmp(p, key, klen) == 0) {
            *len = (size_t)(e - eq - 1);
            return eq + 1;
        }
        p = e;
    }
    return NULL;
}

int lg_verify_settings_diff(const char *old_s, const char *new_s, char *buf, size_t n)
{
    int nd = 0;
    size_t w = 0;
    if (n) buf[0] = '\0';
    for (int pass = 0; pass < 2; pass++) { /* keys of the new text, then those only in the old one */
        const char *s = pass ? old_s : new_s, *other = pass ? new_s : old_s;
        for (const char *p = s; *p;) {
            while (*p == ' ') p++;
            const char *e = p + strcspn(p, " ");
            const char *eq = memchr(p, '=', (size_t)(e - p));
            if (eq) {
                size_t klen = (size_t)(eq - p), vlen = (size_t)(e - eq - 1), olen = 0;
                const char *ov = lg_settings_get(other, p, klen, &olen);
                if (pass == 1 && ov) {
                    p = e;
                    continue;
                }
                if (!ov || olen != vlen || strncmp(ov, eq + 1, vlen) != 0) {
                    const char *a = pass ? eq + 1 : ov, *b = pass ? ov : eq + 1;
                    int al = (int)(pass ? vlen : olen), bl = (int)(pass ? olen : vlen);
                    int k = snprintf(buf + w, w < n ? n - w : 0, "%s%.*s: %.*s -> %.*s", nd ? "; " : "", (int)klen, p,
                                     a ? al : 7, a ? a : "default", b ? bl : 7, b ? b : "default");
                    if (k > 0) w += (size_t)k;
                    if (w >= n) w = n ? n - 1 : 0;
                    nd++;
                }
            }
            p = e;
        }
    }
    return nd;
}

void lg_verify_report_free(lg_verify_report *r)
{
    free(r->unstable);
    free(r->x);
    free(r->y);
    memset(r, 0, sizeof *r);
}

const char *lg_verdict_name(lg_verdict v)
{
    switch (v) {
    case LG_VERDICT_ROBUST: return "robust";
    case LG_VERDICT_VIOLATED: return "violated";
    default: return "unknown";
    }
}

lg_status lg_verify_apply_margin(lg_prop *p, double K) { return lg_prop_margin(p, K); }

/* Keep the terms of case c that the bounds in b do not refute (a term is
 * refuted when one of its constraints has a CROWN lower bound > 0). kept has
 * room for every term of the case. */
static lg_status lg_verify_filter(const lg_bounds *b, const lg_net *net, const lg_prop *prop, int c, lg_term *kept,
                                  int *n_kept)
{
    const lg_prop_case *C = &prop->cases[c];
    int m = 0, no = prop->n_out;
    for (int t = 0; t < C->n_terms; t++) m += C->terms[t].n_cons;
    double *C_mat = malloc(((size_t)m * (size_t)no + 1) * sizeof *C_mat); /* [m][n_out] */
    double *d = malloc(((size_t)m + 1) * sizeof *d);                      /* [m] */
    double *lb = malloc(((size_t)m + 1) * sizeof *lb);                    /* [m] */
    lg_status st = LG_OK;
    if (!C_mat || !d || !lb) {
        st = lg_fail(LG_ERR_NOMEM, "verify: out of memory");
        goto fail;
    }
    for (int t = 0, r = 0; t < C->n_terms; t++)
        for (int k = 0; k < C->terms[t].n_cons; k++, r++) {
            memcpy(C_mat + (size_t)r * (size_t)no, C->terms[t].cons[k].coef, (size_t)no * sizeof *C_mat);
            d[r] = C->terms[t].cons[k].d;
        }
    /* every constraint of every term in one back-substitution batch */
    if ((st = lg_bounds_objective_lower(b, net, m, C_mat, d, lb)) != LG_OK) goto fail;
    *n_kept = 0;
    for (int t = 0, r = 0; t < C->n_terms; t++) {
        int impossible = 0;
        for (int k = 0; k < C->terms[t].n_cons; k++, r++) impossible |= lb[r] > 0.0;
        if (!impossible) kept[(*n_kept)++] = C->terms[t];
    }
fail:
    free(C_mat);
    free(d);
    free(lb);
    return st;
}

lg_status lg_verify_prepare(const lg_net *net, const lg_prop *prop, int c, lg_tighten tighten, const lg_runctx *run,
                            lg_bounds *b, lg_term **kept, lg_problem *prob, long *n_lp)
{
    const lg_prop_case *C = &prop->cases[c];
    *kept = NULL;
    memset(prob, 0, sizeof *prob);
    lg_status st = lg_bounds_init(b, net);
    if (st != LG_OK) return st;
    b->run = run; /* every bound on b stops at the deadline (LG_ERR_TIMEOUT) */
    if ((st = lg_bounds_symbolic(b, net, C->lo, C->hi)) != LG_OK) goto fail;
    if (tighten == LG_TIGHTEN_LP && (st = lg_bounds_lp(b, net, run, n_lp)) != LG_OK) goto fail;
    *kept = malloc(((size_t)C->n_terms + 1) * sizeof **kept);
    if (!*kept) {
        st = lg_fail(LG_ERR_NOMEM, "verify: out of memory");
        goto fail;
    }
    int n_kept = 0;
    if ((st = lg_verify_filter(b, net, prop, c, *kept, &n_kept)) != LG_OK) goto fail;
    prob->net = net;
    prob->lo = C->lo;
    prob->hi = C->hi;
    prob->n_terms = n_kept;
    prob->terms = *kept;
    prob->pre_lo = b->lo;
    prob->pre_hi = b->hi;
    return LG_OK;
fail:
    free(*kept);
    *kept = NULL;
    lg_bounds_free(b);
    return st;
}

/* Outcome of one case. */
typedef struct lg_case_out {
    lg_verdict v;
    int timed_out;
    char reason[256];
    char method[32];
} lg_case_out;

static void lg_case_unknown(lg_case_out *co, int timed_out, const char *reason)
{
    co->v = LG_VERDICT_UNKNOWN;
    co->timed_out = timed_out;
    snprintf(co->reason, sizeof co->reason, "%s", reason);
}

/* Doubles overflowed: no bound method or back-end can take ±∞ bounds. */
static void lg_case_overflow(lg_case_out *co)
{
    lg_case_unknown(co, 0, "bounds overflow: a pre-activation bound is infinite (input or weights too large)");
}

/* The whole case p to the back-end decision (backend.h); fills co, x when violated. */
static lg_status lg_verify_backend(const char *name, const lg_net *net, const lg_problem *p, const lg_runctx *run,
                                   lg_case_out *co, double *x, lg_verify_report *r)
{
    lg_backend_call call = {net, p, p->lo, p->hi, p->n_terms, p->terms, run, 0};
    lg_backend_out out;
    lg_status st = lg_backend_decide(name, &call, &out, x);
    r->nodes += out.nodes;
    r->t_solver += out.seconds;
    lg_lp_stats_add(&r->lp, &out.lp);
    if (st != LG_OK) return st;
    snprintf(co->method, sizeof co->method, "%s", out.method);
    if (out.answer == LG_ANSWER_UNSAT) co->v = LG_VERDICT_ROBUST;
    else if (out.answer == LG_ANSWER_SAT) co->v = LG_VERDICT_VIOLATED;
    else lg_case_unknown(co, out.timed_out || lg_runctx_expired(run), out.reason);
    return LG_OK;
}

/* LP tightening of b until lp_run's deadline, then the quick proof again
 * (sets co->v = ROBUST when every term is refuted). */
static lg_status lg_verify_tighten(const lg_net *net, const lg_prop *prop, int c, const lg_runctx *lp_run,
                                   lg_bounds *b, lg_term *kept, lg_problem *p, lg_verify_report *r, lg_case_out *co)
{
    long n_lp = 0;
    double t0 = lg_now();
    lg_status st = lg_bounds_lp(b, net, lp_run, &n_lp);
    r->t_bounds += lg_now() - t0;
    if (st != LG_OK) return st;
    r->n_lp += n_lp;
    r->bound_method = "symbolic+lp";
    if ((st = lg_verify_filter(b, net, prop, c, kept, &p->n_terms)) != LG_OK) return st;
    if (lp_run->verbose)
        fprintf(stderr, "case %d: %d terms left after %ld LPs (%.2f s elapsed)\n", c, p->n_terms, n_lp,
                lg_now() - r->seconds);
    if (p->n_terms == 0) {
        co->v = LG_VERDICT_ROBUST;
        snprintf(co->method, sizeof co->method, "bounds");
    }
    return LG_OK;
}

/* Branch and bound on the kept terms of case c from the bounds b (bab.h)
 * under bab_run (case c's context, or a sub-budget of it). *decided = 1
 * when co is final (robust, violated, or run's deadline passed); otherwise
 * (a limit or the sub-budget stopped it) co->reason says why and the caller
 * may still try the back-end on the whole case. */
static lg_status lg_verify_bab(const lg_net *net, const lg_problem *p, const lg_bounds *b, const lg_verify_opts *o,
                               lg_bab_mode bm, int c, const lg_runctx *bab_run, const lg_runctx *run, long max_nodes,
                               lg_verify_report *r, lg_case_out *co, double *x, int *decided)
{
    lg_bab_opts bo = o->bab; /* per case: the strategy picked and its node limit; the solver is verify's */
    bo.mode = bm;
    bo.max_nodes = max_nodes;
    bo.solver = lg_bounds_net_smooth(net) ? "none" : o->solver ? o->solver : "auto"; /* smooth: no back-end */
    lg_bab_out bout;
    lg_status st = lg_bab_run(net, p->lo, p->hi, p->n_terms, p->terms, b, &bo, bab_run, &bout, x);
    r->bab_nodes += bout.nodes;
    if (bout.max_depth > r->bab_max_depth) r->bab_max_depth = bout.max_depth;
    r->t_bounds += bout.t_bounds;
    r->t_solver += bout.t_solver;
    r->nodes += bout.solver_nodes;
    lg_lp_stats_add(&r->lp, &bout.lp);
    if (st != LG_OK) return st;
    if (run->verbose)
        fprintf(stderr, "case %d: %s: %ld nodes, depth %d, %s%s\n", c, bout.method, bout.nodes, bout.max_depth,
                bout.answer == LG_BAB_PROVED ? "proved" : bout.answer == LG_BAB_FOUND ? "counterexample" : "open: ",
                bout.answer == LG_BAB_OPEN ? bout.reason : "");
    *decided = 1;
    snprintf(co->method, sizeof co->method, "%s", bout.method);
    if (bout.answer == LG_BAB_PROVED) co->v = LG_VERDICT_ROBUST;
    else if (bout.answer == LG_BAB_FOUND) co->v = LG_VERDICT_VIOLATED;
    else if (lg_runctx_expired(run)) lg_case_unknown(co, 1, "timeout");
    else { /* a limit or its own time budget stopped it: the caller may go on */
        lg_case_unknown(co, 0, bout.reason);
        *decided = 0;
    }
    return LG_OK;
}

/* A term of case c that every output satisfies (no constraint, or only
 * constraints 0·y + d ≤ 0 whose witness constant d + slack is ≤ 0 exactly):
 * every point of the box is then a counterexample. Index or −1. */
/* α-CROWN on a smooth net's open terms (α = the tangent points, alpha.h):
 * drop every term one of whose constraints it bounds above 0. */
static lg_status lg_verify_alpha_smooth(const lg_net *net, const lg_bounds *b, lg_term *kept, int *n_kept, int steps,
                                        double lr, const lg_runctx *run)
{
    int m = 0, no = lg_net_n_out(net);
    for (int t = 0; t < *n_kept; t++) m += kept[t].n_cons;
    if (m == 0) return LG_OK;
    size_t size = (size_t)lg_alpha_size(net);
    double *C = malloc((size_t)m * (size_t)no * sizeof *C), *d = malloc((size_t)m * sizeof *d);
    double *al = malloc((size_t)m * size * sizeof *al), *out = malloc((size_t)m * sizeof *out);
    lg_status st = LG_OK;
    if (!C || !d || !al || !out) {
        st = lg_fail(LG_ERR_NOMEM, "verify: out of memory");
        goto done;
    }
    for (int t = 0, r = 0; t < *n_kept; t++)
        for (int k = 0; k < kept[t].n_cons; k++, r++) {
            memcpy(C + (size_t)r * (size_t)no, kept[t].cons[k].coef, (size_t)no * sizeof *C);
            d[r] = kept[t].cons[k].d;
        }
    lg_alpha_default(b, net, m, al);
    if ((st = lg_alpha_optimize(b, net, m, C, d, steps, lr, run, al, out, NULL)) != LG_OK) goto done;
    int n = 0;
    for (int t = 0, r = 0; t < *n_kept; t++) {
        int refuted = 0;
        for (int k = 0; k < kept[t].n_cons; k++, r++) refuted |= out[r] > 0.0;
        if (!refuted) kept[n++] = kept[t];
    }
    *n_kept = n;
done:
    free(C);
    free(d);
    free(al);
    free(out);
    return st;
}

static int lg_verify_trivial_term(const lg_prop *prop, int c)
{
    const lg_prop_case *C = &prop->cases[c];
    const double *slack = prop->inner ? prop->inner[c].slack : NULL;
    for (int t = 0, r = 0; t < C->n_terms; r += C->terms[t].n_cons, t++) {
        int all = 1;
        for (int k = 0; k < C->terms[t].n_cons && all; k++) {
            const lg_lincon *L = &C->terms[t].cons[k];
            for (int j = 0; j < prop->n_out && all; j++) all = L->coef[j] == 0;
            all = all && L->d <= -(slack ? slack[r + k] : 0.0); /* d + slack ≤ 0, exactly */
        }
        if (all) return t;
    }
    return -1;
}

/* Case c of prop on net. low: NULL, or net's exact ReLU form (lg_net_lower_max) when net has
 * max-pool nodes: the bounds are net's own (the max relaxation of backsub.h); what they leave
 * open goes to low, the same real function, whose per-layer unstable counts are not reported
 * (count = 0). */
static lg_status lg_verify_case(const lg_net *net, const lg_net *low, int count, const lg_prop *prop, int c,
                                const lg_verify_opts *o, const lg_runctx *run, lg_verify_report *r, lg_case_out *co,
                                double *x)
{
    lg_bounds b;
    lg_term *kept = NULL;
    lg_problem p;
    memset(co, 0, sizeof *co);
    const char *s = o->solver ? o->solver : "auto";
    /* symbolic bounds first; LP tightening (--tighten lp) only after the
     * attack: it is the expensive part and useless on violated instances */
    double t0 = lg_now();
    lg_status st = lg_verify_prepare(net, prop, c, LG_TIGHTEN_NONE, run, &b, &kept, &p, NULL);
    r->t_bounds += lg_now() - t0;
    if (st == LG_ERR_TIMEOUT) { /* the bounds did not finish: nothing to decide from */
        lg_case_unknown(co, 1, "timeout");
        return LG_OK;
    }
    if (st != LG_OK) return st;
    lg_bab_mode bm = lg_bab_pick(o->bab.mode, net->n_in);
    int smooth = lg_bounds_net_smooth(net); /* the direct route: no LP, no ReLU splitting, no back-end */
    if (smooth && bm != LG_BAB_INPUT) bm = LG_BAB_NONE;
    if (lg_verify_trivial_term(prop, c) >= 0) { /* any point of the witness box; the gate checks it */
        const lg_prop_inner *I = prop->inner ? &prop->inner[c] : NULL;
        const double *lo = I && I->lo ? I->lo : p.lo;
        memcpy(x, lo, (size_t)net->n_in * sizeof *x);
        co->v = LG_VERDICT_VIOLATED;
        snprintf(co->method, sizeof co->method, "trivial");
        goto done;
    }
    if (run->verbose)
        fprintf(stderr, "case %d: %d of %d terms left after symbolic bounds (%.2f s elapsed)\n", c, p.n_terms,
                prop->cases[c].n_terms, lg_now() - r->seconds);
    if (low && (p.n_terms > 0 || o->backend_only)) { /* open: the rest on the ReLU form */
        for (int k = 0; k < net->n_layers; k++) {
            int u = lg_bounds_unstable(&b, net, k);
            r->unstable[k] += u;
            r->unstable_total += u;
        }
        free(kept);
        lg_bounds_free(&b);
        if (run->verbose) fprintf(stderr, "case %d: max-pool nodes open: continuing on their ReLU form\n", c);
        return lg_verify_case(low, NULL, 0, prop, c, o, run, r, co, x);
    }
    if (o->backend_only) { /* every term, same bounds, straight to the back-end (verify.h) */
        if (!lg_bounds_finite(&b)) {
            lg_case_overflow(co);
            goto done;
        }
        memcpy(kept, prop->cases[c].terms, (size_t)prop->cases[c].n_terms * sizeof *kept);
        p.n_terms = prop->cases[c].n_terms;
        st = lg_verify_backend(s, net, &p, run, co, x, r);
        goto done;
    }
    if (p.n_terms == 0) {
        co->v = LG_VERDICT_ROBUST;
        snprintf(co->method, sizeof co->method, "bounds");
        goto done;
    }
    if (lg_runctx_expired(run)) {
        lg_case_unknown(co, 1, "timeout");
        goto done;
    }
    lg_runctx cc = lg_runctx_child(run, (uint64_t)c); /* case c: attack and branch and bound seeded seed + c */
    if (o->attack) {
        int found = 0;
        if ((st = lg_attack_run(net, p.lo, p.hi, p.n_terms, p.terms, &o->atk, &cc, x, &found)) != LG_OK) goto done;
        if (run->verbose)
            fprintf(stderr, "case %d: attack %s (%.2f s elapsed)\n", c, found ? "found a counterexample" : "found nothing",
                    lg_now() - r->seconds);
        if (found) {
            co->v = LG_VERDICT_VIOLATED;
            snprintf(co->method, sizeof co->method, "attack");
            goto done;
        }
    }
    if (smooth && o->bab.root_alpha_steps > 0 && lg_bounds_finite(&b)) {
        /* intermediate α-CROWN (alpha.h: lg_alpha_tighten) on every hidden smooth layer, each
         * followed by CROWN on the later ones: narrower intervals, tighter lines */
        for (int k = 1; k + 1 < net->n_layers && !lg_runctx_expired(&cc); k++) {
            int nt;
            if ((st = lg_alpha_tighten(&b, net, k, o->bab.root_alpha_steps, o->bab.alpha_lr, &cc, &nt)) != LG_OK ||
                (st = lg_bounds_symbolic_unstable_from(&b, net, k + 1)) != LG_OK)
                goto done;
        }
    }
    if (smooth && o->bab.alpha_steps > 0 && lg_bounds_finite(&b)) {
        int nk = p.n_terms;
        if ((st = lg_verify_alpha_smooth(net, &b, kept, &nk, 2 * o->bab.alpha_steps, o->bab.alpha_lr, &cc)) != LG_OK)
            goto done;
        p.n_terms = nk;
        if (nk == 0) {
            co->v = LG_VERDICT_ROBUST;
            snprintf(co->method, sizeof co->method, "alpha");
            goto done;
        }
    }
    if (!lg_bounds_finite(&b)) {
        lg_case_overflow(co);
        goto done;
    }
    const lg_solver_ops *mode = lg_solver_find(s);
    if (!mode) {
        st = lg_fail(LG_ERR_ARG, "verify: no solver named '%s'", s);
        goto done;
    }
    int auto_mode = !mode->solve && mode->chain[0]; /* a portfolio: quick paths first */
    if (o->tighten == LG_TIGHTEN_LP) {
        /* at most half the remaining time, so branch and bound / the back-end still get their
         * turn; before branch and bound, whose root it tightens */
        lg_runctx lp_run = lg_runctx_share(run, 0.5);
        if ((st = lg_verify_tighten(net, prop, c, &lp_run, &b, kept, &p, r, co)) != LG_OK || co->v) goto done;
    }
    if (bm != LG_BAB_NONE) {
        /* auto with ReLU splitting is a first, cheap pass (α-CROWN, shallow splits: a tenth of the
         * remaining time, at most 32 nodes); the whole-case MILP, which wins on wide MNIST-like
         * nets, follows. On a net with conv layers the order is reversed in weight: β-CROWN
         * through the structured convs gets LG_VERIFY_CONV_BAB_SHARE of the time without a node
         * cap, the MILP (dense rows of every conv, large LPs) the rest. Input splitting and
         * forced modes get all the time. */
        lg_runctx bab_run = cc;
        long max_nodes = o->bab.max_nodes;
        if (auto_mode && bm == LG_BAB_RELU && o->tighten == LG_TIGHTEN_NONE && o->bab.mode == LG_BAB_AUTO) {
            if (lg_net_has_conv(net)) {
                bab_run = lg_runctx_share(&cc, LG_VERIFY_CONV_BAB_SHARE);
            } else {
                bab_run = lg_runctx_share(&cc, 0.1);
                if (max_nodes > 32) max_nodes = 32;
            }
        }
        int decided = 0;
        if ((st = lg_verify_bab(net, &p, &b, o, bm, c, &bab_run, run, max_nodes, r, co, x, &decided)) !=
                LG_OK ||
            decided)
            goto done;
    }
    if (smooth && !lg_runctx_expired(&cc)) { /* activation splitting (bab_act.h) in the time left */
        lg_bab_act_out ao;
        double t1 = lg_now();
        st = lg_bab_act_run(net, &b, p.n_terms, p.terms, &cc, o->bab.max_nodes,
                            o->bab.beta ? o->bab.alpha_steps : 0, o->bab.alpha_lr, &ao);
        r->t_bounds += lg_now() - t1;
        r->bab_nodes += ao.nodes;
        if (ao.max_depth > r->bab_max_depth) r->bab_max_depth = ao.max_depth;
        if (st != LG_OK) goto done;
        if (ao.proved) {
            co->v = LG_VERDICT_ROBUST;
            snprintf(co->method, sizeof co->method, "bab-act");
            goto done;
        }
        if (ao.out_of_memory) lg_case_unknown(co, 0, "memory limit (branch and bound's open nodes)");
    }
    if (smooth) {
        if (!co->reason[0])
            lg_case_unknown(co, lg_runctx_expired(run), lg_runctx_expired(run) ? "timeout"
                                                         : "not decided by the smooth relaxations, attack or branch and bound");
    } else if (!mode->chain[0]) {
        if (!co->reason[0]) lg_case_unknown(co, 0, "not decided by bounds or attack (no solver)");
    } else {
        st = lg_verify_backend(s, net, &p, run, co, x, r);
    }
done:
    if (st == LG_ERR_TIMEOUT) { /* a stage stopped at the deadline (core/runctx.h): its result is not used */
        lg_case_unknown(co, 1, "timeout");
        co->method[0] = 0;
        st = LG_OK;
    }
    for (int k = 0; count && k < net->n_layers; k++) {
        int u = lg_bounds_unstable(&b, net, k);
        r->unstable[k] += u;
        r->unstable_total += u;
    }
    free(kept);
    lg_bounds_free(&b);
    return st;
}

int lg_verify_misclassified(const lg_net *net, const lg_prop *prop, double *x, double *y)
{
    if (!prop->center || prop->n_cases != 1 || prop->n_in != net->n_in) return 0;
    const lg_prop_inner *I = prop->inner ? &prop->inner[0] : NULL;
    const double *lo = I && I->lo ? I->lo : prop->cases[0].lo, *hi = I && I->hi ? I->hi : prop->cases[0].hi;
    for (int i = 0; i < prop->n_in; i++)
        if (!(prop->center[i] >= lo[i] && prop->center[i] <= hi[i])) return 0; /* clipped away: not the clean input */
    memcpy(x, prop->center, (size_t)prop->n_in * sizeof *x);
    return lg_witness_accept(net, prop, 0, x, y);
}

lg_status lg_verify_run(const lg_net *net, const lg_prop *prop, const lg_verify_opts *o, lg_verify_report *r)
{
    /* the one deadline source of the run: every stage gets it or a sub-budget of it */
    lg_runctx run = lg_runctx_start(o->timeout_s, o->seed, o->verbose, o->memory_mb);
    return lg_verify_run_in(net, prop, o, &run, r);
}

lg_status lg_verify_run_in(const lg_net *net, const lg_prop *prop, const lg_verify_opts *o, const lg_runctx *run,
                           lg_verify_report *r)
{
    double t0 = lg_now();
    memset(r, 0, sizeof *r);
    r->seconds = t0; /* start time while running; elapsed seconds at the end */
    r->violated_case = -1;
    r->bound_method = o->tighten == LG_TIGHTEN_LP ? "symbolic+lp" : "symbolic";
    r->bab_mode = lg_bab_mode_name(lg_bab_pick(o->bab.mode, net ? net->n_in : 0));
    int smooth = net && lg_bounds_net_smooth(net);
    lg_status st = smooth ? lg_bounds_check_direct(net) : lg_bounds_check_net(net);
    if (st != LG_OK) return st;
    if (smooth) { /* DESIGN.md §3 "Smooth activations": bounds, attack and input splitting only */
        const char *s = o->solver ? o->solver : "auto";
        const lg_solver_ops *so = lg_solver_find(s);
        if ((so && so->solve) || o->backend_only) /* a back-end: z3, glpk */
            return lg_fail(LG_ERR_UNSUPPORTED,
                           "--solver %s encodes piecewise-linear (relu/identity) networks only; this network has "
                           "smooth activations: verify it directly with --solver auto or none, or substitute ReLU "
                           "with `lgelu relu` and verify that with --ref",
                           s);
        if (o->tighten == LG_TIGHTEN_LP)
            return lg_fail(LG_ERR_UNSUPPORTED, "--tighten lp takes piecewise-linear (relu/identity) networks only");
        int bm = lg_bab_pick(o->bab.mode, net->n_in);
        r->bab_mode = lg_bab_mode_name(bm == LG_BAB_INPUT ? LG_BAB_INPUT : LG_BAB_NONE);
    }
    int no = lg_net_n_out(net);
    if (prop->n_in != net->n_in || prop->n_out != no)
        return lg_fail(LG_ERR_ARG, "property has %d inputs and %d outputs but the network has %d and %d", prop->n_in,
                       prop->n_out, net->n_in, no);
    lg_net low = {0}; /* max-pool nodes: the exact ReLU form for what the bounds leave open */
    if (lg_net_has_max(net) && (st = lg_net_lower_max(&low, net, 0)) != LG_OK) return st;
    /* no case (every input box of the file is empty, or every conjunction false): no
     * point can violate, robust below with method "empty box" */
    r->n_layers = net->n_layers;
    r->n_in = net->n_in;
    r->n_out = no;
    r->unstable = calloc((size_t)net->n_layers, sizeof *r->unstable);
    double *x = malloc((size_t)net->n_in * sizeof *x);
    if (!r->unstable || !x) {
        st = lg_fail(LG_ERR_NOMEM, "verify: out of memory");
        goto fail;
    }
    if (!(r->y = malloc((size_t)no * sizeof *r->y))) {
        st = lg_fail(LG_ERR_NOMEM, "verify: out of memory");
        goto fail;
    }
    int mis = lg_verify_misclassified(net, prop, x, r->y);
    if (mis < 0) {
        st = lg_fail(LG_ERR_NOMEM, "verify: out of memory in the witness check");
        goto fail;
    }
    if (mis) { /* the clean input is already a counterexample: nothing else to run */
        r->verdict = LG_VERDICT_VIOLATED;
        r->violated_case = 0;
        r->misclassified = 1;
        snprintf(r->method, sizeof r->method, "clean input");
        r->x = x;
        x = NULL;
        goto done;
    }
    free(r->y);
    r->y = NULL;
    lg_case_out first_unknown;
    int n_unknown = 0;
    memset(&first_unknown, 0, sizeof first_unknown);
    for (int c = 0; c < prop->n_cases; c++) {
        lg_case_out co;
        if ((st = lg_verify_case(net, low.n_layers ? &low : NULL, 1, prop, c, o, run, r, &co, x)) != LG_OK) goto fail;
        if (co.v == LG_VERDICT_VIOLATED) {
            /* the one witness gate: double forward pass and exact rational evaluation */
            r->y = malloc((size_t)no * sizeof *r->y);
            int ok = r->y ? lg_witness_accept(net, prop, c, x, r->y) : -1;
            if (ok < 0) {
                st = lg_fail(LG_ERR_NOMEM, "verify: out of memory in the witness check");
                goto fail;
            }
            if (ok) {
                r->verdict = LG_VERDICT_VIOLATED;
                r->violated_case = c;
                snprintf(r->method, sizeof r->method, "%s", co.method);
                r->x = x;
                x = NULL;
                goto done;
            }
            free(r->y);
            r->y = NULL;
            lg_case_unknown(&co, 0, "counterexample fails the exact re-check (a near tie, or an input box that holds no double)");
        }
        if (co.v == LG_VERDICT_ROBUST) {
            r->n_cases_robust++;
            if (!r->method[0] || strcmp(co.method, "bounds") != 0) snprintf(r->method, sizeof r->method, "%s", co.method);
        } else if (n_unknown++ == 0) {
            first_unknown = co;
        }
    }
    if (n_unknown == 0) {
        r->verdict = LG_VERDICT_ROBUST;
        if (prop->n_cases == 0) snprintf(r->method, sizeof r->method, "empty box");
    } else {
        r->verdict = LG_VERDICT_UNKNOWN;
        r->timed_out = first_unknown.timed_out;
        snprintf(r->reason, sizeof r->reason, "%s", first_unknown.reason);
        snprintf(r->method, sizeof r->method, "%s", first_unknown.method);
    }
done:
    free(x);
    lg_net_free(&low);
    r->seconds = lg_now() - t0;
    return LG_OK;
fail:
    free(x);
    lg_net_free(&low);
    lg_verify_report_free(r);
    return st;
}
