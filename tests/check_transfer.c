/* check_transfer.c — verdicts for the smooth network through its ReLU
 * substitution (verify/transfer.h): `robust` must hold for the λ-GELU net on
 * every sampled input, `violated` must fool the λ-GELU net itself. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "anneal/relu.h"
#include "core/netfile.h"
#include "core/rng.h"
#include "testutil.h"
#include "verify/transfer.h"

/* Largest wrong-class margin violation of net on the box: returns 1 if some
 * sample x (corners-biased) has y_label − y_j ≤ 0 for some j. */
static int lg_sample_finds_cex(const lg_net *net, const lg_prop *p, int label, lg_rng *r, int n)
{
    int ni = net->n_in, no = lg_net_n_out(net);
    double *x = malloc(sizeof(double) * (size_t)ni), *y = malloc(sizeof(double) * (size_t)no);
    double *scr = malloc(sizeof(double) * 2 * (size_t)lg_net_max_width(net));
    int found = 0;
    for (int s = 0; s < n && !found; s++) {
        for (int i = 0; i < ni; i++) {
            double u = lg_rng_uniform(r);
            if (s % 2) u = u < 0.5 ? 0 : 1;
            x[i] = p->cases[0].lo[i] + u * (p->cases[0].hi[i] - p->cases[0].lo[i]);
        }
        lg_net_forward(net, x, y, scr);
        for (int j = 0; j < no; j++)
            if (j != label && y[label] - y[j] <= 0) found = 1;
    }
    free(x);
    free(y);
    free(scr);
    return found;
}

/* A random 4-8-8-3 λ-GELU net g with both hidden λ = lam, its substitution
 * rl, and a robustness property p of radius eps around a uniform input at
 * g's own class (returned). */
static int lg_transfer_instance(lg_rng *r, double lam, double eps, lg_net *g, lg_net *rl, lg_prop *p)
{
    const int dims[] = {4, 8, 8, 3};
    ck_assert_int_eq(lg_net_init(g, 3, dims, LG_ACT_LGELU), LG_OK);
    lg_test_randomize(g, r, 0.8);
    for (int k = 0; k < 2; k++) g->layers[k].lambda = lam;
    ck_assert_int_eq(lg_anneal_to_relu(rl, g), LG_OK);
    double x0[4], y0[3], scr[16];
    for (int i = 0; i < 4; i++) x0[i] = lg_rng_uniform(r);
    lg_net_forward(g, x0, y0, scr);
    int label = 0;
    for (int j = 1; j < 3; j++)
        if (y0[j] > y0[label]) label = j;
    if (eps < 0) eps = 0.01 + 0.1 * lg_rng_uniform(r);
    ck_assert_int_eq(lg_prop_robustness(p, x0, 4, eps, 0.0, 1.0, label, 3, 0.0), LG_OK);
    return label;
}

START_TEST(test_transfer_sound_on_random_nets)
{
    const double lambdas[] = {2.0, 20.0, 160.0};
    int n_robust = 0, n_violated = 0, n_unknown = 0;
    int n_inst = 40; /* fast even under sanitizers; fewer would not meet both verdicts */
    lg_rng r;
    lg_rng_init(&r, 2024, 7);
    for (int t = 0; t < n_inst; t++) {
        lg_net g, rl;
        lg_prop p;
        double scr[16];
        int label = lg_transfer_instance(&r, lambdas[t % 3], -1, &g, &rl, &p);
        lg_verify_opts o = lg_verify_opts_default();
        o.timeout_s = 20;
        lg_verify_report rep;
        double delta = -1;
        ck_assert_int_eq(lg_verify_transfer(&rl, &g, &p, &o, &rep, &delta), LG_OK);
        ck_assert_msg(delta >= 0, "instance %d: delta %g", t, delta);
        if (rep.verdict == LG_VERDICT_ROBUST) {
            n_robust++;
            ck_assert_msg(!lg_sample_finds_cex(&g, &p, label, &r, 3000),
                          "instance %d (lambda %g): robust for the smooth net but sampling fools it", t,
                          lambdas[t % 3]);
        } else if (rep.verdict == LG_VERDICT_VIOLATED) {
            n_violated++;
            double y[3];
            lg_net_forward(&g, rep.x, y, scr);
            ck_assert_msg(lg_prop_case_contains(&p, 0, rep.x), "instance %d: counterexample outside the box", t);
            ck_assert_msg(lg_prop_case_violated_by(&p, 0, y), "instance %d: counterexample does not fool the smooth net", t);
        } else {
            n_unknown++;
        }
        lg_verify_report_free(&rep);
        lg_prop_free(&p);
        lg_net_free(&rl);
        lg_net_free(&g);
    }
    printf("transfer: %d robust, %d violated, %d unknown\n", n_robust, n_violated, n_unknown);
    ck_assert_int_gt(n_robust, 0);
    ck_assert_int_gt(n_violated, 0);
}
END_TEST

/* Low λ: Δ is large, so the ReLU net misses the 2Δ margin almost
 * everywhere and its witnesses rarely fool the smooth net; where sampling
 * finds a counterexample of the smooth net itself, the transfer must find
 * one too (the attack on the smooth net), certified by the gate. */
START_TEST(test_transfer_finds_smooth_counterexamples)
{
    lg_rng r;
    lg_rng_init(&r, 77, 3);
    int sampled = 0, found = 0;
    for (int t = 0; t < 30; t++) {
        lg_net g, rl;
        lg_prop p;
        double scr[16];
        int label = lg_transfer_instance(&r, 1.5, 0.15, &g, &rl, &p);
        lg_verify_opts o = lg_verify_opts_default();
        o.timeout_s = 20;
        lg_verify_report rep;
        double delta = -1;
        ck_assert_int_eq(lg_verify_transfer(&rl, &g, &p, &o, &rep, &delta), LG_OK);
        int cex = lg_sample_finds_cex(&g, &p, label, &r, 3000);
        sampled += cex;
        if (rep.verdict == LG_VERDICT_VIOLATED) {
            double y[3];
            lg_net_forward(&g, rep.x, y, scr);
            ck_assert_msg(lg_prop_case_contains(&p, 0, rep.x) && lg_prop_case_violated_by(&p, 0, y),
                          "instance %d: the counterexample does not fool the smooth net", t);
            found += cex;
        }
        ck_assert_msg(!(cex && rep.verdict == LG_VERDICT_ROBUST), "instance %d: robust, but sampling fools it", t);
        lg_verify_report_free(&rep);
        lg_prop_free(&p);
        lg_net_free(&rl);
        lg_net_free(&g);
    }
    printf("transfer at lambda 1.5: sampling fools %d, the transfer finds %d of them\n", sampled, found);
    ck_assert_int_ge(sampled, 3);
    ck_assert_int_eq(found, sampled);
}
END_TEST

START_TEST(test_transfer_refuses_mismatched_pair)
{
    const int dims[] = {3, 4, 2};
    lg_rng r;
    lg_rng_init(&r, 5, 1);
    lg_net g, other, rl;
    ck_assert_int_eq(lg_net_init(&g, 2, dims, LG_ACT_LGELU), LG_OK);
    ck_assert_int_eq(lg_net_init(&other, 2, dims, LG_ACT_RELU), LG_OK);
    lg_test_randomize(&g, &r, 1.0);
    lg_test_randomize(&other, &r, 1.0);
    ck_assert_int_eq(lg_anneal_to_relu(&rl, &g), LG_OK);
    const double x0[3] = {0.5, 0.5, 0.5};
    lg_prop p;
    ck_assert_int_eq(lg_prop_robustness(&p, x0, 3, 0.05, 0, 1, 0, 2, 0), LG_OK);
    lg_verify_opts o = lg_verify_opts_default();
    lg_verify_report rep;
    double delta;
    ck_assert_int_eq(lg_verify_transfer(&other, &g, &p, &o, &rep, &delta), LG_ERR_ARG);
    lg_verify_report_free(&rep);
    lg_prop_free(&p);
    lg_net_free(&rl);
    lg_net_free(&other);
    lg_net_free(&g);
}
END_TEST

/* `lgelu verify RELU --ref NET --input X --eps E --json`: the JSON names the
 * reference and the certified delta, and the verdict agrees with the library. */
START_TEST(test_transfer_cli)
{
    const int dims[] = {3, 6, 2};
    lg_rng r;
    lg_rng_init(&r, 99, 4);
    lg_net g, rl;
    ck_assert_int_eq(lg_net_init(&g, 2, dims, LG_ACT_LGELU), LG_OK);
    lg_test_randomize(&g, &r, 1.0);
    g.layers[0].lambda = 160.0;
    g.layers[1].b[0] += 5.0; /* a comfortable margin for output 0 */
    ck_assert_int_eq(lg_anneal_to_relu(&rl, &g), LG_OK);
    char pg[256], pr[256], px[256], pj[256], args[2048];
    snprintf(pg, sizeof pg, "%s", lg_test_tmpfile(".lgnet"));
    snprintf(pr, sizeof pr, "%s", lg_test_tmpfile(".lgnet"));
    snprintf(px, sizeof px, "%s", lg_test_tmpfile(".txt"));
    snprintf(pj, sizeof pj, "%s", lg_test_tmpfile(".json"));
    ck_assert_int_eq(lg_netfile_write(&g, pg), LG_OK);
    ck_assert_int_eq(lg_netfile_write(&rl, pr), LG_OK);
    FILE *f = fopen(px, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "0.5 0.5 0.5\n");
    fclose(f);
    snprintf(args, sizeof args, "verify '%s' --ref '%s' --input '%s' --label 0 --eps 0.01 --json", pr, pg, px);
    ck_assert_int_eq(lg_test_cli(args, pj), 0);
    char line[4096] = {0};
    f = fopen(pj, "r");
    ck_assert_ptr_nonnull(f);
    ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
    fclose(f);
    ck_assert_msg(strstr(line, "\"ref\": ") && strstr(line, "\"delta\": "), "JSON: %s", line);
    const double x0[3] = {0.5, 0.5, 0.5};
    lg_prop p;
    ck_assert_int_eq(lg_prop_robustness(&p, x0, 3, 0.01, 0, 1, 0, 2, 0), LG_OK);
    lg_verify_opts o = lg_verify_opts_default();
    lg_verify_report rep;
    double delta;
    ck_assert_int_eq(lg_verify_transfer(&rl, &g, &p, &o, &rep, &delta), LG_OK);
    char want[64];
    snprintf(want, sizeof want, "\"verdict\": \"%s\"", lg_verdict_name(rep.verdict));
    ck_assert_msg(strstr(line, want), "CLI and library disagree: %s vs %s", line, want);
    /* a mismatched pair does not fit: refused with exit code 2 */
    snprintf(args, sizeof args, "verify '%s' --ref '%s' --input '%s' --eps 0.01 --json", pg, pg, px);
    ck_assert_int_eq(lg_test_cli(args, NULL), 2);
    remove(pg), remove(pr), remove(px), remove(pj);
    lg_verify_report_free(&rep);
    lg_prop_free(&p);
    lg_net_free(&rl);
    lg_net_free(&g);
}
END_TEST

/* A clean input the smooth net already misclassifies is violated for it,
 * flagged misclassified, with the clean input as the counterexample; with
 * the net's own label the flag stays off. */
START_TEST(test_transfer_misclassified_clean_input)
{
    lg_rng r;
    lg_rng_init(&r, 77, 1);
    for (int t = 0; t < 6; t++) {
        const int dims[] = {4, 8, 3};
        lg_net g, rl;
        ck_assert_int_eq(lg_net_init(&g, 2, dims, LG_ACT_LGELU), LG_OK);
        lg_test_randomize(&g, &r, 0.8);
        g.layers[0].lambda = 160;
        ck_assert_int_eq(lg_anneal_to_relu(&rl, &g), LG_OK);
        double x0[4], y0[3], scr[16];
        for (int i = 0; i < 4; i++) x0[i] = lg_rng_uniform(&r);
        lg_net_forward(&g, x0, y0, scr);
        int best = 0;
        for (int j = 1; j < 3; j++)
            if (y0[j] > y0[best]) best = j;
        for (int wrong = 0; wrong < 2; wrong++) {
            int label = wrong ? (best + 1) % 3 : best;
            lg_prop p;
            ck_assert_int_eq(lg_prop_robustness(&p, x0, 4, 0.001, 0.0, 1.0, label, 3, 0.0), LG_OK);
            lg_verify_opts o = lg_verify_opts_default();
            o.timeout_s = 20;
            lg_verify_report rep;
            double delta = 0;
            ck_assert_int_eq(lg_verify_transfer(&rl, &g, &p, &o, &rep, &delta), LG_OK);
            ck_assert_msg(rep.misclassified == wrong, "net %d label %d (smooth net's class %d): misclassified %d", t,
                          label, best, rep.misclassified);
            if (wrong) {
                ck_assert_int_eq(rep.verdict, LG_VERDICT_VIOLATED);
                ck_assert_str_eq(rep.method, "clean input");
                for (int i = 0; i < 4; i++) ck_assert(rep.x[i] == x0[i]);
            }
            lg_verify_report_free(&rep);
            lg_prop_free(&p);
        }
        lg_net_free(&rl);
        lg_net_free(&g);
    }
}
END_TEST

Suite *suite_transfer(void)
{
    Suite *s = suite_create("transfer");
    TCase *tc = tcase_create("core");
    lg_tcase_timeout(tc, 300);
    tcase_add_test(tc, test_transfer_sound_on_random_nets);
    tcase_add_test(tc, test_transfer_finds_smooth_counterexamples);
    suite_add_tcase(s, tc);
    TCase *tl = tcase_create("limits");
    lg_tcase_timeout(tl, 120);
    tcase_add_test(tl, test_transfer_refuses_mismatched_pair);
    tcase_add_test(tl, test_transfer_cli);
    suite_add_tcase(s, tl);
    TCase *tm = tcase_create("misclassified");
    tcase_add_test(tm, test_transfer_misclassified_clean_input);
    lg_tcase_timeout(tm, 120);
    suite_add_tcase(s, tm);
    return s;
}
