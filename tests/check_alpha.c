/* check_alpha.c — β-CROWN: split multipliers in the bound
 * (alpha.h lg_alpha_bound_beta / lg_alpha_optimize_beta, backsub.h
 * lg_backsub_lower_beta) and their use in ReLU branch and bound.
 *
 *  - bounds contain sampled outputs of the split region for random α, β and
 *    split sets (and are the α bound at β = 0);
 *  - optimised α, β never fall below their start and stay sound;
 *  - ∂bound/∂β against finite differences;
 *  - branch and bound with β agrees with the enumeration oracle, and its
 *    verdicts and node counts do not depend on the thread count (with the
 *    default node groups of 8 and with groups of 1: batched bounds);
 *  - the branching rules (BaBSR, filtered smart branching) agree with the
 *    oracle too.
 * Cost: about 9–19 s CPU in Release (48–121 s wall on the loaded 2-core
 * machine); LG_TEST_QUICK: 6 boundary instances instead of 16. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oracle.h"
#include "testutil.h"
#include "test_solver.h"
#include "verify/alpha.h"
#include "verify/bab.h"
#include "verify/recheck.h"


#define TB_NI 4
#define TB_NO 3

/* A random relu net TB_NI → h → h → TB_NO, a box, a point x0 in it, its
 * symbolic bounds; then k unstable neurons split on x0's side (so the region
 * holds x0), the bounds clipped and recomputed as bab_relu.c does. */
typedef struct lg_tbb {
    lg_net net;
    double lo[TB_NI], hi[TB_NI], x0[TB_NI];
    lg_bounds b;
    int size;
    signed char *sign;
    double C[2 * TB_NO], d[2];
} lg_tbb;


static int lg_tbb_make(lg_tbb *t, lg_rng *r, int h, int k_split)
{
    int dims[4] = {TB_NI, h, h, TB_NO};
    ck_assert_int_eq(lg_net_init(&t->net, 3, dims, LG_ACT_RELU), LG_OK);
    lg_test_randomize(&t->net, r, 1.0);
    for (int i = 0; i < TB_NI; i++) {
        double c = lg_rng_uniform(r), w = 0.2 + 0.5 * lg_rng_uniform(r);
        t->lo[i] = c - w;
        t->hi[i] = c + w;
        t->x0[i] = t->lo[i] + lg_rng_uniform(r) * (t->hi[i] - t->lo[i]);
    }
    ck_assert_int_eq(lg_bounds_init(&t->b, &t->net), LG_OK);
    ck_assert_int_eq(lg_bounds_symbolic(&t->b, &t->net, t->lo, t->hi), LG_OK);
    t->size = lg_alpha_size(&t->net);
    t->sign = calloc((size_t)t->size, 1);
    double z[64], y[8];
    lg_test_preacts(&t->net, t->x0, z, y);
    int done = 0;
    for (int k = 0; k < 2; k++) { /* hidden layers in order, so a later recompute keeps earlier splits */
        int off = lg_alpha_offset(&t->net, k);
        for (int j = 0; j < h && done < k_split; j++) {
            double l = t->b.lo[k][j], u = t->b.hi[k][j];
            if (!(l < 0 && u > 0) || lg_rng_uniform(r) < 0.5) continue;
            if (z[off + j] >= 0) {
                t->b.lo[k][j] = 0;
                t->sign[off + j] = -1;
            } else {
                t->b.hi[k][j] = 0;
                t->sign[off + j] = 1;
            }
            done++;
        }
        ck_assert_int_eq(lg_bounds_symbolic_unstable_from(&t->b, &t->net, k + 1), LG_OK);
    }
    for (int q = 0; q < 2 * TB_NO; q++) t->C[q] = lg_rng_normal(r);
    for (int q = 0; q < 2; q++) t->d[q] = lg_rng_normal(r);
    return done;
}

static void lg_tbb_free(lg_tbb *t)
{
    free(t->sign);
    lg_bounds_free(&t->b);
    lg_net_free(&t->net);
}

/* min over sampled points of the split region (x0 included) of each row */
static int lg_tbb_sample_min(const lg_tbb *t, lg_rng *r, int n, double *mn)
{
    double x[TB_NI], z[64], y[8];
    int kept = 0;
    mn[0] = mn[1] = INFINITY;
    for (int q = 0; q < n; q++) {
        for (int i = 0; i < TB_NI; i++) {
            double u = lg_rng_uniform(r);
            if (q == 0) x[i] = t->x0[i];
            else if (q % 2) x[i] = t->x0[i] + (u - 0.5) * 0.2 * (t->hi[i] - t->lo[i]); /* near x0 */
            else x[i] = t->lo[i] + u * (t->hi[i] - t->lo[i]);
            x[i] = fmin(fmax(x[i], t->lo[i]), t->hi[i]);
        }
        lg_test_preacts(&t->net, x, z, y);
        int ok = 1;
        for (int j = 0; j < t->size && ok; j++)
            if ((t->sign[j] > 0 && z[j] > 0) || (t->sign[j] < 0 && z[j] < 0)) ok = 0;
        if (!ok) continue;
        kept++;
        for (int m = 0; m < 2; m++) {
            double v = t->d[m];
            for (int j = 0; j < TB_NO; j++) v += t->C[m * TB_NO + j] * y[j];
            mn[m] = fmin(mn[m], v);
        }
    }
    return kept;
}

START_TEST(test_alpha_sound_for_random_alpha_beta_splits)
{
    lg_rng r;
    lg_rng_init(&r, 131, 1);
    int n_inst = lg_test_quick() ? 10 : 40, improved = 0, tested = 0;
    for (int t = 0; t < n_inst; t++) {
        lg_tbb o;
        int ns = lg_tbb_make(&o, &r, 10, 1 + t % 5);
        double mn[2], base[2], lb[2], opt[2];
        int kept = lg_tbb_sample_min(&o, &r, 3000, mn);
        ck_assert_int_gt(kept, 0); /* x0 itself */
        size_t sz = (size_t)o.size;
        double *al = malloc(2 * sz * sizeof *al), *be = malloc(2 * sz * sizeof *be);
        /* β = 0 is exactly the α bound */
        for (size_t j = 0; j < 2 * sz; j++) {
            al[j] = lg_rng_uniform(&r);
            be[j] = 0;
        }
        ck_assert_int_eq(lg_alpha_bound(&o.b, &o.net, 2, o.C, o.d, al, base, NULL, NULL, NULL), LG_OK);
        ck_assert_int_eq(lg_alpha_bound_beta(&o.b, &o.net, 2, o.C, o.d, al, o.sign, be, lb, NULL, NULL, NULL, NULL),
                         LG_OK);
        for (int k = 0; k < 2; k++) ck_assert(lb[k] == base[k]);
        /* random α ∈ [0,1], β ∈ [0, 4] (also off the splits, where it must be ignored; negative read as 0) */
        for (int rep = 0; rep < 20; rep++) {
            for (size_t j = 0; j < 2 * sz; j++) {
                al[j] = lg_rng_uniform(&r);
                be[j] = 4.0 * lg_rng_uniform(&r) * (rep % 5 == 4 ? -1 : 1);
            }
            ck_assert_int_eq(
                lg_alpha_bound_beta(&o.b, &o.net, 2, o.C, o.d, al, o.sign, be, lb, NULL, NULL, NULL, NULL), LG_OK);
            for (int k = 0; k < 2; k++)
                ck_assert_msg(lb[k] <= mn[k], "inst %d rep %d row %d: β bound %.12g above a sampled value %.12g", t,
                              rep, k, lb[k], mn[k]);
            tested++;
        }
        /* optimised jointly from α default, β = 0: never below the start, still sound */
        lg_alpha_default(&o.b, &o.net, 2, al);
        memset(be, 0, 2 * sz * sizeof *be);
        ck_assert_int_eq(lg_alpha_bound(&o.b, &o.net, 2, o.C, o.d, al, base, NULL, NULL, NULL), LG_OK);
        double *al2 = malloc(2 * sz * sizeof *al2);
        memcpy(al2, al, 2 * sz * sizeof *al2);
        ck_assert_int_eq(lg_alpha_optimize(&o.b, &o.net, 2, o.C, o.d, 30, 0.1, NULL, al2, opt, NULL), LG_OK);
        ck_assert_int_eq(lg_alpha_optimize_beta(&o.b, &o.net, 2, o.C, o.d, o.sign, 30, 0.1, NULL, al, be, lb, NULL),
                         LG_OK);
        for (int k = 0; k < 2; k++) {
            ck_assert_msg(lb[k] >= base[k], "inst %d row %d: optimised %.9g < start %.9g", t, k, lb[k], base[k]);
            ck_assert_msg(lb[k] <= mn[k], "inst %d row %d: optimised β bound %.12g above a sample %.12g", t, k, lb[k],
                          mn[k]);
            improved += ns > 0 && lb[k] > opt[k] + 1e-6 * (1 + fabs(opt[k]));
        }
        /* the returned α, β reproduce the returned bound */
        ck_assert_int_eq(lg_alpha_bound_beta(&o.b, &o.net, 2, o.C, o.d, al, o.sign, be, opt, NULL, NULL, NULL, NULL),
                         LG_OK);
        for (int k = 0; k < 2; k++) ck_assert(opt[k] == lb[k]);
        for (size_t j = 0; j < 2 * sz; j++) {
            ck_assert(be[j] >= 0);
            if (!o.sign[j % sz]) ck_assert(be[j] == 0);
        }
        free(al2);
        free(al);
        free(be);
        lg_tbb_free(&o);
    }
    ck_assert_int_gt(tested, 0);
    ck_assert_msg(improved > 0, "β never beat α alone on %d instances", n_inst); /* the splits are used */
}
END_TEST

/* ∂bound/∂β (and ∂/∂α with β) against finite differences. The bound is
 * piecewise linear in β (signs of back-substituted coefficients switch), so
 * a coordinate is compared only where the forward and backward differences
 * agree (no kink within h). */
START_TEST(test_alpha_gradient)
{
    lg_rng r;
    lg_rng_init(&r, 132, 2);
    int checked = 0, nonzero = 0;
    for (int t = 0; t < 8; t++) {
        lg_tbb o;
        lg_tbb_make(&o, &r, 10, 4);
        size_t sz = (size_t)o.size;
        double *al = malloc(sz * sizeof *al), *be = malloc(sz * sizeof *be), *ga = malloc(sz * sizeof *ga);
        double *gb = malloc(sz * sizeof *gb);
        for (size_t j = 0; j < sz; j++) {
            al[j] = 0.2 + 0.6 * lg_rng_uniform(&r);
            be[j] = o.sign[j] ? 0.1 + lg_rng_uniform(&r) : 0.0;
        }
        double v0, vp, vm;
        ck_assert_int_eq(lg_alpha_bound_beta(&o.b, &o.net, 1, o.C, o.d, al, o.sign, be, &v0, NULL, NULL, ga, gb), LG_OK);
        for (size_t j = 0; j < 2 * sz; j++) {
            double *p = j < sz ? al + j : be + (j - sz), g = j < sz ? ga[j] : gb[j - sz], x = *p, h = 1e-6;
            if (j >= sz && !o.sign[j - sz]) {
                ck_assert(g == 0.0);
                continue;
            }
            *p = x + h;
            lg_alpha_bound_beta(&o.b, &o.net, 1, o.C, o.d, al, o.sign, be, &vp, NULL, NULL, NULL, NULL);
            *p = x - h;
            lg_alpha_bound_beta(&o.b, &o.net, 1, o.C, o.d, al, o.sign, be, &vm, NULL, NULL, NULL, NULL);
            *p = x;
            double fwd = (vp - v0) / h, bwd = (v0 - vm) / h;
            if (fabs(fwd - bwd) > 1e-5 * (1 + fabs(fwd))) continue; /* a kink */
            double fd = 0.5 * (fwd + bwd);
            ck_assert_msg(fabs(fd - g) <= 1e-5 * (1 + fabs(fd)), "inst %d param %zu (%s): grad %.9g, differences %.9g",
                          t, j, j < sz ? "alpha" : "beta", g, fd);
            checked++;
            nonzero += j >= sz && g != 0.0;
        }
        free(al);
        free(be);
        free(ga);
        free(gb);
        lg_tbb_free(&o);
    }
    ck_assert_int_gt(checked, 0);
    ck_assert_int_gt(nonzero, 0); /* some β matters */
}
END_TEST

/* ---- branch and bound with β against the oracle ---- */

static lg_bab_opts lg_tbb_opts(const char *solver, int threads, int beta, int branch)
{
    lg_bab_opts o = lg_bab_opts_default();
    o.mode = LG_BAB_RELU;
    o.solver = lg_test_solver(solver);
    o.threads = threads;
    o.beta = beta;
    o.branch = (lg_bab_branch)branch;
    o.max_nodes = 20000;
    return o;
}

/* Move every constraint by −m (c·y + d − m ≤ 0). */
static void lg_tbb_shift(lg_test_inst *in, double m)
{
    for (int t = 0; t < in->n_terms; t++)
        for (int k = 0; k < in->terms[t].n_cons; k++) in->terms[t].cons[k].d -= m;
}

/* Put the instance near its decision boundary, so that branch and bound has
 * to split: bisect (with the oracle) the shift m between a sampled value of
 * the property (SAT at m = that value) and a value below the α-CROWN bound
 * of every constraint (UNSAT), then keep the SAT or the UNSAT end. Returns 0
 * when the oracle cannot be used. */
static int lg_tbb_boundary(lg_test_inst *in, lg_rng *r, int want_sat)
{
    lg_answer a;
    if (lg_oracle_solve(&in->prob, &a, NULL, NULL) != LG_OK) return 0;
    /* hi: min over samples of max over a term's constraints (SAT there) */
    int ni = in->net.n_in, no = lg_net_n_out(&in->net);
    double x[64], y[16], sc[256], hi = INFINITY;
    for (int q = 0; q < 200; q++) {
        for (int i = 0; i < ni; i++) x[i] = in->lo[i] + lg_rng_uniform(r) * (in->hi[i] - in->lo[i]);
        lg_net_forward(&in->net, x, y, sc);
        for (int t = 0; t < in->n_terms; t++) {
            double v = -INFINITY;
            for (int k = 0; k < in->terms[t].n_cons; k++) {
                double c = in->terms[t].cons[k].d;
                for (int j = 0; j < no; j++) c += in->terms[t].cons[k].coef[j] * y[j];
                v = fmax(v, c);
            }
            hi = fmin(hi, v);
        }
    }
    /* lo: below every constraint's interval lower bound */
    lg_bounds b;
    ck_assert_int_eq(lg_bounds_init(&b, &in->net), LG_OK);
    ck_assert_int_eq(lg_bounds_symbolic(&b, &in->net, in->lo, in->hi), LG_OK);
    double lo = INFINITY;
    for (int t = 0; t < in->n_terms; t++)
        for (int k = 0; k < in->terms[t].n_cons; k++) {
            double v;
            ck_assert_int_eq(lg_alpha_bound(&b, &in->net, 1, in->terms[t].cons[k].coef, &in->terms[t].cons[k].d, NULL,
                                            &v, NULL, NULL, NULL),
                             LG_OK);
            lo = fmin(lo, v);
        }
    lg_bounds_free(&b);
    lo -= 1e-3 * (1 + fabs(lo));
    if (!(lo < hi)) return 0;
    for (int it = 0; it < 6; it++) {
        double mid = 0.5 * (lo + hi);
        lg_tbb_shift(in, mid);
        lg_status st = lg_oracle_solve(&in->prob, &a, NULL, NULL);
        lg_tbb_shift(in, -mid);
        ck_assert_int_eq(st, LG_OK);
        if (a == LG_ANSWER_SAT) hi = mid;
        else lo = mid;
    }
    lg_tbb_shift(in, want_sat ? hi : lo);
    return 1;
}

START_TEST(test_alpha_bab_matches_oracle)
{
    lg_rng r;
    lg_rng_init(&r, 133, 3);
    lg_test_shape shapes[2] = {{3, {20, 7, 6, 3}, 0.08, 0}, {3, {10, 8, 8, 3}, 0.15, 1}};
    int n = lg_test_quick() ? 6 : 16, tried = 0, sat = 0, unsat = 0, decided[3] = {0, 0, 0};
    long nodes[3] = {0, 0, 0}, tot[3] = {0, 0, 0};
    int n_dec[3] = {0, 0, 0};
    for (int t = 0; t < n; t++) {
        lg_test_inst in;
        ck_assert_int_eq(lg_test_inst_random(&in, &r, &shapes[t % 2]), LG_OK);
        lg_answer ans;
        if (!lg_tbb_boundary(&in, &r, t % 4 == 3)) { /* mostly hard UNSAT: the proofs need splitting */
            lg_test_inst_free(&in);
            continue;
        }
        ck_assert_int_eq(lg_oracle_solve(&in.prob, &ans, NULL, NULL), LG_OK);
        tried++;
        sat += ans == LG_ANSWER_SAT;
        unsat += ans == LG_ANSWER_UNSAT;
        /* pure splitting (no back-end): α only + BaBSR, β + BaBSR, β + FSB (also on 2 threads) */
        long g1_nodes = -1; /* v = 4, 5: nodes bounded one per group (batched bounds off), 1 and 2 threads */
        int g1_ans = -1;
        for (int v = 0; v < 6; v++) {
            lg_bab_opts o = lg_tbb_opts("none", v == 3 || v == 5 ? 2 : 1, v > 0, v >= 2 ? LG_BAB_BRANCH_FSB : LG_BAB_BRANCH_BABSR);
            if (v >= 4) o.group = 1;
            lg_runctx run = lg_runctx_none();
            lg_bab_out out;
            double x[32];
            ck_assert_int_eq(lg_bab_run(&in.net, in.lo, in.hi, in.n_terms, in.terms, NULL, &o, &run, &out, x), LG_OK);
            if (out.answer == LG_BAB_PROVED) ck_assert_msg(ans == LG_ANSWER_UNSAT, "inst %d v %d: proved, oracle sat", t, v);
            if (out.answer == LG_BAB_FOUND) {
                ck_assert_msg(ans == LG_ANSWER_SAT, "inst %d v %d: found, oracle unsat", t, v);
                ck_assert_int_eq(lg_recheck(&in.net, in.lo, in.hi, in.n_terms, in.terms, x, NULL), 1);
            }
            if (v == 3) { /* thread count changes neither the answer nor, without a back-end or deadline, the nodes */
                ck_assert_msg(out.answer == (lg_bab_answer)decided[2] && out.nodes == nodes[2],
                              "inst %d: 2 threads %d/%ld, 1 thread %d/%ld", t, (int)out.answer, out.nodes, decided[2],
                              nodes[2]);
                continue;
            }
            if (v == 4) {
                g1_nodes = out.nodes;
                g1_ans = (int)out.answer;
                continue;
            }
            if (v == 5) { /* the same for groups of one node */
                ck_assert_msg((int)out.answer == g1_ans && out.nodes == g1_nodes,
                              "inst %d, group 1: 2 threads %d/%ld, 1 thread %d/%ld", t, (int)out.answer, out.nodes,
                              g1_ans, g1_nodes);
                break;
            }
            decided[v] = (int)out.answer;
            nodes[v] = out.nodes;
        }
        for (int v = 0; v < 3; v++) {
            n_dec[v] += decided[v] != LG_BAB_OPEN;
            tot[v] += nodes[v];
        }
        /* with the back-end on small nodes: the same verdicts for 1 and 2 threads */
        for (int th = 1; th <= 2; th++) {
            lg_bab_opts o = lg_tbb_opts("glpk", th, 1, LG_BAB_BRANCH_FSB);
            lg_runctx run = lg_runctx_none();
            o.solver_unstable = 4;
            lg_bab_out out;
            double x[32];
            ck_assert_int_eq(lg_bab_run(&in.net, in.lo, in.hi, in.n_terms, in.terms, NULL, &o, &run, &out, x), LG_OK);
            ck_assert_msg(out.answer != LG_BAB_OPEN, "inst %d: open with a back-end (%s)", t, out.how.reason);
            ck_assert_int_eq(out.answer == LG_BAB_PROVED, ans == LG_ANSWER_UNSAT);
        }
        lg_test_inst_free(&in);
    }
    ck_assert_int_gt(tried, n / 2);
    ck_assert_msg(sat > 0 && unsat > 0, "both verdicts occur: %d sat, %d unsat", sat, unsat);
    /* β decides what α alone leaves open (every split fixed, still no proof), in fewer nodes; FSB fewer again */
    fprintf(stderr, "beta suite: decided %d %d %d of %d, nodes %ld %ld %ld\n", n_dec[0], n_dec[1], n_dec[2], tried,
            tot[0], tot[1], tot[2]);
    ck_assert_int_gt(n_dec[1], n_dec[0]);
    ck_assert_int_ge(n_dec[2], n_dec[1]);
    ck_assert_int_lt(tot[1], tot[0]);
    ck_assert_int_le(tot[2], tot[1]);
}
END_TEST

Suite *suite_alpha(void)
{
    Suite *s = suite_create("alpha");
    TCase *tc = tcase_create("core");
    lg_tcase_timeout(tc, 600);
    tcase_add_test(tc, test_alpha_sound_for_random_alpha_beta_splits);
    tcase_add_test(tc, test_alpha_gradient);
    tcase_add_test(tc, test_alpha_bab_matches_oracle);
    suite_add_tcase(s, tc);
    return s;
}
