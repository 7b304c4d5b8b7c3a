/* check_transformer.c — the Transformer nodes (core/net.h, DESIGN.md §1
 * "Transformer nodes"): product, softmax and layernorm in random small
 * attention blocks; the forward pass against an independent evaluation by
 * tokens and heads; copy; the native format (version 7) round trip and its
 * refusals; validation; the stages that do not take the nodes refuse them. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/net.h"
#include "core/exact.h"
#include "core/netfile.h"
#include "core/rng.h"
#include "gen_tnet.h"
#include "testutil.h"
#include "verify/attack.h"
#include "verify/bounds.h"
#include "verify/prop.h"
#include "verify/verify.h"

#include <stdint.h>
#include <stdio.h>
#include <zlib.h>

/* The whole file at path (caller frees), its length in *len. */
static unsigned char *tt_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc((size_t)n);
    ck_assert(fread(b, 1, (size_t)n, f) == (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return b;
}

/* Recompute the trailing CRC-32 of a file image (netfile.h). */
static void tt_fix_crc(unsigned char *b, size_t len)
{
    uint32_t c = (uint32_t)crc32_z(0L, b, len - 4);
    for (int i = 0; i < 4; i++) b[len - 4 + (size_t)i] = (unsigned char)(c >> (8 * i));
}

/* y = W·x + b for a dense layer L reading x, or a per-token map's block on each token. */
static void tt_dense(const lg_layer *L, const double *x, double *y)
{
    int tok = L->lin.kind == LG_LAYER_TOKMAP, bi = tok ? L->lin.conv.c_in : L->lin.n_in, bo = tok ? L->lin.conv.c_out : L->n_out;
    for (int o = 0; o < L->n_out; o++) {
        double s = L->b[o];
        const double *xt = x + (size_t)(o / bo) * (size_t)bi;
        for (int i = 0; i < bi; i++) s += L->lin.W[(size_t)(o % bo) * bi + i] * xt[i];
        y[o] = s;
    }
}

/* The block of gen_tnet.h written out by tokens and heads (no index tables). */
static void tt_eval_by_hand(const lg_net *net, const double *x, double *y)
{
    int T, d, h;
    lg_test_tnet_shape(net, &T, &d, &h);
    int dh = d / h, n = T * d;
    const lg_layer *L = net->layers;
    double ln[64], q[64], k[64], v[64], s[2 * 5 * 5], a[64], rr[64], m[128];
    for (int t = 0; t < T; t++) {
        double mu = 0, var = 0;
        for (int i = 0; i < d; i++) mu += x[t * d + i] / d;
        for (int i = 0; i < d; i++) var += (x[t * d + i] - mu) * (x[t * d + i] - mu) / d;
        for (int i = 0; i < d; i++)
            ln[t * d + i] = L[0].lin.W[i] * (x[t * d + i] - mu) / sqrt(var + L[0].lin.op.eps) + L[0].lin.W[d + i];
    }
    tt_dense(&L[1], ln, q);
    tt_dense(&L[2], ln, k);
    tt_dense(&L[3], ln, v);
    for (int hh = 0; hh < h; hh++)
        for (int i = 0; i < T; i++) {
            double z = 0;
            for (int j = 0; j < T; j++) {
                double dot = 0;
                for (int c = 0; c < dh; c++) dot += q[i * d + hh * dh + c] * k[j * d + hh * dh + c];
                s[(hh * T + i) * T + j] = exp(dot);
                z += exp(dot);
            }
            for (int j = 0; j < T; j++) s[(hh * T + i) * T + j] /= z;
        }
    for (int i = 0; i < T; i++)
        for (int hh = 0; hh < h; hh++)
            for (int c = 0; c < dh; c++) {
                double acc = 0;
                for (int j = 0; j < T; j++) acc += s[(hh * T + i) * T + j] * v[j * d + hh * dh + c];
                a[i * d + hh * dh + c] = acc;
            }
    tt_dense(&L[7], a, rr);
    for (int i = 0; i < n; i++) rr[i] += x[i];
    tt_dense(&L[8], rr, m);
    for (int i = 0; i < L[8].n_out; i++) m[i] = m[i] > 0 ? m[i] : 0;
    tt_dense(&L[9], m, y);
}

static void tt_make(lg_net *net, unsigned seed)
{
    lg_rng r;
    lg_rng_init(&r, seed, 3);
    lg_test_tnet_opts o = {0};
    ck_assert_int_eq(lg_test_tnet_random(net, &r, &o), LG_OK);
}

START_TEST(test_tnet_forward_by_hand)
{
    for (unsigned seed = 1; seed <= 40; seed++) {
        lg_net net, cp;
        tt_make(&net, seed);
        ck_assert(!lg_net_is_chain(&net));
        ck_assert_int_eq(lg_net_first_tnode(&net), 0);
        ck_assert_int_eq(lg_net_copy(&cp, &net), LG_OK);
        lg_rng r;
        lg_rng_init(&r, seed, 9);
        for (int rep = 0; rep < 5; rep++) {
            double x[64], y[4], yc[4], yh[4], scratch[512];
            for (int i = 0; i < net.n_in; i++) x[i] = 4.0 * lg_rng_uniform(&r) - 2.0;
            lg_net_forward(&net, x, y, scratch);
            lg_net_forward(&cp, x, yc, scratch);
            tt_eval_by_hand(&net, x, yh);
            for (int o = 0; o < lg_net_n_out(&net); o++) {
                ck_assert(isfinite(y[o]));
                ck_assert_msg(fabs(y[o] - yh[o]) <= 1e-11 * (1.0 + fabs(yh[o])), "seed %u output %d: %.17g vs %.17g",
                              seed, o, y[o], yh[o]);
                ck_assert(memcmp(&y[o], &yc[o], sizeof y[o]) == 0);
            }
        }
        lg_net_free(&cp);
        lg_net_free(&net);
    }
}
END_TEST

/* Softmax sums to 1 and is shift invariant; layernorm output has the group mean beta-mean when gamma = 1. */
START_TEST(test_tnet_node_identities)
{
    lg_linear sm = {.kind = LG_LAYER_SOFTMAX, .n_in = 6, .n_out = 6, .op = {.group = 3}};
    double x[6] = {1000.0, 999.0, 998.0, -3.0, 0.5, 2.0}, y[6], ys[6], xs[6];
    lg_softmax_forward(&sm, x, y);
    for (int i = 0; i < 6; i++) xs[i] = x[i] + 7.25;
    lg_softmax_forward(&sm, xs, ys);
    for (int g = 0; g < 2; g++) {
        double s = y[3 * g] + y[3 * g + 1] + y[3 * g + 2];
        ck_assert(fabs(s - 1.0) < 1e-15);
    }
    for (int i = 0; i < 6; i++) {
        ck_assert(isfinite(y[i]) && y[i] > 0);
        ck_assert(fabs(y[i] - ys[i]) < 1e-15);
    }
    ck_assert(fabs(y[0] - 1.0 / (1.0 + exp(-1.0) + exp(-2.0))) < 1e-15);
    double W[8] = {1, 1, 1, 1, 0, 0, 0, 0};
    lg_linear ln = {.kind = LG_LAYER_LAYERNORM, .n_in = 8, .n_out = 8, .W = W, .op = {.group = 4, .eps = 1e-12}};
    double u[8] = {1, 2, 3, 4, -5, -5, -5, -5}, v[8];
    W[0] = 1;
    lg_linear ln4 = ln;
    ln4.n_in = ln4.n_out = 4;
    lg_layernorm_forward(&ln4, u, v);
    double mu = 0, var = 0;
    for (int i = 0; i < 4; i++) mu += v[i] / 4;
    for (int i = 0; i < 4; i++) var += (v[i] - mu) * (v[i] - mu) / 4;
    ck_assert(fabs(mu) < 1e-15 && fabs(var - 1.0) < 1e-9);
    lg_layernorm_forward(&ln, u, v); /* a constant group: x − μ = 0, so beta */
    for (int i = 4; i < 8; i++) ck_assert(v[i] == 0.0);
}
END_TEST

START_TEST(test_tnet_netfile_round_trip)
{
    for (unsigned seed = 1; seed <= 10; seed++) {
        lg_net net, back;
        tt_make(&net, seed);
        const char *path = lg_test_tmpfile(".lgnet");
        ck_assert_int_eq(lg_netfile_write(&net, path), LG_OK);
        size_t len;
        unsigned char *buf = tt_read_file(path, &len);
        ck_assert_ptr_nonnull(buf);
        ck_assert_int_eq(buf[8], 7); /* version 7: the lowest that holds the nodes and the per-token maps */
        if (seed == 1) { /* `lgelu info` names every node */
            char args[512];
            const char *out = lg_test_tmpfile(".txt");
            snprintf(args, sizeof args, "info %s", path);
            ck_assert_int_eq(lg_test_cli(args, out), 0);
            const char *txt = lg_test_slurp(out);
            ck_assert_msg(strstr(txt, "layernorm from input over groups of") && strstr(txt, "softmax from layer 4") &&
                              strstr(txt, "product of layer 1") && strstr(txt, "product of layer 5"),
                          "%s", txt);
        }
        ck_assert_int_eq(lg_netfile_read(&back, path), LG_OK);
        ck_assert_int_eq(back.n_layers, net.n_layers);
        ck_assert(back.n_params == net.n_params && back.n_maps == net.n_maps);
        ck_assert(memcmp(back.params, net.params, net.n_params * sizeof *net.params) == 0);
        ck_assert(memcmp(back.maps, net.maps, net.n_maps * sizeof *net.maps) == 0);
        for (int k = 0; k < net.n_layers; k++) {
            ck_assert_int_eq(back.layers[k].lin.kind, net.layers[k].lin.kind);
            ck_assert(memcmp(&back.layers[k].lin.op, &net.layers[k].lin.op, sizeof net.layers[k].lin.op) == 0);
            ck_assert_int_eq(back.layers[k].lin.src, net.layers[k].lin.src);
        }
        /* every truncation is refused with a message, never a crash */
        for (size_t cut = 0; cut < len; cut += 1 + len / 97) {
            lg_net t;
            ck_assert_int_ne(lg_netfile_parse(&t, buf, cut, "cut"), LG_OK);
        }
        /* an index-table entry out of range (the checksum recomputed) is refused naming the table */
        {
            unsigned char *bad = malloc(len);
            memcpy(bad, buf, len);
            size_t pos_maps = len - 4 - 4 * net.n_maps;
            size_t ia0 = 0; /* the first product node's first ia entry: maps before it are none (layers 0..3 have none) */
            for (int i = 0; i < 4; i++) bad[pos_maps + 4 * ia0 + (size_t)i] = (unsigned char)(100000u >> (8 * i));
            tt_fix_crc(bad, len);
            lg_net t;
            ck_assert_int_ne(lg_netfile_parse(&t, bad, len, "bad"), LG_OK);
            ck_assert_msg(strstr(lg_errmsg(), "index table ia") != NULL, "%s", lg_errmsg());
            /* the version field lowered to 5: the kinds are refused */
            memcpy(bad, buf, len);
            bad[8] = 5;
            tt_fix_crc(bad, len);
            ck_assert_int_ne(lg_netfile_parse(&t, bad, len, "old"), LG_OK);
            ck_assert_msg(strstr(lg_errmsg(), "unknown layer kind 6 in a version 5 file") != NULL, "%s", lg_errmsg());
            /* lowered to 6: the per-token map (kind 7, layer 1) is refused */
            memcpy(bad, buf, len);
            bad[8] = 6;
            tt_fix_crc(bad, len);
            ck_assert_int_ne(lg_netfile_parse(&t, bad, len, "v6"), LG_OK);
            ck_assert_msg(strstr(lg_errmsg(), "unknown layer kind 7 in a version 6 file") != NULL, "%s", lg_errmsg());
            free(bad);
        }
        free(buf);
        lg_net_free(&back);
        lg_net_free(&net);
    }
}
END_TEST

START_TEST(test_tnet_validate_refuses)
{
    lg_net net;
    tt_make(&net, 5u);
    net.layers[0].lin.op.eps = 0.0;
    ck_assert_int_eq(lg_net_validate(&net), LG_ERR_FORMAT);
    ck_assert(strstr(lg_errmsg(), "eps") != NULL);
    net.layers[0].lin.op.eps = 1e-5;
    net.layers[5].b[0] = 0.5;
    ck_assert_int_eq(lg_net_validate(&net), LG_ERR_FORMAT);
    ck_assert(strstr(lg_errmsg(), "softmax node has bias 0") != NULL);
    net.layers[5].b[0] = 0.0;
    net.layers[6].act = LG_ACT_RELU;
    ck_assert_int_eq(lg_net_validate(&net), LG_ERR_FORMAT);
    net.layers[6].act = LG_ACT_IDENTITY;
    int save = net.layers[4].lin.map[0];
    net.layers[4].lin.map[0] = net.layers[4].lin.n_in;
    ck_assert_int_eq(lg_net_validate(&net), LG_ERR_FORMAT);
    ck_assert(strstr(lg_errmsg(), "index table ia entry 0") != NULL);
    net.layers[4].lin.map[0] = save;
    net.layers[5].lin.op.group += 1;
    ck_assert_int_eq(lg_net_validate(&net), LG_ERR_FORMAT);
    net.layers[5].lin.op.group -= 1;
    ck_assert_int_eq(lg_net_validate(&net), LG_OK);
    /* build refuses a product whose second source is not earlier, or a Transformer node as a further term */
    lg_linear t0 = {.kind = LG_LAYER_BILINEAR, .n_in = 2, .src = LG_NET_INPUT, .op = {.src_b = 0, .n_in_b = 2, .K = 1}};
    lg_layer_spec sp = {2, LG_ACT_IDENTITY, 1, &t0};
    lg_net bad;
    ck_assert_int_eq(lg_net_build(&bad, 2, 1, &sp), LG_ERR_ARG);
    lg_linear t2[2] = {{.kind = LG_LAYER_DENSE, .n_in = 2, .src = LG_NET_INPUT},
                       {.kind = LG_LAYER_SOFTMAX, .n_in = 2, .src = LG_NET_INPUT, .op = {.group = 2}}};
    lg_layer_spec sp2 = {2, LG_ACT_IDENTITY, 2, t2};
    ck_assert_int_eq(lg_net_build(&bad, 2, 1, &sp2), LG_ERR_ARG);
    ck_assert(strstr(lg_errmsg(), "own term") != NULL);
    lg_net_free(&net);
}
END_TEST

/* Stages that do not take the nodes yet refuse them naming node and stage. */
START_TEST(test_tnet_stages_refuse)
{
    lg_net net, dn;
    tt_make(&net, 3u);
    ck_assert_int_eq(lg_bounds_check_net(&net), LG_ERR_UNSUPPORTED);
    ck_assert_msg(strstr(lg_errmsg(), "layernorm node (layer 0)") != NULL, "%s", lg_errmsg());
    ck_assert_int_eq(lg_bounds_check_direct(&net), LG_ERR_UNSUPPORTED);
    ck_assert_int_eq(lg_net_require_no_max(&net, "training"), LG_ERR_UNSUPPORTED);
    ck_assert(strstr(lg_errmsg(), "training") != NULL);
    ck_assert_int_eq(lg_net_densify(&dn, &net, 0), LG_ERR_UNSUPPORTED);
    lg_net_free(&net);
}
END_TEST

/* 1 when the gate certifies coef·y + d ≤ 0 for one output j with coefficient c. */
static int tt_gate(const lg_net *net, const double *x, int j, double c, double d)
{
    double coef[4] = {0, 0, 0, 0};
    coef[j] = c;
    lg_lincon L = {coef, d};
    lg_term T = {1, &L};
    int r = lg_exact_first_holding(net, x, 1, &T, NULL);
    ck_assert_int_ge(r, -1);
    return r == 0;
}

/* The witness gate on softmax/layernorm nets is the MPFR enclosure: it
 * holds every output within 1e-9 of the double forward value and decides
 * thresholds 1e-9 away from it (so the enclosure is tight and contains it). */
START_TEST(test_tnet_gate_encloses)
{
    for (unsigned seed = 1; seed <= 12; seed++) {
        lg_net net;
        tt_make(&net, seed);
        lg_rng r;
        lg_rng_init(&r, seed, 21);
        double x[64], y[4], scratch[512];
        for (int i = 0; i < net.n_in; i++) x[i] = 4.0 * lg_rng_uniform(&r) - 2.0;
        lg_net_forward(&net, x, y, scratch);
        for (int j = 0; j < lg_net_n_out(&net); j++) {
            double m = 1e-9 * (1.0 + fabs(y[j]));
            ck_assert_msg(tt_gate(&net, x, j, 1.0, -(y[j] + m)), "seed %u: y%d <= %.17g not certified", seed, j, y[j] + m);
            ck_assert(tt_gate(&net, x, j, -1.0, y[j] - m));     /* y ≥ y_double − m */
            ck_assert(!tt_gate(&net, x, j, 1.0, -(y[j] - m)));  /* y ≤ y_double − m is false */
            ck_assert(!tt_gate(&net, x, j, -1.0, y[j] + m));    /* y ≥ y_double + m is false */
        }
        ck_assert(isnan(lg_exact_constraint_value(&net, x, &(lg_lincon){(double[4]){1, 0, 0, 0}, 0.0})));
        lg_net_free(&net);
    }
}
END_TEST

/* A witness of y0 − y1 + d ≤ 0 passes; moved so that the double value
 * crosses zero by a clear margin, it is rejected. */
START_TEST(test_tnet_gate_rejects_perturbed)
{
    int rejected = 0;
    for (unsigned seed = 1; seed <= 12; seed++) {
        lg_net net;
        tt_make(&net, seed);
        lg_rng r;
        lg_rng_init(&r, seed, 33);
        double x[64], xp[64], y[4], yp[4], scratch[512];
        for (int i = 0; i < net.n_in; i++) x[i] = 2.0 * lg_rng_uniform(&r) - 1.0;
        lg_net_forward(&net, x, y, scratch);
        double d = -(y[0] - y[1]) - 1e-6, coef[4] = {1, -1, 0, 0};
        lg_lincon L = {coef, d};
        lg_term T = {1, &L};
        ck_assert_int_eq(lg_exact_first_holding(&net, x, 1, &T, NULL), 0);
        for (int i = 0; i < net.n_in; i++)
            for (int sg = -1; sg <= 1; sg += 2) {
                memcpy(xp, x, (size_t)net.n_in * sizeof *x);
                xp[i] += sg * 1e-2;
                lg_net_forward(&net, xp, yp, scratch);
                double v = yp[0] - yp[1] + d;
                if (v < 1e-5) continue;
                ck_assert_msg(lg_exact_first_holding(&net, xp, 1, &T, NULL) == -1, "seed %u: value %g accepted", seed, v);
                rejected++;
            }
        lg_net_free(&net);
    }
    ck_assert_int_gt(rejected, 10);
}
END_TEST

/* A net of product nodes and ReLUs only is decided in exact rationals:
 * (1 + 2^-30)² = 1 + 2^-29 + 2^-60, which double rounds to 1 + 2^-29. */
START_TEST(test_tnet_product_exact)
{
    for (int norm = 0; norm < 2; norm++) { /* dyadic path, then the rational one (input normalisation) */
        lg_linear t0 = {.kind = LG_LAYER_BILINEAR, .n_in = 1, .src = LG_NET_INPUT, .op = {.src_b = LG_NET_INPUT, .n_in_b = 1, .K = 1}};
        lg_layer_spec sp = {1, LG_ACT_IDENTITY, 1, &t0};
        lg_net net;
        ck_assert_int_eq(lg_net_build(&net, 1, 1, &sp), LG_OK);
        net.layers[0].lin.map[0] = net.layers[0].lin.map[1] = 0;
        double x = 1.0 + 0x1p-30;
        if (norm) {
            net.in_div = malloc(sizeof *net.in_div);
            net.in_div[0] = 1.0;
        }
        ck_assert_int_eq(lg_net_validate(&net), LG_OK);
        double y, scratch[4];
        lg_net_forward(&net, &x, &y, scratch);
        ck_assert(y == 1.0 + 0x1p-29);
        double coef[1] = {1};
        lg_lincon L = {coef, -(1.0 + 0x1p-29)};
        lg_term T = {1, &L};
        ck_assert_int_eq(lg_exact_first_holding(&net, &x, 1, &T, NULL), -1); /* exact y is 2^-60 above */
        double slack = -0x1p-59;
        ck_assert_int_eq(lg_exact_first_holding(&net, &x, 1, &T, &slack), 0);
        ck_assert(lg_exact_constraint_value(&net, &x, &L) > 0);
        lg_net_free(&net);
    }
}
END_TEST

/* Interval bounds over a box hold every node's value at sampled points
 * (corners, uniform, the centre; double forward values, 1e-12 relative
 * slack for their own rounding); softmax bounds lie in [0, 1]; a tiny box
 * gives tight bounds (the rules are not vacuous). */
START_TEST(test_tnet_interval_oracle)
{
    int checked = 0;
    for (unsigned seed = 1; seed <= 30; seed++) {
        lg_net net;
        tt_make(&net, seed);
        lg_rng r;
        lg_rng_init(&r, seed, 44);
        double radii[4] = {1e-9, 0.01, 0.2, 1.5};
        size_t nl = lg_net_nodes_len(&net);
        double *vals = malloc(nl * sizeof *vals);
        for (int ri = 0; ri < 4; ri++) {
            double c[64], lo[64], hi[64], x[64];
            for (int i = 0; i < net.n_in; i++) {
                c[i] = 2.0 * lg_rng_uniform(&r) - 1.0;
                lo[i] = c[i] - radii[ri];
                hi[i] = c[i] + radii[ri];
            }
            lg_bounds b;
            ck_assert_int_eq(lg_bounds_init(&b, &net), LG_OK);
            ck_assert_int_eq(lg_bounds_interval(&b, &net, lo, hi), LG_OK);
            for (int k = 0; k < net.n_layers; k++)
                if (net.layers[k].lin.kind == LG_LAYER_SOFTMAX)
                    for (int o = 0; o < net.layers[k].n_out; o++) ck_assert(b.lo[k][o] >= 0.0 && b.hi[k][o] <= 1.0);
            for (int sm = 0; sm < 120; sm++) {
                for (int i = 0; i < net.n_in; i++) {
                    double u = sm == 0 ? 0.5 : sm < 40 ? (double)lg_rng_below(&r, 2) : lg_rng_uniform(&r);
                    x[i] = lo[i] + u * (hi[i] - lo[i]);
                }
                lg_net_forward_nodes(&net, x, vals, NULL);
                for (int k = 0; k < net.n_layers; k++) {
                    const double *z = vals + lg_net_node_offset(&net, k);
                    const lg_layer *L = &net.layers[k];
                    for (int o = 0; o < L->n_out; o++) {
                        double v = L->act == LG_ACT_RELU ? z[o] : z[o], tol = 1e-12 * (1.0 + fabs(v));
                        double bl = L->act == LG_ACT_RELU ? fmax(b.lo[k][o], 0.0) : b.lo[k][o];
                        double bh = L->act == LG_ACT_RELU ? fmax(b.hi[k][o], 0.0) : b.hi[k][o];
                        ck_assert_msg(v >= bl - tol && v <= bh + tol,
                                      "seed %u radius %g layer %d (%s) out %d: %.17g outside [%.17g, %.17g]", seed,
                                      radii[ri], k, lg_kind_name(L->lin.kind), o, v, bl, bh);
                        checked++;
                    }
                }
            }
            if (ri == 0) { /* a box of radius 1e-9: every output's bounds within 1e-4 (not vacuous) */
                int ko = net.n_layers - 1;
                for (int o = 0; o < net.layers[ko].n_out; o++)
                    ck_assert_msg(b.hi[ko][o] - b.lo[ko][o] < 1e-4, "seed %u: width %g", seed,
                                  b.hi[ko][o] - b.lo[ko][o]);
            }
            lg_bounds_free(&b);
        }
        free(vals);
        lg_net_free(&net);
    }
    ck_assert_int_gt(checked, 1000);
}
END_TEST

/* The attack's gradient through product, softmax and layernorm nodes
 * against central finite differences of its objective. */
START_TEST(test_tnet_attack_gradient)
{
    for (unsigned seed = 1; seed <= 12; seed++) {
        lg_net net;
        tt_make(&net, seed);
        lg_rng r;
        lg_rng_init(&r, seed, 55);
        double x[64], g0, grad[64], coef[4];
        for (int j = 0; j < 4; j++) coef[j] = lg_rng_normal(&r);
        lg_lincon C = {coef, 0.3};
        lg_term T = {1, &C};
        for (int i = 0; i < net.n_in; i++) x[i] = 2.0 * lg_rng_uniform(&r) - 1.0;
        ck_assert_int_eq(lg_attack_objective(&net, 1, &T, x, &g0, grad), LG_OK);
        for (int i = 0; i < net.n_in; i++) {
            double h = 1e-6, gp, gm, xi = x[i];
            x[i] = xi + h;
            ck_assert_int_eq(lg_attack_objective(&net, 1, &T, x, &gp, NULL), LG_OK);
            x[i] = xi - h;
            ck_assert_int_eq(lg_attack_objective(&net, 1, &T, x, &gm, NULL), LG_OK);
            x[i] = xi;
            double fd = (gp - gm) / (2 * h);
            ck_assert_msg(fabs(fd - grad[i]) <= 1e-5 * (1.0 + fabs(fd)), "seed %u input %d: gradient %.10g, FD %.10g",
                          seed, i, grad[i], fd);
        }
        lg_net_free(&net);
    }
}
END_TEST

/* lgelu's verify route on nets with the nodes (interval bounds, attack,
 * input splitting): `robust` only where no sampled point violates,
 * `violated` only with a point of the box that the double forward pass
 * confirms; both verdicts occur. */
START_TEST(test_tnet_verify_oracle)
{
    int robust = 0, violated = 0;
    for (unsigned seed = 1; seed <= 8; seed++) {
        lg_net net;
        tt_make(&net, seed);
        lg_rng r;
        lg_rng_init(&r, seed, 66);
        double x0[64], y[4], scratch[512], x[64];
        for (int i = 0; i < net.n_in; i++) x0[i] = 2.0 * lg_rng_uniform(&r) - 1.0;
        lg_net_forward(&net, x0, y, scratch);
        int no = lg_net_n_out(&net), lab = 0;
        for (int j = 1; j < no; j++)
            if (y[j] > y[lab]) lab = j;
        const double eps_list[3] = {1e-4, 0.03, 0.6};
        for (int e = 0; e < 3; e++) {
            lg_prop p;
            ck_assert_int_eq(lg_prop_robustness(&p, x0, net.n_in, eps_list[e], -10.0, 10.0, lab, no, 0.0), LG_OK);
            lg_verify_opts o = lg_verify_opts_default();
            o.timeout_s = 1.0;
            lg_verify_report rep;
            ck_assert_int_eq(lg_verify_run(&net, &p, &o, &rep), LG_OK);
            int bad = 0; /* a sampled violation: y_j ≥ y_lab + 1e-9 for some j */
            for (int sm = 0; sm < 300 && !bad; sm++) {
                for (int i = 0; i < net.n_in; i++) {
                    double u = sm < 100 ? (double)lg_rng_below(&r, 2) : lg_rng_uniform(&r);
                    x[i] = p.cases[0].lo[i] + u * (p.cases[0].hi[i] - p.cases[0].lo[i]);
                }
                lg_net_forward(&net, x, y, scratch);
                for (int j = 0; j < no; j++)
                    if (j != lab && y[j] >= y[lab] + 1e-9) bad = 1;
            }
            if (rep.verdict == LG_VERDICT_ROBUST) {
                ck_assert_msg(!bad, "seed %u eps %g: robust but a sampled point violates", seed, eps_list[e]);
                robust++;
            } else if (rep.verdict == LG_VERDICT_VIOLATED) {
                ck_assert_ptr_nonnull(rep.x);
                for (int i = 0; i < net.n_in; i++)
                    ck_assert(rep.x[i] >= p.cases[0].lo[i] && rep.x[i] <= p.cases[0].hi[i]);
                lg_net_forward(&net, rep.x, y, scratch);
                int v = 0;
                for (int j = 0; j < no; j++) v |= j != lab && y[j] >= y[lab] - 1e-9;
                ck_assert_msg(v, "seed %u eps %g: violated but the witness does not violate", seed, eps_list[e]);
                violated++;
            }
            lg_verify_report_free(&rep);
            lg_prop_free(&p);
        }
        lg_net_free(&net);
    }
    ck_assert_int_gt(robust, 0);
    ck_assert_int_gt(violated, 0);
}
END_TEST

Suite *suite_transformer(void)
{
    Suite *s = suite_create("transformer");
    TCase *tc = tcase_create("nodes");
    lg_tcase_timeout(tc, 300);
    tcase_add_test(tc, test_tnet_forward_by_hand);
    tcase_add_test(tc, test_tnet_node_identities);
    tcase_add_test(tc, test_tnet_netfile_round_trip);
    tcase_add_test(tc, test_tnet_validate_refuses);
    tcase_add_test(tc, test_tnet_stages_refuse);
    tcase_add_test(tc, test_tnet_gate_encloses);
    tcase_add_test(tc, test_tnet_gate_rejects_perturbed);
    tcase_add_test(tc, test_tnet_product_exact);
    tcase_add_test(tc, test_tnet_interval_oracle);
    tcase_add_test(tc, test_tnet_attack_gradient);
    tcase_add_test(tc, test_tnet_verify_oracle);
    suite_add_tcase(s, tc);
    return s;
}
