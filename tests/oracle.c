/* oracle.c — random instances and the exact enumeration oracle (oracle.h). */
#include "oracle.h"

#include "xlp.h"

#include "core/linop.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- instances */

static double widen_lo(double v) { return v - 1e-9 * (1.0 + fabs(v)); }
static double widen_hi(double v) { return v + 1e-9 * (1.0 + fabs(v)); }

void lg_test_inst_bounds(lg_test_inst *in)
{
    const lg_net *net = &in->net;
    size_t nodes = lg_net_nodes_len(net);
    double *al = malloc(nodes * sizeof *al), *ah = malloc(nodes * sizeof *ah);
    LG_ASSERT(al && ah);
    int *ridx;
    double *rw;
    LG_ASSERT(lg_net_row_alloc(net, &ridx, &rw) == 0);
    for (int i = 0; i < net->n_in; i++) {
        double s = net->in_sub ? net->in_sub[i] : 0.0, d = net->in_div ? net->in_div[i] : 1.0;
        double p = (in->lo[i] - s) / d, q = (in->hi[i] - s) / d;
        al[i] = widen_lo(p < q ? p : q);
        ah[i] = widen_hi(p < q ? q : p);
    }
    for (int k = 0; k < net->n_layers; k++) {
        const lg_layer *L = &net->layers[k];
        size_t off = lg_net_node_offset(net, k);
        for (int o = 0; o < L->n_out; o++) {
            double lo = L->b[o], hi = L->b[o];
            if (L->lin.kind == LG_LAYER_MAX) { /* the window's largest ends */
                size_t so = lg_net_node_offset(net, L->lin.src);
                int nw = lg_max_window(&L->lin.conv, o, ridx);
                lo = hi = -INFINITY;
                for (int q = 0; q < nw; q++) {
                    lo = fmax(lo, al[so + (size_t)ridx[q]]);
                    hi = fmax(hi, ah[so + (size_t)ridx[q]]);
                }
            }
            for (int t = 0; t < lg_layer_n_lin(L) && L->lin.kind != LG_LAYER_MAX; t++) {
                const lg_linear *A = lg_layer_lin(L, t);
                size_t so = lg_net_node_offset(net, A->src);
                int nz = lg_linear_row_nz(A, o, ridx, rw);
                for (int e = 0; e < nz; e++) {
                    double wv = rw[e];
                    size_t i = (size_t)ridx[e];
                    lo += wv > 0 ? wv * al[so + i] : wv * ah[so + i];
                    hi += wv > 0 ? wv * ah[so + i] : wv * al[so + i];
                }
            }
            in->pre_lo[k][o] = widen_lo(lo);
            in->pre_hi[k][o] = widen_hi(hi);
        }
        for (int o = 0; o < L->n_out; o++) {
            double lo = in->pre_lo[k][o], hi = in->pre_hi[k][o];
            al[off + o] = L->act == LG_ACT_RELU ? (lo > 0 ? lo : 0.0) : lo;
            ah[off + o] = L->act == LG_ACT_RELU ? (hi > 0 ? hi : 0.0) : hi;
        }
    }
    free(ridx);
    free(rw);
    free(al);
    free(ah);
}

void lg_test_inst_free(lg_test_inst *in)
{
    if (in->pre_lo)
        for (int k = 0; k < in->net.n_layers; k++) free(in->pre_lo[k]);
    if (in->pre_hi)
        for (int k = 0; k < in->net.n_layers; k++) free(in->pre_hi[k]);
    free(in->pre_lo);
    free(in->pre_hi);
    for (int t = 0; t < in->n_terms && in->terms; t++) {
        for (int c = 0; c < in->terms[t].n_cons; c++) free(in->terms[t].cons[c].coef);
        free(in->terms[t].cons);
    }
    free(in->terms);
    free(in->lo);
    free(in->hi);
    lg_net_free(&in->net);
    memset(in, 0, sizeof *in);
}

static lg_lincon robust_con(int n_out, int label, int j, double margin)
{
    lg_lincon c;
    c.coef = calloc((size_t)n_out, sizeof *c.coef);
    LG_ASSERT(c.coef);
    c.coef[label] = 1.0;
    c.coef[j] = -1.0;
    c.d = -margin;
    return c;
}

lg_status lg_test_inst_random(lg_test_inst *in, lg_rng *r, const lg_test_shape *s)
{
    memset(in, 0, sizeof *in);
    lg_status st = lg_net_init(&in->net, s->n_layers, s->dims, LG_ACT_RELU);
    if (st) return st;
    lg_net *net = &in->net;
    for (int k = 0; k < net->n_layers; k++) {
        lg_layer *L = &net->layers[k];
        double sc = 1.0 / sqrt((double)L->lin.n_in);
        for (int i = 0; i < L->n_out * L->lin.n_in; i++) L->lin.W[i] = sc * lg_rng_normal(r);
        for (int i = 0; i < L->n_out; i++) L->b[i] = 0.3 * lg_rng_normal(r);
    }
    lg_test_inst_finish(in, r, s->box, s->normalise);
    return LG_OK;
}

lg_status lg_test_inst_random_dag(lg_test_inst *in, lg_rng *r, const lg_test_dag_opts *o)
{
    memset(in, 0, sizeof *in);
    lg_status st = lg_test_dag_random(&in->net, r, o);
    if (st) return st;
    lg_test_inst_finish(in, r, 0.05 + 0.6 * lg_rng_uniform(r), lg_rng_below(r, 3) == 0);
    return LG_OK;
}

void lg_test_inst_finish(lg_test_inst *in, lg_rng *r, double box, int normalise)
{
    lg_net *net = &in->net;
    int n_in = net->n_in, n_out = lg_net_n_out(net);
    in->lo = malloc((size_t)n_in * sizeof *in->lo);
    in->hi = malloc((size_t)n_in * sizeof *in->hi);
    double *x0 = malloc((size_t)n_in * sizeof *x0);
    double *y0 = malloc((size_t)n_out * sizeof *y0);
    double *scratch = malloc(2 * (size_t)lg_net_max_width(net) * sizeof *scratch);
    in->pre_lo = calloc((size_t)net->n_layers, sizeof *in->pre_lo);
    in->pre_hi = calloc((size_t)net->n_layers, sizeof *in->pre_hi);
    LG_ASSERT(in->lo && in->hi && x0 && y0 && scratch && in->pre_lo && in->pre_hi);
    for (int k = 0; k < net->n_layers; k++) {
        in->pre_lo[k] = malloc((size_t)net->layers[k].n_out * sizeof **in->pre_lo);
        in->pre_hi[k] = malloc((size_t)net->layers[k].n_out * sizeof **in->pre_hi);
        LG_ASSERT(in->pre_lo[k] && in->pre_hi[k]);
    }
    if (normalise) {
        net->in_sub = malloc((size_t)n_in * sizeof *net->in_sub);
        net->in_div = malloc((size_t)n_in * sizeof *net->in_div);
        LG_ASSERT(net->in_sub && net->in_div);
        for (int i = 0; i < n_in; i++) {
            net->in_sub[i] = 0.3 * lg_rng_normal(r);
            net->in_div[i] = 0.3 + 1.7 * lg_rng_uniform(r);
        }
    }
    double w = box * (0.5 + 0.5 * lg_rng_uniform(r));
    for (int i = 0; i < n_in; i++) {
        x0[i] = 2.0 * lg_rng_uniform(r) - 1.0;
        in->lo[i] = x0[i] - w;
        in->hi[i] = x0[i] + w;
    }
    lg_test_inst_bounds(in);
    lg_net_forward(net, x0, y0, scratch);
    int label = 0;
    for (int j = 1; j < n_out; j++)
        if (y0[j] > y0[label]) label = j;
    double gap = INFINITY;
    for (int j = 0; j < n_out; j++)
        if (j != label && y0[label] - y0[j] < gap) gap = y0[label] - y0[j];
    in->label = label;
    in->margin = gap * (1.0 - 2.5 * lg_rng_uniform(r)); /* κ ∈ (−1.5·gap, gap] */
    int conj = n_out >= 3 && lg_rng_below(r, 4) == 0;
    in->n_terms = conj ? 1 : n_out - 1;
    in->terms = calloc((size_t)in->n_terms, sizeof *in->terms);
    LG_ASSERT(in->terms);
    if (conj) {
        in->terms[0].n_cons = 2;
        in->terms[0].cons = calloc(2, sizeof *in->terms[0].cons);
        LG_ASSERT(in->terms[0].cons);
        int c = 0;
        for (int j = 0; j < n_out && c < 2; j++)
            if (j != label) in->terms[0].cons[c++] = robust_con(n_out, label, j, in->margin);
    } else {
        int t = 0;
        for (int j = 0; j < n_out; j++) {
            if (j == label) continue;
            in->terms[t].n_cons = 1;
            in->terms[t].cons = calloc(1, sizeof *in->terms[t].cons);
            LG_ASSERT(in->terms[t].cons);
            in->terms[t++].cons[0] = robust_con(n_out, label, j, in->margin);
        }
    }
    in->prob.net = net;
    in->prob.lo = in->lo;
    in->prob.hi = in->hi;
    in->prob.n_terms = in->n_terms;
    in->prob.terms = in->terms;
    in->prob.pre_lo = in->pre_lo;
    in->prob.pre_hi = in->pre_hi;
    free(x0);
    free(y0);
    free(scratch);
}

int lg_test_term_holds(const lg_problem *p, int t, const double *x, double tol)
{
    const lg_net *net = p->net;
    int n_out = lg_net_n_out(net);
    for (int i = 0; i < net->n_in; i++)
        if (!(x[i] >= p->lo[i] && x[i] <= p->hi[i])) return 0;
    double *y = malloc((size_t)n_out * sizeof *y), *s = malloc(2 * (size_t)lg_net_max_width(net) * sizeof *s);
    LG_ASSERT(y && s);
    lg_net_forward(net, x, y, s);
    int ok = 1;
    for (int c = 0; c < p->terms[t].n_cons; c++) {
        double v = p->terms[t].cons[c].d;
        for (int j = 0; j < n_out; j++) v += p->terms[t].cons[c].coef[j] * y[j];
        if (!(v <= tol)) ok = 0;
    }
    free(y);
    free(s);
    return ok;
}

int lg_test_any_term_holds(const lg_problem *p, const double *x, double tol)
{
    for (int t = 0; t < p->n_terms; t++)
        if (lg_test_term_holds(p, t, x, tol)) return 1;
    return 0;
}

/* ------------------------------------------------------------------- oracle */

enum { PH_ACTIVE, PH_INACTIVE, PH_UNFIXED };
enum { MODE_DECIDE, MODE_GAP };

/* Affine forms over the inputs: n+1 rationals, coefficients then constant. */
typedef struct orc {
    const lg_problem *p;
    const lg_net *net;    /* lg_net_densify of the problem's net: every term dense */
    lg_net dn;
    int *tb;              /* [n_layers] index of layer k's first term in W */
    int n, nv, mode;      /* inputs; LP variables (n, or n+1 with t in gap mode) */
    mpq_t *lo, *hi;       /* [nv] variable bounds (t free) */
    char *has_lo, *has_hi;
    mpq_t **W, **b;       /* [terms][n_out·n_in] (every term of every layer), [n_layers][n_out] */
    int *phase;           /* [n_neur] flat: stable phase or PH_UNFIXED */
    int n_unstable;
    mpq_t *in;            /* [n_in][n+1] normalised inputs */
    mpq_t **z, **a;       /* [n_layers][n_out][n+1] pre-activations, activations */
    mpq_t *stk;           /* [cap][nv+1] LP rows */
    mpq_t **rows;         /* [cap] pointers into stk */
    int n_rows, cap;
    mpq_t *obj, *xs, opt, tmp, tmp2;
    mpq_t *f;             /* [n+1] scratch form */
    lg_xlp lp;
    long n_lp;
    int sat, failed;      /* decide: a counterexample found; LP unbounded (gap without rows) */
    int have_best;        /* gap: best holds a value */
    mpq_t best;
    mpq_t *wit;           /* [nv] witness or minimiser */
} orc;

static mpq_t *arr(size_t n)
{
    mpq_t *a = malloc((n ? n : 1) * sizeof *a);
    LG_ASSERT(a);
    for (size_t i = 0; i < n; i++) mpq_init(a[i]);
    return a;
}

static void arr_free(mpq_t *a, size_t n)
{
    for (size_t i = 0; a && i < n; i++) mpq_clear(a[i]);
    free(a);
}

static size_t form_len(const orc *o) { return (size_t)o->n + 1; }

/* Push row sign·form (+ tcoef·t in gap mode) ≤ 0. */
static void push_form(orc *o, const mpq_t *form, int sign, int tcoef)
{
    LG_ASSERT(o->n_rows < o->cap);
    mpq_t *r = o->rows[o->n_rows++];
    for (int j = 0; j <= o->n; j++) {
        int dst = j < o->n ? j : o->nv;
        mpq_set(r[dst], form[j]);
        if (sign < 0) mpq_neg(r[dst], r[dst]);
    }
    if (o->nv > o->n) mpq_set_si(r[o->n], tcoef, 1);
}

/* Push coef·y + d (− t in gap mode) ≤ 0 for y the output forms. */
static void push_con(orc *o, const lg_lincon *c, const mpq_t *y, int n_out)
{
    size_t L = form_len(o);
    mpq_t *f = o->f;
    for (size_t i = 0; i < L; i++) mpq_set_ui(f[i], 0, 1);
    mpq_set_d(f[o->n], c->d);
    for (int j = 0; j < n_out; j++) {
        if (c->coef[j] == 0) continue;
        mpq_set_d(o->tmp2, c->coef[j]);
        for (size_t i = 0; i < L; i++) {
            mpq_mul(o->tmp, o->tmp2, y[(size_t)j * L + i]);
            mpq_add(f[i], f[i], o->tmp);
        }
    }
    push_form(o, f, 1, -1);
}

static lg_xlp_result orc_lp(orc *o, int minimise)
{
    o->n_lp++;
    return lg_xlp_solve(&o->lp, o->nv, o->lo, o->hi, o->has_lo, o->has_hi, o->n_rows, o->rows,
                        minimise ? o->obj : NULL, o->xs, o->opt);
}

/* z[k] = Σ_t W_t·a[src(t)] + b_k as forms (a[−1] = normalised inputs). */
static void layer_forms(orc *o, int k)
{
    const lg_layer *L = &o->net->layers[k];
    size_t F = form_len(o);
    for (int q = 0; q < L->n_out; q++) {
        mpq_t *zq = o->z[k] + (size_t)q * F;
        for (size_t i = 0; i < F; i++) mpq_set_ui(zq[i], 0, 1);
        mpq_set(zq[o->n], o->b[k][q]);
        for (int t = 0; t < lg_layer_n_lin(L); t++) {
            const lg_linear *A = lg_layer_lin(L, t);
            const mpq_t *prev = A->src < 0 ? o->in : o->a[A->src];
            for (int i = 0; i < A->n_in; i++) {
                const mpq_t *w = &o->W[o->tb[k] + t][(size_t)q * (size_t)A->n_in + (size_t)i];
                if (mpq_sgn(*w) == 0) continue;
                for (size_t j = 0; j < F; j++) {
                    mpq_mul(o->tmp, *w, prev[(size_t)i * F + j]);
                    mpq_add(zq[j], zq[j], o->tmp);
                }
            }
        }
    }
}

static void set_act(orc *o, int k, int q, int active)
{
    size_t F = form_len(o);
    for (size_t j = 0; j < F; j++) {
        if (active)
            mpq_set(o->a[k][(size_t)q * F + j], o->z[k][(size_t)q * F + j]);
        else
            mpq_set_ui(o->a[k][(size_t)q * F + j], 0, 1);
    }
}

static void keep_witness(orc *o)
{
    for (int j = 0; j < o->nv; j++) mpq_set(o->wit[j], o->xs[j]);
}

/* Every term on one complete pattern (outputs = a[last]). */
static void leaf(orc *o)
{
    const lg_problem *p = o->p;
    int last = o->net->n_layers - 1, n_out = lg_net_n_out(o->net);
    for (int t = 0; t < p->n_terms && !o->sat && !o->failed; t++) {
        int base = o->n_rows;
        for (int c = 0; c < p->terms[t].n_cons; c++) push_con(o, &p->terms[t].cons[c], o->a[last], n_out);
        lg_xlp_result r = orc_lp(o, o->mode == MODE_GAP);
        if (o->mode == MODE_DECIDE && r == LG_XLP_OPTIMAL) {
            o->sat = 1;
            keep_witness(o);
        } else if (o->mode == MODE_GAP && r == LG_XLP_UNBOUNDED) {
            o->failed = 1;
        } else if (o->mode == MODE_GAP && r == LG_XLP_OPTIMAL) {
            if (!o->have_best || mpq_cmp(o->opt, o->best) < 0) {
                mpq_set(o->best, o->opt);
                o->have_best = 1;
                keep_witness(o);
            }
        }
        o->n_rows = base;
    }
}

static void dfs(orc *o, int k, int q, int flat)
{
    if (o->sat || o->failed) return;
    const lg_layer *L = &o->net->layers[k];
    if (q == L->n_out) {
        if (k + 1 == o->net->n_layers) {
            leaf(o);
        } else {
            layer_forms(o, k + 1);
            dfs(o, k + 1, 0, flat);
        }
        return;
    }
    int ph = L->act == LG_ACT_RELU ? o->phase[flat] : PH_ACTIVE;
    if (ph != PH_UNFIXED) {
        set_act(o, k, q, ph == PH_ACTIVE);
        dfs(o, k, q + 1, flat + 1);
        return;
    }
    const mpq_t *zq = o->z[k] + (size_t)q * form_len(o);
    for (int active = 1; active >= 0 && !o->sat && !o->failed; active--) {
        push_form(o, zq, active ? -1 : 1, 0); /* active: −z ≤ 0; inactive: z ≤ 0 */
        if (orc_lp(o, 0) == LG_XLP_OPTIMAL) {
            set_act(o, k, q, active);
            dfs(o, k, q + 1, flat + 1);
        }
        o->n_rows--;
    }
}

/* Exact interval bounds [lo, hi] of the affine form f over the box. */
static void form_range(orc *o, const mpq_t *f, mpq_t lo, mpq_t hi)
{
    mpq_set(lo, f[o->n]);
    mpq_set(hi, f[o->n]);
    for (int j = 0; j < o->n; j++) {
        int s = mpq_sgn(f[j]);
        if (s == 0) continue;
        mpq_mul(o->tmp, f[j], s > 0 ? o->lo[j] : o->hi[j]);
        mpq_add(lo, lo, o->tmp);
        mpq_mul(o->tmp, f[j], s > 0 ? o->hi[j] : o->lo[j]);
        mpq_add(hi, hi, o->tmp);
    }
}

static int all_finite(const double *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(v[i])) return 0;
    return 1;
}

static void orc_free(orc *o)
{
    const lg_net *net = o->net;
    size_t F = form_len(o);
    for (int k = 0; net && k < net->n_layers; k++) {
        const lg_layer *L = &net->layers[k];
        for (int t = 0; o->W && o->tb && t < lg_layer_n_lin(L); t++)
            arr_free(o->W[o->tb[k] + t], (size_t)L->n_out * (size_t)lg_layer_lin(L, t)->n_in);
        if (o->b) arr_free(o->b[k], (size_t)L->n_out);
        if (o->z) arr_free(o->z[k], (size_t)L->n_out * F);
        if (o->a) arr_free(o->a[k], (size_t)L->n_out * F);
    }
    free(o->W);
    free(o->tb);
    free(o->b);
    free(o->z);
    free(o->a);
    arr_free(o->lo, (size_t)o->nv);
    arr_free(o->hi, (size_t)o->nv);
    free(o->has_lo);
    free(o->has_hi);
    free(o->phase);
    if (net) arr_free(o->in, (size_t)net->n_in * F);
    arr_free(o->stk, (size_t)o->cap * ((size_t)o->nv + 1));
    free(o->rows);
    arr_free(o->obj, (size_t)o->nv);
    arr_free(o->xs, (size_t)o->nv);
    arr_free(o->wit, (size_t)o->nv);
    mpq_clears(o->opt, o->tmp, o->tmp2, o->best, NULL);
    arr_free(o->f, form_len(o));
    lg_xlp_free(&o->lp);
    lg_net_free(&o->dn); /* last: o->net points to it, and the sizes above are read from it */
}

/* Everything up to the search: exact data, interval phases, row stack. */
static lg_status orc_init(orc *o, const lg_problem *p, int mode)
{
    memset(o, 0, sizeof *o);
    o->p = p;
    mpq_inits(o->opt, o->tmp, o->tmp2, o->best, NULL);
    lg_xlp_init(&o->lp);
    lg_net low = {0}; /* max-pool nodes: their exact ReLU form (core/net.h), densified */
    lg_status dst = lg_net_has_max(p->net) ? lg_net_lower_max(&low, p->net, 0) : LG_OK;
    if (dst == LG_OK) dst = lg_net_densify(&o->dn, low.n_layers ? &low : p->net, 0);
    lg_net_free(&low);
    if (dst != LG_OK) return dst;
    const lg_net *net = &o->dn;
    o->net = net;
    o->mode = mode;
    o->n = net->n_in;
    o->nv = net->n_in + (mode == MODE_GAP);
    size_t F = form_len(o);
    int n = o->n, n_neur = 0, max_cons = 0;
    for (int k = 0; k < net->n_layers; k++) n_neur += net->layers[k].n_out;
    for (int t = 0; t < p->n_terms; t++)
        if (p->terms[t].n_cons > max_cons) max_cons = p->terms[t].n_cons;
    o->lo = arr((size_t)o->nv);
    o->hi = arr((size_t)o->nv);
    o->has_lo = calloc((size_t)o->nv, 1);
    o->has_hi = calloc((size_t)o->nv, 1);
    o->phase = calloc((size_t)n_neur + 1, sizeof *o->phase);
    o->in = arr((size_t)n * F);
    o->W = calloc((size_t)(net->n_layers + net->n_terms), sizeof *o->W);
    o->tb = malloc((size_t)net->n_layers * sizeof *o->tb);
    LG_ASSERT(o->tb);
    for (int k = 0, g = 0; k < net->n_layers; g += lg_layer_n_lin(&net->layers[k]), k++) o->tb[k] = g;
    o->b = calloc((size_t)net->n_layers, sizeof *o->b);
    o->z = calloc((size_t)net->n_layers, sizeof *o->z);
    o->a = calloc((size_t)net->n_layers, sizeof *o->a);
    o->cap = n_neur + max_cons + 1;
    o->stk = arr((size_t)o->cap * ((size_t)o->nv + 1));
    o->rows = calloc((size_t)o->cap, sizeof *o->rows);
    o->obj = arr((size_t)o->nv);
    o->xs = arr((size_t)o->nv);
    o->wit = arr((size_t)o->nv);
    o->f = arr(F);
    LG_ASSERT(o->has_lo && o->has_hi && o->phase && o->W && o->b && o->z && o->a && o->rows);
    for (int r = 0; r < o->cap; r++) o->rows[r] = o->stk + (size_t)r * ((size_t)o->nv + 1);
    if (mode == MODE_GAP) mpq_set_ui(o->obj[n], 1, 1); /* minimise t */
    for (int k = 0; k < net->n_layers; k++) {
        const lg_layer *L = &net->layers[k];
        for (int t = 0; t < lg_layer_n_lin(L); t++) {
            const lg_linear *A = lg_layer_lin(L, t);
            size_t nw = (size_t)L->n_out * (size_t)A->n_in;
            o->W[o->tb[k] + t] = arr(nw);
            if (!all_finite(A->W, nw)) return lg_fail(LG_ERR_ARG, "oracle: layer %d has a non-finite parameter", k);
            for (size_t i = 0; i < nw; i++) mpq_set_d(o->W[o->tb[k] + t][i], A->W[i]);
        }
        o->b[k] = arr((size_t)L->n_out);
        o->z[k] = arr((size_t)L->n_out * F);
        o->a[k] = arr((size_t)L->n_out * F);
        if (L->act != LG_ACT_RELU && L->act != LG_ACT_IDENTITY)
            return lg_fail(LG_ERR_UNSUPPORTED, "oracle: layer %d is not relu/identity", k);
        if (!all_finite(L->b, (size_t)L->n_out))
            return lg_fail(LG_ERR_ARG, "oracle: layer %d has a non-finite parameter", k);
        for (int i = 0; i < L->n_out; i++) mpq_set_d(o->b[k][i], L->b[i]);
    }
    if (!all_finite(p->lo, (size_t)n) || !all_finite(p->hi, (size_t)n))
        return lg_fail(LG_ERR_ARG, "oracle: non-finite box");
    for (int t = 0; t < p->n_terms; t++)
        for (int c = 0; c < p->terms[t].n_cons; c++)
            if (!all_finite(p->terms[t].cons[c].coef, (size_t)lg_net_n_out(net)) || !isfinite(p->terms[t].cons[c].d))
                return lg_fail(LG_ERR_ARG, "oracle: non-finite property constant");
    for (int j = 0; j < n; j++) {
        o->has_lo[j] = o->has_hi[j] = 1;
        mpq_set_d(o->lo[j], p->lo[j]);
        mpq_set_d(o->hi[j], p->hi[j]);
        /* normalised input (x − sub)/div as a form */
        double sub = net->in_sub ? net->in_sub[j] : 0.0, div = net->in_div ? net->in_div[j] : 1.0;
        if (!isfinite(sub) || !isfinite(div) || div == 0)
            return lg_fail(LG_ERR_ARG, "oracle: bad normalisation of input %d", j);
        mpq_t *f = o->in + (size_t)j * F;
        mpq_set_d(o->tmp, div);
        mpq_inv(f[j], o->tmp);
        mpq_set_d(f[n], -sub);
        mpq_mul(f[n], f[n], f[j]);
    }
    /* exact interval bounds → stable phases */
    mpq_t zl, zh;
    mpq_inits(zl, zh, NULL);
    size_t W_ = lg_net_nodes_len(net);
    mpq_t *al = arr(W_), *ah = arr(W_);
    for (int j = 0; j < n; j++) form_range(o, o->in + (size_t)j * F, al[j], ah[j]);
    int flat = 0;
    for (int k = 0; k < net->n_layers; k++) {
        const lg_layer *L = &net->layers[k];
        mpq_t *nl = al + lg_net_node_offset(net, k), *nh = ah + lg_net_node_offset(net, k);
        for (int q = 0; q < L->n_out; q++, flat++) {
            mpq_set(zl, o->b[k][q]);
            mpq_set(zh, o->b[k][q]);
            for (int t = 0; t < lg_layer_n_lin(L); t++) {
                const lg_linear *A = lg_layer_lin(L, t);
                size_t so = lg_net_node_offset(net, A->src);
                for (int i = 0; i < A->n_in; i++) {
                    const mpq_t *w = &o->W[o->tb[k] + t][(size_t)q * (size_t)A->n_in + (size_t)i];
                    int s = mpq_sgn(*w);
                    if (s == 0) continue;
                    mpq_mul(o->tmp, *w, s > 0 ? al[so + i] : ah[so + i]);
                    mpq_add(zl, zl, o->tmp);
                    mpq_mul(o->tmp, *w, s > 0 ? ah[so + i] : al[so + i]);
                    mpq_add(zh, zh, o->tmp);
                }
            }
            int ph = PH_ACTIVE;
            if (L->act == LG_ACT_RELU) {
                ph = mpq_sgn(zh) <= 0 ? PH_INACTIVE : mpq_sgn(zl) >= 0 ? PH_ACTIVE : PH_UNFIXED;
                if (ph == PH_UNFIXED) o->n_unstable++;
            }
            o->phase[flat] = ph;
            mpq_set(nl[q], zl);
            mpq_set(nh[q], zh);
            if (ph == PH_INACTIVE || (L->act == LG_ACT_RELU && mpq_sgn(nl[q]) < 0)) mpq_set_ui(nl[q], 0, 1);
            if (ph == PH_INACTIVE) mpq_set_ui(nh[q], 0, 1);
        }
    }
    arr_free(al, W_);
    arr_free(ah, W_);
    mpq_clears(zl, zh, NULL);
    if (o->n_unstable > LG_ORACLE_MAX_UNSTABLE)
        return lg_fail(LG_ERR_ARG, "oracle: %d unstable neurons (at most %d)", o->n_unstable,
                       LG_ORACLE_MAX_UNSTABLE);
    return LG_OK;
}

/* Run the search; the box itself is the first LP (always feasible when
 * lo ≤ hi; an empty box has no counterexample). */
static void orc_run(orc *o)
{
    if (o->p->n_terms == 0) return;
    for (int j = 0; j < o->n; j++)
        if (mpq_cmp(o->lo[j], o->hi[j]) > 0) return;
    layer_forms(o, 0);
    dfs(o, 0, 0, 0);
}

lg_status lg_oracle_decide(const lg_problem *p, lg_answer *answer, mpq_t *x, long *n_lp)
{
    orc o;
    lg_status st = orc_init(&o, p, MODE_DECIDE);
    if (st == LG_OK) {
        orc_run(&o);
        *answer = o.sat ? LG_ANSWER_SAT : LG_ANSWER_UNSAT;
        if (o.sat && x)
            for (int j = 0; j < o.n; j++) mpq_set(x[j], o.wit[j]);
    }
    if (n_lp) *n_lp = o.n_lp;
    orc_free(&o);
    return st;
}

lg_status lg_oracle_solve(const lg_problem *p, lg_answer *answer, double *x, long *n_lp)
{
    int n = p->net->n_in;
    mpq_t *xq = arr((size_t)n);
    lg_status st = lg_oracle_decide(p, answer, xq, n_lp);
    if (st == LG_OK && *answer == LG_ANSWER_SAT && x)
        for (int j = 0; j < n; j++) x[j] = mpq_get_d(xq[j]);
    arr_free(xq, (size_t)n);
    return st;
}

lg_status lg_oracle_gap(const lg_problem *p, mpq_t gap, mpq_t *x, long *n_lp)
{
    for (int t = 0; t < p->n_terms; t++)
        if (p->terms[t].n_cons < 1) return lg_fail(LG_ERR_ARG, "oracle: term %d has no constraint", t);
    if (p->n_terms < 1) return lg_fail(LG_ERR_ARG, "oracle: no term");
    orc o;
    lg_status st = orc_init(&o, p, MODE_GAP);
    if (st == LG_OK) {
        orc_run(&o);
        if (o.failed || !o.have_best)
            st = lg_fail(LG_ERR_SOLVER, "oracle: gap LP %s", o.failed ? "unbounded" : "had no feasible pattern");
    }
    if (st == LG_OK) {
        mpq_set(gap, o.best);
        if (x)
            for (int j = 0; j < o.n; j++) mpq_set(x[j], o.wit[j]);
    }
    if (n_lp) *n_lp = o.n_lp;
    orc_free(&o);
    return st;
}

void lg_oracle_forward(const lg_net *net, const mpq_t *x, mpq_t *y)
{
    size_t nodes = lg_net_nodes_len(net);
    mpq_t *val = arr(nodes), t, v;
    mpq_inits(t, v, NULL);
    for (int i = 0; i < net->n_in; i++) {
        mpq_set(val[i], x[i]);
        if (net->in_sub) {
            mpq_set_d(t, net->in_sub[i]);
            mpq_sub(val[i], val[i], t);
        }
        if (net->in_div) {
            mpq_set_d(t, net->in_div[i]);
            mpq_div(val[i], val[i], t);
        }
    }
    double *row = malloc(((size_t)lg_net_max_width(net) + 1) * sizeof *row);
    LG_ASSERT(row);
    for (int k = 0; k < net->n_layers; k++) {
        const lg_layer *L = &net->layers[k];
        mpq_t *out = val + lg_net_node_offset(net, k);
        for (int q = 0; q < L->n_out; q++) {
            mpq_set_d(v, L->b[q]);
            for (int tt = 0; tt < lg_layer_n_lin(L); tt++) {
                const lg_linear *A = lg_layer_lin(L, tt);
                const mpq_t *in = val + lg_net_node_offset(net, A->src);
                const double *w = lg_linear_row(A, q, row);
                for (int i = 0; i < A->n_in; i++) {
                    if (w[i] == 0.0) continue;
                    mpq_set_d(t, w[i]);
                    mpq_mul(t, t, in[i]);
                    mpq_add(v, v, t);
                }
            }
            if (L->act == LG_ACT_RELU && mpq_sgn(v) < 0) mpq_set_ui(v, 0, 1);
            mpq_set(out[q], v);
        }
    }
    const mpq_t *last = val + lg_net_node_offset(net, net->n_layers - 1);
    for (int j = 0; j < lg_net_n_out(net); j++) mpq_set(y[j], last[j]);
    free(row);
    arr_free(val, nodes);
    mpq_clears(t, v, NULL);
}

int lg_oracle_is_counterexample(const lg_problem *p, const double *x) { return lg_oracle_is_counterexample_k(p, x, 0.0); }

int lg_oracle_is_counterexample_k(const lg_problem *p, const double *x, double K)
{
    const lg_net *net = p->net;
    int n = net->n_in, n_out = lg_net_n_out(net), hit = 0;
    for (int i = 0; i < n; i++)
        if (!(x[i] >= p->lo[i] && x[i] <= p->hi[i])) return 0;
    mpq_t *xq = arr((size_t)n), *y = arr((size_t)n_out), v, t;
    mpq_inits(v, t, NULL);
    for (int i = 0; i < n; i++) mpq_set_d(xq[i], x[i]);
    lg_oracle_forward(net, xq, y);
    for (int k = 0; k < p->n_terms && !hit; k++) {
        int ok = 1;
        for (int c = 0; c < p->terms[k].n_cons && ok; c++) {
            const lg_lincon *C = &p->terms[k].cons[c];
            mpq_set_d(v, C->d);
            mpq_set_d(t, K);
            mpq_sub(v, v, t);
            for (int j = 0; j < n_out; j++) {
                mpq_set_d(t, C->coef[j]);
                mpq_mul(t, t, y[j]);
                mpq_add(v, v, t);
            }
            ok = mpq_sgn(v) <= 0;
        }
        hit = ok;
    }
    arr_free(xq, (size_t)n);
    arr_free(y, (size_t)n_out);
    mpq_clears(v, t, NULL);
    return hit;
}

lg_test_shape lg_test_shape_small(lg_rng *r)
{
    lg_test_shape s;
    memset(&s, 0, sizeof s);
    int hidden = 1 + (int)lg_rng_below(r, 2);
    s.n_layers = hidden + 1;
    s.dims[0] = 2 + (int)lg_rng_below(r, 3);
    for (int k = 1; k <= hidden; k++) s.dims[k] = 3 + (int)lg_rng_below(r, 4);
    s.dims[hidden + 1] = 2 + (int)lg_rng_below(r, 2);
    s.box = 0.05 + 0.6 * lg_rng_uniform(r);
    s.normalise = lg_rng_below(r, 3) == 0;
    return s;
}

const char *lg_test_answer_name(lg_answer a)
{
    return a == LG_ANSWER_SAT ? "sat" : a == LG_ANSWER_UNSAT ? "unsat" : "unknown";
}

double lg_test_pgd_deviation(const lg_net *rn, const lg_net *ref, int j, const double *lo, const double *hi,
                             double *x, int steps, double a0, double *yr, double *yg, double *scratch)
{
    const int n = rn->n_in;
    double g[64], t[64];
#define LG_DEV_J(p) (lg_net_forward(rn, (p), yr, scratch), lg_net_forward(ref, (p), yg, scratch), fabs(yr[j] - yg[j]))
    double best = LG_DEV_J(x);
    for (int step = 0; step < steps; step++) {
        memcpy(t, x, (size_t)n * sizeof *t);
        for (int i = 0; i < n; i++) {
            double h = 1e-7 * (hi[i] - lo[i] + 1e-300);
            t[i] = fmin(hi[i], x[i] + h);
            double up = LG_DEV_J(t);
            t[i] = fmax(lo[i], x[i] - h);
            double dn = LG_DEV_J(t);
            t[i] = x[i];
            g[i] = up - dn;
        }
        double a = a0 * pow(0.9, step);
        for (int i = 0; i < n; i++)
            t[i] = fmin(hi[i], fmax(lo[i], x[i] + a * (hi[i] - lo[i]) * (g[i] > 0 ? 1.0 : g[i] < 0 ? -1.0 : 0.0)));
        double v = LG_DEV_J(t);
        if (v > best) {
            best = v;
            memcpy(x, t, (size_t)n * sizeof *t);
        }
    }
#undef LG_DEV_J
    return best;
}
