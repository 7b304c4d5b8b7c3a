/* check_prop.c — robustness properties: box clipping and the term semantics. */
#include <check.h>

#include "verify/prop.h"
#include "testutil.h"

START_TEST(test_prop_robustness_box_and_terms)
{
    const double x0[3] = {0.0, 0.5, 0.995};
    lg_prop p;
    ck_assert_int_eq(lg_prop_robustness(&p, x0, 3, 0.01, 0.0, 1.0, 1, 3, 0.25), LG_OK);
    ck_assert_int_eq(p.n_cases, 1);
    ck_assert_int_eq(p.cases[0].n_terms, 2);
    ck_assert_double_eq(p.cases[0].lo[0], 0.0);
    ck_assert_double_eq(p.cases[0].hi[2], 1.0);
    ck_assert_double_eq_tol(p.cases[0].lo[1], 0.49, 1e-15);
    const double robust[3] = {0.0, 1.0, 0.5};      /* margin 0.5 > 0.25 */
    const double tight[3] = {0.0, 0.75, 0.5};      /* margin exactly 0.25: counterexample (closed) */
    const double beaten[3] = {2.0, 1.0, 0.0};
    ck_assert_int_eq(lg_prop_case_violated_by(&p, 0, robust), 0);
    ck_assert_int_eq(lg_prop_case_violated_by(&p, 0, tight), 1);
    ck_assert_int_eq(lg_prop_case_violated_by(&p, 0, beaten), 1);
    const double in[3] = {0.005, 0.5, 1.0}, out[3] = {0.005, 0.511, 1.0};
    ck_assert_int_eq(lg_prop_case_contains(&p, 0, in), 1);
    ck_assert_int_eq(lg_prop_case_contains(&p, 0, out), 0);
    lg_prop_free(&p);
    lg_prop_free(&p);
}
END_TEST

START_TEST(test_prop_robustness_bad_args)
{
    const double x0[2] = {0, 0};
    lg_prop p;
    ck_assert_int_eq(lg_prop_robustness(&p, x0, 2, 0.1, 0, 1, 5, 3, 0), LG_ERR_ARG);
    ck_assert_int_eq(lg_prop_robustness(&p, x0, 2, -0.1, 0, 1, 0, 3, 0), LG_ERR_ARG);
    ck_assert_ptr_null(p.cases);
}
END_TEST

Suite *suite_prop(void)
{
    Suite *s = suite_create("prop");
    TCase *tc = tcase_create("core");
    lg_tcase_timeout(tc, 120);
    tcase_add_test(tc, test_prop_robustness_box_and_terms);
    suite_add_tcase(s, tc);
    TCase *tl = tcase_create("limits");
    lg_tcase_timeout(tl, 120);
    tcase_add_test(tl, test_prop_robustness_bad_args);
    suite_add_tcase(s, tl);
    return s;
}
