/* opstage_layernorm.c — the layernorm node's verify entries (opstage.h
 * entry "layernorm", DESIGN.md §1 "Transformer nodes"): its interval bound
 * (the centred values as intervals of linear forms, the variance, the
 * reciprocal square root, every operation rounded outward), the attack's
 * backward step and its rows for the complete back-ends (tnode_planes.h:
 * relax_layernorm.h's two planes per output on the region of its
 * difference bounds), and its part of the back-substitution's group step
 * (its planes per group with their row data for lg_layernorm_row_icpt).
 * Its difference bounds are opstage_ln.c's. The rows' scratch is
 * allocated per call (tnode_planes.c) and freed before returning. */
#include "verify/opstage.h"

#include <math.h>

#include "encode/problem.h"
#include "verify/devgrad.h"
#include "verify/devtf.h"
#include "verify/backsub.h"
#include "verify/relax_iv.h"
#include "verify/relax_layernorm.h"
#include "verify/tnode_planes.h"

/* Layernorm: c_i = x_i − μ = (1 − 1/g)·x_i − (1/g)·Σ_{j≠i} x_j, an interval
 * of a linear form (margin rule); σ² ∈ (1/g)·Σ [min c², max c²] (min 0
 * when c_i's interval holds 0); r = 1/√(σ² + ε) ∈ [1/√(σ²_hi + ε), 1/√(σ²_lo + ε)]; n_i = c_i·r, also within
 * ±√(g − 1) (Σ c = 0 gives c_i² ≤ (g − 1)·σ²); out = gamma·n + beta. */
void lg_bounds_layernorm(const lg_net *net, const lg_layer *L, const double *al, const double *ah, const size_t *noff,
                         double *lo, double *hi)
{
    (void)net;
    size_t so = noff[L->lin.src + 1];
    const double *xl = al + so, *xh = ah + so;
    int g = L->lin.op.group;
    const double *gamma = L->lin.W, *beta = L->lin.W + g;
    double ig = 1.0 / g, ig1 = 1.0 - ig; /* the coefficients as doubles: the form below is exact in them */
    double cap = lg_up(sqrt((double)(g - 1)));
    for (int s = 0; s < L->n_out; s += g) {
        double vh = 0.0, vl = 0.0;
        int ok = 1;
        for (int pass = 0; pass < 2; pass++) /* pass 0: σ²'s upper end; pass 1: the outputs */
            for (int i = s; i < s + g; i++) {
                /* (1 − 1/g) and 1/g are rounded: bound with |Δ| ≤ 2^-53 of each coefficient */
                double sl = 0, sh = 0, mass = 0;
                for (int j = s; j < s + g; j++) {
                    double w = j == i ? ig1 : -ig;
                    double wl = w > 0 ? w * xl[j] : w * xh[j], wh = w > 0 ? w * xh[j] : w * xl[j];
                    sl += wl;
                    sh += wh;
                    mass += fmax(fabs(wl), fabs(wh));
                }
                double cl = sl - 2.0 * lg_bounds_margin(sl, mass, (double)g), ch = sh + 2.0 * lg_bounds_margin(sh, mass, (double)g);
                if (!isfinite(cl) || !isfinite(ch)) ok = 0;
                if (pass == 0) {
                    double m = fmax(fabs(cl), fabs(ch)), n = cl > 0 ? cl : ch < 0 ? -ch : 0.0;
                    vh = lg_up(vh + lg_up(m * m));
                    vl = lg_dn(vl + lg_dn(n * n));
                    continue;
                }
                double nl = -cap, nh = cap;
                if (ok) {
                    double rl = lg_dn(1.0 / lg_up(sqrt(lg_up(lg_up(vh * ig * (1.0 + 0x1p-50)) + L->lin.op.eps))));
                    double vlo = lg_dn(lg_dn(vl * ig) * (1.0 - 0x1p-50));
                    double rh = lg_up(1.0 / lg_dn(sqrt(lg_dn((vlo > 0 ? vlo : 0.0) + L->lin.op.eps))));
                    double pl = fmin(lg_dn(cl * rl), lg_dn(cl * rh)), ph = fmax(lg_up(ch * rl), lg_up(ch * rh));
                    if (pl == pl && pl > nl) nl = pl;
                    if (ph == ph && ph < nh) nh = ph;
                }
                double gm = gamma[i - s];
                double ol = gm >= 0 ? lg_dn(gm * nl) : lg_dn(gm * nh), oh = gm >= 0 ? lg_up(gm * nh) : lg_up(gm * nl);
                lo[i] = lg_dn(ol + beta[i - s]);
                hi[i] = lg_up(oh + beta[i - s]);
            }
    }
}

void lg_attack_layernorm_backward(const lg_layer *L, const double *a, const double *b, const double *out,
                                  const double *dz, double *da, double *db)
{
    (void)b;
    (void)out;
    (void)db;
    int n = L->n_out, g = L->lin.op.group;
    /* layernorm: n_i = (x_i − μ)·r, y_i = γ_i·n_i + β_i;
     * dx_i = r·(dn_i − mean(dn) − n_i·mean(dn·n)), dn_i = γ_i·dz_i */
    const double *gamma = L->lin.W;
    for (int s = 0; s < n; s += g) {
        double mu = 0, var = 0;
        for (int i = s; i < s + g; i++) mu += a[i];
        mu /= g;
        for (int i = s; i < s + g; i++) var += (a[i] - mu) * (a[i] - mu);
        var /= g;
        double r = 1.0 / sqrt(var + L->lin.op.eps), m1 = 0, m2 = 0;
        for (int i = s; i < s + g; i++) {
            double dn = gamma[i - s] * dz[i], nv = (a[i] - mu) * r;
            m1 += dn;
            m2 += dn * nv;
        }
        m1 /= g;
        m2 /= g;
        for (int i = s; i < s + g; i++) {
            double dn = gamma[i - s] * dz[i], nv = (a[i] - mu) * r;
            da[i] += r * (dn - m1 - nv * m2);
        }
    }
}

/* One group's planes (tnode_planes.h lg_tnode_group_rows), on the region of the node's
 * difference bounds. */
static void lg_layernorm_group_planes(const lg_net *net, const lg_bounds *b, int k, int G, size_t g, const double *l,
                                      const double *u, double *lo_w, double *lo_c, double *up_w, double *up_c,
                                      lg_dv *work)
{
    const lg_layer *L = &net->layers[k];
    lg_ln_region reg;
    lg_ln_region_of(b, net, k, G, &reg);
    lg_relax_layernorm_ex(g, l, u, &reg, L->lin.op.eps, L->lin.W, L->lin.W + g, NULL, lo_w, lo_c, up_w, up_c, NULL,
                          work);
}

void lg_bs_layernorm_planes(struct lg_backsub *s, int g, int l, size_t G, size_t gs, const double *lu, double *lo_w,
                            double *lo_c, double *up_w, double *up_c, double *rd, lg_dv *work)
{ /* with the centred input's bounds when the symbolic pass kept them (bounds.h dlo) */
    const lg_layer *L = &s->net->layers[l];
    lg_ln_region reg;
    lg_ln_region_of(s->gb[g], s->net, l, (int)G, &reg);
    lg_relax_layernorm_ex(gs, lu, lu + gs, &reg, L->lin.op.eps, L->lin.W, L->lin.W + gs, NULL, lo_w, lo_c, up_w, up_c,
                          rd, work);
}

size_t lg_bs_layernorm_row_len(size_t gs)
{
    return LG_LN_ROW_LEN(gs);
}

lg_status lg_layernorm_relax_rows(const lg_net *net, const lg_bounds *b, int k, struct lg_trelax *r)
{
    size_t g = (size_t)net->layers[k].lin.op.group;
    return lg_tnode_group_rows(net, b, k, r, lg_layernorm_group_planes, LG_LAYERNORM_WORK(g), 0, &r->n_layernorm);
}

/* The certified deviation's interval vector–Jacobian product of this kind (its verify entry's
 * dev_vjp, verify/devgrad.h): from the node's output adjoint (centre vm, radius vr) add an
 * enclosure of vᵀ·J over the region into the sources' adjoints, in outward-rounded interval
 * arithmetic (DESIGN.md §1 "Deviation bound", *the interval gradient*). */
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
            w[i] = lg_dv_mul(lg_devgrad_iv(vm[s0 + i], vr[s0 + i]), lg_dv_pt(gi));
            m1 = lg_dv_add(m1, w[i]);
            m2 = lg_dv_add(m2, lg_dv_mul(w[i], x));
        }
        m1 = lg_dv_div(m1, lg_dv_pt((double)g));
        m2 = lg_dv_div(m2, lg_dv_pt((double)g));
        /* ∂/∂x_j = r·(w_j − mean(w) − x̂_j·mean(w·x̂)), w_i = γ_i·v_i */
        for (int j = 0; j < g; j++)
            lg_devgrad_acc(lg_dv_mul(r, lg_dv_sub(lg_dv_sub(w[j], m1), lg_dv_mul(xh[j], m2))), &S->am[s0 + j], &S->ar[s0 + j]);
    }
}
