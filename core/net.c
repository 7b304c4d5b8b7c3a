#include "core/net.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Point each layer's W and b into net->params (W_k then b_k, in order). */
static void lg_net_carve(lg_net *net)
{
    double *p = net->params;
    for (int k = 0; k < net->n_layers; k++) {
        lg_layer *L = &net->layers[k];
        L->W = p;
        p += (size_t)L->n_out * (size_t)L->n_in;
        L->b = p;
        p += (size_t)L->n_out;
    }
}

lg_status lg_net_init(lg_net *net, int n_layers, const int *dims, lg_act hidden)
{
    memset(net, 0, sizeof *net);
    if (n_layers < 1 || n_layers > LG_NET_MAX_LAYERS)
        return lg_fail(LG_ERR_ARG, "network needs 1..%d layers, got %d", LG_NET_MAX_LAYERS, n_layers);
    size_t total = 0;
    for (int k = 0; k <= n_layers; k++)
        if (dims[k] < 1 || dims[k] > LG_NET_MAX_DIM)
            return lg_fail(LG_ERR_ARG, "layer size %d is %d, expected 1..%d", k, dims[k], LG_NET_MAX_DIM);
    for (int k = 0; k < n_layers; k++) {
        total += (size_t)dims[k + 1] * ((size_t)dims[k] + 1);
        if (total > LG_NET_MAX_PARAMS)
            return lg_fail(LG_ERR_ARG, "network has more than %zu parameters", LG_NET_MAX_PARAMS);
    }
    net->layers = calloc((size_t)n_layers, sizeof *net->layers);
    net->params = calloc(total, sizeof *net->params);
    if (!net->layers || !net->params) {
        lg_net_free(net);
        return lg_fail(LG_ERR_NOMEM, "cannot allocate a network of %zu parameters", total);
    }
    net->n_in = dims[0];
    net->n_layers = n_layers;
    net->n_params = total;
    net->t = 0.1;
    for (int k = 0; k < n_layers; k++) {
        lg_layer *L = &net->layers[k];
        L->kind = LG_LAYER_DENSE;
        L->n_in = dims[k];
        L->n_out = dims[k + 1];
        L->act = k + 1 < n_layers ? hidden : LG_ACT_IDENTITY;
        L->lambda = lg_act_param_init(L->act, net->t, &L->s);
    }
    lg_net_carve(net);
    return LG_OK;
}

void lg_net_free(lg_net *net)
{
    free(net->layers);
    free(net->params);
    free(net->in_sub);
    free(net->in_div);
    memset(net, 0, sizeof *net);
}

static double *lg_dup(const double *src, size_t n)
{
    double *d = malloc(n * sizeof *d);
    if (d) memcpy(d, src, n * sizeof *d);
    return d;
}

lg_status lg_net_copy(lg_net *dst, const lg_net *src)
{
    memset(dst, 0, sizeof *dst);
    dst->layers = malloc((size_t)src->n_layers * sizeof *dst->layers);
    dst->params = lg_dup(src->params, src->n_params);
    if (!dst->layers || !dst->params) goto fail;
    memcpy(dst->layers, src->layers, (size_t)src->n_layers * sizeof *dst->layers);
    if (src->in_sub && !(dst->in_sub = lg_dup(src->in_sub, (size_t)src->n_in))) goto fail;
    if (src->in_div && !(dst->in_div = lg_dup(src->in_div, (size_t)src->n_in))) goto fail;
    dst->n_in = src->n_in;
    dst->n_layers = src->n_layers;
    dst->t = src->t;
    dst->n_params = src->n_params;
    lg_net_carve(dst);
    return LG_OK;
fail:
    lg_net_free(dst);
    return lg_fail(LG_ERR_NOMEM, "cannot copy a network of %zu parameters", src->n_params);
}

int lg_net_n_out(const lg_net *net) { return net->layers[net->n_layers - 1].n_out; }

int lg_net_max_width(const lg_net *net)
{
    int w = net->n_in;
    for (int k = 0; k < net->n_layers; k++)
        if (net->layers[k].n_out > w) w = net->layers[k].n_out;
    return w;
}

/* x'[i] = (x[i] − in_sub[i]) / in_div[i] (either array may be NULL). */
static void lg_net_normalise(const lg_net *net, const double *x, double *out, size_t n)
{
    for (size_t r = 0; r < n; r++)
        for (int i = 0; i < net->n_in; i++) {
            double v = x[r * (size_t)net->n_in + (size_t)i];
            if (net->in_sub) v -= net->in_sub[i];
            if (net->in_div) v /= net->in_div[i];
            out[r * (size_t)net->n_in + (size_t)i] = v;
        }
}

void lg_net_forward(const lg_net *net, const double *x, double *y, double *scratch)
{
    int w = lg_net_max_width(net);
    double *a = scratch, *z = scratch + w;
    lg_net_normalise(net, x, a, 1);
    for (int k = 0; k < net->n_layers; k++) {
        const lg_layer *L = &net->layers[k];
        for (int o = 0; o < L->n_out; o++) {
            const double *Wr = L->W + (size_t)o * (size_t)L->n_in;
            double s = L->b[o];
            for (int i = 0; i < L->n_in; i++) s += Wr[i] * a[i];
            z[o] = lg_act_eval(L->act, s, L->lambda);
        }
        double *t = a;
        a = z;
        z = t;
    }
    memcpy(y, a, (size_t)lg_net_n_out(net) * sizeof *y);
}

lg_status lg_net_forward_batch(const lg_net *net, const double *X, double *Y, size_t n)
{
    if (n == 0) return LG_OK;
    size_t w = (size_t)lg_net_max_width(net);
    double *a = malloc(n * w * sizeof *a), *z = malloc(n * w * sizeof *z);
    if (!a || !z) {
        free(a);
        free(z);
        return lg_fail(LG_ERR_NOMEM, "cannot allocate forward buffers for %zu inputs", n);
    }
    lg_net_normalise(net, X, a, n);
    for (int k = 0; k < net->n_layers; k++) {
        const lg_layer *L = &net->layers[k];
        size_t no = (size_t)L->n_out;
        /* z[n][n_out] = b (broadcast), then z += a[n][n_in] · Wᵀ */
        for (size_t r = 0; r < n; r++) memcpy(z + r * no, L->b, no * sizeof *z);
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)n, L->n_out, L->n_in, 1.0, a, L->n_in,
                    L->W, L->n_in, 1.0, z, L->n_out);
        for (size_t i = 0; i < n * no; i++) z[i] = lg_act_eval(L->act, z[i], L->lambda);
        double *t = a;
        a = z;
        z = t;
    }
    memcpy(Y, a, n * (size_t)lg_net_n_out(net) * sizeof *Y);
    free(a);
    free(z);
    return LG_OK;
}

lg_status lg_net_validate(const lg_net *net)
{
    if (net->n_layers < 1 || net->n_in < 1) return lg_fail(LG_ERR_FORMAT, "network has no layers or no inputs");
    int prev = net->n_in;
    for (int k = 0; k < net->n_layers; k++) {
        const lg_layer *L = &net->layers[k];
        if (L->kind != LG_LAYER_DENSE) return lg_fail(LG_ERR_FORMAT, "layer %d: unknown layer kind %d", k, (int)L->kind);
        if (L->n_in != prev)
            return lg_fail(LG_ERR_FORMAT, "layer %d: takes %d inputs but the previous layer gives %d", k, L->n_in, prev);
        if (!lg_act_name(L->act)) return lg_fail(LG_ERR_FORMAT, "layer %d: unknown activation %d", k, (int)L->act);
        if ((L->act == LG_ACT_LGELU || L->act == LG_ACT_GELU) && !lg_act_param_ok(L->act, L->lambda))
            return lg_fail(LG_ERR_FORMAT, "layer %d: hardness λ = %g, expected a finite value %s", k, L->lambda,
                           L->act == LG_ACT_GELU ? "≥ 1" : "> 0");
        if (!lg_act_param_ok(L->act, L->lambda))
            return lg_fail(LG_ERR_FORMAT, "layer %d: %s parameter %g, expected %s", k, lg_act_name(L->act), L->lambda,
                           L->act == LG_ACT_PRELU ? "a finite slope" : "a finite β ≥ 1");
        if (!isfinite(L->s))
            return lg_fail(LG_ERR_FORMAT, "layer %d: raw hardness parameter s = %g; NaN/Inf refused", k, L->s);
        prev = L->n_out;
    }
    if (!(net->t > 0) || !isfinite(net->t))
        return lg_fail(LG_ERR_FORMAT, "temperature t = %g, expected a finite value > 0", net->t);
    /* name the field of the first non-finite parameter (W_k[o][i] or b_k[o]) */
    for (int k = 0; k < net->n_layers; k++) {
        const lg_layer *L = &net->layers[k];
        size_t nw = (size_t)L->n_out * (size_t)L->n_in;
        for (size_t i = 0; i < nw; i++)
            if (!isfinite(L->W[i]))
                return lg_fail(LG_ERR_FORMAT, "layer %d: weight W[%zu][%zu] = %g; NaN/Inf refused", k,
                               i / (size_t)L->n_in, i % (size_t)L->n_in, L->W[i]);
        for (int o = 0; o < L->n_out; o++)
            if (!isfinite(L->b[o]))
                return lg_fail(LG_ERR_FORMAT, "layer %d: bias b[%d] = %g; NaN/Inf refused", k, o, L->b[o]);
    }
    for (int i = 0; i < net->n_in; i++) {
        if (net->in_sub && !isfinite(net->in_sub[i]))
            return lg_fail(LG_ERR_FORMAT, "normalisation: input shift in_sub[%d] = %g; NaN/Inf refused", i,
                           net->in_sub[i]);
        if (net->in_div && (!isfinite(net->in_div[i]) || net->in_div[i] == 0.0))
            return lg_fail(LG_ERR_FORMAT, "normalisation: input divisor in_div[%d] = %g; zero, NaN and Inf refused", i,
                           net->in_div[i]);
    }
    return LG_OK;
}
