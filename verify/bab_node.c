/* bab_node.c — branch-and-bound nodes (bab_internal.h): storage, and the
 * work on one node — bound, close terms (single constraints and
 * combinations of a conjunction's constraints), look for a counterexample,
 * α-CROWN, hand small nodes to a back-end, split. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "verify/alpha.h"
#include "verify/attack.h"
#include "verify/bab_internal.h"
#include "verify/backend.h"
#include "verify/recheck.h"

/* ---- nodes ---- */

int lg_bab_use_beta(const lg_bab_ctx *cx) { return cx->mode == LG_BAB_RELU && cx->o->alpha_steps > 0 && cx->o->beta; }

/* doubles (box, pre), then floats (warm), then bytes (sign, open) */
static size_t lg_bab_node_nd(const lg_bab_ctx *cx) { return 2 * (size_t)cx->n_in + cx->n_pre; }
static size_t lg_bab_node_nf(const lg_bab_ctx *cx)
{
    return lg_bab_use_beta(cx) ? 2 * (size_t)cx->m * (size_t)cx->size : 0;
}

size_t lg_bab_node_bytes(const lg_bab_ctx *cx)
{
    return sizeof(lg_bab_node) + lg_bab_node_nd(cx) * sizeof(double) + lg_bab_node_nf(cx) * sizeof(float) +
           (size_t)cx->size + (size_t)cx->n_terms + 1;
}

lg_bab_node *lg_bab_node_new(const lg_bab_ctx *cx)
{
    size_t nd = lg_bab_node_nd(cx), nf = lg_bab_node_nf(cx);
    lg_bab_node *n = calloc(1, lg_bab_node_bytes(cx));
    if (!n) return NULL;
    double *v = (double *)(n + 1); /* sizeof(lg_bab_node) keeps doubles aligned */
    n->lo = v;
    n->hi = v + cx->n_in;
    n->pre = v + 2 * (size_t)cx->n_in;
    n->warm = nf ? (float *)(v + nd) : NULL;
    n->sign = (signed char *)((float *)(v + nd) + nf);
    n->open = (unsigned char *)(n->sign + cx->size);
    n->split_k = -1;
    return n;
}

lg_bab_node *lg_bab_node_child(const lg_bab_ctx *cx, const lg_bab_node *parent)
{
    lg_bab_node *c = lg_bab_node_new(cx);
    if (!c) return NULL;
    memcpy(c->lo, parent->lo, (size_t)cx->n_in * sizeof *c->lo);
    memcpy(c->hi, parent->hi, (size_t)cx->n_in * sizeof *c->hi);
    memcpy(c->open, parent->open, (size_t)cx->n_terms);
    memcpy(c->sign, parent->sign, (size_t)cx->size);
    c->depth = parent->depth + 1;
    return c;
}

void lg_bab_node_free(lg_bab_node *n) { free(n); }

void lg_bab_bounds_save(const lg_bab_ctx *cx, const lg_bounds *b, double *pre)
{
    size_t n_in = (size_t)cx->n_in;
    memcpy(pre, b->xlo, n_in * sizeof *pre);
    memcpy(pre + n_in, b->xhi, n_in * sizeof *pre);
    pre += 2 * n_in;
    for (int k = 0; k < b->n_layers; k++) {
        size_t w = (size_t)b->width[k];
        memcpy(pre, b->lo[k], w * sizeof *pre);
        memcpy(pre + w, b->hi[k], w * sizeof *pre);
        pre += 2 * w;
    }
}

void lg_bab_bounds_load(const lg_bab_ctx *cx, lg_bounds *b, const double *pre)
{
    size_t n_in = (size_t)cx->n_in;
    memcpy(b->xlo, pre, n_in * sizeof *pre);
    memcpy(b->xhi, pre + n_in, n_in * sizeof *pre);
    pre += 2 * n_in;
    for (int k = 0; k < b->n_layers; k++) {
        size_t w = (size_t)b->width[k];
        memcpy(b->lo[k], pre, w * sizeof *pre);
        memcpy(b->hi[k], pre + w, w * sizeof *pre);
        pre += 2 * w;
    }
}

int lg_bab_bounds_empty(const lg_bounds *b)
{
    for (int k = 0; k < b->n_layers; k++)
        for (int i = 0; i < b->width[k]; i++)
            if (b->lo[k][i] > b->hi[k][i]) return 1;
    return 0;
}

/* ---- one node ---- */



/* Per-node scratch: rows of the open terms. */
typedef struct lg_bab_scr {
    int *rows;      /* [m] constraint row index */
    int *rterm;     /* [m] term of each row */
    double *C, *d;  /* [m][n_out], [m] */
    double *lb;     /* [m] */
    double *ain;    /* [m][n_in] */
    double *lam;    /* [m][size] */
    double *alpha;  /* [m][size] */
    double *beta;   /* [m][size] split multipliers (β-CROWN) */
    int m_alpha;    /* rows of alpha/beta (lg_bab_alpha) */
    double *x, *y, *g; /* [n_in], [n_in], [n_in] candidate work */
    lg_term *open_terms; /* [n_terms] */
    void *mem;
} lg_bab_scr;

static lg_status lg_bab_scr_init(lg_bab_scr *s, const lg_bab_ctx *cx)
{
    size_t m = (size_t)cx->m, no = (size_t)cx->n_out, ni = (size_t)cx->n_in, sz = (size_t)cx->size;
    size_t nd = m * (no + 2 + ni + 3 * sz) + 3 * ni;
    size_t bytes = nd * sizeof(double) + 2 * m * sizeof(int) + ((size_t)cx->n_terms + 1) * sizeof(lg_term);
    memset(s, 0, sizeof *s);
    unsigned char *p = malloc(bytes);
    if (!p) return lg_fail(LG_ERR_NOMEM, "bab: cannot allocate %zu bytes of scratch", bytes);
    s->mem = p;
    double *v = (double *)p;
    s->C = v;
    s->d = s->C + m * no;
    s->lb = s->d + m;
    s->ain = s->lb + m;
    s->lam = s->ain + m * ni;
    s->alpha = s->lam + m * sz;
    s->beta = s->alpha + m * sz;
    s->x = s->beta + m * sz;
    s->y = s->x + ni;
    s->g = s->y + ni;
    s->open_terms = (lg_term *)(s->g + ni);
    s->rows = (int *)(s->open_terms + cx->n_terms + 1);
    s->rterm = s->rows + m;
    return LG_OK;
}

/* Corner of the node box minimising the linear function ain·x' (x' the
 * normalised input) — the minimiser of the relaxed objective. */
static void lg_bab_corner(const lg_bab_ctx *cx, const lg_bab_node *n, const double *ain, double *x)
{
    const lg_net *net = cx->net;
    for (int i = 0; i < cx->n_in; i++) {
        double g = ain[i];
        if (net->in_div && net->in_div[i] < 0) g = -g;
        x[i] = g > 0 ? n->lo[i] : n->hi[i];
    }
}

/* Try a candidate: g(x) over the open terms; confirmed counterexample → 1. */
static lg_status lg_bab_try(const lg_bab_ctx *cx, int n_open, const lg_term *open, const double *x, double *best_g,
                            double *best_x, int *found)
{
    double g;
    lg_status st = lg_attack_objective(cx->net, n_open, open, x, &g, NULL);
    if (st != LG_OK) return st;
    if (g <= 0) {
        int ok = lg_recheck(cx->net, cx->lo, cx->hi, cx->n_terms, cx->terms, x, NULL);
        if (ok < 0) return lg_fail(LG_ERR_NOMEM, "bab: out of memory in the re-check");
        if (ok) {
            *found = 1;
            memcpy(best_x, x, (size_t)cx->n_in * sizeof *x);
            *best_g = g;
            return LG_OK;
        }
    }
    if (g < *best_g) {
        *best_g = g;
        memcpy(best_x, x, (size_t)cx->n_in * sizeof *x);
    }
    return LG_OK;
}

/* Close terms whose some row has lb > 0; returns the number still open and
 * the hardest row (the best row of the hardest open term) in *hard, its
 * bound in *key. */
static int lg_bab_close(const lg_bab_ctx *cx, lg_bab_node *n, const lg_bab_scr *s, int m, int *hard, double *key)
{
    int n_open = 0;
    *hard = -1;
    *key = INFINITY;
    for (int r = 0; r < m;) {
        int t = s->rterm[r], best = r;
        for (; r < m && s->rterm[r] == t; r++)
            if (s->lb[r] > s->lb[best]) best = r;
        if (!n->open[t]) continue; /* closed by a combination (lg_bab_conj) */
        if (s->lb[best] > 0.0) {
            n->open[t] = 0;
            continue;
        }
        n_open++;
        if (s->lb[best] < *key || *hard < 0) {
            *key = s->lb[best];
            *hard = best;
        }
    }
    return n_open;
}

/* Conjunctions: a term c_k·y + d_k ≤ 0 (all k) is also impossible when a
 * combination Σ λ_k (c_k·y + d_k) with λ ≥ 0 has a lower bound > 0. λ comes
 * from maximising the cheap surrogate min_x Σ λ_k L_k(x) over the simplex
 * (L_k the rows' back-substituted linear bounds, exponentiated supergradient
 * steps); the combined row is then bounded afresh (sound for any λ). Closes
 * such terms in n->open; returns how many it closed. w: [n_out + 2·m] scratch. */
static lg_status lg_bab_conj(const lg_bab_ctx *cx, lg_bab_node *n, const lg_bounds *b, const lg_bab_scr *s, int m,
                             double *w, int *closed)
{
    int ni = cx->n_in, no = cx->n_out;
    *closed = 0;
    for (int r0 = 0; r0 < m;) {
        int t = s->rterm[r0], r1 = r0;
        while (r1 < m && s->rterm[r1] == t) r1++;
        int k = r1 - r0;
        if (k < 2 || !n->open[t]) {
            r0 = r1;
            continue;
        }
        double *lam = w + no, *cst = lam + k, *comb = w, best_h = -INFINITY;
        double *best = cst + k; /* k more: best λ */
        for (int q = 0; q < k; q++) {
            const double *A = s->ain + (size_t)(r0 + q) * (size_t)ni;
            double v = 0;
            for (int i = 0; i < ni; i++) v += fmin(A[i] * b->xlo[i], A[i] * b->xhi[i]);
            cst[q] = s->lb[r0 + q] - v; /* L_q(x) = A·x + cst (surrogate only) */
            lam[q] = 1.0 / k;
        }
        for (int it = 0; it < 60; it++) {
            double h = 0, gmax = 0, g[64];
            int kk = k < 64 ? k : 64;
            for (int q = 0; q < kk; q++) g[q] = cst[q];
            for (int q = 0; q < kk; q++) h += lam[q] * cst[q];
            for (int i = 0; i < ni; i++) {
                double a = 0;
                for (int q = 0; q < kk; q++) a += lam[q] * s->ain[(size_t)(r0 + q) * (size_t)ni + (size_t)i];
                double xi = a >= 0 ? b->xlo[i] : b->xhi[i];
                h += a * xi;
                for (int q = 0; q < kk; q++) g[q] += s->ain[(size_t)(r0 + q) * (size_t)ni + (size_t)i] * xi;
            }
            if (h > best_h) {
                best_h = h;
                memcpy(best, lam, (size_t)kk * sizeof *lam);
            }
            for (int q = 0; q < kk; q++) gmax = fmax(gmax, fabs(g[q]));
            if (!(gmax > 0)) break;
            double z = 0, eta = 2.0 / gmax;
            for (int q = 0; q < kk; q++) z += lam[q] *= exp(eta * g[q] / sqrt(it + 1.0));
            for (int q = 0; q < kk; q++) lam[q] /= z;
        }
        double best_row = -INFINITY;
        for (int q = 0; q < k; q++) best_row = fmax(best_row, s->lb[r0 + q]);
        if (best_h > best_row) { /* the surrogate beats every single row: bound the combination */
            double d = 0;
            for (int j = 0; j < no; j++) comb[j] = 0;
            for (int q = 0; q < k && q < 64; q++) {
                const double *Cq = cx->C + (size_t)s->rows[r0 + q] * (size_t)no;
                for (int j = 0; j < no; j++) comb[j] += best[q] * Cq[j];
                d += best[q] * cx->d[s->rows[r0 + q]];
            }
            double v;
            lg_status st = lg_alpha_bound(b, cx->net, 1, comb, &d, NULL, &v, NULL, NULL, NULL);
            if (st != LG_OK) return st;
            if (v > 0) {
                n->open[t] = 0;
                (*closed)++;
            }
        }
        r0 = r1;
    }
    return LG_OK;
}

/* Gather the rows of the open terms into s (C, d, rows, rterm); returns m. */
static int lg_bab_rows(const lg_bab_ctx *cx, const lg_bab_node *n, lg_bab_scr *s)
{
    int m = 0;
    size_t no = (size_t)cx->n_out;
    for (int t = 0; t < cx->n_terms; t++) {
        if (!n->open[t]) continue;
        for (int r = cx->row0[t]; r < cx->row0[t + 1]; r++, m++) {
            s->rows[m] = r;
            s->rterm[m] = t;
            memcpy(s->C + (size_t)m * no, cx->C + (size_t)r * no, no * sizeof *s->C);
            s->d[m] = cx->d[r];
        }
    }
    return m;
}

static int lg_bab_open_terms(const lg_bab_ctx *cx, const lg_bab_node *n, lg_term *out)
{
    int k = 0;
    for (int t = 0; t < cx->n_terms; t++)
        if (n->open[t]) out[k++] = cx->terms[t];
    return k;
}

/* Hand the node to the back-end decision (backend.h): *closed = 1 on a
 * proved UNSAT (1 glpk, 2 z3 or glpk+z3), *found = 1 with an accepted
 * witness in x. Unknown leaves the node open (it is split further). */
static lg_status lg_bab_solver(const lg_bab_ctx *cx, const lg_bab_node *n, const lg_bounds *b, int n_open,
                               const lg_term *open, lg_bab_res *rs, double *x, int *closed, int *found)
{
    lg_problem p = {cx->net, n->lo, n->hi, n_open, open, b->lo, b->hi};
    lg_runctx run = lg_runctx_child(cx->run, (uint64_t)n->id);
    if (run.verbose < 2) run.verbose = 0; /* solver chatter only */
    lg_backend_call call = {cx->net, &p, cx->lo, cx->hi, cx->n_terms, cx->terms, &run, cx->o->solver_timeout};
    lg_backend_out out;
    lg_status st = lg_backend_decide(cx->o->solver, &call, &out, x);
    rs->t_solver += out.seconds;
    rs->solver_calls += out.calls;
    rs->solver_nodes += out.nodes;
    if (st != LG_OK) return st;
    if (out.answer == LG_ANSWER_UNSAT) *closed = strcmp(out.method, "glpk") == 0 ? 1 : 2;
    *found = out.answer == LG_ANSWER_SAT;
    return LG_OK;
}

static int lg_bab_unstable(const lg_bounds *b, const lg_net *net)
{
    int u = 0;
    for (int k = 0; k < net->n_layers; k++) u += lg_bounds_unstable(b, net, k);
    return u;
}

/* Bound the node: bounds of its region, every open row with the plain slopes,
 * the conjunction rule. Sets *n_open (0: closed), the hardest row *hard and
 * its bound *key; *empty = 1 when the region is empty. */
static lg_status lg_bab_bound(const lg_bab_ctx *cx, lg_bab_node *n, lg_bounds *b, lg_bab_scr *s, int *m, int *n_open,
                              int *hard, double *key, int *empty)
{
    const lg_net *net = cx->net;
    lg_status st = cx->mode == LG_BAB_INPUT ? lg_bab_input_bound(cx, n, b) : lg_bab_relu_bound(cx, n, b);
    if (st != LG_OK) return st;
    *empty = lg_bab_bounds_empty(b);
    if (*empty) return LG_OK; /* the split constraints leave no input: nothing to find here */
    *m = lg_bab_rows(cx, n, s);
    int need_lam = cx->mode == LG_BAB_RELU;
    if ((st = lg_alpha_bound(b, net, *m, s->C, s->d, NULL, s->lb, s->ain, need_lam ? s->lam : NULL, NULL)) != LG_OK)
        return st;
    *n_open = lg_bab_close(cx, n, s, *m, hard, key);
    if (*n_open > 0 && cx->o->conj) {
        int closed = 0;
        double *w = malloc(((size_t)cx->n_out + 3 * (size_t)*m + 1) * sizeof *w);
        if (!w) return lg_fail(LG_ERR_NOMEM, "bab: out of memory");
        st = lg_bab_conj(cx, n, b, s, *m, w, &closed);
        free(w);
        if (st != LG_OK) return st;
        if (closed) *n_open = lg_bab_close(cx, n, s, *m, hard, key);
    }
    return LG_OK;
}

/* Look for a counterexample in the node: centre, relaxed minimisers, then a
 * short local attack from the best of them. *found = 1 with the point in best. */
static lg_status lg_bab_falsify(const lg_bab_ctx *cx, lg_bab_node *n, lg_bab_scr *s, int m, int n_open, double *cand,
                                double *best, int *found)
{
    const lg_net *net = cx->net;
    double best_g = INFINITY;
    *found = 0;
    lg_status st;
    for (int i = 0; i < cx->n_in; i++) cand[i] = n->lo[i] + 0.5 * (n->hi[i] - n->lo[i]);
    if ((st = lg_bab_try(cx, n_open, s->open_terms, cand, &best_g, best, found)) != LG_OK) return st;
    for (int r = 0; r < m && !*found; r++) {
        if (!n->open[s->rterm[r]]) continue;
        lg_bab_corner(cx, n, s->ain + (size_t)r * (size_t)cx->n_in, cand);
        if ((st = lg_bab_try(cx, n_open, s->open_terms, cand, &best_g, best, found)) != LG_OK) return st;
    }
    if (!*found && cx->o->attack_steps > 0 && isfinite(best_g)) {
        memcpy(cand, best, (size_t)cx->n_in * sizeof *cand);
        if ((st = lg_attack_repair(net, n->lo, n->hi, n_open, s->open_terms, cx->o->attack_steps, 0.1, cand, found)) !=
            LG_OK)
            return st;
        if (*found) {
            int ok = lg_recheck(net, cx->lo, cx->hi, cx->n_terms, cx->terms, cand, NULL);
            if (ok < 0) return lg_fail(LG_ERR_NOMEM, "bab: out of memory in the re-check");
            *found = ok;
            if (*found) memcpy(best, cand, (size_t)cx->n_in * sizeof *cand);
        }
    }
    return LG_OK;
}

/* α-CROWN on the rows of the terms still open; refreshes *n_open, *hard, *key
 * and the hardest row's sensitivities (ReLU splitting). */
static lg_status lg_bab_alpha(const lg_bab_ctx *cx, lg_bab_node *n, lg_bounds *b, lg_bab_scr *s, int *n_open,
                              int *hard, double *key)
{
    const lg_net *net = cx->net;
    const lg_bab_opts *o = cx->o;
    int m = lg_bab_rows(cx, n, s), beta = lg_bab_use_beta(cx);
    size_t sz = (size_t)cx->size;
    lg_alpha_default(b, net, m, s->alpha);
    s->m_alpha = m;
    lg_status st;
    if (beta) { /* β-CROWN: α and β warm-started from the parent's optimum */
        memset(s->beta, 0, (size_t)m * sz * sizeof *s->beta);
        for (int r = 0; r < m && n->has_warm; r++) {
            const float *w = n->warm + (size_t)s->rows[r] * 2 * sz;
            double *al = s->alpha + (size_t)r * sz, *be = s->beta + (size_t)r * sz;
            for (size_t j = 0; j < sz; j++) {
                al[j] = w[j];
                be[j] = n->sign[j] ? w[sz + j] : 0.0;
            }
        }
        st = lg_alpha_optimize_beta(b, net, m, s->C, s->d, n->sign, o->alpha_steps, o->alpha_lr, cx->run,
                                    s->alpha, s->beta, s->lb, s->ain);
    } else {
        st = lg_alpha_optimize(b, net, m, s->C, s->d, o->alpha_steps, o->alpha_lr, cx->run, s->alpha, s->lb,
                               s->ain);
    }
    if (st != LG_OK) return st;
    *n_open = lg_bab_close(cx, n, s, m, hard, key);
    if (*n_open > 0 && cx->mode == LG_BAB_RELU) { /* sensitivities under the optimised slopes */
        double *lb2 = s->g; /* one row is enough: the hardest */
        st = lg_alpha_bound_beta(b, net, 1, s->C + (size_t)*hard * (size_t)cx->n_out, s->d + *hard,
                                 s->alpha + (size_t)*hard * sz, beta ? n->sign : NULL,
                                 beta ? s->beta + (size_t)*hard * sz : NULL, lb2, NULL, s->lam + (size_t)*hard * sz,
                                 NULL, NULL);
    }
    return st;
}

/* Few unstable ReLUs left: the back-end decision (backend.h) on the node.
 * Sets rs->kind CLOSED or FOUND (rs->x) when it decides; else leaves it. */
static lg_status lg_bab_solve(const lg_bab_ctx *cx, const lg_bab_node *n, const lg_bounds *b, lg_bab_scr *s,
                              int n_open, double *cand, lg_bab_res *rs)
{
    const lg_bab_opts *o = cx->o;
    if (o->solver_unstable <= 0 || !o->solver || strcmp(o->solver, "none") == 0 ||
        lg_bab_unstable(b, cx->net) > o->solver_unstable)
        return LG_OK;
    int closed = 0, found = 0;
    lg_status st = lg_bab_solver(cx, n, b, n_open, s->open_terms, rs, cand, &closed, &found);
    if (st != LG_OK) return st;
    if (closed) {
        rs->kind = LG_BK_CLOSED;
        rs->solver_closed = closed;
    } else if (found) {
        rs->x = malloc((size_t)cx->n_in * sizeof *rs->x);
        if (!rs->x) return lg_fail(LG_ERR_NOMEM, "bab: out of memory");
        memcpy(rs->x, cand, (size_t)cx->n_in * sizeof *rs->x);
        rs->kind = LG_BK_FOUND;
    }
    return LG_OK;
}

/* Split the node by the hardest row (input: split_crow and its plain bound;
 * ReLU: the sensitivities of row hard), or STUCK at a limit. */
static lg_status lg_bab_split(const lg_bab_ctx *cx, const lg_bab_node *n, lg_bounds *b, const lg_bab_scr *s,
                              int split_crow, double plain_key, int hard, lg_bab_res *rs)
{
    if (n->depth >= cx->o->max_depth) {
        rs->kind = LG_BK_STUCK;
        rs->why = "depth limit";
        return LG_OK;
    }
    const char *why = NULL;
    lg_status st = cx->mode == LG_BAB_INPUT
                       ? lg_bab_input_split(cx, n, b, cx->C + (size_t)split_crow * (size_t)cx->n_out, plain_key,
                                            &rs->c0, &rs->c1, &why)
                       : lg_bab_relu_split(cx, n, b, s->lam + (size_t)hard * (size_t)cx->size,
                                           s->C + (size_t)hard * (size_t)cx->n_out, s->d[hard],
                                           s->m_alpha > 0 ? s->alpha + (size_t)hard * (size_t)cx->size : NULL,
                                           s->m_alpha > 0 && lg_bab_use_beta(cx) ? s->beta + (size_t)hard * (size_t)cx->size
                                                                                 : NULL,
                                           &rs->c0, &rs->c1, &why);
    if (st != LG_OK) return st;
    if (rs->c0 && lg_bab_use_beta(cx) && s->m_alpha > 0) { /* warm start of the children */
        size_t sz = (size_t)cx->size;
        lg_bab_node *c[2] = {rs->c0, rs->c1};
        for (int i = 0; i < 2; i++) {
            c[i]->has_warm = 1;
            for (int r = 0; r < s->m_alpha; r++) {
                float *w = c[i]->warm + (size_t)s->rows[r] * 2 * sz;
                const double *al = s->alpha + (size_t)r * sz, *be = s->beta + (size_t)r * sz;
                for (size_t j = 0; j < sz; j++) {
                    w[j] = (float)al[j];
                    w[sz + j] = (float)be[j];
                }
            }
        }
    }
    rs->kind = rs->c0 ? LG_BK_SPLIT : LG_BK_STUCK;
    if (!rs->c0) rs->why = why;
    return LG_OK;
}

lg_status lg_bab_process(const lg_bab_ctx *cx, lg_bab_node *n, lg_bab_res *rs)
{
    const lg_bab_opts *o = cx->o;
    lg_bounds b;
    lg_bab_scr s;
    memset(&b, 0, sizeof b);
    memset(rs, 0, sizeof *rs);
    rs->kind = LG_BK_STUCK;
    rs->why = "not bounded";
    if (lg_runctx_expired(cx->run)) {
        rs->why = "timeout"; /* left open: the driver reports the deadline */
        return LG_OK;
    }
    lg_status st = lg_bab_scr_init(&s, cx);
    if (st != LG_OK) return st;
    double t0 = lg_now();
    int m = 0, n_open = 0, hard = -1, empty = 0, found = 0;
    double key = INFINITY;
    if ((st = lg_bounds_init(&b, cx->net)) != LG_OK) goto done;
    /* bound */
    st = lg_bab_bound(cx, n, &b, &s, &m, &n_open, &hard, &key, &empty);
    rs->t_bounds = lg_now() - t0;
    if (st != LG_OK) goto done;
    if (empty || n_open == 0) {
        rs->kind = LG_BK_CLOSED;
        goto done;
    }
    /* falsify */
    n_open = lg_bab_open_terms(cx, n, s.open_terms);
    double *cand = s.y, *best = s.g;
    if ((st = lg_bab_falsify(cx, n, &s, m, n_open, cand, best, &found)) != LG_OK) goto done;
    if (found) {
        rs->x = malloc((size_t)cx->n_in * sizeof *rs->x);
        if (!rs->x) {
            st = lg_fail(LG_ERR_NOMEM, "bab: out of memory");
            goto done;
        }
        memcpy(rs->x, best, (size_t)cx->n_in * sizeof *rs->x);
        rs->kind = LG_BK_FOUND;
        goto done;
    }
    /* the hardest row under the plain slopes chooses an input split */
    int split_crow = s.rows[hard]; /* index into cx->C (s.rows is re-gathered below) */
    double plain_key = key;
    rs->pkey = key;
    if (o->alpha_steps > 0) {
        double t1 = lg_now();
        st = lg_bab_alpha(cx, n, &b, &s, &n_open, &hard, &key);
        rs->t_bounds += lg_now() - t1;
        if (st != LG_OK) goto done;
        if (n_open == 0) {
            rs->kind = LG_BK_CLOSED;
            goto done;
        }
        n_open = lg_bab_open_terms(cx, n, s.open_terms);
    }
    rs->key = key;
    /* solve */
    if ((st = lg_bab_solve(cx, n, &b, &s, n_open, cand, rs)) != LG_OK || rs->kind == LG_BK_CLOSED ||
        rs->kind == LG_BK_FOUND)
        goto done;
    /* split */
    st = lg_bab_split(cx, n, &b, &s, split_crow, plain_key, hard, rs);
done:
    lg_bounds_free(&b);
    free(s.mem);
    return st;
}
