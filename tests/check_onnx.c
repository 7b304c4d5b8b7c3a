/* check_onnx.c — ONNX import/export: bit-exact round trips, the ONNX checker
 * and an independent numpy evaluation (tests/onnx_eval.py, run through
 * python3-onnx) on exported nets, the VNN-COMP fixtures and graph variants
 * written by tests/onnx_make.py; refusal of hostile models; a fuzz loop. */
#include <check.h>
#include <math.h>
#include <mpfr.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "core/netfile.h"
#include "onnx/onnx.h"
#include "core/rng.h"
#include "testutil.h"
#include "onnx/load.h"

/* Run a shell command, capture up to cap−1 bytes of stdout; returns the exit
 * status (nonzero if python3 or onnx is missing: the test then fails). */
static int lg_sh(const char *cmd, char *out, size_t cap)
{
    FILE *p = popen(cmd, "r");
    ck_assert_msg(p != NULL, "cannot run: %s", cmd);
    size_t n = 0, got;
    while (n + 1 < cap && (got = fread(out + n, 1, cap - 1 - n, p)) > 0) n += got;
    out[n] = '\0';
    return pclose(p);
}

static void lg_py_check(const char *model)
{
    char cmd[1024], out[256];
    snprintf(cmd, sizeof cmd, "%s %s/tests/onnx_eval.py check %s", LG_PYTHON3, LG_SOURCE_DIR, model);
    int rc = lg_sh(cmd, out, sizeof out);
    ck_assert_msg(rc == 0 && strncmp(out, "ok", 2) == 0, "onnx.checker rejected %s (rc %d, needs python3-onnx)", model,
                  rc);
}

/* Compare lgelu's double forward pass with the numpy evaluation on n inputs
 * X[n][n_in]; |Δ| ≤ tol·(1 + |y|). */
static void lg_py_compare(const char *model, const lg_net *net, const double *X, int n, double tol)
{
    const char *in = lg_test_tmpfile(".txt");
    FILE *f = fopen(in, "w");
    for (int r = 0; r < n; r++)
        for (int i = 0; i < net->n_in; i++) fprintf(f, "%.17g%c", X[(size_t)r * net->n_in + i], i + 1 < net->n_in ? ' ' : '\n');
    fclose(f);
    char cmd[1024];
    size_t cap = (size_t)n * (size_t)lg_net_n_out(net) * 32 + 64;
    char *out = malloc(cap);
    snprintf(cmd, sizeof cmd, "%s %s/tests/onnx_eval.py eval %s %s", LG_PYTHON3, LG_SOURCE_DIR, model, in);
    ck_assert_msg(lg_sh(cmd, out, cap) == 0, "numpy evaluation of %s failed (needs python3-onnx)", model);
    int no = lg_net_n_out(net);
    double *y = malloc((size_t)no * sizeof *y), *scratch = malloc(2 * (size_t)lg_net_max_width(net) * sizeof *scratch);
    char *p = out;
    for (int r = 0; r < n; r++) {
        lg_net_forward(net, X + (size_t)r * net->n_in, y, scratch);
        for (int j = 0; j < no; j++) {
            char *end;
            double v = strtod(p, &end);
            ck_assert_msg(end != p, "%s: numpy output too short at row %d", model, r);
            p = end;
            ck_assert_msg(fabs(v - y[j]) <= tol * (1 + fabs(v)), "%s: row %d output %d: lgelu %.17g numpy %.17g",
                          model, r, j, y[j], v);
        }
    }
    free(y);
    free(scratch);
    free(out);
    remove(in);
}

static void lg_make(lg_net *net, lg_act act, int float_exact, int norm, uint64_t seed)
{
    const int dims[] = {6, 5, 4, 3};
    lg_rng r;
    lg_rng_init(&r, seed, 0);
    ck_assert_int_eq(lg_net_init(net, 3, dims, act), LG_OK);
    lg_test_randomize(net, &r, 0.7);
    if (float_exact) {
        for (size_t i = 0; i < net->n_params; i++) net->params[i] = (float)net->params[i];
        for (int k = 0; k < net->n_layers; k++) net->layers[k].lambda = (float)net->layers[k].lambda;
        for (int k = 0; k < net->n_layers; k++)
            if (net->layers[k].act == LG_ACT_PRELU) net->layers[k].s = net->layers[k].lambda;
    }
    if (norm) {
        net->in_sub = malloc(6 * sizeof(double));
        net->in_div = malloc(6 * sizeof(double));
        for (int i = 0; i < 6; i++) {
            net->in_sub[i] = float_exact ? 0.125 * i : 0.1 * i;
            net->in_div[i] = float_exact ? 0.5 + i : 0.3 + i;
        }
    }
}

static void lg_assert_same_net(const lg_net *a, const lg_net *b)
{
    ck_assert_int_eq(a->n_in, b->n_in);
    ck_assert_int_eq(a->n_layers, b->n_layers);
    ck_assert_uint_eq(a->n_params, b->n_params);
    ck_assert_mem_eq(a->params, b->params, a->n_params * sizeof(double));
    ck_assert_mem_eq(&a->t, &b->t, sizeof(double));
    for (int k = 0; k < a->n_layers; k++) {
        ck_assert_int_eq(a->layers[k].n_out, b->layers[k].n_out);
        ck_assert_msg(a->layers[k].act == b->layers[k].act, "layer %d: act %d vs %d", k, a->layers[k].act,
                      b->layers[k].act);
        ck_assert_mem_eq(&a->layers[k].lambda, &b->layers[k].lambda, sizeof(double));
        if (lg_act_has_param(a->layers[k].act)) ck_assert_mem_eq(&a->layers[k].s, &b->layers[k].s, sizeof(double));
    }
    ck_assert_int_eq(!a->in_sub, !b->in_sub);
    ck_assert_int_eq(!a->in_div, !b->in_div);
    if (a->in_sub) ck_assert_mem_eq(a->in_sub, b->in_sub, (size_t)a->n_in * sizeof(double));
    if (a->in_div) ck_assert_mem_eq(a->in_div, b->in_div, (size_t)a->n_in * sizeof(double));
}

/* b's hidden smooth layers are lgelu with λ_b ≤ λ_a·√2/c < next(λ_b), the
 * exact λ of the file a was written to with divisor c; everything else equal. */
static void lg_assert_gelu_lambda(const lg_net *a, const lg_net *b, double c)
{
    ck_assert_int_eq(a->n_layers, b->n_layers);
    ck_assert_mem_eq(a->params, b->params, a->n_params * sizeof(double));
    for (int k = 0; k < a->n_layers; k++) {
        const lg_layer *A = &a->layers[k], *B = &b->layers[k];
        if (A->act != LG_ACT_GELU && A->act != LG_ACT_LGELU) {
            ck_assert_int_eq(A->act, B->act);
            continue;
        }
        double la = A->act == LG_ACT_GELU ? 1.0 : A->lambda;
        mpfr_t x, lo, hi;
        mpfr_inits2(300, x, lo, hi, (mpfr_ptr)0);
        mpfr_set_ui(x, 2, MPFR_RNDN);
        mpfr_sqrt(x, x, MPFR_RNDN); /* 300 bits: far closer than any double gap used below */
        mpfr_mul_d(x, x, la, MPFR_RNDN);
        mpfr_div_d(x, x, c, MPFR_RNDN);
        mpfr_set_d(lo, B->lambda, MPFR_RNDN);
        mpfr_set_d(hi, nextafter(B->lambda, INFINITY), MPFR_RNDN);
        ck_assert_msg(B->act == LG_ACT_LGELU || (B->act == LG_ACT_GELU && B->lambda == 1.0), "layer %d: act %d", k,
                      B->act);
        ck_assert_msg(mpfr_lessequal_p(lo, x) && mpfr_less_p(x, hi), "layer %d: λ %.17g does not hold the file's λ",
                      k, B->lambda);
        mpfr_clears(x, lo, hi, (mpfr_ptr)0);
    }
}

static int lg_files_equal(const char *p, const char *q)
{
    unsigned char *a, *b;
    size_t la, lb;
    ck_assert_int_eq(lg_file_slurp(p, 1 << 26, &a, &la), LG_OK);
    ck_assert_int_eq(lg_file_slurp(q, 1 << 26, &b, &lb), LG_OK);
    int eq = la == lb && memcmp(a, b, la) == 0;
    free(a);
    free(b);
    return eq;
}

/* native → ONNX → native gives the same file, byte for byte, for every
 * activation, float-exact or not, with and without normalisation. */
START_TEST(test_onnx_roundtrip_native_bits)
{
    const lg_act acts[] = {LG_ACT_RELU,    LG_ACT_GELU,  LG_ACT_LGELU, LG_ACT_IDENTITY,
                           LG_ACT_SIGMOID, LG_ACT_SWISH, LG_ACT_PRELU};
    for (int a = 0; a < 7; a++)
        for (int fe = 0; fe < 2; fe++) {
            lg_net n0, n1, n2;
            lg_make(&n0, acts[a], fe, a % 2 == fe, 100 + (uint64_t)a);
            const char *p0 = lg_test_tmpfile(".lgnet"), *po = lg_test_tmpfile(".onnx"), *p1 = lg_test_tmpfile(".lgnet");
            ck_assert_int_eq(lg_netfile_write(&n0, p0), LG_OK);
            ck_assert_int_eq(lg_net_load(&n1, p0), LG_OK);
            ck_assert_msg(lg_onnx_write(&n1, po) == LG_OK, "%s", lg_errmsg());
            ck_assert_msg(lg_net_load(&n2, po) == LG_OK, "act %d float %d: %s", a, fe, lg_errmsg());
            if (fe && (acts[a] == LG_ACT_GELU || acts[a] == LG_ACT_LGELU)) {
                /* float32 tensors cannot hold the divisor √2 closely enough: the file's exact
                 * function is erf(λ'x/√2) with λ' = λ·√2/c, c = fl32(√2) (DESIGN.md §3), and the
                 * import must give the double just below λ' (checked in MPFR) */
                lg_assert_gelu_lambda(&n0, &n2, (double)(float)0x1.6a09e667f3bccp+0);
                remove(p0), remove(po), remove(p1);
                lg_net_free(&n0), lg_net_free(&n1), lg_net_free(&n2);
                continue;
            }
            lg_assert_same_net(&n0, &n2);
            ck_assert_int_eq(lg_netfile_write(&n2, p1), LG_OK);
            ck_assert_msg(lg_files_equal(p0, p1), "act %d float %d: native files differ after the ONNX trip", a, fe);
            remove(p0), remove(po), remove(p1);
            lg_net_free(&n0), lg_net_free(&n1), lg_net_free(&n2);
        }
}
END_TEST

/* Weights and biases below 2^-969 (down to subnormals) survive export and
 * import bit for bit: the Gemm import's alpha = beta = 1 products are exact
 * whatever the other factor, so no "not a double" refusal. */
START_TEST(test_onnx_roundtrip_tiny_weights)
{
    static const double tiny[] = {1e-300, -0x1p-1000, 0x1p-1074, -0x1.8p-1022, 0x1p-969, 0x1.fffffffffffffp-970};
    for (size_t t = 0; t < sizeof tiny / sizeof tiny[0]; t++) {
        int dims[3] = {2, 3, 2};
        lg_net n0, n1;
        ck_assert_int_eq(lg_net_init(&n0, 2, dims, LG_ACT_RELU), LG_OK);
        for (size_t i = 0; i < n0.n_params; i++) n0.params[i] = (double)(i % 5) - 2.0;
        n0.layers[0].lin.W[1] = tiny[t];
        n0.layers[0].b[2] = -tiny[t];
        n0.layers[1].lin.W[4] = tiny[t];
        const char *po = lg_test_tmpfile(".onnx");
        ck_assert_int_eq(lg_onnx_write(&n0, po), LG_OK);
        ck_assert_msg(lg_net_load(&n1, po) == LG_OK, "weight %a: %s", tiny[t], lg_errmsg());
        lg_assert_same_net(&n0, &n1);
        remove(po);
        lg_net_free(&n0), lg_net_free(&n1);
    }
}
END_TEST

/* Float-exact nets are written with float32 tensors (smaller file), others
 * with double. */
START_TEST(test_onnx_export_dtype)
{
    lg_net a, b;
    lg_make(&a, LG_ACT_RELU, 1, 0, 5);
    lg_make(&b, LG_ACT_RELU, 0, 0, 5);
    const char *pa = lg_test_tmpfile(".onnx"), *pb = lg_test_tmpfile(".onnx");
    ck_assert_int_eq(lg_onnx_write(&a, pa), LG_OK);
    ck_assert_int_eq(lg_onnx_write(&b, pb), LG_OK);
    unsigned char *ba, *bb;
    size_t la, lb;
    ck_assert_int_eq(lg_file_slurp(pa, 1 << 20, &ba, &la), LG_OK);
    ck_assert_int_eq(lg_file_slurp(pb, 1 << 20, &bb, &lb), LG_OK);
    /* 6·5+5 + 5·4+4 + 4·3+3 = 74 values: 4 more bytes each in double (plus
     * a few bytes of longer length prefixes) */
    ck_assert_uint_ge(lb - la, 74 * 4);
    ck_assert_uint_le(lb - la, 74 * 4 + 16);
    free(ba), free(bb);
    remove(pa), remove(pb);
    lg_net_free(&a), lg_net_free(&b);
}
END_TEST

START_TEST(test_onnx_export_passes_checker_and_numpy)
{
    const lg_act acts[] = {LG_ACT_RELU, LG_ACT_GELU, LG_ACT_LGELU, LG_ACT_SIGMOID, LG_ACT_SWISH, LG_ACT_PRELU};
    lg_rng r;
    lg_rng_init(&r, 9, 1);
    double X[4 * 6];
    for (int i = 0; i < 24; i++) X[i] = 2 * lg_rng_normal(&r);
    for (int a = 0; a < 6; a++)
        for (int fe = 0; fe < 2; fe++) {
            lg_net n;
            lg_make(&n, acts[a], fe, 1, 40 + (uint64_t)a);
            const char *p = lg_test_tmpfile(".onnx");
            ck_assert_int_eq(lg_onnx_write(&n, p), LG_OK);
            lg_py_check(p);
            /* float models carry a float √2 constant: agreement to ~1e-7 */
            lg_py_compare(p, &n, X, 4, fe ? 1e-6 : 1e-12);
            remove(p);
            lg_net_free(&n);
        }
}
END_TEST

static void lg_fixture_inputs(double *X, int n, int n_in, double lo, double hi, uint64_t seed)
{
    lg_rng r;
    lg_rng_init(&r, seed, 3);
    for (int i = 0; i < n * n_in; i++) X[i] = lo + (hi - lo) * lg_rng_uniform(&r);
}

START_TEST(test_onnx_fixtures_match_numpy)
{
    static const struct {
        const char *file;
        int n_in, n_out, n_layers;
        double lo, hi;
    } F[] = {{"vnncomp/mnist-net_256x2.onnx", 784, 10, 3, 0, 1},
             {"acasxu/ACASXU_run2a_1_1_batch_2000.onnx", 5, 5, 7, -0.5, 0.5},
             {"acasxu/ACASXU_run2a_1_7_batch_2000.onnx", 5, 5, 7, -0.5, 0.5}};
    for (int f = 0; f < 3; f++) {
        lg_net n;
        const char *path = lg_test_fixture(F[f].file);
        ck_assert_msg(lg_net_load(&n, path) == LG_OK, "%s", lg_errmsg());
        ck_assert_int_eq(n.n_in, F[f].n_in);
        ck_assert_int_eq(lg_net_n_out(&n), F[f].n_out);
        ck_assert_int_eq(n.n_layers, F[f].n_layers);
        for (int k = 0; k + 1 < n.n_layers; k++) ck_assert_int_eq(n.layers[k].act, LG_ACT_RELU);
        ck_assert_int_eq(n.layers[n.n_layers - 1].act, LG_ACT_IDENTITY);
        /* ACAS Xu's Sub of a zero image is dropped as the identity */
        ck_assert_ptr_null(n.in_sub);
        ck_assert_ptr_null(n.in_div);
        double *X = malloc(3 * (size_t)F[f].n_in * sizeof *X);
        lg_fixture_inputs(X, 3, F[f].n_in, F[f].lo, F[f].hi, 17 + (uint64_t)f);
        lg_py_compare(path, &n, X, 3, 1e-10);
        /* re-export: float32 tensors, bit-identical on re-import, valid ONNX */
        const char *p = lg_test_tmpfile(".onnx");
        lg_net m;
        ck_assert_int_eq(lg_onnx_write(&n, p), LG_OK);
        ck_assert_int_eq(lg_net_load(&m, p), LG_OK);
        lg_assert_same_net(&n, &m);
        if (f < 2) lg_py_check(p);
        remove(p);
        free(X);
        lg_net_free(&n), lg_net_free(&m);
    }
}
END_TEST

/* Op variants written by tests/onnx_ops_make.py (per-token MatMul, HardSigmoid, Abs, Max, Min,
 * LayerNormalization and its decomposition, attention, Softmax over another axis, ReduceMean),
 * compared with its independent numpy evaluation; refused ops give a one-line message. */
START_TEST(test_onnx_op_variants_match_numpy)
{
    const char *dir = lg_test_tmpfile("_onnx_ops");
    char cmd[1024], out[512];
    snprintf(cmd, sizeof cmd, "%s %s/tests/onnx_ops_make.py %s 2>&1", LG_PYTHON3, LG_SOURCE_DIR, dir);
    ck_assert_msg(lg_sh(cmd, out, sizeof out) == 0, "tests/onnx_ops_make.py failed: %s", out);
    static const char *ok[] = {"tokens_matmul", "hardsigmoid",          "abs_max_min",       "class_token",
                               "layernorm",     "layernorm_decomposed", "attention",         "softmax_axis1_mul",
                               "mean_tokens",   "gelu_tanh",            "softmax_opset11"};
    for (size_t m = 0; m < sizeof ok / sizeof ok[0]; m++) {
        char path[600];
        snprintf(path, sizeof path, "%s/%s.onnx", dir, ok[m]);
        lg_net net;
        ck_assert_msg(lg_net_load(&net, path) == LG_OK, "%s: %s", ok[m], lg_errmsg());
        snprintf(path, sizeof path, "%s/%s.txt", dir, ok[m]);
        FILE *f = fopen(path, "r");
        ck_assert_ptr_nonnull(f);
        int no = lg_net_n_out(&net), rows = 0;
        ck_assert_int_le(no, 64);
        double *x = malloc((size_t)net.n_in * sizeof *x), y[64], want[64];
        double *scr = malloc(2 * (size_t)lg_net_max_width(&net) * sizeof *scr);
        for (;;) {
            int got = 0;
            for (int i = 0; i < net.n_in; i++) got += fscanf(f, "%lf", &x[i]);
            if (got != net.n_in) break;
            for (int j = 0; j < no; j++) ck_assert_int_eq(fscanf(f, "%lf", &want[j]), 1);
            lg_net_forward(&net, x, y, scr);
            for (int j = 0; j < no; j++)
                ck_assert_msg(fabs(y[j] - want[j]) <= 1e-9 * (1 + fabs(want[j])),
                              "%s row %d output %d: %.17g vs numpy %.17g", ok[m], rows, j, y[j], want[j]);
            rows++;
        }
        ck_assert_int_eq(rows, 4);
        fclose(f);
        free(x);
        free(scr);
        lg_net_free(&net);
    }
    static const char *bad[] = {"bad_op_typo", "bad_pow", "bad_max2", "bad_reducemean", "bad_const_op"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char path[600], expect[256] = "";
        snprintf(path, sizeof path, "%s/%s.expect", dir, bad[i]);
        FILE *f = fopen(path, "r");
        ck_assert_ptr_nonnull(f);
        ck_assert_ptr_nonnull(fgets(expect, sizeof expect, f));
        fclose(f);
        snprintf(path, sizeof path, "%s/%s.onnx", dir, bad[i]);
        lg_net n;
        ck_assert_int_eq(lg_net_load(&n, path), LG_ERR_UNSUPPORTED);
        ck_assert_msg(strstr(lg_errmsg(), expect) != NULL, "%s: '%s' lacks '%s'", bad[i], lg_errmsg(), expect);
        ck_assert_msg(strlen(lg_errmsg()) < 300 && !strchr(lg_errmsg(), '\n'), "%s: not one short line: %s", bad[i],
                      lg_errmsg());
    }
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    lg_sh(cmd, out, sizeof out);
}
END_TEST

/* Graph variants and hostile models from tests/onnx_make.py. */
static char lg_made_dir[256];
static int lg_made_rc = -1;

static void lg_make_models(void)
{
    snprintf(lg_made_dir, sizeof lg_made_dir, "%s", lg_test_tmpfile("_onnx_models"));
    char cmd[1024], out[256];
    snprintf(cmd, sizeof cmd, "%s %s/tests/onnx_make.py %s", LG_PYTHON3, LG_SOURCE_DIR, lg_made_dir);
    lg_made_rc = lg_sh(cmd, out, sizeof out);
}

static void lg_rm_models(void)
{
    char cmd[512], out[16];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", lg_made_dir);
    lg_sh(cmd, out, sizeof out);
}

START_TEST(test_onnx_import_variants_match_numpy)
{
    ck_assert_msg(lg_made_rc == 0, "tests/onnx_make.py failed (needs python3-onnx, python3-numpy)");
    static const struct {
        const char *name;
        lg_act act0, act1;
        int norm;
    } V[] = {/* float32 √2: the file's λ is √2/fl32(√2) (or √2·fl32(1/√2)), not 1: lgelu */
             {"ok_gelu_torch", LG_ACT_LGELU, LG_ACT_IDENTITY, 0},
             {"ok_gelu_half_first", LG_ACT_LGELU, LG_ACT_IDENTITY, 0},
             {"ok_gelu_half_erf", LG_ACT_LGELU, LG_ACT_IDENTITY, 0},
             {"ok_matmul_reshape", LG_ACT_RELU, LG_ACT_IDENTITY, 1},
             {"ok_double_gemm", LG_ACT_RELU, LG_ACT_IDENTITY, 0},
             {"ok_sigmoid", LG_ACT_SIGMOID, LG_ACT_IDENTITY, 0},
             {"ok_sigmoid_out", LG_ACT_SIGMOID, LG_ACT_SIGMOID, 0},
             {"ok_silu_torch", LG_ACT_SWISH, LG_ACT_IDENTITY, 0},
             {"ok_swish_beta_rev", LG_ACT_SWISH, LG_ACT_IDENTITY, 0},
             {"ok_prelu_vec", LG_ACT_PRELU, LG_ACT_IDENTITY, 0},
             {"ok_leakyrelu", LG_ACT_PRELU, LG_ACT_IDENTITY, 0}};
    double X[5 * 4];
    lg_fixture_inputs(X, 5, 4, -3, 3, 77);
    for (size_t v = 0; v < sizeof V / sizeof V[0]; v++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s.onnx", lg_made_dir, V[v].name);
        lg_net n;
        ck_assert_msg(lg_net_load(&n, path) == LG_OK, "%s: %s", V[v].name, lg_errmsg());
        ck_assert_int_eq(n.n_in, 4);
        ck_assert_int_eq(n.n_layers, 2);
        ck_assert_msg(n.layers[0].act == V[v].act0, "%s: act %d", V[v].name, n.layers[0].act);
        ck_assert_msg(n.layers[1].act == V[v].act1, "%s: output act %d", V[v].name, n.layers[1].act);
        ck_assert_int_eq(!!n.in_sub, V[v].norm);
        lg_py_compare(path, &n, X, 5, 1e-6);
        lg_net_free(&n);
    }
}
END_TEST

/* An imported Sigmoid net through the CLI: info names the activation, eval
 * --input reproduces the library forward pass, relu refuses it (exit 1). */
START_TEST(test_onnx_cli_sigmoid)
{
    ck_assert_msg(lg_made_rc == 0, "tests/onnx_make.py failed (needs python3-onnx, python3-numpy)");
    char path[512], cmd[2048], out[4096];
    snprintf(path, sizeof path, "%s/ok_sigmoid_out.onnx", lg_made_dir);
    snprintf(cmd, sizeof cmd, "%s/lgelu info %s 2>&1", LG_BINARY_DIR, path);
    ck_assert_msg(lg_sh(cmd, out, sizeof out) == 0, "%s", out);
    ck_assert_msg(strstr(out, "layers: 2") && strstr(out, " sigmoid "), "info: %s", out);
    const char *pin = lg_test_tmpfile(".txt");
    double X[3 * 4];
    lg_fixture_inputs(X, 3, 4, -40, 40, 5); /* large values reach both tails */
    FILE *f = fopen(pin, "w");
    for (int r = 0; r < 3; r++) fprintf(f, "%.17g %.17g %.17g %.17g\n", X[4 * r], X[4 * r + 1], X[4 * r + 2], X[4 * r + 3]);
    fclose(f);
    snprintf(cmd, sizeof cmd, "%s/lgelu eval %s --input %s", LG_BINARY_DIR, path, pin);
    ck_assert_int_eq(lg_sh(cmd, out, sizeof out), 0);
    lg_net n;
    ck_assert_int_eq(lg_net_load(&n, path), LG_OK);
    double y[3], scratch[64];
    char *p = out;
    for (int r = 0; r < 3; r++) {
        lg_net_forward(&n, X + 4 * r, y, scratch);
        for (int j = 0; j < 3; j++) {
            char *end;
            double v = strtod(p, &end);
            ck_assert_msg(end != p, "short output: %s", out);
            p = end;
            ck_assert_msg(v == y[j] && v > 0.0 && v < 1.0 + 1e-15, "row %d output %d: cli %.17g library %.17g", r, j,
                          v, y[j]);
        }
    }
    lg_net_free(&n);
    const char *pr = lg_test_tmpfile(".lgnet");
    snprintf(cmd, sizeof cmd, "%s/lgelu relu %s -o %s 2>&1 >/dev/null", LG_BINARY_DIR, path, pr);
    int rc = lg_sh(cmd, out, sizeof out);
    ck_assert_msg(WEXITSTATUS(rc) == 2 && strstr(out, "sigmoid") && strstr(out, "no ReLU substitution"), "%s", out);
    remove(pin);
    remove(pr);
}
END_TEST

START_TEST(test_onnx_refuses_bad_models)
{
    ck_assert_msg(lg_made_rc == 0, "tests/onnx_make.py failed (needs python3-onnx, python3-numpy)");
    static const char *bad[] = {"bad_pow",        "bad_unknown_op", "bad_conv",        "bad_shape",
                                "bad_attr_type",  "bad_cycle",      "bad_dangling",    "bad_two_inputs",
                                "bad_nonlinear",  "bad_fork",       "bad_erf_alone",   "bad_huge_input",
                                "bad_batch",      "bad_huge_dims",  "bad_short_data",  "bad_int_weights",
                                "bad_truncated",  "bad_out_shape",  "bad_negative_dim", "bad_prelu_per_neuron",
                                "bad_swish_scaled", "bad_swish_small_beta"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char path[512], expect[256] = "";
        snprintf(path, sizeof path, "%s/%s.expect", lg_made_dir, bad[i]);
        FILE *f = fopen(path, "r");
        ck_assert_msg(f != NULL, "missing %s", path);
        ck_assert_ptr_nonnull(fgets(expect, sizeof expect, f));
        fclose(f);
        snprintf(path, sizeof path, "%s/%s.onnx", lg_made_dir, bad[i]);
        lg_net n;
        lg_status st = lg_net_load(&n, path);
        ck_assert_msg(st != LG_OK, "%s was accepted", bad[i]);
        ck_assert_msg(strstr(lg_errmsg(), expect) != NULL, "%s: message '%s' lacks '%s'", bad[i], lg_errmsg(), expect);
        ck_assert_msg(strstr(lg_errmsg(), bad[i]) != NULL, "%s: message lacks the file name", bad[i]);
        ck_assert_ptr_null(n.params);
        ck_assert_ptr_null(n.layers);
    }
}
END_TEST

START_TEST(test_onnx_not_a_model)
{
    const char *p = lg_test_tmpfile(".onnx");
    FILE *f = fopen(p, "w");
    fputs("this is not a network\n", f);
    fclose(f);
    lg_net n;
    ck_assert(lg_net_load(&n, p) != LG_OK);
    ck_assert_msg(strstr(lg_errmsg(), "ONNX") != NULL, "%s", lg_errmsg());
    f = fopen(p, "w");
    fclose(f);
    ck_assert(lg_net_load(&n, p) != LG_OK);
    remove(p);
    /* a valid protobuf with no graph */
    static const unsigned char only_ir[] = {0x08, 0x07};
    ck_assert(lg_onnx_parse(&n, only_ir, sizeof only_ir, "ir-only") != LG_OK);
    ck_assert_msg(strstr(lg_errmsg(), "no graph") != NULL, "%s", lg_errmsg());
}
END_TEST

static size_t lg_varint_put(unsigned char *p, uint64_t v)
{
    size_t n = 0;
    do {
        unsigned char b = v & 0x7f;
        v >>= 7;
        p[n++] = (unsigned char)(b | (v ? 0x80 : 0));
    } while (v);
    return n;
}

static size_t lg_varint_len(uint64_t v)
{
    unsigned char tmp[10];
    return lg_varint_put(tmp, v);
}

/* ModelProto → graph → node → attribute.g → graph → ... nested 100 000 deep:
 * protobuf-c would recurse into a stack overflow; the guard refuses it. */
START_TEST(test_onnx_deep_nesting_refused)
{
    const int levels = 100000;
    /* field numbers from the innermost wrapper outwards: Graph.node = 1,
     * Node.attribute = 5, Attribute.g = 6; outermost Model.graph = 7 */
    size_t nwrap = 3 * (size_t)levels + 1;
    uint64_t *sz = malloc((nwrap + 1) * sizeof *sz);
    int *field = malloc(nwrap * sizeof *field);
    for (size_t i = 0; i < nwrap; i++) field[i] = i + 1 == nwrap ? 7 : (int[]){6, 5, 1}[i % 3];
    sz[0] = 0;
    for (size_t i = 0; i < nwrap; i++) sz[i + 1] = sz[i] + lg_varint_len((uint64_t)field[i] << 3 | 2) + lg_varint_len(sz[i]);
    size_t len = (size_t)sz[nwrap] + 2, pos = 0;
    unsigned char *buf = malloc(len);
    buf[pos++] = 0x08, buf[pos++] = 0x07; /* ir_version 7 */
    for (size_t i = nwrap; i-- > 0;) {
        pos += lg_varint_put(buf + pos, (uint64_t)field[i] << 3 | 2);
        pos += lg_varint_put(buf + pos, sz[i]);
    }
    ck_assert_uint_eq(pos, len);
    lg_net n;
    ck_assert(lg_onnx_parse(&n, buf, len, "deep") != LG_OK);
    ck_assert_msg(strstr(lg_errmsg(), "nested deeper than") != NULL, "%s", lg_errmsg());
    free(buf), free(sz), free(field);
}
END_TEST

/* Truncations and byte flips of a real model: refused or imported into a
 * valid net; never a crash or leak (this suite also runs under ASan). */
START_TEST(test_onnx_fuzz_truncate_and_flip)
{
    unsigned char *buf;
    size_t len;
    ck_assert_int_eq(lg_file_slurp(lg_test_fixture("acasxu/ACASXU_run2a_1_1_batch_2000.onnx"), 1 << 20, &buf, &len),
                     LG_OK);
    int quick = getenv("LG_TEST_QUICK") != NULL;
    size_t step = quick ? 397 : 61;
    int refused = 0, accepted = 0;
    for (size_t cut = 0; cut < len; cut += step) {
        lg_net n;
        if (lg_onnx_parse(&n, buf, cut, "cut") == LG_OK) {
            ck_assert_int_eq(lg_net_validate(&n), LG_OK);
            accepted++;
            lg_net_free(&n);
        } else {
            ck_assert(*lg_errmsg());
            refused++;
        }
    }
    ck_assert_int_gt(refused, 0);
    lg_rng r;
    lg_rng_init(&r, 2024, 0);
    unsigned char *mut = malloc(len);
    int rounds = quick ? 60 : 400;
    for (int k = 0; k < rounds; k++) {
        memcpy(mut, buf, len);
        for (int f = 0; f < 1 + k % 4; f++) mut[lg_rng_below(&r, (uint32_t)len)] ^= (unsigned char)(1u << lg_rng_below(&r, 8));
        lg_net n;
        if (lg_onnx_parse(&n, mut, len, "flip") == LG_OK) {
            ck_assert_int_eq(lg_net_validate(&n), LG_OK);
            accepted++;
            lg_net_free(&n);
        }
    }
    free(mut);
    free(buf);
    ck_assert_int_gt(accepted, 0); /* flips inside weights still import */
}
END_TEST

/* The CLI: `export` then `eval --input` on the exported file reproduces the
 * library forward pass (%.17g round-trips doubles); errors name file:line
 * and use exit codes 1 (runtime) and 2 (usage). */
START_TEST(test_onnx_cli_export_and_eval)
{
    char cmd[2048], out[4096];
    const char *net = lg_test_fixture("acasxu/ACASXU_run2a_1_7_batch_2000.onnx");
    const char *po = lg_test_tmpfile(".onnx"), *pin = lg_test_tmpfile(".txt");
    snprintf(cmd, sizeof cmd, "%s/lgelu export %s -o %s 2>&1", LG_BINARY_DIR, net, po);
    ck_assert_msg(lg_sh(cmd, out, sizeof out) == 0, "%s", out);
    double X[2][5] = {{0.6, -0.5, 0.5, 0.45, -0.45}, {-0.3, 0.009, 0.49, 0.3, 0.31}};
    FILE *f = fopen(pin, "w");
    fprintf(f, "# two ACAS Xu inputs\n%.17g, %.17g, %.17g, %.17g, %.17g\n\n%.17g %.17g\t%.17g %.17g %.17g # c\n",
            X[0][0], X[0][1], X[0][2], X[0][3], X[0][4], X[1][0], X[1][1], X[1][2], X[1][3], X[1][4]);
    fclose(f);
    snprintf(cmd, sizeof cmd, "%s/lgelu eval %s --input %s", LG_BINARY_DIR, po, pin);
    ck_assert_int_eq(lg_sh(cmd, out, sizeof out), 0);
    lg_net n;
    ck_assert_int_eq(lg_net_load(&n, net), LG_OK);
    double y[5], scratch[100];
    char *p = out;
    for (int r = 0; r < 2; r++) {
        lg_net_forward(&n, X[r], y, scratch);
        for (int j = 0; j < 5; j++) {
            char *end;
            double v = strtod(p, &end);
            ck_assert_msg(end != p, "short output: %s", out);
            p = end;
            ck_assert_msg(v == y[j], "row %d output %d: cli %.17g library %.17g", r, j, v, y[j]);
        }
    }
    ck_assert_int_eq(sscanf(p, " %*s"), EOF);
    lg_net_free(&n);
    f = fopen(pin, "w");
    fprintf(f, "1 2 3 4 5\n1 2 x 4 5\n");
    fclose(f);
    snprintf(cmd, sizeof cmd, "%s/lgelu eval %s --input %s 2>&1 >/dev/null", LG_BINARY_DIR, po, pin);
    int rc = lg_sh(cmd, out, sizeof out);
    ck_assert_msg(WEXITSTATUS(rc) == 1 && strstr(out, ":2: value 3: expected a finite number, got 'x'"), "%s", out);
    f = fopen(pin, "w");
    fprintf(f, "1 2 3 4\n");
    fclose(f);
    rc = lg_sh(cmd, out, sizeof out);
    /* a row of the wrong size does not fit the network: a value error */
    ck_assert_msg(WEXITSTATUS(rc) == 2 && strstr(out, ":1: expected 5 values, got 4"), "%s", out);
    snprintf(cmd, sizeof cmd, "%s/lgelu export %s 2>&1", LG_BINARY_DIR, net);
    ck_assert_int_eq(WEXITSTATUS(lg_sh(cmd, out, sizeof out)), 2);
    snprintf(cmd, sizeof cmd, "%s/lgelu export --frobnicate %s -o %s 2>&1", LG_BINARY_DIR, net, po);
    ck_assert_int_eq(WEXITSTATUS(lg_sh(cmd, out, sizeof out)), 2);
    /* an output that cannot be written is a bad value, refused before any work (exit 2) */
    snprintf(cmd, sizeof cmd, "%s/lgelu export %s -o /nonexistent/dir/x.onnx 2>&1", LG_BINARY_DIR, net);
    rc = lg_sh(cmd, out, sizeof out);
    ck_assert_msg(WEXITSTATUS(rc) == 2 && strstr(out, "/nonexistent/dir/x.onnx"), "%s", out);
    snprintf(cmd, sizeof cmd, "%s/lgelu export --help", LG_BINARY_DIR);
    ck_assert_int_eq(lg_sh(cmd, out, sizeof out), 0);
    ck_assert(strstr(out, "--output") != NULL);
    remove(po);
    remove(pin);
}
END_TEST

Suite *suite_onnx(void)
{
    Suite *s = suite_create("onnx");
    TCase *c = tcase_create("core");
    lg_tcase_timeout(c, 120);
    tcase_add_unchecked_fixture(c, lg_make_models, lg_rm_models);
    tcase_add_test(c, test_onnx_roundtrip_native_bits);
    tcase_add_test(c, test_onnx_roundtrip_tiny_weights);
    tcase_add_test(c, test_onnx_export_dtype);
    tcase_add_test(c, test_onnx_export_passes_checker_and_numpy);
    tcase_add_test(c, test_onnx_fixtures_match_numpy);
    tcase_add_test(c, test_onnx_import_variants_match_numpy);
    tcase_add_test(c, test_onnx_cli_export_and_eval);
    tcase_add_test(c, test_onnx_cli_sigmoid);
    suite_add_tcase(s, c);
    TCase *l = tcase_create("limits");
    lg_tcase_timeout(l, 120);
    tcase_add_unchecked_fixture(l, lg_make_models, lg_rm_models);
    tcase_add_test(l, test_onnx_refuses_bad_models);
    tcase_add_test(l, test_onnx_op_variants_match_numpy);
    tcase_add_test(l, test_onnx_not_a_model);
    tcase_add_test(l, test_onnx_deep_nesting_refused);
    tcase_add_test(l, test_onnx_fuzz_truncate_and_flip);
    suite_add_tcase(s, l);
    return s;
}
