/* vit_graph.c — the same ViT trained two ways, side by side in one run: by
 * the fixed ViT trainer (train/vit.h, lg_vit_train) and as its graph
 * (train/vit_net.h) by the float graph trainer through the node entries
 * (train/model.h, train/node.h, lg_train_run). Both start from the same
 * weights (lg_vit_init_weights, then lg_vit_to_net), shuffle with the same
 * seed and take the same optimiser options. Prints, per trainer, the test
 * accuracy after each epoch, then the one-thread throughput of a training
 * step (forward, backward, optimiser step) in images per CPU second, timed
 * in interleaved chunks (median, with the slowest and fastest chunk), and
 * the training losses of the first (warm-up) chunk's steps of each, from
 * the same weights on the same batches.
 * Prints numbers only, asserts nothing.
 *
 * usage: lgelu_bench_vit_graph [--data DIR] [--arch A] [--act NAME] [--epochs N] [--subset N]
 *                              [--seed S] [--batch B] [--opt sgd|adamw] [--lr X] [--warmup N]
 *                              [--wd X] [--c X] [--steps N] [--chunks K] [--param vit|graph]
 * --param vit (default): the graph trainer steps in the ViT's parameterisation (lg_vit_model_param);
 * graph: in the graph's own (every weight and bias its own parameter).
 * The graph's head is the ViT's: a per-token map and the class token's
 * logits (or their sum over the tokens), train/vit_net.h.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/arch_vit.h"
#include "core/idx.h"
#include "core/linalg.h"
#include "core/npy.h"
#include "core/rng.h"
#include "train/loop.h"
#include "train/model.h"
#include "train/optim.h"
#include "train/vit.h"
#include "train/vit_net.h"
#include "train/vit_train.h"

static int lg_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double lg_cpu(void) { return (double)clock() / CLOCKS_PER_SEC; }

/* steps training steps of the fixed trainer (vit) or the graph trainer (m) from perm[*b..]: CPU seconds. */
static double lg_chunk(lg_vit *v, lg_model *m, const lg_dataset *ds, const uint32_t *perm, size_t nb, size_t *b,
                       int steps, int B, const lg_optim_opts *o, long *step, double *loss)
{
    uint8_t lab[1024];
    double t0 = lg_cpu();
    for (int s = 0; s < steps; s++, *b = (*b + 1) % nb) {
        const uint32_t *idx = perm + *b * (size_t)B;
        for (int i = 0; i < B; i++) lab[i] = ds->y[idx[i]];
        ++*step;
        if (v) {
            lg_vit_gather(v, ds->x, idx, B);
            lg_vit_forward(v, B, lab, loss ? &loss[s] : NULL, NULL);
            lg_vit_zero_grad(v);
            lg_vit_backward(v, B, lab);
            lg_vit_step(v, o, *step);
        } else {
            lg_model_gather(m, ds->x, idx, B);
            lg_model_forward(m, B, lab, loss ? &loss[s] : NULL, NULL);
            lg_model_zero_grad(m);
            lg_model_backward(m, B, lab);
            lg_optim_step(m, o, *step);
        }
    }
    return lg_cpu() - t0;
}

/* Largest |g·sc − ref| over n entries (graph gradient g scaled by sc against the fixed trainer's ref), relative
 * to the largest |ref| (or to den when > 0), folded into *err. */
static void lg_gcmp_den(const float *g, double sc, const float *ref, size_t n, double den, double *err)
{
    double d = 0.0, r = 0.0;
    for (size_t i = 0; i < n; i++) {
        d = fmax(d, fabs((double)g[i] * sc - (double)ref[i]));
        r = fmax(r, fabs((double)ref[i]));
    }
    if (n) *err = fmax(*err, d / (den > 0 ? den : r + 1e-30));
}
static void lg_gcmp(const float *g, double sc, const float *ref, size_t n, double *err)
{
    lg_gcmp_den(g, sc, ref, n, 0.0, err);
}

/* One forward and backward of both models (the same weights) on the first batch of perm: the graph's gradient of
 * every parameter against the ViT's, through the graph's parameterisation (vit_net.h: 1/√d_h in Q, the class
 * token and position in one bias, the head's bias in two layers, 1/T of the head for mean pooling). */
static void lg_grad_compare(lg_vit *v, lg_model *m, const lg_dataset *ds, const uint32_t *idx, int B)
{
    uint8_t lab[1024];
    for (int i = 0; i < B; i++) lab[i] = ds->y[idx[i]];
    lg_vit_gather(v, ds->x, idx, B);
    lg_vit_forward(v, B, lab, NULL, NULL);
    lg_vit_zero_grad(v);
    lg_vit_backward(v, B, lab);
    lg_model_gather(m, ds->x, idx, B);
    lg_model_forward(m, B, lab, NULL, NULL);
    lg_model_zero_grad(m);
    lg_model_backward(m, B, lab);
    const lg_vit_spec *s = &v->spec;
    const float *G = v->grads;
    int D = v->D, M = v->M, T = v->T, off = s->cls, C = s->n_out;
    double sq = sqrt((double)(D / s->heads)), w = off ? 1.0 : (double)T;
    enum { E_PATCH, E_TOK, E_LN, E_QKV, E_MLP, E_HEAD, E_N };
    double e[E_N] = {0};
    lg_mlayer *L = m->layers;
    lg_gcmp(L[0].dW, 1.0, G + v->glob[LG_VG_WP], (size_t)D * v->PL, &e[E_PATCH]);
    lg_gcmp(L[0].db, 1.0, G + v->glob[LG_VG_BP], (size_t)D, &e[E_PATCH]);
    lg_gcmp(L[1].db + (size_t)off * D, 1.0, G + v->glob[LG_VG_POS] + (size_t)off * D, (size_t)(T - off) * D, &e[E_TOK]);
    if (off) {
        lg_gcmp(L[1].db, 1.0, G + v->glob[LG_VG_CLS], (size_t)D, &e[E_TOK]);
        lg_gcmp(L[1].db, 1.0, G + v->glob[LG_VG_POS], (size_t)D, &e[E_TOK]);
    }
    for (int l = 0; l < s->depth; l++) {
        const size_t *bo = v->blk[l];
        lg_mlayer *K = L + 2 + 11 * l;
        lg_gcmp(K[0].dW, 1.0, G + bo[LG_VB_G1], (size_t)2 * D, &e[E_LN]);
        lg_gcmp(K[8].dW, 1.0, G + bo[LG_VB_G2], (size_t)2 * D, &e[E_LN]);
        lg_gcmp(K[1].dW, 1.0 / sq, G + bo[LG_VB_WQ], (size_t)D * D, &e[E_QKV]);
        lg_gcmp(K[1].db, 1.0 / sq, G + bo[LG_VB_BQ], (size_t)D, &e[E_QKV]);
        lg_gcmp(K[2].dW, 1.0, G + bo[LG_VB_WK], (size_t)D * D, &e[E_QKV]);
        double gk = 0.0; /* K's bias: its gradient is 0 in exact arithmetic (softmax ignores a shift of a row) */
        for (size_t i = 0; i < (size_t)D * D; i++) gk = fmax(gk, fabs((double)G[bo[LG_VB_WK] + i]));
        lg_gcmp_den(K[2].db, 1.0, G + bo[LG_VB_BK], (size_t)D, gk, &e[E_QKV]);
        lg_gcmp(K[3].dW, 1.0, G + bo[LG_VB_WV], (size_t)D * D, &e[E_QKV]);
        lg_gcmp(K[3].db, 1.0, G + bo[LG_VB_BV], (size_t)D, &e[E_QKV]);
        lg_gcmp(K[7].dW, 1.0, G + bo[LG_VB_WO], (size_t)D * D, &e[E_QKV]);
        lg_gcmp(K[7].db, 1.0, G + bo[LG_VB_BO], (size_t)D, &e[E_QKV]);
        lg_gcmp(K[9].dW, 1.0, G + bo[LG_VB_W1], (size_t)M * D, &e[E_MLP]);
        lg_gcmp(K[9].db, 1.0, G + bo[LG_VB_B1], (size_t)M, &e[E_MLP]);
        lg_gcmp(K[10].dW, 1.0, G + bo[LG_VB_W2], (size_t)D * M, &e[E_MLP]);
        lg_gcmp(K[10].db, 1.0, G + bo[LG_VB_B2], (size_t)D, &e[E_MLP]);
    }
    lg_mlayer *F = L + 2 + 11 * s->depth;
    lg_gcmp(F[0].dW, 1.0, G + v->glob[LG_VG_GF], (size_t)2 * D, &e[E_LN]);
    lg_gcmp(F[1].dW, 1.0 / w, G + v->glob[LG_VG_WH], (size_t)C * D, &e[E_HEAD]);
    lg_gcmp(F[1].db, 1.0 / w, G + v->glob[LG_VG_BH], (size_t)C, &e[E_HEAD]);
    lg_gcmp(F[2].db, 1.0, G + v->glob[LG_VG_BH], (size_t)C, &e[E_HEAD]);
    printf("first batch's gradients, graph against fixed (max |difference| / max |fixed|): patch embedding %.1e, "
           "class token and position %.1e, layernorm %.1e, attention %.1e, MLP %.1e, head %.1e\n",
           e[E_PATCH], e[E_TOK], e[E_LN], e[E_QKV], e[E_MLP], e[E_HEAD]);
}

/* The training hook: the ViT's parameterisation (lg_vit_model_param) from the first step. */
static void lg_vit_param_hook(void *ctx, lg_model *m, long step, long total)
{
    (void)total;
    if (step == 0 && lg_vit_model_param(m, ctx) != LG_OK) {
        fprintf(stderr, "lgelu_bench_vit_graph: %s\n", lg_errmsg());
        exit(1);
    }
}

int main(int argc, char **argv)
{
    const char *dir = LG_DATA_DEFAULT_DIR, *arch = "1x28x28,vit:p7,d64,h4,L2,m128,cls,10", *actn = "lgelu";
    lg_train_opts o = lg_train_opts_default();
    o.epochs = 2;
    long subset = 12000;
    int steps = 20, chunks = 7, vparam = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) goto usage;
        if (!strcmp(a, "--data")) dir = v;
        else if (!strcmp(a, "--arch")) arch = v;
        else if (!strcmp(a, "--act")) actn = v;
        else if (!strcmp(a, "--epochs")) o.epochs = atoi(v);
        else if (!strcmp(a, "--subset")) subset = atol(v);
        else if (!strcmp(a, "--seed")) o.seed = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--batch")) o.batch = atoi(v);
        else if (!strcmp(a, "--opt")) {
            if (lg_optim_parse(v, &o.optim.kind)) goto usage;
        } else if (!strcmp(a, "--lr")) o.optim.lr = atof(v);
        else if (!strcmp(a, "--warmup")) o.optim.warmup = atol(v);
        else if (!strcmp(a, "--wd")) o.optim.wd = atof(v);
        else if (!strcmp(a, "--c")) o.optim.c = atof(v);
        else if (!strcmp(a, "--steps")) steps = atoi(v);
        else if (!strcmp(a, "--chunks")) chunks = atoi(v);
        else if (!strcmp(a, "--param")) vparam = !strcmp(v, "vit") ? 1 : !strcmp(v, "graph") ? 0 : -1;
        else goto usage;
        i++;
    }
    lg_vit_spec sp;
    lg_act act;
    if (lg_arch_vit_parse(&sp, arch) != LG_OK || lg_act_parse(actn, &act) != 0 || o.epochs < 1 || o.batch < 1 ||
        o.batch > 1024 || steps < 1 || chunks < 1 || chunks > 64 || vparam < 0)
        goto usage;
    lg_dataset tr = {0}, te = {0};
    int n_in = sp.C * sp.H * sp.W;
    if (lg_data_load_spec(&tr, dir, "train") != LG_OK || lg_dataset_fit(&tr, n_in, "--arch", dir) != LG_OK ||
        lg_data_load_spec(&te, dir, "test") != LG_OK || lg_dataset_fit(&te, n_in, "--arch", dir) != LG_OK) {
        fprintf(stderr, "lgelu_bench_vit_graph: %s\n", lg_errmsg());
        return 1;
    }
    if (subset > 0) lg_dataset_truncate(&tr, (size_t)subset);
    /* the two models from the same weights */
    lg_vit v;
    lg_net net;
    if (lg_vit_init(&v, &sp, act, o.batch) != LG_OK) goto fail;
    lg_vit_init_weights(&v, o.seed);
    if (lg_vit_to_net(&v, &net) != LG_OK) goto fail;
    printf("%s %s, %zu training images, %d epochs, batch %d, %s lr %g warmup %ld wd %g c %g, seed %llu, 1 thread\n",
           arch, actn, tr.n, o.epochs, o.batch, o.optim.kind == LG_OPTIM_SGD ? "sgd" : "adamw", o.optim.lr,
           o.optim.warmup, o.optim.wd, o.optim.c, (unsigned long long)o.seed);
    o.out = stdout;
    lg_train_result rv, rg;
    printf("-- fixed ViT trainer (train/vit.c), %zu parameters\n", v.n_params);
    fflush(stdout);
    if (lg_vit_train(&v, &tr, &te, &o, NULL, NULL, &rv) != LG_OK) goto fail;
    printf("-- graph trainer through the node entries (train/model.c, train/node.h), %d nodes\n", net.n_layers);
    fflush(stdout);
    lg_train_opts og = o;
    if (vparam) og.hook = lg_vit_param_hook, og.hook_ctx = &net;
    if (lg_train_run(&net, &tr, NULL, &te, &og, &rg) != LG_OK) goto fail;
    printf("test accuracy: fixed %.2f %%, graph %.2f %%\n", 100 * rv.test_acc, 100 * rg.test_acc);
    /* throughput: fresh models, chunks interleaved (fixed, graph, fixed, …) after a warm-up chunk each */
    lg_vit_free(&v);
    lg_net_free(&net);
    lg_model m;
    if (lg_vit_init(&v, &sp, act, o.batch) != LG_OK) goto fail;
    lg_vit_init_weights(&v, o.seed);
    if (lg_vit_to_net(&v, &net) != LG_OK || lg_model_init(&m, &net, o.batch) != LG_OK) goto fail;
    if (vparam && lg_vit_model_param(&m, &net) != LG_OK) goto fail;
    lg_blas_set_threads(1);
    uint32_t *perm = malloc(tr.n * sizeof *perm);
    for (size_t i = 0; i < tr.n; i++) perm[i] = (uint32_t)i;
    lg_rng r;
    lg_rng_init(&r, o.seed, 2);
    lg_rng_shuffle(&r, perm, tr.n);
    lg_grad_compare(&v, &m, &tr, perm, o.batch);
    size_t nb = tr.n / (size_t)o.batch, bv = 0, bg = 0;
    long sv = 0, sg = 0;
    double rate_v[64], rate_g[64], *lv = calloc((size_t)steps, sizeof *lv), *lgr = calloc((size_t)steps, sizeof *lgr);
    for (int c = -1; c < chunks; c++) {
        double tv = lg_chunk(&v, NULL, &tr, perm, nb, &bv, steps, o.batch, &o.optim, &sv, c < 0 ? lv : NULL);
        double tg = lg_chunk(NULL, &m, &tr, perm, nb, &bg, steps, o.batch, &o.optim, &sg, c < 0 ? lgr : NULL);
        if (c < 0) { /* the first steps from the same weights on the same batches: the two losses */
            printf("training loss of the first steps (fixed / graph):");
            for (int s = 0; s < steps; s++) printf(" %.6f/%.6f", lv[s], lgr[s]);
            printf("\n");
            continue;
        }
        rate_v[c] = (double)steps * o.batch / tv;
        rate_g[c] = (double)steps * o.batch / tg;
    }
    qsort(rate_v, (size_t)chunks, sizeof *rate_v, lg_cmp);
    qsort(rate_g, (size_t)chunks, sizeof *rate_g, lg_cmp);
    printf("images per CPU second (median of %d chunks of %d steps, min-max): fixed %.0f (%.0f-%.0f), graph %.0f "
           "(%.0f-%.0f), graph/fixed %.2f\n",
           chunks, steps, rate_v[chunks / 2], rate_v[0], rate_v[chunks - 1], rate_g[chunks / 2], rate_g[0],
           rate_g[chunks - 1], rate_g[chunks / 2] / rate_v[chunks / 2]);
    free(perm), free(lv), free(lgr);
    lg_model_free(&m);
    lg_net_free(&net);
    lg_vit_free(&v);
    lg_dataset_free(&tr);
    lg_dataset_free(&te);
    return 0;
fail:
    fprintf(stderr, "lgelu_bench_vit_graph: %s\n", lg_errmsg());
    return 1;
usage:
    fprintf(stderr, "usage: lgelu_bench_vit_graph [--data DIR] [--arch A] [--act NAME] [--epochs N] [--subset N] "
                    "[--seed S] [--batch B] [--opt sgd|adamw] [--lr X] [--warmup N] [--wd X] [--c X] [--steps N] "
                    "[--chunks K]\n");
    return 2;
}
