/* check_act_simd.c — the vectorised λ-GELU kernels of train/act_simd.c at every
 * SIMD level the CPU has: exp and Φ against libm with asserted error bounds,
 * the PyTorch golden values, identical results across levels, kept =
 * recomputed. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/act.h"
#include "core/idx.h"
#include "core/rng.h"
#include "train/act.h"
#include "core/act_simd.h"
#include "train/init.h"
#include "train/loop.h"
#include "train/model.h"
#include "train/optim.h"
#include "testutil.h"

/* ---- vectorised kernels ------------------------------------------------- */

/* Max relative error of e^x on [−87, 88] and of Φ(u) on [−13, 9] (Φ ≥
 * FLT_MIN) against libm in double, at every level: e^x ≤ 4e-7; Φ ≤ 1.5e-6
 * for |u| ≤ 3 and ≤ 5e-7·(1 + u²) everywhere (the float rounding of z² in
 * the exponent grows with u²; NR erfcc itself is within 1.2e-7). */
START_TEST(test_act_simd_accuracy)
{
    enum { N = 40001 };
    static float x[N], y[N];
    int mx = lg_simd_level_max();
    for (int lv = 0; lv <= mx; lv++) {
        ck_assert_int_eq(lg_simd_set_level(lv), lv);
        for (int i = 0; i < N; i++) x[i] = -87.0f + 175.0f * (float)i / (N - 1);
        lg_simd_expf(y, x, N);
        double worst = 0;
        for (int i = 0; i < N; i++) {
            double ref = exp((double)x[i]), e = fabs(y[i] - ref) / ref;
            if (e > worst) worst = e;
        }
        ck_assert_msg(worst <= 4e-7, "%s: e^x max relative error %.3g", lg_simd_level_name(lv), worst);
        float below = -87.5f, ybelow;
        lg_simd_expf(&ybelow, &below, 1);
        ck_assert_float_eq(ybelow, 0.0f);
        for (int i = 0; i < N; i++) x[i] = -13.0f + 22.0f * (float)i / (N - 1);
        lg_simd_Phif(y, x, N);
        worst = 0;
        double worst_scaled = 0;
        for (int i = 0; i < N; i++) {
            double ref = 0.5 * erfc(-(double)x[i] / sqrt(2.0)), e = fabs(y[i] - ref) / ref;
            if (fabs(x[i]) <= 3 && e > worst) worst = e;
            if (e / (1 + x[i] * x[i]) > worst_scaled) worst_scaled = e / (1 + x[i] * x[i]);
        }
        ck_assert_msg(worst <= 1.5e-6 && worst_scaled <= 5e-7, "%s: Φ max relative error %.3g (|u| ≤ 3), %.3g·(1+u²)",
                      lg_simd_level_name(lv), worst, worst_scaled);
    }
}
END_TEST

/* The PyTorch golden values at every level, through the kept backward. */
START_TEST(test_act_simd_golden)
{
    int mx = lg_simd_level_max(), rows = 0;
    for (int lv = 0; lv <= mx; lv++) {
        lg_simd_set_level(lv);
        FILE *f = fopen(lg_test_fixture("golden/activation.txt"), "r");
        ck_assert_ptr_nonnull(f);
        char line[512];
        while (fgets(line, sizeof line, f)) {
            double x, lam, fx, dfx, dfl;
            if (line[0] == '#' || sscanf(line, "%lf %lf %lf %lf %lf", &x, &lam, &fx, &dfx, &dfl) != 5) continue;
            float xf = (float)x, out, keep[2], din = 0, dl = 0, one = 1;
            lg_act_forward_keep(&out, keep, &xf, LG_ACT_LGELU, (float)lam, 1);
            lg_act_backward_kept(&din, &dl, &one, keep, &xf, LG_ACT_LGELU, (float)lam, 1);
            ck_assert_msg(fabs(out - fx) <= 2e-5 * fabs(fx) + 1e-12, "%s f(%g;%g) %.9g vs %.17g",
                          lg_simd_level_name(lv), x, lam, out, fx);
            ck_assert_msg(fabs(din - dfx) <= 2e-5 * fabs(dfx) + 1e-12 + 1e-7 * (1 + fabs(lam * x)),
                          "%s f'(%g;%g) %.9g vs %.17g", lg_simd_level_name(lv), x, lam, din, dfx);
            ck_assert_msg(fabs(dl - dfl) <= 2e-5 * fabs(dfl) + 1e-12, "%s ∂λ(%g;%g) %.9g vs %.17g",
                          lg_simd_level_name(lv), x, lam, dl, dfl);
            rows++;
        }
        fclose(f);
    }
    ck_assert_int_gt(rows, 50);
}
END_TEST

/* Every level gives bit-identical forward, kept values, backward and ∂L/∂λ
 * (no FMA contraction; the λ sum is accumulated in one fixed order), and
 * the kept backward equals the recomputing one; odd n exercises the tails. */
START_TEST(test_act_simd_levels_agree)
{
    enum { N = 1037 };
    static float x[N], g[N], out[3][N], keep[3][2 * N], d[3][N], dk[N];
    float dl[3], dlk;
    lg_rng r;
    lg_rng_init(&r, 4, 4);
    for (int i = 0; i < N; i++) x[i] = (float)(4.0 * lg_rng_normal(&r)), g[i] = (float)lg_rng_normal(&r);
    x[0] = 1e30f, x[1] = -1e30f, x[2] = 0.0f;
    int mx = lg_simd_level_max();
    for (int lv = 0; lv <= mx; lv++) {
        lg_simd_set_level(lv);
        memset(d[lv], 0, sizeof d[lv]);
        dl[lv] = 0;
        lg_act_forward_keep(out[lv], keep[lv], x, LG_ACT_LGELU, 2.75f, N);
        lg_act_backward(d[lv], &dl[lv], g, x, LG_ACT_LGELU, 2.75f, N);
        memset(dk, 0, sizeof dk);
        dlk = 0;
        lg_act_backward_kept(dk, &dlk, g, keep[lv], x, LG_ACT_LGELU, 2.75f, N);
        ck_assert_msg(memcmp(dk, d[lv], sizeof dk) == 0 && dlk == dl[lv], "%s: kept backward differs",
                      lg_simd_level_name(lv));
        float plain[N];
        lg_act_forward(plain, x, LG_ACT_LGELU, 2.75f, N);
        ck_assert(memcmp(plain, out[lv], sizeof plain) == 0);
        if (lv == 0) continue;
        ck_assert_msg(memcmp(out[lv], out[0], sizeof out[0]) == 0, "%s forward differs from sse2",
                      lg_simd_level_name(lv));
        ck_assert(memcmp(keep[lv], keep[0], sizeof keep[0]) == 0);
        ck_assert(memcmp(d[lv], d[0], sizeof d[0]) == 0);
        ck_assert_float_eq(dl[lv], dl[0]);
    }
    /* gelu keeps too, and its backward leaves ∂λ alone */
    float gk[2 * N], dg[N] = {0}, dgr[N] = {0}, dlg = 5.0f;
    lg_act_forward_keep(out[0], gk, x, LG_ACT_GELU, 9.0f, N);
    lg_act_backward_kept(dg, &dlg, g, gk, x, LG_ACT_GELU, 9.0f, N);
    lg_act_backward(dgr, NULL, g, x, LG_ACT_GELU, 9.0f, N);
    ck_assert(memcmp(dg, dgr, sizeof dg) == 0);
    ck_assert_float_eq(dlg, 5.0f);
    ck_assert_int_eq((int)lg_act_keep_count(LG_ACT_RELU), 0);
    printf("simd levels on this CPU: up to %s\n", lg_simd_level_name(mx));
}
END_TEST

Suite *suite_act_simd(void)
{
    Suite *s = suite_create("act_simd");
    TCase *tc = tcase_create("core");
    lg_tcase_timeout(tc, 120);
    tcase_add_test(tc, test_act_simd_accuracy);
    tcase_add_test(tc, test_act_simd_golden);
    tcase_add_test(tc, test_act_simd_levels_agree);
    suite_add_tcase(s, tc);
    return s;
}
