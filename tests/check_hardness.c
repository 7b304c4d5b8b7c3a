/* check_hardness.c — issue 10's learned-hardness pieces: the weight
 * initialisations (moments and bounds of he / xavier / torch), the λ-space
 * update of s (hand-computed SGD and AdamW steps, the floor, momentum reset)
 * and a real Fashion-MNIST run in which the plain s-update stays stuck at
 * λ ≈ 1 while the λ-space update moves λ off it. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/act.h"
#include "core/idx.h"
#include "core/rng.h"
#include "train/init.h"
#include "train/loop.h"
#include "train/model.h"
#include "train/optim.h"
#include "testutil.h"

/* ---- initialisation ------------------------------------------------------ */

START_TEST(test_hardness_init_parse)
{
    const char *names[] = {"he", "xavier", "torch"};
    for (int i = 0; i < 3; i++) {
        lg_init_kind k;
        ck_assert_int_eq(lg_init_parse(names[i], &k), 0);
        ck_assert_int_eq((int)k, i);
        ck_assert_str_eq(lg_init_name(k), names[i]);
    }
    lg_init_kind k = LG_INIT_HE;
    ck_assert_int_eq(lg_init_parse("kaiming", &k), -1);
    ck_assert_int_eq(lg_init_parse("", &k), -1);
    lg_s_update u;
    ck_assert_int_eq(lg_s_update_parse("lambda", &u), 0);
    ck_assert_int_eq(u, LG_S_UPDATE_LAMBDA);
    ck_assert_int_eq(lg_s_update_parse("s", &u), 0);
    ck_assert_int_eq(u, LG_S_UPDATE_S);
    ck_assert_int_eq(lg_s_update_parse("lam", &u), -1);
    ck_assert_int_eq(lg_optim_opts_default().s_update, LG_S_UPDATE_LAMBDA);
}
END_TEST

/* Moments of every layer of 784-256-256-10 against the scheme's law: mean
 * 0 and variance σ² within 5 standard errors (var of the sample variance
 * of n normals is 2σ⁴/n; of n uniforms U(±a), σ² = a²/3 and 4a⁴/(45n)),
 * the uniform's bound a respected and nearly reached, biases as stated. */
START_TEST(test_hardness_init_moments)
{
    const int dims[4] = {784, 256, 256, 10};
    for (int kind = 0; kind < 3; kind++) {
        lg_net net, again;
        ck_assert_int_eq(lg_net_init(&net, 3, dims, LG_ACT_LGELU), LG_OK);
        ck_assert_int_eq(lg_net_init(&again, 3, dims, LG_ACT_LGELU), LG_OK);
        lg_init_weights(&net, 11, (lg_init_kind)kind);
        lg_init_weights(&again, 11, (lg_init_kind)kind);
        ck_assert_msg(memcmp(net.params, again.params, net.n_params * sizeof(double)) == 0, "%s: not reproducible",
                      lg_init_name((lg_init_kind)kind));
        for (int k = 0; k < 3; k++) {
            const lg_layer *L = &net.layers[k];
            size_t nw = (size_t)L->n_in * (size_t)L->n_out;
            double n = (double)nw, s1 = 0, s2 = 0, mx = 0;
            for (size_t i = 0; i < nw; i++) {
                double w = L->W[i];
                ck_assert_msg(w == (double)(float)w, "weight not float-representable");
                s1 += w, s2 += w * w, mx = fmax(mx, fabs(w));
            }
            double mean = s1 / n, var = s2 / n - mean * mean, a = 1.0 / sqrt((double)L->n_in), expect, se;
            if (kind == LG_INIT_TORCH) {
                expect = a * a / 3.0;
                se = sqrt(4.0 * pow(a, 4) / (45.0 * n));
                ck_assert_msg(mx <= a && mx > a * (1 - 20.0 / n), "torch layer %d: max |w| %g, bound %g", k, mx, a);
                double bmx = 0, bs = 0;
                for (int i = 0; i < L->n_out; i++) bmx = fmax(bmx, fabs(L->b[i])), bs += fabs(L->b[i]);
                ck_assert_msg(bmx <= a && bs / L->n_out > 0.3 * a, "torch layer %d: biases not U(±%g)", k, a);
            } else {
                int xav = kind == LG_INIT_XAVIER || L->act == LG_ACT_IDENTITY;
                expect = xav ? 2.0 / (L->n_in + L->n_out) : 2.0 / L->n_in;
                se = expect * sqrt(2.0 / n);
                for (int i = 0; i < L->n_out; i++) ck_assert_double_eq(L->b[i], 0.0);
            }
            ck_assert_msg(fabs(mean) < 5 * sqrt(expect / n), "%s layer %d: mean %g", lg_init_name((lg_init_kind)kind),
                          k, mean);
            ck_assert_msg(fabs(var - expect) < 5 * se, "%s layer %d: variance %g, expected %g ± %g",
                          lg_init_name((lg_init_kind)kind), k, var, expect, se);
            if (L->act == LG_ACT_LGELU) ck_assert_double_eq_tol(L->lambda, 1.0 + log(2.0), 1e-12);
        }
        lg_net_free(&net);
        lg_net_free(&again);
    }
    /* he keeps the original lgelu initialisation bit for bit */
    lg_net a, b;
    ck_assert_int_eq(lg_net_init(&a, 3, dims, LG_ACT_GELU), LG_OK);
    ck_assert_int_eq(lg_net_init(&b, 3, dims, LG_ACT_GELU), LG_OK);
    lg_model_init_weights(&a, 5);
    lg_init_weights(&b, 5, LG_INIT_HE);
    ck_assert(memcmp(a.params, b.params, a.n_params * sizeof(double)) == 0);
    lg_net_free(&a);
    lg_net_free(&b);
}
END_TEST

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

START_TEST(test_hardness_lambda_step_by_hand)
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
START_TEST(test_hardness_lambda_floor)
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
START_TEST(test_hardness_unstuck_on_data)
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

START_TEST(test_hardness_cli_options)
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

Suite *suite_hardness(void)
{
    Suite *s = suite_create("hardness");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_hardness_init_parse);
    tcase_add_test(tc, test_hardness_init_moments);
    tcase_add_test(tc, test_hardness_lambda_step_by_hand);
    tcase_add_test(tc, test_hardness_lambda_floor);
    tcase_add_test(tc, test_hardness_unstuck_on_data);
    suite_add_tcase(s, tc);
    TCase *tl = tcase_create("limits");
    tcase_set_timeout(tl, 120);
    tcase_add_test(tl, test_hardness_cli_options);
    suite_add_tcase(s, tl);
    return s;
}
