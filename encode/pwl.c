/* pwl.c — validation and neuron phases shared by the back-ends (pwl.h). */
#include "encode/pwl.h"

#include <math.h>

static int all_finite(const double *v, int n)
{
    for (int i = 0; i < n; i++)
        if (!isfinite(v[i])) return 0;
    return 1;
}

lg_status lg_pwl_validate(const lg_problem *p)
{
    if (!p || !p->net) return lg_fail(LG_ERR_ARG, "problem: no network");
    const lg_net *net = p->net;
    if (net->n_layers < 1 || !net->layers) return lg_fail(LG_ERR_ARG, "problem: network has no layers");
    lg_status gst = lg_net_require_chain(net, "the encoders");
    if (gst != LG_OK) return gst;
    for (int k = 0; k < net->n_layers; k++) {
        lg_act a = net->layers[k].act;
        if (a != LG_ACT_IDENTITY && a != LG_ACT_RELU) {
            const char *nm = lg_act_name(a);
            return lg_fail(LG_ERR_UNSUPPORTED, "layer %d: activation '%s' is not supported by the solver back-ends "
                           "(identity or relu only; substitute ReLU first)", k, nm ? nm : "?");
        }
    }
    lg_status st = lg_net_validate(net);
    if (st) return st;
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
