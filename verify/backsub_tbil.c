/* backsub_tbil.c — the product step of the back-substitution with a block
 * of rows as the inner dimension (backsub_tbil.h). */
#include "verify/backsub_tbil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "verify/relax_iv.h"

/* Rows per block: the transposed blocks of both sources stay in cache. */
#define LG_TBIL_RB 32

void lg_bs_tbil_sums(size_t n, size_t K, const double *pairs, double *X)
{
    int fin = 1, same = 1;
    double gk = (double)(K + 2) * 0x1p-52;
    for (size_t o = 0; o < n; o++)
        for (int up = 0; up < 2; up++) {
            double P = 0.0, U = 0.0, cnt = 0.0, C = 0.0, Ca = 0.0;
            for (size_t k = 0; k < K; k++) {
                const double *e = pairs + (o * K + k) * LG_BS_TBIL_PAIR, *w = e + (up ? 3 : 0);
                for (int f = 0; f < 2; f++) {
                    if (w[f] == 0.0) continue;
                    fin &= isfinite(w[f]) != 0;
                    P += fabs(w[f]) * e[6 + f];
                    U += e[6 + f];
                    cnt += 1.0;
                }
                if (!up) same &= e[0] == e[3] && e[1] == e[4];
                C += w[2];
                Ca += fabs(w[2]);
            }
            X[(up ? n : 0) + o] = P;
            X[2 * n + (up ? n : 0) + o] = U;
            X[4 * n + (up ? n : 0) + o] = cnt;
            X[6 * n + (up ? n : 0) + o] = C;
            /* |C − Σ c_k| ≤ γ_K·Σ|c_k| and Σ|c_k| ≤ Ca·(1 + gk) */
            double E = lg_up(lg_up(lg_up(Ca * lg_up(1.0 + gk)) * gk));
            X[8 * n + (up ? n : 0) + o] = isnan(E) ? INFINITY : E;
        }
    X[10 * n] = fin ? 1.0 : 0.0;
    X[10 * n + 1] = same ? 1.0 : 0.0;
}

static inline void lg_tbil_axpy(double *restrict y, double w, const double *restrict x)
{
    for (int i = 0; i < LG_TBIL_RB; i++) y[i] += w * x[i];
}

int lg_bs_tbil_apply(int m, size_t n, size_t K, const int *ia, const int *ib, size_t na, size_t nb, int ng,
                     const int *grp, const double *const *pairs, const double *const *X, const double *A, double *Ya,
                     double *Yb)
{
    size_t rb = LG_TBIL_RB;
    double *Lt = malloc((n + na + nb) * rb * sizeof *Lt);
    int *rows = malloc((size_t)m * sizeof *rows);
    unsigned char *nz = malloc(n);
    if (!Lt || !rows || !nz) {
        free(Lt);
        free(rows);
        free(nz);
        return 0;
    }
    double *Yat = Lt + n * rb, *Ybt = Yat + na * rb;
    for (int g = 0; g < ng; g++) {
        int cnt = 0;
        for (int r = 0; r < m; r++)
            if (grp[r] == g) rows[cnt++] = r;
        int same = X[g][10 * n + 1] != 0.0;
        for (int i0 = 0; i0 < cnt; i0 += (int)rb) {
            int nr = cnt - i0 < (int)rb ? cnt - i0 : (int)rb;
            memset(Yat, 0, (na + nb) * rb * sizeof *Yat);
            for (int up = 0; up < 2 - same; up++) {
                int any = 0;
                for (size_t o = 0; o < n; o++) {
                    double *lt = Lt + o * rb;
                    unsigned char z = 0;
                    for (int i = 0; i < nr; i++) {
                        double v = A[(size_t)rows[i0 + i] * n + o];
                        if (!same) v = up ? (v < 0.0 ? v : 0.0) : (v > 0.0 ? v : 0.0);
                        lt[i] = v;
                        z |= v != 0.0;
                    }
                    for (size_t i = (size_t)nr; i < rb; i++) lt[i] = 0.0;
                    nz[o] = z;
                    any |= z;
                }
                if (!any) continue;
                const double *Pg = pairs[g];
                int wo = up ? 3 : 0;
                for (size_t o = 0; o < n; o++) {
                    if (!nz[o]) continue;
                    const double *lt = Lt + o * rb;
                    for (size_t k = 0; k < K; k++) {
                        size_t q = o * K + k;
                        const double *w = Pg + q * LG_BS_TBIL_PAIR + wo;
                        if (w[0] != 0.0) lg_tbil_axpy(Yat + (size_t)ia[q] * rb, w[0], lt);
                        if (w[1] != 0.0) lg_tbil_axpy(Ybt + (size_t)ib[q] * rb, w[1], lt);
                    }
                }
            }
            for (int i = 0; i < nr; i++) {
                double *ya = Ya + (size_t)rows[i0 + i] * na, *yb = Yb + (size_t)rows[i0 + i] * nb;
                for (size_t x = 0; x < na; x++) ya[x] += Yat[x * rb + (size_t)i];
                for (size_t x = 0; x < nb; x++) yb[x] += Ybt[x * rb + (size_t)i];
            }
        }
    }
    free(Lt);
    free(rows);
    free(nz);
    return 1;
}
