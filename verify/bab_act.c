/* bab_act.c — activation-splitting branch and bound for smooth networks
 * (bab_act.h). */
#include "verify/bab_act.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/act_relax.h"
#include "core/clock.h"
#include "verify/alpha.h"
#include "verify/backsub.h"
#include "verify/worklist.h"

typedef struct lg_ba_node {
    double *pre;          /* [2·size]: lo then hi of every neuron (lg_alpha_offset layout) */
    double *thr;          /* [size] split point of each split neuron */
    double *beta;         /* [m][size] split multipliers (warm start for the children) */
    double *alpha;        /* [m][size] lower-line positions α (backsub.h; NaN: area-best), warm start */
    signed char *sign;    /* [size] +1: z ≤ thr holds on the node, −1: z ≥ thr, 0: not split */
    unsigned char *open;  /* [n_terms] */
    int depth;
    double key;           /* the parent's worst open bound (−∞ at the root): best-first order */
} lg_ba_node;

typedef struct lg_ba_ctx {
    const lg_net *net;
    const lg_bounds *root;
    int n_terms, size, m;  /* m: constraints over all terms */
    const lg_term *terms;
    double *C, *d;         /* [m][n_out], [m] */
    int *term_of;          /* [m] */
    int beta_steps;        /* projected-gradient steps on β per node (0: no β) */
    double lr;
    const lg_runctx *run;
} lg_ba_ctx;

static void lg_ba_load(const lg_ba_ctx *cx, const double *pre, lg_bounds *b)
{
    memcpy(b->xlo, cx->root->xlo, (size_t)cx->net->n_in * sizeof *b->xlo);
    memcpy(b->xhi, cx->root->xhi, (size_t)cx->net->n_in * sizeof *b->xhi);
    for (int k = 0, off = 0; k < cx->net->n_layers; k++) {
        int n = cx->net->layers[k].n_out;
        memcpy(b->lo[k], pre + off, (size_t)n * sizeof *pre);
        memcpy(b->hi[k], pre + cx->size + off, (size_t)n * sizeof *pre);
        off += n;
    }
}

static void lg_ba_save(const lg_ba_ctx *cx, const lg_bounds *b, double *pre)
{
    for (int k = 0, off = 0; k < cx->net->n_layers; k++) {
        int n = cx->net->layers[k].n_out;
        memcpy(pre + off, b->lo[k], (size_t)n * sizeof *pre);
        memcpy(pre + cx->size + off, b->hi[k], (size_t)n * sizeof *pre);
        off += n;
    }
}

static lg_ba_node *lg_ba_new(const lg_ba_ctx *cx)
{
    size_t sz = (size_t)cx->size, nb = cx->beta_steps > 0 ? (size_t)cx->m * sz : 0;
    lg_ba_node *n = malloc(sizeof *n + (3 * sz + 2 * nb) * sizeof(double) + sz + (size_t)cx->n_terms + 1);
    if (!n) return NULL;
    n->pre = (double *)(n + 1);
    n->thr = n->pre + 2 * sz;
    n->beta = n->thr + sz;
    n->alpha = n->beta + nb;
    n->sign = (signed char *)(n->alpha + nb);
    n->open = (unsigned char *)(n->sign + sz);
    n->depth = 0;
    n->key = -INFINITY;
    return n;
}

/* dst (a child of src) inherits src's splits and multipliers. */
static void lg_ba_copy_splits(const lg_ba_ctx *cx, const lg_ba_node *src, lg_ba_node *dst)
{
    size_t sz = (size_t)cx->size;
    memcpy(dst->thr, src->thr, sz * sizeof *dst->thr);
    memcpy(dst->sign, src->sign, sz);
    if (cx->beta_steps > 0) {
        memcpy(dst->beta, src->beta, (size_t)cx->m * sz * sizeof *dst->beta);
        memcpy(dst->alpha, src->alpha, (size_t)cx->m * sz * sizeof *dst->alpha);
    }
}

/* Node n's region gains z_i ≤ t (sign +1) or z_i ≥ t (−1); a multiplier of
 * an earlier split of i on the other side restarts at 0. */
static void lg_ba_add_split(const lg_ba_ctx *cx, lg_ba_node *n, int i, int sign, double t)
{
    if (n->sign[i] != sign && cx->beta_steps > 0)
        for (int r = 0; r < cx->m; r++) n->beta[(size_t)r * (size_t)cx->size + (size_t)i] = 0.0;
    n->sign[i] = (signed char)sign;
    n->thr[i] = t;
}

/* Gap between neuron's lines at the middle of [lo, hi]. */
static double lg_ba_gap(const lg_layer *L, double lo, double hi)
{
    lg_act_lines al;
    lg_act_relax(L->act, L->lambda, lo, hi, NAN, NAN, &al);
    double mid = lo + 0.5 * (hi - lo), g = (al.up_s * mid + al.up_c) - (al.lo_s * mid + al.lo_c);
    return isfinite(g) ? g : INFINITY;
}

/* The split point of [lo, hi] that tightens the relaxation most: of 0 (when
 * inside), the middle and the quarter points, the one whose worse half has
 * the smaller gap. */
static double lg_ba_split_point(const lg_layer *L, double lo, double hi)
{
    double w = hi - lo, cand[4] = {lo + 0.5 * w, lo + 0.25 * w, lo + 0.75 * w, 0.0}, best = cand[0], bs = INFINITY;
    for (int i = 0; i < 4; i++) {
        double t = cand[i];
        if (!(t > lo && t < hi)) continue;
        double a = lg_ba_gap(L, lo, t), b = lg_ba_gap(L, t, hi), sc = a > b ? a : b;
        if (sc < bs) bs = sc, best = t;
    }
    return best;
}

/* Bound node b: close refuted terms; *closed = 1 when none is left or the
 * bounds are empty. Otherwise pick the split (*layer, *neuron). lam: [m][size]. */
static lg_status lg_ba_bound(const lg_ba_ctx *cx, lg_bounds *b, lg_ba_node *n, double *lam, double *lb, int *closed,
                             int *layer, int *neuron, double *worst_out)
{
    const lg_net *net = cx->net;
    *closed = 0;
    for (int k = 0; k < net->n_layers; k++)
        for (int j = 0; j < net->layers[k].n_out; j++)
            if (b->lo[k][j] > b->hi[k][j]) { /* no input reaches this node: nothing to refute */
                *closed = 1;
                return LG_OK;
            }
    lg_status st;
    if (cx->beta_steps > 0) {
        /* α,β-CROWN on the node's lines and split constraints (alpha.h): α and β from the
         * parent's optimum; then the bound of the best α, β, with its coefficients */
        const lg_bounds *bp = b;
        const signed char *sg = n->sign;
        const double *th = n->thr;
        lg_alpha_batch bt = {1, &bp, &sg, NULL, &th, 0};
        double *lb2 = lb + cx->m;
        if ((st = lg_alpha_optimize_batch(&bt, net, cx->m, cx->C, cx->d, cx->beta_steps, cx->lr, cx->run, n->alpha,
                                          n->beta, lb2, NULL)) != LG_OK ||
            (st = lg_alpha_bound_batch(&bt, net, cx->m, cx->C, cx->d, n->alpha, n->beta, lb, NULL, lam, NULL, NULL)) !=
                LG_OK)
            return st;
        for (int r = 0; r < cx->m; r++) /* both are sound bounds on the node's region */
            if (lb2[r] > lb[r]) lb[r] = lb2[r];
    } else {
        lg_backsub s;
        if ((st = lg_backsub_init(&s, b, net, cx->m)) != LG_OK) return st;
        int no = lg_net_n_out(net);
        memcpy(s.A, cx->C, (size_t)cx->m * (size_t)no * sizeof *s.A);
        memcpy(s.c, cx->d, (size_t)cx->m * sizeof *s.c);
        st = lg_backsub_lower_beta(&s, net->n_layers - 1, cx->m, NULL, NULL, lam, (size_t)cx->size, NULL, lb);
        lg_backsub_free(&s);
        if (st != LG_OK) return st;
    }
    /* a term is refuted when one of its constraints is > 0 everywhere */
    int worst_row = -1, left = 0;
    double worst = INFINITY;
    for (int t = 0, r = 0; t < cx->n_terms; t++) {
        double best = -INFINITY;
        int arg = -1;
        for (int k = 0; k < cx->terms[t].n_cons; k++, r++)
            if (lb[r] > best || arg < 0) best = lb[r], arg = r;
        if (!n->open[t]) continue;
        if (best > 0.0) {
            n->open[t] = 0;
            continue;
        }
        left++;
        if (best < worst) worst = best, worst_row = arg;
    }
    *worst_out = worst;
    if (!left) {
        *closed = 1;
        return LG_OK;
    }
    /* branching score |λ_j|·(gap of neuron j's lines at its midpoint) */
    double best_score = 0.0;
    *layer = *neuron = -1;
    const double *lr = lam + (size_t)worst_row * (size_t)cx->size;
    for (int k = 0, off = 0; k < net->n_layers; k++) {
        const lg_layer *L = &net->layers[k];
        if (lg_act_info_of(L->act)->smooth)
            for (int j = 0; j < L->n_out; j++) {
                double lo = b->lo[k][j], hi = b->hi[k][j];
                if (!(hi > lo) || lr[off + j] == 0.0) continue;
                lg_act_lines al;
                lg_act_relax(L->act, L->lambda, lo, hi, NAN, NAN, &al);
                double mid = lo + 0.5 * (hi - lo);
                double gap = (al.up_s * mid + al.up_c) - (al.lo_s * mid + al.lo_c);
                double sc = fabs(lr[off + j]) * (isfinite(gap) ? gap : 1e300);
                if (sc > best_score) best_score = sc, *layer = k, *neuron = j;
            }
        off += L->n_out;
    }
    return LG_OK;
}

lg_status lg_bab_act_run(const lg_net *net, const lg_bounds *root, int n_terms, const lg_term *terms,
                         const lg_runctx *run, long max_nodes, int beta_steps, double lr, lg_bab_act_order order,
                         lg_bab_act_out *out)
{
    memset(out, 0, sizeof *out);
    lg_status st = lg_bounds_check_direct(net);
    if (st != LG_OK) return st;
    lg_ba_ctx cx = {net, root, n_terms, lg_alpha_size(net), 0, terms, NULL, NULL, NULL, beta_steps, lr, run};
    for (int t = 0; t < n_terms; t++) cx.m += terms[t].n_cons;
    if (cx.m == 0 || n_terms == 0) return LG_OK; /* an empty conjunction holds: nothing to prove */
    if ((size_t)cx.m * (size_t)cx.size > LG_BAB_ACT_BETA_MAX) cx.beta_steps = 0; /* per-node β too large */
    int no = lg_net_n_out(net);
    long next_id = 0;
    size_t node_bytes = sizeof(lg_ba_node) +
                        (3 + (cx.beta_steps > 0 ? 2 * (size_t)cx.m : 0)) * (size_t)cx.size * sizeof(double) +
                        (size_t)cx.size + (size_t)n_terms + 1;
    lg_worklist wl;
    lg_worklist_init(&wl);
    /* open nodes kept in best-first order at most: LG_BAB_ACT_QUEUE_MB, or half the memory cap */
    double qmb = LG_BAB_ACT_QUEUE_MB;
    if (run && run->memory_mb > 0 && run->memory_mb / 2 < qmb) qmb = run->memory_mb / 2;
    size_t max_queue = (size_t)(qmb * 1048576.0 / (double)node_bytes);
    if (max_queue < 16) max_queue = 16;
    cx.C = malloc((size_t)cx.m * (size_t)no * sizeof *cx.C);
    cx.d = malloc((size_t)cx.m * sizeof *cx.d);
    double *lam = malloc((size_t)cx.m * (size_t)cx.size * sizeof *lam);
    double *lb = malloc(2 * (size_t)cx.m * sizeof *lb);
    lg_bounds b;
    memset(&b, 0, sizeof b);
    if (!cx.C || !cx.d || !lam || !lb ||
        (st = lg_bounds_init(&b, net)) != LG_OK) {
        if (st == LG_OK) st = lg_fail(LG_ERR_NOMEM, "bab: out of memory");
        goto done;
    }
    b.run = run; /* every node's bounds stop at the deadline (LG_ERR_TIMEOUT, passed up) */
    for (int t = 0, r = 0; t < n_terms; t++)
        for (int k = 0; k < terms[t].n_cons; k++, r++) {
            memcpy(cx.C + (size_t)r * (size_t)no, terms[t].cons[k].coef, (size_t)no * sizeof *cx.C);
            cx.d[r] = terms[t].cons[k].d;
        }
    lg_ba_node *r0 = lg_ba_new(&cx);
    if (!r0) {
        st = lg_fail(LG_ERR_NOMEM, "bab: out of memory");
        goto done;
    }
    lg_ba_save(&cx, root, r0->pre);
    memset(r0->open, 1, (size_t)n_terms);
    memset(r0->sign, 0, (size_t)cx.size);
    memset(r0->thr, 0, (size_t)cx.size * sizeof *r0->thr);
    if (cx.beta_steps > 0) {
        memset(r0->beta, 0, (size_t)cx.m * (size_t)cx.size * sizeof *r0->beta);
        for (size_t i = 0; i < (size_t)cx.m * (size_t)cx.size; i++) r0->alpha[i] = NAN; /* area-best */
    }
    if ((st = lg_worklist_push(&wl, -INFINITY, next_id++, r0)) != LG_OK) {
        free(r0);
        goto done;
    }
    int gave_up = 0;
    double t_print = lg_now();
    while (lg_worklist_size(&wl) > 0) {
        long top = (long)lg_worklist_size(&wl);
        if (lg_runctx_expired(run) || (max_nodes > 0 && out->nodes >= max_nodes)) {
            gave_up = 1;
            break;
        }
        if (run && run->memory_mb > 0 && (double)(top + 2) * (double)node_bytes > run->memory_mb * 1048576.0) {
            out->out_of_memory = 1;
            gave_up = 1;
            break;
        }
        lg_ba_node *n = lg_worklist_pop(&wl);
        top--;
        lg_ba_load(&cx, n->pre, &b);
        out->nodes++;
        if (n->depth > out->max_depth) out->max_depth = n->depth;
        int closed, k, j;
        double worst = INFINITY;
        if ((st = lg_ba_bound(&cx, &b, n, lam, lb, &closed, &k, &j, &worst)) != LG_OK) {
            free(n);
            goto done;
        }
        if (run && run->verbose && (out->nodes == 1 || lg_now() - t_print >= 1.0)) {
            t_print = lg_now();
            fprintf(stderr, "bab-act: %ld nodes, %ld open, depth %d, this node's worst open bound %.4g\n", out->nodes,
                    top, n->depth, closed ? 0.0 : worst);
        }
        if (closed) {
            free(n);
            continue;
        }
        if (k < 0) { /* nothing left to split: this node cannot be refuted by splitting */
            free(n);
            gave_up = 1;
            break;
        }
        double lo = b.lo[k][j], hi = b.hi[k][j], w = hi - lo;
        double t = lg_ba_split_point(&net->layers[k], lo, hi);
        if (!(t > lo && t < hi)) t = lo + 0.5 * w;
        if (!(t > lo && t < hi)) { /* an interval of one or two doubles: cannot split */
            free(n);
            gave_up = 1;
            break;
        }
        /* the parent's bounds hold on each half; the later layers are
         * re-bounded from the narrowed interval (only ever tightened) */
        lg_ba_node *c = lg_ba_new(&cx);
        if (!c) {
            free(n);
            st = lg_fail(LG_ERR_NOMEM, "bab: out of memory");
            goto done;
        }
        memcpy(c->open, n->open, (size_t)n_terms);
        lg_ba_copy_splits(&cx, n, c);
        c->depth = n->depth + 1;
        /* best first: the parent's worst open bound; depth first (or past the queue cap): the
         * newest node first, the z ≥ t side before the z ≤ t side */
        int dfs = order == LG_BAB_ACT_DEPTH || lg_worklist_size(&wl) >= max_queue;
        double key = dfs ? -INFINITY : worst;
        int si = lg_alpha_offset(net, k) + j;
        lg_ba_add_split(&cx, c, si, +1, t); /* c: z ≤ t */
        lg_ba_add_split(&cx, n, si, -1, t); /* n: z ≥ t */
        for (int side = 0; side < 2; side++) {
            lg_ba_node *dst = side ? n : c;
            lg_ba_load(&cx, n->pre, &b);
            if (side) b.lo[k][j] = t;
            else b.hi[k][j] = t;
            if (k + 1 < net->n_layers && (st = lg_bounds_symbolic_unstable_from(&b, net, k + 1)) != LG_OK) {
                if (!side) free(c); /* the second side's c is in the list already */
                free(n);
                goto done;
            }
            if (side) { /* n's own storage is reused for the second child */
                lg_ba_save(&cx, &b, n->pre);
                n->depth = c->depth;
            } else {
                lg_ba_save(&cx, &b, c->pre);
            }
            dst->key = key;
            /* depth first: ids count down (the newest smallest), behind every best-first key */
            long id = dfs ? -(next_id++) : next_id++;
            if ((st = lg_worklist_push(&wl, dfs ? -INFINITY : key, id, dst)) != LG_OK) {
                if (!side) free(c);
                free(n);
                goto done;
            }
        }
    }
    out->proved = !gave_up && lg_worklist_size(&wl) == 0 && st == LG_OK;
done:
    for (void *q; (q = lg_worklist_pop(&wl)) != NULL;) free(q);
    lg_worklist_free(&wl);
    free(cx.C);
    free(cx.d);
    free(lam);
    free(lb);
    lg_bounds_free(&b);
    return st;
}

const char *lg_bab_act_order_name(lg_bab_act_order o) { return o == LG_BAB_ACT_DEPTH ? "depth" : "best"; }

lg_status lg_bab_act_order_parse(const char *s, lg_bab_act_order *o)
{
    if (s && strcmp(s, "best") == 0) *o = LG_BAB_ACT_BEST;
    else if (s && strcmp(s, "depth") == 0) *o = LG_BAB_ACT_DEPTH;
    else return lg_fail(LG_ERR_ARG, "bab: expected best or depth, got '%s'", s ? s : "(null)");
    return LG_OK;
}
