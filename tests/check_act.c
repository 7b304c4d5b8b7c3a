/* check_act.c — train/act.h float kernels: λ-GELU forward/backward against
 * the PyTorch golden values, central finite differences of ∂f/∂x and ∂f/∂λ,
 * relu/gelu/identity/sigmoid, accumulation semantics, extreme inputs. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/rng.h"
#include "train/act.h"
#include "testutil.h"

/* The golden file computes Φ as ½(1 + erf(z/√2)) in float64, which carries
 * an absolute error of ~1e-16 (and flushes Φ(u) to 0 for u < −8.3): relative
 * agreement with it is meaningful above ~1e-11 only, hence the absolute
 * floor. The tails are checked separately against the double-precision
 * erfc-based core formulas (lg_act_eval, lg_Phi, lg_phi), accurate there. */
static int lg_close(double got, double ref, double rel, double abs_floor)
{
    return fabs(got - ref) <= rel * fabs(ref) + abs_floor;
}

/* Every entry of the activation table (core/act.h) carries its training
 * kernels: the float forward matches the entry's double f, the backward's
 * ∂f/∂x its df and its parameter gradient its dp (both also against central
 * differences of the float forward), and the kept-values path gives the
 * same as recomputing. A new entry is checked here without a new test. */
START_TEST(test_act_table_kernels)
{
    for (int a = 0; a < LG_ACT_COUNT; a++) {
        const lg_act_info *ai = lg_act_info_of((lg_act)a);
        ck_assert_msg(ai && ai->fwd && ai->bwd, "%d: no training kernels", a);
        float p = a == LG_ACT_PRELU ? 0.3f : ai->has_param ? 1.7f : 1.0f;
        enum { N = 97 };
        float x[N], y[N], yk[N], keep[2 * N], d1[N], d2[N], one[N];
        for (int i = 0; i < N; i++) {
            x[i] = -6.0f + 12.0f * (float)i / (N - 1) + 0.01f; /* avoids the kinks at 0 */
            one[i] = 1.0f;
            d1[i] = d2[i] = 0.0f;
        }
        ck_assert_int_le(ai->keep, 2);
        ai->fwd(y, NULL, x, p, N);
        ai->fwd(yk, ai->keep ? keep : NULL, x, p, N);
        float dp1 = 0.0f, dp2 = 0.0f;
        ai->bwd(d1, &dp1, one, NULL, x, p, N);
        ai->bwd(d2, &dp2, one, ai->keep ? keep : NULL, x, p, N);
        double dsum = 0.0;
        for (int i = 0; i < N; i++) {
            double f = ai->f(x[i], p), df = ai->df(x[i], p);
            ck_assert_msg(fabs(y[i] - f) <= 2e-6 * (1 + fabs(f)), "%s: f(%g) float %g, double %g", ai->name, x[i], y[i], f);
            ck_assert_msg(yk[i] == y[i], "%s: keeping changed f(%g)", ai->name, x[i]);
            ck_assert_msg(fabs(d1[i] - df) <= 2e-5 * (1 + fabs(df)), "%s: f'(%g) float %g, double %g", ai->name, x[i],
                          d1[i], df);
            ck_assert_msg(fabs(d2[i] - d1[i]) <= 1e-6 * (1 + fabs(df)), "%s: kept f'(%g) %g vs %g", ai->name, x[i], d2[i],
                          d1[i]);
            /* central difference of the float forward in x (step 1e-2, f smooth away from 0) */
            float xp = x[i] + 1e-2f, xm = x[i] - 1e-2f, fp, fm;
            ai->fwd(&fp, NULL, &xp, p, 1);
            ai->fwd(&fm, NULL, &xm, p, 1);
            if (fabs(x[i]) > 0.05)
                ck_assert_msg(fabs((fp - fm) / (xp - xm) - df) <= 2e-3 * (1 + fabs(df)), "%s: FD f'(%g) %g vs %g", ai->name,
                              x[i], (fp - fm) / (xp - xm), df);
            if (ai->dp) dsum += ai->dp(x[i], p);
        }
        if (ai->dp) {
            ck_assert_msg(fabs(dp1 - dsum) <= 1e-4 * (1 + fabs(dsum)), "%s: Σ∂f/∂p float %g, double %g", ai->name, dp1, dsum);
            ck_assert_msg(fabs(dp2 - dp1) <= 1e-5 * (1 + fabs(dsum)), "%s: kept Σ∂f/∂p %g vs %g", ai->name, dp2, dp1);
            /* central difference in p of Σ f */
            float yp[N], ym[N], h = 1e-2f;
            ai->fwd(yp, NULL, x, p + h, N);
            ai->fwd(ym, NULL, x, p - h, N);
            double fd = 0.0;
            for (int i = 0; i < N; i++) fd += ((double)yp[i] - ym[i]) / (2.0 * h);
            ck_assert_msg(fabs(fd - dsum) <= 2e-3 * (1 + fabs(dsum)), "%s: FD Σ∂f/∂p %g vs %g", ai->name, fd, dsum);
        } else {
            ck_assert_msg(dp1 == 0.0f && dp2 == 0.0f, "%s: no parameter, but a gradient %g", ai->name, dp1);
        }
    }
}
END_TEST

START_TEST(test_act_golden)
{
    FILE *f = fopen(lg_test_fixture("golden/activation.txt"), "r");
    ck_assert_msg(f != NULL, "cannot open golden/activation.txt");
    char line[512];
    int rows = 0;
    while (fgets(line, sizeof line, f)) {
        double x, lam, fx, dfx, dfl;
        if (line[0] == '#' || sscanf(line, "%lf %lf %lf %lf %lf", &x, &lam, &fx, &dfx, &dfl) != 5) continue;
        float xf = (float)x, out, dinp = 0.0f, dl = 0.0f, one = 1.0f;
        lg_act_forward(&out, &xf, LG_ACT_LGELU, (float)lam, 1);
        lg_act_backward(&dinp, &dl, &one, &xf, LG_ACT_LGELU, (float)lam, 1);
        ck_assert_msg(lg_close(out, fx, 2e-5, 1e-12), "f(%g;%g) = %.9g, golden %.17g", x, lam, out, fx);
        /* ∂f/∂x = Φ + uφ cancels near u ≈ −0.75: float can only be accurate
         * relative to the size of the terms */
        double terms = lg_Phi(lam * x) + fabs(lam * x) * lg_phi(lam * x);
        ck_assert_msg(lg_close(dinp, dfx, 2e-5, 1e-12 + 1e-7 * terms), "df/dx(%g;%g) = %.9g, golden %.17g", x, lam, dinp, dfx);
        ck_assert_msg(lg_close(dl, dfl, 2e-5, 1e-12), "df/dλ(%g;%g) = %.9g, golden %.17g", x, lam, dl, dfl);
        /* tails: relative accuracy against the double formulas down to 1e-30 */
        double xd = xf, u = lam * xd;
        double tf = lg_act_eval(LG_ACT_LGELU, xd, lam), tdx = lg_Phi(u) + u * lg_phi(u), tdl = xd * xd * lg_phi(u);
        ck_assert_msg(lg_close(out, tf, 2e-5, 1e-30), "f(%g;%g) = %.9g, double %.17g", x, lam, out, tf);
        ck_assert_msg(lg_close(dinp, tdx, 2e-5, 1e-30 + 1e-7 * terms), "df/dx(%g;%g) = %.9g, double %.17g", x, lam, dinp, tdx);
        ck_assert_msg(lg_close(dl, tdl, 2e-5, 1e-30), "df/dλ(%g;%g) = %.9g, double %.17g", x, lam, dl, tdl);
        rows++;
    }
    fclose(f);
    ck_assert_int_ge(rows, 50);
}
END_TEST

/* f at x in float, differenced in double over the exactly representable step */
static double lg_fd_x(lg_act kind, float x, float lam, float h)
{
    float xp = x + h, xm = x - h, fp, fm;
    lg_act_forward(&fp, &xp, kind, lam, 1);
    lg_act_forward(&fm, &xm, kind, lam, 1);
    return ((double)fp - (double)fm) / ((double)xp - (double)xm);
}

static double lg_fd_lambda(float x, float lam, float h)
{
    float lp = lam + h, lm = lam - h, fp, fm;
    lg_act_forward(&fp, &x, LG_ACT_LGELU, lp, 1);
    lg_act_forward(&fm, &x, LG_ACT_LGELU, lm, 1);
    return ((double)fp - (double)fm) / ((double)lp - (double)lm);
}

START_TEST(test_act_finite_differences)
{
    const float lams[] = {1.0f, 1.7f, 4.0f, 40.0f, 159.6f};
    lg_rng r;
    lg_rng_init(&r, 11, 3);
    int checked = 0;
    for (size_t li = 0; li < sizeof lams / sizeof lams[0]; li++) {
        float lam = lams[li];
        for (int i = 0; i < 200; i++) {
            /* x spread over the region where the activation bends: |λx| ≲ 4 */
            float x = (float)((lg_rng_uniform(&r) * 8.0 - 4.0) / lam);
            if (fabsf(x) * lam < 0.02f) continue;
            float h = 2e-3f / lam, dinp = 0.0f, dl = 0.0f, one = 1.0f;
            lg_act_backward(&dinp, &dl, &one, &x, LG_ACT_LGELU, lam, 1);
            double fdx = lg_fd_x(LG_ACT_LGELU, x, lam, h);
            ck_assert_msg(fabs(fdx - dinp) <= 2e-3 * fabs(dinp) + 2e-4, "λ=%g x=%g: df/dx %.7g vs FD %.7g", lam, x,
                          dinp, fdx);
            double fdl = lg_fd_lambda(x, lam, 2e-3f * lam);
            double scale = fabs(x) / lam; /* |∂f/∂λ| ≤ x²φ ≤ 0.4·|x|/λ·|λx| */
            ck_assert_msg(fabs(fdl - dl) <= 2e-3 * fabs(dl) + 2e-4 * scale, "λ=%g x=%g: df/dλ %.7g vs FD %.7g", lam, x,
                          dl, fdl);
            float dg = 0.0f;
            lg_act_backward(&dg, NULL, &one, &x, LG_ACT_GELU, 123.0f, 1);
            double fdg = lg_fd_x(LG_ACT_GELU, x, 1.0f, 2e-3f);
            ck_assert_msg(fabs(fdg - dg) <= 2e-3 * fabs(dg) + 2e-4, "gelu x=%g: %.7g vs FD %.7g", x, dg, fdg);
            checked++;
        }
    }
    ck_assert_int_ge(checked, 900);
}
END_TEST

/* sigmoid: forward against the double reference, backward against central
 * differences and against σ(1−σ); λ and dλ are ignored */
START_TEST(test_act_sigmoid)
{
    lg_rng r;
    lg_rng_init(&r, 5, 9);
    int checked = 0;
    for (int i = 0; i < 400; i++) {
        float x = (float)(lg_rng_uniform(&r) * 24.0 - 12.0), y, d = 0.0f, dl = 3.0f, one = 1.0f;
        lg_act_forward(&y, &x, LG_ACT_SIGMOID, 77.0f, 1);
        double ref = lg_act_eval(LG_ACT_SIGMOID, (double)x, 1.0);
        ck_assert_msg(lg_close(y, ref, 1e-6, 1e-30), "σ(%g) = %.9g, reference %.9g", x, y, ref);
        lg_act_backward(&d, &dl, &one, &x, LG_ACT_SIGMOID, 77.0f, 1);
        ck_assert_float_eq(dl, 3.0f);
        ck_assert_msg(lg_close(d, ref * (1.0 - ref), 1e-5, 1e-30), "σ'(%g) = %.9g, σ(1−σ) = %.9g", x, d,
                      ref * (1.0 - ref));
        double fd = lg_fd_x(LG_ACT_SIGMOID, x, 1.0f, 1e-2f);
        ck_assert_msg(fabs(fd - d) <= 2e-3 * fabs(d) + 1e-5, "x=%g: σ' %.7g vs FD %.7g", x, d, fd);
        checked++;
    }
    ck_assert_int_eq(checked, 400);
    /* in place, accumulation, extreme inputs saturate without overflow, NaN passes */
    float v[7] = {-1e37f, -100.0f, -90.0f, 0.0f, 90.0f, 100.0f, INFINITY}, dv[7] = {1, 1, 1, 1, 1, 1, 1},
          g[7] = {2, 2, 2, 2, 2, 2, 2};
    lg_act_backward(dv, NULL, g, v, LG_ACT_SIGMOID, 1.0f, 7);
    lg_act_forward(v, v, LG_ACT_SIGMOID, 1.0f, 7);
    const float want[7] = {0.0f, 0.0f, 0.0f, 0.5f, 1.0f, 1.0f, 1.0f};
    for (int i = 0; i < 7; i++) {
        ck_assert_float_eq(v[i], want[i]);
        ck_assert_msg(isfinite(dv[i]) && dv[i] >= 1.0f, "dinp[%d] = %g", i, dv[i]);
    }
    ck_assert_float_eq_tol(dv[3], 1.0f + 2.0f * 0.25f, 1e-6f);
    ck_assert_float_eq(dv[0], 1.0f);
    float xn = NAN, on, dn = 0.0f, one1 = 1.0f;
    lg_act_forward(&on, &xn, LG_ACT_SIGMOID, 1.0f, 1);
    lg_act_backward(&dn, NULL, &one1, &xn, LG_ACT_SIGMOID, 1.0f, 1);
    ck_assert(isnan(on) && isnan(dn));
}
END_TEST

START_TEST(test_act_other_kinds)
{
    const float x[6] = {-3.0f, -0.5f, 0.0f, 1e-4f, 0.5f, 7.0f};
    float out[6], dinp[6], dout[6] = {1, 2, 3, 4, 5, 6}, dl = 42.0f;
    lg_act_forward(out, x, LG_ACT_RELU, 5.0f, 6);
    for (int i = 0; i < 6; i++) ck_assert_float_eq(out[i], x[i] > 0 ? x[i] : 0.0f);
    memset(dinp, 0, sizeof dinp);
    lg_act_backward(dinp, &dl, dout, x, LG_ACT_RELU, 5.0f, 6);
    for (int i = 0; i < 6; i++) ck_assert_float_eq(dinp[i], x[i] > 0 ? dout[i] : 0.0f);
    lg_act_forward(out, x, LG_ACT_IDENTITY, 5.0f, 6);
    for (int i = 0; i < 6; i++) ck_assert_float_eq(out[i], x[i]);
    memset(dinp, 0, sizeof dinp);
    lg_act_backward(dinp, &dl, dout, x, LG_ACT_IDENTITY, 5.0f, 6);
    for (int i = 0; i < 6; i++) ck_assert_float_eq(dinp[i], dout[i]);
    /* gelu ignores λ and never touches dλ; it equals lgelu at λ = 1 */
    float g[6], l1[6];
    lg_act_forward(g, x, LG_ACT_GELU, 99.0f, 6);
    lg_act_forward(l1, x, LG_ACT_LGELU, 1.0f, 6);
    for (int i = 0; i < 6; i++) {
        ck_assert_float_eq(g[i], l1[i]);
        ck_assert_double_eq_tol(g[i], x[i] * 0.5 * erfc(-x[i] / sqrt(2.0)), 1e-6 * (1 + fabs(x[i])));
    }
    lg_act_backward(dinp, &dl, dout, x, LG_ACT_GELU, 99.0f, 6);
    ck_assert_float_eq(dl, 42.0f);
}
END_TEST

START_TEST(test_act_backward_accumulates)
{
    const float x[4] = {-1.0f, -0.1f, 0.3f, 2.0f}, dout[4] = {0.5f, -1.0f, 2.0f, 1.0f};
    float d1[4] = {0}, d2[4] = {10, 20, 30, 40}, l1 = 0.0f, l2 = 1.0f;
    lg_act_backward(d1, &l1, dout, x, LG_ACT_LGELU, 2.5f, 4);
    lg_act_backward(d2, &l2, dout, x, LG_ACT_LGELU, 2.5f, 4);
    for (int i = 0; i < 4; i++) ck_assert_float_eq_tol(d2[i], 10.0f * (float)(i + 1) + d1[i], 1e-5f);
    ck_assert_float_eq_tol(l2, 1.0f + l1, 1e-6f);
    ck_assert_float_ne(l1, 0.0f);
    /* out may alias inp */
    float y[4] = {-1.0f, -0.1f, 0.3f, 2.0f}, ref[4];
    lg_act_forward(ref, x, LG_ACT_LGELU, 2.5f, 4);
    lg_act_forward(y, y, LG_ACT_LGELU, 2.5f, 4);
    for (int i = 0; i < 4; i++) ck_assert_float_eq(y[i], ref[i]);
}
END_TEST

START_TEST(test_act_extreme_inputs)
{
    const float x[8] = {-1e37f, -1e30f, -50.0f, -1e-30f, 1e-30f, 50.0f, 1e30f, 1e37f};
    const float lams[3] = {1.0f, 159.6f, 1e6f};
    for (int li = 0; li < 3; li++) {
        float out[8], dinp[8] = {0}, one[8] = {1, 1, 1, 1, 1, 1, 1, 1}, dl = 0.0f;
        lg_act_forward(out, x, LG_ACT_LGELU, lams[li], 8);
        lg_act_backward(dinp, &dl, one, x, LG_ACT_LGELU, lams[li], 8);
        for (int i = 0; i < 8; i++) {
            ck_assert_msg(isfinite(out[i]) && isfinite(dinp[i]), "x=%g λ=%g: f=%g f'=%g", x[i], lams[li], out[i],
                          dinp[i]);
            /* far from 0 λ-GELU is ReLU */
            if (fabsf(x[i]) >= 50.0f) {
                ck_assert_float_eq(out[i], x[i] > 0 ? x[i] : 0.0f);
                ck_assert_float_eq(dinp[i], x[i] > 0 ? 1.0f : 0.0f);
            }
        }
        ck_assert_msg(isfinite(dl), "dλ not finite at λ=%g", lams[li]);
    }
    /* NaN propagates (training then stops on a NaN loss) */
    float xn = NAN, on, dn = 0.0f, one1 = 1.0f, dln = 0.0f;
    lg_act_forward(&on, &xn, LG_ACT_LGELU, 2.0f, 1);
    lg_act_backward(&dn, &dln, &one1, &xn, LG_ACT_LGELU, 2.0f, 1);
    ck_assert(isnan(on) && isnan(dn) && isnan(dln));
    float none = 5.0f, dnone = 5.0f;
    lg_act_forward(&none, &none, LG_ACT_LGELU, 2.0f, 0);
    lg_act_backward(&dnone, NULL, &none, &none, LG_ACT_LGELU, 2.0f, 0);
    ck_assert_float_eq(none, 5.0f);
    ck_assert_float_eq(dnone, 5.0f);
}
END_TEST

Suite *suite_act(void)
{
    Suite *s = suite_create("act");
    TCase *tc = tcase_create("core");
    lg_tcase_timeout(tc, 120);
    tcase_add_test(tc, test_act_golden);
    tcase_add_test(tc, test_act_table_kernels);
    tcase_add_test(tc, test_act_finite_differences);
    tcase_add_test(tc, test_act_other_kinds);
    tcase_add_test(tc, test_act_sigmoid);
    tcase_add_test(tc, test_act_backward_accumulates);
    suite_add_tcase(s, tc);
    TCase *tl = tcase_create("limits");
    lg_tcase_timeout(tl, 120);
    tcase_add_test(tl, test_act_extreme_inputs);
    suite_add_tcase(s, tl);
    return s;
}
