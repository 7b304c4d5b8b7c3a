/* check_oracle.c — the enumeration oracle itself: a hand-computed network,
 * and random instances against dense sampling of the input box. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "oracle.h"

/* y0 = relu(x) + relu(−x) = |x|, y1 = 0.5 on x ∈ [−1, 1]. */
typedef struct absnet {
    lg_net net;
    double lo, hi;
    double pl0[2], ph0[2], pl1[2], ph1[2];
    double *pre_lo[2], *pre_hi[2];
    double coef[2];
    lg_lincon con;
    lg_term term;
    lg_problem p;
} absnet;

static void absnet_init(absnet *a)
{
    memset(a, 0, sizeof *a);
    int dims[3] = {1, 2, 2};
    ck_assert_int_eq(lg_net_init(&a->net, 2, dims, LG_ACT_RELU), LG_OK);
    a->net.layers[0].W[0] = 1.0;
    a->net.layers[0].W[1] = -1.0;
    double W1[4] = {1, 1, 0, 0};
    memcpy(a->net.layers[1].W, W1, sizeof W1);
    a->net.layers[1].b[1] = 0.5;
    a->lo = -1, a->hi = 1;
    a->pl0[0] = a->pl0[1] = -1, a->ph0[0] = a->ph0[1] = 1;
    a->pl1[0] = 0, a->ph1[0] = 2, a->pl1[1] = a->ph1[1] = 0.5;
    a->pre_lo[0] = a->pl0, a->pre_lo[1] = a->pl1, a->pre_hi[0] = a->ph0, a->pre_hi[1] = a->ph1;
    a->con.coef = a->coef;
    a->term.n_cons = 1;
    a->term.cons = &a->con;
    lg_problem p = {&a->net, &a->lo, &a->hi, 1, &a->term, a->pre_lo, a->pre_hi};
    a->p = p;
}

START_TEST(test_oracle_abs_network)
{
    absnet a;
    absnet_init(&a);
    lg_answer ans;
    double x;
    long n_lp;
    /* |x| − 0.5 ≤ 0: sat, witness with |x| ≤ 0.5 */
    a.coef[0] = 1, a.coef[1] = -1, a.con.d = 0;
    ck_assert_int_eq(lg_oracle_solve(&a.p, &ans, &x, &n_lp), LG_OK);
    ck_assert_int_eq(ans, LG_ANSWER_SAT);
    ck_assert(fabs(x) <= 0.5);
    ck_assert_int_gt(n_lp, 0);
    /* 0.5 − |x| + 0.75 ≤ 0 ⇔ |x| ≥ 1.25: impossible in [−1, 1] */
    a.coef[0] = -1, a.coef[1] = 1, a.con.d = 0.75;
    ck_assert_int_eq(lg_oracle_solve(&a.p, &ans, &x, NULL), LG_OK);
    ck_assert_int_eq(ans, LG_ANSWER_UNSAT);
    /* |x| ≥ 1 exactly at the corners (closed constraints): sat */
    a.con.d = 0.5;
    ck_assert_int_eq(lg_oracle_solve(&a.p, &ans, &x, NULL), LG_OK);
    ck_assert_int_eq(ans, LG_ANSWER_SAT);
    ck_assert_double_eq(fabs(x), 1.0);
    /* 0.5 − |x| − 0.25 ≤ 0 ⇔ |x| ≥ 0.25 */
    a.con.d = -0.25;
    ck_assert_int_eq(lg_oracle_solve(&a.p, &ans, &x, NULL), LG_OK);
    ck_assert_int_eq(ans, LG_ANSWER_SAT);
    ck_assert(fabs(x) >= 0.25);
    lg_net_free(&a.net);
}
END_TEST

/* Oracle UNSAT ⇒ no sampled point is a counterexample; oracle SAT ⇒ its
 * witness is one (forward pass in double, 1e-9). */
START_TEST(test_oracle_vs_sampling)
{
    int n_inst = getenv("LG_TEST_QUICK") ? 15 : 40, n_samples = getenv("LG_TEST_QUICK") ? 2000 : 5000;
    lg_rng g;
    lg_rng_init(&g, 777, 2);
    int n_sat = 0, n_unsat = 0, sample_hits = 0;
    for (int i = 0; i < n_inst; i++) {
        lg_test_shape s = {2, {2 + (int)lg_rng_below(&g, 2), 3 + (int)lg_rng_below(&g, 5), 3}, 0.4, (int)(i % 2)};
        lg_test_inst in;
        ck_assert_int_eq(lg_test_inst_random(&in, &g, &s), LG_OK);
        int n_in = in.net.n_in;
        double *x = malloc((size_t)n_in * sizeof *x);
        lg_answer ans;
        ck_assert_int_eq(lg_oracle_solve(&in.prob, &ans, x, NULL), LG_OK);
        if (ans == LG_ANSWER_SAT) {
            n_sat++;
            ck_assert_msg(lg_test_any_term_holds(&in.prob, x, 1e-9), "instance %d: oracle witness fails", i);
        } else {
            n_unsat++;
            for (int k = 0; k < n_samples; k++) {
                for (int j = 0; j < n_in; j++) x[j] = in.lo[j] + (in.hi[j] - in.lo[j]) * lg_rng_uniform(&g);
                int hit = lg_test_any_term_holds(&in.prob, x, 0.0);
                sample_hits += hit;
                ck_assert_msg(!hit, "instance %d: oracle unsat but sample %d is a counterexample", i, k);
            }
        }
        free(x);
        lg_test_inst_free(&in);
    }
    ck_assert_int_gt(n_sat, 0);
    ck_assert_int_gt(n_unsat, 0);
    ck_assert_int_eq(sample_hits, 0);
}
END_TEST

START_TEST(test_oracle_limits)
{
    lg_rng g;
    lg_rng_init(&g, 3, 3);
    lg_test_shape s = {2, {2, 20, 2}, 5.0, 0}; /* wide box: > 12 unstable */
    lg_test_inst in;
    ck_assert_int_eq(lg_test_inst_random(&in, &g, &s), LG_OK);
    lg_answer ans;
    ck_assert_int_eq(lg_oracle_solve(&in.prob, &ans, NULL, NULL), LG_ERR_ARG);
    in.net.layers[0].act = LG_ACT_GELU;
    ck_assert_int_eq(lg_oracle_solve(&in.prob, &ans, NULL, NULL), LG_ERR_UNSUPPORTED);
    lg_test_inst_free(&in);
}
END_TEST

Suite *suite_oracle(void)
{
    Suite *s = suite_create("oracle");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_oracle_abs_network);
    tcase_add_test(tc, test_oracle_vs_sampling);
    suite_add_tcase(s, tc);
    TCase *tl = tcase_create("limits");
    tcase_add_test(tl, test_oracle_limits);
    suite_add_tcase(s, tl);
    return s;
}
