/* backsub_plain.h — one row's step of the back-substitution through a layer
 * that relaxes nothing (an identity activation, or the rows' own level of
 * lg_backsub_lower_pre), its biases and M_ℓ all finite: the three sums of
 * backsub.c's element-wise loop (the constant, its mass, the rounding
 * term's Σ |a_j|·M_j) in LG_BS_LANES interleaved lanes. Internal to
 * backsub.c; no memory of its own.
 *
 * A zero a_j adds an exact 0 to each sum (b_j and M_j are finite), so the
 * lanes add the same terms as the loop that skips zeros, in another order.
 * Any order is covered: the constant's rounding by the final margin
 * (bounds.h lg_bounds_margin, N·2^-50 of the mass with N counting every
 * term, for every summation order), the rounding term's own by γ'_N ≥ 2γ_N
 * (backsub.h). The coefficients a are not changed.
 */
#ifndef LG_BACKSUB_PLAIN_H
#define LG_BACKSUB_PLAIN_H

#include <math.h>

#define LG_BS_LANES 8

/* c += Σ_j a_j·b_j, mass += Σ_j |a_j·b_j|, err += gam·Σ_j |a_j|·M_j + under when some
 * a_j ≠ 0 (j < n); nothing changes when every a_j is 0. */
static inline void lg_bs_plain_row(const double *a, const double *b, const double *M, int n, double gam,
                                   double under, double *c, double *mass, double *err)
{
    double sc[LG_BS_LANES] = {0}, sm[LG_BS_LANES] = {0}, sg[LG_BS_LANES] = {0};
    int nz = 0, j = 0;
    for (; j + LG_BS_LANES <= n; j += LG_BS_LANES)
        for (int q = 0; q < LG_BS_LANES; q++) {
            double t = a[j + q] * b[j + q];
            sc[q] += t;
            sm[q] += fabs(t);
            sg[q] += fabs(a[j + q]) * M[j + q];
            nz |= a[j + q] != 0.0;
        }
    for (int q = 0; j < n; j++, q++) {
        double t = a[j] * b[j];
        sc[q] += t;
        sm[q] += fabs(t);
        sg[q] += fabs(a[j]) * M[j];
        nz |= a[j] != 0.0;
    }
    if (!nz) return;
    double tc = 0.0, tm = 0.0, tg = 0.0;
    for (int q = 0; q < LG_BS_LANES; q++) tc += sc[q], tm += sm[q], tg += sg[q];
    *c += tc;
    *mass += tm;
    *err += gam * tg + under;
}

#endif
