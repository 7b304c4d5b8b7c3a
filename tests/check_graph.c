/* check_graph.c — the network as a graph (core/net.h): building a DAG with
 * a residual sum, a Concat of two index maps and a skip from the input;
 * its forward pass against a hand evaluation; copy, densify and validate. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/linop.h"
#include "core/net.h"
#include "core/rng.h"
#include "gen_graph.h"
#include "oracle.h"
#include "testutil.h"

/* The fixed DAG of gen_graph.h (lg_test_dag_fixed). */
static void graph_make(lg_net *net, unsigned seed) { ck_assert_int_eq(lg_test_dag_fixed(net, seed), LG_OK); }

/* The same function written out by hand. */
static void graph_eval_by_hand(const lg_net *net, const double *x, double *y)
{
    const lg_layer *L = net->layers;
    double h0[3], h1[3], h2[6];
    for (int o = 0; o < 3; o++) {
        double s = L[0].b[o];
        for (int i = 0; i < 4; i++) s += L[0].lin.W[o * 4 + i] * x[i];
        h0[o] = s > 0 ? s : 0;
    }
    for (int o = 0; o < 3; o++) {
        double s = L[1].b[o] + x[o];
        for (int i = 0; i < 3; i++) s += L[1].lin.W[o * 3 + i] * h0[i];
        h1[o] = s > 0 ? s : 0;
    }
    for (int o = 0; o < 6; o++) h2[o] = (o < 3 ? h0[o] : h1[o - 3]) + L[2].b[o];
    for (int o = 0; o < 2; o++) {
        double s = L[3].b[o];
        for (int i = 0; i < 6; i++) s += L[3].lin.W[o * 6 + i] * h2[i];
        for (int i = 0; i < 4; i++) s += L[3].terms[0].W[o * 4 + i] * x[i];
        y[o] = s;
    }
}

START_TEST(test_graph_forward)
{
    lg_net net, cp, dn;
    graph_make(&net, 7u);
    ck_assert_int_eq(lg_net_validate(&net), LG_OK);
    ck_assert(!lg_net_is_chain(&net));
    ck_assert_int_ne(lg_net_require_chain(&net, "a stage"), LG_OK);
    ck_assert_int_eq((int)lg_net_nodes_len(&net), 4 + 3 + 3 + 6 + 2);
    ck_assert_int_eq((int)lg_net_node_offset(&net, 2), 4 + 3 + 3);
    ck_assert_int_eq(lg_net_copy(&cp, &net), LG_OK);
    ck_assert_int_eq(lg_net_densify(&dn, &net, 0), LG_OK);
    ck_assert_int_eq(lg_net_validate(&dn), LG_OK);
    lg_rng r;
    lg_rng_init(&r, 11u, 0);
    double scratch[64], X[5 * 4], Yb[5 * 2];
    for (int t = 0; t < 5; t++) {
        double x[4], y[2], yc[2], yd[2], yh[2];
        for (int i = 0; i < 4; i++) X[t * 4 + i] = x[i] = lg_rng_uniform(&r) * 4.0 - 2.0;
        lg_net_forward(&net, x, y, scratch);
        lg_net_forward(&cp, x, yc, scratch);
        lg_net_forward(&dn, x, yd, scratch);
        graph_eval_by_hand(&net, x, yh);
        for (int o = 0; o < 2; o++) {
            ck_assert_msg(fabs(y[o] - yh[o]) <= 1e-12 * (1 + fabs(yh[o])), "y[%d] = %.17g, by hand %.17g", o, y[o], yh[o]);
            ck_assert(y[o] == yc[o]);
            ck_assert_msg(fabs(yd[o] - yh[o]) <= 1e-12 * (1 + fabs(yh[o])), "dense y[%d] = %.17g", o, yd[o]);
        }
    }
    ck_assert_int_eq(lg_net_forward_batch(&net, X, Yb, 5), LG_OK);
    for (int t = 0; t < 5; t++) {
        double yh[2];
        graph_eval_by_hand(&net, X + t * 4, yh);
        for (int o = 0; o < 2; o++) ck_assert(fabs(Yb[t * 2 + o] - yh[o]) <= 1e-12 * (1 + fabs(yh[o])));
    }
    lg_net_free(&net);
    lg_net_free(&cp);
    lg_net_free(&dn);
}
END_TEST

/* The transpose of every term agrees with its forward product: <A x, a> = <x, Aᵀ a>. */
START_TEST(test_graph_linop_adjoint)
{
    lg_net net;
    graph_make(&net, 3u);
    lg_rng r;
    lg_rng_init(&r, 5u, 0);
    for (int k = 0; k < net.n_layers; k++)
        for (int t = 0; t < lg_layer_n_lin(&net.layers[k]); t++) {
            const lg_linear *A = lg_layer_lin(&net.layers[k], t);
            double x[8], a[8], Ax[8], Ata[8], l = 0, rr = 0;
            for (int i = 0; i < A->n_in; i++) x[i] = lg_rng_uniform(&r) - 0.5;
            for (int o = 0; o < A->n_out; o++) a[o] = lg_rng_uniform(&r) - 0.5;
            lg_linear_mul(A, 1, x, Ax, 0, 0);
            lg_linear_mul_t(A, 1, a, Ata, 0);
            for (int o = 0; o < A->n_out; o++) l += Ax[o] * a[o];
            for (int i = 0; i < A->n_in; i++) rr += x[i] * Ata[i];
            ck_assert_msg(fabs(l - rr) < 1e-12, "layer %d term %d: %g vs %g", k, t, l, rr);
            int idx[8];
            double w[8], row[8];
            for (int o = 0; o < A->n_out; o++) {
                int n = lg_linear_row_nz(A, o, idx, w);
                const double *full = lg_linear_row(A, o, row);
                double s1 = 0, s2 = 0;
                for (int q = 0; q < n; q++) s1 += w[q] * x[idx[q]];
                for (int i = 0; i < A->n_in; i++) s2 += full[i] * x[i];
                ck_assert(fabs(s1 - Ax[o]) < 1e-12 && fabs(s2 - Ax[o]) < 1e-12);
            }
        }
    lg_net_free(&net);
}
END_TEST

START_TEST(test_graph_validate_refuses)
{
    lg_net net;
    graph_make(&net, 1u);
    net.layers[2].lin.map[1] = 3; /* node 0 has 3 values: 0..2 */
    ck_assert_int_eq(lg_net_validate(&net), LG_ERR_FORMAT);
    ck_assert_ptr_nonnull(strstr(lg_errmsg(), "index map"));
    net.layers[2].lin.map[1] = -1;
    ck_assert_int_eq(lg_net_validate(&net), LG_OK);
    net.layers[1].terms[0].src = 1; /* a term may only read an earlier node */
    ck_assert_int_eq(lg_net_validate(&net), LG_ERR_FORMAT);
    net.layers[1].terms[0].src = LG_NET_INPUT;
    net.layers[3].terms[0].W[2] = NAN;
    ck_assert_int_eq(lg_net_validate(&net), LG_ERR_FORMAT);
    ck_assert_ptr_nonnull(strstr(lg_errmsg(), "term 1"));
    lg_net_free(&net);
    /* a spec reading a later node is refused at build time */
    lg_linear t0[1] = {{.kind = LG_LAYER_DENSE, .n_in = 2, .src = 0}};
    lg_layer_spec sp[1] = {{2, LG_ACT_IDENTITY, 1, t0}};
    ck_assert_int_eq(lg_net_build(&net, 2, 1, sp), LG_ERR_ARG);
}
END_TEST

/* Random DAGs: the exact forward pass (GMP) and the double one agree, and
 * the exact enumeration oracle's verdicts agree with dense sampling: an
 * exact witness satisfies the property exactly, and UNSAT means no sampled
 * point of the box violates it (with a margin for rounding). */
START_TEST(test_graph_oracle_random_dags)
{
    lg_rng r;
    lg_rng_init(&r, 2026u, 1);
    int n_sat = 0, n_unsat = 0, kinds[3] = {0, 0, 0};
    for (int it = 0; it < 120; it++) {
        lg_test_dag_opts o = {.max_nodes = 4, .max_width = 4, .conv = it % 3 == 0, .act = LG_ACT_RELU};
        lg_test_inst in;
        ck_assert_int_eq(lg_test_inst_random_dag(&in, &r, &o), LG_OK);
        const lg_net *net = &in.net;
        for (int k = 0; k < net->n_layers; k++)
            for (int t = 0; t < lg_layer_n_lin(&net->layers[k]); t++) kinds[lg_layer_lin(&net->layers[k], t)->kind]++;
        int n = net->n_in, no = lg_net_n_out(net);
        mpq_t *xq = malloc((size_t)n * sizeof *xq), *yq = malloc((size_t)no * sizeof *yq);
        for (int i = 0; i < n; i++) mpq_init(xq[i]);
        for (int j = 0; j < no; j++) mpq_init(yq[j]);
        double x[32], y[8], scr[256];
        for (int i = 0; i < n; i++) {
            x[i] = in.lo[i] + (in.hi[i] - in.lo[i]) * lg_rng_uniform(&r);
            mpq_set_d(xq[i], x[i]);
        }
        lg_net_forward(net, x, y, scr);
        lg_oracle_forward(net, xq, yq);
        for (int j = 0; j < no; j++)
            ck_assert_msg(fabs(mpq_get_d(yq[j]) - y[j]) <= 1e-9 * (1 + fabs(y[j])), "it %d: y[%d] %.17g vs exact %.17g",
                          it, j, y[j], mpq_get_d(yq[j]));
        lg_answer ans;
        lg_status st = lg_oracle_decide(&in.prob, &ans, xq, NULL);
        if (st == LG_ERR_ARG) { /* too many unstable neurons for enumeration */
            for (int i = 0; i < n; i++) mpq_clear(xq[i]);
            for (int j = 0; j < no; j++) mpq_clear(yq[j]);
            free(xq);
            free(yq);
            lg_test_inst_free(&in);
            continue;
        }
        ck_assert_int_eq(st, LG_OK);
        if (ans == LG_ANSWER_SAT) {
            n_sat++;
            for (int i = 0; i < n; i++) x[i] = mpq_get_d(xq[i]);
            ck_assert_msg(lg_test_any_term_holds(&in.prob, x, 1e-9), "it %d: oracle witness does not violate", it);
        } else {
            n_unsat++;
            for (int s = 0; s < 300; s++) {
                for (int i = 0; i < n; i++) x[i] = in.lo[i] + (in.hi[i] - in.lo[i]) * lg_rng_uniform(&r);
                ck_assert_msg(!lg_test_any_term_holds(&in.prob, x, -1e-9), "it %d: UNSAT but a sample violates", it);
            }
        }
        for (int i = 0; i < n; i++) mpq_clear(xq[i]);
        for (int j = 0; j < no; j++) mpq_clear(yq[j]);
        free(xq);
        free(yq);
        lg_test_inst_free(&in);
    }
    ck_assert_msg(n_sat >= 10 && n_unsat >= 10, "both verdicts occur: %d sat, %d unsat", n_sat, n_unsat);
    ck_assert_msg(kinds[LG_LAYER_INDEX] >= 20 && kinds[LG_LAYER_CONV2D] >= 5, "index maps %d, convs %d",
                  kinds[LG_LAYER_INDEX], kinds[LG_LAYER_CONV2D]);
}
END_TEST

/* The generator never builds an invalid net: every draw over many seeds and
 * every option combination (conv and max-pool on, widths down to 2) gives a
 * net lg_net_validate accepts, with no layer of size 0. */
START_TEST(test_graph_generator_always_valid)
{
    static const lg_act acts[] = {LG_ACT_RELU, LG_ACT_LGELU, LG_ACT_IDENTITY};
    int n = lg_test_quick() ? 2000 : 20000, convs = 0;
    for (int i = 0; i < n; i++) {
        lg_rng r;
        lg_rng_init(&r, (uint64_t)i, 0);
        lg_test_dag_opts o = {.max_nodes = 1 + i % 6, .max_width = 2 + i % 6, .conv = i % 2 == 0, .act = acts[i % 3],
                              .maxpool = (i / 2) % 2};
        lg_net net;
        lg_status st = lg_test_dag_random(&net, &r, &o);
        ck_assert_msg(st == LG_OK, "seed %d (max_nodes %d, max_width %d, conv %d, maxpool %d): %s", i, o.max_nodes,
                      o.max_width, o.conv, o.maxpool, lg_errmsg());
        for (int k = 0; k < net.n_layers; k++) {
            ck_assert_msg(net.layers[k].n_out > 0, "seed %d: layer %d of size 0", i, k);
            for (int t = 0; t < lg_layer_n_lin(&net.layers[k]); t++)
                convs += lg_layer_lin(&net.layers[k], t)->kind == LG_LAYER_CONV2D;
        }
        lg_net_free(&net);
    }
    ck_assert_msg(convs > n / 20, "only %d conv terms in %d nets", convs, n);
}
END_TEST

Suite *suite_graph(void)
{
    Suite *s = suite_create("graph");
    TCase *tc = tcase_create("graph");
    lg_tcase_timeout(tc, 300);
    tcase_add_test(tc, test_graph_forward);
    tcase_add_test(tc, test_graph_linop_adjoint);
    tcase_add_test(tc, test_graph_validate_refuses);
    tcase_add_test(tc, test_graph_oracle_random_dags);
    tcase_add_test(tc, test_graph_generator_always_valid);
    suite_add_tcase(s, tc);
    return s;
}
