/* check_conv.c — conv layers (core/net.h): forward against an independent
 * reference, densification, the native format's version 3, the ONNX round
 * trip, verification against the exact enumeration oracle on tiny convs,
 * and the third-party collins_rul_cnn fixture. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/exact.h"
#include "core/linop.h"
#include "core/netfile.h"
#include "core/npy.h"
#include "onnx/onnx.h"
#include "core/rng.h"
#include "oracle.h"
#include "testutil.h"
#include "train/model.h"
#include "anneal/deviation.h"
#include "anneal/relu.h"
#include "verify/bounds.h"
#include "verify/prop.h"
#include "verify/verify.h"
#include "verify/vnnlib.h"
#include "onnx/load.h"

/* A conv → conv → dense relu net on a c×h×w image; geometry from g[2]. */
static void conv_net(lg_net *net, int c, int h, int w, const lg_conv *g1, const lg_conv *g2, int n_out, lg_act act)
{
    lg_conv a = *g1, b = *g2;
    a.c_in = c, a.h_in = h, a.w_in = w;
    a.h_out = lg_conv_out_size(h, a.kh, a.sh, a.ph);
    a.w_out = lg_conv_out_size(w, a.kw, a.sw, a.pw);
    b.c_in = a.c_out, b.h_in = a.h_out, b.w_in = a.w_out;
    b.h_out = lg_conv_out_size(b.h_in, b.kh, b.sh, b.ph);
    b.w_out = lg_conv_out_size(b.w_in, b.kw, b.sw, b.pw);
    int dims[4] = {c * h * w, a.c_out * a.h_out * a.w_out, b.c_out * b.h_out * b.w_out, n_out};
    const lg_conv *convs[3] = {&a, &b, NULL};
    ck_assert_int_eq(lg_net_init_conv(net, 3, dims, convs, act), LG_OK);
}

/* Reference convolution: explicit zero-padded image, then the textbook sum. */
static void ref_conv(const lg_layer *L, const double *x, double *out)
{
    const lg_conv *c = &L->lin.conv;
    int hp = c->h_in + 2 * c->ph, wp = c->w_in + 2 * c->pw;
    double *pad = calloc((size_t)c->c_in * (size_t)hp * (size_t)wp, sizeof *pad);
    ck_assert_ptr_nonnull(pad);
    for (int ci = 0; ci < c->c_in; ci++)
        for (int y = 0; y < c->h_in; y++)
            for (int xx = 0; xx < c->w_in; xx++)
                pad[((size_t)ci * hp + y + c->ph) * wp + xx + c->pw] = x[((size_t)ci * c->h_in + y) * c->w_in + xx];
    for (int co = 0; co < c->c_out; co++)
        for (int oy = 0; oy < c->h_out; oy++)
            for (int ox = 0; ox < c->w_out; ox++) {
                size_t o = ((size_t)co * c->h_out + oy) * c->w_out + ox;
                double s = L->b[o];
                for (int ci = 0; ci < c->c_in; ci++)
                    for (int ky = 0; ky < c->kh; ky++)
                        for (int kx = 0; kx < c->kw; kx++)
                            s += L->lin.W[(((size_t)co * c->c_in + ci) * c->kh + ky) * c->kw + kx] *
                                 pad[((size_t)ci * hp + oy * c->sh + ky) * wp + ox * c->sw + kx];
                out[o] = s;
            }
    free(pad);
}

static double max_abs_diff(const double *a, const double *b, int n)
{
    double m = 0;
    for (int i = 0; i < n; i++) m = fmax(m, fabs(a[i] - b[i]));
    return m;
}

/* geometries: non-square kernels, strides 1..2, padding 0..1 */
static const lg_conv geoms[][2] = {
    {{.c_out = 3, .kh = 3, .kw = 3, .sh = 1, .sw = 1}, {.c_out = 2, .kh = 2, .kw = 2, .sh = 2, .sw = 2}},
    {{.c_out = 4, .kh = 3, .kw = 1, .sh = 2, .sw = 1, .ph = 1}, {.c_out = 2, .kh = 1, .kw = 3, .sh = 1, .sw = 2, .pw = 1}},
    {{.c_out = 2, .kh = 5, .kw = 2, .sh = 1, .sw = 1, .ph = 2, .pw = 1}, {.c_out = 3, .kh = 3, .kw = 3, .sh = 2, .sw = 1, .ph = 1, .pw = 1}},
};

START_TEST(test_conv_forward_reference)
{
    for (size_t gi = 0; gi < sizeof geoms / sizeof geoms[0]; gi++) {
        lg_net net, dense;
        conv_net(&net, 2, 7, 6, &geoms[gi][0], &geoms[gi][1], 3, LG_ACT_IDENTITY);
        lg_rng r;
        lg_rng_init(&r, 11 + gi, 0);
        lg_test_randomize(&net, &r, 0.5);
        ck_assert_int_eq(lg_net_validate(&net), LG_OK);
        double x[84], z[256], z2[256];
        for (int i = 0; i < net.n_in; i++) x[i] = lg_rng_normal(&r);
        /* layer 0 against the textbook convolution */
        lg_conv_forward(&net.layers[0], x, z);
        ref_conv(&net.layers[0], x, z2);
        ck_assert_msg(max_abs_diff(z, z2, net.layers[0].n_out) < 1e-12, "geometry %zu: conv differs", gi);
        /* the whole net: conv form, dense form, batched form */
        ck_assert_int_eq(lg_net_densify(&dense, &net, 0), LG_OK);
        ck_assert(!lg_net_has_conv(&dense) && lg_net_has_conv(&net));
        int w = lg_net_max_width(&net);
        double *scr = malloc(2 * (size_t)w * sizeof *scr), y1[3], y2[3], yb[6], X[168];
        lg_net_forward(&net, x, y1, scr);
        lg_net_forward(&dense, x, y2, scr);
        memcpy(X, x, sizeof x);
        memcpy(X + net.n_in, x, sizeof x);
        ck_assert_int_eq(lg_net_forward_batch(&net, X, yb, 2), LG_OK);
        ck_assert_msg(max_abs_diff(y1, y2, 3) < 1e-12, "geometry %zu: dense differs", gi);
        ck_assert(max_abs_diff(y1, yb, 3) < 1e-12 && max_abs_diff(y1, yb + 3, 3) < 1e-12);
        /* a dense entry is a kernel weight or 0: the dense net has every kernel weight */
        const lg_layer *D = &dense.layers[1], *C = &net.layers[1];
        size_t nz = 0;
        for (size_t i = 0; i < (size_t)D->n_out * D->lin.n_in; i++) nz += D->lin.W[i] != 0.0;
        ck_assert(nz <= (size_t)C->n_out * C->lin.conv.c_in * C->lin.conv.kh * C->lin.conv.kw);
        free(scr);
        lg_net_free(&dense);
        lg_net_free(&net);
    }
}
END_TEST

START_TEST(test_conv_netfile_v3)
{
    lg_net net, back;
    conv_net(&net, 1, 6, 5, &geoms[1][0], &geoms[1][1], 2, LG_ACT_PRELU);
    lg_rng r;
    lg_rng_init(&r, 3, 0);
    lg_test_randomize(&net, &r, 1.0);
    const char *path = lg_test_tmpfile(".lgnet");
    ck_assert_int_eq(lg_netfile_write(&net, path), LG_OK);
    unsigned char *buf;
    size_t len;
    ck_assert_int_eq(lg_file_slurp(path, 1 << 24, &buf, &len), LG_OK);
    ck_assert_int_eq(buf[8], 3); /* version 3: a conv layer */
    ck_assert_int_eq(lg_netfile_read(&back, path), LG_OK);
    ck_assert_int_eq(back.n_params, net.n_params);
    ck_assert_mem_eq(back.params, net.params, net.n_params * sizeof(double));
    for (int k = 0; k < net.n_layers; k++) {
        ck_assert_int_eq(back.layers[k].lin.kind, net.layers[k].lin.kind);
        ck_assert_mem_eq(&back.layers[k].lin.conv, &net.layers[k].lin.conv, sizeof(lg_conv));
    }
    /* truncation anywhere and a geometry that does not match the sizes are refused */
    lg_net bad;
    for (size_t cut = 8; cut < len; cut += 37)
        ck_assert_int_eq(lg_netfile_parse(&bad, buf, cut, "cut"), LG_ERR_FORMAT);
    size_t geo = 8 + 4 * 4 + 8 + 32; /* layer 0's geometry: header, t, first layer header */
    buf[geo + 4 * 4] ^= 1;           /* h_out */
    ck_assert_int_eq(lg_netfile_parse(&bad, buf, len, "geometry"), LG_ERR_FORMAT);
    free(buf);
    /* a dense net still writes version 1, readable by older builds */
    lg_net d;
    int dims[3] = {4, 3, 2};
    ck_assert_int_eq(lg_net_init(&d, 2, dims, LG_ACT_RELU), LG_OK);
    ck_assert_int_eq(lg_netfile_write(&d, path), LG_OK);
    ck_assert_int_eq(lg_file_slurp(path, 1 << 24, &buf, &len), LG_OK);
    ck_assert_int_eq(buf[8], 1);
    free(buf);
    lg_net_free(&d);
    lg_net_free(&back);
    lg_net_free(&net);
}
END_TEST

/* conv → ONNX (Reshape, Conv, Flatten[, Add]) → import (dense): same function */
START_TEST(test_conv_onnx_roundtrip)
{
    for (int tied = 0; tied < 2; tied++)
        for (size_t gi = 0; gi < sizeof geoms / sizeof geoms[0]; gi++) {
            lg_net net, back;
            conv_net(&net, 2, 7, 6, &geoms[gi][0], &geoms[gi][1], 3, LG_ACT_RELU);
            lg_rng r;
            lg_rng_init(&r, 21 + gi, 0);
            lg_test_randomize(&net, &r, 0.5);
            for (int k = 0; tied && k < 2; k++) {
                lg_layer *L = &net.layers[k];
                size_t hw = (size_t)L->lin.conv.h_out * L->lin.conv.w_out;
                for (int o = 0; o < L->n_out; o++) L->b[o] = L->b[(size_t)o / hw * hw];
            }
            const char *path = lg_test_tmpfile(".onnx");
            ck_assert_int_eq(lg_onnx_write(&net, path), LG_OK);
            ck_assert_msg(lg_net_load(&back, path) == LG_OK, "geometry %zu: %s", gi, lg_errmsg());
            ck_assert_int_eq(back.n_in, net.n_in);
            ck_assert_int_eq(lg_net_n_out(&back), 3);
            double x[84], y1[3], y2[3], *scr = malloc(2 * (size_t)lg_net_max_width(&back) * sizeof *scr);
            for (int t = 0; t < 5; t++) {
                for (int i = 0; i < net.n_in; i++) x[i] = lg_rng_normal(&r);
                lg_net_forward(&net, x, y1, scr);
                lg_net_forward(&back, x, y2, scr);
                /* float32 weights when exact, else double: same numbers either way */
                ck_assert_msg(max_abs_diff(y1, y2, 3) < 1e-9, "geometry %zu tied %d: %g", gi, tied,
                              max_abs_diff(y1, y2, 3));
            }
            free(scr);
            lg_net_free(&back);
            lg_net_free(&net);
        }
}
END_TEST

START_TEST(test_conv_densify_cap)
{
    lg_net net, dense;
    conv_net(&net, 1, 8, 8, &geoms[0][0], &geoms[0][1], 2, LG_ACT_RELU);
    size_t need = lg_net_dense_bytes(&net);
    ck_assert(need > 0);
    ck_assert_int_eq(lg_net_densify(&dense, &net, need - 1), LG_ERR_NOMEM);
    ck_assert(strstr(lg_errmsg(), "cap") != NULL);
    ck_assert_int_eq(lg_net_densify(&dense, &net, need), LG_OK);
    lg_net_free(&dense);
    lg_net_free(&net);
}
END_TEST

/* Tiny convs: lg_verify_run on the conv net agrees with the exact
 * enumeration oracle on its dense form, for both verdicts. */
/* Verify net on case 0 of p and check the verdict against the exact-LP
 * enumeration oracle run on dense (the same net written out dense).
 * Returns 0 when the oracle cannot enumerate it (too many unstable ReLUs),
 * else 1 with *ans the oracle's answer and *decided 1 for robust/violated. */
static int conv_early_attacks; /* violated before any bound was computed (the attack first on convs) */

static int conv_oracle_check(const lg_net *net, const lg_net *dense, const lg_prop *p, int seed, lg_answer *ans,
                             int *decided)
{
    lg_problem prob;
    memset(&prob, 0, sizeof prob);
    prob.net = dense;
    prob.lo = p->cases[0].lo;
    prob.hi = p->cases[0].hi;
    prob.n_terms = p->cases[0].n_terms;
    prob.terms = p->cases[0].terms;
    lg_status st = lg_oracle_solve(&prob, ans, NULL, NULL);
    if (st == LG_ERR_ARG) return 0; /* more unstable ReLUs than the oracle enumerates */
    ck_assert_int_eq(st, LG_OK);
    lg_verify_opts o = lg_verify_opts_default();
    o.timeout_s = 20;
    lg_verify_report rep;
    ck_assert_int_eq(lg_verify_run(net, p, &o, &rep), LG_OK);
    if (rep.verdict == LG_VERDICT_ROBUST) ck_assert_msg(*ans == LG_ANSWER_UNSAT, "seed %d: robust but sat", seed);
    if (rep.verdict == LG_VERDICT_VIOLATED) ck_assert_msg(*ans == LG_ANSWER_SAT, "seed %d: violated but unsat", seed);
    *decided = rep.verdict != LG_VERDICT_UNKNOWN;
    conv_early_attacks += rep.verdict == LG_VERDICT_VIOLATED && rep.t_bounds == 0.0;
    lg_verify_report_free(&rep);
    return 1;
}

START_TEST(test_conv_oracle)
{
    int decided = 0, sat = 0, unsat = 0, strided = 0;
    for (int seed = 0; seed < 70; seed++) {
        /* seeds 0..39: 1x3x2 → 2x2x2 → 1x1x1; 40..69: strided, padded 1x3x3 → 2x2x2 → 1x1x2 */
        lg_conv g1 = {.c_out = 2, .kh = 2, .kw = 1, .sh = 1, .sw = 1};
        lg_conv g2 = {.c_out = 1, .kh = 2, .kw = 2, .sh = 1, .sw = 1};
        lg_conv g3 = {.c_out = 2, .kh = 2, .kw = 2, .sh = 2, .sw = 2, .ph = 1, .pw = 1};
        lg_conv g4 = {.c_out = 1, .kh = 2, .kw = 1, .sh = 1, .sw = 1};
        int second = seed >= 40, n_in = second ? 9 : 6;
        lg_net net, dense;
        if (second) conv_net(&net, 1, 3, 3, &g3, &g4, 2, LG_ACT_RELU); /* 9 → 8 → 2 → 2: 10 ReLUs */
        else conv_net(&net, 1, 3, 2, &g1, &g2, 2, LG_ACT_RELU);       /* 6 → 8 → 1 → 2: 9 ReLUs */
        lg_rng r;
        lg_rng_init(&r, 100 + (uint64_t)seed, 0);
        lg_test_randomize(&net, &r, 1.0);
        double x0[9];
        for (int i = 0; i < n_in; i++) x0[i] = lg_rng_uniform(&r);
        ck_assert_int_eq(lg_net_densify(&dense, &net, 0), LG_OK);
        double y[2], scr[64];
        lg_net_forward(&net, x0, y, scr);
        int label = y[1] > y[0];
        lg_prop p;
        double eps = 0.05 + 0.3 * lg_rng_uniform(&r);
        ck_assert_int_eq(lg_prop_robustness(&p, x0, n_in, eps, -10, 10, label, 2, 0.0), LG_OK);
        lg_answer ans;
        int dec;
        if (!conv_oracle_check(&net, &dense, &p, seed, &ans, &dec)) goto next;
        decided += dec;
        strided += second && dec;
        sat += ans == LG_ANSWER_SAT;
        unsat += ans == LG_ANSWER_UNSAT;
    next:
        lg_prop_free(&p);
        lg_net_free(&dense);
        lg_net_free(&net);
    }
    ck_assert_msg(sat > 0 && unsat > 0, "sat %d unsat %d", sat, unsat);
    ck_assert_int_eq(decided, sat + unsat);
    ck_assert_msg(strided >= 10, "only %d strided, padded cases decided", strided);
    /* conv nets run a short attack before their bounds (verify.c: lg_verify_attack_first) */
    ck_assert_msg(conv_early_attacks > 0, "no counterexample found before the bounds (%d sat)", sat);
}
END_TEST


/* 1 when |a − b| ≤ tol·(1 + |a| + |b|). */
static int close_rel(double a, double b, double tol) { return fabs(a - b) <= tol * (1.0 + fabs(a) + fabs(b)); }

/* The structured products (core/linop.h) against the dense matrix of the
 * same conv: forward, transpose, |W|, sparse and written-out rows. */
/* The smooth-net witness gate (the MPFR enclosure, core/exact.h) reads a
 * conv layer through its structure: on random smooth conv nets, for the
 * term "y_j − y_k + d ≤ 0" at constants d on both sides of the double
 * value, it answers as on the densified net, and certifies the clear
 * cases the double forward pass decides with room. */
START_TEST(test_conv_enclosure_matches_dense)
{
    const lg_act acts[] = {LG_ACT_GELU, LG_ACT_LGELU, LG_ACT_SWISH, LG_ACT_SIGMOID};
    int n_cert = 0, n_refused = 0;
    for (size_t gi = 0; gi < sizeof geoms / sizeof geoms[0]; gi++)
        for (size_t ai = 0; ai < sizeof acts / sizeof acts[0]; ai++) {
            lg_net net, dense;
            conv_net(&net, 2, 7, 6, &geoms[gi][0], &geoms[gi][1], 3, acts[ai]);
            lg_rng r;
            lg_rng_init(&r, 700 + gi, ai);
            lg_test_randomize(&net, &r, 0.7);
            for (int k = 0; k < net.n_layers; k++) net.layers[k].lambda = 1.5;
            ck_assert_int_eq(lg_net_densify(&dense, &net, 0), LG_OK);
            double x[256], y[3], buf[2 * 256 + 8];
            ck_assert_int_le(lg_net_max_width(&net), 256);
            for (int i = 0; i < net.n_in; i++) x[i] = lg_rng_uniform(&r);
            lg_net_forward(&net, x, y, buf);
            double coef[3] = {1.0, -1.0, 0.0};
            double v = y[0] - y[1];
            for (int side = 0; side < 2; side++) {
                /* side 0: y0 − y1 + d ≤ 0 holds with room (d = −v − 0.25); side 1: fails with room */
                lg_lincon c = {coef, side ? -v + 0.25 : -v - 0.25};
                lg_term t = {1, &c};
                int a = lg_enclose_first_holding(&net, x, 1, &t, NULL);
                int b = lg_enclose_first_holding(&dense, x, 1, &t, NULL);
                ck_assert_msg(a == b, "geometry %zu act %zu side %d: conv %d, dense %d", gi, ai, side, a, b);
                if (side == 0) {
                    ck_assert_int_eq(a, 0);
                    n_cert++;
                } else {
                    ck_assert_int_eq(a, -1);
                    n_refused++;
                }
            }
            lg_net_free(&dense);
            lg_net_free(&net);
        }
    ck_assert_int_eq(n_cert, n_refused);
}
END_TEST

START_TEST(test_conv_linop_matches_dense)
{
    for (size_t gi = 0; gi < sizeof geoms / sizeof geoms[0]; gi++) {
        lg_net net, dense;
        conv_net(&net, 2, 7, 6, &geoms[gi][0], &geoms[gi][1], 3, LG_ACT_RELU);
        lg_rng r;
        lg_rng_init(&r, 300 + gi, 0);
        lg_test_randomize(&net, &r, 0.7);
        ck_assert_int_eq(lg_net_densify(&dense, &net, 0), LG_OK);
        for (int k = 0; k < 2; k++) {
            const lg_layer *C = &net.layers[k], *D = &dense.layers[k];
            int m = 3, ni = C->lin.n_in, no = C->n_out;
            double *X = malloc((size_t)m * ni * sizeof *X), *A = malloc((size_t)m * no * sizeof *A);
            double *Y1 = malloc((size_t)m * (ni + no) * sizeof *Y1), *Y2 = malloc((size_t)m * (ni + no) * sizeof *Y2);
            double *row = malloc((size_t)ni * sizeof *row), *wv = malloc((size_t)ni * sizeof *wv);
            int *idx = malloc((size_t)ni * sizeof *idx);
            for (int i = 0; i < m * ni; i++) X[i] = lg_rng_normal(&r);
            for (int i = 0; i < m * no; i++) A[i] = lg_rng_uniform(&r) < 0.2 ? 0.0 : lg_rng_normal(&r);
            for (int absw = 0; absw < 2; absw++) {
                lg_layer_mul(C, m, X, Y1, absw, 0);
                lg_layer_mul(D, m, X, Y2, absw, 0);
                for (int i = 0; i < m * no; i++) ck_assert_msg(close_rel(Y1[i], Y2[i], 1e-13), "geometry %zu layer %d mul", gi, k);
                lg_layer_mul(C, m, X, Y1, absw, 1); /* accumulate: twice the product */
                for (int i = 0; i < m * no; i++) ck_assert(close_rel(Y1[i], 2 * Y2[i], 1e-13));
                lg_layer_mul_t(C, m, A, Y1, absw);
                lg_layer_mul_t(D, m, A, Y2, absw);
                for (int i = 0; i < m * ni; i++) ck_assert_msg(close_rel(Y1[i], Y2[i], 1e-13), "geometry %zu layer %d mul_t", gi, k);
            }
            ck_assert_int_eq(lg_layer_row_cap(C), C->lin.conv.c_in * C->lin.conv.kh * C->lin.conv.kw);
            for (int o = 0; o < no; o++) {
                const double *Dr = D->lin.W + (size_t)o * ni, *Cr = lg_layer_row(C, o, row);
                for (int i = 0; i < ni; i++) ck_assert(Cr[i] == Dr[i]);
                int nz = lg_layer_row_nz(C, o, idx, wv), seen = 0;
                ck_assert(nz <= lg_layer_row_cap(C));
                for (int t = 0; t < nz; t++) {
                    ck_assert(t == 0 || idx[t] > idx[t - 1]);
                    ck_assert(wv[t] == Dr[idx[t]]);
                }
                for (int i = 0; i < ni; i++) seen += Dr[i] != 0.0;
                int nzw = 0;
                for (int t = 0; t < nz; t++) nzw += wv[t] != 0.0;
                ck_assert_int_eq(nzw, seen); /* every nonzero of the dense row is listed */
            }
            free(X), free(A), free(Y1), free(Y2), free(row), free(wv), free(idx);
        }
        lg_net_free(&dense);
        lg_net_free(&net);
    }
}
END_TEST

/* Pre-activations z_k of net at x (k < n_layers), into z (offsets by layer). */
static void conv_preacts(const lg_net *net, const double *x, double *z)
{
    double a[512], t[512];
    memcpy(a, x, (size_t)net->n_in * sizeof *a);
    for (int k = 0, off = 0; k < net->n_layers; off += net->layers[k].n_out, k++) {
        const lg_layer *L = &net->layers[k];
        if (L->lin.kind == LG_LAYER_CONV2D) lg_conv_forward(L, a, t);
        else
            for (int o = 0; o < L->n_out; o++) {
                double s = L->b[o];
                for (int i = 0; i < L->lin.n_in; i++) s += L->lin.W[(size_t)o * L->lin.n_in + i] * a[i];
                t[o] = s;
            }
        for (int o = 0; o < L->n_out; o++) {
            z[off + o] = t[o];
            a[o] = L->act == LG_ACT_RELU && t[o] < 0 ? 0 : t[o];
        }
    }
}

/* Bounds through the conv's structure and through its dense matrix: the
 * interval bounds are the same doubles (same sums, same order, same
 * margins), the CROWN bounds and objective bounds agree within rounding, and
 * both contain the pre-activations of sampled inputs. */
START_TEST(test_conv_bounds_structured)
{
    for (size_t gi = 0; gi < sizeof geoms / sizeof geoms[0]; gi++)
        for (int rep = 0; rep < 3; rep++) {
            lg_net net, dense;
            conv_net(&net, 2, 7, 6, &geoms[gi][0], &geoms[gi][1], 3, LG_ACT_RELU);
            lg_rng r;
            lg_rng_init(&r, 500 + 10 * gi + (uint64_t)rep, 0);
            lg_test_randomize(&net, &r, 0.8);
            ck_assert_int_eq(lg_net_densify(&dense, &net, 0), LG_OK);
            int n = net.n_in;
            double lo[84], hi[84], x[84];
            double eps = 0.05 + 0.2 * rep;
            for (int i = 0; i < n; i++) {
                double c = lg_rng_normal(&r);
                lo[i] = c - eps, hi[i] = c + eps;
            }
            lg_bounds bi, bd, si, sd;
            ck_assert_int_eq(lg_bounds_init(&bi, &net), LG_OK);
            ck_assert_int_eq(lg_bounds_init(&bd, &dense), LG_OK);
            ck_assert_int_eq(lg_bounds_init(&si, &net), LG_OK);
            ck_assert_int_eq(lg_bounds_init(&sd, &dense), LG_OK);
            ck_assert_int_eq(lg_bounds_interval(&bi, &net, lo, hi), LG_OK);
            ck_assert_int_eq(lg_bounds_interval(&bd, &dense, lo, hi), LG_OK);
            ck_assert_int_eq(lg_bounds_symbolic(&si, &net, lo, hi), LG_OK);
            ck_assert_int_eq(lg_bounds_symbolic(&sd, &dense, lo, hi), LG_OK);
            int unstable = 0;
            for (int k = 0; k < net.n_layers; k++)
                for (int o = 0; o < net.layers[k].n_out; o++) {
                    ck_assert(bi.lo[k][o] == bd.lo[k][o] && bi.hi[k][o] == bd.hi[k][o]);
                    ck_assert_msg(close_rel(si.lo[k][o], sd.lo[k][o], 1e-12) && close_rel(si.hi[k][o], sd.hi[k][o], 1e-12),
                                  "geometry %zu layer %d neuron %d: [%g, %g] vs [%g, %g]", gi, k, o, si.lo[k][o],
                                  si.hi[k][o], sd.lo[k][o], sd.hi[k][o]);
                    ck_assert(si.lo[k][o] >= bi.lo[k][o] && si.hi[k][o] <= bi.hi[k][o]);
                    unstable += si.lo[k][o] < 0 && si.hi[k][o] > 0;
                }
            /* objective bounds y_0 − y_j through CROWN */
            double C[6] = {1, -1, 0, 1, 0, -1}, d[2] = {0, 0}, oi[2], od[2];
            ck_assert_int_eq(lg_bounds_objective_lower(&si, &net, 2, C, d, oi), LG_OK);
            ck_assert_int_eq(lg_bounds_objective_lower(&sd, &dense, 2, C, d, od), LG_OK);
            for (int j = 0; j < 2; j++) ck_assert(close_rel(oi[j], od[j], 1e-12));
            double z[512];
            for (int s2 = 0; s2 < 200; s2++) {
                for (int i = 0; i < n; i++) {
                    double u = lg_rng_uniform(&r);
                    x[i] = s2 % 3 == 0 ? (u < 0.5 ? lo[i] : hi[i]) : lo[i] + u * (hi[i] - lo[i]);
                }
                conv_preacts(&net, x, z);
                for (int k = 0, off = 0; k < net.n_layers; off += net.layers[k].n_out, k++)
                    for (int o = 0; o < net.layers[k].n_out; o++) {
                        ck_assert(si.lo[k][o] <= z[off + o] && z[off + o] <= si.hi[k][o]);
                        ck_assert(sd.lo[k][o] <= z[off + o] && z[off + o] <= sd.hi[k][o]);
                    }
                int off2 = net.layers[0].n_out + net.layers[1].n_out;
                ck_assert(z[off2] - z[off2 + 1] >= oi[0] && z[off2] - z[off2 + 2] >= oi[1]);
            }
            ck_assert(rep < 2 || unstable > 0); /* the wide boxes exercise the relaxations */
            lg_bounds_free(&bi), lg_bounds_free(&bd), lg_bounds_free(&si), lg_bounds_free(&sd);
            lg_net_free(&dense);
            lg_net_free(&net);
        }
}
END_TEST

/* A conv whose dense matrices would take more than the run's memory cap is
 * still verified (bounds, attack and branch and bound go through the
 * structure); only a back-end call would need the dense rows. */
START_TEST(test_conv_verify_under_cap)
{
    lg_conv g1 = {.c_out = 8, .kh = 3, .kw = 3, .sh = 1, .sw = 1, .ph = 1, .pw = 1};
    lg_conv g2 = {.c_out = 8, .kh = 3, .kw = 3, .sh = 1, .sw = 1, .ph = 1, .pw = 1};
    lg_net net;
    conv_net(&net, 1, 28, 28, &g1, &g2, 10, LG_ACT_RELU); /* 784 → 6272 → 6272 → 10 */
    lg_rng r;
    lg_rng_init(&r, 77, 0);
    lg_test_randomize(&net, &r, 0.3);
    ck_assert(lg_net_dense_bytes(&net) > ((size_t)300 << 20)); /* the dense form takes over 300 MB */
    double x0[784], y[10];
    for (int i = 0; i < 784; i++) x0[i] = lg_rng_uniform(&r);
    double *scr = malloc(2 * (size_t)lg_net_max_width(&net) * sizeof *scr);
    lg_net_forward(&net, x0, y, scr);
    free(scr);
    int label = 0;
    for (int j = 1; j < 10; j++)
        if (y[j] > y[label]) label = j;
    lg_prop p;
    ck_assert_int_eq(lg_prop_robustness(&p, x0, 784, 1e-6, 0, 1, label, 10, 0.0), LG_OK);
    lg_verify_opts o = lg_verify_opts_default();
    o.timeout_s = 60;
    o.memory_mb = 64; /* far below the dense form */
    lg_verify_report rep;
    ck_assert_int_eq(lg_verify_run(&net, &p, &o, &rep), LG_OK);
    ck_assert_msg(rep.verdict == LG_VERDICT_ROBUST, "tiny radius: %s (%s)", lg_verdict_name(rep.verdict), rep.how.reason);
    lg_verify_report_free(&rep);
    lg_prop_free(&p);
    lg_net_free(&net);
}
END_TEST

/* VNN-COMP 2022 collins_rul_cnn (tests/fixtures/conv/README.md) */
START_TEST(test_conv_collins)
{
    lg_net net;
    ck_assert_int_eq(lg_net_load(&net, lg_test_fixture("conv/NN_rul_small_window_20.onnx")), LG_OK);
    ck_assert_int_eq(net.n_in, 400);
    ck_assert_int_eq(lg_net_n_out(&net), 1);
    ck_assert_int_eq(net.n_layers, 6);
    for (int k = 0; k < 3; k++) ck_assert(net.layers[k].lin.kind == LG_LAYER_CONV2D); /* imported as convs, not dense */
    static const char *props[2] = {"conv/robustness_4perturbations_delta10_epsilon10_w20.vnnlib",
                                   "conv/robustness_2perturbations_delta5_epsilon10_w20.vnnlib"};
    for (int i = 0; i < 2; i++) {
        lg_prop p;
        ck_assert_int_eq(lg_vnnlib_read(&p, lg_test_fixture(props[i]), 400, 1), LG_OK);
        lg_verify_opts o = lg_verify_opts_default();
        o.timeout_s = 60;
        lg_verify_report rep;
        ck_assert_int_eq(lg_verify_run(&net, &p, &o, &rep), LG_OK);
        if (i == 0) ck_assert_msg(rep.verdict == LG_VERDICT_ROBUST, "unsat property: %s", lg_verdict_name(rep.verdict));
        else ck_assert_msg(rep.verdict != LG_VERDICT_ROBUST, "sat property answered robust");
        lg_verify_report_free(&rep);
        lg_prop_free(&p);
    }
    lg_net_free(&net);
}
END_TEST

/* Graph variants written by tests/onnx_conv_make.py, compared with its
 * independent numpy evaluation; refused ops must name themselves. */
static int conv_sh(const char *cmd)
{
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    char buf[256];
    while (fgets(buf, sizeof buf, p)) {
    }
    return pclose(p);
}

START_TEST(test_conv_onnx_variants)
{
    const char *dir = lg_test_tmpfile("_conv_models");
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s %s/tests/onnx_conv_make.py %s 2>&1", LG_PYTHON3, LG_SOURCE_DIR, dir);
    ck_assert_msg(conv_sh(cmd) == 0, "tests/onnx_conv_make.py failed (needs python3-onnx, python3-numpy)");
    static const char *ok[] = {"conv_bn",      "pad_avgpool",    "nhwc",           "global_avg",
                               "maxpool_in",   "maxpool_relu",   "maxpool_global", "maxpool_overlap",
                               "conv_group",   "conv_transpose", "conv_relu6",     "resize",
                               "upsample9"};
    /* a symmetric zero Pad before a Conv is its padding; a Transpose before a Conv is an
     * index-map layer of its own (the conv is never written out dense); a Conv with nothing
     * pending stays a conv layer through BatchNormalization */
    /* a MaxPool is one max-pool node (lg_ox_maxpool), the Flatten after it the identity */
    /* grouped convs are convs with the full kernel, zero between groups */
    /* a ConvTranspose is an index-map layer (the zeros) and a conv */
    /* ReLU6 = 6 − relu(6 − relu(z)): its negations per channel are 1x1 convs (never an n x n
     * diagonal, also after the Flatten) */
    /* Resize and Upsample (nearest) are index maps */
    static const int layers[] = {2, 3, 3, 2, 1, 3, 2, 1, 3, 5, 7, 5, 1};
    static const lg_layer_kind kind0[] = {LG_LAYER_CONV2D, LG_LAYER_CONV2D, LG_LAYER_INDEX,  LG_LAYER_CONV2D,
                                          LG_LAYER_MAX,    LG_LAYER_CONV2D, LG_LAYER_CONV2D, LG_LAYER_MAX,
                                          LG_LAYER_CONV2D, LG_LAYER_INDEX,  LG_LAYER_CONV2D, LG_LAYER_INDEX,
                                          LG_LAYER_INDEX};
    for (size_t m = 0; m < sizeof ok / sizeof ok[0]; m++) {
        char path[600];
        snprintf(path, sizeof path, "%s/%s.onnx", dir, ok[m]);
        lg_net net;
        ck_assert_msg(lg_net_load(&net, path) == LG_OK, "%s: %s", ok[m], lg_errmsg());
        ck_assert_msg(net.n_layers == layers[m], "%s: %d layers", ok[m], net.n_layers);
        ck_assert_msg(net.layers[0].lin.kind == kind0[m], "%s: layer 0 kind %d", ok[m], (int)net.layers[0].lin.kind);
        for (int k = 0; strcmp(ok[m], "conv_relu6") == 0 && k + 1 < net.n_layers; k++)
            ck_assert_msg(net.layers[k].lin.kind == LG_LAYER_CONV2D, "conv_relu6: layer %d kind %d", k,
                          (int)net.layers[k].lin.kind);
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
                ck_assert_msg(fabs(y[j] - want[j]) <= 1e-9 * (1 + fabs(want[j])), "%s row %d output %d: %.17g vs numpy %.17g",
                              ok[m], rows, j, y[j], want[j]);
            rows++;
        }
        ck_assert_int_eq(rows, 4);
        if (lg_net_has_max(&net)) { /* the exact ReLU form computes the same outputs */
            lg_net low;
            ck_assert_int_eq(lg_net_lower_max(&low, &net, 0), LG_OK);
            ck_assert_int_eq(lg_net_has_max(&low), 0);
            ck_assert_int_gt(low.n_layers, net.n_layers);
            double *y2 = malloc((size_t)no * sizeof *y2), *s2 = malloc(2 * (size_t)lg_net_max_width(&low) * sizeof *s2);
            rewind(f);
            for (int row = 0; row < 4; row++) {
                for (int i = 0; i < net.n_in; i++) ck_assert_int_eq(fscanf(f, "%lf", &x[i]), 1);
                for (int j = 0; j < no; j++) ck_assert_int_eq(fscanf(f, "%lf", &want[j]), 1);
                lg_net_forward(&net, x, y, scr);
                lg_net_forward(&low, x, y2, s2);
                for (int j = 0; j < no; j++)
                    ck_assert_msg(fabs(y[j] - y2[j]) <= 1e-12 * (1 + fabs(y[j])), "%s row %d output %d: %.17g vs %.17g",
                                  ok[m], row, j, y[j], y2[j]);
            }
            free(y2);
            free(s2);
            lg_net_free(&low);
        }
        fclose(f);
        free(x);
        free(scr);
        lg_net_free(&net);
    }
    static const struct {
        const char *name, *says;
        lg_status st;
    } bad[] = {{"bad_maxpool", "asymmetric", LG_ERR_UNSUPPORTED},
               {"bad_maxpool_pads", "pads", LG_ERR_UNSUPPORTED},
               {"bad_maxpool_dil", "dilations", LG_ERR_UNSUPPORTED},
               {"bad_maxpool_ceil", "ceil_mode", LG_ERR_UNSUPPORTED},
               {"bad_avg3", "1/9", LG_ERR_UNSUPPORTED},
               {"bad_group", "in group = 2; the value has 3 channels", LG_ERR_FORMAT},
               {"bad_dilation", "dilation", LG_ERR_UNSUPPORTED}};
    for (size_t m = 0; m < sizeof bad / sizeof bad[0]; m++) {
        char path[600];
        snprintf(path, sizeof path, "%s/%s.onnx", dir, bad[m].name);
        lg_net net;
        ck_assert_int_eq(lg_net_load(&net, path), bad[m].st);
        ck_assert_msg(strstr(lg_errmsg(), bad[m].says) != NULL, "%s: %s", bad[m].name, lg_errmsg());
    }
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    conv_sh(cmd);
}
END_TEST

/* PyTorch exports with nn.MaxPool2d (tests/fixtures/maxpool/gen.py): after
 * Conv+ReLU (inputs ≥ 0) and after a Conv alone (either sign); the imported
 * rewrite reproduces torch's float32 outputs. */
START_TEST(test_maxpool_torch)
{
    static const char *names[] = {"relu_pool", "conv_pool"};
    char path[600];
    lg_npy X, Y;
    snprintf(path, sizeof path, "%s/maxpool/X.npy", LG_FIXTURES);
    ck_assert_msg(lg_npy_load(&X, path) == LG_OK, "%s", lg_errmsg());
    for (size_t v = 0; v < sizeof names / sizeof names[0]; v++) {
        lg_net net;
        snprintf(path, sizeof path, "%s/maxpool/%s.onnx", LG_FIXTURES, names[v]);
        ck_assert_msg(lg_net_load(&net, path) == LG_OK, "%s: %s", names[v], lg_errmsg());
        snprintf(path, sizeof path, "%s/maxpool/%s_y.npy", LG_FIXTURES, names[v]);
        ck_assert_msg(lg_npy_load(&Y, path) == LG_OK, "%s", lg_errmsg());
        ck_assert_int_eq((int)X.cols, net.n_in);
        ck_assert_int_eq((int)Y.cols, lg_net_n_out(&net));
        ck_assert_int_eq((int)X.n, (int)Y.n);
        int max_layers = 0;
        for (int k = 0; k < net.n_layers; k++) max_layers += net.layers[k].lin.kind == LG_LAYER_MAX;
        ck_assert_msg(max_layers >= 1, "%s: %d max-pool nodes", names[v], max_layers);
        double y[8], *scr = malloc(2 * (size_t)lg_net_max_width(&net) * sizeof *scr);
        for (size_t r = 0; r < X.n; r++) {
            lg_net_forward(&net, X.data + r * X.cols, y, scr);
            for (size_t j = 0; j < Y.cols; j++) {
                double w = Y.data[r * Y.cols + j];
                ck_assert_msg(fabs(y[j] - w) <= 1e-6 * (1 + fabs(w)), "%s row %zu out %zu: %.17g vs torch %.17g",
                              names[v], r, j, y[j], w);
            }
        }
        free(scr);
        lg_npy_free(&Y);
        lg_net_free(&net);
    }
    lg_npy_free(&X);
}
END_TEST

/* tests/fixtures/maxpool/tiny_pool.onnx (Conv 1x1, MaxPool 1x2 on values of
 * either sign, Linear: a max-pool node) with random conv and linear weights:
 * lg_verify_run agrees with the exact enumeration oracle on the node's
 * densified ReLU form, both verdicts. */
START_TEST(test_maxpool_oracle)
{
    char path[600];
    snprintf(path, sizeof path, "%s/maxpool/tiny_pool.onnx", LG_FIXTURES);
    lg_net base;
    ck_assert_msg(lg_net_load(&base, path) == LG_OK, "%s", lg_errmsg());
    ck_assert_int_eq(base.n_in, 4);
    ck_assert_int_eq(lg_net_n_out(&base), 2);
    int decided = 0, sat = 0, unsat = 0;
    for (int seed = 0; seed < 40; seed++) {
        lg_net net, dense;
        ck_assert_int_eq(lg_net_copy(&net, &base), LG_OK);
        lg_rng r;
        lg_rng_init(&r, 500 + (uint64_t)seed, 0);
        /* only the file's own Conv (first) and Linear (last) layers: the max-pool node between them */
        int ends[2] = {0, net.n_layers - 1};
        for (int e = 0; e < 2; e++) {
            lg_layer *L = &net.layers[ends[e]];
            size_t nw = lg_layer_n_weights(L);
            for (size_t i = 0; i < nw; i++) L->lin.W[i] = lg_rng_normal(&r);
            if (L->lin.kind == LG_LAYER_CONV2D) {
                int hw = L->lin.conv.h_out * L->lin.conv.w_out;
                for (int c = 0; c < L->lin.conv.c_out; c++) {
                    double bc = 0.3 * lg_rng_normal(&r);
                    for (int i = 0; i < hw; i++) L->b[c * hw + i] = bc;
                }
            } else {
                for (int i = 0; i < L->n_out; i++) L->b[i] = 0.3 * lg_rng_normal(&r);
            }
        }
        double x0[4], y[2], scr[64];
        for (int i = 0; i < 4; i++) x0[i] = 2 * lg_rng_uniform(&r) - 1;
        /* the imported layers compute the max exactly: compare with a direct max */
        {
            const lg_layer *C0 = &net.layers[0], *Ln = &net.layers[net.n_layers - 1];
            double z[8], m[4], want[2];
            lg_conv_forward(C0, x0, z);
            for (int c = 0; c < 2; c++)
                for (int row = 0; row < 2; row++) m[c * 2 + row] = fmax(z[c * 4 + row * 2], z[c * 4 + row * 2 + 1]);
            for (int j = 0; j < 2; j++) {
                want[j] = Ln->b[j];
                for (int i = 0; i < 4; i++) want[j] += Ln->lin.W[j * 4 + i] * m[i];
            }
            lg_net_forward(&net, x0, y, scr);
            for (int j = 0; j < 2; j++) ck_assert_msg(fabs(y[j] - want[j]) <= 1e-12 * (1 + fabs(want[j])), "seed %d", seed);
        }
        int label = y[1] > y[0];
        lg_prop p;
        double eps = 0.05 + 0.4 * lg_rng_uniform(&r);
        ck_assert_int_eq(lg_prop_robustness(&p, x0, 4, eps, -10, 10, label, 2, 0.0), LG_OK);
        ck_assert_int_eq(lg_net_densify(&dense, &net, 0), LG_ERR_UNSUPPORTED); /* not a linear map */
        {
            lg_net low;
            ck_assert_int_eq(lg_net_lower_max(&low, &net, 0), LG_OK);
            ck_assert_int_eq(lg_net_densify(&dense, &low, 0), LG_OK); /* the oracle's net: the ReLU form */
            lg_net_free(&low);
        }
        lg_answer ans;
        int dec;
        if (!conv_oracle_check(&net, &dense, &p, seed, &ans, &dec)) goto next;
        decided += dec;
        sat += ans == LG_ANSWER_SAT;
        unsat += ans == LG_ANSWER_UNSAT;
    next:
        lg_prop_free(&p);
        lg_net_free(&dense);
        lg_net_free(&net);
    }
    lg_net_free(&base);
    ck_assert_msg(sat > 0 && unsat > 0, "sat %d unsat %d", sat, unsat);
    ck_assert_int_eq(decided, sat + unsat);
}
END_TEST

/* A MaxPool after a smooth activation (tests/fixtures/maxpool/gelu_pool.onnx):
 * ReLU substitution replaces only the GELU layer (the max-pool node is
 * kept), and the certified deviation bound of the pair's exact ReLU form
 * holds the deviation of sampled inputs. */
START_TEST(test_maxpool_after_gelu)
{
    char path[600];
    snprintf(path, sizeof path, "%s/maxpool/gelu_pool.onnx", LG_FIXTURES);
    lg_net ref, rn;
    ck_assert_msg(lg_net_load(&ref, path) == LG_OK, "%s", lg_errmsg());
    ck_assert_int_eq(lg_anneal_count_smooth(&ref), 1);
    ck_assert_int_eq(lg_anneal_to_relu(&rn, &ref), LG_OK);
    ck_assert_int_eq(lg_anneal_count_smooth(&rn), 0);
    for (int k = 1; k < ref.n_layers; k++) ck_assert_int_eq(rn.layers[k].act, ref.layers[k].act);
    lg_dev d;
    /* the deviation bound refuses max-pool nodes and takes the pair's exact ReLU form */
    ck_assert_int_eq(lg_net_has_max(&ref), 1);
    ck_assert_int_eq(lg_dev_init(&d, &rn, &ref), LG_ERR_UNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(lg_errmsg(), "max-pool"));
    {
        lg_net a, b;
        ck_assert_int_eq(lg_net_lower_max(&a, &rn, 1), LG_OK);
        ck_assert_int_eq(lg_net_lower_max(&b, &ref, 1), LG_OK);
        lg_net_free(&rn);
        lg_net_free(&ref);
        rn = a;
        ref = b;
    }
    ck_assert_msg(lg_dev_init(&d, &rn, &ref) == LG_OK, "%s", lg_errmsg());
    lg_rng r;
    lg_rng_init(&r, 77, 0);
    double lo[36], hi[36], x[36], delta, e[3], y1[3], y2[3], worst = 0;
    double *scr = malloc(2 * (size_t)lg_net_max_width(&ref) * sizeof *scr);
    for (int i = 0; i < 36; i++) {
        double c = 2 * lg_rng_uniform(&r) - 1;
        lo[i] = c - 0.2, hi[i] = c + 0.2;
    }
    ck_assert_int_eq(lg_dev_bound_boxes(&d, lo, hi, 1, &delta, e, NULL), LG_OK);
    for (int t = 0; t < 2000; t++) {
        for (int i = 0; i < 36; i++) x[i] = lo[i] + (hi[i] - lo[i]) * lg_rng_uniform(&r);
        lg_net_forward(&rn, x, y1, scr);
        lg_net_forward(&ref, x, y2, scr);
        for (int j = 0; j < 3; j++) worst = fmax(worst, fabs(y1[j] - y2[j]));
    }
    ck_assert_msg(worst > 0 && worst <= delta, "sampled %.17g, bound %.17g", worst, delta);
    free(scr);
    lg_dev_free(&d);
    lg_net_free(&rn);
    lg_net_free(&ref);
}
END_TEST

/* ---- training: the float im2col model against finite differences of the
 * double forward pass (tied biases: a channel's bias moves every position) */
static double conv_loss(const lg_net *net, const float *X, const uint8_t *lab, int B)
{
    int C = lg_net_n_out(net);
    double *scr = malloc(2 * (size_t)lg_net_max_width(net) * sizeof *scr), x[64], y[8], sum = 0;
    for (int r = 0; r < B; r++) {
        for (int i = 0; i < net->n_in; i++) x[i] = X[r * net->n_in + i];
        lg_net_forward(net, x, y, scr);
        double mx = y[0], z = 0;
        for (int j = 1; j < C; j++) mx = fmax(mx, y[j]);
        for (int j = 0; j < C; j++) z += exp(y[j] - mx);
        sum += log(z) + mx - y[lab[r]];
    }
    free(scr);
    return sum / B;
}

/* set the layer parameter `which` (s for λ/β layers, a for prelu) and its λ */
static void conv_set_param(lg_net *net, lg_layer *L, double v)
{
    L->s = v;
    if (L->act == LG_ACT_LGELU || L->act == LG_ACT_SWISH) L->lambda = lg_lambda_from_s(v, net->t);
    if (L->act == LG_ACT_PRELU) L->lambda = v;
}

START_TEST(test_conv_train_finite_differences)
{
    const lg_act kinds[] = {LG_ACT_LGELU, LG_ACT_GELU, LG_ACT_RELU, LG_ACT_SWISH, LG_ACT_PRELU};
    lg_conv g1 = {.c_out = 3, .kh = 3, .kw = 2, .sh = 2, .sw = 1, .ph = 1};
    lg_conv g2 = {.c_out = 2, .kh = 2, .kw = 2, .sh = 1, .sw = 2, .pw = 1};
    for (int a = 0; a < 5; a++) {
        lg_net net;
        conv_net(&net, 2, 5, 4, &g1, &g2, 4, kinds[a]);
        lg_rng r;
        lg_rng_init(&r, 40 + a, 0);
        lg_test_randomize(&net, &r, 0.6);
        for (int k = 0; k < net.n_layers; k++) {
            lg_layer *L = &net.layers[k];
            size_t hw = L->lin.kind == LG_LAYER_CONV2D ? (size_t)L->lin.conv.h_out * L->lin.conv.w_out : 1;
            for (int o = 0; o < L->n_out; o++) L->b[o] = (float)L->b[(size_t)o / hw * hw];
            conv_set_param(&net, L, (float)L->s);
        }
        for (size_t i = 0; i < net.n_params; i++) net.params[i] = (float)net.params[i];
        float X[12 * 40];
        uint8_t lab[12];
        for (int i = 0; i < 12 * 40; i++) X[i] = (float)lg_rng_normal(&r);
        for (int i = 0; i < 12; i++) lab[i] = (uint8_t)lg_rng_below(&r, 4);
        lg_model m;
        ck_assert_int_eq(lg_model_init(&m, &net, 12), LG_OK);
        uint32_t idx[12];
        for (int i = 0; i < 12; i++) idx[i] = (uint32_t)i;
        lg_model_gather(&m, X, idx, 12);
        double loss;
        lg_model_forward(&m, 12, lab, &loss, NULL);
        ck_assert_double_eq_tol(loss, conv_loss(&net, X, lab, 12), 1e-5);
        lg_model_zero_grad(&m);
        lg_model_backward(&m, 12, lab);
        const double h = 1e-6;
        int checked = 0;
        for (int k = 0; k < net.n_layers; k++) {
            lg_layer *L = &net.layers[k];
            lg_mlayer *M = &m.layers[k];
            size_t hw = L->lin.kind == LG_LAYER_CONV2D ? (size_t)L->lin.conv.h_out * L->lin.conv.w_out : 1;
            size_t nw = M->n_w, nb = M->n_b;
            for (size_t i = 0; i < nw + nb + 1; i++) {
                float got;
                double fd, lp, lm;
                if (i < nw) {
                    double save = L->lin.W[i];
                    L->lin.W[i] = save + h, lp = conv_loss(&net, X, lab, 12);
                    L->lin.W[i] = save - h, lm = conv_loss(&net, X, lab, 12);
                    L->lin.W[i] = save;
                    got = M->dW[i];
                } else if (i < nw + nb) {
                    size_t c = i - nw;
                    double save = L->b[c * hw];
                    for (size_t q = 0; q < hw; q++) L->b[c * hw + q] = save + h;
                    lp = conv_loss(&net, X, lab, 12);
                    for (size_t q = 0; q < hw; q++) L->b[c * hw + q] = save - h;
                    lm = conv_loss(&net, X, lab, 12);
                    for (size_t q = 0; q < hw; q++) L->b[c * hw + q] = save;
                    got = M->db[c];
                } else if (lg_act_has_param(L->act)) {
                    double save = L->s;
                    conv_set_param(&net, L, save + h), lp = conv_loss(&net, X, lab, 12);
                    conv_set_param(&net, L, save - h), lm = conv_loss(&net, X, lab, 12);
                    conv_set_param(&net, L, save);
                    got = *M->ds;
                } else {
                    continue;
                }
                fd = (lp - lm) / (2 * h);
                ck_assert_msg(fabs(fd - got) <= 1e-3 * fabs(fd) + 5e-6, "%s layer %d param %zu: backward %.9g, FD %.9g",
                              lg_act_name(kinds[a]), k, i, got, fd);
                checked++;
            }
        }
        ck_assert_int_gt(checked, 60);
        /* the model written back is the net it came from */
        lg_net back;
        ck_assert_int_eq(lg_net_copy(&back, &net), LG_OK);
        ck_assert_int_eq(lg_model_to_net(&m, &back), LG_OK);
        ck_assert_mem_eq(back.params, net.params, net.n_params * sizeof(double));
        lg_net_free(&back);
        lg_model_free(&m);
        lg_net_free(&net);
    }
}
END_TEST

/* lgelu encode on a conv net: each row holds only the kernel's support */
/* Keep only the affine rows of an encoding, in place: LP rows " r_k_i: ..." with
 * their continuation lines, SMT-LIB "(assert (= z_k_i ...))". */
static void conv_affine_rows(char *t, int lp)
{
    char *w = t, *line = t;
    int in_row = 0;
    while (*line) {
        char *end = strchr(line, '\n');
        size_t n = end ? (size_t)(end - line) + 1 : strlen(line);
        int keep = lp ? (strncmp(line, " r_", 3) == 0 || (in_row && strncmp(line, "    ", 4) == 0))
                      : strncmp(line, "(assert (= z_", 13) == 0;
        if (lp) in_row = keep;
        if (keep) {
            memmove(w, line, n);
            w += n;
        }
        line += n;
    }
    *w = '\0';
}

START_TEST(test_conv_encode_sparse_rows)
{
    lg_conv g1 = {.c_out = 3, .kh = 2, .kw = 3, .sh = 1, .sw = 1};
    lg_conv g2 = {.c_out = 2, .kh = 2, .kw = 2, .sh = 2, .sw = 2};
    lg_net net;
    conv_net(&net, 2, 6, 7, &g1, &g2, 3, LG_ACT_RELU);
    lg_rng r;
    lg_rng_init(&r, 5, 0);
    lg_test_randomize(&net, &r, 0.5);
    const char *np = lg_test_tmpfile(".lgnet"), *xp = lg_test_tmpfile(".txt"), *lp = lg_test_tmpfile(".lp");
    ck_assert_int_eq(lg_netfile_write(&net, np), LG_OK);
    FILE *f = fopen(xp, "w");
    for (int i = 0; i < net.n_in; i++) fprintf(f, "%.3f%c", lg_rng_uniform(&r), i + 1 < net.n_in ? ' ' : '\n');
    fclose(f);
    char args[1024];
    snprintf(args, sizeof args, "encode %s --input %s --eps 0.05 --format lp -o %s", np, xp, lp);
    ck_assert_int_eq(lg_test_cli(args, NULL), 0);
    unsigned char *buf;
    size_t len;
    ck_assert_int_eq(lg_file_slurp(lp, 1 << 26, &buf, &len), LG_OK);
    char *text = realloc(buf, len + 1);
    text[len] = '\0';
    /* rows r_0_0 and r_1_0: 1 + c_in·kh·kw terms (no zero coefficients; layer 1 also
     * leaves out the inputs whose ReLU is off on the whole box) */
    static const char *rows[2][2] = {{" r_0_0:", " r_0_1:"}, {" r_1_0:", " r_1_1:"}};
    for (int k = 0; k < 2; k++) {
        char *a = strstr(text, rows[k][0]), *b = strstr(text, rows[k][1]);
        ck_assert(a && b && b > a);
        int terms = 0;
        for (char *q = a; q < b; q++) terms += (q[0] == 'X' || q[0] == 'x' || q[0] == 'z' || q[0] == 'a') && q[1] == '_' && q[-1] == ' ';
        const lg_conv *c = &net.layers[k].lin.conv;
        int support = 1 + c->c_in * c->kh * c->kw;
        ck_assert_msg(k == 0 ? terms == support : terms > 1 && terms <= support, "layer %d row 0: %d terms", k, terms);
    }
    free(text);
    /* the conv net and its dense form give the same affine rows, byte for byte (the
     * encoders take a conv's rows through core/linop.h, zeros left out either way);
     * the bounds in the encodings come from CROWN and agree only within rounding */
    lg_net dense;
    ck_assert_int_eq(lg_net_densify(&dense, &net, 0), LG_OK);
    const char *dp = lg_test_tmpfile("_dense.lgnet");
    ck_assert_int_eq(lg_netfile_write(&dense, dp), LG_OK);
    static const char *fmts[2] = {"lp", "smt2"};
    for (int fi = 0; fi < 2; fi++) {
        char *t[2];
        for (int d = 0; d < 2; d++) {
            const char *out = lg_test_tmpfile(d ? "_d.enc" : "_c.enc");
            snprintf(args, sizeof args, "encode %s --input %s --eps 0.05 --format %s -o %s", d ? dp : np, xp, fmts[fi], out);
            ck_assert_int_eq(lg_test_cli(args, NULL), 0);
            ck_assert_int_eq(lg_file_slurp(out, 1 << 26, &buf, &len), LG_OK);
            t[d] = realloc(buf, len + 1);
            t[d][len] = '\0';
            conv_affine_rows(t[d], fi == 0);
        }
        ck_assert_msg(strlen(t[0]) > 1000 && strcmp(t[0], t[1]) == 0, "%s: the conv and dense rows differ", fmts[fi]);
        free(t[0]);
        free(t[1]);
    }
    lg_net_free(&dense);
    lg_net_free(&net);
}
END_TEST

/* Certified deviation through conv layers: the bound covers sampled
 * |f_ReLU − f_λGELU| on every box, for lgelu, swish and prelu nets. */
START_TEST(test_conv_deviation_covers_samples)
{
    const lg_act kinds[] = {LG_ACT_LGELU, LG_ACT_SWISH, LG_ACT_PRELU};
    lg_conv g1 = {.c_out = 3, .kh = 3, .kw = 2, .sh = 1, .sw = 1, .ph = 1};
    lg_conv g2 = {.c_out = 2, .kh = 2, .kw = 2, .sh = 2, .sw = 1};
    for (int a = 0; a < 3; a++) {
        lg_net ref, rn;
        conv_net(&ref, 1, 5, 4, &g1, &g2, 3, kinds[a]);
        lg_rng r;
        lg_rng_init(&r, 70 + a, 0);
        lg_test_randomize(&ref, &r, 0.8);
        for (int k = 0; k < ref.n_layers; k++)
            if (ref.layers[k].act == LG_ACT_LGELU || ref.layers[k].act == LG_ACT_SWISH)
                ref.layers[k].lambda = 3.0, ref.layers[k].s = lg_s_from_lambda(3.0, ref.t);
        ck_assert_int_eq(lg_anneal_to_relu(&rn, &ref), LG_OK);
        ck_assert(lg_net_has_conv(&rn));
        lg_dev d;
        ck_assert_int_eq(lg_dev_init(&d, &rn, &ref), LG_OK);
        double lo[20], hi[20], x[20], y1[3], y2[3], delta, *scr = malloc(2 * (size_t)lg_net_max_width(&rn) * sizeof *scr);
        for (int b = 0; b < 5; b++) {
            for (int i = 0; i < 20; i++) {
                double c = lg_rng_normal(&r), w = 0.05 + 0.5 * lg_rng_uniform(&r);
                lo[i] = c - w, hi[i] = c + w;
            }
            ck_assert_int_eq(lg_dev_bound_boxes(&d, lo, hi, 1, &delta, NULL, NULL), LG_OK);
            ck_assert(isfinite(delta));
            double seen = 0;
            for (int t = 0; t < 300; t++) {
                for (int i = 0; i < 20; i++) x[i] = lo[i] + (hi[i] - lo[i]) * lg_rng_uniform(&r);
                lg_net_forward(&rn, x, y1, scr);
                lg_net_forward(&ref, x, y2, scr);
                seen = fmax(seen, max_abs_diff(y1, y2, 3));
            }
            ck_assert_msg(seen <= delta, "%s box %d: observed %g above the bound %g", lg_act_name(kinds[a]), b, seen, delta);
            ck_assert(kinds[a] == LG_ACT_PRELU || seen > 0);
        }
        free(scr);
        lg_dev_free(&d);
        lg_net_free(&rn);
        lg_net_free(&ref);
    }
}
END_TEST

START_TEST(test_conv_arch_parse)
{
    int dims[8];
    lg_conv convs[8];
    ck_assert_int_eq(lg_net_arch_parse("1x28x28,c8k3s2,c16k3s2,10", dims, convs, 8), 3);
    ck_assert_int_eq(dims[0], 784);
    ck_assert_int_eq(dims[1], 8 * 13 * 13);
    ck_assert_int_eq(dims[2], 16 * 6 * 6);
    ck_assert_int_eq(dims[3], 10);
    ck_assert_int_eq(convs[1].c_in, 8);
    ck_assert_int_eq(convs[1].h_in, 13);
    ck_assert_int_eq(convs[2].c_out, 0);
    ck_assert_int_eq(lg_net_arch_parse("3x20x20,c5k5x1p2x0,c4k2s2x1,7", dims, convs, 8), 3);
    ck_assert_int_eq(convs[0].kh * 10 + convs[0].kw, 51);
    ck_assert_int_eq(convs[0].h_out * 100 + convs[0].w_out, 2020);
    ck_assert_int_eq(convs[1].h_out * 100 + convs[1].w_out, 1019); /* stride 2x1 */
    ck_assert_int_eq(lg_net_arch_parse("784,256,10", dims, convs, 8), 2);
    ck_assert_int_eq(convs[0].c_out + convs[1].c_out, 0);
    static const char *bad[] = {"784,c8k3,10", "1x28x28,c8k30,10", "1x28x28,c8k3,10,c2k1", "1x28,10", "1x28x28,",
                                "1x28x28,c0k3,10", "1x28x28,c8k3q,10", "10", "1x28x28,c8k3p3,10"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        ck_assert_msg(lg_net_arch_parse(bad[i], dims, convs, 8) < 0, "accepted '%s'", bad[i]);
}
END_TEST

START_TEST(test_conv_limits)
{
    lg_net net;
    lg_conv bad = {.c_in = 1, .h_in = 3, .w_in = 3, .c_out = 1, .h_out = 2, .w_out = 2, .kh = 4, .kw = 1, .sh = 1, .sw = 1};
    const lg_conv *convs[1] = {&bad};
    int dims[2] = {9, 4};
    ck_assert_int_eq(lg_net_init_conv(&net, 1, dims, convs, LG_ACT_IDENTITY), LG_ERR_ARG);
    bad.kh = 2, bad.kw = 2;
    ck_assert_int_eq(lg_net_init_conv(&net, 1, dims, convs, LG_ACT_IDENTITY), LG_OK);
    net.layers[0].lin.conv.h_out = 3; /* corrupt geometry */
    ck_assert_int_eq(lg_net_validate(&net), LG_ERR_FORMAT);
    lg_net_free(&net);
}
END_TEST

Suite *suite_conv(void)
{
    Suite *s = suite_create("conv");
    TCase *tc = tcase_create("core");
    lg_tcase_timeout(tc, 300);
    tcase_add_test(tc, test_conv_forward_reference);
    tcase_add_test(tc, test_conv_netfile_v3);
    tcase_add_test(tc, test_conv_onnx_roundtrip);
    tcase_add_test(tc, test_conv_densify_cap);
    tcase_add_test(tc, test_conv_oracle);
    tcase_add_test(tc, test_maxpool_torch);
    tcase_add_test(tc, test_maxpool_oracle);
    tcase_add_test(tc, test_maxpool_after_gelu);
    tcase_add_test(tc, test_conv_linop_matches_dense);
    tcase_add_test(tc, test_conv_bounds_structured);
    tcase_add_test(tc, test_conv_verify_under_cap);
    tcase_add_test(tc, test_conv_collins);
    tcase_add_test(tc, test_conv_onnx_variants);
    tcase_add_test(tc, test_conv_train_finite_differences);
    tcase_add_test(tc, test_conv_encode_sparse_rows);
    tcase_add_test(tc, test_conv_deviation_covers_samples);
    tcase_add_test(tc, test_conv_enclosure_matches_dense);
    suite_add_tcase(s, tc);
    TCase *tl = tcase_create("limits");
    lg_tcase_timeout(tl, 120);
    tcase_add_test(tl, test_conv_limits);
    tcase_add_test(tl, test_conv_arch_parse);
    suite_add_tcase(s, tl);
    return s;
}
