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
} lg_btn;

typedef struct lg_btc {
    const lg_net *net;
    int n_terms;
    const lg_term *terms;
    lg_bounds w;           /* the working bounds: the root's with the current domain's splits */
    int m;                 /* constraint rows */
    double *C, *d, *lb;    /* [m][n_out], [m], [m] */
    lg_btn *ord;           /* [nu] the split order */
    int nu;
    const lg_runctx *run;
    lg_bab_out *out;
    int stop;              /* 1 timeout, 2 a leaf that could not be closed */
    lg_status st;
} lg_btc;

static int lg_btn_relu(const lg_layer *L)
{
    return L->act == LG_ACT_RELU && !lg_op_is(L->kind, LG_OPF_NODE);
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
    double x = ((const lg_btn *)a)->score, y = ((const lg_btn *)b)->score;
    return x > y ? -1 : x < y ? 1 : 0;
}

static int lg_btc_refuted(const lg_btc *c);

/* 1 when every term has a row with a lower bound > 0 on the working bounds. */
static int lg_btc_closed(lg_btc *c)
{
    double t0 = lg_now();
    lg_status st = lg_bounds_objective_lower(&c->w, c->net, c->m, c->C, c->d, c->lb);
    c->out->t_bounds += lg_now() - t0;
    if (st == LG_ERR_TIMEOUT) {
        c->stop = 1;
        return 0;
    }
    if (st != LG_OK) {
        c->st = st;
        return 0;
    }
    if (!lg_btc_refuted(c)) { /* the products' α and ReLU slopes searched on the domain (alpha_tnode.h) */
        t0 = lg_now();
        st = lg_alpha_tnode_objective(&c->w, c->net, c->m, c->C, c->d, c->lb);
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
    return lg_btc_refuted(c);
}

/* 1 when every term has a row whose bound in c->lb is > 0. */
static int lg_btc_refuted(const lg_btc *c)
{
    for (int t = 0, r = 0; t < c->n_terms; t++) {
        int refuted = 0;
        for (int q = 0; q < c->terms[t].n_cons; q++, r++) refuted |= c->lb[r] > 0.0;
        if (!refuted) return 0;
    }
    return 1;
}

static void lg_btc_dfs(lg_btc *c, int depth)
{
    if (c->stop || c->st != LG_OK) return;
    if (lg_runctx_expired(c->run)) {
        c->stop = 1;
        return;
    }
    c->out->nodes++;
    if (depth > c->out->max_depth) c->out->max_depth = depth;
    if (lg_btc_closed(c) || c->stop || c->st != LG_OK) return;
    if (depth >= c->nu || depth >= LG_BAB_TNODE_DEPTH) {
        c->stop = 2;
        return;
    }
    int k = c->ord[depth].k, j = c->ord[depth].j;
    double l = c->w.lo[k][j], u = c->w.hi[k][j];
    c->w.lo[k][j] = 0.0; /* z_j ≥ 0: the identity on [0, u] */
    lg_btc_dfs(c, depth + 1);
    c->w.lo[k][j] = l;
    c->w.hi[k][j] = 0.0; /* z_j ≤ 0: zero on [l, 0] */
    lg_btc_dfs(c, depth + 1);
    c->w.hi[k][j] = u;
}

/* The split order: the unstable neurons by |λ|·(−l·u/(u − l)) summed over
 * the rows, λ the root's back-substitution coefficient of the neuron's
 * output (those with λ = 0 on every row are left out: splitting them
 * cannot change a bound); by the gap alone when no coefficient was
 * recorded. */
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
    int any = 0;
    for (size_t q = 0; st == LG_OK && q < (size_t)c->m * size; q++) any |= lam[q] != 0.0;
    c->nu = 0;
    for (int k = 0; st == LG_OK && k < net->n_layers; k++) {
        if (!lg_btn_relu(&net->layers[k])) continue;
        size_t off = (size_t)lg_alpha_offset(net, k);
        for (int j = 0; j < net->layers[k].n_out; j++) {
            double l = root->lo[k][j], u = root->hi[k][j];
            if (!(l < 0.0 && u > 0.0)) continue;
            double gap = isfinite(l) && isfinite(u) ? -l * u / (u - l) : INFINITY, w = 0.0;
            for (int r = 0; r < c->m; r++) w += fabs(lam[(size_t)r * size + off + (size_t)j]);
            if (any && w == 0.0) continue;
            c->ord[c->nu++] = (lg_btn){k, j, any ? w * gap : gap};
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

lg_status lg_bab_tnode_relu(const lg_net *net, int n_terms, const lg_term *terms, const lg_bounds *root,
                            const lg_runctx *run, lg_bab_out *out)
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
    if (c.m > 0 && !c.stop) lg_btc_dfs(&c, 0);
    st = c.st;
    if (st == LG_OK) {
        if (!c.stop && c.m > 0) {
            out->answer = LG_BAB_PROVED;
        } else {
            out->answer = LG_BAB_OPEN;
            out->how.timed_out = c.stop == 1;
            out->how.why = c.stop == 1 ? LG_REASON_TIMEOUT : LG_REASON_LIMIT;
            snprintf(out->how.reason, sizeof out->how.reason, "%s",
                     c.stop == 1 ? "timeout" : "ReLU splitting: a domain left open (depth limit, or no unstable ReLU left to split)");
        }
    }
done:
    free(c.C);
    free(c.d);
    free(c.lb);
    free(c.ord);
    free(diff);
    lg_bounds_free(&c.w);
    return st;
}
