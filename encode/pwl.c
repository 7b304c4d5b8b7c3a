/* pwl.c — validation and neuron phases shared by the back-ends (pwl.h). */
#include "encode/pwl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/linop.h"
#include "core/traverse.h"

static int all_finite(const double *v, int n)
{
    for (int i = 0; i < n; i++)
        if (!isfinite(v[i])) return 0;
    return 1;
}

lg_status lg_pwl_supports(const lg_problem *p)
{
    if (!p || !p->net) return lg_fail(LG_ERR_ARG, "problem: no network");
    const lg_net *net = p->net;
    if (lg_net_first_tnode(net) >= 0 && p->trelax) { /* Transformer nodes: encoded by their relaxation */
        if (lg_net_has_max(net))
            return lg_fail(LG_ERR_UNSUPPORTED, "the encoders do not take max-pool and Transformer nodes in one network");
        return lg_trelax_check(p->trelax, lg_net_nodes_len(net));
    }
    if (lg_net_require_no_max(net, "the encoders (encode lg_net_lower_max's exact ReLU form)") != LG_OK)
        return LG_ERR_UNSUPPORTED;
    return LG_OK;
}

lg_status lg_pwl_validate(const lg_problem *p)
{
    lg_status st = lg_pwl_supports(p);
    if (st != LG_OK) return st;
    const lg_net *net = p->net;
    if (net->n_layers < 1 || !net->layers) return lg_fail(LG_ERR_ARG, "problem: network has no layers");
    for (int k = 0; k < net->n_layers; k++) {
        lg_act a = net->layers[k].act;
        if (a != LG_ACT_IDENTITY && a != LG_ACT_RELU) {
            const char *nm = lg_act_name(a);
            return lg_fail(LG_ERR_UNSUPPORTED, "layer %d: activation '%s' is not supported by the solver back-ends "
                           "(identity or relu only; substitute ReLU first)", k, nm ? nm : "?");
        }
    }
    if ((st = lg_net_validate(net)) != LG_OK) return st;
    int n_in = net->n_in, n_out = lg_net_n_out(net);
    if (net->in_sub && !all_finite(net->in_sub, n_in)) return lg_fail(LG_ERR_ARG, "problem: in_sub not finite");
    if (net->in_div) {
        for (int i = 0; i < n_in; i++)
            if (!isfinite(net->in_div[i]) || net->in_div[i] == 0)
                return lg_fail(LG_ERR_ARG, "problem: in_div[%d] = %g (expected finite, non-zero)", i, net->in_div[i]);
    }
    if (!p->lo || !p->hi) return lg_fail(LG_ERR_ARG, "problem: no input box");
    for (int i = 0; i < n_in; i++)
        if (!isfinite(p->lo[i]) || !isfinite(p->hi[i]) || p->lo[i] > p->hi[i])
            return lg_fail(LG_ERR_ARG, "problem: input box [%g, %g] at input %d (expected finite lo <= hi)", p->lo[i],
                           p->hi[i], i);
    if (!p->pre_lo || !p->pre_hi) return lg_fail(LG_ERR_ARG, "problem: no pre-activation bounds");
    for (int k = 0; k < net->n_layers; k++) {
        const double *l = p->pre_lo[k], *u = p->pre_hi[k];
        if (!l || !u) return lg_fail(LG_ERR_ARG, "problem: layer %d: missing pre-activation bounds", k);
        for (int i = 0; i < net->layers[k].n_out; i++)
            if (!isfinite(l[i]) || !isfinite(u[i]) || l[i] > u[i])
                return lg_fail(LG_ERR_ARG, "problem: layer %d neuron %d: pre-activation bounds [%g, %g] "
                               "(expected finite lo <= hi)", k, i, l[i], u[i]);
    }
    if (p->n_terms < 0 || (p->n_terms > 0 && !p->terms))
        return lg_fail(LG_ERR_ARG, "problem: n_terms = %d without terms", p->n_terms);
    for (int t = 0; t < p->n_terms; t++) {
        const lg_term *T = &p->terms[t];
        if (T->n_cons < 0 || (T->n_cons > 0 && !T->cons))
            return lg_fail(LG_ERR_ARG, "problem: term %d: n_cons = %d without constraints", t, T->n_cons);
        for (int c = 0; c < T->n_cons; c++) {
            if (!T->cons[c].coef) return lg_fail(LG_ERR_ARG, "problem: term %d constraint %d: no coefficients", t, c);
            if (!all_finite(T->cons[c].coef, n_out) || !isfinite(T->cons[c].d))
                return lg_fail(LG_ERR_ARG, "problem: term %d constraint %d: non-finite coefficient", t, c);
        }
    }
    return LG_OK;
}

lg_phase lg_pwl_phase(const lg_problem *p, int k, int i)
{
    if (p->net->layers[k].act == LG_ACT_IDENTITY) return LG_PHASE_LINEAR;
    if (p->pre_hi[k][i] <= 0) return LG_PHASE_ZERO;
    if (p->pre_lo[k][i] >= 0) return LG_PHASE_LINEAR;
    return LG_PHASE_UNSTABLE;
}

int lg_pwl_count_unstable(const lg_problem *p)
{
    int n = 0;
    for (int k = 0; k < p->net->n_layers; k++)
        for (int i = 0; i < p->net->layers[k].n_out; i++) n += lg_pwl_phase(p, k, i) == LG_PHASE_UNSTABLE;
    return n;
}

int lg_pwl_term_holds(const lg_problem *p, int t, const double *x, double tol, double *scratch)
{
    int n_out = lg_net_n_out(p->net);
    double *y = scratch + 2 * lg_net_max_width(p->net);
    for (int i = 0; i < p->net->n_in; i++)
        if (!(x[i] >= p->lo[i] && x[i] <= p->hi[i])) return 0;
    lg_net_forward(p->net, x, y, scratch);
    return lg_term_holds(n_out, &p->terms[t], y, tol, NULL);
}

lg_status lg_pwl_row_init(lg_pwl_row *r, const lg_net *net)
{
    memset(r, 0, sizeof *r);
    size_t len = lg_net_nodes_len(net);
    int cap = 1, tcap = 1;
    for (int k = 0; k < net->n_layers; k++) {
        const lg_layer *L = &net->layers[k];
        long c = 0;
        for (int t = 0; t < lg_layer_n_lin(L); t++) {
            int q = lg_linear_row_cap(lg_layer_lin(L, t));
            c += q;
            if (q > tcap) tcap = q;
        }
        if (c > (long)LG_NET_MAX_DIM * 4) return lg_fail(LG_ERR_NOMEM, "layer %d: rows of %ld entries", k, c);
        if (c > cap) cap = (int)c;
    }
    r->net = net;
    r->cap = cap;
    r->node_off = malloc(((size_t)net->n_layers + 1) * sizeof *r->node_off);
    r->pos = malloc((size_t)cap * sizeof *r->pos);
    r->copy = malloc((size_t)cap * sizeof *r->copy);
    r->w = malloc((size_t)cap * sizeof *r->w);
    r->next = malloc((size_t)cap * sizeof *r->next);
    r->slot = malloc((len ? len : 1) * sizeof *r->slot);
    r->stamp = calloc(len ? len : 1, sizeof *r->stamp);
    r->idx = malloc((size_t)tcap * sizeof *r->idx);
    r->tw = malloc((size_t)tcap * sizeof *r->tw);
    if (!r->node_off || !r->pos || !r->copy || !r->w || !r->next || !r->slot || !r->stamp || !r->idx || !r->tw) {
        lg_pwl_row_free(r);
        return lg_fail(LG_ERR_NOMEM, "encoder: cannot allocate row scratch");
    }
    for (int k = -1; k < net->n_layers; k++) r->node_off[k + 1] = lg_net_node_offset(net, k);
    return LG_OK;
}

void lg_pwl_row_free(lg_pwl_row *r)
{
    free(r->node_off);
    free(r->pos);
    free(r->copy);
    free(r->w);
    free(r->next);
    free(r->slot);
    free(r->stamp);
    free(r->idx);
    free(r->tw);
    memset(r, 0, sizeof *r);
}

/* 1 when a + b is a double (TwoSum: the rounding error is 0) and finite. */
static int lg_pwl_sum_exact(double a, double b, double *s)
{
    *s = a + b;
    if (!isfinite(*s)) return 0;
    double bb = *s - a;
    return (a - (*s - bb)) + (b - bb) == 0.0;
}

/* One weight w of the row on input i of term A (lg_layer_row_visit): a new entry, or added
 * exactly into an entry of the same position (a copy of it when the sum is not exact). */
typedef struct lg_pwl_row_at {
    lg_pwl_row *r;
    const int *col;
    int one; /* one term: no position repeats */
    int n;   /* entries so far */
} lg_pwl_row_at;
static void lg_pwl_row_ent(void *ctx, const lg_linear *A, int i, double w)
{
    lg_pwl_row_at *at = ctx;
    lg_pwl_row *r = at->r;
    const int *col = at->col;
    int pos = (int)lg_pwl_node_off(r, A->src) + i;
    if (col && col[pos] < 0) return; /* zeros: skipped by the visit */
    if (!at->one && r->stamp[pos] == r->row_no) { /* the position is in the row already */
        int e = r->slot[pos];
        for (;;) {
            double s;
            if (lg_pwl_sum_exact(r->w[e], w, &s)) {
                r->w[e] = s; /* may cancel to 0: the entry stays, encoders skip zeros */
                break;
            }
            if (r->next[e] >= 0) {
                e = r->next[e];
                continue;
            }
            r->next[e] = at->n;
            r->pos[at->n] = pos, r->copy[at->n] = r->copy[e] + 1, r->w[at->n] = w, r->next[at->n] = -1;
            at->n++;
            break;
        }
        return;
    }
    r->stamp[pos] = r->row_no;
    r->slot[pos] = at->n;
    r->pos[at->n] = pos, r->copy[at->n] = 0, r->w[at->n] = w, r->next[at->n] = -1;
    at->n++;
}

int lg_pwl_row_get(lg_pwl_row *r, int k, int i, const int *col)
{
    const lg_layer *L = &r->net->layers[k];
    int n = 0, one = lg_layer_n_lin(L) == 1;
    if (lg_layer_is_tnode(L)) { /* not linear: the relaxation's rows (problem.h lg_trelax) */
        r->n = 0;
        return 0;
    }
    if (++r->row_no == 0) { /* wrapped: clear the stamps */
        memset(r->stamp, 0, lg_net_nodes_len(r->net) * sizeof *r->stamp);
        r->row_no = 1;
    }
    lg_pwl_row_at at = {r, col, one, 0};
    lg_layer_row_visit(L, i, r->idx, r->tw, lg_pwl_row_ent, &at); /* the term sum's row (core/traverse.h) */
    n = at.n;
    r->n = n;
    return n;
}

int lg_pwl_row_copies(lg_pwl_row *r, const int *col, int *copies)
{
    const lg_net *net = r->net;
    int most = 0;
    if (copies) memset(copies, 0, lg_net_nodes_len(net) * sizeof *copies);
    for (int k = 0; k < net->n_layers; k++) {
        if (net->layers[k].n_terms == 0) continue; /* one term: no position twice */
        for (int i = 0; i < net->layers[k].n_out; i++) {
            lg_pwl_row_get(r, k, i, col);
            for (int q = 0; q < r->n; q++) {
                if (r->copy[q] > most) most = r->copy[q];
                if (copies && r->copy[q] > copies[r->pos[q]]) copies[r->pos[q]] = r->copy[q];
            }
        }
    }
    return most;
}
