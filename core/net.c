/* net.c — the network type: building, shapes, the forward pass (net.h). */
#include "core/net.h"

#include "core/arch.h"
#include "core/linop.h"
#include "core/op.h"

#include <cblas.h>
#include <stdio.h>
#include <stdint.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Point each layer's W and b, its further terms, their weights and every
 * index map into the net's allocations (layer by layer: W_0, b, then the
 * further terms' weights; maps in the same order). */
static void lg_net_carve(lg_net *net)
{
    double *p = net->params;
    int *m = net->maps;
    lg_linear *tp = net->terms;
    for (int k = 0; k < net->n_layers; k++) {
        lg_layer *L = &net->layers[k];
        L->terms = NULL;
        if (L->n_terms > 0) { /* tp is NULL when no layer has further terms */
            L->terms = tp;
            tp += L->n_terms;
        }
        for (int t = 0; t < lg_layer_n_lin(L); t++) {
            lg_linear *A = lg_layer_lin_mut(L, t);
            size_t nw = lg_linear_n_weights(A);
            A->W = nw ? p : NULL;
            p += nw;
            if (t == 0) {
                L->b = p;
                p += (size_t)L->n_out;
            }
            const lg_opdef *op = lg_op(A->kind);
            A->map = op->n_map ? m : NULL;
            if (op->n_map) m += op->n_map(A);
        }
    }
}

size_t lg_linear_n_weights(const lg_linear *A) { return lg_op(A->kind)->n_weights(A); }

size_t lg_layer_n_weights(const lg_layer *L) { return lg_linear_n_weights(&L->lin); }

int lg_conv_out_size(int n_in, int k, int s, int p)
{
    if (n_in < 1 || k < 1 || s < 1 || p < 0 || p >= k) return 0;
    long long span = (long long)n_in + 2LL * p - k;
    if (span < 0) return 0;
    return (int)(span / s + 1);
}

int lg_conv_ok(const lg_conv *c)
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
    for (int k = 0; k <= n_layers; k++)
        if (dims[k] < 1 || dims[k] > LG_NET_MAX_DIM)
            return lg_fail(LG_ERR_ARG, "layer size %d is %d, expected 1..%d", k, dims[k], LG_NET_MAX_DIM);
    lg_layer_spec *sp = malloc((size_t)n_layers * sizeof *sp);
    lg_linear *tm = calloc((size_t)n_layers, sizeof *tm);
    if (!sp || !tm) {
        free(sp);
        free(tm);
        return lg_fail(LG_ERR_NOMEM, "out of memory");
    }
    for (int k = 0; k < n_layers; k++) {
        const lg_conv *c = convs && convs[k] && convs[k]->c_out > 0 ? convs[k] : NULL;
        tm[k].kind = c ? LG_LAYER_CONV2D : LG_LAYER_DENSE;
        if (c) tm[k].conv = *c;
        tm[k].n_in = dims[k];
        tm[k].src = k - 1;
        sp[k] = (lg_layer_spec){dims[k + 1], k + 1 < n_layers ? hidden : LG_ACT_IDENTITY, 1, &tm[k]};
    }
    lg_status st = lg_net_build(net, dims[0], n_layers, sp);
    free(sp);
    free(tm);
    return st;
}

lg_status lg_conv_check_shape(const lg_net *net, int k, int t, const lg_linear *A, int n_out, lg_status code)
{
    (void)net;
    const lg_conv *c = &A->conv;
    if (!lg_conv_ok(c) || c->c_in * c->h_in * c->w_in != A->n_in || c->c_out * c->h_out * c->w_out != n_out)
        return lg_fail(code,
                       "layer %d, term %d: conv geometry %dx%dx%d -> %dx%dx%d (kernel %dx%d, stride %dx%d, "
                       "padding %dx%d) is inconsistent or does not match sizes %d -> %d",
                       k, t, c->c_in, c->h_in, c->w_in, c->c_out, c->h_out, c->w_out, c->kh, c->kw, c->sh, c->sw,
                       c->ph, c->pw, A->n_in, n_out);
    return LG_OK;
}

int lg_conv_describe(const lg_linear *A, const char *from, char *buf, size_t cap)
{
    (void)from;
    const lg_conv *g = &A->conv;
    return snprintf(buf, cap, "conv %dx%dx%d -> %dx%dx%d, kernel %dx%d, stride %dx%d, padding %dx%d", g->c_in, g->h_in,
                    g->w_in, g->c_out, g->h_out, g->w_out, g->kh, g->kw, g->sh, g->sw, g->ph, g->pw);
}

/* Check one term of layer k against the shapes so far; LG_OK or a message. */
static lg_status lg_term_check(const lg_net *net, int k, int t, const lg_linear *A, int n_out, lg_status code)
{
    if (A->src < LG_NET_INPUT || A->src >= k)
        return lg_fail(code, "layer %d, term %d: reads node %d, expected the input (%d) or an earlier layer (0..%d)", k,
                       t, A->src, LG_NET_INPUT, k - 1);
    int w = A->src == LG_NET_INPUT ? net->n_in : net->layers[A->src].n_out;
    if (A->n_in != w)
        return lg_fail(code, "layer %d, term %d: takes %d inputs but node %d gives %d", k, t, A->n_in, A->src, w);
    const lg_opdef *op = lg_op(A->kind);
    if (!op->flags) return lg_fail(code, "layer %d, term %d: unknown operator kind %d", k, t, (int)A->kind);
    if ((op->flags & LG_OPF_NODE) && t > 0)
        return lg_fail(code, "layer %d, term %d: a %s node must be its layer's own term (term 0)", k, t, op->name);
    if (op->check_shape) return op->check_shape(net, k, t, A, n_out, code);
    return LG_OK;
}

lg_status lg_net_build(lg_net *net, int n_in, int n_layers, const lg_layer_spec *specs)
{
    memset(net, 0, sizeof *net);
    if (n_layers < 1 || n_layers > LG_NET_MAX_LAYERS)
        return lg_fail(LG_ERR_ARG, "network needs 1..%d layers, got %d", LG_NET_MAX_LAYERS, n_layers);
    if (n_in < 1 || n_in > LG_NET_MAX_DIM)
        return lg_fail(LG_ERR_ARG, "input size is %d, expected 1..%d", n_in, LG_NET_MAX_DIM);
    net->layers = calloc((size_t)n_layers, sizeof *net->layers);
    if (!net->layers) return lg_fail(LG_ERR_NOMEM, "out of memory");
    net->n_in = n_in;
    net->n_layers = n_layers;
    net->t = 0.1;
    size_t total = 0, nmap = 0, nterm = 0;
    lg_status st = LG_OK;
    for (int k = 0; k < n_layers; k++) {
        const lg_layer_spec *sp = &specs[k];
        lg_layer *L = &net->layers[k];
        if (sp->n_out < 1 || sp->n_out > LG_NET_MAX_DIM) {
            st = lg_fail(LG_ERR_ARG, "layer %d: size %d, expected 1..%d", k, sp->n_out, LG_NET_MAX_DIM);
            goto fail;
        }
        if (sp->n_terms < 1 || sp->n_terms > LG_NET_MAX_LAYERS + 1) {
            st = lg_fail(LG_ERR_ARG, "layer %d: %d linear terms, expected 1..%d", k, sp->n_terms, LG_NET_MAX_LAYERS + 1);
            goto fail;
        }
        L->n_out = sp->n_out;
        for (int t = 0; t < sp->n_terms; t++) {
            lg_linear A = sp->terms[t];
            A.n_out = sp->n_out;
            A.W = NULL;
            A.map = NULL;
            const lg_opdef *op = lg_op(A.kind);
            if (!(op->flags & LG_OPF_CONV_GEOM)) memset(&A.conv, 0, sizeof A.conv);
            if (!(op->flags & LG_OPF_TNODE)) memset(&A.op, 0, sizeof A.op);
            if ((st = lg_term_check(net, k, t, &A, sp->n_out, LG_ERR_ARG)) != LG_OK) goto fail;
            total += lg_linear_n_weights(&A);
            if (op->n_map) nmap += op->n_map(&A);
            if (t == 0) L->lin = A;
        }
        total += (size_t)sp->n_out;
        nterm += (size_t)sp->n_terms - 1;
        L->n_terms = sp->n_terms - 1;
        L->act = sp->act;
        L->lambda = lg_act_param_init(L->act, net->t, &L->s);
        if (total > LG_NET_MAX_PARAMS || nmap > LG_NET_MAX_PARAMS) {
            st = lg_fail(LG_ERR_ARG, "network has more than %zu parameters", LG_NET_MAX_PARAMS);
            goto fail;
        }
    }
    net->params = calloc(total ? total : 1, sizeof *net->params);
    net->maps = nmap ? calloc(nmap, sizeof *net->maps) : NULL;
    net->terms = nterm ? calloc(nterm, sizeof *net->terms) : NULL;
    if (!net->params || (nmap && !net->maps) || (nterm && !net->terms)) {
        st = lg_fail(LG_ERR_NOMEM, "cannot allocate a network of %zu parameters", total);
        goto fail;
    }
    net->n_params = total;
    net->n_maps = nmap;
    net->n_terms = (int)nterm;
    lg_linear *tp = net->terms;
    for (int k = 0; k < n_layers; k++)
        for (int t = 1; t < specs[k].n_terms; t++) {
            *tp = specs[k].terms[t];
            tp->n_out = specs[k].n_out;
            if (!lg_op_is(tp->kind, LG_OPF_CONV_GEOM)) memset(&tp->conv, 0, sizeof tp->conv);
            memset(&tp->op, 0, sizeof tp->op); /* further terms are linear (lg_term_check) */
            tp++;
        }
    lg_net_carve(net);
    return LG_OK;
fail:
    lg_net_free(net);
    return st;
}

void lg_net_free(lg_net *net)
{
    free(net->layers);
    free(net->params);
    free(net->in_sub);
    free(net->in_div);
    free(net->terms);
    free(net->maps);
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
    if (src->n_terms) {
        if (!(dst->terms = malloc((size_t)src->n_terms * sizeof *dst->terms))) goto fail;
        memcpy(dst->terms, src->terms, (size_t)src->n_terms * sizeof *dst->terms);
    }
    if (src->n_maps) {
        if (!(dst->maps = malloc(src->n_maps * sizeof *dst->maps))) goto fail;
        memcpy(dst->maps, src->maps, src->n_maps * sizeof *dst->maps);
    }
    if (src->in_sub && !(dst->in_sub = lg_dup(src->in_sub, (size_t)src->n_in))) goto fail;
    if (src->in_div && !(dst->in_div = lg_dup(src->in_div, (size_t)src->n_in))) goto fail;
    dst->n_in = src->n_in;
    dst->n_layers = src->n_layers;
    dst->t = src->t;
    dst->n_params = src->n_params;
    dst->n_terms = src->n_terms;
    dst->n_maps = src->n_maps;
    lg_net_carve(dst);
    return LG_OK;
fail:
    lg_net_free(dst);
    return lg_fail(LG_ERR_NOMEM, "cannot copy a network of %zu parameters", src->n_params);
}

int lg_net_arch_parse(const char *s, int *dims, lg_conv *convs, int cap)
{
    lg_arch a;
    if (lg_arch_parse(&a, s) != LG_OK) return -1;
    int n = a.n_layers;
    if (!a.chain || n > cap - 1) {
        lg_fail(LG_ERR_ARG,
                a.chain ? "architecture '%s': more than %d layers"
                        : "architecture '%s': residual blocks make a graph, not a chain of at most %d layers "
                          "(lg_arch_parse builds it)",
                s, cap - 1);
        lg_arch_free(&a);
        return -1;
    }
    dims[0] = a.n_in;
    for (int k = 0; k < n; k++) {
        const lg_linear *t = a.specs[k].terms;
        dims[k + 1] = a.specs[k].n_out;
        if (t->kind == LG_LAYER_CONV2D) convs[k] = t->conv;
        else memset(&convs[k], 0, sizeof convs[k]);
    }
    lg_arch_free(&a);
    return n;
}

int lg_net_has_conv(const lg_net *net)
{
    for (int k = 0; k < net->n_layers; k++)
        for (int t = 0; t < lg_layer_n_lin(&net->layers[k]); t++)
            if (lg_layer_lin(&net->layers[k], t)->kind == LG_LAYER_CONV2D) return 1;
    return 0;
}

int lg_net_node_width(const lg_net *net, int node) { return node < 0 ? net->n_in : net->layers[node].n_out; }

int lg_net_is_chain(const lg_net *net)
{
    for (int k = 0; k < net->n_layers; k++) {
        const lg_layer *L = &net->layers[k];
        if (L->n_terms != 0 || L->lin.src != k - 1 || (L->lin.kind != LG_LAYER_DENSE && L->lin.kind != LG_LAYER_CONV2D))
            return 0;
    }
    return 1;
}

lg_status lg_net_require_chain(const lg_net *net, const char *stage)
{
    if (lg_net_is_chain(net)) return LG_OK;
    return lg_fail(LG_ERR_ARG, "%s does not take networks with skip connections, sums or index maps yet", stage);
}

size_t lg_net_nodes_len(const lg_net *net) { return lg_net_node_offset(net, net->n_layers); }

size_t lg_net_node_offset(const lg_net *net, int node)
{
    size_t off = (size_t)net->n_in;
    if (node < 0) return 0;
    for (int k = 0; k < node; k++) off += (size_t)net->layers[k].n_out;
    return off;
}

/* Direct convolution: out[co][oy][ox] = b[.] + Σ W[co][ci][ky][kx]·x[ci][iy][ix],
 * iy = oy·sh − ph + ky (terms outside the input are the zero padding). */
void lg_conv_forward(const lg_layer *L, const double *x, double *out)
{
    const lg_conv *c = &L->lin.conv;
    size_t hw_in = (size_t)c->h_in * (size_t)c->w_in;
    for (int co = 0; co < c->c_out; co++)
        for (int oy = 0; oy < c->h_out; oy++)
            for (int ox = 0; ox < c->w_out; ox++) {
                size_t o = ((size_t)co * (size_t)c->h_out + (size_t)oy) * (size_t)c->w_out + (size_t)ox;
                double s = L->b[o];
                for (int ci = 0; ci < c->c_in; ci++) {
                    const double *Wk = L->lin.W + ((size_t)co * (size_t)c->c_in + (size_t)ci) * (size_t)c->kh * (size_t)c->kw;
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
    for (int k = 0; k < net->n_layers; k++)
        for (int t = 0; t < lg_layer_n_lin(&net->layers[k]); t++) {
            const lg_linear *A = lg_layer_lin(&net->layers[k], t);
            size_t n = (size_t)A->n_out * ((size_t)A->n_in + (t == 0));
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

void lg_layer_copy_act_bias(lg_layer *dst, const lg_layer *src)
{
    dst->act = src->act;
    dst->lambda = src->lambda;
    dst->s = src->s;
    memcpy(dst->b, src->b, (size_t)src->n_out * sizeof *dst->b);
}

lg_status lg_net_densify(lg_net *dst, const lg_net *src, size_t max_bytes)
{
    memset(dst, 0, sizeof *dst);
    if (lg_net_require_no_max(src, "writing a network as dense matrices") != LG_OK) return LG_ERR_UNSUPPORTED;
    if (lg_net_require_no_tnode(src, "writing a network as dense matrices") != LG_OK) return LG_ERR_UNSUPPORTED;
    size_t need = lg_net_dense_bytes(src);
    if (max_bytes && need > max_bytes)
        return lg_fail(LG_ERR_NOMEM,
                       "the convolutions written as dense matrices would take %.1f MB, above the cap of %.1f MB; "
                       "this network is too large to verify as a dense net",
                       (double)need / 1048576.0, (double)max_bytes / 1048576.0);
    int nt = src->n_layers + src->n_terms;
    lg_layer_spec *sp = malloc((size_t)src->n_layers * sizeof *sp);
    lg_linear *tm = malloc((size_t)nt * sizeof *tm);
    if (!sp || !tm) {
        free(sp);
        free(tm);
        return lg_fail(LG_ERR_NOMEM, "out of memory");
    }
    lg_linear *tp = tm;
    for (int k = 0; k < src->n_layers; k++) {
        const lg_layer *S = &src->layers[k];
        sp[k] = (lg_layer_spec){S->n_out, LG_ACT_IDENTITY, lg_layer_n_lin(S), tp};
        for (int t = 0; t < lg_layer_n_lin(S); t++) {
            *tp = *lg_layer_lin(S, t);
            tp->kind = LG_LAYER_DENSE;
            tp++;
        }
    }
    lg_status st = lg_net_build(dst, src->n_in, src->n_layers, sp);
    free(sp);
    free(tm);
    if (st != LG_OK) return st;
    dst->t = src->t;
    for (int k = 0; k < src->n_layers; k++) {
        const lg_layer *S = &src->layers[k];
        lg_layer *D = &dst->layers[k];
        lg_layer_copy_act_bias(D, S);
        for (int t = 0; t < lg_layer_n_lin(S); t++) {
            const lg_linear *A = lg_layer_lin(S, t);
            double *W = lg_layer_lin_mut(D, t)->W;
            if (A->kind == LG_LAYER_CONV2D)
                lg_conv_kernel_dense(&A->conv, A->W, W);
            else if (A->kind == LG_LAYER_TOKMAP)
                lg_tokmap_dense(A, W);
            else if (A->kind == LG_LAYER_INDEX)
                for (int o = 0; o < A->n_out; o++) {
                    if (A->map[o] >= 0) W[(size_t)o * (size_t)A->n_in + (size_t)A->map[o]] = 1.0;
                }
            else
                memcpy(W, A->W, (size_t)A->n_out * (size_t)A->n_in * sizeof *W);
        }
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

void lg_net_forward_nodes(const lg_net *net, const double *x, double *vals, double *pre)
{
    lg_net_normalise(net, x, vals, 1);
    size_t off = (size_t)net->n_in;
    for (int k = 0; k < net->n_layers; k++) {
        const lg_layer *L = &net->layers[k];
        double *z = vals + off;
        lg_node_buf at = {net, vals};
        lg_layer_pre(L, lg_node_buf_val, &at, z, 0); /* a node's forward, or the term sum + b */
        if (pre) memcpy(pre + off, z, (size_t)L->n_out * sizeof *z);
        if (!lg_layer_is(L, LG_OPF_NODE)) /* a node: identity activation */
            for (int o = 0; o < L->n_out; o++) z[o] = lg_act_eval(L->act, z[o], L->lambda);
        off += (size_t)L->n_out;
    }
}

void lg_net_forward(const lg_net *net, const double *x, double *y, double *scratch)
{
    if (!lg_net_is_chain(net)) {
        double *vals = malloc(lg_net_nodes_len(net) * sizeof *vals);
        if (!vals) {
            for (int o = 0; o < lg_net_n_out(net); o++) y[o] = NAN;
            return;
        }
        lg_net_forward_nodes(net, x, vals, NULL);
        memcpy(y, vals + lg_net_node_offset(net, net->n_layers - 1), (size_t)lg_net_n_out(net) * sizeof *y);
        free(vals);
        return;
    }
    int w = lg_net_max_width(net);
    double *a = scratch, *z = scratch + w;
    lg_net_normalise(net, x, a, 1);
    for (int k = 0; k < net->n_layers; k++) {
        const lg_layer *L = &net->layers[k];
        if (L->lin.kind == LG_LAYER_CONV2D) {
            lg_conv_forward(L, a, z);
            for (int o = 0; o < L->n_out; o++) z[o] = lg_act_eval(L->act, z[o], L->lambda);
            double *t = a;
            a = z;
            z = t;
            continue;
        }
        for (int o = 0; o < L->n_out; o++) {
            const double *Wr = L->lin.W + (size_t)o * (size_t)L->lin.n_in;
            double s = L->b[o];
            for (int i = 0; i < L->lin.n_in; i++) s += Wr[i] * a[i];
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
    if (!lg_net_is_chain(net)) {
        size_t len = lg_net_nodes_len(net), no = (size_t)lg_net_n_out(net);
        double *vals = malloc(len * sizeof *vals);
        if (!vals) return lg_fail(LG_ERR_NOMEM, "cannot allocate forward buffers for %zu values", len);
        for (size_t r = 0; r < n; r++) {
            lg_net_forward_nodes(net, X + r * (size_t)net->n_in, vals, NULL);
            memcpy(Y + r * no, vals + len - no, no * sizeof *Y);
        }
        free(vals);
        return LG_OK;
    }
    size_t w = (size_t)lg_net_max_width(net), ncol = 1;
    for (int k = 0; k < net->n_layers; k++) {
        const lg_conv *c = &net->layers[k].lin.conv;
        if (net->layers[k].lin.kind != LG_LAYER_CONV2D) continue;
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
        if (L->lin.kind == LG_LAYER_CONV2D) {
            /* per image: z[c_out][hw] = b + kernel[c_out][K] · im2col(a)[K][hw] (one dgemm) */
            const lg_conv *c = &L->lin.conv;
            int K = c->c_in * c->kh * c->kw, hw = c->h_out * c->w_out;
            for (size_t r = 0; r < n; r++) {
                lg_conv_im2col(c, a + r * (size_t)L->lin.n_in, col);
                memcpy(z + r * no, L->b, no * sizeof *z);
                cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, c->c_out, hw, K, 1.0, L->lin.W, K, col, hw, 1.0,
                            z + r * no, hw);
            }
        } else {
            /* z[n][n_out] = b (broadcast), then z += a[n][n_in] · Wᵀ */
            for (size_t r = 0; r < n; r++) memcpy(z + r * no, L->b, no * sizeof *z);
            cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)n, L->n_out, L->lin.n_in, 1.0, a, L->lin.n_in, L->lin.W,
                        L->lin.n_in, 1.0, z, L->n_out);
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
    for (int k = 0; k < net->n_layers; k++) {
        const lg_layer *L = &net->layers[k];
        if (L->n_terms < 0) return lg_fail(LG_ERR_FORMAT, "layer %d: %d further terms", k, L->n_terms);
        for (int t = 0; t < lg_layer_n_lin(L); t++) {
            const lg_linear *A = lg_layer_lin(L, t);
            lg_status st = lg_term_check(net, k, t, A, L->n_out, LG_ERR_FORMAT);
            if (st != LG_OK) return st;
            if (A->n_out != L->n_out)
                return lg_fail(LG_ERR_FORMAT, "layer %d, term %d: gives %d values, the layer has %d", k, t, A->n_out,
                               L->n_out);
            const lg_opdef *op = lg_op(A->kind);
            if (op->flags & LG_OPF_NODE) {
                if (L->n_terms > 0 || L->act != LG_ACT_IDENTITY)
                    return lg_fail(LG_ERR_FORMAT,
                                   "layer %d: a %s node must be its layer's only term, with the identity activation",
                                   k, op->name);
                for (int o = 0; o < L->n_out; o++)
                    if (L->b[o] != 0.0) return lg_fail(LG_ERR_FORMAT, "layer %d: a %s node has bias 0", k, op->name);
            }
            if (op->check_values && (st = op->check_values(net, k, t, A)) != LG_OK) return st;
        }
        if (!lg_act_name(L->act)) return lg_fail(LG_ERR_FORMAT, "layer %d: unknown activation %d", k, (int)L->act);
        if (!lg_act_param_ok(L->act, L->lambda)) {
            const lg_act_info *ai = lg_act_info_of(L->act);
            return lg_fail(LG_ERR_FORMAT, "layer %d: %s parameter %s = %g, expected %s", k, ai->name, ai->param_sym,
                           L->lambda, ai->param_range);
        }
        if (!isfinite(L->s))
            return lg_fail(LG_ERR_FORMAT, "layer %d: raw hardness parameter s = %g; NaN/Inf refused", k, L->s);
    }
    if (!(net->t > 0) || !isfinite(net->t))
        return lg_fail(LG_ERR_FORMAT, "temperature t = %g, expected a finite value > 0", net->t);
    /* name the field of the first non-finite parameter (W_k[o][i] or b_k[o]) */
    for (int k = 0; k < net->n_layers; k++) {
        const lg_layer *L = &net->layers[k];
        for (int t = 0; t < lg_layer_n_lin(L); t++) {
            const lg_linear *A = lg_layer_lin(L, t);
            size_t nw = lg_linear_n_weights(A);
            char tn[32] = "";
            if (t > 0) snprintf(tn, sizeof tn, ", term %d", t);
            for (size_t i = 0; i < nw; i++)
                if (!isfinite(A->W[i]) && A->kind != LG_LAYER_DENSE)
                    return lg_fail(LG_ERR_FORMAT, "layer %d%s: %s weight %zu = %g; NaN/Inf refused", k, tn,
                                   A->kind == LG_LAYER_CONV2D ? "kernel" : lg_kind_name(A->kind), i, A->W[i]);
                else if (!isfinite(A->W[i]))
                    return lg_fail(LG_ERR_FORMAT, "layer %d%s: weight W[%zu][%zu] = %g; NaN/Inf refused", k, tn,
                                   i / (size_t)A->n_in, i % (size_t)A->n_in, A->W[i]);
        }
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
