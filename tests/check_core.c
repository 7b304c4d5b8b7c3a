/* check_core.c — activations against golden values, λ reparameterisation,
 * BLAS against the naive kernel, RNG determinism, single vs batched forward, the run context. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/act.h"
#include "core/linalg.h"
#include "core/net.h"
#include "core/rng.h"
#include "core/clock.h"
#include "core/runctx.h"
#include "testutil.h"

START_TEST(test_core_act_golden)
{
    FILE *f = fopen(lg_test_fixture("golden/activation.txt"), "r");
    ck_assert_msg(f != NULL, "cannot open golden/activation.txt");
    char line[512];
    int rows = 0;
    while (fgets(line, sizeof line, f)) {
        double x, lam, fx, dfx, dfl;
        if (line[0] == '#' || sscanf(line, "%lf %lf %lf %lf %lf", &x, &lam, &fx, &dfx, &dfl) != 5) continue;
        double got = lg_act_eval(LG_ACT_LGELU, x, lam);
        double tol = 1e-12 * fmax(1.0, fabs(fx)) + 1e-300;
        ck_assert_msg(fabs(got - fx) <= tol, "f(%g;%g) = %.17g, golden %.17g", x, lam, got, fx);
        rows++;
    }
    fclose(f);
    ck_assert_int_ge(rows, 50);
}
END_TEST

START_TEST(test_core_act_kinds)
{
    ck_assert_double_eq(lg_act_eval(LG_ACT_RELU, -2.0, 1), 0.0);
    ck_assert_double_eq(lg_act_eval(LG_ACT_RELU, 2.5, 1), 2.5);
    ck_assert_double_eq(lg_act_eval(LG_ACT_IDENTITY, -2.5, 7), -2.5);
    ck_assert_double_eq_tol(lg_act_eval(LG_ACT_GELU, 0.75, 99), 0.5800294857173488, 1e-14);
    lg_act a;
    ck_assert_int_eq(lg_act_parse("lgelu", &a), 0);
    ck_assert_int_eq(a, LG_ACT_LGELU);
    ck_assert_int_eq(lg_act_parse("tanh", &a), -1);
}
END_TEST

START_TEST(test_core_act_sigmoid)
{
    lg_act a;
    ck_assert_int_eq(lg_act_parse("sigmoid", &a), 0);
    ck_assert_int_eq(a, LG_ACT_SIGMOID);
    ck_assert_str_eq(lg_act_name(LG_ACT_SIGMOID), "sigmoid");
    ck_assert_ptr_null(lg_act_name((lg_act)LG_ACT_COUNT));
    ck_assert_double_eq(lg_act_eval(LG_ACT_SIGMOID, 0.0, 7), 0.5);
    /* σ(1) = e/(1+e), σ(−2) = 1/(1+e²) (λ is ignored) */
    ck_assert_double_eq_tol(lg_act_eval(LG_ACT_SIGMOID, 1.0, 3), 0.7310585786300049, 1e-15);
    ck_assert_double_eq_tol(lg_act_eval(LG_ACT_SIGMOID, -2.0, 1), 0.11920292202211755, 1e-15);
    for (double x = -30.0; x <= 30.0; x += 0.37) {
        double s = lg_act_eval(LG_ACT_SIGMOID, x, 1), m = lg_act_eval(LG_ACT_SIGMOID, -x, 1);
        ck_assert_msg(s > 0.0 && s < 1.0 + 1e-16, "σ(%g) = %g", x, s);
        ck_assert_msg(fabs(s + m - 1.0) < 1e-15, "σ(%g) + σ(%g) = %.17g", x, -x, s + m);
    }
    /* stable tails: no overflow, relative accuracy in the lower tail */
    ck_assert_double_eq(lg_act_eval(LG_ACT_SIGMOID, 800.0, 1), 1.0);
    ck_assert_double_eq(lg_act_eval(LG_ACT_SIGMOID, 1e308, 1), 1.0);
    ck_assert_double_eq(lg_act_eval(LG_ACT_SIGMOID, -1e308, 1), 0.0);
    ck_assert_double_eq(lg_act_eval(LG_ACT_SIGMOID, INFINITY, 1), 1.0);
    ck_assert_double_eq(lg_act_eval(LG_ACT_SIGMOID, -INFINITY, 1), 0.0);
    double lo = lg_act_eval(LG_ACT_SIGMOID, -700.0, 1);
    ck_assert_msg(fabs(lo / exp(-700.0) - 1.0) < 1e-14, "σ(−700) = %g, expected e^−700 = %g", lo, exp(-700.0));
    ck_assert(isnan(lg_act_eval(LG_ACT_SIGMOID, NAN, 1)));
}
END_TEST

START_TEST(test_core_lambda_reparam)
{
    const double ss[] = {-1.0, -0.1, 0.0, 0.05, 0.3, 2.0, 20.0};
    for (size_t i = 0; i < sizeof ss / sizeof ss[0]; i++) {
        double lam = lg_lambda_from_s(ss[i], 0.1);
        ck_assert_msg(lam >= 1.0, "λ(s=%g) = %g < 1", ss[i], lam);
        ck_assert_msg(fabs(lg_s_from_lambda(lam, 0.1) - ss[i]) < 1e-9, "inverse fails at s=%g", ss[i]);
    }
    ck_assert_double_eq_tol(lg_lambda_from_s(0.05, 0.1), 1.9740769841801067, 1e-14);
}
END_TEST

START_TEST(test_core_sgemm_naive_vs_blas)
{
    lg_rng r;
    lg_rng_init(&r, 7, 1);
    const int shapes[][3] = {{1, 1, 1}, {3, 5, 7}, {17, 9, 33}, {64, 10, 128}};
    for (size_t s = 0; s < 4; s++)
        for (int ta = 0; ta < 2; ta++)
            for (int tb = 0; tb < 2; tb++) {
                int M = shapes[s][0], N = shapes[s][1], K = shapes[s][2];
                float *A = malloc(sizeof(float) * (size_t)(M * K)), *B = malloc(sizeof(float) * (size_t)(K * N));
                float *C1 = malloc(sizeof(float) * (size_t)(M * N)), *C2 = malloc(sizeof(float) * (size_t)(M * N));
                for (int i = 0; i < M * K; i++) A[i] = (float)lg_rng_normal(&r);
                for (int i = 0; i < K * N; i++) B[i] = (float)lg_rng_normal(&r);
                for (int i = 0; i < M * N; i++) C1[i] = C2[i] = (float)lg_rng_normal(&r);
                int lda = ta ? M : K, ldb = tb ? K : N;
                lg_sgemm(ta, tb, M, N, K, 0.5f, A, lda, B, ldb, 2.0f, C1, N);
                lg_sgemm_naive(ta, tb, M, N, K, 0.5f, A, lda, B, ldb, 2.0f, C2, N);
                for (int i = 0; i < M * N; i++)
                    ck_assert_msg(fabsf(C1[i] - C2[i]) <= 1e-4f * (1.0f + fabsf(C2[i])),
                                  "M=%d N=%d K=%d ta=%d tb=%d i=%d: %g vs %g", M, N, K, ta, tb, i, C1[i], C2[i]);
                free(A);
                free(B);
                free(C1);
                free(C2);
            }
}
END_TEST

START_TEST(test_core_rng_deterministic)
{
    lg_rng a, b, c;
    lg_rng_init(&a, 42, 3);
    lg_rng_init(&b, 42, 3);
    lg_rng_init(&c, 43, 3);
    int differ = 0;
    for (int i = 0; i < 1000; i++) {
        uint32_t x = lg_rng_u32(&a), y = lg_rng_u32(&b), z = lg_rng_u32(&c);
        ck_assert_uint_eq(x, y);
        differ += x != z;
    }
    ck_assert_int_gt(differ, 990);
    double m = 0;
    for (int i = 0; i < 20000; i++) m += lg_rng_uniform(&a);
    ck_assert_double_eq_tol(m / 20000, 0.5, 0.02);
}
END_TEST

START_TEST(test_core_forward_single_vs_batch)
{
    const int dims[] = {7, 6, 5, 3};
    const lg_act acts[] = {LG_ACT_RELU, LG_ACT_GELU, LG_ACT_LGELU};
    lg_rng r;
    lg_rng_init(&r, 1, 2);
    for (int a = 0; a < 3; a++) {
        lg_net net;
        ck_assert_int_eq(lg_net_init(&net, 3, dims, acts[a]), LG_OK);
        lg_test_randomize(&net, &r, 0.7);
        double X[4 * 7], Y[4 * 3], y[3], scratch[14];
        for (int i = 0; i < 28; i++) X[i] = lg_rng_uniform(&r);
        ck_assert_int_eq(lg_net_forward_batch(&net, X, Y, 4), LG_OK);
        for (int n = 0; n < 4; n++) {
            lg_net_forward(&net, X + 7 * n, y, scratch);
            for (int j = 0; j < 3; j++) ck_assert_double_eq_tol(y[j], Y[3 * n + j], 1e-12);
        }
        lg_net copy;
        ck_assert_int_eq(lg_net_copy(&copy, &net), LG_OK);
        lg_net_forward(&copy, X, y, scratch);
        ck_assert_double_eq_tol(y[0], Y[0], 1e-12);
        lg_net_free(&copy);
        lg_net_free(&net);
        lg_net_free(&net); /* freeing a zeroed net is a no-op */
    }
}
END_TEST

START_TEST(test_core_net_init_limits)
{
    lg_net net;
    const int bad[] = {5, 0, 3};
    ck_assert_int_eq(lg_net_init(&net, 2, bad, LG_ACT_RELU), LG_ERR_ARG);
    const int huge[] = {1 << 24, 1 << 24};
    ck_assert_int_eq(lg_net_init(&net, 1, huge, LG_ACT_RELU), LG_ERR_ARG);
    ck_assert_int_eq(lg_net_init(&net, 0, bad, LG_ACT_RELU), LG_ERR_ARG);
}
END_TEST

START_TEST(test_core_runctx)
{
    lg_runctx n = lg_runctx_none();
    ck_assert(!lg_runctx_expired(&n));
    ck_assert(isinf(lg_runctx_remaining(&n)));
    lg_runctx s = lg_runctx_share(&n, 0.1); /* no deadline: no sub-budget */
    ck_assert(!(s.deadline > 0));
    lg_runctx c = lg_runctx_start(100, 7, 1, 64);
    ck_assert_int_eq((int)c.seed, 7);
    ck_assert_int_eq(c.verbose, 1);
    ck_assert_double_eq(c.memory_mb, 64);
    double left = lg_runctx_remaining(&c);
    ck_assert_msg(left > 99 && left <= 100, "remaining %g", left);
    ck_assert_int_eq((int)lg_runctx_child(&c, 5).seed, 12);
    ck_assert_double_eq(lg_runctx_child(&c, 5).deadline, c.deadline);
    /* sub-budgets are never later than the parent's deadline */
    lg_runctx later = lg_runctx_sooner(&c, c.deadline + 50), sooner = lg_runctx_sooner(&c, c.deadline - 50);
    ck_assert_double_eq(later.deadline, c.deadline);
    ck_assert_double_eq(sooner.deadline, c.deadline - 50);
    ck_assert_double_eq(lg_runctx_sooner(&n, 5).deadline, 5);
    ck_assert_double_eq(lg_runctx_sooner(&c, 0).deadline, c.deadline);
    lg_runctx tenth = lg_runctx_share(&c, 0.1);
    ck_assert_msg(tenth.deadline <= c.deadline && lg_runctx_remaining(&tenth) <= 10.0 + 1e-9 &&
                      lg_runctx_remaining(&tenth) > 9,
                  "share 0.1 of 100 s left %g s", lg_runctx_remaining(&tenth));
    lg_runctx past = lg_runctx_sooner(&c, lg_now() - 1);
    ck_assert(lg_runctx_expired(&past));
    ck_assert_double_eq(lg_runctx_remaining(&past), 0);
    ck_assert(lg_runctx_expired(&(lg_runctx){lg_runctx_share(&past, 0.5).deadline, 1, 0, 0, NULL}));
    /* a cancel flag (lib/lgelu.h's token) ends the run as its deadline would, in every derived context */
    _Atomic int flag = 0;
    lg_runctx can = c, none = lg_runctx_none();
    can.cancel = none.cancel = &flag;
    ck_assert(!lg_runctx_expired(&can) && !lg_runctx_expired(&none));
    atomic_store(&flag, 1);
    lg_runctx sub = lg_runctx_share(&can, 0.5), kid = lg_runctx_child(&none, 3);
    ck_assert(lg_runctx_expired(&can) && lg_runctx_expired(&none) && lg_runctx_expired(&sub) && lg_runctx_expired(&kid));
    ck_assert_double_eq(lg_runctx_remaining(&can), 0);
    ck_assert_double_eq(lg_runctx_remaining(&none), 0);
}
END_TEST

Suite *suite_core(void)
{
    Suite *s = suite_create("core");
    TCase *tc = tcase_create("core");
    lg_tcase_timeout(tc, 120);
    tcase_add_test(tc, test_core_act_golden);
    tcase_add_test(tc, test_core_act_kinds);
    tcase_add_test(tc, test_core_act_sigmoid);
    tcase_add_test(tc, test_core_lambda_reparam);
    tcase_add_test(tc, test_core_sgemm_naive_vs_blas);
    tcase_add_test(tc, test_core_rng_deterministic);
    tcase_add_test(tc, test_core_forward_single_vs_batch);
    tcase_add_test(tc, test_core_runctx);
    suite_add_tcase(s, tc);
    TCase *tl = tcase_create("limits");
    lg_tcase_timeout(tl, 120);
    tcase_add_test(tl, test_core_net_init_limits);
    suite_add_tcase(s, tl);
    return s;
}
