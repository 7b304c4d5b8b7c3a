/* check_tokmap.c — the per-token map (core/net.h LG_LAYER_TOKMAP): on a
 * tiny random graph it agrees with its dense expansion kron(I_T, A) in the
 * double forward, the exact forward and the structured products (linop),
 * its interval and back-substitution bounds are those of the dense net
 * (up to rounding) and hold for sampled points; the native file and ONNX
 * round trips keep it; an old dense file with kron terms is compacted at
 * load to the same function, and nothing else is compacted. A ViT exported to ONNX reads back
 * as the same net (term kinds, geometry and weights bit for bit, outputs), and a MatMul over
 * more tokens than a dense kron(I_T, A) could hold imports as its per-token map. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/exact.h"
#include "core/linop.h"
#include "core/netfile.h"
#include "core/op.h"
#include "core/rng.h"
#include "onnx/onnx.h"
#include "testutil.h"
#include "verify/bounds.h"

enum { TK_T = 3, TK_I = 4, TK_H = 5, TK_O = 2 };

/* input T×I -> per-token map (I -> H) relu -> per-token map (H -> I) + the input (a shortcut)
 * -> dense head (T·I -> O). Random weights and biases. */
static void tk_net(lg_net *net, unsigned seed)
{
    lg_linear t0 = lg_tokmap_term(LG_NET_INPUT, TK_T, TK_I, TK_H);
    lg_linear t1[2] = {lg_tokmap_term(0, TK_T, TK_H, TK_I),
                       {.kind = LG_LAYER_INDEX, .n_in = TK_T * TK_I, .src = LG_NET_INPUT}};
    lg_linear t2 = {.kind = LG_LAYER_DENSE, .n_in = TK_T * TK_I, .src = 1};
    lg_layer_spec sp[3] = {{TK_T * TK_H, LG_ACT_RELU, 1, &t0},
                           {TK_T * TK_I, LG_ACT_RELU, 2, t1},
                           {TK_O, LG_ACT_IDENTITY, 1, &t2}};
    ck_assert_int_eq(lg_net_build(net, TK_T * TK_I, 3, sp), LG_OK);
    lg_rng r;
    lg_rng_init(&r, seed, 0);
    for (size_t i = 0; i < net->n_params; i++) net->params[i] = lg_rng_uniform(&r) * 2 - 1;
    for (int i = 0; i < TK_T * TK_I; i++) net->layers[1].terms[0].map[i] = i;
    ck_assert_int_eq(lg_net_validate(net), LG_OK);
}

static void tk_point(lg_rng *r, const double *lo, const double *hi, double *x)
{
    for (int i = 0; i < TK_T * TK_I; i++) x[i] = lo[i] + (hi[i] - lo[i]) * lg_rng_uniform(r);
}

START_TEST(test_tokmap_products_match_kron)
{
    lg_net net, dn;
    tk_net(&net, 11);
    ck_assert_int_eq(lg_net_densify(&dn, &net, 0), LG_OK);
    const lg_linear *A = &net.layers[0].lin, *D = &dn.layers[0].lin;
    ck_assert_int_eq(A->kind, LG_LAYER_TOKMAP);
    ck_assert_int_eq(D->kind, LG_LAYER_DENSE);
    ck_assert_int_eq(lg_linear_row_cap(A), TK_I);
    lg_rng r;
    lg_rng_init(&r, 5, 0);
    enum { M = 2, NI = TK_T * TK_I, NO = TK_T * TK_H };
    double X[M * NI], Y[M * NO], Yd[M * NO], G[M * NO], Z[M * NI], Zd[M * NI], row[NI], w[NI];
    int idx[NI];
    for (int i = 0; i < M * NI; i++) X[i] = lg_rng_uniform(&r) * 2 - 1;
    for (int i = 0; i < M * NO; i++) G[i] = lg_rng_uniform(&r) * 2 - 1;
    for (int absw = 0; absw < 2; absw++) {
        lg_linear_mul(A, M, X, Y, absw, 0);
        lg_linear_mul(D, M, X, Yd, absw, 0);
        for (int i = 0; i < M * NO; i++) ck_assert_double_eq_tol(Y[i], Yd[i], 1e-13);
        lg_linear_mul_t(A, M, G, Z, absw);
        lg_linear_mul_t(D, M, G, Zd, absw);
        for (int i = 0; i < M * NI; i++) ck_assert_double_eq_tol(Z[i], Zd[i], 1e-13);
    }
    for (int o = 0; o < NO; o++) { /* rows: the block's row at its token's inputs, zero elsewhere */
        const double *ra = lg_linear_row(A, o, row);
        for (int i = 0; i < NI; i++) ck_assert(ra[i] == D->W[(size_t)o * NI + (size_t)i]);
        int n = lg_linear_row_nz(A, o, idx, w);
        ck_assert_int_eq(n, TK_I);
        for (int q = 0; q < n; q++) ck_assert(w[q] == D->W[(size_t)o * NI + (size_t)idx[q]]);
    }
    lg_net_free(&dn);
    lg_net_free(&net);
}
END_TEST

START_TEST(test_tokmap_forward_exact_and_bounds_match_dense)
{
    lg_net net, dn;
    tk_net(&net, 23);
    ck_assert_int_eq(lg_net_densify(&dn, &net, 0), LG_OK);
    lg_rng r;
    lg_rng_init(&r, 9, 0);
    double lo[TK_T * TK_I], hi[TK_T * TK_I], x[TK_T * TK_I], y[TK_O], yd[TK_O];
    double *scr = malloc(4 * (size_t)lg_net_max_width(&net) * sizeof *scr);
    for (int i = 0; i < TK_T * TK_I; i++) {
        double c = lg_rng_uniform(&r) * 2 - 1;
        lo[i] = c - 0.1, hi[i] = c + 0.1;
    }
    double coef[TK_O];
    lg_lincon con = {coef, 0.0};
    for (int s = 0; s < 10; s++) {
        tk_point(&r, lo, hi, x);
        lg_net_forward(&net, x, y, scr);
        lg_net_forward(&dn, x, yd, scr);
        for (int j = 0; j < TK_O; j++) {
            ck_assert_double_eq_tol(y[j], yd[j], 1e-12);
            memset(coef, 0, sizeof coef);
            coef[j] = 1.0;
            double e = lg_exact_constraint_value(&net, x, &con), ed = lg_exact_constraint_value(&dn, x, &con);
            ck_assert(e == ed); /* the same rational, rounded once */
            ck_assert_double_eq_tol(e, y[j], 1e-12);
        }
    }
    for (int mode = 0; mode < 2; mode++) { /* interval, then back-substitution */
        lg_bounds b, bd;
        ck_assert_int_eq(lg_bounds_init(&b, &net), LG_OK);
        ck_assert_int_eq(lg_bounds_init(&bd, &dn), LG_OK);
        if (mode == 0) {
            ck_assert_int_eq(lg_bounds_interval(&b, &net, lo, hi), LG_OK);
            ck_assert_int_eq(lg_bounds_interval(&bd, &dn, lo, hi), LG_OK);
        } else {
            ck_assert_int_eq(lg_bounds_symbolic(&b, &net, lo, hi), LG_OK);
            ck_assert_int_eq(lg_bounds_symbolic(&bd, &dn, lo, hi), LG_OK);
        }
        for (int k = 0; k < net.n_layers; k++)
            for (int o = 0; o < net.layers[k].n_out; o++) { /* the same bound up to rounding, never looser */
                double tol = 1e-9 * (1.0 + fabs(bd.lo[k][o]) + fabs(bd.hi[k][o]));
                ck_assert(isfinite(b.lo[k][o]) && isfinite(b.hi[k][o]));
                ck_assert_msg(b.lo[k][o] >= bd.lo[k][o] - tol && b.hi[k][o] <= bd.hi[k][o] + tol,
                              "mode %d layer %d neuron %d: [%g, %g] vs dense [%g, %g]", mode, k, o, b.lo[k][o],
                              b.hi[k][o], bd.lo[k][o], bd.hi[k][o]);
            }
        for (int s = 0; s < 200; s++) { /* sound for sampled points (corners included) */
            tk_point(&r, lo, hi, x);
            if (s < 20)
                for (int i = 0; i < TK_T * TK_I; i++) x[i] = lg_rng_uniform(&r) < 0.5 ? lo[i] : hi[i];
            double *vals = malloc(lg_net_nodes_len(&net) * sizeof *vals), *pre = malloc(lg_net_nodes_len(&net) * sizeof *pre);
            lg_net_forward_nodes(&net, x, vals, pre);
            for (int k = 0; k < net.n_layers; k++) {
                const double *z = pre + lg_net_node_offset(&net, k);
                for (int o = 0; o < net.layers[k].n_out; o++)
                    ck_assert(z[o] >= b.lo[k][o] && z[o] <= b.hi[k][o]);
            }
            free(vals);
            free(pre);
        }
        lg_bounds_free(&b);
        lg_bounds_free(&bd);
    }
    free(scr);
    lg_net_free(&dn);
    lg_net_free(&net);
}
END_TEST

static void tk_same_net(const lg_net *a, const lg_net *b)
{
    ck_assert_int_eq(a->n_layers, b->n_layers);
    ck_assert_uint_eq(a->n_params, b->n_params);
    for (int k = 0; k < a->n_layers; k++) {
        ck_assert_int_eq(a->layers[k].n_terms, b->layers[k].n_terms);
        for (int t = 0; t < lg_layer_n_lin(&a->layers[k]); t++) {
            const lg_linear *p = lg_layer_lin(&a->layers[k], t), *q = lg_layer_lin(&b->layers[k], t);
            ck_assert_int_eq(p->kind, q->kind);
            ck_assert_int_eq(memcmp(&p->conv, &q->conv, sizeof p->conv), 0);
        }
    }
    ck_assert_int_eq(memcmp(a->params, b->params, a->n_params * sizeof *a->params), 0);
}

START_TEST(test_tokmap_netfile_round_trip_and_compaction)
{
    lg_net net, back, dn, dback;
    tk_net(&net, 31);
    const char *p = lg_test_tmpfile(".lgnet"), *pd = lg_test_tmpfile(".lgnet");
    ck_assert_int_eq(lg_netfile_write(&net, p), LG_OK);
    ck_assert_int_eq(lg_netfile_read(&back, p), LG_OK);
    tk_same_net(&net, &back);
    /* an older file's dense kron terms: compacted at load into the same maps, bit for bit */
    ck_assert_int_eq(lg_net_densify(&dn, &net, 0), LG_OK);
    ck_assert_int_eq(lg_netfile_write(&dn, pd), LG_OK);
    const unsigned char *img = (const unsigned char *)lg_test_slurp(pd);
    ck_assert_uint_lt((unsigned)(img[8] | img[9] << 8), 7u); /* written as a dense graph (version < 7) */
    ck_assert_int_eq(lg_netfile_read(&dback, pd), LG_OK);
    for (int k = 0; k < 2; k++) { /* the maps back, bit for bit; the shortcut (the identity) stays dense */
        const lg_linear *a = &net.layers[k].lin, *c = &dback.layers[k].lin;
        ck_assert_int_eq(c->kind, LG_LAYER_TOKMAP);
        ck_assert_int_eq(memcmp(&a->conv, &c->conv, sizeof a->conv), 0);
        ck_assert_int_eq(memcmp(a->W, c->W, lg_linear_n_weights(a) * sizeof *a->W), 0);
        ck_assert_int_eq(memcmp(net.layers[k].b, dback.layers[k].b, (size_t)a->n_out * sizeof *a->W), 0);
    }
    ck_assert_int_eq(dback.layers[1].terms[0].kind, LG_LAYER_DENSE);
    double x[TK_T * TK_I], y[TK_O], y2[TK_O];
    double *scr = malloc(4 * (size_t)lg_net_max_width(&net) * sizeof *scr);
    lg_rng r;
    lg_rng_init(&r, 3, 0);
    for (int s = 0; s < 5; s++) {
        for (int i = 0; i < TK_T * TK_I; i++) x[i] = lg_rng_uniform(&r) * 2 - 1;
        lg_net_forward(&net, x, y, scr);
        lg_net_forward(&dback, x, y2, scr);
        for (int j = 0; j < TK_O; j++) ck_assert_double_eq_tol(y[j], y2[j], 1e-12);
    }
    free(scr);
    lg_net_free(&dback);
    lg_net_free(&dn);
    lg_net_free(&back);
    lg_net_free(&net);
}
END_TEST

START_TEST(test_tokmap_compaction_only_exact_kron)
{
    lg_net net, dn;
    tk_net(&net, 41);
    ck_assert_int_eq(lg_net_densify(&dn, &net, 0), LG_OK);
    int n = -1;
    /* an off-diagonal entry that is not zero, and a block one ulp off: neither term is a kron */
    dn.layers[0].lin.W[(size_t)0 * dn.layers[0].lin.n_in + TK_I] = 1e-300;
    double *w = &dn.layers[1].lin.W[(size_t)TK_I * dn.layers[1].lin.n_in + TK_H]; /* token 1, row 0, column 0 */
    *w = nextafter(*w, 2.0);
    ck_assert_int_eq(lg_net_compact_tokmap(&dn, &n), LG_OK);
    ck_assert_int_eq(n, 0);
    ck_assert_int_eq(dn.layers[0].lin.kind, LG_LAYER_DENSE);
    ck_assert_int_eq(dn.layers[1].lin.kind, LG_LAYER_DENSE);
    ck_assert_int_eq(dn.layers[2].lin.kind, LG_LAYER_DENSE); /* the head never was one */
    dn.layers[0].lin.W[(size_t)0 * dn.layers[0].lin.n_in + TK_I] = -0.0; /* a negative zero is a zero */
    ck_assert_int_eq(lg_net_compact_tokmap(&dn, &n), LG_OK);
    ck_assert_int_eq(n, 1);
    ck_assert_int_eq(dn.layers[0].lin.kind, LG_LAYER_TOKMAP);
    ck_assert_int_eq(dn.layers[0].lin.conv.h_in, TK_T);
    ck_assert_int_eq(dn.layers[1].lin.kind, LG_LAYER_DENSE);
    ck_assert_int_eq(lg_net_validate(&dn), LG_OK);
    lg_net_free(&dn);
    lg_net_free(&net);
}
END_TEST

START_TEST(test_tokmap_onnx_round_trip)
{
    lg_net net, back;
    tk_net(&net, 53);
    const char *p = lg_test_tmpfile(".onnx");
    ck_assert_int_eq(lg_onnx_write(&net, p), LG_OK);
    ck_assert_int_eq(lg_onnx_read(&back, p), LG_OK);
    int tok = 0;
    for (int k = 0; k < back.n_layers; k++)
        for (int t = 0; t < lg_layer_n_lin(&back.layers[k]); t++)
            tok += lg_layer_lin(&back.layers[k], t)->kind == LG_LAYER_TOKMAP;
    ck_assert_int_eq(tok, 2); /* MatMul over [T, i] read back as the per-token maps */
    lg_rng r;
    lg_rng_init(&r, 4, 0);
    double x[TK_T * TK_I], y[TK_O], y2[TK_O];
    double *scr = malloc(4 * (size_t)(lg_net_max_width(&net) + lg_net_max_width(&back)) * sizeof *scr);
    for (int s = 0; s < 5; s++) {
        for (int i = 0; i < TK_T * TK_I; i++) x[i] = lg_rng_uniform(&r) * 2 - 1;
        lg_net_forward(&net, x, y, scr);
        lg_net_forward(&back, x, y2, scr);
        for (int j = 0; j < TK_O; j++) ck_assert_double_eq_tol(y[j], y2[j], 1e-12);
    }
    free(scr);
    lg_net_free(&back);
    lg_net_free(&net);
}
END_TEST

/* The ViT fixture (a λ-GELU 2-block ViT trained by lgelu) through export and import: every term
 * kind and geometry, every weight bit for bit and the outputs are the native net's. */
START_TEST(test_tokmap_onnx_vit_same_net)
{
    lg_net net, back;
    ck_assert_int_eq(lg_netfile_read(&net, lg_test_fixture("vit/tiny_vit.lgnet")), LG_OK);
    const char *p = lg_test_tmpfile(".onnx");
    ck_assert_int_eq(lg_onnx_write(&net, p), LG_OK);
    ck_assert_int_eq(lg_onnx_read(&back, p), LG_OK);
    int tok = 0;
    for (int k = 0; k < net.n_layers; k++)
        for (int t = 0; t < lg_layer_n_lin(&net.layers[k]); t++)
            tok += lg_layer_lin(&net.layers[k], t)->kind == LG_LAYER_TOKMAP;
    ck_assert_int_gt(tok, 4);
    ck_assert_int_eq(net.n_layers, back.n_layers);
    ck_assert_uint_eq(net.n_params, back.n_params);
    for (int k = 0; k < net.n_layers; k++) {
        ck_assert_int_eq(net.layers[k].act, back.layers[k].act);
        ck_assert_int_eq(lg_layer_n_lin(&net.layers[k]), lg_layer_n_lin(&back.layers[k]));
        for (int t = 0; t < lg_layer_n_lin(&net.layers[k]); t++) {
            const lg_linear *a = lg_layer_lin(&net.layers[k], t), *c = lg_layer_lin(&back.layers[k], t);
            ck_assert_int_eq(a->kind, c->kind);
            ck_assert_int_eq(a->src, c->src);
            ck_assert_int_eq(memcmp(&a->conv, &c->conv, sizeof a->conv), 0);
        }
    }
    ck_assert_int_eq(memcmp(net.params, back.params, net.n_params * sizeof *net.params), 0);
    int n_in = net.n_in, n_out = net.layers[net.n_layers - 1].n_out;
    double *x = malloc((size_t)n_in * sizeof *x), *y = malloc(2 * (size_t)n_out * sizeof *y);
    double *scr = malloc(4 * (size_t)(lg_net_max_width(&net) + lg_net_max_width(&back)) * sizeof *scr);
    lg_rng r;
    lg_rng_init(&r, 6, 0);
    for (int s = 0; s < 3; s++) {
        for (int i = 0; i < n_in; i++) x[i] = lg_rng_uniform(&r);
        lg_net_forward(&net, x, y, scr);
        lg_net_forward(&back, x, y + n_out, scr);
        for (int j = 0; j < n_out; j++) ck_assert(y[j] == y[n_out + j]);
    }
    free(scr);
    free(y);
    free(x);
    lg_net_free(&back);
    lg_net_free(&net);
}
END_TEST

/* 4096 tokens of 8 values: the dense kron(I_T, A) would hold 2^30 weights (8 GiB), beyond the
 * importer's dense limit; the per-token map of 64 weights imports, and computes the same. */
START_TEST(test_tokmap_onnx_many_tokens)
{
    enum { MT = 4096, MI = 8 };
    lg_net net, back;
    lg_linear t0 = lg_tokmap_term(LG_NET_INPUT, MT, MI, MI);
    lg_linear t1 = {.kind = LG_LAYER_DENSE, .n_in = MT * MI, .src = 0};
    lg_layer_spec sp[2] = {{MT * MI, LG_ACT_RELU, 1, &t0}, {2, LG_ACT_IDENTITY, 1, &t1}};
    ck_assert_int_eq(lg_net_build(&net, MT * MI, 2, sp), LG_OK);
    lg_rng r;
    lg_rng_init(&r, 8, 0);
    for (size_t i = 0; i < net.n_params; i++) net.params[i] = lg_rng_uniform(&r) * 2 - 1;
    const char *p = lg_test_tmpfile(".onnx");
    ck_assert_int_eq(lg_onnx_write(&net, p), LG_OK);
    ck_assert_int_eq(lg_onnx_read(&back, p), LG_OK);
    ck_assert_int_eq(back.n_layers, 2);
    ck_assert_int_eq(back.layers[0].lin.kind, LG_LAYER_TOKMAP);
    ck_assert_int_eq(back.layers[0].lin.conv.h_in, MT);
    ck_assert_uint_eq(back.n_params, net.n_params);
    double *x = malloc(MT * MI * sizeof *x), y[4];
    double *scr = malloc(4 * (size_t)(lg_net_max_width(&net) + lg_net_max_width(&back)) * sizeof *scr);
    for (int i = 0; i < MT * MI; i++) x[i] = lg_rng_uniform(&r) * 2 - 1;
    lg_net_forward(&net, x, y, scr);
    lg_net_forward(&back, x, y + 2, scr);
    ck_assert(y[0] == y[2] && y[1] == y[3]);
    free(scr);
    free(x);
    lg_net_free(&back);
    lg_net_free(&net);
}
END_TEST

START_TEST(test_tokmap_shape_refused)
{
    lg_net net;
    lg_linear t = lg_tokmap_term(LG_NET_INPUT, 3, 4, 5);
    t.conv.w_in = 2; /* not a per-token map's geometry */
    lg_layer_spec sp = {15, LG_ACT_IDENTITY, 1, &t};
    ck_assert_int_eq(lg_net_build(&net, 12, 1, &sp), LG_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(lg_errmsg(), "per-token map"));
    t = lg_tokmap_term(LG_NET_INPUT, 3, 4, 5);
    sp.n_out = 14; /* not T·o */
    ck_assert_int_eq(lg_net_build(&net, 12, 1, &sp), LG_ERR_ARG);
}
END_TEST

Suite *suite_tokmap(void)
{
    Suite *s = suite_create("tokmap");
    TCase *tc = tcase_create("tokmap");
    lg_tcase_timeout(tc, 30);
    tcase_add_test(tc, test_tokmap_products_match_kron);
    tcase_add_test(tc, test_tokmap_forward_exact_and_bounds_match_dense);
    tcase_add_test(tc, test_tokmap_netfile_round_trip_and_compaction);
    tcase_add_test(tc, test_tokmap_compaction_only_exact_kron);
    tcase_add_test(tc, test_tokmap_onnx_round_trip);
    tcase_add_test(tc, test_tokmap_shape_refused);
    tcase_add_test(tc, test_tokmap_onnx_vit_same_net);
    tcase_add_test(tc, test_tokmap_onnx_many_tokens);
    suite_add_tcase(s, tc);
    return s;
}
