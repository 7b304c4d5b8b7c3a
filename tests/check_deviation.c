/* check_deviation.c — the certified deviation bound (anneal/deviation.h):
 * the per-neuron gap against brute force and its constants, the bound
 * against deviations observed by double forward passes (random networks,
 * random inputs and points inside ε-balls, real Fashion-MNIST images), the
 * ball bound ≤ the global bound, the 1/λ scaling, and refusal of networks
 * that are not a substitution pair. */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "anneal/deviation.h"
#include "anneal/relu.h"
#include "anneal/schedule.h"
#include "core/arch.h"
#include "core/idx.h"
#include "core/netfile.h"
#include "core/rng.h"
#include "gen_graph.h"
#include "oracle.h"
#include "testutil.h"
#include "train/loop.h"
#include "train/model.h"
#include "verify/devnet.h"
#include "verify/transfer.h"
#include "onnx/load.h"


/* ref: random net with hidden activation `act`, every smooth layer at
 * hardness lambda[k] (lambda may be NULL for gelu); rn: its substitution. */
static void lg_make_pair(lg_net *ref, lg_net *rn, int n_layers, const int *dims, lg_act act, const double *lambda,
                         uint64_t seed, double scale)
{
    lg_rng r;
    lg_rng_init(&r, seed, 3);
    ck_assert_int_eq(lg_net_init(ref, n_layers, dims, act), LG_OK);
    lg_test_randomize(ref, &r, scale);
    if (act == LG_ACT_LGELU)
        for (int k = 0; k + 1 < n_layers; k++) ref->layers[k].lambda = lambda[k];
    ck_assert_int_eq(lg_anneal_to_relu(rn, ref), LG_OK);
}

/* ‖f_R(x) − f_G(x)‖∞ by lg_net_forward (scratch ≥ 2·width, y's ≥ n_out). */
static double lg_observed(const lg_net *rn, const lg_net *ref, const double *x, double *yr, double *yg, double *scratch)
{
    lg_net_forward(rn, x, yr, scratch);
    lg_net_forward(ref, x, yg, scratch);
    double m = 0.0;
    for (int j = 0; j < lg_net_n_out(rn); j++)
        if (fabs(yr[j] - yg[j]) > m) m = fabs(yr[j] - yg[j]);
    return m;
}

START_TEST(test_deviation_gap_constants)
{
    /* brute force sΦ(−s) on a grid of step 1e-6 over [0, 3] */
    double best = 0.0, arg = 0.0;
    for (long i = 0; i <= 3000000; i++) {
        double s = 1e-6 * (double)i, v = s * lg_Phi(-s);
        if (v > best) best = v, arg = s;
    }
    ck_assert_double_eq_tol(best, LG_DEV_PEAK_V, 1e-11);
    ck_assert_double_eq_tol(arg, LG_DEV_PEAK_S, 2e-6);
    ck_assert_double_eq_tol(LG_DEV_PEAK_V, 0.16997, 5e-6);
    ck_assert_double_eq_tol(LG_DEV_PEAK_S, 0.7518, 5e-5);
    const double lambdas[] = {1, 5, 50, 160};
    for (int i = 0; i < 4; i++) {
        double l = lambdas[i];
        ck_assert_double_eq_tol(lg_dev_gap(l, -1.0, 1.0) * l, 0.16997, 1e-5);
        /* attained at x = ±0.7518/λ */
        for (int sg = -1; sg <= 1; sg += 2) {
            double x = sg * LG_DEV_PEAK_S / l;
            double dev = fabs(lg_act_eval(LG_ACT_LGELU, x, l) - lg_act_eval(LG_ACT_RELU, x, 0));
            ck_assert_msg(fabs(dev - LG_DEV_PEAK_V / l) <= 1e-12 / l, "lambda %g x %g: %.17g", l, x, dev);
        }
        ck_assert_double_eq_tol(lg_dev_gap(l, 0.7518 / l, 0.7518 / l), 0.16997 / l, 5e-6 / l);
    }
}
END_TEST

START_TEST(test_deviation_gap_bruteforce)
{
    const double lambdas[] = {1, 5, 50, 160};
    const int grid = 4000;
    lg_rng r;
    lg_rng_init(&r, 42, 0);
    for (int li = 0; li < 4; li++) {
        double lam = lambdas[li];
        for (int t = 0; t < 150; t++) {
            double range = t % 3 == 0 ? 20.0 : 4.0; /* some far from 0 */
            double l = (2 * lg_rng_uniform(&r) - 1) * range / lam, u = (2 * lg_rng_uniform(&r) - 1) * range / lam;
            if (t % 5 == 0) u = l + 0.01 * lg_rng_uniform(&r) / lam; /* narrow */
            if (l > u) {
                double s = l;
                l = u;
                u = s;
            }
            double brute = 0.0;
            for (int i = 0; i <= grid; i++) {
                double x = i == grid ? u : l + (u - l) * i / grid;
                double v = fabs(lg_act_eval(LG_ACT_LGELU, x, lam) - lg_act_eval(LG_ACT_RELU, x, 0));
                if (v > brute) brute = v;
            }
            double g = lg_dev_gap(lam, l, u);
            double slack = 4 * DBL_EPSILON * fmax(fabs(l), fabs(u)); /* cancellation in x − xΦ(λx) */
            ck_assert_msg(g >= brute - slack, "lambda %g [%g, %g]: gap %.17g < brute force %.17g", lam, l, u, g, brute);
            /* |d/dt tΦ(−λt)| ≤ 1/2, so the grid misses at most spacing/4 */
            ck_assert_msg(g <= brute + (u - l) / grid + slack, "lambda %g [%g, %g]: gap %.17g > brute force %.17g", lam,
                          l, u, g, brute);
        }
    }
}
END_TEST

START_TEST(test_deviation_single_neuron_tight)
{
    /* x ↦ z = x ↦ act(z) ↦ y = act(z): Δ on [0,1] is exactly the peak gap */
    const double lambdas[] = {1, 5, 50, 160};
    for (int i = 0; i < 4; i++) {
        const int dims[] = {1, 1, 1};
        double lam = lambdas[i];
        lg_net ref, rn;
        ck_assert_int_eq(lg_net_init(&ref, 2, dims, LG_ACT_LGELU), LG_OK);
        ref.params[0] = 1.0; /* W1 */
        ref.params[2] = 1.0; /* W2 */
        ref.layers[0].lambda = lam;
        ck_assert_int_eq(lg_anneal_to_relu(&rn, &ref), LG_OK);
        lg_dev dev;
        ck_assert_int_eq(lg_dev_init(&dev, &rn, &ref), LG_OK);
        double D, yr, yg, scratch[2];
        lg_dev_stats st = {0};
        double e_out;
        ck_assert_int_eq(lg_dev_bound_global(&dev, 0.0, 1.0, &D, &e_out, &st), LG_OK);
        ck_assert_double_eq(e_out, D);
        ck_assert_uint_eq(st.n_gap, 1);
        ck_assert_uint_eq(st.n_peak, 1);
        ck_assert_msg(D >= LG_DEV_PEAK_V / lam && D <= LG_DEV_PEAK_V / lam * (1 + 1e-9) + 1e-11, "lambda %g: %.17g", lam, D);
        double x = LG_DEV_PEAK_S / lam;
        double obs = lg_observed(&rn, &ref, &x, &yr, &yg, scratch);
        ck_assert_msg(obs >= LG_DEV_PEAK_V / lam * (1 - 1e-9) && obs <= D, "lambda %g: observed %.17g", lam, obs);
        /* box [0.9, 1]: the gap is at the end 0.9 closest to the peak; the
         * rounding allowance adds ~γ·|z| ≈ 1e-12 per layer (deviation.h) */
        double lo = 0.9, hi = 1.0;
        ck_assert_int_eq(lg_dev_bound_boxes(&dev, &lo, &hi, 1, &D, NULL, NULL), LG_OK);
        double want = 0.9 * lg_Phi(-lam * 0.9);
        ck_assert_msg(D >= want && D <= want * (1 + 1e-8) + 1e-11, "lambda %g: box bound %.17g, want %.17g", lam, D, want);
        lg_dev_free(&dev);
        lg_net_free(&rn);
        lg_net_free(&ref);
    }
}
END_TEST

START_TEST(test_deviation_unstable_slope)
{
    /* x ↦ z_a = x − 0.5 (lgelu) ↦ p = relu(a + 10), q = relu(a − 0.001) (relu
     * in both nets) ↦ y = p − q. Near x = 0.5 − 0.7518/λ the lgelu output is
     * −0.16997/λ while relu gives 0; p passes the deviation on, q stays 0 in
     * both nets, so |Δy| = 0.16997/λ. q's interval straddles 0: a bound that
     * took q's relu slope as 1 would let p and q cancel and claim ≈ 0. The
     * backward refinement, with slope ∈ [0,1], is exact here (the forward
     * recursion |W|·e gives twice as much). */
    const int dims[] = {1, 1, 2, 1};
    const double lambdas[] = {5, 50, 160};
    for (int li = 0; li < 3; li++) {
        double lam = lambdas[li];
        lg_net ref, rn;
        ck_assert_int_eq(lg_net_init(&ref, 3, dims, LG_ACT_LGELU), LG_OK);
        ref.layers[0].lin.W[0] = 1.0, ref.layers[0].b[0] = -0.5, ref.layers[0].lambda = lam;
        ref.layers[1].act = LG_ACT_RELU, ref.layers[1].lambda = 1.0;
        ref.layers[1].lin.W[0] = 1.0, ref.layers[1].lin.W[1] = 1.0, ref.layers[1].b[0] = 10.0, ref.layers[1].b[1] = -0.001;
        ref.layers[2].lin.W[0] = 1.0, ref.layers[2].lin.W[1] = -1.0;
        ck_assert_int_eq(lg_anneal_to_relu(&rn, &ref), LG_OK);
        lg_dev dev;
        ck_assert_int_eq(lg_dev_init(&dev, &rn, &ref), LG_OK);
        double D, yr, yg, scratch[4];
        lg_dev_stats st = {0};
        ck_assert_int_eq(lg_dev_bound_global(&dev, 0.0, 1.0, &D, NULL, &st), LG_OK);
        double x = 0.5 - LG_DEV_PEAK_S / lam;
        double obs = lg_observed(&rn, &ref, &x, &yr, &yg, scratch);
        ck_assert_msg(obs >= LG_DEV_PEAK_V / lam * (1 - 1e-6), "lambda %g: observed %.17g", lam, obs);
        ck_assert_msg(obs <= D, "lambda %g: observed %.17g > bound %.17g", lam, obs, D);
        ck_assert_msg(D <= LG_DEV_PEAK_V / lam * (1 + 1e-6), "lambda %g: bound %.17g not tight", lam, D);
        ck_assert_uint_eq(st.n_refined, 1);
        lg_dev_free(&dev);
        lg_net_free(&rn);
        lg_net_free(&ref);
    }
}
END_TEST

/* Sound pre-activation bounds of the ReLU net rn on the box [lo, hi]
 * (2 inputs) by interval arithmetic on S×S sub-boxes, united; widened by
 * 1e-9 so double rounding cannot matter. pre_lo/pre_hi[k] are [n_out_k]. */
static void lg_split_bounds(const lg_net *rn, const double *lo, const double *hi, int S, double **pre_lo,
                            double **pre_hi)
{
    double c[64], r[64], zc[64], zr[64];
    for (int k = 0; k < rn->n_layers; k++)
        for (int o = 0; o < rn->layers[k].n_out; o++) pre_lo[k][o] = INFINITY, pre_hi[k][o] = -INFINITY;
    for (int a = 0; a < S; a++)
        for (int b = 0; b < S; b++) {
            double l0 = lo[0] + (hi[0] - lo[0]) * a / S, h0 = lo[0] + (hi[0] - lo[0]) * (a + 1) / S;
            double l1 = lo[1] + (hi[1] - lo[1]) * b / S, h1 = lo[1] + (hi[1] - lo[1]) * (b + 1) / S;
            c[0] = 0.5 * (l0 + h0), r[0] = 0.5 * (h0 - l0) + 1e-12;
            c[1] = 0.5 * (l1 + h1), r[1] = 0.5 * (h1 - l1) + 1e-12;
            for (int k = 0; k < rn->n_layers; k++) {
                const lg_layer *L = &rn->layers[k];
                for (int o = 0; o < L->n_out; o++) {
                    zc[o] = L->b[o], zr[o] = 0.0;
                    for (int i = 0; i < L->lin.n_in; i++) {
                        zc[o] += L->lin.W[o * L->lin.n_in + i] * c[i];
                        zr[o] += fabs(L->lin.W[o * L->lin.n_in + i]) * r[i];
                    }
                    double l = zc[o] - zr[o], u = zc[o] + zr[o];
                    l -= 1e-9 * (1 + fabs(l)), u += 1e-9 * (1 + fabs(u));
                    pre_lo[k][o] = fmin(pre_lo[k][o], l), pre_hi[k][o] = fmax(pre_hi[k][o], u);
                    if (L->act == LG_ACT_RELU) l = fmax(l, 0.0), u = fmax(u, 0.0);
                    zc[o] = 0.5 * (l + u), zr[o] = 0.5 * (u - l);
                }
                memcpy(c, zc, sizeof c);
                memcpy(r, zr, sizeof r);
            }
        }
}

START_TEST(test_deviation_external_preact_bounds)
{
    const int dims[] = {2, 8, 8, 3};
    const double lambdas[] = {1, 5, 50, 160};
    lg_rng rg;
    lg_rng_init(&rg, 5, 5);
    int tighter = 0;
    for (int li = 0; li < 4; li++)
        for (int rep = 0; rep < 3; rep++) {
            double lam[3] = {lambdas[li], lambdas[li], lambdas[li]};
            lg_net ref, rn;
            lg_make_pair(&ref, &rn, 3, dims, LG_ACT_LGELU, lam, (uint64_t)(500 + 10 * li + rep), 1.0);
            double *pre_lo[3], *pre_hi[3];
            for (int k = 0; k < 3; k++) pre_lo[k] = malloc(8 * sizeof(double)), pre_hi[k] = malloc(8 * sizeof(double));
            double lo[2], hi[2];
            for (int i = 0; i < 2; i++) {
                lo[i] = 0.5 * lg_rng_uniform(&rg);
                hi[i] = lo[i] + 0.5;
            }
            lg_split_bounds(&rn, lo, hi, 12, pre_lo, pre_hi);
            lg_dev dev;
            ck_assert_int_eq(lg_dev_init(&dev, &rn, &ref), LG_OK);
            double Dplain, Dpre, x[2], yr[3], yg[3], scratch[16];
            ck_assert_int_eq(lg_dev_bound_boxes(&dev, lo, hi, 1, &Dplain, NULL, NULL), LG_OK);
            ck_assert_int_eq(lg_dev_bound_box_pre(&dev, lo, hi, pre_lo, pre_hi, &Dpre, NULL, NULL), LG_OK);
            ck_assert_msg(Dpre <= Dplain * (1 + 1e-9), "lambda %g: with bounds %.17g > without %.17g", lam[0], Dpre,
                          Dplain);
            tighter += Dpre < 0.9 * Dplain;
            for (int t = 0; t < 400; t++) {
                for (int i = 0; i < 2; i++) {
                    double v = t < 16 ? (double)((t >> i) & 1) : lg_rng_uniform(&rg);
                    x[i] = lo[i] + (hi[i] - lo[i]) * v;
                }
                double o = lg_observed(&rn, &ref, x, yr, yg, scratch);
                ck_assert_msg(o <= Dpre, "lambda %g: observed %.17g > bound %.17g", lam[0], o, Dpre);
            }
            /* a skipped layer is allowed; bounds for another box are refused */
            double *keep = pre_lo[1];
            pre_lo[1] = NULL;
            ck_assert_int_eq(lg_dev_bound_box_pre(&dev, lo, hi, pre_lo, pre_hi, &Dpre, NULL, NULL), LG_OK);
            pre_lo[1] = keep;
            double save_lo = pre_lo[0][0], save_hi = pre_hi[0][0];
            pre_lo[0][0] = pre_hi[0][0] = 1e6;
            ck_assert_int_eq(lg_dev_bound_box_pre(&dev, lo, hi, pre_lo, pre_hi, &Dpre, NULL, NULL), LG_ERR_ARG);
            pre_lo[0][0] = NAN;
            ck_assert_int_eq(lg_dev_bound_box_pre(&dev, lo, hi, pre_lo, pre_hi, &Dpre, NULL, NULL), LG_ERR_ARG);
            pre_lo[0][0] = save_lo, pre_hi[0][0] = save_hi;
            lg_dev_free(&dev);
            for (int k = 0; k < 3; k++) free(pre_lo[k]), free(pre_hi[k]);
            lg_net_free(&rn);
            lg_net_free(&ref);
        }
    ck_assert_msg(tighter > 0, "external bounds never tightened the bound");
}
END_TEST

START_TEST(test_deviation_crosses_zero)
{
    /* x ↦ z_a = x − 0.5 (lgelu) ↦ q = relu(−a − 0.1/λ) (relu in both) ↦ y = q.
     * On a tiny box around x0 = 0.5 − 0.7518/λ the ReLU net has a = 0 and
     * z_q = −0.1/λ < 0 (q inactive), but the λ-GELU net has a ≈ −0.16997/λ,
     * so its z_q ≈ +0.06997/λ: q switches on in one net only. A bound that
     * read q's relu slope off the ReLU net's interval alone (s = 0) would
     * claim ≈ 0; the z_G interval must decide. */
    const int dims[] = {1, 1, 1, 1};
    const double lambdas[] = {5, 50, 160};
    for (int li = 0; li < 3; li++) {
        double lam = lambdas[li];
        lg_net ref, rn;
        ck_assert_int_eq(lg_net_init(&ref, 3, dims, LG_ACT_LGELU), LG_OK);
        ref.layers[0].lin.W[0] = 1.0, ref.layers[0].b[0] = -0.5, ref.layers[0].lambda = lam;
        ref.layers[1].act = LG_ACT_RELU, ref.layers[1].lambda = 1.0;
        ref.layers[1].lin.W[0] = -1.0, ref.layers[1].b[0] = -0.1 / lam;
        ref.layers[2].lin.W[0] = 1.0;
        ck_assert_int_eq(lg_anneal_to_relu(&rn, &ref), LG_OK);
        lg_dev dev;
        ck_assert_int_eq(lg_dev_init(&dev, &rn, &ref), LG_OK);
        double x = 0.5 - LG_DEV_PEAK_S / lam, lo = x - 1e-4 / lam, hi = x + 1e-4 / lam, D, yr, yg, scratch[4];
        ck_assert_int_eq(lg_dev_bound_boxes(&dev, &lo, &hi, 1, &D, NULL, NULL), LG_OK);
        double obs = lg_observed(&rn, &ref, &x, &yr, &yg, scratch);
        double want = (LG_DEV_PEAK_V - 0.1) / lam;
        ck_assert_msg(fabs(obs - want) <= 1e-9 / lam, "lambda %g: observed %.17g, expected %.17g", lam, obs, want);
        ck_assert_msg(obs <= D && D <= want * 1.001, "lambda %g: bound %.17g, observed %.17g", lam, D, obs);
        lg_dev_free(&dev);
        lg_net_free(&rn);
        lg_net_free(&ref);
    }
}
END_TEST

START_TEST(test_deviation_bound_random_nets)
{
    static const int d0[] = {3, 5, 2}, d1[] = {4, 8, 8, 3}, d2[] = {6, 10, 10, 10, 4}, d3[] = {10, 4, 4, 4, 4, 2};
    static const struct {
        int n_layers;
        const int *dims;
    } shapes[] = {{2, d0}, {3, d1}, {4, d2}, {5, d3}};
    const double lambdas[] = {1, 5, 50, 160};
    const double epss[] = {0.0, 0.01, 0.1};
    const int n_centres = lg_test_quick() ? 4 : 12, n_samples = lg_test_quick() ? 8 : 24;
    lg_rng r;
    lg_rng_init(&r, 2024, 5);
    double obs_max = 0.0;
    lg_dev_stats stats = {0};
    for (int si = 0; si < 4; si++)
        for (int li = 0; li < 5; li++) { /* li == 4: plain GELU reference */
            int nl = shapes[si].n_layers, n = shapes[si].dims[0];
            double lam[8];
            for (int k = 0; k < nl; k++) lam[k] = li < 4 ? lambdas[li] * (1.0 + 0.5 * k) : 1.0;
            lg_net ref, rn;
            lg_make_pair(&ref, &rn, nl, shapes[si].dims, li < 4 ? LG_ACT_LGELU : LG_ACT_GELU, lam,
                         (uint64_t)(10 * si + li), 0.6);
            lg_dev dev;
            ck_assert_int_eq(lg_dev_init(&dev, &rn, &ref), LG_OK);
            double G, D, x0[10], x[10], yr[10], yg[10], scratch[40];
            ck_assert_int_eq(lg_dev_bound_global(&dev, 0.0, 1.0, &G, NULL, NULL), LG_OK);
            ck_assert(G > 0.0);
            for (int c = 0; c < n_centres; c++) {
                for (int i = 0; i < n; i++) x0[i] = lg_rng_uniform(&r);
                double o = lg_observed(&rn, &ref, x0, yr, yg, scratch);
                ck_assert_msg(o <= G, "shape %d lambda %d: observed %.17g > global %.17g", si, li, o, G);
                for (int ei = 0; ei < 3; ei++) {
                    double eps = epss[ei];
                    ck_assert_int_eq(lg_dev_bound_balls(&dev, x0, 1, eps, 0.0, 1.0, &D, NULL, &stats), LG_OK);
                    ck_assert_msg(D <= G, "shape %d lambda %d eps %g: ball %.17g > global %.17g", si, li, eps, D, G);
                    for (int t = 0; t < n_samples; t++) {
                        for (int i = 0; i < n; i++) {
                            /* corners half of the time: maxima sit at extreme points often */
                            double v = t % 2 ? (2 * lg_rng_uniform(&r) - 1) : (lg_rng_uniform(&r) < 0.5 ? -1 : 1);
                            x[i] = fmin(1.0, fmax(0.0, x0[i] + eps * v));
                        }
                        o = lg_observed(&rn, &ref, x, yr, yg, scratch);
                        if (o > obs_max) obs_max = o;
                        ck_assert_msg(o <= D, "shape %d lambda %d eps %g: observed %.17g > bound %.17g", si, li, eps, o, D);
                    }
                }
            }
            lg_dev_free(&dev);
            lg_net_free(&rn);
            lg_net_free(&ref);
        }
    ck_assert(obs_max > 0.0); /* the check was not vacuous */
    ck_assert(stats.n_refined > 0); /* and exercised the backward refinement */
}
END_TEST

START_TEST(test_deviation_scaling)
{
    /* When every substituted neuron's interval reaches the peak |x| = s_p/λ
     * (asserted through the stats), each gap is exactly 0.16997/λ, so doubling
     * every λ halves the global Δ up to the ~1e-12 rounding allowances: we
     * assert |2·Δ(2λ)/Δ(λ) − 1| ≤ 1e-6. Over ε-balls the bound can only
     * shrink when λ grows (tΦ(−2λt) ≤ tΦ(−λt) and narrower z_G intervals). */
    const int dims[] = {20, 16, 16, 5};
    const double base[] = {1, 5, 50, 80};
    lg_rng r;
    lg_rng_init(&r, 77, 1);
    for (int i = 0; i < 4; i++) {
        double lam1[3] = {base[i], 2 * base[i], base[i]}, lam2[3];
        for (int k = 0; k < 3; k++) lam2[k] = 2 * lam1[k];
        lg_net ref1, rn1, ref2, rn2;
        lg_make_pair(&ref1, &rn1, 3, dims, LG_ACT_LGELU, lam1, 300 + i, 1.0);
        lg_make_pair(&ref2, &rn2, 3, dims, LG_ACT_LGELU, lam2, 300 + i, 1.0);
        lg_dev d1, d2;
        ck_assert_int_eq(lg_dev_init(&d1, &rn1, &ref1), LG_OK);
        ck_assert_int_eq(lg_dev_init(&d2, &rn2, &ref2), LG_OK);
        lg_dev_stats s1 = {0}, s2 = {0};
        double G1, G2;
        ck_assert_int_eq(lg_dev_bound_global(&d1, 0.0, 1.0, &G1, NULL, &s1), LG_OK);
        ck_assert_int_eq(lg_dev_bound_global(&d2, 0.0, 1.0, &G2, NULL, &s2), LG_OK);
        ck_assert_uint_eq(s1.n_gap, 32);
        ck_assert_uint_eq(s1.n_peak, 32);
        ck_assert_uint_eq(s2.n_peak, 32);
        ck_assert_msg(fabs(2 * G2 / G1 - 1) <= 1e-6, "lambda %g: 2*D(2l)/D(l) = %.17g", base[i], 2 * G2 / G1);
        double x0[20], B1, B2;
        for (int t = 0; t < 10; t++) {
            for (int j = 0; j < 20; j++) x0[j] = lg_rng_uniform(&r);
            ck_assert_int_eq(lg_dev_bound_balls(&d1, x0, 1, 0.01, 0.0, 1.0, &B1, NULL, NULL), LG_OK);
            ck_assert_int_eq(lg_dev_bound_balls(&d2, x0, 1, 0.01, 0.0, 1.0, &B2, NULL, NULL), LG_OK);
            ck_assert_msg(B2 <= B1 * (1 + 1e-12), "lambda %g: ball bound grew %.17g -> %.17g", base[i], B1, B2);
        }
        lg_dev_free(&d1);
        lg_dev_free(&d2);
        lg_net_free(&rn1);
        lg_net_free(&ref1);
        lg_net_free(&rn2);
        lg_net_free(&ref2);
    }
}
END_TEST

/* On the first n test images: observed ‖f_R(x) − f_G(x)‖∞ ≤ Δ(point) ≤
 * Δ(0.01-ball) ≤ Δ(global) per image, for ref and its substitution. */
static void lg_check_fmnist(const lg_net *ref, const char *what, size_t n_images)
{
    lg_dataset ds;
    ck_assert_int_eq(lg_data_load(&ds, LG_DATA_DEFAULT_DIR, "test"), LG_OK);
    ck_assert_int_eq(ref->n_in, ds.dim);
    lg_dataset_truncate(&ds, n_images);
    lg_net rn;
    ck_assert_int_eq(lg_anneal_to_relu(&rn, ref), LG_OK);
    size_t n = ds.n, ni = (size_t)ds.dim, no = (size_t)lg_net_n_out(ref);
    double *X = malloc(n * ni * sizeof *X), *YR = malloc(n * no * sizeof *YR), *YG = malloc(n * no * sizeof *YG);
    double *Dp = malloc(n * sizeof *Dp), *Db = malloc(n * sizeof *Db);
    double *scratch = malloc(2 * (size_t)lg_net_max_width(ref) * sizeof *scratch), *y2 = malloc(2 * no * sizeof *y2);
    ck_assert(X && YR && YG && Dp && Db && scratch && y2);
    for (size_t i = 0; i < n * ni; i++) X[i] = ds.x[i];
    lg_dev dev;
    ck_assert_int_eq(lg_dev_init(&dev, &rn, ref), LG_OK);
    double G;
    ck_assert_int_eq(lg_dev_bound_global(&dev, 0.0, 1.0, &G, NULL, NULL), LG_OK);
    ck_assert_int_eq(lg_dev_bound_balls(&dev, X, n, 0.0, 0.0, 1.0, Dp, NULL, NULL), LG_OK);
    ck_assert_int_eq(lg_dev_bound_balls(&dev, X, n, 0.01, 0.0, 1.0, Db, NULL, NULL), LG_OK);
    ck_assert_int_eq(lg_net_forward_batch(&rn, X, YR, n), LG_OK);
    ck_assert_int_eq(lg_net_forward_batch(ref, X, YG, n), LG_OK);
    double obs_max = 0.0;
    for (size_t i = 0; i < n; i++) {
        double o = 0.0;
        for (size_t j = 0; j < no; j++) o = fmax(o, fabs(YR[i * no + j] - YG[i * no + j]));
        obs_max = fmax(obs_max, o);
        ck_assert_msg(o <= Dp[i], "%s, image %zu: observed %.17g > point bound %.17g", what, i, o, Dp[i]);
        ck_assert_msg(Dp[i] <= Db[i] && Db[i] <= G, "%s, image %zu: bounds not nested: %g %g %g", what, i, Dp[i],
                      Db[i], G);
        if (i % 50 == 0) {
            double o1 = lg_observed(&rn, ref, X + i * ni, y2, y2 + no, scratch);
            ck_assert_msg(o1 <= Dp[i], "%s, image %zu: observed (single) %.17g > bound %.17g", what, i, o1, Dp[i]);
        }
    }
    if (lg_anneal_count_smooth(ref) > 0) ck_assert_msg(obs_max > 0.0, "%s: no deviation observed at all", what);
    lg_dev_free(&dev);
    free(X);
    free(YR);
    free(YG);
    free(Dp);
    free(Db);
    free(scratch);
    free(y2);
    lg_net_free(&rn);
    lg_dataset_free(&ds);
}

START_TEST(test_deviation_fmnist)
{
    ck_assert_msg(lg_test_have_data(), "Fashion-MNIST not installed at %s", LG_DATA_DEFAULT_DIR);
    /* random-weight 784-64-10 lgelu net, λ = 160, Fashion-MNIST mean/std
     * normalisation shared by both nets */
    const int dims[] = {784, 64, 10};
    const double lam[] = {160};
    lg_net ref, rn;
    lg_make_pair(&ref, &rn, 2, dims, LG_ACT_LGELU, lam, 9, 0.05);
    ref.in_sub = malloc(784 * sizeof(double));
    ref.in_div = malloc(784 * sizeof(double));
    for (int i = 0; i < 784; i++) ref.in_sub[i] = 0.2860, ref.in_div[i] = 0.3530;
    lg_check_fmnist(&ref, "random 784-64-10, lambda 160", lg_test_quick() ? 200 : 1000);
    lg_net_free(&rn);
    lg_net_free(&ref);
}
END_TEST

START_TEST(test_deviation_annealed_training_run)
{
    /* The user's check: a short real annealing run (λ learned for the first
     * quarter of the steps, then linear to λ_target ≈ 159.6), substitution,
     * and the ReLU net's outputs within the certified Δ of the annealed net on
     * every test input (first 2000 under LG_TEST_QUICK). */
    ck_assert_msg(lg_test_have_data(), "Fashion-MNIST not installed at %s", LG_DATA_DEFAULT_DIR);
    lg_dataset tr;
    ck_assert_int_eq(lg_data_load(&tr, LG_DATA_DEFAULT_DIR, "train"), LG_OK);
    lg_dataset_truncate(&tr, lg_test_quick() ? 2000 : 6000);
    const int dims[3] = {784, 64, 10};
    lg_net net;
    ck_assert_int_eq(lg_net_init(&net, 2, dims, LG_ACT_LGELU), LG_OK);
    lg_model_init_weights(&net, 3);
    lg_anneal_schedule sched;
    double target = lg_anneal_lambda_target(LG_ANNEAL_DEFAULT_TOLERANCE);
    ck_assert_int_eq(lg_anneal_schedule_init(&sched, 0.25, target, net.n_layers), LG_OK);
    lg_train_opts o = lg_train_opts_default();
    o.epochs = 2;
    o.hook = lg_anneal_hook;
    o.hook_ctx = &sched;
    ck_assert_int_eq(lg_train_run(&net, &tr, NULL, NULL, &o, NULL), LG_OK);
    ck_assert_double_eq(net.layers[0].lambda, target);
    lg_check_fmnist(&net, "annealed 784-64-10", lg_test_quick() ? 2000 : 10000);
    lg_net_free(&net);
    lg_dataset_free(&tr);
}
END_TEST

START_TEST(test_deviation_fmnist_trained)
{
    /* A trained λ-GELU (or GELU) network, if one is named in
     * LG_TEST_LGELU_NET (the coordinator sets it once training has landed). */
    const char *path = getenv("LG_TEST_LGELU_NET");
    if (!path || !*path || !lg_test_have_data()) return;
    lg_net ref;
    ck_assert_msg(lg_net_load(&ref, path) == LG_OK, "%s: %s", path, lg_errmsg());
    lg_check_fmnist(&ref, path, lg_test_quick() ? 200 : 1000);
    lg_net_free(&ref);
}
END_TEST


/* One `lgelu bound ... --json` run; returns per_input_median and sets *obs. */
static double lg_bound_median_json(const char *args, const char *out, double *obs)
{
    ck_assert_int_eq(lg_test_cli(args, out), 0);
    FILE *f = fopen(out, "r");
    ck_assert_ptr_nonnull(f);
    char line[1024] = "";
    ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
    fclose(f);
    const char *m = strstr(line, "\"per_input_median\": "), *o = strstr(line, "\"observed_max\": ");
    ck_assert_msg(m && o, "JSON: %s", line);
    *obs = atof(o + strlen("\"observed_max\": "));
    return atof(m + strlen("\"per_input_median\": "));
}

START_TEST(test_deviation_cli_symbolic)
{
    /* --symbolic bounds are per input never looser than interval ones and
     * still above every observed deviation (the command checks that too) */
    ck_assert_msg(lg_test_have_data(), "Fashion-MNIST not installed at %s", LG_DATA_DEFAULT_DIR);
    const int dims[] = {784, 24, 24, 10};
    const double lam[] = {30, 30};
    lg_net ref, rn;
    lg_make_pair(&ref, &rn, 3, dims, LG_ACT_LGELU, lam, 6, 0.05);
    char pr[256], pg[256], po[256], args[1024];
    snprintf(pr, sizeof pr, "%s", lg_test_tmpfile(".lgnet"));
    snprintf(pg, sizeof pg, "%s", lg_test_tmpfile(".lgnet"));
    snprintf(po, sizeof po, "%s", lg_test_tmpfile(".json"));
    ck_assert_int_eq(lg_netfile_write(&rn, pr), LG_OK);
    ck_assert_int_eq(lg_netfile_write(&ref, pg), LG_OK);
    double obs_i, obs_s;
    snprintf(args, sizeof args, "bound '%s' --ref '%s' --n 30 --eps 0.02 --json", pr, pg);
    double med_i = lg_bound_median_json(args, po, &obs_i);
    snprintf(args, sizeof args, "bound '%s' --ref '%s' --n 30 --eps 0.02 --json --symbolic", pr, pg);
    double med_s = lg_bound_median_json(args, po, &obs_s);
    ck_assert_double_eq(obs_i, obs_s);
    ck_assert_msg(med_s <= med_i, "symbolic median %g above the interval one %g", med_s, med_i);
    remove(pr), remove(pg), remove(po);
    lg_net_free(&ref);
    lg_net_free(&rn);
}
END_TEST

START_TEST(test_deviation_cli)
{
    ck_assert_msg(lg_test_have_data(), "Fashion-MNIST not installed at %s", LG_DATA_DEFAULT_DIR);
    const int dims[] = {784, 16, 10};
    const double lam[] = {20};
    lg_net ref, rn;
    lg_make_pair(&ref, &rn, 2, dims, LG_ACT_LGELU, lam, 4, 0.05);
    char pr[256], pg[256], po[256], args[1024];
    snprintf(pr, sizeof pr, "%s", lg_test_tmpfile(".lgnet"));
    snprintf(pg, sizeof pg, "%s", lg_test_tmpfile(".lgnet"));
    snprintf(po, sizeof po, "%s", lg_test_tmpfile(".json"));
    ck_assert_int_eq(lg_netfile_write(&rn, pr), LG_OK);
    ck_assert_int_eq(lg_netfile_write(&ref, pg), LG_OK);
    char pc[256];
    snprintf(pc, sizeof pc, "%s", lg_test_tmpfile(".csv"));
    snprintf(args, sizeof args, "bound '%s' --ref '%s' --n 40 --eps 0.02 --json --csv '%s'", pr, pg, pc);
    ck_assert_int_eq(lg_test_cli(args, po), 0);
    FILE *f = fopen(po, "r");
    ck_assert_ptr_nonnull(f);
    char line[1024] = "";
    ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
    int extra = fgetc(f);
    fclose(f);
    ck_assert_int_eq(extra, EOF); /* one line */
    double G, med, mx, obs;
    unsigned long changes, n;
    int got = sscanf(line,
                     "{\"global\": %lf, \"per_input_median\": %lf, \"per_input_max\": %lf, \"observed_max\": %lf, "
                     "\"class_changes\": %lu, \"n\": %lu}",
                     &G, &med, &mx, &obs, &changes, &n);
    ck_assert_msg(got == 6, "unexpected JSON: %s", line);
    ck_assert_uint_eq(n, 40);
    ck_assert_msg(0 < med && med <= mx && mx <= G && obs <= mx && changes <= n, "inconsistent: %s", line);
    /* the CSV has one row per input; its bounds hold and their max is the
     * JSON per_input_max */
    f = fopen(pc, "r");
    ck_assert_ptr_nonnull(f);
    ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
    ck_assert_str_eq(line, "index,label,pred_ref,pred_relu,bound,observed,ref_margin\n");
    unsigned long idx, rows = 0;
    int label, pref, prelu;
    double b, ob, mg, bmax = 0.0;
    while (fgets(line, sizeof line, f)) {
        ck_assert_int_eq(sscanf(line, "%lu,%d,%d,%d,%lf,%lf,%lf", &idx, &label, &pref, &prelu, &b, &ob, &mg), 7);
        ck_assert_uint_eq(idx, rows);
        ck_assert_msg(ob <= b && mg >= 0.0 && label >= 0 && label < 10, "row: %s", line);
        bmax = fmax(bmax, b);
        rows++;
    }
    fclose(f);
    ck_assert_uint_eq(rows, 40);
    ck_assert_double_eq(bmax, mx);
    remove(pc);
    /* the library gives the same global bound */
    lg_dev dev;
    double G2;
    ck_assert_int_eq(lg_dev_init(&dev, &rn, &ref), LG_OK);
    ck_assert_int_eq(lg_dev_bound_global(&dev, 0.0, 1.0, &G2, NULL, NULL), LG_OK);
    ck_assert_double_eq_tol(G, G2, 1e-12 * G2);
    lg_dev_free(&dev);
    /* refusals, all usage or value errors (2): swapped nets (a network of the wrong kind),
     * missing --ref, bad eps, unknown option */
    snprintf(args, sizeof args, "bound '%s' --ref '%s' --n 5", pg, pr);
    ck_assert_int_eq(lg_test_cli(args, NULL), 2);
    snprintf(args, sizeof args, "bound '%s' --n 5", pr);
    ck_assert_int_eq(lg_test_cli(args, NULL), 2);
    snprintf(args, sizeof args, "bound '%s' --ref '%s' --eps -1", pr, pg);
    ck_assert_int_eq(lg_test_cli(args, NULL), 2);
    snprintf(args, sizeof args, "bound '%s' --ref '%s' --frobnicate", pr, pg);
    ck_assert_int_eq(lg_test_cli(args, NULL), 2);
    ck_assert_int_eq(lg_test_cli("bound --help", NULL), 0);
    remove(pr);
    remove(pg);
    remove(po);
    lg_net_free(&rn);
    lg_net_free(&ref);
}
END_TEST

START_TEST(test_deviation_refuses_mismatch)
{
    const int dims[] = {5, 6, 4, 3}, dims_b[] = {5, 7, 4, 3};
    const double lam[] = {50, 50, 50};
    lg_net ref, rn, other, tmp;
    lg_dev dev;
    lg_make_pair(&ref, &rn, 3, dims, LG_ACT_LGELU, lam, 1, 0.5);
    ck_assert_int_eq(lg_dev_check_pair(&rn, &ref), LG_OK);
    /* one weight one ulp away */
    ck_assert_int_eq(lg_net_copy(&other, &rn), LG_OK);
    other.params[17] = nextafter(other.params[17], 1e300);
    ck_assert_int_eq(lg_dev_init(&dev, &other, &ref), LG_ERR_ARG);
    ck_assert_ptr_null(dev.buf);
    lg_dev_free(&dev); /* no-op on the zeroed object */
    ck_assert_msg(strstr(lg_errmsg(), "parameter 17") != NULL, "%s", lg_errmsg());
    lg_net_free(&other);
    /* swapped arguments: the "ReLU net" still has lgelu */
    ck_assert_int_eq(lg_dev_check_pair(&ref, &rn), LG_ERR_ARG);
    /* relu where the reference has identity, identity where it has lgelu */
    ck_assert_int_eq(lg_net_copy(&other, &rn), LG_OK);
    other.layers[2].act = LG_ACT_RELU;
    ck_assert_int_eq(lg_dev_check_pair(&other, &ref), LG_ERR_ARG);
    other.layers[2].act = LG_ACT_IDENTITY;
    other.layers[0].act = LG_ACT_IDENTITY;
    ck_assert_int_eq(lg_dev_check_pair(&other, &ref), LG_ERR_ARG);
    lg_net_free(&other);
    /* other shapes, other depth */
    lg_make_pair(&other, &tmp, 3, dims_b, LG_ACT_LGELU, lam, 1, 0.5);
    ck_assert_int_eq(lg_dev_check_pair(&tmp, &ref), LG_ERR_ARG);
    lg_net_free(&other);
    lg_net_free(&tmp);
    lg_make_pair(&other, &tmp, 2, dims, LG_ACT_LGELU, lam, 1, 0.5);
    ck_assert_int_eq(lg_dev_check_pair(&tmp, &ref), LG_ERR_ARG);
    lg_net_free(&other);
    lg_net_free(&tmp);
    /* normalisation on one side only */
    ck_assert_int_eq(lg_net_copy(&other, &rn), LG_OK);
    other.in_sub = calloc(5, sizeof(double));
    ck_assert_int_eq(lg_dev_check_pair(&other, &ref), LG_ERR_ARG);
    lg_net_free(&other);
    /* bad boxes and radii */
    ck_assert_int_eq(lg_dev_init(&dev, &rn, &ref), LG_OK);
    double lo[5] = {0, 0, 0, 0, 0}, hi[5] = {1, 1, -1, 1, 1}, D;
    ck_assert_int_eq(lg_dev_bound_boxes(&dev, lo, hi, 1, &D, NULL, NULL), LG_ERR_ARG);
    hi[2] = NAN;
    ck_assert_int_eq(lg_dev_bound_boxes(&dev, lo, hi, 1, &D, NULL, NULL), LG_ERR_ARG);
    ck_assert_int_eq(lg_dev_bound_balls(&dev, lo, 1, -0.1, 0.0, 1.0, &D, NULL, NULL), LG_ERR_ARG);
    ck_assert_int_eq(lg_dev_bound_balls(&dev, lo, 1, NAN, 0.0, 1.0, &D, NULL, NULL), LG_ERR_ARG);
    ck_assert_int_eq(lg_dev_bound_global(&dev, 1.0, 0.0, &D, NULL, NULL), LG_ERR_ARG);
    lg_dev_free(&dev);
    lg_net_free(&rn);
    lg_net_free(&ref);
}
END_TEST

START_TEST(test_deviation_overflow_is_infinite)
{
    /* weights 1e200 overflow the second layer: the bound must be +∞, not
     * NaN or a silently small number */
    const int dims[] = {2, 2, 2, 1};
    const double lam[] = {5, 5};
    lg_net ref, rn;
    lg_make_pair(&ref, &rn, 3, dims, LG_ACT_LGELU, lam, 8, 1.0);
    for (size_t i = 0; i < ref.n_params; i++) ref.params[i] = rn.params[i] = (i % 2 ? -1e200 : 1e200);
    lg_dev dev;
    ck_assert_int_eq(lg_dev_init(&dev, &rn, &ref), LG_OK);
    double D, e;
    ck_assert_int_eq(lg_dev_bound_global(&dev, 0.0, 1.0, &D, &e, NULL), LG_OK);
    ck_assert_msg(isinf(D) && D > 0 && isinf(e), "bound %g, per output %g", D, e);
    lg_dev_free(&dev);
    lg_net_free(&rn);
    lg_net_free(&ref);
}
END_TEST

/* ref: rn with every relu layer made act (λ, β, slope from the layer index). */
static void lg_smooth_copy(lg_net *ref, const lg_net *rn, lg_act act, int salt)
{
    static const double lams[] = {2.0, 10.0, 60.0};
    ck_assert_int_eq(lg_net_copy(ref, rn), LG_OK);
    for (int k = 0; k < ref->n_layers; k++) {
        lg_layer *L = &ref->layers[k];
        if (L->act != LG_ACT_RELU) continue;
        L->act = act;
        L->lambda = act == LG_ACT_GELU ? 1.0 : act == LG_ACT_PRELU ? 0.05 * ((k + salt) % 4) : lams[(k + salt) % 3];
        L->s = act == LG_ACT_PRELU ? L->lambda : 0.0;
    }
    ck_assert_int_eq(lg_net_validate(ref), LG_OK);
}

/* On random DAGs (residual sums, concats, slices, convs, skips to the output; every kind of
 * substituted activation; with and without an input normalisation): the difference network's
 * bound, the propagation with both nets' bounds and the combined bound of `lgelu check` are ≥
 * every sampled |ŷ_relu − ŷ_ref| of the double forward passes, and the difference network's
 * bounds hold every computed pre-activation of both nets. */
START_TEST(test_deviation_devnet_dag_sound)
{
    lg_rng r;
    lg_rng_init(&r, 4242u, 5);
    static const lg_act acts[] = {LG_ACT_LGELU, LG_ACT_GELU, LG_ACT_SWISH, LG_ACT_PRELU};
    const int n_dags = lg_test_quick() ? 12 : 48;
    int residual = 0, valid = 0, valid_iv = 0, valid_x = 0, exact_tight = 0, tighter = 0;
    double pgd_worst = 0.0;
    for (int it = 0; it < n_dags; it++) {
        lg_test_dag_opts o = {.max_nodes = 5, .max_width = 4, .conv = it % 4 == 0, .act = LG_ACT_RELU};
        lg_test_inst in;
        lg_status gst = lg_test_inst_random_dag(&in, &r, &o);
        ck_assert_msg(gst == LG_OK, "DAG %d: %s", it, lg_errmsg());
        const lg_net *rn = &in.net;
        lg_net ref;
        lg_smooth_copy(&ref, rn, acts[it % 4], it);
        for (int k = 0; k < rn->n_layers; k++) residual += rn->layers[k].n_terms > 0 && rn->layers[k].act == LG_ACT_RELU;
        const int ni = rn->n_in, no = lg_net_n_out(rn);
        /* a point (it % 3 == 0) or the instance's box */
        double lo[64], hi[64];
        for (int i = 0; i < ni; i++) {
            lo[i] = in.lo[i];
            hi[i] = it % 3 == 0 ? in.lo[i] : in.hi[i];
        }
        lg_dev dev;
        lg_devnet v;
        lg_bounds b;
        ck_assert_int_eq(lg_dev_init(&dev, rn, &ref), LG_OK);
        ck_assert_int_eq(lg_devnet_init(&v, rn, &ref), LG_OK);
        ck_assert_int_eq(lg_bounds_init(&b, rn), LG_OK);
        double D, Dold, ev[8], ep[8], Dp = INFINITY;
        ck_assert_int_eq(lg_transfer_box_delta(&dev, NULL, rn, &b, lo, hi, &Dold), LG_OK);
        ck_assert_int_eq(lg_transfer_box_delta(&dev, &v, rn, &b, lo, hi, &D), LG_OK);
        /* the propagation then reads the difference network's ReLU bounds, which also hold the
         * rounding noise: equal up to that */
        ck_assert_msg(D <= Dold * (1 + 1e-9), "DAG %d: combined %.17g above the propagation alone %.17g", it, D, Dold);
        tighter += D < Dold;
        ck_assert_int_eq(lg_devnet_bound(&v, lo, hi, NULL, ev), LG_OK);
        for (int j = 0; j < no; j++) ep[j] = INFINITY;
        if (v.valid) {
            valid++;
            lg_dev_ext x = {lg_devnet_pre_lo(&v, 0), lg_devnet_pre_hi(&v, 0), lg_devnet_pre_lo(&v, 1),
                            lg_devnet_pre_hi(&v, 1), 1, NULL, NULL};
            ck_assert_int_eq(lg_dev_bound_box_pair(&dev, lo, hi, &x, &Dp, ep, NULL), LG_OK);
        }
        /* the interval route of a pair too large for CROWN (v.off): its own bounds, the pair
         * propagation on them and the combined bound, checked against the same samples */
        lg_devnet vi;
        double Di, evi[8], epi[8];
        ck_assert_int_eq(lg_devnet_init(&vi, rn, &ref), LG_OK);
        vi.off = vi.off0 = 1;
        ck_assert_int_eq(lg_transfer_box_delta(&dev, &vi, rn, &b, lo, hi, &Di), LG_OK);
        ck_assert_int_eq(lg_devnet_bound(&vi, lo, hi, NULL, evi), LG_OK);
        ck_assert_int_ne(vi.valid, 1);
        for (int j = 0; j < no; j++) epi[j] = INFINITY;
        if (vi.valid) {
            valid_iv++;
            lg_dev_ext x = {lg_devnet_pre_lo(&vi, 0), lg_devnet_pre_hi(&vi, 0), lg_devnet_pre_lo(&vi, 1),
                            lg_devnet_pre_hi(&vi, 1), 1, NULL, NULL};
            ck_assert_int_eq(lg_dev_bound_box_pair(&dev, lo, hi, &x, &Dp, epi, NULL), LG_OK);
        }
        /* the exact route (CROWN on the difference network over x alone, the rounding of both
         * passes as a forward envelope): its bound, the pair propagation on its bounds and the
         * combined bound, checked against the same samples */
        lg_devnet vx;
        double Dx, evx[8], epx[8];
        ck_assert_int_eq(lg_devnet_init(&vx, rn, &ref), LG_OK);
        ck_assert_int_eq(lg_devnet_use_exact(&vx), LG_OK);
        ck_assert_int_eq(lg_transfer_box_delta(&dev, &vx, rn, &b, lo, hi, &Dx), LG_OK);
        ck_assert_int_eq(lg_devnet_bound(&vx, lo, hi, NULL, evx), LG_OK);
        for (int j = 0; j < no; j++) epx[j] = INFINITY;
        if (vx.valid) {
            ck_assert_int_eq(vx.exact, 1);
            valid_x++;
            lg_dev_ext x = {lg_devnet_pre_lo(&vx, 0), lg_devnet_pre_hi(&vx, 0), lg_devnet_pre_lo(&vx, 1),
                            lg_devnet_pre_hi(&vx, 1), 1, NULL, NULL};
            ck_assert_int_eq(lg_dev_bound_box_pair(&dev, lo, hi, &x, &Dp, epx, NULL), LG_OK);
            for (int j = 0; j < no; j++) exact_tight += evx[j] <= evi[j];
        }
        size_t len = lg_net_nodes_len(rn);
        double x[64], yr[8], yg[8], scr[256], *vals = malloc(2 * len * sizeof *vals), *pre = vals + len;
        ck_assert_ptr_nonnull(vals);
        for (int s = 0; s < 400; s++) {
            for (int i = 0; i < ni; i++) {
                double u = s < 32 ? (double)((s >> (i % 5)) & 1) : lg_rng_uniform(&r);
                x[i] = lo[i] + (hi[i] - lo[i]) * u;
            }
            lg_net_forward(rn, x, yr, scr);
            lg_net_forward(&ref, x, yg, scr);
            for (int j = 0; j < no; j++) {
                double d = fabs(yr[j] - yg[j]);
                ck_assert_msg(d <= D && d <= ev[j] && d <= ep[j],
                              "DAG %d output %d: observed %.17g > bound (combined %.17g, devnet %.17g, pair %.17g)", it,
                              j, d, D, ev[j], ep[j]);
                ck_assert_msg(d <= Dx && d <= evx[j] && d <= epx[j],
                              "DAG %d output %d: observed %.17g > exact route (combined %.17g, devnet %.17g, pair %.17g)",
                              it, j, d, Dx, evx[j], epx[j]);
                ck_assert_msg(d <= Di && d <= evi[j] && d <= epi[j],
                              "DAG %d output %d: observed %.17g > interval route (combined %.17g, devnet %.17g, pair "
                              "%.17g)",
                              it, j, d, Di, evi[j], epi[j]);
            }
            for (int w = 0; w < 2 && vx.valid; w++) {
                const lg_net *net = w ? &ref : rn;
                lg_net_forward_nodes(net, x, vals, pre);
                for (int k = 0; k < net->n_layers; k++)
                    for (int i = 0; i < net->layers[k].n_out; i++) {
                        double z = pre[lg_net_node_offset(net, k) + (size_t)i];
                        ck_assert_msg(lg_devnet_pre_lo(&vx, w)[k][i] <= z && z <= lg_devnet_pre_hi(&vx, w)[k][i],
                                      "DAG %d net %d layer %d neuron %d: computed %.17g outside the exact route's "
                                      "[%.17g, %.17g]",
                                      it, w, k, i, z, lg_devnet_pre_lo(&vx, w)[k][i], lg_devnet_pre_hi(&vx, w)[k][i]);
                    }
            }
            for (int w = 0; w < 2 && vi.valid; w++) {
                const lg_net *net = w ? &ref : rn;
                lg_net_forward_nodes(net, x, vals, pre);
                for (int k = 0; k < net->n_layers; k++)
                    for (int i = 0; i < net->layers[k].n_out; i++) {
                        double z = pre[lg_net_node_offset(net, k) + (size_t)i];
                        ck_assert_msg(lg_devnet_pre_lo(&vi, w)[k][i] <= z && z <= lg_devnet_pre_hi(&vi, w)[k][i],
                                      "DAG %d net %d layer %d neuron %d: computed %.17g outside the interval route's "
                                      "[%.17g, %.17g]",
                                      it, w, k, i, z, lg_devnet_pre_lo(&vi, w)[k][i], lg_devnet_pre_hi(&vi, w)[k][i]);
                    }
            }
            if (!v.valid) continue;
            for (int w = 0; w < 2; w++) {
                const lg_net *net = w ? &ref : rn;
                lg_net_forward_nodes(net, x, vals, pre);
                for (int k = 0; k < net->n_layers; k++)
                    for (int i = 0; i < net->layers[k].n_out; i++) {
                        double z = pre[lg_net_node_offset(net, k) + (size_t)i];
                        ck_assert_msg(lg_devnet_pre_lo(&v, w)[k][i] <= z && z <= lg_devnet_pre_hi(&v, w)[k][i],
                                      "DAG %d net %d layer %d neuron %d: computed %.17g outside [%.17g, %.17g]", it, w,
                                      k, i, z, lg_devnet_pre_lo(&v, w)[k][i], lg_devnet_pre_hi(&v, w)[k][i]);
                    }
            }
        }
        /* PGD on each output's deviation from the box centre: never above any bound */
        for (int j = 0; j < no; j++) {
            for (int i = 0; i < ni; i++) x[i] = 0.5 * (lo[i] + hi[i]);
            double d = lg_test_pgd_deviation(rn, &ref, j, lo, hi, x, 40, 0.1, yr, yg, scr);
            ck_assert_msg(d <= Dx && d <= evx[j] && d <= epx[j], "DAG %d output %d: PGD deviation %.17g > exact route "
                          "(combined %.17g, devnet %.17g, pair %.17g)", it, j, d, Dx, evx[j], epx[j]);
            ck_assert_msg(d <= D && d <= ev[j] && d <= ep[j] && d <= Di && d <= evi[j] && d <= epi[j],
                          "DAG %d output %d: PGD deviation %.17g > a bound (combined %.17g / %.17g, devnet %.17g / "
                          "%.17g, pair %.17g / %.17g)",
                          it, j, d, D, Di, ev[j], evi[j], ep[j], epi[j]);
            pgd_worst = fmax(pgd_worst, d / fmin(fmin(D, Di), fmin(ev[j], evi[j])));
        }
        free(vals);
        lg_devnet_free(&vx);
        lg_devnet_free(&vi);
        lg_bounds_free(&b);
        lg_devnet_free(&v);
        lg_dev_free(&dev);
        lg_net_free(&ref);
        lg_test_inst_free(&in);
    }
    fprintf(stderr,
            "deviation devnet: %d DAGs (%d residual relu layers), %d proved (%d by the interval route), %d tighter "
            "than the propagation; PGD deviation / bound at most %.3f; exact route proved %d, at or below the "
            "interval route on %d outputs\n",
            n_dags, residual, valid, valid_iv, tighter, pgd_worst, valid_x, exact_tight);
    ck_assert_int_gt(residual, 0);
    ck_assert_int_eq(valid_x, n_dags); /* the exact route's magnitude check holds on every one too */
    ck_assert_int_eq(valid, n_dags); /* the magnitude check holds on every one of these */
    ck_assert_int_gt(tighter, 0);
}
END_TEST

/* A deep residual λ-GELU net (12 hidden layers in 6 blocks, λ = 60): at a point the certified
 * deviation is within a factor 2 of the observed one (the propagation alone is far above it,
 * each block adding its branch's |W| to the identity's), and on a small ball it is ≥ every
 * sampled deviation and never above the propagation. */
START_TEST(test_deviation_deep_residual_tight)
{
    lg_net ref, rn;
    lg_rng r;
    lg_rng_init(&r, 77u, 9);
    ck_assert_int_eq(lg_arch_net(&ref, "6,8,r8x6,3", LG_ACT_LGELU), LG_OK);
    lg_test_randomize(&ref, &r, 0.3);
    for (int k = 0; k + 1 < ref.n_layers; k++) ref.layers[k].lambda = 60.0;
    ck_assert_int_eq(lg_anneal_to_relu(&rn, &ref), LG_OK);
    lg_dev dev;
    lg_devnet v;
    lg_bounds b;
    ck_assert_int_eq(lg_dev_init(&dev, &rn, &ref), LG_OK);
    ck_assert_int_eq(lg_devnet_init(&v, &rn, &ref), LG_OK);
    ck_assert_int_eq(lg_bounds_init(&b, &rn), LG_OK);
    lg_devnet vi;
    ck_assert_int_eq(lg_devnet_init(&vi, &rn, &ref), LG_OK);
    double worst = 0.0, worst_old = 0.0, worst_iv = 0.0, x[6], lo[6], hi[6], yr[3], yg[3], scr[64];
    for (int p = 0; p < 20; p++) {
        for (int i = 0; i < 6; i++) x[i] = lg_rng_uniform(&r);
        double obs = lg_observed(&rn, &ref, x, yr, yg, scr), D, Dold;
        ck_assert_int_eq(lg_transfer_box_delta(&dev, NULL, &rn, &b, x, x, &Dold), LG_OK);
        ck_assert_int_eq(lg_transfer_box_delta(&dev, &v, &rn, &b, x, x, &D), LG_OK);
        ck_assert_msg(obs <= D && D <= Dold * (1 + 1e-9), "point %d: observed %.17g, bound %.17g, propagation %.17g", p, obs, D, Dold);
        ck_assert_msg(obs > 0, "point %d: the nets agree exactly", p);
        ck_assert_msg(D <= 2.0 * obs, "point %d: bound %.17g is not within 2x of the observed %.17g", p, D, obs);
        worst = fmax(worst, D / obs);
        /* the interval route (a pair too large for CROWN) at the same point: as close */
        double Di;
        vi.off = 1;
        ck_assert_int_eq(lg_transfer_box_delta(&dev, &vi, &rn, &b, x, x, &Di), LG_OK);
        ck_assert_msg(obs <= Di && Di <= Dold * (1 + 1e-9) && Di <= 2.0 * obs,
                      "point %d: observed %.17g, interval route %.17g, propagation %.17g", p, obs, Di, Dold);
        worst_iv = fmax(worst_iv, Di / obs);
        worst_old = fmax(worst_old, Dold / obs);
        /* a ball of radius 0.02 around x */
        for (int i = 0; i < 6; i++) lo[i] = x[i] - 0.02, hi[i] = x[i] + 0.02;
        ck_assert_int_eq(lg_transfer_box_delta(&dev, NULL, &rn, &b, lo, hi, &Dold), LG_OK);
        ck_assert_int_eq(lg_transfer_box_delta(&dev, &v, &rn, &b, lo, hi, &D), LG_OK);
        ck_assert_msg(D <= Dold * (1 + 1e-9), "ball %d: bound %.17g above the propagation %.17g", p, D, Dold);
        for (int s = 0; s < 200; s++) {
            double xs[6];
            for (int i = 0; i < 6; i++) xs[i] = lo[i] + (hi[i] - lo[i]) * lg_rng_uniform(&r);
            double o = lg_observed(&rn, &ref, xs, yr, yg, scr);
            ck_assert_msg(o <= D, "ball %d: observed %.17g > bound %.17g", p, o, D);
        }
    }
    fprintf(stderr,
            "deviation deep residual: bound/observed at points: max %.3f (interval route %.3f, propagation alone "
            "%.3g)\n",
            worst, worst_iv, worst_old);
    lg_devnet_free(&vi);
    lg_bounds_free(&b);
    lg_devnet_free(&v);
    lg_dev_free(&dev);
    lg_net_free(&rn);
    lg_net_free(&ref);
}
END_TEST

Suite *suite_deviation(void)
{
    Suite *s = suite_create("deviation");
    TCase *tc = tcase_create("core");
    lg_tcase_timeout(tc, 120);
    tcase_add_test(tc, test_deviation_gap_constants);
    tcase_add_test(tc, test_deviation_gap_bruteforce);
    tcase_add_test(tc, test_deviation_single_neuron_tight);
    tcase_add_test(tc, test_deviation_unstable_slope);
    tcase_add_test(tc, test_deviation_crosses_zero);
    tcase_add_test(tc, test_deviation_bound_random_nets);
    tcase_add_test(tc, test_deviation_external_preact_bounds);
    tcase_add_test(tc, test_deviation_scaling);
    tcase_add_test(tc, test_deviation_fmnist);
    tcase_add_test(tc, test_deviation_annealed_training_run);
    tcase_add_test(tc, test_deviation_cli_symbolic);
    tcase_add_test(tc, test_deviation_fmnist_trained);
    tcase_add_test(tc, test_deviation_cli);
    tcase_add_test(tc, test_deviation_devnet_dag_sound);
    tcase_add_test(tc, test_deviation_deep_residual_tight);
    suite_add_tcase(s, tc);
    TCase *tl = tcase_create("limits");
    lg_tcase_timeout(tl, 120);
    tcase_add_test(tl, test_deviation_refuses_mismatch);
    tcase_add_test(tl, test_deviation_overflow_is_infinite);
    suite_add_tcase(s, tl);
    return s;
}
