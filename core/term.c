/* term.c — the one term check (term.h). */
#include "core/term.h"

#include <stddef.h>

int lg_term_holds(int n_out, const lg_term *T, const double *y, double tol, const double *slack)
{
    for (int k = 0; k < T->n_cons; k++) {
        const lg_lincon *L = &T->cons[k];
        double s = L->d;
        for (int j = 0; j < n_out; j++) s += L->coef[j] * y[j];
        if (slack && !(s + slack[k] <= tol)) return 0;
        if (!(s <= tol)) return 0;
    }
    return 1;
}

int lg_terms_first_holding(int n_out, int n_terms, const lg_term *terms, const double *y, const double *slack)
{
    for (int t = 0, r = 0; t < n_terms; r += terms[t].n_cons, t++)
        if (lg_term_holds(n_out, &terms[t], y, 0.0, slack ? slack + r : NULL)) return t;
    return -1;
}
