/* devtf.c — deviation bounds through product, softmax and layernorm
 * (devtf.h). */
#include "verify/devtf.h"

#include <math.h>

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
