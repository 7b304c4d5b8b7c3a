/* check_graph_train.c — training through the graph (train/model.h on a
 * core/net.h graph): the float forward against the double oracle
 * lg_net_forward, every gradient (W of every term, b, s) against central
 * differences of the double loss on small random DAGs with a residual sum,
 * a projection shortcut, a skip from the input, a Concat with a Slice and a
 * padding zero, and conv terms; the RS loss through sums against a double
 * interval oracle; the --arch grammar of residual blocks (core/arch.h);
 * training, annealing and ReLU substitution of residual nets end to end;
 * the study grid reading benchmarks/full.ini. */
#include <check.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "anneal/relu.h"
#include "anneal/schedule.h"
#include "core/arch.h"
#include "core/arch_vit.h"
#include "core/net.h"
#include "core/rng.h"
#include "study/grid.h"
#include "train/loop.h"
#include "train/model.h"
#include "train/optim.h"
#include "train/rs.h"
#include "testutil.h"

/* x[2x4x4] → L0 = act(conv3x3(x))                                   [3x4x4]
 *          → L1 = act(conv3x3(L0) + L0 (identity) + conv1x1(x))      [3x4x4]  residual, projection
 *          → L2 = act(W·L1 + W'·x)                                   [6]      skip from the input
 *          → L3 = concat(L2, slice of L0, a zero)                    [11]     index maps, identity
 *          → L4 = W·L3 + L2[0..2] (slice)                            [3]      output */
static void gt_make(lg_net *net, lg_act act, unsigned seed)
{
    lg_conv c0 = {2, 4, 4, 3, 4, 4, 3, 3, 1, 1, 1, 1}, c1 = {3, 4, 4, 3, 4, 4, 3, 3, 1, 1, 1, 1},
            cs = {2, 4, 4, 3, 4, 4, 1, 1, 1, 1, 0, 0};
    lg_linear t0[1] = {{.kind = LG_LAYER_CONV2D, .n_in = 32, .conv = c0, .src = LG_NET_INPUT}};
    lg_linear t1[3] = {{.kind = LG_LAYER_CONV2D, .n_in = 48, .conv = c1, .src = 0},
                       {.kind = LG_LAYER_INDEX, .n_in = 48, .src = 0},
                       {.kind = LG_LAYER_CONV2D, .n_in = 32, .conv = cs, .src = LG_NET_INPUT}};
    lg_linear t2[2] = {{.kind = LG_LAYER_DENSE, .n_in = 48, .src = 1}, {.kind = LG_LAYER_DENSE, .n_in = 32, .src = LG_NET_INPUT}};
    lg_linear t3[2] = {{.kind = LG_LAYER_INDEX, .n_in = 6, .src = 2}, {.kind = LG_LAYER_INDEX, .n_in = 48, .src = 0}};
    lg_linear t4[2] = {{.kind = LG_LAYER_DENSE, .n_in = 11, .src = 3}, {.kind = LG_LAYER_INDEX, .n_in = 6, .src = 2}};
    lg_layer_spec sp[5] = {{48, act, 1, t0}, {48, act, 3, t1}, {6, act, 2, t2}, {11, LG_ACT_IDENTITY, 2, t3},
                           {3, LG_ACT_IDENTITY, 2, t4}};
    ck_assert_int_eq(lg_net_build(net, 32, 5, sp), LG_OK);
    lg_rng r;
    lg_rng_init(&r, seed, 4);
    lg_test_randomize(net, &r, 0.5);
    /* float-representable parameters (the model's copy is then exact); conv biases tied per channel */
    for (size_t i = 0; i < net->n_params; i++) net->params[i] = (float)net->params[i];
    for (int k = 0; k < 2; k++)
        for (int o = 0; o < 48; o++) net->layers[k].b[o] = net->layers[k].b[o - o % 16];
    for (int k = 0; k < net->n_layers; k++) {
        lg_layer *L = &net->layers[k];
        L->s = (float)L->s;
        if (lg_act_info_of(L->act)->softplus) L->lambda = lg_lambda_from_s(L->s, net->t);
    }
    for (int o = 0; o < 48; o++) net->layers[1].terms[0].map[o] = o;
    static const int slice[4] = {5, 10, 20, 40};
    for (int o = 0; o < 11; o++) {
        net->layers[3].lin.map[o] = o < 6 ? o : -1;
        net->layers[3].terms[0].map[o] = o >= 6 && o < 10 ? slice[o - 6] : -1;
    }
    for (int o = 0; o < 3; o++) net->layers[4].terms[0].map[o] = o;
    ck_assert_int_eq(lg_net_validate(net), LG_OK);
}

/* Mean softmax cross-entropy of the double oracle over B rows. */
static double gt_loss(const lg_net *net, const float *X, const uint8_t *y, int B)
{
    double scratch[256], x[64], z[16], s = 0.0;
    int C = lg_net_n_out(net);
    for (int r = 0; r < B; r++) {
        for (int i = 0; i < net->n_in; i++) x[i] = X[r * net->n_in + i];
        lg_net_forward(net, x, z, scratch);
        double mx = z[0], e = 0.0;
        for (int j = 1; j < C; j++) mx = fmax(mx, z[j]);
        for (int j = 0; j < C; j++) e += exp(z[j] - mx);
        s += log(e) + mx - z[y[r]];
    }
    return s / B;
}

/* Central difference of the double loss in one parameter p (or a group: every position of a conv
 * channel's tied bias, stride apart, count of them). */
static double gt_fd(lg_net *net, double *p, int count, int stride, const float *X, const uint8_t *y, int B)
{
    const double h = 1e-5;
    double save = *p;
    for (int q = 0; q < count; q++) p[q * stride] = save + h;
    double lp = gt_loss(net, X, y, B);
    for (int q = 0; q < count; q++) p[q * stride] = save - h;
    double lm = gt_loss(net, X, y, B);
    for (int q = 0; q < count; q++) p[q * stride] = save;
    return (lp - lm) / (2 * h);
}

/* The model's forward equals lg_net_forward within float rounding, and every gradient of the
 * loss — W of every term (conv, dense, the projection and the skip), b (tied per conv channel),
 * s of every lgelu layer — equals central differences of the double loss. */
START_TEST(test_graph_train_gradients)
{
    static const lg_act acts[2] = {LG_ACT_LGELU, LG_ACT_SWISH};
    const int B = 5;
    float X[5 * 32];
    uint8_t y[5];
    lg_rng r;
    lg_rng_init(&r, 21, 0);
    int n_checked = 0;
    for (int v = 0; v < 4; v++) {
        lg_net net;
        gt_make(&net, acts[v % 2], 100u + (unsigned)v);
        for (int i = 0; i < B * 32; i++) X[i] = (float)lg_rng_uniform(&r);
        for (int i = 0; i < B; i++) y[i] = (uint8_t)(lg_rng_uniform(&r) * 3.0);
        lg_model m;
        ck_assert_int_eq(lg_model_init(&m, &net, B), LG_OK);
        uint32_t idx[5] = {0, 1, 2, 3, 4};
        lg_model_gather(&m, X, idx, B);
        double loss;
        lg_model_forward(&m, B, y, &loss, NULL);
        /* forward against the oracle */
        double scratch[256], x[32], z[3];
        for (int row = 0; row < B; row++) {
            for (int i = 0; i < 32; i++) x[i] = X[row * 32 + i];
            lg_net_forward(&net, x, z, scratch);
            for (int j = 0; j < 3; j++) {
                float got = m.layers[4].a[row * 3 + j];
                ck_assert_msg(fabs(got - z[j]) <= 1e-5 * (1 + fabs(z[j])), "net %d row %d logit %d: model %.9g, oracle %.9g",
                              v, row, j, (double)got, z[j]);
            }
        }
        double want = gt_loss(&net, X, y, B);
        ck_assert_msg(fabs(loss - want) <= 1e-5 * (1 + fabs(want)), "net %d: loss %.9g, oracle %.9g", v, loss, want);
        lg_model_zero_grad(&m);
        lg_model_backward(&m, B, y);
        for (int k = 0; k < net.n_layers; k++) {
            lg_layer *L = &net.layers[k];
            lg_mlayer *M = &m.layers[k];
            for (int t = 0; t < lg_layer_n_lin(L); t++) {
                lg_linear *A = lg_layer_lin_mut(L, t);
                const lg_mterm *T = lg_mlayer_term(M, t);
                size_t nw = lg_linear_n_weights(A);
                ck_assert_int_eq((int)nw, (int)T->n_w);
                for (size_t i = 0; i < nw; i++) {
                    double fd = gt_fd(&net, &A->W[i], 1, 1, X, y, B), g = T->dW[i];
                    ck_assert_msg(fabs(fd - g) <= 2e-3 * fabs(fd) + 2e-5, "net %d layer %d term %d W[%zu]: backward %.9g, FD %.9g",
                                  v, k, t, i, g, fd);
                    n_checked++;
                }
            }
            int hw = M->conv.c_out ? M->conv.h_out * M->conv.w_out : 1;
            for (size_t i = 0; i < M->n_b; i++) {
                double fd = gt_fd(&net, &L->b[i * (size_t)hw], hw, 1, X, y, B), g = M->db[i];
                ck_assert_msg(fabs(fd - g) <= 2e-3 * fabs(fd) + 2e-5, "net %d layer %d b[%zu]: backward %.9g, FD %.9g", v, k,
                              i, g, fd);
                n_checked++;
            }
            if (!lg_act_info_of(L->act)->softplus) continue;
            /* s: λ (β) = 1 + softplus(s/t) */
            const double h = 1e-5;
            double s0 = L->s, l0 = L->lambda;
            L->lambda = lg_lambda_from_s(s0 + h, net.t);
            double lp = gt_loss(&net, X, y, B);
            L->lambda = lg_lambda_from_s(s0 - h, net.t);
            double lm = gt_loss(&net, X, y, B);
            L->lambda = l0;
            double fd = (lp - lm) / (2 * h), g = *M->ds;
            ck_assert_msg(fabs(fd - g) <= 2e-3 * fabs(fd) + 2e-5, "net %d layer %d s: backward %.9g, FD %.9g", v, k, g, fd);
            n_checked++;
        }
        lg_model_free(&m);
        lg_net_free(&net);
    }
    ck_assert_int_gt(n_checked, 2000);
}
END_TEST

/* The RS loss of the ReLU substitution over a graph in double: intervals per node through every
 * term (the dense form of lg_net_densify), clamped by ReLU except at identity layers, summed
 * over the hidden layers. */
static double gt_rs_oracle(const lg_net *net, const float *X, int B, double eps, double w, long *unst)
{
    lg_net d;
    ck_assert_int_eq(lg_net_densify(&d, net, 0), LG_OK);
    size_t len = lg_net_nodes_len(&d);
    double *lo = malloc(len * sizeof *lo), *hi = malloc(len * sizeof *hi), loss = 0.0;
    *unst = 0;
    for (int r = 0; r < B; r++) {
        for (int i = 0; i < d.n_in; i++) {
            double x = X[r * d.n_in + i];
            lo[i] = fmax(x - eps, 0.0), hi[i] = fmin(x + eps, 1.0);
        }
        for (int k = 0; k + 1 < d.n_layers; k++) {
            const lg_layer *L = &d.layers[k];
            size_t off = lg_net_node_offset(&d, k);
            for (int j = 0; j < L->n_out; j++) {
                double l = L->b[j], u = L->b[j];
                for (int t = 0; t < lg_layer_n_lin(L); t++) {
                    const lg_linear *A = lg_layer_lin(L, t);
                    size_t so = lg_net_node_offset(&d, A->src);
                    for (int i = 0; i < A->n_in; i++) {
                        double wv = A->W[(size_t)j * (size_t)A->n_in + (size_t)i];
                        l += wv > 0 ? wv * lo[so + i] : wv * hi[so + i];
                        u += wv > 0 ? wv * hi[so + i] : wv * lo[so + i];
                    }
                }
                if (net->layers[k].act == LG_ACT_IDENTITY) {
                    lo[off + j] = l, hi[off + j] = u;
                    continue;
                }
                loss -= tanh(1.0 + l * u);
                *unst += l < 0 && u > 0;
                lo[off + j] = fmax(l, 0.0), hi[off + j] = fmax(u, 0.0);
            }
        }
    }
    free(lo);
    free(hi);
    lg_net_free(&d);
    return w * loss / B;
}

START_TEST(test_graph_train_rs_gradient)
{
    const int B = 3;
    float X[3 * 32];
    lg_rng r;
    lg_rng_init(&r, 5, 0);
    for (int i = 0; i < B * 32; i++) X[i] = (float)lg_rng_uniform(&r);
    int n_checked = 0;
    long unst_seen = 0;
    for (int v = 0; v < 2; v++) {
        lg_net net;
        gt_make(&net, LG_ACT_LGELU, 7u + (unsigned)v);
        lg_model m;
        lg_rs rs;
        ck_assert_int_eq(lg_model_init(&m, &net, B), LG_OK);
        ck_assert_int_eq(lg_rs_init(&rs, &m), LG_OK);
        uint32_t idx[3] = {0, 1, 2};
        lg_model_gather(&m, X, idx, B);
        lg_model_zero_grad(&m);
        const double eps = 0.05, w = 0.7;
        long un, un_o;
        double got = lg_rs_loss(&rs, &m, B, eps, w, 1, &un);
        double want = gt_rs_oracle(&net, X, B, eps, w, &un_o);
        ck_assert_msg(fabs(got - want) <= 1e-5 * (1 + fabs(want)), "net %d: RS loss %.9g, oracle %.9g", v, got, want);
        ck_assert_int_eq(un, un_o);
        unst_seen += un;
        const double h = 1e-5;
        for (int k = 0; k < net.n_layers; k++) {
            lg_layer *L = &net.layers[k];
            lg_mlayer *M = &m.layers[k];
            for (int t = 0; t < lg_layer_n_lin(L); t++) {
                lg_linear *A = lg_layer_lin_mut(L, t);
                const lg_mterm *T = lg_mlayer_term(M, t);
                for (size_t i = 0; i < T->n_w; i++) {
                    double save = A->W[i];
                    long dummy;
                    A->W[i] = save + h;
                    double lp = gt_rs_oracle(&net, X, B, eps, w, &dummy);
                    A->W[i] = save - h;
                    double lm = gt_rs_oracle(&net, X, B, eps, w, &dummy);
                    A->W[i] = save;
                    double fd = (lp - lm) / (2 * h);
                    ck_assert_msg(fabs(fd - T->dW[i]) <= 2e-3 * fabs(fd) + 2e-5,
                                  "net %d layer %d term %d W[%zu]: RS backward %.9g, FD %.9g", v, k, t, i,
                                  (double)T->dW[i], fd);
                    n_checked++;
                }
            }
        }
        lg_rs_free(&rs);
        lg_model_free(&m);
        lg_net_free(&net);
    }
    ck_assert_int_gt(n_checked, 1000);
    ck_assert_int_gt(unst_seen, 5);
}
END_TEST

/* The grammar: chains as before, the three block kinds and their shortcuts, errors naming the token. */
START_TEST(test_graph_train_arch_grammar)
{
    lg_arch a;
    ck_assert_int_eq(lg_arch_parse(&a, "784,256,r256x4,10"), LG_OK);
    ck_assert_int_eq(a.n_layers, 10);
    ck_assert_int_eq(a.n_in, 784);
    ck_assert(!a.chain);
    for (int b = 0; b < 4; b++) {
        const lg_layer_spec *s2 = &a.specs[2 + 2 * b];
        ck_assert_int_eq(s2->n_terms, 2);
        ck_assert_int_eq(s2->terms[0].src, 1 + 2 * b);
        ck_assert_int_eq(s2->terms[1].kind, LG_LAYER_INDEX); /* identity shortcut */
        ck_assert_int_eq(s2->terms[1].src, 2 * b);
        ck_assert(a.hidden[1 + 2 * b] && a.hidden[2 + 2 * b]);
    }
    ck_assert(!a.hidden[9]);
    lg_arch_free(&a);
    /* a width change: dense projection */
    ck_assert_int_eq(lg_arch_parse(&a, "20,r8,3"), LG_OK);
    ck_assert_int_eq(a.specs[1].terms[1].kind, LG_LAYER_DENSE);
    ck_assert_int_eq(a.specs[1].terms[1].src, LG_NET_INPUT);
    lg_arch_free(&a);
    /* Transformer-style MLP block: no activation after the sum */
    ck_assert_int_eq(lg_arch_parse(&a, "784,64,m64:256x2,10"), LG_OK);
    ck_assert_int_eq(a.n_layers, 6);
    ck_assert_int_eq(a.specs[1].n_out, 256);
    ck_assert(a.hidden[1] && !a.hidden[2] && a.hidden[3] && !a.hidden[4]);
    ck_assert_int_eq(a.specs[2].terms[1].kind, LG_LAYER_INDEX);
    lg_arch_free(&a);
    /* conv ResNet: identity shortcut, then a 1x1 stride-2 projection */
    ck_assert_int_eq(lg_arch_parse(&a, "1x28x28,c16k3p1,rc16k3x2,rc32k3s2x2,10"), LG_OK);
    ck_assert_int_eq(a.n_layers, 1 + 4 + 4 + 1);
    ck_assert_int_eq(a.specs[2].terms[1].kind, LG_LAYER_INDEX);
    const lg_linear *p = &a.specs[6].terms[1];
    ck_assert_int_eq(p->kind, LG_LAYER_CONV2D);
    ck_assert_int_eq(p->conv.kh * 100 + p->conv.sh * 10 + p->conv.c_out / 32, 121);
    ck_assert_int_eq(a.specs[6].n_out, 32 * 14 * 14);
    ck_assert_int_eq(a.specs[8].terms[1].kind, LG_LAYER_INDEX); /* the second block keeps the shape */
    lg_arch_free(&a);
    lg_net net;
    ck_assert_int_eq(lg_arch_net(&net, "1x28x28,c16k3p1,rc16k3x2,rc32k3s2x2,10", LG_ACT_LGELU), LG_OK);
    ck_assert_int_eq(lg_net_validate(&net), LG_OK);
    ck_assert_int_eq(net.layers[2].terms[0].map[17], 17);
    ck_assert_int_eq(net.layers[9].act, LG_ACT_IDENTITY);
    ck_assert_int_eq(net.layers[8].act, LG_ACT_LGELU);
    lg_net_free(&net);
    /* the chain API refuses blocks but keeps chains */
    int dims[16];
    lg_conv convs[16];
    ck_assert_int_eq(lg_net_arch_parse("784,r256,10", dims, convs, 16), -1);
    ck_assert_ptr_nonnull(strstr(lg_errmsg(), "residual"));
    ck_assert_int_eq(lg_net_arch_parse("1x28x28,c8k3s2,c16k3s2,10", dims, convs, 16), 3);
    static const struct {
        const char *text, *needle;
    } bad[] = {{"784,r256x0,10", "token 2 'r256x0'"},   {"784,m128:512,10", "N = 784"},
               {"784,rc8k3,10", "needs an image"},      {"1x8x8,rc8k2,10", "odd kernel"},
               {"784,256,r64", "output layer"},         {"784,q5,10", "token 2 'q5'"},
               {"784,,10", "token 2: empty"},           {"1x8x8,rc4k3x,10", "rc<C>k<K>"},
               {"784", "at least one layer"},           {"1x28x28,c8k3x,10", "expected a conv"},
               {"784,m64:,10", "m<N>:<H>"},             {"1x4x4,c2k5,3", "does not fit"}};
    /* the CLI: a bad token is a usage error (exit 2) before any data is read */
    char args[256];
    snprintf(args, sizeof args, "train --arch 784,r256x0,10 --epochs 1 -o %s", lg_test_tmpfile(".lgnet"));
    ck_assert_int_eq(lg_test_cli(args, NULL), 2);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ck_assert_msg(lg_arch_parse(&a, bad[i].text) == LG_ERR_ARG, "accepted '%s'", bad[i].text);
        ck_assert_msg(strstr(lg_errmsg(), bad[i].needle), "'%s': message '%s' lacks '%s'", bad[i].text, lg_errmsg(),
                      bad[i].needle);
        ck_assert_ptr_null(a.specs);
    }
}
END_TEST

/* Synthetic images 1x6x6: class c ∈ {0,1,2} lights the c-th band of rows, plus noise. */
static void gt_data(lg_dataset *ds, size_t n, unsigned seed)
{
    memset(ds, 0, sizeof *ds);
    ds->n = n;
    ds->dim = 36;
    ds->rows = ds->cols = 6;
    ds->n_classes = 3;
    ds->x = malloc(n * 36 * sizeof *ds->x);
    ds->y = malloc(n);
    lg_rng r;
    lg_rng_init(&r, seed, 0);
    for (size_t e = 0; e < n; e++) {
        int c = (int)(lg_rng_uniform(&r) * 3.0);
        ds->y[e] = (uint8_t)c;
        for (int i = 0; i < 36; i++) {
            double v = 0.6 * lg_rng_uniform(&r) + (i / 6 / 2 == c ? 0.4 : 0.0);
            ds->x[e * 36 + (size_t)i] = (float)v;
        }
    }
}

/* lgelu train + anneal on residual dense, MLP-block and conv nets: learns the task; λ reaches the
 * target; the write-back equals the model; the ReLU substitution copies every term bit for bit and
 * keeps the accuracy; the RS loss trains through the sums. */
START_TEST(test_graph_train_end_to_end)
{
    static const char *archs[] = {"36,16,r16x2,3", "36,16,m16:32x2,3", "1x6x6,c4k3p1,rc4k3,rc8k3s2,3"};
    lg_dataset tr, te;
    gt_data(&tr, 600, 1);
    gt_data(&te, 300, 2);
    for (size_t ai = 0; ai < sizeof archs / sizeof archs[0]; ai++)
        for (int rs = 0; rs < 2; rs++) {
            lg_net net;
            ck_assert_int_eq(lg_arch_net(&net, archs[ai], LG_ACT_LGELU), LG_OK);
            lg_model_init_weights(&net, 4);
            lg_train_opts o = lg_train_opts_default();
            o.epochs = 12;
            o.batch = 32;
            o.optim.lr = 0.02;
            o.rs_weight = rs ? 0.01 : 0.0;
            o.rs_eps = 0.02;
            lg_anneal_schedule sch;
            ck_assert_int_eq(lg_anneal_schedule_init(&sch, 0.25, 160.0, net.n_layers), LG_OK);
            o.hook = lg_anneal_hook;
            o.hook_ctx = &sch;
            lg_train_result res;
            ck_assert_msg(lg_train_run(&net, &tr, NULL, &te, &o, &res) == LG_OK, "%s: %s", archs[ai], lg_errmsg());
            ck_assert_msg(res.test_acc > 0.9, "%s (rs %d): test accuracy %.3f", archs[ai], rs, res.test_acc);
            for (int k = 0; k < net.n_layers; k++)
                if (net.layers[k].act == LG_ACT_LGELU) ck_assert_double_eq_tol(net.layers[k].lambda, 160.0, 1e-9);
            /* the model's forward of the written-back net equals lg_net_forward */
            lg_model m;
            ck_assert_int_eq(lg_model_init(&m, &net, 8), LG_OK);
            uint32_t idx[8] = {0, 1, 2, 3, 4, 5, 6, 7};
            lg_model_gather(&m, te.x, idx, 8);
            lg_model_forward(&m, 8, NULL, NULL, NULL);
            double scratch[1024], x[36], z[3];
            for (int row = 0; row < 8; row++) {
                for (int i = 0; i < 36; i++) x[i] = te.x[row * 36 + i];
                lg_net_forward(&net, x, z, scratch);
                for (int j = 0; j < 3; j++)
                    ck_assert_double_eq_tol(m.layers[net.n_layers - 1].a[row * 3 + j], z[j], 1e-4 * (1 + fabs(z[j])));
            }
            lg_model_free(&m);
            /* substitution: terms, maps and parameters bit for bit; accuracy kept */
            lg_net rn;
            ck_assert_int_eq(lg_anneal_to_relu(&rn, &net), LG_OK);
            ck_assert_int_eq(memcmp(rn.params, net.params, net.n_params * sizeof *net.params), 0);
            ck_assert_int_eq((int)rn.n_maps, (int)net.n_maps);
            if (net.n_maps) ck_assert_int_eq(memcmp(rn.maps, net.maps, net.n_maps * sizeof *net.maps), 0);
            for (int k = 0; k < net.n_layers; k++) {
                ck_assert_int_eq(rn.layers[k].n_terms, net.layers[k].n_terms);
                for (int t = 0; t < lg_layer_n_lin(&net.layers[k]); t++) {
                    const lg_linear *A = lg_layer_lin(&net.layers[k], t), *Rt = lg_layer_lin(&rn.layers[k], t);
                    ck_assert(A->kind == Rt->kind && A->src == Rt->src && A->n_in == Rt->n_in);
                }
                ck_assert_int_eq(rn.layers[k].act,
                                 net.layers[k].act == LG_ACT_LGELU ? LG_ACT_RELU : net.layers[k].act);
            }
            int agree = 0;
            double sc[1024], zr[3];
            for (size_t e = 0; e < te.n; e++) {
                for (int i = 0; i < 36; i++) x[i] = te.x[e * 36 + (size_t)i];
                lg_net_forward(&net, x, z, sc);
                lg_net_forward(&rn, x, zr, sc);
                int a1 = 0, a2 = 0;
                for (int j = 1; j < 3; j++) a1 = z[j] > z[a1] ? j : a1, a2 = zr[j] > zr[a2] ? j : a2;
                agree += a1 == a2;
            }
            ck_assert_msg(agree >= (int)te.n - 3, "%s: ReLU net agrees on %d of %zu", archs[ai], agree, te.n);
            lg_net_free(&rn);
            lg_net_free(&net);
        }
    lg_dataset_free(&tr);
    lg_dataset_free(&te);
}
END_TEST

/* One optimiser step moves every weight of every term — a projection shortcut's and a skip's too —
 * and leaves index maps alone; a graph with an index-map term 0 (a Concat layer) trains. */
START_TEST(test_graph_train_step_moves_terms)
{
    for (int kind = 0; kind < 2; kind++) {
        lg_net net;
        gt_make(&net, LG_ACT_LGELU, 31u);
        lg_model m;
        ck_assert_int_eq(lg_model_init(&m, &net, 4), LG_OK);
        float X[4 * 32];
        uint8_t y[4] = {0, 1, 2, 1};
        for (int i = 0; i < 4 * 32; i++) X[i] = (float)((i * 37 % 101) / 101.0);
        uint32_t idx[4] = {0, 1, 2, 3};
        lg_model_gather(&m, X, idx, 4);
        lg_model_forward(&m, 4, y, NULL, NULL);
        lg_model_zero_grad(&m);
        lg_model_backward(&m, 4, y);
        float *before = malloc(m.n_params * sizeof *before);
        memcpy(before, m.params, m.n_params * sizeof *before);
        lg_optim_opts o = lg_optim_opts_default();
        o.kind = kind ? LG_OPTIM_ADAMW : LG_OPTIM_SGD;
        lg_optim_step(&m, &o, 1);
        for (int k = 0; k < m.n_layers; k++)
            for (int t = 0; t < lg_mlayer_n_lin(&m.layers[k]); t++) {
                const lg_mterm *T = lg_mlayer_term(&m.layers[k], t);
                size_t moved = 0;
                for (size_t i = 0; i < T->n_w; i++) moved += T->W[i] != before[T->W - m.params + (ptrdiff_t)i];
                ck_assert_msg(T->n_w == 0 || moved > T->n_w / 2, "%s: layer %d term %d: %zu of %zu weights moved",
                              kind ? "adamw" : "sgd", k, t, moved, T->n_w);
            }
        ck_assert_int_eq(lg_model_to_net(&m, &net), LG_OK);
        ck_assert_double_eq(net.layers[1].terms[1].W[0], (double)m.layers[1].terms[1].W[0]);
        free(before);
        lg_model_free(&m);
        lg_net_free(&net);
    }
}
END_TEST

/* `lgelu anneal`'s route on a residual net: a gelu net made lgelu at λ = 1 (lg_anneal_prepare_net),
 * then annealed from the first step; every λ ends at the target, the MLP block's sum stays identity. */
START_TEST(test_graph_train_anneal_gelu)
{
    lg_dataset tr;
    gt_data(&tr, 300, 3);
    lg_net net;
    ck_assert_int_eq(lg_arch_net(&net, "36,16,r16,m16:32,3", LG_ACT_GELU), LG_OK);
    lg_model_init_weights(&net, 5);
    lg_train_opts o = lg_train_opts_default();
    o.epochs = 2;
    o.batch = 32;
    ck_assert_int_eq(lg_train_run(&net, &tr, NULL, NULL, &o, NULL), LG_OK);
    ck_assert_int_eq(lg_anneal_prepare_net(&net, "gelu net"), LG_OK);
    lg_anneal_schedule sch;
    ck_assert_int_eq(lg_anneal_schedule_init(&sch, 0.0, 160.0, net.n_layers), LG_OK);
    o.hook = lg_anneal_hook;
    o.hook_ctx = &sch;
    ck_assert_int_eq(lg_train_run(&net, &tr, NULL, NULL, &o, NULL), LG_OK);
    static const lg_act want[6] = {LG_ACT_LGELU, LG_ACT_LGELU, LG_ACT_LGELU, LG_ACT_LGELU, LG_ACT_IDENTITY,
                                   LG_ACT_IDENTITY};
    ck_assert_int_eq(net.n_layers, 6);
    for (int k = 0; k < 6; k++) {
        ck_assert_int_eq(net.layers[k].act, want[k]);
        if (want[k] == LG_ACT_LGELU) ck_assert_double_eq_tol(net.layers[k].lambda, 160.0, 1e-9);
    }
    ck_assert_int_eq(lg_net_validate(&net), LG_OK);
    lg_net_free(&net);
    lg_dataset_free(&tr);
}
END_TEST

/* The study grid of benchmarks/full.ini reads its residual architecture and builds its net (its ViT is
 * built by the ViT trainer). */
START_TEST(test_graph_train_study_grid)
{
    lg_study_grid g;
    ck_assert_msg(lg_study_grid_load(&g, lg_test_fixture("../../benchmarks/full.ini")) == LG_OK, "%s", lg_errmsg());
    int found = 0, vits = 0;
    for (int a = 0; a < g.n_archs; a++) {
        if (lg_arch_is_vit(g.archs[a].name)) { /* built by the ViT trainer (study/nets.c), not lg_arch_net */
            vits++;
            ck_assert_int_eq(g.archs[a].dims[0], 784);
            continue;
        }
        lg_net net;
        ck_assert_msg(lg_arch_net(&net, g.archs[a].name, LG_ACT_LGELU) == LG_OK, "%s: %s", g.archs[a].name, lg_errmsg());
        ck_assert_int_eq(net.n_in, g.archs[a].dims[0]);
        if (!lg_net_is_chain(&net)) {
            found++;
            const lg_study_mode *modes;
            ck_assert_int_eq(lg_study_arch_modes(&g, &g.archs[a], &modes), 5);
        }
        lg_net_free(&net);
    }
    ck_assert_int_eq(found, 1);
    ck_assert_int_eq(vits, 1);
    lg_study_grid_free(&g);
    /* a bad residual token in a grid is refused at load */
    ck_assert_int_ne(lg_study_grid_parse(&g, "[study]\narchs = 784,r64x0,10\nseeds = 1\neps = 0.01\ninputs = 1\n"
                                             "modes = auto\n[train]\nepochs = 1\n[regime a]\nact = lgelu\n",
                                         "bad.ini"),
                     LG_OK);
    ck_assert_msg(strstr(lg_errmsg(), "token 2 'r64x0'"), "message: %s", lg_errmsg());
}
END_TEST

Suite *suite_graph_train(void)
{
    Suite *s = suite_create("graph_train");
    TCase *tc = tcase_create("core");
    lg_tcase_timeout(tc, 300);
    tcase_add_test(tc, test_graph_train_gradients);
    tcase_add_test(tc, test_graph_train_rs_gradient);
    tcase_add_test(tc, test_graph_train_end_to_end);
    tcase_add_test(tc, test_graph_train_anneal_gelu);
    tcase_add_test(tc, test_graph_train_step_moves_terms);
    suite_add_tcase(s, tc);
    TCase *tl = tcase_create("limits");
    lg_tcase_timeout(tl, 300);
    tcase_add_test(tl, test_graph_train_arch_grammar);
    tcase_add_test(tl, test_graph_train_study_grid);
    suite_add_tcase(s, tl);
    return s;
}
