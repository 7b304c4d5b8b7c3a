/* check_encode.c — the solver back-ends (Z3, GLPK) and the text exports
 * (SMT-LIB 2, CPLEX LP) against each other, the enumeration oracle and the
 * z3 / cvc5 / glpsol command-line tools. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "encode/problem.h"
#include "core/clock.h"
#include "encode/rational.h"
#include "oracle.h"
#include "testutil.h"

/* Run a shell command, return its whole output (caller frees). */
static void write_file(const lg_solver_ops *ops, const lg_problem *p, const char *path)
{
    FILE *f = fopen(path, "w");
    ck_assert_msg(f != NULL, "cannot create %s", path);
    ck_assert_int_eq(ops->write(p, f), LG_OK);
    ck_assert_int_eq(fclose(f), 0);
}

/* ------------------------------------------------------------------ tests */

START_TEST(test_encode_rational_exact)
{
    lg_rat r;
    char buf[2 * LG_RAT_DIGITS + 2];
    ck_assert_int_eq(lg_rat_from_double(&r, 0.1), LG_OK);
    ck_assert_str_eq(lg_rat_str(&r, buf), "3602879701896397/36028797018963968");
    ck_assert_int_eq(lg_rat_from_double(&r, -0.75), LG_OK);
    ck_assert_str_eq(lg_rat_str(&r, buf), "-3/4");
    ck_assert_int_eq(lg_rat_from_double(&r, 3.0), LG_OK);
    ck_assert_str_eq(lg_rat_str(&r, buf), "3/1");
    ck_assert_int_eq(lg_rat_from_double(&r, -0.0), LG_OK);
    ck_assert_str_eq(lg_rat_str(&r, buf), "0/1");
    ck_assert_int_eq(lg_rat_from_double(&r, 0x1p-1074), LG_OK);
    ck_assert_str_eq(r.num, "1");
    ck_assert_uint_eq(strlen(r.den), 324);
    ck_assert(strncmp(r.den, "202402253307310618352495346718917307049556649764142118356901358027430339567995346891960"
                             "383701437124495187077864316811911389808737385793476867013399940738509921517424276566361"
                             "364466907742093216341239767678472745068562007483424692698618103355649159556340810056512"
                             "358769552333414615230502532186327508646006263307707741093494784",
                      324) == 0);
    ck_assert_int_eq(lg_rat_from_double(&r, 1.7976931348623157e308), LG_OK);
    ck_assert_uint_eq(strlen(r.num), 309);
    ck_assert_str_eq(r.den, "1");
    ck_assert(strncmp(r.num, "17976931348623157", 17) == 0);
    ck_assert_int_eq(lg_rat_inverse(&r), LG_OK);
    ck_assert_str_eq(r.num, "1");
    /* random doubles: num/den read back in double gives the double */
    lg_rng g;
    lg_rng_init(&g, 7, 1);
    for (int i = 0; i < 2000; i++) {
        double v = ldexp(lg_rng_uniform(&g) - 0.5, (int)lg_rng_below(&g, 120) - 60);
        ck_assert_int_eq(lg_rat_from_double(&r, v), LG_OK);
        double back = strtod(r.num, NULL) / strtod(r.den, NULL) * (r.neg ? -1 : 1);
        ck_assert_msg(back == v, "rational of %.17g reads back as %.17g", v, back);
        ck_assert(r.den[strlen(r.den) - 1] != '0');
    }
    ck_assert_int_eq(lg_rat_from_double(&r, NAN), LG_ERR_NUMERIC);
    ck_assert_int_eq(lg_rat_from_double(&r, 0.0), LG_OK);
    ck_assert_int_eq(lg_rat_inverse(&r), LG_ERR_NUMERIC);
}
END_TEST

START_TEST(test_encode_solver_find)
{
    const char *names[] = {"z3", "glpk", "smt2", "lp"};
    for (int i = 0; i < 4; i++) {
        const lg_solver_ops *ops = lg_solver_find(names[i]);
        ck_assert_msg(ops != NULL, "%s not found", names[i]);
        ck_assert_str_eq(ops->name, i % 2 ? "glpk" : "z3"); /* "smt2", "lp": the rows by their text form */
        ck_assert_ptr_nonnull(ops->solve);
        ck_assert_ptr_nonnull(ops->write);
    }
    ck_assert_ptr_null(lg_solver_find("cplex"));
    ck_assert_ptr_null(lg_solver_find(NULL));
    /* the one table: what each UNSAT means */
    ck_assert_int_eq(lg_solver_find("z3")->unsat, LG_UNSAT_EXACT);
    ck_assert_int_eq(lg_solver_find("glpk")->unsat, LG_UNSAT_CERTIFIED);
    /* aliases name rows, they are not rows */
    ck_assert_ptr_eq(lg_solver_find("smt2"), lg_solver_z3);
    ck_assert_ptr_eq(lg_solver_find("lp"), lg_solver_glpk);
    ck_assert_ptr_null(lg_solver_find("auto"));
    ck_assert_ptr_null(lg_solver_find("none"));
    /* modes are picks, resolved once at the edge */
    lg_solver_pick pk;
    const lg_solver_ops *chain[3];
    ck_assert_int_eq(lg_solver_parse("auto", &pk), LG_OK);
    ck_assert_int_eq(pk.mode, LG_SOLVER_AUTO);
    ck_assert_int_eq(lg_solver_chain(&pk, chain), 2);
    ck_assert_ptr_eq(chain[0], lg_solver_glpk);
    ck_assert_ptr_eq(chain[1], lg_solver_z3);
    ck_assert_int_eq(lg_solver_parse("none", &pk), LG_OK);
    ck_assert_int_eq(lg_solver_chain(&pk, chain), 0);
    ck_assert_str_eq(lg_solver_pick_name(&pk), "none");
    ck_assert_int_eq(lg_solver_parse("glpk", &pk), LG_OK);
    ck_assert(pk.mode == LG_SOLVER_ONE && pk.row == lg_solver_glpk && lg_solver_chain(&pk, chain) == 1);
    ck_assert_int_eq(lg_solver_parse("lp", &pk), LG_ERR_ARG);      /* an alias is no verify choice */
    ck_assert_int_eq(lg_solver_parse("z3-lp", &pk), LG_ERR_ARG);   /* a theory row is reached by its theory */
    ck_assert_int_eq(lg_solver_parse("cplex", &pk), LG_ERR_ARG);
    char buf[64];
    ck_assert_str_eq(lg_solver_verify_names(buf, sizeof buf), "auto, glpk, z3 or none");
    /* theories: the family's rows, and the label each row's result gets */
    ck_assert_str_eq(lg_solver_theory_names(lg_solver_z3, buf, sizeof buf), "auto, exact, lp or lp-lemmas");
    ck_assert_ptr_eq(lg_solver_theory(lg_solver_z3, "lp"), lg_solver_find("z3-lp"));
    ck_assert_ptr_eq(lg_solver_theory(lg_solver_z3, "exact"), lg_solver_find("z3-exact"));
    ck_assert_ptr_null(lg_solver_theory(lg_solver_z3, "simplex"));
    ck_assert_ptr_null(lg_solver_theory(lg_solver_glpk, "lp"));
    ck_assert_str_eq(lg_solver_label(lg_solver_theory(lg_solver_z3, "auto"), "lp", buf, sizeof buf), "z3-lp");
    ck_assert_str_eq(lg_solver_label(lg_solver_theory(lg_solver_z3, "auto"), "", buf, sizeof buf), "z3-auto");
    ck_assert_str_eq(lg_solver_label(lg_solver_theory(lg_solver_z3, "lp-lemmas"), "lp", buf, sizeof buf), "z3-lp");
    ck_assert_str_eq(lg_solver_label(lg_solver_z3, "exact", buf, sizeof buf), "z3");
    ck_assert_str_eq(lg_solver_label(lg_solver_glpk, "", buf, sizeof buf), "glpk");
    /* capabilities: every row answers each one */
    for (int i = 0; lg_solver_at(i); i++) {
        const lg_solver_ops *o = lg_solver_at(i);
        ck_assert_int_eq(o->index, i);
        ck_assert_ptr_nonnull(o->solve);
        ck_assert_msg(o->caps & LG_SOLVER_PWL_ONLY, "%s: piecewise-linear only", o->name);
        ck_assert_msg(o->caps & LG_SOLVER_COMPLETE, "%s: complete", o->name);
        ck_assert_msg(o->caps & LG_SOLVER_FORK, "%s: runs in a child under limits", o->name);
        /* a row that picks its theory per query belongs to a family that names theories */
        if (o->caps & LG_SOLVER_PICKS_THEORY) ck_assert(o->family && o->theory);
        if (o->family) ck_assert_ptr_eq(lg_solver_theory(lg_solver_z3, o->theory), o);
        ck_assert_ptr_eq(lg_solver_find(o->name), o);
        if (o->unsat == LG_UNSAT_CONFIRM) /* a hint needs a row that can confirm it */
            ck_assert(o->confirm && o->confirm->unsat != LG_UNSAT_CONFIRM);
        else
            ck_assert_ptr_null(o->confirm);
    }
    ck_assert(lg_solver_find("z3-auto")->caps & LG_SOLVER_PICKS_THEORY);
    ck_assert(!(lg_solver_find("z3-lp")->caps & LG_SOLVER_PICKS_THEORY));
    ck_assert_int_eq(lg_solver_find("z3-lp")->unsat, LG_UNSAT_CERTIFIED);
    ck_assert_ptr_null(lg_solver_find("z3-lp")->write); /* no text form */
}
END_TEST

/* Exactness: y = 0.1·x with x = 3 and the condition y ≤ 0.3. In exact
 * arithmetic on the doubles 3·0.1₆₄ = 0.30000000000000001665 > 0.3₆₄ =
 * 0.29999999999999998890, so there is no counterexample; rounding the
 * weights through decimal text ("0.1", "0.3") would wrongly give sat. */
START_TEST(test_encode_z3_exact_rationals)
{
    int dims[2] = {1, 1};
    lg_net net;
    ck_assert_int_eq(lg_net_init(&net, 1, dims, LG_ACT_RELU), LG_OK);
    net.layers[0].lin.W[0] = 0.1;
    net.layers[0].b[0] = 0.0;
    double lo = 3.0, hi = 3.0, pl = 0.25, ph = 0.35;
    double *pre_lo[1] = {&pl}, *pre_hi[1] = {&ph};
    double coef = 1.0;
    lg_lincon c = {&coef, -0.3};
    lg_term t = {1, &c};
    lg_problem p = {&net, &lo, &hi, 1, &t, pre_lo, pre_hi, 0, NULL, NULL};
    lg_solve_opts o = lg_solve_opts_default();
    lg_result r;
    ck_assert_int_eq(lg_solver_find("z3")->solve(&p, &o, &r), LG_OK);
    ck_assert_int_eq(r.answer, LG_ANSWER_UNSAT);
    lg_result_free(&r);
    lg_answer oa;
    ck_assert_int_eq(lg_oracle_solve(&p, &oa, NULL, NULL), LG_OK);
    ck_assert_int_eq(oa, LG_ANSWER_UNSAT);
    /* GLPK sees t* ≈ 1.7e-17, inside its tolerance: it must not claim sat */
    ck_assert_int_eq(lg_solver_find("glpk")->solve(&p, &o, &r), LG_OK);
    ck_assert_int_ne(r.answer, LG_ANSWER_SAT);
    lg_result_free(&r);
    const char *path = lg_test_tmpfile(".smt2");
    write_file(lg_solver_find("smt2"), &p, path);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "z3 -T:30 %s 2>&1", path);
    char *out = lg_test_run_output(cmd);
    ck_assert_msg(lg_test_smt_verdict(out) == LG_ANSWER_UNSAT, "z3 CLI: %s", out);
    free(out);
    snprintf(cmd, sizeof cmd, "cvc5 --lang smt2 --tlimit=30000 %s 2>&1", path);
    out = lg_test_run_output(cmd);
    ck_assert_msg(lg_test_smt_verdict(out) == LG_ANSWER_UNSAT, "cvc5 CLI: %s", out);
    free(out);
    remove(path);
    /* with the threshold 0.30000000000000004 (= 3·0.1 rounded up) it is sat */
    c.d = -0.30000000000000004;
    ck_assert_int_eq(lg_solver_find("z3")->solve(&p, &o, &r), LG_OK);
    ck_assert_int_eq(r.answer, LG_ANSWER_SAT);
    ck_assert_double_eq(r.x[0], 3.0);
    lg_result_free(&r);
    lg_net_free(&net);
}
END_TEST

/* A counterexample region whose exact boundary is not a double: y = 3x,
 * region 1 − 3x ≤ 0 (x ≥ 1/3) in the box [0, 0.34]. Z3's exact model may
 * be the tie x = 1/3, whose double (just below 1/3) passes the double check
 * (3·fl(1/3) rounds to 1) but not the exact one; the back-end must return a
 * point strictly inside, i.e. a double > 1/3. */
START_TEST(test_encode_z3_witness_off_the_tie)
{
    int dims[2] = {1, 1};
    lg_net net;
    ck_assert_int_eq(lg_net_init(&net, 1, dims, LG_ACT_RELU), LG_OK);
    net.layers[0].lin.W[0] = 3.0;
    net.layers[0].b[0] = 0.0;
    double lo = 0.0, hi = 0.34, pl = 0.0, ph = 1.02;
    double *pre_lo[1] = {&pl}, *pre_hi[1] = {&ph};
    double coef = -1.0;
    lg_lincon c = {&coef, 1.0};
    lg_term t = {1, &c};
    lg_problem p = {&net, &lo, &hi, 1, &t, pre_lo, pre_hi, 0, NULL, NULL};
    lg_solve_opts o = lg_solve_opts_default();
    lg_result r;
    for (unsigned seed = 1; seed <= 3; seed++) {
        o.run.seed = seed;
        ck_assert_int_eq(lg_solver_find("z3")->solve(&p, &o, &r), LG_OK);
        ck_assert_int_eq(r.answer, LG_ANSWER_SAT);
        ck_assert_msg(r.x[0] > 1.0 / 3.0 && r.x[0] <= 0.34, "witness %.17g is not strictly inside", r.x[0]);
        lg_result_free(&r);
    }
    lg_net_free(&net);
}
END_TEST

/* Z3, GLPK and the oracle on seeded random instances. */
START_TEST(test_encode_random_agree)
{
    int n_inst = lg_test_quick() ? 30 : 100;
    int n_sat = 0, n_unsat = 0, glpk_unknown = 0, z3_unknown = 0, z3_exact = 0, glpk_exact = 0;
    lg_rng g;
    lg_rng_init(&g, 20261121, 3);
    lg_solve_opts o = lg_solve_opts_default();
    for (int i = 0; i < n_inst; i++) {
        lg_test_shape s = lg_test_shape_small(&g);
        lg_test_inst in;
        ck_assert_int_eq(lg_test_inst_random(&in, &g, &s), LG_OK);
        const lg_problem *p = &in.prob;
        double *ox = malloc((size_t)in.net.n_in * sizeof *ox);
        lg_answer oa;
        ck_assert_msg(lg_oracle_solve(p, &oa, ox, NULL) == LG_OK, "instance %d: oracle: %s", i, lg_errmsg());
        lg_result rz, rg;
        o.run.deadline = lg_now() + 60; /* a deadline: isolated in a child (solvers.c) */
        ck_assert_msg(lg_solver_find("z3")->solve(p, &o, &rz) == LG_OK, "instance %d: z3: %s", i, lg_errmsg());
        o.run.deadline = lg_now() + 60;
        ck_assert_msg(lg_solver_find("glpk")->solve(p, &o, &rg) == LG_OK, "instance %d: glpk: %s", i, lg_errmsg());
        ck_assert_msg(rz.answer != LG_ANSWER_UNKNOWN, "instance %d: z3 unknown (%s)", i, rz.reason);
        if (i % 10 == 0) { /* without a time limit Z3 runs in this process: same answer */
            lg_solve_opts o0 = o;
            o0.run.deadline = 0;
            lg_result r0;
            ck_assert_int_eq(lg_solver_find("z3")->solve(p, &o0, &r0), LG_OK);
            ck_assert_msg(r0.answer == rz.answer, "instance %d: z3 in-process %s, forked %s", i, lg_test_answer_name(r0.answer),
                          lg_test_answer_name(rz.answer));
            ck_assert_int_eq(r0.x != NULL, rz.x != NULL);
            lg_result_free(&r0);
        }
        ck_assert_msg(rz.answer == oa, "instance %d: z3 %s, oracle %s", i, lg_test_answer_name(rz.answer), lg_test_answer_name(oa));
        if (rg.answer == LG_ANSWER_UNKNOWN)
            glpk_unknown++;
        else
            ck_assert_msg(rg.answer == oa, "instance %d: glpk %s, oracle %s", i, lg_test_answer_name(rg.answer), lg_test_answer_name(oa));
        if (oa == LG_ANSWER_SAT) {
            n_sat++;
            ck_assert_msg(lg_test_any_term_holds(p, ox, 1e-9), "instance %d: oracle witness fails", i);
            ck_assert_msg(lg_test_any_term_holds(p, rz.x, 0.0), "instance %d: z3 witness fails", i);
            z3_exact++;
            if (rg.answer == LG_ANSWER_SAT)
                ck_assert_msg(lg_test_any_term_holds(p, rg.x, 1e-9), "instance %d: glpk witness fails", i);
            if (rg.answer == LG_ANSWER_SAT) glpk_exact += lg_test_any_term_holds(p, rg.x, 0.0);
        } else {
            n_unsat++;
        }
        z3_unknown += rz.answer == LG_ANSWER_UNKNOWN;
        lg_result_free(&rz);
        lg_result_free(&rg);
        free(ox);
        lg_test_inst_free(&in);
    }
    fprintf(stderr,
            "encode random: %d instances, %d sat, %d unsat, glpk unknown %d, z3 unknown %d, "
            "witnesses holding in double with no tolerance: z3 %d, glpk %d\n",
            n_inst, n_sat, n_unsat, glpk_unknown, z3_unknown, z3_exact, glpk_exact);
    ck_assert_int_gt(n_sat, 0);
    ck_assert_int_gt(n_unsat, 0);
    ck_assert_msg(glpk_unknown * 20 <= n_inst, "glpk unknown on %d of %d instances", glpk_unknown, n_inst);
}
END_TEST

/* The exported texts, read by the command-line tools, reach the C-API answer. */
START_TEST(test_encode_export_cli_agree)
{
    int n_inst = lg_test_quick() ? 4 : 10;
    lg_rng g;
    lg_rng_init(&g, 4242, 5);
    lg_solve_opts o = lg_solve_opts_default();
    int seen[3] = {0, 0, 0};
    for (int i = 0; i < n_inst; i++) {
        lg_test_shape s = lg_test_shape_small(&g);
        lg_test_inst in;
        ck_assert_int_eq(lg_test_inst_random(&in, &g, &s), LG_OK);
        const lg_problem *p = &in.prob;
        lg_result rz, rg;
        ck_assert_int_eq(lg_solver_find("z3")->solve(p, &o, &rz), LG_OK);
        ck_assert_int_eq(lg_solver_find("glpk")->solve(p, &o, &rg), LG_OK);
        ck_assert_int_ne(rz.answer, LG_ANSWER_UNKNOWN);
        seen[rz.answer]++;
        const char *smt = lg_test_tmpfile(".smt2"), *lp = lg_test_tmpfile(".lp");
        write_file(lg_solver_find("smt2"), p, smt);
        write_file(lg_solver_find("lp"), p, lp);
        char cmd[600];
        snprintf(cmd, sizeof cmd, "z3 -T:60 %s 2>&1", smt);
        char *out = lg_test_run_output(cmd);
        ck_assert_msg(lg_test_smt_verdict(out) == rz.answer, "instance %d: z3 CLI says '%.60s', C API %s", i, out,
                      lg_test_answer_name(rz.answer));
        free(out);
        snprintf(cmd, sizeof cmd, "cvc5 --lang smt2 --tlimit=60000 %s 2>&1", smt);
        out = lg_test_run_output(cmd);
        ck_assert_msg(lg_test_smt_verdict(out) == rz.answer, "instance %d: cvc5 CLI says '%.60s', C API %s", i, out,
                      lg_test_answer_name(rz.answer));
        free(out);
        snprintf(cmd, sizeof cmd, "glpsol --tmlim 60 --lp %s 2>&1", lp);
        out = lg_test_run_output(cmd);
        lg_answer ga = lg_test_glpsol_verdict(out);
        ck_assert_msg(ga != LG_ANSWER_UNKNOWN, "instance %d: glpsol output not understood:\n%s", i, out);
        if (rg.answer != LG_ANSWER_UNKNOWN) /* decided by GLPK with margin: glpsol must agree */
            ck_assert_msg(ga == rz.answer, "instance %d: glpsol %s, z3 %s", i, lg_test_answer_name(ga), lg_test_answer_name(rz.answer));
        free(out);
        remove(smt);
        remove(lp);
        lg_result_free(&rz);
        lg_result_free(&rg);
        lg_test_inst_free(&in);
    }
    fprintf(stderr, "encode export: %d instances (%d sat, %d unsat) agree with z3, cvc5, glpsol\n", n_inst,
            seen[LG_ANSWER_SAT], seen[LG_ANSWER_UNSAT]);
}
END_TEST

/* An empty disjunction has no counterexample; an empty term is always true. */
START_TEST(test_encode_trivial_conditions)
{
    lg_rng g;
    lg_rng_init(&g, 99, 1);
    lg_test_shape s = {2, {3, 4, 2}, 0.3, 1};
    lg_test_inst in;
    ck_assert_int_eq(lg_test_inst_random(&in, &g, &s), LG_OK);
    lg_problem p = in.prob;
    const char *names[2] = {"z3", "glpk"};
    lg_term empty = {0, NULL};
    for (int k = 0; k < 2; k++) { /* the exports agree: no term → unsat, an empty term → sat */
        p.n_terms = k;
        p.terms = k ? &empty : NULL;
        lg_answer want = k ? LG_ANSWER_SAT : LG_ANSWER_UNSAT;
        const char *smt = lg_test_tmpfile(".smt2"), *lp = lg_test_tmpfile(".lp");
        write_file(lg_solver_find("smt2"), &p, smt);
        write_file(lg_solver_find("lp"), &p, lp);
        char cmd[600];
        snprintf(cmd, sizeof cmd, "z3 -T:30 %s 2>&1", smt);
        char *out = lg_test_run_output(cmd);
        ck_assert_msg(lg_test_smt_verdict(out) == want, "%d terms: z3 CLI says %s", k, out);
        free(out);
        snprintf(cmd, sizeof cmd, "glpsol --lp %s 2>&1", lp);
        out = lg_test_run_output(cmd);
        ck_assert_msg(lg_test_glpsol_verdict(out) == want, "%d terms: glpsol says\n%s", k, out);
        free(out);
        remove(smt);
        remove(lp);
    }
    p.terms = in.terms;
    for (int b = 0; b < 2; b++) {
        lg_result r;
        p.n_terms = 0;
        ck_assert_int_eq(lg_solver_find(names[b])->solve(&p, NULL, &r), LG_OK);
        ck_assert_msg(r.answer == LG_ANSWER_UNSAT, "%s: no terms gives %s", names[b], lg_test_answer_name(r.answer));
        lg_result_free(&r);
        p.n_terms = 1;
        p.terms = &empty;
        ck_assert_int_eq(lg_solver_find(names[b])->solve(&p, NULL, &r), LG_OK);
        ck_assert_msg(r.answer == LG_ANSWER_SAT, "%s: empty term gives %s", names[b], lg_test_answer_name(r.answer));
        ck_assert(lg_test_term_holds(&p, 0, r.x, 0));
        lg_result_free(&r);
        p.terms = in.terms;
    }
    lg_test_inst_free(&in);
}
END_TEST

START_TEST(test_encode_refuse_non_relu)
{
    lg_rng g;
    lg_rng_init(&g, 5, 1);
    lg_test_shape s = {3, {2, 3, 3, 2}, 0.3, 0};
    lg_test_inst in;
    ck_assert_int_eq(lg_test_inst_random(&in, &g, &s), LG_OK);
    in.net.layers[1].act = LG_ACT_GELU;
    const char *names[4] = {"z3", "glpk", "smt2", "lp"};
    for (int b = 0; b < 4; b++) {
        const lg_solver_ops *ops = lg_solver_find(names[b]);
        lg_result r;
        ck_assert_int_eq(ops->solve(&in.prob, NULL, &r), LG_ERR_UNSUPPORTED);
        ck_assert_msg(strstr(lg_errmsg(), "layer 1") != NULL, "%s: message '%s' does not name the layer", names[b],
                      lg_errmsg());
        ck_assert_ptr_null(r.x);
        FILE *f = tmpfile();
        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(ops->write(&in.prob, f), LG_ERR_UNSUPPORTED);
        fclose(f);
    }
    lg_test_inst_free(&in);
}
END_TEST

START_TEST(test_encode_reject_bad_problem)
{
    lg_rng g;
    lg_rng_init(&g, 6, 1);
    lg_test_shape s = {2, {2, 3, 2}, 0.3, 0};
    lg_test_inst in;
    ck_assert_int_eq(lg_test_inst_random(&in, &g, &s), LG_OK);
    const char *names[4] = {"z3", "glpk", "smt2", "lp"};
    for (int c = 0; c < 5; c++) {
        lg_problem p = in.prob;
        double save_lo = in.lo[0], save_pl = in.pre_lo[0][1], save_d = in.terms[0].cons[0].d;
        switch (c) {
        case 0: in.lo[0] = in.hi[0] + 1; break;          /* empty box */
        case 1: in.pre_lo[0][1] = NAN; break;            /* NaN bound */
        case 2: in.pre_lo[0][1] = in.pre_hi[0][1] + 1; break; /* crossed bounds */
        case 3: in.terms[0].cons[0].d = INFINITY; break; /* non-finite condition */
        case 4: p.pre_hi = NULL; break;                  /* no bounds */
        }
        for (int b = 0; b < 4; b++) {
            lg_result r;
            ck_assert_msg(lg_solver_find(names[b])->solve(&p, NULL, &r) == LG_ERR_ARG, "%s: case %d accepted", names[b], c);
            FILE *f = tmpfile();
            ck_assert_ptr_nonnull(f);
            ck_assert_msg(lg_solver_find(names[b])->write(&p, f) == LG_ERR_ARG, "%s write: case %d accepted", names[b], c);
            fclose(f);
        }
        in.lo[0] = save_lo;
        in.pre_lo[0][1] = save_pl;
        in.terms[0].cons[0].d = save_d;
    }
    lg_test_inst_free(&in);
}
END_TEST

/* A hard instance (random 20-40-40-2, wide box, 80 unstable relu) with a 1 s
 * limit returns UNKNOWN "timeout" within the contract (< 5 s). */
START_TEST(test_encode_timeout_honoured)
{
    lg_rng g;
    lg_rng_init(&g, 31337, 9);
    lg_test_shape s = {3, {20, 40, 40, 2}, 1.0, 0};
    lg_test_inst in;
    ck_assert_int_eq(lg_test_inst_random(&in, &g, &s), LG_OK);
    /* a condition well beyond the centre's behaviour (y_l − y_j ≤ κ − 1): hard to prove either way
     * (at κ itself GLPK's node LP points find a counterexample at once) */
    in.terms[0].cons[0].d = -in.margin + 1.0;
    const char *names[2] = {"z3", "glpk"};
    lg_solve_opts o = lg_solve_opts_default();
    for (int b = 0; b < 2; b++) {
        lg_result r;
        double t0 = lg_now();
        o.run.deadline = t0 + 1.0;
        ck_assert_int_eq(lg_solver_find(names[b])->solve(&in.prob, &o, &r), LG_OK);
        double dt = lg_now() - t0;
        fprintf(stderr, "encode timeout: %s answered %s (%s) after %.2f s\n", names[b], lg_test_answer_name(r.answer), r.reason, dt);
        ck_assert_msg(r.answer == LG_ANSWER_UNKNOWN, "%s decided the hard instance (%s)", names[b], lg_test_answer_name(r.answer));
        ck_assert_str_eq(r.reason, "timeout");
        ck_assert_msg(dt < 5.0, "%s took %.2f s with a 1 s limit", names[b], dt);
        lg_result_free(&r);
    }
    lg_test_inst_free(&in);
}
END_TEST

/* Z3 ignores interrupts while it builds or preprocesses a large query; the
 * forked worker is killed at the deadline: a 784-256-256-10 query (200k
 * weights) with a 2 s limit still answers UNKNOWN "timeout" in time. */
START_TEST(test_encode_timeout_hard_kill)
{
    lg_rng g;
    lg_rng_init(&g, 1, 1);
    lg_test_shape s = {3, {784, 256, 256, 10}, 0.001, 1};
    lg_test_inst in;
    ck_assert_int_eq(lg_test_inst_random(&in, &g, &s), LG_OK);
    lg_solve_opts o = lg_solve_opts_default();
    o.run.deadline = lg_now() + 2.0;
    lg_result r;
    double t0 = lg_now();
    lg_status st = lg_solver_find("z3")->solve(&in.prob, &o, &r);
    ck_assert_msg(st == LG_OK, "z3: %s", lg_errmsg());
    double dt = lg_now() - t0;
    fprintf(stderr, "encode hard kill: z3 answered %s (%s) after %.2f s\n", lg_test_answer_name(r.answer), r.reason, dt);
    ck_assert_int_eq(r.answer, LG_ANSWER_UNKNOWN);
    ck_assert_str_eq(r.reason, "timeout");
    ck_assert_msg(dt < 4.0, "z3 took %.2f s with a 2 s limit", dt);
    lg_result_free(&r);
    lg_test_inst_free(&in);
}
END_TEST

Suite *suite_encode(void)
{
    Suite *s = suite_create("encode");
    TCase *tc = tcase_create("core");
    lg_tcase_timeout(tc, 600);
    tcase_add_test(tc, test_encode_rational_exact);
    tcase_add_test(tc, test_encode_solver_find);
    tcase_add_test(tc, test_encode_z3_exact_rationals);
    tcase_add_test(tc, test_encode_z3_witness_off_the_tie);
    tcase_add_test(tc, test_encode_random_agree);
    tcase_add_test(tc, test_encode_export_cli_agree);
    tcase_add_test(tc, test_encode_trivial_conditions);
    suite_add_tcase(s, tc);
    TCase *tl = tcase_create("limits");
    lg_tcase_timeout(tl, 120);
    tcase_add_test(tl, test_encode_refuse_non_relu);
    tcase_add_test(tl, test_encode_reject_bad_problem);
    tcase_add_test(tl, test_encode_timeout_honoured);
    tcase_add_test(tl, test_encode_timeout_hard_kill);
    suite_add_tcase(s, tl);
    return s;
}
