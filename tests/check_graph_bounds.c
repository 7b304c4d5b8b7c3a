/* check_graph_bounds.c — bounds, branch and bound and verdicts on networks
 * that are graphs (core/net.h, DESIGN.md §1 "The network as a graph"):
 * random small DAGs (gen_graph.h: residual sums, Concat, Slice, conv terms)
 * against exact rational forward passes and the exact enumeration oracle
 * (oracle.h), and a residual network written both as a graph and as an
 * equivalent chain. */
#include <check.h>
#include <gmp.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/linop.h"
#include "core/net.h"
#include "core/rng.h"
#include "gen_graph.h"
#include "oracle.h"
#include "testutil.h"
#include "test_solver.h"
#include "encode/backends.h"
#include "verify/alpha.h"
#include "verify/backsub.h"
#include "verify/bounds.h"
#include "verify/prop.h"
#include "verify/verify.h"

/* Exact pre-activations z and node values h (node layout, core/net.h) of
 * the real-valued net at the double point x: every double read as the
 * rational it denotes. Relu and identity only. z, h: [nodes_len] initialised. */
static void gb_exact(const lg_net *net, const double *x, mpq_t *z, mpq_t *h)
{
    mpq_t t, w;
    mpq_inits(t, w, NULL);
    for (int i = 0; i < net->n_in; i++) {
        mpq_set_d(h[i], x[i]);
        if (net->in_sub) {
            mpq_set_d(t, net->in_sub[i]);
            mpq_sub(h[i], h[i], t);
        }
        if (net->in_div) {
            mpq_set_d(t, net->in_div[i]);
            mpq_div(h[i], h[i], t);
        }
    }
    int *idx;
    double *wv;
    ck_assert_int_eq(lg_net_row_alloc(net, &idx, &wv), 0);
    for (int k = 0; k < net->n_layers; k++) {
        const lg_layer *L = &net->layers[k];
        size_t ko = lg_net_node_offset(net, k);
        if (L->lin.kind == LG_LAYER_MAX) { /* a max-pool node: the largest value of each window */
            size_t so = lg_net_node_offset(net, L->lin.src);
            for (int o = 0; o < L->n_out; o++) {
                int nw = lg_max_window(&L->lin.conv, o, idx);
                mpq_set(z[ko + o], h[so + (size_t)idx[0]]);
                for (int e = 1; e < nw; e++)
                    if (mpq_cmp(h[so + (size_t)idx[e]], z[ko + o]) > 0) mpq_set(z[ko + o], h[so + (size_t)idx[e]]);
                mpq_set(h[ko + o], z[ko + o]);
            }
            continue;
        }
        for (int o = 0; o < L->n_out; o++) {
            mpq_set_d(z[ko + o], L->b[o]);
            for (int q = 0; q < lg_layer_n_lin(L); q++) {
                const lg_linear *A = lg_layer_lin(L, q);
                size_t so = lg_net_node_offset(net, A->src);
                int nz = lg_linear_row_nz(A, o, idx, wv);
                for (int e = 0; e < nz; e++) {
                    mpq_set_d(w, wv[e]);
                    mpq_mul(t, w, h[so + (size_t)idx[e]]);
                    mpq_add(z[ko + o], z[ko + o], t);
                }
            }
            if (L->act == LG_ACT_RELU && mpq_sgn(z[ko + o]) < 0) mpq_set_ui(h[ko + o], 0, 1);
            else mpq_set(h[ko + o], z[ko + o]);
        }
    }
    free(idx);
    free(wv);
    mpq_clears(t, w, NULL);
}

/* 1 if lo ≤ v ≤ hi exactly (an infinite end is no constraint). */
static int gb_inside(const mpq_t v, double lo, double hi)
{
    mpq_t t;
    mpq_init(t);
    int ok = 1;
    if (isfinite(lo)) {
        mpq_set_d(t, lo);
        ok = ok && mpq_cmp(t, v) <= 0;
    }
    if (isfinite(hi)) {
        mpq_set_d(t, hi);
        ok = ok && mpq_cmp(v, t) <= 0;
    }
    mpq_clear(t);
    return ok && !isnan(lo) && !isnan(hi);
}

/* Σ widths of the finite pre-activation bounds. */
static double gb_width(const lg_bounds *b)
{
    double s = 0;
    for (int k = 0; k < b->n_layers; k++)
        for (int i = 0; i < b->width[k]; i++) s += b->hi[k][i] - b->lo[k][i];
    return s;
}

/* A random point of the box, a corner one time in three. */
static void gb_point(lg_rng *r, int n, const double *lo, const double *hi, double *x)
{
    int corner = lg_rng_uniform(r) < 1.0 / 3;
    for (int i = 0; i < n; i++) {
        double u = lg_rng_uniform(r);
        if (corner) u = u < 0.5 ? 0.0 : 1.0;
        x[i] = lo[i] + u * (hi[i] - lo[i]);
        if (x[i] > hi[i]) x[i] = hi[i];
    }
}

/* Every sampled point's exact pre-activations lie inside the interval,
 * CROWN (symbolic), LP-tightened and intermediate α-CROWN bounds, and the exact value of random
 * output objectives is above their CROWN and α-CROWN lower bounds, on
 * random DAGs with and without conv terms. CROWN is tighter than interval
 * arithmetic on some of them (the back-substitution through the graph does
 * work). */
START_TEST(test_gb_bounds_contain_exact)
{
    lg_rng r;
    lg_rng_init(&r, 4242u, 1);
    int n_nets = lg_test_quick() ? 40 : 120, tighter = 0, n_lp_nets = 0;
    for (int t = 0; t < n_nets; t++) {
        lg_test_dag_opts go = {.max_nodes = 2 + t % 4, .max_width = 3 + t % 4, .conv = t % 3 == 2, .act = LG_ACT_RELU};
        lg_test_inst in;
        ck_assert_int_eq(lg_test_inst_random_dag(&in, &r, &go), LG_OK);
        const lg_net *net = &in.net;
        lg_bounds bi, bs, bl;
        ck_assert_int_eq(lg_bounds_init(&bi, net), LG_OK);
        ck_assert_int_eq(lg_bounds_init(&bs, net), LG_OK);
        ck_assert_int_eq(lg_bounds_init(&bl, net), LG_OK);
        ck_assert_int_eq(lg_bounds_interval(&bi, net, in.lo, in.hi), LG_OK);
        ck_assert_int_eq(lg_bounds_symbolic(&bs, net, in.lo, in.hi), LG_OK);
        ck_assert_int_eq(lg_bounds_symbolic(&bl, net, in.lo, in.hi), LG_OK);
        long nlp = 0;
        ck_assert_int_eq(lg_bounds_lp(&bl, net, NULL, &nlp), LG_OK);
        /* intermediate α-CROWN (lg_alpha_tighten: the sub-network up to layer k), then CROWN after it */
        lg_bounds ba;
        ck_assert_int_eq(lg_bounds_init(&ba, net), LG_OK);
        ck_assert_int_eq(lg_bounds_symbolic(&ba, net, in.lo, in.hi), LG_OK);
        for (int k = 1; k < net->n_layers; k++) {
            int nt;
            ck_assert_int_eq(lg_alpha_tighten(&ba, net, k, 10, 0.2, NULL, &nt), LG_OK);
            if (k + 1 < net->n_layers) ck_assert_int_eq(lg_bounds_symbolic_unstable_from(&ba, net, k + 1), LG_OK);
        }
        n_lp_nets += nlp > 0;
        tighter += gb_width(&bs) < gb_width(&bi) * (1 - 1e-9);
        /* objectives: 3 random rows over the outputs */
        int no = lg_net_n_out(net), m = 3, size = lg_alpha_size(net);
        double C[3 * 8], d[3], lbc[3], lba[3];
        for (int q = 0; q < m * no; q++) C[q] = lg_rng_uniform(&r) * 2 - 1;
        for (int q = 0; q < m; q++) d[q] = lg_rng_uniform(&r) - 0.5;
        ck_assert_int_eq(lg_bounds_objective_lower(&bs, net, m, C, d, lbc), LG_OK);
        double *al = malloc((size_t)m * (size_t)size * sizeof *al);
        lg_alpha_default(&bs, net, m, al);
        ck_assert_int_eq(lg_alpha_optimize(&bs, net, m, C, d, 15, 0.2, NULL, al, lba, NULL), LG_OK);
        for (int q = 0; q < m; q++) ck_assert_msg(lba[q] >= lbc[q] || lbc[q] - lba[q] < 1e-9 * (1 + fabs(lbc[q])),
                                                  "net %d: alpha bound %g below CROWN %g", t, lba[q], lbc[q]);
        free(al);
        size_t nl = lg_net_nodes_len(net);
        mpq_t *z = malloc(nl * sizeof *z), *h = malloc(nl * sizeof *h), v, s;
        for (size_t q = 0; q < nl; q++) mpq_init(z[q]), mpq_init(h[q]);
        mpq_inits(v, s, NULL);
        double x[64];
        for (int p = 0; p < 60; p++) {
            gb_point(&r, net->n_in, in.lo, in.hi, x);
            gb_exact(net, x, z, h);
            for (int k = 0; k < net->n_layers; k++) {
                size_t ko = lg_net_node_offset(net, k);
                for (int i = 0; i < net->layers[k].n_out; i++) {
                    ck_assert_msg(gb_inside(z[ko + i], bi.lo[k][i], bi.hi[k][i]), "net %d: interval layer %d neuron %d", t, k, i);
                    ck_assert_msg(gb_inside(z[ko + i], bs.lo[k][i], bs.hi[k][i]),
                                  "net %d: CROWN layer %d neuron %d: %.17g not in [%.17g, %.17g]", t, k, i,
                                  mpq_get_d(z[ko + i]), bs.lo[k][i], bs.hi[k][i]);
                    ck_assert_msg(gb_inside(z[ko + i], bl.lo[k][i], bl.hi[k][i]), "net %d: LP layer %d neuron %d", t, k, i);
                    ck_assert_msg(gb_inside(z[ko + i], ba.lo[k][i], ba.hi[k][i]), "net %d: alpha layer %d neuron %d", t, k, i);
                }
            }
            size_t oo = lg_net_node_offset(net, net->n_layers - 1);
            for (int q = 0; q < m; q++) {
                mpq_set_d(v, d[q]);
                for (int j = 0; j < no; j++) {
                    mpq_set_d(s, C[q * no + j]);
                    mpq_mul(s, s, h[oo + (size_t)j]);
                    mpq_add(v, v, s);
                }
                mpq_set_d(s, lbc[q]);
                ck_assert_msg(!isfinite(lbc[q]) || mpq_cmp(s, v) <= 0, "net %d: CROWN objective %d above the exact value", t, q);
                mpq_set_d(s, lba[q]);
                ck_assert_msg(!isfinite(lba[q]) || mpq_cmp(s, v) <= 0, "net %d: alpha objective %d above the exact value", t, q);
            }
        }
        for (size_t q = 0; q < nl; q++) mpq_clear(z[q]), mpq_clear(h[q]);
        mpq_clears(v, s, NULL);
        free(z);
        free(h);
        lg_bounds_free(&bi);
        lg_bounds_free(&bs);
        lg_bounds_free(&bl);
        lg_bounds_free(&ba);
        lg_test_inst_free(&in);
    }
    ck_assert_msg(tighter > n_nets / 10, "CROWN tighter than interval on only %d of %d DAGs", tighter, n_nets);
    ck_assert_msg(n_lp_nets > 0, "no LP solved on any DAG");
}
END_TEST

/* Smooth DAGs (gelu, swish): interval and CROWN bounds contain the
 * double forward values of sampled points (up to the forward pass's own
 * rounding, far below the tolerance used). */
START_TEST(test_gb_bounds_smooth)
{
    lg_rng r;
    lg_rng_init(&r, 99u, 2);
    static const lg_act acts[] = {LG_ACT_GELU, LG_ACT_SWISH, LG_ACT_SIGMOID};
    for (int t = 0; t < 30; t++) {
        lg_test_dag_opts go = {.max_nodes = 2 + t % 3, .max_width = 4, .conv = t % 4 == 3, .act = acts[t % 3]};
        lg_net net;
        ck_assert_int_eq(lg_test_dag_random(&net, &r, &go), LG_OK);
        double lo[64], hi[64], x[64];
        for (int i = 0; i < net.n_in; i++) {
            double c = lg_rng_uniform(&r) * 2 - 1, w = 0.05 + 0.5 * lg_rng_uniform(&r);
            lo[i] = c - w;
            hi[i] = c + w;
        }
        lg_bounds bs;
        ck_assert_int_eq(lg_bounds_init(&bs, &net), LG_OK);
        ck_assert_int_eq(lg_bounds_symbolic(&bs, &net, lo, hi), LG_OK);
        size_t nl = lg_net_nodes_len(&net);
        double *vals = malloc(nl * sizeof *vals), *pre = malloc(nl * sizeof *pre);
        for (int p = 0; p < 80; p++) {
            gb_point(&r, net.n_in, lo, hi, x);
            lg_net_forward_nodes(&net, x, vals, pre);
            for (int k = 0; k < net.n_layers; k++) {
                size_t ko = lg_net_node_offset(&net, k);
                for (int i = 0; i < net.layers[k].n_out; i++) {
                    double zv = pre[ko + i], tol = 1e-9 * (1 + fabs(zv));
                    ck_assert_msg(zv >= bs.lo[k][i] - tol && zv <= bs.hi[k][i] + tol,
                                  "smooth net %d layer %d neuron %d: %.17g not in [%.17g, %.17g]", t, k, i, zv,
                                  bs.lo[k][i], bs.hi[k][i]);
                }
            }
        }
        free(vals);
        free(pre);
        lg_bounds_free(&bs);
        lg_net_free(&net);
    }
}
END_TEST

/* Smooth DAGs through lg_verify_run (the direct route: CROWN with smooth
 * relaxations, input or activation splitting): robust only when no sampled
 * point violates (a point deeper than the double forward pass's rounding),
 * and some instances are proved. */
START_TEST(test_gb_verdicts_smooth)
{
    lg_rng r;
    lg_rng_init(&r, 31337u, 5);
    static const lg_act acts[] = {LG_ACT_GELU, LG_ACT_SWISH, LG_ACT_SIGMOID, LG_ACT_LGELU};
    int n = lg_test_quick() ? 12 : 30, n_rob = 0;
    for (int t = 0; t < n; t++) {
        lg_test_dag_opts go = {.max_nodes = 2 + t % 3, .max_width = 4, .conv = t % 5 == 4, .act = acts[t % 4]};
        lg_net net;
        ck_assert_int_eq(lg_test_dag_random(&net, &r, &go), LG_OK);
        int no = lg_net_n_out(&net), label = 0;
        double x0[64], y0[8], eps = 0.01 + 0.2 * lg_rng_uniform(&r);
        for (int i = 0; i < net.n_in; i++) x0[i] = lg_rng_uniform(&r) * 2 - 1;
        size_t nl = lg_net_nodes_len(&net);
        double *vals = malloc(nl * sizeof *vals);
        lg_net_forward_nodes(&net, x0, vals, NULL);
        memcpy(y0, vals + lg_net_node_offset(&net, net.n_layers - 1), (size_t)no * sizeof *y0);
        for (int j = 1; j < no; j++)
            if (y0[j] > y0[label]) label = j;
        lg_prop p;
        ck_assert_int_eq(lg_prop_robustness(&p, x0, net.n_in, eps, -10, 10, label, no, 0.0), LG_OK);
        lg_verify_opts o = lg_verify_opts_default();
        o.solver = lg_test_solver("none");
        o.timeout_s = 10;
        o.seed = (unsigned long)t;
        o.bab.mode = t % 2 ? LG_BAB_INPUT : LG_BAB_AUTO;
        lg_verify_report rep;
        ck_assert_int_eq(lg_verify_run(&net, &p, &o, &rep), LG_OK);
        int bad = 0;
        double x[64];
        for (int q = 0; q < 400 && !bad; q++) {
            gb_point(&r, net.n_in, p.cases[0].lo, p.cases[0].hi, x);
            lg_net_forward_nodes(&net, x, vals, NULL);
            const double *y = vals + lg_net_node_offset(&net, net.n_layers - 1);
            for (int j = 0; j < no; j++)
                if (j != label && y[j] - y[label] > 1e-9 * (1 + fabs(y[label]))) bad = 1;
        }
        ck_assert_msg(!(bad && rep.verdict == LG_VERDICT_ROBUST), "smooth DAG %d: robust but a sample violates", t);
        n_rob += rep.verdict == LG_VERDICT_ROBUST;
        lg_verify_report_free(&rep);
        lg_prop_free(&p);
        free(vals);
        lg_net_free(&net);
    }
    ck_assert_msg(n_rob > 0, "no smooth DAG proved");
}
END_TEST

/* A random dense chain and the same chain as a graph: every layer k ≥ 1
 * gets a second term, a zero dense skip from the input (and layer k ≥ 2 a
 * zero index map from layer k − 2), so the function is the chain's and
 * every graph path runs (sums of several terms, nodes read twice, bounds
 * of a layer with several terms from its pre-activation). Interval,
 * CROWN and objective bounds agree up to the rounding margins. */
START_TEST(test_gb_chain_as_graph)
{
    lg_rng r;
    lg_rng_init(&r, 5151u, 6);
    static const lg_act acts[] = {LG_ACT_RELU, LG_ACT_GELU};
    for (int t = 0; t < 20; t++) {
        int L = 2 + t % 3, dims[5];
        dims[0] = 2 + t % 3;
        for (int k = 1; k < L; k++) dims[k] = 3 + (t + k) % 4;
        dims[L] = 2;
        lg_net c, g;
        ck_assert_int_eq(lg_net_init(&c, L, dims, acts[t % 2]), LG_OK);
        for (size_t i = 0; i < c.n_params; i++) c.params[i] = lg_rng_normal(&r) * 0.7;
        lg_linear tm[5][3];
        lg_layer_spec sp[5];
        for (int k = 0; k < L; k++) {
            int nt = 1;
            tm[k][0] = (lg_linear){.kind = LG_LAYER_DENSE, .n_in = dims[k], .src = k - 1};
            if (k >= 1) tm[k][nt++] = (lg_linear){.kind = LG_LAYER_DENSE, .n_in = dims[0], .src = LG_NET_INPUT};
            if (k >= 2) tm[k][nt++] = (lg_linear){.kind = LG_LAYER_INDEX, .n_in = dims[k - 1], .src = k - 2};
            sp[k] = (lg_layer_spec){dims[k + 1], c.layers[k].act, nt, tm[k]};
        }
        ck_assert_int_eq(lg_net_build(&g, dims[0], L, sp), LG_OK); /* further terms zero, maps set below */
        for (int k = 0; k < L; k++) {
            memcpy(g.layers[k].lin.W, c.layers[k].lin.W, (size_t)dims[k + 1] * (size_t)dims[k] * sizeof(double));
            memcpy(g.layers[k].b, c.layers[k].b, (size_t)dims[k + 1] * sizeof(double));
            g.layers[k].lambda = c.layers[k].lambda;
            if (k >= 2)
                for (int o = 0; o < dims[k + 1]; o++) g.layers[k].terms[1].map[o] = -1;
        }
        ck_assert_int_eq(lg_net_validate(&g), LG_OK);
        ck_assert(!lg_net_is_chain(&g));
        double lo[4], hi[4];
        for (int i = 0; i < dims[0]; i++) {
            double m = lg_rng_uniform(&r) * 2 - 1, w = 0.05 + 0.4 * lg_rng_uniform(&r);
            lo[i] = m - w;
            hi[i] = m + w;
        }
        lg_bounds bc, bg, ic, ig;
        ck_assert_int_eq(lg_bounds_init(&bc, &c), LG_OK);
        ck_assert_int_eq(lg_bounds_init(&bg, &g), LG_OK);
        ck_assert_int_eq(lg_bounds_init(&ic, &c), LG_OK);
        ck_assert_int_eq(lg_bounds_init(&ig, &g), LG_OK);
        ck_assert_int_eq(lg_bounds_interval(&ic, &c, lo, hi), LG_OK);
        ck_assert_int_eq(lg_bounds_interval(&ig, &g, lo, hi), LG_OK);
        ck_assert_int_eq(lg_bounds_symbolic(&bc, &c, lo, hi), LG_OK);
        ck_assert_int_eq(lg_bounds_symbolic(&bg, &g, lo, hi), LG_OK);
#define GB_NEAR(a, b) (fabs((a) - (b)) <= 1e-9 * (1 + fabs(a)))
        for (int k = 0; k < L; k++)
            for (int i = 0; i < dims[k + 1]; i++) {
                ck_assert_msg(GB_NEAR(ic.lo[k][i], ig.lo[k][i]) && GB_NEAR(ic.hi[k][i], ig.hi[k][i]),
                              "net %d interval layer %d neuron %d", t, k, i);
                ck_assert_msg(GB_NEAR(bc.lo[k][i], bg.lo[k][i]) && GB_NEAR(bc.hi[k][i], bg.hi[k][i]),
                              "net %d CROWN layer %d neuron %d: chain [%.17g, %.17g], graph [%.17g, %.17g]", t, k, i,
                              bc.lo[k][i], bc.hi[k][i], bg.lo[k][i], bg.hi[k][i]);
            }
        double C[4] = {1, -1, -0.5, 2}, d[2] = {0.1, -0.2}, oc[2], og[2];
        ck_assert_int_eq(lg_bounds_objective_lower(&bc, &c, 2, C, d, oc), LG_OK);
        ck_assert_int_eq(lg_bounds_objective_lower(&bg, &g, 2, C, d, og), LG_OK);
        for (int q = 0; q < 2; q++) ck_assert_msg(GB_NEAR(oc[q], og[q]), "net %d objective %d: %.17g vs %.17g", t, q, oc[q], og[q]);
#undef GB_NEAR
        lg_bounds_free(&bc);
        lg_bounds_free(&bg);
        lg_bounds_free(&ic);
        lg_bounds_free(&ig);
        lg_net_free(&c);
        lg_net_free(&g);
    }
}
END_TEST

/* The one-case property of a test instance. */
static void gb_prop(const lg_test_inst *in, lg_prop *p)
{
    int nc[8];
    for (int t = 0; t < in->n_terms; t++) nc[t] = in->terms[t].n_cons;
    int no = lg_net_n_out(&in->net);
    ck_assert_int_eq(lg_prop_alloc(p, in->net.n_in, no, in->n_terms, nc), LG_OK);
    lg_prop_case *C = &p->cases[0];
    memcpy(C->lo, in->lo, (size_t)in->net.n_in * sizeof *C->lo);
    memcpy(C->hi, in->hi, (size_t)in->net.n_in * sizeof *C->hi);
    for (int t = 0; t < in->n_terms; t++)
        for (int k = 0; k < nc[t]; k++) {
            memcpy(C->terms[t].cons[k].coef, in->terms[t].cons[k].coef, (size_t)no * sizeof(double));
            C->terms[t].cons[k].d = in->terms[t].cons[k].d;
        }
}

/* Verdicts of lg_verify_run on DAG instances agree with the exact oracle
 * (robust only when UNSAT, violated only when SAT, the witness exact), with
 * input splitting, ReLU splitting (β-CROWN) and the default route, no
 * back-end; nearly all of them are decided. */
START_TEST(test_gb_verdicts_oracle)
{
    lg_rng r;
    lg_rng_init(&r, 777u, 3);
    int n = lg_test_quick() ? 30 : 80, n_rob = 0, n_vio = 0, n_unsat = 0, n_sat = 0, n_cases = 0;
    static const lg_bab_mode modes[] = {LG_BAB_AUTO, LG_BAB_INPUT, LG_BAB_RELU};
    for (int t = 0; t < n; t++) {
        lg_test_dag_opts go = {.max_nodes = 2 + t % 3, .max_width = 3 + t % 3, .conv = t % 4 == 3, .act = LG_ACT_RELU};
        lg_test_inst in;
        ck_assert_int_eq(lg_test_inst_random_dag(&in, &r, &go), LG_OK);
        lg_answer truth;
        lg_status ost = lg_oracle_solve(&in.prob, &truth, NULL, NULL);
        if (ost == LG_ERR_ARG) { /* too many unstable neurons for the oracle */
            lg_test_inst_free(&in);
            continue;
        }
        ck_assert_int_eq(ost, LG_OK);
        n_cases++;
        n_sat += truth == LG_ANSWER_SAT;
        n_unsat += truth == LG_ANSWER_UNSAT;
        lg_prop p;
        gb_prop(&in, &p);
        for (int mi = 0; mi < 3; mi++) {
            lg_verify_opts o = lg_verify_opts_default();
            o.solver = lg_test_solver("none");
            o.timeout_s = 20;
            o.seed = (unsigned long)t;
            o.bab.mode = modes[mi];
            lg_verify_report rep;
            ck_assert_int_eq(lg_verify_run(&in.net, &p, &o, &rep), LG_OK);
            ck_assert_msg(!(rep.verdict == LG_VERDICT_ROBUST && truth == LG_ANSWER_SAT),
                          "DAG %d mode %d: robust but the oracle has a counterexample", t, mi);
            ck_assert_msg(!(rep.verdict == LG_VERDICT_VIOLATED && truth == LG_ANSWER_UNSAT),
                          "DAG %d mode %d: violated but the oracle proves it", t, mi);
            if (rep.verdict == LG_VERDICT_VIOLATED)
                ck_assert_msg(lg_oracle_is_counterexample(&in.prob, rep.x), "DAG %d: the witness is not exact", t);
            n_rob += rep.verdict == LG_VERDICT_ROBUST;
            n_vio += rep.verdict == LG_VERDICT_VIOLATED;
            lg_verify_report_free(&rep);
        }
        lg_prop_free(&p);
        lg_test_inst_free(&in);
    }
    ck_assert_msg(n_cases >= n / 2, "only %d of %d DAG instances within the oracle's reach", n_cases, n);
    /* the mix has both answers, and most UNSAT ones are proved (3 modes each) */
    ck_assert_msg(n_sat > 0 && n_unsat > 0, "%d sat, %d unsat", n_sat, n_unsat);
    ck_assert_msg(n_rob >= 3 * n_unsat * 9 / 10, "%d robust verdicts for %d UNSAT instances (3 modes)", n_rob, n_unsat);
    ck_assert_msg(n_vio >= 3 * n_sat * 9 / 10, "%d violated verdicts for %d SAT instances (3 modes)", n_vio, n_sat);
}
END_TEST

/* ReLU splitting with an intermediate α-CROWN at the root far too long for
 * the run (10^7 steps per layer, 4 s): the tightening stops at its share of
 * the time (LG_BAB_ROOT_ALPHA_SHARE) with the layers done so far and the
 * search still runs, so the DAG instances that reach branch and bound are
 * decided, and no verdict contradicts the exact oracle. */
START_TEST(test_gb_root_alpha_share)
{
    lg_rng r;
    lg_rng_init(&r, 9191u, 5);
    int n = lg_test_quick() ? 16 : 40, n_bab = 0, n_timeout = 0;
    for (int t = 0; t < n; t++) {
        lg_test_dag_opts go = {.max_nodes = 3 + t % 2, .max_width = 4 + t % 3, .act = LG_ACT_RELU};
        lg_test_inst in;
        ck_assert_int_eq(lg_test_inst_random_dag(&in, &r, &go), LG_OK);
        lg_answer truth;
        lg_status ost = lg_oracle_solve(&in.prob, &truth, NULL, NULL);
        if (ost == LG_ERR_ARG) {
            lg_test_inst_free(&in);
            continue;
        }
        ck_assert_int_eq(ost, LG_OK);
        lg_prop p;
        gb_prop(&in, &p);
        lg_verify_opts o = lg_verify_opts_default();
        o.solver = lg_test_solver("none");
        o.timeout_s = 4;
        o.seed = (unsigned long)t;
        o.bab.mode = LG_BAB_RELU;
        o.bab.root_alpha_steps = 10000000;
        lg_verify_report rep;
        ck_assert_int_eq(lg_verify_run(&in.net, &p, &o, &rep), LG_OK);
        ck_assert_msg(!(rep.verdict == LG_VERDICT_ROBUST && truth == LG_ANSWER_SAT), "DAG %d: robust, oracle SAT", t);
        ck_assert_msg(!(rep.verdict == LG_VERDICT_VIOLATED && truth == LG_ANSWER_UNSAT), "DAG %d: violated, oracle UNSAT", t);
        n_bab += rep.bab_nodes > 0 && rep.verdict != LG_VERDICT_UNKNOWN;
        n_timeout += rep.verdict == LG_VERDICT_UNKNOWN && rep.how.timed_out;
        lg_verify_report_free(&rep);
        lg_prop_free(&p);
        lg_test_inst_free(&in);
    }
    ck_assert_msg(n_bab > 0, "no DAG decided by branch and bound after the root tightening");
    ck_assert_msg(n_timeout <= n / 10, "%d of %d DAGs timed out in the root tightening", n_timeout, n);
}
END_TEST

/* The residual net x[n] → h1 = relu(W1·x + b1) [m] → h2 = relu(W2·h1 + x + b2) [n]
 * → y = W3·h2 + b3, written as a graph (the skip an identity index map) and
 * as the chain x → [relu(W1·x + b1); relu(x); relu(−x)] → relu(W2·h1 + p − q + b2)
 * → y, the same real function (x = relu(x) − relu(−x)). */
static void gb_residual(lg_net *g, lg_net *c, lg_rng *r, int n, int m, int no)
{
    lg_linear t0[1] = {{.kind = LG_LAYER_DENSE, .n_in = n, .src = LG_NET_INPUT}};
    lg_linear t1[2] = {{.kind = LG_LAYER_DENSE, .n_in = m, .src = 0}, {.kind = LG_LAYER_INDEX, .n_in = n, .src = LG_NET_INPUT}};
    lg_linear t2[1] = {{.kind = LG_LAYER_DENSE, .n_in = n, .src = 1}};
    lg_layer_spec sp[3] = {{m, LG_ACT_RELU, 1, t0}, {n, LG_ACT_RELU, 2, t1}, {no, LG_ACT_IDENTITY, 1, t2}};
    ck_assert_int_eq(lg_net_build(g, n, 3, sp), LG_OK);
    for (size_t i = 0; i < g->n_params; i++) g->params[i] = (lg_rng_uniform(r) * 2 - 1) * 0.8;
    for (int o = 0; o < n; o++) g->layers[1].terms[0].map[o] = o;
    int dims[4] = {n, m + 2 * n, n, no};
    ck_assert_int_eq(lg_net_init(c, 3, dims, LG_ACT_RELU), LG_OK);
    const lg_layer *G = g->layers;
    lg_layer *C = c->layers;
    for (int o = 0; o < m; o++) {
        for (int i = 0; i < n; i++) C[0].lin.W[o * n + i] = G[0].lin.W[o * n + i];
        C[0].b[o] = G[0].b[o];
    }
    for (int i = 0; i < n; i++) {
        C[0].lin.W[(m + i) * n + i] = 1.0;
        C[0].lin.W[(m + n + i) * n + i] = -1.0;
    }
    int w1 = m + 2 * n;
    for (int o = 0; o < n; o++) {
        for (int j = 0; j < m; j++) C[1].lin.W[o * w1 + j] = G[1].lin.W[o * m + j];
        C[1].lin.W[o * w1 + m + o] = 1.0;
        C[1].lin.W[o * w1 + m + n + o] = -1.0;
        C[1].b[o] = G[1].b[o];
    }
    memcpy(C[2].lin.W, G[2].lin.W, (size_t)no * (size_t)n * sizeof *C[2].lin.W);
    memcpy(C[2].b, G[2].b, (size_t)no * sizeof *C[2].b);
}

/* The residual net as a graph and as its chain: the same outputs, the same
 * verdicts, none contradicting the exact oracle (run on the chain), and
 * nearly every UNSAT instance proved (bounds, attack and splitting, no
 * back-end). */
START_TEST(test_gb_residual_two_ways)
{
    lg_rng r;
    lg_rng_init(&r, 2026u, 4);
    int n_g = 0, n_c = 0, n_unsat = 0, n_sat = 0;
    int N = lg_test_quick() ? 20 : 50;
    for (int t = 0; t < N; t++) {
        lg_net g, c;
        int n = 2 + t % 2, m = 3 + t % 3, no = 2 + t % 2;
        gb_residual(&g, &c, &r, n, m, no);
        ck_assert_int_eq(lg_net_validate(&g), LG_OK);
        /* node buffers a pass holds (backsub.h): the chain 2; the graph 3 (x is still read by
         * layer 1 while layer 0's coefficients are made), x read twice */
        ck_assert_int_eq(lg_backsub_live(&c), 2);
        ck_assert_int_eq(lg_backsub_shared(&c), 0);
        ck_assert_int_eq(lg_backsub_live(&g), 3);
        ck_assert_int_eq(lg_backsub_shared(&g), 1);
        double x0[4], y0[4], scratch[64], yg[4], yc[4];
        for (int i = 0; i < n; i++) x0[i] = lg_rng_uniform(&r) * 2 - 1;
        lg_net_forward(&g, x0, yg, scratch);
        lg_net_forward(&c, x0, yc, scratch);
        for (int j = 0; j < no; j++) ck_assert(fabs(yg[j] - yc[j]) <= 1e-12 * (1 + fabs(yc[j])));
        memcpy(y0, yg, sizeof y0);
        int label = 0;
        for (int j = 1; j < no; j++)
            if (y0[j] > y0[label]) label = j;
        double eps = 0.02 + 0.25 * lg_rng_uniform(&r);
        lg_prop p;
        ck_assert_int_eq(lg_prop_robustness(&p, x0, n, eps, -10, 10, label, no, 0.0), LG_OK);
        /* the oracle on the chain (the same real function) */
        lg_test_inst in;
        memset(&in, 0, sizeof in);
        lg_problem pr = {0};
        pr.net = &c;
        pr.lo = p.cases[0].lo;
        pr.hi = p.cases[0].hi;
        pr.n_terms = p.cases[0].n_terms;
        pr.terms = p.cases[0].terms;
        lg_answer truth;
        lg_status ost = lg_oracle_solve(&pr, &truth, NULL, NULL);
        int known = ost == LG_OK;
        if (known) {
            n_sat += truth == LG_ANSWER_SAT;
            n_unsat += truth == LG_ANSWER_UNSAT;
        }
        lg_verify_opts o = lg_verify_opts_default();
        o.solver = lg_test_solver("none");
        o.timeout_s = 20;
        o.seed = (unsigned long)t;
        lg_verify_report rg, rc;
        ck_assert_int_eq(lg_verify_run(&g, &p, &o, &rg), LG_OK);
        ck_assert_int_eq(lg_verify_run(&c, &p, &o, &rc), LG_OK);
        ck_assert_msg(!(rg.verdict == LG_VERDICT_ROBUST && rc.verdict == LG_VERDICT_VIOLATED) &&
                          !(rg.verdict == LG_VERDICT_VIOLATED && rc.verdict == LG_VERDICT_ROBUST),
                      "residual %d: graph and chain contradict", t);
        if (known) {
            ck_assert_msg(!(rg.verdict == LG_VERDICT_ROBUST && truth == LG_ANSWER_SAT), "residual %d: graph robust, oracle SAT", t);
            ck_assert_msg(!(rg.verdict == LG_VERDICT_VIOLATED && truth == LG_ANSWER_UNSAT), "residual %d: graph violated, oracle UNSAT", t);
        }
        /* the same verdict both ways (tiny nets: bounds, splitting and the attack decide them) */
        ck_assert_msg(rg.verdict == rc.verdict, "residual %d: graph %s, chain %s", t, lg_verdict_name(rg.verdict),
                      lg_verdict_name(rc.verdict));
        n_g += rg.verdict == LG_VERDICT_ROBUST;
        n_c += rc.verdict == LG_VERDICT_ROBUST;
        lg_verify_report_free(&rg);
        lg_verify_report_free(&rc);
        lg_prop_free(&p);
        lg_net_free(&g);
        lg_net_free(&c);
    }
    ck_assert_msg(n_sat > 0 && n_unsat > 0, "residual instances: %d sat, %d unsat", n_sat, n_unsat);
    ck_assert_msg(n_g == n_c && n_g >= n_unsat * 9 / 10, "graph proved %d, chain %d, of %d UNSAT", n_g, n_c, n_unsat);
}
END_TEST


/* Draw t of a random conv DAG with max-pool nodes allowed: 1 with the instance in *in (the
 * caller frees it) when it has a max-pool node, else 0 (nothing to free). */
static int gb_maxpool_dag(lg_test_inst *in, lg_rng *r, int t)
{
    lg_test_dag_opts go = {.max_nodes = 2 + t % 3, .max_width = 4, .conv = 1, .act = LG_ACT_RELU, .maxpool = 1};
    ck_assert_int_eq(lg_test_inst_random_dag(in, r, &go), LG_OK);
    if (lg_net_has_max(&in->net)) return 1;
    lg_test_inst_free(in);
    return 0;
}
/* Max-pool nodes (core/net.h LG_LAYER_MAX: overlapping, strided and padded
 * windows) in random DAGs: every sampled point's exact values lie inside the
 * interval and CROWN bounds of every layer, the exact value of random output
 * objectives is above their CROWN lower bound, the node's ReLU form computes
 * the same outputs, and lg_verify_run agrees with the exact oracle (on the
 * ReLU form) with no back-end and with each complete back-end alone (z3,
 * glpk); the encoders refuse the node itself and write its ReLU form. */
START_TEST(test_gb_maxpool)
{
    lg_rng r;
    lg_rng_init(&r, 9191u, 5);
    int n_nets = lg_test_quick() ? 40 : 120, with_max = 0, overlap = 0, crown_tighter = 0, n_cases = 0, n_sat = 0,
        n_unsat = 0, decided = 0;
    for (int t = 0; t < n_nets; t++) {
        lg_test_inst in;
        if (!gb_maxpool_dag(&in, &r, t)) continue;
        const lg_net *net = &in.net;
        with_max++;
        for (int k = 0; k < net->n_layers; k++) {
            const lg_conv *c = &net->layers[k].lin.conv;
            if (net->layers[k].lin.kind == LG_LAYER_MAX && (c->sh < c->kh || c->sw < c->kw)) overlap++;
        }
        lg_bounds bi, bs;
        ck_assert_int_eq(lg_bounds_init(&bi, net), LG_OK);
        ck_assert_int_eq(lg_bounds_init(&bs, net), LG_OK);
        ck_assert_int_eq(lg_bounds_interval(&bi, net, in.lo, in.hi), LG_OK);
        ck_assert_int_eq(lg_bounds_symbolic(&bs, net, in.lo, in.hi), LG_OK);
        int no = lg_net_n_out(net), m = 3;
        double C[3 * 8], d[3], lbc[3], lbi[3];
        for (int q = 0; q < m * no; q++) C[q] = lg_rng_uniform(&r) * 2 - 1;
        for (int q = 0; q < m; q++) d[q] = lg_rng_uniform(&r) - 0.5;
        ck_assert_int_eq(lg_bounds_objective_lower(&bs, net, m, C, d, lbc), LG_OK);
        ck_assert_int_eq(lg_bounds_objective_lower(&bi, net, m, C, d, lbi), LG_OK);
        for (int q = 0; q < m; q++) crown_tighter += lbc[q] > lbi[q];
        lg_net low;
        ck_assert_int_eq(lg_net_lower_max(&low, net, 0), LG_OK);
        ck_assert_int_eq(lg_net_has_max(&low), 0);
        size_t nl = lg_net_nodes_len(net);
        mpq_t *z = malloc(nl * sizeof *z), *h = malloc(nl * sizeof *h), v, sv;
        for (size_t q = 0; q < nl; q++) mpq_init(z[q]), mpq_init(h[q]);
        mpq_inits(v, sv, NULL);
        double x[64], y[8], y2[8], *s1 = malloc(2 * (size_t)lg_net_max_width(&low) * sizeof *s1);
        for (int p = 0; p < 60; p++) {
            gb_point(&r, net->n_in, in.lo, in.hi, x);
            gb_exact(net, x, z, h);
            for (int k = 0; k < net->n_layers; k++) {
                size_t ko = lg_net_node_offset(net, k);
                for (int i = 0; i < net->layers[k].n_out; i++) {
                    ck_assert_msg(gb_inside(z[ko + i], bi.lo[k][i], bi.hi[k][i]), "net %d: interval layer %d neuron %d", t, k, i);
                    ck_assert_msg(gb_inside(z[ko + i], bs.lo[k][i], bs.hi[k][i]),
                                  "net %d: CROWN layer %d neuron %d: %.17g not in [%.17g, %.17g]", t, k, i,
                                  mpq_get_d(z[ko + i]), bs.lo[k][i], bs.hi[k][i]);
                }
            }
            size_t oo = lg_net_node_offset(net, net->n_layers - 1);
            for (int q = 0; q < m; q++) {
                mpq_set_d(v, d[q]);
                for (int j = 0; j < no; j++) {
                    mpq_set_d(sv, C[q * no + j]);
                    mpq_mul(sv, sv, h[oo + (size_t)j]);
                    mpq_add(v, v, sv);
                }
                mpq_set_d(sv, lbc[q]);
                ck_assert_msg(!isfinite(lbc[q]) || mpq_cmp(sv, v) <= 0, "net %d: CROWN objective %d above the exact value", t, q);
            }
            lg_net_forward(net, x, y, s1);
            lg_net_forward(&low, x, y2, s1);
            for (int j = 0; j < no; j++)
                ck_assert_msg(fabs(y[j] - y2[j]) <= 1e-9 * (1 + fabs(y[j])), "net %d: ReLU form %.17g vs %.17g", t, y2[j], y[j]);
        }
        for (size_t q = 0; q < nl; q++) mpq_clear(z[q]), mpq_clear(h[q]);
        mpq_clears(v, sv, NULL);
        free(z);
        free(h);
        free(s1);
        /* the encoders take the ReLU form only */
        FILE *f = tmpfile();
        ck_assert_ptr_nonnull(f);
        lg_problem q2 = in.prob;
        q2.net = net;
        q2.pre_lo = q2.pre_hi = NULL;
        ck_assert_int_eq(lg_smt2_write(&q2, f), LG_ERR_UNSUPPORTED);
        fclose(f);
        lg_net_free(&low);
        lg_bounds_free(&bi);
        lg_bounds_free(&bs);
        /* verdicts */
        lg_answer truth;
        lg_status ost = t % 2 ? lg_oracle_solve(&in.prob, &truth, NULL, NULL) : LG_ERR_ARG;
        if (ost == LG_OK) {
            n_cases++;
            n_sat += truth == LG_ANSWER_SAT;
            n_unsat += truth == LG_ANSWER_UNSAT;
            lg_prop p;
            gb_prop(&in, &p);
            static const char *const solvers[3] = {"none", "z3", "glpk"};
            for (int si = 0; si < 3; si++) {
                lg_verify_opts o = lg_verify_opts_default();
                o.solver = lg_test_solver(solvers[si]);
                o.backend_only = si > 0; /* the back-end alone decides */
                o.timeout_s = 20;
                o.seed = (unsigned long)t;
                lg_verify_report rep;
                ck_assert_int_eq(lg_verify_run(&in.net, &p, &o, &rep), LG_OK);
                ck_assert_msg(!(rep.verdict == LG_VERDICT_ROBUST && truth == LG_ANSWER_SAT),
                              "net %d %s: robust but the oracle has a counterexample", t, solvers[si]);
                ck_assert_msg(!(rep.verdict == LG_VERDICT_VIOLATED && truth == LG_ANSWER_UNSAT),
                              "net %d %s: violated but the oracle proves it", t, solvers[si]);
                if (si > 0) ck_assert_msg(rep.verdict != LG_VERDICT_UNKNOWN, "net %d: %s did not decide: %s", t,
                                          solvers[si], rep.how.reason);
                decided += si > 0 && rep.verdict != LG_VERDICT_UNKNOWN;
                lg_verify_report_free(&rep);
            }
            lg_prop_free(&p);
        } else {
            ck_assert(ost == LG_ERR_ARG);
        }
        lg_test_inst_free(&in);
    }
    ck_assert_msg(with_max >= n_nets / 4, "only %d of %d DAGs have a max-pool node", with_max, n_nets);
    ck_assert_msg(overlap > 0, "no overlapping window drawn");
    ck_assert_msg(crown_tighter > 0, "CROWN never tighter than interval through max-pool nodes");
    ck_assert_msg(n_sat > 0 && n_unsat > 0, "%d sat, %d unsat of %d oracle cases", n_sat, n_unsat, n_cases);
    ck_assert_int_eq(decided, 2 * n_cases);
}
END_TEST

/* α on max-pool outputs (backsub.h: convex combinations of two planes of
 * the side the coefficient's sign uses), on random max-pool DAGs:
 * - α = 0 in the max-pool slots (lg_alpha_default) gives the bound of
 *   α = NULL bit for bit;
 * - random α ∈ [0, 1] in every slot gives bounds below the exact value of
 *   the objective at sampled points (exact rationals);
 * - the gradient of a max-pool slot matches finite differences of the
 *   bound where the bound is differentiable there (both one-sided
 *   differences agree);
 * - lg_alpha_optimize ends, on some objective, strictly above the bound of
 *   its own α with the max-pool slots reset to 0 (the max-pool α is used). */
START_TEST(test_gb_maxpool_alpha)
{
    lg_rng r;
    lg_rng_init(&r, 4242u, 7);
    int n_nets = lg_test_quick() ? 60 : 160, with_max = 0, n_fd = 0, n_gnz = 0, helped = 0, n_sound = 0;
    for (int t = 0; t < n_nets; t++) {
        lg_test_inst in;
        if (!gb_maxpool_dag(&in, &r, t)) continue;
        const lg_net *net = &in.net;
        with_max++;
        lg_bounds bs;
        ck_assert_int_eq(lg_bounds_init(&bs, net), LG_OK);
        ck_assert_int_eq(lg_bounds_symbolic(&bs, net, in.lo, in.hi), LG_OK);
        int no = lg_net_n_out(net), m = 4, size = lg_alpha_size(net);
        double C[4 * 8], d[4], o0[4], od[4], orr[4], oo[4], oz[4];
        for (int q = 0; q < m * no; q++) C[q] = lg_rng_uniform(&r) * 2 - 1;
        for (int q = 0; q < m; q++) d[q] = lg_rng_uniform(&r) - 0.5;
        double *al = malloc(5 * (size_t)m * (size_t)size * sizeof *al), *ar = al + (size_t)m * size,
               *gr = ar + (size_t)m * size, *ao = gr + (size_t)m * size, *az = ao + (size_t)m * size;
        unsigned char *ismax = calloc((size_t)size, 1);
        for (int k = 0; k < net->n_layers; k++)
            if (net->layers[k].lin.kind == LG_LAYER_MAX)
                for (int j = 0; j < net->layers[k].n_out; j++) ismax[lg_alpha_offset(net, k) + j] = 1;
        /* α = 0 on the max-pool slots: the bound of α = NULL, bit for bit */
        lg_alpha_default(&bs, net, m, al);
        for (int i = 0; i < size; i++)
            if (ismax[i]) ck_assert(al[i] == 0.0);
        ck_assert_int_eq(lg_alpha_bound(&bs, net, m, C, d, NULL, o0, NULL, NULL, NULL), LG_OK);
        ck_assert_int_eq(lg_alpha_bound(&bs, net, m, C, d, al, od, NULL, NULL, NULL), LG_OK);
        for (int q = 0; q < m; q++)
            ck_assert_msg(o0[q] == od[q] || (isnan(o0[q]) && isnan(od[q])), "net %d row %d: α = 0 %.17g vs NULL %.17g",
                          t, q, od[q], o0[q]);
        /* random α everywhere: sound */
        for (size_t i = 0; i < (size_t)m * (size_t)size; i++)
            ar[i] = lg_rng_below(&r, 4) == 0 ? (double)lg_rng_below(&r, 2) : lg_rng_uniform(&r);
        ck_assert_int_eq(lg_alpha_bound(&bs, net, m, C, d, ar, orr, NULL, NULL, gr), LG_OK);
        size_t nl = lg_net_nodes_len(net);
        mpq_t *z = malloc(nl * sizeof *z), *h = malloc(nl * sizeof *h), v, sv;
        for (size_t q = 0; q < nl; q++) mpq_init(z[q]), mpq_init(h[q]);
        mpq_inits(v, sv, NULL);
        double x[64];
        size_t oo_ = lg_net_node_offset(net, net->n_layers - 1);
        for (int p = 0; p < 40; p++) {
            gb_point(&r, net->n_in, in.lo, in.hi, x);
            gb_exact(net, x, z, h);
            for (int q = 0; q < m; q++) {
                mpq_set_d(v, d[q]);
                for (int j = 0; j < no; j++) {
                    mpq_set_d(sv, C[q * no + j]);
                    mpq_mul(sv, sv, h[oo_ + (size_t)j]);
                    mpq_add(v, v, sv);
                }
                if (!isfinite(orr[q])) continue;
                mpq_set_d(sv, orr[q]);
                ck_assert_msg(mpq_cmp(sv, v) <= 0, "net %d row %d: α bound %.17g above the exact value %.17g", t, q,
                              orr[q], mpq_get_d(v));
                n_sound++;
            }
        }
        for (size_t q = 0; q < nl; q++) mpq_clear(z[q]), mpq_clear(h[q]);
        mpq_clears(v, sv, NULL);
        free(z);
        free(h);
        /* the gradient of the max-pool slots against finite differences */
        for (int q = 0; q < m; q++)
            for (int i = 0; i < size; i++) {
                size_t qi = (size_t)q * (size_t)size + (size_t)i;
                if (!ismax[i] || !isfinite(orr[q])) continue;
                double g = gr[qi], a0 = ar[qi], hs = 1e-4, bp[4], bm[4];
                if (a0 < 2 * hs || a0 > 1 - 2 * hs) continue;
                n_gnz += g != 0.0;
                ar[qi] = a0 + hs;
                ck_assert_int_eq(lg_alpha_bound(&bs, net, m, C, d, ar, bp, NULL, NULL, NULL), LG_OK);
                ar[qi] = a0 - hs;
                ck_assert_int_eq(lg_alpha_bound(&bs, net, m, C, d, ar, bm, NULL, NULL, NULL), LG_OK);
                ar[qi] = a0;
                double fp = (bp[q] - orr[q]) / hs, fm = (orr[q] - bm[q]) / hs, tol = 1e-6 * (1 + fabs(fp));
                if (!(fabs(fp - fm) <= tol)) continue; /* a kink of the bound in α */
                ck_assert_msg(fabs(fp - g) <= 1e-5 * (1 + fabs(g)), "net %d row %d slot %d: grad %.17g vs fd %.17g",
                              t, q, i, g, fp);
                n_fd += g != 0.0;
            }
        /* the optimiser uses the max-pool α */
        memcpy(ao, al, (size_t)m * (size_t)size * sizeof *ao);
        ck_assert_int_eq(lg_alpha_optimize(&bs, net, m, C, d, 40, 0.1, NULL, ao, oo, NULL), LG_OK);
        memcpy(az, ao, (size_t)m * (size_t)size * sizeof *az);
        for (int q = 0; q < m; q++)
            for (int i = 0; i < size; i++)
                if (ismax[i]) az[(size_t)q * (size_t)size + (size_t)i] = 0.0;
        ck_assert_int_eq(lg_alpha_bound(&bs, net, m, C, d, az, oz, NULL, NULL, NULL), LG_OK);
        for (int q = 0; q < m; q++) {
            ck_assert(!(oo[q] < od[q])); /* never below the start */
            helped += isfinite(oo[q]) && oo[q] > oz[q] + 1e-9 * (1 + fabs(oz[q]));
        }
        free(al);
        free(ismax);
        lg_bounds_free(&bs);
        lg_test_inst_free(&in);
    }
    ck_assert_msg(with_max >= n_nets / 4, "only %d of %d DAGs have a max-pool node", with_max, n_nets);
    ck_assert_msg(n_sound > 100, "only %d soundness checks", n_sound);
    ck_assert_msg(n_gnz > 0 && n_fd > 0, "no nonzero max-pool gradient checked (%d nonzero, %d matched)", n_gnz, n_fd);
    ck_assert_msg(helped > 0, "the max-pool α never improved an optimised bound");
}
END_TEST

Suite *suite_graph_bounds(void)
{
    Suite *s = suite_create("graph_bounds");
    TCase *tc = tcase_create("graph_bounds");
    lg_tcase_timeout(tc, 300);
    tcase_add_test(tc, test_gb_bounds_contain_exact);
    tcase_add_test(tc, test_gb_bounds_smooth);
    tcase_add_test(tc, test_gb_chain_as_graph);
    tcase_add_test(tc, test_gb_verdicts_oracle);
    tcase_add_test(tc, test_gb_verdicts_smooth);
    tcase_add_test(tc, test_gb_residual_two_ways);
    tcase_add_test(tc, test_gb_root_alpha_share);
    tcase_add_test(tc, test_gb_maxpool);
    tcase_add_test(tc, test_gb_maxpool_alpha);
    suite_add_tcase(s, tc);
    return s;
}
