/* check_relax_tf.c — the relaxations of the Transformer node kinds
 * (verify/relax_bilinear.h, relax_softmax.h, relax_layernorm.h) against
 * exact or high-precision evaluation: every plane must hold for the exact
 * real function at the box's corners, a dense grid (bilinear) or sampled
 * and vertex points (softmax, layernorm), on random boxes at many scales and
 * on adversarial ones (degenerate, huge, tiny, subnormal, far-apart logits,
 * tiny variance); planes must be tight where they should (McCormick's
 * corners; second order on narrow boxes), and images must contain the
 * function. Planes are evaluated exactly (GMP rationals, or MPFR at 2300
 * bits with every operation checked exact); softmax and layernorm at 1024
 * bits, a gap smaller than the evaluation's error counting as a failure. */
#include <check.h>
#include <float.h>
#include <gmp.h>
#include <math.h>
#include <mpfr.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/rng.h"
#include "testutil.h"
#include "verify/devtf.h"
#include "verify/relax_bilinear.h"
#include "verify/relax_layernorm.h"
#include "verify/relax_plane.h"
#include "verify/relax_softmax.h"

/* ---------- bilinear: exact rationals ---------- */

/* sg·(x·y − (a·x + b·y + c)) ≥ 0 exactly (sg = +1 lower plane, −1 upper). */
static int lg_bil_holds(double x, double y, double a, double b, double c, int sg)
{
    mpq_t q, t, u;
    mpq_inits(q, t, u, NULL);
    mpq_set_d(t, x);
    mpq_set_d(u, y);
    mpq_mul(q, t, u);
    mpq_set_d(u, a);
    mpq_mul(u, u, t);
    mpq_sub(q, q, u);
    mpq_set_d(t, y);
    mpq_set_d(u, b);
    mpq_mul(u, u, t);
    mpq_sub(q, q, u);
    mpq_set_d(u, c);
    mpq_sub(q, q, u);
    int s = mpq_sgn(q) * sg;
    mpq_clears(q, t, u, NULL);
    return s >= 0;
}

/* x·y − plane, as a double (for tightness; the sign is checked exactly). */
static double lg_bil_gap(double x, double y, double a, double b, double c, int sg)
{
    return sg * (x * y - (a * x + b * y + c));
}

static double lg_pick(lg_rng *r, double lo, double hi)
{
    double t = lg_rng_uniform(r);
    double v = lo + t * (hi - lo);
    return v < lo ? lo : (v > hi ? hi : v);
}

static void lg_bil_check_box(double lx, double ux, double ly, double uy, double al, double au, lg_rng *r,
                             long *npts)
{
    lg_bilinear_planes p;
    int fin = lg_relax_bilinear(lx, ux, ly, uy, al, au, &p);
    ck_assert_msg(fin, "bilinear planes not finite on [%a,%a]x[%a,%a]", lx, ux, ly, uy);
    double ilo, ihi;
    lg_bilinear_image(lx, ux, ly, uy, &ilo, &ihi);
    const int G = 17;
    for (int i = 0; i <= G + 8; i++)
        for (int j = 0; j <= G + 8; j++) {
            double x, y;
            if (i <= G) x = i == 0 ? lx : (i == G ? ux : lx + (ux - lx) * i / G);
            else x = lg_pick(r, lx, ux);
            if (j <= G) y = j == 0 ? ly : (j == G ? uy : ly + (uy - ly) * j / G);
            else y = lg_pick(r, ly, uy);
            if (x < lx) x = lx;
            if (x > ux) x = ux;
            if (y < ly) y = ly;
            if (y > uy) y = uy;
            ck_assert_msg(lg_bil_holds(x, y, p.lo_a, p.lo_b, p.lo_c, 1),
                          "lower plane above x*y at (%a, %a), box [%a,%a]x[%a,%a] alpha %g", x, y, lx, ux, ly, uy,
                          al);
            ck_assert_msg(lg_bil_holds(x, y, p.up_a, p.up_b, p.up_c, -1),
                          "upper plane below x*y at (%a, %a), box [%a,%a]x[%a,%a] alpha %g", x, y, lx, ux, ly, uy,
                          au);
            ck_assert_msg(lg_bil_holds(x, y, 0.0, 0.0, ilo, 1) && lg_bil_holds(x, y, 0.0, 0.0, ihi, -1),
                          "image misses x*y at (%a, %a)", x, y);
            (*npts)++;
        }
}

/* acc (the exact weighted sum) is above the bound ic, up to 2^-800·(1 + |ic|) for the MPFR
 * sum's own rounding; tol is scratch. */
static int relax_tf_above(mpfr_t acc, double ic, mpfr_t tol)
{
    mpfr_sub_d(acc, acc, ic, MPFR_RNDN);
    mpfr_set_d(tol, 1.0 + fabs(ic), MPFR_RNDU);
    mpfr_mul_2si(tol, tol, -800, MPFR_RNDU);
    mpfr_neg(tol, tol, MPFR_RNDN);
    return mpfr_cmp(acc, tol) > 0;
}

START_TEST(test_relax_tf_bilinear_random)
{
    lg_rng r;
    lg_rng_init(&r, 40, 3);
    long npts = 0;
    const double scales[] = {1e-3, 1.0, 7.5, 1e3, 1e30, 1e-30};
    int n = lg_test_quick() ? 60 : 400;
    for (int k = 0; k < n; k++) {
        double sx = scales[k % 6], sy = scales[(k / 6) % 6];
        double cx = sx * (2 * lg_rng_uniform(&r) - 1), cy = sy * (2 * lg_rng_uniform(&r) - 1);
        double wx = sx * lg_rng_uniform(&r), wy = sy * lg_rng_uniform(&r);
        if (k % 11 == 0) wx = 0.0; /* degenerate */
        double al = k % 5 == 0 ? 1.0 : (k % 5 == 1 ? 0.0 : (k % 5 == 2 ? NAN : lg_rng_uniform(&r)));
        double au = k % 7 == 0 ? 1.0 : (k % 7 == 1 ? 0.0 : lg_rng_uniform(&r));
        lg_bil_check_box(cx - wx, cx + wx, cy - wy, cy + wy, al, au, &r, &npts);
    }
    ck_assert_int_eq(npts, (long)n * 26 * 26); /* every grid and random point was checked */
}
END_TEST

START_TEST(test_relax_tf_bilinear_hard)
{
    lg_rng r;
    lg_rng_init(&r, 40, 4);
    long npts = 0;
    /* {lx, ux, ly, uy}: signs on every side of 0, touching 0, subnormal,
     * huge products, one huge and one tiny factor, point boxes */
    const double boxes[][4] = {
        {0.0, 1.0, 0.0, 1.0},         {-1.0, 0.0, 0.0, 1.0},        {-1.0, 1.0, -1.0, 1.0},
        {-3.0, -1.0, -2.0, -0.5},      {0.1, 0.1, -0.3, 0.7},        {1.0 / 3, 1.0 / 3, 2.0 / 3, 2.0 / 3},
        {0x1p-1074, 0x1p-1070, -0x1p-1073, 0x1p-1060}, {-1e-310, 1e-310, -1.0, 1.0},
        {1e150, 1.1e150, -1e150, 1e150}, {-1e-300, 1e-300, 1e300, 1.0000001e300},
        {0.1, 0.3, 0.7, 0.9},          {-0.1, 0.3, 0.7, 0.9},        {-1e-17, 1.0, -1.0, 1e-17},
    };
    for (size_t b = 0; b < sizeof boxes / sizeof boxes[0]; b++)
        for (int a = 0; a < 6; a++) { /* 0.25, 0.75: the α search's grid (alpha_tnode.h), each with both sides */
            static const double as[6] = {1.0, 0.0, 0.5, 0.123456789, 0.25, 0.75};
            lg_bil_check_box(boxes[b][0], boxes[b][1], boxes[b][2], boxes[b][3], as[a], 1.0 - as[a], &r, &npts);
        }
    /* overflowing corner products and infinite bounds: vacuous, never wrong */
    lg_bilinear_planes p;
    ck_assert_int_eq(lg_relax_bilinear(-1e200, 1e200, -1e200, 1e200, 1, 1, &p), 0);
    ck_assert(p.lo_c == -INFINITY && p.lo_a == 0 && p.lo_b == 0 && p.up_c == INFINITY);
    ck_assert_int_eq(lg_relax_bilinear(-INFINITY, 1, 0, 1, 1, 1, &p), 0);
    ck_assert(p.lo_c == -INFINITY && p.up_c == INFINITY);
    ck_assert_int_eq(lg_relax_bilinear(0, NAN, 0, 1, 1, 1, &p), 0);
    ck_assert(p.lo_c == -INFINITY && p.up_c == INFINITY);
    double lo, hi;
    lg_bilinear_image(-INFINITY, 1, 0, 1, &lo, &hi);
    ck_assert(lo == -INFINITY && hi == INFINITY);
}
END_TEST

/* McCormick's planes are exact on two edges of the box (α = 1 or 0): the
 * computed intercept may only lose the rounding margin there. */
START_TEST(test_relax_tf_bilinear_tight)
{
    lg_rng r;
    lg_rng_init(&r, 40, 5);
    for (int k = 0; k < 300; k++) {
        double lx = 4 * lg_rng_uniform(&r) - 2, ly = 4 * lg_rng_uniform(&r) - 2;
        double ux = lx + 3 * lg_rng_uniform(&r), uy = ly + 3 * lg_rng_uniform(&r);
        double sc = 1.0 + fabs(lx) + fabs(ux) + fabs(ly) + fabs(uy);
        double tol = 64 * DBL_EPSILON * sc * sc;
        lg_bilinear_planes p1, p0;
        lg_relax_bilinear(lx, ux, ly, uy, 1.0, 1.0, &p1);
        lg_relax_bilinear(lx, ux, ly, uy, 0.0, 0.0, &p0);
        /* lower α=1: (x−lx)(y−ly) ≥ 0, zero at (lx,·) and (·,ly) */
        ck_assert_double_le(lg_bil_gap(lx, uy, p1.lo_a, p1.lo_b, p1.lo_c, 1), tol);
        ck_assert_double_le(lg_bil_gap(ux, ly, p1.lo_a, p1.lo_b, p1.lo_c, 1), tol);
        ck_assert_double_le(lg_bil_gap(lx, ly, p1.lo_a, p1.lo_b, p1.lo_c, 1), tol);
        /* lower α=0: (x−ux)(y−uy) */
        ck_assert_double_le(lg_bil_gap(ux, uy, p0.lo_a, p0.lo_b, p0.lo_c, 1), tol);
        ck_assert_double_le(lg_bil_gap(lx, uy, p0.lo_a, p0.lo_b, p0.lo_c, 1), tol);
        /* upper α=1: (x−lx)(uy−y) */
        ck_assert_double_le(lg_bil_gap(lx, ly, p1.up_a, p1.up_b, p1.up_c, -1), tol);
        ck_assert_double_le(lg_bil_gap(ux, uy, p1.up_a, p1.up_b, p1.up_c, -1), tol);
        /* upper α=0: (ux−x)(y−ly) */
        ck_assert_double_le(lg_bil_gap(ux, uy, p0.up_a, p0.up_b, p0.up_c, -1), tol);
        ck_assert_double_le(lg_bil_gap(lx, ly, p0.up_a, p0.up_b, p0.up_c, -1), tol);
        /* slopes are McCormick's */
        ck_assert(p1.lo_a == ly && p1.lo_b == lx && p0.lo_a == uy && p0.lo_b == ux);
        ck_assert(p1.up_a == uy && p1.up_b == lx && p0.up_a == ly && p0.up_b == ux);
    }
}
END_TEST

/* ---------- softmax and layernorm: MPFR ---------- */

#define LG_HP 1024

/* Σ_j w_j·x_j + c at 2300 bits, every operation exact (asserted). */
static void lg_plane_mp(mpfr_t r, size_t g, const double *w, double c, const double *x)
{
    mpfr_t t;
    mpfr_init2(t, 2300);
    mpfr_set_d(r, c, MPFR_RNDN);
    for (size_t j = 0; j < g; j++) {
        mpfr_set_d(t, w[j], MPFR_RNDN);
        ck_assert_int_eq(mpfr_mul_d(t, t, x[j], MPFR_RNDN), 0);
        ck_assert_int_eq(mpfr_add(r, r, t, MPFR_RNDN), 0);
    }
    mpfr_clear(t);
}

/* softmax_i(x) at LG_HP bits */
static void lg_sm_mp(mpfr_t r, size_t g, const double *x, size_t i)
{
    mpfr_t s, t;
    mpfr_inits2(LG_HP, s, t, (mpfr_ptr)0);
    mpfr_set_ui(s, 0, MPFR_RNDN);
    for (size_t j = 0; j < g; j++) {
        mpfr_set_d(t, x[j], MPFR_RNDN);
        mpfr_sub_d(t, t, x[i], MPFR_RNDN);
        mpfr_exp(t, t, MPFR_RNDN);
        mpfr_add(s, s, t, MPFR_RNDN);
    }
    mpfr_ui_div(r, 1, s, MPFR_RNDN);
    mpfr_clears(s, t, (mpfr_ptr)0);
}

/* layernorm y_i(x) at LG_HP bits */
static void lg_ln_mp(mpfr_t r, size_t g, const double *x, double eps, const double *gamma, const double *beta,
                     size_t i)
{
    mpfr_t mu, v, t;
    mpfr_inits2(LG_HP, mu, v, t, (mpfr_ptr)0);
    mpfr_set_ui(mu, 0, MPFR_RNDN);
    for (size_t j = 0; j < g; j++) mpfr_add_d(mu, mu, x[j], MPFR_RNDN);
    mpfr_div_ui(mu, mu, (unsigned long)g, MPFR_RNDN);
    mpfr_set_ui(v, 0, MPFR_RNDN);
    for (size_t j = 0; j < g; j++) {
        mpfr_set_d(t, x[j], MPFR_RNDN);
        mpfr_sub(t, t, mu, MPFR_RNDN);
        mpfr_sqr(t, t, MPFR_RNDN);
        mpfr_add(v, v, t, MPFR_RNDN);
    }
    mpfr_div_ui(v, v, (unsigned long)g, MPFR_RNDN);
    mpfr_add_d(v, v, eps, MPFR_RNDN);
    mpfr_rec_sqrt(v, v, MPFR_RNDN);
    mpfr_set_d(t, x[i], MPFR_RNDN);
    mpfr_sub(t, t, mu, MPFR_RNDN);
    mpfr_mul(t, t, v, MPFR_RNDN);
    mpfr_mul_d(t, t, gamma[i], MPFR_RNDN);
    mpfr_add_d(r, t, beta[i], MPFR_RNDN);
    mpfr_clears(mu, v, t, (mpfr_ptr)0);
}

/* sg·(f − plane) > tol, far above the 1024-bit evaluation's error (a gap
 * inside it counts as a failure): tol = 2^-900·|f| for softmax (computed as
 * 1/Σ exp(x_j − x_i): relative error), 2^-900·(1 + |f|) for layernorm. */
static int lg_abs_tol = 1;
static int lg_mp_above(const mpfr_t f, size_t g, const double *w, double c, const double *x, int sg)
{
    mpfr_t p, d, tol;
    mpfr_inits2(2400, p, d, tol, (mpfr_ptr)0);
    lg_plane_mp(p, g, w, c, x);
    mpfr_sub(d, f, p, MPFR_RNDN);
    if (sg < 0) mpfr_neg(d, d, MPFR_RNDN);
    mpfr_abs(tol, f, MPFR_RNDU);
    if (lg_abs_tol) mpfr_add_ui(tol, tol, 1, MPFR_RNDU);
    mpfr_mul_2si(tol, tol, -900, MPFR_RNDU);
    int ok = mpfr_cmp(d, tol) > 0;
    mpfr_clears(p, d, tol, (mpfr_ptr)0);
    return ok;
}

typedef struct lg_kind_case {
    int ln; /* 0 softmax, 1 layernorm */
    double eps;
    const double *gamma, *beta;
} lg_kind_case;

/* Every plane and image of the group holds at npts sampled points, every
 * vertex (g ≤ 6) and the per-coordinate extremes around the centre. */
static void lg_nl_check_box(const lg_kind_case *kc, size_t g, const double *l, const double *u, const double *pt,
                            lg_rng *r, int npts)
{
    double *lw = malloc(g * g * sizeof *lw), *uw = malloc(g * g * sizeof *uw);
    double *lc = malloc(g * sizeof *lc), *uc = malloc(g * sizeof *uc), *ilo = malloc(g * sizeof *ilo),
           *ihi = malloc(g * sizeof *ihi), *x = malloc(g * sizeof *x), *zero = calloc(g, sizeof *zero);
    lg_dv *work = malloc((LG_SOFTMAX_WORK(g) + LG_LAYERNORM_WORK(g)) * sizeof *work);
    ck_assert(lw && uw && lc && uc && ilo && ihi && x && zero && work);
    if (kc->ln) {
        lg_relax_layernorm(g, l, u, kc->eps, kc->gamma, kc->beta, pt, lw, lc, uw, uc, work);
        lg_layernorm_image(g, l, u, kc->eps, kc->gamma, kc->beta, ilo, ihi, work);
    } else {
        lg_relax_softmax(g, l, u, pt, lw, lc, uw, uc, work);
        lg_softmax_image(g, l, u, ilo, ihi, work);
    }
    size_t nv = g <= 6 ? (size_t)1 << g : 0;
    mpfr_t f;
    mpfr_init2(f, LG_HP);
    lg_abs_tol = kc->ln;
    for (size_t s = 0; s < (size_t)npts + nv + 2 * g + 1; s++) {
        for (size_t j = 0; j < g; j++) {
            if (s < (size_t)npts) x[j] = lg_pick(r, l[j], u[j]);
            else if (s < (size_t)npts + nv) x[j] = ((s - npts) >> j) & 1 ? u[j] : l[j];
            else x[j] = 0.5 * l[j] + 0.5 * u[j];
        }
        if (s >= (size_t)npts + nv && s < (size_t)npts + nv + 2 * g) {
            size_t q = s - npts - nv;
            x[q / 2] = q % 2 ? u[q / 2] : l[q / 2];
        }
        for (size_t i = 0; i < g; i++) {
            if (kc->ln) lg_ln_mp(f, g, x, kc->eps, kc->gamma, kc->beta, i);
            else lg_sm_mp(f, g, x, i);
            if (!kc->ln && g == 1) continue; /* s = 1 = both planes exactly */
            ck_assert_msg(lg_mp_above(f, g, lw + i * g, lc[i], x, 1), "%s lower plane of output %zu violated (g %zu)",
                          kc->ln ? "layernorm" : "softmax", i, g);
            ck_assert_msg(lg_mp_above(f, g, uw + i * g, uc[i], x, -1),
                          "%s upper plane of output %zu violated (g %zu)", kc->ln ? "layernorm" : "softmax", i, g);
            ck_assert_msg(lg_mp_above(f, g, zero, ilo[i], x, 1) && lg_mp_above(f, g, zero, ihi[i], x, -1),
                          "%s image of output %zu misses the value (g %zu)", kc->ln ? "layernorm" : "softmax", i, g);
        }
    }
    mpfr_clear(f);
    free(lw), free(uw), free(lc), free(uc), free(ilo), free(ihi), free(x), free(zero), free(work);
}

static void lg_nl_random(int ln, uint64_t stream)
{
    lg_rng r;
    lg_rng_init(&r, 40, stream);
    const size_t gs[] = {1, 2, 3, 4, 5, 8, 13};
    const double widths[] = {0.0, 1e-6, 1e-3, 0.05, 0.5, 3.0};
    int nbox = lg_test_quick() ? 40 : 160;
    double gamma[16], beta[16], l[16], u[16], pt[16];
    for (int b = 0; b < nbox; b++) {
        size_t g = gs[b % 7];
        double w = widths[(b / 7) % 6];
        double sc = b % 3 == 0 ? 10.0 : 2.0;
        for (size_t j = 0; j < g; j++) {
            double c = sc * (2 * lg_rng_uniform(&r) - 1);
            double wj = w * lg_rng_uniform(&r);
            l[j] = c - wj;
            u[j] = c + wj;
            pt[j] = lg_pick(&r, l[j], u[j]);
            gamma[j] = 2 * lg_rng_uniform(&r) - 0.5;
            beta[j] = lg_rng_normal(&r);
        }
        lg_kind_case kc = {ln, b % 4 == 0 ? 1e-12 : 1e-5, gamma, beta};
        lg_nl_check_box(&kc, g, l, u, b % 2 ? pt : NULL, &r, lg_test_quick() ? 10 : 40);
    }
}

START_TEST(test_relax_tf_softmax_random) { lg_nl_random(0, 6); }
END_TEST

START_TEST(test_relax_tf_layernorm_random) { lg_nl_random(1, 7); }
END_TEST

START_TEST(test_relax_tf_hard)
{
    lg_rng r;
    lg_rng_init(&r, 40, 8);
    double gamma[4] = {1.0, -2.0, 0.5, 3.0}, beta[4] = {0.0, 0.25, -1.0, 1e-3};
    lg_kind_case sm = {0, 0.0, NULL, NULL}, ln = {1, 1e-5, gamma, beta};
    /* far-apart logits (exp underflows), large magnitudes, a box touching
     * equal logits, a point box */
    const double boxes[][8] = {
        {-800, -799, 0, 0.5, 30, 31, -1e3, -1e3},   {700, 700.5, 701, 701, 699, 700, 0, 1},
        {0, 0, 0, 0, 0, 0, 0, 0},                   {1.0 / 3, 1.0 / 3, 0.1, 0.1, -0.7, -0.7, 2, 2},
        {-1e-300, 1e-300, 0, 1e-310, -1, 1, 5, 5.0000001},
    };
    for (size_t b = 0; b < sizeof boxes / sizeof boxes[0]; b++) {
        double l[4], u[4];
        for (int j = 0; j < 4; j++) {
            l[j] = boxes[b][2 * j];
            u[j] = boxes[b][2 * j + 1];
        }
        lg_nl_check_box(&sm, 4, l, u, NULL, &r, 30);
        if (b != 2) lg_nl_check_box(&ln, 4, l, u, NULL, &r, 30);
    }
    /* layernorm with a tiny variance and a tiny eps: r is huge, still sound */
    {
        double l[3] = {1.0, 1.0 + 1e-9, 1.0 - 1e-9}, u[3] = {1.0 + 1e-9, 1.0 + 2e-9, 1.0};
        lg_kind_case t = {1, 1e-12, gamma, beta};
        lg_nl_check_box(&t, 3, l, u, NULL, &r, 50);
    }
    /* eps = 0 and a box holding a constant input: no finite plane, vacuous */
    {
        double l[2] = {0, 0}, u[2] = {1, 1}, lw[4], uw[4], lc[2], uc[2];
        lg_dv work[LG_LAYERNORM_WORK(2)];
        ck_assert_int_eq(lg_relax_layernorm(2, l, u, 0.0, gamma, beta, NULL, lw, lc, uw, uc, work), 0);
        ck_assert(lc[0] == -INFINITY && uc[0] == INFINITY && lw[0] == 0 && uw[1] == 0);
    }
    /* non-finite bounds: softmax keeps [0, 1], layernorm is vacuous */
    {
        double l[2] = {-INFINITY, 0}, u[2] = {0, 1}, lw[4], uw[4], lc[2], uc[2];
        lg_dv work[LG_SOFTMAX_WORK(2) + LG_LAYERNORM_WORK(2)];
        lg_relax_softmax(2, l, u, NULL, lw, lc, uw, uc, work);
        ck_assert(lc[0] == 0 && uc[0] == 1 && lw[0] == 0 && uw[0] == 0);
        ck_assert_int_eq(lg_relax_layernorm(2, l, u, 1e-5, gamma, beta, NULL, lw, lc, uw, uc, work), 0);
        ck_assert(lc[1] == -INFINITY && uc[1] == INFINITY);
    }
}
END_TEST

/* On narrow boxes the planes are second order: their gap at the centre is
 * O(width²) and far below the image's width, and they are not flat. */
static void lg_nl_tight(int ln)
{
    lg_rng r;
    lg_rng_init(&r, 40, 9 + (uint64_t)ln);
    const size_t g = 5;
    double l[5], u[5], c[5], gamma[5], beta[5], lw[25], uw[25], lc[5], uc[5], ilo[5], ihi[5];
    lg_dv work[LG_SOFTMAX_WORK(5) + LG_LAYERNORM_WORK(5)];
    for (int b = 0; b < 50; b++) {
        double w = 1e-3;
        for (size_t j = 0; j < g; j++) {
            c[j] = 4 * lg_rng_uniform(&r) - 2;
            l[j] = c[j] - w;
            u[j] = c[j] + w;
            gamma[j] = 0.5 + lg_rng_uniform(&r);
            beta[j] = lg_rng_normal(&r);
        }
        if (ln) {
            lg_relax_layernorm(g, l, u, 1e-5, gamma, beta, NULL, lw, lc, uw, uc, work);
            lg_layernorm_image(g, l, u, 1e-5, gamma, beta, ilo, ihi, work);
        } else {
            lg_relax_softmax(g, l, u, NULL, lw, lc, uw, uc, work);
            lg_softmax_image(g, l, u, ilo, ihi, work);
        }
        for (size_t i = 0; i < g; i++) {
            double pl = lc[i], pu = uc[i], slope = 0;
            for (size_t j = 0; j < g; j++) {
                pl += lw[i * g + j] * c[j];
                pu += uw[i * g + j] * c[j];
                slope += fabs(lw[i * g + j]) + fabs(uw[i * g + j]);
            }
            double gap = pu - pl, iw = ihi[i] - ilo[i];
            ck_assert_msg(slope > 0, "flat planes on a narrow box");
            ck_assert_msg(gap < 0.2 * iw, "gap %g at the centre not below the image width %g", gap, iw);
            ck_assert_msg(gap < 100 * w * w * (1 + fabs(gamma[i]) * 400), "gap %g not second order", gap);
        }
    }
}

/* A weighted sum Σ_o lam_o·y_o of a layernorm group (lg_layernorm_row_icpt) against MPFR
 * at random vertices and points, for random weights (some zero); counts in *better the
 * weightings where it beats the sum of the per-output planes' intercepts. */
static void lg_ln_row_check(size_t g, const double *l, const double *u, const double *gamma, const double *beta,
                            const double *w, const double *lc, const double *uc, const double *rd, lg_rng *r,
                            int *better, int *n)
{
    double lam[32], x[32];
    mpfr_t f, p, acc, tol;
    mpfr_inits2(2400, p, acc, tol, (mpfr_ptr)0);
    mpfr_init2(f, LG_HP);
    for (int k = 0; k < 3; k++) {
        double sum = 0.0;
        for (size_t o = 0; o < g; o++) {
            lam[o] = lg_rng_uniform(r) < 0.2 ? 0.0 : lg_rng_normal(r);
            if (lam[o] != 0.0) sum += lam[o] * (lam[o] > 0 ? lc[o] : uc[o]);
        }
        double ic = lg_layernorm_row_icpt(g, rd, lam, gamma);
        if (!(ic > -INFINITY)) continue;
        (*n)++;
        *better += ic > sum;
        for (int s = 0; s < 6; s++) {
            for (size_t j = 0; j < g; j++)
                x[j] = s < 4 ? (lg_rng_uniform(r) < 0.5 ? l[j] : u[j]) : lg_pick(r, l[j], u[j]);
            mpfr_set_zero(acc, 1);
            for (size_t o = 0; o < g; o++) {
                if (lam[o] == 0.0) continue;
                lg_ln_mp(f, g, x, 1e-5, gamma, beta, o);
                lg_plane_mp(p, g, w + o * g, 0.0, x);
                mpfr_sub(p, f, p, MPFR_RNDN);
                mpfr_mul_d(p, p, lam[o], MPFR_RNDN);
                mpfr_add(acc, acc, p, MPFR_RNDN);
            }
            ck_assert_msg(relax_tf_above(acc, ic, tol), "layernorm weighted sum below its bound (g %zu)", g);
        }
    }
    mpfr_clears(f, p, acc, tol, (mpfr_ptr)0);
}

/* A weighted sum of one softmax group through Σ s = 1 (lg_softmax_shift): for random
 * weights with a common offset (as a row's coefficients μ·v_j on attention weights have)
 * over groups of 3 and 17 at widths 1e-3 to 0.5, t + Σ mu·(the planes) − err stays below
 * Σ lam·s at random vertices and points (MPFR), the rounding of every mu is within err
 * (exact), t maximises the intercepts' sum among the candidates 0 and every lam, and the
 * shifted intercepts beat the plain ones on most rows. */
START_TEST(test_relax_tf_softmax_shift)
{
    static const size_t gs[] = {3, 17};
    lg_rng r;
    lg_rng_init(&r, 41, 3);
    int better = 0, rows = 0;
    mpfr_t f, p, acc, tol, ex;
    mpfr_inits2(2400, p, acc, tol, ex, (mpfr_ptr)0);
    mpfr_init2(f, LG_HP);
    for (int it = 0; it < 24; it++) {
        size_t g = gs[it % 2];
        double l[17], u[17], lw[289], lc[17], uw[289], uc[17], lam[17], mu[17], x[17];
        int idx[17];
        lg_dv work[LG_SOFTMAX_WORK(17)];
        double wd = pow(10.0, -3.0 + 2.7 * lg_rng_uniform(&r));
        for (size_t j = 0; j < g; j++) {
            double c = 2.0 * lg_rng_normal(&r);
            l[j] = c - wd * lg_rng_uniform(&r);
            u[j] = c + wd * lg_rng_uniform(&r);
        }
        lg_relax_softmax(g, l, u, NULL, lw, lc, uw, uc, work);
        double off = (lg_rng_uniform(&r) < 0.5 ? -1.0 : 1.0) * (2.0 + 3.0 * lg_rng_uniform(&r));
        for (size_t o = 0; o < g; o++) {
            double pu = lg_rng_uniform(&r); /* small ones: their difference with t is not exact */
            lam[o] = pu < 0.15 ? 0.0 : pu < 0.3 ? 1e-3 * lg_rng_normal(&r) : off + lg_rng_normal(&r);
        }
        double err, t = lg_softmax_shift(g, lam, lc, uc, mu, &err, idx);
        ck_assert(err >= 0.0 && isfinite(err));
        /* the rounding of mu within err, exactly */
        mpfr_set_zero(acc, 1);
        for (size_t o = 0; o < g; o++) {
            mpfr_set_d(ex, lam[o], MPFR_RNDN);
            ck_assert_int_eq(mpfr_sub_d(ex, ex, t, MPFR_RNDN), 0);
            ck_assert_int_eq(mpfr_sub_d(ex, ex, mu[o], MPFR_RNDN), 0);
            mpfr_abs(ex, ex, MPFR_RNDN);
            mpfr_add(acc, acc, ex, MPFR_RNDN);
        }
        ck_assert_msg(mpfr_cmp_d(acc, err) <= 0, "softmax shift: the rounding of mu is above err");
        /* t maximises h (relax_softmax.h) among 0 and every lam */
        double ht = t;
        for (size_t o = 0; o < g; o++) ht += (lam[o] - t) * (lam[o] > t ? lc[o] : uc[o]);
        for (size_t k = 0; k <= g; k++) {
            double tc = k < g ? lam[k] : 0.0, hc = tc;
            for (size_t o = 0; o < g; o++) hc += (lam[o] - tc) * (lam[o] > tc ? lc[o] : uc[o]);
            ck_assert_msg(ht >= hc - 1e-12 * (1.0 + fabs(hc)), "softmax shift: t does not maximise h");
        }
        /* the intercepts, shifted against plain */
        double plain = 0.0, shifted = t - err;
        for (size_t o = 0; o < g; o++) {
            if (lam[o] != 0.0) plain += lam[o] * (lam[o] > 0 ? lc[o] : uc[o]);
            if (mu[o] != 0.0) shifted += mu[o] * (mu[o] > 0 ? lc[o] : uc[o]);
        }
        int lin = 1; /* the slopes' part is the same (Σ_o ∇s_o = 0) when both sides share slopes */
        for (size_t k = 0; k < g * g; k++) lin &= lw[k] == uw[k];
        if (lin) {
            rows++;
            better += shifted > plain;
        }
        for (int sp = 0; sp < 8; sp++) {
            for (size_t j = 0; j < g; j++)
                x[j] = sp < 4 ? (lg_rng_uniform(&r) < 0.5 ? l[j] : u[j]) : lg_pick(&r, l[j], u[j]);
            /* Σ lam·s = Σ lam_o·e_o / Σ e_o with e_o = exp(x_o), at LG_HP bits */
            mpfr_set_zero(f, 1);
            mpfr_set_zero(tol, 1);
            for (size_t o = 0; o < g; o++) {
                mpfr_set_d(ex, x[o], MPFR_RNDN);
                mpfr_exp(ex, ex, MPFR_RNDN);
                mpfr_add(tol, tol, ex, MPFR_RNDN);
                mpfr_mul_d(ex, ex, lam[o], MPFR_RNDN);
                mpfr_add(f, f, ex, MPFR_RNDN);
            }
            mpfr_div(f, f, tol, MPFR_RNDN);
            mpfr_set_d(acc, t, MPFR_RNDN);
            mpfr_sub_d(acc, acc, err, MPFR_RNDN);
            mpfr_sub(acc, acc, f, MPFR_RNDN);
            for (size_t o = 0; o < g; o++) {
                if (mu[o] == 0.0) continue;
                lg_plane_mp(p, g, (mu[o] > 0 ? lw : uw) + o * g, mu[o] > 0 ? lc[o] : uc[o], x);
                mpfr_mul_d(p, p, mu[o], MPFR_RNDN);
                mpfr_add(acc, acc, p, MPFR_RNDN);
            }
            /* acc = t − err + Σ mu·plane − Σ lam·s ≤ 0, beyond the 1024-bit error */
            mpfr_set_d(tol, 1.0 + fabs(t) + 4.0 * fabs(off), MPFR_RNDU);
            mpfr_mul_2si(tol, tol, -880, MPFR_RNDU);
            mpfr_neg(tol, tol, MPFR_RNDN);
            ck_assert_msg(mpfr_cmp(acc, tol) < 0, "softmax shift: the bound is above the weighted sum (g %zu)", g);
        }
    }
    ck_assert_msg(rows >= 6 && 3 * better >= 2 * rows, "softmax shift: tighter on %d of %d rows", better, rows);
    mpfr_clears(f, p, acc, tol, ex, (mpfr_ptr)0);
}
END_TEST

/* The second-order (Taylor) remainders on the groups of a Transformer (softmax over 17
 * tokens, layernorm over 16 and 32 features) at widths where they matter: every plane
 * holds at random vertices and points against MPFR, the gap at the centre is never
 * above the mean-value form's for the same slopes (2·Σ_j max|J_ij − w_j|·rad_j, J the
 * box's Jacobian enclosure), and well below it on most boxes. */
static void lg_nl_taylor(int ln)
{
    lg_rng r;
    lg_rng_init(&r, 40, 21 + (uint64_t)ln);
    const size_t gs[] = {17, 16, 32};
    const double widths[] = {1e-3, 0.02, 0.1, 0.3};
    double l[32], u[32], gamma[32], beta[32], lw[1024], uw[1024], lc[32], uc[32];
    static lg_dv J[1024], work[LG_SOFTMAX_WORK(32) + LG_LAYERNORM_WORK(32)];
    static double rd[LG_LN_ROW_LEN(32)];
    int nbox = lg_test_quick() ? 8 : 16, better = 0, rows = 0, row_better = 0, row_n = 0;
    for (int b = 0; b < nbox; b++) {
        size_t g = ln ? gs[1 + b % 2] : gs[0];
        double w = widths[b % 4];
        for (size_t j = 0; j < g; j++) {
            double c = (ln ? 1.0 : 3.0) * lg_rng_normal(&r), wj = w * (0.5 + lg_rng_uniform(&r));
            l[j] = c - wj;
            u[j] = c + wj;
            gamma[j] = 0.5 + lg_rng_uniform(&r);
            beta[j] = lg_rng_normal(&r);
        }
        if (ln) {
            lg_relax_layernorm_ex(g, l, u, NULL, 1e-5, gamma, beta, NULL, lw, lc, uw, uc, rd, work);
            lg_ln_row_check(g, l, u, gamma, beta, lw, lc, uc, rd, &r, &row_better, &row_n);
            lg_layernorm_jacobian(g, l, u, 1e-5, gamma, J, work);
        } else {
            lg_relax_softmax(g, l, u, NULL, lw, lc, uw, uc, work);
            lg_softmax_jacobian(g, l, u, J, work);
        }
        /* three outputs against MPFR at 6 random vertices and 2 random points */
        mpfr_t f;
        mpfr_init2(f, LG_HP);
        lg_abs_tol = ln;
        for (int s = 0; s < 8; s++) {
            double x[32];
            for (size_t j = 0; j < g; j++)
                x[j] = s < 6 ? (lg_rng_uniform(&r) < 0.5 ? l[j] : u[j]) : lg_pick(&r, l[j], u[j]);
            for (size_t i = (size_t)s % 3; i < g; i += g / 3 + 1) {
                if (ln) lg_ln_mp(f, g, x, 1e-5, gamma, beta, i);
                else lg_sm_mp(f, g, x, i);
                ck_assert_msg(lg_mp_above(f, g, lw + i * g, lc[i], x, 1) && lg_mp_above(f, g, uw + i * g, uc[i], x, -1),
                              "%s plane of output %zu violated (g %zu, width %g)", ln ? "layernorm" : "softmax", i, g, w);
            }
        }
        mpfr_clear(f);
        for (size_t i = 0; i < g; i++) {
            int lin = 0;
            for (size_t j = 0; j < g; j++) lin |= lw[i * g + j] != 0.0 && uw[i * g + j] != 0.0;
            if (!lin) continue; /* a constant plane of the image on one side */
            double mv = 0.0, gap = uc[i] - lc[i];
            for (size_t j = 0; j < g; j++) {
                double wj = lw[i * g + j], d = fmax(wj - J[i * g + j].lo, J[i * g + j].hi - wj);
                mv += d * 0.5 * (u[j] - l[j]);
            }
            ck_assert_msg(gap <= 2.0 * mv * (1 + 1e-9) + 1e-12, "%s output %zu: gap %g above the mean-value form's %g",
                          ln ? "layernorm" : "softmax", i, gap, 2.0 * mv);
            rows++;
            better += gap < 0.7 * 2.0 * mv;
        }
    }
    ck_assert_msg(rows > 0 && 2 * better > rows, "%s: Taylor's remainder below 0.7 of the mean-value one on %d of %d",
                  ln ? "layernorm" : "softmax", better, rows);
    if (ln)
        ck_assert_msg(row_n > 0 && 2 * row_better > row_n, "layernorm weighted sums: tighter than the planes' sum on %d of %d",
                      row_better, row_n);
}

START_TEST(test_relax_tf_softmax_taylor) { lg_nl_taylor(0); }
END_TEST

START_TEST(test_relax_tf_layernorm_taylor) { lg_nl_taylor(1); }
END_TEST

/* Layernorm planes on a region (lg_ln_region): inputs x = x0 + A·e, e ∈ [−1, 1]^5, whose
 * rows share a common part (as a residual stream's do), with the box, the centred box
 * and the range of Σ a·x for a = ĉ(centre) computed from A (widened by a margin far
 * above double rounding); at reachable points (vertices and uniform e) every plane and
 * a row's weighted-sum bound hold against MPFR, and the region's planes are tighter
 * than the box's at the centre on most outputs (never looser). */
START_TEST(test_relax_tf_layernorm_region)
{
    lg_rng r;
    lg_rng_init(&r, 40, 31);
    enum { D = 5 };
    const size_t gs[] = {8, 16, 32};
    const double widths[] = {1e-3, 0.02, 0.1};
    static double x0[32], A[32][D], l[32], u[32], clo[32], chi[32], a[32], gamma[32], beta[32];
    static double lw[1024], uw[1024], lc[32], uc[32], pw[1024], pu[1024], plc[32], puc[32], x[32], lam[32];
    static double rd[LG_LN_ROW_LEN(32)], rd0[LG_LN_ROW_LEN(32)];
    static lg_dv work[LG_LAYERNORM_WORK(32)];
    int nbox = lg_test_quick() ? 6 : 12, outs = 0, tighter = 0;
    mpfr_t f, p, acc, tol;
    mpfr_inits2(2400, p, acc, tol, (mpfr_ptr)0);
    mpfr_init2(f, LG_HP);
    for (int b = 0; b < nbox; b++) {
        size_t g = gs[b % 3];
        double w = widths[b % 3] / D, common[D], mass = 0.0;
        for (int t = 0; t < D; t++) common[t] = lg_rng_normal(&r);
        for (size_t j = 0; j < g; j++) {
            x0[j] = lg_rng_normal(&r);
            for (int t = 0; t < D; t++) A[j][t] = w * (common[t] + 0.3 * lg_rng_normal(&r));
            gamma[j] = 0.5 + lg_rng_uniform(&r);
            beta[j] = lg_rng_normal(&r);
        }
        double mx0 = 0.0, mA[D] = {0};
        for (size_t j = 0; j < g; j++) {
            mx0 += x0[j] / (double)g;
            for (int t = 0; t < D; t++) mA[t] += A[j][t] / (double)g;
            mass = fmax(mass, fabs(x0[j]));
        }
        const double mg = 1e-12 * (1.0 + 4.0 * mass); /* far above every rounding below */
        for (size_t j = 0; j < g; j++) {
            double ra = 0.0, rc = 0.0;
            for (int t = 0; t < D; t++) ra += fabs(A[j][t]), rc += fabs(A[j][t] - mA[t]);
            l[j] = x0[j] - ra - mg, u[j] = x0[j] + ra + mg;
            clo[j] = x0[j] - mx0 - rc - mg, chi[j] = x0[j] - mx0 + rc + mg;
        }
        /* a = ĉ at the box's centre, and the range of Σ a·x */
        double mu = 0.0, v = 0.0, ax0 = 0.0, aA[D] = {0};
        for (size_t j = 0; j < g; j++) mu += 0.5 * (l[j] + u[j]) / (double)g;
        for (size_t j = 0; j < g; j++) v += (0.5 * (l[j] + u[j]) - mu) * (0.5 * (l[j] + u[j]) - mu) / (double)g;
        for (size_t j = 0; j < g; j++) {
            a[j] = (0.5 * (l[j] + u[j]) - mu) / sqrt(v + 1e-5);
            ax0 += a[j] * x0[j];
            for (int t = 0; t < D; t++) aA[t] += a[j] * A[j][t];
        }
        double ar = 0.0;
        for (int t = 0; t < D; t++) ar += fabs(aA[t]);
        lg_ln_region reg = {clo, chi, a, ax0 - ar - 8.0 * (double)g * mg, ax0 + ar + 8.0 * (double)g * mg};
        lg_relax_layernorm_ex(g, l, u, &reg, 1e-5, gamma, beta, NULL, lw, lc, uw, uc, rd, work);
        lg_relax_layernorm_ex(g, l, u, NULL, 1e-5, gamma, beta, NULL, pw, plc, pu, puc, rd0, work);
        for (size_t i = 0; i < g; i++) {
            double gap = uc[i] - lc[i], gp = puc[i] - plc[i];
            for (size_t j = 0; j < g; j++) {
                double c = 0.5 * (l[j] + u[j]);
                gap += (uw[i * g + j] - lw[i * g + j]) * c;
                gp += (pu[i * g + j] - pw[i * g + j]) * c;
            }
            ck_assert_msg(gap <= gp * (1.0 + 1e-9) + 1e-12, "region planes of output %zu looser: %g > %g", i, gap, gp);
            outs++;
            tighter += gap < 0.7 * gp;
        }
        for (int k = 0; k < 3; k++)
            for (size_t o = 0; o < g; o++) lam[o] = lg_rng_uniform(&r) < 0.2 ? 0.0 : lg_rng_normal(&r);
        double ic = lg_layernorm_row_icpt(g, rd, lam, gamma);
        for (int s = 0; s < 10; s++) { /* reachable points: vertices of e, then uniform */
            double e[D];
            for (int t = 0; t < D; t++) e[t] = s < 6 ? (lg_rng_uniform(&r) < 0.5 ? -1.0 : 1.0) : 2.0 * lg_rng_uniform(&r) - 1.0;
            for (size_t j = 0; j < g; j++) {
                x[j] = x0[j];
                for (int t = 0; t < D; t++) x[j] += A[j][t] * e[t];
            }
            lg_abs_tol = 1;
            mpfr_set_zero(acc, 1);
            for (size_t i = 0; i < g; i++) {
                lg_ln_mp(f, g, x, 1e-5, gamma, beta, i);
                ck_assert_msg(lg_mp_above(f, g, lw + i * g, lc[i], x, 1) && lg_mp_above(f, g, uw + i * g, uc[i], x, -1),
                              "region plane of output %zu violated (g %zu, width %g)", i, g, widths[b % 3]);
                if (lam[i] == 0.0) continue;
                lg_plane_mp(p, g, lw + i * g, 0.0, x);
                mpfr_sub(p, f, p, MPFR_RNDN);
                mpfr_mul_d(p, p, lam[i], MPFR_RNDN);
                mpfr_add(acc, acc, p, MPFR_RNDN);
            }
            if (!(ic > -INFINITY)) continue;
            ck_assert_msg(relax_tf_above(acc, ic, tol), "region: layernorm weighted sum below its bound (g %zu)", g);
        }
    }
    mpfr_clears(f, p, acc, tol, (mpfr_ptr)0);
    ck_assert_msg(2 * tighter > outs, "region planes below 0.7 of the box's gap on %d of %d outputs", tighter, outs);
}
END_TEST

/* On a point box the images are a few ulps wide (not vacuous). */
START_TEST(test_relax_tf_image_point)
{
    lg_rng r;
    lg_rng_init(&r, 40, 15);
    double x[6], ga[6], be[6], lo[6], hi[6];
    lg_dv work[LG_SOFTMAX_WORK(6) + LG_LAYERNORM_WORK(6)];
    for (int k = 0; k < 200; k++) {
        for (int j = 0; j < 6; j++) {
            x[j] = 6 * lg_rng_uniform(&r) - 3;
            ga[j] = lg_rng_normal(&r);
            be[j] = lg_rng_normal(&r);
        }
        lg_softmax_image(6, x, x, lo, hi, work);
        for (int i = 0; i < 6; i++) ck_assert_double_le(hi[i] - lo[i], 64 * DBL_EPSILON * hi[i]);
        lg_layernorm_image(6, x, x, 1e-5, ga, be, lo, hi, work);
        for (int i = 0; i < 6; i++) ck_assert_double_le(hi[i] - lo[i], 1e-13 * (1 + fabs(ga[i]) + fabs(be[i])));
    }
}
END_TEST

START_TEST(test_relax_tf_softmax_tight) { lg_nl_tight(0); }
END_TEST

START_TEST(test_relax_tf_layernorm_tight) { lg_nl_tight(1); }
END_TEST

/* ---------- deviation through the kinds ---------- */

/* x' = x + t·e moved toward x until |x' − x| ≤ e holds exactly. */
static double lg_near(double x, double e, double t)
{
    double y = x + t * e;
    for (;;) {
        mpfr_t a;
        mpfr_init2(a, 2300);
        mpfr_set_d(a, y, MPFR_RNDN);
        mpfr_sub_d(a, a, x, MPFR_RNDN); /* exact at 2300 bits */
        mpfr_abs(a, a, MPFR_RNDN);
        int ok = mpfr_cmp_d(a, e) <= 0;
        mpfr_clear(a);
        if (ok) return y;
        y = nextafter(y, x);
    }
}

START_TEST(test_relax_tf_deviation_bilinear)
{
    lg_rng r;
    lg_rng_init(&r, 40, 11);
    mpq_t p, q, t, d;
    mpq_inits(p, q, t, d, NULL);
    for (int k = 0; k < 2000; k++) {
        double sc = k % 3 == 0 ? 100.0 : 1.0;
        double la = sc * (2 * lg_rng_uniform(&r) - 1), lb = sc * (2 * lg_rng_uniform(&r) - 1);
        double ua = la + sc * lg_rng_uniform(&r), ub = lb + sc * lg_rng_uniform(&r);
        double ea = k % 5 == 0 ? 0.0 : 0.1 * lg_rng_uniform(&r), eb = 0.1 * lg_rng_uniform(&r);
        double dv = lg_dev_bilinear(la, ua, ea, lb, ub, eb);
        for (int s2 = 0; s2 < 8; s2++) {
            double a = lg_pick(&r, la, ua), b = lg_pick(&r, lb, ub);
            if (s2 < 4) {
                a = s2 & 1 ? ua : la;
                b = s2 & 2 ? ub : lb;
            }
            double a2 = lg_near(a, ea, s2 % 2 ? 1.0 : -1.0), b2 = lg_near(b, eb, s2 < 4 ? 1.0 : 2 * lg_rng_uniform(&r) - 1);
            mpq_set_d(p, a);
            mpq_set_d(t, b);
            mpq_mul(p, p, t);
            mpq_set_d(q, a2);
            mpq_set_d(t, b2);
            mpq_mul(q, q, t);
            mpq_sub(p, p, q);
            mpq_abs(p, p);
            mpq_set_d(d, dv);
            ck_assert_msg(mpq_cmp(p, d) <= 0, "product deviation above its bound %g", dv);
        }
    }
    mpq_clears(p, q, t, d, NULL);
    ck_assert(lg_dev_bilinear(0, 1, NAN, 0, 1, 0) == INFINITY);
}
END_TEST

static void lg_dev_nl(int ln)
{
    lg_rng r;
    lg_rng_init(&r, 40, 12 + (uint64_t)ln);
    const size_t gs[] = {2, 3, 5, 8};
    double l[8], u[8], e[8], x[8], x2[8], gamma[8], beta[8], dv[8];
    lg_dv work[LG_DEVTF_WORK(8)];
    mpfr_t f1, f2, dd;
    mpfr_inits2(LG_HP, f1, f2, dd, (mpfr_ptr)0);
    int n = lg_test_quick() ? 30 : 120;
    long nonzero = 0;
    for (int b = 0; b < n; b++) {
        size_t g = gs[b % 4];
        double w = b % 3 == 0 ? 1e-3 : 0.5, es = b % 2 ? 1e-4 : 0.05;
        for (size_t j = 0; j < g; j++) {
            double c = 4 * lg_rng_uniform(&r) - 2;
            l[j] = c - w * lg_rng_uniform(&r);
            u[j] = c + w * lg_rng_uniform(&r);
            e[j] = j == 0 && b % 5 == 0 ? 0.0 : es * lg_rng_uniform(&r);
            gamma[j] = 2 * lg_rng_uniform(&r) - 1;
            beta[j] = lg_rng_normal(&r);
        }
        if (ln) lg_dev_layernorm(g, l, u, e, 1e-5, gamma, dv, work);
        else lg_dev_softmax(g, l, u, e, dv, work);
        for (int s2 = 0; s2 < 30; s2++) {
            for (size_t j = 0; j < g; j++) {
                x[j] = lg_pick(&r, l[j], u[j]);
                double t = s2 < 10 ? ((s2 >> (j % 3)) & 1 ? 1.0 : -1.0) : 2 * lg_rng_uniform(&r) - 1;
                x2[j] = lg_near(x[j], e[j], t);
            }
            for (size_t i = 0; i < g; i++) {
                if (ln) {
                    lg_ln_mp(f1, g, x, 1e-5, gamma, beta, i);
                    lg_ln_mp(f2, g, x2, 1e-5, gamma, beta, i);
                } else {
                    lg_sm_mp(f1, g, x, i);
                    lg_sm_mp(f2, g, x2, i);
                }
                mpfr_sub(dd, f1, f2, MPFR_RNDN);
                mpfr_abs(dd, dd, MPFR_RNDN);
                if (mpfr_sgn(dd) > 0) nonzero++;
                /* the evaluation errs by < 2^-1000; the bound must clear it */
                mpfr_add_d(dd, dd, 0x1p-990, MPFR_RNDU);
                ck_assert_msg(mpfr_cmp_d(dd, dv[i]) <= 0, "%s deviation of output %zu above its bound %g",
                              ln ? "layernorm" : "softmax", i, dv[i]);
            }
        }
    }
    ck_assert_int_gt(nonzero, 100);
    mpfr_clears(f1, f2, dd, (mpfr_ptr)0);
}

START_TEST(test_relax_tf_deviation_softmax) { lg_dev_nl(0); }
END_TEST

START_TEST(test_relax_tf_deviation_layernorm) { lg_dev_nl(1); }
END_TEST

/* λ·plane(x) ≥ Σ coef·x + icpt − err exactly at every vertex of the box
 * (both sides are affine, so the vertices are the worst case). */
START_TEST(test_relax_tf_plane_apply)
{
    lg_rng r;
    lg_rng_init(&r, 40, 14);
    mpq_t a, b, t, v;
    mpq_inits(a, b, t, v, NULL);
    for (int k = 0; k < 3000; k++) {
        size_t n = 1 + lg_rng_below(&r, 5);
        double lw[5], uw[5], xm[5], coef[5], icpt, err;
        double sc = k % 4 == 0 ? 1e-300 : (k % 4 == 1 ? 1e100 : 1.0);
        for (size_t j = 0; j < n; j++) {
            lw[j] = lg_rng_normal(&r) * (k % 7 == 0 && j == 0 ? 0.0 : 1.0);
            uw[j] = lg_rng_normal(&r);
            xm[j] = 10 * lg_rng_uniform(&r);
        }
        double lc = lg_rng_normal(&r), uc = lg_rng_normal(&r);
        double lam = sc * lg_rng_normal(&r) / 3.0;
        lg_relax_plane_apply(n, lw, lc, uw, uc, xm, lam, coef, &icpt, &err);
        ck_assert(isfinite(err));
        const double *w = lam > 0 ? lw : uw;
        double c = lam > 0 ? lc : uc;
        for (size_t vtx = 0; vtx < ((size_t)1 << n); vtx++) {
            mpq_set_d(a, c); /* a = λ·(w·x + c), b = coef·x + icpt − err */
            mpq_set_d(b, icpt);
            mpq_set_d(t, err);
            mpq_sub(b, b, t);
            for (size_t j = 0; j < n; j++) {
                double x = (vtx >> j) & 1 ? xm[j] : -xm[j];
                mpq_set_d(t, w[j]);
                mpq_set_d(v, x);
                mpq_mul(t, t, v);
                mpq_add(a, a, t);
                mpq_set_d(t, coef[j]);
                mpq_mul(t, t, v);
                mpq_add(b, b, t);
            }
            mpq_set_d(t, lam);
            mpq_mul(a, a, t);
            ck_assert_msg(mpq_cmp(a, b) >= 0, "applied plane above lambda*plane (n %zu, lambda %g)", n, lam);
        }
    }
    double w1[1] = {1.0}, xm1[1] = {1.0}, co[1], ic, er;
    lg_relax_plane_apply(1, w1, -INFINITY, w1, 1.0, xm1, 2.0, co, &ic, &er);
    ck_assert(er == INFINITY);
    lg_relax_plane_apply(1, w1, 0.5, w1, 1.0, xm1, 0.0, co, &ic, &er);
    ck_assert(er == 0.0 && ic == 0.0 && co[0] == 0.0);
    mpq_clears(a, b, t, v, NULL);
}
END_TEST

Suite *suite_relax_tf(void)
{
    Suite *s = suite_create("relax_tf");
    TCase *tc = tcase_create("core");
    lg_tcase_timeout(tc, 300);
    tcase_add_test(tc, test_relax_tf_bilinear_random);
    tcase_add_test(tc, test_relax_tf_bilinear_hard);
    tcase_add_test(tc, test_relax_tf_bilinear_tight);
    tcase_add_test(tc, test_relax_tf_softmax_random);
    tcase_add_test(tc, test_relax_tf_layernorm_random);
    tcase_add_test(tc, test_relax_tf_hard);
    tcase_add_test(tc, test_relax_tf_softmax_tight);
    tcase_add_test(tc, test_relax_tf_image_point);
    tcase_add_test(tc, test_relax_tf_layernorm_tight);
    tcase_add_test(tc, test_relax_tf_softmax_taylor);
    tcase_add_test(tc, test_relax_tf_layernorm_taylor);
    tcase_add_test(tc, test_relax_tf_deviation_bilinear);
    tcase_add_test(tc, test_relax_tf_plane_apply);
    tcase_add_test(tc, test_relax_tf_deviation_softmax);
    tcase_add_test(tc, test_relax_tf_deviation_layernorm);
    tcase_add_test(tc, test_relax_tf_softmax_shift);
    tcase_add_test(tc, test_relax_tf_layernorm_region);
    suite_add_tcase(s, tc);
    return s;
}
