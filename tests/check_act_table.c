/* check_act_table.c — conformance of every entry of the activation table
 * (core/act.h): each hook its class needs is present and behaves. The tests
 * loop over LG_ACT_COUNT, so a new entry is checked here without a new
 * test:
 * - the MPFR interval image (act_mpfr.h) holds the double forward at
 *   sampled points and at the interval ends, and is tight on a point;
 * - the annealing target is a valid parameter, the anneal_as kind computes
 *   the same function, and annealing shrinks the gap to ReLU;
 * - an ONNX write → read of a one-hidden-layer net of the kind gives back
 *   the same kind, parameter and outputs. */
#include <check.h>
#include <math.h>
#include <mpfr.h>
#include <stdio.h>
#include <string.h>

#include "anneal/schedule.h"
#include "core/act.h"
#include "core/act_mpfr.h"
#include "core/net.h"
#include "onnx/act_onnx.h"
#include "onnx/onnx.h"
#include "core/rng.h"
#include "testutil.h"

/* Parameters to try for kind a: the fresh-layer value and a few others the
 * entry's param_ok accepts (kinds without a parameter: 1 only). */
static int lg_tab_params(lg_act a, double *p)
{
    const lg_act_info *ai = lg_act_info_of(a);
    int n = 0;
    p[n++] = lg_act_param_init(a, 0.1, NULL);
    if (!ai->has_param) return n;
    static const double more[] = {1.0, 2.5, 37.0, 0.3, -0.2, 1.5e3};
    for (size_t i = 0; i < sizeof more / sizeof more[0]; i++)
        if (lg_act_param_ok(a, more[i])) p[n++] = more[i];
    return n;
}

/* The double forward f(x; p) lies in [lo, hi] up to libm's error: a
 * relative 2^-40 (as act_relax.c trusts erfc and exp to 2^-39) plus 2^-1000. */
static int lg_tab_holds(const lg_iv *z, double f)
{
    double m = 0x1p-40 * fabs(f) + 0x1p-1000;
    return mpfr_cmp_d(z->lo, f + m) <= 0 && mpfr_cmp_d(z->hi, f - m) >= 0;
}

/* Every entry has the hooks of its class. */
START_TEST(test_act_table_hooks)
{
    for (int a = 0; a < LG_ACT_COUNT; a++) {
        const lg_act_info *ai = lg_act_info_of((lg_act)a);
        ck_assert_msg(ai && ai->name && ai->f && ai->df && ai->fwd && ai->bwd, "%d: core hooks", a);
        lg_act back;
        ck_assert_msg(lg_act_parse(ai->name, &back) == 0 && back == (lg_act)a, "%s: name does not parse back",
                      ai->name);
        ck_assert_msg(ai->iv != NULL, "%s: no interval image (witness gate)", ai->name);
        ck_assert_msg(lg_act_onnx_writer((lg_act)a) != NULL, "%s: no ONNX writer", ai->name);
        ck_assert_msg(ai->onnx_pattern != LG_ACT_ONNX_OP || ai->onnx_op, "%s: no ONNX op or pattern to read",
                      ai->name);
        ck_assert_msg(lg_act_info_of(ai->anneal_as), "%s: anneal_as out of range", ai->name);
        if (ai->smooth) ck_assert_msg(ai->d2max && ai->curv, "%s: smooth without relaxation data", ai->name);
        if (ai->relu_like) {
            ck_assert_msg(ai->gap && ai->smooth, "%s: relu-like without a gap", ai->name);
            const lg_act_info *as = lg_act_info_of(ai->anneal_as);
            ck_assert_msg(as->anneal_target && as->relu_like, "%s: relu-like but not annealable (as %s)", ai->name,
                          as->name);
        }
        if (ai->has_param)
            ck_assert_msg(ai->param_name && ai->param_sym && ai->dp && ai->param_ok, "%s: parameter hooks",
                          ai->name);
        if (ai->param_ok) ck_assert_msg(ai->param_range && ai->param_sym, "%s: parameter range text", ai->name);
        if (ai->softplus) ck_assert_msg(ai->has_param, "%s: softplus without a parameter", ai->name);
        if (ai->lambda_step) ck_assert_msg(ai->softplus, "%s: λ-space step without softplus", ai->name);
        if (ai->anneal_target) ck_assert_msg(ai->has_param, "%s: anneal target without a parameter", ai->name);
    }
    ck_assert_ptr_null(lg_act_info_of((lg_act)LG_ACT_COUNT));
}
END_TEST

/* The interval image of [l, u] holds f(x; p) at 33 points of it (the ends
 * included) for every parameter the kind accepts, and is a few ulps wide
 * on a point. */
START_TEST(test_act_table_interval_image)
{
    static const double box[][2] = {{-3.0, -1.0}, {-1.0, 0.5}, {-0.2, 2.0}, {1.0, 4.0}, {-40.0, -20.0},
                                    {0.0, 0.0},   {-0.75, -0.75}, {1e-3, 1e-3}, {-7.5, 6.25}, {25.0, 60.0}};
    lg_iv z, pt;
    lg_iv_work w;
    lg_iv_init(&z);
    lg_iv_init(&pt);
    lg_iv_work_init(&w);
    for (int a = 0; a < LG_ACT_COUNT; a++) {
        const lg_act_info *ai = lg_act_info_of((lg_act)a);
        double ps[8];
        int np = lg_tab_params((lg_act)a, ps);
        for (int ip = 0; ip < np; ip++)
            for (size_t b = 0; b < sizeof box / sizeof box[0]; b++) {
                double l = box[b][0], u = box[b][1], p = ps[ip];
                mpfr_set_d(z.lo, l, MPFR_RNDN);
                mpfr_set_d(z.hi, u, MPFR_RNDN);
                ck_assert_msg(ai->iv(&z, p, &w) == 0, "%s p=%g: image refused a valid parameter", ai->name, p);
                for (int i = 0; i <= 32; i++) {
                    double x = i == 32 ? u : l + (u - l) * i / 32.0;
                    double f = ai->f(x, p);
                    ck_assert_msg(lg_tab_holds(&z, f), "%s p=%g: f(%.17g) = %.17g outside the image of [%g, %g]",
                                  ai->name, p, x, f, l, u);
                    /* the point's own image: holds f and is tight */
                    mpfr_set_d(pt.lo, x, MPFR_RNDN);
                    mpfr_set_d(pt.hi, x, MPFR_RNDN);
                    ck_assert_int_eq(ai->iv(&pt, p, &w), 0);
                    ck_assert_msg(lg_tab_holds(&pt, f), "%s p=%g: f(%.17g) = %.17g outside its point image",
                                  ai->name, p, x, f);
                    double width = mpfr_get_d(pt.hi, MPFR_RNDU) - mpfr_get_d(pt.lo, MPFR_RNDD);
                    ck_assert_msg(width <= 0x1p-36 * fabs(f) + 0x1p-1000, "%s p=%g: image of %.17g is %g wide",
                                  ai->name, p, x, width);
                }
            }
    }
    lg_iv_clear(&z);
    lg_iv_clear(&pt);
    lg_iv_work_clear(&w);
    mpfr_free_cache();
}
END_TEST

/* The gap to ReLU is the sup of |f − relu| on sampled intervals (it holds
 * every sample of an interval and the samples come within their spacing of
 * it), and |f(x)| ≤ fmag(p)·|x|, which scales the gap's
 * rounding in the deviation bound. */
START_TEST(test_act_table_gap)
{
    static const double box[][2] = {{-3.0, -1.0}, {-1.0, 0.5}, {-0.2, 2.0}, {1.0, 4.0}, {-40.0, 30.0}};
    for (int a = 0; a < LG_ACT_COUNT; a++) {
        const lg_act_info *ai = lg_act_info_of((lg_act)a);
        if (!ai->relu_like) continue;
        double ps[8];
        int np = lg_tab_params((lg_act)a, ps);
        for (int ip = 0; ip < np; ip++)
            for (size_t b = 0; b < sizeof box / sizeof box[0]; b++) {
                double l = box[b][0], u = box[b][1], p = ps[ip], best = 0.0;
                int at_peak = -1;
                double g = ai->gap(p, l, u, &at_peak);
                double fm = ai->fmag ? ai->fmag(p) : 1.0;
                enum { N = 20000 };
                for (int i = 0; i <= N; i++) {
                    double x = i == N ? u : l + (u - l) * i / N;
                    double f = ai->f(x, p), d = fabs(f - (x > 0 ? x : 0.0));
                    /* asserted only on failure: a Check assertion per sample is slow */
                    if (!(d <= g * (1.0 + 1e-12) + 1e-300))
                        ck_abort_msg("%s p=%g: |f − relu|(%g) = %g above the gap %g", ai->name, p, x, d, g);
                    if (!(fabs(f) <= fm * fabs(x) * (1.0 + 1e-15)))
                        ck_abort_msg("%s p=%g: |f(%g)| = %g above %g·|x|", ai->name, p, x, f, fm);
                    best = d > best ? d : best;
                }
                ck_assert_msg(at_peak == 0 || at_peak == 1, "%s: at_peak not set", ai->name);
                /* |f − relu| changes by at most fmag·|Δx| between samples
                 * (slope ≤ 1 for the gated kinds); f − relu is computed with
                 * an error of ~1e-16·|x| */
                double slack = 1.25 * fm * (u - l) / N + 1e-15 * (fabs(l) > fabs(u) ? fabs(l) : fabs(u));
                ck_assert_msg(best >= g - slack, "%s p=%g [%g, %g]: gap %g far above the samples' %g",
                              ai->name, p, l, u, g, best);
            }
    }
}
END_TEST

/* The annealing target is a valid parameter of its kind and brings the
 * largest gap to ReLU below the fresh layer's; anneal_as computes the same
 * function at p = 1. */
/* The shape facts the relaxation reads instead of kind names: a bounded
 * kind stays in its range, an increasing one never decreases, a
 * piecewise-linear one is linear on each side of 0; each checked on dense
 * samples for every accepted parameter. */
START_TEST(test_act_table_shape)
{
    int n_bounded = 0, n_increasing = 0, n_pwl = 0;
    for (int a = 0; a < LG_ACT_COUNT; a++) {
        const lg_act_info *ai = lg_act_info_of((lg_act)a);
        if (!ai->smooth) continue;
        n_bounded += ai->bounded;
        n_increasing += ai->increasing;
        n_pwl += ai->pwl;
        if (ai->increasing) ck_assert_msg(!ai->softplus, "%s: increasing presets need an unrounded p", ai->name);
        double ps[8];
        int np = lg_tab_params((lg_act)a, ps);
        for (int ip = 0; ip < np; ip++) {
            double p = ps[ip], prev = -INFINITY;
            enum { N = 40000 };
            for (int i = 0; i <= N; i++) {
                double x = -60.0 + 120.0 * i / N, f = ai->f(x, p);
                if (ai->bounded && !(f >= ai->range_lo && f <= ai->range_hi))
                    ck_abort_msg("%s p=%g: f(%g) = %g outside [%g, %g]", ai->name, p, x, f, ai->range_lo, ai->range_hi);
                if (ai->increasing && !(f >= prev)) ck_abort_msg("%s p=%g: f decreases at %g", ai->name, p, x);
                if (ai->pwl && x != 0.0) {
                    double s = x > 0 ? ai->f(1.0, p) : -ai->f(-1.0, p);
                    if (!(fabs(f - s * x) <= 1e-15 * fabs(x)))
                        ck_abort_msg("%s p=%g: f(%g) = %g, not linear (slope %g)", ai->name, p, x, f, s);
                }
                prev = f;
            }
        }
    }
    ck_assert_int_ge(n_bounded + n_increasing + n_pwl, 3); /* the facts are set somewhere (sigmoid, prelu) */
}
END_TEST

START_TEST(test_act_table_anneal)
{
    static const double targets[] = {1.0, 10.0, 159.57691216057307, 1e4};
    for (int a = 0; a < LG_ACT_COUNT; a++) {
        const lg_act_info *ai = lg_act_info_of((lg_act)a);
        if (ai->anneal_as != (lg_act)a) {
            const lg_act_info *as = lg_act_info_of(ai->anneal_as);
            double p = lg_act_param_init((lg_act)a, 0.1, NULL);
            for (int i = 0; i <= 40; i++) {
                double x = -8.0 + 16.0 * i / 40.0;
                ck_assert_msg(as->f(x, 1.0) == ai->f(x, p), "%s as %s: f(%g) differs", ai->name, as->name, x);
            }
        }
        if (!ai->anneal_target) {
            ck_assert_msg(isnan(lg_anneal_target_for((lg_act)a, 100.0)), "%s: a target without a hook", ai->name);
            continue;
        }
        for (size_t t = 0; t < sizeof targets / sizeof targets[0]; t++) {
            double p = lg_anneal_target_for((lg_act)a, targets[t]);
            ck_assert_msg(p == ai->anneal_target(targets[t]), "%s: lg_anneal_target_for is not the hook", ai->name);
            ck_assert_msg(lg_act_param_ok((lg_act)a, p), "%s: target %g for λ_target %g is not a valid parameter",
                          ai->name, p, targets[t]);
            if (ai->gap && targets[t] > 1.0) {
                double p0 = lg_act_param_init((lg_act)a, 0.1, NULL);
                double g0 = ai->gap(p0, -10.0, 10.0, NULL), g1 = ai->gap(p, -10.0, 10.0, NULL);
                ck_assert_msg(g1 < g0, "%s: gap %g at the target %g is not below %g at %g", ai->name, g1, p, g0, p0);
            }
        }
    }
}
END_TEST

/* ONNX write → read of 3 → 4 (kind) → 2 in double gives back the kind, its
 * parameter and the same outputs, with a random and with a float-exact
 * parameter. (In float a GELU's divisor is fl32(√2), which is an lgelu
 * layer, DESIGN.md §3.) */
START_TEST(test_act_table_onnx_roundtrip)
{
    for (int a = 0; a < LG_ACT_COUNT; a++)
        for (int fl = 0; fl < 2; fl++) {
            const lg_act_info *ai = lg_act_info_of((lg_act)a);
            int dims[] = {3, 4, 2};
            lg_net n0, n1;
            ck_assert_int_eq(lg_net_init(&n0, 2, dims, (lg_act)a), LG_OK);
            lg_rng r;
            lg_rng_init(&r, 1234u + (unsigned)a, 7);
            for (size_t i = 0; i < n0.n_params; i++) {
                double v = 0.8 * lg_rng_normal(&r);
                n0.params[i] = fl ? (double)(float)v : v;
            }
            double p = ai->has_param ? (fl ? 1.75 : lg_act_param_init((lg_act)a, n0.t, &n0.layers[0].s)) : 1.0;
            if (ai->has_param && !lg_act_param_ok((lg_act)a, p)) p = 0.375;
            n0.layers[0].lambda = p;
            if (ai->softplus) n0.layers[0].s = lg_s_from_lambda(p, n0.t);
            else if (ai->has_param) n0.layers[0].s = p;
            const char *path = lg_test_tmpfile(".onnx");
            ck_assert_msg(lg_onnx_write_dtype(&n0, path, LG_ONNX_DTYPE_FLOAT64, NULL) == LG_OK, "%s: write: %s",
                          ai->name, lg_errmsg());
            ck_assert_msg(lg_onnx_read(&n1, path) == LG_OK, "%s: read: %s", ai->name, lg_errmsg());
            ck_assert_int_eq(n1.n_layers, 2);
            ck_assert_msg(n1.layers[0].act == (lg_act)a, "%s: read back as %s", ai->name,
                          lg_act_name(n1.layers[0].act));
            ck_assert_msg(n1.layers[0].lambda == p, "%s: parameter %.17g read back as %.17g", ai->name, p,
                          n1.layers[0].lambda);
            ck_assert_int_eq(n1.layers[1].act, LG_ACT_IDENTITY);
            double x[3], y0[2], y1[2], sc[8];
            for (int s = 0; s < 16; s++) {
                for (int i = 0; i < 3; i++) x[i] = 3.0 * lg_rng_normal(&r);
                lg_net_forward(&n0, x, y0, sc);
                lg_net_forward(&n1, x, y1, sc);
                for (int j = 0; j < 2; j++)
                    ck_assert_msg(y0[j] == y1[j], "%s (p %.17g): output %d %.17g became %.17g", ai->name, p, j,
                                  y0[j], y1[j]);
            }
            lg_net_free(&n0);
            lg_net_free(&n1);
        }
}
END_TEST

/* The reader's lookup gives every entry back from its own ONNX form, and
 * nothing for an op no entry has. */
START_TEST(test_act_table_onnx_lookup)
{
    for (int a = 0; a < LG_ACT_COUNT; a++) {
        const lg_act_info *ai = lg_act_info_of((lg_act)a);
        lg_act got;
        int alias = -1;
        double p = lg_act_param_init((lg_act)a, 0.1, NULL);
        ck_assert_msg(lg_act_onnx_kind(ai->onnx_pattern, p, ai->onnx_op, &alias, &got) == 0 && got == (lg_act)a &&
                          alias == 0,
                      "%s: its own ONNX form reads as %d", ai->name, (int)got);
        if (ai->onnx_op_alias)
            ck_assert_msg(lg_act_onnx_kind(LG_ACT_ONNX_OP, 1.0, ai->onnx_op_alias, &alias, &got) == 0 &&
                              got == (lg_act)a && alias == 1,
                          "%s: alias %s", ai->name, ai->onnx_op_alias);
    }
    lg_act got;
    ck_assert_int_eq(lg_act_onnx_kind(LG_ACT_ONNX_OP, 1.0, "Tanh", NULL, &got), -1);
    ck_assert_int_eq(lg_act_onnx_kind(LG_ACT_ONNX_OP, 1.0, NULL, NULL, &got), -1);
}
END_TEST

/* Parameters outside a kind's range are refused by validation with the
 * entry's own words, and the interval image refuses what it cannot hold. */
START_TEST(test_act_table_limits)
{
    for (int a = 0; a < LG_ACT_COUNT; a++) {
        const lg_act_info *ai = lg_act_info_of((lg_act)a);
        if (!ai->param_ok) continue;
        static const double bad[] = {NAN, INFINITY, -INFINITY, 0.0, -1.0, 0.5};
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            if (ai->param_ok(bad[i])) continue;
            int dims[] = {2, 3, 1};
            lg_net n;
            ck_assert_int_eq(lg_net_init(&n, 2, dims, (lg_act)a), LG_OK);
            n.layers[0].lambda = bad[i];
            ck_assert_int_eq(lg_net_validate(&n), LG_ERR_FORMAT);
            ck_assert_msg(strstr(lg_errmsg(), ai->param_range) && strstr(lg_errmsg(), ai->name), "%s %g: %s",
                          ai->name, bad[i], lg_errmsg());
            lg_net_free(&n);
        }
    }
    lg_iv z;
    lg_iv_work w;
    lg_iv_init(&z);
    lg_iv_work_init(&w);
    for (int a = 0; a < LG_ACT_COUNT; a++) {
        const lg_act_info *ai = lg_act_info_of((lg_act)a);
        if (!ai->softplus) continue;
        mpfr_set_d(z.lo, -1.0, MPFR_RNDN);
        mpfr_set_d(z.hi, 1.0, MPFR_RNDN);
        ck_assert_msg(ai->iv(&z, 0.0, &w) == -1, "%s: image at p = 0", ai->name);
    }
    lg_iv_clear(&z);
    lg_iv_work_clear(&w);
    mpfr_free_cache();
}
END_TEST

Suite *suite_act_table(void)
{
    Suite *s = suite_create("act_table");
    TCase *tc = tcase_create("core");
    lg_tcase_timeout(tc, 120);
    tcase_add_test(tc, test_act_table_hooks);
    tcase_add_test(tc, test_act_table_interval_image);
    tcase_add_test(tc, test_act_table_gap);
    tcase_add_test(tc, test_act_table_shape);
    tcase_add_test(tc, test_act_table_anneal);
    tcase_add_test(tc, test_act_table_onnx_roundtrip);
    tcase_add_test(tc, test_act_table_onnx_lookup);
    suite_add_tcase(s, tc);
    TCase *tl = tcase_create("limits");
    lg_tcase_timeout(tl, 120);
    tcase_add_test(tl, test_act_table_limits);
    suite_add_tcase(s, tl);
    return s;
}
