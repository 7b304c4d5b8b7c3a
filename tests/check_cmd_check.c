/* check_cmd_check.c — `lgelu check` (cli/cmd_check.c) end to end on tiny nets:
 * an annealed net (λ = 160) passes at a threshold its direct-swap (GELU)
 * counterpart with the same weights fails, from .npy inputs written by
 * numpy; the JSON agrees with the library; usage errors and inputs that do
 * not fit exit 2, a file that cannot be read 1; --data has a default, and
 * --data X.npy,y.npy or a directory reaches check, bound, eval, verify,
 * encode, train and anneal alike.
 * (The no-lost-results files: check_atomic_file.c.) */
#include <check.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "anneal/deviation.h"
#include "anneal/relu.h"
#include "core/atomic_file.h"
#include "core/eval.h"
#include "core/netfile.h"
#include "core/npy.h"
#include "testutil.h"
#include "onnx/load.h"

/* n_in = 4, hidden 8, 8, 3 outputs; one weight set shared by all nets. */
static const int lg_gate_dims[] = {4, 8, 8, 3};
#define LG_GATE_N 40

typedef struct lg_gate_files {
    char ann[256], ann_relu[256], gelu[256], gelu_relu[256], x_npy[256], x_txt[256], out[256], bad_npy[256];
} lg_gate_files;

/* Write the four nets and the inputs (numpy for .npy, %.17g for text). */
static void lg_gate_setup(lg_gate_files *F, double *X)
{
    lg_rng r;
    lg_rng_init(&r, 12, 1);
    lg_net a, g, ar, gr;
    ck_assert_int_eq(lg_net_init(&a, 3, lg_gate_dims, LG_ACT_LGELU), LG_OK);
    lg_test_randomize(&a, &r, 0.8);
    for (int k = 0; k < 2; k++) a.layers[k].lambda = 160.0;
    ck_assert_int_eq(lg_net_init(&g, 3, lg_gate_dims, LG_ACT_GELU), LG_OK);
    memcpy(g.params, a.params, a.n_params * sizeof *a.params);
    ck_assert_int_eq(lg_anneal_to_relu(&ar, &a), LG_OK);
    ck_assert_int_eq(lg_anneal_to_relu(&gr, &g), LG_OK);
    snprintf(F->ann, sizeof F->ann, "%s", lg_test_tmpfile(".lgnet"));
    snprintf(F->ann_relu, sizeof F->ann_relu, "%s", lg_test_tmpfile(".lgnet"));
    snprintf(F->gelu, sizeof F->gelu, "%s", lg_test_tmpfile(".lgnet"));
    snprintf(F->gelu_relu, sizeof F->gelu_relu, "%s", lg_test_tmpfile(".lgnet"));
    snprintf(F->x_npy, sizeof F->x_npy, "%s", lg_test_tmpfile(".npy"));
    snprintf(F->x_txt, sizeof F->x_txt, "%s", lg_test_tmpfile(".txt"));
    snprintf(F->out, sizeof F->out, "%s", lg_test_tmpfile(".out"));
    snprintf(F->bad_npy, sizeof F->bad_npy, "%s", lg_test_tmpfile(".npy"));
    ck_assert_int_eq(lg_netfile_write(&a, F->ann), LG_OK);
    ck_assert_int_eq(lg_netfile_write(&ar, F->ann_relu), LG_OK);
    ck_assert_int_eq(lg_netfile_write(&g, F->gelu), LG_OK);
    ck_assert_int_eq(lg_netfile_write(&gr, F->gelu_relu), LG_OK);
    lg_net_free(&a), lg_net_free(&g), lg_net_free(&ar), lg_net_free(&gr);
    /* inputs in [0,1] from numpy's seeded generator, saved as float64 .npy */
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "'%s' -c \"import numpy as np; x = np.random.default_rng(5).random((%d, 4)); "
             "np.save('%s', x); np.save('%s', x * 2); np.savetxt('%s', x, fmt='%%.17g')\"",
             LG_PYTHON3, LG_GATE_N, F->x_npy, F->bad_npy, F->x_txt);
    int st = system(cmd);
    ck_assert_msg(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0, "numpy failed: %s", cmd);
    /* read the text copy back for the library-side computations */
    FILE *f = fopen(F->x_txt, "r");
    ck_assert_ptr_nonnull(f);
    for (int i = 0; i < LG_GATE_N * 4; i++) ck_assert_int_eq(fscanf(f, "%lf", &X[i]), 1);
    fclose(f);
}

static void lg_gate_cleanup(lg_gate_files *F)
{
    remove(F->ann), remove(F->ann_relu), remove(F->gelu), remove(F->gelu_relu);
    remove(F->x_npy), remove(F->x_txt), remove(F->out), remove(F->bad_npy);
}

/* Run check and parse its JSON line; returns the exit code. */
static int lg_gate_json(const lg_gate_files *F, const char *relu, const char *ref, const char *inputs, double D,
                        const char *extra, json_t **js)
{
    char args[2048];
    snprintf(args, sizeof args, "check '%s' --ref '%s' --inputs '%s' --eps 0.02 --max-deviation %.17g --json %s", relu,
             ref, inputs, D, extra);
    int rc = lg_test_cli(args, F->out);
    json_error_t err;
    *js = json_load_file(F->out, 0, &err);
    ck_assert_msg(*js != NULL, "no JSON from: lgelu %s (%s)", args, err.text);
    return rc;
}

static double lg_gate_num(json_t *js, const char *key)
{
    json_t *v = json_object_get(js, key);
    ck_assert_msg(json_is_number(v), "JSON key %s missing", key);
    return json_number_value(v);
}

START_TEST(test_cmd_check_annealed_passes_direct_swap_fails)
{
    lg_gate_files F;
    static double X[LG_GATE_N * 4];
    lg_gate_setup(&F, X);
    json_t *ja, *jg;
    ck_assert_int_eq(lg_gate_json(&F, F.ann_relu, F.ann, F.x_npy, 1e300, "--tightest", &ja), 0);
    ck_assert_int_eq(lg_gate_json(&F, F.gelu_relu, F.gelu, F.x_npy, 1e300, "--tightest", &jg), 0);
    double ba = lg_gate_num(ja, "bound_max"), bg = lg_gate_num(jg, "bound_max");
    ck_assert_int_eq((int)lg_gate_num(ja, "n"), LG_GATE_N);
    ck_assert_int_eq((int)lg_gate_num(ja, "n_difference_network"), LG_GATE_N);
    /* without --tightest a threshold every propagated bound meets skips the difference
     * network: the same verdict, bounds never tighter */
    json_t *jq;
    ck_assert_int_eq(lg_gate_json(&F, F.ann_relu, F.ann, F.x_npy, 1e300, "", &jq), 0);
    ck_assert_int_eq((int)lg_gate_num(jq, "n_difference_network"), 0);
    ck_assert(lg_gate_num(jq, "bound_max") >= ba && lg_gate_num(jq, "bound_median") >= lg_gate_num(ja, "bound_median"));
    ck_assert(lg_gate_num(jq, "certified_same_class") <= lg_gate_num(ja, "certified_same_class"));
    /* per input: its bound and the step of the cascade that gave it; the cheap run's are all the
     * propagated bound, --tightest's never looser and from the difference network on some */
    json_t *ia = json_object_get(ja, "inputs"), *iq = json_object_get(jq, "inputs");
    ck_assert(json_is_array(ia) && json_array_size(ia) == LG_GATE_N && json_array_size(iq) == LG_GATE_N);
    ck_assert_int_eq((int)json_integer_value(json_object_get(json_object_get(jq, "stages"), "propagated")), LG_GATE_N);
    int n_tighter = 0, n_stages = 0;
    double imax = 0.0;
    for (int i = 0; i < LG_GATE_N; i++) {
        json_t *ra = json_array_get(ia, (size_t)i), *rq = json_array_get(iq, (size_t)i);
        double b_a = json_number_value(json_object_get(ra, "bound")), b_q = json_number_value(json_object_get(rq, "bound"));
        const char *sa = json_string_value(json_object_get(ra, "stage"));
        ck_assert_int_eq((int)json_integer_value(json_object_get(ra, "index")), i);
        ck_assert_str_eq(json_string_value(json_object_get(rq, "stage")), "propagated");
        ck_assert(sa && b_a <= b_q);
        imax = fmax(imax, b_a);
        if (strcmp(sa, "propagated") != 0) {
            n_tighter++;
            ck_assert_msg(b_a < b_q, "input %d: stage %s but the propagated bound %g is not above %g", i, sa, b_q, b_a);
        }
    }
    ck_assert_double_eq(imax, ba);
    ck_assert_int_gt(n_tighter, 0);
    const char *kv;
    json_t *cnt;
    json_object_foreach(json_object_get(ja, "stages"), kv, cnt) n_stages += (int)json_integer_value(cnt);
    ck_assert_int_eq(n_stages, LG_GATE_N);
    json_t *jm; /* at the propagated maximum itself: still no input needs it */
    ck_assert_int_eq(lg_gate_json(&F, F.ann_relu, F.ann, F.x_npy, lg_gate_num(jq, "bound_max"), "", &jm), 0);
    ck_assert_int_eq((int)lg_gate_num(jm, "n_difference_network"), 0);
    json_decref(jm);
    /* --timeout: an input past it keeps its propagated bound, never one below the tightest */
    json_t *jto;
    ck_assert_int_eq(lg_gate_json(&F, F.ann_relu, F.ann, F.x_npy, 1e300, "--tightest --timeout 1e-9", &jto), 0);
    double nt = lg_gate_num(jto, "n_timeout");
    ck_assert(nt >= 0 && nt <= LG_GATE_N && lg_gate_num(jto, "bound_max") >= ba);
    if (nt == LG_GATE_N) ck_assert_double_eq(lg_gate_num(jto, "bound_max"), lg_gate_num(jq, "bound_max"));
    json_decref(jto);
    ck_assert_int_eq(lg_gate_json(&F, F.ann_relu, F.ann, F.x_npy, 1e300, "--tightest --timeout 600", &jto), 0);
    ck_assert_int_eq((int)lg_gate_num(jto, "n_timeout"), 0);
    ck_assert_double_eq(lg_gate_num(jto, "bound_max"), ba);
    json_decref(jto);
    json_decref(jq);
    ck_assert_msg(ba > 0 && ba * 10 < bg, "annealed bound %g not far below direct swap %g", ba, bg);
    /* every bound is certified: at least the observed deviation, at most the interval bound */
    lg_net a, ar;
    lg_dev dev;
    ck_assert_int_eq(lg_net_load(&a, F.ann), LG_OK);
    ck_assert_int_eq(lg_net_load(&ar, F.ann_relu), LG_OK);
    ck_assert_int_eq(lg_dev_init(&dev, &ar, &a), LG_OK);
    static double D[LG_GATE_N];
    ck_assert_int_eq(lg_dev_bound_balls(&dev, X, LG_GATE_N, 0.02, 0.0, 1.0, D, NULL, NULL), LG_OK);
    double dmax = 0;
    for (int i = 0; i < LG_GATE_N; i++) dmax = D[i] > dmax ? D[i] : dmax;
    ck_assert_msg(ba <= dmax * (1 + 1e-12), "check's bound %g above the interval bound %g", ba, dmax);
    ck_assert(lg_gate_num(ja, "observed_max") <= ba);
    json_t *w = json_object_get(ja, "worst");
    ck_assert_double_eq(json_number_value(json_object_get(w, "bound")), ba);
    lg_dev_free(&dev), lg_net_free(&a), lg_net_free(&ar);
    /* the gate: the annealed net passes at sqrt(ba·bg), the direct swap fails and is named */
    double thr = sqrt(ba * bg);
    json_t *pa, *pg;
    ck_assert_int_eq(lg_gate_json(&F, F.ann_relu, F.ann, F.x_npy, thr, "", &pa), 0);
    ck_assert(json_is_true(json_object_get(pa, "pass")));
    ck_assert_int_eq(lg_gate_json(&F, F.gelu_relu, F.gelu, F.x_npy, thr, "", &pg), 1);
    ck_assert(json_is_false(json_object_get(pg, "pass")));
    ck_assert_int_gt((int)lg_gate_num(pg, "n_over"), 0);
    w = json_object_get(pg, "worst");
    ck_assert_msg(json_number_value(json_object_get(w, "bound")) > thr, "worst input under the threshold");
    /* at the annealed net's own maximum it passes; just below it fails */
    json_t *e1, *e2;
    ck_assert_int_eq(lg_gate_json(&F, F.ann_relu, F.ann, F.x_npy, ba, "", &e1), 0);
    ck_assert_int_eq(lg_gate_json(&F, F.ann_relu, F.ann, F.x_npy, ba * (1 - 1e-9), "", &e2), 1);
    /* a bound over the threshold is refined (α-CROWN, branch and bound): never looser, still certified */
    ck_assert(lg_gate_num(e2, "bound_max") <= ba && lg_gate_num(e2, "bound_max") >= lg_gate_num(e2, "observed_max"));
    /* text inputs give the same bounds as .npy */
    json_t *jt;
    ck_assert_int_eq(lg_gate_json(&F, F.ann_relu, F.ann, F.x_txt, 1e300, "--tightest", &jt), 0);
    ck_assert_double_eq(lg_gate_num(jt, "bound_max"), ba);
    /* -j: inputs on three threads, each row computed as on one */
    json_t *jj;
    ck_assert_int_eq(lg_gate_json(&F, F.gelu_relu, F.gelu, F.x_npy, 1e300, "--tightest -j 3", &jj), 0);
    json_t *j1;
    ck_assert_int_eq(lg_gate_json(&F, F.gelu_relu, F.gelu, F.x_npy, 1e300, "--tightest", &j1), 0);
    static const char *same[] = {"bound_max", "bound_median", "observed_max", "certified_same_class", "ratio_max"};
    for (int i = 0; i < 5; i++)
        ck_assert_msg(lg_gate_num(jj, same[i]) == lg_gate_num(j1, same[i]), "-j 3 changes %s: %.17g vs %.17g", same[i],
                      lg_gate_num(jj, same[i]), lg_gate_num(j1, same[i]));
    ck_assert(lg_gate_num(j1, "ratio_max") >= 1.0 && lg_gate_num(j1, "ratio_median") <= lg_gate_num(j1, "ratio_max"));
    json_decref(jj), json_decref(j1);
    /* --no-class-change: exit 1 exactly when the direct swap changes a class */
    json_t *jc;
    int rc = lg_gate_json(&F, F.gelu_relu, F.gelu, F.x_npy, 1e300, "--no-class-change", &jc);
    long cc = (long)lg_gate_num(jc, "class_changes");
    ck_assert_int_eq(rc, cc > 0 ? 1 : 0);
    ck_assert(json_is_null(json_object_get(jc, "first_class_change")) == (cc == 0));
    json_decref(ja), json_decref(jg), json_decref(pa), json_decref(pg), json_decref(e1), json_decref(e2);
    json_decref(jt), json_decref(jc);
    lg_gate_cleanup(&F);
}
END_TEST

START_TEST(test_cmd_check_usage_and_input_errors)
{
    lg_gate_files F;
    static double X[LG_GATE_N * 4];
    lg_gate_setup(&F, X);
    char args[2048];
    const struct {
        const char *fmt;
        int want;
    } cases[] = {
        {"check '%s' --ref '%s' --inputs '%s'", 2},                                   /* no --max-deviation */
        {"check '%s' --ref '%s' --inputs '%s' --max-deviation -1", 2},                /* negative D */
        {"check '%s' --ref '%s' --inputs '%s' --max-deviation 1 --timeout -1", 2},  /* negative T */
        {"check '%s' --ref '%s' --inputs '%s' --max-deviation 1 --data /tmp", 2},     /* both sources */
        {"check '%s' --ref '%s' --inputs '%s' --max-deviation 1 --eps 2", 2},         /* eps out of range */
        {"check '%s' --ref '%s' --inputs '%s' --max-deviation 1 --bogus", 2},         /* unknown option */
        {"check '%s' --ref '%s' --inputs '%s'.missing --max-deviation 1", 1},         /* unreadable: a failure while running */
        {"check '%s' --ref '%s' --inputs '%s' --max-deviation 1 --n 5", 0},           /* fine */
        {"check --help '%s' '%s' '%s'", 0},
    };
    for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++) {
        snprintf(args, sizeof args, cases[t].fmt, F.ann_relu, F.ann, F.x_npy);
        ck_assert_msg(lg_test_cli(args, NULL) == cases[t].want, "expected %d: lgelu %s", cases[t].want, args);
    }
    /* a pair that is not a substitution; inputs outside [0,1]; a wrong shape */
    snprintf(args, sizeof args, "check '%s' --ref '%s' --inputs '%s' --max-deviation 1", F.ann, F.ann, F.x_npy);
    ck_assert_int_eq(lg_test_cli(args, NULL), 2);
    snprintf(args, sizeof args, "check '%s' --ref '%s' --inputs '%s' --max-deviation 1", F.ann_relu, F.ann, F.bad_npy);
    ck_assert_int_eq(lg_test_cli(args, NULL), 2);
    const int dims5[] = {5, 3, 3};
    lg_net n5, n5r;
    lg_rng r;
    lg_rng_init(&r, 3, 1);
    ck_assert_int_eq(lg_net_init(&n5, 2, dims5, LG_ACT_LGELU), LG_OK);
    lg_test_randomize(&n5, &r, 1.0);
    ck_assert_int_eq(lg_anneal_to_relu(&n5r, &n5), LG_OK);
    ck_assert_int_eq(lg_netfile_write(&n5, F.gelu), LG_OK);
    ck_assert_int_eq(lg_netfile_write(&n5r, F.gelu_relu), LG_OK);
    snprintf(args, sizeof args, "check '%s' --ref '%s' --inputs '%s' --max-deviation 1", F.gelu_relu, F.gelu, F.x_npy);
    ck_assert_int_eq(lg_test_cli(args, NULL), 2);
    lg_net_free(&n5), lg_net_free(&n5r);
    lg_gate_cleanup(&F);
}
END_TEST

/* Without --data or --inputs, check reads the test split of the default
 * data folder, as train, eval and verify do. */
START_TEST(test_cmd_check_default_data)
{
    if (!lg_test_have_data()) return;
    char args[2048];
    const char *net = lg_test_fixture("vnncomp/mnist-net_256x2.onnx"), *out = lg_test_tmpfile(".json");
    snprintf(args, sizeof args, "check '%s' --ref '%s' --n 3 --max-deviation 0.5 --json", net, net);
    ck_assert_int_eq(lg_test_cli(args, out), 0);
    json_error_t err;
    json_t *js = json_load_file(out, 0, &err);
    ck_assert_msg(js != NULL, "check printed no JSON: %s", err.text);
    ck_assert(json_is_true(json_object_get(js, "pass")));
    ck_assert_int_eq((int)json_integer_value(json_object_get(js, "n")), 3);
    json_decref(js);
    remove(out);
}
END_TEST

/* Read the JSON object lgelu printed into path. */
static json_t *lg_gate_load(const char *path, const char *what)
{
    json_error_t err;
    json_t *js = json_load_file(path, 0, &err);
    ck_assert_msg(js != NULL, "%s printed no JSON: %s", what, err.text);
    return js;
}

/* check --data X.npy,y.npy gates exactly the pair's inputs: one input whose
 * certified bound exceeds the threshold fails with n = 1 (float64 values
 * kept exactly: the same bound as --inputs on that point). */
START_TEST(test_cmd_check_npy_data_gates_the_pair)
{
    lg_gate_files F;
    static double X[LG_GATE_N * 4];
    lg_gate_setup(&F, X);
    json_t *jt;
    ck_assert_int_eq(lg_gate_json(&F, F.gelu_relu, F.gelu, F.x_npy, 1e300, "--tightest", &jt), 0);
    json_t *w = json_object_get(jt, "worst");
    long wi = (long)json_integer_value(json_object_get(w, "index"));
    double wb = json_number_value(json_object_get(w, "bound"));
    ck_assert(wb > 0);
    char x1[256], y1[256], cmd[4096];
    snprintf(x1, sizeof x1, "%s", lg_test_tmpfile(".npy"));
    snprintf(y1, sizeof y1, "%s", lg_test_tmpfile(".npy"));
    snprintf(cmd, sizeof cmd,
             "'%s' -c \"import numpy as np; x = np.load('%s'); np.save('%s', x[%ld:%ld + 1]); "
             "np.save('%s', np.zeros(1, np.uint8))\"",
             LG_PYTHON3, F.x_npy, x1, wi, wi, y1);
    int st = system(cmd);
    ck_assert_msg(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0, "numpy failed: %s", cmd);
    snprintf(cmd, sizeof cmd, "check '%s' --ref '%s' --data '%s,%s' --eps 0.02 --max-deviation %.17g --tightest --json",
             F.gelu_relu, F.gelu, x1, y1, wb / 2);
    ck_assert_int_eq(lg_test_cli(cmd, F.out), 1);
    json_t *js = lg_gate_load(F.out, "check --data");
    ck_assert(json_is_false(json_object_get(js, "pass")));
    ck_assert_int_eq((int)json_integer_value(json_object_get(js, "n")), 1);
    ck_assert_int_eq((int)json_integer_value(json_object_get(js, "n_over")), 1);
    ck_assert(lg_gate_num(js, "bound_max") <= wb); /* refined where it misses the threshold: never looser */
    ck_assert(lg_gate_num(js, "bound_max") >= lg_gate_num(js, "observed_max"));
    json_decref(js);
    /* the text summary says FAIL on the one input */
    snprintf(cmd, sizeof cmd, "check '%s' --ref '%s' --data '%s,%s' --eps 0.02 --max-deviation %.17g", F.gelu_relu,
             F.gelu, x1, y1, wb / 2);
    ck_assert_int_eq(lg_test_cli(cmd, F.out), 1);
    const char *txt = lg_test_slurp(F.out);
    ck_assert_msg(strncmp(txt, "FAIL", 4) == 0 && strstr(txt, "of 1 inputs"), "check printed: %s", txt);
    /* the difference network ran on the one input: no "others" to speak of */
    ck_assert_msg(strstr(txt, "difference network run on 1 of 1 inputs (no input's propagated bound alone") &&
                      !strstr(txt, "the others'"), "check printed: %s", txt);
    /* at twice the bound it passes, on the same single input */
    snprintf(cmd, sizeof cmd, "check '%s' --ref '%s' --data '%s,%s' --eps 0.02 --max-deviation %.17g --json",
             F.gelu_relu, F.gelu, x1, y1, wb * 2);
    ck_assert_int_eq(lg_test_cli(cmd, F.out), 0);
    js = lg_gate_load(F.out, "check --data");
    ck_assert_int_eq((int)json_integer_value(json_object_get(js, "n")), 1);
    json_decref(js);
    json_decref(jt);
    remove(x1), remove(y1);
    lg_gate_cleanup(&F);
}
END_TEST

/* 1 when files a and b hold the same bytes. */
static int lg_gate_same(const char *a, const char *b)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "cmp -s '%s' '%s'", a, b);
    return lg_test_sh(cmd) == 0;
}

/* Every command that reads --data, on one labelled set written both as an
 * IDX directory (2 x 2 images, both splits) and as an .npy pair (the same
 * pixels / 255 in float32): the same examples reach each command. */
START_TEST(test_cmd_data_npy_and_directory)
{
    char dir[256], x[300], y[300], net[256], ann[256], ar[256], out[256], o1[256], o2[256], cmd[4096];
    snprintf(dir, sizeof dir, "%s", lg_test_tmpfile(".d"));
    ck_assert_int_eq(mkdir(dir, 0700), 0);
    snprintf(x, sizeof x, "%s/x.npy", dir);
    snprintf(y, sizeof y, "%s/y.npy", dir);
    snprintf(net, sizeof net, "%s", lg_test_tmpfile(".lgnet"));
    snprintf(ann, sizeof ann, "%s", lg_test_tmpfile(".lgnet"));
    snprintf(ar, sizeof ar, "%s", lg_test_tmpfile(".lgnet"));
    snprintf(out, sizeof out, "%s", lg_test_tmpfile(".out"));
    snprintf(o1, sizeof o1, "%s", lg_test_tmpfile(".o1"));
    snprintf(o2, sizeof o2, "%s", lg_test_tmpfile(".o2"));
    snprintf(cmd, sizeof cmd,
             "'%s' -c \"import numpy as np, struct\n"
             "p = np.random.default_rng(4).integers(0, 256, (96, 2, 2)).astype(np.uint8)\n"
             "l = ((p[:, 0, 0] > 127).astype(np.uint8) + (p[:, 1, 1] > 127)).astype(np.uint8)\n"
             "for s in ('train', 't10k'):\n"
             "    open('%s/' + s + '-images-idx3-ubyte', 'wb').write(struct.pack('>iiii', 2051, 96, 2, 2) + p.tobytes())\n"
             "    open('%s/' + s + '-labels-idx1-ubyte', 'wb').write(struct.pack('>ii', 2049, 96) + l.tobytes())\n"
             "np.save('%s', p.reshape(96, 4).astype(np.float32) / np.float32(255)); np.save('%s', l)\"",
             LG_PYTHON3, dir, dir, x, y);
    int st = system(cmd);
    ck_assert_msg(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0, "numpy failed: %s", cmd);
    char pair[700];
    snprintf(pair, sizeof pair, "%s,%s", x, y);
    const char *spec[2] = {dir, pair};
    /* train and anneal: the same weights from either form */
    for (int k = 0; k < 2; k++) {
        snprintf(cmd, sizeof cmd, "train --data '%s' --arch 4,8,3 --act lgelu --epochs 3 --batch 16 --seed 3 --threads 1 -o '%s'",
                 spec[k], k ? o2 : o1);
        ck_assert_msg(lg_test_cli(cmd, NULL) == 0, "lgelu %s", cmd);
    }
    ck_assert_msg(lg_gate_same(o1, o2), "train: the directory and the .npy pair gave different nets");
    rename(o1, net);
    for (int k = 0; k < 2; k++) {
        snprintf(cmd, sizeof cmd, "anneal '%s' --data '%s' --epochs 1 --seed 3 --threads 1 -o '%s'", net, spec[k], k ? o2 : o1);
        ck_assert_msg(lg_test_cli(cmd, NULL) == 0, "lgelu %s", cmd);
    }
    ck_assert_msg(lg_gate_same(o1, o2), "anneal: the directory and the .npy pair gave different nets");
    rename(o1, ann);
    snprintf(cmd, sizeof cmd, "relu '%s' -o '%s'", ann, ar);
    ck_assert_int_eq(lg_test_cli(cmd, NULL), 0);
    /* eval, bound, check, verify --index: the same numbers; n = 96 (not Fashion-MNIST's 10000) */
    static const char *const fmt[] = {
        "eval '%s' --data '%s' --json",
        "bound '%s' --ref '%s' --data '%s' --eps 0.01 --json",
        "check '%s' --ref '%s' --data '%s' --eps 0.01 --max-deviation 1e300 --tightest --json",
        "verify '%s' --data '%s' --index 95 --eps 0.02 --json",
    };
    const char *const keys[] = {"accuracy", "per_input_max", "bound_max", NULL};
    for (int c = 0; c < 4; c++) {
        json_t *js[2];
        for (int k = 0; k < 2; k++) {
            if (c == 1 || c == 2) snprintf(cmd, sizeof cmd, fmt[c], ar, ann, spec[k]);
            else snprintf(cmd, sizeof cmd, fmt[c], c == 3 ? ar : ann, spec[k]);
            ck_assert_msg(lg_test_cli(cmd, out) == 0, "lgelu %s", cmd);
            js[k] = lg_gate_load(out, cmd);
        }
        if (keys[c]) {
            ck_assert_int_eq((int)json_integer_value(json_object_get(js[0], "n")), 96);
            ck_assert_int_eq((int)json_integer_value(json_object_get(js[1], "n")), 96);
            ck_assert_double_eq(lg_gate_num(js[0], keys[c]), lg_gate_num(js[1], keys[c]));
        } else {
            const char *v0 = json_string_value(json_object_get(js[0], "verdict"));
            const char *v1 = json_string_value(json_object_get(js[1], "verdict"));
            ck_assert_msg(v0 && v1 && strcmp(v0, v1) == 0, "verify: %s vs %s", v0, v1);
            ck_assert_int_eq((int)json_integer_value(json_object_get(js[0], "label")),
                             (int)json_integer_value(json_object_get(js[1], "label")));
        }
        json_decref(js[0]), json_decref(js[1]);
    }
    /* encode --index writes the same property from either form; index 96 is out of range for both */
    for (int k = 0; k < 2; k++) {
        snprintf(cmd, sizeof cmd, "encode '%s' --data '%s' --index 7 --eps 0.02 --format vnnlib -o '%s'", ar, spec[k],
                 k ? o2 : o1);
        ck_assert_msg(lg_test_cli(cmd, NULL) == 0, "lgelu %s", cmd);
        snprintf(cmd, sizeof cmd, "verify '%s' --data '%s' --index 96 --eps 0.02", ar, spec[k]);
        ck_assert_msg(lg_test_cli(cmd, NULL) == 2, "lgelu %s", cmd);
    }
    ck_assert_msg(lg_gate_same(o1, o2), "encode: the directory and the .npy pair gave different properties");
    remove(o1), remove(o2), remove(net), remove(ann), remove(ar), remove(out);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* float64 .npy data and 1-d .npy inputs: verify --data keeps a float64
 * array's values exactly (the same property as --input of that row), a
 * 1-d array of n_in values is one input for eval, verify and encode, and
 * check and bound read float64 pairs as --inputs does. */
START_TEST(test_cmd_float64_data_and_1d_inputs)
{
    lg_gate_files F;
    static double X[LG_GATE_N * 4];
    lg_gate_setup(&F, X);
    char y[256], x1[256], x1t[256], bad[256], o1[256], o2[256], pair[600], cmd[4096];
    snprintf(y, sizeof y, "%s", lg_test_tmpfile(".npy"));
    snprintf(x1, sizeof x1, "%s", lg_test_tmpfile(".npy"));
    snprintf(x1t, sizeof x1t, "%s", lg_test_tmpfile(".txt"));
    snprintf(bad, sizeof bad, "%s", lg_test_tmpfile(".npy"));
    snprintf(o1, sizeof o1, "%s", lg_test_tmpfile(".o1"));
    snprintf(o2, sizeof o2, "%s", lg_test_tmpfile(".o2"));
    snprintf(pair, sizeof pair, "%s,%s", F.x_npy, y);
    /* F.x_npy is float64 from numpy's generator: values float32 cannot hold */
    snprintf(cmd, sizeof cmd,
             "'%s' -c \"import numpy as np; x = np.load('%s'); assert x.dtype == np.float64 and "
             "(x.astype(np.float32) != x).any(); np.save('%s', (np.arange(%d) %% 3).astype(np.uint8)); "
             "np.save('%s', x[7]); np.savetxt('%s', x[7:8], fmt='%%.17g'); np.save('%s', x[7, :3])\"",
             LG_PYTHON3, F.x_npy, y, LG_GATE_N, x1, x1t, bad);
    int st = system(cmd);
    ck_assert_msg(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0, "numpy failed: %s", cmd);
    /* eval --input: the 1-d array gives the outputs of the text row */
    snprintf(cmd, sizeof cmd, "eval '%s' --input '%s'", F.ann, x1);
    ck_assert_int_eq(lg_test_cli(cmd, o1), 0);
    snprintf(cmd, sizeof cmd, "eval '%s' --input '%s'", F.ann, x1t);
    ck_assert_int_eq(lg_test_cli(cmd, o2), 0);
    ck_assert_msg(lg_gate_same(o1, o2), "eval: 1-d .npy and text outputs differ: %s", lg_test_slurp(o1));
    /* a 1-d array of the wrong length is refused as not fitting (2) */
    snprintf(cmd, sizeof cmd, "eval '%s' --input '%s'", F.ann, bad);
    ck_assert_int_eq(lg_test_cli(cmd, NULL), 2);
    snprintf(cmd, sizeof cmd, "verify '%s' --input '%s' --eps 0.01", F.ann_relu, bad);
    ck_assert_int_eq(lg_test_cli(cmd, NULL), 2);
    /* verify --input of the 1-d array and verify --data of the float64 pair at index 7 */
    snprintf(cmd, sizeof cmd, "verify '%s' --input '%s' --label 1 --eps 0.01 --json", F.ann_relu, x1);
    ck_assert_int_eq(lg_test_cli(cmd, NULL), 0);
    snprintf(cmd, sizeof cmd, "verify '%s' --data '%s' --index 7 --eps 0.01 --json", F.ann_relu, pair);
    ck_assert_int_eq(lg_test_cli(cmd, o1), 0);
    json_t *js = lg_gate_load(o1, "verify --data");
    ck_assert_int_eq((int)json_integer_value(json_object_get(js, "label")), 7 % 3);
    json_decref(js);
    /* the same box, to the last bit: encode writes both properties identically */
    snprintf(cmd, sizeof cmd, "encode '%s' --data '%s' --index 7 --eps 0.01 --format vnnlib -o '%s'", F.ann_relu, pair, o1);
    ck_assert_int_eq(lg_test_cli(cmd, NULL), 0);
    snprintf(cmd, sizeof cmd, "encode '%s' --input '%s' --label 1 --eps 0.01 --format vnnlib -o '%s'", F.ann_relu, x1, o2);
    ck_assert_int_eq(lg_test_cli(cmd, NULL), 0);
    char *p1 = strdup(lg_test_slurp(o1)); /* the first line names the source (index or file) */
    const char *p2 = lg_test_slurp(o2), *b1 = strchr(p1, '\n'), *b2 = strchr(p2, '\n');
    ck_assert_msg(b1 && b2 && strcmp(b1, b2) == 0, "encode: --data float64 row and --input differ:\n%s\n%s", p1, p2);
    free(p1);
    /* check and bound on the float64 pair: the bounds of --inputs (check) on the same points */
    json_t *ji, *jd;
    ck_assert_int_eq(lg_gate_json(&F, F.ann_relu, F.ann, F.x_npy, 1e300, "--tightest", &ji), 0);
    snprintf(cmd, sizeof cmd, "check '%s' --ref '%s' --data '%s' --eps 0.02 --max-deviation 1e300 --tightest --json",
             F.ann_relu, F.ann, pair);
    ck_assert_int_eq(lg_test_cli(cmd, o1), 0);
    jd = lg_gate_load(o1, "check --data");
    ck_assert_double_eq(lg_gate_num(jd, "bound_max"), lg_gate_num(ji, "bound_max"));
    ck_assert_double_eq(lg_gate_num(jd, "bound_median"), lg_gate_num(ji, "bound_median"));
    json_decref(jd);
    snprintf(cmd, sizeof cmd, "bound '%s' --ref '%s' --data '%s' --eps 0.02 --symbolic --json", F.ann_relu, F.ann, pair);
    ck_assert_int_eq(lg_test_cli(cmd, o1), 0);
    jd = lg_gate_load(o1, "bound --data");
    ck_assert_double_eq(lg_gate_num(jd, "per_input_max"), lg_gate_num(ji, "bound_max"));
    json_decref(jd), json_decref(ji);
    remove(y), remove(x1), remove(x1t), remove(bad), remove(o1), remove(o2);
    lg_gate_cleanup(&F);
}
END_TEST

/* --data X.npy,y.npy for train, anneal and eval (numpy-written pair). */
START_TEST(test_cmd_check_npy_data_cli)
{
    char x[256], y[256], net[256], net2[256], out[256], cmd[2048];
    snprintf(x, sizeof x, "%s", lg_test_tmpfile(".npy"));
    snprintf(y, sizeof y, "%s", lg_test_tmpfile(".npy"));
    snprintf(net, sizeof net, "%s", lg_test_tmpfile(".lgnet"));
    snprintf(net2, sizeof net2, "%s", lg_test_tmpfile(".lgnet"));
    snprintf(out, sizeof out, "%s", lg_test_tmpfile(".json"));
    snprintf(cmd, sizeof cmd,
             "'%s' -c \"import numpy as np; x = np.random.default_rng(2).random((300, 4)).astype(np.float32); "
             "np.save('%s', x); np.save('%s', ((x[:, 0] > 0.5).astype(np.int32) + (x[:, 1] > 0.5)).astype(np.uint8))\"",
             LG_PYTHON3, x, y);
    int st = system(cmd);
    ck_assert_msg(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0, "numpy failed: %s", cmd);
    snprintf(cmd, sizeof cmd, "train --data '%s,%s' --arch 4,16,3 --act lgelu --epochs 30 --batch 16 -o '%s'", x, y, net);
    ck_assert_int_eq(lg_test_cli(cmd, NULL), 0);
    snprintf(cmd, sizeof cmd, "anneal '%s' --data '%s,%s,%s,%s' --epochs 2 -o '%s'", net, x, y, x, y, net2);
    ck_assert_int_eq(lg_test_cli(cmd, NULL), 0);
    snprintf(cmd, sizeof cmd, "eval '%s' --data '%s,%s' --json", net2, x, y);
    ck_assert_int_eq(lg_test_cli(cmd, out), 0);
    json_error_t err;
    json_t *js = json_load_file(out, 0, &err);
    ck_assert_msg(js != NULL, "eval printed no JSON: %s", err.text);
    lg_dataset ds;
    lg_net n;
    ck_assert_int_eq(lg_npy_load_dataset(&ds, x, y), LG_OK);
    ck_assert_int_eq(lg_net_load(&n, net2), LG_OK);
    double acc;
    ck_assert_int_eq(lg_eval_accuracy(&n, &ds, &acc), LG_OK);
    double cli = json_number_value(json_object_get(js, "accuracy"));
    ck_assert_double_eq_tol(cli, acc, 1e-6);
    ck_assert_msg(acc > 0.6, "the net learnt nothing from the .npy pair: accuracy %g", acc);
    ck_assert_int_eq((int)json_integer_value(json_object_get(js, "n")), 300);
    /* three files, and a directory without IDX files, are refused */
    snprintf(cmd, sizeof cmd, "eval '%s' --data '%s,%s,%s'", net2, x, y, x);
    ck_assert_int_ne(lg_test_cli(cmd, NULL), 0);
    json_decref(js);
    lg_net_free(&n);
    lg_dataset_free(&ds);
    remove(x), remove(y), remove(net), remove(net2), remove(out);
}
END_TEST

Suite *suite_cmd_check(void)
{
    Suite *s = suite_create("cmd_check");
    TCase *tc = tcase_create("core");
    lg_tcase_timeout(tc, 120);
    tcase_add_test(tc, test_cmd_check_annealed_passes_direct_swap_fails);
    tcase_add_test(tc, test_cmd_check_npy_data_cli);
    tcase_add_test(tc, test_cmd_check_default_data);
    tcase_add_test(tc, test_cmd_check_npy_data_gates_the_pair);
    tcase_add_test(tc, test_cmd_data_npy_and_directory);
    tcase_add_test(tc, test_cmd_float64_data_and_1d_inputs);
    suite_add_tcase(s, tc);
    TCase *tl = tcase_create("limits");
    lg_tcase_timeout(tl, 120);
    tcase_add_test(tl, test_cmd_check_usage_and_input_errors);
    suite_add_tcase(s, tl);
    return s;
}
