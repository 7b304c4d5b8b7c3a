/* check_backsub.c — batched bounds: several sub-problems
 * (each its own region: bounds and ReLU splits) in one back-substitution
 * (backsub.h groups, alpha.h lg_alpha_bound_batch / lg_alpha_optimize_batch)
 * and their use by branch and bound (lg_bab_process_batch, --bab-group);
 * and the sub-domain attack of item 4 (attack.h lg_attack_subdomain).
 *
 *  - a batch of groups gives each row the bound of the same row alone
 *    (up to the summation order of dgemm versus dgemv) and every batched
 *    bound contains the sampled outputs of its own group's region, for
 *    random α, β and split sets; optimised in a batch: never below the
 *    start, still containing the samples;
 *  - branch and bound with groups of 1, 3 and 16 nodes and 1 or 2 threads
 *    agrees with the enumeration oracle; for a fixed group size the answer
 *    and node count do not depend on the thread count;
 *  - the sub-domain attack finds a counterexample planted in a node's
 *    region where the plain local search has no gradient to follow;
 *  - intermediate-layer α-CROWN (lg_alpha_tighten) never loosens a bound,
 *    tightens some, and contains sampled pre-activations.
 * Cost: about 3–6 s CPU in Release; LG_TEST_QUICK: fewer instances. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/rng.h"
#include "oracle.h"
#include "testutil.h"
#include "test_solver.h"
#include "verify/alpha.h"
#include "verify/attack.h"
#include "verify/bab.h"
#include "verify/recheck.h"


#define TG_NI 4
#define TG_NO 3
#define TG_G 5 /* groups per batch */


/* One group: a point x0 of the box and up to k unstable neurons split on
 * x0's side (so the region holds x0), bounds clipped and recomputed as
 * bab_relu.c does. */
typedef struct lg_tg {
    double x0[TG_NI];
    lg_bounds b;
    signed char sign[64];
} lg_tg;

static void lg_tg_make(lg_tg *g, const lg_net *net, const double *lo, const double *hi, lg_rng *r, int k_split)
{
    for (int i = 0; i < TG_NI; i++) g->x0[i] = lo[i] + lg_rng_uniform(r) * (hi[i] - lo[i]);
    ck_assert_int_eq(lg_bounds_init(&g->b, net), LG_OK);
    ck_assert_int_eq(lg_bounds_symbolic(&g->b, net, lo, hi), LG_OK);
    memset(g->sign, 0, sizeof g->sign);
    double z[64], y[8];
    lg_test_preacts(net, g->x0, z, y);
    int done = 0;
    for (int k = 0; k < net->n_layers - 1; k++) {
        int off = lg_alpha_offset(net, k);
        for (int j = 0; j < net->layers[k].n_out && done < k_split; j++) {
            double l = g->b.lo[k][j], u = g->b.hi[k][j];
            if (!(l < 0 && u > 0) || lg_rng_uniform(r) < 0.5) continue;
            if (z[off + j] >= 0) {
                g->b.lo[k][j] = 0;
                g->sign[off + j] = -1;
            } else {
                g->b.hi[k][j] = 0;
                g->sign[off + j] = 1;
            }
            done++;
        }
        ck_assert_int_eq(lg_bounds_symbolic_unstable_from(&g->b, net, k + 1), LG_OK);
    }
}

/* min over sampled points of group g's region of each of the 2 rows */
static void lg_tg_sample_min(const lg_tg *g, const lg_net *net, const double *lo, const double *hi, const double *C,
                             const double *d, lg_rng *r, double *mn)
{
    double x[TG_NI], z[64], y[8];
    int size = lg_alpha_size(net);
    mn[0] = mn[1] = INFINITY;
    for (int q = 0; q < 2000; q++) {
        for (int i = 0; i < TG_NI; i++) {
            double u = lg_rng_uniform(r);
            x[i] = q == 0 ? g->x0[i]
                          : (q % 2 ? g->x0[i] + (u - 0.5) * 0.2 * (hi[i] - lo[i]) : lo[i] + u * (hi[i] - lo[i]));
            x[i] = fmin(fmax(x[i], lo[i]), hi[i]);
        }
        lg_test_preacts(net, x, z, y);
        int ok = 1;
        for (int j = 0; j < size && ok; j++)
            if ((g->sign[j] > 0 && z[j] > 0) || (g->sign[j] < 0 && z[j] < 0)) ok = 0;
        if (!ok) continue;
        for (int m = 0; m < 2; m++) {
            double v = d[m];
            for (int j = 0; j < TG_NO; j++) v += C[m * TG_NO + j] * y[j];
            mn[m] = fmin(mn[m], v);
        }
    }
}

START_TEST(test_backsub_bounds_equal_single_and_contain_samples)
{
    lg_rng r;
    lg_rng_init(&r, 151, 1);
    int n_inst = lg_test_quick() ? 4 : 12, compared = 0;
    for (int t = 0; t < n_inst; t++) {
        lg_net net;
        int dims[4] = {TG_NI, 10, 10, TG_NO};
        ck_assert_int_eq(lg_net_init(&net, 3, dims, LG_ACT_RELU), LG_OK);
        lg_test_randomize(&net, &r, 1.0);
        double lo[TG_NI], hi[TG_NI];
        for (int i = 0; i < TG_NI; i++) {
            double c = lg_rng_uniform(&r), w = 0.2 + 0.5 * lg_rng_uniform(&r);
            lo[i] = c - w;
            hi[i] = c + w;
        }
        lg_tg g[TG_G];
        const lg_bounds *pb[TG_G];
        const signed char *ps[TG_G];
        size_t sz = (size_t)lg_alpha_size(&net);
        ck_assert(sz <= 64);
        /* rows: 2 per group, interleaved over groups (row q: group q % TG_G) */
        int M = 2 * TG_G, grp[2 * TG_G];
        double C[2 * TG_G * TG_NO], d[2 * TG_G], Cg[TG_G][2 * TG_NO], dg[TG_G][2];
        for (int k = 0; k < TG_G; k++) {
            lg_tg_make(&g[k], &net, lo, hi, &r, k % 4);
            pb[k] = &g[k].b;
            ps[k] = g[k].sign;
            for (int q = 0; q < 2 * TG_NO; q++) Cg[k][q] = lg_rng_normal(&r);
            for (int q = 0; q < 2; q++) dg[k][q] = lg_rng_normal(&r);
        }
        for (int q = 0; q < M; q++) {
            int k = q % TG_G, row = q / TG_G;
            grp[q] = k;
            memcpy(C + q * TG_NO, Cg[k] + row * TG_NO, TG_NO * sizeof *C);
            d[q] = dg[k][row];
        }
        double *al = malloc((size_t)M * sz * sizeof *al), *be = malloc((size_t)M * sz * sizeof *be);
        double lb[2 * TG_G], one[2 * TG_G], start[2 * TG_G], mn[TG_G][2];
        for (int k = 0; k < TG_G; k++) lg_tg_sample_min(&g[k], &net, lo, hi, Cg[k], dg[k], &r, mn[k]);
        lg_alpha_batch bt = {TG_G, pb, ps, grp, NULL, 0};
        for (int rep = 0; rep < 10; rep++) {
            for (size_t j = 0; j < (size_t)M * sz; j++) {
                al[j] = lg_rng_uniform(&r);
                be[j] = 3.0 * lg_rng_uniform(&r);
            }
            ck_assert_int_eq(lg_alpha_bound_batch(&bt, &net, M, C, d, al, be, lb, NULL, NULL, NULL, NULL), LG_OK);
            for (int q = 0; q < M; q++) {
                int k = grp[q];
                ck_assert_int_eq(lg_alpha_bound_beta(&g[k].b, &net, 1, C + q * TG_NO, d + q, al + (size_t)q * sz,
                                                     g[k].sign, be + (size_t)q * sz, &one[q], NULL, NULL, NULL, NULL),
                                 LG_OK);
                ck_assert_msg(fabs(lb[q] - one[q]) <= 1e-9 * (1 + fabs(one[q])),
                              "inst %d rep %d row %d: batch %.15g, alone %.15g", t, rep, q, lb[q], one[q]);
                ck_assert_msg(lb[q] <= mn[k][q / TG_G], "inst %d rep %d row %d: batched bound %.12g above a sample %.12g",
                              t, rep, q, lb[q], mn[k][q / TG_G]);
                compared++;
            }
        }
        /* optimised as a batch from the default slopes, β = 0 */
        for (int q = 0; q < M; q++) lg_alpha_default(pb[grp[q]], &net, 1, al + (size_t)q * sz);
        memset(be, 0, (size_t)M * sz * sizeof *be);
        ck_assert_int_eq(lg_alpha_bound_batch(&bt, &net, M, C, d, al, be, start, NULL, NULL, NULL, NULL), LG_OK);
        ck_assert_int_eq(lg_alpha_optimize_batch(&bt, &net, M, C, d, 20, 0.1, NULL, al, be, lb, NULL), LG_OK);
        for (int q = 0; q < M; q++) {
            ck_assert_msg(lb[q] >= start[q], "inst %d row %d: optimised %.12g < start %.12g", t, q, lb[q], start[q]);
            ck_assert_msg(lb[q] <= mn[grp[q]][q / TG_G], "inst %d row %d: optimised batch bound %.12g above a sample",
                          t, q, lb[q]);
        }
        free(al);
        free(be);
        for (int k = 0; k < TG_G; k++) lg_bounds_free(&g[k].b);
        lg_net_free(&net);
    }
    ck_assert_int_gt(compared, 0);
}
END_TEST

/* ReLU branch and bound with node groups of 1, 3, 16 (16 = the whole round)
 * on 1 and 2 threads: verdicts as the oracle's; per group size the same
 * answer and node count for both thread counts (no deadline, no back-end). */
START_TEST(test_backsub_bab_groups_deterministic)
{
    lg_rng r;
    lg_rng_init(&r, 152, 2);
    lg_test_shape shape = {3, {10, 8, 8, 3}, 0.15, 1};
    int n = lg_test_quick() ? 4 : 10, decided = 0, split = 0, tried = 0;
    static const int groups[3] = {1, 3, 16};
    for (int t = 0; t < n; t++) {
        lg_test_inst in;
        ck_assert_int_eq(lg_test_inst_random(&in, &r, &shape), LG_OK);
        lg_answer ans;
        if (lg_oracle_solve(&in.prob, &ans, NULL, NULL) != LG_OK) { /* too many unstable ReLUs to enumerate */
            lg_test_inst_free(&in);
            continue;
        }
        tried++;
        for (int gi = 0; gi < 3; gi++) {
            long nodes1 = -1;
            int ans1 = -1;
            for (int th = 1; th <= 2; th++) {
                lg_bab_opts o = lg_bab_opts_default();
                o.mode = LG_BAB_RELU;
                o.solver = lg_test_solver("none");
                o.threads = th;
                o.group = groups[gi];
                o.max_nodes = 3000;
                lg_runctx run = lg_runctx_none();
                lg_bab_out out;
                double x[32];
                ck_assert_int_eq(lg_bab_run(&in.net, in.lo, in.hi, in.n_terms, in.terms, NULL, &o, &run, &out, x), LG_OK);
                if (out.answer == LG_BAB_PROVED)
                    ck_assert_msg(ans == LG_ANSWER_UNSAT, "inst %d group %d: proved, oracle sat", t, groups[gi]);
                if (out.answer == LG_BAB_FOUND) {
                    ck_assert_msg(ans == LG_ANSWER_SAT, "inst %d group %d: found, oracle unsat", t, groups[gi]);
                    ck_assert_int_eq(lg_recheck(&in.net, in.lo, in.hi, in.n_terms, in.terms, x, NULL), 1);
                }
                if (th == 1) {
                    nodes1 = out.nodes;
                    ans1 = (int)out.answer;
                    decided += out.answer != LG_BAB_OPEN;
                    split += out.nodes > 1;
                } else {
                    ck_assert_msg((int)out.answer == ans1 && out.nodes == nodes1,
                                  "inst %d group %d: 2 threads %d/%ld, 1 thread %d/%ld", t, groups[gi], (int)out.answer,
                                  out.nodes, ans1, nodes1);
                }
            }
        }
        { /* with the root's intermediate bounds tightened by α (--bab-root-alpha) */
            lg_bab_opts o = lg_bab_opts_default();
            o.mode = LG_BAB_RELU;
            o.solver = lg_test_solver("none");
            o.threads = 1;
            o.root_alpha_steps = 10;
            o.max_nodes = 3000;
            lg_runctx run = lg_runctx_none();
            lg_bab_out out;
            double x[32];
            ck_assert_int_eq(lg_bab_run(&in.net, in.lo, in.hi, in.n_terms, in.terms, NULL, &o, &run, &out, x), LG_OK);
            if (out.answer == LG_BAB_PROVED) ck_assert_msg(ans == LG_ANSWER_UNSAT, "inst %d root α: proved, oracle sat", t);
            if (out.answer == LG_BAB_FOUND) ck_assert_msg(ans == LG_ANSWER_SAT, "inst %d root α: found, oracle unsat", t);
        }
        lg_test_inst_free(&in);
    }
    ck_assert_int_gt(tried, n / 2);
    ck_assert_int_gt(decided, 0);
    fprintf(stderr, "batch suite: %d instances, %d runs decided, %d split\n", tried, decided, split);
    ck_assert_msg(split > 0, "no instance needed more than one node");
}
END_TEST

/* Intermediate-layer α-CROWN (lg_alpha_tighten): layer by layer, each
 * followed by CROWN on the later layers as at the branch-and-bound root;
 * the bounds never loosen, get strictly tighter somewhere, and contain the
 * pre-activations of sampled inputs. */
START_TEST(test_backsub_alpha_tighten_intermediate)
{
    lg_rng r;
    lg_rng_init(&r, 153, 3);
    int tighter = 0, n_inst = lg_test_quick() ? 3 : 8;
    for (int t = 0; t < n_inst; t++) {
        lg_net net;
        int dims[5] = {TG_NI, 12, 12, 12, TG_NO};
        ck_assert_int_eq(lg_net_init(&net, 4, dims, LG_ACT_RELU), LG_OK);
        lg_test_randomize(&net, &r, 1.0);
        double lo[TG_NI], hi[TG_NI], x[TG_NI], z[64], y[8];
        for (int i = 0; i < TG_NI; i++) {
            double c = lg_rng_uniform(&r), w = 0.3 + 0.5 * lg_rng_uniform(&r);
            lo[i] = c - w;
            hi[i] = c + w;
        }
        lg_bounds b0, b;
        ck_assert_int_eq(lg_bounds_init(&b0, &net), LG_OK);
        ck_assert_int_eq(lg_bounds_init(&b, &net), LG_OK);
        ck_assert_int_eq(lg_bounds_symbolic(&b0, &net, lo, hi), LG_OK);
        ck_assert_int_eq(lg_bounds_symbolic(&b, &net, lo, hi), LG_OK);
        double lr = t % 2 ? LG_BAB_ROOT_ALPHA_LR : 0.1; /* the nodes' rate and the root's */
        for (int k = 1; k < net.n_layers; k++) {
            int nt;
            ck_assert_int_eq(lg_alpha_tighten(&b, &net, k, 20, lr, NULL, &nt), LG_OK);
            if (k + 1 < net.n_layers) ck_assert_int_eq(lg_bounds_symbolic_unstable_from(&b, &net, k + 1), LG_OK);
        }
        for (int k = 0; k < net.n_layers; k++)
            for (int j = 0; j < net.layers[k].n_out; j++) {
                ck_assert_msg(b.lo[k][j] >= b0.lo[k][j] && b.hi[k][j] <= b0.hi[k][j], "inst %d (%d,%d) loosened", t, k, j);
                tighter += b.lo[k][j] > b0.lo[k][j] + 1e-9 || b.hi[k][j] < b0.hi[k][j] - 1e-9;
            }
        for (int q = 0; q < 3000; q++) {
            for (int i = 0; i < TG_NI; i++) x[i] = lo[i] + lg_rng_uniform(&r) * (hi[i] - lo[i]);
            if (q < 16) /* corners */
                for (int i = 0; i < TG_NI; i++) x[i] = (q >> i) & 1 ? hi[i] : lo[i];
            lg_test_preacts(&net, x, z, y);
            for (int k = 0, off = 0; k < net.n_layers; off += net.layers[k].n_out, k++)
                for (int j = 0; j < net.layers[k].n_out; j++)
                    ck_assert_msg(z[off + j] >= b.lo[k][j] && z[off + j] <= b.hi[k][j],
                                  "inst %d (%d,%d): sample %.12g outside [%.12g, %.12g]", t, k, j, z[off + j], b.lo[k][j],
                                  b.hi[k][j]);
        }
        lg_bounds_free(&b0);
        lg_bounds_free(&b);
        lg_net_free(&net);
    }
    ck_assert_msg(tighter > 0, "intermediate α never tightened a bound");
}
END_TEST

/* A counterexample planted in a sub-domain: y = 10·relu(x0 − 0.8) − 1 on
 * [−1, 1]², violated (y ≥ 0) only for x0 ≥ 0.9. From x = (−0.5, 0) the
 * ReLU is off, g has no gradient and the plain local search (repair) stays
 * put; steered into the node "z0 ≥ 0" (sign −1) the sub-domain attack walks
 * into it and finds the counterexample (re-checked). */
START_TEST(test_backsub_subdomain_attack_finds_planted)
{
    lg_net net;
    int dims[3] = {2, 2, 1};
    ck_assert_int_eq(lg_net_init(&net, 2, dims, LG_ACT_RELU), LG_OK);
    double W0[4] = {1, 0, 0, 1}, b0[2] = {-0.8, 0}, W1[2] = {10, 0}, b1[1] = {-1};
    memcpy(net.layers[0].lin.W, W0, sizeof W0);
    memcpy(net.layers[0].b, b0, sizeof b0);
    memcpy(net.layers[1].lin.W, W1, sizeof W1);
    memcpy(net.layers[1].b, b1, sizeof b1);
    double lo[2] = {-1, -1}, hi[2] = {1, 1}, coef[1] = {-1};
    lg_lincon con = {coef, 0.0};
    lg_term term = {1, &con};
    signed char sign[3] = {-1, 0, 0}; /* z0 ≥ 0; layout of alpha.h (2 hidden, 1 output) */
    ck_assert_int_eq(lg_alpha_size(&net), 3);
    double x[2] = {-0.5, 0.0};
    int found = 1;
    ck_assert_int_eq(lg_attack_repair(&net, lo, hi, 1, &term, 20, 0.1, x, &found), LG_OK);
    ck_assert_msg(!found && x[0] == -0.5, "plain local search moved to %g (found %d)", x[0], found);
    ck_assert_int_eq(lg_attack_subdomain(&net, lo, hi, 1, &term, sign, 20, 0.1, NULL, x, &found), LG_OK);
    ck_assert_msg(found, "sub-domain attack ended at x0 = %g", x[0]);
    ck_assert(x[0] >= 0.9);
    ck_assert_int_eq(lg_recheck(&net, lo, hi, 1, &term, x, NULL), 1);
    lg_net_free(&net);
}
END_TEST

Suite *suite_backsub(void)
{
    Suite *s = suite_create("backsub");
    TCase *tc = tcase_create("core");
    lg_tcase_timeout(tc, 600);
    tcase_add_test(tc, test_backsub_bounds_equal_single_and_contain_samples);
    tcase_add_test(tc, test_backsub_bab_groups_deterministic);
    tcase_add_test(tc, test_backsub_subdomain_attack_finds_planted);
    tcase_add_test(tc, test_backsub_alpha_tighten_intermediate);
    suite_add_tcase(s, tc);
    return s;
}
