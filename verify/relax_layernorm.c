/* relax_layernorm.c — layernorm images and mean-value planes
 * (relax_layernorm.h). */
#include "verify/relax_layernorm.h"

#include <math.h>

/* The intervals of c_k (C[g]), r (*R) and y_k (Y[g]) on the box [l, u].
 * Returns 0 if something is not finite. */
static int lg_ln_eval(size_t g, const double *l, const double *u, const lg_dv *H, double eps, const double *gamma,
                      const double *beta, lg_dv *C, lg_dv *R, lg_dv *Y)
{
    double sl = 0.0, su = 0.0; /* ≤ Σ l, ≥ Σ u */
    for (size_t k = 0; k < g; k++) {
        if (!isfinite(l[k]) || !isfinite(u[k]) || !(l[k] <= u[k])) return 0;
        sl = lg_dn(sl + l[k]);
        su = lg_up(su + u[k]);
    }
    lg_dv gm1 = lg_dv_pt((double)(g - 1)), gg = lg_dv_pt((double)g);
    lg_dv V = {0.0, 0.0};
    for (size_t k = 0; k < g; k++) {
        /* Σ_{j≠k} x_j ∈ [sl − l_k, su − u_k] outward */
        lg_dv rest = {lg_dn(sl - l[k]), lg_up(su - u[k])};
        C[k] = lg_dv_div(lg_dv_sub(lg_dv_mul(gm1, (lg_dv){l[k], u[k]}), rest), gg);
        /* the centred region's box (a bound on c_k itself); an empty intersection (no point
         * of the region) keeps the interval */
        if (H && H[k].lo <= C[k].hi && H[k].hi >= C[k].lo) {
            if (H[k].lo > C[k].lo) C[k].lo = H[k].lo;
            if (H[k].hi < C[k].hi) C[k].hi = H[k].hi;
        }
        V = lg_dv_add(V, lg_dv_sqr(C[k]));
    }
    V = lg_dv_div(V, gg);
    if (V.lo < 0.0) V.lo = 0.0;
    /* v is quadratic: at the centre m, v(x) = v(m) + Σ_j (2·c_j(m)/g)·δ_j + |Pδ|²/g exactly
     * (δ = x − m, P the centring, Σ_j c_j(m) = 0), and 0 ≤ |Pδ|² ≤ |δ|², so
     * v ∈ [v(m) − L, v(m) + L + Σ_j rad_j²/g], L = Σ_j 2·|c_j(m)|·rad_j/g; the
     * intersection with the interval above keeps both enclosures' information */
    if (g > 1) {
        double ml = 0.0, mu = 0.0;
        for (size_t k = 0; k < g; k++) {
            double m = 0.5 * l[k] + 0.5 * u[k];
            ml = lg_dn(ml + m);
            mu = lg_up(mu + m);
        }
        lg_dv Vm = {0.0, 0.0};
        double L = 0.0, S2 = 0.0;
        for (size_t k = 0; k < g; k++) {
            double m = 0.5 * l[k] + 0.5 * u[k];
            double r1 = lg_up(u[k] - m), r2 = lg_up(m - l[k]), rk = r1 > r2 ? r1 : r2;
            lg_dv rest = {lg_dn(ml - m), lg_up(mu - m)};
            lg_dv Cm = lg_dv_div(lg_dv_sub(lg_dv_mul(gm1, lg_dv_pt(m)), rest), gg);
            Vm = lg_dv_add(Vm, lg_dv_sqr(Cm));
            L = lg_up(L + lg_up(lg_up(2.0 * lg_dv_mag(Cm)) * rk));
            S2 = lg_up(S2 + lg_up(rk * rk));
        }
        Vm = lg_dv_div(Vm, gg);
        L = lg_up(L / (double)g);
        double vlo = lg_dn(Vm.lo - L), vhi = lg_up(lg_up(Vm.hi + L) + lg_up(S2 / (double)g));
        if (vlo > V.lo) V.lo = vlo;
        if (vhi < V.hi) V.hi = vhi;
        if (V.lo > V.hi) V.lo = V.hi; /* only by rounding: both hold the true range */
    }
    *R = lg_dv_rsqrt(lg_dv_add(V, lg_dv_pt(eps)));
    if (!lg_dv_finite(*R)) return 0;
    /* |c_k|·r < √(g − 1): Σ c = 0 gives c_k² ≤ (g − 1)·Σ_{j≠k} c_j² (Cauchy–
     * Schwarz), so c_k² ≤ (g − 1)·v and c_k²/(v + eps) ≤ g − 1 */
    double cap = lg_up(sqrt((double)(g - 1)));
    for (size_t k = 0; k < g; k++) {
        lg_dv CR = lg_dv_mul(C[k], *R);
        if (CR.lo < -cap) CR.lo = -cap;
        if (CR.hi > cap) CR.hi = cap;
        Y[k] = lg_dv_add(lg_dv_mul(lg_dv_pt(gamma[k]), CR), lg_dv_pt(beta[k]));
        if (!lg_dv_finite(C[k]) || !lg_dv_finite(Y[k])) return 0;
    }
    return 1;
}

void lg_layernorm_image(size_t g, const double *l, const double *u, double eps, const double *gamma,
                        const double *beta, double *ylo, double *yhi, lg_dv *work)
{
    lg_dv *C = work, *Y = work + g, *R = work + 2 * g;
    int ok = eps >= 0.0 && lg_ln_eval(g, l, u, NULL, eps, gamma, beta, C, R, Y);
    for (size_t k = 0; k < g; k++) {
        ylo[k] = ok ? Y[k].lo : -INFINITY;
        yhi[k] = ok ? Y[k].hi : INFINITY;
    }
}

/* ∂y_i/∂x_j = γ_i·r·(δ_ij − 1/g − c_i·c_j·r²/g) over the box from the
 * intervals of c, r, r² (R2), 1/g (ig) and g (gg). */
static lg_dv lg_ln_jac(const lg_dv *C, lg_dv R, lg_dv R2, lg_dv ig, lg_dv gg, double gamma_i, size_t i, size_t j)
{
    lg_dv P = i == j ? lg_dv_sqr(C[i]) : lg_dv_mul(C[i], C[j]);
    lg_dv T = lg_dv_sub(lg_dv_pt(i == j ? 1.0 : 0.0), lg_dv_add(ig, lg_dv_div(lg_dv_mul(P, R2), gg)));
    return lg_dv_mul(lg_dv_pt(gamma_i), lg_dv_mul(R, T));
}

int lg_layernorm_jacobian(size_t g, const double *l, const double *u, double eps, const double *gamma, lg_dv *J,
                          lg_dv *work)
{
    lg_dv *C = work, *Y = work + g, *R = work + 2 * g;
    /* beta does not enter the Jacobian: y is evaluated with gamma as beta */
    if (!(eps >= 0.0) || !lg_ln_eval(g, l, u, NULL, eps, gamma, gamma, C, R, Y)) {
        for (size_t k = 0; k < g * g; k++) J[k] = (lg_dv){-INFINITY, INFINITY};
        return 0;
    }
    lg_dv R2 = lg_dv_sqr(*R), gg = lg_dv_pt((double)g), ig = lg_dv_div(lg_dv_pt(1.0), gg);
    int ok = 1;
    for (size_t i = 0; i < g; i++)
        for (size_t j = 0; j < g; j++) {
            J[i * g + j] = lg_ln_jac(C, *R, R2, ig, gg, gamma[i], i, j);
            if (!lg_dv_finite(J[i * g + j])) {
                J[i * g + j] = (lg_dv){-INFINITY, INFINITY};
                ok = 0;
            }
        }
    return ok;
}

int lg_relax_layernorm(size_t g, const double *l, const double *u, double eps, const double *gamma,
                       const double *beta, const double *pt, double *lo_w, double *lo_c, double *up_w,
                       double *up_c, lg_dv *work)
{
    return lg_relax_layernorm_ex(g, l, u, NULL, eps, gamma, beta, pt, lo_w, lo_c, up_w, up_c, NULL, work);
}

int lg_relax_layernorm_ex(size_t g, const double *l, const double *u, const lg_ln_region *reg, double eps,
                          const double *gamma, const double *beta, const double *pt, double *lo_w, double *lo_c,
                          double *up_w, double *up_c, double *rd, lg_dv *work)
{
    if (rd) rd[0] = 0.0; /* not usable unless set below */
    lg_dv *C = work, *Y = work + g, *Cm = work + 2 * g, *Ym = work + 3 * g, *H = work + 4 * g, *R = work + 5 * g,
          *Rm = R + 1;
    for (size_t k = 0; k < g * g; k++) lo_w[k] = up_w[k] = 0.0;
    int okb = eps >= 0.0;
    for (size_t k = 0; k < g && okb; k++) okb = isfinite(l[k]) && isfinite(u[k]) && l[k] <= u[k];
    /* the point m: kept in lo_c (g doubles) until the planes are written */
    double *m = lo_c;
    for (size_t j = 0; j < g && okb; j++) {
        double v = pt ? pt[j] : 0.5 * l[j] + 0.5 * u[j];
        if (!(v >= l[j])) v = l[j];
        if (v > u[j]) v = u[j];
        m[j] = v;
    }
    int okm = okb && lg_ln_eval(g, m, m, NULL, eps, gamma, beta, Cm, Rm, Ym);
    /* The region of the bounds below: the box, and with a centred box [clo, chi] its hull
     * with c(m), so every segment [m, x] of the region stays in it (convex) */
    const lg_dv *hp = NULL;
    const double *clo = reg ? reg->clo : NULL, *chi = reg ? reg->chi : NULL;
    if (clo && chi && okm) {
        for (size_t k = 0; k < g; k++) {
            double a = clo[k] == clo[k] ? clo[k] : -INFINITY, b = chi[k] == chi[k] ? chi[k] : INFINITY;
            H[k] = (lg_dv){a < Cm[k].lo ? a : Cm[k].lo, b > Cm[k].hi ? b : Cm[k].hi};
        }
        hp = H;
    }
    if (!okb || !lg_ln_eval(g, l, u, hp, eps, gamma, beta, C, R, Y)) {
        for (size_t i = 0; i < g; i++) {
            lo_c[i] = -INFINITY;
            up_c[i] = INFINITY;
        }
        return 0;
    }
    lg_dv R2 = lg_dv_sqr(*R), gg = lg_dv_pt((double)g), ig = lg_dv_div(lg_dv_pt(1.0), gg);
    lg_dv Rm2 = lg_dv_sqr(*Rm);
    /* Taylor's remainder at m. With ĉ = c·r (Σ_k ĉ_k = 0), y_i = γ_i·ĉ_i + β_i and
     * δc = the centred x − m (|δc|₂ ≤ |x − m|₂, |δc_i| ≤ rad_i + Σ_j rad_j/g), the
     * second derivative along the segment is
     *   γ_i·[−(r²/g)·(2·δc_i·(ĉ·δx) + ĉ_i·|δc|²) + 3·(r²/g²)·ĉ_i·(ĉ·δx)²]
     * (ĉ·δc = ĉ·δx as Σĉ = 0), so with h_k ≥ |ĉ_k| and r⁺ on the box,
     * Q = Σ_k h_k·rad_k and S2 = Σ_k rad_k², half of it is at most
     *   ½·|γ_i|·(r⁺²/g)·(2·(rad_i + Σrad/g)·Q + h_i·max(S2, min(2·S2, 3·Q²/g))) (below). */
    double cap = lg_up(sqrt((double)(g - 1))), Q = 0.0, S2 = 0.0, Srad = 0.0, Qc = 0.0, S2c = 0.0;
    for (size_t k = 0; k < g; k++) {
        double rk = lg_box_rad(l, u, m, k), h = lg_dv_mag(lg_dv_mul(C[k], *R));
        if (!(h <= cap)) h = cap;
        Q = lg_up(Q + lg_up(h * rk));
        S2 = lg_up(S2 + lg_up(rk * rk));
        Srad = lg_up(Srad + rk);
    }
    double sg = lg_up(Srad / (double)g);
    /* dc_k ≥ |δc_k| on the region: δc_k = c_k(x) − c_k(m) with c_k(x) ∈ C[k] (the region's
     * interval, which holds c(m) too) and c_k(m) ∈ Cm[k]; and |δc_k| ≤ rad_k + Σ rad/g.
     * Kept in H[k].lo (H is not read again). */
    for (size_t k = 0; k < g; k++) {
        double dk = lg_up(lg_box_rad(l, u, m, k) + sg), h = lg_dv_mag(lg_dv_mul(C[k], *R));
        if (!(h <= cap)) h = cap;
        if (okm) {
            double d1 = lg_up(C[k].hi - Cm[k].lo), d2 = lg_up(Cm[k].hi - C[k].lo), dm = d1 > d2 ? d1 : d2;
            if (dm < dk) dk = dm;
        }
        H[k].lo = dk;
        Qc = lg_up(Qc + lg_up(h * dk));
        S2c = lg_up(S2c + lg_up(dk * dk));
    }
    /* n² = |δc|₂² ≤ min(S2, Σ dc²); |p| = |ĉ·δx| ≤ Σ h·rad and = |ĉ·δc| ≤ Σ h·dc; and
     * |p| ≤ |ĉ|₂·|δc|₂ ≤ √g·√S2 (Σ_k ĉ_k² = g·v/(v + eps) ≤ g) */
    if (S2c < S2) S2 = S2c;
    if (Qc < Q) Q = Qc;
    /* |p| = |ĉ(ξ)·δc| ≤ |a·δc| + Σ_k max|ĉ_k − a_k|·dc_k, a·δc = a·δx − (Σ a)·δμ with
     * a·δx = Σ a·x − Σ a·m ∈ [plo − (a·m)⁺, phi − (a·m)⁻] and |δμ| ≤ Σ rad/g */
    if (reg && reg->a && okm && isfinite(reg->plo) && isfinite(reg->phi)) {
        lg_dv am = {0.0, 0.0}, sa = {0.0, 0.0};
        double Qa = 0.0;
        for (size_t k = 0; k < g; k++) {
            am = lg_dv_add(am, lg_dv_mul(lg_dv_pt(reg->a[k]), lg_dv_pt(m[k])));
            sa = lg_dv_add(sa, lg_dv_pt(reg->a[k]));
            lg_dv CR = lg_dv_mul(C[k], *R);
            if (CR.lo < -cap) CR.lo = -cap;
            if (CR.hi > cap) CR.hi = cap;
            Qa = lg_up(Qa + lg_up(lg_dv_dev(CR, reg->a[k]) * H[k].lo));
        }
        double d1 = lg_up(reg->phi - am.lo), d2 = lg_up(am.hi - reg->plo), dm = d1 > d2 ? d1 : d2;
        Qa = lg_up(lg_up(Qa + dm) + lg_up(lg_dv_mag(sa) * sg));
        if (Qa < Q) Q = Qa; /* NaN keeps Q */
    }
    double cs = lg_up(sqrt(lg_up((double)g * S2)));
    if (cs < Q) Q = cs;
    double rg = lg_up(lg_up(R->hi * R->hi) / (double)g);
    double q2g = lg_up(lg_up(3.0 * lg_up(Q * Q)) / (double)g);
    /* −ĉ_i·|δc|² + 3·ĉ_i·(ĉ·δx)²/g lies between −ĉ_i·n² and ĉ_i·(3·p²/g − n²) (n = |δc|₂ ≤ √S2,
     * p = ĉ·δx, p² ≤ min(Q², g·n²)), so its size is at most h_i·max(S2, min(2·S2, 3·Q²/g)) */
    double quad = lg_up(2.0 * S2);
    if (q2g < quad) quad = q2g;
    if (quad < S2) quad = S2;
    /* rho and w·m per output, then the intercepts (kept in Ym[i], which only
     * output i reads, before it) */
    for (size_t i = 0; i < g; i++) {
        double *wl = lo_w + i * g, *wu = up_w + i * g;
        double rho_mv = 0.0, rho_t = 0.0;
        lg_dv wm = {0.0, 0.0};
        for (size_t j = 0; j < g; j++) {
            lg_dv J = lg_ln_jac(C, *R, R2, ig, gg, gamma[i], i, j);
            lg_dv Jm = okm ? lg_ln_jac(Cm, *Rm, Rm2, ig, gg, gamma[i], i, j) : J;
            double w = 0.5 * Jm.lo + 0.5 * Jm.hi; /* any double is sound */
            if (!isfinite(w)) w = 0.0;
            wl[j] = wu[j] = w;
            double r = lg_box_rad(l, u, m, j);
            rho_mv = lg_up(rho_mv + lg_up(lg_dv_dev(J, w) * r));
            rho_t = lg_up(rho_t + lg_up(lg_dv_dev(Jm, w) * r));
            wm = lg_dv_add(wm, lg_dv_mul(lg_dv_pt(w), lg_dv_pt(m[j])));
        }
        double hi_ = lg_dv_mag(lg_dv_mul(C[i], *R));
        if (!(hi_ <= cap)) hi_ = cap;
        /* per side: ĉ_i·(3p²/g − n²) ∈ [ĉ_i]·[−S2, tq], tq = min(2·S2, 3Q²/g), times γ_i·r²/g
         * with r²/g ∈ [0, rg]; its up (down) part pu (pd) ≥ 0, each at most h_i·quad */
        lg_dv CRi = lg_dv_mul(C[i], *R);
        if (CRi.lo < -cap) CRi.lo = -cap;
        if (CRi.hi > cap) CRi.hi = cap;
        double tq = lg_up(2.0 * S2);
        if (q2g < tq) tq = q2g;
        lg_dv PT = lg_dv_mul(CRi, (lg_dv){-S2, tq});
        double pu = gamma[i] >= 0.0 ? PT.hi : lg_up(-PT.lo), pd = gamma[i] >= 0.0 ? lg_up(-PT.lo) : PT.hi;
        double hq = lg_up(hi_ * quad);
        if (pu != pu) pu = hq;
        if (pd != pd) pd = hq;
        if (pu < 0.0) pu = 0.0;
        if (pd < 0.0) pd = 0.0;
        if (pu > hq) pu = hq;
        if (pd > hq) pd = hq;
        double b1 = lg_up(2.0 * lg_up(H[i].lo * Q)), gr = lg_up(0.5 * lg_up(fabs(gamma[i]) * rg));
        double dev = rho_t; /* Σ_j max|Jm_ij − w_j|·rad_j */
        double rho_u = lg_up(rho_t + lg_up(gr * lg_up(b1 + pu))), rho_l = lg_up(rho_t + lg_up(gr * lg_up(b1 + pd)));
        if (rho_mv < rho_u) rho_u = rho_mv;
        if (rho_mv < rho_l) rho_l = rho_mv;
        if (isnan(rho_u)) rho_u = INFINITY;
        if (isnan(rho_l)) rho_l = INFINITY;
        if (rd) {
            double *e = rd + LG_LN_ROW_HEAD + i * LG_LN_ROW_PER;
            lg_dv CR = lg_dv_mul(C[i], *R);
            if (CR.lo < -cap) CR.lo = -cap;
            if (CR.hi > cap) CR.hi = cap;
            e[0] = okm ? lg_dn(Ym[i].lo - wm.hi) : -INFINITY; /* y_i(m) − w·m, lower */
            e[1] = dev;
            e[2] = CR.lo;
            e[3] = CR.hi;
            e[4] = lg_box_rad(l, u, m, i);
            e[5] = okm ? lg_up(Ym[i].hi - wm.lo) : INFINITY; /* y_i(m) − w·m, upper */
            e[6] = 0.0;                                        /* linear on both sides: below */
            e[7] = H[i].lo;                                    /* dc_i ≥ |δc_i| */
            /* what lg_layernorm_row_icpt reads of ĉ_i's interval, once: midpoint, radius, max |·|, |lo| + |hi| */
            e[8] = 0.5 * e[2] + 0.5 * e[3];
            e[9] = fmax(e[3] - e[8], e[8] - e[2]);
            e[10] = fmax(fabs(e[2]), fabs(e[3]));
            e[11] = fabs(e[2]) + fabs(e[3]);
        }
        double lc = okm ? lg_dn(lg_dn(Ym[i].lo - wm.hi) - rho_l) : -INFINITY;
        double uc = okm ? lg_up(lg_up(Ym[i].hi - wm.lo) + rho_u) : INFINITY;
        Ym[i] = (lg_dv){lc, uc};
    }
    int ok = 1;
    for (size_t i = 0; i < g; i++) {
        double *wl = lo_w + i * g, *wu = up_w + i * g;
        double lc = Ym[i].lo, uc = Ym[i].hi;
        double cl = lc, cu = uc;
        for (size_t j = 0; j < g; j++) {
            double c = 0.5 * l[j] + 0.5 * u[j];
            cl += wl[j] * c;
            cu += wu[j] * c;
        }
        if (!isfinite(lc) || !(cl > Y[i].lo)) {
            for (size_t j = 0; j < g; j++) wl[j] = 0.0;
            lc = Y[i].lo;
        }
        if (!isfinite(uc) || !(cu < Y[i].hi)) {
            for (size_t j = 0; j < g; j++) wu[j] = 0.0;
            uc = Y[i].hi;
        }
        lo_c[i] = lc;
        up_c[i] = uc;
        if (!isfinite(lc) || !isfinite(uc)) ok = 0;
        /* both planes kept linear, with the slopes the row data were computed for */
        if (rd) rd[LG_LN_ROW_HEAD + i * LG_LN_ROW_PER + 6] = isfinite(Ym[i].lo) && cl > Y[i].lo && isfinite(Ym[i].hi) && cu < Y[i].hi;
    }
    if (rd && okm && isfinite(rg) && isfinite(Q) && isfinite(quad)) {
        rd[0] = 1.0;
        rd[1] = rg;
        rd[2] = Q;
        rd[3] = quad;
    }
    return ok;
}

double lg_layernorm_row_icpt(size_t g, const double *rd, const double *lam, const double *gamma)
{
    /* plain double arithmetic, then one margin for all of its rounding: every sum
     * below has at most g + 8 roundings, each ≤ 2^-53 relative to the sum of the
     * magnitudes it adds (mass), so (2g + 24)·2^-53·mass + 2^-1000 covers them */
    double base = 0.0, mass = 0.0, devs = 0.0, sabs = 0.0, tsum = 0.0;
    int any = 0;
    for (size_t o = 0; o < g; o++) {
        if (lam[o] == 0.0) continue;
        const double *e = rd + LG_LN_ROW_HEAD + o * LG_LN_ROW_PER;
        if (e[6] != 1.0) return -INFINITY;
        double b = lam[o] * (lam[o] > 0.0 ? e[0] : e[5]);
        base += b;
        mass += fabs(b);
        devs += fabs(lam[o]) * e[1];
        double a = lam[o] * gamma[o];
        sabs += fabs(a);
        tsum += a;
        any = 1;
    }
    if (!any) return 0.0;
    /* a_o = lam[o]·γ_o; ā its exact mean, t ≈ ā: |a_o − ā| ≤ |fl(a_o) − t| + 2^-52·|fl(a_o)| + errt;
     * A1 ≥ Σ_j |a_j − ā|·rad_j; M ≥ |Σ_o (a_o − t)·ĉ_o| (any t: Σ ĉ = 0) by midpoint and radius of
     * the intervals of ĉ, the a_o's own error (≤ ea_o) times max|ĉ_o| added */
    double t = tsum / (double)g, errt = sabs * 0x1p-49;
    double A1 = 0.0, A1c = 0.0, Mm = 0.0, Mr = 0.0, Mabs = 0.0;
    for (size_t o = 0; o < g; o++) {
        const double *e = rd + LG_LN_ROW_HEAD + o * LG_LN_ROW_PER;
        double a = lam[o] * gamma[o], d = a - t, ea = fabs(a) * 0x1p-52 + 0x1p-1074;
        A1 += (fabs(d) + ea + errt) * e[4];
        A1c += (fabs(d) + ea + errt) * e[7];
        double mid = e[8], rad = e[9], mag = e[10];
        Mm += d * mid;
        Mr += fabs(d) * rad + (ea + errt) * mag + 0x1p-52 * fabs(d) * e[11];
        Mabs += fabs(d) * mag;
    }
    if (A1c < A1) A1 = A1c; /* |a·δc| = |(a − ā)·δc| ≤ Σ |a_j − ā|·dc_j too (Σ δc = 0) */
    double M = fabs(Mm) + Mr;
    double rem = 0.5 * rd[1] * (2.0 * A1 * rd[2] + M * rd[3]);
    /* the magnitudes behind rem, scaled as rem scales them */
    mass += devs + 0.5 * rd[1] * (2.0 * A1 * rd[2] + (Mabs + Mr) * rd[3]);
    double margin = lg_up(lg_up((double)(2 * g + 24) * 0x1p-53 * mass) + 0x1p-1000);
    double v = lg_dn(lg_dn(lg_dn(base - devs) - rem) - margin);
    return v == v && isfinite(margin) ? v : -INFINITY;
}
