/* check_tf_encode.c — the complete back-ends on Transformer nodes (DESIGN.md
 * §3 "Back-ends on Transformer nodes"): the relaxation rows hold at every
 * node value of sampled points, Z3 and GLPK prove what only the exact ReLU
 * split proves, a model of the relaxation that is no counterexample ends
 * unknown (never violated), verdicts agree with auto on random attention
 * nets, and the SMT-LIB / LP exports say they are relaxed and parse. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/net.h"
#include "core/rng.h"
#include "encode/problem.h"
#include "gen_tnet.h"
#include "test_solver.h"
#include "testutil.h"
#include "verify/bounds.h"
#include "verify/prop.h"
#include "verify/tnode_planes.h"
#include "verify/verify.h"

/* The value of every relaxation variable at x: the node values, then the
 * products' pairs in the builder's order (tnode_planes.c: per product layer
 * with K > 1, per output, per pair). */
static double *te_values(const lg_net *net, const lg_trelax *tr, const double *x)
{
    size_t nl = lg_net_nodes_len(net);
    double *v = malloc((nl + (size_t)tr->n_aux + 1) * sizeof *v), *pre = malloc(nl * sizeof *pre);
    ck_assert(v && pre);
    lg_net_forward_nodes(net, x, v, pre);
    free(pre);
    size_t a = nl;
    for (int k = 0; k < net->n_layers; k++) {
        const lg_layer *L = &net->layers[k];
        if (L->lin.kind != LG_LAYER_BILINEAR || L->lin.op.K < 2) continue;
        size_t K = (size_t)L->lin.op.K, oa = lg_net_node_offset(net, L->lin.src), ob = lg_net_node_offset(net, L->lin.op.src_b);
        const int *ia = L->lin.map, *ib = L->lin.map + (size_t)L->n_out * K;
        for (size_t q = 0; q < (size_t)L->n_out * K; q++) v[a++] = v[oa + (size_t)ia[q]] * v[ob + (size_t)ib[q]];
    }
    ck_assert_uint_eq(a, nl + (size_t)tr->n_aux);
    return v;
}

/* Every row of the relaxation built on the bounds of a box holds (to the
 * double evaluation's rounding) at sampled points of that box: corners and
 * uniform points, on random attention nets at three radii. */
START_TEST(test_tf_encode_rows_hold)
{
    int nets = lg_test_quick() ? 2 : 4;
    long rows = 0;
    for (unsigned seed = 1; seed <= (unsigned)nets; seed++) {
        lg_rng r;
        lg_rng_init(&r, seed, 5);
        lg_net net;
        lg_test_tnet_opts o = {0};
        ck_assert_int_eq(lg_test_tnet_random(&net, &r, &o), LG_OK);
        const double radii[3] = {1e-4, 0.02, 0.3};
        for (int ri = 0; ri < 3; ri++) {
            double c[64], lo[64], hi[64], x[64];
            for (int i = 0; i < net.n_in; i++) {
                c[i] = 2.0 * lg_rng_uniform(&r) - 1.0;
                lo[i] = c[i] - radii[ri];
                hi[i] = c[i] + radii[ri];
            }
            lg_bounds b;
            ck_assert_int_eq(lg_bounds_init(&b, &net), LG_OK);
            ck_assert_int_eq(lg_bounds_symbolic(&b, &net, lo, hi), LG_OK);
            lg_trelax tr;
            ck_assert_int_eq(lg_tnode_relax_build(&net, &b, &tr), LG_OK);
            ck_assert_int_eq(lg_trelax_check(&tr, lg_net_nodes_len(&net)), LG_OK);
            ck_assert_int_eq(tr.n_product, 2);
            ck_assert_int_eq(tr.n_softmax, 1);
            ck_assert_int_eq(tr.n_layernorm, 1);
            for (int s = 0; s < 40; s++) {
                for (int i = 0; i < net.n_in; i++) {
                    double u = s < 15 ? (double)lg_rng_below(&r, 2) : lg_rng_uniform(&r);
                    x[i] = lo[i] + u * (hi[i] - lo[i]);
                }
                double *v = te_values(&net, &tr, x);
                for (int i = 0; i < tr.n_rows; i++) {
                    const lg_trow *w = &tr.rows[i];
                    double sum = 0, mass = fabs(w->rhs);
                    for (int q = w->start; q < w->start + w->n; q++) {
                        sum += tr.coef[q] * v[tr.var[q]];
                        mass += fabs(tr.coef[q] * v[tr.var[q]]);
                    }
                    double tol = 1e-10 * (1.0 + mass), d = sum - w->rhs;
                    int ok = w->sense == 'E' ? fabs(d) <= tol : w->sense == 'L' ? d <= tol : d >= -tol;
                    ck_assert_msg(ok, "seed %u radius %g row %d (%c): %.17g vs %.17g", seed, radii[ri], i, w->sense,
                                  sum, w->rhs);
                    rows++;
                }
                free(v);
            }
            lg_trelax_free(&tr);
            lg_bounds_free(&b);
        }
        lg_net_free(&net);
    }
    ck_assert_int_gt(rows, 1000);
}
END_TEST

/* x ∈ [−1, 1] (one input); layer 0 a dense 1 → 2 (weights w0, w1) with
 * activation act0; layer 1 the product of layer 0's outputs 0 and 1 (or of
 * output 0 with itself when square); layer 2 the identity output. */
static void te_product_net(lg_net *net, lg_act act0, double w0, double w1, int square)
{
    lg_linear tm[3] = {{.kind = LG_LAYER_DENSE, .n_in = 1, .src = LG_NET_INPUT},
                       {.kind = LG_LAYER_BILINEAR, .n_in = 2, .src = 0, .op = {.src_b = 0, .n_in_b = 2, .K = 1}},
                       {.kind = LG_LAYER_DENSE, .n_in = 1, .src = 1}};
    lg_layer_spec sp[3] = {{2, act0, 1, &tm[0]}, {1, LG_ACT_IDENTITY, 1, &tm[1]}, {1, LG_ACT_IDENTITY, 1, &tm[2]}};
    ck_assert_int_eq(lg_net_build(net, 1, 3, sp), LG_OK);
    net->layers[0].lin.W[0] = w0;
    net->layers[0].lin.W[1] = w1;
    net->layers[1].lin.map[0] = 0;
    net->layers[1].lin.map[1] = square ? 0 : 1;
    net->layers[2].lin.W[0] = 1.0;
    ck_assert_int_eq(lg_net_validate(net), LG_OK);
}

/* One box [−1, 1], one term coef·y + d ≤ 0. */
static void te_prop(lg_prop *p, double coef, double d)
{
    ck_assert_int_eq(lg_prop_alloc(p, 1, 1, 1, NULL), LG_OK);
    p->cases[0].lo[0] = -1.0;
    p->cases[0].hi[0] = 1.0;
    p->cases[0].terms[0].cons[0].coef[0] = coef;
    p->cases[0].terms[0].cons[0].d = d;
}

static lg_verify_report te_verify(const lg_net *net, const lg_prop *p, const char *solver, double timeout_s)
{
    lg_verify_opts o = lg_verify_opts_default();
    o.timeout_s = timeout_s;
    o.solver = lg_test_solver(solver);
    lg_verify_report r;
    ck_assert_int_eq(lg_verify_run(net, p, &o, &r), LG_OK);
    return r;
}

/* relu(x)·relu(−x) = 0 on [−1, 1], so y ≥ 0.1 has no point. The bounds and
 * the attack cannot show it (McCormick over the ReLUs' relaxation allows
 * 0.5); the back-ends, exact on the ReLUs, do: robust by the back-end, and
 * auto agrees. */
START_TEST(test_tf_encode_relu_exact)
{
    lg_net net;
    te_product_net(&net, LG_ACT_RELU, 1.0, -1.0, 0);
    lg_prop p;
    te_prop(&p, -1.0, 0.1); /* −y + 0.1 ≤ 0 */
    const char *solvers[] = {"z3", "glpk", "auto"};
    for (int s = 0; s < 3; s++) {
        lg_verify_report r = te_verify(&net, &p, solvers[s], 20);
        ck_assert_msg(r.verdict == LG_VERDICT_ROBUST, "%s: %s (%s)", solvers[s], lg_verdict_name(r.verdict),
                      r.how.reason);
        if (s < 2) ck_assert_msg(r.how.stage == LG_STAGE_BACKEND, "%s: decided by stage %d", solvers[s], r.how.stage);
        lg_verify_report_free(&r);
    }
    /* and y ≥ 0 (a tie at y = 0): any x ≥ 0 or ≤ 0 gives y = 0, a real counterexample */
    lg_prop_free(&p);
    te_prop(&p, -1.0, 0.0);
    for (int s = 0; s < 3; s++) {
        lg_verify_report r = te_verify(&net, &p, solvers[s], 20);
        ck_assert_msg(r.verdict == LG_VERDICT_VIOLATED, "%s: %s", solvers[s], lg_verdict_name(r.verdict));
        lg_verify_report_free(&r);
    }
    lg_prop_free(&p);
    lg_net_free(&net);
}
END_TEST

/* x·x ≥ 0, but McCormick's planes of a square over [−1, 1] allow x·x = −1 at
 * x = 0: the back-ends find a model of the relaxation with y ≤ −0.1 that is
 * no counterexample; the verdict must be unknown (the relaxation's gap),
 * never violated. */
START_TEST(test_tf_encode_spurious_unknown)
{
    lg_net net;
    te_product_net(&net, LG_ACT_IDENTITY, 1.0, 0.0, 1);
    lg_prop p;
    te_prop(&p, 1.0, 0.1); /* y + 0.1 ≤ 0 */
    const char *solvers[] = {"z3", "glpk"};
    for (int s = 0; s < 2; s++) {
        lg_verify_report r = te_verify(&net, &p, solvers[s], 20);
        ck_assert_msg(r.verdict == LG_VERDICT_UNKNOWN, "%s: %s", solvers[s], lg_verdict_name(r.verdict));
        ck_assert_msg(strstr(r.how.reason, "relax") != NULL, "%s: %s", solvers[s], r.how.reason);
        lg_verify_report_free(&r);
    }
    lg_prop_free(&p);
    lg_net_free(&net);
}
END_TEST

/* Random attention nets, robustness of their own prediction at small radii:
 * z3 and glpk never contradict auto (robust against violated), and every
 * violated passed the exact witness gate (lg_verify_run's own rule). */
START_TEST(test_tf_encode_agree_auto)
{
    int nets = 2, robust = 0;
    for (unsigned seed = 1; seed <= (unsigned)nets; seed++) {
        lg_rng r;
        lg_rng_init(&r, seed, 11);
        lg_net net;
        lg_test_tnet_opts to = {.tokens = 2, .width = 2, .heads = 1, .n_out = 2};
        ck_assert_int_eq(lg_test_tnet_random(&net, &r, &to), LG_OK);
        double x0[64], y[4], scratch[512];
        for (int i = 0; i < net.n_in; i++) x0[i] = 2.0 * lg_rng_uniform(&r) - 1.0;
        lg_net_forward(&net, x0, y, scratch);
        int label = y[1] > y[0];
        const double eps[2] = {0.01, 0.02};
        for (int e = 0; e < 2; e++) {
            lg_prop p;
            ck_assert_int_eq(lg_prop_robustness(&p, x0, net.n_in, eps[e], -2.0, 2.0, label, 2, 0.0), LG_OK);
            lg_verify_report ra = te_verify(&net, &p, "auto", 0.3);
            const char *solvers[] = {"z3", "glpk"};
            for (int s = 0; s < 2; s++) {
                lg_verify_report rb = te_verify(&net, &p, solvers[s], 0.3);
                ck_assert_msg(!(ra.verdict == LG_VERDICT_ROBUST && rb.verdict == LG_VERDICT_VIOLATED) &&
                                  !(ra.verdict == LG_VERDICT_VIOLATED && rb.verdict == LG_VERDICT_ROBUST),
                              "seed %u eps %g: auto %s, %s %s", seed, eps[e], lg_verdict_name(ra.verdict),
                              solvers[s], lg_verdict_name(rb.verdict));
                robust += rb.verdict == LG_VERDICT_ROBUST;
                lg_verify_report_free(&rb);
            }
            lg_verify_report_free(&ra);
            lg_prop_free(&p);
        }
        lg_net_free(&net);
    }
    ck_assert_int_gt(robust, 0);
}
END_TEST

/* The exports of a relaxed query: the header says so, every relaxation row
 * is there, and Z3 reads the SMT-LIB file back (z3 binary, if installed). */
START_TEST(test_tf_encode_exports)
{
    lg_net net;
    te_product_net(&net, LG_ACT_RELU, 1.0, -1.0, 0);
    lg_prop p;
    te_prop(&p, -1.0, 0.1);
    lg_bounds b;
    lg_term *kept;
    lg_problem prob;
    ck_assert_int_eq(lg_verify_prepare(&net, &p, 0, LG_TIGHTEN_NONE, NULL, &b, &kept, &prob, NULL), LG_OK);
    prob.n_terms = p.cases[0].n_terms;
    prob.terms = p.cases[0].terms;
    /* without the relaxation the encoders refuse the product node */
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_int_eq(lg_solver_find("smt2")->write(&prob, f), LG_ERR_UNSUPPORTED);
    fclose(f);
    free(buf);
    lg_trelax tr;
    ck_assert_int_eq(lg_tnode_relax_build(&net, &b, &tr), LG_OK);
    ck_assert_int_eq(tr.n_rows, 4); /* McCormick's four planes of one pair */
    prob.trelax = &tr;
    const char *fmts[] = {"smt2", "lp"};
    for (int i = 0; i < 2; i++) {
        buf = NULL;
        f = open_memstream(&buf, &len);
        ck_assert_int_eq(lg_solver_find(fmts[i])->write(&prob, f), LG_OK);
        fclose(f);
        ck_assert_msg(strstr(buf, "RELAXED") != NULL, "%s: no relaxation note", fmts[i]);
        ck_assert_msg(strstr(buf, i == 0 ? "1 product, 0 softmax, 0 layernorm" : "tr_3") != NULL, "%s", fmts[i]);
        if (i == 0 && system("command -v z3 >/dev/null 2>&1") == 0) {
            char path[] = "/tmp/lg_tf_encode_XXXXXX";
            int fd = mkstemp(path);
            ck_assert_int_ge(fd, 0);
            FILE *g = fdopen(fd, "w");
            fputs(buf, g);
            fclose(g);
            char cmd[256];
            snprintf(cmd, sizeof cmd, "z3 -smt2 %s 2>&1 | head -1", path);
            FILE *pz = popen(cmd, "r");
            char line[64] = "";
            ck_assert(fgets(line, sizeof line, pz) != NULL);
            pclose(pz);
            remove(path);
            ck_assert_msg(strncmp(line, "unsat", 5) == 0, "z3 on the export: %s", line);
        }
        free(buf);
    }
    /* a relaxation of another net is refused */
    lg_trelax bad = tr;
    bad.nodes_len += 1;
    prob.trelax = &bad;
    buf = NULL;
    f = open_memstream(&buf, &len);
    ck_assert_int_eq(lg_solver_find("lp")->write(&prob, f), LG_ERR_ARG);
    fclose(f);
    free(buf);
    lg_trelax_free(&tr);
    free(kept);
    lg_bounds_free(&b);
    lg_prop_free(&p);
    lg_net_free(&net);
}
END_TEST

Suite *suite_tf_encode(void)
{
    Suite *s = suite_create("tf_encode");
    TCase *tc = tcase_create("core");
    lg_tcase_timeout(tc, 120);
    tcase_add_test(tc, test_tf_encode_rows_hold);
    tcase_add_test(tc, test_tf_encode_relu_exact);
    tcase_add_test(tc, test_tf_encode_spurious_unknown);
    tcase_add_test(tc, test_tf_encode_agree_auto);
    tcase_add_test(tc, test_tf_encode_exports);
    suite_add_tcase(s, tc);
    return s;
}
