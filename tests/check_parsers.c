/* check_parsers.c — reliability of the parsers:
 * every input the fuzzers ever crashed on (tests/fixtures/fuzz-regress/
 * <parser>/) and every seed of the fuzz corpora (fuzz/corpus/<parser>/) is
 * replayed through the same entry points the libFuzzer harnesses use
 * (fuzz/fuzz_input.h), so the ASan + UBSan build of this suite re-runs them
 * all; and networks or properties holding NaN/Inf, or beyond the size
 * limits, are refused before any work with a message naming file and field. */
#include <check.h>
#include <dirent.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "core/netfile.h"
#include "onnx/onnx.h"
#include "core/rng.h"
#include "fuzz/fuzz_input.h"
#include "testutil.h"
#include "verify/prop.h"
#include "verify/vnnlib.h"

typedef struct lg_regress_parser {
    const char *name;
    lg_status (*fn)(const uint8_t *, size_t);
} lg_regress_parser;

/* One row per fuzzed parser (as fuzz/CMakeLists.txt). */
static const lg_regress_parser lg_parsers[] = {
    {"idx", lg_fuzz_idx},         {"netfile", lg_fuzz_netfile},
    {"onnx", lg_fuzz_onnx},       {"vnnlib", lg_fuzz_vnnlib},
    {"nnet", lg_fuzz_nnet},
    {"vnnlib_assign", lg_fuzz_vnnlib_assign},
    {"npy", lg_fuzz_npy},         {"npy_dataset", lg_fuzz_npy_dataset},
    {"inputs", lg_fuzz_inputs},   {"grid", lg_fuzz_grid},
};
#define LG_N_PARSERS (sizeof lg_parsers / sizeof lg_parsers[0])

/* Feed every regular file of dir to fn; returns how many (0 if no dir). */
static int lg_replay_dir(const char *dir, const lg_regress_parser *p)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' || strcmp(e->d_name, "README.md") == 0) continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        unsigned char *buf;
        size_t len;
        if (lg_file_slurp(path, (size_t)64 << 20, &buf, &len) != LG_OK) continue;
        lg_status st = p->fn(buf, len);
        ck_assert_msg(st >= LG_OK && st <= LG_ERR_UNSUPPORTED, "%s: status %d out of range", path, (int)st);
        free(buf);
        n++;
    }
    closedir(d);
    return n;
}

START_TEST(test_parsers_crash_inputs)
{
    for (size_t i = 0; i < LG_N_PARSERS; i++) {
        char dir[4096];
        snprintf(dir, sizeof dir, "%s/fuzz-regress/%s", LG_FIXTURES, lg_parsers[i].name);
        lg_replay_dir(dir, &lg_parsers[i]);
    }
}
END_TEST

START_TEST(test_parsers_seed_corpora)
{
    for (size_t i = 0; i < LG_N_PARSERS; i++) {
        char dir[4096];
        snprintf(dir, sizeof dir, "%s/fuzz/corpus/%s", LG_SOURCE_DIR, lg_parsers[i].name);
        int n = lg_replay_dir(dir, &lg_parsers[i]);
        ck_assert_msg(n >= 3, "%s: only %d seed inputs", dir, n);
    }
}
END_TEST

/* ---- NaN / Inf in a network ---- */

/* A valid native image of a small lgelu net with normalisation; *len set. */
static unsigned char *lg_image(size_t *len, lg_net *keep)
{
    static const int dims[] = {3, 4, 2};
    lg_net a;
    lg_rng r;
    lg_rng_init(&r, 5, 0);
    ck_assert_int_eq(lg_net_init(&a, 2, dims, LG_ACT_LGELU), LG_OK);
    lg_test_randomize(&a, &r, 0.5);
    a.in_sub = calloc(3, sizeof(double));
    a.in_div = malloc(3 * sizeof(double));
    for (int i = 0; i < 3; i++) a.in_div[i] = 1.0 + i;
    const char *p = lg_test_tmpfile(".lgnet");
    ck_assert_int_eq(lg_netfile_write(&a, p), LG_OK);
    unsigned char *buf;
    ck_assert_int_eq(lg_file_slurp(p, 1 << 20, &buf, len), LG_OK);
    remove(p);
    *keep = a;
    return buf;
}

static void lg_put_f64le(unsigned char *b, double d)
{
    uint64_t v;
    memcpy(&v, &d, 8);
    for (int i = 0; i < 8; i++) b[i] = (unsigned char)(v >> (8 * i));
}

/* Overwrite the f64 at off with d, fix the CRC, parse; expect a format
 * error whose message contains `want` and the file name. */
static void lg_expect_refused(const unsigned char *img, size_t len, size_t off, double d, const char *want)
{
    unsigned char *b = malloc(len);
    memcpy(b, img, len);
    lg_put_f64le(b + off, d);
    uint32_t crc = (uint32_t)crc32_z(0L, b, len - 4);
    for (int i = 0; i < 4; i++) b[len - 4 + (size_t)i] = (unsigned char)(crc >> (8 * i));
    lg_net n;
    lg_status st = lg_netfile_parse(&n, b, len, "bad.lgnet");
    ck_assert_msg(st == LG_ERR_FORMAT, "%s = %g at offset %zu accepted", want, d, off);
    ck_assert_msg(strstr(lg_errmsg(), want) && strstr(lg_errmsg(), "bad.lgnet"), "message for %s: %s", want,
                  lg_errmsg());
    ck_assert_ptr_null(n.params);
    free(b);
}

START_TEST(test_parsers_netfile_nonfinite)
{
    size_t len;
    lg_net a;
    unsigned char *img = lg_image(&len, &a);
    /* layout: 32-byte header (t at 24), 2 layer headers of 32 bytes (λ at +16,
     * s at +24), in_sub[3], in_div[3], W0[4][3] b0[4] W1[2][4] b1[2], CRC */
    const size_t lay = 32, sub = lay + 64, div = sub + 24, par = div + 24;
    const double bad[] = {NAN, INFINITY, -INFINITY};
    for (int i = 0; i < 3; i++) {
        lg_expect_refused(img, len, par + 8 * 4, bad[i], "layer 0: weight W[1][1]");
        lg_expect_refused(img, len, par + 8 * 13, bad[i], "layer 0: bias b[1]");
        lg_expect_refused(img, len, par + 8 * 17, bad[i], "layer 1: weight W[0][1]");
        lg_expect_refused(img, len, sub + 8, bad[i], "in_sub[1]");
        lg_expect_refused(img, len, div + 16, bad[i], "in_div[2]");
        lg_expect_refused(img, len, lay + 16, bad[i], "λ");
        lg_expect_refused(img, len, lay + 24, bad[i], "s =");
        lg_expect_refused(img, len, 24, bad[i], "temperature");
    }
    /* the unmodified image is accepted and equal */
    lg_net n;
    ck_assert_int_eq(lg_netfile_parse(&n, img, len, "ok.lgnet"), LG_OK);
    ck_assert_mem_eq(n.params, a.params, a.n_params * sizeof(double));
    lg_net_free(&n);
    lg_net_free(&a);
    free(img);
}
END_TEST

START_TEST(test_parsers_onnx_nonfinite)
{
    /* a recognisable float weight in an exported file becomes NaN / Inf */
    static const int dims[] = {2, 3, 2};
    lg_net a;
    ck_assert_int_eq(lg_net_init(&a, 2, dims, LG_ACT_RELU), LG_OK);
    for (size_t i = 0; i < a.n_params; i++) a.params[i] = 0.25 * (double)(i + 1);
    a.layers[1].lin.W[3] = 1234.5; /* exactly a float */
    const char *p = lg_test_tmpfile(".onnx");
    ck_assert_int_eq(lg_onnx_write(&a, p), LG_OK);
    unsigned char *buf;
    size_t len;
    ck_assert_int_eq(lg_file_slurp(p, 1 << 20, &buf, &len), LG_OK);
    remove(p);
    float mark = 1234.5f;
    unsigned char mb[4];
    memcpy(mb, &mark, 4);
    size_t at = SIZE_MAX;
    for (size_t i = 0; i + 4 <= len; i++)
        if (memcmp(buf + i, mb, 4) == 0) at = i;
    ck_assert_msg(at != SIZE_MAX, "marker weight not found in the exported ONNX");
    const float bad[] = {NAN, INFINITY, -INFINITY};
    for (int i = 0; i < 3; i++) {
        memcpy(buf + at, &bad[i], 4);
        lg_net n;
        ck_assert_int_eq(lg_onnx_parse(&n, buf, len, "bad.onnx"), LG_ERR_FORMAT);
        ck_assert_msg(strstr(lg_errmsg(), "bad.onnx") && strstr(lg_errmsg(), "NaN/Inf"), "message: %s", lg_errmsg());
        ck_assert_ptr_null(n.params);
    }
    memcpy(buf + at, mb, 4);
    lg_net n;
    ck_assert_int_eq(lg_onnx_parse(&n, buf, len, "ok.onnx"), LG_OK);
    ck_assert_double_eq(n.layers[1].lin.W[3], 1234.5);
    lg_net_free(&n);
    lg_net_free(&a);
    free(buf);
}
END_TEST

START_TEST(test_parsers_cli_refuses_nan_net)
{
    /* the CLI stops with status 1 before any work on a NaN weight */
    size_t len;
    lg_net a;
    unsigned char *img = lg_image(&len, &a);
    lg_put_f64le(img + 32 + 64 + 48, NAN); /* W0[0][0] */
    uint32_t crc = (uint32_t)crc32_z(0L, img, len - 4);
    for (int i = 0; i < 4; i++) img[len - 4 + (size_t)i] = (unsigned char)(crc >> (8 * i));
    const char *net = lg_test_tmpfile(".lgnet"), *x = lg_test_tmpfile(".txt");
    FILE *f = fopen(net, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(img, 1, len, f), len);
    fclose(f);
    f = fopen(x, "w");
    ck_assert_ptr_nonnull(f);
    fputs("0.1 0.2 0.3\n", f);
    fclose(f);
    char args[1024];
    snprintf(args, sizeof args, "info '%s'", net);
    ck_assert_int_eq(lg_test_cli(args, NULL), 1);
    snprintf(args, sizeof args, "relu '%s' -o '%s.relu'", net, net);
    ck_assert_int_eq(lg_test_cli(args, NULL), 1);
    snprintf(args, sizeof args, "eval '%s' --input '%s'", net, x);
    ck_assert_int_eq(lg_test_cli(args, NULL), 1);
    remove(net);
    remove(x);
    lg_net_free(&a);
    free(img);
}
END_TEST

/* ---- NaN / Inf in a property ---- */

static const char lg_decl[] = "(declare-const X_0 Real)\n(declare-const Y_0 Real)\n(declare-const Y_1 Real)\n";

static void lg_vnnlib_expect(const char *body, lg_status want, const char *msg)
{
    char text[2048];
    snprintf(text, sizeof text, "%s%s", lg_decl, body);
    lg_prop p;
    lg_status st = lg_vnnlib_parse(&p, text, strlen(text), "p.vnnlib", 0, 0);
    ck_assert_msg(st == want, "%s: status %d, expected %d (%s)", body, (int)st, (int)want, lg_errmsg());
    if (want != LG_OK) {
        ck_assert_msg(strstr(lg_errmsg(), msg) != NULL, "%s: message '%s' lacks '%s'", body, lg_errmsg(), msg);
        ck_assert_int_eq(p.n_cases, 0);
    }
    lg_prop_free(&p);
}

START_TEST(test_parsers_vnnlib_nonfinite)
{
    /* VNN-LIB constants are exact rationals (DESIGN.md §3); what cannot be
     * held as a finite double is refused at its line:column, never ±Inf */
    const char *box = "(assert (>= X_0 0))\n(assert (<= X_0 1))\n";
    char b[1024];
    snprintf(b, sizeof b, "%s(assert (<= Y_0 Y_1))\n", box);
    lg_vnnlib_expect(b, LG_OK, NULL);
    snprintf(b, sizeof b, "%s(assert (<= Y_0 (* 1e300 1e300)))\n", box);
    lg_vnnlib_expect(b, LG_ERR_UNSUPPORTED, "p.vnnlib:6:");
    snprintf(b, sizeof b, "%s(assert (<= (* 1e200 1e200 Y_0) Y_1))\n", box);
    lg_vnnlib_expect(b, LG_ERR_UNSUPPORTED, "p.vnnlib:6:");
    snprintf(b, sizeof b, "%s(assert (<= Y_0 1e999))\n", box);
    lg_vnnlib_expect(b, LG_ERR_FORMAT, "p.vnnlib:6:");
    /* a box bound that overflows */
    lg_vnnlib_expect("(assert (>= X_0 0))\n(assert (<= X_0 (* 1e300 1e300)))\n(assert (<= Y_0 Y_1))\n",
                     LG_ERR_UNSUPPORTED, "p.vnnlib:5:");
    /* huge terms that cancel exactly are fine (0·Y_0 ≤ Y_1) */
    snprintf(b, sizeof b, "%s(assert (<= (+ (* 1e300 1e300 Y_0) (* -1e300 1e300 Y_0)) Y_1))\n", box);
    lg_vnnlib_expect(b, LG_OK, NULL);
    /* words that strtod would take for NaN / Inf are not numbers here */
    snprintf(b, sizeof b, "%s(assert (<= Y_0 nan))\n", box);
    lg_vnnlib_expect(b, LG_ERR_FORMAT, "undeclared");
    snprintf(b, sizeof b, "%s(assert (<= Y_0 inf))\n", box);
    lg_vnnlib_expect(b, LG_ERR_FORMAT, "undeclared");
}
END_TEST

START_TEST(test_parsers_robustness_nonfinite)
{
    double x0[3] = {0.5, 0.25, 0.75};
    lg_prop p;
    ck_assert_int_eq(lg_prop_robustness(&p, x0, 3, 0.1, 0, 1, 0, 2, 0.0), LG_OK);
    ck_assert_int_eq(lg_prop_validate(&p, "ok"), LG_OK);
    lg_prop_free(&p);
    x0[1] = NAN;
    ck_assert_int_eq(lg_prop_robustness(&p, x0, 3, 0.1, 0, 1, 0, 2, 0.0), LG_ERR_FORMAT);
    ck_assert_msg(strstr(lg_errmsg(), "X_1"), "message: %s", lg_errmsg());
    ck_assert_ptr_null(p.cases);
    x0[1] = 0.25;
    ck_assert_int_ne(lg_prop_robustness(&p, x0, 3, INFINITY, 0, 1, 0, 2, 0.0), LG_OK);
    ck_assert_int_ne(lg_prop_robustness(&p, x0, 3, NAN, 0, 1, 0, 2, 0.0), LG_OK);
    ck_assert_int_eq(lg_prop_robustness(&p, x0, 3, 0.1, 0, 1, 0, 2, NAN), LG_ERR_FORMAT);
    ck_assert_msg(strstr(lg_errmsg(), "constant"), "message: %s", lg_errmsg());
    /* 2^14 outputs would need 2^28 dense coefficients: refused before allocating */
    ck_assert_int_eq(lg_prop_robustness(&p, x0, 3, 0.1, 0, 1, 0, 1 << 14, 0.0), LG_ERR_UNSUPPORTED);
    ck_assert_msg(strstr(lg_errmsg(), "limit"), "message: %s", lg_errmsg());
    ck_assert_ptr_null(p.cases);
}
END_TEST

/* ---- size limits ---- */

START_TEST(test_parsers_netfile_limits)
{
    /* headers only: the limits are checked before the file size */
    unsigned char b[32 + 2 * 32 + 4];
    memset(b, 0, sizeof b);
    memcpy(b, LG_NETFILE_MAGIC, 8);
    b[8] = 1;                         /* version */
    lg_put_f64le(b + 24, 0.1);        /* t */
    uint32_t n_in = 1u << 16;
    memcpy(b + 12, &n_in, 4);         /* n_in (little-endian host) */
    b[16] = 2;                        /* n_layers */
    uint32_t l0[4] = {0, 1u << 16, 1u << 15, 1}, l1[4] = {0, 1u << 15, 10, 0};
    memcpy(b + 32, l0, 16);
    memcpy(b + 64, l1, 16);
    lg_net n;
    ck_assert_int_eq(lg_netfile_parse(&n, b, sizeof b, "big.lgnet"), LG_ERR_FORMAT);
    ck_assert_msg(strstr(lg_errmsg(), "parameters"), "message: %s", lg_errmsg());
    b[16] = 0, b[17] = 0x20; /* 8192 layers */
    ck_assert_int_eq(lg_netfile_parse(&n, b, sizeof b, "deep.lgnet"), LG_ERR_FORMAT);
    ck_assert_msg(strstr(lg_errmsg(), "layers"), "message: %s", lg_errmsg());
    b[16] = 2, b[17] = 0;
    uint32_t wide = (1u << 24) + 1;
    memcpy(b + 12, &wide, 4);
    ck_assert_int_eq(lg_netfile_parse(&n, b, sizeof b, "wide.lgnet"), LG_ERR_FORMAT);
    ck_assert_msg(strstr(lg_errmsg(), "input size"), "message: %s", lg_errmsg());
}
END_TEST

START_TEST(test_parsers_idx_short_file)
{
    /* an IDX header claiming 10^8 images of 4096 x 4096 (1.6 PB) in a
     * 16-byte file: refused as truncated, without trying to allocate it */
    unsigned char in[2 + 16 + 8] = {16, 0, 0, 0, 8, 3, 0x05, 0xf5, 0xe1, 0x00, 0, 0, 0x10, 0, 0, 0, 0x10, 0,
                                    0, 0, 8, 1, 0x05, 0xf5, 0xe1, 0x00};
    ck_assert_int_eq(lg_fuzz_idx(in, sizeof in), LG_ERR_FORMAT);
    ck_assert_msg(strstr(lg_errmsg(), "truncated"), "message: %s", lg_errmsg());
}
END_TEST

START_TEST(test_parsers_vnnlib_coef_limit)
{
    /* with 20000 outputs, 2^27 / 20000 = 6710 dense output constraints fit
     * the coefficient limit; 7000 disjuncts of one constraint each are
     * refused before their coefficients are allocated */
    const int n_y = 20000, n_dis = 7000;
    size_t cap = (size_t)n_y * 32 + (size_t)n_dis * 40 + 512, len = 0;
    char *t = malloc(cap);
    len += (size_t)snprintf(t + len, cap - len, "(declare-const X_0 Real)\n");
    for (int j = 0; j < n_y; j++) len += (size_t)snprintf(t + len, cap - len, "(declare-const Y_%d Real)\n", j);
    len += (size_t)snprintf(t + len, cap - len, "(assert (>= X_0 0))\n(assert (<= X_0 1))\n(assert (or\n");
    for (int i = 0; i < n_dis; i++) len += (size_t)snprintf(t + len, cap - len, " (>= Y_%d Y_0)\n", 1 + i % (n_y - 1));
    len += (size_t)snprintf(t + len, cap - len, "))\n");
    ck_assert_uint_lt(len, cap);
    lg_prop p;
    ck_assert_int_eq(lg_vnnlib_parse(&p, t, len, "wide.vnnlib", 0, 0), LG_ERR_FORMAT);
    ck_assert_msg(strstr(lg_errmsg(), "coefficients (limit)"), "message: %s", lg_errmsg());
    ck_assert_int_eq(p.n_cases, 0);
    free(t);
}
END_TEST

START_TEST(test_parsers_vnnlib_dnf_limit)
{
    /* 2^12 conjunctions from 12 binary disjunctions, then one assert of 5000
     * atoms to be copied into each: 2·10^7 references, refused up front */
    size_t cap = 1 << 20, len = 0;
    char *t = malloc(cap);
    len += (size_t)snprintf(t + len, cap - len, "%s(assert (>= X_0 0))\n(assert (<= X_0 1))\n", lg_decl);
    for (int i = 0; i < 12; i++) len += (size_t)snprintf(t + len, cap - len, "(assert (or (>= Y_0 %d) (<= Y_1 %d)))\n", i, i);
    len += (size_t)snprintf(t + len, cap - len, "(assert (and\n");
    for (int i = 0; i < 5000; i++) len += (size_t)snprintf(t + len, cap - len, " (<= Y_0 %d)\n", i);
    len += (size_t)snprintf(t + len, cap - len, "))\n");
    ck_assert_uint_lt(len, cap);
    lg_prop p;
    ck_assert_int_eq(lg_vnnlib_parse(&p, t, len, "dnf.vnnlib", 0, 0), LG_ERR_UNSUPPORTED);
    ck_assert_msg(strstr(lg_errmsg(), "atom references (limit)"), "message: %s", lg_errmsg());
    free(t);
}
END_TEST

START_TEST(test_parsers_vnnlib_many_boxes)
{
    /* 20000 disjuncts with distinct boxes (the first repeated at the end):
     * cases are grouped through a hash table, not a quadratic scan */
    const int n = 20000;
    size_t cap = (size_t)n * 96 + 512, len = 0;
    char *t = malloc(cap);
    len += (size_t)snprintf(t + len, cap - len, "%s(declare-const X_1 Real)\n(assert (or\n", lg_decl);
    for (int i = 0; i <= n; i++) {
        int b = i % n;
        len += (size_t)snprintf(t + len, cap - len, "(and (>= X_0 %d) (<= X_0 %d.5) (>= X_1 0) (<= X_1 1) (>= Y_%d Y_%d))\n",
                                b, b, i == n, i != n);
    }
    len += (size_t)snprintf(t + len, cap - len, "))\n");
    ck_assert_uint_lt(len, cap);
    lg_prop p;
    ck_assert_int_eq(lg_vnnlib_parse(&p, t, len, "many.vnnlib", 0, 0), LG_OK);
    ck_assert_int_eq(p.n_cases, n);
    ck_assert_int_eq(p.cases[0].n_terms, 2);
    ck_assert_int_eq(p.cases[1].n_terms, 1);
    ck_assert_double_eq(p.cases[n - 1].lo[0], n - 1);
    ck_assert_double_eq(p.cases[n - 1].hi[0], n - 0.5);
    lg_prop_free(&p);
    free(t);
}
END_TEST

Suite *suite_parsers(void)
{
    Suite *s = suite_create("parsers");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_parsers_crash_inputs);
    tcase_add_test(tc, test_parsers_seed_corpora);
    lg_tcase_timeout(tc, 120);
    suite_add_tcase(s, tc);
    TCase *tl = tcase_create("limits");
    tcase_add_test(tl, test_parsers_netfile_nonfinite);
    tcase_add_test(tl, test_parsers_onnx_nonfinite);
    tcase_add_test(tl, test_parsers_cli_refuses_nan_net);
    tcase_add_test(tl, test_parsers_vnnlib_nonfinite);
    tcase_add_test(tl, test_parsers_robustness_nonfinite);
    tcase_add_test(tl, test_parsers_netfile_limits);
    tcase_add_test(tl, test_parsers_idx_short_file);
    tcase_add_test(tl, test_parsers_vnnlib_many_boxes);
    tcase_add_test(tl, test_parsers_vnnlib_coef_limit);
    tcase_add_test(tl, test_parsers_vnnlib_dnf_limit);
    lg_tcase_timeout(tl, 120);
    suite_add_tcase(s, tl);
    return s;
}
