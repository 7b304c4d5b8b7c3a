/* verify.c — the verdict driver (verify.h). */
#include "core/clock.h"
#include "core/op.h"
#include "verify/verify.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "verify/alpha.h"
#include "verify/alpha_tnode.h"
#include "verify/bab_act.h"
#include "verify/backend.h"
#include "verify/recheck.h"
#include "verify/tnode_planes.h"
#include "verify/refine.h"

lg_verify_opts lg_verify_opts_default(void)
{
    lg_verify_opts o;
    memset(&o, 0, sizeof o);
    o.solver = (lg_solver_pick){LG_SOLVER_AUTO, NULL};
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
    if (o->solver.mode != d.solver.mode || o->solver.row != d.solver.row)
        LG_SET(" solver=%s", lg_solver_pick_name(&o->solver));
    if (o->backend_only) LG_SET(" backend_only=1");
    if (!o->attack) LG_SET(" attack=0");
    if (o->bab.mode != d.bab.mode) LG_SET(" bab=%s", lg_bab_mode_name(o->bab.mode));
    if (o->tighten == LG_TIGHTEN_LP) LG_SET(" tighten=lp");
    if (o->refine != d.refine) LG_SET(" refine=%s", o->refine == LG_REFINE_ON ? "on" : "off");
    if (o->seed != d.seed) LG_SET(" seed=%lu", o->seed);
    if (o->memory_mb > 0) LG_SET(" memory=%g", o->memory_mb);
    if (o->witness_tol > 0) LG_SET(" witness_tol=%g", o->witness_tol);
    if (o->bab.max_nodes != d.bab.max_nodes) LG_SET(" bab_nodes=%ld", o->bab.max_nodes);
    if (o->bab.alpha_steps != d.bab.alpha_steps) LG_SET(" alpha_steps=%d", o->bab.alpha_steps);
    if (o->bab.branch != d.bab.branch) LG_SET(" bab_branch=%s", o->bab.branch == LG_BAB_BRANCH_BABSR ? "babsr" : "fsb");
    if (o->bab.beta != d.bab.beta) LG_SET(" beta=%d", o->bab.beta);
    if (o->bab.group != d.bab.group) LG_SET(" bab_group=%d", o->bab.group);
    if (o->bab.root_alpha_steps != d.bab.root_alpha_steps) LG_SET(" bab_root_alpha=%d", o->bab.root_alpha_steps);
    if (o->bab.cuts != d.bab.cuts) LG_SET(" bab_cuts=%d", o->bab.cuts);
    if (o->bab.solver_unstable != d.bab.solver_unstable) LG_SET(" bab_solver_relus=%d", o->bab.solver_unstable);
    if (o->bab.act_order != d.bab.act_order)
        LG_SET(" bab_order=%s", lg_bab_act_order_name((lg_bab_act_order)o->bab.act_order));
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

const char *lg_verify_kind(const lg_verify_report *r)
{
    if (r->verdict == LG_VERDICT_UNKNOWN && r->how.why == LG_REASON_TOLERANCE) return "violated-within-tolerance";
    return lg_verdict_name(r->verdict);
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
    if ((st = lg_alpha_tnode_objective(b, net, m, C_mat, d, lb)) != LG_OK) goto fail; /* products' α */
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

/* Outcome of one case: its verdict and who decided it (outcome.h). */
typedef struct lg_case_out {
    lg_verdict v;
    lg_outcome how;
} lg_case_out;

typedef struct lg_route lg_route;

/* One case on its way through the stages of its route. */
typedef struct lg_case {
    const lg_route *route;
    const lg_net *net;
    const lg_prop *prop;
    int c;                   /* case index */
    const lg_verify_opts *o;
    const lg_runctx *run;    /* the run's context */
    lg_runctx cc;            /* case c's: attack and branch and bound seeded seed + c */
    double t0;               /* the run's start (lg_now()), for progress lines */
    lg_bab_mode bm;          /* the splitting strategy of this case's route */
    lg_bounds b;             /* the case's bounds */
    lg_term *kept;           /* the terms the bounds do not refute (p.terms) */
    lg_problem p;            /* the query a back-end receives */
    lg_verify_report *r;     /* counters summed over cases */
    lg_case_out *co;
    double *x;               /* [n_in] the counterexample when violated */
    int done;                /* a stage ended the route (co final) */
    const lg_net *low;       /* NULL, or net's exact ReLU form (lg_net_lower_max) when net has max-pool
                                nodes: what net's own bounds leave open goes on there */
    int count;               /* 1: add this net's unstable counts to the report (0 on low: other layers) */
    int attacked;            /* the attack already ran on this case (on the max-pool nodes' net) */
    int bounded;             /* b and kept hold this net's bounds (released when the pass ends) */
    int lower;               /* a stage passed the case on to low, the ReLU form */
    int refined;             /* the bound refinement ran its α-CROWN on every layer: the search's root skips its own */
} lg_case;

/* A stage of a route: decides (co->v, done = 1), ends the route unknown
 * (done = 1), or leaves the case to the next stage. */
typedef lg_status (*lg_stage_fn)(lg_case *k);

/* A route: the stages a case goes through, in order, and what the net
 * allows (DESIGN.md §3). Chosen once per run from the net and the options. */
struct lg_route {
    lg_status (*check)(const lg_net *net); /* the nets the route takes */
    lg_bab_mode (*split)(lg_bab_mode m, int n_in); /* the splitting strategy for --bab m, n_in inputs */
    int backend;                           /* complete back-ends (piecewise-linear encodings) */
    lg_stage_fn stages[12];                /* NULL-terminated */
};

static void lg_case_unknown(lg_case_out *co, lg_reason why, int timed_out, const char *reason)
{
    co->v = LG_VERDICT_UNKNOWN;
    lg_outcome_unknown(&co->how, why, timed_out, "%s", reason);
}

static void lg_case_decided(lg_case *k, lg_verdict v, lg_stage s)
{
    k->co->v = v;
    k->co->how.stage = s;
    k->done = 1;
}

/* Doubles overflowed: no bound method or back-end can take ±∞ bounds. */
static void lg_case_overflow(lg_case_out *co)
{
    lg_case_unknown(co, LG_REASON_OVERFLOW, 0,
                    "bounds overflow: a pre-activation bound is infinite (input or weights too large)");
}

/* The whole case p to the back-end decision (backend.h); fills co, x when violated. */
static lg_status lg_verify_backend(lg_case *k)
{
    const lg_problem *p = &k->p;
    lg_backend_call call = {k->net, p, p->lo, p->hi, p->n_terms, p->terms, k->run, 0};
    lg_backend_out out;
    lg_status st = lg_backend_decide(&k->o->solver, &call, &out, k->x);
    k->r->nodes += out.nodes;
    k->r->t_solver += out.seconds;
    lg_lp_stats_add(&k->r->lp, &out.lp);
    if (st != LG_OK) return st;
    lg_case_out *co = k->co;
    co->how = out.how;
    k->done = 1;
    if (out.answer == LG_ANSWER_UNSAT) co->v = LG_VERDICT_ROBUST;
    else if (out.answer == LG_ANSWER_SAT) co->v = LG_VERDICT_VIOLATED;
    else co->how.timed_out = out.how.timed_out || lg_runctx_expired(k->run);
    return LG_OK;
}

/* Keep the terms of case c that the bounds refute no more (after b changed). */
static lg_status lg_case_refilter(lg_case *k)
{
    return lg_verify_filter(&k->b, k->net, k->prop, k->c, k->kept, &k->p.n_terms);
}

/* ---- the stages ---- */

/* A term every output satisfies: any point of the witness box (the gate checks it). */
static lg_status lg_stage_trivial(lg_case *k)
{
    const lg_prop *prop = k->prop;
    const lg_prop_case *C = &prop->cases[k->c];
    const double *slack = prop->inner ? prop->inner[k->c].slack : NULL;
    for (int t = 0, r = 0; t < C->n_terms; r += C->terms[t].n_cons, t++) {
        int all = 1;
        for (int q = 0; q < C->terms[t].n_cons && all; q++) {
            const lg_lincon *L = &C->terms[t].cons[q];
            for (int j = 0; j < prop->n_out && all; j++) all = L->coef[j] == 0;
            all = all && L->d <= -(slack ? slack[r + q] : 0.0); /* d + slack ≤ 0, exactly */
        }
        if (all) {
            const lg_prop_inner *I = prop->inner ? &prop->inner[k->c] : NULL;
            memcpy(k->x, I && I->lo ? I->lo : k->p.lo, (size_t)k->net->n_in * sizeof *k->x);
            lg_case_decided(k, LG_VERDICT_VIOLATED, LG_STAGE_TRIVIAL);
            return LG_OK;
        }
    }
    if (k->run->verbose)
        fprintf(stderr, "case %d: %d of %d terms left after symbolic bounds (%.2f s elapsed)\n", k->c, k->p.n_terms,
                C->n_terms, lg_now() - k->t0);
    return LG_OK;
}

/* Every term, same bounds, straight to the back-end (verify.h: backend_only). */
static lg_status lg_stage_backend_all(lg_case *k)
{
    const lg_prop_case *C = &k->prop->cases[k->c];
    k->done = 1;
    if (!lg_bounds_finite(&k->b)) {
        lg_case_overflow(k->co);
        return LG_OK;
    }
    memcpy(k->kept, C->terms, (size_t)C->n_terms * sizeof *k->kept);
    k->p.n_terms = C->n_terms;
    return lg_verify_backend(k);
}

/* The symbolic bounds refute every term; else stop at the deadline. */
static lg_status lg_stage_bounds(lg_case *k)
{
    if (k->p.n_terms == 0) lg_case_decided(k, LG_VERDICT_ROBUST, LG_STAGE_BOUNDS);
    else if (lg_runctx_expired(k->run)) {
        lg_case_unknown(k->co, LG_REASON_TIMEOUT, 1, "timeout");
        k->done = 1;
    }
    return LG_OK;
}

static lg_status lg_stage_attack(lg_case *k)
{
    if (!k->o->attack || k->attacked) return LG_OK;
    k->attacked = 1;
    int found = 0;
    lg_status st = lg_attack_run(k->net, k->p.lo, k->p.hi, k->p.n_terms, k->p.terms, &k->o->atk, &k->cc, k->x, &found);
    if (st != LG_OK) return st;
    if (k->run->verbose)
        fprintf(stderr, "case %d: attack %s (%.2f s elapsed)\n", k->c, found ? "found a counterexample" : "found nothing",
                lg_now() - k->t0);
    if (found) lg_case_decided(k, LG_VERDICT_VIOLATED, LG_STAGE_ATTACK);
    return LG_OK;
}

/* Smooth: intermediate α-CROWN (alpha.h: lg_alpha_tighten) on every hidden
 * layer, each followed by CROWN on the later ones: narrower intervals,
 * tighter lines. At most half the time left: a layer its share cuts short
 * keeps its bounds (each row's best finished bound, or the ones it had), and
 * the later layers theirs. */
static lg_status lg_stage_alpha_layers(lg_case *k)
{
    const lg_net *net = k->net;
    int steps = k->o->bab.root_alpha_steps < 0 ? LG_BAB_SMOOTH_ROOT_ALPHA : k->o->bab.root_alpha_steps;
    if (steps <= 0 || !lg_bounds_finite(&k->b)) return LG_OK;
    lg_status st = LG_OK;
    lg_runctx tr = lg_runctx_share(&k->cc, 0.5);
    for (int l = 1; l + 1 < net->n_layers && !lg_runctx_expired(&tr) && st == LG_OK; l++) {
        int nt;
        st = lg_alpha_tighten(&k->b, net, l, steps, k->o->bab.alpha_lr, &tr, &nt);
        if (st == LG_ERR_TIMEOUT && !lg_runctx_expired(&k->cc)) return LG_OK;
        if (st == LG_OK) st = lg_bounds_symbolic_unstable_from(&k->b, net, l + 1);
    }
    if (st == LG_OK && k->run->verbose)
        fprintf(stderr, "case %d: intermediate alpha-CROWN done (%.2f s elapsed)\n", k->c, lg_now() - k->t0);
    return st;
}

/* Smooth: α-CROWN on the open terms (α = the tangent points, alpha.h):
 * drop every term one of whose constraints it bounds above 0. */
static lg_status lg_stage_alpha(lg_case *k)
{
    const lg_net *net = k->net;
    if (k->o->bab.alpha_steps <= 0 || !lg_bounds_finite(&k->b)) return LG_OK;
    lg_term *kept = k->kept;
    int m = 0, no = lg_net_n_out(net), n_kept = k->p.n_terms;
    for (int t = 0; t < n_kept; t++) m += kept[t].n_cons;
    if (m == 0) return LG_OK;
    size_t size = (size_t)lg_alpha_size(net);
    double *C = malloc((size_t)m * (size_t)no * sizeof *C), *d = malloc((size_t)m * sizeof *d);
    double *al = malloc((size_t)m * size * sizeof *al), *out = malloc((size_t)m * sizeof *out);
    lg_status st = LG_OK;
    if (!C || !d || !al || !out) {
        st = lg_fail(LG_ERR_NOMEM, "verify: out of memory");
        goto done;
    }
    for (int t = 0, r = 0; t < n_kept; t++)
        for (int q = 0; q < kept[t].n_cons; q++, r++) {
            memcpy(C + (size_t)r * (size_t)no, kept[t].cons[q].coef, (size_t)no * sizeof *C);
            d[r] = kept[t].cons[q].d;
        }
    lg_alpha_default(&k->b, net, m, al);
    if ((st = lg_alpha_optimize(&k->b, net, m, C, d, 2 * k->o->bab.alpha_steps, k->o->bab.alpha_lr, &k->cc, al, out,
                                NULL)) != LG_OK)
        goto done;
    int n = 0;
    for (int t = 0, r = 0; t < n_kept; t++) {
        int refuted = 0;
        for (int q = 0; q < kept[t].n_cons; q++, r++) refuted |= out[r] > 0.0;
        if (!refuted) kept[n++] = kept[t];
    }
    k->p.n_terms = n;
    if (n == 0) lg_case_decided(k, LG_VERDICT_ROBUST, LG_STAGE_ALPHA);
done:
    free(C);
    free(d);
    free(al);
    free(out);
    return st;
}

/* Doubles overflowed: nothing after this takes ±∞ bounds. */
static lg_status lg_stage_finite(lg_case *k)
{
    if (!lg_bounds_finite(&k->b)) {
        lg_case_overflow(k->co);
        k->done = 1;
    }
    return LG_OK;
}

/* --tighten lp: LP tightening in at most half the remaining time (so branch
 * and bound / the back-end still get their turn; before branch and bound,
 * whose root it tightens), then the quick proof again. */
static lg_status lg_stage_tighten(lg_case *k)
{
    if (k->o->tighten != LG_TIGHTEN_LP) return LG_OK;
    lg_runctx lp_run = lg_runctx_share(k->run, 0.5);
    long n_lp = 0;
    double t0 = lg_now();
    lg_status st = lg_bounds_lp(&k->b, k->net, &lp_run, &n_lp);
    k->r->t_bounds += lg_now() - t0;
    if (st != LG_OK) return st;
    k->r->n_lp += n_lp;
    k->r->bound_method = "symbolic+lp";
    if ((st = lg_case_refilter(k)) != LG_OK) return st;
    if (lp_run.verbose)
        fprintf(stderr, "case %d: %d terms left after %ld LPs (%.2f s elapsed)\n", k->c, k->p.n_terms, n_lp,
                lg_now() - k->t0);
    if (k->p.n_terms == 0) lg_case_decided(k, LG_VERDICT_ROBUST, LG_STAGE_BOUNDS);
    return LG_OK;
}

/* Refined intermediate bounds (refine.h) before ReLU branch and bound, in
 * LG_VERIFY_REFINE_SHARE of the time left; then the quick proof again. The
 * bounds it leaves are the search's root bounds, inherited by every node. */
static lg_status lg_stage_refine(lg_case *k)
{
    const lg_verify_opts *o = k->o;
    if (k->bm != LG_BAB_RELU || o->tighten == LG_TIGHTEN_LP || o->refine == LG_REFINE_OFF) return LG_OK;
    int unstable = 0;
    for (int l = 0; l < k->net->n_layers; l++) unstable += lg_bounds_unstable(&k->b, k->net, l);
    if (unstable == 0 || (o->refine == LG_REFINE_AUTO && !lg_verify_auto_refine(k->net, unstable))) return LG_OK;
    lg_refine_opts ro = lg_refine_opts_default();
    ro.alpha_steps = lg_bab_root_alpha_steps(&o->bab, k->net);
    ro.alpha_lr = LG_BAB_ROOT_ALPHA_LR;
    lg_runctx share = lg_runctx_share(&k->cc, LG_VERIFY_REFINE_SHARE);
    lg_refine_stats rs;
    double t0 = lg_now();
    lg_status st = lg_refine_bounds(&k->b, k->net, &ro, &share, &rs);
    k->r->t_bounds += lg_now() - t0;
    k->r->n_lp += rs.n_lp;
    if (st == LG_ERR_TIMEOUT && !lg_runctx_expired(k->run)) st = LG_OK; /* its share is over: b holds */
    else if (st == LG_OK) k->refined = ro.alpha_steps > 0;
    if (st != LG_OK) return st;
    if ((st = lg_case_refilter(k)) != LG_OK) return st;
    if (k->run->verbose) {
        int after = 0;
        for (int l = 0; l < k->net->n_layers; l++) after += lg_bounds_unstable(&k->b, k->net, l);
        fprintf(stderr,
                "case %d: refined bounds: %ld LPs on %d layers tightened %ld bounds, %ld neurons stable; unstable "
                "%d -> %d; %d terms left (%.2f s, %.2f s elapsed)\n",
                k->c, rs.n_lp, rs.layers, rs.n_tight, rs.n_stable, unstable, after, k->p.n_terms, rs.seconds,
                lg_now() - k->t0);
    }
    if (k->p.n_terms == 0) lg_case_decided(k, LG_VERDICT_ROBUST, LG_STAGE_BOUNDS);
    return LG_OK;
}

/* Branch and bound on the kept terms (bab.h). Auto with ReLU splitting is a
 * pass of β-CROWN branch and bound, then the whole-case back-end; its share
 * of the time and node cap by lg_verify_auto_bab_share. Input splitting and
 * forced modes get all the time. Decides the case when it proves, finds, or
 * the run's deadline passed; otherwise (a limit or its sub-budget stopped it)
 * co says why and the route goes on. */
static lg_status lg_stage_split(lg_case *k)
{
    const lg_verify_opts *o = k->o;
    if (k->bm == LG_BAB_NONE) return LG_OK;
    lg_runctx bab_run = k->cc;
    long max_nodes = o->bab.max_nodes;
    if (k->route->backend && o->solver.mode == LG_SOLVER_AUTO && k->bm == LG_BAB_RELU &&
        o->tighten == LG_TIGHTEN_NONE && o->bab.mode == LG_BAB_AUTO) {
        int unstable = 0;
        for (int l = 0; l < k->net->n_layers; l++) unstable += lg_bounds_unstable(&k->b, k->net, l);
        bab_run = lg_runctx_share(&k->cc, lg_verify_auto_bab_share(k->net, unstable, &max_nodes));
    }
    lg_bab_opts bo = o->bab; /* per case: the strategy picked and its node limit; the solver is verify's */
    bo.mode = k->bm;
    bo.max_nodes = max_nodes;
    bo.solver = o->solver;
    if (k->refined) bo.root_alpha_steps = 0; /* the refinement ran it */
    if (!k->route->backend) bo.solver = (lg_solver_pick){LG_SOLVER_NONE, NULL}; /* smooth: no back-end */
    lg_bab_out bout;
    lg_verify_report *r = k->r;
    lg_status st = lg_bab_run(k->net, k->p.lo, k->p.hi, k->p.n_terms, k->p.terms, &k->b, &bo, &bab_run, &bout, k->x);
    r->bab_nodes += bout.nodes;
    if (bout.max_depth > r->bab_max_depth) r->bab_max_depth = bout.max_depth;
    r->t_bounds += bout.t_bounds;
    r->t_solver += bout.t_solver;
    r->nodes += bout.solver_nodes;
    lg_lp_stats_add(&r->lp, &bout.lp);
    if (st != LG_OK) return st;
    if (k->run->verbose) {
        char m[32];
        fprintf(stderr, "case %d: %s: %ld nodes, depth %d, %s%s\n", k->c, lg_outcome_method(&bout.how, m, sizeof m),
                bout.nodes, bout.max_depth,
                bout.answer == LG_BAB_PROVED ? "proved" : bout.answer == LG_BAB_FOUND ? "counterexample" : "open: ",
                bout.answer == LG_BAB_OPEN ? bout.how.reason : "");
    }
    lg_case_out *co = k->co;
    co->how.stage = bout.how.stage;
    co->how.by = bout.how.by;
    k->done = 1;
    if (bout.answer == LG_BAB_PROVED) co->v = LG_VERDICT_ROBUST;
    else if (bout.answer == LG_BAB_FOUND) co->v = LG_VERDICT_VIOLATED;
    else if (lg_runctx_expired(k->run)) lg_case_unknown(co, LG_REASON_TIMEOUT, 1, "timeout");
    else { /* a limit or its own time budget stopped it: the route goes on */
        lg_case_unknown(co, bout.how.why, 0, bout.how.reason);
        k->done = 0;
    }
    return LG_OK;
}

/* Smooth: activation splitting (bab_act.h) in the time left. */
static lg_status lg_stage_act_split(lg_case *k)
{
    const lg_verify_opts *o = k->o;
    if (lg_runctx_expired(&k->cc)) return LG_OK;
    lg_bab_act_out ao;
    double t1 = lg_now();
    lg_status st = lg_bab_act_run(k->net, &k->b, k->p.n_terms, k->p.terms, &k->cc, o->bab.max_nodes,
                                  o->bab.beta ? o->bab.alpha_steps : 0, o->bab.alpha_lr,
                                  (lg_bab_act_order)o->bab.act_order, &ao);
    k->r->t_bounds += lg_now() - t1;
    k->r->bab_nodes += ao.nodes;
    if (ao.max_depth > k->r->bab_max_depth) k->r->bab_max_depth = ao.max_depth;
    if (st != LG_OK) return st;
    if (ao.proved) lg_case_decided(k, LG_VERDICT_ROBUST, LG_STAGE_ACT_SPLIT);
    else if (ao.out_of_memory) lg_case_unknown(k->co, LG_REASON_MEMORY, 0, "memory limit (branch and bound's open nodes)");
    return LG_OK;
}

/* Smooth: the route's end, undecided. */
static lg_status lg_stage_smooth_end(lg_case *k)
{
    int late = lg_runctx_expired(k->run);
    if (!k->co->how.reason[0])
        lg_case_unknown(k->co, late ? LG_REASON_TIMEOUT : LG_REASON_UNDECIDED, late,
                        late ? "timeout" : "not decided by the smooth relaxations, attack or branch and bound");
    k->done = 1;
    return LG_OK;
}

/* Piecewise-linear: the back-end on the whole case, or the route's end without one. */
static lg_status lg_stage_backend(lg_case *k)
{
    if (k->o->solver.mode != LG_SOLVER_NONE) return lg_verify_backend(k);
    if (!k->co->how.reason[0]) lg_case_unknown(k->co, LG_REASON_NO_BACKEND, 0, "not decided by bounds or attack (no solver)");
    k->done = 1;
    return LG_OK;
}

/* The routes (verify.h: the order per case). */
/* The routes' splitting strategies: ReLU or input splitting as lg_bab_pick picks, inputs only
 * (smooth activations), ReLU splitting where the inputs are too many to split (Transformer
 * nodes, bab_tnode.h), inputs only on Transformer nodes with the back-end. */
static lg_bab_mode lg_split_any(lg_bab_mode m, int n_in) { return lg_bab_pick(m, n_in); }
static lg_bab_mode lg_split_input(lg_bab_mode m, int n_in)
{
    lg_bab_mode bm = lg_bab_pick(m, n_in);
    return bm == LG_BAB_INPUT ? bm : LG_BAB_NONE;
}
static lg_bab_mode lg_split_tnode(lg_bab_mode m, int n_in)
{
    return m == LG_BAB_NONE ? LG_BAB_NONE : m == LG_BAB_AUTO ? lg_bab_pick(m, n_in) : m;
}
static lg_bab_mode lg_split_tnode_backend(lg_bab_mode m, int n_in)
{
    (void)n_in;
    return m == LG_BAB_NONE ? LG_BAB_NONE : LG_BAB_INPUT;
}

static const lg_route lg_route_pwl = {lg_bounds_check_net, lg_split_any, 1,
                                      {lg_stage_trivial, lg_stage_bounds, lg_stage_attack, lg_stage_finite,
                                       lg_stage_tighten, lg_stage_refine, lg_stage_split, lg_stage_backend, NULL}};
/* A net with max-pool nodes, on the nodes themselves (DESIGN.md §1 "The max-pool node"): no
 * back-end and no LP (they take the exact ReLU form, where an open case goes on); branch and
 * bound gets all the time */
static lg_status lg_stage_node_end(lg_case *k);
static const lg_route lg_route_node = {lg_bounds_check_net, lg_split_any, 0,
                                       {lg_stage_trivial, lg_stage_bounds, lg_stage_attack, lg_stage_finite,
                                        lg_stage_split, lg_stage_node_end, NULL}};
static const lg_route lg_route_backend_only = {lg_bounds_check_net, lg_split_any, 1,
                                               {lg_stage_trivial, lg_stage_backend_all, NULL}};
/* DESIGN.md §3 "Smooth activations": bounds, attack, α, input and activation splitting */
static const lg_route lg_route_smooth = {
    lg_bounds_check_direct,
    lg_split_input,
    0,
    {lg_stage_trivial, lg_stage_bounds, lg_stage_attack, lg_stage_alpha_layers, lg_stage_alpha, lg_stage_finite,
     lg_stage_split, lg_stage_act_split, lg_stage_smooth_end, NULL}};

/* Transformer nodes (DESIGN.md §1 "Transformer nodes"): interval bounds, the attack and input splitting */
static lg_status lg_verify_check_tnode(const lg_net *net) { return lg_tnode_relax_check(net); }
/* Transformer nodes with `--solver glpk|z3` or --backend-only (DESIGN.md §3 "Back-ends on
 * Transformer nodes"): the back-end on the ReLU parts exactly and each node's relaxation over the
 * case's box; its UNSAT proves, its model is a candidate the witness rules re-check on the real net */
static lg_status lg_stage_tnode_backend(lg_case *k)
{
    if (k->o->solver.mode != LG_SOLVER_ONE && !k->o->backend_only) return LG_OK;
    k->done = 1;
    if (k->o->solver.mode == LG_SOLVER_NONE) {
        lg_case_unknown(k->co, LG_REASON_NO_BACKEND, 0, "not decided by bounds or attack (no solver)");
        return LG_OK;
    }
    if (k->o->backend_only) { /* every term, as lg_stage_backend_all */
        const lg_prop_case *C = &k->prop->cases[k->c];
        memcpy(k->kept, C->terms, (size_t)C->n_terms * sizeof *k->kept);
        k->p.n_terms = C->n_terms;
    }
    lg_trelax tr;
    lg_status st = lg_tnode_relax_build(k->net, &k->b, &tr);
    if (st == LG_ERR_ARG) { /* bounds not finite */
        lg_case_overflow(k->co);
        return LG_OK;
    }
    if (st != LG_OK) return st;
    k->p.trelax = &tr;
    st = lg_verify_backend(k);
    k->p.trelax = NULL;
    lg_trelax_free(&tr);
    if (st == LG_OK && k->co->v == LG_VERDICT_UNKNOWN && k->co->how.why == LG_REASON_WITNESS)
        lg_outcome_unknown(&k->co->how, LG_REASON_WITNESS, 0,
                           "the back-end's model of the relaxed Transformer nodes is no counterexample of the "
                           "network (a gap of the relaxation)");
    return st;
}

static const lg_route lg_route_tnode = {lg_verify_check_tnode, lg_split_tnode, 0,
                                        {lg_stage_trivial, lg_stage_bounds, lg_stage_attack, lg_stage_finite,
                                         lg_stage_tnode_backend, lg_stage_split, lg_stage_smooth_end, NULL}};
static const lg_route lg_route_tnode_backend_only = {lg_verify_check_tnode, lg_split_tnode_backend, 0,
                                                     {lg_stage_trivial, lg_stage_finite, lg_stage_tnode_backend, NULL}};

/* The route of net under o: chosen once per run. */
static const lg_route *lg_verify_route(const lg_net *net, const lg_verify_opts *o)
{
    if (net && lg_net_first_tnode(net) >= 0) return o->backend_only ? &lg_route_tnode_backend_only : &lg_route_tnode;
    if (net && lg_bounds_net_smooth(net)) return &lg_route_smooth;
    return o->backend_only ? &lg_route_backend_only : &lg_route_pwl;
}

/* The case's unstable counts into the report (when k->count), then its
 * bounds and kept terms freed. */
static void lg_case_release(lg_case *k)
{
    /* on a net with Transformer nodes, the ReLUs that reach no output keep interval bounds
     * (bounds.h lg_bounds_reach) and are not counted */
    unsigned char **reach = NULL;
    if (k->count && k->b.width && lg_net_first_tnode(k->net) >= 0) reach = lg_bounds_reach_alloc(k->net);
    for (int l = 0; k->count && l < k->net->n_layers; l++) {
        int u = lg_bounds_unstable_in(&k->b, k->net, l, reach ? reach[l] : NULL);
        k->r->unstable[l] += u;
        k->r->unstable_total += u;
    }
    free(reach);
    free(k->kept);
    k->kept = NULL;
    lg_bounds_free(&k->b);
}

/* Nets whose bounds are costly — convs, max-pool nodes — can spend the
 * whole budget in them while a counterexample is a second of search away
 * (benchmarks/VERIFY.md "Against auto_LiRPA"): there a short attack runs
 * first (at most 64 samples and 2 restarts of the configured search, a
 * quarter of the time), on every term of the case; the full attack stage
 * after the bounds still runs on what they leave open. Other nets keep
 * bounds first: there even a short attack costs more than the bounds that
 * usually decide. */
static lg_status lg_verify_attack_first(lg_case *k)
{
    if (k->attacked || !k->o->attack || k->o->backend_only || !(lg_net_has_conv(k->net) || k->low)) return LG_OK;
    const lg_prop_case *C = &k->prop->cases[k->c];
    lg_runctx cc = lg_runctx_child(k->run, (uint64_t)k->c), share = lg_runctx_share(&cc, 0.25);
    lg_attack_opts ao = k->o->atk;
    if (ao.samples > 64) ao.samples = 64;
    if (ao.restarts > 2) ao.restarts = 2;
    int found = 0;
    lg_status st = lg_attack_run(k->net, C->lo, C->hi, C->n_terms, C->terms, &ao, &share, k->x, &found);
    if (st != LG_OK) return st;
    if (k->run->verbose)
        fprintf(stderr, "case %d: attack before the bounds %s (%.2f s elapsed)\n", k->c,
                found ? "found a counterexample" : "found nothing", lg_now() - k->t0);
    if (found) {
        k->attacked = 1;
        k->co->v = LG_VERDICT_VIOLATED;
        k->co->how.stage = LG_STAGE_ATTACK;
    }
    return LG_OK;
}

/* The opening of every route: a short attack first where bounds are costly. */
static lg_status lg_stage_attack_first(lg_case *k)
{
    lg_status st = lg_verify_attack_first(k);
    if (st == LG_OK && k->co->v == LG_VERDICT_VIOLATED) k->done = 1;
    return st;
}

/* The opening: symbolic bounds; LP tightening (--tighten lp) only after the attack: it is the
 * expensive part and useless on violated instances. */
static lg_status lg_stage_prepare(lg_case *k)
{
    double t0 = lg_now();
    lg_status st = lg_verify_prepare(k->net, k->prop, k->c, LG_TIGHTEN_NONE, k->run, &k->b, &k->kept, &k->p, NULL);
    k->r->t_bounds += lg_now() - t0;
    if (st == LG_ERR_TIMEOUT) { /* the bounds did not finish: nothing to decide from */
        lg_case_unknown(k->co, LG_REASON_TIMEOUT, 1, "timeout");
        k->done = 1;
        return LG_OK;
    }
    if (st != LG_OK) return st;
    k->bounded = 1;
    k->r->n_cases_bounded++;
    return LG_OK;
}

/* The opening's end: the case's route. On a net with max-pool nodes, open terms go to the node
 * route (attack and branch and bound on the nodes first), or straight to the ReLU form. */
static lg_status lg_stage_route(lg_case *k)
{
    if (k->low && k->p.n_terms > 0 && k->route == &lg_route_pwl && k->o->tighten == LG_TIGHTEN_NONE)
        k->route = &lg_route_node;
    else if (k->low && (k->p.n_terms > 0 || k->o->backend_only)) {
        k->lower = 1;
        return LG_OK;
    }
    k->bm = k->route->split(k->o->bab.mode, k->net->n_in);
    k->cc = lg_runctx_child(k->run, (uint64_t)k->c);
    return LG_OK;
}

/* The node route's end, undecided: on to the ReLU form while there is time. */
static lg_status lg_stage_node_end(lg_case *k)
{
    if (!lg_runctx_expired(k->run)) k->lower = 1;
    else lg_case_unknown(k->co, LG_REASON_TIMEOUT, 1, "timeout");
    return LG_OK;
}

/* Before the route's own stages; an error here ends the run (a timeout only in the bounds is an
 * unknown case). */
static const lg_stage_fn lg_case_opening[] = {lg_stage_attack_first, lg_stage_prepare, lg_stage_route, NULL};

/* Case k: the opening, then its route's stages, in one pass per net: max-pool nodes first, then
 * what their relaxation (backsub.h) and branch and bound on them leave open on the exact ReLU
 * form, the same real function. */
static lg_status lg_verify_case(lg_case *k)
{
    const lg_route *route0 = k->route;
    for (;;) {
        lg_status st = LG_OK;
        memset(k->co, 0, sizeof *k->co);
        k->done = k->lower = k->bounded = 0;
        for (int i = 0; lg_case_opening[i] && !k->done && !k->lower; i++)
            if ((st = lg_case_opening[i](k)) != LG_OK) return st;
        for (int i = 0; !k->lower && k->route->stages[i] && !k->done && st == LG_OK; i++) st = k->route->stages[i](k);
        if (st == LG_ERR_TIMEOUT) { /* a stage stopped at the deadline (core/runctx.h): its result is not used */
            lg_case_unknown(k->co, LG_REASON_TIMEOUT, 1, "timeout");
            k->co->how.stage = LG_STAGE_NONE;
            k->co->how.by = k->co->how.confirm = NULL;
            k->co->how.theory[0] = '\0';
            st = LG_OK;
        }
        if (k->bounded) lg_case_release(k);
        if (!k->lower || st != LG_OK) return st;
        if (k->run->verbose) fprintf(stderr, "case %d: max-pool nodes open: continuing on their ReLU form\n", k->c);
        k->route = route0; /* the run's route (the node route is this net's only) */
        k->net = k->low;
        k->low = NULL;
        k->count = 0;
    }
}

double lg_verify_auto_bab_share(const lg_net *net, int unstable, long *max_nodes)
{
    /* dense nets with few unstable ReLUs: the MILP wins (benchmarks/VERIFY.md, 784-256-256-10);
     * convs (dense rows of every conv: large LPs) and many binaries: β-CROWN does
     * (VERIFY.md "Residual networks") */
    if (lg_net_has_conv(net) || unstable > LG_VERIFY_MILP_UNSTABLE) return LG_VERIFY_BAB_SHARE;
    if (*max_nodes > 32) *max_nodes = 32;
    return 0.1;
}

int lg_verify_auto_refine(const lg_net *net, int unstable)
{
    /* measured (benchmarks/VERIFY.md "Refined intermediate bounds"): at 30 s on the dense nets
     * with more than LG_VERIFY_MILP_UNSTABLE unstable ReLUs it decided nothing more and took
     * its share from branch and bound, so auto leaves it off until a case is found where it pays */
    (void)net;
    (void)unstable;
    return 0;
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

/* The decider of a decided case into the report (its reason stays the report's). */
static void lg_verify_take_decider(lg_outcome *dst, const lg_outcome *src)
{
    dst->stage = src->stage;
    dst->by = src->by;
    dst->confirm = src->confirm;
    memcpy(dst->theory, src->theory, sizeof dst->theory);
}

void lg_verify_report_method(lg_verify_report *r) { lg_outcome_method(&r->how, r->method, sizeof r->method); }

lg_status lg_verify_run_in(const lg_net *net, const lg_prop *prop, const lg_verify_opts *o, const lg_runctx *run,
                           lg_verify_report *r)
{
    double t0 = lg_now();
    memset(r, 0, sizeof *r);
    r->violated_case = -1;
    r->bound_method = o->tighten == LG_TIGHTEN_LP ? "symbolic+lp" : "symbolic";
    const lg_route *route = lg_verify_route(net, o);
    r->bab_mode = lg_bab_mode_name(route->split(o->bab.mode, net ? net->n_in : 0));
    lg_status st = route->check(net);
    if (st != LG_OK) return st;
    if (!route->backend) { /* DESIGN.md §3 "Smooth activations" */
        const lg_solver_ops *row = o->solver.mode == LG_SOLVER_ONE ? o->solver.row : NULL;
        if (((row && (row->caps & LG_SOLVER_PWL_ONLY)) || o->backend_only) && lg_net_first_tnode(net) >= 0) {
            if (o->tighten == LG_TIGHTEN_LP)
                return lg_fail(LG_ERR_UNSUPPORTED, "--tighten lp takes piecewise-linear (relu/identity) networks only");
            /* the back-ends take Transformer nodes by their relaxation (lg_stage_tnode_backend) */
        } else if ((row && (row->caps & LG_SOLVER_PWL_ONLY)) || o->backend_only)
            return lg_fail(LG_ERR_UNSUPPORTED,
                           "--solver %s encodes piecewise-linear (relu/identity) networks only; this network has "
                           "smooth activations: verify it directly with --solver auto or none, or substitute ReLU "
                           "with `lgelu relu` and verify that with --ref",
                           lg_solver_pick_name(&o->solver));
        if (o->tighten == LG_TIGHTEN_LP)
            return lg_fail(LG_ERR_UNSUPPORTED, "--tighten lp takes piecewise-linear (relu/identity) networks only");
    }
    int no = lg_net_n_out(net);
    if (prop->n_in != net->n_in || prop->n_out != no)
        return lg_fail(LG_ERR_ARG, "property has %d inputs and %d outputs but the network has %d and %d", prop->n_in,
                       prop->n_out, net->n_in, no);
    lg_net low; /* max-pool nodes: the exact ReLU form for what the bounds leave open (else zeroed) */
    if ((st = lg_net_lower_nodes(&low, net, 0)) != LG_OK) return st;
    double *tol_x = NULL, *tol_y = NULL; /* --witness-tol: the first candidate within the tolerance (case tol_c) */
    int tol_c = -1;
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
        r->how.stage = LG_STAGE_CLEAN_INPUT;
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
        lg_case k = {.route = route, .net = net, .prop = prop, .c = c, .o = o, .run = run, .t0 = t0, .r = r,
                     .co = &co, .x = x, .low = low.n_layers ? &low : NULL, .count = 1};
        if ((st = lg_verify_case(&k)) != LG_OK) goto fail;
        if (co.v == LG_VERDICT_VIOLATED) {
            /* the one witness gate: double forward pass and exact rational evaluation */
            if (o->witness_tol > 0 && !tol_x && !(tol_x = malloc((size_t)net->n_in * sizeof *tol_x))) {
                st = lg_fail(LG_ERR_NOMEM, "verify: out of memory in the witness check");
                goto fail;
            }
            if (tol_x && tol_c < 0) memcpy(tol_x, x, (size_t)net->n_in * sizeof *tol_x); /* before the gate clips it */
            r->y = malloc((size_t)no * sizeof *r->y);
            int ok = r->y ? lg_witness_accept(net, prop, c, x, r->y) : -1;
            if (ok < 0) {
                st = lg_fail(LG_ERR_NOMEM, "verify: out of memory in the witness check");
                goto fail;
            }
            if (ok) {
                r->verdict = LG_VERDICT_VIOLATED;
                r->violated_case = c;
                lg_verify_take_decider(&r->how, &co.how);
                r->x = x;
                x = NULL;
                goto done;
            }
            free(r->y);
            r->y = NULL;
            lg_case_unknown(&co, LG_REASON_WITNESS, 0,
                            "counterexample fails the exact re-check (a near tie, or an input box that holds no double)");
            if (tol_x && tol_c < 0) { /* the opt-in tolerance: its own kind, never `violated` */
                if (!tol_y && !(tol_y = malloc((size_t)no * sizeof *tol_y))) {
                    st = lg_fail(LG_ERR_NOMEM, "verify: out of memory in the witness check");
                    goto fail;
                }
                int tk = lg_witness_within_tol(net, prop, c, o->witness_tol, tol_x, tol_y);
                if (tk < 0) {
                    st = lg_fail(LG_ERR_NOMEM, "verify: out of memory in the witness check");
                    goto fail;
                }
                if (tk) tol_c = c;
            }
        }
        if (co.v == LG_VERDICT_ROBUST) {
            r->n_cases_robust++;
            /* the report names the strongest stage: bounds only if every case was */
            if (r->how.stage == LG_STAGE_NONE || co.how.stage != LG_STAGE_BOUNDS) lg_verify_take_decider(&r->how, &co.how);
        } else if (n_unknown++ == 0) {
            first_unknown = co;
        }
    }
    if (n_unknown == 0) {
        r->verdict = LG_VERDICT_ROBUST;
        if (prop->n_cases == 0) r->how.stage = LG_STAGE_EMPTY_BOX;
    } else {
        r->verdict = LG_VERDICT_UNKNOWN;
        r->how = first_unknown.how;
        if (tol_c >= 0) { /* no exact witness; one within the tolerance: reported as its own kind */
            lg_outcome_unknown(&r->how, LG_REASON_TOLERANCE, 0,
                               "violated within tolerance %g (VNN-COMP's counterexample check), not an exact "
                               "counterexample: it fails the exact witness gate",
                               o->witness_tol);
            r->violated_case = tol_c;
            r->x = tol_x;
            r->y = tol_y;
            tol_x = tol_y = NULL;
        }
    }
done:
    free(tol_x);
    free(tol_y);
    free(x);
    lg_net_free(&low);
    r->seconds = lg_now() - t0;
    lg_verify_report_method(r);
    return LG_OK;
fail:
    free(tol_x);
    free(tol_y);
    free(x);
    lg_net_free(&low);
    lg_verify_report_free(r);
    return st;
}
