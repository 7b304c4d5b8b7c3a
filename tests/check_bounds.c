/* check_bounds.c — interval, symbolic and LP bounds: soundness against
 * sampled activations, tightness ordering, the safety margin, objectives. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "encode/lp_relax.h"
#include "verify/bounds.h"


/* Pre-activations z_k of every layer for input x, written layer after layer
 * into z (sum of widths). */
static void lg_tb_preact(const lg_net *net, const double *x, double *z)
{
    double a[64], t[64];
    for (int i = 0; i < net->n_in; i++) {
        double v = x[i];
        if (net->in_sub) v -= net->in_sub[i];
        if (net->in_div) v /= net->in_div[i];
        a[i] = v;
    }
    for (int k = 0; k < net->n_layers; k++) {
        const lg_layer *L = &net->layers[k];
        for (int o = 0; o < L->n_out; o++) {
            double s = L->b[o];
            for (int i = 0; i < L->lin.n_in; i++) s += L->lin.W[(size_t)o * (size_t)L->lin.n_in + (size_t)i] * a[i];
            *z++ = s;
            t[o] = L->act == LG_ACT_RELU ? fmax(s, 0.0) : s;
        }
        memcpy(a, t, (size_t)L->n_out * sizeof *a);
    }
}

static void lg_tb_random_net(lg_net *net, lg_rng *r, int normalise)
{
    int depth = 2 + (int)lg_rng_below(r, 3);
    int dims[6];
    dims[0] = 2 + (int)lg_rng_below(r, 6);
    for (int k = 1; k < depth; k++) dims[k] = 3 + (int)lg_rng_below(r, 10);
    dims[depth] = 2 + (int)lg_rng_below(r, 3);
    ck_assert_int_eq(lg_net_init(net, depth, dims, LG_ACT_RELU), LG_OK);
    lg_test_randomize(net, r, 0.8);
    if (normalise) {
        net->in_sub = malloc((size_t)net->n_in * sizeof(double));
        net->in_div = malloc((size_t)net->n_in * sizeof(double));
        for (int i = 0; i < net->n_in; i++) {
            net->in_sub[i] = 0.3 * lg_rng_normal(r);
            net->in_div[i] = (lg_rng_uniform(r) < 0.3 ? -1 : 1) * (0.2 + lg_rng_uniform(r));
        }
    }
}

static void lg_tb_random_box(const lg_net *net, lg_rng *r, double *lo, double *hi)
{
    double eps = 0.02 + 0.3 * lg_rng_uniform(r);
    for (int i = 0; i < net->n_in; i++) {
        double c = lg_rng_uniform(r);
        lo[i] = c - eps;
        hi[i] = c + eps;
    }
}

static double lg_tb_width(const lg_bounds *b, const lg_net *net)
{
    double w = 0;
    for (int k = 0; k < net->n_layers; k++)
        for (int i = 0; i < b->width[k]; i++) w += b->hi[k][i] - b->lo[k][i];
    return w;
}

START_TEST(test_bounds_contain_samples)
{
    lg_rng r;
    lg_rng_init(&r, 42, 1);
    int n_nets = lg_test_quick() ? 8 : 30, n_samples = lg_test_quick() ? 300 : 1000;
    double wi = 0, ws = 0;
    for (int t = 0; t < n_nets; t++) {
        lg_net net;
        lg_tb_random_net(&net, &r, t % 3 == 2);
        double lo[8], hi[8], x[8], z[64];
        lg_tb_random_box(&net, &r, lo, hi);
        lg_bounds bi, bs, bl;
        ck_assert_int_eq(lg_bounds_init(&bi, &net), LG_OK);
        ck_assert_int_eq(lg_bounds_init(&bs, &net), LG_OK);
        ck_assert_int_eq(lg_bounds_init(&bl, &net), LG_OK);
        ck_assert_int_eq(lg_bounds_interval(&bi, &net, lo, hi), LG_OK);
        ck_assert_int_eq(lg_bounds_symbolic(&bs, &net, lo, hi), LG_OK);
        ck_assert_int_eq(lg_bounds_symbolic(&bl, &net, lo, hi), LG_OK);
        long n_lp = 0;
        ck_assert_int_eq(lg_bounds_lp(&bl, &net, NULL, &n_lp), LG_OK);
        wi += lg_tb_width(&bi, &net);
        ws += lg_tb_width(&bs, &net);
        for (int k = 0; k < net.n_layers; k++)
            for (int i = 0; i < bs.width[k]; i++) {
                /* symbolic ⊆ interval, LP ⊆ symbolic (per neuron) */
                ck_assert_msg(bs.lo[k][i] >= bi.lo[k][i] && bs.hi[k][i] <= bi.hi[k][i], "net %d layer %d n %d", t, k, i);
                ck_assert_msg(bl.lo[k][i] >= bs.lo[k][i] && bl.hi[k][i] <= bs.hi[k][i], "net %d layer %d n %d", t, k, i);
            }
        for (int s = 0; s < n_samples; s++) {
            for (int i = 0; i < net.n_in; i++) {
                double u = lg_rng_uniform(&r);
                if (s % 4 == 0) u = u < 0.5 ? 0.0 : 1.0; /* corners */
                x[i] = u >= 1.0 ? hi[i] : lo[i] + u * (hi[i] - lo[i]);
            }
            lg_tb_preact(&net, x, z);
            const double *zz = z;
            for (int k = 0; k < net.n_layers; k++)
                for (int i = 0; i < bs.width[k]; i++, zz++) {
                    ck_assert_msg(*zz >= bi.lo[k][i] && *zz <= bi.hi[k][i], "interval: net %d layer %d neuron %d", t, k, i);
                    ck_assert_msg(*zz >= bs.lo[k][i] && *zz <= bs.hi[k][i], "symbolic: net %d layer %d neuron %d", t, k, i);
                    ck_assert_msg(*zz >= bl.lo[k][i] && *zz <= bl.hi[k][i],
                                  "lp: net %d layer %d neuron %d: %.17g not in [%.17g, %.17g]", t, k, i, *zz,
                                  bl.lo[k][i], bl.hi[k][i]);
                }
        }
        lg_bounds_free(&bi);
        lg_bounds_free(&bs);
        lg_bounds_free(&bl);
        lg_net_free(&net);
    }
    /* symbolic is strictly tighter than interval in total over these nets */
    ck_assert_msg(ws < 0.95 * wi, "symbolic width %g vs interval %g", ws, wi);
}
END_TEST

/* encode/lp_relax.h on an LP with a known optimum: x, y ∈ [0, 1],
 * x + y ≥ 1, x − y = 0. min x + 2y + 0.5 = 2 at (0.5, 0.5); min −x − 2y = −3
 * at (1, 1). The dual bound is below the optimum and within the margin of
 * it; an unbounded column is refused (LG_ERR_NUMERIC). */
START_TEST(test_lp_relax_known_optimum)
{
    lg_lp_relax lp;
    ck_assert_int_eq(lg_lp_relax_init(&lp, 2, 2, 4), LG_OK);
    lg_lp_relax_col(&lp, 0, 0.0, 1.0);
    lg_lp_relax_col(&lp, 1, 0.0, 1.0);
    lg_lp_relax_row_add(&lp, 'G', 1.0);
    lg_lp_relax_ent(&lp, 0, 1.0);
    lg_lp_relax_ent(&lp, 1, 1.0);
    lg_lp_relax_row_add(&lp, 'E', 0.0);
    lg_lp_relax_ent(&lp, 0, 1.0);
    lg_lp_relax_ent(&lp, 1, -1.0);
    ck_assert_int_eq(lg_lp_relax_load(&lp), LG_OK);
    double lb = NAN, obj[2] = {1.0, 2.0};
    ck_assert_int_eq(lg_lp_relax_min(&lp, obj, 0.5, NULL, &lb), 1);
    ck_assert_msg(lb <= 2.0 && lb > 2.0 - 1e-9, "lb %.17g", lb);
    obj[0] = -1.0;
    obj[1] = -2.0;
    ck_assert_int_eq(lg_lp_relax_min(&lp, obj, 0.0, NULL, &lb), 1);
    ck_assert_msg(lb <= -3.0 && lb > -3.0 - 1e-9, "lb %.17g", lb);
    lg_lp_relax_free(&lp);
    ck_assert_int_eq(lg_lp_relax_init(&lp, 1, 0, 0), LG_OK);
    lg_lp_relax_col(&lp, 0, 0.0, INFINITY);
    ck_assert_int_eq(lg_lp_relax_load(&lp), LG_ERR_NUMERIC);
    lg_lp_relax_free(&lp);
}
END_TEST

/* LP tightening strictly helps somewhere on wider nets, and stays sound. */
START_TEST(test_bounds_lp_tightens)
{
    lg_rng r;
    lg_rng_init(&r, 7, 2);
    int dims[4] = {4, 12, 12, 3};
    double gain = 0;
    for (int t = 0; t < 5; t++) {
        lg_net net;
        ck_assert_int_eq(lg_net_init(&net, 3, dims, LG_ACT_RELU), LG_OK);
        lg_test_randomize(&net, &r, 0.8);
        double lo[4], hi[4];
        for (int i = 0; i < 4; i++) {
            lo[i] = -0.5;
            hi[i] = 0.5;
        }
        lg_bounds bs, bl;
        ck_assert_int_eq(lg_bounds_init(&bs, &net), LG_OK);
        ck_assert_int_eq(lg_bounds_init(&bl, &net), LG_OK);
        ck_assert_int_eq(lg_bounds_symbolic(&bs, &net, lo, hi), LG_OK);
        ck_assert_int_eq(lg_bounds_symbolic(&bl, &net, lo, hi), LG_OK);
        long n_lp = 0;
        ck_assert_int_eq(lg_bounds_lp(&bl, &net, NULL, &n_lp), LG_OK);
        ck_assert_int_gt(n_lp, 0);
        gain += lg_tb_width(&bs, &net) - lg_tb_width(&bl, &net);
        lg_bounds_free(&bs);
        lg_bounds_free(&bl);
        lg_net_free(&net);
    }
    ck_assert_msg(gain > 0, "LP tightening gained %g", gain);
}
END_TEST

/* The margin rule widens even an exactly representable result. */
START_TEST(test_bounds_margin_applied)
{
    int dims[2] = {3, 1};
    lg_net net;
    ck_assert_int_eq(lg_net_init(&net, 1, dims, LG_ACT_RELU), LG_OK);
    net.layers[0].act = LG_ACT_IDENTITY;
    net.layers[0].lin.W[0] = 1.0;
    net.layers[0].lin.W[1] = -2.0;
    net.layers[0].lin.W[2] = 0.5;
    net.layers[0].b[0] = 0.25;
    double lo[3] = {0, 0, 0}, hi[3] = {1, 1, 1};
    lg_bounds b;
    ck_assert_int_eq(lg_bounds_init(&b, &net), LG_OK);
    ck_assert_int_eq(lg_bounds_symbolic(&b, &net, lo, hi), LG_OK);
    /* exact range [-1.75, 1.75] */
    ck_assert(b.lo[0][0] < -1.75 && b.lo[0][0] > -1.75 - 1e-12);
    ck_assert(b.hi[0][0] > 1.75 && b.hi[0][0] < 1.75 + 1e-12);
    ck_assert(lg_bounds_margin(1.0, 3.0, 10) > 0);
    /* objective: 2·y − 1 ≥ −4.5 exactly, minus the margin */
    double C = 2.0, d = -1.0, out;
    ck_assert_int_eq(lg_bounds_objective_lower(&b, &net, 1, &C, &d, &out), LG_OK);
    ck_assert(out < -4.5 && out > -4.5 - 1e-12);
    lg_bounds_free(&b);
    lg_net_free(&net);
}
END_TEST

/* CROWN objective bounds: sound against samples, and at least as tight as
 * the interval of the outputs on average. */
START_TEST(test_bounds_objective_sound)
{
    lg_rng r;
    lg_rng_init(&r, 11, 3);
    int n_nets = lg_test_quick() ? 6 : 20;
    double sum_obj = 0, sum_int = 0;
    for (int t = 0; t < n_nets; t++) {
        lg_net net;
        lg_tb_random_net(&net, &r, t % 2);
        int no = lg_net_n_out(&net);
        double lo[8], hi[8], x[8], y[8], scratch[64];
        lg_tb_random_box(&net, &r, lo, hi);
        lg_bounds b;
        ck_assert_int_eq(lg_bounds_init(&b, &net), LG_OK);
        ck_assert_int_eq(lg_bounds_symbolic(&b, &net, lo, hi), LG_OK);
        double C[8] = {0}, d = 0.1, out;
        C[0] = 1.0;
        C[1] = -1.0;
        ck_assert_int_eq(lg_bounds_objective_lower(&b, &net, 1, C, &d, &out), LG_OK);
        /* interval on y (last layer identity: post = pre) */
        int L = net.n_layers - 1;
        double iv = d + b.lo[L][0] - b.hi[L][1];
        sum_obj += out;
        sum_int += iv;
        for (int s = 0; s < 500; s++) {
            for (int i = 0; i < net.n_in; i++) x[i] = lo[i] + lg_rng_uniform(&r) * (hi[i] - lo[i]);
            lg_net_forward(&net, x, y, scratch);
            double v = d;
            for (int j = 0; j < no; j++) v += C[j] * y[j];
            ck_assert_msg(v >= out, "net %d: sample objective %.17g below bound %.17g", t, v, out);
        }
        lg_bounds_free(&b);
        lg_net_free(&net);
    }
    ck_assert_msg(sum_obj >= sum_int, "objective bounds %g vs interval %g", sum_obj, sum_int);
}
END_TEST

START_TEST(test_bounds_refuse_smooth)
{
    int dims[3] = {2, 3, 2};
    lg_net net;
    ck_assert_int_eq(lg_net_init(&net, 2, dims, LG_ACT_GELU), LG_OK);
    lg_bounds b;
    ck_assert_int_eq(lg_bounds_init(&b, &net), LG_OK);
    double lo[2] = {0, 0}, hi[2] = {1, 1};
    /* the piecewise-linear consumers (LP, back-ends) refuse it; the bounds relax it
     * (DESIGN.md §3 "Smooth activations") */
    ck_assert_int_eq(lg_bounds_check_net(&net), LG_ERR_UNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(lg_errmsg(), "lgelu relu"));
    ck_assert_int_eq(lg_bounds_check_direct(&net), LG_OK);
    ck_assert_int_eq(lg_bounds_symbolic(&b, &net, lo, hi), LG_OK);
    for (int o = 0; o < 3; o++) ck_assert(b.lo[0][o] <= b.hi[0][o]);
    lg_bounds_free(&b);
    lg_bounds_free(&b);
    lg_net_free(&net);
}
END_TEST

/* sigmoid is not piecewise linear: lg_bounds_check_net refuses it by name,
 * in any layer, and accepts the same net once it is relu */
START_TEST(test_bounds_refuse_sigmoid)
{
    int dims[4] = {2, 3, 3, 2};
    lg_net net;
    ck_assert_int_eq(lg_net_init(&net, 3, dims, LG_ACT_RELU), LG_OK);
    ck_assert_int_eq(lg_bounds_check_net(&net), LG_OK);
    for (int k = 0; k < 3; k++) {
        net.layers[k].act = LG_ACT_SIGMOID;
        ck_assert_int_eq(lg_bounds_check_net(&net), LG_ERR_UNSUPPORTED);
        char want[32];
        snprintf(want, sizeof want, "layer %d", k);
        ck_assert_msg(strstr(lg_errmsg(), want) && strstr(lg_errmsg(), "sigmoid") &&
                          !strstr(lg_errmsg(), "lgelu relu"), "message: %s", lg_errmsg());
        net.layers[k].act = k == 2 ? LG_ACT_IDENTITY : LG_ACT_RELU;
    }
    ck_assert_int_eq(lg_bounds_check_net(&net), LG_OK);
    lg_bounds b;
    net.layers[1].act = LG_ACT_SIGMOID;
    ck_assert_int_eq(lg_bounds_init(&b, &net), LG_OK);
    double lo[2] = {0, 0}, hi[2] = {1, 1};
    ck_assert_int_eq(lg_bounds_symbolic(&b, &net, lo, hi), LG_OK); /* relaxed (DESIGN.md §3) */
    lg_bounds_free(&b);
    lg_net_free(&net);
}
END_TEST

START_TEST(test_bounds_bad_box)
{
    int dims[3] = {2, 3, 2};
    lg_net net;
    ck_assert_int_eq(lg_net_init(&net, 2, dims, LG_ACT_RELU), LG_OK);
    lg_bounds b;
    ck_assert_int_eq(lg_bounds_init(&b, &net), LG_OK);
    double lo[2] = {0, 1}, hi[2] = {1, 0};
    ck_assert_int_eq(lg_bounds_interval(&b, &net, lo, hi), LG_ERR_ARG);
    double lo2[2] = {0, NAN}, hi2[2] = {1, 1};
    ck_assert_int_eq(lg_bounds_symbolic(&b, &net, lo2, hi2), LG_ERR_ARG);
    lg_bounds_free(&b);
    lg_net_free(&net);
}
END_TEST

Suite *suite_bounds(void)
{
    Suite *s = suite_create("bounds");
    TCase *tc = tcase_create("core");
    lg_tcase_timeout(tc, 300);
    tcase_add_test(tc, test_bounds_contain_samples);
    tcase_add_test(tc, test_bounds_lp_tightens);
    tcase_add_test(tc, test_lp_relax_known_optimum);
    tcase_add_test(tc, test_bounds_margin_applied);
    tcase_add_test(tc, test_bounds_objective_sound);
    suite_add_tcase(s, tc);
    TCase *tl = tcase_create("limits");
    lg_tcase_timeout(tl, 120);
    tcase_add_test(tl, test_bounds_refuse_smooth);
    tcase_add_test(tl, test_bounds_refuse_sigmoid);
    tcase_add_test(tl, test_bounds_bad_box);
    suite_add_tcase(s, tl);
    return s;
}
