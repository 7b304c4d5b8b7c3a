/* check_netfile.c — native format round trip and refusal of corrupt,
 * truncated, foreign-version and hostile files; the .nnet reader. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/netfile.h"
#include "core/rng.h"
#include "testutil.h"
#include "onnx/load.h"

static void lg_make_net(lg_net *net, lg_act act)
{
    const int dims[] = {6, 5, 4, 3};
    lg_rng r;
    lg_rng_init(&r, 11, 0);
    ck_assert_int_eq(lg_net_init(net, 3, dims, act), LG_OK);
    lg_test_randomize(net, &r, 0.5);
}

static void lg_write_bytes(const char *path, const unsigned char *b, size_t n)
{
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(b, 1, n, f), n);
    fclose(f);
}

START_TEST(test_netfile_roundtrip)
{
    lg_net a, b;
    lg_make_net(&a, LG_ACT_LGELU);
    a.in_sub = calloc(6, sizeof(double));
    a.in_div = malloc(6 * sizeof(double));
    for (int i = 0; i < 6; i++) a.in_sub[i] = 0.1 * i, a.in_div[i] = 0.3 + i;
    const char *p = lg_test_tmpfile(".lgnet");
    ck_assert_int_eq(lg_netfile_write(&a, p), LG_OK);
    ck_assert_int_eq(lg_net_load(&b, p), LG_OK);
    ck_assert_int_eq(b.n_layers, 3);
    ck_assert_uint_eq(b.n_params, a.n_params);
    ck_assert_mem_eq(a.params, b.params, a.n_params * sizeof(double));
    ck_assert_mem_eq(a.in_div, b.in_div, 6 * sizeof(double));
    for (int k = 0; k < 3; k++) {
        ck_assert_int_eq(a.layers[k].act, b.layers[k].act);
        ck_assert_double_eq(a.layers[k].lambda, b.layers[k].lambda);
        ck_assert_double_eq(a.layers[k].s, b.layers[k].s);
    }
    remove(p);
    lg_net_free(&a);
    lg_net_free(&b);
}
END_TEST

/* Build a valid image in memory. */
static unsigned char *lg_image(size_t *len)
{
    lg_net a;
    lg_make_net(&a, LG_ACT_RELU);
    const char *p = lg_test_tmpfile(".lgnet");
    ck_assert_int_eq(lg_netfile_write(&a, p), LG_OK);
    unsigned char *buf;
    ck_assert_int_eq(lg_file_slurp(p, 1 << 20, &buf, len), LG_OK);
    remove(p);
    lg_net_free(&a);
    return buf;
}

START_TEST(test_netfile_truncated)
{
    size_t len;
    unsigned char *buf = lg_image(&len);
    const size_t cuts[] = {0, 4, 8, 12, 30, 40, 100, len / 2, len - 5, len - 1};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        lg_net n;
        lg_status st = lg_netfile_parse(&n, buf, cuts[i], "cut");
        ck_assert_msg(st == LG_ERR_FORMAT, "cut at %zu accepted (status %d)", cuts[i], st);
        ck_assert_ptr_null(n.params);
    }
    free(buf);
}
END_TEST

START_TEST(test_netfile_corrupt_byte)
{
    size_t len;
    unsigned char *buf = lg_image(&len);
    for (size_t pos = 8; pos < len; pos += 7) {
        buf[pos] ^= 0x5a;
        lg_net n;
        lg_status st = lg_netfile_parse(&n, buf, len, "flip");
        ck_assert_msg(st == LG_ERR_FORMAT, "flipped byte %zu accepted", pos);
        buf[pos] ^= 0x5a;
    }
    lg_net n;
    ck_assert_int_eq(lg_netfile_parse(&n, buf, len, "ok"), LG_OK);
    lg_net_free(&n);
    free(buf);
}
END_TEST

START_TEST(test_netfile_version_and_hostile_dims)
{
    size_t len;
    unsigned char *buf = lg_image(&len);
    lg_net n;
    buf[8] = LG_NETFILE_VERSION + 1; /* a version newer than this build reads */
    ck_assert_int_eq(lg_netfile_parse(&n, buf, len, "v_next"), LG_ERR_FORMAT);
    ck_assert_msg(strstr(lg_errmsg(), "version") != NULL, "message: %s", lg_errmsg());
    buf[8] = 1;
    /* claim a gigantic layer: must be refused before any allocation */
    unsigned char *h = buf + 32 + 8;
    h[0] = 0xff, h[1] = 0xff, h[2] = 0xff, h[3] = 0x7f;
    ck_assert_int_eq(lg_netfile_parse(&n, buf, len, "huge"), LG_ERR_FORMAT);
    free(buf);
    const char *p = lg_test_tmpfile(".bin");
    lg_write_bytes(p, (const unsigned char *)"hello world, not a network", 26);
    ck_assert_int_eq(lg_net_load(&n, p), LG_ERR_FORMAT);
    remove(p);
    ck_assert_int_eq(lg_net_load(&n, "/nonexistent/net.lgnet"), LG_ERR_IO);
}
END_TEST

/* A .nnet written by hand: y = relu(x0' − x1') + 2·relu(x0' + x1') − 1 with
 * x' = ((x0 − 1)/2, (x1 − 2)/4); the normalisation is kept as in_sub/in_div. */
START_TEST(test_netfile_nnet_tiny)
{
    lg_net n;
    ck_assert_int_eq(lg_net_load(&n, lg_test_fixture("nnet/tiny.nnet")), LG_OK);
    ck_assert_int_eq(n.n_in, 2);
    ck_assert_int_eq(n.n_layers, 2); /* output range 1, mean 0: no extra layer */
    ck_assert_int_eq(n.layers[0].act, LG_ACT_RELU);
    ck_assert_int_eq(n.layers[1].act, LG_ACT_IDENTITY);
    ck_assert(n.in_sub && n.in_sub[0] == 1.0 && n.in_sub[1] == 2.0);
    ck_assert(n.in_div && n.in_div[0] == 2.0 && n.in_div[1] == 4.0);
    static const double xs[][3] = {{3, 6, 3}, {5, 2, 5}, {1, 2, -1}, {-3, 10, -1}};
    double scratch[64], y;
    for (int i = 0; i < 4; i++) {
        lg_net_forward(&n, xs[i], &y, scratch);
        ck_assert_msg(y == xs[i][2], "x = (%g, %g): y = %.17g, expected %g", xs[i][0], xs[i][1], y, xs[i][2]);
    }
    lg_net_free(&n);
}
END_TEST

/* A .nnet generated from known weights (tests/nnet_make.py): the forward
 * pass agrees with numpy's evaluation of the format's definition. */
START_TEST(test_netfile_nnet_generated)
{
    lg_net n;
    ck_assert_int_eq(lg_net_load(&n, lg_test_fixture("nnet/gen_3x8x5x2.nnet")), LG_OK);
    ck_assert_int_eq(n.n_in, 3);
    ck_assert_int_eq(n.n_layers, 4); /* 3 layers and the output's y·12.5 + 3.75 */
    ck_assert_int_eq(n.layers[2].act, LG_ACT_IDENTITY);
    ck_assert(n.layers[3].lin.W[0] == 12.5 && n.layers[3].lin.W[1] == 0.0 && n.layers[3].b[1] == 3.75);
    FILE *f = fopen(lg_test_fixture("nnet/gen_3x8x5x2.io"), "r");
    ck_assert_ptr_nonnull(f);
    double v[5], y[2], scratch[256];
    int rows = 0;
    while (fscanf(f, "%lf %lf %lf %lf %lf", &v[0], &v[1], &v[2], &v[3], &v[4]) == 5) {
        lg_net_forward(&n, v, y, scratch);
        for (int j = 0; j < 2; j++)
            ck_assert_msg(fabs(y[j] - v[3 + j]) <= 1e-12 * (1 + fabs(v[3 + j])), "row %d output %d: %.17g, numpy %.17g",
                          rows, j, y[j], v[3 + j]);
        rows++;
    }
    fclose(f);
    ck_assert_int_eq(rows, 16);
    lg_net_free(&n);
}
END_TEST

/* Malformed .nnet files are refused naming the file, the line and what was expected. */
START_TEST(test_netfile_nnet_refused)
{
    static const struct {
        const char *text, *want;
    } bad[] = {
        {"// c\n2,2,1,2,\n2,2,1,\n0,\n-1,-1,\n1,1,\n0,0,0,\n1,1,1,\n1,-1,\n1,\n0,\n0,\n1,2,\n-1,\n",
         ":10: layer 1 weight row 2: expected 2 numbers, got 1"},
        {"2,2,1,3,\n3,3,1,\n", ":2: layer sizes: the first must be inputSize 2"},
        {"2,2,1,2,\n2,2,1,\n0,\n-1,-1,\n1,1,\n0,0,0,\n1,0,1,\n", ":7: range 1: expected a positive number"},
        {"2,2,1,2,\n2,2,1,\n0,\n-1,-1,\n1,x,\n", ":5: input maximums: number 2: expected a finite number, got 'x'"},
        {"2,2,1,2,\n2,2,1,\n0,\n-1,-1,\n1,1,\n0,0,0,\n1,1,1,\n1,-1,\n1,1,\n0,\n0,\n1,2,\n-1,\n7,\n",
         ":14: more lines than the layer sizes ask for"},
        {"99999,2,1,2,\n", "numLayers: expected an integer"},
        {"2,2,1,2,\n2,2,1,\n0,\n", "the file ends where input minimums"},
        {"1,1000000,1,1000000,\n1000000,1,\n", "than the file"},
        {"2,2,1,300,\n2,300,1,\n0,\n", "more than the file holds"},
    };
    const char *path = lg_test_tmpfile(".nnet");
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        lg_write_bytes(path, (const unsigned char *)bad[i].text, strlen(bad[i].text));
        lg_net n;
        ck_assert_int_eq(lg_net_load(&n, path), LG_ERR_FORMAT);
        ck_assert_msg(strstr(lg_errmsg(), path) && strstr(lg_errmsg(), bad[i].want), "case %zu: %s", i, lg_errmsg());
        ck_assert_int_eq(n.n_layers, 0);
    }
}
END_TEST

Suite *suite_netfile(void)
{
    Suite *s = suite_create("netfile");
    TCase *tc = tcase_create("core");
    lg_tcase_timeout(tc, 120);
    tcase_add_test(tc, test_netfile_roundtrip);
    tcase_add_test(tc, test_netfile_nnet_tiny);
    tcase_add_test(tc, test_netfile_nnet_generated);
    tcase_add_test(tc, test_netfile_nnet_refused);
    suite_add_tcase(s, tc);
    TCase *tl = tcase_create("limits");
    lg_tcase_timeout(tl, 120);
    tcase_add_test(tl, test_netfile_truncated);
    tcase_add_test(tl, test_netfile_corrupt_byte);
    tcase_add_test(tl, test_netfile_version_and_hostile_dims);
    suite_add_tcase(s, tl);
    return s;
}
