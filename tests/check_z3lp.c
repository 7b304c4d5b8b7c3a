/* check_z3lp.c — Z3's CDCL over lgelu's certified LP theory (encode/z3lp.h):
 * agreement with the exact enumeration oracle and exact witnesses, every
 * conflict explanation re-checked as an exact LP (xlp.h), determinism, the
 * theory choice of "z3-auto", limits. */
#include <check.h>
#include <gmp.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/exact.h"
#include "encode/problem.h"
#include "encode/pwl.h"
#include "encode/z3lp.h"
#include "oracle.h"
#include "testutil.h"
#include "xlp.h"

/* Both ways the theory talks to Z3, each with and without the isolation. */
START_TEST(test_z3lp_oracle_agree)
{
    int n_inst = lg_test_quick() ? 30 : 80;
    int n_sat = 0, n_unsat = 0, n_unknown = 0;
    lg_rng g;
    lg_rng_init(&g, 20261125, 19);
    for (int i = 0; i < n_inst; i++) {
        lg_test_shape s = lg_test_shape_small(&g);
        lg_test_inst in;
        ck_assert_int_eq(lg_test_inst_random(&in, &g, &s), LG_OK);
        const lg_problem *p = &in.prob;
        lg_answer oa;
        ck_assert_msg(lg_oracle_solve(p, &oa, NULL, NULL) == LG_OK, "instance %d: oracle: %s", i, lg_errmsg());
        for (int m = 0; m < 2; m++) {
            const char *name = m == 0 ? "z3-lp" : "z3-lp-lemmas";
            lg_solve_opts o = lg_solve_opts_default();
            o.z3lp.propagate = i % 3 == 2 ? 4 : 0; /* phase propagation on a third of them */
            if (i % 2) o.run.deadline = lg_now() + 60; /* isolated in a child (solvers.c) */
            lg_result r;
            ck_assert_msg(lg_solver_find(name)->solve(p, &o, &r) == LG_OK, "instance %d: %s: %s", i, name, lg_errmsg());
            ck_assert_str_eq(r.theory, "lp");
            if (r.answer == LG_ANSWER_UNKNOWN) {
                n_unknown++;
                fprintf(stderr, "z3lp oracle: instance %d: %s unknown (%s), oracle %s\n", i, name, r.reason,
                        lg_test_answer_name(oa));
            } else {
                ck_assert_msg(r.answer == oa, "instance %d: %s %s, oracle %s", i, name, lg_test_answer_name(r.answer),
                              lg_test_answer_name(oa));
            }
            if (r.answer == LG_ANSWER_SAT) {
                ck_assert_ptr_nonnull(r.x);
                for (int j = 0; j < in.net.n_in; j++)
                    ck_assert_msg(r.x[j] >= p->lo[j] && r.x[j] <= p->hi[j], "instance %d: %s: x[%d] out of the box",
                                  i, name, j);
                int hit = lg_exact_first_holding(p->net, r.x, p->n_terms, p->terms, NULL);
                ck_assert_msg(hit >= 0, "instance %d: %s: witness is not a counterexample in exact arithmetic", i,
                              name);
            }
            if (r.answer == LG_ANSWER_UNSAT) ck_assert_int_eq(lg_solver_find(name)->unsat, LG_UNSAT_CERTIFIED);
            ck_assert_int_ge(r.lp.n_lp, 1);
            lg_result_free(&r);
        }
        n_sat += oa == LG_ANSWER_SAT;
        n_unsat += oa == LG_ANSWER_UNSAT;
        lg_test_inst_free(&in);
    }
    fprintf(stderr, "z3lp oracle: %d instances (%d sat, %d unsat), %d unknown runs of %d\n", n_inst, n_sat, n_unsat,
            n_unknown, 2 * n_inst);
    ck_assert_int_gt(n_sat, 0);
    ck_assert_int_gt(n_unsat, 0);
    ck_assert_msg(n_unknown * 20 <= 2 * n_inst, "%d unknown runs of %d", n_unknown, 2 * n_inst);
}
END_TEST

/* The explanation check: the LP of the encoding's rows that hold in every
 * model (network, a ≥ z, the chord, column bounds) plus the rows of the
 * explanation's literals only, without the elastic column, solved exactly. */
typedef struct expl_ctx {
    const lg_problem *p;
    int n, n_checked, max_len, sum_len, n_phase; /* n_phase: explanations with a phase literal */
    int n_prop;                                 /* of n: phase propagations */
    lg_xlp xlp;
} expl_ctx;

typedef struct xrows {
    int n_var, m, cap;
    mpq_t **rows;
} xrows;

static mpq_t *xrow_new(xrows *R)
{
    if (R->m == R->cap) {
        R->cap = R->cap ? 2 * R->cap : 64;
        R->rows = realloc(R->rows, (size_t)R->cap * sizeof *R->rows);
    }
    mpq_t *r = malloc(((size_t)R->n_var + 1) * sizeof *r);
    for (int j = 0; j <= R->n_var; j++) mpq_init(r[j]);
    R->rows[R->m++] = r;
    return r;
}

static void xrow_add(mpq_t *r, int j, double v)
{
    mpq_t t;
    mpq_init(t);
    mpq_set_d(t, v);
    mpq_add(r[j], r[j], t);
    mpq_clear(t);
}

/* Σ e·v + c = 0 as two rows ≤ 0 (entries (j, v) in js/vs). */
static void xrow_eq(xrows *R, int n, const int *js, const double *vs, double c)
{
    for (int s = 0; s < 2; s++) {
        mpq_t *r = xrow_new(R);
        for (int k = 0; k < n; k++) xrow_add(r, js[k], s ? -vs[k] : vs[k]);
        xrow_add(r, R->n_var, s ? -c : c);
    }
}

static void on_conflict(void *vctx, int n, const int *lit, const int *val, int propagated)
{
    expl_ctx *E = vctx;
    const lg_problem *p = E->p;
    const lg_net *net = p->net;
    E->n++;
    E->n_prop += propagated;
    E->sum_len += n;
    if (n > E->max_len) E->max_len = n;
    int n_un = lg_pwl_count_unstable(p), norm = net->in_sub || net->in_div;
    int *in_expl = calloc((size_t)n_un + (size_t)p->n_terms, sizeof *in_expl); /* 0 no, 1 false, 2 true */
    int phase = 0;
    for (int k = 0; k < n; k++) {
        in_expl[lit[k]] = 1 + val[k];
        phase |= lit[k] < n_un;
    }
    E->n_phase += phase;
    /* variables: x, xn, then z (non-zero neurons) and a (unstable) per layer */
    int n_var = net->n_in * (norm ? 2 : 1);
    for (int k = 0; k < net->n_layers; k++)
        for (int i = 0; i < net->layers[k].n_out; i++) {
            lg_phase ph = lg_pwl_phase(p, k, i);
            n_var += ph == LG_PHASE_ZERO ? 0 : ph == LG_PHASE_UNSTABLE ? 2 : 1;
        }
    mpq_t *lo = malloc((size_t)n_var * sizeof *lo), *hi = malloc((size_t)n_var * sizeof *hi), *x = malloc((size_t)n_var * sizeof *x);
    char *has_lo = calloc((size_t)n_var, 1), *has_hi = calloc((size_t)n_var, 1);
    for (int j = 0; j < n_var; j++) mpq_inits(lo[j], hi[j], x[j], NULL);
    xrows R = {n_var, 0, 0, NULL};
    int width = lg_net_max_width(net) > net->n_in ? lg_net_max_width(net) : net->n_in;
    int *prev = malloc((size_t)width * sizeof *prev), *cur = malloc((size_t)width * sizeof *cur);
    int *js = malloc(((size_t)width + 2) * sizeof *js);
    double *vs = malloc(((size_t)width + 2) * sizeof *vs);
    int v = 0;
    for (int i = 0; i < net->n_in; i++) {
        mpq_set_d(lo[v], p->lo[i]);
        mpq_set_d(hi[v], p->hi[i]);
        has_lo[v] = has_hi[v] = 1;
        prev[i] = v++;
    }
    if (norm)
        for (int i = 0; i < net->n_in; i++) { /* div·xn − x + sub = 0, xn unbounded */
            js[0] = v;
            vs[0] = net->in_div ? net->in_div[i] : 1.0;
            js[1] = prev[i];
            vs[1] = -1.0;
            xrow_eq(&R, 2, js, vs, net->in_sub ? net->in_sub[i] : 0.0);
            prev[i] = v++;
        }
    int j = 0;
    for (int k = 0; k < net->n_layers; k++) {
        const lg_layer *L = &net->layers[k];
        for (int i = 0; i < L->n_out; i++) {
            double l = p->pre_lo[k][i], u = p->pre_hi[k][i];
            lg_phase ph = lg_pwl_phase(p, k, i);
            if (ph == LG_PHASE_ZERO) {
                cur[i] = -1;
                continue;
            }
            int z = v++;
            mpq_set_d(lo[z], l);
            mpq_set_d(hi[z], u);
            has_lo[z] = has_hi[z] = 1;
            int m = 0;
            js[m] = z;
            vs[m++] = 1.0;
            for (int c = 0; c < L->lin.n_in; c++) {
                double w = L->lin.W[(size_t)i * (size_t)L->lin.n_in + (size_t)c];
                if (prev[c] >= 0 && w != 0) {
                    js[m] = prev[c];
                    vs[m++] = -w;
                }
            }
            xrow_eq(&R, m, js, vs, -L->b[i]);
            if (ph == LG_PHASE_LINEAR) {
                cur[i] = z;
                continue;
            }
            int a = v++;
            mpq_set_d(lo[a], 0.0);
            mpq_set_d(hi[a], u);
            has_lo[a] = has_hi[a] = 1;
            cur[i] = a;
            mpq_t *r = xrow_new(&R); /* z − a ≤ 0 */
            xrow_add(r, z, 1.0);
            xrow_add(r, a, -1.0);
            r = xrow_new(&R); /* the chord, as the back-end rounds it */
            xrow_add(r, a, nextafter(u - l, 0.0));
            xrow_add(r, z, -u);
            xrow_add(r, n_var, -nextafter(-u * l, INFINITY));
            if (in_expl[j] == 2) { /* active: −z ≤ 0, a − z ≤ 0 */
                r = xrow_new(&R);
                xrow_add(r, z, -1.0);
                r = xrow_new(&R);
                xrow_add(r, a, 1.0);
                xrow_add(r, z, -1.0);
            } else if (in_expl[j] == 1) { /* inactive: z ≤ 0, a ≤ 0 */
                r = xrow_new(&R);
                xrow_add(r, z, 1.0);
                r = xrow_new(&R);
                xrow_add(r, a, 1.0);
            }
            j++;
        }
        int *t = prev;
        prev = cur;
        cur = t;
    }
    int n_out = lg_net_n_out(net);
    for (int t = 0; t < p->n_terms; t++) {
        if (in_expl[n_un + t] != 2) continue; /* a false term literal switches no row on */
        for (int c = 0; c < p->terms[t].n_cons; c++) {
            mpq_t *r = xrow_new(&R);
            for (int o = 0; o < n_out; o++)
                if (prev[o] >= 0) xrow_add(r, prev[o], p->terms[t].cons[c].coef[o]);
            xrow_add(r, n_var, p->terms[t].cons[c].d);
        }
    }
    lg_xlp_result res = lg_xlp_solve(&E->xlp, n_var, lo, hi, has_lo, has_hi, R.m, R.rows, NULL, x, NULL);
    ck_assert_msg(res == LG_XLP_INFEASIBLE, "%s %d: the LP of its %d literals is feasible",
                  propagated ? "propagation (with the excluded phase)" : "conflict", E->n, n);
    E->n_checked++;
    for (int r = 0; r < R.m; r++) {
        for (int c = 0; c <= n_var; c++) mpq_clear(R.rows[r][c]);
        free(R.rows[r]);
    }
    free(R.rows);
    for (int q = 0; q < n_var; q++) mpq_clears(lo[q], hi[q], x[q], NULL);
    free(lo);
    free(hi);
    free(x);
    free(has_lo);
    free(has_hi);
    free(prev);
    free(cur);
    free(js);
    free(vs);
    free(in_expl);
}

START_TEST(test_z3lp_explanations_valid)
{
    int n_inst = lg_test_quick() ? 15 : 40;
    lg_rng g;
    lg_rng_init(&g, 20261125, 7);
    expl_ctx E;
    memset(&E, 0, sizeof E);
    lg_xlp_init(&E.xlp);
    lg_solve_opts po = lg_solve_opts_default();
    po.z3lp.propagate = 4; /* propagations are checked as conflicts are */
    for (int i = 0; i < n_inst; i++) {
        lg_test_shape s = lg_test_shape_small(&g);
        s.box = 0.5 + 1.5 * lg_rng_uniform(&g); /* wide boxes: the root pass leaves phases to search */
        lg_test_inst in;
        ck_assert_int_eq(lg_test_inst_random(&in, &g, &s), LG_OK);
        E.p = &in.prob;
        for (int m = 0; m < 2; m++) {
            lg_result r;
            ck_assert_int_eq(lg_z3lp_solve_traced(&in.prob, &po, m ? LG_Z3LP_LEMMAS : LG_Z3LP_ONLINE, &r,
                                                  on_conflict, &E),
                             LG_OK);
            lg_result_free(&r);
        }
        lg_test_inst_free(&in);
    }
    lg_xlp_free(&E.xlp);
    fprintf(stderr, "z3lp explanations: %d conflicts and propagations checked exactly (%d propagations, %d with "
            "phase literals), mean length %.2f, max %d\n", E.n_checked, E.n_prop, E.n_phase,
            E.n ? (double)E.sum_len / E.n : 0.0, E.max_len);
    ck_assert_int_gt(E.n_checked - E.n_prop, 10);
    ck_assert_int_gt(E.n_prop, 5);
    ck_assert_int_gt(E.n_phase, 5);
    ck_assert_int_eq(E.n_checked, E.n);
}
END_TEST

/* Same seed, same answer, witness and search. */
START_TEST(test_z3lp_deterministic)
{
    lg_rng g;
    lg_rng_init(&g, 20261125, 11);
    int n_sat = 0;
    for (int i = 0; i < 12; i++) {
        lg_test_shape s = lg_test_shape_small(&g);
        lg_test_inst in;
        ck_assert_int_eq(lg_test_inst_random(&in, &g, &s), LG_OK);
        for (int m = 0; m < 2; m++) {
            lg_solve_opts o = lg_solve_opts_default();
            o.run.seed = 5;
            o.z3lp.propagate = i % 2 ? 4 : 0; /* with phase propagation too */
            lg_result a, b;
            lg_z3lp_mode mode = m ? LG_Z3LP_LEMMAS : LG_Z3LP_ONLINE;
            ck_assert_int_eq(lg_z3lp_solve_traced(&in.prob, &o, mode, &a, NULL, NULL), LG_OK);
            ck_assert_int_eq(lg_z3lp_solve_traced(&in.prob, &o, mode, &b, NULL, NULL), LG_OK);
            ck_assert_msg(a.answer == b.answer, "instance %d: %s then %s", i, lg_test_answer_name(a.answer), lg_test_answer_name(b.answer));
            ck_assert_int_eq(a.lp.n_lp, b.lp.n_lp);
            ck_assert_int_eq(a.nodes, b.nodes);
            ck_assert_int_eq(a.x != NULL, b.x != NULL);
            if (a.x) {
                ck_assert_mem_eq(a.x, b.x, (size_t)in.net.n_in * sizeof *a.x);
                n_sat++;
            }
            lg_result_free(&a);
            lg_result_free(&b);
        }
        lg_test_inst_free(&in);
    }
    ck_assert_int_gt(n_sat, 0);
}
END_TEST

/* "z3-auto" runs the exact theory up to LG_Z3_AUTO_EXACT_MAX_IN inputs and
 * the LP theory above, and says which. */
START_TEST(test_z3lp_auto_choice)
{
    lg_rng g;
    lg_rng_init(&g, 20261125, 13);
    for (int c = 0; c < 2; c++) {
        lg_test_shape s;
        memset(&s, 0, sizeof s);
        s.n_layers = 2;
        s.dims[0] = c ? LG_Z3_AUTO_EXACT_MAX_IN + 1 : 3;
        s.dims[1] = 4;
        s.dims[2] = 2;
        s.box = 0.02;
        lg_test_inst in;
        ck_assert_int_eq(lg_test_inst_random(&in, &g, &s), LG_OK);
        lg_result r;
        ck_assert_int_eq(lg_solver_find("z3-auto")->solve(&in.prob, NULL, &r), LG_OK);
        ck_assert_str_eq(r.theory, c ? "lp" : "exact");
        ck_assert_int_ne(r.answer, LG_ANSWER_UNKNOWN);
        lg_result_free(&r);
        lg_test_inst_free(&in);
    }
}
END_TEST

/* An expired deadline is a timeout, malformed input an error, no term UNSAT. */
START_TEST(test_z3lp_limits)
{
    lg_rng g;
    lg_rng_init(&g, 20261125, 17);
    lg_test_shape s = {2, {3, 6, 2}, 0.5, 0};
    lg_test_inst in;
    ck_assert_int_eq(lg_test_inst_random(&in, &g, &s), LG_OK);
    lg_solve_opts o = lg_solve_opts_default();
    o.run.deadline = lg_now() - 1.0;
    lg_result r;
    ck_assert_int_eq(lg_z3lp_solve(&in.prob, &o, &r), LG_OK);
    ck_assert_int_eq(r.answer, LG_ANSWER_UNKNOWN);
    ck_assert_int_eq(r.timed_out, 1);
    lg_result_free(&r);
    lg_problem bad = in.prob;
    bad.lo = NULL;
    ck_assert_int_eq(lg_z3lp_solve(&bad, NULL, &r), LG_ERR_ARG);
    lg_problem none = in.prob;
    none.n_terms = 0;
    ck_assert_int_eq(lg_z3lp_solve(&none, NULL, &r), LG_OK);
    ck_assert_int_eq(r.answer, LG_ANSWER_UNSAT);
    lg_result_free(&r);
    lg_test_inst_free(&in);
}
END_TEST

Suite *suite_z3lp(void)
{
    Suite *s = suite_create("z3lp");
    TCase *tc = tcase_create("core");
    lg_tcase_timeout(tc, 600);
    tcase_add_test(tc, test_z3lp_oracle_agree);
    tcase_add_test(tc, test_z3lp_explanations_valid);
    tcase_add_test(tc, test_z3lp_deterministic);
    tcase_add_test(tc, test_z3lp_auto_choice);
    suite_add_tcase(s, tc);
    TCase *tl = tcase_create("limits");
    lg_tcase_timeout(tl, 120);
    tcase_add_test(tl, test_z3lp_limits);
    suite_add_tcase(s, tl);
    return s;
}
