/* bab_tnode.c — ReLU branch and bound on nets with Transformer nodes
 * (bab_tnode.h). */
#include "verify/bab_tnode.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "verify/alpha.h"
#include "verify/alpha_tnode.h"
#include "core/op.h"
#include "verify/backsub.h"

typedef struct lg_btn {
    int k, j;
    double score;
    int lam;     /* 1: some row's coefficient on the neuron is nonzero */
} lg_btn;

/* One open domain: its splits' bounds (every layer's, flat) and its worst
 * term's bound. */
typedef struct lg_btd {
    double *b;   /* [2·tot + n_diff]: lo then hi of every layer, layer by layer, then the
                    difference bounds (lg_bounds_diff_save; owned) */
    double key;  /* min over the terms of the best row's lower bound */
    int depth;
} lg_btd;

typedef struct lg_btc {
    const lg_net *net;
    int n_terms;
    const lg_term *terms;
    lg_bounds w;           /* the working bounds: the root's with the current domain's splits */
    size_t tot;            /* Σ layer widths */
    int m;                 /* constraint rows */
    double *C, *d, *lb;    /* [m][n_out], [m], [m] */
    lg_btn *ord;           /* [nu] the split order */
    int nu;
    lg_btd *q;             /* [nq] the open domains (unordered; the lowest key is taken first) */
    long nq, cap;
    double t_print;        /* next progress line (run->verbose ≥ 1) */
    int mutant;            /* tests only: 1 drops the z ≥ 0 child of every split, 2 the z ≤ 0 one (unsound) */
    const lg_runctx *run;
    lg_bab_out *out;
    int stop;              /* 1 timeout, 2 a domain that could not be closed */
    lg_status st;
} lg_btc;

static int lg_btn_relu(const lg_layer *L)
{
    return L->act == LG_ACT_RELU && !lg_op_is(L->lin.kind, LG_OPF_NODE);
}

int lg_bab_tnode_has_unstable(const lg_net *net, const lg_bounds *root)
{
    for (int k = 0; root && k < net->n_layers; k++)
        if (lg_btn_relu(&net->layers[k]))
            for (int j = 0; j < net->layers[k].n_out; j++)
                if (root->lo[k][j] < 0.0 && root->hi[k][j] > 0.0) return 1;
    return 0;
}

static int lg_btn_cmp(const void *a, const void *b)
{
    const lg_btn *p = a, *q = b;
    if (p->lam != q->lam) return p->lam ? -1 : 1;
    if (!p->lam && p->k != q->k) return p->k < q->k ? -1 : 1;
    if (p->score != q->score) return p->score > q->score ? -1 : 1;
    return p->k != q->k ? (p->k < q->k ? -1 : 1) : (p->j < q->j ? -1 : p->j > q->j);
}

/* Copy the working bounds to v [2·tot + n_diff] (out = 1) or back (out = 0). */
static void lg_btc_flat(lg_btc *c, double *v, int out)
{
    if (out)
        lg_bounds_diff_save(&c->w, v + 2 * c->tot);
    else
        lg_bounds_diff_load(&c->w, v + 2 * c->tot);
    for (int k = 0; k < c->net->n_layers; k++) {
        size_t n = (size_t)c->w.width[k];
        if (out) {
            memcpy(v, c->w.lo[k], n * sizeof *v);
            memcpy(v + c->tot, c->w.hi[k], n * sizeof *v);
        } else {
            memcpy(c->w.lo[k], v, n * sizeof *v);
            memcpy(c->w.hi[k], v + c->tot, n * sizeof *v);
        }
        v += n;
    }
}

/* min over the terms of the best row's bound in c->lb (> 0: every term refuted). */
static double lg_btc_key(const lg_btc *c)
{
    double key = INFINITY;
    for (int t = 0, r = 0; t < c->n_terms; t++) {
        double best = -INFINITY;
        for (int q = 0; q < c->terms[t].n_cons; q++, r++)
            if (c->lb[r] > best) best = c->lb[r];
        if (best < key) key = best;
    }
    return key;
}

/* The bound time since t0 counted; 1 when st is LG_OK, else 0 with the
 * search stopped (a timeout) or its status set (any other error). */
static int lg_btc_took(lg_btc *c, lg_status st, double t0)
{
    c->out->t_bounds += lg_now() - t0;
    if (st == LG_ERR_TIMEOUT) c->stop = 1;
    else if (st != LG_OK) c->st = st;
    return st == LG_OK;
}

/* 1 when every term has a row with a lower bound > 0 on the working bounds:
 * the back-substitution bound, then (if that leaves a term open) the
 * products' α and ReLU slopes searched on the domain (alpha_tnode.h). */
static int lg_btc_closed(lg_btc *c)
{
    double t0 = lg_now();
    if (!lg_btc_took(c, lg_bounds_objective_lower(&c->w, c->net, c->m, c->C, c->d, c->lb), t0)) return 0;
    if (!(lg_btc_key(c) > 0.0)) {
        t0 = lg_now();
        lg_status st = lg_alpha_tnode_objective(&c->w, c->net, c->m, c->C, c->d, c->lb);
        c->out->t_bounds += lg_now() - t0;
        if (st != LG_OK) {
            c->st = st;
            return 0;
        }
        if (lg_runctx_expired(c->run)) {
            c->stop = 1;
            return 0;
        }
    }
    return lg_btc_key(c) > 0.0;
}

/* The working bounds of a domain just split at layer k: the intermediate
 * bounds of every layer after k recomputed on it (lg_bounds_symbolic_from:
 * each kept where tighter than the parent's, so the earlier splits stay in
 * force). 1 when some neuron's bounds cross (lo > hi): no input of the box
 * lies in the domain. */
static int lg_btc_rebound(lg_btc *c, int k)
{
    double t0 = lg_now();
    if (!lg_btc_took(c, k + 1 < c->net->n_layers ? lg_bounds_symbolic_from(&c->w, c->net, k + 1) : LG_OK, t0))
        return 0;
    for (int q = k; q < c->net->n_layers; q++)
        for (int o = 0; o < c->w.width[q]; o++)
            if (c->w.lo[q][o] > c->w.hi[q][o]) return 1;
    return 0;
}

/* Bound the working bounds as a domain at depth depth (split at layer k, or
 * k < 0 for the root); queue it when it stays open. */
static void lg_btc_visit(lg_btc *c, int k, int depth)
{
    c->out->nodes++;
    if (depth > c->out->max_depth) c->out->max_depth = depth;
    if (k >= 0 && lg_btc_rebound(c, k)) return; /* empty: closed */
    if (c->stop || c->st != LG_OK || lg_btc_closed(c) || c->stop || c->st != LG_OK) return;
    if (depth >= LG_BAB_TNODE_DEPTH || (double)(c->nq + 1) * 8.0 * (double)(2 * c->tot + c->w.n_diff) > LG_BAB_TNODE_OPEN_MB * 1048576.0) {
        c->stop = 2;
        return;
    }
    if (c->nq == c->cap) {
        long cap = c->cap ? 2 * c->cap : 16;
        lg_btd *q = realloc(c->q, (size_t)cap * sizeof *q);
        if (!q) {
            c->st = lg_fail(LG_ERR_NOMEM, "bab: out of memory");
            return;
        }
        c->q = q;
        c->cap = cap;
    }
    double *v = malloc((2 * c->tot + c->w.n_diff + 1) * sizeof *v);
    if (!v) {
        c->st = lg_fail(LG_ERR_NOMEM, "bab: out of memory");
        return;
    }
    lg_btc_flat(c, v, 1);
    c->q[c->nq++] = (lg_btd){v, lg_btc_key(c), depth};
}

/* Best first: the open domain with the lowest bound is split on the first
 * neuron of the order still unstable in it; both children are bounded. */
static void lg_btc_search(lg_btc *c)
{
    while (c->nq > 0 && !c->stop && c->st == LG_OK) {
        if (lg_runctx_expired(c->run)) {
            c->stop = 1;
            return;
        }
        long bi = 0;
        for (long i = 1; i < c->nq; i++)
            if (c->q[i].key < c->q[bi].key) bi = i;
        if (c->run && c->run->verbose >= 1 && lg_now() >= c->t_print) {
            fprintf(stderr, "bab-relu (nodes): %ld bounded, %ld open, worst %.6g at depth %d, %.1f s bounding\n",
                    c->out->nodes, c->nq, c->q[bi].key, c->q[bi].depth, c->out->t_bounds);
            c->t_print = lg_now() + 2.0;
        }
        lg_btd dom = c->q[bi];
        c->q[bi] = c->q[--c->nq];
        lg_btc_flat(c, dom.b, 0);
        int pick = -1;
        for (int i = 0; i < c->nu && pick < 0; i++) {
            int k = c->ord[i].k, j = c->ord[i].j;
            if (c->w.lo[k][j] < 0.0 && c->w.hi[k][j] > 0.0) pick = i;
        }
        if (pick < 0) { /* nothing left to split: this domain stays open */
            free(dom.b);
            c->stop = 2;
            return;
        }
        int k = c->ord[pick].k, j = c->ord[pick].j;
        for (int side = 0; side < 2 && !c->stop && c->st == LG_OK; side++) {
            if (c->mutant == 1 + side) continue; /* tests only: a child dropped */
            lg_btc_flat(c, dom.b, 0);
            if (side == 0)
                c->w.lo[k][j] = 0.0; /* z_j ≥ 0: the identity on [0, u] */
            else
                c->w.hi[k][j] = 0.0; /* z_j ≤ 0: zero on [l, 0] */
            lg_btc_visit(c, k, dom.depth + 1);
        }
        free(dom.b);
    }
}

/* The split order: the unstable neurons by |λ|·(−l·u/(u − l)) summed over
 * the rows, λ the root's back-substitution coefficient of the neuron's
 * output; then those with λ = 0 on every row (a split changes their own
 * term in no row, but the recomputed later bounds; e.g. behind a layernorm
 * whose planes are constant), earlier layers first, by the gap. */
static lg_status lg_btc_order(lg_btc *c, const lg_bounds *root)
{
    const lg_net *net = c->net;
    size_t size = (size_t)lg_alpha_size(net);
    int nu = 0;
    for (int k = 0; k < net->n_layers; k++)
        if (lg_btn_relu(&net->layers[k]))
            for (int j = 0; j < net->layers[k].n_out; j++) nu += root->lo[k][j] < 0.0 && root->hi[k][j] > 0.0;
    c->ord = malloc(((size_t)nu + 1) * sizeof *c->ord);
    double *lam = calloc((size_t)c->m * size + 1, sizeof *lam), *v = malloc((size_t)c->m * sizeof *v);
    lg_backsub s;
    lg_status st = c->ord && lam && v ? lg_backsub_init(&s, root, net, c->m) : lg_fail(LG_ERR_NOMEM, "bab: out of memory");
    if (st != LG_OK) {
        free(lam);
        free(v);
        return st;
    }
    int no = lg_net_n_out(net);
    memcpy(s.A, c->C, (size_t)c->m * (size_t)no * sizeof *s.A);
    memcpy(s.c, c->d, (size_t)c->m * sizeof *s.c);
    st = lg_backsub_lower(&s, net->n_layers - 1, c->m, NULL, lam, size, NULL, v);
    lg_backsub_free(&s);
    c->nu = 0;
    for (int k = 0; st == LG_OK && k < net->n_layers; k++) {
        if (!lg_btn_relu(&net->layers[k])) continue;
        size_t off = (size_t)lg_alpha_offset(net, k);
        for (int j = 0; j < net->layers[k].n_out; j++) {
            double l = root->lo[k][j], u = root->hi[k][j];
            if (!(l < 0.0 && u > 0.0)) continue;
            double gap = isfinite(l) && isfinite(u) ? -l * u / (u - l) : INFINITY, w = 0.0;
            for (int r = 0; r < c->m; r++) w += fabs(lam[(size_t)r * size + off + (size_t)j]);
            c->ord[c->nu++] = (lg_btn){k, j, w > 0.0 ? w * gap : gap, w > 0.0};
        }
    }
    free(lam);
    free(v);
    if (st == LG_ERR_TIMEOUT) {
        c->stop = 1;
        return LG_OK;
    }
    if (st == LG_OK) qsort(c->ord, (size_t)c->nu, sizeof *c->ord, lg_btn_cmp);
    return st;
}

static lg_status lg_btc_run(const lg_net *net, int n_terms, const lg_term *terms, const lg_bounds *root,
                            const lg_runctx *run, lg_bab_out *out, int mutant)
{
    memset(out, 0, sizeof *out);
    out->how.stage = LG_STAGE_RELU_SPLIT;
    lg_btc c;
    memset(&c, 0, sizeof c);
    c.net = net;
    c.n_terms = n_terms;
    c.terms = terms;
    c.run = run;
    c.out = out;
    c.mutant = mutant;
    for (int k = 0; k < net->n_layers; k++) c.tot += (size_t)net->layers[k].n_out;
    int no = lg_net_n_out(net);
    for (int t = 0; t < n_terms; t++) c.m += terms[t].n_cons;
    lg_status st = lg_bounds_init(&c.w, net);
    if (st != LG_OK) return st;
    c.C = malloc(((size_t)c.m * (size_t)no + 1) * sizeof *c.C);
    c.d = malloc(((size_t)c.m + 1) * sizeof *c.d);
    c.lb = malloc(((size_t)c.m + 1) * sizeof *c.lb);
    double *diff = malloc((root->n_diff + 1) * sizeof *diff);
    if (!c.C || !c.d || !c.lb || !diff) {
        st = lg_fail(LG_ERR_NOMEM, "bab: out of memory");
        goto done;
    }
    for (int t = 0, r = 0; t < n_terms; t++)
        for (int q = 0; q < terms[t].n_cons; q++, r++) {
            memcpy(c.C + (size_t)r * (size_t)no, terms[t].cons[q].coef, (size_t)no * sizeof *c.C);
            c.d[r] = terms[t].cons[q].d;
        }
    for (int k = 0; k < net->n_layers; k++) {
        memcpy(c.w.lo[k], root->lo[k], (size_t)root->width[k] * sizeof **root->lo);
        memcpy(c.w.hi[k], root->hi[k], (size_t)root->width[k] * sizeof **root->hi);
    }
    memcpy(c.w.xlo, root->xlo, (size_t)root->n_in * sizeof *root->xlo);
    memcpy(c.w.xhi, root->xhi, (size_t)root->n_in * sizeof *root->xhi);
    lg_bounds_diff_save(root, diff);
    lg_bounds_diff_load(&c.w, diff);
    c.w.run = run;
    if ((st = lg_btc_order(&c, root)) != LG_OK) goto done;
    if (c.m > 0 && !c.stop) {
        lg_btc_visit(&c, -1, 0);
        lg_btc_search(&c);
    }
    st = c.st;
    if (st == LG_OK) {
        if (!c.stop && c.m > 0) {
            out->answer = LG_BAB_PROVED;
        } else {
            out->answer = LG_BAB_OPEN;
            out->how.timed_out = c.stop == 1;
            out->how.why = c.stop == 1 ? LG_REASON_TIMEOUT : LG_REASON_LIMIT;
            snprintf(out->how.reason, sizeof out->how.reason, "%s",
                     c.stop == 1 ? "timeout" : "ReLU splitting: a domain left open (depth or open-domain limit, or no unstable ReLU left to split)");
        }
    }
done:
    for (long i = 0; i < c.nq; i++) free(c.q[i].b);
    free(c.q);
    free(c.C);
    free(c.d);
    free(c.lb);
    free(c.ord);
    free(diff);
    lg_bounds_free(&c.w);
    return st;
}

lg_status lg_bab_tnode_relu(const lg_net *net, int n_terms, const lg_term *terms, const lg_bounds *root,
                            const lg_runctx *run, lg_bab_out *out)
{
    return lg_btc_run(net, n_terms, terms, root, run, out, 0);
}

lg_status lg_bab_tnode_relu_mutant(const lg_net *net, int n_terms, const lg_term *terms, const lg_bounds *root,
                                   const lg_runctx *run, lg_bab_out *out, int side)
{
    return lg_btc_run(net, n_terms, terms, root, run, out, side == 0 ? 1 : 2);
}
