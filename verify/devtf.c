/* devtf.c — deviation bounds through product, softmax and layernorm
 * (devtf.h). */
#include "verify/devtf.h"

#include <float.h>
#include "core/act_relax.h"
#include <math.h>

#include "core/net.h"
#include "verify/relax_layernorm.h"
#include "verify/relax_softmax.h"

double lg_dev_bilinear(double la, double ua, double ea, double lb, double ub, double eb)
{
    if (!(ea >= 0.0) || !(eb >= 0.0)) return INFINITY;
    double ma = lg_dv_mag((lg_dv){la, ua});
    double mb = lg_dv_mag((lg_dv){lg_dn(lb - eb), lg_up(ub + eb)});
    double d = lg_up(lg_up(ma * eb) + lg_up(mb * ea));
    return isnan(d) ? INFINITY : d;
}

/* The widened box into W (lo in .lo, hi in .hi); 0 if not finite. */
static int lg_dev_widen(size_t g, const double *l, const double *u, const double *e, double *wl, double *wu)
{
    for (size_t j = 0; j < g; j++) {
        if (!(e[j] >= 0.0)) return 0;
        wl[j] = lg_dn(l[j] - e[j]);
        wu[j] = lg_up(u[j] + e[j]);
        if (!isfinite(wl[j]) || !isfinite(wu[j]) || !(wl[j] <= wu[j])) return 0;
    }
    return 1;
}

/* d_i = Σ_j mag(J_ij)·e_j rounded up. */
static int lg_dev_apply(size_t g, const lg_dv *J, const double *e, double *d)
{
    int ok = 1;
    for (size_t i = 0; i < g; i++) {
        double s = 0.0;
        for (size_t j = 0; j < g; j++)
            if (e[j] != 0.0) s = lg_up(s + lg_up(lg_dv_mag(J[i * g + j]) * e[j]));
        if (!(s < INFINITY)) {
            s = INFINITY;
            ok = 0;
        }
        d[i] = s;
    }
    return ok;
}

int lg_dev_softmax(size_t g, const double *l, const double *u, const double *e, double *d, lg_dv *work)
{
    lg_dv *J = work, *W = work + g * g, *rest = W + g;
    double *wl = (double *)W, *wu = wl + g; /* 2g doubles in g lg_dv */
    if (!lg_dev_widen(g, l, u, e, wl, wu)) {
        /* |∂s_i/∂x_j| ≤ 1/4 on all of R^g */
        for (size_t j = 0; j < g; j++)
            if (!(e[j] >= 0.0)) {
                for (size_t i = 0; i < g; i++) d[i] = INFINITY;
                return 0;
            }
        for (size_t k = 0; k < g * g; k++) J[k] = (lg_dv){-0.25, 0.25};
        return lg_dev_apply(g, J, e, d);
    }
    lg_softmax_jacobian(g, wl, wu, J, rest);
    return lg_dev_apply(g, J, e, d);
}

int lg_dev_layernorm(size_t g, const double *l, const double *u, const double *e, double eps, const double *gamma,
                     double *d, lg_dv *work)
{
    lg_dv *J = work, *W = work + g * g, *rest = W + g;
    double *wl = (double *)W, *wu = wl + g;
    if (!lg_dev_widen(g, l, u, e, wl, wu) || !lg_layernorm_jacobian(g, wl, wu, eps, gamma, J, rest)) {
        for (size_t i = 0; i < g; i++) d[i] = INFINITY;
        return 0;
    }
    return lg_dev_apply(g, J, e, d);
}

#define LG_DEVTF_ETA LG_LIBM_REL_ERR /* trusted relative error of libm's exp, erfc (core/act_relax.h) */
#define LG_DEVTF_TINY 0x1p-1000 /* absolute margin for underflow */
#define LG_DEVTF_EPS 0x1p-52    /* DBL_EPSILON */

/* γ_n of anneal/deviation.h */
static double lg_devtf_gamma(double n) { return 1e-12 + (n + 2.0) * LG_DEVTF_EPS; }

double lg_devtf_round_product(int K, double mass)
{
    double r = lg_up(lg_up(lg_devtf_gamma(K) * mass) * (1.0 + 1e-10)) + LG_DEVTF_TINY * K;
    return r == r ? r : INFINITY;
}

double lg_devtf_round_softmax(int g)
{
    return (4.0 * LG_DEVTF_ETA + lg_devtf_gamma(g) + (g + 4.0) * LG_DEVTF_EPS) * (1.0 + 1e-10) +
           (g + 1.0) * LG_DEVTF_TINY;
}

/* 1/√eps rounded up (sqrt and / are correctly rounded: 4 ulps are plenty). */
static double lg_devtf_rsq(double eps) { return 1.0 / sqrt(eps) * (1.0 + 4.0 * LG_DEVTF_EPS); }

/* |ĉ_i − c_i| of the computed centring for inputs of magnitude ≤ M */
static double lg_devtf_dc(int g, double M) { return 1.1 * (lg_devtf_gamma(g) + 2.0 * LG_DEVTF_EPS) * M; }

double lg_devtf_ln_vlo(int g, const double *l, const double *u, const double *clo, const double *chi)
{
    double Sl = 0.0, Su = 0.0, v = 0.0;
    if (l && u)
        for (int j = 0; j < g; j++) Sl = lg_dn(Sl + l[j]), Su = lg_up(Su + u[j]);
    for (int i = 0; i < g; i++) {
        double cl = -INFINITY, ch = INFINITY;
        if (l && u) { /* c_i = ((g − 1)·x_i − Σ_{j≠i} x_j)/g over the box, rounded outward */
            cl = lg_dn(lg_dn(lg_dn((g - 1.0) * l[i]) - lg_up(Su - u[i])) / g);
            ch = lg_up(lg_up(lg_up((g - 1.0) * u[i]) - lg_dn(Sl - l[i])) / g);
        }
        if (clo && chi && clo[i] <= chi[i]) { /* both hold c_i: intersect (an empty one is no claim) */
            double a = clo[i] > cl ? clo[i] : cl, b = chi[i] < ch ? chi[i] : ch;
            if (a <= b) cl = a, ch = b;
        }
        double m = cl > 0.0 ? cl : ch < 0.0 ? -ch : 0.0;
        v = lg_dn(v + lg_dn(m * m));
    }
    v = lg_dn(v / g);
    return v > 0.0 && v < INFINITY ? v : 0.0;
}

double lg_devtf_ln_rmax(int g, const double *l, const double *u, double eps, double M)
{
    if (!(eps > 0.0)) return INFINITY;
    double r0 = lg_devtf_rsq(eps);
    if (!l || !u) return r0;
    double v = lg_devtf_ln_vlo(g, l, u, NULL, NULL);
    if (!(v > 0.0)) return r0;
    double sd = lg_dn(lg_dn(sqrt(v)) - lg_devtf_dc(g, M)); /* σ − Δc along the segment from c to ĉ */
    if (!(sd > 0.0)) return r0;
    double r = 1.0 / sqrt(lg_dn(lg_dn(sd * sd) + eps)) * (1.0 + 4.0 * LG_DEVTF_EPS);
    return r < r0 ? r : r0;
}

int lg_dev_layernorm_seg(int g, const double *l, const double *u, const double *clo, const double *chi,
                         const double *e, double eps, const double *gamma, double *d)
{
    for (int i = 0; i < g; i++) d[i] = INFINITY;
    if (!(eps > 0.0)) return 0;
    double S = 0.0, S2 = 0.0;
    for (int j = 0; j < g; j++) {
        if (!(e[j] >= 0.0)) return 0;
        S = lg_up(S + e[j]);
        S2 = lg_up(S2 + lg_up(e[j] * e[j]));
    }
    double rms = lg_up(sqrt(lg_up(S2 / g)) * (1.0 + 2.0 * LG_DEVTF_EPS)); /* ≥ |x' − x|₂/√g ≥ |δc|₂/√g */
    double sg = lg_up(S / g);
    /* σ ≥ σ_lo − rms on the segment, r ≤ R */
    double sl = lg_dn(lg_dn(sqrt(lg_devtf_ln_vlo(g, l, u, clo, chi))) * (1.0 - 2.0 * LG_DEVTF_EPS));
    double s = lg_dn(sl - rms);
    double R = lg_devtf_rsq(eps);
    if (s > 0.0) {
        double r = 1.0 / sqrt(lg_dn(lg_dn(s * s) + eps)) * (1.0 + 4.0 * LG_DEVTF_EPS);
        if (r < R) R = r;
    }
    double cap = sqrt((double)(g - 1)) * (1.0 + 4.0 * LG_DEVTF_EPS), Sl = 0.0, Su = 0.0;
    if (l && u)
        for (int j = 0; j < g; j++) Sl = lg_dn(Sl + l[j]), Su = lg_up(Su + u[j]);
    int ok = 1;
    for (int i = 0; i < g; i++) {
        /* |c_i| on the segment: c_i of the box (and of [clo, chi]) widened by |δc_i| ≤ e_i + Σe/g */
        double dci = lg_up(e[i] + sg), cm = INFINITY;
        if (l && u) {
            double cl = lg_dn(lg_dn(lg_dn((g - 1.0) * l[i]) - lg_up(Su - u[i])) / g);
            double ch = lg_up(lg_up(lg_up((g - 1.0) * u[i]) - lg_dn(Sl - l[i])) / g);
            cm = lg_dv_mag((lg_dv){cl, ch});
        }
        if (clo && chi && clo[i] <= chi[i]) {
            double c2 = lg_dv_mag((lg_dv){clo[i], chi[i]});
            if (c2 < cm) cm = c2;
        }
        double h = lg_up(lg_up(cm + dci) * R); /* |ĉ_i| = |c_i|·r */
        if (!(h <= cap)) h = cap;
        /* |dy_i/dt| = |γ_i|·r·|δc_i − ĉ_i·(ĉ·δc)/g| ≤ |γ_i|·R·(|δc_i| + h_i·|δc|₂/√g) */
        double t = lg_up(lg_up(fabs(gamma[i]) * R) * lg_up(dci + lg_up(h * rms)));
        if (t == t && t < INFINITY) d[i] = t;
        else ok = 0;
    }
    return ok;
}

double lg_devtf_round_layernorm(int g, double M, double rmax, double gamma, double beta)
{
    if (!(rmax >= 0.0) || !(M >= 0.0)) return INFINITY;
    double sg = sqrt((double)g) * (1.0 + LG_DEVTF_EPS), ag = fabs(gamma);
    double dc = lg_devtf_dc(g, M); /* |ĉ_i − c_i| */
    double r = ag * ((1.0 + sg) * dc * rmax + sg * lg_devtf_gamma(g + 8)) +
               LG_DEVTF_EPS * (ag * sg + fabs(beta));
    r = r * (1.0 + 1e-10) + (g + 1.0) * LG_DEVTF_TINY * (1.0 + ag);
    return r == r ? r : INFINITY;
}

double lg_devtf_lip_layernorm(int g, double eps, double gamma)
{
    if (!(eps > 0.0)) return INFINITY;
    double r = fabs(gamma) * (2.0 + sqrt((double)(g - 1)) * (1.0 + LG_DEVTF_EPS)) * lg_devtf_rsq(eps) * (1.0 + 1e-10);
    return r == r ? r : INFINITY;
}

/* a + b rounded up, ∞ on NaN */
static double lg_devtf_addu(double a, double b)
{
    double s = lg_up(a + b);
    return s == s ? s : INFINITY;
}

/* Intersect [lo, hi] with the planes' image over the box: the lower plane's
 * smallest value and the upper plane's largest (the mean-value form: its
 * width follows the Jacobian, not the interval evaluation's dependencies). */
static void lg_devtf_plane_image(int g, const double *l, const double *u, const double *pw, const double *pc,
                                 const double *qw, const double *qc, double *lo, double *hi)
{
    for (int i = 0; i < g; i++) {
        double a = pc[i], b = qc[i];
        for (int j = 0; j < g; j++) {
            double p = pw[(size_t)i * g + j], q = qw[(size_t)i * g + j];
            a = lg_dn(a + fmin(lg_dn(p * l[j]), lg_dn(p * u[j])));
            b = lg_up(b + fmax(lg_up(q * l[j]), lg_up(q * u[j])));
        }
        if (a == a && a > lo[i]) lo[i] = a;
        if (b == b && b < hi[i]) hi[i] = b;
    }
}

int lg_devtf_node(const lg_linear *L, const double *al, const double *ah, const double *ea, const double *bl,
                  const double *bh, const double *eb, const double *clo, const double *chi, double *lo, double *hi,
                  double *e, double *work)
{
    int ok = 1;
    const int n = L->n_out;
    if (L->kind == LG_LAYER_BILINEAR) {
        const size_t K = (size_t)L->op.K;
        const int *ia = L->map, *ib = L->map + (size_t)n * K;
        for (size_t o = 0; o < (size_t)n; o++) {
            lg_dv s = {0.0, 0.0};
            double mr = 0.0, mg = 0.0, d = 0.0;
            for (size_t q = o * K; q < (o + 1) * K; q++) {
                const int i = ia[q], j = ib[q];
                s = lg_dv_add(s, lg_dv_mul((lg_dv){al[i], ah[i]}, (lg_dv){bl[j], bh[j]}));
                double ma = lg_dv_mag((lg_dv){al[i], ah[i]}), mb = lg_dv_mag((lg_dv){bl[j], bh[j]});
                mr = lg_devtf_addu(mr, lg_up(ma * mb));
                mg = lg_devtf_addu(mg, lg_up(lg_up(ma + ea[i]) * lg_up(mb + eb[j])));
                d = lg_devtf_addu(d, lg_dev_bilinear(al[i], ah[i], ea[i], bl[j], bh[j], eb[j]));
            }
            double rr = lg_devtf_round_product((int)K, mr), rg = lg_devtf_round_product((int)K, mg);
            lo[o] = lg_dn(s.lo - rr);
            hi[o] = lg_up(s.hi + rr);
            e[o] = lg_devtf_addu(d, lg_devtf_addu(rr, rg));
        }
    } else {
        const int g = L->op.group;
        lg_dv *w = (lg_dv *)work;
        double *d = work + 2 * LG_DEVTF_WORK((size_t)g), *pw = d + g, *qw = pw + (size_t)g * g, *pc = qw + (size_t)g * g,
               *qc = pc + g;
        for (int s = 0; s < n; s += g) {
            const double *l = al + s, *u = ah + s, *es = ea + s;
            if (L->kind == LG_LAYER_SOFTMAX) {
                const double rho = lg_devtf_round_softmax(g);
                lg_softmax_image((size_t)g, l, u, lo + s, hi + s, w);
                lg_relax_softmax((size_t)g, l, u, NULL, pw, pc, qw, qc, w);
                lg_devtf_plane_image(g, l, u, pw, pc, qw, qc, lo + s, hi + s);
                lg_dev_softmax((size_t)g, l, u, es, d, w);
                double me = 0.0; /* Σ_j |∂_j s_i| ≤ ½ on all of R^g, and s ∈ [0, 1] */
                for (int i = 0; i < g; i++) me = es[i] > me || es[i] != es[i] ? es[i] : me;
                double glob = fmin(lg_up(0.5 * me), 1.0);
                for (int i = 0; i < g; i++) {
                    lo[s + i] = lg_dn(lo[s + i] - rho);
                    hi[s + i] = lg_up(hi[s + i] + rho);
                    e[s + i] = lg_devtf_addu(d[i] < glob ? d[i] : glob, 2.0 * rho);
                }
            } else {
                const double *gamma = L->W, *beta = L->W + g;
                double mr = 0.0, me = 0.0;
                for (int i = 0; i < g; i++) { /* NaN propagates (fmax would drop it) */
                    double a = lg_dv_mag((lg_dv){l[i], u[i]});
                    if (!(a <= mr)) mr = a;
                    if (!(es[i] <= me)) me = es[i];
                }
                double mg = lg_devtf_addu(mr, me);
                double xr = lg_devtf_ln_rmax(g, l, u, L->op.eps, mr), xg = lg_devtf_ln_rmax(g, NULL, NULL, L->op.eps, mg);
                lg_layernorm_image((size_t)g, l, u, L->op.eps, gamma, beta, lo + s, hi + s, w);
                lg_relax_layernorm((size_t)g, l, u, L->op.eps, gamma, beta, NULL, pw, pc, qw, qc, w);
                lg_devtf_plane_image(g, l, u, pw, pc, qw, qc, lo + s, hi + s);
                lg_dev_layernorm((size_t)g, l, u, es, L->op.eps, gamma, d, w);
                /* the segment rule (σ from the centred bounds): pw holds g doubles here */
                lg_dev_layernorm_seg(g, l, u, clo ? clo + s : NULL, chi ? chi + s : NULL, es, L->op.eps, gamma, pw);
                for (int i = 0; i < g; i++)
                    if (pw[i] < d[i]) d[i] = pw[i];
                if (me < mr) { /* the reference's inputs lie in [l − e, u + e] */
                    for (int i = 0; i < g; i++) pc[i] = lg_dn(l[i] - es[i]), qc[i] = lg_up(u[i] + es[i]);
                    xg = lg_devtf_ln_rmax(g, pc, qc, L->op.eps, mg);
                }
                for (int i = 0; i < g; i++) {
                    double rr = lg_devtf_round_layernorm(g, mr, xr, gamma[i], beta[i]);
                    double rg = lg_devtf_round_layernorm(g, mg, xg, gamma[i], beta[i]);
                    /* on all of R^g: the Lipschitz constant, and |y_i − β_i| ≤ |γ_i|·√(g − 1) */
                    double glob = fmin(lg_up(lg_devtf_lip_layernorm(g, L->op.eps, gamma[i]) * me),
                                       lg_up(2.0 * fabs(gamma[i]) * sqrt((double)(g - 1)) * (1.0 + 4.0 * LG_DEVTF_EPS)));
                    lo[s + i] = lg_dn(lo[s + i] - rr);
                    hi[s + i] = lg_up(hi[s + i] + rr);
                    e[s + i] = lg_devtf_addu(d[i] < glob ? d[i] : glob, lg_devtf_addu(rr, rg));
                }
            }
        }
    }
    for (int o = 0; o < n; o++) {
        if (!(lo[o] >= -DBL_MAX)) lo[o] = -INFINITY, ok = 0;
        if (!(hi[o] <= DBL_MAX)) hi[o] = INFINITY, ok = 0;
        if (!(e[o] <= DBL_MAX)) e[o] = INFINITY, ok = 0;
    }
    return ok;
}
