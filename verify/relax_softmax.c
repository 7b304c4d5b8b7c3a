/* relax_softmax.c — softmax images and mean-value planes
 * (relax_softmax.h). */
#include "verify/relax_softmax.h"

#include <math.h>
#include <stdlib.h>

/* Images S[i] of every output on the finite box [l, u]; E: g scratch. The
 * sums without i are summed directly (no cancellation). */
static void lg_sm_images(size_t g, const double *l, const double *u, lg_dv *S, lg_dv *E)
{
    double t = u[0];
    for (size_t j = 1; j < g; j++)
        if (u[j] > t) t = u[j];
    for (size_t j = 0; j < g; j++) E[j] = lg_dv_exp(lg_dv_sub((lg_dv){l[j], u[j]}, lg_dv_pt(t)));
    for (size_t i = 0; i < g; i++) {
        lg_dv r = {0.0, 0.0};
        for (size_t j = 0; j < g; j++)
            if (j != i) r = lg_dv_add(r, E[j]);
        if (r.lo < 0.0) r.lo = 0.0;
        /* s_i = e_i/(e_i + r): increasing in e_i, decreasing in r */
        double den = lg_up(E[i].lo + r.hi);
        double lo = den > 0.0 ? lg_dn(E[i].lo / den) : 0.0;
        den = lg_dn(E[i].hi + r.lo);
        double hi = den > 0.0 ? lg_up(E[i].hi / den) : 1.0;
        if (!(lo >= 0.0)) lo = 0.0;
        if (!(hi <= 1.0)) hi = 1.0;
        S[i] = (lg_dv){lo, hi};
    }
}

static int lg_sm_finite(size_t g, const double *l, const double *u)
{
    for (size_t j = 0; j < g; j++)
        if (!isfinite(l[j]) || !isfinite(u[j]) || !(l[j] <= u[j])) return 0;
    return 1;
}

void lg_softmax_image(size_t g, const double *l, const double *u, double *slo, double *shi, lg_dv *work)
{
    if (g == 1 || !lg_sm_finite(g, l, u)) {
        for (size_t i = 0; i < g; i++) {
            slo[i] = g == 1 ? 1.0 : 0.0;
            shi[i] = 1.0;
        }
        return;
    }
    lg_sm_images(g, l, u, work, work + g);
    for (size_t i = 0; i < g; i++) {
        slo[i] = work[i].lo;
        shi[i] = work[i].hi;
    }
}

/* t(1 − t) over [a, b] ⊂ [0, 1], outward (concave: the minimum at an end,
 * the maximum at the point of [a, b] nearest 1/2). */
static lg_dv lg_sm_diag(lg_dv s)
{
    double a = s.lo, b = s.hi;
    double fa = lg_dn(a * lg_dn(1.0 - a)), fb = lg_dn(b * lg_dn(1.0 - b));
    double lo = fa < fb ? fa : fb;
    if (lo < 0.0) lo = 0.0;
    double c = a > 0.5 ? a : (b < 0.5 ? b : 0.5);
    double hi = lg_up(c * lg_up(1.0 - c));
    return (lg_dv){lo, hi};
}

/* ∂s_i/∂x_j over the box from the images S. */
static lg_dv lg_sm_jac(const lg_dv *S, size_t i, size_t j)
{
    return j == i ? lg_sm_diag(S[i]) : lg_dv_neg(lg_dv_mul(S[i], S[j]));
}

int lg_softmax_jacobian(size_t g, const double *l, const double *u, lg_dv *J, lg_dv *work)
{
    if (g == 1) {
        J[0] = lg_dv_pt(0.0);
        return 1;
    }
    if (!lg_sm_finite(g, l, u)) {
        /* |∂s_i/∂x_j| ≤ 1/4 everywhere (s_i(1 − s_i), s_i·s_j with s_i + s_j ≤ 1) */
        for (size_t i = 0; i < g; i++)
            for (size_t j = 0; j < g; j++) J[i * g + j] = i == j ? (lg_dv){0.0, 0.25} : (lg_dv){-0.25, 0.0};
        return 1;
    }
    lg_sm_images(g, l, u, work, work + g);
    for (size_t i = 0; i < g; i++)
        for (size_t j = 0; j < g; j++) J[i * g + j] = lg_sm_jac(work, i, j);
    return 1;
}

int lg_relax_softmax(size_t g, const double *l, const double *u, const double *pt, double *lo_w, double *lo_c,
                     double *up_w, double *up_c, lg_dv *work)
{
    for (size_t k = 0; k < g * g; k++) lo_w[k] = up_w[k] = 0.0;
    if (g == 1 || !lg_sm_finite(g, l, u)) {
        for (size_t i = 0; i < g; i++) {
            lo_c[i] = g == 1 ? 1.0 : 0.0;
            up_c[i] = 1.0;
        }
        return 1;
    }
    lg_dv *S = work, *E = work + g, *Sm = work + 2 * g;
    double *m = (double *)(work + 3 * g); /* g doubles in g lg_dv */
    lg_sm_images(g, l, u, S, E);
    for (size_t j = 0; j < g; j++) {
        double v = pt ? pt[j] : 0.5 * l[j] + 0.5 * u[j];
        if (!(v >= l[j])) v = l[j];
        if (v > u[j]) v = u[j];
        m[j] = v;
    }
    lg_sm_images(g, m, m, Sm, E); /* S_i(m), certified */
    /* Taylor's remainder: s_i(x) = s_i(m) + ∇s_i(m)·δ + ½·δᵀH(ξ)δ, δ = x − m, ξ in the
     * box, and δᵀHδ = s_i·[(δ_i − ⟨δ⟩)² − Var(δ)] with ⟨·⟩ and Var the mean and
     * variance under the weights s_j (Σ_j s_j = 1) at ξ. So
     *   −½·s_i⁺·V ≤ ½·δᵀHδ ≤ ½·s_i⁺·D_i²,
     * V = min(Σ_j s_j⁺·rad_j², max_j rad_j²) ≥ Σ_j s_j·δ_j² ≥ Var(δ) and
     * D_i = (1 − s_i⁻)·rad_i + Σ_{j≠i} s_j⁺·rad_j ≥ |Σ_{j≠i} s_j·(δ_i − δ_j)| = |δ_i − ⟨δ⟩|,
     * rad_j = max|x_j − m_j|: one remainder per side. */
    double V = 0.0, rmax = 0.0, P = 0.0;
    for (size_t j = 0; j < g; j++) {
        double rj = lg_box_rad(l, u, m, j);
        V = lg_up(V + lg_up(S[j].hi * lg_up(rj * rj)));
        P = lg_up(P + lg_up(S[j].hi * rj));
        if (rj > rmax) rmax = rj;
    }
    double r2max = lg_up(rmax * rmax);
    if (r2max < V) V = r2max;
    int ok = 1;
    for (size_t i = 0; i < g; i++) {
        double *wl = lo_w + i * g, *wu = up_w + i * g;
        /* slopes: the gradient at m (certified to a few ulps); per side two
         * remainders, each sound for these slopes, the smaller taken: the
         * mean-value one with the Jacobian over the box, and Taylor's */
        double rho_mv = 0.0, rho_t = 0.0;
        lg_dv wm = {0.0, 0.0};
        for (size_t j = 0; j < g; j++) {
            lg_dv Jm = lg_sm_jac(Sm, i, j), J = lg_sm_jac(S, i, j);
            double w = 0.5 * Jm.lo + 0.5 * Jm.hi; /* any double is sound */
            wl[j] = wu[j] = w;
            double r = lg_box_rad(l, u, m, j);
            rho_mv = lg_up(rho_mv + lg_up(lg_dv_dev(J, w) * r));
            rho_t = lg_up(rho_t + lg_up(lg_dv_dev(Jm, w) * r));
            wm = lg_dv_add(wm, lg_dv_mul(lg_dv_pt(w), lg_dv_pt(m[j])));
        }
        double ri = lg_box_rad(l, u, m, i);
        /* Σ_{j≠i} s_j⁺·rad_j ≤ P (P holds the i term too) */
        double D = lg_up(lg_up(lg_up(1.0 - S[i].lo) * ri) + P);
        double rlo = lg_up(rho_t + lg_up(0.5 * lg_up(S[i].hi * V)));
        double rup = lg_up(rho_t + lg_up(0.5 * lg_up(S[i].hi * lg_up(D * D))));
        if (rho_mv < rlo) rlo = rho_mv;
        if (rho_mv < rup) rup = rho_mv;
        if (isnan(rlo)) rlo = INFINITY;
        if (isnan(rup)) rup = INFINITY;
        double lc = lg_dn(lg_dn(Sm[i].lo - wm.hi) - rlo);
        double uc = lg_up(lg_up(Sm[i].hi - wm.lo) + rup);
        /* the planes' values at the box's centre decide against the
         * constant planes of the image (a choice only, not a bound) */
        double cl = lc, cu = uc;
        for (size_t j = 0; j < g; j++) {
            double c = 0.5 * l[j] + 0.5 * u[j];
            cl += wl[j] * c;
            cu += wu[j] * c;
        }
        if (!isfinite(lc) || !(cl > S[i].lo)) {
            for (size_t j = 0; j < g; j++) wl[j] = 0.0;
            lc = S[i].lo;
        }
        if (!isfinite(uc) || !(cu < S[i].hi)) {
            for (size_t j = 0; j < g; j++) wu[j] = 0.0;
            uc = S[i].hi;
        }
        lo_c[i] = lc;
        up_c[i] = uc;
        if (!isfinite(lc) || !isfinite(uc)) ok = 0;
    }
    return ok;
}

static _Thread_local const double *lg_sm_keys; /* qsort's keys (lg_softmax_shift) */
static int lg_sm_cmp(const void *a, const void *b)
{
    double x = lg_sm_keys[*(const int *)a], y = lg_sm_keys[*(const int *)b];
    return (x > y) - (x < y);
}

double lg_softmax_shift(size_t g, const double *lam, const double *lo_c, const double *up_c, double *mu, double *err,
                        int *idx)
{
    double t = 0.0, above = 0.0;
    int any = 0, fin = 1;
    for (size_t i = 0; i < g; i++) {
        idx[i] = (int)i;
        any |= lam[i] != 0.0;
        fin &= isfinite(lo_c[i]) && isfinite(up_c[i]) && isfinite(lam[i]);
        above += lo_c[i];
    }
    if (any && fin) {
        if (g <= 32) /* small groups: a stable insertion sort (any order is sound) */
            for (size_t i = 1; i < g; i++) {
                int v = idx[i];
                size_t j = i;
                for (; j > 0 && lam[idx[j - 1]] > lam[v]; j--) idx[j] = idx[j - 1];
                idx[j] = v;
            }
        else {
            lg_sm_keys = lam;
            qsort(idx, g, sizeof *idx, lg_sm_cmp);
        }
        double below = 0.0; /* a choice only: plain double sums */
        for (size_t k = 0; k < g; k++) {
            above -= lo_c[idx[k]];
            below += up_c[idx[k]];
            if (1.0 - above - below <= 0.0 || k == g - 1) {
                t = lam[idx[k]];
                break;
            }
        }
    }
    double e = 0.0;
    for (size_t i = 0; i < g; i++) {
        mu[i] = t == 0.0 ? lam[i] : lam[i] - t;
        e += fabs(mu[i]);
    }
    /* the sum's own rounding: ≤ g·2^-53 relative */
    *err = t == 0.0 ? 0.0 : lg_up(lg_up(e * lg_up(1.0 + (double)(g + 1) * 0x1p-52)) * 0x1p-52);
    if (t != 0.0 && !(*err < INFINITY)) *err = INFINITY;
    return t;
}
