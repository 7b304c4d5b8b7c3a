/* devnet_joint.c — the differential (joint) deviation bound (devnet_joint.h). */
#include "verify/devnet_joint.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "anneal/deviation.h"
#include "core/act.h"
#include "core/linop.h"

#define EPS DBL_EPSILON
#define JROWS 256 /* rows of one back-substitution chunk */

static double up(double x) { return x + EPS * fabs(x) + DBL_MIN; }
static double dn(double x) { return x - EPS * fabs(x) - DBL_MIN; }

/* Per neuron of node q (layer q − 1): the ReLU net's output h ∈ [aL·z + bL, aU·z + bU], the
 * difference δ ∈ [pL·z + qL·d + rL, pU·z + qU·d + rU], and the magnitudes |z|, |d|, |h|, |δ| ≤. */
typedef struct jnode {
    double *aL, *bL, *aU, *bU, *pL, *qL, *rL, *pU, *qU, *rU;
    double *zm, *dm, *hm, *em;
    double *dl, *du; /* d's bounds */
} jnode;
#define JNODE_ARRAYS 16

typedef struct jctx {
    const lg_devnet *v;
    const lg_net *R;
    int NL, nin;
    const double *xlo, *xhi;
    double *xm;      /* [n_in] max |x'_r| */
    double *xmag;    /* [n_in] = xm (the input's |h|) */
    jnode *nd;       /* [NL + 1], node 0 the input (unused) */
    size_t *toff;    /* [NL] offset of layer k's neurons in tau */
    double **Gh, **Gd; /* [NL + 1] back-substitution coefficients per node, [rows][n] or NULL */
    double *Cz, *Cd, *Y, *tv; /* scratch [JROWS][W], [W] */
    double *cst, *sab, *err; /* [JROWS] */
    int *sel;                /* [W] the neurons whose d is bounded */
} jctx;

static int jwidth(const jctx *c, int q) { return q == 0 ? c->nin : c->R->layers[q - 1].n_out; }

/* G[q] += Y (allocating G[q], zeroed, on first use). */
static int jacc(const jctx *c, double **G, int q, int m, const double *Y)
{
    const size_t sz = (size_t)m * jwidth(c, q);
    if (!G[q]) {
        G[q] = calloc((size_t)JROWS * jwidth(c, q), sizeof *G[q]);
        if (!G[q]) return -1;
    }
    for (size_t k = 0; k < sz; k++) G[q][k] += Y[k];
    return 0;
}

/* Push the pre-activation coefficients Cz (on z_q), Cd (on d_q) of node q ≥ 1 through its linear
 * terms into the sources' G, the bias and the noise into cst; the rounding into err. */
static int jpush(jctx *c, int q, int m, int hasd)
{
    const lg_layer *Ly = &c->R->layers[q - 1];
    const int n = Ly->n_out, N = c->v->n_noise;
    const double *tau = c->v->tau + c->toff[q - 1];
    double K = 8.0;
    for (int t = 0; t < lg_layer_n_lin(Ly); t++) K += lg_layer_lin(Ly, t)->n_in + 2.0;
    for (int t = 0; t < lg_layer_n_lin(Ly); t++) {
        const lg_linear *A = lg_layer_lin(Ly, t);
        const int s = A->src + 1;
        const double *hm = s == 0 ? c->xmag : c->nd[s].hm;
        /* |A|·|h_src| and |A|·|δ_src| per row of A (the products' rounding scale) */
        double *ah = c->tv, *ad = c->tv + n;
        lg_linear_mul(A, 1, hm, ah, 1, 0);
        if (s > 0) lg_linear_mul(A, 1, c->nd[s].em, ad, 1, 0);
        lg_linear_mul_t(A, m, c->Cz, c->Y, 0);
        if (jacc(c, c->Gh, s, m, c->Y)) return -1;
        for (int r = 0; r < m; r++) {
            double e = 0.0;
            for (int i = 0; i < n; i++) e += fabs(c->Cz[(size_t)r * n + i]) * ah[i];
            c->err[r] += K * EPS * e * 2.0;
        }
        if (hasd && s > 0) { /* the input's difference is 0 */
            lg_linear_mul_t(A, m, c->Cd, c->Y, 0);
            if (jacc(c, c->Gd, s, m, c->Y)) return -1;
            for (int r = 0; r < m; r++) {
                double e = 0.0;
                for (int i = 0; i < n; i++) e += fabs(c->Cd[(size_t)r * n + i]) * ad[i];
                c->err[r] += K * EPS * e * 2.0;
            }
        }
    }
    for (int r = 0; r < m; r++) {
        const double *cz = c->Cz + (size_t)r * n, *cd = c->Cd + (size_t)r * n;
        double s = 0.0, a = 0.0, nz = 0.0;
        for (int i = 0; i < n; i++) {
            s += cz[i] * Ly->b[i];
            a += fabs(cz[i] * Ly->b[i]);
            /* the double passes: ẑ = z + ν_R, d̂ = d + ν_R − ν_G */
            nz += fabs(cz[i]) * tau[i] + (hasd ? fabs(cd[i]) * (tau[i] + tau[N + i]) : 0.0);
        }
        c->cst[r] += s;
        c->sab[r] += a + fabs(s);
        c->err[r] += nz * (1.0 + (n + 4) * EPS) + (n + 4) * EPS * a;
    }
    return 0;
}

/* Relax node q's output coefficients (Gh on h_q, Gd on δ_q) into Cz, Cd on its pre-activation. */
static void jrelax(jctx *c, int q, int m)
{
    const int n = jwidth(c, q);
    const jnode *J = &c->nd[q];
    const double *Gh = c->Gh[q], *Gd = c->Gd[q];
    for (int r = 0; r < m; r++) {
        double *cz = c->Cz + (size_t)r * n, *cd = c->Cd + (size_t)r * n;
        double s = 0.0, a = 0.0, e = 0.0;
        for (int i = 0; i < n; i++) {
            double z = 0.0, d = 0.0;
            if (Gh) {
                double g = Gh[(size_t)r * n + i];
                double al = g >= 0 ? J->aU[i] : J->aL[i], be = g >= 0 ? J->bU[i] : J->bL[i];
                z = g * al;
                s += g * be;
                a += fabs(g * be);
            }
            if (Gd) {
                double g = Gd[(size_t)r * n + i];
                int hi = g >= 0;
                double p = hi ? J->pU[i] : J->pL[i], qq = hi ? J->qU[i] : J->qL[i], rr = hi ? J->rU[i] : J->rL[i];
                z += g * p;
                d = g * qq;
                s += g * rr;
                a += fabs(g * rr);
            }
            /* the products and the sum z (three roundings each), scaled by |z|, |d| */
            e += 4.0 * EPS * (fabs(z) * J->zm[i] + fabs(d) * J->dm[i]);
            cz[i] = z;
            cd[i] = d;
        }
        c->cst[r] += s;
        c->sab[r] += a + fabs(s);
        c->err[r] += e * (1.0 + (n + 4) * EPS);
    }
}

/* Upper bounds ub[m] of the rows (Cz on z_K, Cd on d_K; in c->Cz, c->Cd on entry) of node K over
 * the box. 0, or −1 out of memory. */
static int jback(jctx *c, int K, int m, int hasd, double *ub)
{
    memset(c->cst, 0, (size_t)m * sizeof *c->cst);
    memset(c->sab, 0, (size_t)m * sizeof *c->sab);
    memset(c->err, 0, (size_t)m * sizeof *c->err);
    if (jpush(c, K, m, hasd)) return -1;
    for (int q = K - 1; q >= 1; q--) {
        if (!c->Gh[q] && !c->Gd[q]) continue;
        jrelax(c, q, m);
        free(c->Gh[q]);
        free(c->Gd[q]);
        c->Gh[q] = c->Gd[q] = NULL;
        if (jpush(c, q, m, 1)) return -1;
    }
    const double *G = c->Gh[0];
    for (int r = 0; r < m; r++) {
        double s = 0.0, a = 0.0;
        if (G)
            for (int i = 0; i < c->nin; i++) {
                double g = G[(size_t)r * c->nin + i];
                s += g * (g >= 0 ? c->xhi[i] : c->xlo[i]);
                a += fabs(g) * c->xm[i];
            }
        double tot = c->cst[r] + s;
        double rnd = (c->nin + 8) * EPS * (c->sab[r] + a + fabs(tot)) * 2.0;
        double x = up(tot + up(c->err[r] * (1.0 + 1e-9) + rnd));
        ub[r] = x <= DBL_MAX ? x : INFINITY; /* NaN: +∞ */
    }
    free(c->Gh[0]);
    c->Gh[0] = NULL;
    return 0;
}

/* Fill node q's planes from z ∈ [l, u] (the ReLU net), w ∈ [lg, ug] (the reference) and
 * d ∈ [dl, du] (devnet_joint.h). 0, or −1 when the activation pair is not taken or a bound is
 * not finite. */
static int jplanes(jctx *c, int q, const double *l, const double *u, const double *lg, const double *ug)
{
    const lg_layer *Ly = &c->R->layers[q - 1], *Lg = &c->v->ref->layers[q - 1];
    const int n = Ly->n_out, relu = Ly->act == LG_ACT_RELU, same = Lg->act == Ly->act;
    if (!relu && Ly->act != LG_ACT_IDENTITY) return -1;
    if (!same && !(relu && lg_act_relu_like(Lg->act))) return -1;
    const double p = lg_act_has_param(Lg->act) ? Lg->lambda : 1.0;
    const lg_act_info *gi = lg_act_info_of(Lg->act);
    const int below = !same && gi && gi->below_relu; /* relu(w) − f(w) ∈ [0, gap] */
    jnode *J = &c->nd[q];
    for (int i = 0; i < n; i++) {
        /* z = w + d and w = z − d tighten each other's bounds */
        double dl = J->dl[i], du = J->du[i];
        double li = fmax(l[i], dn(lg[i] + dl)), ui = fmin(u[i], up(ug[i] + du));
        double gl = fmax(lg[i], dn(l[i] - du)), gu = fmin(ug[i], up(u[i] - dl));
        dl = fmax(dl, dn(li - gu));
        du = fmin(du, up(ui - gl));
        if (!(li <= ui && dl <= du && gl <= gu) || !(fabs(li) + fabs(ui) + fabs(dl) + fabs(du) <= DBL_MAX)) return -1;
        J->dl[i] = dl;
        J->du[i] = du;
        J->zm[i] = fmax(fabs(li), fabs(ui));
        J->dm[i] = fmax(fabs(dl), fabs(du));
        J->pL[i] = J->pU[i] = J->rL[i] = J->rU[i] = 0.0;
        J->qL[i] = J->qU[i] = 0.0;
        if (!relu) { /* identity in both: h = z, δ = d */
            J->aL[i] = J->aU[i] = 1.0;
            J->bL[i] = J->bU[i] = 0.0;
            J->qL[i] = J->qU[i] = 1.0;
            J->hm[i] = J->zm[i];
            J->em[i] = J->dm[i];
            continue;
        }
        /* the ReLU net (DeepPoly's planes) */
        J->bL[i] = J->bU[i] = 0.0;
        double az = 0.0; /* the chord slope of relu(z) when z is unstable */
        if (li >= 0.0) J->aL[i] = J->aU[i] = 1.0;
        else if (ui <= 0.0) J->aL[i] = J->aU[i] = 0.0;
        else {
            /* h ≤ a·(z − l) with a ≥ u/(u − l), a ≤ 1: ≥ u at z = u, 0 at l */
            az = fmin(1.0, up(up(ui / dn(ui - li))));
            J->aU[i] = az;
            J->bU[i] = up(az * -li);
            J->aL[i] = ui > -li ? 1.0 : 0.0;
        }
        J->hm[i] = ui > 0.0 ? ui : 0.0;
        /* relu(z) − relu(w) jointly in (z, d): the chords of min(0, d) below and max(0, d) above
         * over [dl, du] (constants from the endpoints), or the planes of one stable side */
        double cqL = 0.0, crL = 0.0, cqU = 0.0, crU = 0.0; /* the chords */
        if (dl >= 0.0) cqU = 1.0;
        else if (du <= 0.0) cqL = 1.0;
        else {
            double w = up(du - dl);
            double al = fmin(1.0, fmax(0.0, -dl / w)), au = fmin(1.0, fmax(0.0, du / w));
            cqL = al;
            crL = fmin(dn(dl - up(al * dl)), dn(-up(al * du)));
            cqU = au;
            crU = fmax(up(-dn(au * dl)), up(du - dn(au * du)));
        }
        const double exL = -crL, exU = crU; /* the chords' largest excess (at d = 0) */
        if (li >= 0.0 && gl >= 0.0) J->qL[i] = J->qU[i] = 1.0; /* d */
        else if (ui <= 0.0 && gu <= 0.0) {                      /* 0 */
        } else if (li >= 0.0 && gu <= 0.0) {                    /* z ∈ [l, u] */
            J->rL[i] = li;
            J->rU[i] = ui;
        } else if (ui <= 0.0 && gl >= 0.0) { /* −w ∈ [−u_G, −l_G] */
            J->rL[i] = -gu;
            J->rU[i] = -gl;
        } else if (gl >= 0.0) { /* z unstable: d + relu(−z) ≥ d, ≤ d + a'·(u − z), a' ≥ −l/(u − l) */
            J->qL[i] = 1.0;
            double a = fmin(1.0, up(up(-li / dn(ui - li)))), r = up(a * ui);
            if (r < exU) J->pU[i] = -a, J->qU[i] = 1.0, J->rU[i] = r;
            else J->qU[i] = cqU, J->rU[i] = crU;
        } else if (li >= 0.0) { /* w unstable: d − relu(−w) ≤ d, ≥ d − a''·(u_G − w), w = z − d */
            J->qU[i] = 1.0;
            double a = fmin(1.0, up(up(-gl / dn(gu - gl)))), r = up(a * gu);
            if (r < exL) { /* (1 − a) rounded: the change is at most ε·|d| */
                J->pL[i] = a;
                J->qL[i] = 1.0 - a;
                J->rL[i] = dn(-r - 2.0 * EPS * J->dm[i]);
            } else J->qL[i] = cqL, J->rL[i] = crL;
        } else if (ui <= 0.0) { /* w unstable: −relu(w) ≤ 0, ≥ −b·(w − l_G), b ≥ u_G/(u_G − l_G) */
            double b = fmin(1.0, up(up(gu / dn(gu - gl)))), r = up(b * -gl);
            if (r < exL) J->pL[i] = -b, J->qL[i] = b, J->rL[i] = -r;
            else J->qL[i] = cqL, J->rL[i] = crL;
        } else if (gu <= 0.0) { /* z unstable: relu(z) ≥ 0, ≤ a·(z − l) */
            double r = J->bU[i];
            if (r < exU) J->pU[i] = az, J->rU[i] = r;
            else J->qU[i] = cqU, J->rU[i] = crU;
        } else { /* both unstable */
            J->qL[i] = cqL, J->rL[i] = crL;
            J->qU[i] = cqU, J->rU[i] = crU;
        }
        double gap = 0.0;
        if (!same) {
            gap = lg_dev_act_gap_certified(Lg->act, p, gl, gu, NULL);
            if (!(gap <= DBL_MAX)) return -1;
            if (!below) J->rL[i] = dn(J->rL[i] - gap);
            J->rU[i] = up(J->rU[i] + gap);
        }
        J->em[i] = up(J->dm[i] + gap); /* |relu(z) − relu(w)| ≤ |d| */
    }
    return 0;
}

/* d_K's bounds into lo, hi (intersected) by the rows ±d_K,i of the relu neurons whose pair is
 * not stable on one side (the others' relaxation does not use them; their magnitudes keep the
 * nets' bounds). 0; −1 out of memory; −2 past run's deadline. */
static int jbound_d(jctx *c, int K, double *lo, double *hi, const lg_runctx *run)
{
    const int n = jwidth(c, K);
    const lg_layer *Ly = &c->R->layers[K - 1];
    double *const *rl = lg_devnet_pre_lo(c->v, 0), *const *rh = lg_devnet_pre_hi(c->v, 0);
    double *const *gl = lg_devnet_pre_lo(c->v, 1), *const *gh = lg_devnet_pre_hi(c->v, 1);
    int *sel = c->sel, ns = 0;
    for (int i = 0; i < n; i++) {
        const double l = rl[K - 1][i], u = rh[K - 1][i], lg = gl[K - 1][i], ug = gh[K - 1][i];
        if (Ly->act == LG_ACT_RELU && !(l >= 0.0 && lg >= 0.0) && !(u <= 0.0 && ug <= 0.0)) sel[ns++] = i;
    }
    double ub[JROWS];
    for (int r0 = 0; r0 < 2 * ns; r0 += JROWS) {
        if (lg_runctx_expired(run)) return -2;
        const int m = 2 * ns - r0 < JROWS ? 2 * ns - r0 : JROWS;
        memset(c->Cz, 0, (size_t)m * n * sizeof *c->Cz);
        memset(c->Cd, 0, (size_t)m * n * sizeof *c->Cd);
        for (int r = 0; r < m; r++) {
            int g = r0 + r;
            c->Cd[(size_t)r * n + sel[g / 2]] = g % 2 ? -1.0 : 1.0;
        }
        if (jback(c, K, m, 1, ub)) return -1;
        for (int r = 0; r < m; r++) {
            int g = r0 + r, i = sel[g / 2];
            if (g % 2 == 0) hi[i] = fmin(hi[i], ub[r]);
            else lo[i] = fmax(lo[i], -ub[r]);
        }
    }
    return 0;
}

lg_status lg_devjoint_bound(lg_devnet *v, const lg_runctx *run, double *e)
{
    const lg_net *R = v->relu;
    const int NL = R->n_layers, no = lg_net_n_out(R), nin = R->n_in;
    for (int j = 0; j < no; j++) e[j] = INFINITY;
    if (!v->valid || lg_net_first_tnode(R) >= 0) return LG_OK;
    for (int k = 0; k < NL; k++)
        for (int t = 0; t < lg_layer_n_lin(&R->layers[k]); t++) {
            lg_layer_kind kd = lg_layer_lin(&R->layers[k], t)->kind;
            if (kd != LG_LAYER_DENSE && kd != LG_LAYER_CONV2D && kd != LG_LAYER_INDEX && kd != LG_LAYER_TOKMAP)
                return LG_OK;
        }
    double *const *rl = lg_devnet_pre_lo(v, 0), *const *rh = lg_devnet_pre_hi(v, 0);
    double *const *gl = lg_devnet_pre_lo(v, 1), *const *gh = lg_devnet_pre_hi(v, 1);
    /* the noise radii hold for the computed passes when every bound lies within its magnitude */
    for (int cc = 0, at = 0; cc < 2; cc++)
        for (int k = 0; k < NL; k++)
            for (int i = 0; i < R->layers[k].n_out; i++, at++) {
                double a = cc ? gl[k][i] : rl[k][i], b = cc ? gh[k][i] : rh[k][i];
                if (!(fmax(fabs(a), fabs(b)) <= v->zmag[at]) || !(v->tau[at] <= DBL_MAX)) return LG_OK;
            }
    const int W = lg_net_max_width(R) > nin ? lg_net_max_width(R) : nin;
    if ((size_t)JROWS * W * 8 > LG_DEVJOINT_MAX_DOUBLES) return LG_OK; /* too large: no claim */
    lg_status st = LG_OK;
    size_t nn = 0;
    for (int k = 0; k < NL; k++) nn += (size_t)R->layers[k].n_out;
    jctx c = {0};
    c.v = v;
    c.R = R;
    c.NL = NL;
    c.nin = nin;
    c.nd = calloc((size_t)NL + 1, sizeof *c.nd);
    c.toff = calloc((size_t)NL + 1, sizeof *c.toff);
    c.Gh = calloc(2 * ((size_t)NL + 1), sizeof *c.Gh);
    double *pool = malloc((JNODE_ARRAYS * nn + 2 * (size_t)nin + 3 * (size_t)JROWS * W + 2 * (size_t)W +
                           3 * (size_t)JROWS) * sizeof *pool);
    c.sel = malloc((size_t)W * sizeof *c.sel);
    if (!c.nd || !c.toff || !c.Gh || !pool || !c.sel) {
        st = lg_fail(LG_ERR_NOMEM, "devjoint: out of memory");
        goto done;
    }
    c.Gd = c.Gh + NL + 1;
    {
        double *p = pool;
        for (int q = 1; q <= NL; q++) {
            const size_t n = (size_t)R->layers[q - 1].n_out;
            double **f[JNODE_ARRAYS] = {&c.nd[q].aL, &c.nd[q].bL, &c.nd[q].aU, &c.nd[q].bU, &c.nd[q].pL, &c.nd[q].qL,
                                        &c.nd[q].rL, &c.nd[q].pU, &c.nd[q].qU, &c.nd[q].rU, &c.nd[q].zm, &c.nd[q].dm,
                                        &c.nd[q].hm, &c.nd[q].em, &c.nd[q].dl, &c.nd[q].du};
            for (int a = 0; a < JNODE_ARRAYS; a++, p += n) *f[a] = p;
            if (q < NL) c.toff[q] = c.toff[q - 1] + n;
        }
        c.xm = p, p += nin;
        c.xmag = c.xm;
        c.Cz = p, p += (size_t)JROWS * W;
        c.Cd = p, p += (size_t)JROWS * W;
        c.Y = p, p += (size_t)JROWS * W;
        c.tv = p, p += 2 * (size_t)W;
        c.cst = p, p += JROWS;
        c.sab = p, p += JROWS;
        c.err = p;
        (void)p;
    }
    {
        const lg_bounds *vb = v->exact ? &v->b0 : &v->b;
        c.xlo = vb->xlo;
        c.xhi = vb->xhi;
        for (int r = 0; r < nin; r++) {
            if (!(c.xlo[r] >= -DBL_MAX && c.xhi[r] <= DBL_MAX)) goto done; /* no claim */
            c.xm[r] = fmax(fabs(c.xlo[r]), fabs(c.xhi[r]));
        }
    }
    for (int q = 1; q <= NL; q++) {
        if (lg_runctx_expired(run)) goto done; /* past the deadline: no claim */
        const int n = R->layers[q - 1].n_out;
        jnode *J = &c.nd[q];
        /* d's bounds: the two nets' bounds, then the back-substitution (the first layer: noise only) */
        for (int i = 0; i < n; i++) {
            J->dl[i] = dn(rl[q - 1][i] - gh[q - 1][i]);
            J->du[i] = up(rh[q - 1][i] - gl[q - 1][i]);
        }
        int rc = jbound_d(&c, q, J->dl, J->du, run);
        if (rc == -2) goto done; /* past the deadline: no claim */
        if (rc) {
            st = lg_fail(LG_ERR_NOMEM, "devjoint: out of memory");
            goto done;
        }
        if (jplanes(&c, q, rl[q - 1], rh[q - 1], gl[q - 1], gh[q - 1])) goto done; /* no claim */
    }
    /* the output: δ of the last node, both ways */
    {
        const int n = no;
        double ub[JROWS];
        for (int r0 = 0; r0 < 2 * n; r0 += JROWS) {
            const int m = 2 * n - r0 < JROWS ? 2 * n - r0 : JROWS;
            /* rows on δ_L: put them in Gd of node NL and relax there */
            memset(c.cst, 0, (size_t)m * sizeof *c.cst);
            c.Gd[NL] = calloc((size_t)JROWS * n, sizeof *c.Gd[NL]);
            if (!c.Gd[NL]) {
                st = lg_fail(LG_ERR_NOMEM, "devjoint: out of memory");
                goto done;
            }
            for (int r = 0; r < m; r++) {
                int g = r0 + r;
                c.Gd[NL][(size_t)r * n + (g < n ? g : g - n)] = g < n ? 1.0 : -1.0;
            }
            memset(c.sab, 0, (size_t)m * sizeof *c.sab);
            memset(c.err, 0, (size_t)m * sizeof *c.err);
            jrelax(&c, NL, m);
            free(c.Gd[NL]);
            c.Gd[NL] = NULL;
            /* jback from the relaxed rows: its own start resets cst, so keep them */
            double *keep = malloc(3 * (size_t)m * sizeof *keep);
            if (!keep) {
                st = lg_fail(LG_ERR_NOMEM, "devjoint: out of memory");
                goto done;
            }
            memcpy(keep, c.cst, (size_t)m * sizeof *keep);
            memcpy(keep + m, c.sab, (size_t)m * sizeof *keep);
            memcpy(keep + 2 * m, c.err, (size_t)m * sizeof *keep);
            if (jback(&c, NL, m, 1, ub)) {
                free(keep);
                st = lg_fail(LG_ERR_NOMEM, "devjoint: out of memory");
                goto done;
            }
            for (int r = 0; r < m; r++) {
                /* the relaxation's constant and rounding, added outward */
                double x = up(ub[r] + up(keep[r] + up(keep[2 * m + r] + 4.0 * EPS * keep[m + r])));
                int g = r0 + r, j = g < n ? g : g - n;
                double y = x + v->xi[j] + v->xi[no + j];
                y = up(y);
                if (!(y <= DBL_MAX)) y = INFINITY;
                if (g < n) e[j] = y;
                else e[j] = fmax(e[j], y);
            }
            free(keep);
        }
    }
done:
    if (c.Gh)
        for (int q = 0; q <= NL; q++) {
            free(c.Gh[q]);
            free(c.Gd[q]);
        }
    free(c.Gh);
    free(c.nd);
    free(c.toff);
    free(c.sel);
    free(pool);
    return st;
}
