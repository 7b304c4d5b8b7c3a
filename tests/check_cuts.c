/* check_cuts.c — cuts of ReLU branch and bound (verify/bab_cuts.h) against
 * the exact oracle: on small random ReLU nets, every cut the search learns
 * ("no counterexample has all these phases at once") is checked by the
 * enumeration oracle (oracle.h, rational arithmetic) on the net extended so
 * that each phase of the cut is an output constraint; the search's verdicts
 * with cuts on must agree with the oracle; a mutant that keeps cuts without
 * verifying them must be caught. */
#include <check.h>
#include <gmp.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oracle.h"
#include "testutil.h"
#include "verify/alpha.h"
#include "verify/bab.h"
#include "verify/bounds.h"

#define LG_TC_MAX 16 /* cuts kept per net */

typedef struct lg_tc_cuts {
    int n;
    int len[LG_TC_MAX];
    int idx[LG_TC_MAX][8];
    signed char sgn[LG_TC_MAX][8];
} lg_tc_cuts;

static void lg_tc_on_cut(void *ctx, int n, const int *idx, const signed char *sgn)
{
    lg_tc_cuts *c = ctx;
    if (c->n >= LG_TC_MAX || n > 8) return;
    c->len[c->n] = n;
    memcpy(c->idx[c->n], idx, (size_t)n * sizeof *idx);
    memcpy(c->sgn[c->n], sgn, (size_t)n);
    c->n++;
}

/* The net of `net` with one carrier per phase of the cut: phase z ≤ 0 of
 * neuron j of layer k carries relu(z), phase z ≥ 0 carries relu(−z), through
 * the later layers (weight 1, stable) to an extra output; the phase holds iff
 * that output is ≤ 0. Carriers are sorted by layer so that those of layers
 * ≤ k are the first of layer k's extra neurons. */
static void lg_tc_extend(lg_net *ext, const lg_net *net, int n, const int *ck, const int *cj, const signed char *cs)
{
    int L = net->n_layers, dims[10], nc[10];
    dims[0] = net->n_in;
    for (int k = 0; k < L; k++) {
        nc[k] = 0;
        for (int q = 0; q < n; q++) nc[k] += ck[q] <= k;
        dims[k + 1] = net->layers[k].n_out + nc[k];
    }
    ck_assert_int_eq(lg_net_init(ext, L, dims, LG_ACT_RELU), LG_OK);
    for (int k = 0; k < L; k++) {
        const lg_layer *S = &net->layers[k];
        lg_layer *D = &ext->layers[k];
        int ni = D->lin.n_in, no = D->n_out, si = S->lin.n_in, pc = k > 0 ? nc[k - 1] : 0;
        memset(D->lin.W, 0, (size_t)no * (size_t)ni * sizeof *D->lin.W);
        memset(D->b, 0, (size_t)no * sizeof *D->b);
        for (int i = 0; i < S->n_out; i++) {
            memcpy(D->lin.W + (size_t)i * (size_t)ni, S->lin.W + (size_t)i * (size_t)si, (size_t)si * sizeof *D->lin.W);
            D->b[i] = S->b[i];
        }
        for (int q = 0; q < nc[k]; q++) {
            double *row = D->lin.W + (size_t)(S->n_out + q) * (size_t)ni;
            if (q < pc) {
                row[si + q] = 1.0; /* carried on */
            } else {
                double s = cs[q] > 0 ? 1.0 : -1.0; /* +1: z ≤ 0, carry relu(z); −1: z ≥ 0, carry relu(−z) */
                for (int i = 0; i < si; i++) row[i] = s * S->lin.W[(size_t)cj[q] * (size_t)si + (size_t)i];
                D->b[S->n_out + q] = s * S->b[cj[q]];
            }
        }
        D->act = S->act;
    }
    if (net->in_sub) {
        ext->in_sub = malloc((size_t)net->n_in * sizeof *ext->in_sub);
        ext->in_div = malloc((size_t)net->n_in * sizeof *ext->in_div);
        ck_assert(ext->in_sub && ext->in_div);
        memcpy(ext->in_sub, net->in_sub, (size_t)net->n_in * sizeof *ext->in_sub);
        memcpy(ext->in_div, net->in_div, (size_t)net->n_in * sizeof *ext->in_div);
    }
}

/* The oracle's answer on the instance restricted to the cut's phases:
 * LG_ANSWER_UNSAT when the cut is valid. LG_ANSWER_UNKNOWN when the
 * extended net has too many unstable ReLUs for the oracle. */
static lg_answer lg_tc_check(const lg_test_inst *in, const lg_tc_cuts *c, int q)
{
    const lg_net *net = &in->net;
    int n = c->len[q], ck[8], cj[8], ord[8];
    signed char cs[8];
    for (int i = 0; i < n; i++) ord[i] = i;
    for (int i = 0; i < n; i++) /* by layer */
        for (int h = i + 1; h < n; h++)
            if (c->idx[q][ord[h]] < c->idx[q][ord[i]]) {
                int t = ord[i];
                ord[i] = ord[h];
                ord[h] = t;
            }
    for (int i = 0; i < n; i++) {
        int f = c->idx[q][ord[i]], k = 0;
        while (k + 1 < net->n_layers && lg_alpha_offset(net, k + 1) <= f) k++;
        ck[i] = k;
        cj[i] = f - lg_alpha_offset(net, k);
        cs[i] = c->sgn[q][ord[i]];
    }
    lg_net ext;
    lg_tc_extend(&ext, net, n, ck, cj, cs);
    int no = lg_net_n_out(net), ne = lg_net_n_out(&ext);
    lg_term *terms = calloc((size_t)in->n_terms, sizeof *terms);
    ck_assert_ptr_nonnull(terms);
    for (int t = 0; t < in->n_terms; t++) {
        int nk = in->terms[t].n_cons + n;
        lg_lincon *cons = calloc((size_t)nk, sizeof *cons);
        ck_assert_ptr_nonnull(cons);
        for (int r = 0; r < nk; r++) {
            cons[r].coef = calloc((size_t)ne, sizeof(double));
            ck_assert_ptr_nonnull(cons[r].coef);
            if (r < in->terms[t].n_cons) {
                memcpy(cons[r].coef, in->terms[t].cons[r].coef, (size_t)no * sizeof(double));
                cons[r].d = in->terms[t].cons[r].d;
            } else {
                cons[r].coef[no + r - in->terms[t].n_cons] = 1.0; /* carrier ≤ 0: the phase holds */
            }
        }
        terms[t].n_cons = nk;
        terms[t].cons = cons;
    }
    lg_problem p;
    memset(&p, 0, sizeof p);
    p.net = &ext;
    p.lo = in->lo;
    p.hi = in->hi;
    p.n_terms = in->n_terms;
    p.terms = terms;
    lg_answer a = LG_ANSWER_UNKNOWN;
    lg_status st = lg_oracle_solve(&p, &a, NULL, NULL);
    ck_assert_msg(st == LG_OK || st == LG_ERR_ARG, "oracle status %d", (int)st);
    if (st != LG_OK) a = LG_ANSWER_UNKNOWN;
    for (int t = 0; t < in->n_terms; t++) {
        for (int r = 0; r < terms[t].n_cons; r++) free(terms[t].cons[r].coef);
        free(terms[t].cons);
    }
    free(terms);
    lg_net_free(&ext);
    return a;
}

static int lg_tc_inst(lg_test_inst *in, lg_rng *r)
{
    lg_test_shape s;
    memset(&s, 0, sizeof s);
    s.n_layers = 4;
    s.dims[0] = 2 + (int)lg_rng_below(r, 2);
    for (int k = 1; k <= 3; k++) s.dims[k] = 3 + (int)lg_rng_below(r, 2);
    s.dims[4] = 2 + (int)lg_rng_below(r, 2);
    s.box = 0.3 + 0.6 * lg_rng_uniform(r);
    s.normalise = lg_rng_below(r, 3) == 0;
    return lg_test_inst_random(in, r, &s) == LG_OK;
}

/* Run ReLU branch and bound with cuts (mutant: unverified) on n_nets random
 * nets; *checked cuts the oracle could check, *wrong those it refuted,
 * *decided verdicts (each checked against the oracle). */
static void lg_tc_run(uint64_t seed, int n_nets, int mutant, int *checked, int *wrong, int *decided, long *learnt)
{
    lg_rng r;
    lg_rng_init(&r, seed, 1);
    *checked = *wrong = *decided = 0;
    *learnt = 0;
    for (int t = 0; t < n_nets; t++) {
        lg_test_inst in;
        if (!lg_tc_inst(&in, &r)) continue;
        /* a hard property: its exact margin moved to a small τ > 0 (most nets) or < 0 */
        mpq_t gap;
        mpq_init(gap);
        lg_status gs = lg_oracle_gap(&in.prob, gap, NULL, NULL);
        double g = mpq_get_d(gap), tau = (lg_rng_below(&r, 4) ? 0.02 : -0.005) * (1.0 + fabs(g));
        mpq_clear(gap);
        if (gs != LG_OK) {
            lg_test_inst_free(&in);
            continue;
        }
        for (int k = 0; k < in.n_terms; k++)
            for (int c = 0; c < in.terms[k].n_cons; c++) in.terms[k].cons[c].d -= g - tau;
        lg_answer truth;
        if (lg_oracle_solve(&in.prob, &truth, NULL, NULL) != LG_OK) {
            lg_test_inst_free(&in);
            continue;
        }
        lg_tc_cuts cuts;
        memset(&cuts, 0, sizeof cuts);
        lg_bab_opts o = lg_bab_opts_default();
        o.mode = LG_BAB_RELU;
        o.threads = 1;
        o.batch = 2; /* small rounds: cuts learnt early prune later nodes */
        o.group = 2;
        o.root_alpha_steps = 0;
        o.attack_steps = 0; /* the search must refute nodes, not find points */
        o.solver = (lg_solver_pick){LG_SOLVER_NONE, NULL};
        o.cuts = 1;
        o.cuts_mutant = mutant;
        o.on_cut = lg_tc_on_cut;
        o.on_cut_ctx = &cuts;
        lg_runctx run = lg_runctx_start(5.0, (uint64_t)t, 0, 0);
        lg_bab_out out;
        double x[8];
        ck_assert_int_eq(lg_bab_run(&in.net, in.lo, in.hi, in.n_terms, in.terms, NULL, &o, &run, &out, x), LG_OK);
        *learnt += out.cuts;
        if (getenv("LG_TC_DEBUG")) fprintf(stderr, "net %d: answer %d nodes %ld cuts %ld depth %d\n", t, (int)out.answer, out.nodes, out.cuts, out.max_depth);
        if (!mutant) {
            if (out.answer == LG_BAB_PROVED)
                ck_assert_msg(truth == LG_ANSWER_UNSAT, "net %d: proved with %ld cuts, oracle sat", t, out.cuts);
            if (out.answer == LG_BAB_FOUND) ck_assert_msg(truth == LG_ANSWER_SAT, "net %d: found, oracle unsat", t);
            *decided += out.answer != LG_BAB_OPEN;
        }
        for (int q = 0; q < cuts.n; q++) {
            lg_answer a = lg_tc_check(&in, &cuts, q);
            if (a == LG_ANSWER_UNKNOWN) continue;
            (*checked)++;
            if (a == LG_ANSWER_SAT) {
                (*wrong)++;
                ck_assert_msg(mutant, "net %d: cut %d of %d phases removes a counterexample", t, q, cuts.len[q]);
            }
        }
        lg_test_inst_free(&in);
    }
}

START_TEST(test_cuts_exact)
{
    int checked, wrong, decided;
    long learnt;
    lg_tc_run(4401, 30, 0, &checked, &wrong, &decided, &learnt);
    if (getenv("LG_TC_DEBUG")) fprintf(stderr, "exact: %d checked, %d wrong, %d decided, %ld learnt\n", checked, wrong, decided, learnt);
    ck_assert_msg(checked > 0, "no cut checked (%ld learnt): the test checks nothing", learnt);
    ck_assert_int_gt(decided, 0);
    ck_assert_int_eq(wrong, 0);
}
END_TEST

/* Keeping the β support without verifying it removes counterexamples
 * somewhere: the check above would catch a search that skipped the
 * verification. */
START_TEST(test_cuts_mutant_caught)
{
    int checked, wrong, decided;
    long learnt;
    lg_tc_run(4401, 30, 1, &checked, &wrong, &decided, &learnt);
    if (getenv("LG_TC_DEBUG")) fprintf(stderr, "mutant: %d checked, %d wrong, %ld learnt\n", checked, wrong, learnt);
    ck_assert_msg(wrong > 0, "the unverified cuts (%d checked of %ld) were all valid: the mutant is not caught",
                  checked, learnt);
}
END_TEST

Suite *suite_cuts(void)
{
    Suite *s = suite_create("cuts");
    TCase *tc = tcase_create("core");
    lg_tcase_timeout(tc, 120);
    tcase_add_test(tc, test_cuts_exact);
    tcase_add_test(tc, test_cuts_mutant_caught);
    suite_add_tcase(s, tc);
    return s;
}
