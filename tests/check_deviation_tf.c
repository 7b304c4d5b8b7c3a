/* check_deviation_tf.c — the certified deviation through the Transformer
 * nodes (anneal/deviation.h "Transformer nodes", verify/devtf.h): on random
 * small attention nets (tests/gen_tnet.c) and random 1–2 block ViTs
 * (train/vit_net.h) whose MLPs are λ-GELU with varied λ, every sampled and
 * PGD-maximised |ŷ_ReLU − ŷ_ref| of the double forward passes stays below
 * each bound (the propagation, the difference network's interval route, the
 * pair propagation on its bounds, the combined bound of `lgelu check`), the
 * difference network's bounds hold every computed value of both nets, and
 * at a point the bound is the observed deviation up to the outputs' rounding; the
 * rounding bounds of the nodes' forward passes against MPFR; the refusal of
 * pairs whose nodes differ. */
#include <check.h>
#include <float.h>
#include <math.h>
#include <mpfr.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "anneal/deviation.h"
#include "anneal/relu.h"
#include "core/arch_vit.h"
#include "core/netfile.h"
#include "core/rng.h"
#include "gen_tnet.h"
#include "testutil.h"
#include "train/vit.h"
#include "train/vit_net.h"
#include "verify/devnet.h"
#include "verify/devtf.h"
#include "verify/transfer.h"

/* |y_relu,j − y_ref,j| maximised over [lo, hi] (n ≤ 64) by sign-gradient ascent with
 * finite differences from x; x ends at the best point, whose deviation is returned. */
static double tf_pgd(const lg_net *rn, const lg_net *ref, int j, const double *lo, const double *hi, double *x,
                     double *yr, double *yg, double *scr)
{
    /* at most 64 coordinates move (a net with more inputs: every (n/48)-th one) */
    const int n = rn->n_in, stride = n <= 64 ? 1 : n / 48;
    double g[1024], *t = malloc((size_t)n * sizeof *t);
    ck_assert_ptr_nonnull(t);
    ck_assert_int_le(n, 1024);
    for (int i = 0; i < n; i++) g[i] = 0.0;
    double best = lg_test_pair_obs(rn, ref, x, j, yr, yg, scr);
    for (int step = 0; step < 30; step++) {
        memcpy(t, x, (size_t)n * sizeof *t);
        for (int i = 0; i < n; i += stride) {
            double h = 1e-7 * (hi[i] - lo[i] + 1e-300);
            t[i] = fmin(hi[i], x[i] + h);
            double up = lg_test_pair_obs(rn, ref, t, j, yr, yg, scr);
            t[i] = fmax(lo[i], x[i] - h);
            double dn = lg_test_pair_obs(rn, ref, t, j, yr, yg, scr);
            t[i] = x[i];
            g[i] = up - dn;
        }
        double a = 0.1 * pow(0.9, step);
        for (int i = 0; i < n; i++)
            t[i] = fmin(hi[i], fmax(lo[i], x[i] + a * (hi[i] - lo[i]) * (g[i] > 0 ? 1.0 : g[i] < 0 ? -1.0 : 0.0)));
        double v = lg_test_pair_obs(rn, ref, t, j, yr, yg, scr);
        if (v > best) {
            best = v;
            memcpy(x, t, (size_t)n * sizeof *t);
        }
    }
    free(t);
    return best;
}

/* Every bound of one pair on one box against samples, PGD and (a point) the observed value.
 * Returns the largest observed/bound ratio; *point_ratio (a point) bound/observed. */
static double tf_check_box(const lg_net *rn, const lg_net *ref, const double *lo, const double *hi, lg_rng *r,
                           int n_samples, const char *what, double *point_ratio)
{
    const int ni = rn->n_in, no = lg_net_n_out(rn);
    ck_assert_int_le(ni, 1024);
    ck_assert_int_le(no, 16);
    lg_dev dev;
    lg_devnet v;
    lg_bounds b;
    ck_assert_int_eq(lg_dev_init(&dev, rn, ref), LG_OK);
    ck_assert_int_eq(lg_devnet_init(&v, rn, ref), LG_OK);
    ck_assert_int_eq(lg_bounds_init(&b, rn), LG_OK);
    double D, Dold, Di, ei[16], ev[16], ep[16];
    ck_assert_int_eq(lg_dev_bound_boxes(&dev, lo, hi, 1, &Di, ei, NULL), LG_OK);
    ck_assert_int_eq(lg_transfer_box_delta(&dev, NULL, rn, &b, lo, hi, &Dold), LG_OK);
    ck_assert_int_eq(lg_transfer_box_delta(&dev, &v, rn, &b, lo, hi, &D), LG_OK);
    ck_assert_msg(D <= Dold, "%s: combined %.17g above the propagation alone %.17g", what, D, Dold);
    ck_assert_int_eq(lg_devnet_bound(&v, lo, hi, NULL, ev), LG_OK);
    for (int j = 0; j < no; j++) ep[j] = INFINITY;
    if (v.valid) {
        double Dp;
        lg_dev_ext x = {lg_devnet_pre_lo(&v, 0), lg_devnet_pre_hi(&v, 0), lg_devnet_pre_lo(&v, 1), lg_devnet_pre_hi(&v, 1),
                        1, NULL, NULL};
        ck_assert_int_eq(lg_dev_bound_box_pair(&dev, lo, hi, &x, &Dp, ep, NULL), LG_OK);
    }
    size_t len = lg_net_nodes_len(rn);
    double x[1024], yr[16], yg[16], *vals = malloc(2 * len * sizeof *vals), *pre = vals + len;
    double *scr = malloc(2 * (size_t)lg_net_max_width(rn) * sizeof *scr);
    ck_assert_ptr_nonnull(vals);
    ck_assert_ptr_nonnull(scr);
    double worst = 0.0;
    for (int s = 0; s < n_samples; s++) {
        for (int i = 0; i < ni; i++) {
            double u = s < 16 ? (double)((s >> (i % 4)) & 1) : lg_rng_uniform(r);
            x[i] = lo[i] + (hi[i] - lo[i]) * u;
        }
        lg_net_forward(rn, x, yr, scr);
        lg_net_forward(ref, x, yg, scr);
        for (int j = 0; j < no; j++) {
            double d = fabs(yr[j] - yg[j]);
            ck_assert_msg(d <= D && d <= Di && d <= ei[j] && d <= ev[j] && d <= ep[j],
                          "%s output %d: observed %.17g > a bound (combined %.17g, propagation %.17g / %.17g, devnet "
                          "%.17g, pair %.17g)",
                          what, j, d, D, Di, ei[j], ev[j], ep[j]);
            worst = fmax(worst, d / D);
        }
        for (int w = 0; w < 2 && v.valid; w++) { /* the difference network's bounds hold the computed values */
            const lg_net *net = w ? ref : rn;
            lg_net_forward_nodes(net, x, vals, pre);
            for (int k = 0; k < net->n_layers; k++)
                for (int i = 0; i < net->layers[k].n_out; i++) {
                    size_t at = lg_net_node_offset(net, k) + (size_t)i;
                    double z = lg_kind_is_tnode(net->layers[k].lin.kind) ? vals[at] : pre[at];
                    ck_assert_msg(lg_devnet_pre_lo(&v, w)[k][i] <= z && z <= lg_devnet_pre_hi(&v, w)[k][i],
                                  "%s net %d layer %d (%s) neuron %d: computed %.17g outside [%.17g, %.17g]", what, w, k,
                                  lg_kind_name(net->layers[k].lin.kind), i, z, lg_devnet_pre_lo(&v, w)[k][i],
                                  lg_devnet_pre_hi(&v, w)[k][i]);
                }
        }
    }
    for (int j = 0; j < no; j++) {
        for (int i = 0; i < ni; i++) x[i] = 0.5 * (lo[i] + hi[i]);
        double d = tf_pgd(rn, ref, j, lo, hi, x, yr, yg, scr);
        ck_assert_msg(d <= D && d <= Di && d <= ei[j] && d <= ev[j] && d <= ep[j],
                      "%s output %d: PGD deviation %.17g > a bound (combined %.17g, propagation %.17g, devnet %.17g, "
                      "pair %.17g)",
                      what, j, d, D, ei[j], ev[j], ep[j]);
        worst = fmax(worst, d / D);
    }
    int point = 1;
    for (int i = 0; i < ni; i++) point &= lo[i] == hi[i];
    if (point) {
        double obs = lg_test_pair_obs(rn, ref, lo, -1, yr, yg, scr), ymax = 0.0;
        for (int j = 0; j < no; j++) ymax = fmax(ymax, fmax(fabs(yr[j]), fabs(yg[j])));
        /* the exact deviation differs from the computed one by the outputs' rounding */
        ck_assert_msg(D <= obs * (1.0 + 1e-6) + 1e-12 * (1.0 + ymax), "%s: a point's bound %.17g is not the observed %.17g",
                      what, D, obs);
        if (point_ratio) *point_ratio = obs > 0 ? D / obs : 1.0;
    }
    free(vals);
    free(scr);
    lg_bounds_free(&b);
    lg_devnet_free(&v);
    lg_dev_free(&dev);
    return worst;
}

/* Random attention nets of gen_tnet.c (the gap in the MLP after the attention block) and
 * random ViTs (1–2 blocks: the first block's MLP deviation passes the next block's layernorm,
 * products, softmax and the final layernorm), on points, small and larger balls. */
START_TEST(test_devtf_oracle_random)
{
    lg_rng r;
    lg_rng_init(&r, 2718u, 11);
    static const char *const archs[] = {"1x4x4,vit:p2,d4,h2,L2,m6,cls,3", "1x4x4,vit:mean,p2,d4,h1,L2,m5,2",
                                        "1x6x6,vit:p3,d4,h2,L1,m6,cls,3", "2x2x4,vit:p2,d6,h3,L2,m4,mean,2"};
    static const double epss[] = {0.0, 1e-4, 1e-2, 0.1};
    const int n = lg_test_quick() ? 8 : 24;
    int n_points = 0, proved = 0;
    double worst = 0.0, pt_worst = 1.0;
    for (int it = 0; it < n; it++) {
        lg_net rn = {0}, ref;
        char what[96];
        if (it % 3 == 2) {
            lg_test_tnet_opts o = {0};
            ck_assert_int_eq(lg_test_tnet_random(&rn, &r, &o), LG_OK);
            snprintf(what, sizeof what, "tnet %d", it);
        } else {
            lg_test_random_vit(&rn, archs[it % 4], 100u + (uint64_t)it);
            snprintf(what, sizeof what, "vit %d (%s)", it, archs[it % 4]);
        }
        lg_test_lgelu_relus(&ref, &rn, it);
        const int ni = rn.n_in;
        double c[64], lo[64], hi[64], eps = epss[it % 4];
        for (int i = 0; i < ni; i++) {
            c[i] = lg_rng_uniform(&r);
            lo[i] = c[i] - eps;
            hi[i] = c[i] + eps;
        }
        double pr = 1.0;
        worst = fmax(worst, tf_check_box(&rn, &ref, lo, hi, &r, lg_test_quick() ? 40 : 150, what, &pr));
        if (eps == 0.0) {
            n_points++;
            pt_worst = fmax(pt_worst, pr);
        }
        lg_dev dev;
        double D;
        ck_assert_int_eq(lg_dev_init(&dev, &rn, &ref), LG_OK);
        ck_assert_int_eq(lg_dev_bound_boxes(&dev, lo, hi, 1, &D, NULL, NULL), LG_OK);
        proved += isfinite(D);
        lg_dev_free(&dev);
        lg_net_free(&ref);
        lg_net_free(&rn);
    }
    fprintf(stderr,
            "deviation_tf: %d random nets, %d points (bound / observed at most %.9f), %d finite propagated bounds; "
            "observed / bound at most %.3g\n",
            n, n_points, pt_worst, proved, worst);
    ck_assert_int_gt(n_points, 0);
    ck_assert_int_gt(proved, n / 2); /* the propagation gives finite bounds on most of these */
}
END_TEST

/* A small ViT trained by `lgelu train --arch 1x28x28,vit:p14,d4,h2,L2,m8,cls,10 --act lgelu`
 * (tests/fixtures/vit/tiny_vit.lgnet), its λ as trained and raised to 20 and 160, substituted
 * with lg_anneal_to_relu: the same oracle on points and balls of random images. */
START_TEST(test_devtf_oracle_trained_vit)
{
    lg_net net = {0};
    ck_assert_int_eq(lg_netfile_read(&net, lg_test_fixture("vit/tiny_vit.lgnet")), LG_OK);
    ck_assert_int_ge(lg_net_first_tnode(&net), 0);
    lg_rng r;
    lg_rng_init(&r, 5150u, 2);
    static const double lams[] = {0.0, 20.0, 160.0}, epss[] = {0.0, 1e-5, 1e-3};
    double pt = 1.0, worst = 0.0;
    for (int it = 0; it < (lg_test_quick() ? 3 : 6); it++) {
        lg_net ref, rn;
        ck_assert_int_eq(lg_net_copy(&ref, &net), LG_OK);
        for (int k = 0; k < ref.n_layers && lams[it % 3] > 0; k++)
            if (ref.layers[k].act == LG_ACT_LGELU) ref.layers[k].lambda = lams[it % 3];
        ck_assert_int_eq(lg_anneal_to_relu(&rn, &ref), LG_OK);
        double *lo = malloc(2 * (size_t)net.n_in * sizeof *lo), *hi = lo + net.n_in, eps = epss[(it + it / 3) % 3];
        for (int i = 0; i < net.n_in; i++) {
            double c = lg_rng_uniform(&r);
            lo[i] = fmax(0.0, c - eps);
            hi[i] = fmin(1.0, c + eps);
        }
        char what[64];
        snprintf(what, sizeof what, "trained vit, lambda %g, eps %g", lams[it % 3], eps);
        double pr = 1.0;
        worst = fmax(worst, tf_check_box(&rn, &ref, lo, hi, &r, lg_test_quick() ? 20 : 60, what, &pr));
        pt = fmax(pt, pr);
        free(lo);
        lg_net_free(&rn);
        lg_net_free(&ref);
    }
    fprintf(stderr, "deviation_tf trained ViT: bound / observed at points at most %.9f; observed / bound at most %.3g\n",
            pt, worst);
    lg_net_free(&net);
}
END_TEST

/* The difference network passes the nodes by CROWN (not by interval arithmetic): on the trained
 * ViT's small balls its bound is far below the propagation alone (interval arithmetic through
 * attention saturates there), and still above every sampled deviation (tf_check_box). */
START_TEST(test_devtf_crown_tightens_balls)
{
    lg_net net = {0};
    ck_assert_int_eq(lg_netfile_read(&net, lg_test_fixture("vit/tiny_vit.lgnet")), LG_OK);
    lg_net rn;
    ck_assert_int_eq(lg_anneal_to_relu(&rn, &net), LG_OK);
    lg_rng r;
    lg_rng_init(&r, 5151u, 2);
    double *lo = malloc(2 * (size_t)net.n_in * sizeof *lo), *hi = lo + net.n_in;
    ck_assert_ptr_nonnull(lo);
    for (int i = 0; i < net.n_in; i++) {
        double c = lg_rng_uniform(&r);
        lo[i] = fmax(0.0, c - 1e-4);
        hi[i] = fmin(1.0, c + 1e-4);
    }
    lg_dev dev;
    lg_devnet v;
    lg_bounds b;
    ck_assert_int_eq(lg_dev_init(&dev, &rn, &net), LG_OK);
    ck_assert_int_eq(lg_devnet_init(&v, &rn, &net), LG_OK);
    ck_assert_int_eq(lg_bounds_init(&b, &rn), LG_OK);
    double D, Dold;
    ck_assert_int_eq(lg_transfer_box_delta(&dev, NULL, &rn, &b, lo, hi, &Dold), LG_OK);
    ck_assert_int_eq(lg_transfer_box_delta(&dev, &v, &rn, &b, lo, hi, &D), LG_OK);
    ck_assert_msg(D < 0.5 * Dold, "difference network %.17g not below half the propagation alone %.17g", D, Dold);
    (void)tf_check_box(&rn, &net, lo, hi, &r, 20, "trained vit, eps 1e-4", NULL);
    lg_bounds_free(&b);
    lg_devnet_free(&v);
    lg_dev_free(&dev);
    free(lo);
    lg_net_free(&rn);
    lg_net_free(&net);
}
END_TEST

/* The rounding bounds of the nodes' double forward passes (core/op_*.c) against 256-bit MPFR
 * on random inputs, and a forward pass never outside the node's bounds of lg_devtf_node on a
 * point box (the image widened by that rounding). */
START_TEST(test_devtf_rounding)
{
    lg_rng r;
    lg_rng_init(&r, 99u, 2);
    mpfr_t a, s, t;
    mpfr_inits2(256, a, s, t, (mpfr_ptr)0);
    for (int it = 0; it < 300; it++) {
        const int g = 1 + (int)(lg_rng_uniform(&r) * 12);
        const double scale = pow(10.0, -3.0 + 6.0 * lg_rng_uniform(&r));
        double x[16], y[16], gb[32];
        for (int i = 0; i < g; i++) x[i] = scale * (2.0 * lg_rng_uniform(&r) - 1.0) + (it % 5 == 0 ? 100.0 : 0.0);
        if (it % 7 == 0)
            for (int i = 1; i < g; i++) x[i] = x[0] * (1.0 + 1e-12 * i); /* nearly constant: variance ~ 0 */
        for (int i = 0; i < 2 * g; i++) gb[i] = 2.0 * lg_rng_uniform(&r) - 1.0;
        lg_linear A = {.kind = LG_LAYER_SOFTMAX, .n_in = g, .n_out = g, .op = {.group = g}};
        lg_softmax_forward(&A, x, y);
        mpfr_set_d(s, 0.0, MPFR_RNDN);
        for (int i = 0; i < g; i++) {
            mpfr_set_d(t, x[i], MPFR_RNDN);
            mpfr_exp(t, t, MPFR_RNDN);
            mpfr_add(s, s, t, MPFR_RNDN);
        }
        double rs = lg_devtf_round_softmax(g);
        for (int i = 0; i < g; i++) {
            mpfr_set_d(t, x[i], MPFR_RNDN);
            mpfr_exp(t, t, MPFR_RNDN);
            mpfr_div(t, t, s, MPFR_RNDN);
            double ex = mpfr_get_d(t, MPFR_RNDN);
            ck_assert_msg(fabs(y[i] - ex) <= rs, "softmax g %d: error %g > bound %g", g, fabs(y[i] - ex), rs);
        }
        A = (lg_linear){.kind = LG_LAYER_LAYERNORM, .n_in = g, .n_out = g, .W = gb, .op = {.group = g, .eps = 1e-5}};
        lg_layernorm_forward(&A, x, y);
        double M = 0.0;
        for (int i = 0; i < g; i++) M = fmax(M, fabs(x[i]));
        mpfr_set_d(s, 0.0, MPFR_RNDN);
        for (int i = 0; i < g; i++) mpfr_add_d(s, s, x[i], MPFR_RNDN);
        mpfr_div_si(s, s, g, MPFR_RNDN); /* μ */
        mpfr_set_d(a, 0.0, MPFR_RNDN);
        for (int i = 0; i < g; i++) {
            mpfr_d_sub(t, x[i], s, MPFR_RNDN);
            mpfr_sqr(t, t, MPFR_RNDN);
            mpfr_add(a, a, t, MPFR_RNDN);
        }
        mpfr_div_si(a, a, g, MPFR_RNDN);
        mpfr_add_d(a, a, 1e-5, MPFR_RNDN);
        mpfr_rec_sqrt(a, a, MPFR_RNDN); /* r */
        double rmax = lg_devtf_ln_rmax(g, x, x, 1e-5, M);
        for (int i = 0; i < g; i++) {
            mpfr_d_sub(t, x[i], s, MPFR_RNDN);
            mpfr_mul(t, t, a, MPFR_RNDN);
            mpfr_mul_d(t, t, gb[i], MPFR_RNDN);
            mpfr_add_d(t, t, gb[g + i], MPFR_RNDN);
            double ex = mpfr_get_d(t, MPFR_RNDN), rb = lg_devtf_round_layernorm(g, M, rmax, gb[i], gb[g + i]);
            ck_assert_msg(fabs(y[i] - ex) <= rb, "layernorm g %d scale %g: error %g > bound %g", g, scale,
                          fabs(y[i] - ex), rb);
            /* the bound is not vacuous: a few hundred ulps of the output's scale at most */
            ck_assert_msg(rb <= 1e-9 * (1.0 + fabs(ex)) + 1e-6 * M * rmax * fabs(gb[i]), "layernorm bound %g", rb);
        }
        /* product: a dot product of K terms */
        const int K = g;
        double pa[16], pb[16], acc = 0.0, mass = 0.0;
        mpfr_set_d(s, 0.0, MPFR_RNDN);
        for (int k = 0; k < K; k++) {
            pa[k] = x[k];
            pb[k] = gb[k] * scale;
            acc += pa[k] * pb[k];
            mass += fabs(pa[k] * pb[k]);
            mpfr_set_d(t, pa[k], MPFR_RNDN);
            mpfr_mul_d(t, t, pb[k], MPFR_RNDN);
            mpfr_add(s, s, t, MPFR_RNDN);
        }
        ck_assert(fabs(acc - mpfr_get_d(s, MPFR_RNDN)) <= lg_devtf_round_product(K, mass));
    }
    mpfr_clears(a, s, t, (mpfr_ptr)0);
    mpfr_free_cache();
}
END_TEST

/* One node's rule (lg_devtf_node) on random small boxes: the forward pass at sampled x in the
 * box lies in [lo, hi], and x' = x moved by ±e along the signs of the output's finite-difference
 * gradient (the worst direction to first order) changes the output by at most e_out. */
START_TEST(test_devtf_node_worst_direction)
{
    lg_rng r;
    lg_rng_init(&r, 31337u, 4);
    enum { G = 6, T = 3 };
    double W[2 * G], al[2 * G], ah[2 * G], ea[2 * G], lo[G * G], hi[G * G], e[G * G], x[2 * G], xp[2 * G], y[G * G],
        yp[G * G], yq[G * G], dir[2 * G], work[LG_DEVTF_NODE_WORK(G)];
    int map[2 * G * T];
    double tight = 0.0;
    for (int it = 0; it < 600; it++) {
        const int kind = it % 3;
        const double w = pow(10.0, -4.0 + 3.0 * lg_rng_uniform(&r)), ee = pow(10.0, -6.0 + 3.0 * lg_rng_uniform(&r));
        lg_linear A;
        int ni, no;
        if (kind == 2) { /* product: out[o] = Σ_k a[ia]·b[ib], a and b both of width G (al[0..G), al[G..2G)) */
            no = G;
            ni = 2 * G;
            for (int q = 0; q < G * T; q++) map[q] = (int)(lg_rng_uniform(&r) * G), map[G * T + q] = (int)(lg_rng_uniform(&r) * G);
            A = (lg_linear){.kind = LG_LAYER_BILINEAR, .n_in = G, .n_out = G, .map = map, .op = {.n_in_b = G, .K = T}};
        } else {
            no = ni = G;
            for (int i = 0; i < 2 * G; i++) W[i] = 2.0 * lg_rng_uniform(&r) - 1.0;
            A = (lg_linear){.kind = kind ? LG_LAYER_LAYERNORM : LG_LAYER_SOFTMAX, .n_in = G, .n_out = G, .W = W,
                            .op = {.group = G, .eps = 1e-5}};
        }
        for (int i = 0; i < ni; i++) {
            double c = 3.0 * (2.0 * lg_rng_uniform(&r) - 1.0);
            al[i] = c - w * lg_rng_uniform(&r);
            ah[i] = c + w * lg_rng_uniform(&r);
            ea[i] = ee * lg_rng_uniform(&r);
        }
        lg_devtf_node(&A, al, ah, ea, al + G, ah + G, ea + G, NULL, NULL, lo, hi, e, work);
#define TF_F(v, out) (kind == 2 ? lg_bilinear_forward(&A, (v), (v) + G, (out)) \
                      : kind ? lg_layernorm_forward(&A, (v), (out)) : lg_softmax_forward(&A, (v), (out)))
        for (int s = 0; s < 8; s++) {
            for (int i = 0; i < ni; i++) x[i] = al[i] + (ah[i] - al[i]) * lg_rng_uniform(&r);
            TF_F(x, y);
            for (int o = 0; o < no; o++) {
                ck_assert_msg(lo[o] <= y[o] && y[o] <= hi[o], "kind %d: output %d %.17g outside [%.17g, %.17g]", kind,
                              o, y[o], lo[o], hi[o]);
                /* the gradient's signs at x by central differences, then x' = x + e·sign */
                for (int i = 0; i < ni; i++) {
                    double h = 1e-6 * (1.0 + fabs(x[i]));
                    memcpy(xp, x, (size_t)ni * sizeof *xp);
                    xp[i] = x[i] + h;
                    TF_F(xp, yp);
                    xp[i] = x[i] - h;
                    TF_F(xp, yq);
                    dir[i] = x[i] + (yp[o] - yq[o] > 0 ? ea[i] : -ea[i]);
                }
                TF_F(dir, yp);
                double d = fabs(yp[o] - y[o]);
                ck_assert_msg(d <= e[o], "kind %d: output %d moves by %.17g > its bound %.17g", kind, o, d, e[o]);
                if (e[o] > 0) tight = fmax(tight, d / e[o]);
            }
        }
#undef TF_F
    }
    fprintf(stderr, "deviation_tf node rules: worst direction reaches %.3f of the bound\n", tight);
    ck_assert(tight > 0.5); /* the rules are tight to first order on small boxes */
}
END_TEST

/* A pair whose Transformer nodes differ (a group size, a product's index table) is refused. */
/* y_i of a layernorm group in long double (the oracle of the segment rule). */
static long double tf_ln(int g, const double *x, double eps, const double *gamma, int i, long double *rr)
{
    long double mu = 0.0L, v = 0.0L;
    for (int j = 0; j < g; j++) mu += x[j];
    mu /= g;
    for (int j = 0; j < g; j++) v += (x[j] - mu) * (x[j] - mu);
    long double r = 1.0L / sqrtl(v / g + eps);
    if (rr) *rr = r;
    return gamma[i] * (x[i] - mu) * r;
}

/* The layernorm's segment rule (devtf.h lg_dev_layernorm_seg) on inputs with a wide common
 * part (the box is wide, the centred bounds narrow, as a residual stream's): x = c0 + t·1 + δ,
 * |δ| ≤ ρ, so c(x) ∈ c(c0) ± 2ρ; x' = x + a perturbation of size ≤ e, sampled and moved
 * along the sign of ∂y_i/∂x' (PGD) — |y_i(x) − y_i(x')| never above d_i; and the rule is
 * below the box's (lg_dev_layernorm over the widened box) on most groups (it follows the
 * centred bounds). */
START_TEST(test_devtf_ln_segment)
{
    lg_rng r;
    lg_rng_init(&r, 4242, 3);
    enum { G = 8 };
    double c0[G], gamma[G], l[G], u[G], clo[G], chi[G], e[G], d[G], db[G], x[G], xp[G], cbar[G];
    lg_dv work[LG_DEVTF_WORK(G)];
    int tighter = 0, trials = 0;
    for (int it = 0; it < 300; it++) {
        const int g = 3 + (int)(lg_rng_uniform(&r) * (G - 2));
        const double M = 2.0, rho = 0.2 * lg_rng_uniform(&r), eps = 1e-5;
        const double emax = pow(10.0, -3.0 + 3.0 * lg_rng_uniform(&r)); /* 1e-3 … 1 */
        double mu = 0.0;
        for (int j = 0; j < g; j++) {
            c0[j] = 2.0 * lg_rng_uniform(&r) - 1.0;
            gamma[j] = (lg_rng_uniform(&r) < 0.5 ? -1.0 : 1.0) * (0.5 + 1.5 * lg_rng_uniform(&r));
            e[j] = emax * lg_rng_uniform(&r);
            mu += c0[j];
        }
        mu /= g;
        for (int j = 0; j < g; j++) {
            cbar[j] = c0[j] - mu;
            l[j] = c0[j] - M - rho;
            u[j] = c0[j] + M + rho;
            clo[j] = cbar[j] - 2.0 * rho - 1e-12;
            chi[j] = cbar[j] + 2.0 * rho + 1e-12;
        }
        lg_dev_layernorm_seg(g, l, u, clo, chi, e, eps, gamma, d);
        lg_dev_layernorm((size_t)g, l, u, e, eps, gamma, db, work);
        for (int i = 0; i < g; i++) {
            trials++;
            tighter += d[i] < db[i];
        }
        for (int s = 0; s < 40; s++) {
            double t = M * (2.0 * lg_rng_uniform(&r) - 1.0);
            for (int j = 0; j < g; j++) x[j] = c0[j] + t + rho * (2.0 * lg_rng_uniform(&r) - 1.0);
            const int i = s % g;
            for (int j = 0; j < g; j++) xp[j] = x[j] + e[j] * (2.0 * lg_rng_uniform(&r) - 1.0);
            for (int step = 0; step < (s & 1 ? 8 : 0); step++) { /* PGD on |y_i(x') − y_i(x)| */
                long double rr, yi = tf_ln(g, xp, eps, gamma, i, &rr), mp = 0.0L;
                long double sg = yi - tf_ln(g, x, eps, gamma, i, NULL) >= 0 ? 1.0L : -1.0L;
                for (int j = 0; j < g; j++) mp += xp[j];
                mp /= g;
                long double ci = (xp[i] - mp) * rr;
                for (int j = 0; j < g; j++) {
                    long double cj = (xp[j] - mp) * rr;
                    long double dj = gamma[i] * rr * ((i == j) - 1.0L / g - ci * cj / g);
                    double a = step == 0 ? 1.0 : 0.5;
                    xp[j] = x[j] + fmax(-e[j], fmin(e[j], (xp[j] - x[j]) * (1.0 - a) + a * e[j] * (sg * dj >= 0 ? 1.0 : -1.0)));
                }
            }
            long double dv = fabsl(tf_ln(g, xp, eps, gamma, i, NULL) - tf_ln(g, x, eps, gamma, i, NULL));
            ck_assert_msg(dv <= d[i], "trial %d g %d output %d: |y(x) − y(x')| = %.17Lg above the segment rule's %.17g", it,
                          g, i, dv, d[i]);
        }
    }
    ck_assert_msg(4 * tighter > trials, "segment rule tighter on only %d of %d outputs", tighter, trials);
}
END_TEST

START_TEST(test_devtf_refuses_mismatch)
{
    lg_net rn, ref;
    lg_test_random_vit(&rn, "1x4x4,vit:p2,d4,h2,L1,m6,cls,3", 7);
    lg_test_lgelu_relus(&ref, &rn, 0);
    lg_dev dev;
    ck_assert_int_eq(lg_dev_init(&dev, &rn, &ref), LG_OK);
    lg_dev_free(&dev);
    int k = lg_net_first_tnode(&ref);
    while (ref.layers[k].lin.kind != LG_LAYER_BILINEAR) k++;
    int keep = ref.layers[k].lin.map[0];
    ref.layers[k].lin.map[0] = ref.layers[k].lin.map[1];
    ck_assert_int_eq(lg_dev_check_pair(&rn, &ref), LG_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(lg_errmsg(), "product"));
    ref.layers[k].lin.map[0] = keep;
    ck_assert_int_eq(lg_dev_check_pair(&rn, &ref), LG_OK);
    lg_net_free(&ref);
    lg_net_free(&rn);
}
END_TEST

Suite *suite_deviation_tf(void)
{
    Suite *s = suite_create("deviation_tf");
    TCase *tc = tcase_create("core");
    lg_tcase_timeout(tc, 300);
    tcase_add_test(tc, test_devtf_oracle_random);
    tcase_add_test(tc, test_devtf_oracle_trained_vit);
    tcase_add_test(tc, test_devtf_crown_tightens_balls);
    tcase_add_test(tc, test_devtf_rounding);
    tcase_add_test(tc, test_devtf_node_worst_direction);
    tcase_add_test(tc, test_devtf_refuses_mismatch);
    tcase_add_test(tc, test_devtf_ln_segment);
    suite_add_tcase(s, tc);
    return s;
}
