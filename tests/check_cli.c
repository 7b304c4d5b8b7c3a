/* check_cli.c — the command-line surface: one number format in JSON and CSV
 * (core/json.h, core/csv.h), exit status 2 naming the valid range for bad
 * values, outputs checked before long work, the VNN-COMP scripts
 * (vnncomp_scripts/) on the fixtures including .gz files, bench resuming,
 * `encode` → z3/glpsol → `cex` closing the loop, `export --dtype`, and the
 * docs (docs/USAGE.md) in step with every command's --help. */
#include <check.h>
#include <ctype.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "anneal/relu.h"
#include "core/csv.h"
#include "core/json.h"
#include "core/netfile.h"
#include "onnx/onnx.h"
#include "core/rng.h"
#include "verify/prop.h"
#include "verify/vnnlib.h"
#include "testutil.h"
#include "onnx/load.h"

START_TEST(test_cli_number_shortest)
{
    static const struct {
        double v;
        const char *s;
    } cases[] = {{0.05, "0.05"}, {30, "30"}, {0.1 + 0.2, "0.30000000000000004"}, {1e-300, "1e-300"},
                 {-2.5, "-2.5"},  {1e16, "1e+16"}, {123456789, "123456789"}, {0, "0"}};
    char buf[LG_NUM_BUFSIZE];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        ck_assert_msg(strcmp(lg_num_shortest(buf, cases[i].v), cases[i].s) == 0, "%.17g -> %s, expected %s",
                      cases[i].v, buf, cases[i].s);
    /* random doubles of every magnitude read back exactly, and one digit fewer does not */
    lg_rng r;
    lg_rng_init(&r, 7, 0);
    for (int t = 0; t < 20000; t++) {
        double v = lg_rng_normal(&r) * pow(10.0, (double)((int)(lg_rng_uniform(&r) * 600) - 300));
        lg_num_shortest(buf, v);
        ck_assert_msg(strtod(buf, NULL) == v, "%.17g printed as %s", v, buf);
        char shorter[400];
        int digits = 0;
        for (const char *p = buf; *p && *p != 'e'; p++) digits += isdigit((unsigned char)*p) != 0;
        if (!strchr(buf, 'e') || digits < 2) continue;
        snprintf(shorter, sizeof shorter, "%.*g", digits - 1, v);
        ck_assert_msg(strtod(shorter, NULL) != v, "%.17g: %s is shorter than %s", v, shorter, buf);
    }
}
END_TEST

START_TEST(test_cli_json_one_format)
{
    json_t *o = json_pack("{s:f, s:f, s:i, s:s, s:n, s:[o,b]}", "eps", 0.05, "t", 30.0, "n", 3, "name", "a\"b\n",
                          "none", "list", lg_json_num(NAN), 1);
    char *s = lg_json_dumps(o, 0);
    ck_assert_ptr_nonnull(s);
    ck_assert_msg(strstr(s, "\"eps\": 0.05") && strstr(s, "\"t\": 30.0") && strstr(s, "\"n\": 3") &&
                      strstr(s, "\"name\": \"a\\\"b\\n\"") && strstr(s, "\"none\": null") &&
                      strstr(s, "\"list\": [null, true]"),
                  "%s", s);
    char *c = lg_json_dumps(o, 1);
    ck_assert_msg(c && strstr(c, "\"eps\":0.05,") && strstr(c, "\"list\":[null,true]"), "%s", c);
    free(c);
    /* it reads back as the same document (reals as reals) */
    json_error_t err;
    json_t *back = json_loads(s, 0, &err);
    ck_assert_msg(back != NULL, "%s: %s", s, err.text);
    ck_assert(json_is_real(json_object_get(back, "t")));
    ck_assert(json_real_value(json_object_get(back, "eps")) == 0.05);
    json_decref(back);
    json_decref(o);
    free(s);
}
END_TEST

START_TEST(test_cli_csv_quoting)
{
    lg_csv_row r = {0};
    lg_csv_str(&r, "plain");
    lg_csv_str(&r, "a,b");
    lg_csv_str(&r, "say \"hi\"");
    lg_csv_str(&r, "two\nlines");
    lg_csv_num(&r, 0.05);
    lg_csv_int(&r, -7);
    lg_csv_str(&r, "");
    const char *s = lg_csv_end(&r);
    ck_assert_str_eq(s, "plain,\"a,b\",\"say \"\"hi\"\"\",\"two\nlines\",0.05,-7,\n");
    lg_csv_row_clear(&r);
    lg_csv_num(&r, INFINITY);
    ck_assert_str_eq(lg_csv_end(&r), "inf\n");
    lg_csv_row_free(&r);
}
END_TEST

/* A 2-3-2 ReLU net: y0 = relu(x0 − x1) − relu(x1 − x0) + 0.1, y1 = 0, so
 * "Y_0 <= Y_1" holds exactly where x1 ≥ x0 + 0.1. */
static const char *lg_cli_tiny_net(void)
{
    static char path[256];
    snprintf(path, sizeof path, "%s", lg_test_tmpfile(".lgnet"));
    int dims[3] = {2, 3, 2};
    lg_net net;
    ck_assert_int_eq(lg_net_init(&net, 2, dims, LG_ACT_RELU), LG_OK);
    double W0[6] = {1, -1, -1, 1, 1, 1}, b0[3] = {0, 0, -1};
    double W1[6] = {1, -1, 0, 0, 0, 0}, b1[2] = {0.1, 0};
    memcpy(net.layers[0].lin.W, W0, sizeof W0);
    memcpy(net.layers[0].b, b0, sizeof b0);
    memcpy(net.layers[1].lin.W, W1, sizeof W1);
    memcpy(net.layers[1].b, b1, sizeof b1);
    ck_assert_int_eq(lg_netfile_write(&net, path), LG_OK);
    lg_net_free(&net);
    return path;
}

static const char *lg_cli_tiny_prop(double x0lo, double x0hi, double x1lo, double x1hi)
{
    static char path[256];
    snprintf(path, sizeof path, "%s", lg_test_tmpfile(".vnnlib"));
    char text[1024];
    snprintf(text, sizeof text,
             "(declare-const X_0 Real)\n(declare-const X_1 Real)\n(declare-const Y_0 Real)\n(declare-const Y_1 Real)\n"
             "(assert (>= X_0 %g))\n(assert (<= X_0 %g))\n(assert (>= X_1 %g))\n(assert (<= X_1 %g))\n"
             "(assert (<= Y_0 Y_1))\n",
             x0lo, x0hi, x1lo, x1hi);
    lg_test_write(path, text);
    return path;
}

/* A NumPy file (format 1.0) of rows × cols values (cols 0: a vector). */
static void lg_cli_npy(const char *path, const char *descr, int rows, int cols, const void *data, size_t bytes)
{
    char dict[160], hdr[256];
    if (cols) snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (%d, %d), }", descr, rows, cols);
    else snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (%d,), }", descr, rows);
    size_t len = strlen(dict), total = (10 + len + 1 + 63) / 64 * 64;
    memset(hdr, ' ', sizeof hdr);
    memcpy(hdr, dict, len);
    hdr[total - 10 - 1] = '\n';
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    unsigned short hl = (unsigned short)(total - 10);
    unsigned char head[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(hl & 0xff), (unsigned char)(hl >> 8)};
    ck_assert(fwrite(head, 1, 10, f) == 10 && fwrite(hdr, 1, total - 10, f) == total - 10 &&
              fwrite(data, 1, bytes, f) == bytes);
    ck_assert_int_eq(fclose(f), 0);
}

/* Five test points for the tiny net (class 0 iff x1 < x0 + 0.1), as the
 * data spec "X.npy,y.npy": 0 robust at ε = 0.02, 1 misclassified, 2 violated
 * near its clean input, 3 robust for class 1, 4 against both clip ends. */
static const float lg_cli_pts[5][2] = {{0.5f, 0.5f}, {0.2f, 0.6f}, {0.3f, 0.375f}, {0.3f, 0.6f}, {0.005f, 0.99f}};
static const char *lg_cli_tiny_data(void)
{
    static char spec[600];
    const char *X = lg_test_tmpfile("_X.npy"), *Y = lg_test_tmpfile("_y.npy");
    const long long y[5] = {0, 0, 0, 1, 1};
    lg_cli_npy(X, "<f4", 5, 2, lg_cli_pts, sizeof lg_cli_pts);
    lg_cli_npy(Y, "<i8", 5, 0, y, sizeof y);
    snprintf(spec, sizeof spec, "%s,%s", X, Y);
    return spec;
}

/* verify --index LIST: one process, one JSON line per instance in the order
 * given, or a text line each and a summary; misclassified inputs named. */
START_TEST(test_cli_verify_batch)
{
    const char *net = lg_cli_tiny_net();
    const char *data = lg_cli_tiny_data();
    const char *out = lg_test_tmpfile(".out");
    char args[2048];
    snprintf(args, sizeof args, "verify %s --data %s --index 2,0-1,3 --eps 0.02 --json", net, data);
    ck_assert_int_eq(lg_test_cli(args, out), 0);
    static const struct {
        long index;
        const char *verdict;
        int misclassified;
    } want[] = {{2, "violated", 0}, {0, "robust", 0}, {1, "violated", 1}, {3, "robust", 0}};
    const char *p = lg_test_slurp(out);
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const char *nl = strchr(p, '\n');
        ck_assert_msg(nl != NULL, "line %zu missing:\n%s", i, lg_test_slurp(out));
        json_error_t je;
        json_t *o = json_loadb(p, (size_t)(nl - p), 0, &je);
        ck_assert_msg(o != NULL, "line %zu: %s", i, je.text);
        char inst[64];
        snprintf(inst, sizeof inst, "index=%ld eps=0.02", want[i].index);
        ck_assert_str_eq(json_string_value(json_object_get(o, "instance")), inst);
        ck_assert_msg(strcmp(json_string_value(json_object_get(o, "verdict")), want[i].verdict) == 0, "%s: %s", inst,
                      json_string_value(json_object_get(o, "verdict")));
        ck_assert_msg(json_is_true(json_object_get(o, "misclassified")) == want[i].misclassified, "%s: misclassified",
                      inst);
        json_decref(o);
        p = nl + 1;
    }
    ck_assert_str_eq(p, "");
    /* text: a line per instance and a summary */
    snprintf(args, sizeof args, "verify %s --data %s --index 0-3 --eps 0.02", net, data);
    ck_assert_int_eq(lg_test_cli(args, out), 0);
    const char *t = lg_test_slurp(out);
    ck_assert_msg(strstr(t, "index=0 eps=0.02: robust") && strstr(t, "index=1 eps=0.02: violated (misclassified)") &&
                      strstr(t, "index=2 eps=0.02: violated,") &&
                      strstr(t, "4 instances: 2 robust, 2 violated (1 of them misclassified), 0 unknown"),
                  "%s", t);
    /* one instance: the full summary, misclassified named on its first line */
    snprintf(args, sizeof args, "verify %s --data %s --index 1 --eps 0.02", net, data);
    ck_assert_int_eq(lg_test_cli(args, out), 0);
    ck_assert_msg(strncmp(lg_test_slurp(out), "violated (misclassified", 23) == 0, "%s", lg_test_slurp(out));
    /* bad lists exit 2 before anything runs */
    static const char *const bad[] = {"3-1", "0-9", "0,x", "1,", "-1", "0--2"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(args, sizeof args, "verify %s --data %s --index %s --eps 0.02", net, data, bad[i]);
        ck_assert_msg(lg_test_cli(args, out) == 2, "--index %s", bad[i]);
        ck_assert_msg(strstr(lg_test_slurp(out), "index=") == NULL, "--index %s ran: %s", bad[i], lg_test_slurp(out));
    }
    snprintf(args, sizeof args, "verify %s --data %s --index 0-1 --eps 0.02 -o %s", net, data, lg_test_tmpfile(".r"));
    ck_assert_int_eq(lg_test_cli(args, NULL), 2);
}
END_TEST

/* encode --format vnnlib: the file read back is the same property — the
 * same outward and inward boxes bit for bit (each bound the exact decimal
 * of the clipped ball's end) and the same verdict as --index. */
START_TEST(test_cli_vnnlib_written_reads_back)
{
    const char *net = lg_cli_tiny_net();
    char netp[256];
    snprintf(netp, sizeof netp, "%s", net);
    const char *data = lg_cli_tiny_data();
    const long labels[5] = {0, 0, 0, 1, 1};
    int inexact = 0;
    for (int ix = 0; ix < 5; ix++) {
        const char *vnn = lg_test_tmpfile(".vnnlib"), *out = lg_test_tmpfile(".out");
        char args[2048], v1[32] = "", v2[32] = "";
        snprintf(args, sizeof args, "encode %s --data %s --index %d --eps 0.02 --format vnnlib -o %s", netp, data, ix,
                 vnn);
        ck_assert_int_eq(lg_test_cli(args, NULL), 0);
        lg_prop back, want;
        ck_assert_int_eq(lg_vnnlib_read(&back, vnn, 2, 2), LG_OK);
        double x0[2] = {lg_cli_pts[ix][0], lg_cli_pts[ix][1]};
        ck_assert_int_eq(lg_prop_robustness(&want, x0, 2, 0.02, 0, 1, (int)labels[ix], 2, 0), LG_OK);
        ck_assert_int_eq(back.n_cases, 1);
        for (int i = 0; i < 2; i++) {
            const double *bl = back.inner ? back.inner[0].lo : back.cases[0].lo;
            const double *bh = back.inner ? back.inner[0].hi : back.cases[0].hi;
            ck_assert_msg(back.cases[0].lo[i] == want.cases[0].lo[i] && back.cases[0].hi[i] == want.cases[0].hi[i],
                          "index %d X_%d: outward [%.17g, %.17g], expected [%.17g, %.17g]", ix, i, back.cases[0].lo[i],
                          back.cases[0].hi[i], want.cases[0].lo[i], want.cases[0].hi[i]);
            ck_assert_msg(bl[i] == want.inner[0].lo[i] && bh[i] == want.inner[0].hi[i],
                          "index %d X_%d: inward [%.17g, %.17g], expected [%.17g, %.17g]", ix, i, bl[i], bh[i],
                          want.inner[0].lo[i], want.inner[0].hi[i]);
            inexact += want.inner[0].lo[i] != want.cases[0].lo[i];
        }
        if (ix == 4) ck_assert(back.cases[0].lo[0] == 0 && back.cases[0].hi[1] == 1);
        lg_prop_free(&back);
        lg_prop_free(&want);
        /* the same verdict both ways */
        snprintf(args, sizeof args, "verify %s --vnnlib %s --json", netp, vnn);
        ck_assert_int_eq(lg_test_cli(args, out), 0);
        sscanf(strstr(lg_test_slurp(out), "\"verdict\": \"") + 12, "%31[a-z]", v1);
        snprintf(args, sizeof args, "verify %s --data %s --index %d --eps 0.02 --json", netp, data, ix);
        ck_assert_int_eq(lg_test_cli(args, out), 0);
        sscanf(strstr(lg_test_slurp(out), "\"verdict\": \"") + 12, "%31[a-z]", v2);
        ck_assert_msg(strcmp(v1, v2) == 0 && v1[0], "index %d: --vnnlib %s, --index %s", ix, v1, v2);
    }
    ck_assert_msg(inexact > 0, "no bound of the test is off the doubles: it checks nothing");
    /* a VNN-LIB property is already one */
    char args[1024];
    snprintf(args, sizeof args, "encode %s --vnnlib %s --format vnnlib -o %s", netp, lg_cli_tiny_prop(0, 1, 0, 1),
             lg_test_tmpfile(".vnnlib"));
    ck_assert_int_eq(lg_test_cli(args, NULL), 2);
}
END_TEST

START_TEST(test_cli_cex_closes_the_loop)
{
    const char *net = lg_cli_tiny_net();
    const char *sat = lg_cli_tiny_prop(0, 1, 0, 1);
    char cmd[2048];
    const char *q = lg_test_tmpfile(".smt2"), *model = lg_test_tmpfile(".z3"), *res = lg_test_tmpfile(".txt");
    const char *out = lg_test_tmpfile(".out");
    /* z3 on the SMT-LIB 2 query, then the model back through the exact gate */
    snprintf(cmd, sizeof cmd, "%s --vnnlib %s --format smt2 -o %s", net, sat, q);
    char args[4096];
    snprintf(args, sizeof args, "encode %s", cmd);
    ck_assert_int_eq(lg_test_cli(args, NULL), 0);
    const char *text = lg_test_slurp(q);
    /* X_i and Y_j under their VNN-LIB names (declared by the writer or by the property's own text) */
    ck_assert_msg((strstr(text, "(declare-fun X_0 () Real)") || strstr(text, "(declare-const X_0 Real)")) &&
                      (strstr(text, "(declare-fun Y_1 () Real)") || strstr(text, "(declare-const Y_1 Real)")) &&
                      strstr(text, "(check-sat)\n(get-model)"),
                  "%s", text);
    snprintf(cmd, sizeof cmd, "z3 %s > %s", q, model);
    ck_assert_int_eq(lg_test_sh(cmd), 0);
    ck_assert_msg(strncmp(lg_test_slurp(model), "sat", 3) == 0, "z3: %s", lg_test_slurp(model));
    snprintf(args, sizeof args, "cex %s --vnnlib %s %s -o %s", net, sat, model, res);
    ck_assert_int_eq(lg_test_cli(args, out), 0);
    ck_assert_msg(strncmp(lg_test_slurp(out), "violated", 8) == 0, "%s", lg_test_slurp(out));
    ck_assert_msg(strncmp(lg_test_slurp(res), "sat\n((X_0 ", 10) == 0, "%s", lg_test_slurp(res));
    /* glpsol on the CPLEX LP query */
    const char *lp = lg_test_tmpfile(".lp"), *sol = lg_test_tmpfile(".glp");
    snprintf(args, sizeof args, "encode %s --vnnlib %s --format lp -o %s", net, sat, lp);
    ck_assert_int_eq(lg_test_cli(args, NULL), 0);
    snprintf(cmd, sizeof cmd, "glpsol --lp %s -o %s >/dev/null", lp, sol);
    ck_assert_int_eq(lg_test_sh(cmd), 0);
    snprintf(args, sizeof args, "cex %s --vnnlib %s %s -o %s", net, sat, sol, res);
    ck_assert_int_eq(lg_test_cli(args, out), 0);
    ck_assert_msg(strncmp(lg_test_slurp(out), "violated", 8) == 0, "%s", lg_test_slurp(out));
    /* a point that does not satisfy the property (x1 < x0 + 0.1) is not a counterexample */
    const char *bogus = lg_test_tmpfile(".z3");
    lg_test_write(bogus, "sat\n(\n  (define-fun X_1 () Real\n    (/ 1.0 4.0))\n  (define-fun X_0 () Real\n    (- "
                        "(/ 1.0 2.0) (/ 1.0 4.0))))\n");
    snprintf(args, sizeof args, "cex %s --vnnlib %s %s -o %s", net, sat, bogus, res);
    ck_assert_int_eq(lg_test_cli(args, out), 0);
    ck_assert_msg(strncmp(lg_test_slurp(out), "unknown", 7) == 0, "%s", lg_test_slurp(out));
    ck_assert_str_eq(lg_test_slurp(res), "unknown\n");
    /* exactly on the boundary x1 = x0 + 0.1 in rationals (Y_0 = Y_1): a counterexample only if the
     * doubles nearest to the rationals still satisfy it exactly; either way never a crash */
    lg_test_write(bogus, "sat\n((define-fun X_0 () Real 0.0)\n (define-fun X_1 () Real (/ 1.0 10.0)))\n");
    ck_assert_int_eq(lg_test_cli(args, out), 0);
    /* a file that is no solver answer: a file of the wrong kind, exit 2 */
    lg_test_write(bogus, "hello\n");
    snprintf(args, sizeof args, "cex %s --vnnlib %s %s", net, sat, bogus);
    ck_assert_int_eq(lg_test_cli(args, NULL), 2);
}
END_TEST

/* `cex` reports what the solver said. Real z3, cvc5 and glpsol outputs on
 * encoded queries of the tiny net (no counterexample on the boxes
 * [0.5,1]×[0,0.2] and [0.6,0.7]×[0,0.3]; [0.6,0.7]×[0,0.2] has no unstable
 * ReLU, so its query is a plain LP), and the exact text z3 prints for
 * unknown and for its -T time limit (seen on a query of the 784-256-256
 * fixture net, too slow to produce in a test). */
START_TEST(test_cli_cex_every_outcome)
{
    const char *net = lg_cli_tiny_net();
    char unsat[256], lp_only[256], pure[256], two[256], cmd[4096], args[4096];
    snprintf(unsat, sizeof unsat, "%s", lg_cli_tiny_prop(0.5, 1, 0, 0.2));
    snprintf(lp_only, sizeof lp_only, "%s", lg_cli_tiny_prop(0.6, 0.7, 0, 0.3));
    snprintf(pure, sizeof pure, "%s", lg_cli_tiny_prop(0.6, 0.7, 0, 0.2));
    /* a property of two cases (two boxes): the query of one case says nothing about the other */
    snprintf(two, sizeof two, "%s", lg_test_tmpfile(".vnnlib"));
    lg_test_write(two, "(declare-const X_0 Real)\n(declare-const X_1 Real)\n(declare-const Y_0 Real)\n"
                       "(declare-const Y_1 Real)\n(assert (<= Y_0 Y_1))\n(assert (or (and (>= X_0 0.5) (<= X_0 1) "
                       "(>= X_1 0) (<= X_1 0.2)) (and (>= X_0 0) (<= X_0 1) (>= X_1 0) (<= X_1 1))))\n");
    char q[256], lp[256], res[256], ans[256], out[256]; /* copies: lg_test_tmpfile's ring is reused */
    snprintf(q, sizeof q, "%s", lg_test_tmpfile(".smt2"));
    snprintf(lp, sizeof lp, "%s", lg_test_tmpfile(".lp"));
    snprintf(res, sizeof res, "%s", lg_test_tmpfile(".res"));
    snprintf(ans, sizeof ans, "%s", lg_test_tmpfile(".ans"));
    snprintf(out, sizeof out, "%s", lg_test_tmpfile(".out"));
    static const struct {
        const char *prop; /* U unsat box, L lp_only box, P pure-LP box, T two cases */
        const char *make; /* shell producing the answer in $A from the query ($Q smt2, $P lp), or NULL */
        const char *text; /* else the answer's exact text */
        const char *first, *needle, *result;
    } cases[] = {
        {"U", "z3 $Q > $A", NULL, "unsat", "SMT-LIB solver: unsat", "unsat\n"},
        {"U", "cvc5 --produce-models $Q > $A", NULL, "unsat", "SMT-LIB solver: unsat", "unsat\n"},
        {"L", "glpsol --lp $P -o $A >/dev/null", NULL, "unsat", "glpsol: INTEGER EMPTY", "unsat\n"},
        {"U", "glpsol --lp $P -o $A >/dev/null", NULL, "unsat", "glpsol: INTEGER EMPTY", "unsat\n"},
        {"P", "glpsol --lp $P --nopresol -o $A >/dev/null", NULL, "unsat", "glpsol: INFEASIBLE (FINAL)", "unsat\n"},
        /* glpsol's presolver leaves an infeasible LP UNDEFINED: no answer */
        {"P", "glpsol --lp $P -o $A >/dev/null", NULL, "unknown", "glpsol: UNDEFINED", "unknown\n"},
        {"U", NULL, "unknown\n(error \"line 7748 column 10: model is not available\")\n", "unknown",
         "SMT-LIB solver: unknown", "unknown\n"},
        {"U", NULL, "timeout\n", "timeout", "SMT-LIB solver: timeout", "timeout\n"},
        {"U", NULL, "sat\n(\n  (define-fun X_1 () Real 0.0)\n)\n", "unknown", "no value of X_0", "unknown\n"},
        {"U", NULL, "(error \"line 3 column 1: unknown constant X_9\")\n", "unknown", "error", "unknown\n"},
        {"U", NULL, "Stopped on time - objective value 0\n", "timeout", "CBC: Stopped on time", "timeout\n"},
        {"U", NULL, "Infeasible - objective value 0\n", "unsat", "CBC: Infeasible", "unsat\n"},
        {"T", "z3 $Q > $A", NULL, "unknown", "2 cases", "unknown\n"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *prop = cases[i].prop[0] == 'U' ? unsat : cases[i].prop[0] == 'L' ? lp_only
                         : cases[i].prop[0] == 'P' ? pure : two;
        unlink(ans);
        unlink(res);
        if (cases[i].make) {
            snprintf(args, sizeof args, "encode %s --vnnlib %s --format smt2 -o %s", net, prop, q);
            ck_assert_int_eq(lg_test_cli(args, NULL), 0);
            snprintf(args, sizeof args, "encode %s --vnnlib %s --format lp -o %s", net, prop, lp);
            ck_assert_int_eq(lg_test_cli(args, NULL), 0);
            snprintf(cmd, sizeof cmd, "Q='%s' P='%s' A='%s'; %s", q, lp, ans, cases[i].make);
            lg_test_sh(cmd); /* z3 exits 1 on (get-model) after unsat */
        } else {
            lg_test_write(ans, cases[i].text);
        }
        snprintf(args, sizeof args, "cex %s --vnnlib %s %s -o %s", net, prop, ans, res);
        int rc = lg_test_cli(args, out);
        const char *o = lg_test_slurp(out);
        ck_assert_msg(rc == 0 && strncmp(o, cases[i].first, strlen(cases[i].first)) == 0 && strstr(o, cases[i].needle),
                      "case %zu (%s): exit %d, cex said: %s\nsolver said: %s", i, cases[i].make ? cases[i].make : "text",
                      rc, o, lg_test_slurp(ans));
        ck_assert_msg(!strstr(o, "re-check of every case"), "case %zu: %s", i, o);
        ck_assert_msg(strcmp(lg_test_slurp(res), cases[i].result) == 0, "case %zu: result file %s", i,
                      lg_test_slurp(res));
    }
}
END_TEST

START_TEST(test_cli_exit_two_names_the_range)
{
    const char *net = lg_cli_tiny_net();
    const char *prop = lg_cli_tiny_prop(0, 1, 0, 1);
    const char *err = lg_test_tmpfile(".err");
    static const struct {
        const char *args, *needle;
    } cases[] = {
        {"train --epochs 1 --batch 0 -o x.lgnet", "[1, 65536]"},
        {"train --epochs 1 --momentum 1 -o x.lgnet", "[0, 0.999999]"},
        {"train --epochs 1 -o /nonexistent/dir/x.lgnet", "/nonexistent"},
        {"verify NET --vnnlib PROP -j -1", "-j: expected an integer in [0, 1024]"},
        {"verify NET --vnnlib PROP -o /nonexistent/dir/r.txt", "/nonexistent"},
        {"encode NET --vnnlib PROP --case 5 --format lp -o -", "[0, 0]"},
        {"bench /nonexistent -j x", "-j: expected an integer"},
        {"study /nonexistent.ini -j -3", "-j: expected an integer in [0, 256]"},
        {"export NET -o x.onnx --dtype float16", "auto, float32 or float64"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char args[2048], cmd[4096];
        snprintf(args, sizeof args, "%s", cases[i].args);
        char *p;
        while ((p = strstr(args, "NET"))) {
            char rest[2048];
            snprintf(rest, sizeof rest, "%s", p + 3);
            snprintf(p, sizeof args - (size_t)(p - args), "%s%s", net, rest);
        }
        while ((p = strstr(args, "PROP"))) {
            char rest[2048];
            snprintf(rest, sizeof rest, "%s", p + 4);
            snprintf(p, sizeof args - (size_t)(p - args), "%s%s", prop, rest);
        }
        snprintf(cmd, sizeof cmd, "'%s/lgelu' %s >/dev/null 2>'%s'", LG_BINARY_DIR, args, err);
        int rc = lg_test_sh(cmd);
        const char *msg = lg_test_slurp(err);
        ck_assert_msg(rc == 2 && strstr(msg, cases[i].needle), "lgelu %s: exit %d, stderr: %s", args, rc, msg);
    }
    if (lg_test_have_data()) {
        const char *net2 = lg_cli_tiny_net(); /* 2 inputs: the images do not fit it */
        static const char *const data_cases[][2] = {
            {"train --arch 785,64,10 --epochs 1 -o x.lgnet", "784 features"},
            {"train --arch 784,64,5 --epochs 1 --subset 100 -o x.lgnet", "at least 10"},
            {"train --arch 784,8,10 --epochs 1 --subset 100 --val 100 -o x.lgnet", "--val: expected an integer in [0, 99]"},
            {"verify NET --index 0 --eps 0.1", "784 features"},
        };
        for (size_t i = 0; i < sizeof data_cases / sizeof data_cases[0]; i++) {
            char cmd[4096], args[1024];
            snprintf(args, sizeof args, "%s", data_cases[i][0]);
            char *p = strstr(args, "NET");
            if (p) {
                char rest[1024];
                snprintf(rest, sizeof rest, "%s", p + 3);
                snprintf(p, sizeof args - (size_t)(p - args), "%s%s", net2, rest);
            }
            snprintf(cmd, sizeof cmd, "'%s/lgelu' %s >/dev/null 2>'%s'", LG_BINARY_DIR, args, err);
            int rc = lg_test_sh(cmd);
            ck_assert_msg(rc == 2 && strstr(lg_test_slurp(err), data_cases[i][1]), "lgelu %s: exit %d: %s", args, rc,
                          lg_test_slurp(err));
        }
    }
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "'%s/lgelu' --version > '%s'", LG_BINARY_DIR, err);
    ck_assert_int_eq(lg_test_sh(cmd), 0);
    ck_assert(strncmp(lg_test_slurp(err), "lgelu ", 6) == 0);
}
END_TEST

/* The one exit-code rule (docs/USAGE.md "Exit status") for every command that
 * reads networks, properties and inputs: 2 for a usage or value error,
 * including a file named on the command line of the wrong shape or kind; 1
 * for a failure while running (a file missing, unreadable or corrupt). */
START_TEST(test_cli_exit_codes_one_rule)
{
    const char *net = lg_cli_tiny_net(); /* 2 inputs, 2 outputs, ReLU */
    char sat[256], p3[256], in2[256], in3[256], junk[256], trunc[256], sol[256];
    snprintf(sat, sizeof sat, "%s", lg_cli_tiny_prop(0, 1, 0, 1));
    snprintf(p3, sizeof p3, "%s", lg_test_tmpfile(".vnnlib"));
    lg_test_write(p3, "(declare-const X_0 Real)\n(declare-const X_1 Real)\n(declare-const X_2 Real)\n"
                      "(declare-const Y_0 Real)\n(declare-const Y_1 Real)\n(assert (>= X_0 0))\n(assert (<= X_0 1))\n"
                      "(assert (>= X_1 0))\n(assert (<= X_1 1))\n(assert (>= X_2 0))\n(assert (<= X_2 1))\n"
                      "(assert (<= Y_0 Y_1))\n");
    snprintf(in2, sizeof in2, "%s", lg_test_tmpfile(".txt"));
    lg_test_write(in2, "0.25 0.5\n");
    snprintf(in3, sizeof in3, "%s", lg_test_tmpfile(".txt"));
    lg_test_write(in3, "0.25 0.5 0.75\n");
    snprintf(junk, sizeof junk, "%s", lg_test_tmpfile(".txt"));
    lg_test_write(junk, "hello\n");
    snprintf(sol, sizeof sol, "%s", lg_test_tmpfile(".z3"));
    lg_test_write(sol, "sat\n((define-fun X_0 () Real 0.0)\n (define-fun X_1 () Real 0.5))\n");
    snprintf(trunc, sizeof trunc, "%s", lg_test_tmpfile(".lgnet"));
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "head -c 20 '%s' > '%s'", net, trunc);
    ck_assert_int_eq(lg_test_sh(cmd), 0);
    char mnist[1024], gelu[1024], gelu_prop[1024];
    snprintf(mnist, sizeof mnist, "%s", lg_test_fixture("vnncomp/mnist-net_256x2.onnx"));
    snprintf(gelu, sizeof gelu, "%s", lg_test_fixture("torch_smooth/gelu.onnx"));
    snprintf(gelu_prop, sizeof gelu_prop, "%s", lg_test_fixture("torch_smooth/gelu_small.vnnlib"));
    const char *lp = lg_test_tmpfile(".lp"), *err = lg_test_tmpfile(".err");
    char sig[1024], sin_onnx[256], out[256];
    snprintf(sig, sizeof sig, "%s", lg_test_fixture("torch_smooth/sigmoid.onnx"));
    snprintf(sin_onnx, sizeof sin_onnx, "%s", lg_test_tmpfile(".onnx"));
    snprintf(out, sizeof out, "%s", lg_test_tmpfile(".lgnet"));
    snprintf(cmd, sizeof cmd,
             "'%s' -c \"import onnx; from onnx import helper as h, TensorProto as T; "
             "g = h.make_graph([h.make_node('Sin', ['X'], ['Y'])], 'g', [h.make_tensor_value_info('X', T.FLOAT, [1, 2])], "
             "[h.make_tensor_value_info('Y', T.FLOAT, [1, 2])]); "
             "onnx.save(h.make_model(g, opset_imports=[h.make_opsetid('', 13)]), '%s')\"",
             LG_PYTHON3, sin_onnx);
    ck_assert_int_eq(lg_test_sh(cmd), 0);
    static const struct {
        int data; /* needs the Fashion-MNIST test set */
        int rc;
        const char *args, *needle;
    } cases[] = {
        /* 2: a value or a file that does not fit */
        {0, 2, "eval NET --input IN3", "2 inputs"},
        {1, 2, "eval NET", "784 features"},
        {0, 2, "verify NET --vnnlib P3", "declares 3 inputs"},
        {0, 2, "verify NET --input IN3 --eps 0.1", "2"},
        {0, 2, "verify NET --vnnlib SAT --ref MNIST", "784"},
        {1, 2, "verify MNIST --index -1 --eps 0.1", "[0, 9999]"},
        {1, 2, "verify MNIST --index 10000 --eps 0.1", "[0, 9999]"},
        {0, 2, "encode NET --vnnlib P3 --format lp -o LP", "declares 3 inputs"},
        {0, 2, "encode NET --input IN3 --eps 0.1 --format lp -o LP", "2"},
        {0, 2, "encode GELU --vnnlib GPROP --format lp -o LP", "lgelu relu"},
        {1, 2, "encode MNIST --index -1 --eps 0.1 --format lp -o LP", "[0, 9999]"},
        {0, 2, "cex NET --vnnlib P3 SOL", "declares 3 inputs"},
        {0, 2, "cex NET --vnnlib SAT JUNK", "X_0"},
        {0, 2, "check NET --ref MNIST --inputs IN2 --max-deviation 1", "784"},
        {0, 2, "check NET --ref NET --inputs IN3 --max-deviation 1", "2 inputs"},
        {0, 2, "check GELU --ref GELU --inputs IN2 --max-deviation 1", "relu"},
        {0, 2, "bound NET --ref MNIST", "784"},
        {0, 2, "bound GELU --ref GELU", "relu"},
        {1, 2, "bound NET --ref NET", "784 features"},
        /* 2: a network of a kind the stage does not take; one range of eps for every ball */
        {0, 2, "relu SIG -o OUT", "activation sigmoid has no ReLU"},
        {0, 2, "verify GELU --vnnlib GPROP --solver glpk", "smooth activations"},
        {0, 2, "eval SIN --input IN2", "'Sin' is not supported"},
        {0, 2, "verify SIN --input IN2 --eps 0.1", "'Sin' is not supported"},
        {0, 2, "verify NET --input IN2 --eps 5", "[0, 1]"},
        {0, 2, "encode NET --input IN2 --eps 5 --format lp -o LP", "[0, 1]"},
        {0, 2, "check NET --ref NET --inputs IN2 --eps 5 --max-deviation 1", "[0, 1]"},
        {0, 2, "bound NET --ref NET --eps 5", "[0, 1]"},
        /* 1: a failure while running */
        {0, 1, "eval /nonexistent.lgnet --input IN2", "/nonexistent.lgnet"},
        {0, 1, "eval TRUNC --input IN2", "truncated"},
        {0, 1, "verify NET --vnnlib /nonexistent.vnnlib", "/nonexistent.vnnlib"},
        {0, 1, "verify NET --vnnlib JUNK", "expected a command"},
        {0, 1, "encode NET --vnnlib /nonexistent.vnnlib --format lp -o LP", "/nonexistent.vnnlib"},
        {0, 1, "cex NET --vnnlib SAT /nonexistent.txt", "/nonexistent.txt"},
        {0, 1, "cex TRUNC --vnnlib SAT SOL", "truncated"},
        {0, 1, "check /nonexistent.lgnet --ref NET --inputs IN2 --max-deviation 1", "/nonexistent.lgnet"},
        {0, 1, "check NET --ref NET --inputs /nonexistent.txt --max-deviation 1", "/nonexistent.txt"},
        {0, 1, "bound /nonexistent.lgnet --ref NET", "/nonexistent.lgnet"},
        {0, 1, "bound TRUNC --ref NET", "truncated"},
    };
    const char *keys[] = {"NET", "P3",  "SAT",  "IN2",     "IN3", "JUNK", "SOL", "TRUNC",
                          "MNIST", "GELU", "GPROP", "LP", "SIG", "SIN", "OUT"};
    const char *vals[] = {net, p3, sat, in2, in3, junk, sol, trunc, mnist, gelu, gelu_prop, lp, sig, sin_onnx, out};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (cases[i].data && !lg_test_have_data()) continue;
        char args[4096] = "";
        /* substitute the placeholders word by word */
        char words[1024];
        snprintf(words, sizeof words, "%s", cases[i].args);
        char *save = NULL;
        for (char *w = strtok_r(words, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
            const char *v = w;
            for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
                if (strcmp(w, keys[k]) == 0) v = vals[k];
            size_t n = strlen(args);
            snprintf(args + n, sizeof args - n, "%s'%s'", n ? " " : "", v);
        }
        snprintf(cmd, sizeof cmd, "'%s/lgelu' %s >/dev/null 2>'%s'", LG_BINARY_DIR, args, err);
        int rc = lg_test_sh(cmd);
        const char *msg = lg_test_slurp(err);
        ck_assert_msg(rc == cases[i].rc && strstr(msg, cases[i].needle), "lgelu %s: exit %d (expected %d), stderr: %s",
                      cases[i].args, rc, cases[i].rc, msg);
    }
}
END_TEST

/* The summaries say what happened: no per-layer ReLU counts when no bound
 * ran (the clean input decided) or the net has no ReLU layer; export and
 * encode name the file they wrote. */
START_TEST(test_cli_summaries_say_what_happened)
{
    const char *net = lg_cli_tiny_net(); /* 2 inputs, 2 outputs, ReLU */
    char in2[256], out[256], onnx[256], lp[256], cmd[4096];
    snprintf(in2, sizeof in2, "%s", lg_test_tmpfile(".txt"));
    lg_test_write(in2, "0.25 0.5\n");
    snprintf(out, sizeof out, "%s", lg_test_tmpfile(".out"));
    snprintf(onnx, sizeof onnx, "%s", lg_test_tmpfile(".onnx"));
    snprintf(lp, sizeof lp, "%s", lg_test_tmpfile(".lp"));
    /* the label the net does not predict: the clean input is the counterexample */
    int seen_misclassified = 0;
    for (int label = 0; label < 2; label++) {
        snprintf(cmd, sizeof cmd, "verify '%s' --input '%s' --label %d --eps 0.01", net, in2, label);
        ck_assert_int_eq(lg_test_cli(cmd, out), 0);
        const char *s = lg_test_slurp(out);
        if (strstr(s, "misclassified")) {
            seen_misclassified = 1;
            ck_assert_msg(strstr(s, "bounds: none computed (the clean input is a counterexample)") &&
                              !strstr(s, "unstable ReLUs per layer"), "%s", s);
        } else {
            ck_assert_msg(strstr(s, "unstable ReLUs per layer:"), "%s", s);
        }
    }
    ck_assert(seen_misclassified);
    /* a smooth net: no ReLU to count */
    char gelu[1024];
    snprintf(gelu, sizeof gelu, "%s", lg_test_fixture("torch_smooth/gelu.onnx"));
    snprintf(cmd, sizeof cmd, "verify '%s' --vnnlib '%s'", gelu, lg_test_fixture("torch_smooth/gelu_small.vnnlib"));
    ck_assert_int_eq(lg_test_cli(cmd, out), 0);
    const char *s = lg_test_slurp(out);
    ck_assert_msg(strstr(s, "no ReLU layer") && !strstr(s, "unstable ReLUs per layer"), "%s", s);
    /* export and encode: one line naming the file */
    snprintf(cmd, sizeof cmd, "export '%s' -o '%s'", net, onnx);
    ck_assert_int_eq(lg_test_cli(cmd, out), 0);
    char want[600];
    snprintf(want, sizeof want, "wrote %s (ONNX", onnx);
    ck_assert_msg(strncmp(lg_test_slurp(out), want, strlen(want)) == 0, "export printed: %s", lg_test_slurp(out));
    snprintf(cmd, sizeof cmd, "encode '%s' --input '%s' --eps 0.1 --format lp -o '%s'", net, in2, lp);
    ck_assert_int_eq(lg_test_cli(cmd, out), 0);
    snprintf(want, sizeof want, "wrote %s (lp, case 0", lp);
    ck_assert_msg(strncmp(lg_test_slurp(out), want, strlen(want)) == 0, "encode printed: %s", lg_test_slurp(out));
    /* -o -: stdout is the file itself, nothing else on it */
    snprintf(cmd, sizeof cmd, "encode '%s' --input '%s' --eps 0.1 --format lp -o -", net, in2);
    ck_assert_int_eq(lg_test_cli(cmd, out), 0);
    ck_assert_msg(!strstr(lg_test_slurp(out), "wrote "), "encode -o - mixed its note into the file");
    remove(in2), remove(out), remove(onnx), remove(lp);
}
END_TEST

/* A folder with the four VNN-COMP fixture instances, .gz copies of some. */
static const char *lg_cli_bench_dir(void)
{
    static char dir[256];
    snprintf(dir, sizeof dir, "%s", lg_test_tmpfile("_bench"));
    char cmd[4096];
    const char *F = lg_test_fixture("vnncomp");
    snprintf(cmd, sizeof cmd,
             "mkdir -p %s && gzip -c %s/mnist-net_256x2.onnx > %s/net.onnx.gz && cp %s/mnist-net_256x2.onnx %s/ && "
             "gzip -c %s/prop_1_0.05.vnnlib > %s/prop_1.vnnlib.gz && gzip -c %s/prop_3_0.05.vnnlib > "
             "%s/prop_3.vnnlib.gz && cp %s/prop_2_0.05.vnnlib %s/ && "
             "printf 'net.onnx.gz,prop_1.vnnlib.gz,60\\nmnist-net_256x2.onnx,prop_2_0.05.vnnlib,60\\n"
             "net.onnx.gz,prop_3.vnnlib.gz,60\\n' > %s/instances.csv",
             dir, F, dir, F, dir, F, dir, F, dir, F, dir, dir);
    ck_assert_int_eq(lg_test_sh(cmd), 0);
    return dir;
}

START_TEST(test_cli_vnncomp_scripts)
{
    const char *dir = lg_cli_bench_dir();
    static const struct {
        const char *onnx, *vnnlib, *first;
    } cases[] = {{"net.onnx.gz", "prop_1.vnnlib.gz", "sat"},
                 {"mnist-net_256x2.onnx", "prop_2_0.05.vnnlib", "sat"},
                 {"net.onnx.gz", "prop_3.vnnlib.gz", "unsat"}};
    char cmd[4096];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *res = lg_test_tmpfile(".res");
        snprintf(cmd, sizeof cmd,
                 "LGELU='%s/lgelu' bash '%s/vnncomp_scripts/prepare_instance.sh' v1 test %s/%s %s/%s >/dev/null",
                 LG_BINARY_DIR, LG_SOURCE_DIR, dir, cases[i].onnx, dir, cases[i].vnnlib);
        ck_assert_int_eq(lg_test_sh(cmd), 0);
        snprintf(cmd, sizeof cmd,
                 "LGELU='%s/lgelu' bash '%s/vnncomp_scripts/run_instance.sh' v1 test %s/%s %s/%s %s 60 >/dev/null",
                 LG_BINARY_DIR, LG_SOURCE_DIR, dir, cases[i].onnx, dir, cases[i].vnnlib, res);
        ck_assert_int_eq(lg_test_sh(cmd), 0);
        const char *r = lg_test_slurp(res);
        size_t n = strlen(cases[i].first);
        ck_assert_msg(strncmp(r, cases[i].first, n) == 0 && r[n] == '\n', "%s: %s", cases[i].vnnlib, r);
        if (strcmp(cases[i].first, "sat") == 0) {
            /* the counterexample is a VNN-COMP assignment the reader accepts */
            ck_assert_msg(strstr(r, "(X_783 ") && strstr(r, "(Y_9 "), "%s", r);
        }
    }
    /* wrong version string or argument count: refused */
    snprintf(cmd, sizeof cmd, "bash '%s/vnncomp_scripts/run_instance.sh' v2 a b c d 1 2>/dev/null", LG_SOURCE_DIR);
    ck_assert_int_ne(lg_test_sh(cmd), 0);
    snprintf(cmd, sizeof cmd, "bash '%s/vnncomp_scripts/prepare_instance.sh' v1 a b 2>/dev/null", LG_SOURCE_DIR);
    ck_assert_int_ne(lg_test_sh(cmd), 0);
    /* a timeout that is not a positive number is refused (exit 2), never run without a limit */
    static const char *const bad_timeouts[] = {"abc", "10s", "0", "-5", ""};
    for (size_t i = 0; i < sizeof bad_timeouts / sizeof bad_timeouts[0]; i++) {
        const char *r = lg_test_tmpfile(".res");
        snprintf(cmd, sizeof cmd,
                 "LGELU='%s/lgelu' bash '%s/vnncomp_scripts/run_instance.sh' v1 test %s/net.onnx.gz "
                 "%s/prop_1.vnnlib.gz %s '%s' >/dev/null 2>&1",
                 LG_BINARY_DIR, LG_SOURCE_DIR, dir, dir, r, bad_timeouts[i]);
        ck_assert_msg(lg_test_sh(cmd) == 2, "run_instance.sh with timeout '%s' was not refused", bad_timeouts[i]);
        ck_assert_msg(access(r, F_OK) != 0, "run_instance.sh with timeout '%s' wrote a result", bad_timeouts[i]);
    }
    /* an unreadable network: prepare fails, run writes unknown */
    const char *res = lg_test_tmpfile(".res");
    snprintf(cmd, sizeof cmd,
             "LGELU='%s/lgelu' bash '%s/vnncomp_scripts/run_instance.sh' v1 test /nonexistent.onnx %s/prop_1.vnnlib.gz "
             "%s 5 >/dev/null 2>&1",
             LG_BINARY_DIR, LG_SOURCE_DIR, dir, res);
    ck_assert_int_eq(lg_test_sh(cmd), 0);
    ck_assert_str_eq(lg_test_slurp(res), "unknown\n");
}
END_TEST

static int lg_cli_lines(const char *path)
{
    const char *s = lg_test_slurp(path);
    int n = 0;
    for (; *s; s++) n += *s == '\n';
    return n;
}

START_TEST(test_cli_bench_resumes)
{
    const char *dir = lg_cli_bench_dir();
    const char *out = lg_test_tmpfile("_res"), *log = lg_test_tmpfile(".log");
    char args[2048], csv[512];
    snprintf(csv, sizeof csv, "%s/results.csv", out);
    snprintf(args, sizeof args, "bench %s --out %s -j 1", dir, out);
    ck_assert_int_eq(lg_test_cli(args, log), 0);
    ck_assert_int_eq(lg_cli_lines(csv), 4);
    const char *first = lg_test_slurp(csv);
    ck_assert_msg(strstr(first, "net__prop_1,net.onnx.gz,prop_1.vnnlib.gz,60,violated,sat,") &&
                      strstr(first, "net__prop_3,net.onnx.gz,prop_3.vnnlib.gz,60,robust,unsat,"),
                  "%s", first);
    char *before = strdup(first);
    ck_assert_ptr_nonnull(before);
    /* a re-run skips all three and leaves the file as it was */
    ck_assert_int_eq(lg_test_cli(args, log), 0);
    ck_assert_str_eq(lg_test_slurp(csv), before);
    ck_assert_msg(strstr(lg_test_slurp(log), "3 instances already in"), "%s", lg_test_slurp(log));
    /* one more line in instances.csv: only it runs */
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "echo 'mnist-net_256x2.onnx,prop_3.vnnlib.gz,60' >> %s/instances.csv", dir);
    ck_assert_int_eq(lg_test_sh(cmd), 0);
    ck_assert_int_eq(lg_test_cli(args, log), 0);
    ck_assert_int_eq(lg_cli_lines(csv), 5);
    ck_assert(strncmp(lg_test_slurp(csv), before, strlen(before)) == 0);
    /* the table numbers the new instance by its place in instances.csv, not from 1 again */
    ck_assert_msg(strstr(lg_test_slurp(log), "\n4    mnist-net_256x2__prop_3 ") &&
                      !strstr(lg_test_slurp(log), "\n1    "),
                  "%s", lg_test_slurp(log));
    /* --force runs everything again into a fresh file */
    snprintf(args, sizeof args, "bench %s --out %s -j 1 --force --timeout 30", dir, out);
    ck_assert_int_eq(lg_test_cli(args, log), 0);
    ck_assert_int_eq(lg_cli_lines(csv), 5);
    ck_assert_msg(strstr(lg_test_slurp(csv), "net__prop_1,net.onnx.gz,prop_1.vnnlib.gz,30,"), "%s", lg_test_slurp(csv));
    free(before);
}
END_TEST

/* Names longer than any fixed column stay whole and distinct in the table
 * and the CSV; an unknown carries its reason (the one `verify` prints) in
 * both: here a box [0.1, 0.1] on every input, which holds no double. */
START_TEST(test_cli_bench_names_and_reasons)
{
    const char *dir = lg_test_tmpfile("_bench"), *out = lg_test_tmpfile("_res"), *log = lg_test_tmpfile(".log");
    const char *F = lg_test_fixture("vnncomp");
    static const char *const names[] = {"sri_resnet_a_with_a_long_common_prefix_of_the_family_xx_1",
                                        "sri_resnet_a_with_a_long_common_prefix_of_the_family_xx_2",
                                        "sri_resnet_a_with_a_long_common_prefix_of_the_family_xx_3"};
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "mkdir -p %s && cp %s/prop_3_0.05.vnnlib %s/p.vnnlib && "
             "{ for i in $(seq 0 783); do echo \"(declare-const X_$i Real)\"; done; "
             "for i in $(seq 0 9); do echo \"(declare-const Y_$i Real)\"; done; "
             "for i in $(seq 0 783); do echo \"(assert (>= X_$i 0.1))\"; echo \"(assert (<= X_$i 0.1))\"; done; "
             "echo '(assert (>= Y_0 -1000000))'; } > %s/nodouble.vnnlib && : > %s/instances.csv",
             dir, F, dir, dir, dir);
    ck_assert_int_eq(lg_test_sh(cmd), 0);
    for (int i = 0; i < 3; i++) {
        snprintf(cmd, sizeof cmd, "cp %s/mnist-net_256x2.onnx %s/%s.onnx && echo '%s.onnx,%s,60' >> %s/instances.csv",
                 F, dir, names[i], names[i], i == 2 ? "nodouble.vnnlib" : "p.vnnlib", dir);
        ck_assert_int_eq(lg_test_sh(cmd), 0);
    }
    char args[2048], csv[600], want[300];
    snprintf(args, sizeof args, "bench %s --out %s -j 1", dir, out);
    ck_assert_int_eq(lg_test_cli(args, log), 0);
    snprintf(csv, sizeof csv, "%s/results.csv", out);
    const char *table = lg_test_slurp(log);
    for (int i = 0; i < 3; i++) {
        snprintf(want, sizeof want, "%d    %s__%s ", i + 1, names[i], i == 2 ? "nodouble" : "p");
        ck_assert_msg(strstr(table, want), "no row '%s' in\n%s", want, table);
    }
    const char *reason = "an input box that holds no double";
    const char *row3 = strstr(table, "3    ");
    ck_assert_ptr_nonnull(row3);
    ck_assert_msg(strstr(row3, "unknown") && strstr(row3, reason), "%s", table);
    const char *c = lg_test_slurp(csv);
    snprintf(want, sizeof want, "\n%s__nodouble,%s.onnx,nodouble.vnnlib,60,unknown,unknown,", names[2], names[2]);
    const char *crow = strstr(c, want);
    ck_assert_msg(crow && strstr(crow, reason), "%s", c);
    /* the same reason as `lgelu verify` gives */
    snprintf(args, sizeof args, "verify %s/%s.onnx --vnnlib %s/nodouble.vnnlib", dir, names[2], dir);
    lg_test_cli(args, log);
    ck_assert_msg(strstr(lg_test_slurp(log), reason), "%s", lg_test_slurp(log));
    /* --witness-tol: the box that holds no double has a witness within VNN-COMP's tolerance; it is its
     * own kind (verify, JSON, result file with a note, bench), never `violated` */
    const char *res = lg_test_tmpfile(".txt");
    snprintf(args, sizeof args, "verify %s/%s.onnx --vnnlib %s/nodouble.vnnlib --witness-tol 1e-4 -o %s", dir, names[2],
             dir, res);
    ck_assert_int_eq(lg_test_cli(args, log), 0);
    ck_assert_msg(strncmp(lg_test_slurp(log), "violated-within-tolerance (", 27) == 0, "%s", lg_test_slurp(log));
    const char *rf = lg_test_slurp(res);
    ck_assert_msg(strncmp(rf, "sat\n((X_0 ", 10) == 0 && strstr(rf, "\n; lgelu: violated-within-tolerance: "), "%s", rf);
    lg_net nn;
    snprintf(want, sizeof want, "%s/%s.onnx", dir, names[2]);
    ck_assert_int_eq(lg_net_load(&nn, want), LG_OK);
    double *ax = malloc(784 * sizeof *ax), *ay = malloc(10 * sizeof *ay);
    ck_assert(ax && ay);
    ck_assert_int_eq(lg_vnnlib_read_assignment(res, 784, 10, ax, ay), LG_OK); /* the note does not break the reader */
    ck_assert(ax[0] == 0.1 && ax[783] == 0.1);
    free(ax);
    free(ay);
    lg_net_free(&nn);
    snprintf(args, sizeof args, "verify %s/%s.onnx --vnnlib %s/nodouble.vnnlib --witness-tol 1e-4 --json", dir, names[2], dir);
    ck_assert_int_eq(lg_test_cli(args, log), 0);
    ck_assert_msg(strstr(lg_test_slurp(log), "\"verdict\": \"violated-within-tolerance\""), "%s", lg_test_slurp(log));
    snprintf(args, sizeof args, "bench %s --out %s -j 1 --force --witness-tol 1e-4", dir, out);
    ck_assert_int_eq(lg_test_cli(args, log), 0);
    snprintf(want, sizeof want, "\n%s__nodouble,%s.onnx,nodouble.vnnlib,60,violated-within-tolerance,sat-tol,", names[2],
             names[2]);
    ck_assert_msg(strstr(lg_test_slurp(csv), want) && strstr(lg_test_slurp(csv), "witness_tol=0.0001"), "%s",
                  lg_test_slurp(csv));
    ck_assert_msg(strstr(lg_test_slurp(log), "1 of the undecided have a witness within --witness-tol"), "%s",
                  lg_test_slurp(log));
}
END_TEST

/* --config FILE sets option defaults ([command] sections for one command),
 * the command line overrides them, and a bad entry is refused naming the
 * file, its line and the key. */
START_TEST(test_cli_config_file)
{
    const char *cfg = lg_test_tmpfile(".cfg"), *log = lg_test_tmpfile(".log");
    const char *F = lg_test_fixture("vnncomp");
    char cmd[4096], args[2048];
    FILE *f = fopen(cfg, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "# defaults for this run\ntimeout = 50  # seconds\n\n[verify] ; one command\nsolver: 'glpk'\nbab = input\n"
               "[bench]\nsolver = z3\n");
    fclose(f);
    snprintf(args, sizeof args, "verify %s/mnist-net_256x2.onnx --vnnlib %s/prop_1_0.05.vnnlib --json --config %s", F, F, cfg);
    ck_assert_int_eq(lg_test_cli(args, log), 0);
    ck_assert_msg(strstr(lg_test_slurp(log), "\"solver\": \"glpk\"") && strstr(lg_test_slurp(log), "\"bab\": \"input\""),
                  "%s", lg_test_slurp(log));
    /* the command line wins over the file */
    snprintf(args, sizeof args, "verify %s/mnist-net_256x2.onnx --vnnlib %s/prop_1_0.05.vnnlib --json --config=%s --bab none",
             F, F, cfg);
    ck_assert_int_eq(lg_test_cli(args, log), 0);
    ck_assert_msg(strstr(lg_test_slurp(log), "\"solver\": \"glpk\"") && strstr(lg_test_slurp(log), "\"bab\": \"none\""),
                  "%s", lg_test_slurp(log));
    /* bad entries: exit 2, file:line and the key */
    static const struct {
        const char *text, *want;
    } bad[] = {{"timeout = 5\nbab = sideways\n", ":2, key bab)"},
               {"[verify]\n\ntimeout: abc\n", ":3, key timeout)"},
               {"frobnicate = 1\n", ":1, key frobnicate)"},
               {"timeout\n", ":1: expected key = value or key: value, got 'timeout'"},
               {"[verify\n", ":1: expected a section [command]"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        f = fopen(cfg, "w");
        ck_assert_ptr_nonnull(f);
        fputs(bad[i].text, f);
        fclose(f);
        snprintf(cmd, sizeof cmd, "'%s/lgelu' verify %s/mnist-net_256x2.onnx --vnnlib %s/prop_1_0.05.vnnlib --config %s > %s 2>&1",
                 LG_BINARY_DIR, F, F, cfg, log);
        ck_assert_int_eq(lg_test_sh(cmd), 2);
        ck_assert_msg(strstr(lg_test_slurp(log), cfg) && strstr(lg_test_slurp(log), bad[i].want), "case %zu: %s", i,
                      lg_test_slurp(log));
    }
    snprintf(args, sizeof args, "verify x --config /nonexistent/run.cfg");
    ck_assert_int_eq(lg_test_cli(args, NULL), 2);
    /* bench reads it too: its settings column shows the file's timeout and its section's solver */
    const char *dir = lg_cli_bench_dir(), *out = lg_test_tmpfile("_res");
    f = fopen(cfg, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "timeout = 50\n[bench]\nj = 1\nsolver = glpk\n[verify]\nsolver = z3\n");
    fclose(f);
    snprintf(cmd, sizeof cmd, "sed -i '2,$d' %s/instances.csv", dir); /* one instance */
    ck_assert_int_eq(lg_test_sh(cmd), 0);
    snprintf(args, sizeof args, "bench %s --out %s --config %s", dir, out, cfg);
    ck_assert_int_eq(lg_test_cli(args, log), 0);
    snprintf(cmd, sizeof cmd, "%s/results.csv", out);
    ck_assert_msg(strstr(lg_test_slurp(cmd), ",timeout=50 solver=glpk,"), "%s", lg_test_slurp(cmd));
}
END_TEST

/* Rows are keyed by their settings and build: a re-run with other ones
 * refuses naming the change and leaves results.csv as it was;
 * --redo-changed runs only the changed rows, --retry only the rows with
 * those results; the summary counts every instance by its latest row. */
START_TEST(test_cli_bench_resume_keys)
{
    const char *dir = lg_cli_bench_dir();
    const char *out = lg_test_tmpfile("_res"), *log = lg_test_tmpfile(".log");
    char args[2048], csv[512], cmd[2048];
    snprintf(csv, sizeof csv, "%s/results.csv", out);
    snprintf(args, sizeof args, "bench %s --out %s -j 1", dir, out);
    ck_assert_int_eq(lg_test_cli(args, log), 0);
    ck_assert_int_eq(lg_cli_lines(csv), 4);
    char *before = strdup(lg_test_slurp(csv));
    ck_assert_ptr_nonnull(before);
    ck_assert_msg(strstr(before, ",settings,build,reason\n") && strstr(before, ",timeout=60,lgelu "), "%s", before);
    /* other settings: refused, naming what changed, nothing run */
    static const struct {
        const char *opts, *change;
    } changed[] = {{"--timeout 30", "timeout: 60 -> 30"},
                   {"--timeout-scale 2", "timeout: 60 -> 120"},
                   {"--solver glpk", "solver: default -> glpk"},
                   {"--bab input --seed 5", "bab: default -> input; seed: default -> 5"}};
    for (size_t i = 0; i < sizeof changed / sizeof changed[0]; i++) {
        snprintf(cmd, sizeof cmd, "'%s/lgelu' bench %s --out %s -j 1 %s > %s 2>&1", LG_BINARY_DIR, dir, out,
                 changed[i].opts, log);
        ck_assert_msg(lg_test_sh(cmd) == 2, "%s ran", changed[i].opts);
        ck_assert_msg(strstr(lg_test_slurp(log), changed[i].change) && strstr(lg_test_slurp(log), "net__prop_1"),
                      "%s: %s", changed[i].opts, lg_test_slurp(log));
        ck_assert_str_eq(lg_test_slurp(csv), before);
    }
    /* -j does not change a verdict: kept */
    snprintf(args, sizeof args, "bench %s --out %s -j 2", dir, out);
    ck_assert_int_eq(lg_test_cli(args, log), 0);
    ck_assert_str_eq(lg_test_slurp(csv), before);
    /* another build made one row: refused naming it; --redo-changed runs that one only */
    snprintf(cmd, sizeof cmd, "sed -i '/^net__prop_3,/s/,lgelu [^,]*,\\([^,]*\\)$/,lgelu 0.0.1 0123abc,\\1/' %s", csv);
    ck_assert_int_eq(lg_test_sh(cmd), 0);
    snprintf(cmd, sizeof cmd, "'%s/lgelu' bench %s --out %s -j 1 > %s 2>&1", LG_BINARY_DIR, dir, out, log);
    ck_assert_int_eq(lg_test_sh(cmd), 2);
    ck_assert_msg(strstr(lg_test_slurp(log), "1 instance run with other settings (net__prop_3)") &&
                      strstr(lg_test_slurp(log), "build: lgelu 0.0.1 0123abc -> lgelu "),
                  "%s", lg_test_slurp(log));
    snprintf(args, sizeof args, "bench %s --out %s -j 1 --redo-changed", dir, out);
    ck_assert_int_eq(lg_test_cli(args, log), 0);
    ck_assert_int_eq(lg_cli_lines(csv), 5);
    ck_assert_msg(strstr(lg_test_slurp(log), "3 instances in") && strstr(lg_test_slurp(log), "1 unsat, 2 sat") &&
                      strstr(lg_test_slurp(log), "1 run now"),
                  "%s", lg_test_slurp(log));
    /* a kept timeout counts in the summary; --retry timeout runs it alone */
    snprintf(cmd, sizeof cmd, "sed -i '$s/,robust,unsat,/,unknown,timeout,/' %s", csv);
    ck_assert_int_eq(lg_test_sh(cmd), 0);
    snprintf(args, sizeof args, "bench %s --out %s -j 1", dir, out);
    ck_assert_int_eq(lg_test_cli(args, log), 0);
    ck_assert_msg(strstr(lg_test_slurp(log), "0 unsat, 2 sat, 1 undecided (1 timeouts), 0 errors; 0 run now"), "%s",
                  lg_test_slurp(log));
    snprintf(args, sizeof args, "bench %s --out %s -j 1 --retry unknown,timeout", dir, out);
    ck_assert_int_eq(lg_test_cli(args, log), 0);
    ck_assert_int_eq(lg_cli_lines(csv), 6);
    ck_assert_msg(strstr(lg_test_slurp(log), "1 unsat, 2 sat, 0 undecided (0 timeouts), 0 errors; 1 run now"), "%s",
                  lg_test_slurp(log));
    snprintf(args, sizeof args, "bench %s --out %s -j 1 --retry later", dir, out);
    ck_assert_int_eq(lg_test_cli(args, NULL), 2);
    /* a results.csv without the settings columns (an older lgelu's): refused, --force starts afresh */
    snprintf(cmd, sizeof cmd, "sed -i '1s/,settings,build,reason$//' %s", csv);
    ck_assert_int_eq(lg_test_sh(cmd), 0);
    char *old = strdup(lg_test_slurp(csv));
    ck_assert_ptr_nonnull(old);
    snprintf(args, sizeof args, "bench %s --out %s -j 1", dir, out);
    ck_assert_int_eq(lg_test_cli(args, NULL), 2);
    ck_assert_str_eq(lg_test_slurp(csv), old);
    snprintf(args, sizeof args, "bench %s --out %s -j 1 --force", dir, out);
    ck_assert_int_eq(lg_test_cli(args, NULL), 0);
    ck_assert_int_eq(lg_cli_lines(csv), 4);
    free(old);
    free(before);
}
END_TEST

START_TEST(test_cli_export_dtype)
{
    int dims[3] = {3, 4, 2};
    lg_net net, back;
    ck_assert_int_eq(lg_net_init(&net, 2, dims, LG_ACT_LGELU), LG_OK);
    lg_rng r;
    lg_rng_init(&r, 3, 0);
    lg_test_randomize(&net, &r, 1.0); /* doubles that are not floats */
    const char *src = lg_test_tmpfile(".lgnet"), *o32 = lg_test_tmpfile(".onnx"), *o64 = lg_test_tmpfile(".onnx");
    ck_assert_int_eq(lg_netfile_write(&net, src), LG_OK);
    char args[1024];
    snprintf(args, sizeof args, "export %s -o %s --dtype float32", src, o32);
    ck_assert_int_eq(lg_test_cli(args, NULL), 0);
    snprintf(args, sizeof args, "export %s --output %s --dtype float64", src, o64);
    ck_assert_int_eq(lg_test_cli(args, NULL), 0);
    ck_assert_int_eq(lg_onnx_read(&back, o64), LG_OK);
    for (size_t i = 0; i < net.n_params; i++) ck_assert(back.params[i] == net.params[i]);
    lg_net_free(&back);
    ck_assert_int_eq(lg_onnx_read(&back, o32), LG_OK);
    size_t changed = 0;
    for (size_t i = 0; i < net.n_params; i++) {
        ck_assert_msg(back.params[i] == (double)(float)net.params[i], "param %zu: %.17g vs float %.9g", i,
                      back.params[i], (double)(float)net.params[i]);
        changed += back.params[i] != net.params[i];
    }
    ck_assert(changed > 0);
    for (int k = 0; k < net.n_layers; k++)
        if (net.layers[k].act == LG_ACT_LGELU)
            /* λ as the float32 file computes it: its float constants, √2 divisor included */
            ck_assert_msg(fabs(back.layers[k].lambda - (double)(float)net.layers[k].lambda) <=
                              1e-6 * net.layers[k].lambda,
                          "layer %d: λ %.17g read back as %.17g", k, net.layers[k].lambda, back.layers[k].lambda);
    lg_net_free(&back);
    lg_net_free(&net);
}
END_TEST

/* ---- docs/USAGE.md and --help in step ---- */

#define LG_CLI_MAX_OPTS 128

typedef struct lg_optset {
    char name[LG_CLI_MAX_OPTS][40];
    int n;
} lg_optset;

static void lg_optset_add(lg_optset *o, const char *s, size_t len)
{
    if (len >= sizeof o->name[0]) return;
    for (int i = 0; i < o->n; i++)
        if (strlen(o->name[i]) == len && strncmp(o->name[i], s, len) == 0) return;
    ck_assert_int_lt(o->n, LG_CLI_MAX_OPTS);
    memcpy(o->name[o->n], s, len);
    o->name[o->n++][len] = '\0';
}

static int lg_optset_has(const lg_optset *o, const char *s)
{
    for (int i = 0; i < o->n; i++)
        if (strcmp(o->name[i], s) == 0) return 1;
    return 0;
}

/* Every option token (-x or --long-name) of text: a dash at a word start
 * (after a blank, '[', '(', '|' or '/') followed by a letter. */
static void lg_optset_scan(lg_optset *o, const char *t, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (t[i] != '-' || (i > 0 && !strchr(" \t[(|/", t[i - 1]))) continue;
        size_t j = i + 1;
        if (j < n && t[j] == '-') j++;
        if (j >= n || !isalpha((unsigned char)t[j])) continue;
        size_t k = j;
        while (k < n && (isalnum((unsigned char)t[k]) || t[k] == '-')) k++;
        if (j - i == 1 && k - j > 1) continue; /* "-abc" is not an option here */
        lg_optset_add(o, t + i, k - i);
        i = k - 1;
    }
}

/* Options of `lgelu cmd --help`: its usage block and the first tokens of
 * every option line ("  -o, --output FILE  ..."). */
static void lg_help_options(const char *cmd, lg_optset *o)
{
    const char *tmp = lg_test_tmpfile(".help");
    char args[256];
    snprintf(args, sizeof args, "%s --help", cmd);
    ck_assert_int_eq(lg_test_cli(args, tmp), 0);
    FILE *f = fopen(tmp, "r");
    ck_assert_ptr_nonnull(f);
    char line[1024];
    int in_usage = 0;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "usage:", 6) == 0) in_usage = 1;
        else if (line[0] == '\n') in_usage = 0;
        if (in_usage) {
            lg_optset_scan(o, line, strlen(line));
            continue;
        }
        const char *p = line;
        while (*p == ' ') p++;
        if (p - line < 2 || p[0] != '-' || !isalpha((unsigned char)p[p[1] == '-' ? 2 : 1])) continue;
        size_t k = 0; /* the leading "-o, --output" part */
        while (p[k] && !(p[k] == ' ' && (p[k + 1] == ' ' || (p[k + 1] != '-' && p[k - 1] != ',')))) k++;
        lg_optset_scan(o, p, k);
    }
    fclose(f);
    remove(tmp);
}

/* Options of the command lines of docs/USAGE.md for cmd: every indented
 * line "lgelu CMD ..." and its deeper-indented continuation lines. */
static void lg_doc_options(const char *cmd, lg_optset *o, int *n_lines)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/docs/USAGE.md", LG_SOURCE_DIR);
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    char line[1024];
    int in_cmd = 0;
    *n_lines = 0;
    while (fgets(line, sizeof line, f)) {
        const char *p = line;
        while (*p == ' ') p++;
        size_t indent = (size_t)(p - line), cl = strlen(cmd);
        if (indent >= 4 && strncmp(p, "lgelu ", 6) == 0) {
            in_cmd = strncmp(p + 6, cmd, cl) == 0 && (p[6 + cl] == ' ' || p[6 + cl] == '\n');
            if (in_cmd) {
                (*n_lines)++;
                const char *q = p + 6 + cl;
                const char *hash = strstr(q, "  #"); /* a comment after the command */
                lg_optset_scan(o, q, hash ? (size_t)(hash - q) : strlen(q));
            }
            continue;
        }
        if (in_cmd && indent > 4 && *p != '\0' && *p != '\n') {
            const char *hash = strstr(p, "  #");
            lg_optset_scan(o, p, hash ? (size_t)(hash - p) : strlen(p));
            continue;
        }
        in_cmd = 0;
    }
    fclose(f);
}

/* `lgelu info` prints a parameter with every digit it has: PyTorch's GELU
 * export imports with λ just above 1 (its float32 √2), and "1" would hide
 * that the verified net is not exactly GELU. */
START_TEST(test_cli_info_every_digit)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/torch_smooth/gelu.onnx", LG_FIXTURES);
    lg_net net;
    ck_assert_int_eq(lg_net_load(&net, path), LG_OK);
    ck_assert(net.layers[0].act == LG_ACT_LGELU && net.layers[0].lambda != 1.0);
    char want[LG_NUM_BUFSIZE], args[1200];
    lg_num_shortest(want, net.layers[0].lambda);
    lg_net_free(&net);
    const char *out = lg_test_tmpfile(".txt");
    snprintf(args, sizeof args, "info '%s'", path);
    ck_assert_int_eq(lg_test_cli(args, out), 0);
    const char *text = lg_test_slurp(out);
    ck_assert_msg(strstr(text, want) != NULL, "info does not show lambda %s:\n%s", want, text);
    /* docs/USAGE.md says how such an export imports, with this λ */
    char doc[1024], says[160];
    snprintf(doc, sizeof doc, "%s/docs/USAGE.md", LG_SOURCE_DIR);
    FILE *f = fopen(doc, "r");
    ck_assert_ptr_nonnull(f);
    static char usage[1 << 17];
    size_t n = fread(usage, 1, sizeof usage - 1, f);
    fclose(f);
    usage[n] = '\0';
    for (char *p = usage; *p; p++)
        if (*p == '\n') *p = ' ';
    snprintf(says, sizeof says, "imports as an `lgelu` layer with λ = √2/fl32(√2) = %s", want);
    ck_assert_msg(strstr(usage, says) != NULL, "docs/USAGE.md does not say '%s'", says);
}
END_TEST

/* The keys of every JSON line of a file, added to set (no duplicates). */
static void lg_cli_json_keys(const char *path, lg_optset *set)
{
    const char *p = lg_test_slurp(path);
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        json_error_t je;
        json_t *o = json_loadb(p, len, 0, &je);
        ck_assert_msg(json_is_object(o), "%s: not a JSON object: %.*s", path, (int)len, p);
        const char *k;
        json_t *v;
        json_object_foreach(o, k, v)
        {
            (void)v;
            lg_optset_add(set, k, strlen(k));
        }
        json_decref(o);
        p += len + (nl != NULL);
    }
}

/* docs/USAGE.md lists exactly the keys `verify --json` prints: a
 * robustness query (label, misclassified) and a --ref query (ref, delta). */
START_TEST(test_cli_docs_verify_json_keys)
{
    lg_optset emitted = {0}, doc = {0};
    char args[2048], netp[256];
    snprintf(netp, sizeof netp, "%s", lg_cli_tiny_net());
    const char *data = lg_cli_tiny_data(), *out = lg_test_tmpfile(".json");
    snprintf(args, sizeof args, "verify %s --data %s --index 0-1 --eps 0.02 --json", netp, data);
    ck_assert_int_eq(lg_test_cli(args, out), 0);
    lg_cli_json_keys(out, &emitted);
    snprintf(args, sizeof args, "verify %s --vnnlib %s --json", netp, lg_cli_tiny_prop(0, 1, 0, 1));
    ck_assert_int_eq(lg_test_cli(args, out), 0);
    lg_cli_json_keys(out, &emitted);
    /* a smooth net and its ReLU substitution */
    int dims[3] = {2, 3, 2};
    lg_net g, rl;
    ck_assert_int_eq(lg_net_init(&g, 2, dims, LG_ACT_LGELU), LG_OK);
    lg_rng r;
    lg_rng_init(&r, 11, 0);
    lg_test_randomize(&g, &r, 1.0);
    ck_assert_int_eq(lg_anneal_to_relu(&rl, &g), LG_OK);
    const char *pg = lg_test_tmpfile(".lgnet"), *pr = lg_test_tmpfile(".lgnet");
    ck_assert_int_eq(lg_netfile_write(&g, pg), LG_OK);
    ck_assert_int_eq(lg_netfile_write(&rl, pr), LG_OK);
    lg_net_free(&g);
    lg_net_free(&rl);
    snprintf(args, sizeof args, "verify %s --ref %s --data %s --index 0 --eps 0.02 --json", pr, pg, data);
    ck_assert_int_eq(lg_test_cli(args, out), 0);
    lg_cli_json_keys(out, &emitted);
    /* the paragraph of docs/USAGE.md that lists them */
    char path[1024];
    snprintf(path, sizeof path, "%s/docs/USAGE.md", LG_SOURCE_DIR);
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    static char text[1 << 17];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    static const char lead[] = "`--json` prints one JSON object per instance with the keys";
    const char *start = strstr(text, lead);
    ck_assert_msg(start != NULL, "docs/USAGE.md: no paragraph listing the keys of verify --json");
    start += strlen(lead);
    const char *end = strstr(start, "\n\n");
    for (const char *p = strchr(start, '`'); p && (!end || p < end); p = strchr(p + 1, '`')) {
        const char *q = strchr(p + 1, '`');
        if (!q || (end && q > end)) break;
        char key[64];
        size_t kl = (size_t)(q - p - 1);
        if (kl > 0 && kl < sizeof key && p[1] != '-') {
            memcpy(key, p + 1, kl);
            key[kl] = '\0';
            if (strspn(key, "abcdefghijklmnopqrstuvwxyz_") == kl) lg_optset_add(&doc, key, kl);
        }
        p = q;
    }
    for (int i = 0; i < emitted.n; i++)
        ck_assert_msg(lg_optset_has(&doc, emitted.name[i]), "verify --json prints '%s'; docs/USAGE.md does not list it",
                      emitted.name[i]);
    for (int i = 0; i < doc.n; i++)
        ck_assert_msg(lg_optset_has(&emitted, doc.name[i]), "docs/USAGE.md lists '%s'; verify --json never printed it",
                      doc.name[i]);
}
END_TEST

START_TEST(test_cli_docs_match_help)
{
    static const char *const cmds[] = {"info",   "eval",   "train", "anneal", "relu",  "check",        "bound",
                                       "export", "verify", "encode", "cex",   "bench", "study",        "study-report",
                                       "study-merge"};
    for (size_t c = 0; c < sizeof cmds / sizeof cmds[0]; c++) {
        lg_optset help = {0}, doc = {0};
        int n_lines;
        lg_help_options(cmds[c], &help);
        lg_doc_options(cmds[c], &doc, &n_lines);
        ck_assert_msg(n_lines > 0, "docs/USAGE.md has no command line for 'lgelu %s'", cmds[c]);
        for (int i = 0; i < doc.n; i++)
            ck_assert_msg(lg_optset_has(&help, doc.name[i]), "docs/USAGE.md: 'lgelu %s %s' is not in its --help",
                          cmds[c], doc.name[i]);
        for (int i = 0; i < help.n; i++) {
            if (strcmp(help.name[i], "-h") == 0 || strcmp(help.name[i], "--help") == 0) continue;
            ck_assert_msg(lg_optset_has(&doc, help.name[i]), "'lgelu %s --help' has %s, docs/USAGE.md does not",
                          cmds[c], help.name[i]);
        }
    }
}
END_TEST

/* Every test case of every suite gets its time limit from lg_tcase_timeout
 * (tests/testutil.h), so no case runs under Check's 4-second default and one
 * factor (LG_TEST_TIME_FACTOR) scales them all on a slow or busy machine. */
START_TEST(test_cli_every_tcase_has_a_limit)
{
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/tests", LG_SOURCE_DIR);
    DIR *d = opendir(dir);
    ck_assert_msg(d != NULL, "cannot list %s", dir);
    int n_files = 0, n_cases = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (strncmp(e->d_name, "check_", 6) != 0 || n < 3 || strcmp(e->d_name + n - 2, ".c") != 0) continue;
        char path[2048];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        FILE *f = fopen(path, "rb");
        ck_assert_msg(f != NULL, "cannot read %s", path);
        static char text[1 << 20];
        size_t len = fread(text, 1, sizeof text - 1, f);
        fclose(f);
        text[len] = '\0';
        n_files++;
        ck_assert_msg(!strstr(text, "tcase_set" "_timeout(") /* split: this file is read too */, "%s sets a time limit directly; use lg_tcase_timeout",
                      e->d_name);
        for (const char *p = text; (p = strstr(p, "tcase_" "create(")); p++) {
            /* the TCase variable is named just before " = " */
            const char *q = p;
            while (q > text && (q[-1] == ' ' || q[-1] == '=')) q--;
            const char *end = q;
            while (q > text && (isalnum((unsigned char)q[-1]) || q[-1] == '_')) q--;
            ck_assert_msg(end > q, "%s: a tcase_create whose TCase has no name", e->d_name);
            char call[128];
            snprintf(call, sizeof call, "lg_tcase_timeout(%.*s,", (int)(end - q), q);
            ck_assert_msg(strstr(p, call) != NULL, "%s: test case '%.*s' has no lg_tcase_timeout (Check's 4 s default)",
                          e->d_name, (int)(end - q), q);
            n_cases++;
        }
    }
    closedir(d);
    ck_assert_msg(n_files > 30 && n_cases > 60, "found only %d suites and %d test cases in %s", n_files, n_cases, dir);
    /* the one factor: from the environment, else the build's default (this test runs in its own process) */
    unsetenv("LG_TEST_TIME_FACTOR");
    double dflt = lg_test_time_factor();
    ck_assert(dflt == 1.0 || dflt == 4.0);
    setenv("LG_TEST_TIME_FACTOR", "2.5", 1);
    ck_assert_double_eq(lg_test_time_factor(), 2.5);
    setenv("LG_TEST_TIME_FACTOR", "0.1", 1); /* below 1: refused, the default stays */
    ck_assert_double_eq(lg_test_time_factor(), dflt);
    unsetenv("LG_TEST_TIME_FACTOR");
}
END_TEST

Suite *suite_cli(void)
{
    Suite *s = suite_create("cli");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_cli_number_shortest);
    tcase_add_test(tc, test_cli_json_one_format);
    tcase_add_test(tc, test_cli_csv_quoting);
    tcase_add_test(tc, test_cli_cex_closes_the_loop);
    tcase_add_test(tc, test_cli_cex_every_outcome);
    tcase_add_test(tc, test_cli_vnncomp_scripts);
    tcase_add_test(tc, test_cli_bench_resumes);
    tcase_add_test(tc, test_cli_bench_names_and_reasons);
    tcase_add_test(tc, test_cli_config_file);
    tcase_add_test(tc, test_cli_export_dtype);
    tcase_add_test(tc, test_cli_docs_match_help);
    tcase_add_test(tc, test_cli_info_every_digit);
    tcase_add_test(tc, test_cli_every_tcase_has_a_limit);
    lg_tcase_timeout(tc, 300);
    suite_add_tcase(s, tc);
    TCase *tl = tcase_create("limits");
    tcase_add_test(tl, test_cli_exit_two_names_the_range);
    tcase_add_test(tl, test_cli_exit_codes_one_rule);
    tcase_add_test(tl, test_cli_summaries_say_what_happened);
    lg_tcase_timeout(tl, 120);
    suite_add_tcase(s, tl);
    TCase *tq = tcase_create("queries");
    tcase_add_test(tq, test_cli_verify_batch);
    tcase_add_test(tq, test_cli_bench_resume_keys);
    tcase_add_test(tq, test_cli_docs_verify_json_keys);
    tcase_add_test(tq, test_cli_vnnlib_written_reads_back);
    lg_tcase_timeout(tq, 300); /* a dozen bench runs: generous for sanitizer builds on a busy machine */
    suite_add_tcase(s, tq);
    return s;
}
