/* backsub_max.c — the max-pool node's back-substitution entries
 * (opstage.h; the planes and their α as backsub.h describes them): the
 * planes of each window in every group (msel, mdom), M_l of the window,
 * the step from the node's coefficients to its source's, the relaxed
 * value and its derivative in α (lg_backsub_max_value). Nothing
 * allocates; the planes live in the caller's lg_backsub. */
#include <math.h>
#include <string.h>

#include "verify/backsub.h"
#include "verify/opstage.h"
#include "verify/relax.h"
#include "core/act_relax.h"

/* Post-activation interval of input i of node src in group g (NaN bounds: none). */
static void lg_bs_src_post(const lg_backsub *s, int g, int src, int i, double *lo, double *hi)
{
    const lg_bounds *b = s->gb[g];
    double l = src < 0 ? b->xlo[i] : b->lo[src][i], h = src < 0 ? b->xhi[i] : b->hi[src][i];
    if (isnan(l)) l = -INFINITY;
    if (isnan(h)) h = INFINITY;
    if (src >= 0) {
        const lg_layer *S = &s->net->layers[src];
        if (lg_act_info_of(S->act)->smooth) {
            lg_act_image(S->act, S->lambda, l, h, &l, &h);
        } else if (S->act == LG_ACT_RELU) {
            l = l > 0.0 ? l : 0.0;
            h = h > 0.0 ? h : 0.0;
        }
    }
    *lo = l;
    *hi = h;
}

/* The planes of max-pool layer l in every group (backsub.h): msel, mdom. */
void lg_bs_max_planes(lg_backsub *s, int l)
{
    const lg_layer *L = &s->net->layers[l];
    const lg_conv *c = &L->lin.conv;
    for (int g = 0; g < s->ng; g++) {
        size_t base = (size_t)g * s->size + (size_t)s->off[l];
        for (int j = 0; j < L->n_out; j++) {
            lg_window w = lg_max_window_box(c, j);
            int best = -1;
            double bl = 0.0, U = -INFINITY, U2 = -INFINITY; /* U2: largest upper bound but best's */
            for (int iy = w.y0; iy < w.y1; iy++) {
                for (int ix = w.x0; ix < w.x1; ix++) {
                    int i = (w.ch * c->h_in + iy) * c->w_in + ix;
                    double lo, hi;
                    lg_bs_src_post(s, g, L->lin.src, i, &lo, &hi);
                    if (best < 0 || lo > bl) {
                        if (best >= 0 && U > U2) U2 = U; /* the old best's upper bound is now another's */
                        best = i, bl = lo;
                    } else if (hi > U2) {
                        U2 = hi;
                    }
                    if (hi > U) U = hi;
                }
            }
            s->msel[base + (size_t)j] = best;
            s->mdom[base + (size_t)j] = bl >= U2;
            const lg_bounds *b = s->gb[g];
            int K = c->kh * c->kw, p = b->dlo && b->dlo[l] ? b->dref[l][j] : -1;
            if (!s->mdom[base + (size_t)j] && p >= 0) { /* decided by the differences: x_q − x_p ≤ 0 for all q */
                int dec = 1, n = 0, ip = -1;
                for (int iy = w.y0; iy < w.y1; iy++)
                    for (int ix = w.x0; ix < w.x1; ix++, n++) {
                        if (n == p) ip = (w.ch * c->h_in + iy) * c->w_in + ix;
                        else dec &= b->dhi[l][(size_t)j * (size_t)K + (size_t)n] <= 0.0;
                    }
                if (dec && ip >= 0) {
                    s->msel[base + (size_t)j] = ip;
                    s->mdom[base + (size_t)j] = 1;
                }
            }
        }
    }
}

/* The input (flat index into the source) of window j of max-pool layer l, group g, other than
 * `excl`, with the largest upper (by_upper) or lower bound (the first of equals); −1: none. */
static int lg_bs_max_pick(const lg_backsub *s, int g, int l, int j, int excl, int by_upper)
{
    const lg_conv *c = &s->net->layers[l].lin.conv;
    lg_window w = lg_max_window_box(c, j);
    int p = -1;
    double bv = 0.0;
    for (int iy = w.y0; iy < w.y1; iy++)
        for (int ix = w.x0; ix < w.x1; ix++) {
            int i = (w.ch * c->h_in + iy) * c->w_in + ix;
            if (i == excl) continue;
            double li, ui;
            lg_bs_src_post(s, g, s->net->layers[l].lin.src, i, &li, &ui);
            double v = by_upper ? ui : li;
            if (p < 0 || v > bv) p = i, bv = v;
        }
    return p;
}

/* The reference of the upper plane of α = 0: the differences' p (bounds.h) when
 * present, else the input of the largest upper bound. */
static int lg_bs_max_ref(const lg_backsub *s, int g, int l, int j)
{
    const lg_layer *L = &s->net->layers[l];
    const lg_conv *c = &L->lin.conv;
    const lg_bounds *b = s->gb[g];
    int ref = b->dlo && b->dlo[l] ? b->dref[l][j] : -1;
    if (ref < 0) return lg_bs_max_pick(s, g, l, j, -1, 1);
    lg_window w = lg_max_window_box(c, j);
    int n = 0;
    for (int iy = w.y0; iy < w.y1; iy++)
        for (int ix = w.x0; ix < w.x1; ix++, n++)
            if (n == ref) return (w.ch * c->h_in + iy) * c->w_in + ix;
    return lg_bs_max_pick(s, g, l, j, -1, 1);
}

/* a < 0 on undecided window j of max-pool layer l (group g): with p the reference (pref < 0:
 * lg_bs_max_ref, with the difference bounds when present; pref ≥ 0: that input, interval bounds
 * only), h_j ≤ x_p + Σ_i relu(x_i − x_p) over the other inputs i, each relu(d_i) by its chord on
 * d_i ∈ [l_i − u_p, u_i − l_p] (rounded outward) through relax.h, so
 * a·h_j ≥ a·x_p + Σ (c_i·(x_i − x_p) + icpt_i − err_i) (backsub.h). With Yr: the plane's
 * coefficients go to Yr and its constant, mass and error to *cr, *ms, *er. With x (the source's
 * values): returns the plane's value there. */
static double lg_bs_max_upper(const lg_backsub *s, int g, int l, int j, int pref, double a, double *Yr, double *cr,
                              double *ms, double *er, const double *x)
{
    const lg_layer *L = &s->net->layers[l];
    const lg_conv *c = &L->lin.conv;
    lg_window w = lg_max_window_box(c, j);
    const lg_bounds *b = s->gb[g];
    int K = c->kh * c->kw, ref = pref < 0 && b->dlo && b->dlo[l] ? b->dref[l][j] : -1; /* the differences' p */
    const double *dlo = ref >= 0 ? b->dlo[l] + (size_t)j * (size_t)K : NULL;
    const double *dhi = ref >= 0 ? b->dhi[l] + (size_t)j * (size_t)K : NULL;
    double lp = 0.0, up = 0.0, v = 0.0;
    int p = -1, n = 0;
    for (int iy = w.y0; iy < w.y1; iy++) {
        for (int ix = w.x0; ix < w.x1; ix++, n++) {
            int i = (w.ch * c->h_in + iy) * c->w_in + ix;
            double li, ui;
            lg_bs_src_post(s, g, L->lin.src, i, &li, &ui);
            if (pref >= 0 ? i == pref : ref >= 0 ? n == ref : p < 0 || ui > up) p = i, lp = li, up = ui;
        }
    }
    if (Yr) Yr[p] += a;
    if (x) v = x[p];
    n = 0;
    for (int iy = w.y0; iy < w.y1; iy++) {
        for (int ix = w.x0; ix < w.x1; ix++, n++) {
            int i = (w.ch * c->h_in + iy) * c->w_in + ix;
            if (i == p) continue;
            double li, ui;
            lg_bs_src_post(s, g, L->lin.src, i, &li, &ui);
            double dl = nextafter(li - up, -INFINITY), du = nextafter(ui - lp, INFINITY);
            if (isnan(dl)) dl = -INFINITY;
            if (isnan(du)) du = INFINITY;
            if (dlo && dlo[n] > dl) dl = dlo[n]; /* the back-substituted bounds of x_i − x_p */
            if (dhi && dhi[n] < du) du = dhi[n];
            if (du <= 0.0) continue; /* relu(d_i) = 0: x_i is never above x_p */
            lg_relu_lines rl;
            lg_relax_relu_lines(dl, du, 0.0, &rl);
            if (x) v += rl.up_s * (x[i] - x[p] - rl.up_x0);
            if (!Yr) continue;
            double ci, icpt, e;
            lg_relax_relu_apply(&rl, a, &ci, &icpt, &e);
            Yr[i] += ci;
            Yr[p] -= ci;
            *cr += icpt;
            *ms += fabs(icpt);
            *er += e;
        }
    }
    return v;
}

/* a = a1 + a2 exactly (reals), a1 ≈ (1 − α)·a, a2 ≈ α·a, both of a's sign or 0: the weights of
 * the two planes of a max-pool output (backsub.h). The larger part is rounded, the other is the
 * difference, exact by Sterbenz; checked (Fast2Sum's error term), else α is not used. Returns 1
 * when a2 ≠ 0 (the second plane is read). α ≤ 0, NaN or a not finite: a1 = a, a2 = 0. */
static int lg_bs_max_split(double a, double alpha, double *a1, double *a2)
{
    *a1 = a, *a2 = 0.0;
    if (!(alpha > 0.0) || !isfinite(a)) return 0;
    double big, rest;
    if (alpha >= 1.0) {
        *a1 = 0.0, *a2 = a;
        return a != 0.0;
    }
    big = alpha >= 0.5 ? alpha * a : (1.0 - alpha) * a;
    rest = a - big;
    double z = rest - a, t = -big - z; /* a − big = rest + t exactly (|a| ≥ |big|) */
    if (t != 0.0 || !isfinite(rest)) return 0;
    if (alpha >= 0.5) *a2 = big, *a1 = rest;
    else *a1 = big, *a2 = rest;
    return *a2 != 0.0;
}

/* The second plane's input of a max-pool output (backsub.h): up = 0 (lower plane, p1 = msel) the
 * input of the largest upper bound but p1; up = 1 (upper plane, p1 = lg_bs_max_ref) the input of
 * the largest lower bound but p1. */
static int lg_bs_max_p2(const lg_backsub *s, int g, int l, int j, int up, int p1)
{
    return lg_bs_max_pick(s, g, l, j, p1, !up);
}

double lg_backsub_max_value(const lg_backsub *s, int g, int l, int j, double a, double alpha, const double *x,
                            double *dval)
{
    size_t q = (size_t)g * s->size + (size_t)s->off[l] + (size_t)j;
    if (dval) *dval = 0.0;
    if (a == 0.0) { /* no plane read (the call may not have reached the layer): the window's max */
        const lg_conv *c = &s->net->layers[l].lin.conv;
        lg_window w = lg_max_window_box(c, j);
        double v = -INFINITY;
        for (int iy = w.y0; iy < w.y1; iy++)
            for (int ix = w.x0; ix < w.x1; ix++) v = fmax(v, x[(w.ch * c->h_in + iy) * c->w_in + ix]);
        return v;
    }
    if (s->mdom[q]) return x[s->msel[q]];
    double al = alpha > 0.0 ? (alpha < 1.0 ? alpha : 1.0) : 0.0; /* NaN: 0 */
    if (a > 0.0) {
        int p1 = s->msel[q], p2 = lg_bs_max_p2(s, g, l, j, 0, p1);
        double v1 = x[p1], v2 = p2 >= 0 ? x[p2] : v1;
        if (dval) *dval = v2 - v1;
        return (1.0 - al) * v1 + al * v2;
    }
    int p1 = lg_bs_max_ref(s, g, l, j), p2 = lg_bs_max_p2(s, g, l, j, 1, p1);
    double v1 = lg_bs_max_upper(s, g, l, j, -1, a, NULL, NULL, NULL, NULL, x);
    if (p2 < 0 || (al == 0.0 && !dval)) return v1;
    double v2 = lg_bs_max_upper(s, g, l, j, p2, a, NULL, NULL, NULL, NULL, x);
    if (dval) *dval = v2 - v1;
    return (1.0 - al) * v1 + al * v2;
}

int lg_bs_max_addends(const lg_layer *L)
{
    return L->n_out * (L->lin.conv.kh * L->lin.conv.kw + 1); /* up to kh·kw + 1 addends per window (backsub.h) */
}

/* Read as the index map of its choice: M[j] = max over the window of am, times the plane's
 * |row| ≤ 2K + 2. */
void lg_bs_max_mag(lg_backsub *s, int l, const double *am)
{
    const lg_layer *L = &s->net->layers[l];
    const lg_conv *c = &L->lin.conv;
    for (int j = 0; j < L->n_out; j++) {
        double v = 0.0;
        lg_window w = lg_max_window_box(c, j);
        for (int iy = w.y0; iy < w.y1; iy++)
            for (int ix = w.x0; ix < w.x1; ix++) {
                double a = am[(w.ch * c->h_in + iy) * c->w_in + ix];
                if (!(a <= v)) v = a;
            }
        s->mag[l][j] = v * (2.0 * (double)(c->kh * c->kw) + 2.0);
    }
}

int lg_bs_max_step(lg_backsub *s, int l, int m, const double *A, double *Y, const double *alpha, size_t stride)
{
    const lg_layer *L = &s->net->layers[l];
    const lg_linear *T = &L->lin;
    int n = L->n_out, off = s->off[l], mtwo = 0;
    double *c = s->c, *mass = s->mass, *err = s->err;
    for (int r = 0; r < m; r++) {
        const double *Ar = A + (size_t)r * (size_t)n;
        double *Yr = Y + (size_t)r * (size_t)T->n_in;
        size_t base = (size_t)s->grp[r] * s->size + (size_t)off;
        memset(Yr, 0, (size_t)T->n_in * sizeof *Yr);
        const double *ma = alpha ? alpha + (size_t)r * stride + off : NULL; /* α-planes (backsub.h) */
        for (int j = 0; j < n; j++) {
            if (Ar[j] == 0.0) continue;
            size_t q = base + (size_t)j;
            double a1, a2;
            int two = !s->mdom[q] && ma && lg_bs_max_split(Ar[j], ma[j], &a1, &a2);
            if (Ar[j] > 0.0 || s->mdom[q]) { /* h_j ≥ x_i* (= on a decided window) */
                int p2 = two ? lg_bs_max_p2(s, s->grp[r], l, j, 0, s->msel[q]) : -1;
                if (p2 < 0) {
                    Yr[s->msel[q]] += Ar[j];
                } else { /* h_j ≥ (1 − α)·x_p1 + α·x_p2 */
                    Yr[s->msel[q]] += a1;
                    Yr[p2] += a2;
                }
                continue;
            }
            int p2 = two ? lg_bs_max_p2(s, s->grp[r], l, j, 1, lg_bs_max_ref(s, s->grp[r], l, j)) : -1;
            if (p2 < 0) {
                lg_bs_max_upper(s, s->grp[r], l, j, -1, Ar[j], Yr, &c[r], &mass[r], &err[r], NULL);
            } else { /* (1 − α)·U_p1 + α·U_p2, each weight applied through relax.h */
                lg_bs_max_upper(s, s->grp[r], l, j, -1, a1, Yr, &c[r], &mass[r], &err[r], NULL);
                lg_bs_max_upper(s, s->grp[r], l, j, p2, a2, Yr, &c[r], &mass[r], &err[r], NULL);
                mtwo = 1;
            }
        }
    }
    return mtwo;
}

/* The chords' intercepts (of two planes per output where α combines them). */
double lg_bs_max_terms(const lg_layer *L, int two)
{
    return (double)(L->lin.conv.kh * L->lin.conv.kw) * L->n_out * (two ? 2.0 : 1.0);
}
