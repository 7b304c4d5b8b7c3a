/* recheck.c — double-precision re-check of a candidate (recheck.h). */
#include "verify/recheck.h"

#include <stdlib.h>

#include "core/exact.h"
#include "core/term.h"

int lg_terms_violated_by(int n_out, int n_terms, const lg_term *terms, const double *y)
{
    return lg_terms_first_holding(n_out, n_terms, terms, y, NULL);
}

int lg_recheck(const lg_net *net, const double *lo, const double *hi, int n_terms, const lg_term *terms,
               const double *x, double *y)
{
    for (int i = 0; i < net->n_in; i++)
        if (!(x[i] >= lo[i] && x[i] <= hi[i])) return 0;
    int no = lg_net_n_out(net), w = lg_net_max_width(net);
    double *buf = malloc(((size_t)2 * (size_t)w + (size_t)no) * sizeof *buf);
    if (!buf) return -1;
    double *yy = buf + 2 * (size_t)w;
    lg_net_forward(net, x, yy, buf);
    int ok = lg_terms_violated_by(no, n_terms, terms, yy) >= 0;
    if (y)
        for (int j = 0; j < no; j++) y[j] = yy[j];
    free(buf);
    return ok;
}

int lg_witness_within_tol(const lg_net *net, const lg_prop *prop, int c, double tol, double *x, double *y)
{
    const lg_prop_case *C = &prop->cases[c];
    for (int i = 0; i < net->n_in; i++) {
        if (x[i] < C->lo[i]) x[i] = C->lo[i];
        if (x[i] > C->hi[i]) x[i] = C->hi[i];
        if (!(x[i] >= C->lo[i] && x[i] <= C->hi[i])) return 0; /* NaN */
    }
    int no = lg_net_n_out(net), w = lg_net_max_width(net);
    double *buf = malloc(((size_t)2 * (size_t)w + (size_t)no) * sizeof *buf);
    if (!buf) return -1;
    double *yy = buf + 2 * (size_t)w;
    lg_net_forward(net, x, yy, buf);
    int ok = 0;
    for (int t = 0; t < C->n_terms && !ok; t++) ok = lg_term_holds(no, &C->terms[t], yy, tol, NULL);
    if (y)
        for (int j = 0; j < no; j++) y[j] = yy[j];
    free(buf);
    return ok;
}

int lg_witness_accept(const lg_net *net, const lg_prop *prop, int c, double *x, double *y)
{
    const lg_prop_case *C = &prop->cases[c];
    const lg_prop_inner *I = prop->inner ? &prop->inner[c] : NULL;
    const double *lo = I && I->lo ? I->lo : C->lo, *hi = I && I->hi ? I->hi : C->hi;
    const double *slack = I ? I->slack : NULL;
    for (int i = 0; i < net->n_in; i++) {
        if (!(lo[i] <= hi[i])) return 0; /* the inward box is empty: no double lies in the exact box */
        if (x[i] < lo[i]) x[i] = lo[i];
        if (x[i] > hi[i]) x[i] = hi[i];
        if (!(x[i] >= lo[i] && x[i] <= hi[i])) return 0; /* NaN */
    }
    int no = lg_net_n_out(net), w = lg_net_max_width(net);
    double *buf = malloc(((size_t)2 * (size_t)w + (size_t)no) * sizeof *buf);
    if (!buf) return -1;
    double *yy = buf + 2 * (size_t)w;
    lg_net_forward(net, x, yy, buf);
    int ok = lg_terms_first_holding(no, C->n_terms, C->terms, yy, slack) >= 0;
    if (y)
        for (int j = 0; j < no; j++) y[j] = yy[j];
    free(buf);
    if (!ok) return 0;
    int e = lg_exact_first_holding(net, x, C->n_terms, C->terms, slack);
    if (e == -3) return -1;
    return e >= 0;
}
