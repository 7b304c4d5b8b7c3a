/* bounds_tnode.c — interval bounds of the Transformer nodes' outputs
 * (bounds.h lg_bounds_tnode, DESIGN.md §1 "Transformer nodes"), sound under
 * rounding: a product's sums widen by the margin rule (bounds.h) as a
 * linear row's do; softmax and layernorm round every operation outward
 * (one ulp per correctly rounded operation, libm's exp trusted to a
 * relative 2^-39 as in core/act_relax.c). No allocation. */
#include "verify/bounds.h"

#include <math.h>

#define LG_BT_ETA 0x1p-39    /* trusted relative error of libm's exp */
#define LG_BT_TINY 0x1p-1000 /* absolute margin for underflow */

static double lg_dn(double r) { return nextafter(r, -INFINITY); }
static double lg_up(double r) { return nextafter(r, INFINITY); }
static double lg_exp_dn(double t)
{
    if (t != t) return 0.0;
    double e = exp(t) * (1.0 - LG_BT_ETA) - LG_BT_TINY;
    return e > 0.0 ? e : 0.0;
}
static double lg_exp_up(double t)
{
    if (t != t) return INFINITY;
    return exp(t) * (1.0 + LG_BT_ETA) + LG_BT_TINY;
}

/* [pl, ph] ⊇ [al, ah]·[bl, bh] as the four products of doubles (each one
 * rounding: the margin rule covers it); a 0·∞ gives no bound. */
static void lg_bt_mul(double al, double ah, double bl, double bh, double *pl, double *ph)
{
    double p[4] = {al * bl, al * bh, ah * bl, ah * bh};
    double l = p[0], h = p[0];
    for (int i = 0; i < 4; i++) {
        if (p[i] != p[i]) {
            *pl = -INFINITY;
            *ph = INFINITY;
            return;
        }
        l = fmin(l, p[i]);
        h = fmax(h, p[i]);
    }
    *pl = l;
    *ph = h;
}

static void lg_bt_product(const lg_layer *L, const double *al, const double *ah, const double *bl, const double *bh,
                          double *lo, double *hi)
{
    size_t K = (size_t)L->lin.op.K;
    const int *ia = L->lin.map, *ib = L->lin.map + (size_t)L->n_out * K;
    for (size_t o = 0; o < (size_t)L->n_out; o++) {
        double sl = 0, sh = 0, mass = 0;
        for (size_t q = o * K; q < (o + 1) * K; q++) {
            double pl, ph;
            lg_bt_mul(al[ia[q]], ah[ia[q]], bl[ib[q]], bh[ib[q]], &pl, &ph);
            sl += pl;
            sh += ph;
            mass += fmax(fabs(pl), fabs(ph));
        }
        double l = sl - lg_bounds_margin(sl, mass, (double)K), h = sh + lg_bounds_margin(sh, mass, (double)K);
        lo[o] = isfinite(l) ? l : -INFINITY;
        hi[o] = isfinite(h) ? h : INFINITY;
    }
}

/* softmax_o = 1/(1 + Σ_{i≠o} exp(x_i − x_o)): increasing in x_o, decreasing
 * in every other x_i, so its bounds over the box take x_o at one end and
 * the others at the opposite ends. */
static void lg_bt_softmax(const lg_layer *L, const double *xl, const double *xh, double *lo, double *hi)
{
    int g = L->lin.op.group;
    for (int s = 0; s < L->n_out; s += g)
        for (int o = s; o < s + g; o++) {
            double Sl = 0.0, Su = 0.0; /* Σ bounded below (for the upper end) and above (for the lower one) */
            for (int i = s; i < s + g; i++) {
                if (i == o) continue;
                Su = lg_up(Su + lg_exp_up(lg_up(xh[i] - xl[o])));
                Sl = lg_dn(Sl + lg_exp_dn(lg_dn(xl[i] - xh[o])));
            }
            double l = Su == Su ? lg_dn(1.0 / lg_up(1.0 + Su)) : 0.0;
            double h = Sl == Sl && Sl >= 0.0 ? lg_up(1.0 / lg_dn(1.0 + Sl)) : 1.0;
            lo[o] = l > 0.0 ? l : 0.0;
            hi[o] = h < 1.0 ? h : 1.0;
        }
}

/* Layernorm: c_i = x_i − μ = (1 − 1/g)·x_i − (1/g)·Σ_{j≠i} x_j, an interval
 * of a linear form (margin rule); σ² ∈ (1/g)·Σ [min c², max c²] (min 0
 * when c_i's interval holds 0); r = 1/√(σ² + ε) ∈ [1/√(σ²_hi + ε), 1/√(σ²_lo + ε)]; n_i = c_i·r, also within
 * ±√(g − 1) (Σ c = 0 gives c_i² ≤ (g − 1)·σ²); out = gamma·n + beta. */
static void lg_bt_layernorm(const lg_layer *L, const double *xl, const double *xh, double *lo, double *hi)
{
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

lg_status lg_bounds_tnode_objective(const lg_bounds *b, const lg_net *net, int m, const double *C, const double *d,
                                    double *out)
{
    int k = net->n_layers - 1, no = lg_net_n_out(net);
    const lg_layer *L = &net->layers[k];
    for (int r = 0; r < m; r++) {
        double s = d[r], mass = fabs(d[r]);
        for (int j = 0; j < no; j++) {
            double c = C[(size_t)r * (size_t)no + (size_t)j], al, ah;
            if (c == 0.0) continue;
            lg_bounds_post(L, b->lo[k][j], b->hi[k][j], &al, &ah);
            double v = c > 0 ? c * al : c * ah;
            s += v;
            mass += fabs(v);
        }
        double l = s - lg_bounds_margin(s, mass, (double)no + 1.0);
        out[r] = l == l ? l : -INFINITY;
    }
    return LG_OK;
}

void lg_bounds_tnode(const lg_net *net, const lg_layer *L, const double *al, const double *ah, const size_t *noff,
                     double *lo, double *hi)
{
    size_t so = noff[L->lin.src + 1];
    if (L->lin.kind == LG_LAYER_BILINEAR) {
        size_t sb = noff[L->lin.op.src_b + 1];
        lg_bt_product(L, al + so, ah + so, al + sb, ah + sb, lo, hi);
    } else if (L->lin.kind == LG_LAYER_SOFTMAX) {
        lg_bt_softmax(L, al + so, ah + so, lo, hi);
    } else {
        lg_bt_layernorm(L, al + so, ah + so, lo, hi);
    }
    (void)net;
}
