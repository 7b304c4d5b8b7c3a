/* check_train.c — train/model, optim, loop and anneal/schedule: the golden
 * 6-5-4-3 network (logits, loss, every gradient), finite differences of the
 * loss through the double-precision core forward, hand-computed optimiser
 * steps, the RS loss against a double oracle and finite differences,
 * determinism, divergence, the annealing schedule, and a short real
 * Fashion-MNIST run that must reach a stated accuracy. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "anneal/schedule.h"
#include "core/netfile.h"
#include "core/idx.h"
#include "core/rng.h"
#include "train/loop.h"
#include "train/model.h"
#include "train/optim.h"
#include "train/rs.h"
#include "testutil.h"
#include "onnx/load.h"

/* ---- golden tiny net -------------------------------------------------- */

#define LG_GMAX_KEYS 40
#define LG_GMAX_VALS 64

typedef struct lg_golden {
    int n;
    char key[LG_GMAX_KEYS][16];
    int len[LG_GMAX_KEYS];
    double val[LG_GMAX_KEYS][LG_GMAX_VALS];
} lg_golden;

static void lg_golden_load(lg_golden *g)
{
    FILE *f = fopen(lg_test_fixture("golden/tiny_net.txt"), "r");
    ck_assert_msg(f != NULL, "cannot open golden/tiny_net.txt");
    memset(g, 0, sizeof *g);
    char line[8192];
    while (fgets(line, sizeof line, f)) {
        char *colon = strchr(line, ':');
        if (line[0] == '#' || !colon) continue;
        ck_assert_int_lt(g->n, LG_GMAX_KEYS);
        *colon = '\0';
        ck_assert_msg(strlen(line) < sizeof g->key[0], "golden key too long: %.20s", line);
        memcpy(g->key[g->n], line, strlen(line) + 1);
        char *p = colon + 1, *end;
        for (;;) {
            double v = strtod(p, &end);
            if (end == p) break;
            ck_assert_int_lt(g->len[g->n], LG_GMAX_VALS);
            g->val[g->n][g->len[g->n]++] = v;
            p = end;
        }
        g->n++;
    }
    fclose(f);
}

static const double *lg_golden_get(const lg_golden *g, const char *key, int expect_len)
{
    for (int i = 0; i < g->n; i++)
        if (strcmp(g->key[i], key) == 0) {
            ck_assert_msg(g->len[i] == expect_len, "golden %s has %d values, expected %d", key, g->len[i], expect_len);
            return g->val[i];
        }
    ck_abort_msg("golden key %s missing", key);
    return NULL;
}

/* The golden net as an lg_net (lgelu hidden layers, λ from s) plus inputs. */
static void lg_golden_net(const lg_golden *g, lg_net *net, float *X, uint8_t *labels)
{
    const double *d = lg_golden_get(g, "dims", 4);
    int dims[4] = {(int)d[0], (int)d[1], (int)d[2], (int)d[3]};
    ck_assert_int_eq(lg_net_init(net, 3, dims, LG_ACT_LGELU), LG_OK);
    net->t = lg_golden_get(g, "t", 1)[0];
    for (int k = 0; k < 3; k++) {
        char key[8];
        lg_layer *L = &net->layers[k];
        snprintf(key, sizeof key, "W%d", k);
        memcpy(L->lin.W, lg_golden_get(g, key, L->lin.n_in * L->n_out), sizeof(double) * (size_t)(L->lin.n_in * L->n_out));
        snprintf(key, sizeof key, "b%d", k);
        memcpy(L->b, lg_golden_get(g, key, L->n_out), sizeof(double) * (size_t)L->n_out);
        if (k < 2) {
            snprintf(key, sizeof key, "s%d", k);
            L->s = lg_golden_get(g, key, 1)[0];
            L->lambda = lg_lambda_from_s(L->s, net->t);
            snprintf(key, sizeof key, "lambda%d", k);
            ck_assert_double_eq_tol(L->lambda, lg_golden_get(g, key, 1)[0], 1e-12);
        }
    }
    const double *x = lg_golden_get(g, "X", 24), *y = lg_golden_get(g, "labels", 4);
    for (int i = 0; i < 24; i++) X[i] = (float)x[i];
    for (int i = 0; i < 4; i++) labels[i] = (uint8_t)y[i];
}

/* every element of got[n] within rel·|ref| + abs_frac·max|ref| */
static void lg_check_tensor(const char *what, const float *got, const double *ref, int n, double rel)
{
    double mx = 0;
    for (int i = 0; i < n; i++) mx = fmax(mx, fabs(ref[i]));
    for (int i = 0; i < n; i++)
        ck_assert_msg(fabs(got[i] - ref[i]) <= rel * fabs(ref[i]) + 1e-6 * mx, "%s[%d] = %.9g, golden %.17g", what, i,
                      got[i], ref[i]);
}

START_TEST(test_train_golden_tiny_net)
{
    static lg_golden g;
    lg_golden_load(&g);
    lg_net net;
    float X[24];
    uint8_t lab[4];
    lg_golden_net(&g, &net, X, lab);
    lg_model m;
    ck_assert_int_eq(lg_model_init(&m, &net, 4), LG_OK);
    const uint32_t idx[4] = {0, 1, 2, 3};
    lg_model_gather(&m, X, idx, 4);
    double loss;
    int correct;
    lg_model_forward(&m, 4, lab, &loss, &correct);
    lg_check_tensor("logits", m.layers[2].a, lg_golden_get(&g, "logits", 12), 12, 1e-5);
    ck_assert_msg(fabs(loss - lg_golden_get(&g, "loss", 1)[0]) <= 1e-5 * 1.44, "loss %.9g", loss);
    lg_model_zero_grad(&m);
    lg_model_backward(&m, 4, lab);
    for (int k = 0; k < 3; k++) {
        char key[8];
        lg_mlayer *L = &m.layers[k];
        snprintf(key, sizeof key, "dW%d", k);
        lg_check_tensor(key, L->dW, lg_golden_get(&g, key, L->n_in * L->n_out), L->n_in * L->n_out, 1e-5);
        snprintf(key, sizeof key, "db%d", k);
        lg_check_tensor(key, L->db, lg_golden_get(&g, key, L->n_out), L->n_out, 1e-5);
        if (k < 2) {
            snprintf(key, sizeof key, "ds%d", k);
            lg_check_tensor(key, L->ds, lg_golden_get(&g, key, 1), 1, 1e-5);
        }
    }
    ck_assert_float_eq(*m.layers[2].ds, 0.0f); /* identity layer: no s gradient */
    lg_model_free(&m);
    lg_net_free(&net);
}
END_TEST

/* ---- finite differences through the double-precision core forward ------ */

/* mean cross-entropy of net (double, lg_net_forward) on X[B][n_in] */
static double lg_loss_double(const lg_net *net, const float *X, const uint8_t *lab, int B)
{
    int w = lg_net_max_width(net), C = lg_net_n_out(net);
    double scratch[2 * 64], x[64], y[64], sum = 0;
    ck_assert_int_le(w, 64);
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

static void lg_fd_check(lg_net *net, const float *X, const uint8_t *lab, int B, const char *label)
{
    lg_model m;
    ck_assert_int_eq(lg_model_init(&m, net, B), LG_OK);
    uint32_t idx[16];
    for (int i = 0; i < B; i++) idx[i] = (uint32_t)i;
    lg_model_gather(&m, X, idx, B);
    lg_model_forward(&m, B, lab, NULL, NULL);
    lg_model_zero_grad(&m);
    lg_model_backward(&m, B, lab);
    const double h = 1e-6;
    int checked = 0;
    for (int k = 0; k < net->n_layers; k++) {
        lg_layer *L = &net->layers[k];
        lg_mlayer *M = &m.layers[k];
        int nw = L->lin.n_in * L->n_out;
        for (int i = 0; i < nw + L->n_out + 1; i++) {
            double *p, *lam = NULL;
            float got;
            if (i < nw) p = &L->lin.W[i], got = M->dW[i];
            else if (i < nw + L->n_out) p = &L->b[i - nw], got = M->db[i - nw];
            else if (L->act == LG_ACT_LGELU) p = &L->s, lam = &L->lambda, got = *M->ds;
            else continue;
            double save = *p;
            *p = save + h;
            if (lam) *lam = lg_lambda_from_s(*p, net->t);
            double lp = lg_loss_double(net, X, lab, B);
            *p = save - h;
            if (lam) *lam = lg_lambda_from_s(*p, net->t);
            double lm = lg_loss_double(net, X, lab, B);
            *p = save;
            if (lam) *lam = lg_lambda_from_s(*p, net->t);
            double fd = (lp - lm) / (2 * h);
            ck_assert_msg(fabs(fd - got) <= 1e-4 * fabs(fd) + 2e-6, "%s layer %d param %d: backward %.9g, FD %.9g",
                          label, k, i, got, fd);
            checked++;
        }
    }
    ck_assert_int_gt(checked, 20);
    lg_model_free(&m);
}

START_TEST(test_train_finite_differences)
{
    static lg_golden g;
    lg_golden_load(&g);
    lg_net net;
    float X[16 * 16];
    uint8_t lab[16];
    lg_golden_net(&g, &net, X, lab);
    lg_fd_check(&net, X, lab, 4, "golden");
    lg_net_free(&net);
    /* random nets of every hidden kind, the weights stored as float values so
     * the float model and the double oracle see the same network */
    const lg_act kinds[] = {LG_ACT_LGELU, LG_ACT_GELU, LG_ACT_RELU, LG_ACT_SIGMOID};
    const int dims[5] = {9, 8, 7, 6, 4};
    lg_rng r;
    lg_rng_init(&r, 5, 9);
    for (int a = 0; a < 4; a++) {
        ck_assert_int_eq(lg_net_init(&net, 4, dims, kinds[a]), LG_OK);
        lg_test_randomize(&net, &r, 0.5);
        for (size_t i = 0; i < net.n_params; i++) net.params[i] = (float)net.params[i];
        for (int k = 0; k < net.n_layers; k++) {
            net.layers[k].s = (float)net.layers[k].s;
            if (net.layers[k].act == LG_ACT_LGELU) net.layers[k].lambda = lg_lambda_from_s(net.layers[k].s, net.t);
        }
        for (int i = 0; i < 12 * 9; i++) X[i] = (float)lg_rng_uniform(&r);
        for (int i = 0; i < 12; i++) lab[i] = (uint8_t)lg_rng_below(&r, 4);
        lg_fd_check(&net, X, lab, 12, lg_act_name(kinds[a]));
        lg_net_free(&net);
    }
}
END_TEST


/* ---- the RS loss: a double-precision oracle and finite differences ------ */

/* Σ_examples Σ_hidden −tanh(1 + l·u) · w/B by interval arithmetic in double
 * on net's ReLU substitution (rs.h), written independently of train/rs.c;
 * *unst = interval-unstable hidden neurons. */
static double lg_rs_oracle(const lg_net *net, const float *X, int B, double eps, double w, long *unst)
{
    static double lo[1024], hi[1024], nlo[1024], nhi[1024];
    double loss = 0.0;
    ck_assert_int_le(lg_net_max_width(net), 1024);
    *unst = 0;
    for (int r = 0; r < B; r++) {
        int n = net->n_in;
        for (int i = 0; i < n; i++) {
            double x = X[r * n + i], a = fmax(x - eps, 0.0), b = fmin(x + eps, 1.0);
            if (net->in_sub) a -= net->in_sub[i], b -= net->in_sub[i];
            if (net->in_div) a /= net->in_div[i], b /= net->in_div[i];
            lo[i] = a, hi[i] = b;
        }
        for (int k = 0; k + 1 < net->n_layers; k++) {
            const lg_layer *L = &net->layers[k];
            for (int j = 0; j < L->n_out; j++) {
                double l = L->b[j], u = L->b[j];
                for (int i = 0; i < L->lin.n_in; i++) {
                    double wv = L->lin.W[j * L->lin.n_in + i];
                    l += wv > 0 ? wv * lo[i] : wv * hi[i];
                    u += wv > 0 ? wv * hi[i] : wv * lo[i];
                }
                loss -= tanh(1.0 + l * u);
                *unst += l < 0 && u > 0;
                nlo[j] = fmax(l, 0.0), nhi[j] = fmax(u, 0.0);
            }
            memcpy(lo, nlo, sizeof lo);
            memcpy(hi, nhi, sizeof hi);
        }
    }
    return w * loss / B;
}

START_TEST(test_train_rs_loss_gradient)
{
    /* random nets (hidden lgelu: the RS loss sees their ReLU substitution), with and without input
     * normalisation; radii that leave some neurons unstable and some stable */
    const int dims[4] = {9, 8, 7, 4};
    const double radii[] = {0.05, 0.3};
    lg_rng r;
    lg_rng_init(&r, 11, 3);
    int n_checked = 0;
    long unst_seen = 0, stable_seen = 0;
    for (int t = 0; t < 4; t++) {
        lg_net net;
        ck_assert_int_eq(lg_net_init(&net, 3, dims, LG_ACT_LGELU), LG_OK);
        lg_test_randomize(&net, &r, 0.8);
        for (size_t i = 0; i < net.n_params; i++) net.params[i] = (float)net.params[i];
        if (t % 2) {
            net.in_sub = malloc(9 * sizeof(double));
            net.in_div = malloc(9 * sizeof(double));
            for (int i = 0; i < 9; i++) net.in_sub[i] = 0.25, net.in_div[i] = 0.5; /* exact in float */
        }
        const int B = 6;
        float X[6 * 9];
        for (int i = 0; i < B * 9; i++) X[i] = (float)lg_rng_uniform(&r);
        double eps = radii[t / 2], w = 0.7;
        lg_model m;
        ck_assert_int_eq(lg_model_init(&m, &net, B), LG_OK);
        lg_rs rs;
        ck_assert_int_eq(lg_rs_init(&rs, &m), LG_OK);
        uint32_t idx[6] = {0, 1, 2, 3, 4, 5};
        lg_model_gather(&m, X, idx, B);
        lg_model_zero_grad(&m);
        long un = 0, un_o = 0;
        double got = lg_rs_loss(&rs, &m, B, eps, w, 1, &un);
        double want = lg_rs_oracle(&net, X, B, eps, w, &un_o);
        ck_assert_msg(fabs(got - want) <= 1e-5 * (1 + fabs(want)), "net %d: RS loss %.9g, oracle %.9g", t, got, want);
        ck_assert_int_eq(un, un_o);
        unst_seen += un;
        stable_seen += (long)B * (8 + 7) - un;
        /* every W and b: the float backward against central differences of the double oracle */
        const double h = 1e-5;
        for (int k = 0; k < net.n_layers; k++) {
            lg_layer *L = &net.layers[k];
            const lg_mlayer *M = &m.layers[k];
            int nw = L->lin.n_in * L->n_out;
            for (int i = 0; i < nw + L->n_out; i++) {
                double *p = i < nw ? &L->lin.W[i] : &L->b[i - nw];
                double g = i < nw ? M->dW[i] : M->db[i - nw];
                double save = *p;
                long dummy;
                *p = save + h;
                double lp = lg_rs_oracle(&net, X, B, eps, w, &dummy);
                *p = save - h;
                double lm = lg_rs_oracle(&net, X, B, eps, w, &dummy);
                *p = save;
                double fd = (lp - lm) / (2 * h);
                ck_assert_msg(fabs(fd - g) <= 1e-3 * fabs(fd) + 1e-5, "net %d layer %d param %d: RS backward %.9g, FD %.9g",
                              t, k, i, g, fd);
                if (k == net.n_layers - 1) ck_assert_msg(g == 0.0, "output layer param %d has RS gradient %g", i, g);
                n_checked++;
            }
        }
        /* accumulates: a second call adds the same gradient again */
        float g0 = m.layers[0].dW[3];
        lg_rs_loss(&rs, &m, B, eps, w, 1, NULL);
        ck_assert_double_eq_tol(m.layers[0].dW[3], 2.0 * g0, 1e-5 * (1 + fabs(g0)));
        lg_rs_free(&rs);
        lg_model_free(&m);
        lg_net_free(&net);
    }
    ck_assert_int_gt(n_checked, 400);
    ck_assert_int_gt(unst_seen, 10);   /* both branches of the ReLU bounds were exercised */
    ck_assert_int_gt(stable_seen, 10);
}
END_TEST

/* The RS loss through conv layers: the trainer's im2col path against the
 * dense oracle on lg_net_densify of the same net, and its gradient (kernel
 * weights and the per-channel tied bias) against central differences. */
static double lg_rs_oracle_conv(const lg_net *net, const float *X, int B, double eps, double w, long *unst)
{
    lg_net d = {0};
    ck_assert_int_eq(lg_net_densify(&d, net, 0), LG_OK);
    double v = lg_rs_oracle(&d, X, B, eps, w, unst);
    lg_net_free(&d);
    return v;
}

START_TEST(test_train_rs_loss_gradient_conv)
{
    int dims[8];
    lg_conv convs[8];
    /* non-square kernel, stride, padding; two convs then dense */
    int nl = lg_net_arch_parse("2x5x5,c3k3x2s2p1,c4k2,6,4", dims, convs, 8);
    ck_assert_int_eq(nl, 4);
    const lg_conv *cp[4] = {&convs[0], &convs[1], &convs[2], &convs[3]};
    lg_rng r;
    lg_rng_init(&r, 12, 5);
    int n_checked = 0;
    long unst_seen = 0;
    for (int t = 0; t < 2; t++) {
        lg_net net;
        ck_assert_int_eq(lg_net_init_conv(&net, nl, dims, cp, LG_ACT_LGELU), LG_OK);
        lg_test_randomize(&net, &r, 0.8);
        for (size_t i = 0; i < net.n_params; i++) net.params[i] = (float)net.params[i];
        for (int k = 0; k < nl; k++) { /* a conv's bias is one per channel */
            lg_layer *L = &net.layers[k];
            if (!convs[k].c_out) continue;
            int hw = L->n_out / convs[k].c_out;
            for (int j = 0; j < L->n_out; j++) L->b[j] = L->b[j / hw * hw];
        }
        const int B = 3, n0 = dims[0];
        float X[3 * 50];
        for (int i = 0; i < B * n0; i++) X[i] = (float)lg_rng_uniform(&r);
        double eps = t ? 0.3 : 0.05, w = 0.7;
        lg_model m;
        ck_assert_int_eq(lg_model_init(&m, &net, B), LG_OK);
        lg_rs rs;
        ck_assert_int_eq(lg_rs_init(&rs, &m), LG_OK);
        uint32_t idx[3] = {0, 1, 2};
        lg_model_gather(&m, X, idx, B);
        lg_model_zero_grad(&m);
        long un = 0, un_o = 0;
        double got = lg_rs_loss(&rs, &m, B, eps, w, 1, &un);
        double want = lg_rs_oracle_conv(&net, X, B, eps, w, &un_o);
        ck_assert_msg(fabs(got - want) <= 1e-5 * (1 + fabs(want)), "conv net %d: RS loss %.9g, oracle %.9g", t, got, want);
        ck_assert_int_eq(un, un_o);
        unst_seen += un;
        const double h = 1e-5;
        for (int k = 0; k < nl; k++) {
            lg_layer *L = &net.layers[k];
            const lg_mlayer *M = &m.layers[k];
            int nw = (int)lg_layer_n_weights(L), nb = convs[k].c_out ? convs[k].c_out : L->n_out;
            int hw = L->n_out / nb;
            for (int i = 0; i < nw + nb; i++) {
                double g = i < nw ? M->dW[i] : M->db[i - nw];
                double fd, lp, lm;
                long dummy;
                if (i < nw) {
                    double save = L->lin.W[i];
                    L->lin.W[i] = save + h;
                    lp = lg_rs_oracle_conv(&net, X, B, eps, w, &dummy);
                    L->lin.W[i] = save - h;
                    lm = lg_rs_oracle_conv(&net, X, B, eps, w, &dummy);
                    L->lin.W[i] = save;
                } else { /* the tied bias: every position of channel (or unit) i − nw moves together */
                    int c = i - nw;
                    for (int j = c * hw; j < (c + 1) * hw; j++) L->b[j] += h;
                    lp = lg_rs_oracle_conv(&net, X, B, eps, w, &dummy);
                    for (int j = c * hw; j < (c + 1) * hw; j++) L->b[j] -= 2 * h;
                    lm = lg_rs_oracle_conv(&net, X, B, eps, w, &dummy);
                    for (int j = c * hw; j < (c + 1) * hw; j++) L->b[j] += h;
                }
                fd = (lp - lm) / (2 * h);
                ck_assert_msg(fabs(fd - g) <= 1e-3 * fabs(fd) + 1e-5, "conv net %d layer %d param %d: RS backward %.9g, FD %.9g",
                              t, k, i, g, fd);
                n_checked++;
            }
        }
        lg_rs_free(&rs);
        lg_model_free(&m);
        lg_net_free(&net);
    }
    ck_assert_int_gt(n_checked, 200);
    ck_assert_int_gt(unst_seen, 5);
}
END_TEST

/* Training with the RS loss on real data leaves fewer interval-unstable
 * ReLUs on the training ball than the same training without it. */
START_TEST(test_train_rs_cuts_unstable)
{
    if (!lg_test_have_data()) return;
    lg_dataset tr, te;
    ck_assert_int_eq(lg_data_load(&tr, LG_DATA_DEFAULT_DIR, "train"), LG_OK);
    ck_assert_int_eq(lg_data_load(&te, LG_DATA_DEFAULT_DIR, "test"), LG_OK);
    tr.n = 2000;
    te.n = 500;
    double unst[2], acc[2];
    for (int a = 0; a < 2; a++) {
        int dims[3] = {784, 32, 10};
        lg_net net;
        ck_assert_int_eq(lg_net_init(&net, 2, dims, LG_ACT_RELU), LG_OK);
        lg_model_init_weights(&net, 3);
        lg_train_opts o = lg_train_opts_default();
        o.epochs = 2;
        o.rs_eps = 0.02;
        o.rs_weight = a ? 0.05 : 0.0;
        lg_train_result res;
        ck_assert_int_eq(lg_train_run(&net, &tr, NULL, &te, &o, &res), LG_OK);
        /* measured afterwards the same way for both nets: the oracle on 200 test images */
        float *X = malloc(200 * 784 * sizeof *X);
        for (int i = 0; i < 200 * 784; i++) X[i] = te.x[i];
        long u = 0;
        lg_rs_oracle(&net, X, 200, 0.02, 1.0, &u);
        free(X);
        unst[a] = u / 200.0;
        acc[a] = res.test_acc;
        lg_net_free(&net);
    }
    ck_assert_msg(unst[1] < 0.5 * unst[0], "unstable ReLUs per image: %.2f without RS, %.2f with", unst[0], unst[1]);
    ck_assert_msg(acc[1] > 0.6, "accuracy with RS %.3f", acc[1]);
    lg_dataset_free(&tr);
    lg_dataset_free(&te);
}
END_TEST

/* ---- optimiser ---------------------------------------------------------- */

START_TEST(test_train_optim_by_hand)
{
    static lg_golden g;
    lg_golden_load(&g);
    lg_net net;
    float X[24];
    uint8_t lab[4];
    lg_golden_net(&g, &net, X, lab);
    for (int kind = 0; kind < 2; kind++) {
        lg_model m;
        ck_assert_int_eq(lg_model_init(&m, &net, 4), LG_OK);
        const uint32_t idx[4] = {0, 1, 2, 3};
        lg_model_gather(&m, X, idx, 4);
        lg_model_forward(&m, 4, lab, NULL, NULL);
        lg_model_zero_grad(&m);
        lg_model_backward(&m, 4, lab);
        float *p0 = malloc(m.n_params * sizeof(float));
        memcpy(p0, m.params, m.n_params * sizeof(float));
        lg_optim_opts o = lg_optim_opts_default();
        o.kind = kind ? LG_OPTIM_ADAMW : LG_OPTIM_SGD;
        o.lr = 0.1, o.momentum = 0.9, o.wd = 0.01, o.c = 9;
        o.s_update = LG_S_UPDATE_S; /* the plain step on s (check_optim.c has the λ-space one) */
        lg_optim_step(&m, &o, 1);
        lg_optim_step(&m, &o, 2); /* same gradients twice */
        for (int k = 0; k < 3; k++) {
            lg_mlayer *L = &m.layers[k];
            int nw = L->n_in * L->n_out;
            for (int i = 0; i < nw + L->n_out + 1; i++) {
                float *p = i < nw ? &L->W[i] : i < nw + L->n_out ? &L->b[i - nw] : L->s;
                size_t off = (size_t)(p - m.params);
                double w = p0[off], gr = m.grads[off];
                int is_w = i < nw, is_s = i == nw + L->n_out;
                double lr = is_s ? o.c * o.lr : o.lr, wd = is_w ? o.wd : 0.0, expect;
                if (is_s && L->act != LG_ACT_LGELU) {
                    expect = w; /* identity layer: s unused, never stepped */
                } else if (kind == 0) {
                    /* v1 = g + wd·w0; w1 = w0 − lr·v1; v2 = μv1 + g + wd·w1; w2 = w1 − lr·v2 */
                    double v1 = gr + wd * w, w1 = w - lr * v1, v2 = 0.9 * v1 + gr + wd * w1;
                    expect = w1 - lr * v2;
                } else {
                    /* constant g: m̂ = g, v̂ = g² at both steps ⇒ step = g/(|g| + ε) + wd·w */
                    double w1 = w - lr * (gr / (fabs(gr) + 1e-8) + wd * w);
                    expect = w1 - lr * (gr / (fabs(gr) + 1e-8) + wd * w1);
                }
                ck_assert_msg(fabs(*p - expect) <= 1e-5 * (1 + fabs(expect)), "%s layer %d param %d: %.9g vs %.9g",
                              kind ? "adamw" : "sgd", k, i, *p, expect);
            }
            if (L->act == LG_ACT_LGELU)
                ck_assert_double_eq_tol(L->lambda, lg_lambda_from_s(*L->s, m.t), 1e-12);
        }
        free(p0);
        lg_model_free(&m);
    }
    lg_net_free(&net);
}
END_TEST

/* ---- training runs on real data ----------------------------------------- */


static void lg_load_subset(lg_dataset *ds, const char *split, size_t n)
{
    ck_assert_msg(lg_test_have_data(), "Fashion-MNIST not installed at %s", LG_DATA_DEFAULT_DIR);
    ck_assert_int_eq(lg_data_load(ds, LG_DATA_DEFAULT_DIR, split), LG_OK);
    lg_dataset_truncate(ds, n);
}

static void lg_small_net(lg_net *net, int hidden, lg_act act, uint64_t seed)
{
    const int dims[3] = {784, hidden, 10};
    ck_assert_int_eq(lg_net_init(net, 2, dims, act), LG_OK);
    lg_model_init_weights(net, seed);
}

START_TEST(test_train_determinism)
{
    lg_dataset tr = {0};
    lg_load_subset(&tr, "train", lg_test_quick() ? 600 : 2000);
    lg_train_opts o = lg_train_opts_default();
    o.epochs = 1, o.batch = 50, o.seed = 7;
    lg_net a, b, c, d;
    lg_small_net(&a, 24, LG_ACT_LGELU, 7);
    lg_small_net(&b, 24, LG_ACT_LGELU, 7);
    lg_small_net(&c, 24, LG_ACT_LGELU, 8);
    lg_small_net(&d, 24, LG_ACT_LGELU, 7);
    ck_assert_int_eq(lg_train_run(&a, &tr, NULL, NULL, &o, NULL), LG_OK);
    ck_assert_int_eq(lg_train_run(&b, &tr, NULL, NULL, &o, NULL), LG_OK);
    ck_assert_msg(memcmp(a.params, b.params, a.n_params * sizeof(double)) == 0, "same seed, different weights");
    ck_assert_double_eq(a.layers[0].lambda, b.layers[0].lambda);
    ck_assert_double_ne(a.layers[0].lambda, lg_lambda_from_s(0.0, 0.1)); /* λ was learned */
    o.seed = 8;
    ck_assert_int_eq(lg_train_run(&c, &tr, NULL, NULL, &o, NULL), LG_OK);
    ck_assert_msg(memcmp(a.params, c.params, a.n_params * sizeof(double)) != 0, "different seed, same weights");
    /* same initial weights, only the shuffling seed differs */
    ck_assert_int_eq(lg_train_run(&d, &tr, NULL, NULL, &o, NULL), LG_OK);
    ck_assert_msg(memcmp(a.params, d.params, a.n_params * sizeof(double)) != 0, "shuffle seed had no effect");
    lg_net_free(&a);
    lg_net_free(&b);
    lg_net_free(&c);
    lg_net_free(&d);
    lg_dataset_free(&tr);
}
END_TEST

START_TEST(test_train_fashion_subset_accuracy)
{
    /* 784-64-10 lgelu, 2 epochs, SGD 0.05/0.9: must reach 75% on the first
     * 2000 test images (10000 examples; quick mode 3000 examples and 65%) */
    size_t n = lg_test_quick() ? 3000 : 10000;
    double need = lg_test_quick() ? 0.65 : 0.75;
    lg_dataset tr = {0}, te = {0};
    lg_load_subset(&tr, "train", n);
    lg_load_subset(&te, "test", 2000);
    lg_net net;
    lg_small_net(&net, 64, LG_ACT_LGELU, 1);
    lg_train_opts o = lg_train_opts_default();
    o.epochs = 2;
    const char *log = lg_test_tmpfile(".csv");
    o.log_path = log;
    lg_train_result res;
    ck_assert_int_eq(lg_train_run(&net, &tr, NULL, &te, &o, &res), LG_OK);
    ck_assert_msg(res.test_acc >= need, "test accuracy %.4f < %.2f", res.test_acc, need);
    ck_assert_int_eq(res.steps, 2 * (long)((n + 127) / 128));
    ck_assert_msg(isfinite(res.loss) && res.loss < 1.0, "loss %g", res.loss);
    /* the written-back double net agrees with the float model's accuracy */
    double *x = malloc(784 * sizeof *x), y[10], *scratch = malloc(2 * 784 * sizeof *scratch);
    size_t hits = 0;
    for (size_t i = 0; i < te.n; i++) {
        for (int j = 0; j < 784; j++) x[j] = te.x[i * 784 + (size_t)j];
        lg_net_forward(&net, x, y, scratch);
        int best = 0;
        for (int j = 1; j < 10; j++)
            if (y[j] > y[best]) best = j;
        hits += best == te.y[i];
    }
    ck_assert_double_eq_tol((double)hits / (double)te.n, res.test_acc, 0.005);
    free(x);
    free(scratch);
    /* CSV log: header and one row per epoch */
    FILE *f = fopen(log, "r");
    ck_assert_ptr_nonnull(f);
    char line[512];
    ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
    ck_assert_str_eq(line, "epoch,step,loss,train_acc,test_acc,lambda_0,samples_per_s\n");
    int rows = 0;
    while (fgets(line, sizeof line, f)) rows++;
    fclose(f);
    remove(log);
    ck_assert_int_eq(rows, 2);
    lg_net_free(&net);
    lg_dataset_free(&tr);
    lg_dataset_free(&te);
}
END_TEST

/* ---- annealing schedule ------------------------------------------------- */

START_TEST(test_anneal_schedule_values)
{
    ck_assert_double_eq_tol(lg_anneal_lambda_target(0.005), 159.57691216057307, 1e-9);
    ck_assert_int_eq(lg_anneal_switch_step(0.25, 1000), 250);
    ck_assert_int_eq(lg_anneal_switch_step(0.25, 10), 2);
    ck_assert_int_eq(lg_anneal_switch_step(1.0, 10), 10);
    ck_assert_int_eq(lg_anneal_switch_step(0.0, 10), 0);
    const double l0 = 1.7, T = 159.6;
    /* before the switch: unchanged; first annealed step: one increment */
    ck_assert_double_eq(lg_anneal_lambda_at(l0, T, 250, 1000, 249), l0);
    ck_assert_double_eq_tol(lg_anneal_lambda_at(l0, T, 250, 1000, 250), l0 + (T - l0) / 750.0, 1e-12);
    /* half-way through the annealed steps: the midpoint */
    ck_assert_double_eq_tol(lg_anneal_lambda_at(l0, T, 250, 1000, 624), 0.5 * (l0 + T), 1e-12);
    /* last step: exactly the target */
    ck_assert_double_eq(lg_anneal_lambda_at(l0, T, 250, 1000, 999), T);
    /* monotone */
    for (long s = 250; s < 999; s++)
        ck_assert(lg_anneal_lambda_at(l0, T, 250, 1000, s) < lg_anneal_lambda_at(l0, T, 250, 1000, s + 1));
    /* no annealing when the switch is at the end */
    ck_assert_double_eq(lg_anneal_lambda_at(l0, T, 1000, 1000, 999), l0);
}
END_TEST

typedef struct lg_trace {
    lg_anneal_schedule sched;
    double lambda[64], s[64];
    long n;
} lg_trace;

/* wraps the anneal hook and records λ and s of layer 0 as each step sees them */
static void lg_trace_hook(void *ctx, lg_model *m, long step, long total)
{
    lg_trace *t = ctx;
    lg_anneal_hook(&t->sched, m, step, total);
    ck_assert_int_eq(step, t->n);
    if (t->n < 64) {
        t->lambda[t->n] = m->layers[0].lambda;
        t->s[t->n] = *m->layers[0].s;
    }
    t->n++;
}

START_TEST(test_anneal_in_training)
{
    lg_dataset tr = {0};
    lg_load_subset(&tr, "train", 1280); /* 10 steps per epoch at batch 128 */
    lg_net net;
    lg_small_net(&net, 16, LG_ACT_LGELU, 3);
    static lg_trace t;
    memset(&t, 0, sizeof t);
    ck_assert_int_eq(lg_anneal_schedule_init(&t.sched, 0.5, 50.0, net.n_layers), LG_OK);
    lg_train_opts o = lg_train_opts_default();
    o.epochs = 2;
    o.hook = lg_trace_hook;
    o.hook_ctx = &t;
    ck_assert_int_eq(lg_train_run(&net, &tr, NULL, NULL, &o, NULL), LG_OK);
    ck_assert_int_eq(t.n, 20);
    ck_assert_int_eq(t.sched.switch_step, 10);
    /* s is learned before the switch and frozen from it on */
    int moved = 0;
    for (int i = 1; i <= 10; i++) moved += t.s[i] != t.s[i - 1];
    ck_assert_int_ge(moved, 5);
    for (int i = 11; i < 20; i++) ck_assert_double_eq(t.s[i], t.s[10]);
    double l0 = t.sched.lambda0[0];
    ck_assert_double_eq_tol(l0, lg_lambda_from_s(t.s[10], 0.1), 1e-6);
    for (int i = 10; i < 20; i++)
        ck_assert_double_eq(t.lambda[i], lg_anneal_lambda_at(l0, 50.0, 10, 20, i));
    ck_assert_double_eq(t.lambda[19], 50.0);
    /* the written net carries exactly λ_target and a consistent s */
    ck_assert_int_eq(net.layers[0].act, LG_ACT_LGELU);
    ck_assert_double_eq(net.layers[0].lambda, 50.0);
    ck_assert_double_eq_tol(lg_lambda_from_s(net.layers[0].s, net.t), 50.0, 1e-9);
    ck_assert_int_eq(lg_net_validate(&net), LG_OK);
    lg_net_free(&net);
    lg_dataset_free(&tr);
}
END_TEST

START_TEST(test_anneal_gelu_net)
{
    /* `lgelu anneal` on a gelu net: λ goes from 1 to the target from step 0 */
    lg_dataset tr = {0};
    lg_load_subset(&tr, "train", 640);
    lg_net net;
    lg_small_net(&net, 16, LG_ACT_GELU, 4);
    ck_assert_int_eq(lg_anneal_prepare_net(&net, "gelu net"), LG_OK);
    ck_assert_int_eq(net.layers[0].act, LG_ACT_LGELU);
    ck_assert_double_eq(net.layers[0].lambda, 1.0);
    ck_assert_int_eq(net.layers[1].act, LG_ACT_IDENTITY);
    static lg_trace t;
    memset(&t, 0, sizeof t);
    ck_assert_int_eq(lg_anneal_schedule_init(&t.sched, 0.0, 159.6, net.n_layers), LG_OK);
    lg_train_opts o = lg_train_opts_default();
    o.epochs = 1;
    o.hook = lg_trace_hook;
    o.hook_ctx = &t;
    ck_assert_int_eq(lg_train_run(&net, &tr, NULL, NULL, &o, NULL), LG_OK);
    ck_assert_int_eq(t.n, 5);
    ck_assert_double_eq_tol(t.lambda[0], 1.0 + 158.6 / 5.0, 1e-9);
    ck_assert_double_eq(t.lambda[4], 159.6);
    ck_assert_double_eq(net.layers[0].lambda, 159.6);
    lg_net_free(&net);
    lg_dataset_free(&tr);
}
END_TEST

/* ---- limits ---------------------------------------------------------------- */

START_TEST(test_train_nan_stops)
{
    lg_dataset tr = {0};
    lg_load_subset(&tr, "train", 1000);
    lg_net net, before;
    lg_small_net(&net, 16, LG_ACT_LGELU, 2);
    ck_assert_int_eq(lg_net_copy(&before, &net), LG_OK);
    lg_train_opts o = lg_train_opts_default();
    o.epochs = 3;
    o.optim.lr = 1e30;
    const char *log = lg_test_tmpfile(".csv");
    o.log_path = log;
    ck_assert_int_eq(lg_train_run(&net, &tr, NULL, NULL, &o, NULL), LG_ERR_NUMERIC);
    ck_assert_msg(strstr(lg_errmsg(), "diverged") != NULL, "message: %s", lg_errmsg());
    ck_assert_msg(memcmp(net.params, before.params, net.n_params * sizeof(double)) == 0, "net changed on failure");
    ck_assert_double_eq(net.layers[0].lambda, before.layers[0].lambda);
    remove(log);
    lg_net_free(&net);
    lg_net_free(&before);
    lg_dataset_free(&tr);
}
END_TEST

START_TEST(test_train_bad_arguments)
{
    lg_dataset tr = {0};
    lg_load_subset(&tr, "train", 300);
    lg_net net;
    lg_small_net(&net, 8, LG_ACT_RELU, 1);
    /* an activation code this build does not know is refused by the model */
    lg_model um;
    net.layers[0].act = (lg_act)LG_ACT_COUNT;
    ck_assert_int_eq(lg_model_init(&um, &net, 4), LG_ERR_UNSUPPORTED);
    ck_assert_msg(strstr(lg_errmsg(), "layer 0") && strstr(lg_errmsg(), "activation"), "message: %s", lg_errmsg());
    net.layers[0].act = LG_ACT_RELU;
    lg_train_opts o = lg_train_opts_default();
    o.epochs = 0;
    ck_assert_int_eq(lg_train_run(&net, &tr, NULL, NULL, &o, NULL), LG_ERR_ARG);
    o.epochs = 1, o.batch = 0;
    ck_assert_int_eq(lg_train_run(&net, &tr, NULL, NULL, &o, NULL), LG_ERR_ARG);
    o.batch = 32, o.optim.lr = -1;
    ck_assert_int_eq(lg_train_run(&net, &tr, NULL, NULL, &o, NULL), LG_ERR_ARG);
    o.optim.lr = 0.05;
    o.log_path = "/nonexistent-dir/x/log.csv";
    ck_assert_int_eq(lg_train_run(&net, &tr, NULL, NULL, &o, NULL), LG_ERR_IO);
    ck_assert_msg(strstr(lg_errmsg(), "/nonexistent-dir/x/log.csv") != NULL, "message: %s", lg_errmsg());
    o.log_path = NULL;
    lg_net_free(&net);
    /* too few outputs for the labels; wrong input width */
    const int d5[3] = {784, 8, 5}, d100[3] = {100, 8, 10};
    ck_assert_int_eq(lg_net_init(&net, 2, d5, LG_ACT_RELU), LG_OK);
    ck_assert_int_eq(lg_train_run(&net, &tr, NULL, NULL, &o, NULL), LG_ERR_ARG);
    ck_assert_msg(strstr(lg_errmsg(), "label") != NULL, "message: %s", lg_errmsg());
    lg_net_free(&net);
    ck_assert_int_eq(lg_net_init(&net, 2, d100, LG_ACT_RELU), LG_OK);
    ck_assert_int_eq(lg_train_run(&net, &tr, NULL, NULL, &o, NULL), LG_ERR_ARG);
    lg_net_free(&net);
    /* schedule options and relu-only nets */
    lg_anneal_schedule s;
    ck_assert_int_eq(lg_anneal_schedule_init(&s, -0.1, 100, 3), LG_ERR_ARG);
    ck_assert_int_eq(lg_anneal_schedule_init(&s, 1.5, 100, 3), LG_ERR_ARG);
    ck_assert_int_eq(lg_anneal_schedule_init(&s, 0.25, 0.5, 3), LG_ERR_ARG);
    ck_assert_int_eq(lg_anneal_schedule_init(&s, 0.25, NAN, 3), LG_ERR_ARG);
    ck_assert_int_eq(lg_anneal_schedule_init(&s, 0.25, 100, LG_ANNEAL_MAX_LAYERS + 1), LG_ERR_UNSUPPORTED);
    lg_small_net(&net, 8, LG_ACT_RELU, 1);
    ck_assert_int_eq(lg_anneal_prepare_net(&net, "relu.lgnet"), LG_ERR_ARG);
    ck_assert_msg(strstr(lg_errmsg(), "relu.lgnet") != NULL, "message: %s", lg_errmsg());
    /* model ↔ net shape mismatch */
    lg_model m;
    ck_assert_int_eq(lg_model_init(&m, &net, 4), LG_OK);
    lg_net other;
    const int d2[3] = {784, 9, 10};
    ck_assert_int_eq(lg_net_init(&other, 2, d2, LG_ACT_RELU), LG_OK);
    ck_assert_int_eq(lg_model_to_net(&m, &other), LG_ERR_ARG);
    lg_model_free(&m);
    ck_assert_int_eq(lg_model_init(&m, &net, 0), LG_ERR_ARG);
    lg_net_free(&other);
    lg_net_free(&net);
    lg_dataset_free(&tr);
}
END_TEST

/* ---- the CLI contract ------------------------------------------------------ */


START_TEST(test_train_cli)
{
    const char *out = lg_test_tmpfile(".lgnet"), *out2 = lg_test_tmpfile(".lgnet"), *relu = lg_test_tmpfile(".lgnet");
    char args[1024];
    ck_assert_int_eq(lg_test_cli("train --help", NULL), 0);
    ck_assert_int_eq(lg_test_cli("anneal --help", NULL), 0);
    ck_assert_int_eq(lg_test_cli("train --epochs 1 --bogus -o x", NULL), 2);
    ck_assert_int_eq(lg_test_cli("train --epochs 1 --lr -1 -o x", NULL), 2);
    ck_assert_int_eq(lg_test_cli("train --epochs 1 --arch 784,,10 -o x", NULL), 2);
    ck_assert_int_eq(lg_test_cli("train --epochs 1 --act tanh -o x", NULL), 2);
    ck_assert_int_eq(lg_test_cli("train --epochs 1", NULL), 2); /* no -o */
    ck_assert_int_eq(lg_test_cli("train -o x", NULL), 2);       /* no --epochs */
    ck_assert_int_eq(lg_test_cli("anneal --epochs 1 -o x", NULL), 2); /* no input net */
    snprintf(args, sizeof args, "train --epochs 1 --arch 784,8,10 --data /nonexistent -o %s", out);
    ck_assert_int_eq(lg_test_cli(args, NULL), 1);
    /* a real run writes a loadable net with the asked shape and annealed λ */
    snprintf(args, sizeof args, "train --arch 784,12,10 --epochs 1 --subset 600 --val 100 --anneal-start 0.5 "
                                "--lambda-target 30 -o %s", out);
    ck_assert_int_eq(lg_test_cli(args, NULL), 0);
    lg_net net;
    ck_assert_int_eq(lg_net_load(&net, out), LG_OK);
    ck_assert_int_eq(net.n_layers, 2);
    ck_assert_int_eq(net.layers[0].n_out, 12);
    ck_assert_int_eq(net.layers[0].act, LG_ACT_LGELU);
    ck_assert_double_eq(net.layers[0].lambda, 30.0);
    lg_net_free(&net);
    /* anneal continues it; a relu net is a network of the wrong kind, refused with exit 2 */
    snprintf(args, sizeof args, "anneal %s --epochs 1 --subset 300 --lambda-target 60 -o %s", out, out2);
    ck_assert_int_eq(lg_test_cli(args, NULL), 0);
    ck_assert_int_eq(lg_net_load(&net, out2), LG_OK);
    ck_assert_double_eq(net.layers[0].lambda, 60.0);
    lg_net_free(&net);
    snprintf(args, sizeof args, "train --arch 784,8,10 --act relu --epochs 1 --subset 300 -o %s", relu);
    ck_assert_int_eq(lg_test_cli(args, NULL), 0);
    snprintf(args, sizeof args, "anneal %s --epochs 1 --subset 300 -o %s", relu, out2);
    ck_assert_int_eq(lg_test_cli(args, NULL), 2);
    remove(out);
    remove(out2);
    remove(relu);
}
END_TEST

Suite *suite_train(void)
{
    Suite *s = suite_create("train");
    TCase *tc = tcase_create("core");
    lg_tcase_timeout(tc, 300);
    tcase_add_test(tc, test_train_golden_tiny_net);
    tcase_add_test(tc, test_train_finite_differences);
    tcase_add_test(tc, test_train_rs_loss_gradient);
    tcase_add_test(tc, test_train_rs_loss_gradient_conv);
    tcase_add_test(tc, test_train_rs_cuts_unstable);
    tcase_add_test(tc, test_train_optim_by_hand);
    tcase_add_test(tc, test_train_determinism);
    tcase_add_test(tc, test_train_fashion_subset_accuracy);
    tcase_add_test(tc, test_anneal_schedule_values);
    tcase_add_test(tc, test_anneal_in_training);
    tcase_add_test(tc, test_anneal_gelu_net);
    suite_add_tcase(s, tc);
    TCase *tl = tcase_create("limits");
    lg_tcase_timeout(tl, 120);
    tcase_add_test(tl, test_train_nan_stops);
    tcase_add_test(tl, test_train_bad_arguments);
    tcase_add_test(tl, test_train_cli);
    suite_add_tcase(s, tl);
    return s;
}
