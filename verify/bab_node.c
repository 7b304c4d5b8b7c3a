/* bab_node.c — branch-and-bound nodes (bab_internal.h): storage, and the
 * work on a group of nodes — per node: bound, close terms (single
 * constraints and combinations of a conjunction's constraints), look for a
 * counterexample (sub-domain attacks); for the group: α/β-CROWN as one
 * batch; per node: hand small nodes to a back-end, split. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "verify/alpha.h"
#include "verify/attack.h"
#include "verify/bab_cuts.h"
#include "verify/bab_internal.h"
#include "verify/backend.h"
#include "verify/recheck.h"

/* ---- nodes ---- */

int lg_bab_use_beta(const lg_bab_ctx *cx) { return cx->mode == LG_BAB_RELU && cx->o->alpha_steps > 0 && cx->o->beta; }

/* Nodes carry their parent's optimised α (and β) as a warm start: β-CROWN,
 * and input splitting of a smooth network with α on. */
static int lg_bab_use_warm(const lg_bab_ctx *cx)
{
    return lg_bab_use_beta(cx) ||
           (cx->mode == LG_BAB_INPUT && cx->o->alpha_steps > 0 && lg_bounds_net_smooth(cx->net));
}

/* doubles (box, pre), then floats (warm), then bytes (sign, open) */
static size_t lg_bab_node_nd(const lg_bab_ctx *cx) { return 2 * (size_t)cx->n_in + cx->n_pre; }
static size_t lg_bab_node_nf(const lg_bab_ctx *cx)
{
    return lg_bab_use_warm(cx) ? 2 * (size_t)cx->m * (size_t)cx->size : 0;
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
    lg_bounds_diff_save(b, pre); /* max-pool layers' difference bounds (bounds.h) */
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
    lg_bounds_diff_load(b, pre);
}

lg_status lg_bab_bounds_start(const lg_bab_ctx *cx, lg_bounds *b, const double *pre)
{
    lg_status st = lg_bounds_init(b, cx->net);
    if (st != LG_OK) return st;
    b->run = cx->run;
    if (pre) lg_bab_bounds_load(cx, b, pre);
    else st = lg_bounds_symbolic(b, cx->net, cx->lo, cx->hi);
    return st;
}

int lg_bab_bounds_empty(const lg_bounds *b)
{
    for (int k = 0; k < b->n_layers; k++) {
        for (int i = 0; i < b->width[k]; i++)
            if (b->lo[k][i] > b->hi[k][i]) return 1;
        for (ptrdiff_t q = 0; b->dlo[k] && q < b->dhi[k] - b->dlo[k]; q++) /* a max-pool window's differences */
            if (b->dlo[k][q] > b->dhi[k][q]) return 1;
    }
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

/* One node's state across the phases of lg_bab_process_batch. */
typedef struct lg_bab_work {
    lg_bounds b;
    lg_bab_scr s;
    int m, n_open, hard, split_crow;
    int live;         /* still open after the plain bound and the falsification */
    int in_alpha;     /* took part in the group's α/β batch */
    double key, plain_key;
} lg_bab_work;

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

/* Hand the node to the back-end decision (backend.h): *closed = the bit of
 * the deciding back-end's table entry on a proved UNSAT, *found = 1 with an accepted
 * witness in x. Unknown leaves the node open (it is split further). */
static lg_status lg_bab_solver(const lg_bab_ctx *cx, const lg_bab_node *n, const lg_bounds *b, int n_open,
                               const lg_term *open, lg_bab_res *rs, double *x, int *closed, int *found)
{
    lg_problem p = {cx->net, n->lo, n->hi, n_open, open, b->lo, b->hi, 0, NULL, NULL};
    lg_runctx run = lg_runctx_child(cx->run, (uint64_t)n->id);
    if (run.verbose < 2) run.verbose = 0; /* solver chatter only */
    lg_backend_call call = {cx->net, &p, cx->lo, cx->hi, cx->n_terms, cx->terms, &run, cx->o->solver_timeout};
    lg_backend_out out;
    lg_status st = lg_backend_decide(&cx->o->solver, &call, &out, x);
    rs->t_solver += out.seconds;
    rs->solver_calls += out.calls;
    rs->solver_nodes += out.nodes;
    lg_lp_stats_add(&rs->lp, &out.lp);
    if (st != LG_OK) return st;
    const lg_solver_ops *by = out.how.confirm ? out.how.confirm : out.how.by; /* the row whose UNSAT counts */
    if (out.answer == LG_ANSWER_UNSAT) *closed = by ? 1 << by->index : 1;
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
    lg_status st = cx->strategy->bound(cx, n, b);
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

/* Look for a counterexample in the node: centre, relaxed minimisers, then
 * (in the rounds cx->attack allows) a short local attack from the best of
 * them. *found = 1 with the point in best. */
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
    if (!*found && cx->o->attack_steps > 0 && cx->attack && isfinite(best_g)) {
        memcpy(cand, best, (size_t)cx->n_in * sizeof *cand);
        const signed char *sign = cx->mode == LG_BAB_RELU ? n->sign : NULL; /* steered into the node's region */
        if ((st = lg_attack_subdomain(net, n->lo, n->hi, n_open, s->open_terms, sign, cx->o->attack_steps, 0.1,
                                      cx->run, cand, found)) != LG_OK)
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

/* α-CROWN (β-CROWN with ReLU splits) on the rows of the terms still open
 * in every live node of the batch, as one lg_alpha_optimize_batch call
 * (each node a group: its own bounds and split signs); then per node the
 * terms are closed again, and for the nodes still open the hardest row's
 * sensitivities under the optimised slopes are computed (one more batched
 * call, one row per node). Nodes closed here get rs->kind CLOSED. */
static lg_status lg_bab_alpha_batch(const lg_bab_ctx *cx, lg_bab_node **nodes, lg_bab_work *w, int nb, lg_bab_res *res)
{
    const lg_net *net = cx->net;
    const lg_bab_opts *o = cx->o;
    int beta = lg_bab_use_beta(cx), M = 0, no = cx->n_out, ni = cx->n_in;
    size_t sz = (size_t)cx->size;
    double t1 = lg_now();
    int n_live = 0;
    for (int i = 0; i < nb; i++) {
        if (!w[i].live) continue;
        lg_bab_node *n = nodes[i];
        lg_bab_scr *s = &w[i].s;
        int m = lg_bab_rows(cx, n, s);
        w[i].m = m;
        lg_alpha_default(&w[i].b, net, m, s->alpha);
        s->m_alpha = m;
        if (beta) memset(s->beta, 0, (size_t)m * sz * sizeof *s->beta);
        if (lg_bab_use_warm(cx)) /* α (and β) warm-started from the parent's optimum */
            for (int r = 0; r < m && n->has_warm; r++) {
                const float *wm = n->warm + (size_t)s->rows[r] * 2 * sz;
                double *al = s->alpha + (size_t)r * sz, *be = s->beta + (size_t)r * sz;
                for (size_t j = 0; j < sz; j++) {
                    al[j] = wm[j]; /* a smooth neuron's NaN (area-best) stays NaN */
                    if (beta) be[j] = n->sign[j] ? wm[sz + j] : 0.0;
                }
            }
        M += m;
        n_live++;
        w[i].in_alpha = 1;
    }
    if (n_live == 0) return LG_OK;
    lg_status st = LG_OK;
    size_t Ms = (size_t)M;
    /* stacked rows: C [M][n_out], d, lb [M], alpha, beta [M][size], ain [M][n_in], grp [M]; groups pb, ps [nb] */
    double *C = malloc((Ms * ((size_t)no + 2 + 2 * sz + (size_t)ni)) * sizeof *C);
    int *grp = malloc(Ms * sizeof *grp), *hn = malloc((size_t)nb * sizeof *hn); /* hn[q]: node of sensitivity row q */
    const lg_bounds **pb = malloc((size_t)nb * sizeof *pb);
    const signed char **ps = malloc((size_t)nb * sizeof *ps);
    if (!C || !grp || !hn || !pb || !ps) {
        st = lg_fail(LG_ERR_NOMEM, "bab: out of memory for a batch of %d rows", M);
        goto done;
    }
    double *d = C + Ms * (size_t)no, *lb = d + Ms, *al = lb + Ms, *be = al + Ms * sz, *ain = be + Ms * sz;
    int ng = 0; /* groups: the live nodes only (the others may have no bounds) */
    for (int i = 0, r0 = 0; i < nb; i++) {
        if (!w[i].live) continue;
        pb[ng] = &w[i].b;
        ps[ng] = nodes[i]->sign;
        lg_bab_scr *s = &w[i].s;
        size_t m = (size_t)w[i].m, R = (size_t)r0;
        memcpy(C + R * (size_t)no, s->C, m * (size_t)no * sizeof *C);
        memcpy(d + R, s->d, m * sizeof *d);
        memcpy(al + R * sz, s->alpha, m * sz * sizeof *al);
        if (beta) memcpy(be + R * sz, s->beta, m * sz * sizeof *be);
        for (size_t r = 0; r < m; r++) grp[R + r] = ng;
        r0 += (int)m;
        ng++;
    }
    lg_alpha_batch bt = {ng, pb, beta ? ps : NULL, grp, NULL, 0};
    if ((st = lg_alpha_optimize_batch(&bt, net, M, C, d, o->alpha_steps, o->alpha_lr, cx->run, al,
                                      beta ? be : NULL, lb, ain)) != LG_OK)
        goto done;
    /* scatter back, close, and gather the hardest row of each node still open */
    int H = 0, g = -1;
    for (int i = 0, r0 = 0; i < nb; i++) {
        if (!w[i].live) continue;
        g++; /* group of node i */
        lg_bab_scr *s = &w[i].s;
        size_t m = (size_t)w[i].m, R = (size_t)r0;
        memcpy(s->lb, lb + R, m * sizeof *lb);
        memcpy(s->ain, ain + R * (size_t)ni, m * (size_t)ni * sizeof *ain);
        memcpy(s->alpha, al + R * sz, m * sz * sizeof *al);
        if (beta) memcpy(s->beta, be + R * sz, m * sz * sizeof *be);
        r0 += (int)m;
        w[i].n_open = lg_bab_close(cx, nodes[i], s, w[i].m, &w[i].hard, &w[i].key);
        if (w[i].n_open == 0) {
            res[i].kind = LG_BK_CLOSED;
            w[i].live = 0;
            if (beta && lg_bab_cuts_on(cx) &&
                (st = lg_bab_cut_try(cx, cx->root_pre, nodes[i], w[i].m, s->rows, s->alpha, s->beta, o->cuts_mutant,
                                     &res[i].cut)) != LG_OK)
                goto done;
            continue;
        }
        w[i].n_open = lg_bab_open_terms(cx, nodes[i], s->open_terms);
        if (cx->mode != LG_BAB_RELU) continue;
        size_t h = (size_t)w[i].hard, q = (size_t)H++; /* row q of the sensitivity batch (q ≤ row of i) */
        memmove(C + q * (size_t)no, s->C + h * (size_t)no, (size_t)no * sizeof *C);
        d[q] = s->d[h];
        memmove(al + q * sz, s->alpha + h * sz, sz * sizeof *al);
        if (beta) memmove(be + q * sz, s->beta + h * sz, sz * sizeof *be);
        grp[q] = g;
        hn[q] = i;
    }
    if (H > 0) { /* sensitivities under the optimised slopes: one row per node */
        double *lm = malloc((size_t)H * sz * sizeof *lm);
        if (!lm) {
            st = lg_fail(LG_ERR_NOMEM, "bab: out of memory");
            goto done;
        }
        st = lg_alpha_bound_batch(&bt, net, H, C, d, al, beta ? be : NULL, lb, NULL, lm, NULL, NULL);
        for (int q = 0; q < H && st == LG_OK; q++) {
            lg_bab_work *wi = &w[hn[q]];
            memcpy(wi->s.lam + (size_t)wi->hard * sz, lm + (size_t)q * sz, sz * sizeof *lm);
        }
        free(lm);
    }
done:
    free(C);
    free(grp);
    free(hn);
    free(pb);
    free(ps);
    double dt = (lg_now() - t1) / n_live; /* the batch's time, shared by its nodes */
    for (int i = 0; i < nb; i++)
        if (w[i].in_alpha) res[i].t_bounds += dt;
    return st;
}

/* Few unstable ReLUs left: the back-end decision (backend.h) on the node.
 * Sets rs->kind CLOSED or FOUND (rs->x) when it decides; else leaves it. */
static lg_status lg_bab_solve(const lg_bab_ctx *cx, const lg_bab_node *n, const lg_bounds *b, lg_bab_scr *s,
                              int n_open, double *cand, lg_bab_res *rs)
{
    const lg_bab_opts *o = cx->o;
    if (o->solver_unstable <= 0 || o->solver.mode == LG_SOLVER_NONE || lg_bab_unstable(b, cx->net) > o->solver_unstable)
        return LG_OK;
    if (lg_net_has_max(cx->net)) return LG_OK; /* the back-ends take the ReLU form only: split on (bab.h) */
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
    lg_bab_split_in in = {.key = plain_key};
    if (cx->mode == LG_BAB_INPUT) {
        in.crow = cx->C + (size_t)split_crow * (size_t)cx->n_out;
    } else {
        in.lam = s->lam + (size_t)hard * (size_t)cx->size;
        in.crow = s->C + (size_t)hard * (size_t)cx->n_out;
        in.drow = s->d[hard];
        in.alpha = s->m_alpha > 0 ? s->alpha + (size_t)hard * (size_t)cx->size : NULL;
        in.beta = s->m_alpha > 0 && lg_bab_use_beta(cx) ? s->beta + (size_t)hard * (size_t)cx->size : NULL;
    }
    lg_status st = cx->strategy->split(cx, n, b, &in, &rs->c0, &rs->c1, &why);
    if (st != LG_OK) return st;
    if (rs->c0 && lg_bab_use_warm(cx) && s->m_alpha > 0) { /* warm start of the children */
        size_t sz = (size_t)cx->size;
        lg_bab_node *c[2] = {rs->c0, rs->c1};
        for (int i = 0; i < 2; i++) {
            c[i]->has_warm = 1;
            for (int r = 0; r < s->m_alpha; r++) {
                float *w = c[i]->warm + (size_t)s->rows[r] * 2 * sz;
                const double *al = s->alpha + (size_t)r * sz, *be = s->beta + (size_t)r * sz;
                for (size_t j = 0; j < sz; j++) {
                    w[j] = (float)al[j];
                    w[sz + j] = lg_bab_use_beta(cx) ? (float)be[j] : 0.0f;
                }
            }
        }
    }
    rs->kind = rs->c0 ? LG_BK_SPLIT : LG_BK_STUCK;
    if (!rs->c0) rs->why = why;
    return LG_OK;
}

/* Phase 1 of one node: bound with the plain slopes, close, falsify. Leaves
 * w->live = 1 when the node goes on to α-CROWN, the back-end, the split. */
static lg_status lg_bab_phase1(const lg_bab_ctx *cx, lg_bab_node *n, lg_bab_work *w, lg_bab_res *rs)
{
    memset(rs, 0, sizeof *rs);
    rs->kind = LG_BK_STUCK;
    rs->why = "not bounded";
    w->live = 0;
    if (lg_runctx_expired(cx->run)) {
        rs->why = "timeout"; /* left open: the driver reports the deadline */
        return LG_OK;
    }
    lg_status st = lg_bab_scr_init(&w->s, cx);
    if (st != LG_OK) return st;
    double t0 = lg_now();
    int empty = 0, found = 0;
    w->key = INFINITY;
    w->hard = -1;
    if ((st = lg_bounds_init(&w->b, cx->net)) != LG_OK) return st;
    w->b.run = cx->run; /* interrupted bounds: LG_ERR_TIMEOUT up to lg_bab_run */
    st = lg_bab_bound(cx, n, &w->b, &w->s, &w->m, &w->n_open, &w->hard, &w->key, &empty);
    rs->t_bounds = lg_now() - t0;
    if (st != LG_OK) return st;
    if (empty || w->n_open == 0) {
        rs->kind = LG_BK_CLOSED;
        return LG_OK;
    }
    w->n_open = lg_bab_open_terms(cx, n, w->s.open_terms);
    double *cand = w->s.y, *best = w->s.g;
    if ((st = lg_bab_falsify(cx, n, &w->s, w->m, w->n_open, cand, best, &found)) != LG_OK) return st;
    if (found) {
        rs->x = malloc((size_t)cx->n_in * sizeof *rs->x);
        if (!rs->x) return lg_fail(LG_ERR_NOMEM, "bab: out of memory");
        memcpy(rs->x, best, (size_t)cx->n_in * sizeof *rs->x);
        rs->kind = LG_BK_FOUND;
        return LG_OK;
    }
    /* the hardest row under the plain slopes chooses an input split */
    w->split_crow = w->s.rows[w->hard]; /* index into cx->C (s.rows is re-gathered later) */
    w->plain_key = w->key;
    rs->pkey = w->key;
    w->live = 1;
    return LG_OK;
}

/* A longer sub-domain attack (attack.h: `mult`× attack_steps, steered by
 * the node's splits) from the relaxed minimiser of the hardest row (all
 * open rows when every_row); a confirmed hit makes the node FOUND. Used on
 * the group's most promising node (lowest plain bound) and on nodes with
 * every ReLU fixed, which cannot be split any further. */
static lg_status lg_bab_deep_attack(const lg_bab_ctx *cx, lg_bab_node *n, lg_bab_work *w, lg_bab_res *rs, int mult,
                                    int every_row)
{
    const lg_net *net = cx->net;
    double *cand = w->s.y;
    int found = 0;
    lg_status st = LG_OK;
    for (int r = every_row ? 0 : w->hard; r < (every_row ? w->m : w->hard + 1) && !found && st == LG_OK; r++) {
        if (!n->open[w->s.rterm[r]]) continue;
        lg_bab_corner(cx, n, w->s.ain + (size_t)r * (size_t)cx->n_in, cand);
        st = lg_attack_subdomain(net, n->lo, n->hi, w->n_open, w->s.open_terms, cx->mode == LG_BAB_RELU ? n->sign : NULL,
                                 mult * cx->o->attack_steps, 0.1, cx->run, cand, &found);
    }
    if (st != LG_OK || !found) return st;
    int ok = lg_recheck(net, cx->lo, cx->hi, cx->n_terms, cx->terms, cand, NULL);
    if (ok < 0) return lg_fail(LG_ERR_NOMEM, "bab: out of memory in the re-check");
    if (!ok) return LG_OK;
    rs->x = malloc((size_t)cx->n_in * sizeof *rs->x);
    if (!rs->x) return lg_fail(LG_ERR_NOMEM, "bab: out of memory");
    memcpy(rs->x, cand, (size_t)cx->n_in * sizeof *rs->x);
    rs->kind = LG_BK_FOUND;
    w->live = 0;
    return LG_OK;
}

/* Phase 3 of one node: the back-end on small nodes, else the split. */
static lg_status lg_bab_phase3(const lg_bab_ctx *cx, lg_bab_node *n, lg_bab_work *w, lg_bab_res *rs)
{
    rs->key = w->key;
    lg_status st = lg_bab_solve(cx, n, &w->b, &w->s, w->n_open, w->s.y, rs);
    if (st != LG_OK || rs->kind == LG_BK_CLOSED || rs->kind == LG_BK_FOUND) return st;
    if (cx->mode == LG_BAB_RELU && cx->o->attack_steps > 0 && lg_bab_unstable(&w->b, cx->net) == 0) {
        /* a leaf: every ReLU fixed, nothing left to split — search its region hard first */
        if ((st = lg_bab_deep_attack(cx, n, w, rs, 20, 1)) != LG_OK || rs->kind == LG_BK_FOUND) return st;
    }
    return lg_bab_split(cx, n, &w->b, &w->s, w->split_crow, w->plain_key, w->hard, rs);
}

lg_status lg_bab_process_batch(const lg_bab_ctx *cx, lg_bab_node **nodes, int nb, lg_bab_res *res)
{
    lg_bab_work *w = calloc((size_t)(nb > 0 ? nb : 1), sizeof *w);
    if (!w) return lg_fail(LG_ERR_NOMEM, "bab: out of memory");
    lg_status st = LG_OK;
    for (int i = 0; i < nb && st == LG_OK; i++) st = lg_bab_phase1(cx, nodes[i], &w[i], &res[i]);
    int wi = -1; /* the group's most promising node: a longer attack on its sub-domain */
    for (int i = 0; i < nb; i++)
        if (w[i].live && (wi < 0 || w[i].key < w[wi].key)) wi = i;
    if (st == LG_OK && wi >= 0 && cx->o->attack_steps > 0 && cx->attack) st = lg_bab_deep_attack(cx, nodes[wi], &w[wi], &res[wi], 5, 0);
    if (st == LG_OK && cx->o->alpha_steps > 0) st = lg_bab_alpha_batch(cx, nodes, w, nb, res);
    for (int i = 0; i < nb && st == LG_OK; i++)
        if (w[i].live) st = lg_bab_phase3(cx, nodes[i], &w[i], &res[i]);
    for (int i = 0; i < nb; i++) {
        lg_bounds_free(&w[i].b);
        free(w[i].s.mem);
    }
    free(w);
    return st;
}
