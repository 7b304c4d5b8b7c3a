/* Suite backend: the one back-end decision (verify/backend.c) and the exact
 * re-check (core/exact.c): the verify/encode seam never turns a floating-point
 * claim into a verdict (DESIGN.md §3), the witness rule, and the
 * limits (--timeout, --memory, the run context). Every instance's truth is
 * known by construction. */
#include <check.h>
#include <gmp.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/exact.h"
#include "core/net.h"
#include "core/netfile.h"
#include "core/runctx.h"
#include "encode/problem.h"
#include "testutil.h"
#include "test_solver.h"
#include "verify/attack.h"
#include "verify/backend.h"
#include "verify/prop.h"
#include "verify/recheck.h"
#include "verify/verify.h"
#include "verify/vnnlib.h"
#include "onnx/load.h"

/* A wrong infeasibility claim of GLPK must not become `robust`. A 1-2-1 ReLU net with no unstable ReLU: x ∈ [1e5, 1e5·(1 + 1e-10)]
 * (relative width 1e-10 at 1e5), both hidden neurons stable and active, the
 * output y = z0 + z1 + b1 ≈ 0 after cancellation; pre-activation bounds are
 * the exact images widened by a few ulps (sound). The counterexample region
 * y ≤ ph1 + 0.18 contains f(x) for every x in the box (by 0.18): the truth is
 * `violated`. GLPK 5.0 declares this MILP infeasible (found by a seeded
 * search); its claim must never become `robust`. */
typedef struct glpk_trap {
    lg_net net;
    double lo, hi, pl0[2], ph0[2], pl1, ph1, coef;
    double *pre_lo[2], *pre_hi[2];
    lg_lincon con;
    lg_term term;
    lg_problem p;
} glpk_trap;

static void glpk_trap_init(glpk_trap *g)
{
    memset(g, 0, sizeof *g);
    int dims[3] = {1, 2, 1};
    ck_assert_int_eq(lg_net_init(&g->net, 2, dims, LG_ACT_RELU), LG_OK);
    g->net.layers[1].act = LG_ACT_IDENTITY;
    g->lo = 0x1.86ap+16;
    g->hi = 0x1.86a00000a7c5bp+16;
    g->net.layers[0].lin.W[0] = -0x1.3a92a30553261p-6;
    g->net.layers[0].b[0] = 0x1.8e2000000338ap+16;
    g->net.layers[0].lin.W[1] = 0x1.8c7e28240b78p-7;
    g->net.layers[0].b[1] = 0.0;
    g->pl0[0] = 0x1.869fffffffffdp+16;
    g->ph0[0] = 0x1.86a000000338dp+16;
    g->pl0[1] = 0x1.2e7fffffffffep+10;
    g->ph0[1] = 0x1.2e80000081ec6p+10;
    g->net.layers[1].lin.W[0] = 1.0;
    g->net.layers[1].lin.W[1] = 1.0;
    g->net.layers[1].b[0] = -0x1.8b59ffffffffdp+16;
    g->pl1 = -0x1.6819dd18a8b03p-35;
    g->ph1 = 0x1.503780cee8c54p-22;
    g->coef = 1.0;
    g->con.coef = &g->coef;
    g->con.d = -0x1.70a401112d8a8p-3; /* −(ph1 + 0.18) */
    g->term.n_cons = 1;
    g->term.cons = &g->con;
    g->pre_lo[0] = g->pl0;
    g->pre_hi[0] = g->ph0;
    g->pre_lo[1] = &g->pl1;
    g->pre_hi[1] = &g->ph1;
    g->p = (lg_problem){&g->net, &g->lo, &g->hi, 1, &g->term, g->pre_lo, g->pre_hi, 0, NULL, NULL};
}

START_TEST(test_backend_glpk_infeasible_not_trusted)
{
    glpk_trap g;
    glpk_trap_init(&g);
    /* truth by construction: the double forward pass and the exact evaluation at
     * both corners and the centre satisfy the term with room to spare */
    double xs[3] = {g.lo, g.hi, g.lo + 0.5 * (g.hi - g.lo)};
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(lg_recheck(&g.net, &g.lo, &g.hi, 1, &g.term, &xs[i], NULL), 1);
        ck_assert_int_eq(lg_exact_first_holding(&g.net, &xs[i], 1, &g.term, NULL), 0);
        ck_assert(lg_exact_constraint_value(&g.net, &xs[i], &g.con) < -0.17);
    }
    /* the back-end itself: GLPK's UNSAT is certified (encode/lp_cert.h), so GLPK alone must not claim it */
    lg_solve_opts so = lg_solve_opts_default(); /* no deadline: GLPK runs in this process */
    lg_result r;
    ck_assert_int_eq(lg_solver_find("glpk")->solve(&g.p, &so, &r), LG_OK);
    ck_assert_int_eq(lg_solver_find("glpk")->unsat, LG_UNSAT_CERTIFIED);
    ck_assert_msg(r.answer != LG_ANSWER_UNSAT, "GLPK's certified search proved a violated query");
    fprintf(stderr, "backend: GLPK alone answers %s on the narrow-box instance\n",
            r.answer == LG_ANSWER_UNSAT ? "UNSAT (wrong)" : r.answer == LG_ANSWER_SAT ? "SAT" : "UNKNOWN");
    lg_result_free(&r);
    /* the one back-end decision, for every solver choice, with and without a deadline */
    const char *solvers[] = {"glpk", "auto", "z3"};
    for (int s = 0; s < 3; s++)
        for (int timed = 0; timed < 2; timed++) {
            lg_runctx run = lg_runctx_start(timed ? 20 : 0, 1, 0, 0);
            lg_backend_call c = {&g.net, &g.p, &g.lo, &g.hi, 1, &g.term, &run, 0};
            lg_backend_out out;
            double x = NAN;
            lg_solver_pick pick = lg_test_solver(solvers[s]);
            char m[32];
            ck_assert_int_eq(lg_backend_decide(&pick, &c, &out, &x), LG_OK);
            ck_assert_msg(out.answer != LG_ANSWER_UNSAT, "%s (timed %d): a violated query proved by %s", solvers[s],
                          timed, lg_outcome_method(&out.how, m, sizeof m));
            ck_assert_msg(out.answer == LG_ANSWER_SAT, "%s: expected the witness, got unknown (%s)", solvers[s],
                          out.how.reason);
            ck_assert_int_eq(lg_recheck(&g.net, &g.lo, &g.hi, 1, &g.term, &x, NULL), 1);
        }
    lg_net_free(&g.net);
}
END_TEST

/* y = w·x (one identity layer), as an lg_net. */
static void net_scale(lg_net *net, double w)
{
    int dims[2] = {1, 1};
    ck_assert_int_eq(lg_net_init(net, 1, dims, LG_ACT_RELU), LG_OK);
    net->layers[0].act = LG_ACT_IDENTITY;
    net->layers[0].lin.W[0] = w;
    net->layers[0].b[0] = 0.0;
}

/* Verdict of text on net under every solver × bab mode, attack on and off;
 * every run must give `want` (or, with may_unknown, unknown). */
static void verdict_all(const lg_net *net, const char *text, lg_verdict want, int may_unknown)
{
    lg_prop p;
    ck_assert_int_eq(lg_vnnlib_parse(&p, text, strlen(text), "t.vnnlib", 1, 1), LG_OK);
    const char *solvers[] = {"z3", "glpk", "auto", "none"};
    const lg_bab_mode modes[] = {LG_BAB_NONE, LG_BAB_INPUT, LG_BAB_RELU};
    for (int s = 0; s < 4; s++)
        for (int m = 0; m < 3; m++)
            for (int atk = 0; atk < 2; atk++) {
                lg_verify_opts o = lg_verify_opts_default();
                o.solver = lg_test_solver(solvers[s]);
                o.bab.mode = modes[m];
                o.attack = atk;
                o.timeout_s = 20;
                o.bab.threads = 1;
                lg_verify_report r;
                ck_assert_int_eq(lg_verify_run(net, &p, &o, &r), LG_OK);
                int ok = r.verdict == want || (may_unknown && r.verdict == LG_VERDICT_UNKNOWN);
                if (s == 3 && r.verdict == LG_VERDICT_UNKNOWN) ok = 1; /* no complete back-end */
                ck_assert_msg(ok, "%s, bab %d, attack %d: %s (%s) expected %s on\n%s", solvers[s], m, atk,
                              lg_verdict_name(r.verdict), r.how.reason, lg_verdict_name(want), text);
                if (r.verdict == LG_VERDICT_VIOLATED) ck_assert_ptr_nonnull(r.x);
                lg_verify_report_free(&r);
            }
    lg_prop_free(&p);
}

/* VNN-LIB division is exact: (/ t c) is t·c⁻¹ in rationals. y = x, x = 3, so Y_0 / 3 = 1 exactly; the region
 * (>= (/ Y_0 3) 1) contains it: violated (t·fl(1/3) = 0.99999999999999989 < 1
 * made every solver answer robust). */
START_TEST(test_backend_vnnlib_division_exact)
{
    lg_net net;
    net_scale(&net, 1.0);
    const char *head = "(declare-const X_0 Real)\n(declare-const Y_0 Real)\n(assert (>= X_0 3))\n(assert (<= X_0 3))\n";
    char text[512];
    snprintf(text, sizeof text, "%s(assert (>= (/ Y_0 3) 1))\n", head);
    verdict_all(&net, text, LG_VERDICT_VIOLATED, 0);
    snprintf(text, sizeof text, "%s(assert (<= (/ Y_0 3) 1))\n", head);
    verdict_all(&net, text, LG_VERDICT_VIOLATED, 0);
    snprintf(text, sizeof text, "%s(assert (<= (/ Y_0 (- 3)) -1))\n", head); /* negative divisor: same region */
    verdict_all(&net, text, LG_VERDICT_VIOLATED, 0);
    snprintf(text, sizeof text, "%s(assert (>= (/ Y_0 3) 1.0000001))\n", head);
    verdict_all(&net, text, LG_VERDICT_ROBUST, 0);
    snprintf(text, sizeof text, "%s(assert (<= (/ Y_0 7) 0.42857142857142))\n", head); /* 3/7 = 0.428571428571428... */
    verdict_all(&net, text, LG_VERDICT_ROBUST, 0);
    /* the parsed atom: 3 − Y_0 ≤ 0 with exact coefficients */
    lg_prop p;
    snprintf(text, sizeof text, "%s(assert (>= (/ Y_0 3) 1))\n", head);
    ck_assert_int_eq(lg_vnnlib_parse(&p, text, strlen(text), "t", 1, 1), LG_OK);
    ck_assert_int_eq(p.n_cases, 1);
    const lg_lincon *L = &p.cases[0].terms[0].cons[0];
    ck_assert(L->coef[0] == -1.0 && L->d == 3.0);
    ck_assert(p.inner && p.inner[0].slack[0] == 0.0);
    lg_prop_free(&p);
    lg_net_free(&net);
}
END_TEST

/* Decimal constants: the proof side rounds toward the larger region, the witness side
 * the other way. 0.1 is not a double: the box [0.1, 0.1] holds no double, so no
 * witness can exist; the property is not `robust` either (y = x = 0.1 ≥ 0.1). */
START_TEST(test_backend_vnnlib_decimal_outward)
{
    lg_net net;
    net_scale(&net, 1.0);
    const char *text = "(declare-const X_0 Real)\n(declare-const Y_0 Real)\n(assert (>= X_0 0.1))\n"
                       "(assert (<= X_0 0.1))\n(assert (>= Y_0 0.1))\n";
    lg_prop p;
    ck_assert_int_eq(lg_vnnlib_parse(&p, text, strlen(text), "t", 1, 1), LG_OK);
    ck_assert(p.cases[0].lo[0] < 0.1 || p.cases[0].hi[0] > 0.1);    /* outward: the proof box contains 1/10 */
    ck_assert(p.cases[0].lo[0] < p.cases[0].hi[0]);
    ck_assert(p.inner[0].lo[0] > p.inner[0].hi[0]);                 /* inward: empty */
    ck_assert(p.inner[0].slack[0] > 0.0);
    lg_prop_free(&p);
    verdict_all(&net, text, LG_VERDICT_UNKNOWN, 1);
    lg_net_free(&net);
}
END_TEST

/* The witness rule: y = 0.1₆₄·x at x = 3. In double, fl(3·0.1) = 0.30000000000000004
 * reaches the region y ≥ 0.30000000000000004441 (that double, written exactly), but
 * exactly 3·0.1₆₄ = 0.3000000000000000166 does not: the truth is robust; `violated`
 * (the double pass alone) is wrong. */
START_TEST(test_backend_witness_exact_rule)
{
    lg_net net;
    net_scale(&net, 0.1);
    const char *text = "(declare-const X_0 Real)\n(declare-const Y_0 Real)\n(assert (>= X_0 3))\n(assert (<= X_0 3))\n"
                       "(assert (>= Y_0 0.3000000000000000444089209850062616169452667236328125))\n";
    double x = 3.0, y;
    lg_net_forward(&net, &x, &y, (double[4]){0});
    ck_assert(y == 0.30000000000000004); /* the double pass says "in the region" */
    lg_prop p;
    ck_assert_int_eq(lg_vnnlib_parse(&p, text, strlen(text), "t", 1, 1), LG_OK);
    ck_assert(p.inner[0].slack[0] == 0.0); /* the constant is that double exactly */
    ck_assert_int_eq(lg_exact_first_holding(&net, &x, 1, p.cases[0].terms, NULL), -1);
    double xx = 3.0;
    ck_assert_int_eq(lg_witness_accept(&net, &p, 0, &xx, NULL), 0);
    lg_prop_free(&p);
    verdict_all(&net, text, LG_VERDICT_ROBUST, 1);
    lg_net_free(&net);
}
END_TEST

/* The exact evaluation's two paths (dyadic fixed point without normalisation,
 * rationals with it) agree: the same net with in_sub = 0 takes the rational path.
 * Weights span 1e-6…1e6; the constraint is a near-tie at the double output, so
 * the sign is decided by the exact value; checked against the double pass where
 * the double pass is exact enough to tell (|value| large). */
START_TEST(test_backend_exact_paths_agree)
{
    lg_rng r;
    lg_rng_init(&r, 11, 0);
    for (int it = 0; it < 40; it++) {
        int dims[4] = {3, 5, 4, 2};
        lg_net net;
        ck_assert_int_eq(lg_net_init(&net, 3, dims, LG_ACT_RELU), LG_OK);
        lg_test_randomize(&net, &r, 1.0);
        for (int k = 0; k < 3; k++)
            for (int j = 0; j < net.layers[k].n_out * net.layers[k].lin.n_in; j++)
                net.layers[k].lin.W[j] *= pow(10.0, floor(12.0 * lg_rng_uniform(&r)) - 6.0);
        double x[3], y[2], sc[16];
        for (int i = 0; i < 3; i++) x[i] = lg_rng_uniform(&r) - 0.5;
        lg_net_forward(&net, x, y, sc);
        double coef[2] = {1.0, -1.0};
        lg_lincon L = {coef, -(y[0] - y[1])}; /* a near-tie: 0 in double */
        lg_term T = {1, &L};
        double v1 = lg_exact_constraint_value(&net, x, &L);
        int h1 = lg_exact_first_holding(&net, x, 1, &T, NULL);
        double *zero = calloc(3, sizeof *zero);
        net.in_sub = zero;
        double v2 = lg_exact_constraint_value(&net, x, &L);
        int h2 = lg_exact_first_holding(&net, x, 1, &T, NULL);
        ck_assert_msg(v1 == v2 && h1 == h2, "it %d: dyadic %a (%d) vs rational %a (%d)", it, v1, h1, v2, h2);
        ck_assert(isfinite(v1) && h1 >= -1);
        ck_assert(fabs(v1) <= 1e-6 * (1 + fabs(y[0]) + fabs(y[1]))); /* the double pass is close */
        L.d = -(y[0] - y[1]) + 1.0; /* far from a tie: both agree with the double pass */
        ck_assert_int_eq(lg_exact_first_holding(&net, x, 1, &T, NULL), -1);
        net.in_sub = NULL;
        ck_assert_int_eq(lg_exact_first_holding(&net, x, 1, &T, NULL), -1);
        free(zero);
        lg_net_free(&net);
    }
}
END_TEST

/* Robustness boxes: [x0 − eps, x0 + eps] over the reals, rounded outward for
 * proofs and inward for witnesses, checked in exact rationals. */
START_TEST(test_backend_robustness_box_outward)
{
    lg_rng r;
    lg_rng_init(&r, 5, 0);
    mpq_t ex, v;
    mpq_init(ex);
    mpq_init(v);
    int n_inexact = 0;
    for (int it = 0; it < 2000; it++) {
        double x0 = lg_rng_uniform(&r), eps = 0.3 * lg_rng_uniform(&r);
        lg_prop p;
        ck_assert_int_eq(lg_prop_robustness(&p, &x0, 1, eps, -10, 10, 0, 2, 0), LG_OK);
        for (int side = 0; side < 2; side++) {
            mpq_set_d(ex, x0);
            mpq_set_d(v, eps);
            if (side) mpq_add(ex, ex, v);
            else mpq_sub(ex, ex, v);
            double out = side ? p.cases[0].hi[0] : p.cases[0].lo[0];
            double in = side ? p.inner[0].hi[0] : p.inner[0].lo[0];
            mpq_set_d(v, out);
            ck_assert(side ? mpq_cmp(v, ex) >= 0 : mpq_cmp(v, ex) <= 0); /* proof box ⊇ real box */
            mpq_set_d(v, in);
            ck_assert(side ? mpq_cmp(v, ex) <= 0 : mpq_cmp(v, ex) >= 0); /* witness box ⊆ real box */
            ck_assert(fabs(out - in) <= 2 * fabs(nextafter(out, 0) - out) + 1e-300);
            n_inexact += out != in;
        }
        lg_prop_free(&p);
    }
    ck_assert_int_gt(n_inexact, 100); /* the rounding case is exercised */
    mpq_clear(ex);
    mpq_clear(v);
}
END_TEST

/* Run the CLI; returns its exit status, the wall-clock seconds in *sec and the
 * first line of stdout in line. */
/* lg_test_fixture's buffer is reused: keep copies. */
static char fx_a[1024], fx_b[1024];
static const char *fx2(const char *net, const char *prop)
{
    snprintf(fx_a, sizeof fx_a, "%s", lg_test_fixture(net));
    snprintf(fx_b, sizeof fx_b, "%s", lg_test_fixture(prop));
    return fx_a;
}

static int cli_timed(const char *args, double *sec, char *line, size_t n)
{
    const char *out = lg_test_tmpfile(".out");
    double t0 = lg_now();
    int rc = lg_test_cli(args, out);
    *sec = lg_now() - t0;
    line[0] = '\0';
    FILE *f = fopen(out, "r");
    if (f) {
        if (!fgets(line, (int)n, f)) line[0] = '\0';
        fclose(f);
    }
    remove(out);
    return rc;
}

/* --timeout is a limit: a long Z3 run (MNIST 256x2 prop_3 without branch and bound,
 * > 10 s) and a long GLPK run (ACAS Xu 1_1 prop_1 without branch and bound, > 20 s)
 * are cut at the deadline: unknown (timeout) within timeout + 2 s. */
START_TEST(test_backend_timeout_honoured)
{
    char args[8192], line[512];
    double sec;
    snprintf(args, sizeof args, "verify '%s' --vnnlib '%s' --bab none --no-attack --solver z3 --timeout 2",
             fx2("vnncomp/mnist-net_256x2.onnx", "vnncomp/prop_3_0.05.vnnlib"), fx_b);
    ck_assert_int_eq(cli_timed(args, &sec, line, sizeof line), 0);
    fprintf(stderr, "backend: z3 --timeout 2: %.2f s, %s", sec, line);
    ck_assert_msg(strncmp(line, "unknown (timeout)", 17) == 0 || strncmp(line, "robust", 6) == 0, "%s", line);
    ck_assert_msg(sec <= 2.0 + 2.0 + 1.0, "z3: %.2f s with --timeout 2", sec); /* + 1 s to load the net */
    snprintf(args, sizeof args, "verify '%s' --vnnlib '%s' --bab none --no-attack --solver glpk --timeout 2",
             fx2("acasxu/ACASXU_run2a_1_1_batch_2000.onnx", "acasxu/prop_1.vnnlib"), fx_b);
    ck_assert_int_eq(cli_timed(args, &sec, line, sizeof line), 0);
    fprintf(stderr, "backend: glpk --timeout 2: %.2f s, %s", sec, line);
    ck_assert_msg(strncmp(line, "unknown (timeout)", 17) == 0 || strncmp(line, "robust", 6) == 0, "%s", line);
    ck_assert_msg(sec <= 2.0 + 2.0 + 1.0, "glpk: %.2f s with --timeout 2", sec);
}
END_TEST

/* --memory: a cap a back-end cannot live with yields unknown (exit 0), not a crash;
 * a generous cap changes nothing. Bench accepts --memory and --timeout too. */
START_TEST(test_backend_memory_cap)
{
    char args[8192], line[512];
    double sec;
    const char *solvers[] = {"z3", "glpk"};
    for (int s = 0; s < 2; s++) {
        snprintf(args, sizeof args, "verify '%s' --vnnlib '%s' --bab none --no-attack --solver %s --timeout 10 --memory 16",
                 fx2("vnncomp/mnist-net_256x2.onnx", "vnncomp/prop_3_0.05.vnnlib"), fx_b,
                 solvers[s]);
        ck_assert_int_eq(cli_timed(args, &sec, line, sizeof line), 0);
        fprintf(stderr, "backend: %s --memory 16: %.2f s, %s", solvers[s], sec, line);
        ck_assert_msg(strncmp(line, "unknown", 7) == 0 || strncmp(line, "robust", 6) == 0, "%s: %s", solvers[s], line);
    }
    snprintf(args, sizeof args, "verify '%s' --vnnlib '%s' --memory 2048 --timeout 60",
             fx2("vnncomp/mnist-net_256x2.onnx", "vnncomp/prop_3_0.05.vnnlib"), fx_b);
    ck_assert_int_eq(cli_timed(args, &sec, line, sizeof line), 0);
    ck_assert_msg(strncmp(line, "robust", 6) == 0, "%s", line);
    snprintf(args, sizeof args, "verify '%s' --vnnlib '%s' --memory 1", fx2("vnncomp/mnist-net_256x2.onnx", "vnncomp/prop_3_0.05.vnnlib"), fx_b);
    ck_assert_int_eq(cli_timed(args, &sec, line, sizeof line), 2); /* below the 16 MB minimum: usage error */
    ck_assert_int_eq(cli_timed("bench /nonexistent --memory 0", &sec, line, sizeof line), 2);
}
END_TEST

/* The run context (core/runctx.h) is the one deadline and seed. ACAS Xu
 * 1_7 prop_3 is violated (the attack finds it in milliseconds, input
 * splitting alone too), so a stage that ignored an expired deadline would
 * answer `violated`: with one, every solver × bab mode (and backend_only)
 * answers unknown with timed_out, and so does every stage called alone
 * (attack, both splitting modes, LP tightening, the back-end decision).
 * Without a deadline the same seed gives the same verdict, witness and node
 * count twice (1 and 2 threads). About 1 s. */
START_TEST(test_backend_runctx)
{
    lg_net net;
    lg_prop p;
    ck_assert_int_eq(lg_net_load(&net, lg_test_fixture("acasxu/ACASXU_run2a_1_7_batch_2000.onnx")), LG_OK);
    ck_assert_int_eq(lg_vnnlib_read(&p, lg_test_fixture("acasxu/prop_3.vnnlib"), 5, 5), LG_OK);
    lg_runctx expired = lg_runctx_start(0, 1, 0, 0);
    expired.deadline = lg_now() - 1;
    const char *solvers[] = {"z3", "glpk", "auto", "none"};
    const lg_bab_mode modes[] = {LG_BAB_AUTO, LG_BAB_NONE, LG_BAB_INPUT, LG_BAB_RELU};
    for (int s = 0; s < 4; s++)
        for (int m = 0; m < 4; m++)
            for (int only = 0; only < (s < 3 ? 2 : 1); only++) {
                lg_verify_opts o = lg_verify_opts_default();
                o.solver = lg_test_solver(solvers[s]);
                o.bab.mode = modes[m];
                o.bab.threads = 1;
                o.backend_only = only;
                lg_verify_report r;
                ck_assert_int_eq(lg_verify_run_in(&net, &p, &o, &expired, &r), LG_OK);
                ck_assert_msg(r.verdict == LG_VERDICT_UNKNOWN && r.how.timed_out == 1,
                              "%s, bab %s, backend_only %d, expired run: %s (%s), timed_out %d", solvers[s],
                              lg_bab_mode_name(modes[m]), only, lg_verdict_name(r.verdict), r.how.reason, r.how.timed_out);
                lg_verify_report_free(&r);
            }
    /* each stage alone */
    const lg_prop_case *C = &p.cases[0];
    double x[5];
    int found = 1;
    lg_attack_opts ao = lg_attack_opts_default();
    ck_assert_int_eq(lg_attack_run(&net, C->lo, C->hi, C->n_terms, C->terms, &ao, &expired, x, &found), LG_OK);
    ck_assert_int_eq(found, 0);
    lg_runctx none = lg_runctx_none();
    ck_assert_int_eq(lg_attack_run(&net, C->lo, C->hi, C->n_terms, C->terms, &ao, &none, x, &found), LG_OK);
    ck_assert_msg(found == 1, "the attack no longer finds the prop_3 counterexample: the test proves nothing");
    for (int m = LG_BAB_INPUT; m <= LG_BAB_RELU; m++) {
        lg_bab_opts bo = lg_bab_opts_default();
        bo.mode = (lg_bab_mode)m;
        bo.threads = 1;
        lg_bab_out out;
        ck_assert_int_eq(lg_bab_run(&net, C->lo, C->hi, C->n_terms, C->terms, NULL, &bo, &expired, &out, x), LG_OK);
        ck_assert_msg(out.answer == LG_BAB_OPEN && out.how.timed_out == 1 && out.nodes == 0, "bab %s: answer %d, %ld nodes",
                      lg_bab_mode_name(bo.mode), (int)out.answer, out.nodes);
    }
    lg_bounds b;
    lg_term *kept = NULL;
    lg_problem prob;
    long n_lp = -1;
    /* the bounds stop at the deadline; bounds made without one, LP tightening stops before any LP */
    ck_assert_int_eq(lg_verify_prepare(&net, &p, 0, LG_TIGHTEN_LP, &expired, &b, &kept, &prob, &n_lp),
                     LG_ERR_TIMEOUT);
    ck_assert_ptr_null(kept);
    ck_assert_int_eq(lg_verify_prepare(&net, &p, 0, LG_TIGHTEN_NONE, &none, &b, &kept, &prob, NULL), LG_OK);
    ck_assert_int_eq(lg_bounds_lp(&b, &net, &expired, &n_lp), LG_OK);
    ck_assert_int_eq(n_lp, 0);
    ck_assert_int_gt(prob.n_terms, 0);
    for (int s = 0; s < 3; s++) {
        lg_backend_call c = {&net, &prob, C->lo, C->hi, C->n_terms, C->terms, &expired, 0};
        lg_backend_out out;
        lg_solver_pick pick = lg_test_solver(solvers[s]);
        ck_assert_int_eq(lg_backend_decide(&pick, &c, &out, x), LG_OK);
        ck_assert_msg(out.answer == LG_ANSWER_UNKNOWN && out.how.timed_out == 1 && out.calls == 0,
                      "%s, expired: answer %d, timed_out %d, %d calls", solvers[s], (int)out.answer, out.how.timed_out,
                      out.calls);
    }
    free(kept);
    lg_bounds_free(&b);
    /* same seed, same answer: with the attack, and by branch and bound alone */
    for (int atk = 1; atk >= 0; atk--) {
        lg_verify_report r[2];
        for (int k = 0; k < 2; k++) {
            lg_verify_opts o = lg_verify_opts_default();
            o.attack = atk;
            o.solver = lg_test_solver("glpk");
            o.bab.threads = k + 1;
            lg_runctx run = lg_runctx_start(0, 12345, 0, 0);
            ck_assert_int_eq(lg_verify_run_in(&net, &p, &o, &run, &r[k]), LG_OK);
            ck_assert_msg(r[k].verdict == LG_VERDICT_VIOLATED, "attack %d, %d threads: %s (%s)", atk, k + 1,
                          lg_verdict_name(r[k].verdict), r[k].how.reason);
        }
        ck_assert_str_eq(r[0].method, r[1].method);
        ck_assert_int_eq(r[0].bab_nodes, r[1].bab_nodes);
        ck_assert_msg(memcmp(r[0].x, r[1].x, 5 * sizeof *r[0].x) == 0, "attack %d: two witnesses for one seed", atk);
        lg_verify_report_free(&r[0]);
        lg_verify_report_free(&r[1]);
    }
    lg_prop_free(&p);
    lg_net_free(&net);
}
END_TEST

/* Pre-activation bounds that overflow to ±∞ (weights 1e308 on inputs near 1):
 * no back-end can take them, so every solver, with and without
 * backend_only, answers unknown naming the overflow, never an error. */
START_TEST(test_backend_overflow_unknown)
{
    const int dims[] = {1, 2, 2};
    lg_net net;
    ck_assert_int_eq(lg_net_init(&net, 2, dims, LG_ACT_RELU), LG_OK);
    net.layers[0].lin.W[0] = net.layers[0].lin.W[1] = 1e308;
    net.layers[1].lin.W[0] = 10.0; /* y0 = 10·relu(1e308·x) > y1 = 9·relu(1e308·x): robust in the reals */
    net.layers[1].lin.W[3] = 9.0;
    const double x0 = 0.95;
    lg_prop p;
    ck_assert_int_eq(lg_prop_robustness(&p, &x0, 1, 0.05, 0.0, 1.0, 0, 2, 0.0), LG_OK);
    const char *solvers[] = {"z3", "glpk", "auto"};
    for (int s = 0; s < 3; s++)
        for (int only = 0; only < 2; only++) {
            lg_verify_opts o = lg_verify_opts_default();
            o.solver = lg_test_solver(solvers[s]);
            o.backend_only = only;
            o.bab.threads = 1;
            lg_runctx none = lg_runctx_none();
            lg_verify_report r;
            ck_assert_msg(lg_verify_run_in(&net, &p, &o, &none, &r) == LG_OK, "%s, backend_only %d: %s", solvers[s], only,
                          lg_errmsg());
            ck_assert_msg(r.verdict == LG_VERDICT_UNKNOWN && strstr(r.how.reason, "overflow"),
                          "%s, backend_only %d: %s (%s)", solvers[s], only, lg_verdict_name(r.verdict), r.how.reason);
            lg_verify_report_free(&r);
        }
    lg_prop_free(&p);
    lg_net_free(&net);
}
END_TEST

Suite *suite_backend(void)
{
    Suite *s = suite_create("backend");
    TCase *tc = tcase_create("seam");
    lg_tcase_timeout(tc, 300);
    tcase_add_test(tc, test_backend_glpk_infeasible_not_trusted);
    tcase_add_test(tc, test_backend_vnnlib_division_exact);
    tcase_add_test(tc, test_backend_vnnlib_decimal_outward);
    tcase_add_test(tc, test_backend_witness_exact_rule);
    tcase_add_test(tc, test_backend_exact_paths_agree);
    tcase_add_test(tc, test_backend_robustness_box_outward);
    suite_add_tcase(s, tc);
    TCase *tl = tcase_create("limits");
    lg_tcase_timeout(tl, 300);
    tcase_add_test(tl, test_backend_timeout_honoured);
    tcase_add_test(tl, test_backend_memory_cap);
    tcase_add_test(tl, test_backend_runctx);
    tcase_add_test(tl, test_backend_overflow_unknown);
    suite_add_tcase(s, tl);
    return s;
}
