/* check_refine.c — the bound refinement (verify/refine.h) against the exact
 * MILP: on small random ReLU nets every refined pre-activation bound is
 * compared with the exact minimum and maximum of that neuron over the box
 * (the enumeration oracle's exact gap, oracle.h, on the net cut after the
 * neuron's layer: rational arithmetic, no floating point); the refinement
 * must tighten somewhere (else the test would check nothing), never cross
 * the exact values, and ReLU branch and bound from refined root bounds
 * must agree with the oracle. */
#include <check.h>
#include <gmp.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "oracle.h"
#include "testutil.h"
#include "verify/bab.h"
#include "verify/bounds.h"
#include "verify/refine.h"
#include "verify/verify.h"

/* The net of `in` cut after layer k (its activation dropped): z_k as outputs. */
static void lg_tr_cut(lg_net *cut, const lg_net *net, int k)
{
    int dims[10];
    dims[0] = net->n_in;
    for (int j = 0; j <= k; j++) dims[j + 1] = net->layers[j].n_out;
    ck_assert_int_eq(lg_net_init(cut, k + 1, dims, LG_ACT_RELU), LG_OK);
    for (int j = 0; j <= k; j++) {
        const lg_layer *S = &net->layers[j];
        lg_layer *D = &cut->layers[j];
        memcpy(D->lin.W, S->lin.W, (size_t)S->n_out * (size_t)S->lin.n_in * sizeof *D->lin.W);
        memcpy(D->b, S->b, (size_t)S->n_out * sizeof *D->b);
        D->act = j == k ? LG_ACT_IDENTITY : S->act;
    }
    if (net->in_sub) {
        cut->in_sub = malloc((size_t)net->n_in * sizeof *cut->in_sub);
        cut->in_div = malloc((size_t)net->n_in * sizeof *cut->in_div);
        ck_assert(cut->in_sub && cut->in_div);
        memcpy(cut->in_sub, net->in_sub, (size_t)net->n_in * sizeof *cut->in_sub);
        memcpy(cut->in_div, net->in_div, (size_t)net->n_in * sizeof *cut->in_div);
    }
}

/* Exact min (sign +1) or −max (sign −1) of z_k[i] over the box into v. */
static void lg_tr_exact(const lg_net *cut, const double *lo, const double *hi, int i, double sign, mpq_t v)
{
    int no = lg_net_n_out(cut);
    double *coef = calloc((size_t)no, sizeof *coef);
    ck_assert_ptr_nonnull(coef);
    coef[i] = sign;
    lg_lincon con = {coef, 0.0};
    lg_term term = {1, &con};
    lg_problem p;
    memset(&p, 0, sizeof p);
    p.net = cut;
    p.lo = lo;
    p.hi = hi;
    p.n_terms = 1;
    p.terms = &term;
    ck_assert_int_eq(lg_oracle_gap(&p, v, NULL, NULL), LG_OK);
    free(coef);
}

/* A random net of 2–3 inputs and three hidden relu layers of 3–4 (few
 * enough unstable neurons for the oracle), with its problem. */
static int lg_tr_inst(lg_test_inst *in, lg_rng *r)
{
    lg_test_shape s;
    memset(&s, 0, sizeof s);
    s.n_layers = 4;
    s.dims[0] = 2 + (int)lg_rng_below(r, 2);
    for (int k = 1; k <= 3; k++) s.dims[k] = 3 + (int)lg_rng_below(r, 2);
    s.dims[4] = 2;
    s.box = 0.3 + 0.6 * lg_rng_uniform(r);
    s.normalise = lg_rng_below(r, 3) == 0;
    return lg_test_inst_random(in, r, &s) == LG_OK;
}

START_TEST(test_refine_exact_milp)
{
    lg_rng r;
    lg_rng_init(&r, 4301, 1);
    int n_nets = lg_test_quick() ? 6 : 25, checked = 0;
    long tightened = 0;
    for (int t = 0; t < n_nets; t++) {
        lg_test_inst in;
        if (!lg_tr_inst(&in, &r)) continue;
        const lg_net *net = &in.net;
        lg_bounds b;
        ck_assert_int_eq(lg_bounds_init(&b, net), LG_OK);
        ck_assert_int_eq(lg_bounds_symbolic(&b, net, in.lo, in.hi), LG_OK);
        lg_refine_opts o = lg_refine_opts_default();
        o.alpha_steps = (t % 2) ? 5 : 0;
        o.max_layers = 3;
        o.per_layer = 0;
        o.splits = t % 3; /* the LP alone, one and two splits */
        lg_runctx run = lg_runctx_start(5.0, 1, 0, 0);
        lg_refine_stats st;
        lg_status s = lg_refine_bounds(&b, net, &o, &run, &st);
        ck_assert_msg(s == LG_OK, "net %d: refine status %d", t, (int)s);
        tightened += st.n_tight;
        mpq_t v, q;
        mpq_inits(v, q, NULL);
        for (int k = 1; k < net->n_layers - 1; k++) {
            lg_net cut;
            lg_tr_cut(&cut, net, k);
            for (int i = 0; i < net->layers[k].n_out; i++) {
                lg_tr_exact(&cut, in.lo, in.hi, i, 1.0, v); /* exact min z */
                mpq_set_d(q, b.lo[k][i]);
                ck_assert_msg(mpq_cmp(q, v) <= 0, "net %d layer %d neuron %d: refined lower bound %.17g above the exact "
                              "minimum %.17g", t, k, i, b.lo[k][i], mpq_get_d(v));
                lg_tr_exact(&cut, in.lo, in.hi, i, -1.0, v); /* −(exact max z) */
                mpq_set_d(q, -b.hi[k][i]);
                ck_assert_msg(mpq_cmp(q, v) <= 0, "net %d layer %d neuron %d: refined upper bound %.17g below the exact "
                              "maximum %.17g", t, k, i, b.hi[k][i], -mpq_get_d(v));
                checked++;
            }
            lg_net_free(&cut);
        }
        mpq_clears(v, q, NULL);
        lg_bounds_free(&b);
        lg_test_inst_free(&in);
    }
    ck_assert_int_gt(checked, 0);
    ck_assert_msg(tightened > 0, "the refinement tightened no bound on %d nets: nothing was checked", n_nets);
}
END_TEST

/* ReLU branch and bound from refined root bounds (what `verify --refine
 * on` hands it) agrees with the exact oracle wherever it decides. */
START_TEST(test_refine_bab_verdicts)
{
    lg_rng r;
    lg_rng_init(&r, 4302, 1);
    int n_nets = lg_test_quick() ? 6 : 20, decided = 0;
    for (int t = 0; t < n_nets; t++) {
        lg_test_inst in;
        if (!lg_tr_inst(&in, &r)) continue;
        lg_answer truth;
        if (lg_oracle_solve(&in.prob, &truth, NULL, NULL) != LG_OK) {
            lg_test_inst_free(&in);
            continue;
        }
        lg_bounds b;
        ck_assert_int_eq(lg_bounds_init(&b, &in.net), LG_OK);
        ck_assert_int_eq(lg_bounds_symbolic(&b, &in.net, in.lo, in.hi), LG_OK);
        lg_refine_opts ro = lg_refine_opts_default();
        ro.per_layer = 0;
        ro.max_layers = 3;
        lg_runctx run = lg_runctx_start(10.0, (uint64_t)t, 0, 0);
        ck_assert_int_eq(lg_refine_bounds(&b, &in.net, &ro, &run, NULL), LG_OK);
        lg_bab_opts o = lg_bab_opts_default();
        o.mode = LG_BAB_RELU;
        o.threads = 1;
        o.root_alpha_steps = 0;
        o.solver = (lg_solver_pick){LG_SOLVER_NONE, NULL};
        lg_bab_out out;
        double x[8];
        ck_assert_int_eq(lg_bab_run(&in.net, in.lo, in.hi, in.n_terms, in.terms, &b, &o, &run, &out, x), LG_OK);
        if (out.answer == LG_BAB_PROVED) ck_assert_msg(truth == LG_ANSWER_UNSAT, "net %d: proved, oracle sat", t);
        if (out.answer == LG_BAB_FOUND) ck_assert_msg(truth == LG_ANSWER_SAT, "net %d: found, oracle unsat", t);
        decided += out.answer != LG_BAB_OPEN;
        lg_bounds_free(&b);
        lg_test_inst_free(&in);
    }
    ck_assert_int_gt(decided, 0);
}
END_TEST

Suite *suite_refine(void)
{
    Suite *s = suite_create("refine");
    TCase *tc = tcase_create("core");
    lg_tcase_timeout(tc, 120);
    tcase_add_test(tc, test_refine_exact_milp);
    tcase_add_test(tc, test_refine_bab_verdicts);
    suite_add_tcase(s, tc);
    return s;
}
