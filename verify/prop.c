/* prop.c — properties: robustness boxes, margins, cases and terms (prop.h). */
#include "verify/prop.h"

#include "core/ball.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

lg_status lg_prop_robustness(lg_prop *p, const double *x0, int n_in, double eps, double clip_lo, double clip_hi,
                             int label, int n_out, double margin)
{
    memset(p, 0, sizeof *p);
    if (n_in < 1 || n_out < 2 || label < 0 || label >= n_out)
        return lg_fail(LG_ERR_ARG, "robustness: label %d must be in [0, %d) with at least 2 outputs", label, n_out);
    if ((size_t)(n_out - 1) * (size_t)n_out > LG_PROP_MAX_COEFS)
        return lg_fail(LG_ERR_UNSUPPORTED, "robustness: %d outputs need more than %zu constraint coefficients (limit)",
                       n_out, LG_PROP_MAX_COEFS);
    if (!(eps >= 0) || !isfinite(eps) || !(clip_lo <= clip_hi) || !isfinite(clip_lo) || !isfinite(clip_hi))
        return lg_fail(LG_ERR_ARG, "robustness: need a finite eps ≥ 0 and finite clip_lo ≤ clip_hi (eps = %g)", eps);
    if (lg_prop_alloc(p, n_in, n_out, n_out - 1, NULL) != LG_OK)
        return lg_fail(LG_ERR_NOMEM, "robustness: out of memory");
    lg_prop_case *c = &p->cases[0];
    /* the box [x0 − eps, x0 + eps] of the real numbers: rounded outward for proofs, inward
     * for witnesses (prop->inner, DESIGN.md §3) when x0 ± eps is not a double */
    p->inner = calloc(1, sizeof *p->inner);
    if (!p->inner || !(p->inner->lo = malloc((size_t)n_in * sizeof(double))) ||
        !(p->inner->hi = malloc((size_t)n_in * sizeof(double))))
        goto oom;
    lg_ball_boxes(x0, (size_t)n_in, eps, clip_lo, clip_hi, c->lo, c->hi, p->inner->lo, p->inner->hi);
    if (!(p->center = malloc((size_t)n_in * sizeof *p->center))) goto oom;
    memcpy(p->center, x0, (size_t)n_in * sizeof *p->center);
    /* term j: y_label − y_j − margin ≤ 0 (label fails to beat j by more than margin) */
    for (int j = 0, t = 0; j < n_out; j++) {
        if (j == label) continue;
        lg_term *T = &c->terms[t++];
        T->cons[0].coef[label] = 1.0;
        T->cons[0].coef[j] = -1.0;
        T->cons[0].d = -margin;
    }
    lg_status st = lg_prop_validate(p, "robustness property");
    if (st != LG_OK) lg_prop_free(p);
    return st;
oom:
    lg_prop_free(p);
    return lg_fail(LG_ERR_NOMEM, "robustness: out of memory");
}

lg_status lg_prop_alloc(lg_prop *p, int n_in, int n_out, int n_terms, const int *n_cons)
{
    memset(p, 0, sizeof *p);
    p->n_in = n_in;
    p->n_out = n_out;
    p->n_cases = 1;
    p->cases = calloc(1, sizeof *p->cases);
    if (!p->cases) goto oom;
    lg_prop_case *c = &p->cases[0];
    c->lo = calloc((size_t)n_in, sizeof *c->lo);
    c->hi = calloc((size_t)n_in, sizeof *c->hi);
    c->terms = calloc(n_terms > 0 ? (size_t)n_terms : 1, sizeof *c->terms);
    if (!c->lo || !c->hi || !c->terms) goto oom;
    c->n_terms = n_terms;
    for (int t = 0; t < n_terms; t++) {
        int nc = n_cons ? n_cons[t] : 1;
        c->terms[t].cons = calloc((size_t)nc, sizeof *c->terms[t].cons);
        if (!c->terms[t].cons) goto oom;
        c->terms[t].n_cons = nc;
        for (int k = 0; k < nc; k++)
            if (!(c->terms[t].cons[k].coef = calloc((size_t)n_out, sizeof(double)))) goto oom;
    }
    return LG_OK;
oom:
    lg_prop_free(p);
    return LG_ERR_NOMEM;
}

lg_status lg_prop_margin(lg_prop *p, double K)
{
    if (K == 0) return LG_OK;
    if (!p->inner && !(p->inner = calloc((size_t)p->n_cases, sizeof *p->inner))) goto oom;
    for (int c = 0; c < p->n_cases; c++) {
        lg_prop_case *C = &p->cases[c];
        lg_prop_inner *I = &p->inner[c];
        size_t m = 0;
        for (int t = 0; t < C->n_terms; t++) m += (size_t)C->terms[t].n_cons;
        if (!I->slack && !(I->slack = calloc(m + 1, sizeof *I->slack))) goto oom;
        for (int t = 0, r = 0; t < C->n_terms; t++)
            for (int k = 0; k < C->terms[t].n_cons; k++, r++) {
                double d = C->terms[t].cons[k].d, sl = I->slack[r];
                double dn = lg_add_dir(d, -K, -1);                         /* proofs: ≤ d − K */
                double w = lg_add_dir(lg_add_dir(d, sl, 1), -K, 1);        /* ≥ d + slack − K */
                C->terms[t].cons[k].d = dn;
                I->slack[r] = lg_add_dir(w, -dn, 1);                       /* dn + slack ≥ w */
            }
    }
    return LG_OK;
oom:
    return lg_fail(LG_ERR_NOMEM, "margin: out of memory");
}

int lg_prop_rounded(const lg_prop *p, int c)
{
    if (!p->inner) return 0;
    const lg_prop_case *C = &p->cases[c];
    const lg_prop_inner *I = &p->inner[c];
    for (int i = 0; i < p->n_in; i++)
        if ((I->lo && I->lo[i] != C->lo[i]) || (I->hi && I->hi[i] != C->hi[i])) return 1;
    size_t m = 0;
    for (int t = 0; t < C->n_terms; t++) m += (size_t)C->terms[t].n_cons;
    for (size_t r = 0; I->slack && r < m; r++)
        if (I->slack[r] != 0) return 1;
    return 0;
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

lg_status lg_prop_validate(const lg_prop *p, const char *name)
{
    size_t n_cons = 0;
    for (int c = 0; c < p->n_cases; c++) {
        const lg_prop_case *C = &p->cases[c];
        for (int i = 0; i < p->n_in; i++) {
            if (!isfinite(C->lo[i]) || !isfinite(C->hi[i]))
                return lg_fail(LG_ERR_FORMAT, "%s: case %d: input box of X_%d is [%g, %g]; NaN/Inf bounds are refused",
                               name, c, i, C->lo[i], C->hi[i]);
            if (C->lo[i] > C->hi[i])
                return lg_fail(LG_ERR_FORMAT, "%s: case %d: input box of X_%d is empty ([%g, %g])", name, c, i,
                               C->lo[i], C->hi[i]);
        }
        for (int t = 0; t < C->n_terms; t++)
            for (int k = 0; k < C->terms[t].n_cons; k++) {
                const lg_lincon *L = &C->terms[t].cons[k];
                if (++n_cons > LG_PROP_MAX_CONS || n_cons * (size_t)p->n_out > LG_PROP_MAX_COEFS)
                    return lg_fail(LG_ERR_UNSUPPORTED, "%s: more than %d output constraints or %zu coefficients (limit)",
                                   name, LG_PROP_MAX_CONS, LG_PROP_MAX_COEFS);
                if (!isfinite(L->d))
                    return lg_fail(LG_ERR_FORMAT, "%s: case %d, term %d, constraint %d: constant is %g; NaN/Inf refused",
                                   name, c, t, k, L->d);
                for (int j = 0; j < p->n_out; j++)
                    if (!isfinite(L->coef[j]))
                        return lg_fail(LG_ERR_FORMAT,
                                       "%s: case %d, term %d, constraint %d: coefficient of Y_%d is %g; NaN/Inf refused",
                                       name, c, t, k, j, L->coef[j]);
            }
    }
    return LG_OK;
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
    free(p->center);
    memset(p, 0, sizeof *p);
}
