/* check_verify.c — the verdict driver: attack, re-check, quick proofs
 * against the solvers, never robust when a counterexample is sampled, the
 * VNN-COMP fixtures, the result file, error paths. */
#include <check.h>
#include <glpk.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "core/netfile.h"
#include "testutil.h"
#include "test_solver.h"
#include "verify/recheck.h"
#include "verify/verify.h"
#include "verify/vnnlib.h"
#include "onnx/load.h"


/* A random relu net n_in → h → h → n_out and a random centre in [0,1]. */
static void lg_tv_instance(lg_net *net, lg_rng *r, int n_in, int h, int n_out, double *x0)
{
    int dims[4] = {n_in, h, h, n_out};
    ck_assert_int_eq(lg_net_init(net, 3, dims, LG_ACT_RELU), LG_OK);
    lg_test_randomize(net, r, 1.0);
    for (int i = 0; i < n_in; i++) x0[i] = lg_rng_uniform(r);
}

static int lg_tv_argmax(const lg_net *net, const double *x)
{
    double y[16], s[64];
    lg_net_forward(net, x, y, s);
    int b = 0;
    for (int j = 1; j < lg_net_n_out(net); j++)
        if (y[j] > y[b]) b = j;
    return b;
}

/* Independent sampler: 1 if some of n uniform/corner points is a counterexample. */
static int lg_tv_sampled_cex(const lg_net *net, const lg_prop *p, lg_rng *r, int n)
{
    double x[16], y[16], s[64];
    const lg_prop_case *C = &p->cases[0];
    for (int t = 0; t < n; t++) {
        for (int i = 0; i < p->n_in; i++) {
            double u = lg_rng_uniform(r);
            if (t % 3 == 0) u = u < 0.5 ? 0 : 1;
            x[i] = u >= 1 ? C->hi[i] : C->lo[i] + u * (C->hi[i] - C->lo[i]);
        }
        lg_net_forward(net, x, y, s);
        if (lg_prop_case_violated_by(p, 0, y)) return 1;
    }
    return 0;
}

static void lg_tv_assert_witness(const lg_net *net, const lg_prop *p, const lg_verify_report *rep, const char *what)
{
    ck_assert_ptr_nonnull(rep->x);
    const lg_prop_case *C = &p->cases[rep->violated_case];
    ck_assert_msg(lg_prop_case_contains(p, rep->violated_case, rep->x), "%s: witness outside the box", what);
    double y[16], *s = malloc(2 * (size_t)lg_net_max_width(net) * sizeof *s);
    ck_assert_ptr_nonnull(s);
    lg_net_forward(net, rep->x, y, s);
    free(s);
    ck_assert_msg(lg_prop_case_violated_by(p, rep->violated_case, y), "%s: witness does not violate", what);
    ck_assert_int_eq(lg_recheck(net, C->lo, C->hi, C->n_terms, C->terms, rep->x, NULL), 1);
}

START_TEST(test_verify_attack_finds_clear_counterexamples)
{
    lg_rng r;
    lg_rng_init(&r, 5, 1);
    int n_inst = lg_test_quick() ? 10 : 40, clear = 0;
    for (int t = 0; t < n_inst; t++) {
        lg_net net;
        double x0[6];
        lg_tv_instance(&net, &r, 6, 10, 4, x0);
        lg_prop p;
        ck_assert_int_eq(lg_prop_robustness(&p, x0, 6, 0.4, 0, 1, lg_tv_argmax(&net, x0), 4, 0), LG_OK);
        /* clearly non-robust: ≥ 5% of 400 independent samples are counterexamples */
        double x[6], y[4], s[64];
        int hits = 0;
        for (int k = 0; k < 400; k++) {
            for (int i = 0; i < 6; i++) x[i] = p.cases[0].lo[i] + lg_rng_uniform(&r) * (p.cases[0].hi[i] - p.cases[0].lo[i]);
            lg_net_forward(&net, x, y, s);
            hits += lg_prop_case_violated_by(&p, 0, y);
        }
        if (hits >= 20) {
            clear++;
            lg_attack_opts ao = lg_attack_opts_default();
            lg_runctx run = lg_runctx_none();
            run.seed = (unsigned long)t;
            int found = 0;
            double w[6];
            const lg_prop_case *C = &p.cases[0];
            ck_assert_int_eq(lg_attack_run(&net, C->lo, C->hi, C->n_terms, C->terms, &ao, &run, w, &found), LG_OK);
            ck_assert_msg(found, "instance %d: %d/400 samples violate but the attack found nothing", t, hits);
            ck_assert_int_eq(lg_recheck(&net, C->lo, C->hi, C->n_terms, C->terms, w, NULL), 1);
            /* seeded: the same seed finds the same point */
            double w2[6];
            int found2 = 0;
            ck_assert_int_eq(lg_attack_run(&net, C->lo, C->hi, C->n_terms, C->terms, &ao, &run, w2, &found2), LG_OK);
            ck_assert_int_eq(found2, 1);
            ck_assert_int_eq(memcmp(w, w2, sizeof w), 0);
        }
        lg_prop_free(&p);
        lg_net_free(&net);
    }
    ck_assert_int_gt(clear, 0);
}
END_TEST

/* The hand-written gradient against central finite differences. */
START_TEST(test_verify_attack_gradient)
{
    lg_rng r;
    lg_rng_init(&r, 9, 2);
    lg_net net;
    double x0[5];
    lg_tv_instance(&net, &r, 5, 7, 3, x0);
    net.in_sub = malloc(5 * sizeof(double));
    net.in_div = malloc(5 * sizeof(double));
    for (int i = 0; i < 5; i++) {
        net.in_sub[i] = 0.1 * i;
        net.in_div[i] = 0.5 + 0.2 * i;
    }
    lg_prop p;
    ck_assert_int_eq(lg_prop_robustness(&p, x0, 5, 0.1, 0, 1, 1, 3, 0.2), LG_OK);
    const lg_prop_case *C = &p.cases[0];
    double g, grad[5], gp, gm;
    ck_assert_int_eq(lg_attack_objective(&net, C->n_terms, C->terms, x0, &g, grad), LG_OK);
    for (int i = 0; i < 5; i++) {
        double h = 1e-6, xp[5], xm[5];
        memcpy(xp, x0, sizeof xp);
        memcpy(xm, x0, sizeof xm);
        xp[i] += h;
        xm[i] -= h;
        ck_assert_int_eq(lg_attack_objective(&net, C->n_terms, C->terms, xp, &gp, NULL), LG_OK);
        ck_assert_int_eq(lg_attack_objective(&net, C->n_terms, C->terms, xm, &gm, NULL), LG_OK);
        ck_assert_double_eq_tol(grad[i], (gp - gm) / (2 * h), 1e-5);
    }
    lg_prop_free(&p);
    lg_net_free(&net);
}
END_TEST

/* The driver never says robust when sampling finds a counterexample; every
 * violated verdict re-checks; with a complete solver it decides everything
 * on these small nets, and quick paths agree with the solvers. */
static void lg_tv_never_robust(const char *solver, int n_inst, unsigned seed)
{
    lg_rng r;
    lg_rng_init(&r, seed, 3);
    int n_rob = 0, n_vio = 0;
    for (int t = 0; t < n_inst; t++) {
        lg_net net;
        double x0[5];
        lg_tv_instance(&net, &r, 5, 8, 3, x0);
        double eps = 0.01 + 0.2 * lg_rng_uniform(&r);
        lg_prop p;
        ck_assert_int_eq(lg_prop_robustness(&p, x0, 5, eps, 0, 1, lg_tv_argmax(&net, x0), 3, 0.05), LG_OK);
        lg_verify_opts o = lg_verify_opts_default();
        o.solver = lg_test_solver(solver);
        /* 120 s: GLPK's infeasibility at a branch-and-bound leaf is only a hint until Z3
         * confirms it exactly (verify/backend.c); on a few of these nets that takes ~30 s */
        o.timeout_s = 120;
        o.seed = (unsigned long)t;
        lg_verify_report rep;
        ck_assert_int_eq(lg_verify_run(&net, &p, &o, &rep), LG_OK);
        int cex = lg_tv_sampled_cex(&net, &p, &r, 300);
        ck_assert_msg(!(cex && rep.verdict == LG_VERDICT_ROBUST), "%s instance %d: robust but a sample violates", solver, t);
        if (rep.verdict == LG_VERDICT_VIOLATED) lg_tv_assert_witness(&net, &p, &rep, solver);
        if (strcmp(solver, "none") != 0)
            ck_assert_msg(rep.verdict != LG_VERDICT_UNKNOWN, "%s instance %d: unknown (%s)", solver, t, rep.how.reason);
        /* quick paths against the complete solvers */
        if (strcmp(solver, "none") == 0 && rep.verdict != LG_VERDICT_UNKNOWN) {
            static const char *const full[] = {"glpk", "z3"};
            for (int s = 0; s < 2; s++) {
                lg_verify_opts o2 = o;
                o2.solver = lg_test_solver(full[s]);
                o2.attack = 0;
                lg_verify_report r2;
                ck_assert_int_eq(lg_verify_run(&net, &p, &o2, &r2), LG_OK);
                if (rep.verdict == LG_VERDICT_VIOLATED) ck_assert_int_ne(r2.verdict, LG_VERDICT_ROBUST);
                if (rep.verdict == LG_VERDICT_ROBUST) ck_assert_int_ne(r2.verdict, LG_VERDICT_VIOLATED);
                lg_verify_report_free(&r2);
            }
        }
        n_rob += rep.verdict == LG_VERDICT_ROBUST;
        n_vio += rep.verdict == LG_VERDICT_VIOLATED;
        lg_verify_report_free(&rep);
        lg_prop_free(&p);
        lg_net_free(&net);
    }
    /* the instance mix has both kinds */
    ck_assert_msg(n_rob > 0 && n_vio > 0, "%s: %d robust, %d violated", solver, n_rob, n_vio);
}

START_TEST(test_verify_never_robust_with_counterexample)
{
    lg_tv_never_robust("none", lg_test_quick() ? 25 : 100, 21);
}
END_TEST

START_TEST(test_verify_solvers_decide_and_agree)
{
    lg_tv_never_robust("auto", lg_test_quick() ? 10 : 40, 22);
    lg_tv_never_robust("glpk", lg_test_quick() ? 6 : 20, 23);
    lg_tv_never_robust("z3", lg_test_quick() ? 6 : 20, 24);
}
END_TEST

/* Enumeration oracle (DESIGN.md §4), independent of bounds and back-ends:
 * for a net n_in → h → h → n_out with 2h ≤ 12 hidden ReLUs, every activation
 * pattern makes the net affine in x; one GLPK LP per (pattern, term) gives
 * min c·y + d over the box ∩ pattern region. The property is violated iff the
 * minimum over all of them is ≤ 0. Returns that minimum (+∞ if none). */
static double lg_tv_oracle(const lg_net *net, const lg_prop *p)
{
    int n = net->n_in, h = net->layers[0].n_out, no = lg_net_n_out(net);
    const lg_prop_case *C = &p->cases[0];
    double best = INFINITY;
    double A0[16][8], c0[16], A1[16][8], c1[16], Y[8][8], cy[8];
    glp_smcp parm;
    glp_init_smcp(&parm);
    parm.msg_lev = GLP_MSG_OFF;
    for (unsigned pat = 0; pat < (1u << (2 * h)); pat++) {
        /* z0 = W0 x + b0 ; a0 = pattern ; z1 = W1 a0 + b1 ; a1 ; y = W2 a1 + b2, as affine maps of x */
        const lg_layer *L0 = &net->layers[0], *L1 = &net->layers[1], *L2 = &net->layers[2];
        for (int o = 0; o < h; o++) {
            for (int i = 0; i < n; i++) A0[o][i] = L0->lin.W[o * n + i];
            c0[o] = L0->b[o];
        }
        for (int o = 0; o < h; o++) {
            c1[o] = L1->b[o];
            for (int i = 0; i < n; i++) A1[o][i] = 0;
            for (int j = 0; j < h; j++) {
                if (!(pat >> j & 1)) continue;
                double w = L1->lin.W[o * h + j];
                c1[o] += w * c0[j];
                for (int i = 0; i < n; i++) A1[o][i] += w * A0[j][i];
            }
        }
        for (int o = 0; o < no; o++) {
            cy[o] = L2->b[o];
            for (int i = 0; i < n; i++) Y[o][i] = 0;
            for (int j = 0; j < h; j++) {
                if (!(pat >> (h + j) & 1)) continue;
                double w = L2->lin.W[o * h + j];
                cy[o] += w * c1[j];
                for (int i = 0; i < n; i++) Y[o][i] += w * A1[j][i];
            }
        }
        glp_prob *P = glp_create_prob();
        glp_add_cols(P, n);
        for (int i = 0; i < n; i++) glp_set_col_bnds(P, i + 1, C->lo[i] == C->hi[i] ? GLP_FX : GLP_DB, C->lo[i], C->hi[i]);
        glp_add_rows(P, 2 * h);
        int ind[9];
        double val[9];
        for (int r = 0; r < 2 * h; r++) {
            int on = pat >> r & 1;
            double (*A)[8] = r < h ? A0 : A1;
            double cc = r < h ? c0[r] : c1[r - h];
            for (int i = 0; i < n; i++) {
                ind[i + 1] = i + 1;
                val[i + 1] = A[r % h][i];
            }
            glp_set_mat_row(P, r + 1, n, ind, val);
            /* active: z ≥ 0 ⇔ A x ≥ −c ; inactive: z ≤ 0 */
            glp_set_row_bnds(P, r + 1, on ? GLP_LO : GLP_UP, -cc, -cc);
        }
        for (int t = 0; t < C->n_terms; t++) {
            const lg_lincon *L = &C->terms[t].cons[0];
            double k0 = L->d;
            for (int j = 0; j < no; j++) k0 += L->coef[j] * cy[j];
            for (int i = 0; i < n; i++) {
                double g = 0;
                for (int j = 0; j < no; j++) g += L->coef[j] * Y[j][i];
                glp_set_obj_coef(P, i + 1, g);
            }
            if (glp_simplex(P, &parm) == 0 && glp_get_status(P) == GLP_OPT) {
                double v = glp_get_obj_val(P) + k0;
                if (v < best) best = v;
            }
        }
        glp_delete_prob(P);
    }
    return best;
}

static void lg_tv_oracle_check(const char *solver, int n_inst, unsigned seed)
{
    lg_rng r;
    lg_rng_init(&r, seed, 6);
    int decided = 0;
    for (int t = 0; t < n_inst; t++) {
        lg_net net;
        double x0[3];
        lg_tv_instance(&net, &r, 3, 5, 3, x0);
        lg_prop p;
        double eps = 0.05 + 0.5 * lg_rng_uniform(&r);
        ck_assert_int_eq(lg_prop_robustness(&p, x0, 3, eps, 0, 1, lg_tv_argmax(&net, x0), 3, 0), LG_OK);
        double m = lg_tv_oracle(&net, &p);
        lg_verify_opts o = lg_verify_opts_default();
        o.solver = lg_test_solver(solver);
        o.seed = (unsigned long)t;
        lg_verify_report rep;
        ck_assert_int_eq(lg_verify_run(&net, &p, &o, &rep), LG_OK);
        if (m < -1e-7) ck_assert_msg(rep.verdict != LG_VERDICT_ROBUST, "%s %d: oracle min %g but robust", solver, t, m);
        if (m > 1e-7) ck_assert_msg(rep.verdict != LG_VERDICT_VIOLATED, "%s %d: oracle min %g but violated", solver, t, m);
        if (strcmp(solver, "none") != 0 && fabs(m) > 1e-7)
            ck_assert_msg(rep.verdict == (m < 0 ? LG_VERDICT_VIOLATED : LG_VERDICT_ROBUST), "%s %d: oracle %g, got %s (%s)",
                          solver, t, m, lg_verdict_name(rep.verdict), rep.how.reason);
        decided += rep.verdict != LG_VERDICT_UNKNOWN;
        if (getenv("LG_TV_DEBUG")) fprintf(stderr, "%s %d: oracle %g verdict %s\n", solver, t, m, lg_verdict_name(rep.verdict));
        lg_verify_report_free(&rep);
        lg_prop_free(&p);
        lg_net_free(&net);
    }
    ck_assert_int_gt(decided, 0);
}

START_TEST(test_verify_enumeration_oracle)
{
    lg_tv_oracle_check("none", lg_test_quick() ? 8 : 30, 31);
    lg_tv_oracle_check("glpk", lg_test_quick() ? 5 : 20, 32);
    lg_tv_oracle_check("z3", lg_test_quick() ? 5 : 20, 33);
    lg_tv_oracle_check("auto", lg_test_quick() ? 5 : 20, 34);
}
END_TEST

/* Several cases (VNN-LIB disjunction of boxes): any violated ⇒ violated,
 * all robust ⇒ robust. Net: y0 = x0, y1 = 0.5 (identity), counterexample
 * region y1 − y0 ≥ 0 ⇔ x0 ≤ 0.5. */
START_TEST(test_verify_multi_case)
{
    int dims[2] = {1, 2};
    lg_net net;
    ck_assert_int_eq(lg_net_init(&net, 1, dims, LG_ACT_RELU), LG_OK);
    net.layers[0].act = LG_ACT_IDENTITY;
    net.layers[0].lin.W[0] = 1.0;
    net.layers[0].lin.W[1] = 0.0;
    net.layers[0].b[1] = 0.5;
    static const char *const txt[2] = {
        /* both boxes above 0.5: robust */
        "(declare-const X_0 Real)(declare-const Y_0 Real)(declare-const Y_1 Real)"
        "(assert (or (and (>= X_0 0.6) (<= X_0 0.7)) (and (>= X_0 0.8) (<= X_0 0.9))))"
        "(assert (>= Y_1 Y_0))",
        /* second box reaches below 0.5: violated */
        "(declare-const X_0 Real)(declare-const Y_0 Real)(declare-const Y_1 Real)"
        "(assert (or (and (>= X_0 0.6) (<= X_0 0.7)) (and (>= X_0 0.3) (<= X_0 0.9))))"
        "(assert (>= Y_1 Y_0))"};
    for (int k = 0; k < 2; k++) {
        lg_prop p;
        ck_assert_msg(lg_vnnlib_parse(&p, txt[k], strlen(txt[k]), "multi", 1, 2) == LG_OK, "%s", lg_errmsg());
        ck_assert_int_eq(p.n_cases, 2);
        lg_verify_opts o = lg_verify_opts_default();
        o.solver = lg_test_solver("none");
        lg_verify_report rep;
        ck_assert_int_eq(lg_verify_run(&net, &p, &o, &rep), LG_OK);
        if (k == 0) {
            ck_assert_int_eq(rep.verdict, LG_VERDICT_ROBUST);
            ck_assert_int_eq(rep.n_cases_robust, 2);
        } else {
            ck_assert_int_eq(rep.verdict, LG_VERDICT_VIOLATED);
            ck_assert_int_eq(rep.violated_case, 1);
            ck_assert(rep.x[0] >= 0.3 && rep.x[0] <= 0.5);
        }
        lg_verify_report_free(&rep);
        lg_prop_free(&p);
    }
    lg_net_free(&net);
}
END_TEST

START_TEST(test_verify_result_file)
{
    lg_rng r;
    lg_rng_init(&r, 3, 4);
    lg_net net;
    double x0[4];
    lg_tv_instance(&net, &r, 4, 6, 3, x0);
    int wrong = (lg_tv_argmax(&net, x0) + 1) % 3; /* misclassified centre: violated */
    lg_prop p;
    ck_assert_int_eq(lg_prop_robustness(&p, x0, 4, 0.05, 0, 1, wrong, 3, 0), LG_OK);
    lg_verify_opts o = lg_verify_opts_default();
    o.solver = lg_test_solver("none");
    lg_verify_report rep;
    ck_assert_int_eq(lg_verify_run(&net, &p, &o, &rep), LG_OK);
    ck_assert_int_eq(rep.verdict, LG_VERDICT_VIOLATED);
    const char *path = lg_test_tmpfile(".txt");
    ck_assert_int_eq(lg_verify_write_result_path(&rep, path), LG_OK);
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    char word[16];
    ck_assert_int_eq(fscanf(f, "%15s", word), 1);
    ck_assert_str_eq(word, "sat");
    double x[4], y[3];
    int ix;
    ck_assert_int_eq(fscanf(f, " ((X_%d %lf)", &ix, &x[0]), 2);
    for (int i = 1; i < 4; i++) ck_assert_int_eq(fscanf(f, " (X_%d %lf)", &ix, &x[i]), 2);
    for (int j = 0; j < 3; j++) ck_assert_int_eq(fscanf(f, " (Y_%d %lf)", &ix, &y[j]), 2);
    fclose(f);
    for (int i = 0; i < 4; i++) ck_assert(x[i] == rep.x[i]); /* %.17g round-trips exactly */
    for (int j = 0; j < 3; j++) ck_assert(y[j] == rep.y[j]);
    /* the VNN-LIB assignment reader (interop) accepts the same file */
    ck_assert_int_eq(lg_verify_write_result_path(&rep, path), LG_OK);
    double x2[4], y2[3];
    ck_assert_msg(lg_vnnlib_read_assignment(path, 4, 3, x2, y2) == LG_OK, "%s", lg_errmsg());
    for (int i = 0; i < 4; i++) ck_assert(x2[i] == rep.x[i]);
    for (int j = 0; j < 3; j++) ck_assert(y2[j] == rep.y[j]);
    remove(path);
    lg_verify_report z;
    memset(&z, 0, sizeof z);
    z.verdict = LG_VERDICT_UNKNOWN;
    z.how.timed_out = 1;
    path = lg_test_tmpfile(".txt");
    ck_assert_int_eq(lg_verify_write_result_path(&z, path), LG_OK);
    f = fopen(path, "r");
    ck_assert_int_eq(fscanf(f, "%15s", word), 1);
    ck_assert_str_eq(word, "timeout");
    fclose(f);
    remove(path);
    lg_verify_report_free(&rep);
    lg_prop_free(&p);
    lg_net_free(&net);
}
END_TEST

/* A clean input that is already a counterexample: violated, flagged
 * misclassified, decided before anything else runs, the clean input as the
 * witness; every back-end mode the same. The net's own label: no flag. */
START_TEST(test_verify_misclassified_clean_input)
{
    static const char *const solvers[] = {"auto", "none", "glpk"};
    lg_rng r;
    lg_rng_init(&r, 5, 9);
    for (int t = 0; t < 9; t++) {
        lg_net net;
        double x0[4];
        lg_tv_instance(&net, &r, 4, 6, 3, x0);
        int best = lg_tv_argmax(&net, x0);
        for (int wrong = 0; wrong < 2; wrong++) {
            int label = wrong ? (best + 1 + t % 2) % 3 : best;
            lg_prop p;
            ck_assert_int_eq(lg_prop_robustness(&p, x0, 4, 0.02, 0, 1, label, 3, 0), LG_OK);
            lg_verify_opts o = lg_verify_opts_default();
            o.solver = lg_test_solver(solvers[t % 3]);
            o.backend_only = t % 3 == 2;
            lg_verify_report rep;
            ck_assert_int_eq(lg_verify_run(&net, &p, &o, &rep), LG_OK);
            ck_assert_msg(rep.misclassified == wrong, "instance %d label %d (class %d, %s): misclassified %d", t, label,
                          best, lg_solver_pick_name(&o.solver), rep.misclassified);
            if (wrong) {
                ck_assert_int_eq(rep.verdict, LG_VERDICT_VIOLATED);
                ck_assert_str_eq(rep.method, "clean input");
                for (int i = 0; i < 4; i++) ck_assert(rep.x[i] == x0[i]);
                lg_tv_assert_witness(&net, &p, &rep, "clean input");
            }
            lg_verify_report_free(&rep);
            lg_prop_free(&p);
        }
        lg_net_free(&net);
    }
}
END_TEST

START_TEST(test_verify_margin)
{
    const double x0[2] = {0.5, 0.5};
    lg_prop a, b;
    ck_assert_int_eq(lg_prop_robustness(&a, x0, 2, 0.1, 0, 1, 0, 3, 0.0), LG_OK);
    ck_assert_int_eq(lg_prop_robustness(&b, x0, 2, 0.1, 0, 1, 0, 3, 0.75), LG_OK);
    ck_assert_int_eq(lg_verify_apply_margin(&a, 0.75), LG_OK);
    for (int t = 0; t < 2; t++) ck_assert(a.cases[0].terms[t].cons[0].d == b.cases[0].terms[t].cons[0].d);
    lg_prop_free(&a);
    lg_prop_free(&b);
}
END_TEST

/* Fixture: VNN-COMP mnist-net_256x2, known verdicts; never the opposite. */
START_TEST(test_verify_vnncomp_fixtures)
{
    static const struct { const char *prop; lg_verdict known; } inst[] = {
        {"vnncomp/prop_1_0.05.vnnlib", LG_VERDICT_VIOLATED},
        {"vnncomp/prop_2_0.05.vnnlib", LG_VERDICT_VIOLATED},
        {"vnncomp/prop_7_0.03.vnnlib", LG_VERDICT_ROBUST},
        {"vnncomp/prop_3_0.05.vnnlib", LG_VERDICT_ROBUST},
    };
    lg_net net;
    ck_assert_int_eq(lg_net_load(&net, lg_test_fixture("vnncomp/mnist-net_256x2.onnx")), LG_OK);
    size_t n = lg_test_quick() ? 3 : 4;
    for (size_t i = 0; i < n; i++) {
        lg_prop p;
        ck_assert_msg(lg_vnnlib_read(&p, lg_test_fixture(inst[i].prop), net.n_in, lg_net_n_out(&net)) == LG_OK, "%s: %s",
                      inst[i].prop, lg_errmsg());
        lg_verify_opts o = lg_verify_opts_default();
        o.timeout_s = 120;
        lg_verify_report rep;
        ck_assert_int_eq(lg_verify_run(&net, &p, &o, &rep), LG_OK);
        fprintf(stderr, "fixture %s: %s%s%s%s by %s in %.2f s, unstable %d\n", inst[i].prop, lg_verdict_name(rep.verdict),
                rep.how.reason[0] ? " (" : "", rep.how.reason, rep.how.reason[0] ? ")" : "", rep.method, rep.seconds,
                rep.unstable_total);
        if (inst[i].known == LG_VERDICT_VIOLATED) ck_assert_int_ne(rep.verdict, LG_VERDICT_ROBUST);
        else ck_assert_int_ne(rep.verdict, LG_VERDICT_VIOLATED);
        if (rep.verdict == LG_VERDICT_VIOLATED) lg_tv_assert_witness(&net, &p, &rep, inst[i].prop);
        lg_verify_report_free(&rep);
        lg_prop_free(&p);
    }
    lg_net_free(&net);
}
END_TEST

/* Exit status of a shell command (−1 if it did not exit normally). */
/* The lgelu binary: verdict line, --json, --out, exit codes, encode. */
START_TEST(test_verify_cli_contract)
{
    lg_rng r;
    lg_rng_init(&r, 77, 7);
    lg_net net;
    double x0[6];
    lg_tv_instance(&net, &r, 6, 10, 4, x0);
    char netp[256], xp[256], outp[256], encp[256], cmd[2048];
    snprintf(netp, sizeof netp, "%s", lg_test_tmpfile(".lgnet"));
    snprintf(xp, sizeof xp, "%s", lg_test_tmpfile(".txt"));
    snprintf(outp, sizeof outp, "%s", lg_test_tmpfile(".res"));
    snprintf(encp, sizeof encp, "%s", lg_test_tmpfile(".smt2"));
    ck_assert_int_eq(lg_netfile_write(&net, netp), LG_OK);
    FILE *f = fopen(xp, "w");
    for (int i = 0; i < 6; i++) fprintf(f, "%.17g\n", x0[i]);
    fclose(f);
    const char *bin = LG_BINARY_DIR "/lgelu";
    snprintf(cmd, sizeof cmd, "%s verify %s --input %s --eps 0.2 --json -o %s --timeout 30", bin, netp, xp, outp);
    FILE *pp = popen(cmd, "r");
    ck_assert_ptr_nonnull(pp);
    char line[4096] = "", extra[64];
    ck_assert_ptr_nonnull(fgets(line, sizeof line, pp));
    ck_assert_ptr_null(fgets(extra, sizeof extra, pp)); /* exactly one line */
    int st = pclose(pp);
    ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    static const char *const keys[] = {"\"instance\"", "\"solver\"", "\"verdict\"", "\"reason\"", "\"seconds\"",
                                       "\"unstable\"", "\"unstable_per_layer\"", "\"nodes\"", "\"bound_method\"",
                                       "\"margin\""};
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) ck_assert_msg(strstr(line, keys[k]), "missing %s", keys[k]);
    f = fopen(outp, "r");
    ck_assert_ptr_nonnull(f);
    char first[32] = "";
    ck_assert_int_eq(fscanf(f, "%31s", first), 1);
    fclose(f);
    if (strstr(line, "\"verdict\": \"robust\"")) ck_assert_str_eq(first, "unsat");
    else if (strstr(line, "\"verdict\": \"violated\"")) ck_assert_str_eq(first, "sat");
    else ck_assert(strcmp(first, "unknown") == 0 || strcmp(first, "timeout") == 0);
    /* usage errors → 2, runtime errors → 1 */
    snprintf(cmd, sizeof cmd, "%s verify %s --input %s --eps 0.2 --bogus 2>/dev/null", bin, netp, xp);
    ck_assert_int_eq(lg_test_sh(cmd), 2);
    snprintf(cmd, sizeof cmd, "%s verify %s --input %s 2>/dev/null", bin, netp, xp);
    ck_assert_int_eq(lg_test_sh(cmd), 2);
    snprintf(cmd, sizeof cmd, "%s verify %s --input %s --eps 0.1 --solver nope 2>/dev/null", bin, netp, xp);
    ck_assert_int_eq(lg_test_sh(cmd), 2);
    snprintf(cmd, sizeof cmd, "%s verify %s.missing --input %s --eps 0.1 2>/dev/null", bin, netp, xp);
    ck_assert_int_eq(lg_test_sh(cmd), 1);
    snprintf(cmd, sizeof cmd, "%s verify --help >/dev/null", bin);
    ck_assert_int_eq(lg_test_sh(cmd), 0);
    /* encode writes a non-empty SMT-LIB file; without -o it is a usage error */
    snprintf(cmd, sizeof cmd, "%s encode %s --input %s --eps 0.2 --format smt2 -o %s", bin, netp, xp, encp);
    ck_assert_int_eq(lg_test_sh(cmd), 0);
    f = fopen(encp, "r");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
    ck_assert_int_gt(ftell(f), 100);
    fclose(f);
    snprintf(cmd, sizeof cmd, "%s encode %s --input %s --eps 0.2 --format smt2 2>/dev/null", bin, netp, xp);
    ck_assert_int_eq(lg_test_sh(cmd), 2);
    snprintf(cmd, sizeof cmd, "%s encode %s --input %s --eps 0.2 --format xml -o %s 2>/dev/null", bin, netp, xp, encp);
    ck_assert_int_eq(lg_test_sh(cmd), 2);
    /* a λ-GELU net is verified directly, but the z3 back-end refuses it: a network of the wrong kind (2) */
    net.layers[0].act = LG_ACT_LGELU;
    net.layers[0].lambda = 2.0;
    ck_assert_int_eq(lg_netfile_write(&net, netp), LG_OK);
    snprintf(cmd, sizeof cmd, "%s verify %s --input %s --eps 0.1 >/dev/null 2>&1", bin, netp, xp);
    ck_assert_int_eq(lg_test_sh(cmd), 0);
    snprintf(cmd, sizeof cmd, "%s verify %s --input %s --eps 0.1 --solver z3 2>/dev/null", bin, netp, xp);
    ck_assert_int_eq(lg_test_sh(cmd), 2);
    remove(netp);
    remove(xp);
    remove(outp);
    remove(encp);
    lg_net_free(&net);
}
END_TEST

START_TEST(test_verify_refuse_smooth_and_shapes)
{
    int dims[3] = {2, 3, 2};
    lg_net net;
    ck_assert_int_eq(lg_net_init(&net, 2, dims, LG_ACT_LGELU), LG_OK);
    const double x0[2] = {0.5, 0.5};
    lg_prop p;
    ck_assert_int_eq(lg_prop_robustness(&p, x0, 2, 0.1, 0, 1, 0, 2, 0), LG_OK);
    lg_verify_opts o = lg_verify_opts_default();
    lg_verify_report rep;
    o.solver = lg_test_solver("glpk"); /* a smooth net is verified directly, but not by a back-end */
    ck_assert_int_eq(lg_verify_run(&net, &p, &o, &rep), LG_ERR_UNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(lg_errmsg(), "lgelu relu"));
    o.solver = lg_test_solver("auto");
    net.layers[0].act = LG_ACT_RELU;
    lg_prop q;
    const double x1[3] = {0, 0, 0};
    ck_assert_int_eq(lg_prop_robustness(&q, x1, 3, 0.1, 0, 1, 0, 2, 0), LG_OK);
    ck_assert_int_eq(lg_verify_run(&net, &q, &o, &rep), LG_ERR_ARG);
    /* an unknown solver name is refused where names are read (the edge), before any run */
    ck_assert_int_eq(lg_solver_parse("nosuch", &o.solver), LG_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(lg_errmsg(), "auto, glpk, z3 or none"));
    lg_prop_free(&p);
    lg_prop_free(&q);
    lg_net_free(&net);
}
END_TEST

/* Auto mode's time split (lg_verify_auto_bab_share): on a dense net the
 * cheap first pass (a tenth, at most 32 nodes) up to LG_VERIFY_MILP_UNSTABLE
 * unstable ReLUs, β-CROWN's share without a cap past it; never a cap raised. */
START_TEST(test_verify_auto_bab_share)
{
    lg_net net;
    int dims[3] = {4, 8, 2};
    ck_assert_int_eq(lg_net_init(&net, 2, dims, LG_ACT_RELU), LG_OK);
    long cap = 2000000;
    double f = lg_verify_auto_bab_share(&net, LG_VERIFY_MILP_UNSTABLE, &cap);
    ck_assert_double_eq(f, 0.1);
    ck_assert_int_eq(cap, 32);
    cap = 10;
    lg_verify_auto_bab_share(&net, 0, &cap);
    ck_assert_int_eq(cap, 10);
    cap = 2000000;
    f = lg_verify_auto_bab_share(&net, LG_VERIFY_MILP_UNSTABLE + 1, &cap);
    ck_assert_double_eq(f, LG_VERIFY_BAB_SHARE);
    ck_assert_int_eq(cap, 2000000);
    ck_assert(LG_VERIFY_BAB_SHARE > 0.1 && LG_VERIFY_BAB_SHARE < 1); /* the back-end still gets a turn */
    lg_net_free(&net);
}
END_TEST

Suite *suite_verify(void)
{
    Suite *s = suite_create("verify");
    TCase *tc = tcase_create("core");
    lg_tcase_timeout(tc, 600);
    tcase_add_test(tc, test_verify_attack_finds_clear_counterexamples);
    tcase_add_test(tc, test_verify_attack_gradient);
    tcase_add_test(tc, test_verify_never_robust_with_counterexample);
    tcase_add_test(tc, test_verify_result_file);
    tcase_add_test(tc, test_verify_enumeration_oracle);
    tcase_add_test(tc, test_verify_multi_case);
    tcase_add_test(tc, test_verify_margin);
    tcase_add_test(tc, test_verify_solvers_decide_and_agree);
    tcase_add_test(tc, test_verify_vnncomp_fixtures);
    suite_add_tcase(s, tc);
    TCase *tl = tcase_create("limits");
    lg_tcase_timeout(tl, 120);
    tcase_add_test(tl, test_verify_refuse_smooth_and_shapes);
    tcase_add_test(tl, test_verify_cli_contract);
    tcase_add_test(tl, test_verify_auto_bab_share);
    suite_add_tcase(s, tl);
    TCase *tm = tcase_create("misclassified");
    tcase_add_test(tm, test_verify_misclassified_clean_input);
    lg_tcase_timeout(tm, 120);
    suite_add_tcase(s, tm);
    return s;
}
