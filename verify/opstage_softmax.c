/* opstage_softmax.c — the softmax node's verify entries (opstage.h entry
 * "softmax", DESIGN.md §1 "Transformer nodes"): its interval bound (each
 * output monotone in every input, every operation rounded outward, libm's
 * exp trusted to a relative 2^-39 as in core/act_relax.c), the attack's
 * backward step and its rows for the complete back-ends (tnode_planes.h:
 * relax_softmax.h's two planes per output and Σ_i s_i = 1 per group), and
 * its part of the back-substitution's group step (its planes per group;
 * the shift by Σ_i s_i = 1: relax_softmax.h lg_softmax_shift). The rows' scratch is
 * allocated per call (tnode_planes.c) and freed before returning. */
#include "verify/opstage.h"

#include "core/act_relax.h"
#include <math.h>

#include "encode/problem.h"
#include "verify/devgrad.h"
#include "verify/relax_iv.h"
#include "verify/relax_softmax.h"
#include "verify/tnode_planes.h"

#define LG_BT_ETA LG_LIBM_REL_ERR /* trusted relative error of libm's exp, erfc (core/act_relax.h) */
#define LG_BT_TINY 0x1p-1000 /* absolute margin for underflow */

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

/* softmax_o = 1/(1 + Σ_{i≠o} exp(x_i − x_o)): increasing in x_o, decreasing
 * in every other x_i, so its bounds over the box take x_o at one end and
 * the others at the opposite ends. */
void lg_bounds_softmax(const lg_net *net, const lg_layer *L, const double *al, const double *ah, const size_t *noff,
                       double *lo, double *hi)
{
    (void)net;
    size_t so = noff[L->lin.src + 1];
    const double *xl = al + so, *xh = ah + so;
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

void lg_attack_softmax_backward(const lg_layer *L, const double *a, const double *b, const double *out,
                                const double *dz, double *da, double *db)
{ /* dx_i = s_i·(dz_i − Σ_j s_j·dz_j) */
    (void)a;
    (void)b;
    (void)db;
    int n = L->n_out, g = L->lin.op.group;
    for (int s = 0; s < n; s += g) {
        double m = 0;
        for (int i = s; i < s + g; i++) m += out[i] * dz[i];
        for (int i = s; i < s + g; i++) da[i] += out[i] * (dz[i] - m);
    }
}

/* One group's planes (tnode_planes.h lg_tnode_group_rows). */
static void lg_softmax_group_planes(const lg_net *net, const lg_bounds *b, int k, int G, size_t g, const double *l,
                                    const double *u, double *lo_w, double *lo_c, double *up_w, double *up_c,
                                    lg_dv *work)
{
    (void)net;
    (void)b;
    (void)k;
    (void)G;
    lg_relax_softmax(g, l, u, NULL, lo_w, lo_c, up_w, up_c, work);
}

void lg_bs_softmax_planes(struct lg_backsub *s, int g, int l, size_t G, size_t gs, const double *lu, double *lo_w,
                          double *lo_c, double *up_w, double *up_c, double *rd, lg_dv *work)
{
    (void)s;
    (void)g;
    (void)l;
    (void)G;
    (void)rd;
    lg_relax_softmax(gs, lu, lu + gs, NULL, lo_w, lo_c, up_w, up_c, work);
}

lg_status lg_softmax_relax_rows(const lg_net *net, const lg_bounds *b, int k, struct lg_trelax *r)
{
    size_t g = (size_t)net->layers[k].lin.op.group;
    return lg_tnode_group_rows(net, b, k, r, lg_softmax_group_planes, LG_SOFTMAX_WORK(g), 1, &r->n_softmax);
}

/* The certified deviation's interval vector–Jacobian product of this kind (its verify entry's
 * dev_vjp, verify/devgrad.h): from the node's output adjoint (centre vm, radius vr) add an
 * enclosure of vᵀ·J over the region into the sources' adjoints, in outward-rounded interval
 * arithmetic (DESIGN.md §1 "Deviation bound", *the interval gradient*). */
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
            t = lg_dv_add(t, lg_dv_mul(lg_dv_sub(lg_devgrad_iv(vm[i], vr[i]), lg_dv_pt(c)), iv_prob(S->olo[i], S->ohi[i])));
        for (int j = s0; j < s0 + g; j++)
            lg_devgrad_acc(lg_dv_mul(iv_prob(S->olo[j], S->ohi[j]), lg_dv_sub(lg_devgrad_iv(vm[j], vr[j]), t)), &S->am[j], &S->ar[j]);
    }
}
