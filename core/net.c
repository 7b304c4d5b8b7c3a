#include "core/net.h"

#include <cblas.h>
#include <stdint.h>
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
        p += lg_layer_n_weights(L);
        L->b = p;
        p += (size_t)L->n_out;
    }
}

size_t lg_layer_n_weights(const lg_layer *L)
{
    if (L->kind == LG_LAYER_CONV2D)
        return (size_t)L->conv.c_out * (size_t)L->conv.c_in * (size_t)L->conv.kh * (size_t)L->conv.kw;
    return (size_t)L->n_out * (size_t)L->n_in;
}

int lg_conv_out_size(int n_in, int k, int s, int p)
{
    if (n_in < 1 || k < 1 || s < 1 || p < 0 || p >= k) return 0;
    long long span = (long long)n_in + 2LL * p - k;
    if (span < 0) return 0;
    return (int)(span / s + 1);
}

/* 1 if the geometry is consistent (sizes positive, outputs as documented). */
static int lg_conv_ok(const lg_conv *c)
{
    if (c->c_in < 1 || c->h_in < 1 || c->w_in < 1 || c->c_out < 1 || c->kh < 1 || c->kw < 1) return 0;
    if (c->c_in > LG_NET_MAX_DIM || c->c_out > LG_NET_MAX_DIM || c->kh > LG_NET_MAX_DIM || c->kw > LG_NET_MAX_DIM)
        return 0;
    int ho = lg_conv_out_size(c->h_in, c->kh, c->sh, c->ph), wo = lg_conv_out_size(c->w_in, c->kw, c->sw, c->pw);
    return ho > 0 && wo > 0 && ho == c->h_out && wo == c->w_out &&
           (size_t)c->c_in * (size_t)c->h_in * (size_t)c->w_in <= LG_NET_MAX_DIM &&
           (size_t)c->c_out * (size_t)c->h_out * (size_t)c->w_out <= LG_NET_MAX_DIM;
}

lg_status lg_net_init(lg_net *net, int n_layers, const int *dims, lg_act hidden)
{
    return lg_net_init_conv(net, n_layers, dims, NULL, hidden);
}

lg_status lg_net_init_conv(lg_net *net, int n_layers, const int *dims, const lg_conv *const *convs, lg_act hidden)
{
    memset(net, 0, sizeof *net);
    if (n_layers < 1 || n_layers > LG_NET_MAX_LAYERS)
        return lg_fail(LG_ERR_ARG, "network needs 1..%d layers, got %d", LG_NET_MAX_LAYERS, n_layers);
    size_t total = 0;
    for (int k = 0; k <= n_layers; k++)
        if (dims[k] < 1 || dims[k] > LG_NET_MAX_DIM)
            return lg_fail(LG_ERR_ARG, "layer size %d is %d, expected 1..%d", k, dims[k], LG_NET_MAX_DIM);
    for (int k = 0; k < n_layers; k++) {
        const lg_conv *c = convs && convs[k] && convs[k]->c_out > 0 ? convs[k] : NULL;
        if (c) {
            if (!lg_conv_ok(c) || c->c_in * c->h_in * c->w_in != dims[k] || c->c_out * c->h_out * c->w_out != dims[k + 1])
                return lg_fail(LG_ERR_ARG,
                               "layer %d: conv geometry %dx%dx%d -> %dx%dx%d (kernel %dx%d, stride %dx%d, padding %dx%d) "
                               "is inconsistent or does not match sizes %d -> %d",
                               k, c->c_in, c->h_in, c->w_in, c->c_out, c->h_out, c->w_out, c->kh, c->kw, c->sh, c->sw,
                               c->ph, c->pw, dims[k], dims[k + 1]);
            total += (size_t)c->c_out * (size_t)c->c_in * (size_t)c->kh * (size_t)c->kw + (size_t)dims[k + 1];
        } else {
            total += (size_t)dims[k + 1] * ((size_t)dims[k] + 1);
        }
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
        if (convs && convs[k] && convs[k]->c_out > 0) {
            L->kind = LG_LAYER_CONV2D;
            L->conv = *convs[k];
        }
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

/* Read an int ≥ 1 at *p, advancing it; −1 when there is none. */
static long lg_arch_int(const char **p)
{
    char *end;
    if (**p < '0' || **p > '9') return -1;
    long v = strtol(*p, &end, 10);
    *p = end;
    return v >= 0 && v <= LG_NET_MAX_DIM ? v : -1;
}

/* "A" or "AxB" into a, b (b = a when absent); 0 on success. */
static int lg_arch_pair(const char **p, long *a, long *b)
{
    if ((*a = lg_arch_int(p)) < 0) return -1;
    *b = *a;
    if (**p == 'x') {
        (*p)++;
        if ((*b = lg_arch_int(p)) < 0) return -1;
    }
    return 0;
}

int lg_net_arch_parse(const char *s, int *dims, lg_conv *convs, int cap)
{
    int n = -1;
    long C = 0, H = 0, W = 0; /* current image, C = 0 when flat */
    const char *p = s;
    while (*p) {
        char tok[64];
        size_t len = strcspn(p, ",");
        if (len == 0 || len >= sizeof tok || n + 2 >= cap) goto bad;
        memcpy(tok, p, len);
        tok[len] = '\0';
        const char *q = tok;
        if (n < 0) { /* the input: N or CxHxW */
            long v[3];
            int k = 0;
            while (k < 3 && (v[k] = lg_arch_int(&q)) >= 1) {
                k++;
                if (*q != 'x') break;
                q++;
            }
            if (*q || (k != 1 && k != 3)) goto bad;
            if (k == 3) C = v[0], H = v[1], W = v[2];
            long total = k == 3 ? v[0] * v[1] * v[2] : v[0];
            if (total < 1 || total > LG_NET_MAX_DIM) goto bad;
            dims[0] = (int)total;
            n = 0;
        } else if (*q == 'c') {
            long co, kh, kw, sh = 1, sw = 1, ph = 0, pw = 0;
            q++;
            if ((co = lg_arch_int(&q)) < 1 || *q++ != 'k' || lg_arch_pair(&q, &kh, &kw)) goto bad;
            if (*q == 's' && (q++, lg_arch_pair(&q, &sh, &sw))) goto bad;
            if (*q == 'p' && (q++, lg_arch_pair(&q, &ph, &pw))) goto bad;
            if (*q || C == 0) goto bad;
            lg_conv c = {(int)C, (int)H, (int)W, (int)co, 0, 0, (int)kh, (int)kw, (int)sh, (int)sw, (int)ph, (int)pw};
            c.h_out = lg_conv_out_size(c.h_in, c.kh, c.sh, c.ph);
            c.w_out = lg_conv_out_size(c.w_in, c.kw, c.sw, c.pw);
            if (!lg_conv_ok(&c)) goto bad;
            convs[n] = c;
            C = co, H = c.h_out, W = c.w_out;
            dims[++n] = (int)(C * H * W);
        } else {
            long v = lg_arch_int(&q);
            if (v < 1 || *q) goto bad;
            memset(&convs[n], 0, sizeof convs[n]);
            C = 0;
            dims[++n] = (int)v;
        }
        p += len;
        if (*p == ',' && !*++p) goto bad;
    }
    if (n >= 1) return n;
bad:
    lg_fail(LG_ERR_ARG,
            "architecture '%s': expected N or CxHxW, then widths N or convs c<C>k<K>[x<K>][s<S>[x<S>]][p<P>[x<P>]] "
            "(a conv needs an image before it; at most %d layers)",
            s, cap - 1);
    return -1;
}

int lg_net_has_conv(const lg_net *net)
{
    for (int k = 0; k < net->n_layers; k++)
        if (net->layers[k].kind == LG_LAYER_CONV2D) return 1;
    return 0;
}

/* Direct convolution: out[co][oy][ox] = b[.] + Σ W[co][ci][ky][kx]·x[ci][iy][ix],
 * iy = oy·sh − ph + ky (terms outside the input are the zero padding). */
void lg_conv_forward(const lg_layer *L, const double *x, double *out)
{
    const lg_conv *c = &L->conv;
    size_t hw_in = (size_t)c->h_in * (size_t)c->w_in;
    for (int co = 0; co < c->c_out; co++)
        for (int oy = 0; oy < c->h_out; oy++)
            for (int ox = 0; ox < c->w_out; ox++) {
                size_t o = ((size_t)co * (size_t)c->h_out + (size_t)oy) * (size_t)c->w_out + (size_t)ox;
                double s = L->b[o];
                for (int ci = 0; ci < c->c_in; ci++) {
                    const double *Wk = L->W + ((size_t)co * (size_t)c->c_in + (size_t)ci) * (size_t)c->kh * (size_t)c->kw;
                    const double *xc = x + (size_t)ci * hw_in;
                    for (int ky = 0; ky < c->kh; ky++) {
                        int iy = oy * c->sh - c->ph + ky;
                        if (iy < 0 || iy >= c->h_in) continue;
                        for (int kx = 0; kx < c->kw; kx++) {
                            int ix = ox * c->sw - c->pw + kx;
                            if (ix < 0 || ix >= c->w_in) continue;
                            s += Wk[ky * c->kw + kx] * xc[(size_t)iy * (size_t)c->w_in + (size_t)ix];
                        }
                    }
                }
                out[o] = s;
            }
}

size_t lg_net_dense_bytes(const lg_net *net)
{
    size_t total = 0;
    for (int k = 0; k < net->n_layers; k++) {
        size_t n = ((size_t)net->layers[k].n_out) * ((size_t)net->layers[k].n_in + 1);
        if (n > SIZE_MAX / sizeof(double) - total / sizeof(double)) return SIZE_MAX;
        total += n * sizeof(double);
    }
    return total;
}

void lg_conv_kernel_dense(const lg_conv *c, const double *K, double *W)
{
    size_t n_in = (size_t)c->c_in * (size_t)c->h_in * (size_t)c->w_in;
    for (int co = 0; co < c->c_out; co++)
        for (int oy = 0; oy < c->h_out; oy++)
            for (int ox = 0; ox < c->w_out; ox++) {
                size_t o = ((size_t)co * (size_t)c->h_out + (size_t)oy) * (size_t)c->w_out + (size_t)ox;
                double *row = W + o * n_in;
                for (int ci = 0; ci < c->c_in; ci++)
                    for (int ky = 0; ky < c->kh; ky++) {
                        int iy = oy * c->sh - c->ph + ky;
                        if (iy < 0 || iy >= c->h_in) continue;
                        for (int kx = 0; kx < c->kw; kx++) {
                            int ix = ox * c->sw - c->pw + kx;
                            if (ix < 0 || ix >= c->w_in) continue;
                            row[((size_t)ci * (size_t)c->h_in + (size_t)iy) * (size_t)c->w_in + (size_t)ix] =
                                K[(((size_t)co * (size_t)c->c_in + (size_t)ci) * (size_t)c->kh + (size_t)ky) * (size_t)c->kw +
                                  (size_t)kx];
                        }
                    }
            }
}

lg_status lg_net_densify(lg_net *dst, const lg_net *src, size_t max_bytes)
{
    memset(dst, 0, sizeof *dst);
    size_t need = lg_net_dense_bytes(src);
    if (max_bytes && need > max_bytes)
        return lg_fail(LG_ERR_NOMEM,
                       "the convolutions written as dense matrices would take %.1f MB, above the cap of %.1f MB; "
                       "this network is too large to verify as a dense net",
                       (double)need / 1048576.0, (double)max_bytes / 1048576.0);
    int *dims = malloc(((size_t)src->n_layers + 1) * sizeof *dims);
    if (!dims) return lg_fail(LG_ERR_NOMEM, "out of memory");
    dims[0] = src->n_in;
    for (int k = 0; k < src->n_layers; k++) dims[k + 1] = src->layers[k].n_out;
    lg_status st = lg_net_init(dst, src->n_layers, dims, LG_ACT_IDENTITY);
    free(dims);
    if (st != LG_OK) return st;
    dst->t = src->t;
    for (int k = 0; k < src->n_layers; k++) {
        const lg_layer *S = &src->layers[k];
        lg_layer *D = &dst->layers[k];
        D->act = S->act;
        D->lambda = S->lambda;
        D->s = S->s;
        memcpy(D->b, S->b, (size_t)S->n_out * sizeof *D->b);
        if (S->kind != LG_LAYER_CONV2D) {
            memcpy(D->W, S->W, (size_t)S->n_out * (size_t)S->n_in * sizeof *D->W);
            continue;
        }
        lg_conv_kernel_dense(&S->conv, S->W, D->W);
    }
    if (src->in_sub && !(dst->in_sub = lg_dup(src->in_sub, (size_t)src->n_in))) goto oom;
    if (src->in_div && !(dst->in_div = lg_dup(src->in_div, (size_t)src->n_in))) goto oom;
    return LG_OK;
oom:
    lg_net_free(dst);
    return lg_fail(LG_ERR_NOMEM, "out of memory");
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
        if (L->kind == LG_LAYER_CONV2D) {
            lg_conv_forward(L, a, z);
            for (int o = 0; o < L->n_out; o++) z[o] = lg_act_eval(L->act, z[o], L->lambda);
            double *t = a;
            a = z;
            z = t;
            continue;
        }
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

/* col[K][hw] (K = c_in·kh·kw, row (ci, ky, kx), column (oy, ox)) of one
 * image x: x[ci][oy·sh − ph + ky][ox·sw − pw + kx], 0 in the padding. */
void lg_conv_im2col(const lg_conv *c, const double *x, double *col)
{
    size_t hw = (size_t)c->h_out * (size_t)c->w_out;
    for (int ci = 0; ci < c->c_in; ci++)
        for (int ky = 0; ky < c->kh; ky++)
            for (int kx = 0; kx < c->kw; kx++) {
                double *row = col + ((size_t)(ci * c->kh + ky) * (size_t)c->kw + (size_t)kx) * hw;
                const double *img = x + (size_t)ci * (size_t)c->h_in * (size_t)c->w_in;
                for (int oy = 0; oy < c->h_out; oy++) {
                    int iy = oy * c->sh - c->ph + ky;
                    double *d = row + (size_t)oy * (size_t)c->w_out;
                    for (int ox = 0; ox < c->w_out; ox++) {
                        int ix = ox * c->sw - c->pw + kx;
                        d[ox] = iy < 0 || iy >= c->h_in || ix < 0 || ix >= c->w_in ? 0.0 : img[(size_t)iy * c->w_in + ix];
                    }
                }
            }
}

lg_status lg_net_forward_batch(const lg_net *net, const double *X, double *Y, size_t n)
{
    if (n == 0) return LG_OK;
    size_t w = (size_t)lg_net_max_width(net), ncol = 1;
    for (int k = 0; k < net->n_layers; k++) {
        const lg_conv *c = &net->layers[k].conv;
        if (net->layers[k].kind != LG_LAYER_CONV2D) continue;
        size_t q = (size_t)c->c_in * c->kh * c->kw * (size_t)c->h_out * c->w_out;
        if (q > ncol) ncol = q;
    }
    double *a = malloc(n * w * sizeof *a), *z = malloc(n * w * sizeof *z), *col = malloc(ncol * sizeof *col);
    if (!a || !z || !col) {
        free(a);
        free(z);
        free(col);
        return lg_fail(LG_ERR_NOMEM, "cannot allocate forward buffers for %zu inputs", n);
    }
    lg_net_normalise(net, X, a, n);
    for (int k = 0; k < net->n_layers; k++) {
        const lg_layer *L = &net->layers[k];
        size_t no = (size_t)L->n_out;
        if (L->kind == LG_LAYER_CONV2D) {
            /* per image: z[c_out][hw] = b + kernel[c_out][K] · im2col(a)[K][hw] (one dgemm) */
            const lg_conv *c = &L->conv;
            int K = c->c_in * c->kh * c->kw, hw = c->h_out * c->w_out;
            for (size_t r = 0; r < n; r++) {
                lg_conv_im2col(c, a + r * (size_t)L->n_in, col);
                memcpy(z + r * no, L->b, no * sizeof *z);
                cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, c->c_out, hw, K, 1.0, L->W, K, col, hw, 1.0,
                            z + r * no, hw);
            }
        } else {
            /* z[n][n_out] = b (broadcast), then z += a[n][n_in] · Wᵀ */
            for (size_t r = 0; r < n; r++) memcpy(z + r * no, L->b, no * sizeof *z);
            cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)n, L->n_out, L->n_in, 1.0, a, L->n_in, L->W,
                        L->n_in, 1.0, z, L->n_out);
        }
        for (size_t i = 0; i < n * no; i++) z[i] = lg_act_eval(L->act, z[i], L->lambda);
        double *t = a;
        a = z;
        z = t;
    }
    memcpy(Y, a, n * (size_t)lg_net_n_out(net) * sizeof *Y);
    free(a);
    free(z);
    free(col);
    return LG_OK;
}

lg_status lg_net_validate(const lg_net *net)
{
    if (net->n_layers < 1 || net->n_in < 1) return lg_fail(LG_ERR_FORMAT, "network has no layers or no inputs");
    int prev = net->n_in;
    for (int k = 0; k < net->n_layers; k++) {
        const lg_layer *L = &net->layers[k];
        if (L->kind != LG_LAYER_DENSE && L->kind != LG_LAYER_CONV2D)
            return lg_fail(LG_ERR_FORMAT, "layer %d: unknown layer kind %d", k, (int)L->kind);
        if (L->kind == LG_LAYER_CONV2D &&
            (!lg_conv_ok(&L->conv) || L->conv.c_in * L->conv.h_in * L->conv.w_in != L->n_in ||
             L->conv.c_out * L->conv.h_out * L->conv.w_out != L->n_out))
            return lg_fail(LG_ERR_FORMAT, "layer %d: inconsistent conv geometry", k);
        if (L->n_in != prev)
            return lg_fail(LG_ERR_FORMAT, "layer %d: takes %d inputs but the previous layer gives %d", k, L->n_in, prev);
        if (!lg_act_name(L->act)) return lg_fail(LG_ERR_FORMAT, "layer %d: unknown activation %d", k, (int)L->act);
        if (!lg_act_param_ok(L->act, L->lambda)) {
            const lg_act_info *ai = lg_act_info_of(L->act);
            return lg_fail(LG_ERR_FORMAT, "layer %d: %s parameter %s = %g, expected %s", k, ai->name, ai->param_sym,
                           L->lambda, ai->param_range);
        }
        if (!isfinite(L->s))
            return lg_fail(LG_ERR_FORMAT, "layer %d: raw hardness parameter s = %g; NaN/Inf refused", k, L->s);
        prev = L->n_out;
    }
    if (!(net->t > 0) || !isfinite(net->t))
        return lg_fail(LG_ERR_FORMAT, "temperature t = %g, expected a finite value > 0", net->t);
    /* name the field of the first non-finite parameter (W_k[o][i] or b_k[o]) */
    for (int k = 0; k < net->n_layers; k++) {
        const lg_layer *L = &net->layers[k];
        size_t nw = lg_layer_n_weights(L);
        for (size_t i = 0; i < nw; i++)
            if (!isfinite(L->W[i]) && L->kind == LG_LAYER_CONV2D)
                return lg_fail(LG_ERR_FORMAT, "layer %d: kernel weight %zu = %g; NaN/Inf refused", k, i, L->W[i]);
            else if (!isfinite(L->W[i]))
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
