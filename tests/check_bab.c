/* check_bab.c — branch and bound: the work list, α-CROWN soundness and
 * gradient, input and ReLU splitting against the enumeration oracle and
 * both back-ends, determinism across thread counts, a property that needs
 * splitting, the ACAS Xu and VNN-COMP fixtures, the bench command, limits. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/netfile.h"
#include "core/npy.h"
#include "core/clock.h"
#include "oracle.h"
#include "testutil.h"
#include "test_solver.h"
#include "verify/alpha.h"
#include "verify/bab.h"
#include "verify/recheck.h"
#include "verify/verify.h"
#include "verify/vnnlib.h"
#include "verify/worklist.h"
#include "onnx/load.h"


/* ---- work list ---- */

START_TEST(test_bab_worklist_order)
{
    lg_worklist w;
    lg_worklist_init(&w);
    lg_rng r;
    lg_rng_init(&r, 7, 1);
    static int tag[500];
    double key[500];
    for (int i = 0; i < 500; i++) {
        key[i] = (double)lg_rng_below(&r, 40); /* many ties: the id decides */
        tag[i] = i;
        ck_assert_int_eq(lg_worklist_push(&w, key[i], 1000 - i, &tag[i]), LG_OK);
    }
    double last_k = -INFINITY;
    long last_id = -1;
    for (int i = 0; i < 500; i++) {
        int *p = lg_worklist_pop(&w);
        ck_assert_ptr_nonnull(p);
        double k = key[*p];
        long id = 1000 - *p;
        ck_assert_msg(k > last_k || (k == last_k && id > last_id), "pop %d: (%g, %ld) after (%g, %ld)", i, k, id, last_k,
                      last_id);
        last_k = k;
        last_id = id;
    }
    ck_assert_ptr_null(lg_worklist_pop(&w));
    lg_worklist_free(&w);
}
END_TEST

static lg_status lg_tb_count(void *ctx, int i, int thread)
{
    int *hits = ctx;
    hits[i] += 1 + thread * 0; /* each item writes only its own slot */
    return i == 37 ? lg_fail(LG_ERR_ARG, "item 37") : LG_OK;
}

START_TEST(test_bab_worklist_run_every_item_once)
{
    for (int th = 1; th <= 4; th++) {
        int hits[100] = {0};
        lg_status st = lg_worklist_run(100, th, lg_tb_count, hits);
        ck_assert_int_eq(st, LG_ERR_ARG); /* item 37's failure is reported */
        for (int i = 0; i < 100; i++) ck_assert_msg(hits[i] == 1, "threads %d: item %d ran %d times", th, i, hits[i]);
    }
    ck_assert_int_ge(lg_worklist_cores(), 1);
}
END_TEST

/* ---- α-CROWN ---- */

/* A random relu net n_in → h → h → n_out with a box around a random centre,
 * symbolic bounds, and m random objectives. */
typedef struct lg_tb_obj {
    lg_net net;
    double lo[8], hi[8];
    lg_bounds b;
    int m, no;
    double C[4 * 4], d[4];
} lg_tb_obj;

static void lg_tb_obj_make(lg_tb_obj *t, lg_rng *r, int normalise)
{
    int dims[4] = {4, 9, 9, 4};
    ck_assert_int_eq(lg_net_init(&t->net, 3, dims, LG_ACT_RELU), LG_OK);
    lg_test_randomize(&t->net, r, 1.0);
    if (normalise) {
        t->net.in_sub = malloc(4 * sizeof(double));
        t->net.in_div = malloc(4 * sizeof(double));
        for (int i = 0; i < 4; i++) {
            t->net.in_sub[i] = 0.3 * lg_rng_uniform(r);
            t->net.in_div[i] = 0.5 + lg_rng_uniform(r);
        }
    }
    for (int i = 0; i < 4; i++) {
        double c = lg_rng_uniform(r), w = 0.05 + 0.4 * lg_rng_uniform(r);
        t->lo[i] = c - w;
        t->hi[i] = c + w;
    }
    ck_assert_int_eq(lg_bounds_init(&t->b, &t->net), LG_OK);
    ck_assert_int_eq(lg_bounds_symbolic(&t->b, &t->net, t->lo, t->hi), LG_OK);
    t->m = 4;
    t->no = 4;
    for (int k = 0; k < 16; k++) t->C[k] = lg_rng_normal(r);
    for (int k = 0; k < 4; k++) t->d[k] = lg_rng_normal(r);
}

static void lg_tb_obj_free(lg_tb_obj *t)
{
    lg_bounds_free(&t->b);
    lg_net_free(&t->net);
}

/* min over samples (corners and uniform points) of C[r]·y + d[r] */
static void lg_tb_sample_min(const lg_tb_obj *t, lg_rng *r, int n, double *mn)
{
    double x[4], y[4], s[64];
    for (int k = 0; k < t->m; k++) mn[k] = INFINITY;
    for (int q = 0; q < n; q++) {
        for (int i = 0; i < 4; i++) {
            double u = lg_rng_uniform(r);
            if (q % 4 == 0) u = u < 0.5 ? 0 : 1;
            x[i] = u >= 1 ? t->hi[i] : t->lo[i] + u * (t->hi[i] - t->lo[i]);
        }
        lg_net_forward(&t->net, x, y, s);
        for (int k = 0; k < t->m; k++) {
            double v = t->d[k];
            for (int j = 0; j < 4; j++) v += t->C[k * 4 + j] * y[j];
            if (v < mn[k]) mn[k] = v;
        }
    }
}

START_TEST(test_bab_alpha_sound_for_random_slopes)
{
    lg_rng r;
    lg_rng_init(&r, 11, 2);
    int n_inst = lg_test_quick() ? 6 : 20;
    for (int t = 0; t < n_inst; t++) {
        lg_tb_obj o;
        lg_tb_obj_make(&o, &r, t % 2);
        double mn[4], plain[4], ref[4], lb[4];
        lg_tb_sample_min(&o, &r, 400, mn);
        /* α = NULL is the area heuristic: the same bound as bounds.h */
        ck_assert_int_eq(lg_alpha_bound(&o.b, &o.net, 4, o.C, o.d, NULL, plain, NULL, NULL, NULL), LG_OK);
        ck_assert_int_eq(lg_bounds_objective_lower(&o.b, &o.net, 4, o.C, o.d, ref), LG_OK);
        for (int k = 0; k < 4; k++)
            ck_assert_msg(fabs(plain[k] - ref[k]) <= 1e-9 * (1 + fabs(ref[k])), "inst %d row %d: %.17g vs %.17g", t, k,
                          plain[k], ref[k]);
        int size = lg_alpha_size(&o.net);
        double *al = malloc((size_t)(4 * size) * sizeof *al);
        for (int rep = 0; rep < 10; rep++) {
            for (int j = 0; j < 4 * size; j++) al[j] = lg_rng_uniform(&r);
            ck_assert_int_eq(lg_alpha_bound(&o.b, &o.net, 4, o.C, o.d, al, lb, NULL, NULL, NULL), LG_OK);
            for (int k = 0; k < 4; k++)
                ck_assert_msg(lb[k] <= mn[k], "inst %d rep %d row %d: bound %.9g above a sampled value %.9g", t, rep, k,
                              lb[k], mn[k]);
        }
        /* optimised slopes: never below the start, still sound */
        lg_alpha_default(&o.b, &o.net, 4, al);
        ck_assert_int_eq(lg_alpha_optimize(&o.b, &o.net, 4, o.C, o.d, 20, 0.1, NULL, al, lb, NULL), LG_OK);
        for (int k = 0; k < 4; k++) {
            ck_assert_msg(lb[k] >= plain[k], "inst %d row %d: optimised %.9g < plain %.9g", t, k, lb[k], plain[k]);
            ck_assert_msg(lb[k] <= mn[k], "inst %d row %d: optimised bound %.9g above a sample %.9g", t, k, lb[k], mn[k]);
        }
        free(al);
        lg_tb_obj_free(&o);
    }
}
END_TEST

/* The hand-written ∂bound/∂α against central differences (the bound is
 * multilinear in α while the signs of the back-substituted coefficients do
 * not change, so a small step is exact up to rounding). */
START_TEST(test_bab_alpha_gradient)
{
    lg_rng r;
    lg_rng_init(&r, 12, 3);
    int checked = 0;
    for (int t = 0; t < 4; t++) {
        lg_tb_obj o;
        lg_tb_obj_make(&o, &r, t % 2);
        int size = lg_alpha_size(&o.net);
        double *al = malloc((size_t)size * sizeof *al), *g = malloc((size_t)size * sizeof *g);
        for (int j = 0; j < size; j++) al[j] = 0.2 + 0.6 * lg_rng_uniform(&r);
        double v0, vp, vm;
        ck_assert_int_eq(lg_alpha_bound(&o.b, &o.net, 1, o.C, o.d, al, &v0, NULL, NULL, g), LG_OK);
        for (int j = 0; j < size; j++) {
            double a = al[j], h = 1e-6;
            al[j] = a + h;
            lg_alpha_bound(&o.b, &o.net, 1, o.C, o.d, al, &vp, NULL, NULL, NULL);
            al[j] = a - h;
            lg_alpha_bound(&o.b, &o.net, 1, o.C, o.d, al, &vm, NULL, NULL, NULL);
            al[j] = a;
            double fd = (vp - vm) / (2 * h);
            ck_assert_msg(fabs(fd - g[j]) <= 1e-5 * (1 + fabs(fd)), "inst %d slope %d: grad %.9g, differences %.9g", t,
                          j, g[j], fd);
            checked += g[j] != 0;
        }
        free(al);
        free(g);
        lg_tb_obj_free(&o);
    }
    ck_assert_int_gt(checked, 0); /* some slopes matter */
}
END_TEST

/* ---- against the oracle and the back-ends ---- */

static lg_bab_opts lg_tb_opts(lg_bab_mode mode, const char *solver, int threads)
{
    lg_bab_opts o = lg_bab_opts_default();
    o.mode = mode;
    o.solver = lg_test_solver(solver);
    o.threads = threads;
    o.max_nodes = 200000;
    return o;
}

/* Run one back-end on the instance: LG_ANSWER_* (UNKNOWN if it gave up). */
static lg_answer lg_tb_backend(const char *name, const lg_test_inst *in)
{
    const lg_solver_ops *ops = lg_solver_find(name);
    ck_assert_ptr_nonnull(ops);
    lg_solve_opts so = lg_solve_opts_default();
    so.run.deadline = lg_now() + 30;
    lg_result res;
    memset(&res, 0, sizeof res);
    lg_status st = ops->solve(&in->prob, &so, &res);
    lg_answer a = st == LG_OK ? res.answer : LG_ANSWER_UNKNOWN;
    lg_result_free(&res);
    return a;
}

/* Compare BaB in `mode` (with `solver` for small nodes) with the oracle and
 * both back-ends on n random instances of shape s. Returns how many BaB
 * decided; every decided answer must match the oracle; a FOUND x must
 * re-check. */
static int lg_tb_against_oracle(const lg_test_shape *s, int n, unsigned seed, lg_bab_mode mode, const char *solver,
                                int *n_sat, int *n_unsat)
{
    lg_rng r;
    lg_rng_init(&r, seed, 5);
    int decided = 0, tried = 0;
    for (int t = 0; t < n; t++) {
        lg_test_inst in;
        ck_assert_int_eq(lg_test_inst_random(&in, &r, s), LG_OK);
        lg_answer ans;
        lg_status st = lg_oracle_solve(&in.prob, &ans, NULL, NULL);
        if (st == LG_ERR_ARG) { /* more than 12 unstable: no oracle */
            lg_test_inst_free(&in);
            continue;
        }
        ck_assert_int_eq(st, LG_OK);
        tried++;
        lg_bab_opts o = lg_tb_opts(mode, solver, 1);
        lg_runctx run = lg_runctx_start(60, (uint64_t)t, 0, 0);
        lg_bab_out out;
        double x[32];
        ck_assert_int_eq(lg_bab_run(&in.net, in.lo, in.hi, in.n_terms, in.terms, NULL, &o, &run, &out, x), LG_OK);
        if (out.answer == LG_BAB_PROVED)
            ck_assert_msg(ans == LG_ANSWER_UNSAT, "seed %u inst %d: bab proved, oracle sat", seed, t);
        if (out.answer == LG_BAB_FOUND) {
            ck_assert_msg(ans == LG_ANSWER_SAT, "seed %u inst %d: bab found a counterexample, oracle unsat", seed, t);
            ck_assert_int_eq(lg_recheck(&in.net, in.lo, in.hi, in.n_terms, in.terms, x, NULL), 1);
        }
        decided += out.answer != LG_BAB_OPEN;
        *n_sat += out.answer == LG_BAB_FOUND;
        *n_unsat += out.answer == LG_BAB_PROVED;
        /* the two back-ends agree with the oracle wherever they decide (every third instance, every sixth
         * under LG_TEST_QUICK: the back-ends have their own oracle suites) */
        static const char *const be[] = {"glpk", "z3"};
        for (int k = 0; k < 2 && t % (lg_test_quick() ? 6 : 3) == 0; k++) {
            lg_answer a = lg_tb_backend(be[k], &in);
            if (a != LG_ANSWER_UNKNOWN) ck_assert_msg(a == ans, "%s disagrees with the oracle on inst %d", be[k], t);
        }
        lg_test_inst_free(&in);
    }
    ck_assert_int_gt(tried, 0);
    return decided;
}

START_TEST(test_bab_input_split_matches_oracle)
{
    int n = lg_test_quick() ? 12 : 40, sat = 0, unsat = 0;
    lg_test_shape s2 = {2, {3, 6, 3}, 0.4, 0};
    lg_test_shape s3 = {3, {2, 5, 5, 3}, 0.5, 1};
    /* pure branch and bound (no back-end): complete on these nets */
    int d2 = lg_tb_against_oracle(&s2, n, 41, LG_BAB_INPUT, "none", &sat, &unsat);
    int d3 = lg_tb_against_oracle(&s3, n, 42, LG_BAB_INPUT, "none", &sat, &unsat);
    ck_assert_msg(d2 >= n * 9 / 10 && d3 >= n * 9 / 10, "input splitting decided %d and %d of %d", d2, d3, n);
    /* with back-ends closing small nodes */
    lg_tb_against_oracle(&s3, n / 2, 43, LG_BAB_INPUT, "glpk", &sat, &unsat);
    lg_tb_against_oracle(&s3, n / 2, 44, LG_BAB_INPUT, "z3", &sat, &unsat);
    ck_assert_msg(sat > 0 && unsat > 0, "both verdicts occur: %d sat, %d unsat", sat, unsat);
}
END_TEST

START_TEST(test_bab_relu_split_matches_oracle)
{
    int n = lg_test_quick() ? 10 : 30, sat = 0, unsat = 0;
    lg_test_shape hi_dim = {3, {20, 6, 5, 3}, 0.08, 0};
    lg_test_shape lo_dim = {3, {3, 5, 5, 3}, 0.5, 1};
    /* ReLU splitting alone: sound (it may stop with nothing left to split) */
    lg_tb_against_oracle(&hi_dim, n, 51, LG_BAB_RELU, "none", &sat, &unsat);
    lg_tb_against_oracle(&lo_dim, n, 52, LG_BAB_RELU, "none", &sat, &unsat);
    /* with a back-end for nodes with ≤ 12 unstable ReLUs: complete */
    int d1 = lg_tb_against_oracle(&hi_dim, n, 53, LG_BAB_RELU, "glpk", &sat, &unsat);
    int d2 = lg_tb_against_oracle(&lo_dim, n, 54, LG_BAB_RELU, "auto", &sat, &unsat);
    ck_assert_msg(d1 >= n * 9 / 10 && d2 >= n * 9 / 10, "relu splitting + back-end decided %d and %d of %d", d1, d2, n);
    ck_assert_msg(sat > 0 && unsat > 0, "both verdicts occur: %d sat, %d unsat", sat, unsat);
}
END_TEST

/* Branch and bound on nets with max-pool nodes, on the nodes themselves
 * (DESIGN.md §1 "The max-pool node"): random DAGs with max-pool nodes
 * (overlapping and gapped windows, −∞ padding), ReLU and input splitting
 * with no back-end against the exact oracle (on the ReLU form); every
 * counterexample is exact on the node net. The difference bounds x_q − x_p
 * of the windows (bounds.h) must tighten some objective bound over the
 * interval ends alone, and splitting must decide some case the root bound
 * leaves open. */
START_TEST(test_bab_maxpool_matches_oracle)
{
    lg_rng r;
    lg_rng_init(&r, 4242u, 5);
    int n_nets = lg_test_quick() ? 60 : 160, with_max = 0, decided = 0, split_decided = 0, sat = 0, unsat = 0;
    for (int t = 0; t < n_nets; t++) {
        lg_test_dag_opts go = {.max_nodes = 2 + t % 3, .max_width = 4, .conv = 1, .act = LG_ACT_RELU, .maxpool = 1};
        lg_test_inst in;
        if (lg_test_inst_random_dag(&in, &r, &go) != LG_OK) { /* a draw the generator refuses */
            lg_net_free(&in.net);
            continue;
        }
        const lg_net *net = &in.net;
        lg_answer ans;
        if (lg_net_has_max(net) && t % 2) { /* half the nets: a thin true margin, which splitting has to find */
            mpq_t gap;
            mpq_init(gap);
            if (lg_oracle_gap(&in.prob, gap, NULL, NULL) == LG_OK) {
                double g = mpq_get_d(gap), sh = g - (0.05 * fabs(g) + 1e-3);
                for (int q = 0; q < in.n_terms; q++)
                    for (int c = 0; c < in.terms[q].n_cons; c++) in.terms[q].cons[c].d -= sh;
            }
            mpq_clear(gap);
        }
        if (!lg_net_has_max(net) || lg_oracle_solve(&in.prob, &ans, NULL, NULL) != LG_OK) {
            lg_test_inst_free(&in);
            continue;
        }
        with_max++;
        for (int mode = 0; mode < 2; mode++) {
            lg_bab_opts o = lg_tb_opts(mode ? LG_BAB_INPUT : LG_BAB_RELU, "none", 1);
            o.max_nodes = 20000;
            lg_runctx run = lg_runctx_start(30, (uint64_t)t, 0, 0);
            lg_bab_out out;
            double x[64];
            ck_assert_int_eq(lg_bab_run(net, in.lo, in.hi, in.n_terms, in.terms, NULL, &o, &run, &out, x), LG_OK);
            if (out.answer == LG_BAB_PROVED)
                ck_assert_msg(ans == LG_ANSWER_UNSAT, "net %d mode %d: bab proved, oracle sat", t, mode);
            if (out.answer == LG_BAB_FOUND) {
                ck_assert_msg(ans == LG_ANSWER_SAT, "net %d mode %d: bab found a counterexample, oracle unsat", t, mode);
                ck_assert_int_eq(lg_recheck(net, in.lo, in.hi, in.n_terms, in.terms, x, NULL), 1);
                lg_net low; /* the oracle's exact forward pass takes the ReLU form, the same function */
                ck_assert_int_eq(lg_net_lower_max(&low, net, 0), LG_OK);
                lg_problem pl = in.prob;
                pl.net = &low;
                pl.pre_lo = pl.pre_hi = NULL;
                ck_assert_msg(lg_oracle_is_counterexample(&pl, x), "net %d: the counterexample is not exact", t);
                lg_net_free(&low);
            }
            decided += out.answer != LG_BAB_OPEN;
            split_decided += out.answer == LG_BAB_PROVED && out.nodes > 1;
            sat += out.answer == LG_BAB_FOUND;
            unsat += out.answer == LG_BAB_PROVED;
        }
        lg_test_inst_free(&in);
    }
    ck_assert_int_gt(with_max, 5);
    ck_assert_msg(decided >= with_max, "decided %d of %d runs on %d nets", decided, 2 * with_max, with_max);
    ck_assert_msg(sat > 0 && unsat > 0, "both verdicts occur: %d sat, %d unsat", sat, unsat);
    ck_assert_msg(split_decided > 0, "no proof needed splitting (%d nets, %d decided, %d sat, %d unsat)", with_max, decided, sat, unsat);
}
END_TEST

/* The back-substituted difference bounds of max-pool windows (bounds.h) on
 * the PyTorch fixtures (Conv+ReLU+MaxPool, Conv+MaxPool; boxes around their
 * inputs): the objective bounds they give are below the value at sampled
 * points, and tighter than with the interval ends alone on more objectives
 * than they are looser. */
START_TEST(test_bab_maxpool_differences)
{
    static const char *names[] = {"relu_pool", "conv_pool"};
    char path[600];
    lg_npy X;
    snprintf(path, sizeof path, "%s/maxpool/X.npy", LG_FIXTURES);
    ck_assert_msg(lg_npy_load(&X, path) == LG_OK, "%s", lg_errmsg());
    lg_rng r;
    lg_rng_init(&r, 77u, 5);
    int tighter = 0, looser = 0, with_p = 0;
    for (size_t v = 0; v < sizeof names / sizeof names[0]; v++) {
        lg_net net;
        snprintf(path, sizeof path, "%s/maxpool/%s.onnx", LG_FIXTURES, names[v]);
        ck_assert_msg(lg_net_load(&net, path) == LG_OK, "%s: %s", names[v], lg_errmsg());
        int ni = net.n_in, no = lg_net_n_out(&net);
        double *lo = malloc(3 * (size_t)ni * sizeof *lo), *hi = lo + ni, *x = hi + ni;
        double *scr = malloc(2 * (size_t)lg_net_max_width(&net) * sizeof *scr), y[16], C[8 * 16], d[8] = {0};
        double v1[8], v0[8];
        ck_assert_int_le(no, 16);
        for (size_t row = 0; row < X.n; row++) {
            double eps = 0.02 * (1 + (double)(row % 3));
            for (int i = 0; i < ni; i++) lo[i] = X.data[row * X.cols + (size_t)i] - eps, hi[i] = lo[i] + 2 * eps;
            lg_bounds b, b0;
            ck_assert_int_eq(lg_bounds_init(&b, &net), LG_OK);
            ck_assert_int_eq(lg_bounds_symbolic(&b, &net, lo, hi), LG_OK);
            ck_assert_int_eq(lg_bounds_init(&b0, &net), LG_OK);
            ck_assert_int_eq(lg_bounds_symbolic(&b0, &net, lo, hi), LG_OK);
            for (int k = 0; k < net.n_layers; k++) /* b0: the same bounds without the differences */
                if (b0.dlo[k]) {
                    size_t nk = (size_t)(b0.dhi[k] - b0.dlo[k]);
                    for (size_t q = 0; q < nk; q++) b0.dlo[k][q] = -INFINITY, b0.dhi[k][q] = INFINITY;
                    for (int o = 0; o < b0.width[k]; o++) with_p += b0.dref[k][o] >= 0, b0.dref[k][o] = -1;
                }
            for (int q = 0; q < 8 * no; q++) C[q] = lg_rng_uniform(&r) * 2 - 1;
            ck_assert_int_eq(lg_bounds_objective_lower(&b, &net, 8, C, d, v1), LG_OK);
            ck_assert_int_eq(lg_bounds_objective_lower(&b0, &net, 8, C, d, v0), LG_OK);
            for (int q = 0; q < 8; q++) tighter += v1[q] > v0[q] + 1e-12, looser += v1[q] < v0[q] - 1e-12;
            for (int p = 0; p < 50; p++) { /* sound at sampled points */
                for (int i = 0; i < ni; i++) x[i] = lo[i] + (hi[i] - lo[i]) * (p < 2 ? p : lg_rng_uniform(&r));
                lg_net_forward(&net, x, y, scr);
                for (int q = 0; q < 8; q++) {
                    double val = 0;
                    for (int j = 0; j < no; j++) val += C[q * no + j] * y[j];
                    ck_assert_msg(v1[q] <= val + 1e-9, "%s row %zu objective %d: bound %.17g above %.17g", names[v], row,
                                  q, v1[q], val);
                }
            }
            lg_bounds_free(&b0);
            lg_bounds_free(&b);
        }
        free(lo);
        free(scr);
        lg_net_free(&net);
    }
    lg_npy_free(&X);
    ck_assert_int_gt(with_p, 0);
    ck_assert_msg(tighter > looser, "difference bounds: %d objectives tighter, %d looser", tighter, looser);
}
END_TEST

/* The sub-domain attacks' back-off (lg_bab_attack_round): input splitting
 * attacks in every round; ReLU splitting in the first LG_BAB_ATTACK_BACKOFF
 * rounds, then with gaps that never shrink, never exceed
 * LG_BAB_ATTACK_GAP_MAX and reach it, so that a long search attacks in
 * fewer rounds but still in every stretch of LG_BAB_ATTACK_GAP_MAX rounds. */
START_TEST(test_bab_attack_backoff)
{
    long next = 0, done = 0, R = 400;
    for (long r = 0; r < R; r++) ck_assert_int_eq(lg_bab_attack_round(LG_BAB_INPUT, r, &next, &done), 1);
    next = done = 0;
    long last = -1, gap = 0, n = 0, max_gap = 0;
    for (long r = 0; r < R; r++) {
        if (!lg_bab_attack_round(LG_BAB_RELU, r, &next, &done)) continue;
        if (r < LG_BAB_ATTACK_BACKOFF) ck_assert_int_eq(r, n); /* every one of the first rounds */
        if (last >= 0) {
            ck_assert_msg(r - last >= gap, "round %ld: gap %ld after %ld", r, r - last, gap);
            ck_assert_int_le(r - last, LG_BAB_ATTACK_GAP_MAX);
            gap = r - last;
            if (gap > max_gap) max_gap = gap;
        }
        last = r;
        n++;
    }
    ck_assert_int_eq(done, n);
    ck_assert_int_eq(max_gap, LG_BAB_ATTACK_GAP_MAX);
    ck_assert_int_lt(n, R / 4);
    ck_assert_int_le(R - last, LG_BAB_ATTACK_GAP_MAX);
}
END_TEST

/* The answer and, without a deadline, the node count do not depend on the
 * number of threads. */
START_TEST(test_bab_threads_deterministic)
{
    lg_rng r;
    lg_rng_init(&r, 61, 7);
    lg_test_shape s = {3, {3, 8, 8, 3}, 0.5, 0};
    int n = lg_test_quick() ? 4 : 10, split = 0;
    for (int t = 0; t < n; t++) {
        lg_test_inst in;
        ck_assert_int_eq(lg_test_inst_random(&in, &r, &s), LG_OK);
        lg_bab_answer a0 = LG_BAB_OPEN;
        long nodes0 = 0;
        for (int th = 1; th <= 3; th++) {
            for (int mode = LG_BAB_INPUT; mode <= LG_BAB_RELU; mode++) {
                lg_bab_opts o = lg_tb_opts((lg_bab_mode)mode, mode == LG_BAB_RELU ? "glpk" : "none", th);
                lg_runctx run = lg_runctx_none();
                o.max_nodes = 20000;
                o.solver_unstable = 4;
                lg_bab_out out;
                double x[3];
                ck_assert_int_eq(lg_bab_run(&in.net, in.lo, in.hi, in.n_terms, in.terms, NULL, &o, &run, &out, x), LG_OK);
                if (mode == LG_BAB_INPUT) {
                    if (th == 1) {
                        a0 = out.answer;
                        nodes0 = out.nodes;
                        split += out.nodes > 1;
                    } else {
                        ck_assert_msg(out.answer == a0 && out.nodes == nodes0,
                                      "inst %d, %d threads: answer %d nodes %ld; 1 thread: %d, %ld", t, th,
                                      (int)out.answer, out.nodes, (int)a0, nodes0);
                    }
                } else if (a0 != LG_BAB_OPEN && out.answer != LG_BAB_OPEN) {
                    ck_assert_int_eq(out.answer, a0);
                }
            }
        }
        lg_test_inst_free(&in);
    }
    ck_assert_int_gt(split, 0); /* some instance needed more than the root */
}
END_TEST

/* A tiny network whose property single-shot bounds cannot prove but branch
 * and bound can (the oracle confirms it holds). Found by a seeded search over
 * small random instances; both facts are asserted. */
START_TEST(test_bab_needs_splitting)
{
    lg_rng r;
    lg_rng_init(&r, 71, 8);
    lg_test_shape s = {3, {2, 5, 5, 3}, 0.5, 0};
    int found = 0;
    for (int t = 0; t < 200 && !found; t++) {
        lg_test_inst in;
        ck_assert_int_eq(lg_test_inst_random(&in, &r, &s), LG_OK);
        lg_answer ans;
        if (lg_oracle_solve(&in.prob, &ans, NULL, NULL) != LG_OK || ans != LG_ANSWER_UNSAT) {
            lg_test_inst_free(&in);
            continue;
        }
        /* single shot: symbolic bounds, then α-CROWN on every constraint */
        lg_bounds b;
        ck_assert_int_eq(lg_bounds_init(&b, &in.net), LG_OK);
        ck_assert_int_eq(lg_bounds_symbolic(&b, &in.net, in.lo, in.hi), LG_OK);
        int refuted = 0;
        for (int k = 0; k < in.n_terms; k++) {
            int m = in.terms[k].n_cons, no = lg_net_n_out(&in.net), any = 0;
            for (int q = 0; q < m; q++) {
                double lb, *al = malloc((size_t)lg_alpha_size(&in.net) * sizeof *al);
                lg_alpha_default(&b, &in.net, 1, al);
                ck_assert_int_eq(lg_alpha_optimize(&b, &in.net, 1, in.terms[k].cons[q].coef, &in.terms[k].cons[q].d, 50,
                                                   0.1, NULL, al, &lb, NULL),
                                 LG_OK);
                free(al);
                any |= lb > 0;
                (void)no;
            }
            refuted += any;
        }
        lg_bounds_free(&b);
        if (refuted < in.n_terms) { /* the single shot leaves a term open */
            lg_bab_opts o = lg_tb_opts(LG_BAB_INPUT, "none", 1);
            lg_runctx run = lg_runctx_start(60, 1, 0, 0);
            lg_bab_out out;
            double x[2];
            ck_assert_int_eq(lg_bab_run(&in.net, in.lo, in.hi, in.n_terms, in.terms, NULL, &o, &run, &out, x), LG_OK);
            if (out.answer == LG_BAB_PROVED) {
                found = 1;
                ck_assert_int_gt(out.nodes, 1);
                /* through the driver: --bab none with bounds only is not a proof, --bab input is */
                lg_prop p;
                memset(&p, 0, sizeof p);
                p.n_in = 2;
                p.n_out = 3;
                p.n_cases = 1;
                lg_prop_case pc = {in.lo, in.hi, in.n_terms, in.terms};
                p.cases = &pc;
                lg_verify_opts vo = lg_verify_opts_default();
                vo.solver = lg_test_solver("none");
                vo.bab.mode = LG_BAB_NONE;
                lg_verify_report rep;
                ck_assert_int_eq(lg_verify_run(&in.net, &p, &vo, &rep), LG_OK);
                ck_assert_int_eq(rep.verdict, LG_VERDICT_UNKNOWN);
                lg_verify_report_free(&rep);
                vo.bab.mode = LG_BAB_INPUT;
                ck_assert_int_eq(lg_verify_run(&in.net, &p, &vo, &rep), LG_OK);
                ck_assert_int_eq(rep.verdict, LG_VERDICT_ROBUST);
                ck_assert_int_gt(rep.bab_nodes, 1);
                lg_verify_report_free(&rep);
            }
        }
        lg_test_inst_free(&in);
    }
    ck_assert_msg(found, "no instance needed splitting");
}
END_TEST

/* A union of input boxes (two cases) through the driver: the verdict of the
 * union equals the oracle's on the whole box, and a counterexample lies in
 * the case it is reported for. */
START_TEST(test_bab_union_of_boxes)
{
    lg_rng r;
    lg_rng_init(&r, 81, 9);
    lg_test_shape s = {3, {3, 5, 5, 3}, 0.5, 0};
    int n = lg_test_quick() ? 8 : 20, decided = 0;
    for (int t = 0; t < n; t++) {
        lg_test_inst in;
        ck_assert_int_eq(lg_test_inst_random(&in, &r, &s), LG_OK);
        lg_answer ans;
        if (lg_oracle_solve(&in.prob, &ans, NULL, NULL) != LG_OK) {
            lg_test_inst_free(&in);
            continue;
        }
        int d = (int)lg_rng_below(&r, 3);
        double mid = in.lo[d] + 0.5 * (in.hi[d] - in.lo[d]);
        double lo0[3], hi0[3], lo1[3], hi1[3];
        memcpy(lo0, in.lo, sizeof lo0);
        memcpy(hi0, in.hi, sizeof hi0);
        memcpy(lo1, in.lo, sizeof lo1);
        memcpy(hi1, in.hi, sizeof hi1);
        hi0[d] = mid;
        lo1[d] = mid;
        lg_prop_case pc[2] = {{lo0, hi0, in.n_terms, in.terms}, {lo1, hi1, in.n_terms, in.terms}};
        lg_prop p = {3, 3, 2, pc, NULL, NULL};
        lg_verify_opts vo = lg_verify_opts_default();
        vo.solver = lg_test_solver("none");
        vo.bab.mode = LG_BAB_INPUT;
        vo.bab.threads = 2;
        lg_verify_report rep;
        ck_assert_int_eq(lg_verify_run(&in.net, &p, &vo, &rep), LG_OK);
        if (rep.verdict == LG_VERDICT_ROBUST) ck_assert_msg(ans == LG_ANSWER_UNSAT, "inst %d: union robust, oracle sat", t);
        if (rep.verdict == LG_VERDICT_VIOLATED) {
            ck_assert_msg(ans == LG_ANSWER_SAT, "inst %d: union violated, oracle unsat", t);
            ck_assert(lg_prop_case_contains(&p, rep.violated_case, rep.x));
        }
        decided += rep.verdict != LG_VERDICT_UNKNOWN;
        lg_verify_report_free(&rep);
        lg_test_inst_free(&in);
    }
    ck_assert_int_ge(decided, n * 8 / 10);
}
END_TEST

/* The memory guard: with room for only a few open nodes the search goes
 * depth first, keeps the list short and reaches the same verdict. */
START_TEST(test_bab_memory_guard)
{
    lg_net net;
    ck_assert_int_eq(lg_net_load(&net, lg_test_fixture("acasxu/ACASXU_run2a_1_1_batch_2000.onnx")), LG_OK);
    lg_prop p;
    ck_assert_int_eq(lg_vnnlib_read(&p, lg_test_fixture("acasxu/prop_2.vnnlib"), 5, 5), LG_OK);
    const lg_prop_case *C = &p.cases[0];
    double x[5];
    lg_bab_out big, small;
    lg_bab_opts o = lg_tb_opts(LG_BAB_INPUT, "glpk", 2);
    lg_runctx run = lg_runctx_start(120, 1, 0, 0);
    ck_assert_int_eq(lg_bab_run(&net, C->lo, C->hi, C->n_terms, C->terms, NULL, &o, &run, &big, x), LG_OK);
    o.max_queue_mb = 0.25; /* ~50 ACAS Xu nodes */
    ck_assert_int_eq(lg_bab_run(&net, C->lo, C->hi, C->n_terms, C->terms, NULL, &o, &run, &small, x), LG_OK);
    ck_assert_int_eq(big.answer, LG_BAB_PROVED);
    ck_assert_int_eq(small.answer, LG_BAB_PROVED);
    size_t node = sizeof(double) * (10 + 2 * 305);
    /* past the cap it grows by at most one batch per level */
    ck_assert_int_le(small.peak_open, (long)((1 << 18) / node) + (long)(small.max_depth + 1) * o.batch);
    ck_assert_int_lt(small.peak_open, big.peak_open);
    fprintf(stderr, "memory guard: peak open nodes %ld (best first) vs %ld (0.25 MB)\n", big.peak_open, small.peak_open);
    /* a memory cap (--memory) below what the search needs: it stops, OPEN for lack of memory,
     * with the list within the cap (one round of children past the depth-first guard) */
    lg_bab_out capped;
    o = lg_tb_opts(LG_BAB_INPUT, "glpk", 2);
    lg_runctx tiny = lg_runctx_start(120, 1, 0, 0.05);
    ck_assert_int_eq(lg_bab_run(&net, C->lo, C->hi, C->n_terms, C->terms, NULL, &o, &tiny, &capped, x), LG_OK);
    ck_assert_msg(capped.answer == LG_BAB_OPEN && capped.out_of_memory && strstr(capped.how.reason, "memory"),
                  "answer %d, out_of_memory %d, reason '%s' (peak %ld open)", capped.answer, capped.out_of_memory,
                  capped.how.reason, capped.peak_open);
    ck_assert_int_le(capped.peak_open, 32 + 2 * o.batch + 1);
    ck_assert_int_lt(capped.nodes, big.nodes);
    lg_prop_free(&p);
    /* refuting a conjunction by a combination of its constraints saves nodes, same verdict */
    ck_assert_int_eq(lg_vnnlib_read(&p, lg_test_fixture("acasxu/prop_4.vnnlib"), 5, 5), LG_OK);
    C = &p.cases[0];
    lg_bab_out with, without;
    o = lg_tb_opts(LG_BAB_INPUT, "glpk", 2);
    run = lg_runctx_start(60, 1, 0, 0);
    ck_assert_int_eq(lg_bab_run(&net, C->lo, C->hi, C->n_terms, C->terms, NULL, &o, &run, &with, x), LG_OK);
    o.conj = 0;
    ck_assert_int_eq(lg_bab_run(&net, C->lo, C->hi, C->n_terms, C->terms, NULL, &o, &run, &without, x), LG_OK);
    ck_assert_int_eq(with.answer, LG_BAB_PROVED);
    ck_assert_int_eq(without.answer, LG_BAB_PROVED);
    ck_assert_int_lt(with.nodes, without.nodes);
    lg_prop_free(&p);
    lg_net_free(&net);
}
END_TEST

/* ---- fixtures ---- */

static lg_verdict lg_tb_run_fixture(const lg_net *net, const char *prop, double timeout, lg_bab_mode mode,
                                    lg_verify_report *rep)
{
    lg_prop p;
    ck_assert_msg(lg_vnnlib_read(&p, lg_test_fixture(prop), net->n_in, lg_net_n_out(net)) == LG_OK, "%s: %s", prop,
                  lg_errmsg());
    lg_verify_opts o = lg_verify_opts_default();
    o.timeout_s = timeout;
    o.bab.mode = mode;
    ck_assert_int_eq(lg_verify_run(net, &p, &o, rep), LG_OK);
    if (rep->verdict == LG_VERDICT_VIOLATED) {
        const lg_prop_case *C = &p.cases[rep->violated_case];
        ck_assert_int_eq(lg_recheck(net, C->lo, C->hi, C->n_terms, C->terms, rep->x, NULL), 1);
    }
    lg_prop_free(&p);
    return rep->verdict;
}

START_TEST(test_bab_acasxu_fixtures)
{
    /* fast: decided in well under a second on one core in Release */
    static const struct {
        const char *net, *prop;
        lg_verdict known;
        int fast;
    } inst[] = {
        {"acasxu/ACASXU_run2a_1_1_batch_2000.onnx", "acasxu/prop_1.vnnlib", LG_VERDICT_ROBUST, 1},
        {"acasxu/ACASXU_run2a_1_1_batch_2000.onnx", "acasxu/prop_2.vnnlib", LG_VERDICT_ROBUST, 1},
        {"acasxu/ACASXU_run2a_1_1_batch_2000.onnx", "acasxu/prop_4.vnnlib", LG_VERDICT_ROBUST, 1},
        {"acasxu/ACASXU_run2a_1_7_batch_2000.onnx", "acasxu/prop_1.vnnlib", LG_VERDICT_ROBUST, 1},
        {"acasxu/ACASXU_run2a_1_7_batch_2000.onnx", "acasxu/prop_2.vnnlib", LG_VERDICT_ROBUST, 1},
        {"acasxu/ACASXU_run2a_1_7_batch_2000.onnx", "acasxu/prop_3.vnnlib", LG_VERDICT_VIOLATED, 1},
        {"acasxu/ACASXU_run2a_1_7_batch_2000.onnx", "acasxu/prop_4.vnnlib", LG_VERDICT_VIOLATED, 1},
        {"acasxu/ACASXU_run2a_1_1_batch_2000.onnx", "acasxu/prop_3.vnnlib", LG_VERDICT_ROBUST, 0},
    };
    for (size_t i = 0; i < sizeof inst / sizeof inst[0]; i++) {
        lg_net net;
        ck_assert_int_eq(lg_net_load(&net, lg_test_fixture(inst[i].net)), LG_OK);
        lg_verify_report rep;
        /* the slow one gets a short timeout: known verdict or unknown */
        lg_verdict v = lg_tb_run_fixture(&net, inst[i].prop, inst[i].fast ? 120 : 3, LG_BAB_AUTO, &rep);
        fprintf(stderr, "fixture %s %s: %s%s%s%s by %s in %.2f s, %ld nodes\n", inst[i].net + 7, inst[i].prop + 7,
                lg_verdict_name(v), rep.how.reason[0] ? " (" : "", rep.how.reason, rep.how.reason[0] ? ")" : "", rep.method,
                rep.seconds, rep.bab_nodes);
        ck_assert_msg(v == inst[i].known || v == LG_VERDICT_UNKNOWN, "%s %s: %s, known %s", inst[i].net, inst[i].prop,
                      lg_verdict_name(v), lg_verdict_name(inst[i].known));
        if (inst[i].fast && !lg_test_quick())
            ck_assert_msg(v == inst[i].known, "%s %s: not decided (%s)", inst[i].net, inst[i].prop, rep.how.reason);
        lg_verify_report_free(&rep);
        lg_net_free(&net);
    }
}
END_TEST

/* Without the driver's attack: branch and bound alone finds the ACAS Xu
 * counterexamples (relaxed minimisers and the local attack in the nodes). */
START_TEST(test_bab_acasxu_finds_counterexamples)
{
    lg_net net;
    ck_assert_int_eq(lg_net_load(&net, lg_test_fixture("acasxu/ACASXU_run2a_1_7_batch_2000.onnx")), LG_OK);
    static const char *const props[] = {"acasxu/prop_3.vnnlib", "acasxu/prop_4.vnnlib"};
    for (int i = 0; i < 2; i++) {
        lg_prop p;
        ck_assert_int_eq(lg_vnnlib_read(&p, lg_test_fixture(props[i]), 5, 5), LG_OK);
        const lg_prop_case *C = &p.cases[0];
        double x[5];
        lg_bab_out out;
        lg_bab_opts o = lg_tb_opts(LG_BAB_INPUT, "none", 2);
        lg_runctx run = lg_runctx_start(60, 1, 0, 0);
        ck_assert_int_eq(lg_bab_run(&net, C->lo, C->hi, C->n_terms, C->terms, NULL, &o, &run, &out, x), LG_OK);
        ck_assert_msg(out.answer == LG_BAB_FOUND, "%s: answer %d (%s)", props[i], (int)out.answer, out.how.reason);
        ck_assert_int_eq(lg_recheck(&net, C->lo, C->hi, C->n_terms, C->terms, x, NULL), 1);
        lg_prop_free(&p);
    }
    lg_net_free(&net);
}
END_TEST

START_TEST(test_bab_vnncomp_fixtures)
{
    static const struct {
        const char *prop;
        lg_verdict known;
    } inst[] = {
        {"vnncomp/prop_1_0.05.vnnlib", LG_VERDICT_VIOLATED},
        {"vnncomp/prop_2_0.05.vnnlib", LG_VERDICT_VIOLATED},
        {"vnncomp/prop_3_0.05.vnnlib", LG_VERDICT_ROBUST},
        {"vnncomp/prop_7_0.03.vnnlib", LG_VERDICT_ROBUST},
    };
    lg_net net;
    ck_assert_int_eq(lg_net_load(&net, lg_test_fixture("vnncomp/mnist-net_256x2.onnx")), LG_OK);
    for (size_t i = 0; i < 4; i++) {
        lg_verify_report rep;
        lg_verdict v = lg_tb_run_fixture(&net, inst[i].prop, 120, LG_BAB_RELU, &rep);
        ck_assert_str_eq(rep.bab_mode, "relu");
        ck_assert_msg(v != LG_VERDICT_UNKNOWN || lg_test_quick(), "%s: unknown (%s)", inst[i].prop, rep.how.reason);
        ck_assert_msg(v == inst[i].known || v == LG_VERDICT_UNKNOWN, "%s: %s", inst[i].prop, lg_verdict_name(v));
        lg_verify_report_free(&rep);
    }
    lg_net_free(&net);
}
END_TEST

/* ---- the bench command ---- */


/* An instances.csv (relative paths: symlinks to the fixtures), the result
 * files and results.csv with the known verdicts. */
START_TEST(test_bab_bench_command)
{
    char dir[512], out[600], path[700], target[700];
    snprintf(dir, sizeof dir, "%s", lg_test_tmpfile("_bench"));
    ck_assert_int_eq(mkdir(dir, 0777), 0);
    static const char *const links[][2] = {
        {"acas17.onnx", "acasxu/ACASXU_run2a_1_7_batch_2000.onnx"},
        {"p1.vnnlib", "acasxu/prop_1.vnnlib"},
        {"p3.vnnlib", "acasxu/prop_3.vnnlib"},
        {"mnist.onnx", "vnncomp/mnist-net_256x2.onnx"},
        {"m7.vnnlib", "vnncomp/prop_7_0.03.vnnlib"},
    };
    for (size_t i = 0; i < 5; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, links[i][0]);
        snprintf(target, sizeof target, "%s", lg_test_fixture(links[i][1]));
        ck_assert_int_eq(symlink(target, path), 0);
    }
    snprintf(path, sizeof path, "%s/instances.csv", dir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    /* a .gz name falls back to the plain file; comments and blank lines are skipped */
    fprintf(f, "# onnx,vnnlib,timeout\nacas17.onnx,p1.vnnlib,60\n\nacas17.onnx,p3.vnnlib.gz,60\n mnist.onnx , m7.vnnlib , 60\n");
    fclose(f);
    snprintf(out, sizeof out, "%s/res", dir);
    char args[2048];
    snprintf(args, sizeof args, "bench '%s' --out '%s' -j 2", dir, out);
    ck_assert_int_eq(lg_test_cli(args, NULL), 0);
    static const char *const expect[][2] = {
        {"acas17__p1", "unsat"}, {"acas17__p3", "sat"}, {"mnist__m7", "unsat"}};
    for (size_t i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s/%s.txt", out, expect[i][0]);
        f = fopen(path, "r");
        ck_assert_msg(f != NULL, "%s missing", path);
        char word[32] = "";
        ck_assert_int_eq(fscanf(f, "%31s", word), 1);
        fclose(f);
        ck_assert_msg(strcmp(word, expect[i][1]) == 0, "%s: %s, known %s", expect[i][0], word, expect[i][1]);
    }
    snprintf(path, sizeof path, "%s/results.csv", out);
    f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    char line[1024];
    int rows = 0;
    ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
    ck_assert_ptr_nonnull(strstr(line, "instance,"));
    while (fgets(line, sizeof line, f)) {
        ck_assert_ptr_nonnull(strstr(line, expect[rows][0]));
        ck_assert_ptr_nonnull(strstr(line, expect[rows][1]));
        rows++;
    }
    fclose(f);
    ck_assert_int_eq(rows, 3);
    /* a malformed line: the others still run, exit status 1 */
    snprintf(path, sizeof path, "%s/instances.csv", dir);
    f = fopen(path, "w");
    fprintf(f, "acas17.onnx,p1.vnnlib\nacas17.onnx,p1.vnnlib,-3\nacas17.onnx,p1.vnnlib,30\n");
    fclose(f);
    snprintf(args, sizeof args, "bench '%s' --out '%s' -j 2 --force", dir, out); /* another timeout: start afresh */
    ck_assert_int_eq(lg_test_cli(args, NULL), 1);
    snprintf(path, sizeof path, "%s/acas17__p1.txt", out);
    ck_assert_int_eq(access(path, R_OK), 0);
    /* usage errors */
    ck_assert_int_eq(lg_test_cli("bench", NULL), 2);
    ck_assert_int_eq(lg_test_cli("bench /nonexistent --bab sideways", NULL), 2);
    ck_assert_int_eq(lg_test_cli("bench /nonexistent --timeout-scale 0", NULL), 2);
    ck_assert_int_eq(lg_test_cli("bench /nonexistent -j -1", NULL), 2);
    ck_assert_int_eq(lg_test_cli("bench /nonexistent", NULL), 1);
    ck_assert_int_eq(lg_test_cli("bench --help", NULL), 0);
    ck_assert_int_eq(lg_test_cli("verify --help", NULL), 0);
    ck_assert_int_eq(lg_test_cli("verify x.onnx --vnnlib y --bab sideways", NULL), 2);
    ck_assert_int_eq(lg_test_cli("verify x.onnx --vnnlib y -j -1", NULL), 2);
    ck_assert_int_eq(lg_test_cli("verify x.onnx --vnnlib y --alpha-steps -1", NULL), 2);
    snprintf(args, sizeof args, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(args), 0);
}
END_TEST

/* ---- limits ---- */

START_TEST(test_bab_limits_give_unknown)
{
    lg_net net;
    ck_assert_int_eq(lg_net_load(&net, lg_test_fixture("acasxu/ACASXU_run2a_1_1_batch_2000.onnx")), LG_OK);
    lg_prop p;
    ck_assert_int_eq(lg_vnnlib_read(&p, lg_test_fixture("acasxu/prop_3.vnnlib"), 5, 5), LG_OK);
    const lg_prop_case *C = &p.cases[0];
    double x[5];
    lg_bab_out out;
    /* depth limit, node limit, minimum width, deadline: never a verdict */
    lg_bab_opts o = lg_bab_opts_default();
    lg_runctx run = lg_runctx_none();
    o.mode = LG_BAB_INPUT;
    o.solver = lg_test_solver("none");
    o.threads = 2;
    o.max_depth = 3;
    ck_assert_int_eq(lg_bab_run(&net, C->lo, C->hi, C->n_terms, C->terms, NULL, &o, &run, &out, x), LG_OK);
    ck_assert_int_eq(out.answer, LG_BAB_OPEN);
    ck_assert_ptr_nonnull(strstr(out.how.reason, "depth"));
    o = lg_bab_opts_default();
    o.mode = LG_BAB_INPUT;
    o.max_nodes = 50;
    ck_assert_int_eq(lg_bab_run(&net, C->lo, C->hi, C->n_terms, C->terms, NULL, &o, &run, &out, x), LG_OK);
    ck_assert_int_eq(out.answer, LG_BAB_OPEN);
    ck_assert_ptr_nonnull(strstr(out.how.reason, "node limit"));
    ck_assert_int_le(out.nodes, 50 + o.batch);
    o.max_nodes = 2000000;
    o.min_width = 0.3; /* every side may be halved only twice */
    o.solver = lg_test_solver("none");
    ck_assert_int_eq(lg_bab_run(&net, C->lo, C->hi, C->n_terms, C->terms, NULL, &o, &run, &out, x), LG_OK);
    ck_assert_int_eq(out.answer, LG_BAB_OPEN);
    ck_assert_ptr_nonnull(strstr(out.how.reason, "minimum width"));
    o.min_width = 1e-9;
    run.deadline = lg_now() - 1;
    ck_assert_int_eq(lg_bab_run(&net, C->lo, C->hi, C->n_terms, C->terms, NULL, &o, &run, &out, x), LG_OK);
    ck_assert_int_eq(out.answer, LG_BAB_OPEN);
    ck_assert_int_eq(out.how.timed_out, 1);
    /* the driver honours its timeout within a couple of seconds */
    lg_verify_opts vo = lg_verify_opts_default();
    vo.timeout_s = 0.5;
    vo.bab.alpha_steps = 0;
    lg_verify_report rep;
    double t0 = lg_now();
    ck_assert_int_eq(lg_verify_run(&net, &p, &vo, &rep), LG_OK);
    ck_assert_int_ne(rep.verdict, LG_VERDICT_VIOLATED);
    if (rep.verdict == LG_VERDICT_UNKNOWN) ck_assert_int_eq(rep.how.timed_out, 1);
    ck_assert_double_le(lg_now() - t0, 2.5);
    lg_verify_report_free(&rep);
    lg_prop_free(&p);
    lg_net_free(&net);
}
END_TEST

START_TEST(test_bab_bad_arguments)
{
    lg_bab_mode m;
    ck_assert_int_eq(lg_bab_mode_parse("inputs", &m), LG_ERR_ARG);
    ck_assert_int_eq(lg_bab_mode_parse("relu", &m), LG_OK);
    ck_assert_int_eq(m, LG_BAB_RELU);
    ck_assert_int_eq(lg_bab_pick(LG_BAB_AUTO, 5), LG_BAB_INPUT);
    ck_assert_int_eq(lg_bab_pick(LG_BAB_AUTO, 784), LG_BAB_RELU);
    int dims[3] = {2, 3, 2};
    lg_net net;
    ck_assert_int_eq(lg_net_init(&net, 2, dims, LG_ACT_RELU), LG_OK);
    lg_test_randomize(&net, &(lg_rng){3, 1}, 1.0);
    double lo[2] = {0, 0}, hi[2] = {1, 1}, coef[2] = {1, -1}, x[2];
    lg_lincon con = {coef, 0};
    lg_term terms[2] = {{1, &con}, {0, NULL}};
    lg_bab_opts o = lg_bab_opts_default();
    lg_runctx run = lg_runctx_none();
    lg_bab_out out;
    o.mode = LG_BAB_NONE;
    ck_assert_int_eq(lg_bab_run(&net, lo, hi, 1, terms, NULL, &o, &run, &out, x), LG_ERR_ARG);
    o.mode = LG_BAB_INPUT;
    ck_assert_int_eq(lg_bab_run(&net, lo, hi, 2, terms, NULL, &o, &run, &out, x), LG_ERR_ARG); /* empty term */
    ck_assert_int_eq(lg_solver_parse("nosuch", &o.solver), LG_ERR_ARG); /* refused at the edge */
    /* a smooth net is split on its inputs without a back-end, and refused otherwise */
    net.layers[0].act = LG_ACT_GELU;
    o.solver = lg_test_solver("none");
    ck_assert_int_eq(lg_bab_run(&net, lo, hi, 1, terms, NULL, &o, &run, &out, x), LG_OK);
    o.solver = lg_test_solver("glpk");
    ck_assert_int_eq(lg_bab_run(&net, lo, hi, 1, terms, NULL, &o, &run, &out, x), LG_ERR_UNSUPPORTED);
    o.solver = lg_test_solver("none");
    o.mode = LG_BAB_RELU;
    ck_assert_int_eq(lg_bab_run(&net, lo, hi, 1, terms, NULL, &o, &run, &out, x), LG_ERR_UNSUPPORTED);
    lg_net_free(&net);
}
END_TEST

Suite *suite_bab(void)
{
    Suite *s = suite_create("bab");
    TCase *tc = tcase_create("core");
    lg_tcase_timeout(tc, 900);
    tcase_add_test(tc, test_bab_worklist_order);
    tcase_add_test(tc, test_bab_worklist_run_every_item_once);
    tcase_add_test(tc, test_bab_alpha_sound_for_random_slopes);
    tcase_add_test(tc, test_bab_alpha_gradient);
    tcase_add_test(tc, test_bab_input_split_matches_oracle);
    tcase_add_test(tc, test_bab_relu_split_matches_oracle);
    tcase_add_test(tc, test_bab_maxpool_matches_oracle);
    tcase_add_test(tc, test_bab_maxpool_differences);
    tcase_add_test(tc, test_bab_threads_deterministic);
    tcase_add_test(tc, test_bab_attack_backoff);
    tcase_add_test(tc, test_bab_needs_splitting);
    tcase_add_test(tc, test_bab_memory_guard);
    tcase_add_test(tc, test_bab_union_of_boxes);
    tcase_add_test(tc, test_bab_acasxu_fixtures);
    tcase_add_test(tc, test_bab_acasxu_finds_counterexamples);
    tcase_add_test(tc, test_bab_vnncomp_fixtures);
    tcase_add_test(tc, test_bab_bench_command);
    suite_add_tcase(s, tc);
    TCase *tl = tcase_create("limits");
    lg_tcase_timeout(tl, 300);
    tcase_add_test(tl, test_bab_limits_give_unknown);
    tcase_add_test(tl, test_bab_bad_arguments);
    suite_add_tcase(s, tl);
    return s;
}
