/* check_act_baseline.c — the annealed baselines, Swish-β x·σ(βx)
 * and PReLU: double definitions and flags, float kernels against finite
 * differences of the double definitions, whole-network gradients of β's raw
 * parameter and of the PReLU slope, the native format (version 2, version 1
 * still read, codes 5/6 refused in a version-1 file), ReLU substitution,
 * the per-neuron gap against dense sampling, the certified bound against
 * deviations observed by double forward passes, the annealing hook, and the
 * CLI from `lgelu train --act swish|prelu` to `bound` and `verify --ref`.
 * (The ONNX round trips and import patterns are in check_onnx.c.)
 * Cost: about 3 s (most of it the CLI runs on a Fashion-MNIST subset). */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "anneal/deviation.h"
#include "anneal/relu.h"
#include "anneal/schedule.h"
#include "core/idx.h"
#include "core/netfile.h"
#include "core/rng.h"
#include "testutil.h"
#include "train/act.h"
#include "train/loop.h"
#include "train/model.h"
#include "onnx/load.h"

#define LG_LN2 0.69314718055994530942
#define LG_SQRT_2PI 2.50662827463100050242


/* ---- double definitions ---------------------------------------------- */

START_TEST(test_act_baseline_eval_and_flags)
{
    lg_act a;
    ck_assert_int_eq(lg_act_parse("swish", &a), 0);
    ck_assert_int_eq(a, LG_ACT_SWISH);
    ck_assert_int_eq(lg_act_parse("prelu", &a), 0);
    ck_assert_int_eq(a, LG_ACT_PRELU);
    ck_assert_str_eq(lg_act_name(LG_ACT_SWISH), "swish");
    ck_assert_str_eq(lg_act_name(LG_ACT_PRELU), "prelu");
    ck_assert_ptr_null(lg_act_name((lg_act)LG_ACT_COUNT));
    /* x·σ(βx): σ(2) = 0.8807970779778823 */
    ck_assert_double_eq_tol(lg_act_eval(LG_ACT_SWISH, 1.0, 2.0), 0.8807970779778823, 1e-15);
    ck_assert_double_eq_tol(lg_act_eval(LG_ACT_SWISH, -1.0, 2.0), -0.11920292202211755, 1e-15);
    ck_assert_double_eq(lg_act_eval(LG_ACT_SWISH, 0.0, 5.0), 0.0);
    ck_assert_double_eq(lg_act_eval(LG_ACT_SWISH, 1e300, 277.0), 1e300); /* no overflow */
    ck_assert_double_eq(lg_act_eval(LG_ACT_SWISH, -1e300, 277.0), -0.0);
    ck_assert_double_eq(lg_act_eval(LG_ACT_PRELU, -2.0, 0.25), -0.5);
    ck_assert_double_eq(lg_act_eval(LG_ACT_PRELU, 3.0, 0.25), 3.0);
    ck_assert_double_eq(lg_act_eval(LG_ACT_PRELU, -2.0, 0.0), 0.0);
    for (int k = 0; k < LG_ACT_COUNT; k++) {
        lg_act b = (lg_act)k;
        ck_assert_int_eq(lg_act_has_param(b), b == LG_ACT_LGELU || b == LG_ACT_SWISH || b == LG_ACT_PRELU);
        ck_assert_int_eq(lg_act_relu_like(b), b == LG_ACT_GELU || b == LG_ACT_LGELU || b == LG_ACT_SWISH ||
                                                  b == LG_ACT_PRELU);
        ck_assert_int_eq(lg_anneal_act_substitutable(b), b != LG_ACT_SIGMOID);
    }
    ck_assert(lg_act_param_ok(LG_ACT_SWISH, 1.0) && !lg_act_param_ok(LG_ACT_SWISH, 0.999));
    ck_assert(!lg_act_param_ok(LG_ACT_SWISH, INFINITY) && !lg_act_param_ok(LG_ACT_SWISH, NAN));
    ck_assert(lg_act_param_ok(LG_ACT_PRELU, -3.0) && !lg_act_param_ok(LG_ACT_PRELU, NAN));
    /* lg_net_init and lg_net_validate */
    const int dims[] = {3, 4, 2};
    lg_net n;
    ck_assert_int_eq(lg_net_init(&n, 2, dims, LG_ACT_SWISH), LG_OK);
    ck_assert_double_eq_tol(n.layers[0].lambda, 1.0 + log(2.0), 1e-15);
    ck_assert_int_eq(lg_net_validate(&n), LG_OK);
    n.layers[0].lambda = 0.5;
    ck_assert_int_eq(lg_net_validate(&n), LG_ERR_FORMAT);
    ck_assert_msg(strstr(lg_errmsg(), "swish") != NULL, "%s", lg_errmsg());
    lg_net_free(&n);
    ck_assert_int_eq(lg_net_init(&n, 2, dims, LG_ACT_PRELU), LG_OK);
    ck_assert_double_eq(n.layers[0].lambda, 0.25);
    ck_assert_double_eq(n.layers[0].s, 0.25);
    n.layers[0].lambda = NAN;
    ck_assert_int_eq(lg_net_validate(&n), LG_ERR_FORMAT);
    lg_net_free(&n);
}
END_TEST

/* ---- float kernels against the double definitions ---------------------- */

/* central difference of the double definition in x or in the parameter */
static double lg_fd(lg_act a, double x, double p, int in_param, double h)
{
    if (in_param) return (lg_act_eval(a, x, p + h) - lg_act_eval(a, x, p - h)) / (2 * h);
    return (lg_act_eval(a, x + h, p) - lg_act_eval(a, x - h, p)) / (2 * h);
}

START_TEST(test_act_baseline_kernels_finite_differences)
{
    static const struct {
        lg_act act;
        double p;
    } C[] = {{LG_ACT_SWISH, 1.0},  {LG_ACT_SWISH, 1.6931}, {LG_ACT_SWISH, 5.0},  {LG_ACT_SWISH, 50.0},
             {LG_ACT_SWISH, 277.2588722239781}, {LG_ACT_PRELU, 0.25}, {LG_ACT_PRELU, 0.0},
             {LG_ACT_PRELU, -0.3}, {LG_ACT_PRELU, 1.5}};
    enum { N = 161 };
    for (size_t c = 0; c < sizeof C / sizeof C[0]; c++) {
        lg_act a = C[c].act;
        float p = (float)C[c].p;
        double scale = a == LG_ACT_SWISH ? 1.0 / p : 1.0; /* the gate's width */
        float x[N], y[N], g[N], dx[N];
        for (int i = 0; i < N; i++) {
            x[i] = (float)((i - N / 2) * 0.1 * scale); /* ±8 gate widths */
            g[i] = (float)(0.5 + 0.01 * i);
            dx[i] = 1.0f; /* the backward accumulates onto this */
        }
        lg_act_forward(y, x, a, p, N);
        float dp = 2.0f;
        lg_act_backward(dx, &dp, g, x, a, p, N);
        double sum = 0.0, abs_sum = 0.0;
        for (int i = 0; i < N; i++) {
            double xi = x[i], ref = lg_act_eval(a, xi, p);
            ck_assert_msg(fabs(y[i] - ref) <= 2e-6 * (fabs(ref) + scale), "%s p %g x %g: forward %.9g, double %.17g",
                          lg_act_name(a), (double)p, xi, y[i], ref);
            if (a == LG_ACT_PRELU && fabs(xi) < 1e-3) continue; /* the kink */
            double h = 1e-4 * scale;
            double fdx = lg_fd(a, xi, p, 0, h);
            ck_assert_msg(fabs((dx[i] - 1.0) - g[i] * fdx) <= 2e-5 * (1 + fabs(g[i] * fdx)),
                          "%s p %g x %g: d/dx %.9g, FD %.12g", lg_act_name(a), (double)p, xi, (dx[i] - 1.0) / g[i], fdx);
            double fdp = lg_fd(a, xi, p, 1, 1e-5 * (fabs(p) + 1e-3 / scale));
            sum += g[i] * fdp;
            abs_sum += fabs(g[i] * fdp);
        }
        ck_assert_msg(fabs((dp - 2.0) - sum) <= 1e-4 * (abs_sum + 1e-6), "%s p %g: d/dparam %.9g, FD %.12g",
                      lg_act_name(a), (double)p, dp - 2.0, sum);
        ck_assert_msg(abs_sum > 0, "%s: vacuous parameter check", lg_act_name(a));
        /* NULL parameter gradient is allowed; out may alias inp */
        lg_act_backward(dx, NULL, g, x, a, p, N);
        lg_act_forward(x, x, a, p, N);
        for (int i = 0; i < N; i++) ck_assert_float_eq(x[i], y[i]);
    }
    /* huge and non-finite inputs: no NaN from a finite input, NaN stays NaN */
    float big[4] = {1e30f, -1e30f, 88.0f, -88.0f}, out[4], d[4] = {0}, one[4] = {1, 1, 1, 1}, db = 0;
    lg_act_forward(out, big, LG_ACT_SWISH, 277.0f, 4);
    ck_assert_float_eq(out[0], 1e30f);
    ck_assert_float_eq(out[1], 0.0f);
    lg_act_backward(d, &db, one, big, LG_ACT_SWISH, 277.0f, 4);
    for (int i = 0; i < 4; i++) ck_assert_msg(isfinite(out[i]) && isfinite(d[i]), "input %g", (double)big[i]);
    ck_assert(isfinite(db));
    float nan_in = NAN, nan_out;
    lg_act_forward(&nan_out, &nan_in, LG_ACT_SWISH, 2.0f, 1);
    ck_assert(isnan(nan_out));
    lg_act_forward(&nan_out, &nan_in, LG_ACT_PRELU, 0.25f, 1);
    ck_assert(isnan(nan_out));
}
END_TEST

/* ---- whole-network gradients ----------------------------------------- */

/* mean cross-entropy of net on X[B][n_in] in double */
static double lg_loss(const lg_net *net, const float *X, const uint8_t *lab, int B)
{
    double scratch[2 * 16], x[16], y[16], sum = 0;
    int C = lg_net_n_out(net);
    for (int r = 0; r < B; r++) {
        for (int i = 0; i < net->n_in; i++) x[i] = X[r * net->n_in + i];
        lg_net_forward(net, x, y, scratch);
        double mx = y[0], z = 0;
        for (int j = 1; j < C; j++) mx = fmax(mx, y[j]);
        for (int j = 0; j < C; j++) z += exp(y[j] - mx);
        sum += log(z) + mx - y[lab[r]];
    }
    return sum / B;
}

/* set layer L's raw parameter to s and its λ/β/a to match */
static void lg_set_s(lg_layer *L, double s, double t)
{
    L->s = s;
    L->lambda = L->act == LG_ACT_PRELU ? s : lg_lambda_from_s(s, t);
}

START_TEST(test_act_baseline_network_gradients)
{
    const int dims[] = {7, 9, 8, 4};
    const lg_act kinds[] = {LG_ACT_SWISH, LG_ACT_PRELU};
    lg_rng r;
    lg_rng_init(&r, 31, 2);
    enum { B = 10 };
    float X[B * 7];
    uint8_t lab[B];
    for (int i = 0; i < B * 7; i++) X[i] = (float)(2 * lg_rng_uniform(&r) - 1);
    for (int i = 0; i < B; i++) lab[i] = (uint8_t)lg_rng_below(&r, 4);
    for (int a = 0; a < 2; a++) {
        lg_net net;
        ck_assert_int_eq(lg_net_init(&net, 3, dims, kinds[a]), LG_OK);
        lg_test_randomize(&net, &r, 0.6);
        for (size_t i = 0; i < net.n_params; i++) net.params[i] = (float)net.params[i];
        for (int k = 0; k < 2; k++) lg_set_s(&net.layers[k], (float)net.layers[k].s, net.t);
        lg_model m;
        ck_assert_int_eq(lg_model_init(&m, &net, B), LG_OK);
        uint32_t idx[B];
        for (int i = 0; i < B; i++) idx[i] = (uint32_t)i;
        lg_model_gather(&m, X, idx, B);
        lg_model_forward(&m, B, lab, NULL, NULL);
        lg_model_zero_grad(&m);
        lg_model_backward(&m, B, lab);
        int checked = 0;
        for (int k = 0; k < 3; k++) {
            lg_layer *L = &net.layers[k];
            lg_mlayer *M = &m.layers[k];
            int nw = L->lin.n_in * L->n_out;
            for (int i = 0; i < nw + L->n_out + 1; i += (i < nw ? 5 : 1)) {
                double h = 1e-6, fd, got;
                if (i < nw + L->n_out) {
                    double *p = i < nw ? &L->lin.W[i] : &L->b[i - nw], save = *p;
                    got = i < nw ? M->dW[i] : M->db[i - nw];
                    *p = save + h;
                    double lp = lg_loss(&net, X, lab, B);
                    *p = save - h;
                    fd = (lp - lg_loss(&net, X, lab, B)) / (2 * h);
                    *p = save;
                } else {
                    if (!lg_act_has_param(L->act)) continue;
                    double save = L->s;
                    got = *M->ds;
                    lg_set_s(L, save + h, net.t);
                    double lp = lg_loss(&net, X, lab, B);
                    lg_set_s(L, save - h, net.t);
                    fd = (lp - lg_loss(&net, X, lab, B)) / (2 * h);
                    lg_set_s(L, save, net.t);
                    ck_assert_msg(fabs(fd) > 1e-6, "%s layer %d: parameter gradient vanishes (check is vacuous)",
                                  lg_act_name(kinds[a]), k);
                }
                ck_assert_msg(fabs(fd - got) <= 1e-4 * fabs(fd) + 2e-6, "%s layer %d param %d: backward %.9g, FD %.9g",
                              lg_act_name(kinds[a]), k, i, got, fd);
                checked++;
            }
        }
        ck_assert_int_gt(checked, 30);
        /* one SGD step moves the parameter and keeps λ/a in sync with s */
        lg_optim_opts o = lg_optim_opts_default();
        double before = m.layers[0].lambda;
        lg_optim_step(&m, &o, 1);
        ck_assert(m.layers[0].lambda != before);
        double want = kinds[a] == LG_ACT_PRELU ? (double)*m.layers[0].s : lg_lambda_from_s(*m.layers[0].s, m.t);
        ck_assert_double_eq_tol(m.layers[0].lambda, want, 1e-12);
        lg_net back;
        ck_assert_int_eq(lg_net_copy(&back, &net), LG_OK);
        ck_assert_int_eq(lg_model_to_net(&m, &back), LG_OK);
        ck_assert_int_eq(back.layers[0].act, kinds[a]);
        ck_assert_double_eq(back.layers[0].lambda, m.layers[0].lambda);
        ck_assert_int_eq(lg_net_validate(&back), LG_OK);
        lg_net_free(&back);
        lg_model_free(&m);
        lg_net_free(&net);
    }
}
END_TEST

/* ---- native format ----------------------------------------------------- */

static uint32_t lg_file_version(const char *path)
{
    unsigned char *b;
    size_t n;
    ck_assert_int_eq(lg_file_slurp(path, 1 << 24, &b, &n), LG_OK);
    uint32_t v = (uint32_t)b[8] | (uint32_t)b[9] << 8 | (uint32_t)b[10] << 16 | (uint32_t)b[11] << 24;
    free(b);
    return v;
}

/* rewrite the version field of a native file and fix its CRC */
static void lg_patch_version(const char *path, uint32_t v)
{
    unsigned char *b;
    size_t n;
    ck_assert_int_eq(lg_file_slurp(path, 1 << 24, &b, &n), LG_OK);
    for (int i = 0; i < 4; i++) b[8 + i] = (unsigned char)(v >> (8 * i));
    uint32_t c = (uint32_t)crc32_z(0L, b, n - 4);
    for (int i = 0; i < 4; i++) b[n - 4 + (size_t)i] = (unsigned char)(c >> (8 * i));
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(b, 1, n, f), n);
    fclose(f);
    free(b);
}

START_TEST(test_act_baseline_netfile_versions)
{
    const int dims[] = {5, 6, 6, 6, 3};
    lg_rng r;
    lg_rng_init(&r, 8, 1);
    lg_net n;
    ck_assert_int_eq(lg_net_init(&n, 4, dims, LG_ACT_SWISH), LG_OK);
    n.layers[1].act = LG_ACT_PRELU;
    n.layers[2].act = LG_ACT_LGELU;
    lg_test_randomize(&n, &r, 0.5);
    n.layers[1].lambda = n.layers[1].s = -0.1234567890123;
    const char *p = lg_test_tmpfile(".lgnet");
    ck_assert_int_eq(lg_netfile_write(&n, p), LG_OK);
    ck_assert_uint_eq(lg_file_version(p), 2);
    lg_net m;
    ck_assert_msg(lg_netfile_read(&m, p) == LG_OK, "%s", lg_errmsg());
    ck_assert_mem_eq(m.params, n.params, n.n_params * sizeof(double));
    for (int k = 0; k < 4; k++) {
        ck_assert_int_eq(m.layers[k].act, n.layers[k].act);
        ck_assert_mem_eq(&m.layers[k].lambda, &n.layers[k].lambda, sizeof(double));
        ck_assert_mem_eq(&m.layers[k].s, &n.layers[k].s, sizeof(double));
    }
    lg_net_free(&m);
    /* a version-1 file cannot hold activation codes 5 and 6 */
    lg_patch_version(p, 1);
    ck_assert_int_eq(lg_netfile_read(&m, p), LG_ERR_FORMAT);
    ck_assert_msg(strstr(lg_errmsg(), "unknown activation code 5 in a version 1 file"), "%s", lg_errmsg());
    lg_patch_version(p, LG_NETFILE_VERSION + 1);
    ck_assert_int_eq(lg_netfile_read(&m, p), LG_ERR_FORMAT);
    ck_assert_msg(strstr(lg_errmsg(), "reads versions 1 to"), "%s", lg_errmsg());
    /* a net without the new activations is still written as version 1 (old
     * builds read it) and version 1 is read */
    n.layers[0].act = LG_ACT_RELU;
    n.layers[1].act = LG_ACT_GELU;
    n.layers[1].lambda = 1.0;
    ck_assert_int_eq(lg_netfile_write(&n, p), LG_OK);
    ck_assert_uint_eq(lg_file_version(p), 1);
    ck_assert_int_eq(lg_netfile_read(&m, p), LG_OK);
    ck_assert_int_eq(m.layers[2].act, LG_ACT_LGELU);
    lg_net_free(&m);
    remove(p);
    lg_net_free(&n);
}
END_TEST

/* ---- substitution, gap, bound ---------------------------------------- */

START_TEST(test_act_baseline_relu_substitution)
{
    const int dims[] = {4, 5, 5, 5, 2};
    lg_rng r;
    lg_rng_init(&r, 4, 4);
    lg_net n, rl;
    ck_assert_int_eq(lg_net_init(&n, 4, dims, LG_ACT_SWISH), LG_OK);
    n.layers[1].act = LG_ACT_PRELU;
    n.layers[2].act = LG_ACT_RELU;
    lg_test_randomize(&n, &r, 1.0);
    ck_assert_int_eq(lg_anneal_count_smooth(&n), 2);
    ck_assert_int_eq(lg_anneal_to_relu(&rl, &n), LG_OK);
    for (int k = 0; k < 3; k++) ck_assert_int_eq(rl.layers[k].act, LG_ACT_RELU);
    ck_assert_int_eq(rl.layers[3].act, LG_ACT_IDENTITY);
    ck_assert_mem_eq(rl.params, n.params, n.n_params * sizeof(double));
    ck_assert_int_eq(lg_anneal_count_smooth(&rl), 0);
    ck_assert_int_eq(lg_dev_check_pair(&rl, &n), LG_OK);
    /* a PReLU net at slope 0 is its substitution exactly */
    lg_net z;
    ck_assert_int_eq(lg_net_init(&z, 2, (int[]){3, 4, 2}, LG_ACT_PRELU), LG_OK);
    lg_test_randomize(&z, &r, 1.0);
    z.layers[0].lambda = 0.0;
    lg_net zr;
    ck_assert_int_eq(lg_anneal_to_relu(&zr, &z), LG_OK);
    double x[3], y0[2], y1[2], scr[16];
    for (int t = 0; t < 50; t++) {
        for (int i = 0; i < 3; i++) x[i] = 4 * lg_rng_uniform(&r) - 2;
        lg_net_forward(&z, x, y0, scr);
        lg_net_forward(&zr, x, y1, scr);
        ck_assert_double_eq(y0[0], y1[0]);
        ck_assert_double_eq(y0[1], y1[1]);
    }
    lg_net_free(&zr), lg_net_free(&z), lg_net_free(&rl), lg_net_free(&n);
}
END_TEST

START_TEST(test_act_baseline_gap_vs_sampling)
{
    /* the constants: w_p solves 1 + e^w = w·e^w, and the peak value is w/(1+e^w) there */
    double w = LG_DEV_SWISH_PEAK_S;
    ck_assert_double_eq_tol(1.0 + exp(w), w * exp(w), 1e-14);
    ck_assert_double_eq_tol(LG_DEV_SWISH_PEAK_V, w / (1.0 + exp(w)), 1e-15);
    ck_assert_double_eq_tol(LG_DEV_SWISH_PEAK_V, w - 1.0, 1e-15);
    static const struct {
        lg_act act;
        double p;
    } C[] = {{LG_ACT_SWISH, 1.0},  {LG_ACT_SWISH, 3.7},  {LG_ACT_SWISH, 277.2588722239781},
             {LG_ACT_PRELU, 0.25}, {LG_ACT_PRELU, -0.4}, {LG_ACT_PRELU, 0.0}, {LG_ACT_PRELU, 2.0}};
    lg_rng r;
    lg_rng_init(&r, 77, 1);
    const int n_int = lg_test_quick() ? 40 : 200, n_pts = 4001;
    for (size_t c = 0; c < sizeof C / sizeof C[0]; c++) {
        double scale = C[c].act == LG_ACT_SWISH ? 1.0 / C[c].p : 1.0;
        int peaks = 0;
        for (int t = 0; t < n_int; t++) {
            double a = (8 * lg_rng_uniform(&r) - 4) * scale, b = (8 * lg_rng_uniform(&r) - 4) * scale;
            double l = fmin(a, b), u = fmax(a, b);
            int at_peak = -1;
            double g = lg_dev_act_gap(C[c].act, C[c].p, l, u, &at_peak);
            peaks += at_peak;
            double mx = 0.0;
            for (int i = 0; i < n_pts; i++) {
                double x = i + 1 == n_pts ? u : l + (u - l) * i / (n_pts - 1);
                double d = fabs(lg_act_eval(C[c].act, x, C[c].p) - lg_act_eval(LG_ACT_RELU, x, 1.0));
                if (d > mx) mx = d;
            }
            /* sound: never below a sampled gap; tight: the grid gets within a hair */
            ck_assert_msg(mx <= g * (1 + 1e-12) + 1e-300, "%s p %g [%g, %g]: sampled %.17g > gap %.17g",
                          lg_act_name(C[c].act), C[c].p, l, u, mx, g);
            ck_assert_msg(g <= mx * (1 + 1e-5) + 1e-12, "%s p %g [%g, %g]: gap %.17g far above sampled %.17g",
                          lg_act_name(C[c].act), C[c].p, l, u, g, mx);
        }
        if (C[c].act == LG_ACT_SWISH) {
            ck_assert_int_gt(peaks, 0);
            ck_assert_int_lt(peaks, n_int);
            ck_assert_double_eq_tol(lg_dev_act_gap(LG_ACT_SWISH, C[c].p, -1e9, 1e9, NULL),
                                    LG_DEV_SWISH_PEAK_V / C[c].p, 1e-15);
        } else {
            ck_assert_int_eq(peaks, 0);
        }
    }
    /* exact values: prelu gap over [−3, 1] with slope −0.4 is 1.2; over [0.5, 2] it is 0 */
    ck_assert_double_eq_tol(lg_dev_act_gap(LG_ACT_PRELU, -0.4, -3.0, 1.0, NULL), 1.2, 1e-15);
    ck_assert_double_eq(lg_dev_act_gap(LG_ACT_PRELU, 0.25, 0.5, 2.0, NULL), 0.0);
    ck_assert(isnan(lg_dev_act_gap(LG_ACT_SIGMOID, 1.0, 0.0, 1.0, NULL)));
    /* far tail: tiny but not NaN, and 0 only where the true value underflows */
    double tail = lg_dev_act_gap(LG_ACT_SWISH, 1.0, 700.0, 800.0, NULL);
    ck_assert(tail > 0.0 && tail < 1e-300 * 1e10);
    ck_assert_double_eq(lg_dev_act_gap(LG_ACT_SWISH, 277.0, 1e6, 2e6, NULL), 0.0);
}
END_TEST

/* ‖f_R(x) − f_G(x)‖∞ by lg_net_forward */
static double lg_observed(const lg_net *rn, const lg_net *ref, const double *x, double *scratch)
{
    double yr[8], yg[8];
    lg_net_forward(rn, x, yr, scratch);
    lg_net_forward(ref, x, yg, scratch);
    double m = 0.0;
    for (int j = 0; j < lg_net_n_out(rn); j++)
        if (fabs(yr[j] - yg[j]) > m) m = fabs(yr[j] - yg[j]);
    return m;
}

START_TEST(test_act_baseline_bound_sound_random_nets)
{
    const int dims[] = {6, 10, 10, 10, 4};
    /* per case the activation of the three hidden layers and their parameters */
    static const struct {
        lg_act act[3];
        double p[3];
    } C[] = {{{LG_ACT_SWISH, LG_ACT_SWISH, LG_ACT_SWISH}, {1.0, 1.0, 1.0}},
             {{LG_ACT_SWISH, LG_ACT_SWISH, LG_ACT_SWISH}, {5.0, 8.0, 12.0}},
             {{LG_ACT_SWISH, LG_ACT_SWISH, LG_ACT_SWISH}, {277.26, 277.26, 277.26}},
             {{LG_ACT_PRELU, LG_ACT_PRELU, LG_ACT_PRELU}, {0.25, 0.25, 0.25}},
             {{LG_ACT_PRELU, LG_ACT_PRELU, LG_ACT_PRELU}, {-0.3, 1.2, 0.01}},
             {{LG_ACT_SWISH, LG_ACT_PRELU, LG_ACT_LGELU}, {3.0, 0.1, 20.0}}};
    const double epss[] = {0.0, 0.02, 0.2};
    const int n_centres = lg_test_quick() ? 4 : 10, n_samples = lg_test_quick() ? 8 : 24;
    lg_rng r;
    lg_rng_init(&r, 2026, 5);
    lg_dev_stats stats = {0};
    for (size_t c = 0; c < sizeof C / sizeof C[0]; c++) {
        lg_net ref, rn;
        ck_assert_int_eq(lg_net_init(&ref, 4, dims, LG_ACT_SWISH), LG_OK);
        for (int k = 0; k < 3; k++) ref.layers[k].act = C[c].act[k];
        lg_test_randomize(&ref, &r, 0.6);
        for (int k = 0; k < 3; k++) ref.layers[k].lambda = ref.layers[k].s = C[c].p[k];
        ck_assert_int_eq(lg_anneal_to_relu(&rn, &ref), LG_OK);
        lg_dev dev;
        ck_assert_msg(lg_dev_init(&dev, &rn, &ref) == LG_OK, "%s", lg_errmsg());
        double G, D, x0[6], x[6], scratch[64], obs_max = 0.0;
        ck_assert_int_eq(lg_dev_bound_global(&dev, 0.0, 1.0, &G, NULL, &stats), LG_OK);
        ck_assert(G > 0.0 && isfinite(G));
        for (int ci = 0; ci < n_centres; ci++) {
            for (int i = 0; i < 6; i++) x0[i] = lg_rng_uniform(&r);
            for (int ei = 0; ei < 3; ei++) {
                double eps = epss[ei];
                ck_assert_int_eq(lg_dev_bound_balls(&dev, x0, 1, eps, 0.0, 1.0, &D, NULL, &stats), LG_OK);
                ck_assert_msg(D <= G, "case %zu eps %g: ball %.17g > global %.17g", c, eps, D, G);
                for (int t = 0; t < n_samples; t++) {
                    for (int i = 0; i < 6; i++) {
                        double v = t % 2 ? (2 * lg_rng_uniform(&r) - 1) : (lg_rng_uniform(&r) < 0.5 ? -1 : 1);
                        x[i] = fmin(1.0, fmax(0.0, x0[i] + eps * v));
                    }
                    double o = lg_observed(&rn, &ref, x, scratch);
                    if (o > obs_max) obs_max = o;
                    ck_assert_msg(o <= D, "case %zu eps %g: observed %.17g > bound %.17g", c, eps, o, D);
                }
            }
        }
        ck_assert_msg(obs_max > 0.0, "case %zu: no deviation observed (vacuous)", c);
        /* the bound scales with the gap: β = 277 is far tighter than β = 1 */
        lg_dev_free(&dev);
        lg_net_free(&rn);
        lg_net_free(&ref);
    }
    ck_assert(stats.n_peak > 0 && stats.n_peak < stats.n_gap);
    /* a single swish neuron: the bound is tight at the peak */
    lg_net ref, rn;
    ck_assert_int_eq(lg_net_init(&ref, 2, (int[]){1, 1, 1}, LG_ACT_SWISH), LG_OK);
    ref.layers[0].lin.W[0] = 1.0, ref.layers[0].b[0] = -0.5, ref.layers[1].lin.W[0] = 1.0;
    ref.layers[0].lambda = 40.0;
    ck_assert_int_eq(lg_anneal_to_relu(&rn, &ref), LG_OK);
    lg_dev dev;
    ck_assert_int_eq(lg_dev_init(&dev, &rn, &ref), LG_OK);
    double xp = 0.5 + LG_DEV_SWISH_PEAK_S / 40.0, lo = xp - 1e-4, hi = xp + 1e-4, D, scr[8];
    ck_assert_int_eq(lg_dev_bound_boxes(&dev, &lo, &hi, 1, &D, NULL, NULL), LG_OK);
    double o = lg_observed(&rn, &ref, &xp, scr);
    ck_assert_double_eq_tol(o, LG_DEV_SWISH_PEAK_V / 40.0, 1e-12);
    ck_assert_msg(o <= D && D <= o * 1.001, "bound %.17g, observed %.17g", D, o);
    lg_dev_free(&dev);
    lg_net_free(&rn);
    lg_net_free(&ref);
}
END_TEST

/* ---- annealing ---------------------------------------------------------- */

START_TEST(test_act_baseline_anneal_hook)
{
    const double LT = lg_anneal_lambda_target(0.005);
    ck_assert_double_eq_tol(lg_anneal_beta_target(0.005), 277.25887222397812, 1e-10);
    ck_assert_double_eq_tol(lg_anneal_target_for(LG_ACT_SWISH, LT), 277.25887222397812, 1e-10);
    ck_assert_double_eq_tol(lg_anneal_target_for(LG_ACT_SWISH, 10.0), LG_LN2 * LG_SQRT_2PI * 10.0, 1e-12);
    ck_assert_double_eq(lg_anneal_target_for(LG_ACT_LGELU, LT), LT);
    ck_assert_double_eq(lg_anneal_target_for(LG_ACT_PRELU, LT), 0.0);
    ck_assert(isnan(lg_anneal_target_for(LG_ACT_SIGMOID, LT)));
    /* the Heaviside tolerance of β_target is the E of λ_target: 2·ln2/β = 2/(λ√(2π)) */
    ck_assert_double_eq_tol(2 * LG_LN2 / lg_anneal_target_for(LG_ACT_SWISH, LT), 2 / (LT * LG_SQRT_2PI), 1e-15);

    const int dims[] = {3, 4, 4, 4, 2};
    lg_net n;
    ck_assert_int_eq(lg_net_init(&n, 4, dims, LG_ACT_SWISH), LG_OK);
    n.layers[1].act = LG_ACT_PRELU;
    n.layers[1].lambda = n.layers[1].s = 0.3;
    n.layers[2].act = LG_ACT_LGELU;
    lg_model m;
    ck_assert_int_eq(lg_model_init(&m, &n, 4), LG_OK);
    lg_anneal_schedule s;
    ck_assert_int_eq(lg_anneal_schedule_init(&s, 0.5, LT, n.n_layers), LG_OK);
    const double p0[3] = {m.layers[0].lambda, 0.3, m.layers[2].lambda};
    for (long step = 0; step < 20; step++) {
        lg_anneal_hook(&s, &m, step, 20);
        for (int k = 0; k < 3; k++) {
            double want = lg_anneal_lambda_at(p0[k], lg_anneal_target_for(n.layers[k].act, LT), 10, 20, step);
            ck_assert_double_eq(m.layers[k].lambda, want);
            ck_assert_int_eq(m.layers[k].lambda_fixed, step >= 10);
        }
    }
    ck_assert_double_eq(m.layers[0].lambda, lg_anneal_target_for(LG_ACT_SWISH, LT));
    ck_assert_double_eq(m.layers[1].lambda, 0.0);
    ck_assert_double_eq(m.layers[2].lambda, LT);
    /* written back: the fixed values exactly, s consistent */
    ck_assert_int_eq(lg_model_to_net(&m, &n), LG_OK);
    ck_assert_double_eq(n.layers[0].lambda, lg_anneal_target_for(LG_ACT_SWISH, LT));
    ck_assert_double_eq_tol(lg_lambda_from_s(n.layers[0].s, n.t), n.layers[0].lambda, 1e-9);
    ck_assert_double_eq(n.layers[1].lambda, 0.0);
    ck_assert_double_eq(n.layers[1].s, 0.0);
    ck_assert_int_eq(lg_net_validate(&n), LG_OK);
    lg_model_free(&m);
    /* prepare_net accepts swish/prelu nets, and still refuses sigmoid-only nets */
    ck_assert_int_eq(lg_anneal_prepare_net(&n, "n"), LG_OK);
    for (int k = 0; k < 3; k++) n.layers[k].act = LG_ACT_SIGMOID;
    ck_assert_int_eq(lg_anneal_prepare_net(&n, "n"), LG_ERR_ARG);
    lg_net_free(&n);
}
END_TEST

/* A short training run learns β and a (they move from their initial values). */
START_TEST(test_act_baseline_training_learns_parameters)
{
    ck_assert_msg(lg_test_have_data(), "Fashion-MNIST not installed at %s", LG_DATA_DEFAULT_DIR);
    lg_dataset tr = {0};
    ck_assert_int_eq(lg_data_load(&tr, LG_DATA_DEFAULT_DIR, "train"), LG_OK);
    lg_dataset_truncate(&tr, 1280);
    const lg_act kinds[] = {LG_ACT_SWISH, LG_ACT_PRELU};
    for (int a = 0; a < 2; a++) {
        const int dims[] = {784, 32, 32, 10};
        lg_net n;
        ck_assert_int_eq(lg_net_init(&n, 3, dims, kinds[a]), LG_OK);
        lg_model_init_weights(&n, 3);
        double p0 = n.layers[0].lambda;
        lg_train_opts o = lg_train_opts_default();
        o.epochs = 2;
        lg_train_result res;
        ck_assert_int_eq(lg_train_run(&n, &tr, NULL, NULL, &o, &res), LG_OK);
        ck_assert_msg(res.train_acc > 0.4, "%s: training accuracy %g", lg_act_name(kinds[a]), res.train_acc);
        ck_assert_msg(fabs(n.layers[0].lambda - p0) > 1e-4, "%s: parameter stayed at %g", lg_act_name(kinds[a]), p0);
        ck_assert_int_eq(lg_net_validate(&n), LG_OK);
        lg_net_free(&n);
    }
    lg_dataset_free(&tr);
}
END_TEST

/* ---- CLI -------------------------------------------------------------- */

static void lg_read_all(const char *path, char *buf, size_t cap)
{
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    size_t n = fread(buf, 1, cap - 1, f);
    buf[n] = '\0';
    fclose(f);
}

START_TEST(test_act_baseline_cli_train_relu_bound_verify)
{
    ck_assert_msg(lg_test_have_data(), "Fashion-MNIST not installed at %s", LG_DATA_DEFAULT_DIR);
    static const char *acts[] = {"swish", "prelu"};
    for (int a = 0; a < 2; a++) {
        char net[256], rl[256], out[256], args[2048], text[8192];
        snprintf(net, sizeof net, "%s", lg_test_tmpfile(".lgnet"));
        snprintf(rl, sizeof rl, "%s", lg_test_tmpfile(".lgnet"));
        snprintf(out, sizeof out, "%s", lg_test_tmpfile(".txt"));
        snprintf(args, sizeof args,
                 "train --act %s --arch 784,24,24,10 --subset 640 --batch 64 --epochs 2 --anneal-start 0.5 %s -o '%s'",
                 acts[a], a == 0 ? "--tolerance 0.01" : "", net);
        ck_assert_int_eq(lg_test_cli(args, out), 0);
        lg_read_all(out, text, sizeof text);
        ck_assert_msg(strstr(text, a == 0 ? "swish layers move to β = 138.629" : "prelu layers move to slope = 0"),
                      "%s", text);
        lg_net n;
        ck_assert_int_eq(lg_net_load(&n, net), LG_OK);
        lg_act want = a == 0 ? LG_ACT_SWISH : LG_ACT_PRELU;
        for (int k = 0; k < 2; k++) {
            ck_assert_int_eq(n.layers[k].act, want);
            /* swish with --tolerance 0.01: β = 2·ln2/0.01; prelu: slope 0 */
            ck_assert_double_eq(n.layers[k].lambda, lg_anneal_target_for(want, lg_anneal_lambda_target(a == 0 ? 0.01 : 0.005)));
            if (a == 0) ck_assert_double_eq_tol(n.layers[k].lambda, 2 * LG_LN2 / 0.01, 1e-9);
        }
        lg_net_free(&n);
        snprintf(args, sizeof args, "relu '%s' -o '%s'", net, rl);
        ck_assert_int_eq(lg_test_cli(args, out), 0);
        lg_read_all(out, text, sizeof text);
        ck_assert_msg(strstr(text, "2 of 3 layers substituted"), "%s", text);
        snprintf(args, sizeof args, "bound '%s' --ref '%s' --n 20 --json", rl, net);
        ck_assert_int_eq(lg_test_cli(args, out), 0);
        lg_read_all(out, text, sizeof text);
        double glob = -1, pmax = -1, obs = -1;
        const char *g = strstr(text, "\"global\": "), *pm = strstr(text, "\"per_input_max\": "),
                   *ob = strstr(text, "\"observed_max\": ");
        ck_assert_msg(g && pm && ob, "%s", text);
        glob = strtod(g + 10, NULL), pmax = strtod(pm + 17, NULL), obs = strtod(ob + 16, NULL);
        ck_assert_msg(isfinite(glob) && glob >= pmax && pmax >= obs && obs >= 0, "%s", text);
        if (a == 0) ck_assert_msg(glob > 0 && glob < 5.0, "%s", text); /* 0.278/138.6 per neuron, propagated */
        else ck_assert_msg(glob < 1e-6, "%s", text); /* slope 0: only rounding margins */
        snprintf(args, sizeof args, "verify '%s' --ref '%s' --index 0 --eps 0.002 --json", rl, net);
        ck_assert_int_eq(lg_test_cli(args, out), 0);
        lg_read_all(out, text, sizeof text);
        ck_assert_msg(strstr(text, "\"verdict\": ") && strstr(text, "\"delta\": "), "%s", text);
        remove(net), remove(rl), remove(out);
    }
    /* annealing needs an activation with a parameter */
    ck_assert_int_eq(lg_test_cli("train --act sigmoid --epochs 1 --anneal-start 0.5 -o x.lgnet", NULL), 2);
    ck_assert_int_eq(lg_test_cli("train --act swishy --epochs 1 -o x.lgnet", NULL), 2);
}
END_TEST

Suite *suite_act_baseline(void)
{
    Suite *s = suite_create("act_baseline");
    TCase *tc = tcase_create("core");
    lg_tcase_timeout(tc, 300);
    tcase_add_test(tc, test_act_baseline_eval_and_flags);
    tcase_add_test(tc, test_act_baseline_kernels_finite_differences);
    tcase_add_test(tc, test_act_baseline_network_gradients);
    tcase_add_test(tc, test_act_baseline_netfile_versions);
    tcase_add_test(tc, test_act_baseline_relu_substitution);
    tcase_add_test(tc, test_act_baseline_gap_vs_sampling);
    tcase_add_test(tc, test_act_baseline_bound_sound_random_nets);
    tcase_add_test(tc, test_act_baseline_anneal_hook);
    tcase_add_test(tc, test_act_baseline_training_learns_parameters);
    tcase_add_test(tc, test_act_baseline_cli_train_relu_bound_verify);
    suite_add_tcase(s, tc);
    return s;
}
