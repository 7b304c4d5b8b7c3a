/* check_soundfuzz.c — the differential soundness fuzzer in CI: a fixed
 * seed, a bounded number of cases (LG_SOUNDFUZZ_CASES in Release, fewer
 * under LG_TEST_QUICK), every --solver × --bab mode of the driver against
 * the exact oracle; any wrong robust / violated verdict or driver error
 * fails (soundfuzz.h). The long run is build/lgelu_soundfuzz (docs/TESTING.md
 * "Differential soundness fuzzer"). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen_fuzz.h"
#include "soundfuzz.h"
#include "testutil.h"

#define LG_SOUNDFUZZ_SEED 20261122UL
#define LG_SOUNDFUZZ_CASES 120
#define LG_SOUNDFUZZ_CASES_QUICK 24
/* Modes the CI slice runs (comma lists for lg_fuzz_opts_select): every
 * solver and every B&B mode. */
#define LG_SOUNDFUZZ_SOLVERS "auto,glpk,z3,none,glpk-only,z3-lp"
#define LG_SOUNDFUZZ_BABS "none,input,relu,auto"
/* The smooth direct runs (every third case and the smooth near ties) get a
 * shorter deadline: most are decided by the attack or the bounds at once,
 * near ties run to it. */
#define LG_SOUNDFUZZ_DIRECT_TIMEOUT 0.3
/* MaxPool graphs (lg_fuzz_pool) in CI: one batch. */
#define LG_SOUNDFUZZ_POOL_GRAPHS 6

/* The generator is deterministic and covers its classes. */
START_TEST(test_soundfuzz_generator)
{
    int n = 60, conv = 0, dag = 0, sat = 0, tie = 0, cancel = 0, norm = 0, big = 0, conj = 0, disj = 0, wide = 0;
    for (int i = 0; i < n; i++) {
        lg_fuzz_case a, b;
        ck_assert_msg(lg_fuzz_case_make(&a, 7, i) == LG_OK, "case %d: %s", i, lg_errmsg());
        ck_assert_int_eq(lg_fuzz_case_make(&b, 7, i), LG_OK);
        ck_assert_str_eq(a.cls, b.cls);
        ck_assert_int_eq(a.truth, b.truth);
        ck_assert_int_eq((int)a.net.n_params, (int)b.net.n_params);
        ck_assert(memcmp(a.net.params, b.net.params, a.net.n_params * sizeof(double)) == 0);
        ck_assert(a.net.n_layers >= 2 && a.net.n_layers <= 4);
        if (lg_net_has_conv(&a.net)) { /* the oracle's dense form: the same shape, no conv */
            conv++;
            ck_assert(strstr(a.cls, "conv") != NULL && a.prob.net == &a.dnet && !lg_net_has_conv(&a.dnet));
            ck_assert_int_eq(a.dnet.n_in, a.net.n_in);
            ck_assert_int_eq(lg_net_n_out(&a.dnet), lg_net_n_out(&a.net));
        } else if (strstr(a.cls, "dag")) { /* a graph (gen_graph.h): 2–4 inputs or a small image */
            ck_assert(a.net.n_in >= 2 && a.net.n_in <= 18 && a.prob.net == &a.net && strstr(a.cls, "conv") == NULL);
        } else {
            ck_assert(a.net.n_in >= 1 && a.net.n_in <= 4 && a.prob.net == &a.net && strstr(a.cls, "conv") == NULL);
            ck_assert(lg_net_is_chain(&a.net));
        }
        dag += strstr(a.cls, "dag") != NULL;
        sat += a.truth == LG_ANSWER_SAT;
        tie += strstr(a.cls, "tie") != NULL;
        cancel += strstr(a.cls, "cancel") != NULL;
        norm += strstr(a.cls, "norm") != NULL;
        big += strstr(a.cls, "big") != NULL;
        conj += strstr(a.cls, "conj") != NULL;
        disj += strstr(a.cls, "disj") != NULL;
        wide += strstr(a.cls, "w-wide") != NULL;
        lg_fuzz_case_free(&a);
        lg_fuzz_case_free(&b);
    }
    ck_assert_int_gt(sat, 5);
    ck_assert_int_gt(n - sat, 5);
    ck_assert(tie > 5 && conv > 3 && dag > 3 && cancel > 3 && norm > 3 && big > 3 && conj > 3 && disj > 3 && wide > 3);
}
END_TEST

START_TEST(test_soundfuzz_all_modes)
{
    long n = getenv("LG_TEST_QUICK") ? LG_SOUNDFUZZ_CASES_QUICK : LG_SOUNDFUZZ_CASES;
    lg_fuzz_opts o = lg_fuzz_opts_default();
    o.timeout_s = 1.0; /* per run: near-ties keep B&B busy until the deadline */
    o.direct_timeout_s = LG_SOUNDFUZZ_DIRECT_TIMEOUT;
    ck_assert_int_eq(lg_fuzz_opts_select(&o, 0, LG_SOUNDFUZZ_SOLVERS), LG_OK);
    ck_assert_int_eq(lg_fuzz_opts_select(&o, 1, LG_SOUNDFUZZ_BABS), LG_OK);
    lg_fuzz_stats s;
    memset(&s, 0, sizeof s);
    long bad = 0;
    for (long i = 0; i < n; i++) {
        lg_fuzz_case fc;
        ck_assert_msg(lg_fuzz_case_make(&fc, LG_SOUNDFUZZ_SEED, i) == LG_OK, "case %ld: %s", i, lg_errmsg());
        bad += lg_fuzz_run_case(&fc, &o, &s, stdout);
        lg_fuzz_case_free(&fc);
    }
    bad += lg_fuzz_pool(LG_SOUNDFUZZ_SEED, 0, getenv("LG_TEST_QUICK") ? 2 : LG_SOUNDFUZZ_POOL_GRAPHS, &o, &s, stdout);
    lg_fuzz_stats_print(&s, s.t_verify, stdout);
    fflush(stdout);
    ck_assert_msg(bad == 0, "%ld wrong verdicts or errors (seed %lu; see the lines above)", bad, LG_SOUNDFUZZ_SEED);
    /* the smooth direct class ran, with both verdicts, on the activations and shapes it is for */
    ck_assert_int_gt(s.direct_robust, 0);
    ck_assert_int_gt(s.direct_violated, 0);
    ck_assert_int_gt(s.direct_known, 0);
    ck_assert_int_eq(s.pool_graphs, getenv("LG_TEST_QUICK") ? 2 : LG_SOUNDFUZZ_POOL_GRAPHS);
    ck_assert_int_gt(s.pool_runs, 0);
    if (!getenv("LG_TEST_QUICK")) {
        static const char *const need[] = {"sigmoid", "prelu", "mix", "conv", "vnnlib", "tie sigmoid"};
        for (size_t k = 0; k < sizeof need / sizeof need[0]; k++) {
            int hit = 0;
            for (int i = 0; i < s.n_dclass; i++) hit |= strstr(s.dclass[i], need[k]) != NULL;
            ck_assert_msg(hit, "no direct run of class '%s' in the slice", need[k]);
        }
    }
    /* the check could fail: both truths occurred and the driver decided most runs */
    ck_assert_int_gt(s.truth_sat, 0);
    ck_assert_int_gt(s.truth_unsat, 0);
    ck_assert_int_gt(s.robust, 0);
    ck_assert_int_gt(s.violated, 0);
}
END_TEST

Suite *suite_soundfuzz(void)
{
    Suite *s = suite_create("soundfuzz");
    TCase *tc = tcase_create("core");
    lg_tcase_timeout(tc, 900);
    tcase_add_test(tc, test_soundfuzz_generator);
    tcase_add_test(tc, test_soundfuzz_all_modes);
    suite_add_tcase(s, tc);
    return s;
}
