/* devtf_layernorm.c — the layernorm node's deviation rules: its mean-value and
 * segment bounds, its rounding, its step of lg_devtf_node, its noise entry and the
 * centred bounds it reads
 * (devtf.h; the shared parts: devtf_kind.h). */
#include "verify/devtf.h"

#include <float.h>
#include <math.h>

#include "core/net.h"
#include "verify/devtf_kind.h"
#include "verify/relax_layernorm.h"

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

/* 1/√eps rounded up (sqrt and / are correctly rounded: 4 ulps are plenty). */
static double lg_devtf_rsq(double eps) { return 1.0 / sqrt(eps) * (1.0 + 4.0 * LG_DEVTF_EPS); }

/* |ĉ_i − c_i| of the computed centring for inputs of magnitude ≤ M */
static double lg_devtf_dc(int g, double M) { return 1.1 * (lg_dev_gamma(g) + 2.0 * LG_DEVTF_EPS) * M; }

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
    double r = ag * ((1.0 + sg) * dc * rmax + sg * lg_dev_gamma(g + 8)) +
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

static void lg_devtf_layernorm_group(const lg_linear *L, int s, const double *l, const double *u, const double *es,
                                     const double *clo, const double *chi, double *lo, double *hi, double *e,
                                     const lg_devtf_gscr *c)
{
    const int g = L->op.group;
    lg_dv *w = c->w;
    double *d = c->d, *pw = c->pw, *qw = c->qw, *pc = c->pc, *qc = c->qc;
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

void lg_devtf_layernorm_node(const lg_linear *L, const double *al, const double *ah, const double *ea,
                             const double *bl, const double *bh, const double *eb, const double *clo,
                             const double *chi, double *lo, double *hi, double *e, double *work)
{
    (void)bl, (void)bh, (void)eb;
    lg_devtf_groups(L, al, ah, ea, clo, chi, lo, hi, e, work, lg_devtf_layernorm_group);
}

void lg_devtf_layernorm_noise(const lg_linear *L, const double *xa, const double *ma, const double *xb,
                              const double *mb, double *xo)
{
    (void)xb, (void)mb;
    const int g = L->op.group;
    for (int s = 0; s < L->n_out; s += g) {
        double mx, mm;
        lg_devtf_group_max(g, xa + s, ma + s, &mx, &mm);
        for (int i = s; i < s + g; i++)
            xo[i] = (lg_devtf_lip_layernorm(g, L->op.eps, L->W[i - s]) * mx * (1.0 + LG_DEVTF_EPS) +
                     lg_devtf_round_layernorm(g, mm, lg_devtf_ln_rmax(g, NULL, NULL, L->op.eps, mm), L->W[i - s],
                                              L->W[g + i - s])) *
                    (1.0 + LG_DEVTF_EPS);
    }
}

int lg_devtf_layernorm_centred(const lg_linear *L, const double *err, const double *clo_in, const double *chi_in,
                               double *clo, double *chi)
{
    const int g = L->op.group, no = L->n_out;
    for (int s0 = 0; s0 < no; s0 += g) {
        double S = 0.0;
        for (int i = s0; i < s0 + g; i++) S += err[i];
        S = S / g * (1.0 + 2.0 * g * LG_DEVTF_EPS);
        for (int i = s0; i < s0 + g; i++) {
            double w = (err[i] + S) * (1.0 + 2.0 * LG_DEVTF_EPS);
            clo[i] = (clo_in[i] - w) - LG_DEVTF_EPS * (fabs(clo_in[i]) + w);
            chi[i] = (chi_in[i] + w) + LG_DEVTF_EPS * (fabs(chi_in[i]) + w);
            if (!(w >= 0.0) || !(w < INFINITY)) clo[i] = -INFINITY, chi[i] = INFINITY;
        }
    }
    return 1;
}

void lg_devtf_layernorm_envelope(const lg_linear *L, const double *la, const double *ua, const double *ea,
                                 const double *ma, const double *lb, const double *ub, const double *eb,
                                 const double *mb, double *s, lg_dv *work, double *d, double *bx)
{
    (void)lb, (void)ub, (void)eb, (void)mb;
    const size_t n = (size_t)L->n_out, gs = (size_t)L->op.group;
    for (size_t s0 = 0; s0 < n; s0 += gs) {
        int ok = lg_dev_layernorm(gs, la + s0, ua + s0, ea + s0, L->op.eps, L->W, d, work);
        double M = 0.0;
        for (size_t i = 0; i < gs; i++) { /* the computed inputs lie in the region widened by their error */
            bx[i] = nextafter(la[s0 + i] - ea[s0 + i], -INFINITY);
            bx[gs + i] = nextafter(ua[s0 + i] + ea[s0 + i], INFINITY);
            M = fmax(M, ma[s0 + i]);
        }
        double rmax = lg_devtf_ln_rmax((int)gs, bx, bx + gs, L->op.eps, M);
        for (size_t i = 0; i < gs; i++) {
            double rho = lg_devtf_round_layernorm((int)gs, M, rmax, L->W[i], L->W[gs + i]);
            s[s0 + i] = ok ? nextafter(d[i] + rho, INFINITY) : INFINITY;
        }
    }
}
