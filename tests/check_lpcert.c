/* check_lpcert.c — encode/lp_cert.h: certified LP answers against the exact
 * rational LP solver (xlp.h), the cases where the safe bound cannot close,
 * and the support it reports. */
#include <check.h>
#include <glpk.h>
#include <gmp.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/net.h"
#include "core/rng.h"
#include "encode/problem.h"
#include "encode/lp_cert.h"
#include "encode/lp_relax.h"
#include "xlp.h"
#include "testutil.h"

/* A small boxed LP: min obj·x s.t. rows; GLPK loaded, quiet. */
typedef struct tlp {
    int n, m;
    double lo[6], hi[6], obj[6];
    double A[8][6], rhs[8];
    char sense[8];
} tlp;

static glp_prob *tlp_load(const tlp *t)
{
    glp_prob *P = glp_create_prob();
    glp_set_obj_dir(P, GLP_MIN);
    glp_add_cols(P, t->n);
    for (int j = 0; j < t->n; j++) {
        glp_set_col_bnds(P, j + 1, t->lo[j] == t->hi[j] ? GLP_FX : GLP_DB, t->lo[j], t->hi[j]);
        glp_set_obj_coef(P, j + 1, t->obj[j]);
    }
    if (t->m) glp_add_rows(P, t->m);
    int ind[7];
    double val[7];
    for (int i = 0; i < t->m; i++) {
        int type = t->sense[i] == 'E' ? GLP_FX : t->sense[i] == 'G' ? GLP_LO : GLP_UP;
        glp_set_row_bnds(P, i + 1, type, t->rhs[i], t->rhs[i]);
        int k = 0;
        for (int j = 0; j < t->n; j++)
            if (t->A[i][j] != 0) {
                k++;
                ind[k] = j + 1;
                val[k] = t->A[i][j];
            }
        glp_set_mat_row(P, i + 1, k, ind, val);
    }
    return P;
}

static void tlp_simplex(glp_prob *P)
{
    glp_smcp parm;
    glp_init_smcp(&parm);
    parm.msg_lev = GLP_MSG_OFF;
    parm.meth = GLP_DUALP;
    glp_simplex(P, &parm);
}

/* Exact answer of t: LG_XLP_OPTIMAL with opt, or LG_XLP_INFEASIBLE. */
static lg_xlp_result tlp_exact(const tlp *t, mpq_t opt)
{
    lg_xlp s;
    lg_xlp_init(&s);
    mpq_t lo[6], hi[6], obj[6], x[6], store[16][7];
    mpq_t *rows[16];
    int r = 0;
    for (int j = 0; j < t->n; j++) {
        mpq_inits(lo[j], hi[j], obj[j], x[j], NULL);
        mpq_set_d(lo[j], t->lo[j]);
        mpq_set_d(hi[j], t->hi[j]);
        mpq_set_d(obj[j], t->obj[j]);
    }
    for (int i = 0; i < t->m; i++)
        for (int s2 = 0; s2 < 2; s2++) {
            /* ≤ row: a·x − b ≤ 0; ≥ row: −a·x + b ≤ 0 */
            int le = s2 == 0;
            if (t->sense[i] == 'L' && !le) continue;
            if (t->sense[i] == 'G' && le) continue;
            double sg = le ? 1.0 : -1.0;
            for (int j = 0; j <= t->n; j++) mpq_init(store[r][j]);
            for (int j = 0; j < t->n; j++) mpq_set_d(store[r][j], sg * t->A[i][j]);
            mpq_set_d(store[r][t->n], -sg * t->rhs[i]);
            rows[r] = store[r];
            r++;
        }
    lg_xlp_result res = lg_xlp_solve(&s, t->n, lo, hi, NULL, NULL, r, rows, obj, x, opt);
    for (int q = 0; q < r; q++)
        for (int j = 0; j <= t->n; j++) mpq_clear(store[q][j]);
    for (int j = 0; j < t->n; j++) mpq_clears(lo[j], hi[j], obj[j], x[j], NULL);
    lg_xlp_free(&s);
    return res;
}

/* min x + y, x + y ≥ 1, x − y = 0, box [0, 1]²: optimum 1; rows and sides. */
START_TEST(test_lpcert_known_optimum)
{
    tlp t = {.n = 2, .m = 2, .lo = {0, 0}, .hi = {1, 1}, .obj = {1, 1}};
    t.A[0][0] = t.A[0][1] = 1;
    t.rhs[0] = 1;
    t.sense[0] = 'G';
    t.A[1][0] = 1;
    t.A[1][1] = -1;
    t.sense[1] = 'E';
    glp_prob *P = tlp_load(&t);
    tlp_simplex(P);
    lg_lp_cert c;
    ck_assert_int_eq(lg_lp_cert_init(&c, P), LG_OK);
    double lb = NAN;
    ck_assert_int_eq(lg_lp_cert_check(&c, 0.999, &lb), LG_LP_CERT_BOUND);
    ck_assert(lb <= 1.0 && lb > 1.0 - 1e-12);
    ck_assert_int_eq(lg_lp_cert_check(&c, 1.0 + 1e-9, &lb), LG_LP_CERT_NONE); /* beyond the optimum */
    int rows[2], side[2];
    ck_assert_int_eq(lg_lp_cert_check(&c, 0.5, &lb), LG_LP_CERT_BOUND);
    int k = lg_lp_cert_rows(&c, rows, side);
    ck_assert_int_ge(k, 1);
    ck_assert_int_eq(rows[0], 0); /* x + y ≥ 1 carries the bound, on its lower side */
    ck_assert_int_eq(side[0], -1);
    lg_lp_cert_free(&c);
    glp_delete_prob(P);
}
END_TEST

/* x + y ≥ 3 in [0, 1]²: infeasible; the certificate uses that row and both
 * upper bounds. */
START_TEST(test_lpcert_farkas)
{
    tlp t = {.n = 3, .m = 2, .lo = {0, 0, -5}, .hi = {1, 1, 5}, .obj = {0, 0, 1}};
    t.A[0][0] = t.A[0][1] = 1;
    t.rhs[0] = 3;
    t.sense[0] = 'G';
    t.A[1][2] = 1;
    t.A[1][0] = 1;
    t.rhs[1] = 0.5;
    t.sense[1] = 'L';
    glp_prob *P = tlp_load(&t);
    tlp_simplex(P);
    ck_assert_int_eq(glp_get_prim_stat(P), GLP_NOFEAS);
    lg_lp_cert c;
    ck_assert_int_eq(lg_lp_cert_init(&c, P), LG_OK);
    double lb;
    ck_assert_int_eq(lg_lp_cert_check(&c, 0.0, &lb), LG_LP_CERT_INFEASIBLE);
    int rows[2], cols[3], side[3];
    int k = lg_lp_cert_rows(&c, rows, NULL);
    ck_assert_int_eq(k, 1);
    ck_assert_int_eq(rows[0], 0);
    k = lg_lp_cert_cols(&c, cols, side);
    ck_assert_int_eq(k, 2);
    ck_assert_int_eq(cols[0], 0);
    ck_assert_int_eq(cols[1], 1);
    ck_assert_int_eq(side[0], 1);
    ck_assert_int_eq(side[1], 1);
    lg_lp_cert_free(&c);
    glp_delete_prob(P);
}
END_TEST

/* Where the safe bound cannot close: min x s.t. x ≥ 0.1 has optimum exactly
 * 0.1 (the double); "≥ 0.1" is true but the certificate must leave room for
 * its rounding and says NONE, never a bound above the optimum. And the
 * feasible narrow-box LP at magnitude 1e5: never INFEASIBLE. */
START_TEST(test_lpcert_cannot_close)
{
    tlp t = {.n = 1, .m = 1, .lo = {0}, .hi = {1}, .obj = {1}};
    t.A[0][0] = 1;
    t.rhs[0] = 0.1;
    t.sense[0] = 'G';
    glp_prob *P = tlp_load(&t);
    tlp_simplex(P);
    lg_lp_cert c;
    ck_assert_int_eq(lg_lp_cert_init(&c, P), LG_OK);
    double lb = NAN;
    ck_assert_int_eq(lg_lp_cert_check(&c, 0.1, &lb), LG_LP_CERT_NONE);
    ck_assert_int_eq(lg_lp_cert_check(&c, -INFINITY, &lb), LG_LP_CERT_BOUND);
    ck_assert(lb < 0.1);
    lg_lp_cert_free(&c);
    glp_delete_prob(P);
    /* z = w·x + b with x in a box of width 2^-30 at 1e5, z's bounds a hair
     * wider than its range: feasible; whatever GLPK says, no Farkas proof */
    tlp u = {.n = 2, .m = 1, .lo = {0x1.86ap+16, 0x1.869fffffffffdp+16}, .hi = {0x1.86a00000a7c5bp+16, 0x1.86a000000338dp+16}};
    u.A[0][0] = -0x1.3a92a30553261p-6;
    u.A[0][1] = -1;
    u.rhs[0] = -0x1.8e2000000338ap+16;
    u.sense[0] = 'E';
    P = tlp_load(&u);
    tlp_simplex(P);
    ck_assert_int_eq(lg_lp_cert_init(&c, P), LG_OK);
    ck_assert_int_ne(lg_lp_cert_check(&c, 0.0, &lb), LG_LP_CERT_INFEASIBLE);
    mpq_t opt;
    mpq_init(opt);
    ck_assert_int_eq(tlp_exact(&u, opt), LG_XLP_OPTIMAL);
    mpq_clear(opt);
    lg_lp_cert_free(&c);
    glp_delete_prob(P);
}
END_TEST

/* Random boxed LPs (coefficients with long mantissas, some at large
 * magnitude): every BOUND is ≤ the exact optimum, every INFEASIBLE is
 * exactly infeasible, and both kinds occur. */
START_TEST(test_lpcert_random_vs_exact)
{
    lg_rng r;
    lg_rng_init(&r, 11, 0);
    int n_bound = 0, n_inf = 0, n_open = 0;
    mpq_t opt, lbq;
    mpq_inits(opt, lbq, NULL);
    for (int it = 0; it < 400; it++) {
        tlp t = {0};
        t.n = 2 + (int)(lg_rng_uniform(&r) * 4);
        t.m = 1 + (int)(lg_rng_uniform(&r) * 6);
        double scale = it % 4 == 3 ? 1e5 : 1.0;
        for (int j = 0; j < t.n; j++) {
            double a = scale * (2 * lg_rng_uniform(&r) - 1), w = lg_rng_uniform(&r) * (it % 5 == 4 ? 1e-9 : 2);
            t.lo[j] = a;
            t.hi[j] = a + w;
            t.obj[j] = 2 * lg_rng_uniform(&r) - 1;
        }
        for (int i = 0; i < t.m; i++) {
            double s = 0;
            for (int j = 0; j < t.n; j++) {
                t.A[i][j] = lg_rng_uniform(&r) < 0.3 ? 0.0 : 2 * lg_rng_uniform(&r) - 1;
                s += t.A[i][j] * (t.lo[j] + t.hi[j]) / 2;
            }
            double u = lg_rng_uniform(&r);
            t.sense[i] = u < 0.4 ? 'L' : u < 0.8 ? 'G' : 'E';
            t.rhs[i] = s + (2 * lg_rng_uniform(&r) - 1) * (it % 3 == 0 ? 1.0 : 0.05) * scale;
        }
        glp_prob *P = tlp_load(&t);
        tlp_simplex(P);
        lg_lp_cert c;
        ck_assert_int_eq(lg_lp_cert_init(&c, P), LG_OK);
        double lb = NAN;
        lg_lp_cert_res res = lg_lp_cert_check(&c, INFINITY, &lb); /* only a Farkas proof can answer */
        if (res == LG_LP_CERT_NONE) res = lg_lp_cert_check(&c, -INFINITY, &lb);
        lg_xlp_result ex = tlp_exact(&t, opt);
        if (getenv("LPCERT_DEBUG"))
            fprintf(stderr, "it %d: glpk status %d prim %d ray %d cert %d exact %d\n", it, glp_get_status(P),
                    glp_get_prim_stat(P), glp_get_unbnd_ray(P), (int)res, (int)ex);
        if (res == LG_LP_CERT_INFEASIBLE) {
            ck_assert_msg(ex == LG_XLP_INFEASIBLE, "LP %d: certified infeasible but feasible", it);
            n_inf++;
        } else if (res == LG_LP_CERT_BOUND) {
            if (ex == LG_XLP_OPTIMAL) {
                mpq_set_d(lbq, lb);
                ck_assert_msg(mpq_cmp(lbq, opt) <= 0, "LP %d: bound %.17g above the optimum %.17g", it, lb,
                              mpq_get_d(opt));
            }
            n_bound++;
        } else {
            n_open++;
        }
        lg_lp_cert_free(&c);
        glp_delete_prob(P);
    }
    mpq_clears(opt, lbq, NULL);
    fprintf(stderr, "lpcert: %d bound, %d infeasible, %d open\n", n_bound, n_inf, n_open);
    ck_assert_int_gt(n_bound, 50);
    ck_assert_int_gt(n_inf, 20);
}
END_TEST

/* Robust by 2^-53 only: y = |x − 1.5| on x ∈ [1, 2] (two unstable ReLUs,
 * relu = 1) with region y + 2^-53 ≤ 0, or y = x on [1, 2] (relu = 0) with
 * region y − 1 + 2^-53 ≤ 0: min t = 2^-53 either way. The certificate's
 * rounding allowance is larger than 2^-53, so GLPK's search cannot close
 * the leaves: it must answer UNKNOWN — never UNSAT without a certificate,
 * never SAT — while Z3 (exact) proves UNSAT. */
static void tiny_margin_case(int relu)
{
    lg_net net;
    int dims1[2] = {1, 1}, dims2[3] = {1, 2, 1};
    ck_assert_int_eq(lg_net_init(&net, relu ? 2 : 1, relu ? dims2 : dims1, LG_ACT_RELU), LG_OK);
    double lo = 1.0, hi = 2.0, pl0[2], ph0[2], pl1, ph1, coef = 1.0;
    double *pre_lo[2] = {pl0, &pl1}, *pre_hi[2] = {ph0, &ph1};
    lg_lincon con = {&coef, 0x1p-53};
    if (relu) {
        net.layers[0].lin.W[0] = 1.0, net.layers[0].b[0] = -1.5; /* z0 = x − 1.5 */
        net.layers[0].lin.W[1] = -1.0, net.layers[0].b[1] = 1.5; /* z1 = 1.5 − x */
        pl0[0] = pl0[1] = -0.5, ph0[0] = ph0[1] = 0.5;
        net.layers[1].act = LG_ACT_IDENTITY;
        net.layers[1].lin.W[0] = net.layers[1].lin.W[1] = 1.0, net.layers[1].b[0] = 0.0; /* y = |x − 1.5| */
        pl1 = 0.0, ph1 = 1.0;
    } else {
        net.layers[0].act = LG_ACT_IDENTITY;
        net.layers[0].lin.W[0] = 1.0, net.layers[0].b[0] = 0.0; /* y = x */
        pl0[0] = 1.0, ph0[0] = 2.0;
        pre_lo[0] = pl0, pre_hi[0] = ph0;
        con.d = -1.0 + 0x1p-53; /* y − 1 + 2^-53 ≤ 0 ⇔ y ≤ 1 − 2^-53: never on [1, 2], min t = 2^-53 */
    }
    lg_term term = {1, &con};
    lg_problem p = {&net, &lo, &hi, 1, &term, pre_lo, pre_hi, 0, NULL, NULL};
    lg_result r;
    ck_assert_int_eq(lg_solver_find("glpk")->solve(&p, NULL, &r), LG_OK);
    ck_assert_msg(r.answer == LG_ANSWER_UNKNOWN, "relu %d: glpk answered %d on a margin below its certificate", relu,
                  (int)r.answer);
    ck_assert_int_gt(r.lp.n_open, 0);
    ck_assert_int_ge(r.nodes, relu ? 3 : 1); /* with ReLUs it split before giving up */
    lg_result_free(&r);
    ck_assert_int_eq(lg_solver_find("z3")->solve(&p, NULL, &r), LG_OK);
    ck_assert_int_eq(r.answer, LG_ANSWER_UNSAT); /* the truth: robust */
    lg_result_free(&r);
    lg_net_free(&net);
}

START_TEST(test_lpcert_glpk_tiny_margin)
{
    tiny_margin_case(0);
    tiny_margin_case(1);
}
END_TEST

/* A row that names one column twice is a fatal error inside GLPK
 * (glp_set_mat_row: duplicate indices). The guard turns it into an error
 * status instead of an abort, and GLPK works again afterwards: the same LP
 * without the duplicate is loaded and solved, min x = 1 on x ∈ [1, 2].
 * GLPK's message reaches the error status, and nothing reaches stdout
 * (where results and JSON go). */
static void lp_one_col(lg_lp_relax *lp, int dup)
{
    ck_assert_int_eq(lg_lp_relax_init(lp, 1, 1, 2), LG_OK);
    lg_lp_relax_col(lp, 0, 1.0, 2.0);
    lg_lp_relax_row_add(lp, 'G', 0.0);
    lg_lp_relax_ent(lp, 0, 1.0);
    if (dup) lg_lp_relax_ent(lp, 0, 1.0);
}

START_TEST(test_lpcert_glpk_fatal_error_caught)
{
    lg_lp_relax lp;
    lp_one_col(&lp, 1);
    fflush(stdout);
    FILE *cap = tmpfile();
    ck_assert_ptr_nonnull(cap);
    int out_fd = dup(STDOUT_FILENO);
    ck_assert_int_ge(out_fd, 0);
    ck_assert_int_ge(dup2(fileno(cap), STDOUT_FILENO), 0);
    lg_status st = lg_lp_relax_load(&lp);
    fflush(stdout);
    ck_assert_int_ge(dup2(out_fd, STDOUT_FILENO), 0);
    close(out_fd);
    long printed = ftell(cap) >= 0 && fseek(cap, 0, SEEK_END) == 0 ? ftell(cap) : -1;
    fclose(cap);
    ck_assert_int_eq(st, LG_ERR_SOLVER);
    ck_assert_int_eq(printed, 0);
    ck_assert_msg(strstr(lg_errmsg(), "glp_set_mat_row") && strstr(lg_errmsg(), "Error detected"), "%s", lg_errmsg());
    ck_assert_ptr_null(lp.P);
    double obj[1] = {1.0}, lb = -1.0;
    ck_assert_int_eq(lg_lp_relax_min(&lp, obj, 0.0, NULL, &lb), 0); /* dead, answers 0 */
    lg_lp_relax_free(&lp);
    lp_one_col(&lp, 0);
    ck_assert_int_eq(lg_lp_relax_load(&lp), LG_OK);
    ck_assert_int_eq(lg_lp_relax_min(&lp, obj, 0.0, NULL, &lb), 1);
    ck_assert(lb <= 1.0 && lb > 1.0 - 1e-9);
    lg_lp_relax_free(&lp);
    glp_free_env();
}
END_TEST

/* lg_lp_relax warm starts (the z3-lp theory's use): a saved basis set back
 * after the rows changed, the dual simplex, column bounds changed after the
 * load and an iteration limit. Every certified bound stays ≤ the exact
 * optimum of the LP it was asked about, and setting back the basis of an
 * LP solved before gives its bound again. */
static int relax_of(lg_lp_relax *lp, const tlp *t)
{
    ck_assert_int_eq(lg_lp_relax_init(lp, t->n, t->m, (size_t)t->n * (size_t)t->m), LG_OK);
    for (int j = 0; j < t->n; j++) lg_lp_relax_col(lp, j, t->lo[j], t->hi[j]);
    for (int i = 0; i < t->m; i++) {
        lg_lp_relax_row_add(lp, t->sense[i], t->rhs[i]);
        for (int j = 0; j < t->n; j++)
            if (t->A[i][j] != 0) lg_lp_relax_ent(lp, j, t->A[i][j]);
    }
    return lg_lp_relax_load(lp) == LG_OK;
}

/* 1 when lb is at most the exact optimum of t (t infeasible: any bound). */
static int below_exact(const tlp *t, double lb, mpq_t opt, mpq_t lbq, int *feasible)
{
    lg_xlp_result ex = tlp_exact(t, opt);
    *feasible = ex == LG_XLP_OPTIMAL;
    if (!*feasible) return 1;
    mpq_set_d(lbq, lb);
    return mpq_cmp(lbq, opt) <= 0;
}

START_TEST(test_lpcert_relax_warm_starts)
{
    lg_rng r;
    lg_rng_init(&r, 19, 0);
    mpq_t opt, lbq;
    mpq_inits(opt, lbq, NULL);
    int n_same = 0, n_checked = 0;
    for (int it = 0; it < 150; it++) {
        tlp t = {0};
        t.n = 3 + (int)(lg_rng_uniform(&r) * 4);
        t.m = 2 + (int)(lg_rng_uniform(&r) * 5);
        for (int j = 0; j < t.n; j++) {
            t.lo[j] = 2 * lg_rng_uniform(&r) - 1;
            t.hi[j] = t.lo[j] + 0.1 + lg_rng_uniform(&r);
            t.obj[j] = 2 * lg_rng_uniform(&r) - 1;
        }
        for (int i = 0; i < t.m; i++) {
            double s = 0;
            for (int j = 0; j < t.n; j++) {
                t.A[i][j] = 2 * lg_rng_uniform(&r) - 1;
                s += t.A[i][j] * (t.lo[j] + t.hi[j]) / 2;
            }
            t.sense[i] = lg_rng_uniform(&r) < 0.5 ? 'L' : 'G';
            t.rhs[i] = s + (2 * lg_rng_uniform(&r) - 1) * 0.3;
        }
        lg_lp_relax lp;
        ck_assert(relax_of(&lp, &t));
        lp.dual = 1;
        int *basis = malloc(((size_t)t.n + (size_t)t.m) * sizeof *basis);
        double lb1 = NAN, lb = NAN;
        int f, ok1 = lg_lp_relax_min(&lp, t.obj, 0.0, NULL, &lb1);
        if (ok1) {
            ck_assert_msg(below_exact(&t, lb1, opt, lbq, &f), "LP %d: bound above the optimum", it);
            n_checked += f;
        }
        lg_lp_relax_basis_get(&lp, basis);
        /* row 0 off, then a column tightened after the load */
        char s0 = t.sense[0];
        lg_lp_relax_row_sense(&lp, 0, 'F');
        tlp u = t;
        for (int j = 0; j < t.n; j++) u.A[0][j] = 0.0; /* a free row: no constraint */
        u.rhs[0] = 0.0;
        u.sense[0] = 'L';
        if (lg_lp_relax_min(&lp, t.obj, 0.0, NULL, &lb))
            ck_assert_msg(below_exact(&u, lb, opt, lbq, &f), "LP %d: bound above the optimum without row 0", it);
        u.hi[0] = u.lo[0] + 0.5 * (u.hi[0] - u.lo[0]);
        lg_lp_relax_col(&lp, 0, u.lo[0], u.hi[0]);
        if (lg_lp_relax_min(&lp, t.obj, 0.0, NULL, &lb))
            ck_assert_msg(below_exact(&u, lb, opt, lbq, &f), "LP %d: bound above the optimum, column 0 cut", it);
        /* one iteration on another objective: weaker, still certified */
        lp.it_lim = 1;
        for (int j = 0; j < t.n; j++) u.obj[j] = 2 * lg_rng_uniform(&r) - 1;
        if (lg_lp_relax_min(&lp, u.obj, 0.0, NULL, &lb))
            ck_assert_msg(below_exact(&u, lb, opt, lbq, &f), "LP %d: bound above the optimum after 1 iteration", it);
        lp.it_lim = 0;
        /* everything back, and the first basis: the first bound again */
        lg_lp_relax_col(&lp, 0, t.lo[0], t.hi[0]);
        lg_lp_relax_row_sense(&lp, 0, s0);
        lg_lp_relax_basis_set(&lp, basis);
        if (ok1 && lg_lp_relax_min(&lp, t.obj, 0.0, NULL, &lb)) {
            ck_assert_msg(fabs(lb - lb1) <= 1e-9 * (1 + fabs(lb1)), "LP %d: %.17g then %.17g from the same basis", it,
                          lb1, lb);
            n_same++;
        }
        free(basis);
        lg_lp_relax_free(&lp);
    }
    mpq_clears(opt, lbq, NULL);
    glp_free_env();
    fprintf(stderr, "lpcert warm starts: %d bounds checked exactly, %d restored bases\n", n_checked, n_same);
    ck_assert_int_gt(n_checked, 30);
    ck_assert_int_gt(n_same, 30);
}
END_TEST

Suite *suite_lpcert(void)
{
    Suite *s = suite_create("lpcert");
    TCase *tc = tcase_create("core");
    lg_tcase_timeout(tc, 120);
    tcase_add_test(tc, test_lpcert_known_optimum);
    tcase_add_test(tc, test_lpcert_farkas);
    tcase_add_test(tc, test_lpcert_cannot_close);
    tcase_add_test(tc, test_lpcert_random_vs_exact);
    tcase_add_test(tc, test_lpcert_glpk_tiny_margin);
    tcase_add_test(tc, test_lpcert_glpk_fatal_error_caught);
    tcase_add_test(tc, test_lpcert_relax_warm_starts);
    suite_add_tcase(s, tc);
    return s;
}
