/* check_vnnlib.c — VNN-LIB parsing: the VNN-COMP fixture properties (ACAS Xu
 * 1–4, MNIST), their counterexamples evaluated through the imported ONNX
 * networks, DNF normalisation, linear terms, and refusal of malformed text. */
#include <check.h>
#include <gmp.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/netfile.h"
#include "core/rng.h"
#include "verify/vnnlib.h"
#include "verify/verify.h"
#include "test_solver.h"
#include "testutil.h"
#include "onnx/load.h"

static const char *lg_acas_props[] = {"acasxu/prop_1.vnnlib", "acasxu/prop_2.vnnlib", "acasxu/prop_3.vnnlib",
                                      "acasxu/prop_4.vnnlib"};

START_TEST(test_vnnlib_acasxu_props)
{
    for (int f = 0; f < 4; f++) {
        lg_prop p;
        ck_assert_msg(lg_vnnlib_read(&p, lg_test_fixture(lg_acas_props[f]), 5, 5) == LG_OK, "%s: %s",
                      lg_acas_props[f], lg_errmsg());
        ck_assert_int_eq(p.n_cases, 1);
        ck_assert_int_eq(p.cases[0].n_terms, 1);
        ck_assert_int_eq(p.cases[0].terms[0].n_cons, f == 0 ? 1 : 4);
        for (int i = 0; i < 5; i++) ck_assert(p.cases[0].lo[i] <= p.cases[0].hi[i]);
        if (f == 0) {
            /* (>= Y_0 3.991125645861615)  →  −Y_0 + 3.991… ≤ 0 */
            ck_assert_double_eq(p.cases[0].lo[0], 0.6);
            /* decimal bounds are rounded outward for proofs (DESIGN.md §3): at most 1 ulp away */
            ck_assert(p.cases[0].hi[0] >= 0.679857769 && p.cases[0].hi[0] <= nextafter(0.679857769, 1.0));
            ck_assert_double_eq(p.cases[0].lo[4], -0.5);
            ck_assert(p.cases[0].hi[4] >= -0.45 && p.cases[0].hi[4] <= nextafter(-0.45, 1.0));
            const lg_lincon *L = &p.cases[0].terms[0].cons[0];
            ck_assert_double_eq(L->coef[0], -1.0);
            for (int j = 1; j < 5; j++) ck_assert_double_eq(L->coef[j], 0.0);
            ck_assert(L->d <= 3.991125645861615 && L->d >= nextafter(3.991125645861615, 0.0)); /* rounded down */
            double y_bad[5] = {4, 0, 0, 0, 0}, y_ok[5] = {3.9, 0, 0, 0, 0};
            ck_assert(lg_prop_case_violated_by(&p, 0, y_bad));
            ck_assert(!lg_prop_case_violated_by(&p, 0, y_ok));
        }
        if (f == 1) {
            /* (<= Y_k Y_0), k = 1..4: Y_k − Y_0 ≤ 0 (COC maximal) */
            for (int k = 0; k < 4; k++) {
                const lg_lincon *L = &p.cases[0].terms[0].cons[k];
                ck_assert_double_eq(L->coef[k + 1], 1.0);
                ck_assert_double_eq(L->coef[0], -1.0);
                ck_assert_double_eq(L->d, 0.0);
            }
            double y_max0[5] = {1, 0, 0.5, -1, 0.9}, y_not[5] = {1, 2, 0, 0, 0};
            ck_assert(lg_prop_case_violated_by(&p, 0, y_max0));
            ck_assert(!lg_prop_case_violated_by(&p, 0, y_not));
        }
        lg_prop_free(&p);
    }
}
END_TEST

START_TEST(test_vnnlib_mnist_props)
{
    static const struct {
        const char *file;
        int label;
        double eps;
    } T[] = {{"vnncomp/prop_1_0.05.vnnlib", 7, 0.05},
             {"vnncomp/prop_2_0.05.vnnlib", 4, 0.05},
             {"vnncomp/prop_3_0.05.vnnlib", 0, 0.05},
             {"vnncomp/prop_7_0.03.vnnlib", 5, 0.03}};
    for (int f = 0; f < 4; f++) {
        lg_prop p;
        ck_assert_msg(lg_vnnlib_read(&p, lg_test_fixture(T[f].file), 784, 10) == LG_OK, "%s: %s", T[f].file,
                      lg_errmsg());
        ck_assert_int_eq(p.n_cases, 1);
        ck_assert_int_eq(p.cases[0].n_terms, 9);
        for (int i = 0; i < 784; i++) {
            ck_assert(p.cases[0].lo[i] >= 0.0 && p.cases[0].hi[i] <= 1.0);
            ck_assert(p.cases[0].hi[i] - p.cases[0].lo[i] <= 2 * T[f].eps + 1e-6);
        }
        for (int t = 0; t < 9; t++) {
            /* (>= Y_j Y_label): Y_label − Y_j ≤ 0 */
            const lg_term *Tm = &p.cases[0].terms[t];
            ck_assert_int_eq(Tm->n_cons, 1);
            ck_assert_double_eq(Tm->cons[0].coef[T[f].label], 1.0);
            int neg = 0;
            for (int j = 0; j < 10; j++) neg += Tm->cons[0].coef[j] == -1.0;
            ck_assert_int_eq(neg, 1);
        }
        lg_prop_free(&p);
    }
}
END_TEST

/* The VNN-COMP counterexample files: X inside the box; the imported ONNX
 * network reproduces the Y (computed independently with numpy float64);
 * the output lies in the counterexample region. */
START_TEST(test_vnnlib_counterexamples_reproduce)
{
    const char *props[] = {"vnncomp/prop_1_0.05", "vnncomp/prop_2_0.05"};
    lg_net net;
    ck_assert_msg(lg_net_load(&net, lg_test_fixture("vnncomp/mnist-net_256x2.onnx")) == LG_OK, "%s", lg_errmsg());
    double x[784], yf[10], y[10];
    double *scratch = malloc(2 * (size_t)lg_net_max_width(&net) * sizeof *scratch);
    for (int f = 0; f < 2; f++) {
        char pv[256], pc[256];
        snprintf(pv, sizeof pv, "%s.vnnlib", lg_test_fixture(props[f]));
        snprintf(pc, sizeof pc, "%s.counterexample", lg_test_fixture(props[f]));
        lg_prop p;
        ck_assert_msg(lg_vnnlib_read(&p, pv, 784, 10) == LG_OK, "%s", lg_errmsg());
        ck_assert_msg(lg_vnnlib_read_assignment(pc, 784, 10, x, yf) == LG_OK, "%s", lg_errmsg());
        ck_assert_msg(lg_prop_case_contains(&p, 0, x), "%s: X outside the box", pc);
        lg_net_forward(&net, x, y, scratch);
        for (int j = 0; j < 10; j++)
            ck_assert_msg(fabs(y[j] - yf[j]) <= 1e-9, "%s: Y_%d = %.17g, file says %.17g", pc, j, y[j], yf[j]);
        ck_assert(lg_prop_case_violated_by(&p, 0, y));
        lg_prop_free(&p);
    }
    free(scratch);
    lg_net_free(&net);
}
END_TEST

/* End-to-end orientation check against the known VNN-COMP verdicts: random
 * points of each property's box, evaluated through the imported ACAS Xu
 * networks, never fall in the counterexample region where the verdict is
 * unsat (network 1_1: all four; 1_7: properties 1, 2), and do where it is
 * sat and the region is large (1_7: properties 3, 4). */
START_TEST(test_vnnlib_acasxu_sampling_agrees_with_verdicts)
{
    static const char *nets[] = {"acasxu/ACASXU_run2a_1_1_batch_2000.onnx", "acasxu/ACASXU_run2a_1_7_batch_2000.onnx"};
    static const int sat[2][4] = {{0, 0, 0, 0}, {0, 0, 1, 1}};
    int n_samples = getenv("LG_TEST_QUICK") ? 100 : 1000;
    lg_rng r;
    lg_rng_init(&r, 31, 0);
    for (int k = 0; k < 2; k++) {
        lg_net net;
        ck_assert_msg(lg_net_load(&net, lg_test_fixture(nets[k])) == LG_OK, "%s", lg_errmsg());
        double scratch[100], x[5], y[5];
        for (int f = 0; f < 4; f++) {
            lg_prop p;
            ck_assert_int_eq(lg_vnnlib_read(&p, lg_test_fixture(lg_acas_props[f]), 5, 5), LG_OK);
            int hits = 0;
            for (int s = 0; s < n_samples; s++) {
                for (int i = 0; i < 5; i++)
                    x[i] = p.cases[0].lo[i] + (p.cases[0].hi[i] - p.cases[0].lo[i]) * lg_rng_uniform(&r);
                ck_assert(lg_prop_case_contains(&p, 0, x));
                lg_net_forward(&net, x, y, scratch);
                hits += lg_prop_case_violated_by(&p, 0, y);
            }
            if (sat[k][f]) ck_assert_msg(hits > 0, "%s %s: no counterexample sampled", nets[k], lg_acas_props[f]);
            else ck_assert_msg(hits == 0, "%s %s: %d samples violate an unsat property", nets[k], lg_acas_props[f], hits);
            lg_prop_free(&p);
        }
        lg_net_free(&net);
    }
}
END_TEST

static const char lg_decl2[] = "(declare-const X_0 Real)(declare-const X_1 Real)\n"
                               "(declare-const Y_0 Real)(declare-const Y_1 Real)\n";

static void lg_parse_ok(lg_prop *p, const char *body, int n_in, int n_out)
{
    char text[4096];
    snprintf(text, sizeof text, "%s%s", lg_decl2, body);
    ck_assert_msg(lg_vnnlib_parse(p, text, strlen(text), "inline", n_in, n_out) == LG_OK, "%s\n%s", body,
                  lg_errmsg());
}

START_TEST(test_vnnlib_dnf_cases_and_terms)
{
    lg_prop p;
    /* VNN-COMP ACAS prop 6 style: a disjunction of two input boxes */
    lg_parse_ok(&p,
                "(assert (or (and (>= X_0 0) (<= X_0 1) (>= X_1 0) (<= X_1 1))\n"
                "            (and (>= X_0 2) (<= X_0 3) (>= X_1 0) (<= X_1 1))))\n"
                "(assert (<= Y_0 Y_1))\n",
                2, 2);
    ck_assert_int_eq(p.n_cases, 2);
    ck_assert_double_eq(p.cases[1].lo[0], 2.0);
    ck_assert_double_eq(p.cases[1].hi[0], 3.0);
    ck_assert_int_eq(p.cases[0].n_terms, 1);
    lg_prop_free(&p);
    /* two disjunctive asserts distribute into 4 terms over one box */
    lg_parse_ok(&p,
                "(assert (<= X_0 1)) (assert (>= X_0 -1)) (assert (and (<= X_1 1) (>= X_1 -1)))\n"
                "(assert (or (>= Y_0 1) (>= Y_1 1)))\n"
                "(assert (or (<= Y_0 -1) (<= Y_1 -1)))\n",
                2, 2);
    ck_assert_int_eq(p.n_cases, 1);
    ck_assert_int_eq(p.cases[0].n_terms, 4);
    for (int t = 0; t < 4; t++) ck_assert_int_eq(p.cases[0].terms[t].n_cons, 2);
    double y1[2] = {1, -1}, y2[2] = {0.5, 0.5}, y3[2] = {2, 2};
    ck_assert(lg_prop_case_violated_by(&p, 0, y1));
    ck_assert(!lg_prop_case_violated_by(&p, 0, y2));
    ck_assert(!lg_prop_case_violated_by(&p, 0, y3));
    lg_prop_free(&p);
    /* a constant-false conjunct and an empty box are dropped */
    lg_parse_ok(&p,
                "(assert (or (and (<= X_0 1) (>= X_0 0) (<= X_1 1) (>= X_1 0) (<= 1 0))\n"
                "            (and (<= X_0 1) (>= X_0 2) (<= X_1 1) (>= X_1 0))\n"
                "            (and (<= X_0 5) (>= X_0 4) (<= X_1 1) (>= X_1 0) (<= 0 1))))\n",
                2, 2);
    ck_assert_int_eq(p.n_cases, 1);
    ck_assert_double_eq(p.cases[0].lo[0], 4.0);
    ck_assert_int_eq(p.cases[0].terms[0].n_cons, 0);
    lg_prop_free(&p);
}
END_TEST

/* An input region that holds no point: no point can violate, so the property
 * holds (`robust`, VNN-COMP `unsat`), decided on the exact numbers of the
 * file — a lower bound above the upper one by less than a double's spacing
 * empties the box, and a box of one exact point that is no double does not. */
START_TEST(test_vnnlib_empty_box_holds)
{
    static const struct {
        const char *body;
        int n_cases;
    } T[] = {
        {"(assert (>= X_0 0.5)) (assert (<= X_0 0.4)) (assert (>= X_1 0)) (assert (<= X_1 1)) (assert (<= Y_0 Y_1))", 0},
        {"(assert (>= X_0 0.3)) (assert (<= X_0 0.7)) (assert (>= X_1 0)) (assert (<= X_1 1))\n"
         "(assert (>= X_0 0.8)) (assert (<= Y_0 Y_1))", 0},
        /* exactly empty, though both bounds round to the same doubles */
        {"(assert (>= X_0 0.10000000000000000001)) (assert (<= X_0 0.1)) (assert (>= X_1 0)) (assert (<= X_1 1))"
         "(assert (<= Y_0 Y_1))", 0},
        /* not empty: [0.1, 0.1 + 1e-20] holds points (though no double) */
        {"(assert (>= X_0 0.1)) (assert (<= X_0 0.10000000000000000001)) (assert (>= X_1 0)) (assert (<= X_1 1))"
         "(assert (<= Y_0 Y_1))", 1},
        /* one empty case of two: the other stays */
        {"(assert (or (and (>= X_0 0.5) (<= X_0 0.4) (>= X_1 0) (<= X_1 1))\n"
         "            (and (>= X_0 0) (<= X_0 1) (>= X_1 0) (<= X_1 1))))\n(assert (<= Y_0 Y_1))", 1},
    };
    char text[2048];
    for (size_t i = 0; i < sizeof T / sizeof T[0]; i++) {
        lg_prop p;
        snprintf(text, sizeof text, "%s%s", lg_decl2, T[i].body);
        ck_assert_msg(lg_vnnlib_parse(&p, text, strlen(text), "empty", 2, 2) == LG_OK, "case %zu: %s", i, lg_errmsg());
        ck_assert_msg(p.n_cases == T[i].n_cases, "case %zu: %d cases, expected %d", i, p.n_cases, T[i].n_cases);
        lg_prop_free(&p);
    }
    /* verify: robust, result file unsat, exit 0 */
    const char *net = lg_test_tmpfile(".lgnet");
    int dims[3] = {2, 3, 2};
    lg_net n;
    lg_rng r;
    lg_rng_init(&r, 5, 0);
    ck_assert_int_eq(lg_net_init(&n, 2, dims, LG_ACT_RELU), LG_OK);
    lg_test_randomize(&n, &r, 1.0);
    ck_assert_int_eq(lg_netfile_write(&n, net), LG_OK);
    lg_net_free(&n);
    char prop[256], res[256], out[256], args[2048];
    snprintf(prop, sizeof prop, "%s", lg_test_tmpfile(".vnnlib"));
    snprintf(res, sizeof res, "%s", lg_test_tmpfile(".res"));
    snprintf(out, sizeof out, "%s", lg_test_tmpfile(".out"));
    snprintf(text, sizeof text, "%s%s", lg_decl2, T[0].body);
    lg_test_write(prop, text);
    for (int solver = 0; solver < 3; solver++) {
        static const char *const names[] = {"auto", "z3", "glpk"};
        snprintf(args, sizeof args, "verify '%s' --vnnlib '%s' --solver %s -o '%s'", net, prop, names[solver], res);
        ck_assert_int_eq(lg_test_cli(args, out), 0);
        ck_assert_msg(strncmp(lg_test_slurp(out), "robust", 6) == 0, "%s: %s", names[solver], lg_test_slurp(out));
        ck_assert_str_eq(lg_test_slurp(res), "unsat\n");
    }
}
END_TEST

START_TEST(test_vnnlib_linear_terms)
{
    lg_prop p;
    /* 2·Y_0 − Y_1 + 0.15 ≤ −3  →  coef (2, −1), d = 3.15;  bounds with unary
     * minus, scientific notation, chains and (= a b) */
    lg_parse_ok(&p,
                "(assert (<= (- 1.5e-1) X_0 (+ 0.5 0.25)))\n"
                "(assert (>= X_1 -2E+0)) (assert (<= (* 1 X_1) (/ 1 4)))\n"
                "(assert (<= (+ (* 2 Y_0) (- Y_1) 1.5e-1) (- 3)))\n"
                "(assert (= (* 2 (- Y_0 Y_1)) 1))\n",
                0, 0);
    ck_assert_int_eq(p.n_in, 2);
    ck_assert_int_eq(p.n_out, 2);
    ck_assert(p.cases[0].lo[0] <= -0.15 && p.cases[0].lo[0] >= nextafter(-0.15, -1.0)); /* outward */
    ck_assert_double_eq(p.cases[0].hi[0], 0.75);
    ck_assert_double_eq(p.cases[0].lo[1], -2.0);
    ck_assert_double_eq(p.cases[0].hi[1], 0.25);
    const lg_term *T = &p.cases[0].terms[0];
    ck_assert_int_eq(T->n_cons, 3);
    ck_assert_double_eq(T->cons[0].coef[0], 2.0);
    ck_assert_double_eq(T->cons[0].coef[1], -1.0);
    ck_assert_double_eq_tol(T->cons[0].d, 3.15, 1e-15);
    /* 2(Y0 − Y1) = 1 as two constraints */
    ck_assert_double_eq(T->cons[1].coef[0], 2.0);
    ck_assert_double_eq(T->cons[1].d, -1.0);
    ck_assert_double_eq(T->cons[2].coef[0], -2.0);
    ck_assert_double_eq(T->cons[2].d, 1.0);
    lg_prop_free(&p);
}
END_TEST

/* Decimals that are not doubles, also as the coefficient of a bound on one
 * variable: read as exact rationals (X_0 ≥ 0.01 / 0.10000000000000001 is the
 * rational 10^15/(10^16 + 1)), the box rounded outward for proofs and
 * inward for witnesses, never refused. */
START_TEST(test_vnnlib_inexact_decimals)
{
    lg_prop p;
    lg_parse_ok(&p,
                "(assert (>= (* 0.10000000000000001 X_0) 0.01)) (assert (<= X_0 0.70000000000000001))\n"
                "(assert (>= X_1 0)) (assert (<= (* 2 X_1) 1))\n"
                "(assert (<= (* 0.10000000000000001 Y_0) 1))\n",
                2, 2);
    ck_assert_int_eq(p.n_cases, 1);
    const lg_prop_case *C = &p.cases[0];
    ck_assert_ptr_nonnull(p.inner);
    /* lo of X_0: the exact bound b = 10^15 / (10^16 + 1) lies in [lo, inner lo], adjacent doubles */
    mpq_t b, t;
    mpq_inits(b, t, NULL);
    mpq_set_str(b, "1000000000000000/10000000000000001", 10);
    mpq_canonicalize(b);
    mpq_set_d(t, C->lo[0]);
    ck_assert_msg(mpq_cmp(t, b) < 0, "lo %a is not below the exact bound", C->lo[0]);
    mpq_set_d(t, p.inner[0].lo[0]);
    ck_assert_msg(mpq_cmp(t, b) > 0, "inner lo %a is not above the exact bound", p.inner[0].lo[0]);
    ck_assert(nextafter(C->lo[0], 1.0) == p.inner[0].lo[0]);
    /* X_0 ≤ 0.70000000000000001: outward up, inward down */
    ck_assert(C->hi[0] > 0.7 || (C->hi[0] == 0.7 && p.inner[0].hi[0] < 0.7));
    ck_assert(p.inner[0].hi[0] <= C->hi[0] && nextafter(p.inner[0].hi[0], 1.0) == C->hi[0]);
    /* 2·X_1 ≤ 1 is X_1 ≤ 0.5 exactly */
    ck_assert_double_eq(C->hi[1], 0.5);
    ck_assert_double_eq(p.inner[0].hi[1], 0.5);
    /* 0.10000000000000001·Y_0 ≤ 1  ⇔  Y_0 ≤ 10^17 / (10^16 + 1) = 10 − 9.99…e-16 (proofs: up to 10) */
    ck_assert_int_eq(C->n_terms, 1);
    ck_assert_int_eq(C->terms[0].n_cons, 1);
    ck_assert_double_eq(C->terms[0].cons[0].coef[0], 1.0);
    double y_in[2] = {9.99, 0}, y_out[2] = {10.01, 0};
    ck_assert(lg_prop_case_violated_by(&p, 0, y_in));
    ck_assert(!lg_prop_case_violated_by(&p, 0, y_out));
    mpq_clears(b, t, NULL);
    lg_prop_free(&p);
}
END_TEST

/* A constraint over several outputs whose coefficients no scale makes
 * doubles: refused without the network; read for a network, its constant is
 * widened by the coefficients' rounding times the output bounds, so proofs
 * and witnesses stay exact. Net y0 = x, y1 = w·x on x ∈ [0.5, 1]; the
 * region 0.10000000000000001·y0 ≤ y1 holds nowhere for w = 0.05 and for the
 * double w = 0.1 (0.1000000000000000055… < 0.10000000000000001), everywhere
 * for w = 0.2. */
START_TEST(test_vnnlib_inexact_coefficients)
{
    static const char txt[] = "(declare-const X_0 Real)(declare-const Y_0 Real)(declare-const Y_1 Real)\n"
                              "(assert (>= X_0 0.5)) (assert (<= X_0 1))\n"
                              "(assert (<= (* 0.10000000000000001 Y_0) Y_1))\n";
    lg_prop p;
    ck_assert_int_ne(lg_vnnlib_parse(&p, txt, strlen(txt), "c.vnnlib", 1, 2), LG_OK);
    ck_assert_msg(strstr(lg_errmsg(), "c.vnnlib:3:") && strstr(lg_errmsg(), "not doubles"), "%s", lg_errmsg());
    static const double w[3] = {0.05, 0.1, 0.2};
    for (int k = 0; k < 3; k++) {
        int dims[2] = {1, 2};
        lg_net net;
        ck_assert_int_eq(lg_net_init(&net, 1, dims, LG_ACT_RELU), LG_OK);
        net.layers[0].act = LG_ACT_IDENTITY;
        net.layers[0].lin.W[0] = 1.0;
        net.layers[0].lin.W[1] = w[k];
        ck_assert_msg(lg_vnnlib_parse_net(&p, txt, strlen(txt), "c.vnnlib", &net) == LG_OK, "%s", lg_errmsg());
        const lg_lincon *L = &p.cases[0].terms[0].cons[0];
        ck_assert(L->coef[0] == 0.1 && L->coef[1] == -1.0); /* nearest doubles, file's scale */
        ck_assert(L->d < 0.0 && L->d > -1e-15);              /* proofs: a slightly larger region */
        ck_assert(L->d + p.inner[0].slack[0] > 0.0);         /* witnesses: a slightly smaller one */
        lg_verify_opts o = lg_verify_opts_default();
        o.solver = lg_test_solver("none");
        lg_verify_report rep;
        ck_assert_int_eq(lg_verify_run(&net, &p, &o, &rep), LG_OK);
        if (k == 0) ck_assert_int_eq(rep.verdict, LG_VERDICT_ROBUST);
        if (k == 1) ck_assert_int_ne(rep.verdict, LG_VERDICT_VIOLATED); /* robust in the reals */
        if (k == 2) {
            ck_assert_int_eq(rep.verdict, LG_VERDICT_VIOLATED);
            /* the witness, exactly: 10^-17·(10^16 + 1)·y0 ≤ y1 with y = (x, fl(0.2)·x) */
            mpq_t a, b;
            mpq_inits(a, b, NULL);
            mpq_set_str(a, "10000000000000001/100000000000000000", 10);
            mpq_canonicalize(a);
            mpq_set_d(b, rep.x[0]);
            mpq_mul(a, a, b);
            mpq_set_d(b, w[k]);
            mpq_t x;
            mpq_init(x);
            mpq_set_d(x, rep.x[0]);
            mpq_mul(b, b, x);
            ck_assert(mpq_cmp(a, b) <= 0);
            ck_assert(rep.x[0] >= 0.5 && rep.x[0] <= 1.0);
            mpq_clears(a, b, x, NULL);
        }
        lg_verify_report_free(&rep);
        lg_prop_free(&p);
        lg_net_free(&net);
    }
}
END_TEST

START_TEST(test_vnnlib_counterexample_reader_limits)
{
    const char *path = lg_test_tmpfile(".cex");
    double x[2], y[2];
    static const struct {
        const char *text, *expect;
    } T[] = {{"sat\n((X_0 1) (X_1 -2.5e-1) (Y_0 3) (Y_1 (- 4)))", NULL},
             {"((X_0 1) (X_1 2) (Y_0 3))", "no value for Y_1"},
             {"((X_0 1) (X_0 2) (X_1 2) (Y_0 3) (Y_1 4))", "given twice"},
             {"((X_0 1) (X_1 2) (Y_0 3) (Y_1 4)", "unbalanced"},
             {"((X_0 1) (X_1 2) (Y_0 3) (Y_7 4))", "expected X_i"},
             {"((X_0 abc) (X_1 2) (Y_0 3) (Y_1 4))", "undeclared"}};
    for (size_t i = 0; i < sizeof T / sizeof T[0]; i++) {
        FILE *f = fopen(path, "w");
        fputs(T[i].text, f);
        fclose(f);
        lg_status st = lg_vnnlib_read_assignment(path, 2, 2, x, y);
        if (!T[i].expect) {
            ck_assert_msg(st == LG_OK, "%s", lg_errmsg());
            ck_assert_double_eq(x[1], -0.25);
            ck_assert_double_eq(y[1], -4.0);
        } else {
            ck_assert_msg(st != LG_OK && strstr(lg_errmsg(), T[i].expect), "case %zu: '%s'", i, lg_errmsg());
        }
    }
    remove(path);
}
END_TEST

START_TEST(test_vnnlib_rejects_malformed)
{
    static const char box[] = "(assert (<= X_0 1)) (assert (>= X_0 0)) (assert (<= X_1 1)) (assert (>= X_1 0))\n";
    static const struct {
        const char *body, *expect;
    } T[] = {
        {"(assert (<= Y_0 1)", "unbalanced '(' (opened at 3:1)"},
        {"(assert (<= Y_0 1)))", "3:20: unbalanced ')'"},
        {"(assert (<= Y_0 Z_3))", "3:17: undeclared variable 'Z_3'"},
        {"(assert (<= Y_0 Y_2))", "3:17: undeclared variable 'Y_2'"},
        {"(assert (<= (* X_0 X_1) 1))", "non-linear"},
        {"(assert (<= (* Y_0 Y_1) 1))", "non-linear"},
        {"(assert (<= (* (+ Y_0 1) (- Y_1 2)) 1))", "non-linear"},
        {"(assert (<= (exp Y_0) 1))", "3:14: unknown operator 'exp'"},
        {"(assert (xor (<= Y_0 1) (<= Y_1 1)))", "unknown operator 'xor'"},
        {"(assert (<= Y_0 1.2.3))", "3:17: bad number '1.2.3'"},
        {"(assert (<= Y_0 1e))", "bad number '1e'"},
        {"(assert (<= Y_0 -.))", "bad number"},
        {"(assert (< Y_0 1))", "strict comparison"},
        {"(assert (<= (+ X_0 Y_0) 1))", "mixes inputs X and outputs Y"},
        {"(assert (<= (+ X_0 X_1) 1))", "single X_i"},
        {"(assert (<= (- X_0 (* 2 X_1)) 1))", "single X_i"},
        {"(assert (<= (/ Y_0 0) 1))", "nonzero constant"},
        {"(declare-const X_0 Real)", "declared twice"},
        {"(declare-const X_2 Int)", "expected sort Real"},
        {"(declare-const W_2 Real)", "X_<i> or Y_<j>"},
        {"(check-model)", "unknown command 'check-model'"},
        {"X_0", "expected a command"},
        {"(assert (<= Y_0))", "at least 2 arguments"},
        {"(assert (<= Y_0 \"a\"))", "strings"},
    };
    char text[8192];
    for (size_t i = 0; i < sizeof T / sizeof T[0]; i++) {
        snprintf(text, sizeof text, "%s%s", lg_decl2, T[i].body);
        lg_prop p;
        lg_status st = lg_vnnlib_parse(&p, text, strlen(text), "bad.vnnlib", 2, 2);
        ck_assert_msg(st != LG_OK, "case %zu accepted: %s", i, T[i].body);
        ck_assert_msg(strstr(lg_errmsg(), T[i].expect) != NULL, "case %zu: '%s' lacks '%s'", i, lg_errmsg(),
                      T[i].expect);
        ck_assert_msg(strncmp(lg_errmsg(), "bad.vnnlib", 10) == 0, "case %zu: no file name: %s", i, lg_errmsg());
        ck_assert_ptr_null(p.cases);
    }
    /* missing bounds, size mismatch, no assert, DNF blow-up, deep nesting */
    lg_prop p;
    snprintf(text, sizeof text, "%s(assert (<= X_0 1)) (assert (>= X_0 0)) (assert (<= X_1 1))", lg_decl2);
    ck_assert(lg_vnnlib_parse(&p, text, strlen(text), "bad", 2, 2) != LG_OK);
    ck_assert_msg(strstr(lg_errmsg(), "X_1 has no finite lower bound"), "%s", lg_errmsg());
    snprintf(text, sizeof text, "%s%s", lg_decl2, box);
    ck_assert(lg_vnnlib_parse(&p, text, strlen(text), "bad", 3, 2) != LG_OK);
    ck_assert_msg(strstr(lg_errmsg(), "declares 2 inputs X_i but the network has 3"), "%s", lg_errmsg());
    snprintf(text, sizeof text, "%s", lg_decl2);
    ck_assert(lg_vnnlib_parse(&p, text, strlen(text), "bad", 2, 2) != LG_OK);
    ck_assert_msg(strstr(lg_errmsg(), "no (assert"), "%s", lg_errmsg());
    ck_assert(lg_vnnlib_parse(&p, "", 0, "empty", 2, 2) != LG_OK);
    size_t n = (size_t)snprintf(text, sizeof text, "%s%s", lg_decl2, box);
    for (int k = 0; k < 20; k++) n += (size_t)snprintf(text + n, sizeof text - n, "(assert (or (<= Y_0 %d) (<= Y_1 %d)))", k, k);
    ck_assert(lg_vnnlib_parse(&p, text, n, "blowup", 2, 2) != LG_OK);
    ck_assert_msg(strstr(lg_errmsg(), "disjunctive normal form"), "%s", lg_errmsg());
    n = (size_t)snprintf(text, sizeof text, "%s(assert ", lg_decl2);
    for (int k = 0; k < 300; k++) text[n++] = '(';
    ck_assert(lg_vnnlib_parse(&p, text, n, "deep", 2, 2) != LG_OK);
    ck_assert_msg(strstr(lg_errmsg(), "nesting deeper"), "%s", lg_errmsg());
}
END_TEST

/* Every prefix of a real property file parses or fails cleanly. */
START_TEST(test_vnnlib_truncated_files)
{
    unsigned char *buf;
    size_t len;
    ck_assert_int_eq(lg_file_slurp(lg_test_fixture("acasxu/prop_3.vnnlib"), 1 << 20, &buf, &len), LG_OK);
    size_t step = getenv("LG_TEST_QUICK") ? 7 : 1;
    int ok = 0;
    for (size_t cut = 0; cut <= len; cut += step) {
        lg_prop p;
        if (lg_vnnlib_parse(&p, (const char *)buf, cut, "cut", 5, 5) == LG_OK) {
            ok++;
            for (int c = 0; c < p.n_cases; c++)
                for (int i = 0; i < 5; i++) ck_assert(isfinite(p.cases[c].lo[i]) && p.cases[c].lo[i] <= p.cases[c].hi[i]);
            lg_prop_free(&p);
        } else {
            ck_assert(*lg_errmsg());
        }
    }
    ck_assert_int_ge(ok, 1); /* at least the whole file */
    free(buf);
}
END_TEST

Suite *suite_vnnlib(void)
{
    Suite *s = suite_create("vnnlib");
    TCase *c = tcase_create("core");
    lg_tcase_timeout(c, 60);
    tcase_add_test(c, test_vnnlib_acasxu_props);
    tcase_add_test(c, test_vnnlib_mnist_props);
    tcase_add_test(c, test_vnnlib_counterexamples_reproduce);
    tcase_add_test(c, test_vnnlib_acasxu_sampling_agrees_with_verdicts);
    tcase_add_test(c, test_vnnlib_dnf_cases_and_terms);
    tcase_add_test(c, test_vnnlib_linear_terms);
    tcase_add_test(c, test_vnnlib_empty_box_holds);
    tcase_add_test(c, test_vnnlib_inexact_decimals);
    tcase_add_test(c, test_vnnlib_inexact_coefficients);
    suite_add_tcase(s, c);
    TCase *l = tcase_create("limits");
    lg_tcase_timeout(l, 120);
    tcase_add_test(l, test_vnnlib_counterexample_reader_limits);
    tcase_add_test(l, test_vnnlib_rejects_malformed);
    tcase_add_test(l, test_vnnlib_truncated_files);
    suite_add_tcase(s, l);
    return s;
}
