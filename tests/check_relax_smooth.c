/* check_relax_smooth.c — the activation table (core/act.h) and the certified
 * smooth relaxations (core/act_relax.h) against 256-bit MPFR: every line
 * must hold for the exact f at dense samples and at both ends of [l, u],
 * including rounding-hard points (point intervals, intervals touching the
 * inflection points and the GELU minimum, tiny widths at large magnitude,
 * parameters whose next double the upper line must cover), and the lines
 * must be tight on narrow intervals (a vacuous relaxation is not useful). */
#include <check.h>
#include <float.h>
#include <math.h>
#include <mpfr.h>
#include <string.h>

#include "core/act_relax.h"
#include "core/net.h"
#include "core/rng.h"
#include "verify/backsub.h"
#include "testutil.h"

#define LG_TP 256

/* f(x; p) at 256 bits, rounded to nearest (the error, ~2^-250 relative, is
 * far below the margins the checks use). */
static void lg_mp_f(mpfr_t r, lg_act a, double x, double p)
{
    mpfr_t t, s;
    mpfr_inits2(LG_TP, t, s, (mpfr_ptr)0);
    mpfr_set_d(r, x, MPFR_RNDN);
    switch (a) {
    case LG_ACT_GELU: p = 1.0; /* fall through */
    case LG_ACT_LGELU:
        mpfr_mul_d(t, r, p, MPFR_RNDN);
        mpfr_sqrt_ui(s, 2, MPFR_RNDN);
        mpfr_div(t, t, s, MPFR_RNDN);
        mpfr_neg(t, t, MPFR_RNDN);
        mpfr_erfc(t, t, MPFR_RNDN);
        mpfr_mul_d(t, t, 0.5, MPFR_RNDN);
        mpfr_mul(r, r, t, MPFR_RNDN);
        break;
    case LG_ACT_SIGMOID: p = 1.0; /* fall through */
    case LG_ACT_SWISH:
        mpfr_mul_d(t, r, -p, MPFR_RNDN);
        mpfr_exp(t, t, MPFR_RNDN);
        mpfr_add_ui(t, t, 1, MPFR_RNDN);
        if (a == LG_ACT_SIGMOID) mpfr_ui_div(r, 1, t, MPFR_RNDN);
        else mpfr_div(r, r, t, MPFR_RNDN);
        break;
    case LG_ACT_PRELU:
        if (x < 0) mpfr_mul_d(r, r, p, MPFR_RNDN);
        break;
    default: break;
    }
    mpfr_clears(t, s, (mpfr_ptr)0);
}

/* sg·(f(x) − (s·x + c)) ≥ 0, f at prec bits (relative error ≤ 2^(8−prec)).
 * Returns 1 (holds with room), 0 (violated beyond the oracle's error) or
 * −1 (too close to tell at this precision). */
static int lg_mp_cmp(const mpfr_t f, mpfr_prec_t prec, double x, double s, double c, int sg)
{
    mpfr_t L, d, tol;
    mpfr_inits2(2300, L, d, (mpfr_ptr)0);
    mpfr_init2(tol, 64);
    mpfr_set_d(L, s, MPFR_RNDN);
    mpfr_mul_d(L, L, x, MPFR_RNDN); /* exact */
    mpfr_add_d(L, L, c, MPFR_RNDN); /* exact at 2300 bits for any two doubles */
    mpfr_sub(d, f, L, MPFR_RNDN);
    if (sg < 0) mpfr_neg(d, d, MPFR_RNDN);
    mpfr_abs(tol, f, MPFR_RNDU);
    mpfr_mul_2si(tol, tol, 8 - (long)prec, MPFR_RNDU);
    int r = mpfr_cmp(d, tol) >= 0 ? 1 : (mpfr_neg(tol, tol, MPFR_RNDN), mpfr_cmp(d, tol) < 0 ? 0 : -1);
    if (mpfr_zero_p(f)) r = mpfr_sgn(d) >= 0 ? 1 : 0; /* f(0) = 0 and prelu's zeros are exact */
    mpfr_clears(L, d, tol, (mpfr_ptr)0);
    return r;
}

/* Both lines at x for f(·; p): 256 bits first, 2300 bits when too close. */
static void lg_mp_check(lg_act a, double p, double x, const double *lines, const int *sides, int n, int *ok)
{
    mpfr_t f;
    mpfr_init2(f, LG_TP);
    lg_mp_f(f, a, x, p);
    for (int i = 0; i < n; i++) {
        double s = lines[2 * i], c = lines[2 * i + 1];
        if (!isfinite(c)) {
            ok[i] = sides[i] > 0 ? c < 0 : c > 0;
            continue;
        }
        int r = lg_mp_cmp(f, LG_TP, x, s, c, sides[i]);
        if (r < 0) {
            mpfr_t g;
            mpfr_init2(g, 2300);
            lg_mp_f(g, a, x, p);
            r = lg_mp_cmp(g, 2300, x, s, c, sides[i]) != 0;
            mpfr_clear(g);
        }
        ok[i] = r;
    }
    mpfr_clear(f);
}

static const lg_act lg_smooth[] = {LG_ACT_GELU, LG_ACT_LGELU, LG_ACT_SWISH, LG_ACT_SIGMOID, LG_ACT_PRELU};

/* Check one relaxation densely; the parameter's next double is checked for
 * the upper line of lgelu/swish (act_relax.h), p itself for the lower. */
static void lg_check_one(lg_act a, double p, double l, double u, double tlo, double tup)
{
    lg_act_lines r;
    lg_act_relax(a, p, l, u, tlo, tup, &r);
    double flo, fhi;
    lg_act_image(a, p, l, u, &flo, &fhi);
    double pu = (a == LG_ACT_LGELU || a == LG_ACT_SWISH) ? nextafter(p, INFINITY) : p;
    const double lines[8] = {r.lo_s, r.lo_c, r.up_s, r.up_c, 0.0, flo, 0.0, fhi};
    const int sides[4] = {1, -1, 1, -1};
    static const char *what[4] = {"lower line", "upper line", "image's lower end", "image's upper end"};
    const int n = 150;
    for (int i = 0; i <= n + 2; i++) {
        double x = i == n + 1 ? l : i == n + 2 ? u : l + (u - l) * i / n;
        if (x < l) x = l;
        if (x > u) x = u;
        for (int q = 0; q < (pu == p ? 1 : 2); q++) {
            int ok[4];
            lg_mp_check(a, q ? pu : p, x, lines, sides, 4, ok);
            for (int k = 0; k < 4; k++)
                ck_assert_msg(ok[k], "%s p=%.17g [%.17g, %.17g] %s %.17g·x%+.17g fails at %.17g", lg_act_name(a),
                              q ? pu : p, l, u, what[k], lines[2 * k], lines[2 * k + 1], x);
        }
    }
}

START_TEST(test_relax_smooth_random)
{
    lg_rng r;
    lg_rng_init(&r, 2026, 0);
    for (int k = 0; k < 5; k++) {
        lg_act a = lg_smooth[k];
        for (int t = 0; t < 60; t++) {
            double p = a == LG_ACT_PRELU ? 2.0 * lg_rng_uniform(&r) - 0.5 : 1.0 + 20.0 * lg_rng_uniform(&r) * lg_rng_uniform(&r);
            double sc = t % 3 == 0 ? 0.1 : t % 3 == 1 ? 2.0 : 12.0;
            double x0 = sc * (2.0 * lg_rng_uniform(&r) - 1.0), x1 = sc * (2.0 * lg_rng_uniform(&r) - 1.0);
            double l = x0 < x1 ? x0 : x1, u = x0 < x1 ? x1 : x0;
            double tl = t % 4 == 0 ? lg_rng_uniform(&r) : NAN, tu = t % 4 == 0 ? lg_rng_uniform(&r) : NAN;
            lg_check_one(a, p, l, u, tl, tu);
        }
    }
}
END_TEST

/* Rounding-hard cases: point intervals, widths of a few ulps, the ends on
 * inflection points and on the GELU minimum −0.7518/λ, large magnitudes, a
 * parameter whose next double matters (λ = 1e15-ish scale of λx). */
START_TEST(test_relax_smooth_hard)
{
    const double s2 = 1.4142135623730951, sw = 2.3993572805154675, gm = -0.75179152469356445746;
    struct {
        lg_act a;
        double p, l, u;
    } c[] = {
        {LG_ACT_GELU, 1, gm, gm},
        {LG_ACT_GELU, 1, -s2, s2},
        {LG_ACT_GELU, 1, -3, gm},
        {LG_ACT_GELU, 1, gm, nextafter(gm, 1)},
        {LG_ACT_GELU, 1, -40, -38},
        {LG_ACT_GELU, 1, 1e6, 1e6 + 1e-9},
        {LG_ACT_GELU, 1, -1e-300, 1e-300},
        {LG_ACT_LGELU, 159.58, -s2 / 159.58, s2 / 159.58},
        {LG_ACT_LGELU, 159.58, -1, 1},
        {LG_ACT_LGELU, 3.000000000000001, -2, 0.1},
        {LG_ACT_LGELU, 1e8, -1e-8, 1e-8},
        {LG_ACT_SWISH, 1, -sw, sw},
        {LG_ACT_SWISH, 277.26, -0.02, 0.03},
        {LG_ACT_SWISH, 1, -50, -1},
        {LG_ACT_SWISH, 1, 0.5, 0.5},
        {LG_ACT_SIGMOID, 1, -30, 30},
        {LG_ACT_SIGMOID, 1, 0, 0},
        {LG_ACT_SIGMOID, 1, -1e-12, 1e-12},
        {LG_ACT_SIGMOID, 1, 700, 720},
        {LG_ACT_PRELU, 0.25, -1, 1},
        {LG_ACT_PRELU, 1.5, -1, 1},
        {LG_ACT_PRELU, -0.3, -3, 0},
        {LG_ACT_PRELU, 0.1, 1e-300, 3e-300},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        lg_check_one(c[i].a, c[i].p, c[i].l, c[i].u, NAN, NAN);
        lg_check_one(c[i].a, c[i].p, c[i].l, c[i].u, 0.0, 1.0);
        lg_check_one(c[i].a, c[i].p, c[i].l, c[i].u, 0.5, 0.5);
    }
}
END_TEST

/* Narrow intervals give tight lines (the certification costs ~K·h²/8), wide
 * ones stay finite; infinite bounds give the vacuous lines. */
START_TEST(test_relax_smooth_tight)
{
    for (int k = 0; k < 5; k++) {
        lg_act a = lg_smooth[k];
        double p = a == LG_ACT_PRELU ? 0.25 : 2.0;
        for (double x = -4; x <= 4; x += 0.37) {
            lg_act_lines r;
            double w = a == LG_ACT_PRELU && x < 0 && x + 1e-3 > 0 ? 0 : 1e-3;
            lg_act_relax(a, p, x, x + w, NAN, NAN, &r);
            double m = x + w / 2, gap = (r.up_s * m + r.up_c) - (r.lo_s * m + r.lo_c);
            ck_assert_msg(gap >= 0 && gap < 1e-6, "%s [%g, %g]: gap %g at the middle", lg_act_name(a), x, x + w, gap);
        }
        lg_act_lines r;
        lg_act_relax(a, p, -30, 30, NAN, NAN, &r);
        ck_assert_msg(isfinite(r.lo_c) && isfinite(r.up_c), "%s on [-30, 30]: lines not finite", lg_act_name(a));
        lg_act_relax(a, p, -INFINITY, 1, NAN, NAN, &r);
        ck_assert(r.lo_s == 0 && r.up_s == 0 && (a == LG_ACT_SIGMOID ? r.lo_c == 0 && r.up_c == 1 : r.lo_c == -INFINITY));
    }
}
END_TEST

/* The table: every smooth entry's df and dp against central differences,
 * and its gap against sampling. */
START_TEST(test_relax_smooth_table)
{
    for (int k = 0; k < 5; k++) {
        lg_act a = lg_smooth[k];
        const lg_act_info *I = lg_act_info_of(a);
        ck_assert(I && I->smooth && I->d2max && I->curv);
        double p = a == LG_ACT_PRELU ? 0.3 : 1.7;
        for (double x = -3.1; x < 3.1; x += 0.29) {
            double h = 1e-6, fd = (I->f(x + h, p) - I->f(x - h, p)) / (2 * h);
            ck_assert_msg(fabs(fd - I->df(x, p)) < 1e-6, "%s df at %g: %g vs %g", I->name, x, I->df(x, p), fd);
            if (I->dp) {
                double fp = (I->f(x, p + h) - I->f(x, p - h)) / (2 * h);
                ck_assert_msg(fabs(fp - I->dp(x, p)) < 1e-6, "%s dp at %g", I->name, x);
            }
            double d2 = (I->f(x + 1e-4, p) - 2 * I->f(x, p) + I->f(x - 1e-4, p)) / 1e-8;
            ck_assert_msg(a == LG_ACT_PRELU || fabs(d2) <= I->d2max(p, x - 1e-4, x + 1e-4) + 1e-5, "%s f'' at %g", I->name, x);
        }
        if (I->gap) {
            double G = I->gap(p, -2, 1, NULL), obs = 0;
            for (double x = -2; x <= 1; x += 1e-4) {
                double g = fabs(I->f(x, p) - (x > 0 ? x : 0));
                if (g > obs) obs = g;
            }
            ck_assert_msg(obs <= G * (1 + 1e-9) && obs >= G * (1 - 1e-4), "%s gap %g, sampled %g", I->name, G, obs);
        }
    }
}
END_TEST


/* α-CROWN's lines of a smooth neuron (verify/backsub.h), for every smooth
 * kind of the activation table: every α of [0, 1] (family lines and their
 * convex combinations, rounding included) gives a lower line below and an
 * upper line above the exact f on the neuron's interval — fixed intervals
 * and random ones, random parameters, the upper line also at next(p) (the
 * parameter's rounding, act_relax.h) — against MPFR at dense samples and the
 * ends; NaN α is the area-best line of each side, which sits in its family at
 * lg_backsub_alpha0; and on a wide interval some α beats it at one end (the
 * families are not constant). */
START_TEST(test_relax_smooth_family)
{
    const double gm = -0.75179152469356445746;
    enum { NF = 8, NR = 10, NI = NF + NR };
    const double iv0[NF][2] = {{-0.3, 0.3}, {-1.5, 4}, {-6, 1}, {gm, 2}, {-40, -38}, {-3, gm}, {0.5, 0.5 + 1e-9}, {-12, 12}};
    lg_rng r;
    lg_rng_init(&r, 77, 0);
    int kinds = 0;
    for (int ak = 0; ak < LG_ACT_COUNT; ak++) {
        lg_act a = (lg_act)ak;
        const lg_act_info *I = lg_act_info_of(a);
        if (!I->smooth) continue;
        kinds++;
        double iv[NI][2];
        memcpy(iv, iv0, sizeof iv0);
        for (int j = NF; j < NI; j++) { /* random intervals of every scale */
            double c = 16 * (2 * lg_rng_uniform(&r) - 1), w = pow(10.0, 3 * lg_rng_uniform(&r) - 2);
            iv[j][0] = c - w * lg_rng_uniform(&r), iv[j][1] = iv[j][0] + w;
        }
        lg_net net;
        int dims[3] = {1, NI, 1};
        ck_assert(lg_net_init(&net, 2, dims, a) == LG_OK);
        double p = a == LG_ACT_PRELU ? 0.25 : !I->has_param ? 1.0 : 1.0 + 4 * lg_rng_uniform(&r);
        net.layers[0].lambda = p;
        double pu = I->softplus ? nextafter(p, INFINITY) : p;
        lg_bounds b;
        ck_assert(lg_bounds_init(&b, &net) == LG_OK);
        b.xlo[0] = -1, b.xhi[0] = 1;
        for (int j = 0; j < NI; j++) b.lo[0][j] = iv[j][0], b.hi[0][j] = iv[j][1];
        lg_backsub bs;
        ck_assert(lg_backsub_init(&bs, &b, &net, 1) == LG_OK);
        int moved[2] = {0, 0};
        for (int j = 0; j < NI; j++)
            for (int up = 0; up < 2; up++) {
                double l = iv[j][0], u = iv[j][1], s0, c0, s1, c1, sg = up ? -1 : 1;
                ck_assert(lg_backsub_fam_line(&bs, 0, j, up, NAN, &s0, &c0, NULL, NULL));
                ck_assert(lg_backsub_fam_line(&bs, 0, j, up, lg_backsub_alpha0(&bs, 0, j, up), &s1, &c1, NULL, NULL));
                ck_assert_msg(s0 == s1 && c0 == c1, "%s [%g, %g] %s: NaN α is not the family's area-best line",
                              lg_act_name(a), l, u, up ? "upper" : "lower");
                for (int q = 0; q <= 12; q++) {
                    double al = q < 9 ? q / 8.0 : lg_rng_uniform(&r), sl, cl;
                    ck_assert(lg_backsub_fam_line(&bs, 0, j, up, al, &sl, &cl, NULL, NULL));
                    const int n = lg_test_quick() ? 8 : 24; /* points per line (fewer under the sanitizers) */
                    for (int i = 0; i <= n + 1; i++) {
                        double x = i == n + 1 ? u : l + (u - l) * i / n, line[2] = {sl, cl};
                        int side = up ? -1 : 1, ok;
                        if (x > u) x = u;
                        lg_mp_check(a, up ? pu : p, x, line, &side, 1, &ok);
                        ck_assert_msg(ok, "%s p=%.17g [%.17g, %.17g] α=%g: %.17g·x%+.17g %s f at %.17g", lg_act_name(a),
                                      up ? pu : p, l, u, al, sl, cl, up ? "below" : "above", x);
                    }
                    if (u - l > 1 && (sg * (sl * l + cl) > sg * (s0 * l + c0) + 1e-6 ||
                                      sg * (sl * u + cl) > sg * (s0 * u + c0) + 1e-6))
                        moved[up] = 1;
                }
            }
        ck_assert_msg((moved[0] && moved[1]) || a == LG_ACT_PRELU, "%s: no α beats the area-best %s line at an end",
                      lg_act_name(a), moved[0] ? "upper" : "lower");
        lg_backsub_free(&bs);
        lg_bounds_free(&b);
        lg_net_free(&net);
    }
    ck_assert_int_ge(kinds, 5);
}
END_TEST


/* The per-thread memo of lg_act_relax (act_relax.c): asked again, in another
 * order and after evictions, every argument tuple gets bit for bit the
 * lines it got the first time, and tuples that differ in one bit of one
 * argument (l, tlo) are not confused. */
START_TEST(test_relax_smooth_memo)
{
    enum { N = 20000 };
    static double arg[N][5];
    static lg_act_lines first[N];
    static int kind[N];
    lg_rng r;
    lg_rng_init(&r, 5, 0);
    for (int i = 0; i < N; i++) {
        kind[i] = lg_smooth[i % 5];
        double x0 = 4 * (2 * lg_rng_uniform(&r) - 1), w = 3 * lg_rng_uniform(&r);
        if (i % 7 == 1) x0 = nextafter(arg[i - 1][1], INFINITY), w = arg[i - 1][2] - arg[i - 1][1]; /* one bit of l */
        double t = i % 3 == 0 ? NAN : lg_rng_uniform(&r);
        if (i % 7 == 2 && arg[i - 1][3] == arg[i - 1][3]) t = nextafter(arg[i - 1][3], 2.0); /* one bit of tlo */
        double a[5] = {kind[i] == LG_ACT_PRELU ? 0.25 : 1.5, x0, x0 + w, t, t};
        memcpy(arg[i], a, sizeof a);
        lg_act_relax(kind[i], a[0], a[1], a[2], a[3], a[4], &first[i]);
    }
    for (int k = 0; k < N; k++) {
        int i = (int)(((long)k * 7919) % N);
        lg_act_lines again;
        lg_act_relax(kind[i], arg[i][0], arg[i][1], arg[i][2], arg[i][3], arg[i][4], &again);
        ck_assert_msg(memcmp(&again, &first[i], sizeof again) == 0, "tuple %d: lines differ when asked again", i);
    }
}
END_TEST

Suite *suite_relax_smooth(void)
{
    Suite *s = suite_create("relax_smooth");
    TCase *tc = tcase_create("core");
    lg_tcase_timeout(tc, 120);
    tcase_add_test(tc, test_relax_smooth_table);
    tcase_add_test(tc, test_relax_smooth_random);
    tcase_add_test(tc, test_relax_smooth_hard);
    tcase_add_test(tc, test_relax_smooth_tight);
    tcase_add_test(tc, test_relax_smooth_memo);
    suite_add_tcase(s, tc);
    TCase *tf = tcase_create("family");
    lg_tcase_timeout(tf, 120);
    tcase_add_test(tf, test_relax_smooth_family);
    suite_add_tcase(s, tf);
    return s;
}
