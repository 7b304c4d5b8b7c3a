/* opstage_devgrad.c — the Transformer node kinds' interval vector–Jacobian
 * products for the certified deviation's interval gradient (verify/devgrad.h,
 * DESIGN.md §1 "Deviation bound", *the interval gradient*): their entries
 * dev_vjp of verify/opstage.h. Each takes its sources' intervals (which hold
 * the node's inputs over the region), its outputs' intervals, and its outputs'
 * adjoint v in centre/radius form, and adds an enclosure of vᵀ·J for every J
 * of the node's Jacobian over the region into its sources' adjoints (centre,
 * radius). Every step in outward-rounded interval arithmetic (relax_iv.h);
 * the conversion to centre/radius rounds the radius up. Nothing is
 * allocated: work holds LG_DEVGRAD_VJP_WORK(g) lg_dv of the caller's.
 */
#include <float.h>
#include <math.h>

#include "verify/devgrad.h"
#include "verify/devtf.h"
#include "verify/opstage.h"
#include "verify/relax_iv.h"

static lg_dv iv_of(double m, double r) { return (lg_dv){lg_dn(m - r), lg_up(m + r)}; }

/* am += mid of x, ar += its radius, both rounded so that [am − ar, am + ar] ⊇ old + x. */
static void iv_acc(lg_dv x, double *am, double *ar)
{
    if (!lg_dv_finite(x)) {
        *ar = INFINITY;
        return;
    }
    double m = 0.5 * x.lo + 0.5 * x.hi;
    double r = fmax(lg_up(x.hi - m), lg_up(m - x.lo));
    double s = *am + m;
    double err = lg_up(fabs(s) * DBL_EPSILON); /* the rounding of the centre's sum */
    *am = s;
    *ar = lg_up(lg_up(*ar + r) + err);
    if (!isfinite(*am)) *am = 0.0, *ar = INFINITY;
}

void lg_devgrad_product(const lg_layer *L, const lg_devgrad_src *S, const double *vm, const double *vr, lg_dv *work)
{
    (void)work;
    size_t n = (size_t)L->n_out, K = (size_t)L->lin.op.K;
    const int *ia = L->lin.map, *ib = L->lin.map + n * K;
    for (size_t o = 0; o < n; o++) {
        if (vm[o] == 0.0 && vr[o] == 0.0) continue;
        lg_dv v = iv_of(vm[o], vr[o]);
        for (size_t q = o * K; q < (o + 1) * K; q++) {
            lg_dv a = {S->alo[ia[q]], S->ahi[ia[q]]}, b = {S->blo[ib[q]], S->bhi[ib[q]]};
            iv_acc(lg_dv_mul(v, b), &S->am[ia[q]], &S->ar[ia[q]]);
            iv_acc(lg_dv_mul(v, a), &S->bm[ib[q]], &S->br[ib[q]]);
        }
    }
}

/* s over [lo, hi] ∩ [0, 1]. */
static lg_dv iv_prob(double lo, double hi)
{
    return (lg_dv){lo > 0.0 ? lo : 0.0, hi < 1.0 ? hi : 1.0};
}

void lg_devgrad_softmax(const lg_layer *L, const lg_devgrad_src *S, const double *vm, const double *vr, lg_dv *work)
{
    (void)work;
    int n = L->n_out, g = L->lin.op.group;
    for (int s0 = 0; s0 < n; s0 += g) {
        /* ∂/∂x_j = s_j·(v_j − Σ_i v_i s_i), Σ_i v_i s_i = c + Σ_i (v_i − c)·s_i as Σ s = 1 */
        double c = 0.0;
        int any = 0;
        for (int i = s0; i < s0 + g; i++) c += vm[i], any |= vm[i] != 0.0 || vr[i] != 0.0;
        if (!any) continue;
        c /= g;
        lg_dv t = lg_dv_pt(c);
        for (int i = s0; i < s0 + g; i++)
            t = lg_dv_add(t, lg_dv_mul(lg_dv_sub(iv_of(vm[i], vr[i]), lg_dv_pt(c)), iv_prob(S->olo[i], S->ohi[i])));
        for (int j = s0; j < s0 + g; j++)
            iv_acc(lg_dv_mul(iv_prob(S->olo[j], S->ohi[j]), lg_dv_sub(iv_of(vm[j], vr[j]), t)), &S->am[j], &S->ar[j]);
    }
}

void lg_devgrad_layernorm(const lg_layer *L, const lg_devgrad_src *S, const double *vm, const double *vr, lg_dv *work)
{
    int n = L->n_out, g = L->lin.op.group;
    double eps = L->lin.op.eps;
    const double *gamma = L->lin.W, *beta = L->lin.W + g;
    double hmax = lg_up(sqrt(g - 1.0)); /* |x̂_i| ≤ √(g − 1) */
    lg_dv *xh = work, *w = work + g, *cen = work + 2 * g;
    for (int s0 = 0; s0 < n; s0 += g) {
        int any = 0;
        for (int i = s0; i < s0 + g; i++) any |= vm[i] != 0.0 || vr[i] != 0.0;
        if (!any) continue;
        const double *l = S->alo + s0, *u = S->ahi + s0;
        const double *cl = S->clo ? S->clo + s0 : NULL, *ch = S->chi ? S->chi + s0 : NULL;
        /* r = 1/√(v + eps) with v the group's variance over the region */
        double vlo = lg_devtf_ln_vlo(g, l, u, cl, ch), vhi = 0.0, Sl = 0.0, Su = 0.0;
        for (int j = 0; j < g; j++) Sl = lg_dn(Sl + l[j]), Su = lg_up(Su + u[j]);
        for (int i = 0; i < g; i++) { /* |c_i| over the box (and the centred bounds) */
            double a = lg_dn(lg_dn(lg_dn((g - 1.0) * l[i]) - lg_up(Su - u[i])) / g);
            double b = lg_up(lg_up(lg_up((g - 1.0) * u[i]) - lg_dn(Sl - l[i])) / g);
            if (cl && ch && cl[i] <= ch[i]) a = fmax(a, cl[i]), b = fmin(b, ch[i]);
            double m = fmax(fabs(a), fabs(b));
            vhi = lg_up(vhi + lg_up(m * m));
            cen[i] = (lg_dv){a, b};
        }
        vhi = lg_up(vhi / g);
        lg_dv r = lg_dv_rsqrt((lg_dv){lg_dn(vlo + eps), lg_up(vhi + eps)});
        if (!lg_dv_finite(r)) r = (lg_dv){0.0, lg_up(1.0 / lg_dn(sqrt(eps)))};
        lg_dv m1 = lg_dv_pt(0.0), m2 = lg_dv_pt(0.0);
        for (int i = 0; i < g; i++) {
            double gi = gamma[i];
            lg_dv x = {-hmax, hmax};
            lg_dv cx = lg_dv_mul(cen[i], r); /* x̂_i = c_i·r */
            if (lg_dv_finite(cx)) x.lo = fmax(x.lo, cx.lo), x.hi = fmin(x.hi, cx.hi);
            if (gi != 0.0) { /* x̂_i = (y_i − β_i)/γ_i from the outputs' bounds */
                lg_dv y = lg_dv_div(lg_dv_sub((lg_dv){S->olo[s0 + i], S->ohi[s0 + i]}, lg_dv_pt(beta[i])),
                                    lg_dv_pt(fabs(gi)));
                if (gi < 0.0) y = lg_dv_neg(y);
                if (lg_dv_finite(y)) x.lo = fmax(x.lo, y.lo), x.hi = fmin(x.hi, y.hi);
                if (x.lo > x.hi) x = (lg_dv){-hmax, hmax}; /* cannot happen for sound bounds; no claim */
            }
            xh[i] = x;
            w[i] = lg_dv_mul(iv_of(vm[s0 + i], vr[s0 + i]), lg_dv_pt(gi));
            m1 = lg_dv_add(m1, w[i]);
            m2 = lg_dv_add(m2, lg_dv_mul(w[i], x));
        }
        m1 = lg_dv_div(m1, lg_dv_pt((double)g));
        m2 = lg_dv_div(m2, lg_dv_pt((double)g));
        /* ∂/∂x_j = r·(w_j − mean(w) − x̂_j·mean(w·x̂)), w_i = γ_i·v_i */
        for (int j = 0; j < g; j++)
            iv_acc(lg_dv_mul(r, lg_dv_sub(lg_dv_sub(w[j], m1), lg_dv_mul(xh[j], m2))), &S->am[s0 + j], &S->ar[s0 + j]);
    }
}
