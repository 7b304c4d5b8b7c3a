/* check_relu.c — ReLU substitution (anneal/relu.h) and `lgelu relu`:
 * only activations change, parameters stay bit-identical, unknown
 * activations are refused, the CLI writes a loadable piecewise-linear net. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "anneal/relu.h"
#include "core/netfile.h"
#include "core/rng.h"
#include "testutil.h"
#include "onnx/load.h"

/* A random 4-layer net; layer 1 is forced to relu to check kept layers. */
static void lg_make_mixed(lg_net *net, lg_act hidden, uint64_t seed)
{
    const int dims[] = {7, 6, 5, 4, 3};
    lg_rng r;
    lg_rng_init(&r, seed, 1);
    ck_assert_int_eq(lg_net_init(net, 4, dims, hidden), LG_OK);
    lg_test_randomize(net, &r, 0.7);
    net->layers[1].act = LG_ACT_RELU;
    net->layers[1].lambda = 1.0;
    net->layers[1].s = 0.0;
    net->in_sub = malloc(7 * sizeof(double));
    net->in_div = malloc(7 * sizeof(double));
    for (int i = 0; i < 7; i++) net->in_sub[i] = 0.1 * i, net->in_div[i] = 0.5 + 0.25 * i;
}

START_TEST(test_relu_only_activations_change)
{
    const lg_act kinds[] = {LG_ACT_LGELU, LG_ACT_GELU, LG_ACT_RELU};
    for (size_t t = 0; t < 3; t++) {
        lg_net src, dst;
        lg_make_mixed(&src, kinds[t], 100 + t);
        ck_assert_int_eq(lg_anneal_to_relu(&dst, &src), LG_OK);
        ck_assert_int_eq(dst.n_in, src.n_in);
        ck_assert_int_eq(dst.n_layers, src.n_layers);
        ck_assert_uint_eq(dst.n_params, src.n_params);
        ck_assert_mem_eq(dst.params, src.params, src.n_params * sizeof(double));
        ck_assert_mem_eq(dst.in_sub, src.in_sub, 7 * sizeof(double));
        ck_assert_mem_eq(dst.in_div, src.in_div, 7 * sizeof(double));
        ck_assert_double_eq(dst.t, src.t);
        for (int k = 0; k < src.n_layers; k++) {
            const lg_layer *A = &src.layers[k], *B = &dst.layers[k];
            ck_assert_int_eq(B->lin.n_in, A->lin.n_in);
            ck_assert_int_eq(B->n_out, A->n_out);
            ck_assert_ptr_eq(B->lin.W, dst.params + (A->lin.W - src.params));
            lg_act want = (A->act == LG_ACT_GELU || A->act == LG_ACT_LGELU) ? LG_ACT_RELU : A->act;
            ck_assert_msg(B->act == want, "kind %s layer %d: got %s", lg_act_name(kinds[t]), k, lg_act_name(B->act));
        }
        ck_assert_int_eq(dst.layers[3].act, LG_ACT_IDENTITY);
        ck_assert_int_eq(lg_anneal_count_smooth(&dst), 0);
        ck_assert_int_eq(lg_anneal_count_smooth(&src), kinds[t] == LG_ACT_RELU ? 0 : 2);
        /* the substituted net computes the ReLU network: compare with a net
         * built directly with relu and the same parameters */
        lg_net direct;
        const int dims[] = {7, 6, 5, 4, 3};
        ck_assert_int_eq(lg_net_init(&direct, 4, dims, LG_ACT_RELU), LG_OK);
        memcpy(direct.params, src.params, src.n_params * sizeof(double));
        direct.in_sub = malloc(7 * sizeof(double));
        direct.in_div = malloc(7 * sizeof(double));
        memcpy(direct.in_sub, src.in_sub, 7 * sizeof(double));
        memcpy(direct.in_div, src.in_div, 7 * sizeof(double));
        lg_rng r;
        lg_rng_init(&r, 7, 7);
        double x[7], y1[3], y2[3], scratch[14];
        for (int rep = 0; rep < 20; rep++) {
            for (int i = 0; i < 7; i++) x[i] = lg_rng_uniform(&r);
            lg_net_forward(&dst, x, y1, scratch);
            lg_net_forward(&direct, x, y2, scratch);
            ck_assert_mem_eq(y1, y2, sizeof y1);
        }
        lg_net_free(&direct);
        lg_net_free(&dst);
        lg_net_free(&src);
    }
}
END_TEST

START_TEST(test_relu_file_roundtrip)
{
    lg_net src, dst, back;
    lg_make_mixed(&src, LG_ACT_LGELU, 5);
    ck_assert_int_eq(lg_anneal_to_relu(&dst, &src), LG_OK);
    const char *p = lg_test_tmpfile(".lgnet");
    ck_assert_int_eq(lg_netfile_write(&dst, p), LG_OK);
    ck_assert_int_eq(lg_net_load(&back, p), LG_OK);
    ck_assert_mem_eq(back.params, src.params, src.n_params * sizeof(double));
    for (int k = 0; k < 4; k++) ck_assert_int_eq(back.layers[k].act, dst.layers[k].act);
    remove(p);
    lg_net_free(&back);
    lg_net_free(&dst);
    lg_net_free(&src);
}
END_TEST


START_TEST(test_relu_cli)
{
    lg_net src, got;
    lg_make_mixed(&src, LG_ACT_GELU, 9);
    char in[256], out[256], args[600];
    snprintf(in, sizeof in, "%s", lg_test_tmpfile(".lgnet"));
    snprintf(out, sizeof out, "%s", lg_test_tmpfile(".lgnet"));
    ck_assert_int_eq(lg_netfile_write(&src, in), LG_OK);
    snprintf(args, sizeof args, "relu '%s' -o '%s'", in, out);
    ck_assert_int_eq(lg_test_cli(args, NULL), 0);
    ck_assert_int_eq(lg_net_load(&got, out), LG_OK);
    ck_assert_mem_eq(got.params, src.params, src.n_params * sizeof(double));
    ck_assert_int_eq(got.layers[0].act, LG_ACT_RELU);
    ck_assert_int_eq(got.layers[2].act, LG_ACT_RELU);
    ck_assert_int_eq(lg_test_cli("relu --help", NULL), 0);
    snprintf(args, sizeof args, "relu '%s'", in); /* no -o */
    ck_assert_int_eq(lg_test_cli(args, NULL), 2);
    snprintf(args, sizeof args, "relu '%s' -o '%s' --bogus", in, out);
    ck_assert_int_eq(lg_test_cli(args, NULL), 2);
    snprintf(args, sizeof args, "relu '%s.missing' -o '%s'", in, out);
    ck_assert_int_eq(lg_test_cli(args, NULL), 1);
    remove(in);
    remove(out);
    lg_net_free(&got);
    lg_net_free(&src);
}
END_TEST

START_TEST(test_relu_info_shows_lambda)
{
    /* `lgelu info` prints λ per lgelu layer, and relu after substitution */
    lg_net src, dst;
    lg_make_mixed(&src, LG_ACT_LGELU, 21);
    src.layers[0].lambda = 37.25;
    src.layers[2].lambda = 159.5;
    ck_assert_int_eq(lg_anneal_to_relu(&dst, &src), LG_OK);
    char a[256], b[256], cmd[1024], out[8192];
    snprintf(a, sizeof a, "%s", lg_test_tmpfile(".lgnet"));
    snprintf(b, sizeof b, "%s", lg_test_tmpfile(".lgnet"));
    ck_assert_int_eq(lg_netfile_write(&src, a), LG_OK);
    ck_assert_int_eq(lg_netfile_write(&dst, b), LG_OK);
    for (int which = 0; which < 2; which++) {
        snprintf(cmd, sizeof cmd, "'%s/lgelu' info '%s'", LG_BINARY_DIR, which ? b : a);
        FILE *p = popen(cmd, "r");
        ck_assert_ptr_nonnull(p);
        size_t len = fread(out, 1, sizeof out - 1, p);
        out[len] = '\0';
        ck_assert_int_eq(pclose(p), 0);
        if (which == 0) {
            ck_assert_msg(strstr(out, "37.25") && strstr(out, "159.5") && strstr(out, " lgelu "), "info: %s", out);
        } else {
            ck_assert_msg(strstr(out, " relu ") && !strstr(out, " lgelu ") && !strstr(out, "37.25"), "info: %s", out);
        }
    }
    remove(a);
    remove(b);
    lg_net_free(&dst);
    lg_net_free(&src);
}
END_TEST

START_TEST(test_relu_refuses_unknown_activation)
{
    lg_net src, dst;
    lg_make_mixed(&src, LG_ACT_LGELU, 3);
    src.layers[2].act = (lg_act)LG_ACT_COUNT; /* a kind this build does not know */
    ck_assert_int_eq(lg_anneal_act_substitutable(src.layers[2].act), 0);
    ck_assert_int_eq(lg_anneal_to_relu(&dst, &src), LG_ERR_UNSUPPORTED);
    ck_assert_ptr_null(dst.params);
    ck_assert_msg(strstr(lg_errmsg(), "layer 2") != NULL, "message does not name the layer: %s", lg_errmsg());
    src.layers[2].act = LG_ACT_LGELU;
    src.layers[2].lambda = 0.0; /* invalid hardness (λ > 0 required): refused as a format error */
    ck_assert_int_eq(lg_anneal_to_relu(&dst, &src), LG_ERR_FORMAT);
    ck_assert_ptr_null(dst.params);
    lg_net_free(&src);
}
END_TEST

/* sigmoid is a known activation without a ReLU stand-in: refused by name */
START_TEST(test_relu_refuses_sigmoid)
{
    lg_net src, dst;
    lg_make_mixed(&src, LG_ACT_GELU, 4);
    src.layers[2].act = LG_ACT_SIGMOID;
    ck_assert_int_eq(lg_net_validate(&src), LG_OK);
    ck_assert_int_eq(lg_anneal_act_substitutable(LG_ACT_SIGMOID), 0);
    ck_assert_int_eq(lg_anneal_to_relu(&dst, &src), LG_ERR_UNSUPPORTED);
    ck_assert_ptr_null(dst.params);
    ck_assert_msg(strstr(lg_errmsg(), "layer 2") && strstr(lg_errmsg(), "sigmoid"), "message: %s", lg_errmsg());
    ck_assert_int_eq(lg_anneal_count_smooth(&src), 1); /* gelu layer 0 only */
    lg_net_free(&src);
}
END_TEST

Suite *suite_relu(void)
{
    Suite *s = suite_create("relu");
    TCase *tc = tcase_create("core");
    lg_tcase_timeout(tc, 120);
    tcase_add_test(tc, test_relu_only_activations_change);
    tcase_add_test(tc, test_relu_file_roundtrip);
    tcase_add_test(tc, test_relu_cli);
    tcase_add_test(tc, test_relu_info_shows_lambda);
    suite_add_tcase(s, tc);
    TCase *tl = tcase_create("limits");
    lg_tcase_timeout(tl, 120);
    tcase_add_test(tl, test_relu_refuses_unknown_activation);
    tcase_add_test(tl, test_relu_refuses_sigmoid);
    suite_add_tcase(s, tl);
    return s;
}
