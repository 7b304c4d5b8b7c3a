/* check_devgrad.c — the interval-gradient deviation bound (verify/devgrad.h,
 * verify/devgrad_net.h): each node kind's interval vector–Jacobian product
 * contains the exact one at sampled points of random boxes (and a dropped
 * radius is caught); the route's bound is never below sampled and
 * PGD-maximised |f_relu − f_ref| on random ViT blocks, attention nets and
 * residual DAGs, on points and balls; one net's rounding bound is never
 * below its computed output's distance from the exact one (MPFR). */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/arch_vit.h"
#include "core/exact.h"
#include "core/net.h"
#include "core/op.h"
#include "core/rng.h"
#include "gen_graph.h"
#include "gen_tnet.h"
#include "testutil.h"
#include "train/vit.h"
#include "train/vit_net.h"
#include "verify/bounds.h"
#include "verify/devgrad.h"
#include "verify/devgrad_net.h"
#include "verify/opstage.h"
#include "verify/relax_iv.h"

/* One node kind's dev_vjp against the exact vᵀJ (its attack_backward entry, in double) at
 * sampled source points and adjoints v of the boxes; drop: call the entry with radius 0 (the
 * mutant). Returns the number of samples outside the enclosure. */
static int dg_kind_case(const lg_net *net, int k, lg_rng *r, double w, int n_samples, int drop)
{
    const lg_layer *L = &net->layers[k];
    const lg_vopdef *vop = lg_layer_vop(L);
    ck_assert_ptr_nonnull(vop);
    ck_assert_ptr_nonnull(vop->dev_vjp);
    const int sa = lg_layer_src(L, 0), sb = lg_layer_n_src(L) > 1 ? lg_layer_src(L, 1) : sa;
    const int na = lg_net_node_width(net, sa), nb = lg_net_node_width(net, sb), n = L->n_out;
    size_t len = lg_net_nodes_len(net), *noff = malloc(((size_t)net->n_layers + 1) * sizeof *noff);
    double *al = calloc(2 * len, sizeof *al), *ah = al + len;
    double *buf = calloc(12 * (size_t)(na + nb + n) + 16, sizeof *buf);
    ck_assert_ptr_nonnull(noff);
    ck_assert_ptr_nonnull(al);
    ck_assert_ptr_nonnull(buf);
    for (int j = -1; j < net->n_layers; j++) noff[j + 1] = lg_net_node_offset(net, j);
    /* source boxes: centre N(0, 1), width w·U(0, 1) */
    for (int s = 0; s < 2; s++) {
        int node = s ? sb : sa, m = s ? nb : na;
        for (int i = 0; i < m; i++) {
            double c = lg_rng_normal(r), h = w * lg_rng_uniform(r);
            al[noff[node + 1] + (size_t)i] = c - h;
            ah[noff[node + 1] + (size_t)i] = c + h;
        }
    }
    double *olo = buf, *ohi = olo + n, *vm = ohi + n, *vr = vm + n, *am = vr + n, *ar = am + na, *bm = ar + na,
           *br = bm + nb, *xa = br + nb, *xb = xa + na, *out = xb + nb, *da = out + n, *db = da + na;
    vop->interval(net, L, al, ah, noff, olo, ohi);
    for (int o = 0; o < n; o++) {
        vm[o] = lg_rng_normal(r);
        vr[o] = o % 2 ? 0.0 : 0.3 * lg_rng_uniform(r); /* point adjoints too (the kinds' point paths) */
    }
    size_t gw = L->lin.op.group > 0 ? (size_t)L->lin.op.group : 1;
    lg_dv *work = malloc(LG_DEVGRAD_VJP_WORK(gw) * sizeof *work);
    ck_assert_ptr_nonnull(work);
    double *vr0 = calloc((size_t)n, sizeof *vr0);
    lg_devgrad_src S = {al + noff[sa + 1], ah + noff[sa + 1], al + noff[sb + 1], ah + noff[sb + 1], olo, ohi, NULL,
                        NULL, am, ar, sa == sb ? am : bm, sa == sb ? ar : br};
    vop->dev_vjp(L, &S, vm, drop ? vr0 : vr, work);
    int bad = 0;
    for (int s = 0; s < n_samples; s++) {
        for (int i = 0; i < na; i++) {
            double u = s < 4 ? (double)((s >> (i % 2)) & 1) : lg_rng_uniform(r);
            xa[i] = al[noff[sa + 1] + (size_t)i] + u * (ah[noff[sa + 1] + (size_t)i] - al[noff[sa + 1] + (size_t)i]);
        }
        if (sb == sa) memcpy(xb, xa, (size_t)na * sizeof *xa);
        else
            for (int i = 0; i < nb; i++)
                xb[i] = al[noff[sb + 1] + (size_t)i] +
                        lg_rng_uniform(r) * (ah[noff[sb + 1] + (size_t)i] - al[noff[sb + 1] + (size_t)i]);
        double *v = out; /* v ∈ [vm − vr, vm + vr]: its ends (the worst case of a linear map) */
        for (int o = 0; o < n; o++) v[o] = vm[o] + (lg_rng_uniform(r) < 0.5 ? -vr[o] : vr[o]);
        double *y = malloc((size_t)n * sizeof *y);
        ck_assert_ptr_nonnull(y);
        lg_layer_op(L)->forward(&L->lin, xa, xb, y); /* the node's outputs at the point */
        memset(da, 0, (size_t)na * sizeof *da);
        memset(db, 0, (size_t)nb * sizeof *db);
        vop->attack_backward(L, xa, xb, y, v, da, sb == sa ? da : db);
        free(y);
        for (int i = 0; i < na; i++) {
            double tol = 1e-9 * (1.0 + fabs(da[i]));
            if (!(fabs(da[i] - am[i]) <= ar[i] + tol)) bad++;
        }
        if (sb != sa)
            for (int i = 0; i < nb; i++) {
                double tol = 1e-9 * (1.0 + fabs(db[i]));
                if (!(fabs(db[i] - bm[i]) <= br[i] + tol)) bad++;
            }
    }
    free(vr0), free(work), free(noff), free(al), free(buf);
    return bad;
}

/* Every Transformer kind of a random attention net (product, softmax, layernorm) on random
 * boxes (points, small and wide), and the mutant without the adjoint's radius. */
START_TEST(test_devgrad_vjp_kinds)
{
    lg_rng r;
    lg_rng_init(&r, 4242u, 3);
    int cases = 0, caught = 0;
    static const double ws[] = {0.0, 0.01, 0.3, 1.0};
    for (int it = 0; it < (lg_test_quick() ? 3 : 8); it++) {
        lg_net net = {0};
        lg_test_tnet_opts o = {0};
        o.post_norm = it % 2;
        ck_assert_int_eq(lg_test_tnet_random(&net, &r, &o), LG_OK);
        for (int k = 0; k < net.n_layers; k++) {
            if (!lg_layer_is_tnode(&net.layers[k])) continue;
            double w = ws[(it + k) % 4];
            int bad = dg_kind_case(&net, k, &r, w, 60, 0);
            ck_assert_msg(bad == 0, "net %d layer %d (%s), width %g: %d entries outside the enclosure", it, k,
                          lg_kind_name(net.layers[k].lin.kind), w, bad);
            cases++;
            caught += dg_kind_case(&net, k, &r, w, 60, 1) > 0;
        }
        lg_net_free(&net);
    }
    fprintf(stderr, "devgrad: %d node cases, the radius-free mutant caught in %d\n", cases, caught);
    ck_assert_int_gt(cases, 5);
    ck_assert_msg(caught > cases / 2, "the mutant without the radius was caught in %d of %d cases", caught, cases);
}
END_TEST

/* The route's bound on [lo, hi] against samples and a sign-gradient ascent per output. */
static void dg_route_case(const lg_net *rn, const lg_net *ref, const double *lo, const double *hi, lg_rng *r,
                          const char *what, size_t K, int *finite)
{
    const int ni = rn->n_in, no = lg_net_n_out(rn);
    ck_assert_int_le(ni, 256);
    ck_assert_int_le(no, 16);
    lg_devgrad_net g;
    ck_assert_int_eq(lg_devgrad_net_init(&g, rn, ref), LG_OK);
    g.K = K;
    g.affine_only = K > 0;
    double e[16], x[256], t[256], yr[16], yg[16];
    double *scr = malloc(4 * ((size_t)lg_net_max_width(rn) + (size_t)ni) * sizeof *scr);
    ck_assert_ptr_nonnull(scr);
    ck_assert_int_eq(lg_devgrad_net_bound(&g, lo, hi, NULL, e), LG_OK);
    for (int j = 0; j < no; j++) *finite += isfinite(e[j]) != 0;
    for (int s = 0; s < (lg_test_quick() ? 20 : 60); s++) {
        for (int i = 0; i < ni; i++) {
            double u = s < 8 ? (double)((s >> (i % 3)) & 1) : lg_rng_uniform(r);
            x[i] = lo[i] + (hi[i] - lo[i]) * u;
        }
        lg_net_forward(rn, x, yr, scr);
        lg_net_forward(ref, x, yg, scr);
        for (int j = 0; j < no; j++)
            ck_assert_msg(fabs(yr[j] - yg[j]) <= e[j], "%s output %d: observed %.17g above the bound %.17g", what, j,
                          fabs(yr[j] - yg[j]), e[j]);
    }
    for (int j = 0; j < no; j++) { /* sign-gradient ascent from the centre, finite differences */
        for (int i = 0; i < ni; i++) x[i] = 0.5 * (lo[i] + hi[i]);
        double best = lg_test_pair_obs(rn, ref, x, j, yr, yg, scr);
        for (int step = 0; step < 12; step++) {
            double a = 0.25 * pow(0.8, step);
            for (int i = 0; i < ni; i++) {
                double h = 1e-6 * (hi[i] - lo[i]) + 1e-300;
                memcpy(t, x, (size_t)ni * sizeof *t);
                t[i] = fmin(hi[i], x[i] + h);
                double up = lg_test_pair_obs(rn, ref, t, j, yr, yg, scr);
                t[i] = fmax(lo[i], x[i] - h);
                double dn = lg_test_pair_obs(rn, ref, t, j, yr, yg, scr);
                t[i] = fmin(hi[i], fmax(lo[i], x[i] + a * (hi[i] - lo[i]) * (up > dn ? 1.0 : up < dn ? -1.0 : 0.0)));
                if (lg_test_pair_obs(rn, ref, t, j, yr, yg, scr) > best) {
                    best = lg_test_pair_obs(rn, ref, t, j, yr, yg, scr);
                    x[i] = t[i];
                }
            }
        }
        ck_assert_msg(best <= e[j], "%s output %d: PGD deviation %.17g above the bound %.17g", what, j, best, e[j]);
    }
    free(scr);
    lg_devgrad_net_free(&g);
}

/* Pair number it's ReLU net: a random 1–2 block ViT (seed base + it), an attention net or a
 * residual ReLU DAG, by it % 3; what names it for messages. */
static void dg_random_net(lg_net *rn, lg_rng *r, int it, uint64_t base, char *what, size_t wn)
{
    static const char *const archs[] = {"1x4x4,vit:p2,d4,h2,L2,m6,cls,3", "1x4x4,vit:mean,p2,d4,h1,L1,m5,2"};
    if (it % 3 == 0) {
        lg_test_random_vit(rn, archs[(it / 3) % 2], base + (uint64_t)it);
        snprintf(what, wn, "vit %d", it);
    } else if (it % 3 == 1) {
        lg_test_tnet_opts o = {0};
        o.post_norm = it % 2;
        ck_assert_int_eq(lg_test_tnet_random(rn, r, &o), LG_OK);
        snprintf(what, wn, "tnet %d", it);
    } else {
        lg_test_dag_opts o = {0};
        o.act = LG_ACT_RELU;
        ck_assert_int_eq(lg_test_dag_random(rn, r, &o), LG_OK);
        snprintf(what, wn, "dag %d", it);
    }
}

/* Random ViTs (1–2 blocks), attention nets and residual DAGs, on points and balls. */
START_TEST(test_devgrad_route_oracle)
{
    lg_rng r;
    lg_rng_init(&r, 1618u, 5);
    static const double epss[] = {0.0, 1e-3, 1e-2};
    const int n = lg_test_quick() ? 6 : 15;
    int finite = 0;
    for (int it = 0; it < n; it++) {
        lg_net rn = {0}, ref;
        char what[96];
        dg_random_net(&rn, &r, it, 300u, what, sizeof what);
        lg_test_lgelu_relus(&ref, &rn, it);
        double lo[256], hi[256], eps = epss[it % 3];
        ck_assert_int_le(rn.n_in, 256);
        for (int i = 0; i < rn.n_in; i++) {
            double c = lg_rng_uniform(&r);
            lo[i] = c - eps;
            hi[i] = c + eps;
        }
        dg_route_case(&rn, &ref, lo, hi, &r, what, 0, &finite);
        lg_net_free(&ref);
        lg_net_free(&rn);
    }
    fprintf(stderr, "devgrad: %d random pairs, %d finite output bounds\n", n, finite);
    ck_assert_int_gt(finite, 0);
}
END_TEST

/* The affine adjoint (lg_devgrad_bound_affine) with few and many symbols (K 1: every node's
 * uncertainty folded into the radius at once; K 64: kept) on random ViTs and attention nets,
 * balls up to ε 0.03: the route's bound never below the sampled and ascended deviations. */
START_TEST(test_devgrad_affine_oracle)
{
    lg_rng r;
    lg_rng_init(&r, 2718u, 7);
    static const char *const archs[] = {"1x4x4,vit:p2,d4,h2,L2,m6,cls,3", "1x4x4,vit:mean,p2,d4,h1,L1,m5,2"};
    static const double epss[] = {0.0, 1e-3, 1e-2, 3e-2};
    static const size_t Ks[] = {1, 3, 64};
    const int n = lg_test_quick() ? 6 : 12;
    int finite = 0;
    for (int it = 0; it < n; it++) {
        lg_net rn = {0}, ref;
        char what[96];
        if (it % 2 == 0) {
            lg_test_random_vit(&rn, archs[(it / 2) % 2], 700u + (uint64_t)it);
            snprintf(what, sizeof what, "vit %d K %zu", it, Ks[it % 3]);
        } else {
            lg_test_tnet_opts o = {0};
            o.post_norm = (it / 2) % 2;
            ck_assert_int_eq(lg_test_tnet_random(&rn, &r, &o), LG_OK);
            snprintf(what, sizeof what, "tnet %d K %zu", it, Ks[it % 3]);
        }
        lg_test_lgelu_relus(&ref, &rn, it);
        double lo[256], hi[256], eps = epss[it % 4];
        ck_assert_int_le(rn.n_in, 256);
        for (int i = 0; i < rn.n_in; i++) {
            double c = lg_rng_uniform(&r);
            lo[i] = fmax(0.0, c - eps);
            hi[i] = fmin(1.0, c + eps);
        }
        dg_route_case(&rn, &ref, lo, hi, &r, what, Ks[it % 3], &finite);
        lg_net_free(&ref);
        lg_net_free(&rn);
    }
    fprintf(stderr, "devgrad: affine, %d random pairs, %d finite output bounds\n", n, finite);
    ck_assert_int_gt(finite, 0);
}
END_TEST

/* The affine adjoint's claim itself, on wide regions: for F(x, δ) (the ReLU net with each
 * substituted neuron's output relu(z) − δ, the route's F'), F(x, δ) − F(x, 0) ∈ [dlo, dhi]
 * for every x in the box and δ in the bands, the region being CROWN's bounds of F' over both:
 * at sampled (x, δ), and per output at the δ corners along the signs of the gradient (by
 * differences) at sampled x, which reach the bound where it is tight. The double forward
 * passes' rounding: a tolerance of 1e-9. */
static int dg_affine_region_case(const lg_net *rn, const lg_net *ref, lg_rng *r, double eps, double band, size_t K,
                                 int *checked)
{
    lg_devgrad_net g;
    ck_assert_int_eq(lg_devgrad_net_init(&g, rn, ref), LG_OK);
    const int L = rn->n_layers, n0 = rn->n_in, ni = g.n_in, no = lg_net_n_out(rn);
    ck_assert_int_le(ni, 1024);
    ck_assert_int_le(no, 16);
    double blo[1024], bhi[1024], x[1024], x0[1024], x1s[1024], y1[16], y0[16], dlo[16], dhi[16];
    for (int i = 0; i < n0; i++) {
        double c = lg_rng_uniform(r);
        blo[i] = fmax(0.0, c - eps), bhi[i] = fmin(1.0, c + eps);
    }
    for (int i = n0; i < ni; i++) { /* δ' = −δ, δ ∈ [−band·u, band·u'] */
        double a = band * lg_rng_uniform(r), b = band * lg_rng_uniform(r);
        blo[i] = -b, bhi[i] = a;
    }
    ck_assert_int_eq(lg_bounds_symbolic(&g.b, &g.F, blo, bhi), LG_OK);
    double *Rlo[64], *Rhi[64], *Bl[64], *Bh[64], *nul[64] = {0};
    ck_assert_int_le(L, 64);
    double *bands = malloc(2 * (size_t)ni * sizeof *bands);
    ck_assert_ptr_nonnull(bands);
    for (int k = 0; k < L; k++) {
        Rlo[k] = g.b.lo[g.at[k]], Rhi[k] = g.b.hi[g.at[k]];
        Bl[k] = Bh[k] = NULL;
        if (g.dat[k] < 0) continue;
        Bl[k] = bands + g.dat[k], Bh[k] = bands + ni + g.dat[k];
        for (int i = 0; i < rn->layers[k].n_out; i++) Bl[k][i] = -bhi[g.dat[k] + i], Bh[k][i] = -blo[g.dat[k] + i];
    }
    lg_devgrad_region R = {Rlo, Rhi, g.b.lo[0], g.b.hi[0], nul, nul, Bl, Bh, NULL, NULL};
    ck_assert_int_eq(lg_devgrad_bound_affine(rn, ref, &R, K, NULL, dlo, dhi), LG_OK);
    double *scr = malloc(4 * ((size_t)lg_net_max_width(&g.F) + (size_t)ni) * sizeof *scr);
    ck_assert_ptr_nonnull(scr);
    int bad = 0;
    for (int s = 0; s < 200; s++) {
        for (int i = 0; i < ni; i++) {
            double u = s < 16 ? (double)((s >> (i % 4)) & 1) : lg_rng_uniform(r);
            x[i] = blo[i] + (bhi[i] - blo[i]) * u;
            x0[i] = i < n0 ? x[i] : 0.0;
        }
        lg_net_forward(&g.F, x, y1, scr);
        lg_net_forward(&g.F, x0, y0, scr);
        for (int j = 0; j < no; j++) {
            double d = y1[j] - y0[j], tol = 1e-9 * (1.0 + fabs(y1[j]) + fabs(y0[j]));
            bad += !(d >= dlo[j] - tol && d <= dhi[j] + tol);
            (*checked)++;
        }
    }
    for (int s = 0; s < 8; s++) /* per output, the δ corners along the gradient's signs at a sampled x */
        for (int j = 0; j < no; j++) {
            for (int i = 0; i < n0; i++) x0[i] = blo[i] + (bhi[i] - blo[i]) * (s < 2 ? 0.5 : lg_rng_uniform(r));
            for (int i = n0; i < ni; i++) x0[i] = 0.0;
            lg_net_forward(&g.F, x0, y0, scr);
            memcpy(x, x0, (size_t)ni * sizeof *x);
            for (int i = n0; i < ni; i++) { /* ∂F_j/∂δ'_i by a difference, its sign */
                double h = 1e-6 * (bhi[i] - blo[i]) + 1e-12;
                x[i] = h;
                lg_net_forward(&g.F, x, y1, scr);
                x[i] = 0.0;
                double gr = y1[j] - y0[j];
                x1s[i] = gr;
            }
            for (int side = 0; side < 2; side++) {
                for (int i = n0; i < ni; i++) x[i] = (x1s[i] > 0.0) == (side == 0) ? bhi[i] : blo[i];
                lg_net_forward(&g.F, x, y1, scr);
                double d = y1[j] - y0[j], tol = 1e-9 * (1.0 + fabs(y1[j]) + fabs(y0[j]));
                bad += !(d >= dlo[j] - tol && d <= dhi[j] + tol);
                (*checked)++;
            }
        }
    free(scr), free(bands);
    lg_devgrad_net_free(&g);
    return bad;
}

/* dg_affine_region_case with K 1, 4 and 64 on the same region (each from the same generator
 * state; *r then moves on as after the last): no difference outside any of the three. */
static void dg_affine_region_ks(const lg_net *rn, const lg_net *ref, lg_rng *r, double eps, double band,
                                const char *what, int it, int *checked)
{
    static const size_t Ks[] = {1, 4, 64};
    for (int q = 0; q < 3; q++) {
        lg_rng r2 = *r;
        int bad = dg_affine_region_case(rn, ref, &r2, eps, band, Ks[q], checked);
        ck_assert_msg(bad == 0, "%s %d (ε %g, band %g, K %zu): %d differences outside the affine enclosure", what, it,
                      eps, band, Ks[q], bad);
        if (q == 2) *r = r2;
    }
}

START_TEST(test_devgrad_affine_region)
{
    lg_rng r;
    lg_rng_init(&r, 31415u, 9);
    static const char *const archs[] = {"1x4x4,vit:p2,d4,h2,L2,m6,cls,3", "1x4x4,vit:mean,p2,d4,h1,L1,m5,2"};
    const int n = lg_test_quick() ? 9 : 18;
    int checked = 0;
    for (int it = 0; it < n; it++) {
        lg_net rn = {0}, ref;
        if (it % 2 == 0)
            lg_test_random_vit(&rn, archs[(it / 2) % 2], 900u + (uint64_t)it);
        else {
            lg_test_tnet_opts o = {0};
            o.post_norm = (it / 2) % 2;
            ck_assert_int_eq(lg_test_tnet_random(&rn, &r, &o), LG_OK);
        }
        lg_test_lgelu_relus(&ref, &rn, it);
        double eps = it % 3 == 0 ? 0.0 : it % 3 == 1 ? 0.01 : 0.03, band = it % 2 ? 0.3 : 0.02;
        dg_affine_region_ks(&rn, &ref, &r, eps, band, "pair", it, &checked);
        lg_net_free(&ref);
        lg_net_free(&rn);
    }
    fprintf(stderr, "devgrad: affine region, %d pairs, %d differences checked\n", n, checked);
    ck_assert_int_gt(checked, 100);
}
END_TEST

/* The same claim on random residual ReLU DAGs, where unstable relus (slope [0, 1]) lie between
 * the substituted layers and the outputs, and the bound is tight enough that a relu step or a
 * symbol's coefficient at a substituted layer that is too small shows. */
START_TEST(test_devgrad_affine_region_dag)
{
    lg_rng r;
    lg_rng_init(&r, 27182u, 3);
    const int n = lg_test_quick() ? 12 : 24;
    int checked = 0;
    for (int it = 0; it < n; it++) {
        lg_net rn = {0}, ref;
        lg_test_dag_opts o = {0};
        o.act = LG_ACT_RELU, o.max_nodes = 5, o.max_width = 6;
        ck_assert_int_eq(lg_test_dag_random(&rn, &r, &o), LG_OK);
        lg_test_lgelu_relus(&ref, &rn, it);
        double eps = it % 2 ? 0.3 : 0.05, band = it % 3 ? 0.5 : 0.05;
        dg_affine_region_ks(&rn, &ref, &r, eps, band, "dag", it, &checked);
        lg_net_free(&ref);
        lg_net_free(&rn);
    }
    fprintf(stderr, "devgrad: affine region, %d dags, %d differences checked\n", n, checked);
    ck_assert_int_gt(checked, 100);
}
END_TEST

/* The estimate's ladder of symbols and the bound's escalation (devgrad_net.h): with no target the
 * estimate stays on its first rung; with target 0 it climbs (a rung of 4^j·64, never above the
 * first rung's estimate, as each rung is met with the last); the bound escalated toward a tiny
 * threshold is never above the bound of one pass, nor below sampled |ŷ_relu − ŷ_ref|. */
START_TEST(test_devgrad_ladder)
{
    lg_rng r;
    lg_rng_init(&r, 16180u, 2);
    static const char *const archs[] = {"1x4x4,vit:p2,d4,h2,L2,m6,cls,3", "1x4x4,vit:mean,p2,d4,h1,L1,m5,2"};
    int climbed = 0;
    for (int it = 0; it < 4; it++) {
        lg_net rn = {0}, ref;
        lg_test_random_vit(&rn, archs[it % 2], 500u + (uint64_t)it);
        lg_test_lgelu_relus(&ref, &rn, it);
        const int ni = rn.n_in, no = lg_net_n_out(&rn);
        double lo[64], hi[64], e1[16], e2[16], yr[16], yg[16], x[64];
        ck_assert_int_le(ni, 64);
        ck_assert_int_le(no, 16);
        for (int i = 0; i < ni; i++) {
            double c = lg_rng_uniform(&r);
            lo[i] = c - 0.01, hi[i] = c + 0.01;
        }
        lg_bounds b;
        ck_assert_int_eq(lg_bounds_init(&b, &rn), LG_OK);
        ck_assert_int_eq(lg_bounds_symbolic(&b, &rn, lo, hi), LG_OK);
        lg_devgrad_net g;
        ck_assert_int_eq(lg_devgrad_net_init(&g, &rn, &ref), LG_OK);
        double est_inf, est_0;
        ck_assert_int_eq(lg_devgrad_net_estimate(&g, &b, INFINITY, NULL, &est_inf), LG_OK);
        ck_assert_uint_eq(g.K_est, LG_DEVGRAD_AFFINE_K_EST);
        ck_assert_int_eq(lg_devgrad_net_estimate(&g, &b, 0.0, NULL, &est_0), LG_OK);
        size_t K = g.K_est;
        while (K > LG_DEVGRAD_AFFINE_K_EST && K % 4 == 0) K /= 4;
        ck_assert_uint_eq(K, LG_DEVGRAD_AFFINE_K_EST);
        ck_assert_uint_le(g.K_est, LG_DEVGRAD_AFFINE_K_MAX);
        ck_assert(est_0 <= est_inf);
        climbed += g.K_est > LG_DEVGRAD_AFFINE_K_EST;
        g.K_est = 0;
        ck_assert_int_eq(lg_devgrad_net_bound(&g, lo, hi, NULL, e1), LG_OK);
        g.want = 1e-12;
        ck_assert_int_eq(lg_devgrad_net_bound(&g, lo, hi, NULL, e2), LG_OK);
        double *scr = malloc(4 * ((size_t)lg_net_max_width(&rn) + (size_t)ni) * sizeof *scr);
        ck_assert_ptr_nonnull(scr);
        for (int j = 0; j < no; j++) ck_assert_msg(e2[j] <= e1[j], "vit %d output %d: escalated %g above %g", it, j, e2[j], e1[j]);
        for (int s = 0; s < 40; s++) {
            for (int i = 0; i < ni; i++) x[i] = lo[i] + (hi[i] - lo[i]) * lg_rng_uniform(&r);
            lg_net_forward(&rn, x, yr, scr);
            lg_net_forward(&ref, x, yg, scr);
            for (int j = 0; j < no; j++)
                ck_assert_msg(fabs(yr[j] - yg[j]) <= e2[j], "vit %d output %d: observed %g above %g", it, j,
                              fabs(yr[j] - yg[j]), e2[j]);
        }
        free(scr);
        lg_devgrad_net_free(&g);
        lg_bounds_free(&b);
        lg_net_free(&ref);
        lg_net_free(&rn);
    }
    fprintf(stderr, "devgrad: ladder, %d of 4 estimates climbed\n", climbed);
    ck_assert_int_gt(climbed, 0);
}
END_TEST

/* lg_up and lg_dn (verify/relax_iv.h, on the bits) give nextafter's doubles: the ends, zeros,
 * subnormals, the largest double and random bit patterns. */
START_TEST(test_devgrad_nextup)
{
    static const double sp[] = {0.0, -0.0, DBL_TRUE_MIN, -DBL_TRUE_MIN, DBL_MIN, -DBL_MIN, DBL_MAX, -DBL_MAX,
                                INFINITY, -INFINITY, 1.0, -1.0, 0x1p-1022 - 0x1p-1074, -0x1p-1022 + 0x1p-1074};
    lg_rng r;
    lg_rng_init(&r, 4711u, 1);
    for (int i = 0; i < 20014; i++) {
        double v;
        if (i < 14) v = sp[i];
        else {
            uint64_t b = lg_rng_u32(&r);
            b = b << 32 | lg_rng_u32(&r);
            memcpy(&v, &b, sizeof v);
            if (isnan(v)) continue;
        }
        double u = lg_up(v), d = lg_dn(v), nu = nextafter(v, INFINITY), nd = nextafter(v, -INFINITY);
        ck_assert_msg(memcmp(&u, &nu, sizeof u) == 0, "lg_up(%a) = %a, nextafter %a", v, u, nu);
        ck_assert_msg(memcmp(&d, &nd, sizeof d) == 0, "lg_dn(%a) = %a, nextafter %a", v, d, nd);
    }
    ck_assert(isnan(lg_up(NAN)) && isnan(lg_dn(NAN)));
}
END_TEST

/* One net's rounding bound (lg_devgrad_rounding) over the box [c − eps, c + eps] against the
 * computed output minus the exact one (lg_enclose_outputs: 128-bit MPFR intervals) at sampled
 * points of the box. Returns the largest observed |ŷ − y| / bound (0 where both are 0). */
static double dg_rounding_case(const lg_net *net, const double *c, double eps, int n_samples, lg_rng *r,
                               const char *what)
{
    const int ni = net->n_in, no = lg_net_n_out(net), L = net->n_layers;
    ck_assert_int_le(ni, 256);
    ck_assert_int_le(no, 16);
    ck_assert_int_le(L, 64);
    double lo[256], hi[256], x[256], out[16], fwd[16], y[16], ylo[16], yhi[16];
    for (int i = 0; i < ni; i++) lo[i] = fmax(0.0, c[i] - eps), hi[i] = fmin(1.0, c[i] + eps);
    lg_bounds b = {0};
    ck_assert_int_eq(lg_bounds_init(&b, net), LG_OK);
    ck_assert_int_eq(lg_bounds_symbolic(&b, net, lo, hi), LG_OK);
    double *clo[64], *chi[64];
    for (int k = 0; k < L; k++) {
        const lg_vopdef *vop = lg_layer_vop(&net->layers[k]);
        clo[k] = chi[k] = NULL;
        if (vop && vop->diff_centred && !vop->diff_centred(&b, net, k, &clo[k], &chi[k])) clo[k] = chi[k] = NULL;
    }
    size_t len = lg_net_nodes_len(net), off[65];
    for (int j = -1; j < L; j++) off[j + 1] = lg_net_node_offset(net, j);
    double *al = malloc(2 * len * sizeof *al), *ah = al + len;
    double *scr = malloc(4 * ((size_t)lg_net_max_width(net) + (size_t)ni) * sizeof *scr);
    ck_assert_ptr_nonnull(al);
    ck_assert_ptr_nonnull(scr);
    lg_devgrad_region R = {b.lo, b.hi, b.xlo, b.xhi, clo, chi, NULL, NULL, NULL, NULL};
    lg_devgrad_region_post(net, net, &R, off, al, ah);
    R.alo = al, R.ahi = ah;
    ck_assert_int_eq(lg_devgrad_rounding(net, &R, out, fwd), LG_OK);
    double worst = 0.0;
    for (int s = 0; s < n_samples; s++) {
        for (int i = 0; i < ni; i++) {
            double u = s == 0 ? 0.5 : s < 5 ? (double)((s >> (i % 2)) & 1) : lg_rng_uniform(r);
            x[i] = lo[i] + (hi[i] - lo[i]) * u;
        }
        lg_net_forward(net, x, y, scr);
        ck_assert_int_eq(lg_enclose_outputs(net, x, ylo, yhi), 0);
        for (int j = 0; j < no; j++) {
            double d = fmax(y[j] - yhi[j], ylo[j] - y[j]);
            ck_assert_msg(d <= out[j] && out[j] <= fwd[j],
                          "%s output %d: computed − exact %.17g, bound %.17g (forward %.17g)", what, j, d, out[j], fwd[j]);
            if (d > 0.0) worst = fmax(worst, d / out[j]);
        }
    }
    free(al), free(scr);
    lg_bounds_free(&b);
    return worst;
}

/* The rounding bound on random ViTs (relu and λ-GELU), attention nets and residual DAGs, at points
 * and on small balls; and on a chain whose one dot product cancels 2^53: (2^53 + 1) − 2^53 in the
 * forward pass's order is 0, 1 off, about a fortieth of its rounding bound (a bound that leaves
 * out the dot products' rounding is 2.5·10⁻¹⁴ there). */
START_TEST(test_devgrad_rounding)
{
    lg_rng r;
    lg_rng_init(&r, 5772u, 11);
    const int n = lg_test_quick() ? 6 : 12;
    double c[256];
    for (int it = 0; it < n; it++) {
        lg_net rn = {0}, ref;
        char what[96];
        dg_random_net(&rn, &r, it, 700u, what, sizeof what);
        lg_test_lgelu_relus(&ref, &rn, it);
        for (int i = 0; i < rn.n_in; i++) c[i] = lg_rng_uniform(&r);
        double eps = it % 2 ? 1e-3 : 0.0;
        dg_rounding_case(&rn, c, eps, 6, &r, what);
        dg_rounding_case(&ref, c, eps, 6, &r, what);
        lg_net_free(&ref);
        lg_net_free(&rn);
    }
    /* the cancelling chain: x (1, 1) → relu(2^53·x0), relu(x1), relu(2^53·x0) → h0 + h1 − h2 */
    lg_net net = {0};
    const int dims[] = {2, 3, 1};
    ck_assert_int_eq(lg_net_init(&net, 2, dims, LG_ACT_RELU), LG_OK);
    const double w0[] = {0x1p53, 0.0, 0.0, 1.0, 0x1p53, 0.0}, w1[] = {1.0, 1.0, -1.0};
    memcpy(net.layers[0].lin.W, w0, sizeof w0);
    memcpy(net.layers[1].lin.W, w1, sizeof w1);
    memset(net.layers[0].b, 0, 3 * sizeof *net.layers[0].b);
    net.layers[1].b[0] = 0.0;
    c[0] = c[1] = 1.0;
    double y, scr[64];
    lg_net_forward(&net, c, &y, scr);
    double worst = dg_rounding_case(&net, c, 0.0, 1, &r, "cancelling chain");
    fprintf(stderr, "devgrad: rounding, %d nets, the cancelling chain's output %g (exact 1), %.3g of its bound\n",
            2 * n, y, worst);
    if (y != 1.0) ck_assert_double_gt(worst, 0.01); /* the order of the sum decides whether it cancels */
    lg_net_free(&net);
}
END_TEST

Suite *suite_devgrad(void)
{
    Suite *s = suite_create("devgrad");
    TCase *tc = tcase_create("core");
    lg_tcase_timeout(tc, 60);
    tcase_add_test(tc, test_devgrad_vjp_kinds);
    tcase_add_test(tc, test_devgrad_route_oracle);
    tcase_add_test(tc, test_devgrad_affine_oracle);
    tcase_add_test(tc, test_devgrad_affine_region);
    tcase_add_test(tc, test_devgrad_affine_region_dag);
    tcase_add_test(tc, test_devgrad_nextup);
    tcase_add_test(tc, test_devgrad_ladder);
    tcase_add_test(tc, test_devgrad_rounding);
    suite_add_tcase(s, tc);
    return s;
}
