/* check_devjoint.c — the joint (differential) deviation bound
 * (verify/devnet_joint.h) against the double forward passes: on random
 * residual and conv DAGs with every kind of substituted activation, on both
 * routes of the difference network (the noisy D and the exact route) and on
 * narrow, wide and point boxes, it is never below a sampled or
 * PGD-maximised |ŷ_relu − ŷ_ref| over the box, and it is finite and tighter
 * than the difference network's own bound on some of them. */
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
#include "verify/devnet_joint.h"

/* ref: rn with every relu layer made act (testutil.h), λ from {2, 8, 40}. */
static void lg_dj_smooth(lg_net *ref, const lg_net *rn, lg_act act, int salt)
{
    static const double lams[3] = {2.0, 8.0, 40.0};
    lg_test_smooth_relus(ref, rn, act, salt, lams);
}

START_TEST(test_devjoint_dag_sound)
{
    lg_rng r;
    lg_rng_init(&r, 4242u, 11);
    static const lg_act acts[] = {LG_ACT_LGELU, LG_ACT_GELU, LG_ACT_SWISH, LG_ACT_PRELU};
    const int n_dags = lg_test_quick() ? 12 : 40;
    int finite = 0, tighter = 0, conv = 0;
    double worst = 0.0;
    for (int it = 0; it < n_dags; it++) {
        const int exact = it % 2;
        lg_test_dag_opts o = {.max_nodes = 6, .max_width = 4, .conv = it % 3 == 0, .act = LG_ACT_RELU};
        lg_net rn, ref;
        ck_assert_int_eq(lg_test_dag_random(&rn, &r, &o), LG_OK);
        lg_dj_smooth(&ref, &rn, acts[it % 4], it);
        conv += o.conv;
        const int ni = rn.n_in, no = lg_net_n_out(&rn);
        ck_assert_int_le(ni, 64);
        ck_assert_int_le(no, 8);
        double lo[64], hi[64], x[64], yr[8], yg[8], scr[512], ev[8], ej[8];
        const double w = it % 5 == 4 ? 0.0 : (it / 2) % 2 ? 0.5 : 0.1; /* a point, narrow, wide */
        for (int i = 0; i < ni; i++) {
            double c = lg_rng_uniform(&r);
            lo[i] = fmax(0.0, c - w);
            hi[i] = w > 0 ? fmin(1.0, c + w) : lo[i];
        }
        lg_devnet v;
        ck_assert_int_eq(lg_devnet_init(&v, &rn, &ref), LG_OK);
        if (exact) ck_assert_int_eq(lg_devnet_use_exact(&v), LG_OK);
        ck_assert_int_eq(lg_devnet_bound(&v, lo, hi, NULL, ev), LG_OK);
        ck_assert_int_eq(lg_devjoint_bound(&v, NULL, ej), LG_OK);
        int fin = 1;
        for (int j = 0; j < no; j++) {
            ck_assert(!isnan(ej[j]) && ej[j] >= 0.0);
            fin &= ej[j] < INFINITY;
            tighter += ej[j] < ev[j] * (1 - 1e-6);
        }
        finite += fin;
        for (int s = 0; s < 300; s++) {
            for (int i = 0; i < ni; i++) {
                double u = s < 16 ? (double)((s >> (i % 4)) & 1) : lg_rng_uniform(&r);
                x[i] = lo[i] + (hi[i] - lo[i]) * u;
            }
            lg_net_forward(&rn, x, yr, scr);
            lg_net_forward(&ref, x, yg, scr);
            for (int j = 0; j < no; j++) {
                double d = fabs(yr[j] - yg[j]);
                ck_assert_msg(d <= ej[j], "DAG %d output %d: observed %.17g > joint bound %.17g", it, j, d, ej[j]);
            }
        }
        for (int j = 0; j < no; j++) {
            for (int i = 0; i < ni; i++) x[i] = 0.5 * (lo[i] + hi[i]);
            double d = lg_test_pgd_deviation(&rn, &ref, j, lo, hi, x, 30, 0.15, yr, yg, scr);
            ck_assert_msg(d <= ej[j], "DAG %d output %d: PGD deviation %.17g > joint bound %.17g", it, j, d, ej[j]);
            if (ej[j] > 0 && ej[j] < INFINITY) worst = fmax(worst, d / ej[j]);
        }
        lg_devnet_free(&v);
        lg_net_free(&ref);
        lg_net_free(&rn);
    }
    fprintf(stderr, "devjoint: %d DAGs (%d conv), %d with a finite joint bound, %d outputs tighter than D's; PGD / "
            "bound at most %.3f\n", n_dags, conv, finite, tighter, worst);
    ck_assert_int_gt(finite, n_dags / 2);
    ck_assert_int_gt(tighter, 0);
}
END_TEST

Suite *suite_devjoint(void)
{
    Suite *s = suite_create("devjoint");
    TCase *tc = tcase_create("core");
    lg_tcase_timeout(tc, 60);
    tcase_add_test(tc, test_devjoint_dag_sound);
    suite_add_tcase(s, tc);
    return s;
}
