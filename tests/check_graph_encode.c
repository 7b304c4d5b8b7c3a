/* check_graph_encode.c — the complete back-ends, the text exports, the
 * exact witness gate and the certified deviation bound on graphs (DAGs with
 * residual sums, Concat, Slice and conv terms; tests/gen_graph.h):
 *   - Z3 (exact and LP theory) and GLPK against the exact enumeration
 *     oracle (tests/oracle.h) on random DAGs, every witness judged by the
 *     exact gate and by the oracle alike;
 *   - SMT-LIB and CPLEX LP exports read by the z3 and glpsol binaries;
 *   - the exact gate (GMP) on ties one ulp wide, the MPFR enclosure on
 *     smooth DAGs;
 *   - the deviation bound against sampled |f_relu − f_smooth|, against the
 *     naive peak recursion, and, on chains, against the values recorded
 *     before the bound took graphs. */
#include <check.h>
#include <gmp.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "anneal/deviation.h"
#include "anneal/relu.h"
#include "core/clock.h"
#include "core/exact.h"
#include "core/linop.h"
#include "encode/problem.h"
#include "encode/pwl.h"
#include "gen_graph.h"
#include "oracle.h"
#include "testutil.h"
#include "verify/backend.h"
#include "verify/bounds.h"

/* Number of copy columns the encoders add for p (pwl.h): positions two
 * terms of one layer read with an inexact weight sum. */
static int ge_copies(const lg_net *net)
{
    lg_pwl_row R;
    ck_assert_int_eq(lg_pwl_row_init(&R, net), LG_OK);
    int c = lg_pwl_row_copies(&R, NULL, NULL);
    lg_pwl_row_free(&R);
    return c;
}

/* x[3] → h0 = relu(W0·x + b0) [3] → h1 = relu(W1·h0 + h0 + b1) [3] (a residual
 * whose two terms read the same node; W1[i][i] ∈ (0.1, 0.3), so that
 * W1[i][i] + 1 is not a double) → y = W2·h1 + W3·h0 + b2 [2]. */
static void ge_same_source(lg_test_inst *in, lg_rng *r)
{
    memset(in, 0, sizeof *in);
    lg_linear t0[1] = {{.kind = LG_LAYER_DENSE, .n_in = 3, .src = LG_NET_INPUT}};
    lg_linear t1[2] = {{.kind = LG_LAYER_DENSE, .n_in = 3, .src = 0}, {.kind = LG_LAYER_INDEX, .n_in = 3, .src = 0}};
    lg_linear t2[2] = {{.kind = LG_LAYER_DENSE, .n_in = 3, .src = 1}, {.kind = LG_LAYER_DENSE, .n_in = 3, .src = 0}};
    lg_layer_spec sp[3] = {{3, LG_ACT_RELU, 1, t0}, {3, LG_ACT_RELU, 2, t1}, {2, LG_ACT_IDENTITY, 2, t2}};
    ck_assert_int_eq(lg_net_build(&in->net, 3, 3, sp), LG_OK);
    for (size_t i = 0; i < in->net.n_params; i++) in->net.params[i] = 0.7 * lg_rng_normal(r);
    for (int o = 0; o < 3; o++) {
        in->net.layers[1].terms[0].map[o] = o;
        in->net.layers[1].lin.W[o * 3 + o] = 0.1 + 0.2 * lg_rng_uniform(r);
    }
    lg_test_inst_finish(in, r, 0.1 + 0.5 * lg_rng_uniform(r), lg_rng_below(r, 3) == 0);
}

/* The exact gate and the oracle judge a back-end's witness alike. */
static void ge_witness_agrees(const lg_problem *p, const double *x, const char *who, int it)
{
    int gate = lg_exact_first_holding(p->net, x, p->n_terms, p->terms, NULL);
    ck_assert_msg(gate >= -1, "instance %d: exact gate error %d on the %s witness", it, gate, who);
    ck_assert_msg((gate >= 0) == lg_oracle_is_counterexample(p, x), "instance %d: exact gate %d, oracle %d on the %s witness",
                  it, gate, lg_oracle_is_counterexample(p, x), who);
}

/* One instance through z3 (exact), z3-lp and glpk; returns the oracle's
 * answer, or −1 when the oracle cannot enumerate it. Unknowns of glpk and
 * z3-lp are counted in unk[0], unk[1]. */
static int ge_decide_all(const lg_test_inst *in, int it, int *unk)
{
    const lg_problem *p = &in->prob;
    lg_answer oa;
    lg_status st = lg_oracle_solve(p, &oa, NULL, NULL);
    if (st == LG_ERR_ARG) return -1; /* too many unstable neurons to enumerate */
    ck_assert_msg(st == LG_OK, "instance %d: oracle: %s", it, lg_errmsg());
    static const char *names[3] = {"z3", "z3-lp", "glpk"};
    lg_solve_opts o = lg_solve_opts_default();
    for (int s = 0; s < 3; s++) {
        lg_result res;
        o.run.deadline = lg_now() + 60; /* isolated in a child (solvers.c) */
        ck_assert_msg(lg_solver_find(names[s])->solve(p, &o, &res) == LG_OK, "instance %d: %s: %s", it, names[s],
                      lg_errmsg());
        if (res.answer == LG_ANSWER_UNKNOWN) {
            ck_assert_msg(s > 0, "instance %d: z3 unknown (%s)", it, res.reason);
            unk[s == 2 ? 0 : 1]++;
        } else {
            ck_assert_msg(res.answer == oa, "instance %d: %s %s, oracle %s", it, names[s],
                          lg_test_answer_name(res.answer), lg_test_answer_name(oa));
        }
        if (res.answer == LG_ANSWER_SAT) {
            ck_assert_ptr_nonnull(res.x);
            ge_witness_agrees(p, res.x, names[s], it);
            if (s == 0) ck_assert_msg(lg_test_any_term_holds(p, res.x, 0.0), "instance %d: z3 witness fails", it);
        }
        lg_result_free(&res);
    }
    if (it % 8 == 0) { /* without a deadline Z3 runs in this process: the same answer */
        lg_result res;
        o.run.deadline = 0;
        ck_assert_int_eq(lg_solver_find("z3")->solve(p, &o, &res), LG_OK);
        ck_assert_msg(res.answer == oa, "instance %d: z3 in-process %s, oracle %s", it, lg_test_answer_name(res.answer),
                      lg_test_answer_name(oa));
        lg_result_free(&res);
    }
    return (int)oa;
}

/* ------------------------------------------------------------------ tests */

/* lg_pwl_row is the layer's row exactly: with random node values v, the
 * merged entries Σ w·v(pos) equal every term's products summed in
 * rationals, and no (position, copy) appears twice. */
START_TEST(test_graph_encode_row_exact)
{
    lg_rng r;
    lg_rng_init(&r, 61u, 1);
    int rows = 0, with_copy = 0;
    mpq_t a, b, t;
    mpq_init(a);
    mpq_init(b);
    mpq_init(t);
    for (int it = 0; it < 60; it++) {
        lg_test_inst in;
        if (it % 2) {
            ge_same_source(&in, &r);
        } else {
            lg_test_dag_opts o = {.max_nodes = 5, .max_width = 5, .conv = it % 3 == 0, .act = LG_ACT_RELU};
            ck_assert_int_eq(lg_test_inst_random_dag(&in, &r, &o), LG_OK);
        }
        const lg_net *net = &in.net;
        size_t len = lg_net_nodes_len(net);
        double *v = malloc(len * sizeof *v), w[64];
        int idx[64];
        ck_assert_ptr_nonnull(v);
        for (size_t i = 0; i < len; i++) v[i] = lg_rng_normal(&r);
        lg_pwl_row R;
        ck_assert_int_eq(lg_pwl_row_init(&R, net), LG_OK);
        for (int k = 0; k < net->n_layers; k++)
            for (int i = 0; i < net->layers[k].n_out; i++) {
                mpq_set_ui(a, 0, 1);
                for (int tt = 0; tt < lg_layer_n_lin(&net->layers[k]); tt++) {
                    const lg_linear *A = lg_layer_lin(&net->layers[k], tt);
                    int nz = lg_linear_row_nz(A, i, idx, w);
                    for (int q = 0; q < nz; q++) {
                        mpq_set_d(t, w[q]);
                        mpq_set_d(b, v[lg_net_node_offset(net, A->src) + (size_t)idx[q]]);
                        mpq_mul(t, t, b);
                        mpq_add(a, a, t);
                    }
                }
                lg_pwl_row_get(&R, k, i, NULL);
                mpq_set_ui(b, 0, 1);
                for (int q = 0; q < R.n; q++) {
                    with_copy += R.copy[q] > 0;
                    for (int q2 = 0; q2 < q; q2++)
                        ck_assert_msg(R.pos[q2] != R.pos[q] || R.copy[q2] != R.copy[q], "layer %d row %d: (%d, %d) twice", k,
                                      i, R.pos[q], R.copy[q]);
                    mpq_set_d(t, R.w[q]);
                    mpq_t vv;
                    mpq_init(vv);
                    mpq_set_d(vv, v[R.pos[q]]);
                    mpq_mul(t, t, vv);
                    mpq_clear(vv);
                    mpq_add(b, b, t);
                }
                ck_assert_msg(mpq_equal(a, b), "DAG %d, layer %d, row %d: the merged row is not the sum of the terms", it,
                              k, i);
                rows++;
            }
        lg_pwl_row_free(&R);
        free(v);
        lg_test_inst_free(&in);
    }
    mpq_clear(a);
    mpq_clear(b);
    mpq_clear(t);
    ck_assert_int_gt(rows, 300);
    ck_assert_int_gt(with_copy, 20);
}
END_TEST

/* Z3 (exact rationals and the certified LP theory) and GLPK agree with the
 * exact oracle on random DAGs: no disagreement, z3 never unknown. */
START_TEST(test_graph_encode_backends_agree)
{
    int target = lg_test_quick() ? 30 : 110, decided = 0, tries = 0, n_sat = 0, n_unsat = 0, copies = 0;
    int unk[2] = {0, 0}, kinds[3] = {0, 0, 0}, sums = 0;
    lg_rng r;
    lg_rng_init(&r, 20261127u, 7);
    while (decided < target && tries < 4 * target) {
        lg_test_dag_opts o = {.max_nodes = 4, .max_width = 4, .conv = tries % 3 == 0, .act = LG_ACT_RELU};
        tries++;
        lg_test_inst in;
        ck_assert_int_eq(lg_test_inst_random_dag(&in, &r, &o), LG_OK);
        int oa = ge_decide_all(&in, tries, unk);
        if (oa >= 0) {
            decided++;
            n_sat += oa == LG_ANSWER_SAT;
            n_unsat += oa == LG_ANSWER_UNSAT;
            copies += ge_copies(&in.net) > 0;
            for (int k = 0; k < in.net.n_layers; k++) {
                sums += in.net.layers[k].n_terms > 0;
                for (int t = 0; t < lg_layer_n_lin(&in.net.layers[k]); t++)
                    kinds[lg_layer_lin(&in.net.layers[k], t)->kind]++;
            }
        }
        lg_test_inst_free(&in);
    }
    fprintf(stderr,
            "graph_encode backends: %d DAGs decided (%d tried), %d sat, %d unsat, %d with copy columns, "
            "%d sum layers, terms dense/conv/index %d/%d/%d, unknown glpk %d, z3-lp %d\n",
            decided, tries, n_sat, n_unsat, copies, sums, kinds[0], kinds[1], kinds[2], unk[0], unk[1]);
    ck_assert_int_ge(decided, target);
    ck_assert_int_gt(n_sat, 0);
    ck_assert_int_gt(n_unsat, 0);
    ck_assert_int_gt(copies, 0);
    ck_assert(kinds[0] > 0 && kinds[1] > 0 && kinds[2] > 0);
    ck_assert_msg(unk[0] * 20 <= decided && unk[1] * 20 <= decided, "glpk unknown %d, z3-lp unknown %d of %d", unk[0],
                  unk[1], decided);
}
END_TEST

/* A residual whose two terms read the same node: the LP/MILP encoders put
 * the second weight on a copy column (pwl.h) and still agree with the oracle. */
START_TEST(test_graph_encode_same_source)
{
    lg_rng r;
    lg_rng_init(&r, 31u, 2);
    int decided = 0, unk[2] = {0, 0}, seen[3] = {0, 0, 0};
    for (int it = 0; it < 24; it++) {
        lg_test_inst in;
        ge_same_source(&in, &r);
        ck_assert_int_gt(ge_copies(&in.net), 0);
        int oa = ge_decide_all(&in, it, unk);
        if (oa >= 0) decided++, seen[oa]++;
        lg_test_inst_free(&in);
    }
    fprintf(stderr, "graph_encode same source: %d decided (%d sat, %d unsat), unknown glpk %d, z3-lp %d\n", decided,
            seen[LG_ANSWER_SAT], seen[LG_ANSWER_UNSAT], unk[0], unk[1]);
    ck_assert_int_ge(decided, 20);
    ck_assert(seen[LG_ANSWER_SAT] > 0 && seen[LG_ANSWER_UNSAT] > 0);
    ck_assert_int_le(unk[0] + unk[1], 2);
}
END_TEST

/* The SMT-LIB and CPLEX LP texts of DAGs, read by the z3 and glpsol
 * binaries, give the oracle's answer. */
START_TEST(test_graph_encode_exports_cli)
{
    int target = lg_test_quick() ? 6 : 16, done = 0, tries = 0, seen[3] = {0, 0, 0}, copies = 0;
    lg_rng r;
    lg_rng_init(&r, 777u, 4);
    while (done < target && tries < 6 * target) {
        lg_test_inst in;
        tries++;
        if (tries % 4 == 0) {
            ge_same_source(&in, &r);
        } else {
            lg_test_dag_opts o = {.max_nodes = 4, .max_width = 4, .conv = tries % 3 == 0, .act = LG_ACT_RELU};
            ck_assert_int_eq(lg_test_inst_random_dag(&in, &r, &o), LG_OK);
        }
        const lg_problem *p = &in.prob;
        lg_answer oa;
        lg_status st = lg_oracle_solve(p, &oa, NULL, NULL);
        if (st == LG_ERR_ARG) {
            lg_test_inst_free(&in);
            continue;
        }
        ck_assert_int_eq(st, LG_OK);
        const char *smt = lg_test_tmpfile(".smt2"), *lp = lg_test_tmpfile(".lp");
        FILE *f = fopen(smt, "w");
        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(lg_solver_find("smt2")->write(p, f), LG_OK);
        ck_assert_int_eq(fclose(f), 0);
        f = fopen(lp, "w");
        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(lg_solver_find("lp")->write(p, f), LG_OK);
        ck_assert_int_eq(fclose(f), 0);
        char cmd[700];
        snprintf(cmd, sizeof cmd, "z3 -T:60 %s 2>&1", smt);
        char *out = lg_test_run_output(cmd);
        ck_assert_msg(lg_test_smt_verdict(out) == oa, "DAG %d: z3 binary says '%.60s', oracle %s", tries, out,
                      lg_test_answer_name(oa));
        free(out);
        snprintf(cmd, sizeof cmd, "glpsol --tmlim 60 --lp %s 2>&1", lp);
        out = lg_test_run_output(cmd);
        lg_answer ga = lg_test_glpsol_verdict(out);
        ck_assert_msg(ga == oa, "DAG %d: glpsol %s, oracle %s:\n%.400s", tries, lg_test_answer_name(ga),
                      lg_test_answer_name(oa), out);
        free(out);
        remove(smt);
        remove(lp);
        seen[oa]++;
        copies += ge_copies(&in.net) > 0;
        done++;
        lg_test_inst_free(&in);
    }
    fprintf(stderr, "graph_encode exports: %d DAGs (%d sat, %d unsat, %d with copies) agree with z3 and glpsol\n", done,
            seen[LG_ANSWER_SAT], seen[LG_ANSWER_UNSAT], copies);
    ck_assert_int_ge(done, target);
    ck_assert(seen[LG_ANSWER_SAT] > 0 && seen[LG_ANSWER_UNSAT] > 0 && copies > 0);
}
END_TEST

/* The one back-end decision takes a DAG: its answer is the oracle's and a
 * SAT witness passes the re-check. */
START_TEST(test_graph_encode_backend_decide)
{
    lg_rng r;
    lg_rng_init(&r, 4711u, 9);
    int done = 0;
    for (int it = 0; it < 40 && done < 12; it++) {
        lg_test_dag_opts o = {.max_nodes = 3, .max_width = 4, .conv = it % 2, .act = LG_ACT_RELU};
        lg_test_inst in;
        ck_assert_int_eq(lg_test_inst_random_dag(&in, &r, &o), LG_OK);
        lg_answer oa;
        if (lg_oracle_solve(&in.prob, &oa, NULL, NULL) != LG_OK) {
            lg_test_inst_free(&in);
            continue;
        }
        lg_runctx run = lg_runctx_start(60, 1, 0, 0);
        lg_backend_call c = {&in.net, &in.prob, in.lo, in.hi, in.n_terms, in.terms, &run, 0};
        lg_backend_out out;
        double x[32];
        lg_solver_pick pick = {LG_SOLVER_ONE, it % 2 ? lg_solver_glpk : lg_solver_z3};
        char m[32];
        ck_assert_int_eq(lg_backend_decide(&pick, &c, &out, x), LG_OK);
        ck_assert_msg(out.answer == oa, "DAG %d: %s says %s (%s), oracle %s", it, lg_outcome_method(&out.how, m, sizeof m),
                      lg_test_answer_name(out.answer), out.how.reason, lg_test_answer_name(oa));
        if (oa == LG_ANSWER_SAT) ck_assert(lg_test_any_term_holds(&in.prob, x, 1e-9));
        done++;
        lg_test_inst_free(&in);
    }
    ck_assert_int_ge(done, 12);
}
END_TEST

/* The exact gate on DAGs: at a point x, the property "y_j ≤ Y" (or "y_j ≥
 * Y") with Y the double nearest the exact y_j holds exactly; moved by one
 * ulp to the wrong side it fails. Only exact arithmetic tells the two apart
 * (the double forward pass usually cannot). Normalised nets take the
 * rational path, the others the dyadic one. */
START_TEST(test_graph_encode_exact_gate)
{
    lg_rng r;
    lg_rng_init(&r, 99u, 5);
    int n = 0, undecidable_in_double = 0, norm = 0, perturbed_rejected = 0;
    for (int it = 0; it < 60; it++) {
        lg_test_dag_opts o = {.max_nodes = 5, .max_width = 4, .conv = it % 3 == 0, .act = LG_ACT_RELU};
        lg_test_inst in;
        ck_assert_int_eq(lg_test_inst_random_dag(&in, &r, &o), LG_OK);
        const lg_net *net = &in.net;
        int ni = net->n_in, no = lg_net_n_out(net);
        norm += net->in_sub != NULL || net->in_div != NULL;
        double x[32], y[8], coef[8];
        mpq_t xq[32], yq[8], Yq;
        for (int i = 0; i < ni; i++) {
            x[i] = in.lo[i] + (in.hi[i] - in.lo[i]) * lg_rng_uniform(&r);
            mpq_init(xq[i]);
            mpq_set_d(xq[i], x[i]);
        }
        for (int j = 0; j < no; j++) mpq_init(yq[j]);
        mpq_init(Yq);
        lg_oracle_forward(net, xq, yq);
        double scr[256];
        lg_net_forward(net, x, y, scr);
        for (int j = 0; j < no; j++) {
            double Y = mpq_get_d(yq[j]);
            mpq_set_d(Yq, Y);
            int below = mpq_cmp(yq[j], Yq) <= 0; /* exact y_j ≤ Y */
            memset(coef, 0, sizeof coef);
            coef[j] = below ? 1.0 : -1.0;
            /* holds: y_j − Y ≤ 0 (below) or −y_j + Y ≤ 0 */
            lg_lincon c = {coef, below ? -Y : Y};
            lg_term T = {1, &c};
            ck_assert_msg(lg_exact_first_holding(net, x, 1, &T, NULL) == 0, "DAG %d, y_%d: the exact tie is refused", it, j);
            /* one ulp to the wrong side: y_j ≤ pred(Y) or y_j ≥ succ(Y) */
            double Y2 = nextafter(Y, below ? -INFINITY : INFINITY);
            c.d = below ? -Y2 : Y2;
            ck_assert_msg(lg_exact_first_holding(net, x, 1, &T, NULL) == -1, "DAG %d, y_%d: one ulp off is accepted", it, j);
            undecidable_in_double += (coef[j] * y[j] + c.d <= 0) != 0; /* the double pass would accept it */
            /* the tie's witness perturbed: x' = x with every input moved by ±2^-30 (relative);
             * the gate accepts x' exactly when the oracle's exact y'_j is on the term's side */
            c.d = below ? -Y : Y;
            double xp[32];
            mpq_t xpq[32], ypq[8];
            for (int i = 0; i < ni; i++) {
                xp[i] = x[i] + (lg_rng_below(&r, 2) ? 1 : -1) * 0x1p-30 * (1.0 + fabs(x[i]));
                mpq_init(xpq[i]);
                mpq_set_d(xpq[i], xp[i]);
            }
            for (int q = 0; q < no; q++) mpq_init(ypq[q]);
            lg_oracle_forward(net, xpq, ypq);
            int want = below ? mpq_cmp(ypq[j], Yq) <= 0 : mpq_cmp(ypq[j], Yq) >= 0;
            int got = lg_exact_first_holding(net, xp, 1, &T, NULL);
            ck_assert_msg(got == (want ? 0 : -1), "DAG %d, y_%d: perturbed witness: gate %d, exact side %d", it, j, got, want);
            perturbed_rejected += !want;
            for (int i = 0; i < ni; i++) mpq_clear(xpq[i]);
            for (int q = 0; q < no; q++) mpq_clear(ypq[q]);
            n++;
        }
        for (int i = 0; i < ni; i++) mpq_clear(xq[i]);
        for (int j = 0; j < no; j++) mpq_clear(yq[j]);
        mpq_clear(Yq);
        lg_test_inst_free(&in);
    }
    fprintf(stderr,
            "graph_encode exact gate: %d ties on 60 DAGs (%d normalised), %d the double pass gets wrong, "
            "%d perturbed witnesses rejected\n",
            n, norm, undecidable_in_double, perturbed_rejected);
    ck_assert_int_gt(norm, 0);
    ck_assert_int_gt(perturbed_rejected, 20);
    ck_assert_int_gt(n, 100);
}
END_TEST

/* The MPFR enclosure through smooth DAGs: y_j ≤ ŷ_j + δ is certified, y_j ≤
 * ŷ_j − δ is not (ŷ the double forward pass, δ far above its rounding and
 * far below the enclosure's width). */
START_TEST(test_graph_encode_enclose_smooth)
{
    lg_rng r;
    lg_rng_init(&r, 5150u, 3);
    static const lg_act acts[] = {LG_ACT_LGELU, LG_ACT_GELU, LG_ACT_SWISH};
    int n = 0;
    for (int it = 0; it < 30; it++) {
        lg_test_dag_opts o = {.max_nodes = 5, .max_width = 4, .conv = it % 3 == 0, .act = acts[it % 3]};
        lg_net net;
        ck_assert_int_eq(lg_test_dag_random(&net, &r, &o), LG_OK);
        double x[32], y[8], coef[8], scr[256];
        for (int i = 0; i < net.n_in; i++) x[i] = 2.0 * lg_rng_uniform(&r) - 1.0;
        lg_net_forward(&net, x, y, scr);
        for (int j = 0; j < lg_net_n_out(&net); j++) {
            double dl = 1e-9 * (1.0 + fabs(y[j]));
            memset(coef, 0, sizeof coef);
            coef[j] = 1.0;
            lg_lincon c = {coef, -(y[j] + dl)};
            lg_term T = {1, &c};
            ck_assert_msg(lg_exact_first_holding(&net, x, 1, &T, NULL) == 0, "DAG %d (%s), y_%d ≤ ŷ + δ not certified", it,
                          lg_act_name(o.act), j);
            ck_assert_int_eq(lg_enclose_first_holding(&net, x, 1, &T, NULL), 0);
            c.d = -(y[j] - dl);
            ck_assert_msg(lg_exact_first_holding(&net, x, 1, &T, NULL) == -1, "DAG %d (%s), y_%d ≤ ŷ − δ certified", it,
                          lg_act_name(o.act), j);
            n++;
        }
        lg_net_free(&net);
    }
    ck_assert_int_gt(n, 50);
}
END_TEST

/* The naive deviation recursion (deviation.h, no intervals): every
 * substituted neuron at its activation's peak gap, e_k = Σ_t |A_t|·e_src +
 * peak. An upper bound of the certified Δ up to rounding margins. */
static double ge_naive_delta(const lg_net *ref)
{
    size_t len = lg_net_nodes_len(ref);
    double *e = calloc(len, sizeof *e);
    ck_assert_ptr_nonnull(e);
    for (int k = 0; k < ref->n_layers; k++) {
        const lg_layer *L = &ref->layers[k];
        double *ek = e + lg_net_node_offset(ref, k);
        for (int t = 0; t < lg_layer_n_lin(L); t++) {
            const lg_linear *A = lg_layer_lin(L, t);
            lg_linear_mul(A, 1, e + lg_net_node_offset(ref, A->src), ek, 1, t > 0);
        }
        double peak = L->act == LG_ACT_LGELU ? LG_DEV_PEAK_V / L->lambda
                      : L->act == LG_ACT_GELU ? LG_DEV_PEAK_V
                      : L->act == LG_ACT_SWISH ? LG_DEV_SWISH_PEAK_V / L->lambda : 0.0;
        for (int o = 0; o < L->n_out; o++) ek[o] += peak;
    }
    double mx = 0;
    const double *ey = e + lg_net_node_offset(ref, ref->n_layers - 1);
    for (int j = 0; j < lg_net_n_out(ref); j++) mx = fmax(mx, ey[j]);
    free(e);
    return mx;
}

/* The certified deviation on residual λ-GELU DAGs: finite, ≥ every sampled
 * |f_relu − f_smooth| (per output), ≤ the naive peak recursion; with the
 * ReLU DAG's interval pre-activation bounds it is no larger and still holds. */
START_TEST(test_graph_encode_deviation_dag)
{
    lg_rng r;
    lg_rng_init(&r, 8086u, 11);
    static const double lams[] = {1.3, 4.0, 40.0};
    double worst_ratio = 0.0; /* max sampled / Δ */
    int residual = 0, tighter = 0;
    for (int it = 0; it < 36; it++) {
        lg_test_dag_opts o = {.max_nodes = 5, .max_width = 4, .conv = it % 4 == 0, .act = LG_ACT_RELU};
        lg_test_inst in;
        ck_assert_int_eq(lg_test_inst_random_dag(&in, &r, &o), LG_OK);
        const lg_net *rn = &in.net;
        lg_net ref;
        ck_assert_int_eq(lg_net_copy(&ref, rn), LG_OK);
        for (int k = 0; k < ref.n_layers; k++) {
            lg_layer *L = &ref.layers[k];
            residual += L->n_terms > 0 && L->act == LG_ACT_RELU;
            if (L->act != LG_ACT_RELU) continue;
            L->act = it % 5 == 4 ? LG_ACT_GELU : LG_ACT_LGELU;
            L->lambda = L->act == LG_ACT_GELU ? 1.0 : lams[(it + k) % 3];
        }
        ck_assert_int_eq(lg_net_validate(&ref), LG_OK);
        lg_net back;
        ck_assert_int_eq(lg_anneal_to_relu(&back, &ref), LG_OK); /* substitution copies terms and maps bit for bit */
        ck_assert_int_eq(lg_dev_check_pair(&back, &ref), LG_OK);
        ck_assert_int_eq(lg_dev_check_pair(rn, &ref), LG_OK);
        lg_net_free(&back);
        int ni = rn->n_in, no = lg_net_n_out(rn);
        lg_dev dev;
        ck_assert_int_eq(lg_dev_init(&dev, rn, &ref), LG_OK);
        double D, Dpre, e_out[8], e_pre[8];
        ck_assert_int_eq(lg_dev_bound_boxes(&dev, in.lo, in.hi, 1, &D, e_out, NULL), LG_OK);
        ck_assert_int_eq(lg_dev_bound_box_pre(&dev, in.lo, in.hi, in.pre_lo, in.pre_hi, &Dpre, e_pre, NULL), LG_OK);
        double naive = ge_naive_delta(&ref);
        ck_assert_msg(isfinite(D) && D > 0, "DAG %d: Δ = %g", it, D);
        ck_assert_msg(D <= naive * (1 + 1e-6) + 1e-12, "DAG %d: Δ %.17g above the naive recursion %.17g", it, D, naive);
        ck_assert_msg(Dpre <= D * (1 + 1e-9), "DAG %d: with bounds %.17g > without %.17g", it, Dpre, D);
        tighter += Dpre < D;
        double obs_max = 0.0, x[32], yr[8], yg[8], scr[256];
        for (int s = 0; s < 3000; s++) {
            for (int i = 0; i < ni; i++) {
                double v = s < 64 ? (double)((s >> (i % 6)) & 1) : lg_rng_uniform(&r);
                x[i] = in.lo[i] + (in.hi[i] - in.lo[i]) * v;
            }
            lg_net_forward(rn, x, yr, scr);
            lg_net_forward(&ref, x, yg, scr);
            for (int j = 0; j < no; j++) {
                double d = fabs(yr[j] - yg[j]);
                ck_assert_msg(d <= e_out[j] && d <= e_pre[j], "DAG %d, output %d: observed %.17g > bound %.17g (pre %.17g)",
                              it, j, d, e_out[j], e_pre[j]);
                obs_max = fmax(obs_max, d);
            }
        }
        ck_assert_msg(obs_max <= Dpre, "DAG %d: observed %.17g > Δ %.17g", it, obs_max, Dpre);
        worst_ratio = fmax(worst_ratio, obs_max / D);
        lg_dev_free(&dev);
        lg_net_free(&ref);
        lg_test_inst_free(&in);
    }
    fprintf(stderr, "graph_encode deviation: 36 DAGs (%d residual relu layers), max sampled/Δ %.3f, %d tighter with bounds\n",
            residual, worst_ratio, tighter);
    ck_assert_int_gt(residual, 0);
    ck_assert_msg(worst_ratio > 0.05, "Δ is never within 20x of a sampled deviation (%.3g)", worst_ratio);
}
END_TEST

/* Chains whose certified deviation was recorded before the deviation bound
 * took graphs (the hex values in test_graph_encode_deviation_chain_golden). */
static void ge_golden_chain(lg_net *ref, lg_net *rn, int which)
{
    static const int d0[] = {4, 8, 8, 3}, d2[] = {5, 16, 16, 16, 4}, d3[] = {3, 6, 6, 2};
    lg_rng r;
    lg_rng_init(&r, 900u + (unsigned)which, 3);
    if (which == 0) {
        ck_assert_int_eq(lg_net_init(ref, 3, d0, LG_ACT_LGELU), LG_OK);
    } else if (which == 1) {
        int dims[] = {36, 2 * 4 * 4, 8, 3};
        lg_conv c = {1, 6, 6, 2, 4, 4, 3, 3, 1, 1, 0, 0};
        const lg_conv *convs[] = {&c, NULL, NULL};
        ck_assert_int_eq(lg_net_init_conv(ref, 3, dims, convs, LG_ACT_GELU), LG_OK);
    } else if (which == 2) {
        ck_assert_int_eq(lg_net_init(ref, 4, d2, LG_ACT_SWISH), LG_OK);
    } else {
        ck_assert_int_eq(lg_net_init(ref, 3, d3, LG_ACT_PRELU), LG_OK);
    }
    lg_test_randomize(ref, &r, 0.6);
    if (which == 0) {
        ref->in_sub = malloc(4 * sizeof *ref->in_sub);
        ref->in_div = malloc(4 * sizeof *ref->in_div);
        for (int i = 0; i < 4; i++) ref->in_sub[i] = 0.1 * i, ref->in_div[i] = 0.3 + 0.2 * i;
    }
    ck_assert_int_eq(lg_anneal_to_relu(rn, ref), LG_OK);
}

/* Δ of the chain `which` on 5 boxes (box t: centre from the seed, radius 0.05·(t+1)), then with
 * the interval pre-activation bounds of the first box: 6 values. */
static void ge_golden_values(int which, double *out)
{
    lg_net ref, rn;
    ge_golden_chain(&ref, &rn, which);
    int n = ref.n_in;
    double lo[5 * 40], hi[5 * 40];
    lg_rng r;
    lg_rng_init(&r, 77u + (unsigned)which, 1);
    for (int t = 0; t < 5; t++)
        for (int i = 0; i < n; i++) {
            double c = lg_rng_uniform(&r) * 2 - 1;
            lo[t * n + i] = c - 0.05 * (t + 1);
            hi[t * n + i] = c + 0.05 * (t + 1);
        }
    lg_dev dev;
    ck_assert_int_eq(lg_dev_init(&dev, &rn, &ref), LG_OK);
    ck_assert_int_eq(lg_dev_bound_boxes(&dev, lo, hi, 5, out, NULL, NULL), LG_OK);
    lg_bounds b;
    ck_assert_int_eq(lg_bounds_init(&b, &rn), LG_OK);
    ck_assert_int_eq(lg_bounds_interval(&b, &rn, lo, hi), LG_OK);
    ck_assert_int_eq(lg_dev_bound_box_pre(&dev, lo, hi, b.lo, b.hi, &out[5], NULL, NULL), LG_OK);
    lg_bounds_free(&b);
    lg_dev_free(&dev);
    lg_net_free(&rn);
    lg_net_free(&ref);
}

/* Ulps between two finite doubles of one sign (0 when equal). */
static long ge_ulps(double a, double b)
{
    long n = 0;
    double lo = a < b ? a : b, hi = a < b ? b : a;
    while (lo < hi && n < 1000) lo = nextafter(lo, hi), n++;
    return n;
}

/* On chains the deviation bound is what it was before it took graphs
 * (values recorded with the chain-only code's rules, γ_n of anneal/deviation.h
 * "Floating point"). The bound's products go
 * through cblas_dgemm, and OpenBLAS picks its kernel by CPU: the Haswell
 * and SkylakeX kernels give these values bit for bit, the Sandybridge
 * kernel (chosen on CPUs it does not recognise) sums in another order and
 * moves a value by an ulp — each is sound, since the rounding margin holds
 * for any order. So a value may differ by at most 4 ulps. */
START_TEST(test_graph_encode_deviation_chain_golden)
{
    static const double want[4][6] = {
    {0x1.0bcbb4669b326p-1, 0x1.32a54edf9424bp-1, 0x1.185734eec983p+0, 0x1.55102fff5ca96p+0, 0x1.d2fb620bb6d9ep-1, 0x1.0bcbb4669b326p-1},
    {0x1.64a5db920f3b1p+2, 0x1.bb290d718345dp+2, 0x1.140c14da6c9b9p+3, 0x1.20813e7cb8b24p+3, 0x1.18e8a9447a5bdp+3, 0x1.64a5db920f3b1p+2},
    {0x1.4c74f47d6fffap+5, 0x1.2aa91a946dbe2p+5, 0x1.882449691e59p+5, 0x1.8f011561503b7p+5, 0x1.9b885276a6244p+5, 0x1.4c74f47d6fffap+5},
    {0x1.3de7384733f8bp+1, 0x1.27d26edba4851p+0, 0x1.0515e724c43f3p+1, 0x1.38152702071fep+1, 0x1.11f2e9fe72abep+2, 0x1.3de7384733f8bp+1},
    };
    for (int w = 0; w < 4; w++) {
        double v[6];
        ge_golden_values(w, v);
        for (int i = 0; i < 6; i++)
            ck_assert_msg(ge_ulps(v[i], want[w][i]) <= 4, "chain %d, value %d: %a, recorded %a", w, i, v[i],
                          want[w][i]);
    }
}
END_TEST

Suite *suite_graph_encode(void)
{
    Suite *s = suite_create("graph_encode");
    TCase *tc = tcase_create("core");
    lg_tcase_timeout(tc, 300);
    tcase_add_test(tc, test_graph_encode_row_exact);
    tcase_add_test(tc, test_graph_encode_backends_agree);
    tcase_add_test(tc, test_graph_encode_same_source);
    tcase_add_test(tc, test_graph_encode_exports_cli);
    tcase_add_test(tc, test_graph_encode_backend_decide);
    tcase_add_test(tc, test_graph_encode_exact_gate);
    tcase_add_test(tc, test_graph_encode_enclose_smooth);
    tcase_add_test(tc, test_graph_encode_deviation_dag);
    tcase_add_test(tc, test_graph_encode_deviation_chain_golden);
    suite_add_tcase(s, tc);
    return s;
}
