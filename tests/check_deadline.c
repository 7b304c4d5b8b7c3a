/* check_deadline.c — every stage honours the run's deadline (core/runctx.h
 * lg_runctx_check): given a deadline already in the past it stops at its
 * first check-point and returns LG_ERR_TIMEOUT (or, for the drivers, an
 * unknown with timed_out), never a bound or a verdict computed as if it had
 * finished. Deterministic: no test depends on the machine's speed.
 *
 *  - bounds (bounds.h): interval, symbolic, symbolic_from,
 *    symbolic_unstable_from, objective_lower return LG_ERR_TIMEOUT; what
 *    they leave is still sound (interval: ∓∞; symbolic: unchanged);
 *  - back-substitution (backsub.h): LG_ERR_TIMEOUT and every out[r] = −∞;
 *  - α/β (alpha.h): optimise, bound a batch, intermediate tightening;
 *  - LP tightening: its own budget spent is a plain stop (LG_OK, no LP),
 *    the bounds' deadline passed inside it is LG_ERR_TIMEOUT;
 *  - ReLU branch and bound with root α tightening: open with timed_out;
 *    activation splitting on a smooth net: not proved;
 *  - the driver on a smooth net (the direct route): unknown, timed_out;
 *  - ONNX and native import (lg_net_load_in): LG_ERR_TIMEOUT, net zeroed;
 *  - `lgelu verify --timeout 1e-6 -o FILE`: `unknown (timeout)` and the
 *    VNN-COMP result file `timeout`;
 *  - limits: deadlines swept across whole runs (a violated ACAS Xu
 *    property, a sigmoid MLP in activation splitting), so that they fall
 *    inside every stage: whatever stage the deadline stops, the answer is
 *    LG_OK and never the wrong verdict (the assertions hold for any timing;
 *    under ASan the error paths are checked for leaks and double frees).
 * The ReLU driver under an expired run, every solver and splitting mode,
 * is test_backend_runctx (check_backend.c). About 5 s. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/netfile.h"
#include "core/rng.h"
#include "testutil.h"
#include "test_solver.h"
#include "verify/alpha.h"
#include "verify/bab.h"
#include "verify/bab_act.h"
#include "verify/backsub.h"
#include "verify/bounds.h"
#include "verify/verify.h"
#include "verify/vnnlib.h"
#include "onnx/load.h"

/* A context whose deadline has passed. */
static lg_runctx lg_dl_past(void)
{
    lg_runctx c = lg_runctx_start(100, 1, 0, 0);
    c.deadline = lg_now() - 1;
    ck_assert(lg_runctx_expired(&c));
    return c;
}

/* A random net with dims[0..n] and activation act, and a box around 0. */
static void lg_dl_net(lg_net *net, int n, const int *dims, lg_act act, uint64_t seed, double *lo, double *hi)
{
    lg_rng r;
    lg_rng_init(&r, seed, 1);
    ck_assert_int_eq(lg_net_init(net, n, dims, act), LG_OK);
    lg_test_randomize(net, &r, 0.5);
    for (int i = 0; i < dims[0]; i++) {
        lo[i] = -0.5 + 0.1 * lg_rng_uniform(&r);
        hi[i] = 0.5 + 0.1 * lg_rng_uniform(&r);
    }
}

/* Bitwise copy of every pre-activation bound of b into v (size: neurons). */
static void lg_dl_save(const lg_bounds *b, double *v)
{
    for (int k = 0, o = 0; k < b->n_layers; o += b->width[k], k++) {
        memcpy(v + o, b->lo[k], (size_t)b->width[k] * sizeof *v);
        memcpy(v + 4096 + o, b->hi[k], (size_t)b->width[k] * sizeof *v);
    }
}

START_TEST(test_deadline_bounds)
{
    static const int dims[] = {6, 16, 16, 12, 4};
    lg_net net;
    double lo[6], hi[6];
    lg_dl_net(&net, 4, dims, LG_ACT_RELU, 11, lo, hi);
    lg_runctx past = lg_dl_past();
    lg_bounds b;
    ck_assert_int_eq(lg_bounds_init(&b, &net), LG_OK);
    ck_assert(b.run == NULL);
    b.run = &past;
    ck_assert_int_eq(lg_bounds_interval(&b, &net, lo, hi), LG_ERR_TIMEOUT);
    ck_assert_msg(strstr(lg_errmsg(), "deadline") != NULL, "message '%s'", lg_errmsg());
    for (int k = 0; k < net.n_layers; k++)
        for (int o = 0; o < net.layers[k].n_out; o++)
            ck_assert_msg(b.lo[k][o] == -INFINITY && b.hi[k][o] == INFINITY, "interval: layer %d neuron %d bounded", k, o);
    ck_assert_int_eq(lg_bounds_symbolic(&b, &net, lo, hi), LG_ERR_TIMEOUT);
    /* finished bounds, then the deadline: the re-runs stop and change nothing */
    b.run = NULL;
    ck_assert_int_eq(lg_bounds_symbolic(&b, &net, lo, hi), LG_OK);
    static double before[8192], after[8192];
    lg_dl_save(&b, before);
    b.run = &past;
    ck_assert_int_eq(lg_bounds_symbolic_from(&b, &net, 1), LG_ERR_TIMEOUT);
    ck_assert_int_eq(lg_bounds_symbolic_unstable_from(&b, &net, 1), LG_ERR_TIMEOUT);
    lg_dl_save(&b, after);
    ck_assert(memcmp(before, after, sizeof before) == 0);
    double C[2 * 4] = {1, -1, 0, 0, 0, 0.5, -1, 0}, d[2] = {0.1, -0.2}, out[2] = {0, 0};
    ck_assert_int_eq(lg_bounds_objective_lower(&b, &net, 2, C, d, out), LG_ERR_TIMEOUT);
    ck_assert(out[0] == -INFINITY && out[1] == -INFINITY);
    b.run = NULL;
    ck_assert_int_eq(lg_bounds_objective_lower(&b, &net, 2, C, d, out), LG_OK);
    ck_assert(isfinite(out[0]) && isfinite(out[1]));
    /* the back-substitution itself: per layer, every row −∞ */
    lg_backsub s;
    ck_assert_int_eq(lg_backsub_init(&s, &b, &net, 2), LG_OK);
    ck_assert(s.run == NULL);
    s.run = &past;
    memcpy(s.A, C, sizeof C);
    memcpy(s.c, d, sizeof d);
    out[0] = out[1] = 0;
    ck_assert_int_eq(lg_backsub_lower(&s, net.n_layers - 1, 2, NULL, NULL, 0, NULL, out), LG_ERR_TIMEOUT);
    ck_assert(out[0] == -INFINITY && out[1] == -INFINITY);
    lg_backsub_free(&s);
    lg_bounds_free(&b);
    lg_net_free(&net);
}
END_TEST

START_TEST(test_deadline_alpha)
{
    static const int dims[] = {6, 16, 16, 12, 4};
    lg_net net;
    double lo[6], hi[6];
    lg_dl_net(&net, 4, dims, LG_ACT_RELU, 12, lo, hi);
    lg_runctx past = lg_dl_past();
    lg_bounds b;
    ck_assert_int_eq(lg_bounds_init(&b, &net), LG_OK);
    ck_assert_int_eq(lg_bounds_symbolic(&b, &net, lo, hi), LG_OK);
    int size = lg_alpha_size(&net);
    double C[2 * 4] = {1, -1, 0, 0, 0, 0.5, -1, 0}, d[2] = {0.1, -0.2}, out[2] = {0, 0};
    double *al = malloc(2 * (size_t)size * sizeof *al);
    ck_assert_ptr_nonnull(al);
    lg_alpha_default(&b, &net, 2, al);
    ck_assert_int_eq(lg_alpha_optimize(&b, &net, 2, C, d, 10, 0.1, &past, al, out, NULL), LG_ERR_TIMEOUT);
    ck_assert(out[0] == -INFINITY && out[1] == -INFINITY);
    for (int j = 0; j < 2 * size; j++) ck_assert(al[j] >= 0.0 && al[j] <= 1.0); /* slopes left valid */
    /* a bound without its own run takes the bounds' deadline */
    b.run = &past;
    ck_assert_int_eq(lg_alpha_bound(&b, &net, 2, C, d, al, out, NULL, NULL, NULL), LG_ERR_TIMEOUT);
    b.run = NULL;
    static double before[8192], after[8192];
    lg_dl_save(&b, before);
    int nt = -1;
    ck_assert_int_eq(lg_alpha_tighten(&b, &net, 2, 5, 0.1, &past, &nt), LG_ERR_TIMEOUT);
    lg_dl_save(&b, after);
    ck_assert(memcmp(before, after, sizeof before) == 0);
    /* no deadline: the same calls finish */
    ck_assert_int_eq(lg_alpha_optimize(&b, &net, 2, C, d, 3, 0.1, NULL, al, out, NULL), LG_OK);
    ck_assert(isfinite(out[0]) && isfinite(out[1]));
    free(al);
    lg_bounds_free(&b);
    lg_net_free(&net);
}
END_TEST

START_TEST(test_deadline_lp)
{
    static const int dims[] = {6, 16, 16, 12, 4};
    lg_net net;
    double lo[6], hi[6];
    lg_dl_net(&net, 4, dims, LG_ACT_RELU, 13, lo, hi);
    lg_runctx past = lg_dl_past();
    lg_bounds b;
    ck_assert_int_eq(lg_bounds_init(&b, &net), LG_OK);
    ck_assert_int_eq(lg_bounds_symbolic(&b, &net, lo, hi), LG_OK);
    ck_assert_int_gt(lg_bounds_unstable(&b, &net, 1), 0);
    static double before[8192], after[8192];
    lg_dl_save(&b, before);
    long n_lp = -1;
    /* the LP stage's own budget spent: a plain stop before the first LP */
    ck_assert_int_eq(lg_bounds_lp(&b, &net, &past, &n_lp), LG_OK);
    ck_assert_int_eq(n_lp, 0);
    lg_dl_save(&b, after);
    ck_assert(memcmp(before, after, sizeof before) == 0);
    /* the bounds' deadline: the back-substitution after the first layer's LPs stops */
    b.run = &past;
    ck_assert_int_eq(lg_bounds_lp(&b, &net, NULL, &n_lp), LG_ERR_TIMEOUT);
    lg_bounds_free(&b);
    lg_net_free(&net);
}
END_TEST

START_TEST(test_deadline_bab)
{
    static const int dims[] = {6, 16, 16, 12, 4};
    lg_net net;
    double lo[6], hi[6];
    lg_dl_net(&net, 4, dims, LG_ACT_RELU, 14, lo, hi);
    lg_runctx past = lg_dl_past();
    lg_term t;
    lg_lincon L;
    double coef[4] = {1, -1, 0, 0};
    L.coef = coef;
    L.d = -1e6; /* y0 − y1 − 1e6 ≤ 0 holds everywhere: without the deadline, any node finds it */
    t.n_cons = 1;
    t.cons = &L;
    double x[6];
    /* root α tightening: its bounds stop at the deadline, the search answers open, timed out */
    lg_bab_opts bo = lg_bab_opts_default();
    bo.mode = LG_BAB_RELU;
    bo.threads = 1;
    bo.root_alpha_steps = 5;
    bo.solver = lg_test_solver("none");
    lg_bab_out out;
    ck_assert_int_eq(lg_bab_run(&net, lo, hi, 1, &t, NULL, &bo, &past, &out, x), LG_OK);
    ck_assert_msg(out.answer == LG_BAB_OPEN && out.how.timed_out == 1, "answer %d, timed_out %d", (int)out.answer,
                  out.how.timed_out);
    lg_net_free(&net);

    /* activation splitting on a smooth net: not proved under an expired run */
    static const int sd[] = {4, 8, 8, 3};
    lg_dl_net(&net, 3, sd, LG_ACT_GELU, 15, lo, hi);
    lg_bounds b;
    ck_assert_int_eq(lg_bounds_init(&b, &net), LG_OK);
    ck_assert_int_eq(lg_bounds_symbolic(&b, &net, lo, hi), LG_OK);
    double c3[3] = {1, -1, 0};
    L.coef = c3;
    L.d = 1e6; /* y0 − y1 + 1e6 ≤ 0 holds nowhere: without the deadline, proved at the root */
    lg_bab_act_out ao;
    lg_runctx none = lg_runctx_none();
    ck_assert_int_eq(lg_bab_act_run(&net, &b, 1, &t, &none, 100, 5, 0.1, LG_BAB_ACT_BEST, &ao), LG_OK);
    ck_assert(ao.proved);
    lg_status st = lg_bab_act_run(&net, &b, 1, &t, &past, 100, 5, 0.1, LG_BAB_ACT_BEST, &ao);
    ck_assert(st == LG_OK || st == LG_ERR_TIMEOUT);
    ck_assert(!ao.proved);
    lg_bounds_free(&b);
    lg_net_free(&net);
}
END_TEST

/* The direct route (smooth net) in the driver, and the ReLU net it would be
 * decided on without a deadline. */
START_TEST(test_deadline_verify_smooth)
{
    static const int dims[] = {4, 8, 8, 3};
    lg_net net;
    double lo[4], hi[4];
    lg_dl_net(&net, 3, dims, LG_ACT_GELU, 16, lo, hi);
    double x0[4] = {0, 0, 0, 0};
    lg_prop p;
    ck_assert_int_eq(lg_prop_robustness(&p, x0, 4, 1e-4, -1e9, 1e9, 0, 3, 0.0), LG_OK);
    lg_runctx past = lg_dl_past();
    lg_verify_opts o = lg_verify_opts_default();
    o.bab.threads = 1;
    lg_verify_report r;
    ck_assert_int_eq(lg_verify_run_in(&net, &p, &o, &past, &r), LG_OK);
    ck_assert_msg(r.verdict == LG_VERDICT_UNKNOWN && r.how.timed_out == 1, "%s (%s), timed_out %d",
                  lg_verdict_name(r.verdict), r.how.reason, r.how.timed_out);
    lg_verify_report_free(&r);
    lg_prop_free(&p);
    lg_net_free(&net);
}
END_TEST

START_TEST(test_deadline_import)
{
    lg_runctx past = lg_dl_past();
    lg_net net;
    const char *onnx = lg_test_fixture("acasxu/ACASXU_run2a_1_7_batch_2000.onnx");
    ck_assert_int_eq(lg_net_load_in(&net, onnx, &past), LG_ERR_TIMEOUT);
    ck_assert(net.layers == NULL && net.params == NULL && net.n_layers == 0);
    lg_runctx none = lg_runctx_none();
    ck_assert_int_eq(lg_net_load_in(&net, onnx, &none), LG_OK);
    const char *native = lg_test_tmpfile(".lgnet");
    ck_assert_int_eq(lg_netfile_write(&net, native), LG_OK);
    lg_net_free(&net);
    ck_assert_int_eq(lg_net_load_in(&net, native, &past), LG_ERR_TIMEOUT);
    ck_assert(net.layers == NULL && net.n_layers == 0);
    ck_assert_int_eq(lg_net_load_in(&net, native, NULL), LG_OK);
    lg_net_free(&net);
}
END_TEST

/* The command line: a timeout that has passed before the files are read
 * (1 µs) answers timeout, in the report and in the VNN-COMP result file. */
START_TEST(test_deadline_cli)
{
    const char *res = lg_test_tmpfile(".txt"), *log = lg_test_tmpfile(".log");
    char args[2048];
    snprintf(args, sizeof args, "verify %s --vnnlib %s --timeout 0.000001 -o %s",
             lg_test_fixture("acasxu/ACASXU_run2a_1_7_batch_2000.onnx"), lg_test_fixture("acasxu/prop_3.vnnlib"), res);
    ck_assert_int_eq(lg_test_cli(args, log), 0);
    ck_assert_msg(strncmp(lg_test_slurp(log), "unknown (timeout)", 17) == 0, "printed '%s'", lg_test_slurp(log));
    ck_assert_str_eq(lg_test_slurp(res), "timeout\n");
}
END_TEST

/* The driver under deadlines from 0 to 0.4 s after its start: every run is
 * LG_OK; ACAS Xu 1_7 prop_3 (violated) is never robust; the sigmoid MLP
 * (mm_large, violated; no attack, so activation splitting and CROWN run
 * until the deadline) is never robust either. */
START_TEST(test_deadline_sweep)
{
    static const struct {
        const char *onnx, *vnnlib;
        int n_in, n_out, attack;
        lg_bab_mode bab;
    } cases[] = {{"acasxu/ACASXU_run2a_1_7_batch_2000.onnx", "acasxu/prop_3.vnnlib", 5, 5, 0, LG_BAB_RELU},
                 {"acasxu/ACASXU_run2a_1_7_batch_2000.onnx", "acasxu/prop_3.vnnlib", 5, 5, 0, LG_BAB_INPUT},
                 {"sigmoid3p/sig_eran_mm.onnx", "sigmoid3p/sig_eran_mm_large.vnnlib", 784, 10, 0, LG_BAB_NONE}};
    int n_timed = 0;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        lg_net net;
        lg_prop p;
        ck_assert_int_eq(lg_net_load(&net, lg_test_fixture(cases[c].onnx)), LG_OK);
        ck_assert_int_eq(lg_vnnlib_read(&p, lg_test_fixture(cases[c].vnnlib), cases[c].n_in, cases[c].n_out), LG_OK);
        for (int k = 0; k <= 16; k++) {
            lg_verify_opts o = lg_verify_opts_default();
            o.attack = cases[c].attack;
            o.solver = lg_test_solver("none");
            o.bab.mode = cases[c].bab;
            o.bab.threads = 1 + k % 2;
            lg_runctx run = lg_runctx_start(100, 1, 0, 0);
            run.deadline = lg_now() + 0.025 * k;
            lg_verify_report r;
            lg_status st = lg_verify_run_in(&net, &p, &o, &run, &r);
            ck_assert_msg(st == LG_OK, "%s, deadline +%g s: status %s (%s)", cases[c].vnnlib, 0.025 * k,
                          lg_status_str(st), lg_errmsg());
            ck_assert_msg(r.verdict != LG_VERDICT_ROBUST, "%s (violated), deadline +%g s: robust", cases[c].vnnlib,
                          0.025 * k);
            n_timed += r.how.timed_out;
            lg_verify_report_free(&r);
        }
        lg_prop_free(&p);
        lg_net_free(&net);
    }
    ck_assert_int_gt(n_timed, 0);
}
END_TEST

Suite *suite_deadline(void)
{
    Suite *s = suite_create("deadline");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_deadline_bounds);
    tcase_add_test(tc, test_deadline_alpha);
    tcase_add_test(tc, test_deadline_lp);
    tcase_add_test(tc, test_deadline_bab);
    tcase_add_test(tc, test_deadline_verify_smooth);
    tcase_add_test(tc, test_deadline_import);
    tcase_add_test(tc, test_deadline_cli);
    lg_tcase_timeout(tc, 120);
    suite_add_tcase(s, tc);
    TCase *tl = tcase_create("limits");
    tcase_add_test(tl, test_deadline_sweep);
    lg_tcase_timeout(tl, 300);
    suite_add_tcase(s, tl);
    return s;
}
