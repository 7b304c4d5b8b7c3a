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

#define LG_SOUNDFUZZ_SEED 20261122UL
#define LG_SOUNDFUZZ_CASES 160
#define LG_SOUNDFUZZ_CASES_QUICK 24
/* Modes the CI slice runs (comma lists for lg_fuzz_opts_select): every
 * solver and every B&B mode. */
#define LG_SOUNDFUZZ_SOLVERS "auto,glpk,z3,none,glpk-only,z3-lp"
#define LG_SOUNDFUZZ_BABS "none,input,relu,auto"

/* The generator is deterministic and covers its classes. */
START_TEST(test_soundfuzz_generator)
{
    int n = 60, conv = 0, sat = 0, tie = 0, cancel = 0, norm = 0, big = 0, conj = 0, disj = 0, wide = 0;
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
        } else {
            ck_assert(a.net.n_in >= 1 && a.net.n_in <= 4 && a.prob.net == &a.net && strstr(a.cls, "conv") == NULL);
        }
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
    ck_assert(tie > 5 && conv > 3 && cancel > 3 && norm > 3 && big > 3 && conj > 3 && disj > 3 && wide > 3);
}
END_TEST

START_TEST(test_soundfuzz_all_modes)
{
    long n = getenv("LG_TEST_QUICK") ? LG_SOUNDFUZZ_CASES_QUICK : LG_SOUNDFUZZ_CASES;
    lg_fuzz_opts o = lg_fuzz_opts_default();
    o.timeout_s = 1.0; /* per run: near-ties keep B&B busy until the deadline */
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
    lg_fuzz_stats_print(&s, s.t_verify, stdout);
    fflush(stdout);
    ck_assert_msg(bad == 0, "%ld wrong verdicts or errors (seed %lu; see the lines above)", bad, LG_SOUNDFUZZ_SEED);
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
    tcase_set_timeout(tc, 900);
    tcase_add_test(tc, test_soundfuzz_generator);
    tcase_add_test(tc, test_soundfuzz_all_modes);
    suite_add_tcase(s, tc);
    return s;
}
