/* check_lib.c — the public C API (lib/lgelu.h): each call equals the
 * internal function it wraps (forward pass, substitution, deviation bound,
 * verdicts on fixtures of known verdict), results own their arrays, every
 * error path returns a status with a message, and the hardness step is the
 * trainer's. Runs under ASan with the rest of the suites. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "anneal/relu.h"
#include "core/netfile.h"
#include "core/rng.h"
#include "lib/lgelu.h"
#include "testutil.h"
#include "onnx/load.h"

/* A random lgelu net 6-5-4-3 written to a temporary native file. */
static const char *lg_lib_tmp_net(uint64_t seed)
{
    const int dims[] = {6, 5, 4, 3};
    lg_net net;
    lg_rng r;
    lg_rng_init(&r, seed, 1);
    ck_assert_int_eq(lg_net_init(&net, 3, dims, LG_ACT_LGELU), LG_OK);
    lg_test_randomize(&net, &r, 0.8);
    net.layers[0].lambda = 2.5;
    net.layers[1].lambda = 7.0;
    const char *path = lg_test_tmpfile(".lgnet");
    ck_assert_int_eq(lg_netfile_write(&net, path), LG_OK);
    lg_net_free(&net);
    return path;
}

START_TEST(test_lib_eval_equals_forward)
{
    const char *path = lg_lib_tmp_net(11);
    lgelu_net *h = NULL;
    ck_assert_int_eq(lgelu_net_load(path, &h), LGELU_OK);
    ck_assert_int_eq(lgelu_net_n_in(h), 6);
    ck_assert_int_eq(lgelu_net_n_out(h), 3);
    ck_assert_int_eq(lgelu_net_n_layers(h), 3);
    const char *act = NULL;
    int nout = 0;
    double p = 0;
    ck_assert_int_eq(lgelu_net_layer(h, 1, &act, &nout, &p), LGELU_OK);
    ck_assert_str_eq(act, "lgelu");
    ck_assert_int_eq(nout, 4);
    ck_assert_double_eq(p, 7.0);
    ck_assert_int_eq(lgelu_net_layer(h, 2, &act, NULL, &p), LGELU_OK);
    ck_assert_str_eq(act, "identity");
    ck_assert(isnan(p));
    ck_assert_int_eq(lgelu_net_layer(h, 3, NULL, NULL, NULL), LGELU_ERR_ARG);
    lg_net ref;
    ck_assert_int_eq(lg_net_load(&ref, path), LG_OK);
    double X[4][6], Y[4][3], y[3], scratch[16];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 6; j++) X[i][j] = 0.1 * (i + 1) - 0.07 * j;
    ck_assert_int_eq(lgelu_net_eval(h, &X[0][0], 4, &Y[0][0]), LGELU_OK);
    for (int i = 0; i < 4; i++) {
        lg_net_forward(&ref, X[i], y, scratch);
        ck_assert_mem_eq(Y[i], y, sizeof y);
    }
    /* save and relu: the native and ONNX copies compute the same, relu is lg_anneal_to_relu */
    const char *onnx = lg_test_tmpfile(".onnx");
    ck_assert_int_eq(lgelu_net_save(h, onnx), LGELU_OK);
    lgelu_net *h2 = NULL, *r = NULL;
    ck_assert_int_eq(lgelu_net_load(onnx, &h2), LGELU_OK);
    double Y2[4][3];
    ck_assert_int_eq(lgelu_net_eval(h2, &X[0][0], 4, &Y2[0][0]), LGELU_OK);
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 3; j++) ck_assert_double_eq_tol(Y2[i][j], Y[i][j], 1e-12);
    ck_assert_int_eq(lgelu_net_relu(h, &r), LGELU_OK);
    lg_net rr;
    ck_assert_int_eq(lg_anneal_to_relu(&rr, &ref), LG_OK);
    ck_assert_int_eq(lgelu_net_eval(r, &X[0][0], 4, &Y2[0][0]), LGELU_OK);
    for (int i = 0; i < 4; i++) {
        lg_net_forward(&rr, X[i], y, scratch);
        ck_assert_mem_eq(Y2[i], y, sizeof y);
    }
    /* the deviation bound covers the observed deviation and grows with eps */
    double d0[4], d1[4];
    ck_assert_int_eq(lgelu_deviation(r, h, &X[0][0], 4, 0.0, -10, 10, d0), LGELU_OK);
    ck_assert_int_eq(lgelu_deviation(r, h, &X[0][0], 4, 0.05, -10, 10, d1), LGELU_OK);
    for (int i = 0; i < 4; i++) {
        double obs = 0;
        for (int j = 0; j < 3; j++) obs = fmax(obs, fabs(Y2[i][j] - Y[i][j]));
        ck_assert_msg(obs <= d0[i] && d0[i] <= d1[i] && isfinite(d1[i]), "input %d: observed %g, bounds %g %g", i, obs,
                      d0[i], d1[i]);
    }
    lg_net_free(&rr);
    lg_net_free(&ref);
    lgelu_net_free(r);
    lgelu_net_free(h2);
    lgelu_net_free(h);
    remove(path);
    remove(onnx);
}
END_TEST

START_TEST(test_lib_verify_fixtures)
{
    struct {
        const char *net, *prop;
        lgelu_verdict want;
    } cases[] = {
        {"acasxu/ACASXU_run2a_1_1_batch_2000.onnx", "acasxu/prop_1.vnnlib", LGELU_ROBUST},
        {"acasxu/ACASXU_run2a_1_7_batch_2000.onnx", "acasxu/prop_3.vnnlib", LGELU_VIOLATED},
        {"vnncomp/mnist-net_256x2.onnx", "vnncomp/prop_2_0.05.vnnlib", LGELU_VIOLATED},
        {"vnncomp/mnist-net_256x2.onnx", "vnncomp/prop_7_0.03.vnnlib", LGELU_ROBUST},
    };
    lgelu_verify_opts o = lgelu_verify_opts_default();
    o.timeout_s = 60;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        lgelu_net *h = NULL;
        lgelu_result *r = NULL;
        char net[1024], prop[1024];
        snprintf(net, sizeof net, "%s", lg_test_fixture(cases[c].net));
        snprintf(prop, sizeof prop, "%s", lg_test_fixture(cases[c].prop));
        ck_assert_int_eq(lgelu_net_load(net, &h), LGELU_OK);
        ck_assert_msg(lgelu_verify_vnnlib(h, prop, &o, &r) == LGELU_OK, "%s: %s", prop, lgelu_errmsg());
        ck_assert_msg(lgelu_result_verdict(r) == cases[c].want, "%s on %s: %s (%s)", prop, net,
                      lgelu_verdict_name(lgelu_result_verdict(r)), lgelu_result_reason(r));
        int n = -1, m = -1, nl = -1;
        const double *x = lgelu_result_counterexample(r, &n), *y = lgelu_result_outputs(r, &m);
        const int *u = lgelu_result_unstable(r, &nl);
        ck_assert_int_eq(lgelu_result_label(r), -1);
        ck_assert(lgelu_result_seconds(r) >= 0.0);
        ck_assert(nl > 0 && u != NULL);
        long sum = 0;
        for (int k = 0; k < nl; k++) sum += u[k];
        ck_assert_int_eq(sum, lgelu_result_unstable_total(r));
        if (cases[c].want == LGELU_VIOLATED) {
            ck_assert(x && y);
            ck_assert_int_eq(n, lgelu_net_n_in(h));
            ck_assert_int_eq(m, lgelu_net_n_out(h));
            double *yy = malloc((size_t)m * sizeof *yy);
            ck_assert_int_eq(lgelu_net_eval(h, x, 1, yy), LGELU_OK);
            ck_assert_mem_eq(yy, y, (size_t)m * sizeof *yy);
            free(yy);
        } else {
            ck_assert(!x && !y);
            ck_assert_int_eq(n, 0);
        }
        const char *res = lg_test_tmpfile(".txt");
        ck_assert_int_eq(lgelu_result_write(r, res), LGELU_OK);
        const char *txt = lg_test_slurp(res);
        ck_assert_msg(strncmp(txt, cases[c].want == LGELU_ROBUST ? "unsat" : "sat", 3) == 0, "%s", txt);
        remove(res);
        lgelu_result_free(r);
        lgelu_net_free(h);
    }
}
END_TEST

START_TEST(test_lib_verify_robust)
{
    lgelu_net *h = NULL;
    ck_assert_int_eq(lgelu_net_load(lg_test_fixture("vnncomp/mnist-net_256x2.onnx"), &h), LGELU_OK);
    double x[784], y[10];
    for (int i = 0; i < 784; i++) x[i] = 0.5;
    ck_assert_int_eq(lgelu_net_eval(h, x, 1, y), LGELU_OK);
    int top = 0;
    for (int j = 1; j < 10; j++)
        if (y[j] > y[top]) top = j;
    lgelu_verify_opts o = lgelu_verify_opts_default();
    o.solver = "none";
    lgelu_result *r = NULL;
    ck_assert_int_eq(lgelu_verify_robust(h, x, 0.0, -1, &o, &r), LGELU_OK); /* the prediction */
    ck_assert_int_eq(lgelu_result_label(r), top);
    ck_assert_int_eq(lgelu_result_verdict(r), LGELU_ROBUST);
    lgelu_result_free(r);
    ck_assert_int_eq(lgelu_verify_robust(h, x, 0.0, (top + 1) % 10, NULL, &r), LGELU_OK);
    ck_assert_int_eq(lgelu_result_verdict(r), LGELU_VIOLATED);
    int n = 0;
    const double *cx = lgelu_result_counterexample(r, &n);
    ck_assert_int_eq(n, 784);
    ck_assert_mem_eq(cx, x, sizeof x); /* eps 0: the box is the point */
    lgelu_result_free(r);
    lgelu_net_free(h);
}
END_TEST

START_TEST(test_lib_cancel)
{
    /* ACAS Xu 1_1 prop_3 needs seconds of branch and bound with no attack and no solver: a
     * requested token ends it as a deadline would (unknown, timed out) at once */
    lgelu_net *h = NULL;
    ck_assert_int_eq(lgelu_net_load(lg_test_fixture("acasxu/ACASXU_run2a_1_1_batch_2000.onnx"), &h), LGELU_OK);
    lgelu_cancel *tok = NULL;
    ck_assert_int_eq(lgelu_cancel_new(&tok), LGELU_OK);
    lgelu_verify_opts o = lgelu_verify_opts_default();
    o.solver = "none";
    o.attack = 0;
    o.threads = 1;
    o.timeout_s = 120;
    o.cancel = tok;
    lgelu_cancel_request(tok);
    lgelu_result *r = NULL;
    ck_assert_int_eq(lgelu_verify_vnnlib(h, lg_test_fixture("acasxu/prop_3.vnnlib"), &o, &r), LGELU_OK);
    ck_assert_int_eq(lgelu_result_verdict(r), LGELU_UNKNOWN);
    ck_assert(lgelu_result_timed_out(r));
    ck_assert_msg(lgelu_result_seconds(r) < 5.0, "cancelled run took %g s", lgelu_result_seconds(r));
    lgelu_result_free(r);
    lgelu_cancel_free(tok);
    lgelu_net_free(h);
}
END_TEST

START_TEST(test_lib_hardness_step)
{
    /* SGD, λ-space: one step from s = 0 (λ = 1 + ln 2) with ∂L/∂λ = g moves λ by −c·lr·g
     * (float rounding), then s is solved back */
    double s = 0, lam = 0, g = 0.5;
    ck_assert_int_eq(lgelu_hardness_step("sgd", "lambda", 0.1, 0.05, 9.0, 0.9, 0.0, &g, 1, &s, &lam), LGELU_OK);
    ck_assert_double_eq_tol(lam, 1.0 + log(2.0) - 0.45 * 0.5, 1e-6);
    ck_assert_double_eq_tol(lam, lg_lambda_from_s(s, 0.1), 1e-12);
    /* a step below the floor clips at 1.001 */
    g = 40.0;
    ck_assert_int_eq(lgelu_hardness_step("sgd", "lambda", 0.1, 0.05, 9.0, 0.9, 0.0, &g, 1, &s, &lam), LGELU_OK);
    ck_assert_double_eq_tol(lam, 1.001, 1e-6);
    /* plain step on s: s − c·lr·g·dλ/ds with dλ/ds = σ(0)/t = 5 */
    g = 0.1;
    ck_assert_int_eq(lgelu_hardness_step("sgd", "s", 0.1, 0.05, 9.0, 0.9, 0.0, &g, 1, &s, &lam), LGELU_OK);
    ck_assert_double_eq_tol(s, -0.45 * 0.1 * 5.0, 1e-6);
    ck_assert_int_eq(lgelu_hardness_step("sgd", "s", 0.1, 0.05, 9.0, 0.9, 0.0, &g, 0, &s, &lam), LGELU_OK);
    ck_assert_double_eq_tol(lam, 1.0 + log(2.0), 1e-12);
}
END_TEST

START_TEST(test_lib_errors)
{
    lgelu_net *h = (lgelu_net *)1;
    ck_assert_int_eq(lgelu_net_load("/nonexistent/net.onnx", &h), LGELU_ERR_IO);
    ck_assert_ptr_null(h);
    ck_assert_msg(strstr(lgelu_errmsg(), "/nonexistent/net.onnx") != NULL, "%s", lgelu_errmsg());
    ck_assert_str_eq(lgelu_status_str(LGELU_ERR_IO), lg_status_str(LG_ERR_IO));
    ck_assert_int_eq(lgelu_net_load(NULL, &h), LGELU_ERR_ARG);
    ck_assert_int_eq(lgelu_net_load(lg_test_fixture("acasxu/prop_1.vnnlib"), &h), LGELU_ERR_FORMAT);
    ck_assert_int_eq(lgelu_net_load(lg_test_fixture("acasxu/ACASXU_run2a_1_1_batch_2000.onnx"), &h), LGELU_OK);
    double x[5] = {0}, y[5], d;
    lgelu_result *r = (lgelu_result *)1;
    lgelu_verify_opts o = lgelu_verify_opts_default();
    ck_assert_int_eq(lgelu_net_eval(h, NULL, 1, y), LGELU_ERR_ARG);
    ck_assert_int_eq(lgelu_net_eval(h, NULL, 0, NULL), LGELU_OK);
    ck_assert_int_eq(lgelu_verify_robust(h, x, -1.0, 0, &o, &r), LGELU_ERR_ARG);
    ck_assert_ptr_null(r);
    ck_assert_int_eq(lgelu_verify_robust(h, x, 0.1, 5, &o, &r), LGELU_ERR_ARG);
    ck_assert_msg(strstr(lgelu_errmsg(), "label") != NULL, "%s", lgelu_errmsg());
    o.solver = "cplex";
    ck_assert_int_eq(lgelu_verify_robust(h, x, 0.1, 0, &o, &r), LGELU_ERR_ARG);
    ck_assert_msg(strstr(lgelu_errmsg(), "cplex") != NULL, "%s", lgelu_errmsg());
    o = lgelu_verify_opts_default();
    o.clip_lo = 1, o.clip_hi = 0;
    ck_assert_int_eq(lgelu_verify_robust(h, x, 0.1, 0, &o, &r), LGELU_ERR_ARG);
    x[2] = NAN;
    ck_assert_int_eq(lgelu_verify_robust(h, x, 0.1, 0, NULL, &r), LGELU_ERR_ARG);
    ck_assert_int_eq(lgelu_verify_vnnlib(h, "/nonexistent/p.vnnlib", NULL, &r), LGELU_ERR_IO);
    /* a property of another network's shape is a value error (USAGE: the exit-code rule) */
    ck_assert_int_eq(lgelu_verify_vnnlib(h, lg_test_fixture("vnncomp/prop_1_0.05.vnnlib"), NULL, &r),
                     LGELU_ERR_ARG);
    ck_assert_int_eq(lgelu_deviation(h, h, x, 1, 0.1, 0, 1, &d), LGELU_ERR_ARG); /* NaN input */
    x[2] = 0;
    ck_assert_int_eq(lgelu_deviation(h, h, x, 1, -0.1, 0, 1, &d), LGELU_ERR_ARG);
    ck_assert_int_eq(lgelu_hardness_step("rmsprop", "lambda", 0.1, 0.05, 9, 0.9, 0, NULL, 0, NULL, NULL),
                     LGELU_ERR_ARG);
    ck_assert_int_eq(lgelu_hardness_step("sgd", "lambda", 0.0, 0.05, 9, 0.9, 0, NULL, 0, NULL, NULL), LGELU_ERR_ARG);
    /* accessors and frees accept NULL */
    ck_assert_int_eq(lgelu_result_verdict(NULL), LGELU_UNKNOWN);
    ck_assert_ptr_null(lgelu_result_counterexample(NULL, NULL));
    lgelu_result_free(NULL);
    lgelu_net_free(NULL);
    lgelu_net_free(h);
}
END_TEST

Suite *suite_lib(void)
{
    Suite *s = suite_create("lib");
    TCase *c = tcase_create("core");
    lg_tcase_timeout(c, 300);
    tcase_add_test(c, test_lib_eval_equals_forward);
    tcase_add_test(c, test_lib_verify_fixtures);
    tcase_add_test(c, test_lib_verify_robust);
    tcase_add_test(c, test_lib_hardness_step);
    tcase_add_test(c, test_lib_cancel);
    suite_add_tcase(s, c);
    TCase *l = tcase_create("limits");
    lg_tcase_timeout(l, 120);
    tcase_add_test(l, test_lib_errors);
    suite_add_tcase(s, l);
    return s;
}
