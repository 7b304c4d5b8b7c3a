/* devtf_softmax.c — the softmax node's deviation rules: its mean-value bound, its
 * rounding, its step of lg_devtf_node and its noise entry
 * (devtf.h; the shared parts: devtf_kind.h). */
#include "verify/devtf.h"

#include <float.h>
#include <math.h>

#include "core/net.h"
#include "verify/devtf_kind.h"
#include "verify/relax_softmax.h"

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

double lg_devtf_round_softmax(int g)
{
    return (4.0 * LG_DEVTF_ETA + lg_dev_gamma(g) + (g + 4.0) * LG_DEVTF_EPS) * (1.0 + 1e-10) +
           (g + 1.0) * LG_DEVTF_TINY;
}

static void lg_devtf_softmax_group(const lg_linear *L, int s, const double *l, const double *u, const double *es,
                                   const double *clo, const double *chi, double *lo, double *hi, double *e,
                                   const lg_devtf_gscr *c)
{
    (void)clo, (void)chi;
    const int g = L->op.group;
    lg_dv *w = c->w;
    double *d = c->d, *pw = c->pw, *qw = c->qw, *pc = c->pc, *qc = c->qc;
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
}

void lg_devtf_softmax_node(const lg_linear *L, const double *al, const double *ah, const double *ea,
                           const double *bl, const double *bh, const double *eb, const double *clo, const double *chi,
                           double *lo, double *hi, double *e, double *work)
{
    (void)bl, (void)bh, (void)eb;
    lg_devtf_groups(L, al, ah, ea, clo, chi, lo, hi, e, work, lg_devtf_softmax_group);
}

void lg_devtf_softmax_noise(const lg_linear *L, const double *xa, const double *ma, const double *xb,
                            const double *mb, double *xo)
{
    (void)xb, (void)mb;
    const int g = L->op.group;
    for (int s = 0; s < L->n_out; s += g) {
        double mx, mm;
        lg_devtf_group_max(g, xa + s, ma + s, &mx, &mm);
        for (int i = s; i < s + g; i++) xo[i] = (0.5 * mx + lg_devtf_round_softmax(g)) * (1.0 + LG_DEVTF_EPS);
    }
}

void lg_devtf_softmax_envelope(const lg_linear *L, const double *la, const double *ua, const double *ea,
                               const double *ma, const double *lb, const double *ub, const double *eb,
                               const double *mb, double *s, lg_dv *work, double *d, double *bx)
{
    (void)ma, (void)lb, (void)ub, (void)eb, (void)mb, (void)bx;
    const size_t n = (size_t)L->n_out, gs = (size_t)L->op.group;
    for (size_t s0 = 0; s0 < n; s0 += gs) {
        int ok = lg_dev_softmax(gs, la + s0, ua + s0, ea + s0, d, work);
        for (size_t i = 0; i < gs; i++)
            s[s0 + i] = ok ? nextafter(d[i] + lg_devtf_round_softmax((int)gs), INFINITY) : INFINITY;
    }
}
