/* check_edges.c — soundness at the edges (DESIGN.md §3): one test per
 * mechanism that turns exact numbers into doubles — balls from x and ε,
 * margins, the witness gate for smooth networks, ONNX constant folding and
 * pattern constants, float64 datasets, trivially true output conditions,
 * exports, and the class claim of `lgelu check`. Every expected answer comes
 * from an oracle that does not use lgelu: GMP rationals, MPFR at 300 bits, or
 * a value computed by hand in the comment. */
#include <check.h>
#include <gmp.h>
#include <math.h>
#include <mpfr.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "anneal/deviation.h"
#include "core/ball.h"
#include "core/exact.h"
#include "core/idx.h"
#include "core/netfile.h"
#include "core/npy.h"
#include "soundfuzz.h"
#include "testutil.h"
#include "test_solver.h"
#include "verify/prop.h"
#include "verify/recheck.h"
#include "verify/verify.h"
#include "verify/vnnlib.h"
#include "onnx/load.h"

/* sign of q − d for a finite double d (GMP has no mpq_cmp_d) */
static int mpq_cmp_d(const mpq_t q, double d)
{
    mpq_t t;
    mpq_init(t);
    mpq_set_d(t, d);
    int c = mpq_cmp(q, t);
    mpq_clear(t);
    return c;
}

/* A chain 1 → … with given widths; every weight and bias zero. */
static void lg_edges_net(lg_net *n, int n_layers, const int *dims, lg_act hidden)
{
    ck_assert_int_eq(lg_net_init(n, n_layers, dims, hidden), LG_OK);
}

/* ---- 1. balls: outward and inward around x0, against GMP ---- */
START_TEST(test_edges_ball_rounding)
{
    const double xs[] = {0.5, 0.1, 1e-300, 0.75, 1.0 / 3.0, 0.0};
    const double es[] = {1e-20, 6.5e-19, 0x1p-60, 0.01, 1e-300, 0.3};
    mpq_t q, e, t;
    mpq_inits(q, e, t, NULL);
    for (size_t i = 0; i < sizeof xs / sizeof *xs; i++)
        for (size_t j = 0; j < sizeof es / sizeof *es; j++) {
            double lo, hi, li, hn;
            lg_ball_boxes(&xs[i], 1, es[j], -10.0, 10.0, &lo, &hi, &li, &hn);
            mpq_set_d(q, xs[i]);
            mpq_set_d(e, es[j]);
            mpq_sub(t, q, e); /* exact x0 − ε */
            ck_assert_msg(mpq_cmp_d(t, lo) >= 0 && mpq_cmp_d(t, li) <= 0, "x0 %g eps %g: lower end", xs[i], es[j]);
            ck_assert_msg(li == lo || li == nextafter(lo, INFINITY), "x0 %g eps %g: lower ends not adjacent", xs[i],
                          es[j]);
            mpq_add(t, q, e);
            ck_assert_msg(mpq_cmp_d(t, hi) <= 0 && mpq_cmp_d(t, hn) >= 0, "x0 %g eps %g: upper end", xs[i], es[j]);
            ck_assert_msg(es[j] == 0 || lo < xs[i], "x0 %g eps %g: the outward ball collapsed", xs[i], es[j]);
        }
    mpq_clears(q, e, t, NULL);
}
END_TEST

/* The certified deviation on a ball that rounding to nearest collapses to a
 * point. ref: h = gelu((x − ½)·2⁶⁰), y = h; relu: the same with relu. On the
 * ball ε = 6.5e-19 around ½ the normalised input reaches z = 6.5e-19·2⁶⁰ =
 * 0.74940…, where |z·Φ(z) − z| = z·Φ(−z) ≈ 0.170 (MPFR below); x0 ± ε rounds
 * to ½ itself. */
START_TEST(test_edges_ball_deviation_normalised)
{
    const int dims[] = {1, 1, 1};
    lg_net relu, ref;
    lg_edges_net(&relu, 2, dims, LG_ACT_RELU);
    lg_edges_net(&ref, 2, dims, LG_ACT_GELU);
    for (lg_net *n = &relu; n; n = n == &relu ? &ref : NULL) {
        n->layers[0].lin.W[0] = 1.0;
        n->layers[1].lin.W[0] = 1.0;
        n->in_sub = malloc(sizeof(double));
        n->in_div = malloc(sizeof(double));
        n->in_sub[0] = 0.5;
        n->in_div[0] = 0x1p-60;
    }
    lg_dev d;
    ck_assert_int_eq(lg_dev_init(&d, &relu, &ref), LG_OK);
    const double x0 = 0.5, eps = 6.5e-19;
    double delta;
    ck_assert_int_eq(lg_dev_bound_balls(&d, &x0, 1, eps, 0.0, 1.0, &delta, NULL, NULL), LG_OK);
    mpfr_t z, p, r;
    mpfr_inits2(300, z, p, r, (mpfr_ptr)0);
    mpfr_set_d(z, eps, MPFR_RNDN);
    mpfr_mul_2si(z, z, 60, MPFR_RNDN); /* exact: z = ε·2⁶⁰ */
    mpfr_set_ui(r, 2, MPFR_RNDN);
    mpfr_sqrt(r, r, MPFR_RNDN);
    mpfr_div(p, z, r, MPFR_RNDN);
    mpfr_erfc(p, p, MPFR_RNDN); /* erfc(z/√2) = 2Φ(−z) */
    mpfr_mul(p, p, z, MPFR_RNDN);
    mpfr_div_2ui(p, p, 1, MPFR_RNDN); /* z·Φ(−z) = |gelu(z) − relu(z)| */
    double truth = mpfr_get_d(p, MPFR_RNDN);
    mpfr_clears(z, p, r, (mpfr_ptr)0);
    ck_assert_msg(truth > 0.16, "oracle %g", truth);
    ck_assert_msg(delta >= 0.999 * truth, "certified %.6g below the true deviation %.6g on the ball", delta, truth);
    lg_dev_free(&d);
    lg_net_free(&relu);
    lg_net_free(&ref);
}
END_TEST

/* ---- 2. the witness gate on smooth nets ---- */

/* gelu(1) = Φ(1) = ½·erfc(−1/√2) at 300 bits, rounded down and up. */
static void lg_edges_gelu1(double *dn, double *up)
{
    mpfr_t v, r;
    mpfr_inits2(300, v, r, (mpfr_ptr)0);
    mpfr_set_ui(r, 2, MPFR_RNDN);
    mpfr_rec_sqrt(r, r, MPFR_RNDN);
    mpfr_neg(r, r, MPFR_RNDN);
    mpfr_erfc(v, r, MPFR_RNDN);
    mpfr_div_2ui(v, v, 1, MPFR_RNDN);
    *dn = mpfr_get_d(v, MPFR_RNDD);
    *up = mpfr_get_d(v, MPFR_RNDU);
    mpfr_clears(v, r, (mpfr_ptr)0);
}

/* y = gelu(x) at x = 1; counterexample y ≤ c. With c the double just below
 * the exact value, the double forward pass may well say yes, but no point
 * is a counterexample: the gate must refuse. With c a few ulps above, it is
 * one and the enclosure must certify it. */
START_TEST(test_edges_smooth_near_tie)
{
    const int dims[] = {1, 1, 1};
    lg_net n;
    lg_edges_net(&n, 2, dims, LG_ACT_GELU);
    n.layers[0].lin.W[0] = 1.0;
    n.layers[1].lin.W[0] = 1.0;
    double dn, up;
    lg_edges_gelu1(&dn, &up);
    ck_assert(dn < up);
    const double cs[2] = {dn, nextafter(nextafter(nextafter(up, 2), 2), 2)};
    for (int k = 0; k < 2; k++) {
        lg_prop p;
        ck_assert_int_eq(lg_prop_alloc(&p, 1, 1, 1, NULL), LG_OK);
        p.cases[0].lo[0] = p.cases[0].hi[0] = 1.0;
        p.cases[0].terms[0].cons[0].coef[0] = 1.0;
        p.cases[0].terms[0].cons[0].d = -cs[k];
        double x = 1.0, y;
        int ok = lg_witness_accept(&n, &p, 0, &x, &y);
        ck_assert_msg(ok == k, "threshold %d (%.17g): gate said %d", k, cs[k], ok);
        lg_prop_free(&p);
    }
    lg_net_free(&n);
}
END_TEST

/* Every smooth activation: an exact tie at a point and the next double
 * beyond it. prelu with slope fl(0.1) at x = −1: y = −fl(0.1) exactly, so
 * y ≤ −fl(0.1) holds (closed region) and y ≤ prev(−fl(0.1)) does not.
 * sigmoid at 0 is ½ exactly; swish at 0 is 0; lgelu at 0 is 0. */
START_TEST(test_edges_smooth_exact_ties)
{
    const struct {
        lg_act act;
        double lambda, x, y;
    } C[] = {{LG_ACT_PRELU, 0.1, -1.0, -0.1}, {LG_ACT_SIGMOID, 1.0, 0.0, 0.5}, {LG_ACT_SWISH, 3.0, 0.0, 0.0},
             {LG_ACT_LGELU, 7.0, 0.0, 0.0}};
    const int dims[] = {1, 1, 1};
    for (size_t i = 0; i < sizeof C / sizeof *C; i++) {
        lg_net n;
        lg_edges_net(&n, 2, dims, C[i].act);
        n.layers[0].lambda = C[i].lambda;
        n.layers[0].lin.W[0] = 1.0;
        n.layers[1].lin.W[0] = 1.0;
        for (int k = 0; k < 2; k++) {
            lg_prop p;
            ck_assert_int_eq(lg_prop_alloc(&p, 1, 1, 1, NULL), LG_OK);
            p.cases[0].lo[0] = p.cases[0].hi[0] = C[i].x;
            p.cases[0].terms[0].cons[0].coef[0] = 1.0;
            p.cases[0].terms[0].cons[0].d = -(k == 0 ? C[i].y : nextafter(C[i].y, -1.0));
            double x = C[i].x;
            int ok = lg_witness_accept(&n, &p, 0, &x, NULL);
            ck_assert_msg(ok == (k == 0), "%s threshold %d: gate said %d", lg_act_name(C[i].act), k, ok);
            lg_prop_free(&p);
        }
        lg_net_free(&n);
    }
}
END_TEST

/* A candidate just outside the exact ball: the gate moves it into the
 * inward box, whose every point lies in the exact ball (GMP). */
START_TEST(test_edges_witness_inward)
{
    const int dims[] = {1, 1, 2};
    lg_net n;
    lg_edges_net(&n, 2, dims, LG_ACT_GELU);
    n.layers[0].lin.W[0] = 1.0;
    n.layers[1].lin.W[0] = 1.0; /* y0 = gelu(x), y1 = 0: label 1, counterexample y1 − y0 ≤ 0 */
    const double x0 = 0.1, eps = 1e-17;
    lg_prop p;
    ck_assert_int_eq(lg_prop_robustness(&p, &x0, 1, eps, 0.0, 1.0, 1, 2, 0.0), LG_OK);
    double x = nextafter(p.cases[0].lo[0], -1.0);
    ck_assert_int_eq(lg_witness_accept(&n, &p, 0, &x, NULL), 1);
    mpq_t a, b;
    mpq_inits(a, b, NULL);
    mpq_set_d(a, x0);
    mpq_set_d(b, eps);
    mpq_sub(a, a, b);
    ck_assert_msg(mpq_cmp_d(a, x) <= 0, "witness %.17g below the exact ball", x);
    mpq_clears(a, b, NULL);
    lg_prop_free(&p);
    lg_net_free(&n);
}
END_TEST

/* ---- 3. margins, both ways ---- */

/* y = x + 2⁻⁷⁰ on the box {1}; counterexample y − 1 ≤ 0 with margin
 * K = 1e-17: y − 1 − K = 2⁻⁷⁰ − 1e-17 < 0, so a counterexample exists and
 * `robust` would be wrong. Z3 decides in rationals on the proof constants. */
START_TEST(test_edges_margin_proof_side)
{
    const int dims[] = {1, 1};
    lg_net n;
    lg_edges_net(&n, 1, dims, LG_ACT_IDENTITY);
    n.layers[0].lin.W[0] = 1.0;
    n.layers[0].b[0] = 0x1p-70;
    lg_prop p;
    ck_assert_int_eq(lg_prop_alloc(&p, 1, 1, 1, NULL), LG_OK);
    p.cases[0].lo[0] = p.cases[0].hi[0] = 1.0;
    p.cases[0].terms[0].cons[0].coef[0] = 1.0;
    p.cases[0].terms[0].cons[0].d = -1.0;
    ck_assert_int_eq(lg_verify_apply_margin(&p, 1e-17), LG_OK);
    /* GMP: proof constant ≤ −1 − K ≤ witness constant */
    mpq_t e, k, t;
    mpq_inits(e, k, t, NULL);
    mpq_set_si(e, -1, 1);
    mpq_set_d(k, 1e-17);
    mpq_sub(e, e, k);
    ck_assert(mpq_cmp_d(e, p.cases[0].terms[0].cons[0].d) >= 0);
    mpq_set_d(t, p.cases[0].terms[0].cons[0].d);
    mpq_set_d(k, p.inner[0].slack[0]);
    mpq_add(t, t, k);
    ck_assert(mpq_cmp(t, e) >= 0);
    mpq_clears(e, k, t, NULL);
    const char *solvers[] = {"z3", "auto"};
    for (int s = 0; s < 2; s++) {
        lg_verify_opts o = lg_verify_opts_default();
        o.solver = lg_test_solver(solvers[s]);
        o.attack = 0;
        o.bab.mode = LG_BAB_NONE;
        o.timeout_s = 20;
        lg_verify_report r;
        ck_assert_int_eq(lg_verify_run(&n, &p, &o, &r), LG_OK);
        ck_assert_msg(r.verdict != LG_VERDICT_ROBUST, "%s: robust, but x = 1 is a counterexample", solvers[s]);
        lg_verify_report_free(&r);
    }
    lg_prop_free(&p);
    lg_net_free(&n);
}
END_TEST

/* y = x on the box {1 + 2⁻⁵²}; counterexample y − 1 − K ≤ 0 with
 * K = 3·2⁻⁵⁴: 2⁻⁵² − 3·2⁻⁵⁴ = 2⁻⁵⁴ > 0, no counterexample: never
 * `violated` (fl(−1 − K) = −1 − 2⁻⁵² would accept the point). */
START_TEST(test_edges_margin_witness_side)
{
    const int dims[] = {1, 1};
    lg_net n;
    lg_edges_net(&n, 1, dims, LG_ACT_IDENTITY);
    n.layers[0].lin.W[0] = 1.0;
    lg_prop p;
    ck_assert_int_eq(lg_prop_alloc(&p, 1, 1, 1, NULL), LG_OK);
    p.cases[0].lo[0] = p.cases[0].hi[0] = 1.0 + 0x1p-52;
    p.cases[0].terms[0].cons[0].coef[0] = 1.0;
    p.cases[0].terms[0].cons[0].d = -1.0;
    ck_assert_int_eq(lg_verify_apply_margin(&p, 3 * 0x1p-54), LG_OK);
    lg_verify_opts o = lg_verify_opts_default();
    o.timeout_s = 20;
    lg_verify_report r;
    ck_assert_int_eq(lg_verify_run(&n, &p, &o, &r), LG_OK);
    ck_assert_msg(r.verdict != LG_VERDICT_VIOLATED, "violated, but 1 + 2^-52 misses the threshold by 2^-54");
    lg_verify_report_free(&r);
    lg_prop_free(&p);
    lg_net_free(&n);
}
END_TEST

/* ---- 4, 5. ONNX: exact folding and the file's own pattern constants ---- */
static char lg_edges_dir[256];
static int lg_edges_rc = -1;

static void lg_edges_setup(void)
{
    snprintf(lg_edges_dir, sizeof lg_edges_dir, "%s", lg_test_tmpfile("_edges"));
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s %s/tests/onnx_edges.py %s >/dev/null", LG_PYTHON3, LG_SOURCE_DIR, lg_edges_dir);
    lg_edges_rc = system(cmd);
}

static void lg_edges_teardown(void)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", lg_edges_dir);
    if (system(cmd)) return;
}

static const char *lg_edges_file(const char *name)
{
    static char p[512];
    snprintf(p, sizeof p, "%s/%s.onnx", lg_edges_dir, name);
    return p;
}

/* 1 if the imported net's exact output at x lies in [lo, hi] (core/exact.h
 * on the constraints y − hi ≤ 0 and lo − y ≤ 0). */
static int lg_edges_exact_in(const lg_net *n, double x, double lo, double hi)
{
    double c1 = 1.0, c2 = -1.0;
    lg_lincon L[2] = {{&c1, -hi}, {&c2, lo}};
    lg_term T = {2, L};
    return lg_exact_first_holding(n, &x, 1, &T, NULL) == 0;
}

START_TEST(test_edges_onnx_exact_folding)
{
    ck_assert_msg(lg_edges_rc == 0, "tests/onnx_edges.py failed (needs python3-onnx, python3-numpy)");
    lg_net n;
    /* y = x/3: 1/3 is not a double; importing a rounded copy would make y(3) < 1 */
    ck_assert_int_eq(lg_net_load(&n, lg_edges_file("div3")), LG_ERR_UNSUPPORTED);
    ck_assert_msg(strstr(lg_errmsg(), "not a double"), "%s", lg_errmsg());
    /* y = 10·(fl(0.1)·x): at x = 1 exactly fl(0.1)·10 = 1 + 2⁻⁵⁴ (GMP below), not fl of it (= 1) */
    ck_assert_msg(lg_net_load(&n, lg_edges_file("gemm2")) == LG_OK, "%s", lg_errmsg());
    mpq_t q, ten;
    mpq_inits(q, ten, NULL);
    mpq_set_d(q, 0.1);
    mpq_set_ui(ten, 10, 1);
    mpq_mul(q, q, ten);
    ck_assert_msg(mpq_cmp_ui(q, 1, 1) > 0 && mpq_cmp_d(q, nextafter(1.0, 2.0)) < 0, "oracle: fl(0.1)*10 in (1, next(1))");
    mpq_clears(q, ten, NULL);
    ck_assert_msg(lg_edges_exact_in(&n, 1.0, 1.0, nextafter(1.0, 2.0)) && !lg_edges_exact_in(&n, 1.0, 0.0, 1.0),
                  "the imported net is not the file's function at x = 1");
    lg_net_free(&n);
    /* (x·3)/3 folds exactly into one layer with weight 1 */
    ck_assert_msg(lg_net_load(&n, lg_edges_file("mul3div3")) == LG_OK, "%s", lg_errmsg());
    ck_assert_int_eq(n.n_layers, 1);
    ck_assert(n.layers[0].lin.W[0] == 1.0);
    lg_net_free(&n);
}
END_TEST

START_TEST(test_edges_onnx_pattern_constants)
{
    ck_assert_msg(lg_edges_rc == 0, "tests/onnx_edges.py failed (needs python3-onnx, python3-numpy)");
    lg_net n;
    /* divisor 1.41421 ≠ √2: the layer's λ must hold the file's λ = √2/1.41421 (MPFR) */
    ck_assert_msg(lg_net_load(&n, lg_edges_file("gelu_s")) == LG_OK, "%s", lg_errmsg());
    ck_assert_int_eq(n.layers[0].act, LG_ACT_LGELU);
    mpfr_t v, lo, hi;
    mpfr_inits2(300, v, lo, hi, (mpfr_ptr)0);
    mpfr_set_ui(v, 2, MPFR_RNDN);
    mpfr_sqrt(v, v, MPFR_RNDN);
    mpfr_div_d(v, v, 1.41421, MPFR_RNDN);
    mpfr_set_d(lo, n.layers[0].lambda, MPFR_RNDN);
    mpfr_set_d(hi, nextafter(n.layers[0].lambda, 2.0), MPFR_RNDN);
    ck_assert_msg(mpfr_lessequal_p(lo, v) && mpfr_less_p(v, hi), "λ %.17g does not hold √2/1.41421",
                  n.layers[0].lambda);
    mpfr_clears(v, lo, hi, (mpfr_ptr)0);
    lg_net_free(&n);
    /* factor 0.5000001: not the pattern */
    ck_assert_int_ne(lg_net_load(&n, lg_edges_file("gelu_k")), LG_OK);
}
END_TEST

/* Random foldable graphs (the fuzzer's ONNX class): each refused, or
 * imported as exactly the file's function (Python Fractions vs GMP). */
START_TEST(test_edges_onnx_fold_fuzz)
{
    lg_fuzz_stats s;
    memset(&s, 0, sizeof s);
    long bad = lg_fuzz_onnx_fold(7, 0, 40, &s, stdout);
    ck_assert_msg(bad == 0, "%ld wrong imports or errors", bad);
    ck_assert_int_eq(s.onnx_graphs, 40);
    ck_assert_msg(s.onnx_imported > 5 && s.onnx_imported < 40, "%ld of 40 imported: the classes are not mixed",
                  s.onnx_imported);
}
END_TEST

/* ---- 6. float64 .npy datasets ---- */
static void lg_edges_npy(const char *path, const char *descr, const void *data, size_t bytes, const char *shape)
{
    char hdr[128];
    int len = snprintf(hdr, sizeof hdr, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, shape);
    int total = 10 + len + 1, pad = (64 - total % 64) % 64;
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    unsigned short hl = (unsigned short)(len + pad + 1);
    fwrite("\x93NUMPY\x01\x00", 1, 8, f);
    fputc(hl & 0xff, f);
    fputc(hl >> 8, f);
    fwrite(hdr, 1, (size_t)len, f);
    for (int i = 0; i < pad; i++) fputc(' ', f);
    fputc('\n', f);
    fwrite(data, 1, bytes, f);
    fclose(f);
}

START_TEST(test_edges_npy_float64)
{
    const double lossy[2] = {0.5, 0.1}, exact[2] = {0.5, 0.375};
    const unsigned char y[1] = {0};
    char xp[256], yp[256], spec[600];
    snprintf(xp, sizeof xp, "%s", lg_test_tmpfile(".npy"));
    snprintf(yp, sizeof yp, "%s", lg_test_tmpfile(".npy"));
    snprintf(spec, sizeof spec, "%s,%s", xp, yp);
    lg_edges_npy(yp, "|u1", y, 1, "(1,)");
    for (int k = 0; k < 2; k++) {
        lg_edges_npy(xp, "<f8", k ? exact : lossy, sizeof lossy, "(1, 2)");
        lg_dataset ds;
        ck_assert_int_eq(lg_data_load_spec(&ds, spec, "test"), LG_OK);
        lg_status st = lg_dataset_require_exact(&ds, spec);
        /* 0.1 is not a float32 (hand: its float32 is 0.100000001490116…); 0.375 is */
        ck_assert_msg(k ? st == LG_OK : st == LG_ERR_FORMAT, "k %d: %s", k, lg_errmsg());
        if (!k) ck_assert_msg(strstr(lg_errmsg(), "one feature per network input") && strstr(lg_errmsg(), "feature 1"), "%s", lg_errmsg());
        lg_dataset_free(&ds);
    }
}
END_TEST

/* ---- 7. empty and trivially true output conditions ---- */
START_TEST(test_edges_trivial_terms)
{
    const int dims[] = {2, 3, 2};
    lg_net n;
    lg_edges_net(&n, 2, dims, LG_ACT_RELU);
    lg_rng r;
    lg_rng_init(&r, 3, 0);
    lg_test_randomize(&n, &r, 1.0);
    const char *texts[] = {
        "(declare-const X_0 Real)(declare-const X_1 Real)(declare-const Y_0 Real)(declare-const Y_1 Real)\n"
        "(assert (>= X_0 0.1))(assert (<= X_0 0.3))(assert (>= X_1 -1))(assert (<= X_1 1))\n",
        "(declare-const X_0 Real)(declare-const X_1 Real)(declare-const Y_0 Real)(declare-const Y_1 Real)\n"
        "(assert (>= X_0 0.1))(assert (<= X_0 0.3))(assert (>= X_1 -1))(assert (<= X_1 1))\n"
        "(assert (<= Y_0 Y_0))\n"};
    const lg_bab_mode modes[] = {LG_BAB_INPUT, LG_BAB_RELU, LG_BAB_NONE};
    for (int k = 0; k < 2; k++) {
        const char *path = lg_test_tmpfile(".vnnlib");
        FILE *f = fopen(path, "w");
        fputs(texts[k], f);
        fclose(f);
        lg_prop p;
        ck_assert_msg(lg_vnnlib_read(&p, path, 2, 2) == LG_OK, "%s", lg_errmsg());
        for (int m = 0; m < 3; m++) {
            lg_verify_opts o = lg_verify_opts_default();
            o.attack = 0;
            o.bab.mode = modes[m];
            o.timeout_s = 20;
            lg_verify_report rep;
            ck_assert_msg(lg_verify_run(&n, &p, &o, &rep) == LG_OK, "property %d mode %d: %s", k, m, lg_errmsg());
            ck_assert_msg(rep.verdict == LG_VERDICT_VIOLATED, "property %d mode %d: %s (%s)", k, m,
                          lg_verdict_name(rep.verdict), rep.how.reason);
            ck_assert(rep.x[0] >= 0.1 && rep.x[0] <= 0.3 && rep.x[1] >= -1 && rep.x[1] <= 1);
            lg_verify_report_free(&rep);
        }
        lg_prop_free(&p);
    }
    lg_net_free(&n);
}
END_TEST

/* ---- 8. exports: SMT-LIB exact, LP says which way it rounded ---- */
START_TEST(test_edges_encode_exact)
{
    const int dims[] = {1, 1};
    lg_net n;
    lg_edges_net(&n, 1, dims, LG_ACT_IDENTITY);
    n.layers[0].lin.W[0] = 1.0;
    const char *np = lg_test_tmpfile(".lgnet"), *vp = lg_test_tmpfile(".vnnlib");
    ck_assert_int_eq(lg_netfile_write(&n, np), LG_OK);
    /* y = x, x ∈ [0, 5/4]: Y0/3 ≥ 0.41666666666666667 has no solution (max Y0/3 = 5/12 =
     * 0.41666…6 < 0.41666666666666667, by hand), Y0 ≥ 1 has one */
    const char *texts[2] = {"(declare-const X_0 Real)(declare-const Y_0 Real)(assert (>= X_0 0))(assert (<= X_0 1.25))"
                            "(assert (>= (/ Y_0 3) 0.41666666666666667))",
                            "(declare-const X_0 Real)(declare-const Y_0 Real)(assert (>= X_0 0))(assert (<= X_0 1.25))"
                            "(assert (>= Y_0 1.0))"};
    const char *z3_says[2] = {"unsat", "sat"};
    for (int k = 0; k < 2; k++) {
        FILE *f = fopen(vp, "w");
        fputs(texts[k], f);
        fclose(f);
        for (int fm = 0; fm < 2; fm++) {
            const char *out = lg_test_tmpfile(fm ? ".lp" : ".smt2");
            char args[1024];
            snprintf(args, sizeof args, "encode %s --vnnlib %s --format %s -o %s", np, vp, fm ? "lp" : "smt2", out);
            ck_assert_int_eq(lg_test_cli(args, NULL), 0);
            char buf[4096] = {0};
            f = fopen(out, "r");
            size_t got = fread(buf, 1, sizeof buf - 1, f);
            fclose(f);
            buf[got] = 0;
            int says = strstr(buf, "may be spurious") != NULL;
            /* SMT-LIB holds the exact property; LP notes the rounding when there was one */
            ck_assert_msg(says == (fm == 1 && k == 0), "property %d format %d: rounding note %d", k, fm, says);
            if (fm == 0) {
                char cmd[600], res[64] = {0};
                snprintf(cmd, sizeof cmd, "z3 %s 2>&1", out);
                FILE *z = popen(cmd, "r");
                ck_assert_ptr_nonnull(z);
                size_t r = fread(res, 1, sizeof res - 1, z);
                pclose(z);
                res[r] = 0;
                ck_assert_msg(strncmp(res, z3_says[k], strlen(z3_says[k])) == 0 && (k == 1 || res[5] != 'a'),
                              "property %d: z3 says %s on the export", k, res);
            }
        }
    }
    lg_net_free(&n);
}
END_TEST

/* ---- 9. `check`: the class claim needs a bound over the ball ---- */

/* h = act(x), y0 = h, y1 = 0.45 (a bias). At x = 0.5 both nets give class
 * 0 with margin 0.05; on the ball of radius 0.4 (clipped to [0.1, 0.9]),
 * x = 0.1 gives y0 = 0.1 < 0.45 in both (hand), so the class is not kept.
 * On radius 0.01 it is (y0 ≥ 0.49 − 0.0 > 0.45, relu vs λ-GELU with λ = 400
 * differ by < 1e-30 there). */
START_TEST(test_edges_check_class_claim)
{
    const int dims[] = {1, 1, 2};
    lg_net relu, ref;
    lg_edges_net(&relu, 2, dims, LG_ACT_RELU);
    lg_edges_net(&ref, 2, dims, LG_ACT_LGELU);
    for (lg_net *n = &relu; n; n = n == &relu ? &ref : NULL) {
        n->layers[0].lin.W[0] = 1.0;
        n->layers[0].lambda = n == &ref ? 400.0 : 1.0;
        n->layers[1].lin.W[0] = 1.0;
        n->layers[1].b[1] = 0.45;
    }
    const char *rp = lg_test_tmpfile(".lgnet"), *gp = lg_test_tmpfile(".lgnet"), *ip = lg_test_tmpfile(".txt");
    ck_assert_int_eq(lg_netfile_write(&relu, rp), LG_OK);
    ck_assert_int_eq(lg_netfile_write(&ref, gp), LG_OK);
    FILE *f = fopen(ip, "w");
    fputs("0.5\n", f);
    fclose(f);
    const double eps[2] = {0.4, 0.01};
    for (int k = 0; k < 2; k++) {
        const char *out = lg_test_tmpfile(".json");
        char args[1024];
        snprintf(args, sizeof args, "check %s --ref %s --inputs %s --max-deviation 1 --eps %g --json", rp, gp, ip,
                 eps[k]);
        ck_assert_int_eq(lg_test_cli(args, out), 0);
        char buf[4096] = {0};
        f = fopen(out, "r");
        size_t got = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[got] = 0;
        const char *c = strstr(buf, "\"certified_same_class\"");
        ck_assert_msg(c, "%s", buf);
        int v = -1;
        ck_assert_int_eq(sscanf(strchr(c, ':') + 1, " %d", &v), 1);
        ck_assert_msg(v == k, "eps %g: certified_same_class %d", eps[k], v);
    }
    lg_net_free(&relu);
    lg_net_free(&ref);
}
END_TEST

Suite *suite_edges(void)
{
    Suite *s = suite_create("edges");
    TCase *c = tcase_create("core");
    lg_tcase_timeout(c, 120);
    tcase_add_unchecked_fixture(c, lg_edges_setup, lg_edges_teardown);
    tcase_add_test(c, test_edges_ball_rounding);
    tcase_add_test(c, test_edges_ball_deviation_normalised);
    tcase_add_test(c, test_edges_smooth_near_tie);
    tcase_add_test(c, test_edges_smooth_exact_ties);
    tcase_add_test(c, test_edges_witness_inward);
    tcase_add_test(c, test_edges_margin_proof_side);
    tcase_add_test(c, test_edges_margin_witness_side);
    tcase_add_test(c, test_edges_onnx_exact_folding);
    tcase_add_test(c, test_edges_onnx_pattern_constants);
    tcase_add_test(c, test_edges_onnx_fold_fuzz);
    tcase_add_test(c, test_edges_npy_float64);
    tcase_add_test(c, test_edges_trivial_terms);
    tcase_add_test(c, test_edges_encode_exact);
    tcase_add_test(c, test_edges_check_class_claim);
    suite_add_tcase(s, c);
    return s;
}
