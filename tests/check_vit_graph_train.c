/* check_vit_graph_train.c — a Transformer graph trained through the node
 * entries (train/node.h) by the float trainer (train/model.h): on the graph
 * of a tiny ViT (train/vit_net.h: conv, index map, per-token maps, product,
 * softmax and layernorm nodes, a per-token head and its index map) the model's logits equal the
 * double forward lg_net_forward, and every gradient — each weight of every
 * term kind, layernorm's γ and β, the biases (tied over a conv's positions
 * and a per-token map's tokens), the MLP's λ parameter s and the input —
 * equals central differences of the double loss; the model's copy written
 * back is the net it was built from; the RS loss refuses the nodes. In the
 * ViT's parameterisation (lg_vit_model_param) the graph trainer's steps are
 * train/vit.c's: the same training losses step by step with SGD and AdamW,
 * class token and mean pooling, and the same logits after. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/op.h"
#include "core/rng.h"
#include "train/loop.h"
#include "train/model.h"
#include "train/optim.h"
#include "train/rs.h"
#include "train/vit.h"
#include "train/vit_net.h"
#include "train/vit_train.h"
#include "testutil.h"

enum { VG_B = 3 };

typedef struct vg_case {
    lg_net net;
    lg_model m;
    int n, C;
    float X[VG_B * 64];
    uint8_t y[VG_B];
    double *x, *z, *scr;
} vg_case;

/* Mean softmax cross-entropy of the double forward over the batch, from raw inputs X. */
static double vg_loss(const vg_case *c, const float *X)
{
    double s = 0.0;
    for (int r = 0; r < VG_B; r++) {
        for (int i = 0; i < c->n; i++) c->x[i] = X[r * c->n + i];
        lg_net_forward(&c->net, c->x, c->z, c->scr);
        double mx = c->z[0], e = 0.0;
        for (int j = 1; j < c->C; j++) mx = fmax(mx, c->z[j]);
        for (int j = 0; j < c->C; j++) e += exp(c->z[j] - mx);
        s += log(e) + mx - c->z[c->y[r]];
    }
    return s / VG_B;
}

/* The double loss with model parameter i at v (written to the net through lg_model_to_net). */
static double vg_loss_at(vg_case *c, size_t i, float v)
{
    float save = c->m.params[i];
    c->m.params[i] = v;
    lg_model_sync_lambda(&c->m);
    ck_assert_int_eq(lg_model_to_net(&c->m, &c->net), LG_OK);
    double l = vg_loss(c, c->X);
    c->m.params[i] = save;
    lg_model_sync_lambda(&c->m);
    return l;
}

/* Kinds of parameter, for the report and the count of each. */
enum { VG_CONV, VG_TOKMAP, VG_DENSE, VG_GAMMA, VG_BETA, VG_B_CONV, VG_B_TOKMAP, VG_B_INDEX, VG_B_DENSE, VG_S, VG_X,
       VG_N };
static const char *const vg_names[VG_N] = {"conv W",       "per-token W", "dense W",      "layernorm gamma",
                                           "layernorm beta", "conv b",    "per-token b",  "index-map b",
                                           "dense b",      "s (lambda)",  "input"};

static int vg_bias_kind(lg_layer_kind k)
{
    return k == LG_LAYER_CONV2D ? VG_B_CONV : k == LG_LAYER_TOKMAP ? VG_B_TOKMAP : k == LG_LAYER_INDEX ? VG_B_INDEX
                                                                                                     : VG_B_DENSE;
}

/* kind[i] of every model parameter (−1: not checked: s of a layer without a parameter). */
static void vg_label(const lg_model *m, int *kind)
{
    for (size_t i = 0; i < m->n_params; i++) kind[i] = -1;
    for (int k = 0; k < m->n_layers; k++) {
        lg_mlayer *L = &m->layers[k];
        for (int t = 0; t < lg_mlayer_n_lin(L); t++) {
            const lg_mterm *T = lg_mlayer_term(L, t);
            size_t o = (size_t)(T->W - m->params);
            for (size_t i = 0; i < T->n_w; i++)
                kind[o + i] = T->kind == LG_LAYER_CONV2D   ? VG_CONV
                              : T->kind == LG_LAYER_TOKMAP ? VG_TOKMAP
                              : T->kind == LG_LAYER_DENSE  ? VG_DENSE
                              : i < T->n_w / 2             ? VG_GAMMA
                                                           : VG_BETA;
        }
        for (size_t i = 0; i < L->n_b; i++) kind[(size_t)(L->b - m->params) + i] = vg_bias_kind(L->kind);
        if (lg_act_info_of(L->act)->softplus) kind[L->s - m->params] = VG_S;
    }
}

/* The model of c->net (then written back: the net is exactly the model's) and a random batch. */
static void vg_finish(vg_case *c, lg_rng *r)
{
    ck_assert_int_eq(lg_model_init(&c->m, &c->net, VG_B), LG_OK);
    lg_model_sync_lambda(&c->m);
    ck_assert_int_eq(lg_model_to_net(&c->m, &c->net), LG_OK);
    ck_assert_int_eq(lg_net_validate(&c->net), LG_OK);
    c->n = c->net.n_in;
    c->C = lg_net_n_out(&c->net);
    ck_assert_int_le(VG_B * c->n, (int)(sizeof c->X / sizeof c->X[0]));
    for (int i = 0; i < VG_B * c->n; i++) c->X[i] = (float)lg_rng_uniform(r);
    for (int i = 0; i < VG_B; i++) c->y[i] = (uint8_t)(i % c->C);
    c->x = malloc((size_t)c->n * sizeof *c->x);
    c->z = malloc((size_t)c->C * sizeof *c->z);
    c->scr = malloc(2 * (size_t)lg_net_max_width(&c->net) * sizeof *c->scr);
    ck_assert(c->x && c->z && c->scr);
}

/* x[6] → L0 = lgelu(W·x + b)                          [6]
 *      → L1 = product of L0 with itself, K = 2, random tables (repeats)  [5]
 *      → L2 = layernorm(L1), one group, random γ, β    [5]
 *      → L3 = softmax(L2), one group                   [5]
 *      → L4 = W·L3 + W'·L0 + b                          [3]  (a skip from L0) */
static void vg_make_mixed(vg_case *c, uint64_t seed)
{
    memset(c, 0, sizeof *c);
    lg_linear t0 = {.kind = LG_LAYER_DENSE, .n_in = 6, .src = LG_NET_INPUT};
    lg_linear t1 = {.kind = LG_LAYER_BILINEAR, .n_in = 6, .src = 0, .op = {.src_b = 0, .n_in_b = 6, .K = 2}};
    lg_linear t2 = {.kind = LG_LAYER_LAYERNORM, .n_in = 5, .src = 1, .op = {.group = 5, .eps = 1e-5}};
    lg_linear t3 = {.kind = LG_LAYER_SOFTMAX, .n_in = 5, .src = 2, .op = {.group = 5}};
    lg_linear t4[2] = {{.kind = LG_LAYER_DENSE, .n_in = 5, .src = 3}, {.kind = LG_LAYER_DENSE, .n_in = 6, .src = 0}};
    lg_layer_spec sp[5] = {{6, LG_ACT_LGELU, 1, &t0}, {5, LG_ACT_IDENTITY, 1, &t1}, {5, LG_ACT_IDENTITY, 1, &t2},
                           {5, LG_ACT_IDENTITY, 1, &t3}, {3, LG_ACT_IDENTITY, 2, t4}};
    ck_assert_int_eq(lg_net_build(&c->net, 6, 5, sp), LG_OK);
    lg_rng r;
    lg_rng_init(&r, seed, 5);
    for (int k = 0; k < 5; k++) {
        lg_layer *L = &c->net.layers[k];
        for (int t = 0; t < lg_layer_n_lin(L); t++) {
            lg_linear *A = lg_layer_lin_mut(L, t);
            size_t nw = lg_linear_n_weights(A);
            for (size_t i = 0; i < nw; i++) A->W[i] = (float)((A->kind == LG_LAYER_LAYERNORM && i < 5) + 0.7 * lg_rng_normal(&r));
        }
        if (!lg_layer_is(L, LG_OPF_NODE))
            for (int o = 0; o < L->n_out; o++) L->b[o] = (float)(0.3 * lg_rng_normal(&r));
    }
    int *map = c->net.layers[1].lin.map;
    for (int q = 0; q < 2 * 5 * 2; q++) map[q] = (int)(lg_rng_uniform(&r) * 6.0) % 6;
    c->net.layers[0].s = 0.3;
    vg_finish(c, &r);
}

static void vg_make(vg_case *c, const char *arch, lg_act act, uint64_t seed)
{
    memset(c, 0, sizeof *c);
    lg_vit_spec sp;
    ck_assert_int_eq(lg_arch_vit_parse(&sp, arch), LG_OK);
    lg_vit v;
    ck_assert_int_eq(lg_vit_init(&v, &sp, act, 1), LG_OK);
    lg_vit_init_weights(&v, seed);
    lg_rng r;
    lg_rng_init(&r, seed, 3);
    /* away from the initial values (γ = 1, β = 0, biases 0), so that every gradient path is used */
    for (size_t i = 0; i < v.n_params; i++) v.params[i] += (float)(0.2 * lg_rng_normal(&r));
    if (lg_act_info_of(act)->has_param)
        for (int l = 0; l < sp.depth; l++) v.params[v.blk[l][LG_VB_ACT]] = 1.3f + 0.4f * (float)l;
    ck_assert_int_eq(lg_vit_to_net(&v, &c->net), LG_OK);
    lg_vit_free(&v);
    vg_finish(c, &r);
}

static void vg_free(vg_case *c)
{
    lg_model_free(&c->m);
    lg_net_free(&c->net);
    free(c->x);
    free(c->z);
    free(c->scr);
}

/* |g − fd| within 2e-3·|fd| + 3e-5; the largest relative error over |fd| > 1e-3 into *rel. */
static void vg_cmp(double g, double fd, const char *what, size_t i, double *rel)
{
    ck_assert_msg(fabs(g - fd) <= 2e-3 * fabs(fd) + 3e-5, "%s [%zu]: backward %.9g, FD %.9g", what, i, g, fd);
    if (fabs(fd) > 1e-3 && fabs(g - fd) / fabs(fd) > *rel) *rel = fabs(g - fd) / fabs(fd);
}

/* A ViT's graph (arch; NULL: vg_make_mixed's net, every kind it has checked). gather: the
 * product nodes through their gather loops, else through their plan (one sgemm per head:
 * attention's tables are matrix products, which the plan must find). */
static void vg_gradients(const char *arch, lg_act act, uint64_t seed, int gather)
{
    vg_case c;
    if (arch) vg_make(&c, arch, act, seed);
    else vg_make_mixed(&c, seed);
    if (!arch) arch = "mixed", act = LG_ACT_LGELU;
    int n_prod = 0;
    for (int k = 0; k < c.m.n_layers; k++) {
        if (c.m.layers[k].kind != LG_LAYER_BILINEAR) continue;
        ck_assert_ptr_nonnull(c.m.layers[k].plan);
        ck_assert_msg(gather || c.m.layers[k].plan[0] > 0, "%s: product node %d has no plan", arch, k);
        if (gather) c.m.layers[k].plan = NULL;
        n_prod++;
    }
    ck_assert_int_gt(n_prod, 0);
    uint32_t idx[VG_B] = {0, 1, 2};
    lg_model_gather(&c.m, c.X, idx, VG_B);
    double loss;
    lg_model_forward(&c.m, VG_B, c.y, &loss, NULL);
    /* the forward against the double oracle */
    const float *logits = c.m.layers[c.m.n_layers - 1].a;
    for (int r = 0; r < VG_B; r++) {
        for (int i = 0; i < c.n; i++) c.x[i] = c.X[r * c.n + i];
        lg_net_forward(&c.net, c.x, c.z, c.scr);
        for (int j = 0; j < c.C; j++)
            ck_assert_msg(fabs(logits[r * c.C + j] - c.z[j]) <= 1e-4 * (1 + fabs(c.z[j])),
                          "%s: row %d logit %d: model %.9g, oracle %.9g", arch, r, j, (double)logits[r * c.C + j], c.z[j]);
    }
    double want = vg_loss(&c, c.X);
    ck_assert_msg(fabs(loss - want) <= 1e-4 * (1 + want), "%s: loss %.9g, oracle %.9g", arch, loss, want);
    c.m.want_dx = 1;
    lg_model_zero_grad(&c.m);
    lg_model_backward(&c.m, VG_B, c.y);
    /* every parameter by central differences in float steps (the exact step taken is divided by) */
    int *kind = malloc(c.m.n_params * sizeof *kind), count[VG_N] = {0};
    double rel[VG_N] = {0};
    vg_label(&c.m, kind);
    const double h = 1.0 / 512;
    for (size_t i = 0; i < c.m.n_params; i++) {
        if (kind[i] < 0) continue;
        float p = c.m.params[i], pp = (float)(p + h), pm = (float)(p - h);
        double fd = (vg_loss_at(&c, i, pp) - vg_loss_at(&c, i, pm)) / ((double)pp - (double)pm);
        vg_cmp(c.m.grads[i], fd, vg_names[kind[i]], i, &rel[kind[i]]);
        count[kind[i]]++;
    }
    ck_assert_int_eq(lg_model_to_net(&c.m, &c.net), LG_OK);
    /* the input (no normalisation in a ViT's net: ∂L/∂x of the raw input) */
    float Xp[VG_B * 64];
    for (int i = 0; i < VG_B * c.n; i++) {
        memcpy(Xp, c.X, (size_t)(VG_B * c.n) * sizeof *Xp);
        float x0 = c.X[i], xp = (float)(x0 + h), xm = (float)(x0 - h);
        Xp[i] = xp;
        double lp = vg_loss(&c, Xp);
        Xp[i] = xm;
        double fd = (lp - vg_loss(&c, Xp)) / ((double)xp - (double)xm);
        vg_cmp(c.m.dx[i], fd, vg_names[VG_X], (size_t)i, &rel[VG_X]);
        count[VG_X]++;
    }
    for (int q = 0; q < VG_N; q++) {
        if (q == VG_S && !lg_act_info_of(act)->softplus) continue;
        if (!strcmp(arch, "mixed") && q != VG_DENSE && q != VG_GAMMA && q != VG_BETA && q != VG_B_DENSE && q != VG_S &&
            q != VG_X)
            continue;
        if (strcmp(arch, "mixed") && (q == VG_DENSE || q == VG_B_DENSE))
            continue; /* a ViT's head: a per-token map and an index term */
        ck_assert_msg(count[q] > 0, "%s: no %s checked", arch, vg_names[q]);
        if (getenv("LG_FD_REPORT"))
            printf("%s%s %s: %d gradients, max relative error %.2e\n", arch, gather ? " (gather)" : "", vg_names[q],
                   count[q], rel[q]);
    }
    free(kind);
    vg_free(&c);
}

START_TEST(test_vit_graph_train_gradients_cls_lgelu) { vg_gradients("1x8x8,vit:p4,d8,h2,L1,m12,cls,3", LG_ACT_LGELU, 5, 0); }
END_TEST

START_TEST(test_vit_graph_train_gradients_gather)
{
    vg_gradients("1x8x8,vit:p4,d8,h2,L1,m12,cls,3", LG_ACT_LGELU, 8, 1);
}
END_TEST

/* A product of a node with itself through random tables with repeats, a layernorm, a softmax
 * and a skip: the gather loops' accumulation (both factors' gradients into one slot). */
START_TEST(test_vit_graph_train_gradients_mixed) { vg_gradients(NULL, LG_ACT_LGELU, 9, 1); }
END_TEST

START_TEST(test_vit_graph_train_gradients_mean_gelu)
{
    if (getenv("LG_TEST_QUICK")) return;
    vg_gradients("2x4x4,vit:mean,p2,d4,h1,L2,m6,3", LG_ACT_GELU, 6, 0);
}
END_TEST

/* One optimiser-free step along −grad lowers the loss, and the trained model writes back into a
 * net that validates and still equals its float forward; the RS loss refuses the nodes. */
/* Six steps of train/vit.c and of the graph trainer in the ViT's parameterisation from the same weights on the
 * same batches: the same loss at every step (float rounding), and the same logits after. */
static void vg_same_steps(const char *arch, lg_act act, lg_optim_kind kind, uint64_t seed)
{
    enum { B = 3, N = 6 };
    lg_vit_spec sp;
    ck_assert_int_eq(lg_arch_vit_parse(&sp, arch), LG_OK);
    lg_vit v;
    ck_assert_int_eq(lg_vit_init(&v, &sp, act, B), LG_OK);
    lg_vit_init_weights(&v, seed);
    lg_net net;
    ck_assert_int_eq(lg_vit_to_net(&v, &net), LG_OK);
    lg_model m;
    ck_assert_int_eq(lg_model_init(&m, &net, B), LG_OK);
    ck_assert_int_eq(lg_vit_model_param(&m, &net), LG_OK);
    lg_optim_opts o = lg_train_opts_default().optim;
    o.kind = kind;
    o.lr = kind == LG_OPTIM_SGD ? 0.2 : 0.01;
    o.wd = kind == LG_OPTIM_SGD ? 0.01 : 0.05;
    int n = net.n_in;
    float X[N * 2 * 8 * 8];
    uint8_t y[N];
    ck_assert_int_le(N * n, (int)(sizeof X / sizeof X[0]));
    lg_rng r;
    lg_rng_init(&r, seed, 4);
    for (int i = 0; i < N * n; i++) X[i] = (float)lg_rng_uniform(&r);
    for (int i = 0; i < N; i++) y[i] = (uint8_t)(i % sp.n_out);
    for (long step = 1; step <= 6; step++) {
        uint32_t idx[B];
        for (int i = 0; i < B; i++) idx[i] = (uint32_t)((step * B + i) % N);
        uint8_t lab[B];
        for (int i = 0; i < B; i++) lab[i] = y[idx[i]];
        double lv, lg;
        lg_vit_gather(&v, X, idx, B);
        lg_vit_forward(&v, B, lab, &lv, NULL);
        lg_vit_zero_grad(&v);
        lg_vit_backward(&v, B, lab);
        lg_vit_step(&v, &o, step);
        lg_model_gather(&m, X, idx, B);
        lg_model_forward(&m, B, lab, &lg, NULL);
        lg_model_zero_grad(&m);
        lg_model_backward(&m, B, lab);
        lg_optim_step(&m, &o, step);
        ck_assert_msg(fabs(lv - lg) <= 2e-5 * (1 + lv), "%s step %ld: loss %.9g (vit.c), %.9g (graph)", arch, step,
                      lv, lg);
    }
    uint32_t idx[B] = {0, 1, 2};
    lg_vit_gather(&v, X, idx, B);
    lg_vit_forward(&v, B, NULL, NULL, NULL);
    lg_model_gather(&m, X, idx, B);
    lg_model_forward(&m, B, NULL, NULL, NULL);
    const float *zg = m.layers[m.n_layers - 1].a;
    for (int i = 0; i < B * sp.n_out; i++)
        ck_assert_msg(fabsf(v.logits[i] - zg[i]) <= 1e-4f * (1 + fabsf(v.logits[i])), "%s logit %d: %.7g, %.7g", arch,
                      i, v.logits[i], zg[i]);
    lg_model_free(&m);
    lg_net_free(&net);
    lg_vit_free(&v);
}

START_TEST(test_vit_graph_train_same_steps_cls_sgd)
{
    vg_same_steps("1x8x8,vit:p4,d8,h2,L1,m12,cls,3", LG_ACT_LGELU, LG_OPTIM_SGD, 11);
}
END_TEST

START_TEST(test_vit_graph_train_same_steps_mean_adamw)
{
    vg_same_steps("2x4x4,vit:mean,p2,d4,h1,L2,m6,3", LG_ACT_GELU, LG_OPTIM_ADAMW, 12);
}
END_TEST

START_TEST(test_vit_graph_train_step)
{
    vg_case c;
    vg_make(&c, "1x8x8,vit:p4,d8,h2,L1,m12,cls,3", LG_ACT_LGELU, 7);
    uint32_t idx[VG_B] = {0, 1, 2};
    lg_model_gather(&c.m, c.X, idx, VG_B);
    double l0, l1;
    lg_model_forward(&c.m, VG_B, c.y, &l0, NULL);
    lg_model_zero_grad(&c.m);
    lg_model_backward(&c.m, VG_B, c.y);
    for (size_t i = 0; i < c.m.n_params; i++) c.m.params[i] -= 0.05f * c.m.grads[i];
    lg_model_sync_lambda(&c.m);
    lg_model_forward(&c.m, VG_B, c.y, &l1, NULL);
    ck_assert_msg(l1 < l0, "loss %.9g after a step, %.9g before", l1, l0);
    ck_assert_int_eq(lg_model_to_net(&c.m, &c.net), LG_OK);
    ck_assert_int_eq(lg_net_validate(&c.net), LG_OK);
    ck_assert_msg(fabs(vg_loss(&c, c.X) - l1) <= 1e-4 * (1 + l1), "written-back net's loss differs");
    lg_rs rs;
    ck_assert_int_eq(lg_rs_init(&rs, &c.m), LG_ERR_UNSUPPORTED);
    vg_free(&c);
}
END_TEST

Suite *suite_vit_graph_train(void)
{
    Suite *s = suite_create("vit_graph_train");
    TCase *tc = tcase_create("vit_graph_train");
    lg_tcase_timeout(tc, 60);
    tcase_add_test(tc, test_vit_graph_train_gradients_cls_lgelu);
    tcase_add_test(tc, test_vit_graph_train_gradients_gather);
    tcase_add_test(tc, test_vit_graph_train_gradients_mixed);
    tcase_add_test(tc, test_vit_graph_train_gradients_mean_gelu);
    tcase_add_test(tc, test_vit_graph_train_step);
    tcase_add_test(tc, test_vit_graph_train_same_steps_cls_sgd);
    tcase_add_test(tc, test_vit_graph_train_same_steps_mean_adamw);
    suite_add_tcase(s, tc);
    return s;
}
