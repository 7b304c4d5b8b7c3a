/* check_devrefine.c — the refined difference-network deviation bound
 * (verify/devnet_refine.h: α-CROWN on the difference network, then branch
 * and bound on the input box) against the double forward passes: on random
 * residual and conv DAGs with every kind of substituted activation, the
 * refined bound is never above the unrefined one and never below a sampled
 * or PGD-maximised |ŷ_relu − ŷ_ref| over the box. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "anneal/deviation.h"
#include "core/rng.h"
#include "gen_graph.h"
#include "oracle.h"
#include "testutil.h"
#include "verify/devnet.h"
#include "verify/devnet_refine.h"
#include "verify/transfer.h"

/* ref: rn with every relu layer made act (testutil.h), λ from {1, 3, 20}. */
static void lg_rf_smooth(lg_net *ref, const lg_net *rn, lg_act act, int salt)
{
    static const double lams[3] = {1.0, 3.0, 20.0};
    lg_test_smooth_relus(ref, rn, act, salt, lams);
}

START_TEST(test_devrefine_dag_sound)
{
    lg_rng r;
    lg_rng_init(&r, 4141u, 7);
    static const lg_act acts[] = {LG_ACT_LGELU, LG_ACT_GELU, LG_ACT_SWISH, LG_ACT_PRELU};
    const int n_dags = lg_test_quick() ? 8 : 20;
    int tighter = 0, split = 0, conv = 0, tighter_x = 0, split_x = 0;
    double worst = 0.0;
    /* the second n_dags take the exact route (devnet.h: the difference network over x alone, the
     * rounding as a forward envelope), which `check` takes on pairs too large for the noisy one */
    for (int it = 0; it < 2 * n_dags; it++) {
        const int exact = it >= n_dags;
        lg_test_dag_opts o = {.max_nodes = 5, .max_width = 4, .conv = it % 3 == 0, .act = LG_ACT_RELU};
        lg_net rn, ref;
        ck_assert_int_eq(lg_test_dag_random(&rn, &r, &o), LG_OK);
        lg_rf_smooth(&ref, &rn, acts[it % 4], it);
        conv += o.conv;
        const int ni = rn.n_in, no = lg_net_n_out(&rn);
        ck_assert_int_le(ni, 64);
        double lo[64], hi[64], x[64], yr[8], yg[8], scr[512];
        const double w = it % 2 ? 0.5 : 0.15; /* wide boxes leave neurons unstable */
        for (int i = 0; i < ni; i++) {
            double c = lg_rng_uniform(&r);
            lo[i] = fmax(0.0, c - w);
            hi[i] = fmin(1.0, c + w);
        }
        lg_dev dev;
        lg_devnet v;
        lg_bounds b;
        ck_assert_int_eq(lg_dev_init(&dev, &rn, &ref), LG_OK);
        ck_assert_int_eq(lg_devnet_init(&v, &rn, &ref), LG_OK);
        if (exact) ck_assert_int_eq(lg_devnet_use_exact(&v), LG_OK);
        ck_assert_int_eq(lg_bounds_init(&b, &rn), LG_OK);
        double D0, D1, e[8];
        ck_assert_int_eq(lg_transfer_box_delta(&dev, &v, &rn, &b, lo, hi, &D0), LG_OK);
        v.want = 0.0; /* refine as far as the leaf cap allows */
        ck_assert_int_eq(lg_transfer_box_delta(&dev, &v, &rn, &b, lo, hi, &D1), LG_OK);
        ck_assert_msg(D1 <= D0, "DAG %d: refined %.17g above the unrefined %.17g", it, D1, D0);
        *(exact ? &tighter_x : &tighter) += D1 < D0 * (1 - 1e-6);
        *(exact ? &split_x : &split) += v.valid == 0;
        /* the refinement alone, per output, from the box's own difference-network bound */
        ck_assert_int_eq(lg_devnet_bound(&v, lo, hi, NULL, e), LG_OK);
        int sp = 0;
        ck_assert_int_eq(lg_devnet_refine(&dev, &v, lo, hi, 0.0, NULL, e, &sp), LG_OK);
        for (int s = 0; s < 300; s++) {
            for (int i = 0; i < ni; i++) {
                double u = s < 16 ? (double)((s >> (i % 4)) & 1) : lg_rng_uniform(&r);
                x[i] = lo[i] + (hi[i] - lo[i]) * u;
            }
            lg_net_forward(&rn, x, yr, scr);
            lg_net_forward(&ref, x, yg, scr);
            for (int j = 0; j < no; j++) {
                double d = fabs(yr[j] - yg[j]);
                ck_assert_msg(d <= D1 && d <= e[j], "DAG %d output %d: observed %.17g > refined bound %.17g / %.17g", it,
                              j, d, D1, e[j]);
            }
        }
        for (int j = 0; j < no; j++) {
            for (int i = 0; i < ni; i++) x[i] = 0.5 * (lo[i] + hi[i]);
            double d = lg_test_pgd_deviation(&rn, &ref, j, lo, hi, x, 30, 0.15, yr, yg, scr);
            ck_assert_msg(d <= D1 && d <= e[j], "DAG %d output %d: PGD deviation %.17g > refined bound %.17g / %.17g",
                          it, j, d, D1, e[j]);
            if (D1 > 0) worst = fmax(worst, d / D1);
        }
        lg_bounds_free(&b);
        lg_devnet_free(&v);
        lg_dev_free(&dev);
        lg_net_free(&ref);
        lg_net_free(&rn);
    }
    fprintf(stderr,
            "devrefine: %d DAGs per route (%d conv in all), %d tighter after refinement, %d split; exact route: %d "
            "tighter, %d split; PGD / bound at most %.3f\n",
            n_dags, conv, tighter, split, tighter_x, split_x, worst);
    ck_assert_int_gt(tighter, 0);
    ck_assert_int_gt(split, 0);
    ck_assert_int_gt(tighter_x, 0);
    ck_assert_int_gt(split_x, 0);
}
END_TEST

Suite *suite_devrefine(void)
{
    Suite *s = suite_create("devrefine");
    TCase *tc = tcase_create("core");
    lg_tcase_timeout(tc, 60);
    tcase_add_test(tc, test_devrefine_dag_sound);
    suite_add_tcase(s, tc);
    return s;
}
