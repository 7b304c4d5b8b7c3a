/* bench_train.c — training throughput of 784-256-256-10 at batch 128 on one
 * thread (relu, gelu, lgelu, swish, prelu, sigmoid) on real Fashion-MNIST, the cblas_sgemm GFLOP/s
 * at the shapes one training step uses, and the fraction of that rate the
 * whole step achieves. Prints numbers only, asserts nothing.
 *
 * usage: lgelu_bench_train [--data DIR] [--steps N] [--chunks K]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/idx.h"
#include "core/clock.h"
#include "core/linalg.h"
#include "core/rng.h"
#include "core/act_simd.h"
#include "train/model.h"
#include "train/optim.h"

#define NL 3
static const int lg_dims[NL + 1] = {784, 256, 256, 10};
enum { BATCH = 128 };


static int lg_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* FLOPs of one training sample: forward 2·n_in·n_out per layer, dW the
 * same, dX for every layer but the first. */
static double lg_flops_per_sample(void)
{
    double f = 0;
    for (int k = 0; k < NL; k++) f += (k == 0 ? 4.0 : 6.0) * lg_dims[k] * lg_dims[k + 1];
    return f;
}

/* Median samples/s over `chunks` timed chunks of `steps` steps each; the
 * slowest and fastest chunk in *lo, *hi (their spread shows machine load). */
static double lg_bench_act(const lg_dataset *ds, lg_act act, int steps, int chunks, double *lo, double *hi)
{
    lg_net net;
    lg_model m;
    if (lg_net_init(&net, NL, lg_dims, act) != LG_OK) return -1;
    lg_model_init_weights(&net, 1);
    if (lg_model_init(&m, &net, BATCH) != LG_OK) {
        lg_net_free(&net);
        return -1;
    }
    lg_optim_opts o = lg_optim_opts_default();
    uint32_t *perm = malloc(ds->n * sizeof *perm);
    uint8_t lab[BATCH];
    for (size_t i = 0; i < ds->n; i++) perm[i] = (uint32_t)i;
    lg_rng r;
    lg_rng_init(&r, 1, 2);
    lg_rng_shuffle(&r, perm, ds->n);
    size_t nb = ds->n / BATCH, b = 0;
    double rates[64];
    long step = 0;
    for (int c = -1; c < chunks; c++) { /* chunk −1 is a warm-up */
        double t0 = lg_now();
        for (int s = 0; s < steps; s++, b = (b + 1) % nb) {
            const uint32_t *idx = perm + b * BATCH;
            for (int i = 0; i < BATCH; i++) lab[i] = ds->y[idx[i]];
            lg_model_gather(&m, ds->x, idx, BATCH);
            lg_model_forward(&m, BATCH, lab, NULL, NULL);
            lg_model_zero_grad(&m);
            lg_model_backward(&m, BATCH, lab);
            lg_optim_step(&m, &o, ++step);
        }
        if (c >= 0) rates[c] = (double)steps * BATCH / (lg_now() - t0);
    }
    qsort(rates, (size_t)chunks, sizeof rates[0], lg_cmp);
    *lo = rates[0], *hi = rates[chunks - 1];
    free(perm);
    lg_model_free(&m);
    lg_net_free(&net);
    return rates[chunks / 2];
}

/* GFLOP/s of lg_sgemm at M×N×K with the given transposes (median of 5). */
static double lg_bench_gemm(int ta, int tb, int M, int N, int K, double *secs)
{
    float *A = calloc((size_t)M * K, sizeof(float)), *B = calloc((size_t)K * N, sizeof(float));
    float *C = calloc((size_t)M * N, sizeof(float));
    for (size_t i = 0; i < (size_t)M * K; i++) A[i] = (float)((i * 7919) % 1000) * 1e-3f;
    for (size_t i = 0; i < (size_t)K * N; i++) B[i] = (float)((i * 104729) % 1000) * 1e-3f;
    int reps = 50;
    double t[5];
    for (int k = 0; k < 5; k++) {
        double t0 = lg_now();
        for (int r = 0; r < reps; r++)
            lg_sgemm(ta, tb, M, N, K, 1.0f, A, ta ? M : K, B, tb ? K : N, 1.0f, C, N);
        t[k] = (lg_now() - t0) / reps;
    }
    qsort(t, 5, sizeof t[0], lg_cmp);
    free(A);
    free(B);
    free(C);
    *secs = t[2];
    return 2.0 * M * N * K / t[2] * 1e-9;
}

int main(int argc, char **argv)
{
    const char *dir = LG_DATA_DEFAULT_DIR;
    int steps = 100, chunks = 5;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--data") == 0 && i + 1 < argc) dir = argv[++i];
        else if (strcmp(argv[i], "--steps") == 0 && i + 1 < argc) steps = atoi(argv[++i]);
        else if (strcmp(argv[i], "--chunks") == 0 && i + 1 < argc) chunks = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: lgelu_bench_train [--data DIR] [--steps N] [--chunks K (1..64)]\n");
            return 2;
        }
    }
    if (steps < 1 || chunks < 1 || chunks > 64) {
        fprintf(stderr, "lgelu_bench_train: --steps ≥ 1 and --chunks in 1..64\n");
        return 2;
    }
    lg_blas_set_threads(1);
    lg_dataset ds = {0};
    lg_status st = lg_data_load(&ds, dir, "train");
    if (st != LG_OK) {
        fprintf(stderr, "lgelu_bench_train: %s: %s\n", lg_status_str(st), lg_errmsg());
        return 1;
    }
    printf("784-256-256-10, batch %d, 1 thread, %d steps × %d chunks (median), SGD momentum, λ-GELU kernels %s\n",
           BATCH, steps, chunks, lg_simd_level_name(lg_simd_level()));
    /* GEMM-only time of one step: every product the model issues */
    double step_secs = 0, step_flops = 0, secs;
    printf("sgemm shapes (M×N×K, op):\n");
    for (int k = 0; k < NL; k++) {
        int ni = lg_dims[k], no = lg_dims[k + 1];
        double g = lg_bench_gemm(0, 1, BATCH, no, ni, &secs);
        printf("  forward  %4d×%4d×%4d  %7.2f GFLOP/s\n", BATCH, no, ni, g);
        step_secs += secs, step_flops += 2.0 * BATCH * no * ni;
        g = lg_bench_gemm(1, 0, no, ni, BATCH, &secs);
        printf("  dW       %4d×%4d×%4d  %7.2f GFLOP/s\n", no, ni, BATCH, g);
        step_secs += secs, step_flops += 2.0 * BATCH * no * ni;
        if (k > 0) {
            g = lg_bench_gemm(0, 0, BATCH, ni, no, &secs);
            printf("  dX       %4d×%4d×%4d  %7.2f GFLOP/s\n", BATCH, ni, no, g);
            step_secs += secs, step_flops += 2.0 * BATCH * no * ni;
        }
    }
    double peak = step_flops / step_secs * 1e-9, fps = lg_flops_per_sample();
    printf("sgemm at the step's shapes: %.2f GFLOP/s (%.3f MFLOP per sample; GEMM-only bound %.0f samples/s)\n", peak,
           fps * 1e-6, peak * 1e9 / fps);
    const lg_act acts[] = {LG_ACT_RELU, LG_ACT_GELU, LG_ACT_LGELU, LG_ACT_SWISH, LG_ACT_PRELU, LG_ACT_SIGMOID};
    for (size_t a = 0; a < sizeof acts / sizeof acts[0]; a++) {
        double lo = 0, hi = 0, sps = lg_bench_act(&ds, acts[a], steps, chunks, &lo, &hi);
        printf("%-6s %9.0f samples/s (chunks %.0f..%.0f)  %6.2f GFLOP/s  %5.1f%% of sgemm\n", lg_act_name(acts[a]),
               sps, lo, hi, sps * fps * 1e-9, 100.0 * sps * fps * 1e-9 / peak);
    }
    lg_dataset_free(&ds);
    return 0;
}
