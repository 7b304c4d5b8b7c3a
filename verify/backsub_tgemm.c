/* backsub_tgemm.c — the softmax and layernorm step of the back-substitution
 * as products of matrices (backsub_tgemm.h). */
#include "verify/backsub_tgemm.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void lg_bs_tgemm_sums(size_t n, size_t gs, const double *lo_w, const double *up_w, const double *xm, double *X)
{
    for (size_t G = 0; G < n / gs; G++) {
        size_t G0 = G * gs;
        int fin = 1, same = 1;
        for (size_t q = G0 * gs; q < (G0 + gs) * gs; q++) same &= lo_w[q] == up_w[q];
        for (size_t o = G0; o < G0 + gs; o++)
            for (int up = 0; up < 2; up++) {
                const double *w = (up ? up_w : lo_w) + o * gs;
                double P = 0.0, U = 0.0, c = 0.0;
                for (size_t j = 0; j < gs; j++) {
                    if (w[j] == 0.0) continue;
                    fin &= isfinite(w[j]) != 0;
                    P += fabs(w[j]) * xm[G0 + j];
                    U += xm[G0 + j];
                    c += 1.0;
                }
                X[(up ? n : 0) + o] = P;
                X[2 * n + (up ? n : 0) + o] = U;
                X[4 * n + (up ? n : 0) + o] = c;
            }
        X[6 * n + G] = fin ? (same ? 2.0 : 1.0) : 0.0;
    }
}

int lg_bs_tgemm_apply(int m, size_t n, size_t gs, int ng, const int *grp, const double *const *planes,
                      const double *const *X, const double *Lm, const unsigned char *use, double *Ya)
{
    double *Lp = malloc(3 * (size_t)m * gs * sizeof *Lp);
    int *rows = malloc((size_t)m * sizeof *rows);
    if (!Lp || !rows) {
        free(Lp);
        free(rows);
        return 0;
    }
    double *Ln = Lp + (size_t)m * gs, *Yc = Ln + (size_t)m * gs;
    for (int g = 0; g < ng; g++) {
        if (!planes[g]) continue;
        const double *lo_w = planes[g], *up_w = planes[g] + n * gs + n;
        for (size_t G = 0; G < n / gs; G++) {
            if (!lg_bs_tgemm_finite(X[g], n, G)) continue;
            size_t G0 = G * gs;
            int k = 0, same = lg_bs_tgemm_same(X[g], n, G);
            for (int r = 0; r < m; r++) {
                if (grp[r] != g) continue;
                int any = 0;
                if (use)
                    any = use[(size_t)r * (n / gs) + G] != 0;
                else
                    for (size_t o = 0; o < gs; o++) any |= Lm[(size_t)r * n + G0 + o] != 0.0;
                if (!any) continue;
                rows[k++] = r;
            }
            if (k == 0) continue;
            if (same && k == m) { /* one side's slopes for every row, every row reads the group: in place */
                cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, (int)gs, (int)gs, 1.0, Lm + G0, (int)n,
                            lo_w + G0 * gs, (int)gs, 1.0, Ya + G0, (int)n);
                continue;
            }
            for (int i = 0; i < k; i++) {
                const double *a = Lm + (size_t)rows[i] * n + G0;
                double *p = Lp + (size_t)i * gs, *q = Ln + (size_t)i * gs;
                if (same)
                    memcpy(p, a, gs * sizeof *p);
                else
                    for (size_t o = 0; o < gs; o++) {
                        p[o] = a[o] > 0.0 ? a[o] : 0.0;
                        q[o] = a[o] < 0.0 ? a[o] : 0.0;
                    }
            }
            cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, k, (int)gs, (int)gs, 1.0, Lp, (int)gs, lo_w + G0 * gs,
                        (int)gs, 0.0, Yc, (int)gs);
            if (!same)
                cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, k, (int)gs, (int)gs, 1.0, Ln, (int)gs,
                            up_w + G0 * gs, (int)gs, 1.0, Yc, (int)gs);
            for (int i = 0; i < k; i++) {
                double *y = Ya + (size_t)rows[i] * n + G0;
                const double *yc = Yc + (size_t)i * gs;
                for (size_t j = 0; j < gs; j++) y[j] += yc[j];
            }
        }
    }
    free(Lp);
    free(rows);
    return 1;
}
