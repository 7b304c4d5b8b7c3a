/* oracle.c — random instances and the exact enumeration oracle (oracle.h). */
#include "oracle.h"

#include <glpk.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- instances */

static double widen_lo(double v) { return v - 1e-9 * (1.0 + fabs(v)); }
static double widen_hi(double v) { return v + 1e-9 * (1.0 + fabs(v)); }

void lg_test_inst_bounds(lg_test_inst *in)
{
    const lg_net *net = &in->net;
    int w = lg_net_max_width(net);
    double *al = malloc((size_t)w * sizeof *al), *ah = malloc((size_t)w * sizeof *ah);
    LG_ASSERT(al && ah);
    for (int i = 0; i < net->n_in; i++) {
        double s = net->in_sub ? net->in_sub[i] : 0.0, d = net->in_div ? net->in_div[i] : 1.0;
        double p = (in->lo[i] - s) / d, q = (in->hi[i] - s) / d;
        al[i] = widen_lo(p < q ? p : q);
        ah[i] = widen_hi(p < q ? q : p);
    }
    for (int k = 0; k < net->n_layers; k++) {
        const lg_layer *L = &net->layers[k];
        for (int o = 0; o < L->n_out; o++) {
            double lo = L->b[o], hi = L->b[o];
            for (int i = 0; i < L->n_in; i++) {
                double wv = L->W[(size_t)o * (size_t)L->n_in + (size_t)i];
                lo += wv > 0 ? wv * al[i] : wv * ah[i];
                hi += wv > 0 ? wv * ah[i] : wv * al[i];
            }
            in->pre_lo[k][o] = widen_lo(lo);
            in->pre_hi[k][o] = widen_hi(hi);
        }
        for (int o = 0; o < L->n_out; o++) {
            double lo = in->pre_lo[k][o], hi = in->pre_hi[k][o];
            al[o] = L->act == LG_ACT_RELU ? (lo > 0 ? lo : 0.0) : lo;
            ah[o] = L->act == LG_ACT_RELU ? (hi > 0 ? hi : 0.0) : hi;
        }
    }
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
    int n_in = net->n_in, n_out = lg_net_n_out(net);
    for (int k = 0; k < net->n_layers; k++) {
        lg_layer *L = &net->layers[k];
        double sc = 1.0 / sqrt((double)L->n_in);
        for (int i = 0; i < L->n_out * L->n_in; i++) L->W[i] = sc * lg_rng_normal(r);
        for (int i = 0; i < L->n_out; i++) L->b[i] = 0.3 * lg_rng_normal(r);
    }
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
    if (s->normalise) {
        net->in_sub = malloc((size_t)n_in * sizeof *net->in_sub);
        net->in_div = malloc((size_t)n_in * sizeof *net->in_div);
        LG_ASSERT(net->in_sub && net->in_div);
        for (int i = 0; i < n_in; i++) {
            net->in_sub[i] = 0.3 * lg_rng_normal(r);
            net->in_div[i] = 0.3 + 1.7 * lg_rng_uniform(r);
        }
    }
    double w = s->box * (0.5 + 0.5 * lg_rng_uniform(r));
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
    return LG_OK;
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

/* GLPK's glp_exact reads every non-integral double through a continued
 * fraction with relative error up to 1e-9 (glpapi07.c, set_d_eps); integral
 * doubles are read exactly. So every row is scaled by a power of two that
 * makes all its coefficients and its right-hand side integers (exact in
 * double), and every column bound is 0 or absent (bounds live in rows). */
static int int_shift(double v)
{
    int s = 0;
    while (ldexp(v, s) != floor(ldexp(v, s))) s++;
    return s;
}

/* Power-of-two factor making val[1..n] and rhs integral. */
static double row_scale(int n, const double *val, double rhs)
{
    int s = int_shift(rhs);
    for (int j = 1; j <= n; j++) {
        int t = int_shift(val[j]);
        if (t > s) s = t;
    }
    double f = ldexp(1.0, s);
    LG_ASSERT(isfinite(f) && isfinite(f * fabs(rhs)));
    return f;
}

/* Add row Σ val·col (type, rhs) scaled to integers; returns its index and
 * the factor in *scale. */
static int add_int_row(glp_prob *P, int n, const int *ind, double *val, int type, double rhs, double *scale)
{
    double f = row_scale(n, val, rhs);
    for (int j = 1; j <= n; j++) val[j] *= f;
    int row = glp_add_rows(P, 1);
    glp_set_mat_row(P, row, n, ind, val);
    glp_set_row_bnds(P, row, type, f * rhs, f * rhs);
    if (scale) *scale = f;
    return row;
}

typedef struct orc {
    glp_prob *P;
    const lg_problem *p;
    int *zc, *ac, *arow; /* per neuron (flat index): z column, a column (0 if identity), a − z row */
    int *unstable;       /* flat indices of unstable neurons */
    int n_unstable;
    int *trow;           /* [n_terms] first row of each term */
    double **tscale;     /* [n_terms][n_cons] integer scaling of each term row */
    long n_lp;
    int failed;
    int sat;
    double *x;
} orc;

static void orc_phase(orc *o, int n, int ph)
{
    glp_prob *P = o->P;
    if (ph == PH_ACTIVE) { /* a = z, z ≥ 0 */
        glp_set_col_bnds(P, o->zc[n], GLP_LO, 0.0, 0.0);
        glp_set_col_bnds(P, o->ac[n], GLP_FR, 0.0, 0.0);
        glp_set_row_bnds(P, o->arow[n], GLP_FX, 0.0, 0.0);
    } else if (ph == PH_INACTIVE) { /* a = 0, z ≤ 0 */
        glp_set_col_bnds(P, o->zc[n], GLP_UP, 0.0, 0.0);
        glp_set_col_bnds(P, o->ac[n], GLP_FX, 0.0, 0.0);
        glp_set_row_bnds(P, o->arow[n], GLP_FR, 0.0, 0.0);
    } else { /* relaxation: a ≥ 0, a ≥ z */
        glp_set_col_bnds(P, o->zc[n], GLP_FR, 0.0, 0.0);
        glp_set_col_bnds(P, o->ac[n], GLP_LO, 0.0, 0.0);
        glp_set_row_bnds(P, o->arow[n], GLP_LO, 0.0, 0.0);
    }
}

static void orc_term(orc *o, int t, int on)
{
    const lg_term *T = &o->p->terms[t];
    for (int c = 0; c < T->n_cons; c++)
        glp_set_row_bnds(o->P, o->trow[t] + c, on ? GLP_UP : GLP_FR, 0.0, on ? -T->cons[c].d * o->tscale[t][c] : 0.0);
}

/* Exact feasibility of the current LP. */
static int orc_feasible(orc *o)
{
    glp_smcp sm;
    glp_init_smcp(&sm);
    sm.msg_lev = GLP_MSG_OFF;
    o->n_lp++;
    if (glp_simplex(o->P, &sm) != 0) glp_std_basis(o->P);
    if (glp_exact(o->P, &sm) != 0) {
        glp_std_basis(o->P);
        if (glp_exact(o->P, &sm) != 0) {
            o->failed = 1;
            return 0;
        }
    }
    int s = glp_get_status(o->P);
    if (s != GLP_OPT && s != GLP_NOFEAS) o->failed = 1;
    return s == GLP_OPT;
}

static void orc_dfs(orc *o, int d)
{
    if (o->sat || o->failed || !orc_feasible(o)) return;
    if (d == o->n_unstable) {
        for (int t = 0; t < o->p->n_terms && !o->sat && !o->failed; t++) {
            orc_term(o, t, 1);
            if (orc_feasible(o)) {
                o->sat = 1;
                for (int i = 0; i < o->p->net->n_in; i++) o->x[i] = glp_get_col_prim(o->P, i + 1);
            }
            orc_term(o, t, 0);
        }
        return;
    }
    for (int ph = PH_ACTIVE; ph <= PH_INACTIVE && !o->sat && !o->failed; ph++) {
        orc_phase(o, o->unstable[d], ph);
        orc_dfs(o, d + 1);
    }
    orc_phase(o, o->unstable[d], PH_UNFIXED);
}

lg_status lg_oracle_solve(const lg_problem *p, lg_answer *answer, double *x, long *n_lp)
{
    const lg_net *net = p->net;
    int n_in = net->n_in, n_neur = 0, n_out = lg_net_n_out(net), width = lg_net_max_width(net);
    for (int k = 0; k < net->n_layers; k++) {
        if (net->layers[k].act != LG_ACT_RELU && net->layers[k].act != LG_ACT_IDENTITY)
            return lg_fail(LG_ERR_UNSUPPORTED, "oracle: layer %d is not relu/identity", k);
        n_neur += net->layers[k].n_out;
    }
    orc o;
    memset(&o, 0, sizeof o);
    o.p = p;
    o.zc = calloc((size_t)n_neur, sizeof *o.zc);
    o.ac = calloc((size_t)n_neur, sizeof *o.ac);
    o.arow = calloc((size_t)n_neur, sizeof *o.arow);
    o.unstable = calloc((size_t)n_neur, sizeof *o.unstable);
    o.trow = calloc((size_t)p->n_terms + 1, sizeof *o.trow);
    o.tscale = calloc((size_t)p->n_terms + 1, sizeof *o.tscale);
    o.x = calloc((size_t)n_in, sizeof *o.x);
    int *prev = calloc((size_t)width, sizeof *prev), *cur = calloc((size_t)width, sizeof *cur);
    int *ind = calloc((size_t)width + 2, sizeof *ind);
    double *val = calloc((size_t)width + 2, sizeof *val);
    LG_ASSERT(o.zc && o.ac && o.arow && o.unstable && o.trow && o.tscale && o.x && prev && cur && ind && val);
    lg_status st = LG_OK;
    glp_term_out(GLP_OFF);
    glp_prob *P = o.P = glp_create_prob();
    /* inputs (columns 1..n_in, free; the box as two integer-scaled rows)
     * and normalisation div·xn − x = −sub */
    glp_add_cols(P, n_in);
    for (int i = 0; i < n_in; i++) {
        glp_set_col_bnds(P, i + 1, GLP_FR, 0, 0);
        ind[1] = i + 1, val[1] = 1.0;
        add_int_row(P, 1, ind, val, GLP_LO, p->lo[i], NULL);
        val[1] = 1.0;
        add_int_row(P, 1, ind, val, GLP_UP, p->hi[i], NULL);
        prev[i] = i + 1;
        if (net->in_sub || net->in_div) {
            int c = glp_add_cols(P, 1);
            glp_set_col_bnds(P, c, GLP_FR, 0, 0);
            ind[1] = c, val[1] = net->in_div ? net->in_div[i] : 1.0;
            ind[2] = i + 1, val[2] = -1.0;
            add_int_row(P, 2, ind, val, GLP_FX, net->in_sub ? -net->in_sub[i] : 0.0, NULL);
            prev[i] = c;
        }
    }
    int flat = 0;
    for (int k = 0; k < net->n_layers; k++) {
        const lg_layer *L = &net->layers[k];
        for (int q = 0; q < L->n_out; q++, flat++) {
            int z = glp_add_cols(P, 1), n = 0;
            glp_set_col_bnds(P, z, GLP_FR, 0, 0);
            ind[++n] = z, val[n] = 1.0;
            for (int i = 0; i < L->n_in; i++) {
                double wv = L->W[(size_t)q * (size_t)L->n_in + (size_t)i];
                if (wv == 0) continue;
                ind[++n] = prev[i], val[n] = -wv;
            }
            add_int_row(P, n, ind, val, GLP_FX, L->b[q], NULL);
            o.zc[flat] = z;
            cur[q] = z;
            if (L->act == LG_ACT_RELU) {
                int a = glp_add_cols(P, 1), ar = glp_add_rows(P, 1);
                ind[1] = a, val[1] = 1.0, ind[2] = z, val[2] = -1.0;
                glp_set_mat_row(P, ar, 2, ind, val);
                o.ac[flat] = a;
                o.arow[flat] = ar;
                cur[q] = a;
                double l = p->pre_lo[k][q], u = p->pre_hi[k][q];
                if (u <= 0)
                    orc_phase(&o, flat, PH_INACTIVE);
                else if (l >= 0)
                    orc_phase(&o, flat, PH_ACTIVE);
                else {
                    orc_phase(&o, flat, PH_UNFIXED);
                    o.unstable[o.n_unstable++] = flat;
                }
            }
        }
        int *t = prev;
        prev = cur;
        cur = t;
    }
    if (o.n_unstable > LG_ORACLE_MAX_UNSTABLE) {
        st = lg_fail(LG_ERR_ARG, "oracle: %d unstable neurons (at most %d)", o.n_unstable, LG_ORACLE_MAX_UNSTABLE);
        goto fail;
    }
    for (int t = 0; t < p->n_terms; t++) {
        const lg_term *T = &p->terms[t];
        o.tscale[t] = calloc((size_t)T->n_cons + 1, sizeof **o.tscale);
        LG_ASSERT(o.tscale[t]);
        for (int c = 0; c < T->n_cons; c++) {
            int n = 0;
            for (int j = 0; j < n_out; j++)
                if (T->cons[c].coef[j] != 0) ind[++n] = prev[j], val[n] = T->cons[c].coef[j];
            int row = add_int_row(P, n, ind, val, GLP_FR, -T->cons[c].d, &o.tscale[t][c]);
            if (c == 0) o.trow[t] = row;
        }
        orc_term(&o, t, 0);
    }
    glp_scale_prob(P, GLP_SF_AUTO); /* helps the float simplex that finds a starting basis */
    if (p->n_terms > 0) orc_dfs(&o, 0);
    if (o.failed) {
        st = lg_fail(LG_ERR_SOLVER, "oracle: GLPK exact simplex failed");
        goto fail;
    }
    *answer = o.sat ? LG_ANSWER_SAT : LG_ANSWER_UNSAT;
    if (o.sat && x) memcpy(x, o.x, (size_t)n_in * sizeof *x);
fail:
    if (n_lp) *n_lp = o.n_lp;
    glp_delete_prob(P);
    free(o.zc);
    free(o.ac);
    free(o.arow);
    free(o.unstable);
    free(o.trow);
    for (int t = 0; t < p->n_terms && o.tscale; t++) free(o.tscale[t]);
    free(o.tscale);
    free(o.x);
    free(prev);
    free(cur);
    free(ind);
    free(val);
    return st;
}
