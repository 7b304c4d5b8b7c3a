/* onnx_affine.c — the pending affine map of the ONNX importer (see
 * onnx_internal.h, lg_ox_b): z = W·a + b over the last layer boundary a,
 * composed op by op and closed into dense layers. */
#include <cblas.h>
#include <stdlib.h>
#include <string.h>

#include "core/onnx_internal.h"

void lg_ox_b_free(lg_ox_b *B)
{
    free(B->W);
    free(B->d);
    free(B->b);
    free(B->in_sub);
    free(B->in_div);
    for (int k = 0; k < B->n_layers; k++) {
        free(B->layers[k].W);
        free(B->layers[k].b);
    }
    free(B->layers);
    memset(B, 0, sizeof *B);
}

int lg_ox_b_identity(const lg_ox_b *B) { return !B->W && !B->d && !B->b; }

double *lg_ox_dup(const double *v, size_t n)
{
    double *p = malloc(n * sizeof *p);
    if (p) memcpy(p, v, n * sizeof *p);
    return p;
}

/* z ← z + sign·c, c [n]. */
lg_status lg_ox_b_shift(lg_ox_b *B, const double *c, double sign)
{
    size_t n = (size_t)B->n;
    if (sign < 0 && B->n_layers == 0 && lg_ox_b_identity(B) && !B->in_sub && !B->in_div) {
        if (!(B->in_sub = lg_ox_dup(c, n))) goto oom;
        return LG_OK;
    }
    if (!B->b && !(B->b = calloc(n, sizeof *B->b))) goto oom;
    for (size_t i = 0; i < n; i++) B->b[i] += sign * c[i];
    return LG_OK;
oom:
    return lg_fail(LG_ERR_NOMEM, "%s: out of memory", B->file);
}

/* z ← z·c (divide = 0) or z/c (divide = 1), c [n]. */
lg_status lg_ox_b_scale(lg_ox_b *B, const double *c, int divide)
{
    size_t n = (size_t)B->n, m = (size_t)B->m;
    if (divide)
        for (size_t i = 0; i < n; i++)
            if (c[i] == 0.0) return lg_fail(LG_ERR_FORMAT, "%s: division by zero constant (element %zu)", B->file, i);
    if (divide && B->n_layers == 0 && lg_ox_b_identity(B) && !B->in_div) {
        if (!(B->in_div = lg_ox_dup(c, n))) goto oom;
        return LG_OK;
    }
    if (!B->W && !B->d) {
        if (!(B->d = malloc(n * sizeof *B->d))) goto oom;
        for (size_t i = 0; i < n; i++) B->d[i] = 1.0;
    }
    for (size_t i = 0; i < n; i++) {
        if (B->W)
            for (size_t j = 0; j < m; j++) B->W[i * m + j] = divide ? B->W[i * m + j] / c[i] : B->W[i * m + j] * c[i];
        else
            B->d[i] = divide ? B->d[i] / c[i] : B->d[i] * c[i];
        if (B->b) B->b[i] = divide ? B->b[i] / c[i] : B->b[i] * c[i];
    }
    return LG_OK;
oom:
    return lg_fail(LG_ERR_NOMEM, "%s: out of memory", B->file);
}

/* z ← M·z + c; M [n2][n] is taken over (freed here), c [n2] or NULL. */
lg_status lg_ox_b_linear(lg_ox_b *B, double *M, int n2, const double *c)
{
    size_t n = (size_t)B->n, m = (size_t)B->m, N = (size_t)n2;
    double *nb = NULL;
    if (N * m > LG_NET_MAX_PARAMS) {
        free(M);
        return lg_fail(LG_ERR_FORMAT, "%s: composed layer %zu x %zu exceeds %zu parameters", B->file, N, m,
                       LG_NET_MAX_PARAMS);
    }
    if (B->b || c) {
        if (!(nb = calloc(N, sizeof *nb))) goto oom;
        for (size_t i = 0; i < N; i++) {
            double s = c ? c[i] : 0.0;
            if (B->b)
                for (size_t j = 0; j < n; j++) s += M[i * n + j] * B->b[j];
            nb[i] = s;
        }
    }
    if (B->W) {
        double *W2 = malloc(N * m * sizeof *W2);
        if (!W2) goto oom;
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)N, (int)m, (int)n, 1.0, M, (int)n, B->W, (int)m,
                    0.0, W2, (int)m);
        free(M);
        free(B->W);
        B->W = W2;
    } else {
        if (B->d)
            for (size_t i = 0; i < N; i++)
                for (size_t j = 0; j < n; j++) M[i * n + j] *= B->d[j];
        B->W = M;
    }
    free(B->d);
    B->d = NULL;
    free(B->b);
    B->b = nb;
    B->n = n2;
    return LG_OK;
oom:
    free(M);
    free(nb);
    return lg_fail(LG_ERR_NOMEM, "%s: out of memory composing a %zu x %zu layer", B->file, N, m);
}

/* Close the current affine map into a layer with activation act. */
lg_status lg_ox_b_close(lg_ox_b *B, lg_act act, double lambda)
{
    size_t n = (size_t)B->n, m = (size_t)B->m;
    if (B->n_layers >= LG_NET_MAX_LAYERS)
        return lg_fail(LG_ERR_FORMAT, "%s: more than %d layers", B->file, LG_NET_MAX_LAYERS);
    if (n * m > LG_NET_MAX_PARAMS || B->n_params + n * (m + 1) > LG_NET_MAX_PARAMS)
        return lg_fail(LG_ERR_FORMAT, "%s: more than %zu parameters", B->file, LG_NET_MAX_PARAMS);
    if (B->n_layers == B->cap_layers) {
        int cap = B->cap_layers ? 2 * B->cap_layers : 8;
        lg_ox_layer *nl = realloc(B->layers, (size_t)cap * sizeof *nl);
        if (!nl) goto oom;
        B->layers = nl;
        B->cap_layers = cap;
    }
    if (!B->W) {
        if (!(B->W = calloc(n * m, sizeof *B->W))) goto oom;
        for (size_t i = 0; i < n; i++) B->W[i * m + i] = B->d ? B->d[i] : 1.0;
    }
    if (!B->b && !(B->b = calloc(n, sizeof *B->b))) goto oom;
    lg_ox_layer *L = &B->layers[B->n_layers++];
    L->n_in = B->m;
    L->n_out = B->n;
    L->W = B->W;
    L->b = B->b;
    L->act = act;
    L->lambda = lambda;
    B->n_params += n * (m + 1);
    free(B->d);
    B->W = B->d = B->b = NULL;
    B->m = B->n;
    return LG_OK;
oom:
    return lg_fail(LG_ERR_NOMEM, "%s: out of memory", B->file);
}

/* Apply a pending scalar factor kmul/kdiv of a LIN value to the base map. */
lg_status lg_ox_b_fold(lg_ox_b *B, lg_ox_val *v)
{
    lg_status st = LG_OK;
    if (v->kmul == 1.0 && v->kdiv == 1.0) return LG_OK;
    double *c = malloc((size_t)B->n * sizeof *c);
    if (!c) return lg_fail(LG_ERR_NOMEM, "%s: out of memory", B->file);
    if (v->kmul != 1.0) {
        for (int i = 0; i < B->n; i++) c[i] = v->kmul;
        st = lg_ox_b_scale(B, c, 0);
    }
    if (st == LG_OK && v->kdiv != 1.0) {
        for (int i = 0; i < B->n; i++) c[i] = v->kdiv;
        st = lg_ox_b_scale(B, c, 1);
    }
    free(c);
    v->kmul = v->kdiv = 1.0;
    return st;
}

