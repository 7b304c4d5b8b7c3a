/* recheck.c — double-precision re-check of a candidate (recheck.h). */
#include "verify/recheck.h"

#include <stdlib.h>

int lg_terms_violated_by(int n_out, int n_terms, const lg_term *terms, const double *y)
{
    for (int t = 0; t < n_terms; t++) {
        int all = 1;
        for (int k = 0; k < terms[t].n_cons && all; k++) {
            const lg_lincon *L = &terms[t].cons[k];
            double s = L->d;
            for (int j = 0; j < n_out; j++) s += L->coef[j] * y[j];
            all = s <= 0.0;
        }
        if (all) return t;
    }
    return -1;
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
