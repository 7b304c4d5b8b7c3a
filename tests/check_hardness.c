/* check_hardness.c — the weight initialisations (moments and
 * bounds of he / xavier / torch), the λ-space update of s (hand-computed
 * SGD and AdamW steps, the floor, momentum reset), a real Fashion-MNIST run
 * in which the plain s-update stays stuck at λ ≈ 1 while the λ-space update
 * moves λ off it, and the vectorised λ-GELU kernels at every SIMD level the
 * CPU has (exp and Φ against libm with asserted error bounds, the PyTorch
 * golden values, identical results across levels, kept = recomputed). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/act.h"
#include "core/idx.h"
#include "core/rng.h"
#include "train/act.h"
#include "train/act_simd.h"
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

/* ---- vectorised kernels ------------------------------------------------- */

/* Max relative error of e^x on [−87, 88] and of Φ(u) on [−13, 9] (Φ ≥
 * FLT_MIN) against libm in double, at every level: e^x ≤ 4e-7; Φ ≤ 1.5e-6
 * for |u| ≤ 3 and ≤ 5e-7·(1 + u²) everywhere (the float rounding of z² in
 * the exponent grows with u²; NR erfcc itself is within 1.2e-7). */
START_TEST(test_hardness_simd_accuracy)
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
START_TEST(test_hardness_simd_golden)
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
START_TEST(test_hardness_simd_levels_agree)
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
    tcase_add_test(tc, test_hardness_simd_accuracy);
    tcase_add_test(tc, test_hardness_simd_golden);
    tcase_add_test(tc, test_hardness_simd_levels_agree);
    suite_add_tcase(s, tc);
    TCase *tl = tcase_create("limits");
    tcase_set_timeout(tl, 120);
    tcase_add_test(tl, test_hardness_cli_options);
    suite_add_tcase(s, tl);
    return s;
}
