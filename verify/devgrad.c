/* devgrad.c — the interval-gradient deviation bound (devgrad.h). */
#include "verify/devgrad.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "anneal/deviation.h"
#include "core/traverse.h"
#include "verify/devnet.h"
#include "verify/opstage.h"

/* γ_n of anneal/deviation.h: ≥ n·u/(1 − n·u), a dot product of n terms. */

int lg_devgrad_band(const lg_net *relu, const lg_net *ref, int k, const double *lo, const double *hi,
                    double *band_lo, double *band_hi)
{
    const lg_layer *G = &ref->layers[k];
    const lg_act_info *gi = lg_act_info_of(G->act);
    int ok = 1;
    (void)relu;
    for (int i = 0; i < G->n_out; i++) {
        double l = lo[i], u = hi[i];
        if (!(l <= u) || !isfinite(l) || !isfinite(u)) {
            band_lo[i] = -INFINITY, band_hi[i] = INFINITY, ok = 0;
            continue;
        }
        double gc = lg_dev_act_gap_certified(G->act, G->lambda, l, u, NULL);
        double g0 = lg_dev_act_gap(G->act, G->lambda, l, u, NULL);
        if (!(gc >= g0) || !isfinite(gc)) {
            band_lo[i] = -INFINITY, band_hi[i] = INFINITY, ok = 0;
            continue;
        }
        band_hi[i] = gc;
        /* below relu: the exact gap is in [0, g0]; the computed one below 0 by its rounding only */
        band_lo[i] = gi && gi->below_relu ? -lg_up(gc - g0) : -gc;
    }
    return ok;
}

lg_status lg_devgrad_check_net(const lg_net *net)
{
    for (int k = 0; k < net->n_layers; k++) {
        const lg_vopdef *vop = lg_layer_vop(&net->layers[k]);
        if (vop && !vop->dev_vjp)
            return lg_fail(LG_ERR_UNSUPPORTED, "the interval-gradient deviation does not take %s nodes (layer %d)",
                           lg_kind_name(net->layers[k].lin.kind), k);
    }
    return LG_OK;
}

void lg_devgrad_sizes(const lg_net *relu, size_t *N, size_t *w, size_t *gmax)
{
    *N = lg_net_nodes_len(relu);
    *w = (size_t)lg_net_max_width(relu);
    if (*w < (size_t)relu->n_in) *w = (size_t)relu->n_in;
    *gmax = 1;
    for (int k = 0; k < relu->n_layers; k++)
        if (relu->layers[k].lin.op.group > 0 && (size_t)relu->layers[k].lin.op.group > *gmax)
            *gmax = (size_t)relu->layers[k].lin.op.group;
}

void lg_devgrad_region_post(const lg_net *relu, const lg_net *ref, const lg_devgrad_region *R, const size_t *off,
                            double *alo, double *ahi)
{
    memcpy(alo, R->xlo, (size_t)relu->n_in * sizeof *alo);
    memcpy(ahi, R->xhi, (size_t)relu->n_in * sizeof *ahi);
    for (int k = 0; k < relu->n_layers; k++) {
        const lg_layer *L = &relu->layers[k];
        int sub = ref->layers[k].act != L->act;
        for (int i = 0; i < L->n_out; i++) {
            double a, b;
            lg_bounds_post(L, R->lo[k][i], R->hi[k][i], &a, &b);
            if (sub) a = lg_dn(a - R->band_hi[k][i]), b = lg_up(b - R->band_lo[k][i]); /* relu(z) − δ */
            alo[off[k + 1] + (size_t)i] = a, ahi[off[k + 1] + (size_t)i] = b;
        }
    }
}

/* An enclosure [sl, sh] of a smooth activation's slope over [l, u]: f'(c) ± (sup|f''|·h + a margin
 * for f' in double, libm's few ulp with room), met with [−Lip, Lip]; [−Lip, Lip] where f'' has
 * no bound. */
static void dg_slope(const lg_layer *L, double l, double u, double *sl, double *sh)
{
    const lg_act_info *ai = lg_act_info_of(L->act);
    double lip = lg_devnet_lip(L);
    *sl = -lip, *sh = lip;
    if (!ai || !ai->df || !ai->d2max || !isfinite(l) || !isfinite(u) || !(l <= u)) return;
    double c = 0.5 * l + 0.5 * u, h = fmax(lg_up(u - c), lg_up(c - l));
    double d = ai->df(c, L->lambda), w = lg_up(lg_up(ai->d2max(L->lambda, l, u) * h) + 1e-9 * (1.0 + fabs(d)));
    if (!isfinite(d) || !isfinite(w)) return;
    *sl = fmax(*sl, lg_dn(d - w)), *sh = fmin(*sh, lg_up(d + w));
}

/* Σ_i (|m_i| + r_i)·rho_i rounded up into *acc (+∞ where not finite); adjoint 0 adds nothing. */
static void dg_round_acc(const double *m, const double *r, const double *rho, int n, double *acc)
{
    for (int i = 0; i < n; i++) {
        double a = lg_up(fabs(m[i]) + r[i]);
        if (a == 0.0 || rho[i] == 0.0) continue;
        double t = lg_up(a * rho[i]);
        *acc = t == t ? lg_up(*acc + t) : INFINITY;
    }
}

/* The backward pass of lg_devgrad_bound; with ro, rp (node layout, lg_devgrad_round_bound) it adds
 * the adjoints' products with the rounding radii into rnd[o] as well. */
static lg_status dg_pass(const lg_net *relu, const lg_net *ref, const lg_devgrad_region *R, const double *ro,
                         const double *rp, double *dlo, double *dhi, double *rnd)
{
    int nl = relu->n_layers, n_out = relu->layers[nl - 1].n_out;
    lg_status cs = lg_devgrad_check_net(relu);
    if (cs != LG_OK) return cs;
    size_t N, w, gmax;
    lg_devgrad_sizes(relu, &N, &w, &gmax);
    size_t *off = malloc((size_t)(nl + 1) * sizeof *off);
    double *buf = malloc((6 * N + 2 * w) * sizeof *buf);
    unsigned char *seen = malloc((size_t)nl + 1);
    lg_dv *work = malloc(LG_DEVGRAD_VJP_WORK(gmax) * sizeof *work);
    if (!off || !buf || !seen || !work) {
        free(off), free(buf), free(seen), free(work);
        return lg_fail(LG_ERR_NOMEM, "out of memory for the interval-gradient deviation");
    }
    double *alo = buf, *ahi = buf + N, *vm = buf + 2 * N, *vr = buf + 3 * N, *sm = buf + 4 * N, *sr = buf + 5 * N;
    double *tmp = buf + 6 * N, *wr = tmp + w;
    for (int j = -1; j < nl; j++) off[j + 1] = lg_net_node_offset(relu, j);
    if (R->alo && R->ahi) {
        memcpy(alo, R->alo, N * sizeof *alo);
        memcpy(ahi, R->ahi, N * sizeof *ahi);
    } else
        lg_devgrad_region_post(relu, ref, R, off, alo, ahi);
    lg_node_buf bm = {relu, sm}, br = {relu, sr};
    for (int o = 0; o < n_out; o++) {
        memset(vm, 0, N * sizeof *vm);
        memset(vr, 0, N * sizeof *vr);
        vm[off[nl] + (size_t)o] = 1.0;
        lg_dv acc = lg_dv_pt(0.0);
        double ra = 0.0;
        for (int k = nl - 1; k >= 0; k--) {
            const lg_layer *L = &relu->layers[k];
            double *pm = vm + off[k + 1], *pr = vr + off[k + 1];
            int any = 0;
            for (int i = 0; i < L->n_out && !any; i++) any = pm[i] != 0.0 || pr[i] != 0.0;
            if (!any) continue;
            if (ro) dg_round_acc(pm, pr, ro + off[k + 1], L->n_out, &ra); /* the node's output rounding */
            if (ref->layers[k].act != L->act) /* ∂F/∂δ_j = −(the adjoint of output j) */
                for (int i = 0; i < L->n_out; i++)
                    if (pm[i] != 0.0 || pr[i] != 0.0)
                        acc = lg_dv_add(acc, lg_dv_mul((lg_dv){lg_dn(-pm[i] - pr[i]), lg_up(-pm[i] + pr[i])},
                                                       (lg_dv){R->band_lo[k][i], R->band_hi[k][i]}));
            if (L->act == LG_ACT_RELU) /* slope 1, 0 or [0, 1] over the region */
                for (int i = 0; i < L->n_out; i++) {
                    if (R->lo[k][i] >= 0.0) continue;
                    if (R->hi[k][i] <= 0.0) {
                        pm[i] = pr[i] = 0.0;
                        continue;
                    }
                    double m = 0.5 * pm[i];
                    pr[i] = lg_up(lg_up(fabs(m)) + pr[i]);
                    pm[i] = m;
                }
            else if (L->act != LG_ACT_IDENTITY) /* a smooth one: its slope's enclosure */
                for (int i = 0; i < L->n_out; i++) {
                    double sl, sh;
                    dg_slope(L, R->lo[k][i], R->hi[k][i], &sl, &sh);
                    double sc = 0.5 * sl + 0.5 * sh, sw = fmax(lg_up(sh - sc), lg_up(sc - sl));
                    double m = pm[i] * sc;
                    double r = lg_up(lg_up(fabs(pm[i]) * sw) + lg_up(pr[i] * lg_up(fabs(sc) + sw)));
                    pr[i] = lg_up(r + lg_up(fabs(m) * DBL_EPSILON));
                    pm[i] = m;
                    if (!isfinite(m) || !isfinite(pr[i])) pm[i] = 0.0, pr[i] = INFINITY;
                }
            if (rp) dg_round_acc(pm, pr, rp + off[k + 1], L->n_out, &ra); /* the pre-activation's */
            const lg_vopdef *vop = lg_layer_vop(L);
            if (vop) {
                int sa = lg_layer_src(L, 0), sb = lg_layer_n_src(L) > 1 ? lg_layer_src(L, 1) : sa;
                lg_devgrad_src S = {alo + off[sa + 1], ahi + off[sa + 1], alo + off[sb + 1], ahi + off[sb + 1],
                                    alo + off[k + 1],  ahi + off[k + 1],  NULL, NULL,
                                    vm + off[sa + 1],  vr + off[sa + 1],  vm + off[sb + 1], vr + off[sb + 1]};
                if (R->clo && R->chi && R->clo[k] && R->chi[k]) S.clo = R->clo[k], S.chi = R->chi[k];
                vop->dev_vjp(L, &S, pm, pr, work);
                continue;
            }
            /* linear terms: centre through Aᵀ, radius through |A|ᵀ of (radius + γ·|centre|) */
            double gam = lg_dev_gamma((double)L->n_out * lg_layer_n_lin(L));
            double grow = lg_up(lg_up(1.0 + gam) * lg_up(1.0 + gam));
            for (int i = 0; i < L->n_out; i++) wr[i] = lg_up(lg_up(pr[i] + lg_up(gam * fabs(pm[i]))) * grow);
            int ns = lg_layer_n_src(L);
            memset(seen, 0, (size_t)nl + 1);
            lg_layer_pre_t(L, pm, 0, lg_node_buf_slot, &bm, seen, tmp);
            memset(seen, 0, (size_t)nl + 1);
            lg_layer_pre_t(L, wr, 1, lg_node_buf_slot, &br, seen, tmp);
            for (int t = 0; t < ns; t++) {
                int s = lg_layer_src(L, t);
                if (!seen[s + 1]) continue; /* merged already */
                seen[s + 1] = 0;
                size_t ws = (size_t)lg_net_node_width(relu, s);
                double *am = vm + off[s + 1], *ar = vr + off[s + 1], *xm = sm + off[s + 1], *xr = sr + off[s + 1];
                for (size_t i = 0; i < ws; i++) {
                    double v = am[i] + xm[i];
                    ar[i] = lg_up(lg_up(ar[i] + xr[i]) + lg_up(fabs(v) * DBL_EPSILON));
                    am[i] = v;
                    if (!isfinite(v) || !isfinite(ar[i])) am[i] = 0.0, ar[i] = INFINITY;
                }
            }
        }
        if (isnan(acc.lo) || isnan(acc.hi)) acc = (lg_dv){-INFINITY, INFINITY};
        /* f_ref − f_relu = F(x, δ*) − F(x, 0) */
        dlo[o] = acc.lo, dhi[o] = acc.hi;
        if (ro) { /* the input's normalisation */
            dg_round_acc(vm, vr, ro, relu->n_in, &ra);
            rnd[o] = ra <= DBL_MAX ? ra : INFINITY;
        }
    }
    free(off), free(buf), free(seen), free(work);
    return LG_OK;
}

lg_status lg_devgrad_bound(const lg_net *relu, const lg_net *ref, const lg_devgrad_region *R, double *dlo,
                           double *dhi)
{
    return dg_pass(relu, ref, R, NULL, NULL, dlo, dhi, NULL);
}

lg_status lg_devgrad_round_bound(const lg_net *net, const lg_devgrad_region *R, const double *ro, const double *rp,
                                 double *out)
{
    int no = lg_net_n_out(net);
    double *t = malloc(2 * (size_t)no * sizeof *t);
    if (!t) return lg_fail(LG_ERR_NOMEM, "out of memory for the backward rounding bound");
    lg_status st = dg_pass(net, net, R, ro, rp, t, t + no, out);
    free(t);
    return st;
}

lg_dv lg_devgrad_iv(double m, double r) { return (lg_dv){lg_dn(m - r), lg_up(m + r)}; }

/* am += mid of x, ar += its radius, both rounded so that [am − ar, am + ar] ⊇ old + x. */
void lg_devgrad_acc(lg_dv x, double *am, double *ar)
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
