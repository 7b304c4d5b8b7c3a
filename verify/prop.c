#include "verify/prop.h"

#include <stdlib.h>
#include <string.h>

lg_status lg_prop_robustness(lg_prop *p, const double *x0, int n_in, double eps, double clip_lo, double clip_hi,
                             int label, int n_out, double margin)
{
    memset(p, 0, sizeof *p);
    if (n_in < 1 || n_out < 2 || label < 0 || label >= n_out)
        return lg_fail(LG_ERR_ARG, "robustness: label %d must be in [0, %d) with at least 2 outputs", label, n_out);
    if (!(eps >= 0) || !(clip_lo <= clip_hi))
        return lg_fail(LG_ERR_ARG, "robustness: need eps ≥ 0 and clip_lo ≤ clip_hi (eps = %g)", eps);
    p->n_in = n_in;
    p->n_out = n_out;
    p->n_cases = 1;
    p->cases = calloc(1, sizeof *p->cases);
    if (!p->cases) goto oom;
    lg_prop_case *c = &p->cases[0];
    c->lo = malloc((size_t)n_in * sizeof *c->lo);
    c->hi = malloc((size_t)n_in * sizeof *c->hi);
    c->terms = calloc((size_t)n_out - 1, sizeof *c->terms);
    if (!c->lo || !c->hi || !c->terms) goto oom;
    for (int i = 0; i < n_in; i++) {
        double lo = x0[i] - eps, hi = x0[i] + eps;
        c->lo[i] = lo < clip_lo ? clip_lo : (lo > clip_hi ? clip_hi : lo);
        c->hi[i] = hi > clip_hi ? clip_hi : (hi < clip_lo ? clip_lo : hi);
    }
    /* term j: y_label − y_j − margin ≤ 0 (label fails to beat j by more than margin) */
    for (int j = 0, t = 0; j < n_out; j++) {
        if (j == label) continue;
        lg_term *T = &c->terms[t];
        T->cons = calloc(1, sizeof *T->cons);
        if (!T->cons) goto oom;
        T->n_cons = 1;
        c->n_terms = ++t;
        T->cons[0].coef = calloc((size_t)n_out, sizeof(double));
        if (!T->cons[0].coef) goto oom;
        T->cons[0].coef[label] = 1.0;
        T->cons[0].coef[j] = -1.0;
        T->cons[0].d = -margin;
    }
    return LG_OK;
oom:
    lg_prop_free(p);
    return lg_fail(LG_ERR_NOMEM, "robustness: out of memory");
}

int lg_prop_case_violated_by(const lg_prop *p, int c, const double *y)
{
    const lg_prop_case *C = &p->cases[c];
    return lg_terms_first_holding(p->n_out, C->n_terms, C->terms, y, NULL) >= 0;
}

int lg_prop_case_contains(const lg_prop *p, int c, const double *x)
{
    const lg_prop_case *C = &p->cases[c];
    for (int i = 0; i < p->n_in; i++)
        if (!(x[i] >= C->lo[i] && x[i] <= C->hi[i])) return 0;
    return 1;
}

void lg_prop_free(lg_prop *p)
{
    for (int c = 0; p->cases && c < p->n_cases; c++) {
        lg_prop_case *C = &p->cases[c];
        for (int t = 0; C->terms && t < C->n_terms; t++) {
            for (int k = 0; k < C->terms[t].n_cons; k++) free(C->terms[t].cons[k].coef);
            free(C->terms[t].cons);
        }
        free(C->terms);
        free(C->lo);
        free(C->hi);
    }
    for (int c = 0; p->inner && c < p->n_cases; c++) {
        free(p->inner[c].lo);
        free(p->inner[c].hi);
        free(p->inner[c].slack);
    }
    free(p->inner);
    free(p->cases);
    memset(p, 0, sizeof *p);
}
