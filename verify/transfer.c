/* transfer.c — robust/violated for the smooth network via its ReLU
 * substitution and the certified deviation (transfer.h, DESIGN.md §3). */
#include "verify/transfer.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "anneal/deviation.h"
#include "core/ball.h"
#include "core/exact.h"
#include "core/op.h"
#include "verify/attack.h"
#include "verify/opstage.h"
#include "verify/devnet.h"
#include "verify/devgrad_net.h"
#include "verify/devnet_refine.h"
#include "verify/devnet_joint.h"
#include "verify/recheck.h"

/* Deep copy of prop with case c's constraints lowered by Σ_j |coef_j|·e_j,
 * e = E + c·n_out (per-output deviation bounds of case c). */
static lg_status lg_transfer_enlarge(const lg_prop *src, const double *E, lg_prop *dst)
{
    memset(dst, 0, sizeof *dst);
    dst->n_in = src->n_in;
    dst->n_out = src->n_out;
    dst->cases = calloc((size_t)src->n_cases, sizeof *dst->cases);
    if (!dst->cases) goto oom;
    dst->n_cases = src->n_cases;
    size_t ni = (size_t)src->n_in, no = (size_t)src->n_out;
    for (int c = 0; c < src->n_cases; c++) {
        const lg_prop_case *S = &src->cases[c];
        lg_prop_case *D = &dst->cases[c];
        const double *e = E + (size_t)c * no;
        D->lo = malloc(ni * sizeof *D->lo);
        D->hi = malloc(ni * sizeof *D->hi);
        D->terms = calloc((size_t)S->n_terms ? (size_t)S->n_terms : 1, sizeof *D->terms);
        if (!D->lo || !D->hi || !D->terms) goto oom;
        memcpy(D->lo, S->lo, ni * sizeof *D->lo);
        memcpy(D->hi, S->hi, ni * sizeof *D->hi);
        D->n_terms = S->n_terms;
        for (int t = 0; t < S->n_terms; t++) {
            const lg_term *ST = &S->terms[t];
            lg_term *DT = &D->terms[t];
            DT->cons = calloc((size_t)ST->n_cons ? (size_t)ST->n_cons : 1, sizeof *DT->cons);
            if (!DT->cons) goto oom;
            DT->n_cons = ST->n_cons;
            for (int k = 0; k < ST->n_cons; k++) {
                const lg_lincon *SL = &ST->cons[k];
                lg_lincon *DL = &DT->cons[k];
                if (!(DL->coef = malloc(no * sizeof *DL->coef))) goto oom;
                memcpy(DL->coef, SL->coef, no * sizeof *DL->coef);
                double shift = 0;
                for (size_t j = 0; j < no; j++) shift += fabs(SL->coef[j]) * e[j];
                /* round the shift up (n_out products and sums err by < 1e-12 relative) and the
                 * difference down, so the enlarged region only grows */
                DL->d = lg_add_dir(SL->d, -(shift * (1.0 + 1e-12) + 1e-300), -1);
            }
        }
    }
    return LG_OK;
oom:
    lg_prop_free(dst);
    return lg_fail(LG_ERR_NOMEM, "transfer: out of memory");
}

static lg_status lg_transfer_box_e(lg_dev *dev, lg_devnet *v, const lg_net *relu, lg_bounds *b, const double *lo,
                                   const double *hi, double *e);

/* The deviation worth refining to on case C (devnet.h want): half the
 * smallest slack of C's terms at its box's midpoint m for the ReLU net, a
 * term's slack being its most violated constraint's (coef·y(m) + d) /
 * Σ_j |coef_j|: a robust verdict can transfer only when the deviation is
 * below it (the enlarged term needs coef·y + d > Σ|coef_j|·e_j everywhere).
 * A term already met at m, or no terms: +∞ (no refinement). A heuristic
 * threshold only: every bound stays sound whatever it is. */
static lg_status lg_transfer_want(const lg_net *relu, const lg_prop_case *C, double *want)
{
    const int ni = relu->n_in, no = lg_net_n_out(relu);
    double *x = malloc(((size_t)ni + (size_t)no + 2 * (size_t)lg_net_max_width(relu)) * sizeof *x);
    if (!x) return lg_fail(LG_ERR_NOMEM, "transfer: out of memory");
    double *y = x + ni, *scr = y + no, w = INFINITY;
    for (int i = 0; i < ni; i++) x[i] = C->lo[i] + 0.5 * (C->hi[i] - C->lo[i]);
    lg_net_forward(relu, x, y, scr);
    for (int t = 0; t < C->n_terms; t++) {
        double slack = -INFINITY; /* the term holds at m iff every constraint is ≤ 0 */
        for (int k = 0; k < C->terms[t].n_cons; k++) {
            const lg_lincon *L = &C->terms[t].cons[k];
            double v = L->d, a = 0.0;
            for (int j = 0; j < no; j++) {
                v += L->coef[j] * y[j];
                a += fabs(L->coef[j]);
            }
            if (a > 0 && v / a > slack) slack = v / a;
        }
        if (!(slack > 0)) { /* a counterexample of the ReLU net at m: refining cannot help */
            w = INFINITY;
            break;
        }
        if (0.5 * slack < w) w = 0.5 * slack;
    }
    free(x);
    *want = w;
    return LG_OK;
}

/* Per-output deviation bounds E[c][n_out] for every case box of prop
 * (lg_transfer_box_e; each case refined towards lg_transfer_want). */
static lg_status lg_transfer_deviation(const lg_net *relu, const lg_net *ref, const lg_prop *prop,
                                       const lg_runctx *run, double *E, double *delta)
{
    lg_dev d;
    lg_bounds b = {0};
    lg_devnet v = {0};
    lg_net lrel = {0}, lref = {0}; /* max-pool nodes: the deviation bound runs on their exact ReLU form */
    lg_status st = LG_OK;
    if ((st = lg_net_lower_nodes(&lrel, relu, 1)) != LG_OK || (st = lg_net_lower_nodes(&lref, ref, 1)) != LG_OK) {
        lg_net_free(&lrel);
        return st;
    }
    if (lrel.n_layers) relu = &lrel;
    if (lref.n_layers) ref = &lref;
    if ((st = lg_dev_init(&d, relu, ref)) != LG_OK) {
        lg_net_free(&lrel);
        lg_net_free(&lref);
        return st;
    }
    if ((st = lg_devnet_init(&v, relu, ref)) != LG_OK || (st = lg_bounds_init(&b, relu)) != LG_OK) goto done;
    b.run = run;
    v.refine_share = 0.25; /* the verification needs the rest */
    *delta = 0;
    for (int c = 0; c < prop->n_cases; c++) {
        const lg_prop_case *C = &prop->cases[c];
        double *e = E + (size_t)c * (size_t)prop->n_out;
        if ((st = lg_transfer_want(relu, C, &v.want)) != LG_OK) goto done;
        if ((st = lg_transfer_box_e(&d, &v, relu, &b, C->lo, C->hi, e)) != LG_OK) goto done;
        for (int j = 0; j < prop->n_out; j++) {
            if (isnan(e[j])) {
                st = lg_fail(LG_ERR_NUMERIC, "transfer: deviation bound of case %d is not a number", c);
                goto done;
            }
            if (e[j] > *delta) *delta = e[j];
        }
    }
done:
    lg_bounds_free(&b);
    lg_devnet_free(&v);
    lg_dev_free(&d);
    lg_net_free(&lrel);
    lg_net_free(&lref);
    return st;
}

/* The run left prop undecided for ref: the attack (attack.h) on ref itself,
 * case by case while time is left; a hit that passes the one witness gate
 * on ref makes r violated (stage attack). A ReLU net that misses the 2Δ
 * margin at some x says little about ref's own counterexamples, which lie
 * where ref's margin is ≤ 0: this looks for them directly. */
static lg_status lg_transfer_attack_ref(const lg_net *ref, const lg_prop *prop, const lg_verify_opts *o,
                                        const lg_runctx *run, lg_verify_report *r)
{
    if (!o->attack) return LG_OK;
    double *x = malloc((size_t)prop->n_in * sizeof *x), *y = malloc((size_t)prop->n_out * sizeof *y);
    lg_status st = x && y ? LG_OK : lg_fail(LG_ERR_NOMEM, "transfer: out of memory");
    for (int c = 0; st == LG_OK && c < prop->n_cases && !lg_runctx_expired(run); c++) {
        const lg_prop_case *C = &prop->cases[c];
        int found = 0;
        if ((st = lg_attack_run(ref, C->lo, C->hi, C->n_terms, C->terms, &o->atk, run, x, &found)) != LG_OK || !found)
            continue;
        int ok = lg_witness_accept(ref, prop, c, x, y);
        if (ok < 0) st = lg_fail(LG_ERR_NOMEM, "transfer: out of memory");
        if (ok != 1) continue;
        free(r->x);
        free(r->y);
        r->x = x, r->y = y, x = y = NULL;
        r->n_in = prop->n_in;
        r->n_out = prop->n_out;
        r->verdict = LG_VERDICT_VIOLATED;
        r->violated_case = c;
        lg_outcome_decided(&r->how, LG_STAGE_ATTACK);
        lg_verify_report_method(r);
        break;
    }
    free(x);
    free(y);
    return st;
}

lg_status lg_verify_transfer(const lg_net *relu, const lg_net *ref, const lg_prop *prop, const lg_verify_opts *o,
                             lg_verify_report *r, double *delta)
{
    memset(r, 0, sizeof *r);
    /* one deadline for the whole command: the deviation bound's time counts against --timeout */
    lg_runctx run = lg_runctx_start(o->timeout_s, o->seed, o->verbose, o->memory_mb);
    lg_prop big = {0};
    double *E = malloc((size_t)prop->n_cases * (size_t)prop->n_out * sizeof *E);
    double *yg = NULL;
    if (!E) return lg_fail(LG_ERR_NOMEM, "transfer: out of memory");
    lg_status st = lg_transfer_deviation(relu, ref, prop, &run, E, delta);
    if (st == LG_ERR_TIMEOUT) { /* no deviation bound in time: the driver, under the expired run,
                                 * answers timeout for every case (its report as for any run) */
        st = lg_verify_run_in(relu, prop, o, &run, r);
        goto done;
    }
    if (st != LG_OK) goto done;
    if (prop->center) { /* the smooth net already misclassifies the clean input: violated for it */
        r->x = malloc((size_t)prop->n_in * sizeof *r->x);
        r->y = malloc((size_t)prop->n_out * sizeof *r->y);
        int mis = r->x && r->y ? lg_verify_misclassified(ref, prop, r->x, r->y) : -1;
        if (mis < 0) {
            st = lg_fail(LG_ERR_NOMEM, "transfer: out of memory");
            goto done;
        }
        if (mis) {
            r->verdict = LG_VERDICT_VIOLATED;
            r->violated_case = 0;
            r->misclassified = 1;
            r->n_in = prop->n_in;
            r->n_out = prop->n_out;
            r->bound_method = "symbolic";
            r->bab_mode = "none";
            r->how.stage = LG_STAGE_CLEAN_INPUT;
            lg_verify_report_method(r);
            goto done;
        }
        free(r->x);
        free(r->y);
        r->x = r->y = NULL;
    }
    if ((st = lg_transfer_enlarge(prop, E, &big)) != LG_OK) goto done;
    if ((st = lg_verify_run_in(relu, &big, o, &run, r)) != LG_OK) goto done;
    if (r->verdict == LG_VERDICT_UNKNOWN) st = lg_transfer_attack_ref(ref, prop, o, &run, r);
    if (r->verdict != LG_VERDICT_VIOLATED) goto done;
    /* the ReLU net misses the enlarged margin at x: does x fool ref itself? The one witness
     * gate decides (inward box, certified sign on ref: DESIGN.md §3) */
    yg = malloc((size_t)prop->n_out * sizeof *yg);
    if (!yg) {
        st = lg_fail(LG_ERR_NOMEM, "transfer: out of memory");
        goto done;
    }
    int c = r->violated_case;
    int ok = c >= 0 ? lg_witness_accept(ref, prop, c, r->x, yg) : 0;
    if (ok < 0) {
        st = lg_fail(LG_ERR_NOMEM, "transfer: out of memory");
        goto done;
    }
    if (ok) {
        memcpy(r->y, yg, (size_t)prop->n_out * sizeof *yg);
        goto done;
    }
    r->verdict = LG_VERDICT_UNKNOWN;
    lg_outcome_unknown(&r->how, LG_REASON_TRANSFER, 0,
                       "the ReLU net misses the 2-delta margin but the reference net is not certified fooled at that input");
    free(r->x);
    free(r->y);
    r->x = r->y = NULL;
    r->violated_case = -1;
    st = lg_transfer_attack_ref(ref, prop, o, &run, r);
done:
    free(yg);
    free(E);
    lg_prop_free(&big);
    return st;
}

/* A point box (lo = hi, a ball of radius 0) of a net with Transformer
 * nodes: e[j] is lowered to max(|ŷ_relu,j − ŷ_ref,j|, the widest gap of the
 * two nets' MPFR enclosures of y_j at x) — the computed deviation (a
 * graph's single and batched forward passes run the same operations) and
 * the exact one, which is what a point's bound must cover. Other nets and
 * boxes: e unchanged. */
static lg_status lg_transfer_point(lg_dev *dev, const double *lo, const double *hi, double *e)
{
    const lg_net *relu = dev->relu_net, *ref = dev->ref;
    if (lg_net_first_tnode(relu) < 0) return LG_OK;
    for (int i = 0; i < relu->n_in; i++)
        if (lo[i] != hi[i]) return LG_OK;
    const size_t no = (size_t)lg_net_n_out(relu);
    double *y = malloc(6 * no * sizeof *y);
    if (!y) return lg_fail(LG_ERR_NOMEM, "transfer: out of memory");
    double *yr = y + no, *al = yr + no, *ah = al + no, *bl = ah + no, *bh = bl + no;
    lg_status st = lg_net_forward_batch(ref, lo, y, 1);
    if (st == LG_OK) st = lg_net_forward_batch(relu, lo, yr, 1);
    if (st == LG_OK && lg_enclose_outputs(relu, lo, al, ah) == 0 && lg_enclose_outputs(ref, lo, bl, bh) == 0)
        for (size_t j = 0; j < no; j++) {
            double w = fmax(fmax(ah[j] - bl[j], bh[j] - al[j]), fabs(yr[j] - y[j])) * (1.0 + 4.0 * DBL_EPSILON);
            if (w < e[j]) e[j] = w; /* NaN: e kept */
        }
    free(y);
    return st;
}

/* The propagation with relu's symbolic bounds in b (lg_dev_bound_box_pre) and the
 * layernorms' centred bounds b keeps (opstage.h, read by the segment rule of
 * verify/devtf.h; a layernorm without them passes NULL). */
static lg_status lg_transfer_pre(lg_dev *dev, const lg_net *relu, const lg_bounds *b, const double *lo,
                                 const double *hi, double *delta, double *e)
{
    const int nl = relu->n_layers;
    double **c = calloc(2 * (size_t)nl, sizeof *c);
    if (!c) return lg_fail(LG_ERR_NOMEM, "transfer: out of memory");
    for (int k = 0; k < nl && b->dlo; k++) {
        const lg_vopdef *vop = lg_layer_vop(&relu->layers[k]);
        if (vop && vop->diff_centred) vop->diff_centred(b, relu, k, &c[k], &c[nl + k]);
    }
    lg_dev_ext x = {b->lo, b->hi, NULL, NULL, 0, c, c + nl};
    lg_status st = lg_dev_bound_box_pair(dev, lo, hi, &x, delta, e, NULL);
    free(c);
    return st;
}

/* Over the caller's threshold (v->want) with v's bounds of this box: e lowered to the joint
 * relaxation's bound where it is smaller (devnet_joint.h; the cheap bounds first). */
static lg_status lg_transfer_joint(lg_devnet *v, const lg_runctx *run, double *e)
{
    const int no = lg_net_n_out(v->relu);
    double mx = 0.0;
    for (int j = 0; j < no; j++)
        if (!(e[j] <= mx)) mx = e[j];
    if (!v->valid || !(mx > v->want)) return LG_OK;
    double *ej = malloc((size_t)no * sizeof *ej);
    if (!ej) return lg_fail(LG_ERR_NOMEM, "transfer: out of memory");
    lg_status st = lg_devjoint_bound(v, run, ej);
    if (st == LG_OK)
        for (int j = 0; j < no; j++) e[j] = fmin(e[j], ej[j]);
    free(ej);
    return st;
}

/* The interval-gradient route (devgrad_net.h) where the bounds so far miss the caller's
 * threshold (v->want), or on every box of a pair with Transformer nodes when there is no
 * threshold (`bound`): e lowered where it is smaller. 80 % of the time left at most; past it, or
 * for a pair the route does not take, e stands. With a positive threshold it is skipped where its
 * cheap estimate over relu's own bounds in b (no claim; its ladder of symbols aims at four times
 * the threshold, in 40 % of the time left at most) exceeds four times the threshold (a
 * threshold of 0 asks for the tightest bound: it always runs). Without a threshold, and with one, it is
 * also skipped where that estimate is not below the bound it would improve (the route's own bound
 * encloses the gradient over a wider region and adds the rounding: in practice it is larger). */
static lg_status lg_transfer_grad(lg_devnet *v, const lg_bounds *b, const double *lo, const double *hi,
                                  const lg_runctx *run, double *e)
{
    const int no = lg_net_n_out(v->relu);
    double mx = 0.0;
    for (int j = 0; j < no; j++)
        if (!(e[j] <= mx)) mx = e[j];
    int go = v->want < INFINITY ? mx > v->want : lg_net_first_tnode(v->relu) >= 0 && mx > 0.0;
    if (!go || v->grad_off) return LG_OK;
    lg_status st;
    if (!v->grad) {
        if (!(v->grad = calloc(1, sizeof *v->grad))) return lg_fail(LG_ERR_NOMEM, "transfer: out of memory");
        if ((st = lg_devgrad_net_init(v->grad, v->relu, v->ref)) != LG_OK) {
            free(v->grad);
            v->grad = NULL;
            if (st != LG_ERR_UNSUPPORTED) return st;
            v->grad_off = 1; /* max-pool nodes: the other bounds stand */
            return LG_OK;
        }
    }
    if (v->want > 0.0) { /* skip it where the estimate over relu's own bounds is far above */
        double est;
        lg_runctx re = run ? lg_runctx_share(run, 0.4) : lg_runctx_none();
        if ((st = lg_devgrad_net_estimate(v->grad, b, 4.0 * v->want, &re, &est)) != LG_OK)
            return st == LG_ERR_TIMEOUT && !lg_runctx_expired(run) ? LG_OK : st;
        if (!(est < mx) || (v->want < INFINITY && !(est <= 4.0 * v->want))) return LG_OK;
    }
    double *eg = malloc((size_t)no * sizeof *eg);
    if (!eg) return lg_fail(LG_ERR_NOMEM, "transfer: out of memory");
    lg_runctx rr = run ? lg_runctx_share(run, 0.8) : lg_runctx_none();
    v->grad->want = v->want;
    st = lg_devgrad_net_bound(v->grad, lo, hi, &rr, eg);
    if (st == LG_OK)
        for (int j = 0; j < no; j++) e[j] = fmin(e[j], eg[j]);
    free(eg);
    return st == LG_ERR_TIMEOUT && !lg_runctx_expired(run) ? LG_OK : st;
}

/* The output with the largest bound (NaN counts as largest). */
static size_t lg_transfer_worst(const double *e, size_t no)
{
    size_t w = 0;
    for (size_t j = 1; j < no; j++)
        if (e[j] > e[w] || (e[j] != e[j] && e[w] == e[w])) w = j;
    return w;
}

/* After a step of the cascade: v->stage becomes that step where it lowered the largest bound *m
 * (then the new largest). */
static void lg_transfer_stage(lg_devnet *v, const double *e, size_t no, double *m, int stage)
{
    const double now = e[lg_transfer_worst(e, no)];
    if (now < *m || (*m != *m && now == now)) v->stage = stage;
    *m = now;
}

/* Per-output bounds e[n_out] on one box: the smallest of the interval
 * propagation, the propagation with relu's symbolic bounds, the difference
 * network's bound and (when it proved its bounds) the propagation with both
 * nets' bounds from it (devnet.h); all sound. b's run is the deadline; b
 * holds relu's symbolic bounds afterwards. */
static lg_status lg_transfer_box_e(lg_dev *dev, lg_devnet *v, const lg_net *relu, lg_bounds *b, const double *lo,
                                   const double *hi, double *e)
{
    const size_t no = (size_t)lg_net_n_out(relu);
    double dd, *ei = v->e, *es = v->e + no, *ev = v->e + 2 * no, *ep = v->e + 3 * no;
    lg_status st = lg_dev_bound_boxes(dev, lo, hi, 1, &dd, ei, NULL);
    if (st != LG_OK) return st;
    /* the difference network's bounds on the ReLU copy are relu's symbolic bounds
     * (they hold for the computed values too), else relu's own run */
    if ((st = lg_devnet_bound(v, lo, hi, b->run, ev)) != LG_OK) return st;
    if (v->valid == 1) { /* CROWN's bounds (interval ones would be looser than relu's own run) */
        for (int k = 0; k < relu->n_layers; k++) {
            memcpy(b->lo[k], lg_devnet_pre_lo(v, 0)[k], (size_t)relu->layers[k].n_out * sizeof *b->lo[k]);
            memcpy(b->hi[k], lg_devnet_pre_hi(v, 0)[k], (size_t)relu->layers[k].n_out * sizeof *b->hi[k]);
        }
        const lg_bounds *vb = v->exact ? &v->b0 : &v->b;
        memcpy(b->xlo, vb->xlo, (size_t)relu->n_in * sizeof *b->xlo);
        memcpy(b->xhi, vb->xhi, (size_t)relu->n_in * sizeof *b->xhi);
        lg_bounds_diff_forget(b, relu); /* b's box changed (opstage.h) */
    } else if ((st = lg_bounds_symbolic(b, relu, lo, hi)) != LG_OK) {
        return st;
    }
    if ((st = lg_transfer_pre(dev, relu, b, lo, hi, &dd, es)) != LG_OK) return st;
    if (v->valid) {
        lg_dev_ext x = {lg_devnet_pre_lo(v, 0), lg_devnet_pre_hi(v, 0), lg_devnet_pre_lo(v, 1), lg_devnet_pre_hi(v, 1), 1, NULL, NULL};
        if ((st = lg_dev_bound_box_pair(dev, lo, hi, &x, &dd, ep, NULL)) != LG_OK) return st;
    } else {
        for (size_t j = 0; j < no; j++) ep[j] = INFINITY;
    }
    for (size_t j = 0; j < no; j++) e[j] = fmin(fmin(ev[j], ep[j]), fmin(ei[j], es[j]));
    const size_t w = lg_transfer_worst(e, no); /* the stage of the worst output's smallest bound */
    double m = e[w];
    v->stage = e[w] == ev[w]   ? LG_DEVNET_STAGE_DIFFNET
               : e[w] == ep[w] ? LG_DEVNET_STAGE_PAIR
                               : LG_DEVNET_STAGE_PROPAGATED;
    if ((st = lg_transfer_joint(v, b->run, e)) != LG_OK) return st;
    lg_transfer_stage(v, e, no, &m, LG_DEVNET_STAGE_JOINT);
    if ((st = lg_transfer_grad(v, b, lo, hi, b->run, e)) != LG_OK) return st;
    lg_transfer_stage(v, e, no, &m, LG_DEVNET_STAGE_GRADIENT);
    /* over the caller's threshold: α-CROWN, then branch and bound on the box (devnet_refine.h);
     * b already holds the box's own bounds */
    int split = 0;
    v->unrefined = 0.0;
    for (size_t j = 0; j < no; j++)
        if (!(e[j] <= v->unrefined)) v->unrefined = e[j];
    if (v->want < INFINITY) {
        lg_runctx rr = b->run ? lg_runctx_share(b->run, v->refine_share) : lg_runctx_none();
        if ((st = lg_devnet_refine(dev, v, lo, hi, v->want, &rr, e, &split)) != LG_OK) return st;
        lg_transfer_stage(v, e, no, &m, LG_DEVNET_STAGE_REFINED);
    }
    if (split) v->valid = 0; /* v's bounds are a leaf's, not the box's */
    if ((st = lg_transfer_point(dev, lo, hi, e)) != LG_OK) return st;
    lg_transfer_stage(v, e, no, &m, LG_DEVNET_STAGE_POINT);
    return LG_OK;
}

lg_status lg_transfer_box_delta(lg_dev *dev, lg_devnet *v, const lg_net *relu, lg_bounds *b, const double *lo,
                                const double *hi, double *delta)
{
    if (!v) { /* the propagation alone: interval and symbolic */
        double di, ds;
        lg_status st = lg_dev_bound_boxes(dev, lo, hi, 1, &di, NULL, NULL);
        if (st == LG_OK) st = lg_bounds_symbolic(b, relu, lo, hi);
        if (st == LG_OK) st = lg_transfer_pre(dev, relu, b, lo, hi, &ds, NULL);
        if (st == LG_OK) *delta = ds < di ? ds : di;
        if (st == LG_OK && lg_net_first_tnode(relu) >= 0) { /* a point: the enclosures (lg_transfer_point) */
            const int no = lg_net_n_out(relu);
            double *e = malloc((size_t)no * sizeof *e);
            if (!e) return lg_fail(LG_ERR_NOMEM, "transfer: out of memory");
            for (int j = 0; j < no; j++) e[j] = *delta;
            st = lg_transfer_point(dev, lo, hi, e);
            double mx = 0.0;
            for (int j = 0; j < no; j++) mx = e[j] > mx || e[j] != e[j] ? e[j] : mx;
            if (st == LG_OK && mx < *delta) *delta = mx;
            free(e);
        }
        return st;
    }
    double *e = v->e + 4 * (size_t)lg_net_n_out(relu);
    lg_status st = lg_transfer_box_e(dev, v, relu, b, lo, hi, e);
    if (st != LG_OK) return st;
    *delta = 0;
    for (int j = 0; j < lg_net_n_out(relu); j++)
        if (!(e[j] <= *delta)) *delta = e[j];
    return LG_OK;
}
