/* check_onnx_import.c — ONNX import options and ops of large or two-valued forms, against
 * tests/onnx_import_make.py's independent float64 evaluation: --drop-final-softmax,
 * AveragePool with a window count that is not a power of two (--round-weights, and its
 * refusal without it), AveragePool of large feature maps as a conv, Max/Min of two network
 * values, linear Resize; the import note and the CLI's verdict and result-file note. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx/load.h"
#include "onnx/onnx.h"
#include "testutil.h"

static char lg_oi_dir[256];
static int lg_oi_rc = -1;

static void lg_oi_make(void)
{
    snprintf(lg_oi_dir, sizeof lg_oi_dir, "%s", lg_test_tmpfile("_onnx_import"));
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s %s/tests/onnx_import_make.py %s >/dev/null 2>&1", LG_PYTHON3, LG_SOURCE_DIR,
             lg_oi_dir);
    lg_oi_rc = lg_test_sh(cmd);
}

static void lg_oi_rm(void)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", lg_oi_dir);
    lg_test_sh(cmd);
    lg_onnx_set_import_opts(NULL);
}

static const char *lg_oi_path(const char *name, const char *ext)
{
    static char p[512];
    snprintf(p, sizeof p, "%s/%s.%s", lg_oi_dir, name, ext);
    return p;
}

/* Load name with the options and compare its forward pass with the reference rows. */
static void lg_oi_match(const char *name, int drop, int round, lg_net *net)
{
    lg_onnx_import_opts o = {drop, round};
    lg_onnx_set_import_opts(&o);
    lg_status st = lg_net_load(net, lg_oi_path(name, "onnx"));
    lg_onnx_set_import_opts(NULL);
    ck_assert_msg(st == LG_OK, "%s: %s", name, lg_errmsg());
    FILE *f = fopen(lg_oi_path(name, "txt"), "r");
    ck_assert_ptr_nonnull(f);
    int no = lg_net_n_out(net), rows = 0;
    double *x = malloc((size_t)net->n_in * sizeof *x), *y = malloc((size_t)no * sizeof *y);
    double *want = malloc((size_t)no * sizeof *want), *scr = malloc(2 * (size_t)lg_net_max_width(net) * sizeof *scr);
    for (;;) {
        int got = 0;
        for (int i = 0; i < net->n_in; i++) got += fscanf(f, "%lf", &x[i]);
        if (got != net->n_in) break;
        for (int j = 0; j < no; j++) ck_assert_int_eq(fscanf(f, "%lf", &want[j]), 1);
        lg_net_forward(net, x, y, scr);
        for (int j = 0; j < no; j++)
            ck_assert_msg(fabs(y[j] - want[j]) <= 1e-9 * (1 + fabs(want[j])), "%s row %d output %d: %.17g vs %.17g",
                          name, rows, j, y[j], want[j]);
        rows++;
    }
    ck_assert_int_ge(rows, 2);
    fclose(f);
    free(x), free(y), free(want), free(scr);
}

START_TEST(test_onnx_drop_final_softmax)
{
    ck_assert_msg(lg_oi_rc == 0, "tests/onnx_import_make.py failed (needs python3-onnx, numpy, torch)");
    lg_net net;
    lg_oi_match("softmax_final", 1, 0, &net); /* the outputs are the logits */
    ck_assert_int_eq(lg_net_n_out(&net), 4);
    ck_assert_ptr_nonnull(strstr(lg_onnx_import_note(), "final Softmax"));
    ck_assert_int_eq(lg_onnx_import_rounded(), 0);
    lg_net_free(&net);
    /* a graph output not made by a Softmax is refused under the option, naming it */
    lg_onnx_import_opts o = {1, 0};
    lg_onnx_set_import_opts(&o);
    lg_status st = lg_net_load(&net, lg_oi_path("no_softmax", "onnx"));
    lg_onnx_set_import_opts(NULL);
    ck_assert_int_eq(st, LG_ERR_UNSUPPORTED);
    ck_assert_msg(strstr(lg_errmsg(), "--drop-final-softmax") && strstr(lg_errmsg(), "Gemm"), "%s", lg_errmsg());
    ck_assert_str_eq(lg_onnx_import_note(), "");
    /* without the option the same file reads as it is, with no note */
    ck_assert_int_eq(lg_net_load(&net, lg_oi_path("no_softmax", "onnx")), LG_OK);
    ck_assert_str_eq(lg_onnx_import_note(), "");
    lg_net_free(&net);
}
END_TEST

START_TEST(test_onnx_avgpool_round_weights)
{
    ck_assert_msg(lg_oi_rc == 0, "tests/onnx_import_make.py failed");
    lg_net net;
    /* refused without the opt-in, naming the weight and the option */
    ck_assert_int_eq(lg_net_load(&net, lg_oi_path("avgpool3", "onnx")), LG_ERR_UNSUPPORTED);
    ck_assert_msg(strstr(lg_errmsg(), "1/9") && strstr(lg_errmsg(), "--round-weights"), "%s", lg_errmsg());
    /* with it: the rounded net, within rounding of the exact average, and a note that says so */
    lg_oi_match("avgpool3", 0, 1, &net);
    ck_assert_int_eq(lg_onnx_import_rounded(), 1);
    ck_assert_msg(strstr(lg_onnx_import_note(), "1/9 rounded"), "%s", lg_onnx_import_note());
    lg_net_free(&net);
    /* a power-of-two window needs no option and leaves no note */
    lg_oi_match("avgpool_big", 0, 0, &net);
    ck_assert_str_eq(lg_onnx_import_note(), "");
    lg_net_free(&net);
}
END_TEST

/* An 8x64x64 image: the pool is a conv (a few hundred weights), not a 2 GiB matrix. */
START_TEST(test_onnx_avgpool_large_as_conv)
{
    ck_assert_msg(lg_oi_rc == 0, "tests/onnx_import_make.py failed");
    static const struct {
        const char *name;
        int round;
    } M[] = {{"avgpool_big", 0}, {"avgpool_big3", 1}};
    for (size_t m = 0; m < sizeof M / sizeof M[0]; m++) {
        lg_net net;
        lg_oi_match(M[m].name, 0, M[m].round, &net);
        int convs = 0;
        for (int k = 0; k < net.n_layers; k++) convs += lg_layer_lin(&net.layers[k], 0)->kind == LG_LAYER_CONV2D;
        ck_assert_msg(convs == 1, "%s: %d conv layers", M[m].name, convs);
        ck_assert_msg(net.n_params < ((size_t)1 << 20), "%s: %zu parameters", M[m].name, net.n_params);
        lg_net_free(&net);
    }
}
END_TEST

START_TEST(test_onnx_max_min_two_values)
{
    ck_assert_msg(lg_oi_rc == 0, "tests/onnx_import_make.py failed");
    static const char *M[] = {"maxmin2", "maxmin2_img", "maxmin_reuse"};
    for (size_t m = 0; m < 3; m++) {
        lg_net net;
        lg_oi_match(M[m], 0, 0, &net);
        ck_assert_str_eq(lg_onnx_import_note(), "");
        int relus = 0;
        for (int k = 0; k < net.n_layers; k++) relus += net.layers[k].act == LG_ACT_RELU;
        ck_assert_int_ge(relus, 2); /* one ReLU layer per Max/Min (and maxmin2's own Relu) */
        lg_net_free(&net);
    }
}
END_TEST

START_TEST(test_onnx_resize_linear)
{
    ck_assert_msg(lg_oi_rc == 0, "tests/onnx_import_make.py failed");
    lg_net net;
    lg_oi_match("resize_linear", 0, 0, &net); /* weights 1/16 .. 9/16: exact */
    ck_assert_str_eq(lg_onnx_import_note(), "");
    lg_net_free(&net);
    lg_oi_match("resize_linear_pt", 0, 0, &net);
    lg_net_free(&net);
    /* a large image: an index map and a conv of a few hundred weights, not an 8 GiB matrix */
    static const char *big[] = {"resize_big", "resize_big_asym"};
    for (int m = 0; m < 2; m++) {
        lg_oi_match(big[m], 0, 0, &net);
        ck_assert_str_eq(lg_onnx_import_note(), "");
        ck_assert_msg(net.n_params < ((size_t)1 << 20), "%s: %zu parameters", big[m], net.n_params);
        lg_net_free(&net);
    }
    /* align_corners 4 -> 8: weights k/7 are not doubles */
    ck_assert_int_eq(lg_net_load(&net, lg_oi_path("resize_align", "onnx")), LG_ERR_UNSUPPORTED);
    ck_assert_msg(strstr(lg_errmsg(), "--round-weights"), "%s", lg_errmsg());
    lg_oi_match("resize_align", 0, 1, &net);
    ck_assert_int_eq(lg_onnx_import_rounded(), 1);
    lg_net_free(&net);
}
END_TEST

/* The command line: the options of every command, the verdict's and result file's note. */
START_TEST(test_onnx_import_opts_cli)
{
    ck_assert_msg(lg_oi_rc == 0, "tests/onnx_import_make.py failed");
    char args[2048];
    snprintf(args, sizeof args, "info '%s'", lg_oi_path("avgpool3", "onnx"));
    ck_assert_int_eq(lg_test_cli(args, NULL), 2);
    snprintf(args, sizeof args, "info --round-weights '%s'", lg_oi_path("avgpool3", "onnx"));
    ck_assert_int_eq(lg_test_cli(args, NULL), 0);
    snprintf(args, sizeof args, "info '%s' --drop-final-softmax", lg_oi_path("no_softmax", "onnx"));
    ck_assert_int_eq(lg_test_cli(args, NULL), 2);
    snprintf(args, sizeof args, "info --drop-final-softmax '%s'", lg_oi_path("softmax_final", "onnx"));
    ck_assert_int_eq(lg_test_cli(args, NULL), 0);
    /* verify says the verdict is about the rounded net, in its summary, JSON and result file */
    const char *prop = lg_test_tmpfile(".vnnlib"), *res = lg_test_tmpfile(".txt"), *outp = lg_test_tmpfile(".out");
    char text[8192] = "";
    size_t len = 0;
    for (int i = 0; i < 72; i++) len += (size_t)snprintf(text + len, sizeof text - len, "(declare-const X_%d Real)\n", i);
    len += (size_t)snprintf(text + len, sizeof text - len, "(declare-const Y_0 Real)\n(declare-const Y_1 Real)\n");
    for (int i = 0; i < 72; i++)
        len += (size_t)snprintf(text + len, sizeof text - len, "(assert (>= X_%d 0.25))\n(assert (<= X_%d 0.25))\n", i,
                                i);
    snprintf(text + len, sizeof text - len, "(assert (<= Y_0 -1000))\n");
    lg_test_write(prop, text);
    snprintf(args, sizeof args, "verify '%s' --round-weights --vnnlib '%s' -o '%s' --timeout 30",
             lg_oi_path("avgpool3", "onnx"), prop, res);
    ck_assert_int_eq(lg_test_cli(args, outp), 0);
    const char *o = lg_test_slurp(outp);
    ck_assert_msg(strstr(o, "robust") && strstr(o, "network read:") && strstr(o, "not the file's exact function"),
                  "%s", o);
    const char *r = lg_test_slurp(res);
    ck_assert_msg(strncmp(r, "unsat\n", 6) == 0 && strstr(r, "\n; lgelu: network read: ") && strstr(r, "1/9"), "%s",
                  r);
    snprintf(args, sizeof args, "verify '%s' --round-weights --vnnlib '%s' --json --timeout 30",
             lg_oi_path("avgpool3", "onnx"), prop);
    ck_assert_int_eq(lg_test_cli(args, outp), 0);
    o = lg_test_slurp(outp);
    ck_assert_msg(strstr(o, "\"network_rounded\": true") && strstr(o, "\"network_read\""), "%s", o);
    /* the help of verify names both options */
    ck_assert_int_eq(lg_test_cli("verify --help", outp), 0);
    o = lg_test_slurp(outp);
    ck_assert_msg(strstr(o, "--drop-final-softmax") && strstr(o, "--round-weights"), "verify --help lacks them");
    remove(prop), remove(res), remove(outp);
}
END_TEST

Suite *suite_onnx_import(void)
{
    Suite *s = suite_create("onnx_import");
    TCase *c = tcase_create("core");
    lg_tcase_timeout(c, 120);
    tcase_add_unchecked_fixture(c, lg_oi_make, lg_oi_rm);
    tcase_add_test(c, test_onnx_drop_final_softmax);
    tcase_add_test(c, test_onnx_avgpool_round_weights);
    tcase_add_test(c, test_onnx_avgpool_large_as_conv);
    tcase_add_test(c, test_onnx_max_min_two_values);
    tcase_add_test(c, test_onnx_resize_linear);
    tcase_add_test(c, test_onnx_import_opts_cli);
    suite_add_tcase(s, c);
    return s;
}
