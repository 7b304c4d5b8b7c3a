/* check_oracle.c — the exact oracle itself: the rational simplex on LPs
 * with known optima, networks whose truth is known by construction
 * (|x|, the 0.1/0.3 cancellation, division by 0.1, inputs at 1e308), and
 * random and fuzz instances against their exact witnesses and dense
 * sampling of the input box. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gen_fuzz.h"
#include "oracle.h"
#include "xlp.h"
#include "testutil.h"

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
    a->net.layers[0].lin.W[0] = 1.0;
    a->net.layers[0].lin.W[1] = -1.0;
    double W1[4] = {1, 1, 0, 0};
    memcpy(a->net.layers[1].lin.W, W1, sizeof W1);
    a->net.layers[1].b[1] = 0.5;
    a->lo = -1, a->hi = 1;
    a->pl0[0] = a->pl0[1] = -1, a->ph0[0] = a->ph0[1] = 1;
    a->pl1[0] = 0, a->ph1[0] = 2, a->pl1[1] = a->ph1[1] = 0.5;
    a->pre_lo[0] = a->pl0, a->pre_lo[1] = a->pl1, a->pre_hi[0] = a->ph0, a->pre_hi[1] = a->ph1;
    a->con.coef = a->coef;
    a->term.n_cons = 1;
    a->term.cons = &a->con;
    lg_problem p = {&a->net, &a->lo, &a->hi, 1, &a->term, a->pre_lo, a->pre_hi, 0, NULL, NULL};
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

/* ---- the exact simplex ---- */

/* rows[r] = {a0, a1, (a2,) c} as num/den pairs: a·x + c ≤ 0 */
typedef struct xrow {
    long num[4], den[4];
} xrow;

static lg_xlp_result xsolve(int n, const long (*box)[4], int has_box, int m, const xrow *R, const long *obj, mpq_t *x,
                            mpq_t opt)
{
    mpq_t lo[3], hi[3], ob[3], *rows[16];
    char hl[3] = {1, 1, 1}, hh[3] = {1, 1, 1};
    for (int j = 0; j < n; j++) {
        mpq_inits(lo[j], hi[j], ob[j], NULL);
        if (j < has_box) {
            mpq_set_si(lo[j], box[j][0], (unsigned long)box[j][1]);
            mpq_set_si(hi[j], box[j][2], (unsigned long)box[j][3]);
        } else {
            hl[j] = hh[j] = 0; /* free */
        }
        if (obj) mpq_set_si(ob[j], obj[j], 1);
    }
    for (int r = 0; r < m; r++) {
        rows[r] = malloc((size_t)(n + 1) * sizeof(mpq_t));
        for (int j = 0; j <= n; j++) {
            mpq_init(rows[r][j]);
            mpq_set_si(rows[r][j], R[r].num[j], (unsigned long)R[r].den[j]);
            mpq_canonicalize(rows[r][j]);
        }
    }
    lg_xlp s;
    lg_xlp_init(&s);
    lg_xlp_result res = lg_xlp_solve(&s, n, lo, hi, hl, hh, m, rows, obj ? ob : NULL, x, opt);
    /* every row holds exactly at the returned point */
    if (res == LG_XLP_OPTIMAL)
        for (int r = 0; r < m; r++) {
            mpq_t v, t;
            mpq_inits(v, t, NULL);
            mpq_set(v, rows[r][n]);
            for (int j = 0; j < n; j++) {
                mpq_mul(t, rows[r][j], x[j]);
                mpq_add(v, v, t);
            }
            ck_assert_msg(mpq_sgn(v) <= 0, "row %d violated at the returned point", r);
            mpq_clears(v, t, NULL);
        }
    lg_xlp_free(&s);
    for (int r = 0; r < m; r++) {
        for (int j = 0; j <= n; j++) mpq_clear(rows[r][j]);
        free(rows[r]);
    }
    for (int j = 0; j < n; j++) mpq_clears(lo[j], hi[j], ob[j], NULL);
    return res;
}

START_TEST(test_oracle_xlp)
{
    mpq_t x[3], opt, want;
    for (int j = 0; j < 3; j++) mpq_init(x[j]);
    mpq_inits(opt, want, NULL);
    const long unit[2][4] = {{0, 1, 1, 1}, {0, 1, 1, 1}};
    /* x0 + x1 ≤ 3/2, x0 + x1 ≥ 6/5 on [0,1]²; min x0 = 1/5 */
    xrow R1[2] = {{{1, 1, -3}, {1, 1, 2}}, {{-1, -1, 6}, {1, 1, 5}}};
    long o1[2] = {1, 0};
    ck_assert_int_eq(xsolve(2, unit, 2, 2, R1, NULL, x, NULL), LG_XLP_OPTIMAL);
    ck_assert_int_eq(xsolve(2, unit, 2, 2, R1, o1, x, opt), LG_XLP_OPTIMAL);
    mpq_set_si(want, 1, 5);
    ck_assert(mpq_equal(opt, want));
    /* x0 + x1 ≥ 5/2 on [0,1]²: infeasible */
    xrow R2[1] = {{{-1, -1, 5}, {1, 1, 2}}};
    ck_assert_int_eq(xsolve(2, unit, 2, 1, R2, NULL, x, NULL), LG_XLP_INFEASIBLE);
    /* ten constraints through the vertex (1, 0): x0 + k·x1 ≤ 1; max x0 + x1 = 1 (degenerate) */
    xrow R3[10];
    for (int k = 0; k < 10; k++) {
        xrow r = {{1, k + 1, -1}, {1, 1, 1}};
        R3[k] = r;
    }
    long o3[2] = {-1, -1};
    ck_assert_int_eq(xsolve(2, unit, 2, 10, R3, o3, x, opt), LG_XLP_OPTIMAL);
    mpq_set_si(want, -1, 1);
    ck_assert(mpq_equal(opt, want));
    /* t free, t ≥ |x0|, x0 ∈ [1, 3]: min t = 1; x0 ∈ [−2, 3]: min t = 0 */
    const long b13[1][4] = {{1, 1, 3, 1}}, bm23[1][4] = {{-2, 1, 3, 1}};
    xrow R4[2] = {{{1, -1, 0}, {1, 1, 1}}, {{-1, -1, 0}, {1, 1, 1}}};
    long o4[2] = {0, 1};
    ck_assert_int_eq(xsolve(2, b13, 1, 2, R4, o4, x, opt), LG_XLP_OPTIMAL);
    mpq_set_si(want, 1, 1);
    ck_assert(mpq_equal(opt, want));
    ck_assert_int_eq(xsolve(2, bm23, 1, 2, R4, o4, x, opt), LG_XLP_OPTIMAL);
    ck_assert_int_eq(mpq_sgn(opt), 0);
    /* t free without a row bounding it below: unbounded */
    ck_assert_int_eq(xsolve(2, b13, 1, 0, R4, o4, x, opt), LG_XLP_UNBOUNDED);
    /* a tie at 1e-30: x0 ≤ 1/3 and x0 ≥ 1/3 + 10^-30 infeasible; ≥ 1/3 feasible */
    xrow R5[2] = {{{3, 0, -1}, {1, 1, 1}}, {{-1, 0, 1}, {1, 1, 3}}};
    ck_assert_int_eq(xsolve(2, unit, 2, 2, R5, NULL, x, NULL), LG_XLP_OPTIMAL);
    mpq_set_si(want, 1, 3);
    ck_assert(mpq_equal(x[0], want));
    xrow R6[2] = {{{3, 0, -1}, {1, 1, 1}}, {{-1, 0, 333333333333334L}, {1, 1, 1000000000000000L}}};
    ck_assert_int_eq(xsolve(2, unit, 2, 2, R6, NULL, x, NULL), LG_XLP_INFEASIBLE);
    for (int j = 0; j < 3; j++) mpq_clear(x[j]);
    mpq_clears(opt, want, NULL);
}
END_TEST

/* ---- networks whose truth is known by construction ---- */

/* A one-term, one-constraint problem c·y + d ≤ 0 on a net with one output. */
typedef struct one {
    lg_net net;
    double lo[2], hi[2];
    double coef;
    lg_lincon con;
    lg_term term;
    lg_problem p;
} one;

static void one_init(one *o, int n_layers, const int *dims)
{
    memset(o, 0, sizeof *o);
    ck_assert_int_eq(lg_net_init(&o->net, n_layers, dims, LG_ACT_RELU), LG_OK);
    o->con.coef = &o->coef;
    o->term.n_cons = 1;
    o->term.cons = &o->con;
    lg_problem p = {&o->net, o->lo, o->hi, 1, &o->term, NULL, NULL, 0, NULL, NULL};
    o->p = p;
}

static lg_answer one_solve(one *o, double coef, double d, double *x)
{
    o->coef = coef;
    o->con.d = d;
    lg_answer a;
    ck_assert_int_eq(lg_oracle_solve(&o->p, &a, x, NULL), LG_OK);
    return a;
}

/* y = 3·relu(0.1x) − relu(0.3x) = (3·fl(0.1) − fl(0.3))·x = 2^−55·x for
 * x ≥ 0 exactly, although the double forward pass gives 0 at x = 1e10. */
START_TEST(test_oracle_cancellation)
{
    int dims[3] = {1, 2, 1};
    one o;
    one_init(&o, 2, dims);
    o.net.layers[0].lin.W[0] = 0.1, o.net.layers[0].lin.W[1] = 0.3;
    o.net.layers[1].lin.W[0] = 3.0, o.net.layers[1].lin.W[1] = -1.0;
    o.lo[0] = 1e10, o.hi[0] = 2e10; /* y ∈ [2.7756e-7, 5.5511e-7] */
    double x;
    ck_assert_int_eq(one_solve(&o, 1.0, 0.0, &x), LG_ANSWER_UNSAT);     /* y ≤ 0 */
    ck_assert_int_eq(one_solve(&o, 1.0, -2.7e-7, &x), LG_ANSWER_UNSAT); /* y ≤ 2.7e-7 */
    ck_assert_int_eq(one_solve(&o, 1.0, -2.8e-7, &x), LG_ANSWER_SAT);   /* y ≤ 2.8e-7 */
    ck_assert(x >= 1e10 && x <= 1e10 * 2.8 / 2.7756);
    ck_assert_int_eq(one_solve(&o, -1.0, 5.5e-7, &x), LG_ANSWER_SAT);   /* y ≥ 5.5e-7 */
    ck_assert_int_eq(one_solve(&o, -1.0, 5.6e-7, &x), LG_ANSWER_UNSAT); /* y ≥ 5.6e-7 */
    /* the gap of y ≤ 0 is min y = 1e10 / 2^55 exactly */
    mpq_t g, want;
    mpq_inits(g, want, NULL);
    o.coef = 1.0, o.con.d = 0.0;
    ck_assert_int_eq(lg_oracle_gap(&o.p, g, NULL, NULL), LG_OK);
    mpq_set_d(want, ldexp(1e10, -55));
    ck_assert(mpq_equal(g, want));
    /* double forward: y(1e10) = 0 satisfies y ≤ 0; the exact check refuses it */
    double x0 = 1e10;
    ck_assert(lg_test_term_holds(&o.p, 0, &x0, 0.0));
    ck_assert(!lg_oracle_is_counterexample(&o.p, &x0));
    mpq_clears(g, want, NULL);
    lg_net_free(&o.net);
}
END_TEST

/* Normalisation x/0.1 with x ∈ [0, 1]: the exact value at x = 1 is
 * 1/fl(0.1) < 10 although 1.0/0.1 == 10.0 in double. */
START_TEST(test_oracle_normalisation)
{
    int dims[2] = {1, 1};
    one o;
    one_init(&o, 1, dims);
    o.net.layers[0].lin.W[0] = 1.0;
    o.net.in_sub = calloc(1, sizeof(double));
    o.net.in_div = malloc(sizeof(double));
    o.net.in_div[0] = 0.1;
    o.lo[0] = 0.0, o.hi[0] = 1.0;
    double x;
    ck_assert_int_eq(one_solve(&o, -1.0, 10.0, &x), LG_ANSWER_UNSAT); /* y ≥ 10 */
    double x1 = 1.0;
    ck_assert(lg_test_term_holds(&o.p, 0, &x1, 0.0));
    ck_assert(!lg_oracle_is_counterexample(&o.p, &x1));
    ck_assert_int_eq(one_solve(&o, -1.0, 9.999999999999998, &x), LG_ANSWER_SAT);
    ck_assert(x >= 0.9999999999 && x <= 1.0);
    /* sub and a negative div: y = (x − 2)/(−4) ∈ [1/4, 1/2] on [0, 1] */
    o.net.in_sub[0] = 2.0, o.net.in_div[0] = -4.0;
    ck_assert_int_eq(one_solve(&o, 1.0, -0.25, &x), LG_ANSWER_SAT); /* y ≤ 1/4 at x = 1 (closed) */
    ck_assert_double_eq(x, 1.0);
    ck_assert_int_eq(one_solve(&o, 1.0, -0.2, &x), LG_ANSWER_UNSAT);
    ck_assert_int_eq(one_solve(&o, -1.0, 0.5, &x), LG_ANSWER_SAT); /* y ≥ 1/2 at x = 0 */
    ck_assert_double_eq(x, 0.0);
    lg_net_free(&o.net);
}
END_TEST

/* Inputs pinned at 1e308 (doubles overflow, rationals do not): y = 2·x. */
START_TEST(test_oracle_huge_inputs)
{
    int dims[3] = {1, 1, 1};
    one o;
    one_init(&o, 2, dims);
    o.net.layers[0].lin.W[0] = 2.0;
    o.net.layers[1].lin.W[0] = 1.0;
    o.lo[0] = o.hi[0] = 1e308;
    double x;
    ck_assert_int_eq(one_solve(&o, 1.0, -1.7976931348623157e308, &x), LG_ANSWER_UNSAT); /* y ≤ DBL_MAX */
    ck_assert_int_eq(one_solve(&o, 0.5, -1e308, &x), LG_ANSWER_SAT);                    /* y/2 ≤ 1e308 */
    ck_assert_double_eq(x, 1e308);
    ck_assert_int_eq(one_solve(&o, -1.0, 1.7976931348623157e308, &x), LG_ANSWER_SAT);   /* y ≥ DBL_MAX */
    lg_net_free(&o.net);
}
END_TEST

/* 1 if some term holds exactly at the rational point x. */
static int exact_term_holds(const lg_problem *p, const mpq_t *x)
{
    int n_out = lg_net_n_out(p->net), hit = 0;
    mpq_t *y = malloc((size_t)n_out * sizeof *y), v, t;
    for (int j = 0; j < n_out; j++) mpq_init(y[j]);
    mpq_inits(v, t, NULL);
    lg_oracle_forward(p->net, x, y);
    for (int k = 0; k < p->n_terms && !hit; k++) {
        int ok = 1;
        for (int c = 0; c < p->terms[k].n_cons; c++) {
            mpq_set_d(v, p->terms[k].cons[c].d);
            for (int j = 0; j < n_out; j++) {
                mpq_set_d(t, p->terms[k].cons[c].coef[j]);
                mpq_mul(t, t, y[j]);
                mpq_add(v, v, t);
            }
            ok &= mpq_sgn(v) <= 0;
        }
        hit = ok;
    }
    for (int j = 0; j < n_out; j++) mpq_clear(y[j]);
    free(y);
    mpq_clears(v, t, NULL);
    return hit;
}

/* Fuzz cases (gen_fuzz.h): SAT ⇒ the exact witness lies in the box and
 * satisfies a term exactly; gap ≤ 0 ⇔ SAT; UNSAT ⇒ no sampled point is an
 * exact counterexample. */
START_TEST(test_oracle_fuzz_cases)
{
    int n_cases = getenv("LG_TEST_QUICK") ? 40 : 150, n_samples = getenv("LG_TEST_QUICK") ? 300 : 1000;
    int n_sat = 0, n_unsat = 0;
    lg_rng g;
    lg_rng_init(&g, 99, 1);
    for (int i = 0; i < n_cases; i++) {
        lg_fuzz_case fc;
        ck_assert_msg(lg_fuzz_case_make(&fc, 4242, i) == LG_OK, "case %d: %s", i, lg_errmsg());
        if (strstr(fc.cls, "empty") || fc.margin > 0) { /* truth not from this oracle call alone (gen_fuzz.h) */
            lg_fuzz_case_free(&fc);
            continue;
        }
        const lg_problem *p = &fc.prob;
        int n = fc.net.n_in;
        mpq_t *xq = malloc((size_t)n * sizeof *xq), gap;
        for (int j = 0; j < n; j++) mpq_init(xq[j]);
        mpq_init(gap);
        lg_answer a;
        ck_assert_int_eq(lg_oracle_decide(p, &a, xq, NULL), LG_OK);
        ck_assert_int_eq(a, fc.truth);
        ck_assert_int_eq(lg_oracle_gap(p, gap, NULL, NULL), LG_OK);
        ck_assert_msg((mpq_sgn(gap) <= 0) == (a == LG_ANSWER_SAT), "case %d: gap sign disagrees with the verdict", i);
        if (a == LG_ANSWER_SAT) {
            n_sat++;
            for (int j = 0; j < n; j++) {
                mpq_t b;
                mpq_init(b);
                mpq_set_d(b, p->lo[j]);
                ck_assert(mpq_cmp(xq[j], b) >= 0);
                mpq_set_d(b, p->hi[j]);
                ck_assert(mpq_cmp(xq[j], b) <= 0);
                mpq_clear(b);
            }
            ck_assert_msg(exact_term_holds(p, xq), "case %d [%s]: exact witness is no counterexample", i, fc.cls);
        } else {
            n_unsat++;
            double *x = malloc((size_t)n * sizeof *x);
            for (int k = 0; k < n_samples; k++) {
                for (int j = 0; j < n; j++) x[j] = p->lo[j] + (p->hi[j] - p->lo[j]) * lg_rng_uniform(&g);
                for (int j = 0; j < n; j++) x[j] = x[j] < p->lo[j] ? p->lo[j] : x[j] > p->hi[j] ? p->hi[j] : x[j];
                ck_assert_msg(!lg_oracle_is_counterexample(p, x), "case %d [%s]: robust, sample %d violates", i,
                              fc.cls, k);
            }
            free(x);
        }
        for (int j = 0; j < n; j++) mpq_clear(xq[j]);
        free(xq);
        mpq_clear(gap);
        lg_fuzz_case_free(&fc);
    }
    ck_assert_int_gt(n_sat, n_cases / 10);
    ck_assert_int_gt(n_unsat, n_cases / 10);
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
    lg_tcase_timeout(tc, 300);
    tcase_add_test(tc, test_oracle_abs_network);
    tcase_add_test(tc, test_oracle_vs_sampling);
    tcase_add_test(tc, test_oracle_xlp);
    tcase_add_test(tc, test_oracle_cancellation);
    tcase_add_test(tc, test_oracle_normalisation);
    tcase_add_test(tc, test_oracle_huge_inputs);
    tcase_add_test(tc, test_oracle_fuzz_cases);
    suite_add_tcase(s, tc);
    TCase *tl = tcase_create("limits");
    lg_tcase_timeout(tl, 120);
    tcase_add_test(tl, test_oracle_limits);
    suite_add_tcase(s, tl);
    return s;
}
