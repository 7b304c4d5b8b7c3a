/* check_optim.c — the λ-space update of s (train/optim.c: hand-computed SGD
 * and AdamW steps, the floor, momentum reset), a real Fashion-MNIST run in
 * which the plain s-update stays stuck at λ ≈ 1 while the λ-space update
 * moves λ off it, and the command-line options --init and --s-update. */
#include <check.h>
#include <float.h>
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

/* ---- λ-space update -------------------------------------------------------- */

/* A 3-4-2 lgelu model whose layer-0 λ is lam0 and whose gradients are zero
 * except ∂L/∂λ = g (and ∂L/∂s = g·dλ/ds, as the backward would set it). */
static void lg_lambda_model(lg_model *m, lg_net *net, double lam0, float g)
{
    const int dims[3] = {3, 4, 2};
    ck_assert_int_eq(lg_net_init(net, 2, dims, LG_ACT_LGELU), LG_OK);
    lg_init_weights(net, 1, LG_INIT_TORCH);
    net->layers[0].s = (float)lg_s_from_lambda(lam0, net->t);
    net->layers[0].lambda = lg_lambda_from_s(net->layers[0].s, net->t);
    ck_assert_int_eq(lg_model_init(m, net, 1), LG_OK);
    lg_model_zero_grad(m);
    m->layers[0].dlambda = g;
    double u = net->layers[0].s / net->t;
    *m->layers[0].ds = (float)(g / (1.0 + exp(-u)) / net->t);
}

/* AdamW's first step on a weight: the bias-corrected moments are exactly g
 * and g², so the step is lr·g/(|g| + ε) up to float rounding (a correction
 * computed from another β than the moments' would be off by 6e-6). */
START_TEST(test_optim_adamw_first_step)
{
    lg_model m;
    lg_net net;
    lg_lambda_model(&m, &net, 2.5, 0.0f);
    lg_optim_opts o = lg_optim_opts_default();
    o.kind = LG_OPTIM_ADAMW, o.lr = 1.0, o.wd = 0.0;
    size_t n = m.layers[0].n_w;
    float *w0 = malloc(n * sizeof *w0);
    ck_assert_ptr_nonnull(w0);
    size_t off = (size_t)(m.layers[0].W - m.params);
    for (size_t i = 0; i < n; i++) {
        w0[i] = m.layers[0].W[i] = 0.0f; /* the step itself, no rounding against a weight */
        m.grads[off + i] = (float)(0.001 * (double)(i + 1) * (i % 2 ? -1 : 1));
    }
    lg_optim_step(&m, &o, 1);
    for (size_t i = 0; i < n; i++) {
        double g = m.grads[off + i], step = o.lr * g / (fabs(g) + o.eps);
        double got = (double)w0[i] - (double)m.layers[0].W[i];
        ck_assert_msg(fabs(got - step) <= 4 * FLT_EPSILON * fabs(step),
                      "weight %zu: step %.9g, expected %.9g (relative %.3g)", i, got, step, (got - step) / step);
    }
    free(w0);
    lg_model_free(&m);
    lg_net_free(&net);
}
END_TEST

/* AdamW over several steps against a double-precision oracle (the same
 * options, moments and weights in double): gradients whose size changes
 * tenfold between steps, weight decay on; every weight within 1e-6 of the
 * oracle's total movement: the float storage of the moments and weights is
 * the only difference (every update is computed in double, rounded once). */
START_TEST(test_optim_adamw_steps_double_oracle)
{
    lg_model m;
    lg_net net;
    lg_lambda_model(&m, &net, 2.5, 0.0f);
    lg_optim_opts o = lg_optim_opts_default();
    o.kind = LG_OPTIM_ADAMW, o.lr = 0.01, o.wd = 0.01;
    size_t n = m.layers[0].n_w, off = (size_t)(m.layers[0].W - m.params);
    double *p = malloc(3 * n * sizeof *p), *mo = p + n, *vo = p + 2 * n, *moved = calloc(n, sizeof *moved);
    ck_assert(p && moved);
    for (size_t i = 0; i < n; i++) {
        m.layers[0].W[i] = 0.0f; /* the movement alone: no rounding against a large weight */
        p[i] = m.layers[0].W[i];
        mo[i] = vo[i] = 0.0;
    }
    for (long t = 1; t <= 8; t++) {
        for (size_t i = 0; i < n; i++)
            m.grads[off + i] = (float)((t % 2 ? 0.01 : 0.1) * (double)(i + 1) * ((i + (size_t)t) % 3 ? -1 : 1));
        lg_optim_step(&m, &o, t);
        double bc1 = 1.0 - pow(o.beta1, (double)t), bc2 = 1.0 - pow(o.beta2, (double)t);
        for (size_t i = 0; i < n; i++) {
            double g = m.grads[off + i];
            mo[i] = o.beta1 * mo[i] + (1 - o.beta1) * g;
            vo[i] = o.beta2 * vo[i] + (1 - o.beta2) * g * g;
            double step = o.lr * (mo[i] / bc1 / (sqrt(vo[i] / bc2) + o.eps) + o.wd * p[i]);
            p[i] -= step;
            moved[i] += fabs(step);
        }
    }
    for (size_t i = 0; i < n; i++) {
        double got = m.layers[0].W[i], err = fabs(got - p[i]);
        ck_assert_msg(err <= 1e-6 * moved[i] + 2 * FLT_EPSILON * fabs(p[i]),
                      "weight %zu: %.9g, the double oracle %.9g (error %.3g of a movement %.3g)", i, got, p[i], err,
                      moved[i]);
    }
    free(p);
    free(moved);
    lg_model_free(&m);
    lg_net_free(&net);
}
END_TEST

START_TEST(test_optim_lambda_step_by_hand)
{
    const double lam0 = 2.5;
    const float g = 0.2f;
    for (int kind = 0; kind < 2; kind++) {
        lg_model m;
        lg_net net;
        lg_lambda_model(&m, &net, lam0, g);
        double l0 = m.layers[0].lambda;
        lg_optim_opts o = lg_optim_opts_default();
        o.kind = kind ? LG_OPTIM_ADAMW : LG_OPTIM_SGD;
        o.lr = 0.05, o.c = 9, o.momentum = 0.9;
        double eta = o.c * o.lr, expect;
        lg_optim_step(&m, &o, 1);
        lg_optim_step(&m, &o, 2); /* same gradient twice */
        if (kind == 0) expect = l0 - eta * g - eta * (0.9 * g + g); /* v1 = g, v2 = μg + g */
        else expect = l0 - 2 * eta * g / (g + 1e-8);                /* m̂/√v̂ = 1 at both steps */
        ck_assert_msg(fabs(m.layers[0].lambda - expect) < 2e-5, "%s: λ %.9g, expected %.9g", kind ? "adamw" : "sgd",
                      m.layers[0].lambda, expect);
        ck_assert_double_eq_tol(m.layers[0].lambda, lg_lambda_from_s(*m.layers[0].s, m.t), 1e-12);
        /* the output layer is linear: its s is never touched */
        ck_assert_float_eq(*m.layers[1].s, 0.0f);
        lg_model_free(&m);
        lg_net_free(&net);
    }
    /* the plain update at the same point moves λ by η_s·(dλ/ds)²·g per unit
     * momentum, a different (here larger) step: the options really differ */
    lg_model m;
    lg_net net;
    lg_lambda_model(&m, &net, lam0, g);
    lg_optim_opts o = lg_optim_opts_default();
    o.s_update = LG_S_UPDATE_S;
    double u = *m.layers[0].s / m.t, dl = 1.0 / (1.0 + exp(-u)) / m.t, l0 = m.layers[0].lambda;
    double s1 = *m.layers[0].s - o.c * o.lr * g * dl;
    lg_optim_step(&m, &o, 1);
    ck_assert_double_eq_tol(*m.layers[0].s, s1, 1e-6);
    ck_assert_double_eq_tol(m.layers[0].lambda, lg_lambda_from_s(s1, m.t), 1e-5);
    ck_assert_double_gt(fabs(m.layers[0].lambda - (l0 - o.c * o.lr * g)), 0.1);
    lg_model_free(&m);
    lg_net_free(&net);
}
END_TEST

/* Near λ = 1 the plain update cannot move λ; the λ-space one moves it by
 * η_s·|g| per step, stops at the floor without momentum wind-up, and
 * leaves it as soon as the gradient asks for a larger λ. */
START_TEST(test_optim_lambda_floor)
{
    const double lam0 = 1.0 + 1e-6;
    for (int mode = 0; mode < 2; mode++) {
        lg_model m;
        lg_net net;
        lg_lambda_model(&m, &net, lam0, -0.1f); /* the loss wants a larger λ */
        lg_optim_opts o = lg_optim_opts_default();
        o.s_update = mode ? LG_S_UPDATE_LAMBDA : LG_S_UPDATE_S;
        for (long st = 1; st <= 10; st++) lg_optim_step(&m, &o, st);
        double l = m.layers[0].lambda;
        if (mode == 0) ck_assert_msg(l - 1.0 < 1e-4, "plain update: λ moved to %.9g", l);
        else ck_assert_msg(l > 1.5, "λ-space update: λ only reached %.9g", l);
        lg_model_free(&m);
        lg_net_free(&net);
    }
    lg_model m;
    lg_net net;
    lg_lambda_model(&m, &net, 1.2, 1.0f); /* the loss wants a smaller λ */
    lg_optim_opts o = lg_optim_opts_default();
    size_t off = (size_t)(m.layers[0].s - m.params);
    for (long st = 1; st <= 5; st++) lg_optim_step(&m, &o, st);
    ck_assert_double_eq_tol(m.layers[0].lambda, LG_LAMBDA_FLOOR, 1e-6);
    ck_assert_float_eq(m.mom1[off], 0.0f);
    m.layers[0].dlambda = -0.01f; /* one step the other way leaves the floor at once */
    lg_optim_step(&m, &o, 6);
    ck_assert_double_eq_tol(m.layers[0].lambda, LG_LAMBDA_FLOOR + o.c * o.lr * 0.01, 1e-5);
    lg_model_free(&m);
    lg_net_free(&net);
}
END_TEST

/* Real data: a 784-32-32-10 net started at λ = 1.001 (s = t·log(e^0.001 − 1))
 * for one short epoch. The plain update leaves every λ within 1e-3 of where
 * it started; the λ-space update moves at least one by more than 0.05. */
START_TEST(test_optim_unstuck_on_data)
{
    ck_assert_msg(lg_test_have_data(), "Fashion-MNIST not installed at %s", LG_DATA_DEFAULT_DIR);
    lg_dataset tr = {0};
    ck_assert_int_eq(lg_data_load(&tr, LG_DATA_DEFAULT_DIR, "train"), LG_OK);
    lg_dataset_truncate(&tr, getenv("LG_TEST_QUICK") ? 1000 : 2000);
    const int dims[4] = {784, 32, 32, 10};
    double moved[2] = {0, 0};
    for (int mode = 0; mode < 2; mode++) {
        lg_net net;
        ck_assert_int_eq(lg_net_init(&net, 3, dims, LG_ACT_LGELU), LG_OK);
        lg_init_weights(&net, 3, LG_INIT_HE);
        for (int k = 0; k < 2; k++) {
            net.layers[k].s = (float)lg_s_from_lambda(1.001, net.t);
            net.layers[k].lambda = lg_lambda_from_s(net.layers[k].s, net.t);
        }
        lg_train_opts o = lg_train_opts_default();
        o.epochs = 1, o.batch = 50, o.seed = 3;
        o.optim.s_update = mode ? LG_S_UPDATE_LAMBDA : LG_S_UPDATE_S;
        ck_assert_int_eq(lg_train_run(&net, &tr, NULL, NULL, &o, NULL), LG_OK);
        for (int k = 0; k < 2; k++) moved[mode] = fmax(moved[mode], fabs(net.layers[k].lambda - 1.001));
        lg_net_free(&net);
    }
    ck_assert_msg(moved[0] < 1e-3, "plain update moved λ by %g", moved[0]);
    ck_assert_msg(moved[1] > 0.05, "λ-space update moved λ by only %g", moved[1]);
    lg_dataset_free(&tr);
}
END_TEST

START_TEST(test_optim_cli_options)
{
    ck_assert_int_eq(lg_test_cli("train --epochs 1 --init kaiming -o x", NULL), 2);
    ck_assert_int_eq(lg_test_cli("train --epochs 1 --s-update sgd -o x", NULL), 2);
    const char *out = lg_test_tmpfile(".lgnet"), *txt = lg_test_tmpfile(".txt");
    char args[512];
    snprintf(args, sizeof args, "train --arch 784,8,10 --epochs 1 --subset 300 --init xavier --s-update s -o %s", out);
    ck_assert_int_eq(lg_test_cli(args, txt), 0);
    FILE *f = fopen(txt, "r");
    ck_assert_ptr_nonnull(f);
    char buf[4096];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    ck_assert_msg(strstr(buf, "s-update s") && strstr(buf, "init xavier"), "report lacks the options: %s", buf);
    snprintf(args, sizeof args, "train --arch 784,8,10 --epochs 1 --subset 300 -o %s", out);
    ck_assert_int_eq(lg_test_cli(args, txt), 0);
    f = fopen(txt, "r");
    ck_assert_ptr_nonnull(f);
    n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    ck_assert_msg(strstr(buf, "s-update lambda") && strstr(buf, "init torch"), "defaults not reported: %s", buf);
    remove(out);
    remove(txt);
}
END_TEST

Suite *suite_optim(void)
{
    Suite *s = suite_create("optim");
    TCase *tc = tcase_create("core");
    lg_tcase_timeout(tc, 120);
    tcase_add_test(tc, test_optim_lambda_step_by_hand);
    tcase_add_test(tc, test_optim_adamw_steps_double_oracle);
    tcase_add_test(tc, test_optim_adamw_first_step);
    tcase_add_test(tc, test_optim_lambda_floor);
    tcase_add_test(tc, test_optim_unstuck_on_data);
    suite_add_tcase(s, tc);
    TCase *tl = tcase_create("limits");
    lg_tcase_timeout(tl, 120);
    tcase_add_test(tl, test_optim_cli_options);
    suite_add_tcase(s, tl);
    return s;
}
