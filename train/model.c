/* model.c — float forward/backward of a chain or a graph over one flat
 * parameter array (DESIGN.md §1 for the activation and λ formulas, "The
 * network as a graph" and "Training through a sum node"). */
#include "train/model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/linalg.h"
#include "core/op.h"
#include "core/traverse.h"
#include "train/act.h"
#include "train/init.h"
#include "train/node.h"

/* Layers whose parameter is λ (β) = 1 + softplus(s/t): lgelu and swish.
 * A prelu layer's parameter is its slope a = s itself. */
static int lg_model_softplus_param(lg_act a) { return lg_act_info_of(a)->softplus; }

/* The float term of a net's term (shapes only; W, dW, map and col are carved later). */
static lg_mterm lg_model_term_of(const lg_linear *A)
{
    lg_mterm T;
    memset(&T, 0, sizeof T);
    T.kind = A->kind;
    T.n_in = A->n_in;
    T.n_out = A->n_out;
    T.src = A->src;
    if (A->kind == LG_LAYER_CONV2D || A->kind == LG_LAYER_TOKMAP) T.conv = A->conv;
    T.n_w = lg_linear_n_weights(A);
    return T;
}

/* Floats of the im2col a conv term keeps for a batch of B (0 otherwise). */
static size_t lg_model_col_len(const lg_linear *A, size_t B)
{
    if (A->kind != LG_LAYER_CONV2D) return 0;
    const lg_conv *c = &A->conv;
    return (size_t)c->c_in * (size_t)c->kh * (size_t)c->kw * (size_t)c->h_out * (size_t)c->w_out * B;
}

/* The trained bias of layer L (lg_mlayer n_b, b_div): none for a node, one per channel of a conv
 * term 0 (the layout c_out × h_out·w_out), one per row of a per-token map term 0's block (tied
 * over the tokens), else one per output. */
static void lg_model_bias_shape(const lg_layer *L, size_t *n_b, size_t *div)
{
    const lg_linear *A0 = lg_layer_lin(L, 0);
    *div = 1;
    if (lg_train_op_of(A0->kind)) {
        *n_b = 0;
    } else if (A0->kind == LG_LAYER_CONV2D) {
        *n_b = (size_t)A0->conv.c_out;
        *div = (size_t)A0->conv.h_out * (size_t)A0->conv.w_out;
    } else if (A0->kind == LG_LAYER_TOKMAP) {
        *n_b = (size_t)A0->conv.c_out;
    } else {
        *n_b = (size_t)L->n_out;
    }
}

/* 1 when layer L's bias is tied as lg_model_bias_shape keeps it (each output equals the first
 * output of its tied group). */
static int lg_model_bias_tied(const lg_layer *L, size_t n_b, size_t div)
{
    if (!n_b) return 1;
    for (size_t i = 0; i < (size_t)L->n_out; i++)
        if (L->b[i] != L->b[(i / div % n_b) * div]) return 0;
    return 1;
}

/* The im2col of each conv term of layer M carved from *a (lg_layer_terms_visit of the net's layer). */
typedef struct lg_model_cols {
    lg_mlayer *M;
    float **a;
    size_t B;
} lg_model_cols;

static void lg_model_col_at(void *ctx, int t, const lg_linear *A)
{
    const lg_model_cols *cv = ctx;
    size_t q = lg_model_col_len(A, cv->B);
    if (q) lg_mlayer_term(cv->M, t)->col = *cv->a, *cv->a += q;
}

lg_status lg_model_init(lg_model *m, const lg_net *net, int max_batch)
{
    memset(m, 0, sizeof *m);
    for (int k = 0; k < net->n_layers; k++) { /* a node trains through its entry (train/node.h) or not at all */
        const lg_layer *L = &net->layers[k];
        if (lg_layer_is(L, LG_OPF_NODE) && !lg_train_op_of(L->lin.kind))
            return lg_fail(LG_ERR_UNSUPPORTED, "training does not take the %s node (layer %d)",
                           lg_layer_op(L)->name, k);
    }
    m->net = net;
    if (max_batch < 1) return lg_fail(LG_ERR_ARG, "batch size must be at least 1, got %d", max_batch);
    int nl = net->n_layers;
    size_t B = (size_t)max_batch;
    m->layers = calloc((size_t)nl, sizeof *m->layers);
    if (!m->layers) goto nomem;
    if (net->n_terms > 0 && !(m->terms = calloc((size_t)net->n_terms, sizeof *m->terms))) goto nomem;
    if (net->n_maps > 0 && !(m->maps = malloc(net->n_maps * sizeof *m->maps))) goto nomem;
    if (net->n_maps > 0) memcpy(m->maps, net->maps, net->n_maps * sizeof *m->maps);
    m->n_in = net->n_in;
    m->n_layers = nl;
    m->max_batch = max_batch;
    m->max_width = lg_net_max_width(net);
    m->t = net->t;
    /* size table: parameters (W_0, b, further W per layer, then s per layer) and activations */
    size_t np = 0, na = B * (size_t)net->n_in, col = 0;
    for (int k = 0; k < nl; k++) {
        const lg_layer *L = &net->layers[k];
        if (!lg_act_name(L->act)) {
            lg_model_free(m);
            return lg_fail(LG_ERR_UNSUPPORTED, "layer %d: unknown activation code %d cannot be trained", k,
                           (int)L->act);
        }
        for (int t = 0; t < lg_layer_n_lin(L); t++) {
            const lg_linear *A = lg_layer_lin(L, t);
            if (A->kind != LG_LAYER_DENSE && A->kind != LG_LAYER_CONV2D && A->kind != LG_LAYER_INDEX &&
                A->kind != LG_LAYER_TOKMAP && !lg_train_op_of(A->kind)) {
                lg_model_free(m);
                return lg_fail(LG_ERR_UNSUPPORTED, "layer %d, term %d: unknown operator kind %d cannot be trained", k,
                               t, (int)A->kind);
            }
            np += lg_linear_n_weights(A);
            size_t q = lg_model_col_len(A, B);
            if (q > col) col = q;
            na += q; /* the term's own im2col, kept for the backward */
        }
        /* the bias: one per channel when term 0 (the layer's own module, whose bias it is) is a
         * conv, one per block row when it is a per-token map, which the model adds so whatever the
         * further terms are: the net's bias must then be tied likewise, else it would be lost */
        const lg_linear *A0 = lg_layer_lin(L, 0);
        size_t n_b, b_div;
        lg_model_bias_shape(L, &n_b, &b_div);
        if (!lg_model_bias_tied(L, n_b, b_div)) {
            lg_model_free(m);
            return lg_fail(LG_ERR_UNSUPPORTED,
                           "layer %d: its bias differs within a %s of its %s term 0; training keeps one bias per %s",
                           k, A0->kind == LG_LAYER_CONV2D ? "channel" : "block row over the tokens",
                           lg_op(A0->kind)->name, A0->kind == LG_LAYER_CONV2D ? "channel" : "block row");
        }
        np += n_b;
        na += B * lg_train_op_keep(A0); /* a node's kept arrays */
        na += B * (size_t)L->n_out * (L->act == LG_ACT_IDENTITY ? 2u : 3u); /* z, (a), da */
        na += B * (size_t)L->n_out * lg_act_keep_count(L->act);
    }
    np += (size_t)nl;
    na += B * (size_t)lg_net_n_out(net) + B * (size_t)m->max_width + B * (size_t)net->n_in;
    if (col) na += col + B * (size_t)m->max_width;
    m->n_params = np;
    m->n_acts = na;
    m->params = calloc(np, sizeof(float));
    m->grads = calloc(np, sizeof(float));
    m->mom1 = calloc(np, sizeof(float));
    m->mom2 = calloc(np, sizeof(float));
    m->acts = calloc(na, sizeof(float));
    if (!m->params || !m->grads || !m->mom1 || !m->mom2 || !m->acts) goto nomem;
    if (net->in_sub && !(m->in_sub = malloc((size_t)net->n_in * sizeof(float)))) goto nomem;
    if (net->in_div && !(m->in_div = malloc((size_t)net->n_in * sizeof(float)))) goto nomem;
    for (int i = 0; i < net->n_in; i++) {
        if (m->in_sub) m->in_sub[i] = (float)net->in_sub[i];
        if (m->in_div) m->in_div[i] = (float)(1.0 / net->in_div[i]);
    }
    /* carve */
    float *p = m->params, *g = m->grads, *a = m->acts;
    lg_mterm *tp = m->terms;
    m->x = a;
    a += B * (size_t)net->n_in;
    for (int k = 0; k < nl; k++) {
        const lg_layer *L = &net->layers[k];
        lg_mlayer *M = &m->layers[k];
        M->lin = lg_model_term_of(&L->lin);
        M->n_terms = L->n_terms;
        M->terms = L->n_terms ? tp : NULL;
        tp += L->n_terms;
        M->act = L->act;
        lg_model_bias_shape(L, &M->n_b, &M->b_div);
        M->op = lg_train_op_of(L->lin.kind);
        for (int t = 0; t < lg_layer_n_lin(L); t++) {
            const lg_linear *A = lg_layer_lin(L, t);
            lg_mterm *T = lg_mlayer_term(M, t);
            if (t > 0) *T = lg_model_term_of(A);
            if (A->kind != LG_LAYER_INDEX) {
                T->W = p, T->dW = g;
                p += T->n_w, g += T->n_w;
                for (size_t i = 0; i < T->n_w; i++) T->W[i] = (float)A->W[i];
            } else {
                T->map = m->maps + (A->map - net->maps);
            }
            if (t == 0) { /* the bias follows term 0's weights */
                M->b = p, M->db = g;
                p += M->n_b, g += M->n_b;
                for (size_t i = 0; i < M->n_b; i++) M->b[i] = (float)L->b[i * M->b_div];
            }
        }
        M->z = a;
        a += B * (size_t)L->n_out;
        if (lg_train_op_keep(&L->lin)) {
            M->nkeep = a;
            a += B * lg_train_op_keep(&L->lin);
        }
        lg_model_cols cv = {M, &a, B};
        lg_layer_terms_visit(L, lg_model_col_at, &cv);
        if (L->act == LG_ACT_IDENTITY) {
            M->a = M->z;
        } else {
            M->a = a;
            a += B * (size_t)L->n_out;
        }
        M->da = a;
        a += B * (size_t)L->n_out;
        if (lg_act_keep_count(L->act)) {
            M->keep = a;
            a += B * (size_t)L->n_out * lg_act_keep_count(L->act);
        }
        M->lambda = lg_act_has_param(L->act) ? L->lambda : 1.0;
    }
    for (int k = 0; k < nl; k++) {
        m->layers[k].s = p++;
        m->layers[k].ds = g++;
        const lg_layer *L = &net->layers[k];
        /* s: softplus kinds keep their raw s; a parameter learned as itself (prelu) is s */
        *m->layers[k].s = lg_model_softplus_param(L->act) ? (float)L->s : lg_act_has_param(L->act) ? (float)L->lambda : 0.0f;
        if (lg_act_has_param(L->act)) m->layers[k].lambda = L->lambda; /* swish β, prelu a too */
    }
    m->probs = a;
    a += B * (size_t)lg_net_n_out(net);
    m->d0 = a;
    a += B * (size_t)m->max_width;
    m->dx = a;
    a += B * (size_t)net->n_in;
    /* the nodes' plans, worked out once from their tables */
    size_t n_plan = 0;
    for (int k = 0; k < nl; k++) n_plan += lg_train_op_plan_len(&net->layers[k].lin);
    if (n_plan && !(m->plans = malloc(n_plan * sizeof *m->plans))) goto nomem;
    for (int k = 0, *pl = m->plans; k < nl; k++) {
        const lg_linear *A0 = &net->layers[k].lin;
        size_t q = lg_train_op_plan_len(A0);
        if (!q) continue;
        lg_train_op_of(A0->kind)->plan(A0, pl);
        m->layers[k].plan = pl;
        pl += q;
    }
    if (col) {
        m->dcol = a;
        a += col;
        m->zt = a;
    }
    return LG_OK;
nomem:
    lg_model_free(m);
    return lg_fail(LG_ERR_NOMEM, "cannot allocate the training model");
}

void lg_model_free(lg_model *m)
{
    free(m->layers);
    free(m->terms);
    free(m->maps);
    free(m->plans);
    free(m->in_sub);
    free(m->in_div);
    free(m->params);
    free(m->grads);
    free(m->mom1);
    free(m->mom2);
    free(m->acts);
    free(m->p_scale);
    memset(m, 0, sizeof *m);
}

void lg_model_gather(lg_model *m, const float *X, const uint32_t *idx, int B)
{
    size_t n = (size_t)m->n_in;
    for (int r = 0; r < B; r++) {
        const float *src = X + (size_t)idx[r] * n;
        float *dst = m->x + (size_t)r * n;
        memcpy(dst, src, n * sizeof *dst);
        if (m->in_sub)
            for (size_t i = 0; i < n; i++) dst[i] -= m->in_sub[i];
        if (m->in_div)
            for (size_t i = 0; i < n; i++) dst[i] *= m->in_div[i];
    }
}

/* Output columns ox whose input column ox·s − p + k lies in [0, w): [*lo, *hi). */
static void lg_conv_span(int w_out, int w_in, int s, int p, int k, int *lo, int *hi)
{
    int a = p - k > 0 ? (p - k + s - 1) / s : 0; /* first ox with ix ≥ 0 */
    int b = w_in - 1 + p - k;                     /* ix ≤ w_in − 1 ⇔ ox·s ≤ b */
    int e = b < 0 ? 0 : b / s + 1;
    *lo = a < w_out ? a : w_out;
    *hi = e < *lo ? *lo : e > w_out ? w_out : e;
}

/* col[K][B·hw] with K = c_in·kh·kw, row (ci, ky, kx), column (r, oy, ox):
 * in[r][ci][oy·sh − ph + ky][ox·sw − pw + kx], 0 in the padding. */
static void lg_im2col(const lg_conv *c, const float *in, int B, float *col)
{
    size_t hw = (size_t)c->h_out * (size_t)c->w_out, N = (size_t)B * hw, n_in = (size_t)c->c_in * c->h_in * c->w_in;
    for (int ci = 0; ci < c->c_in; ci++)
        for (int ky = 0; ky < c->kh; ky++)
            for (int kx = 0; kx < c->kw; kx++) {
                float *row = col + ((size_t)(ci * c->kh + ky) * (size_t)c->kw + (size_t)kx) * N;
                int lo, hi;
                lg_conv_span(c->w_out, c->w_in, c->sw, c->pw, kx, &lo, &hi);
                for (int r = 0; r < B; r++) {
                    const float *img = in + (size_t)r * n_in + (size_t)ci * c->h_in * c->w_in;
                    float *dst = row + (size_t)r * hw;
                    for (int oy = 0; oy < c->h_out; oy++) {
                        int iy = oy * c->sh - c->ph + ky;
                        float *d = dst + oy * c->w_out;
                        if (iy < 0 || iy >= c->h_in) {
                            memset(d, 0, (size_t)c->w_out * sizeof *d);
                            continue;
                        }
                        int base = iy * c->w_in - c->pw + kx; /* input index of ox = 0 (maybe outside) */
                        for (int ox = 0; ox < lo; ox++) d[ox] = 0.0f;
                        if (c->sw == 1 && hi > lo) memcpy(d + lo, img + base + lo, (size_t)(hi - lo) * sizeof *d);
                        else
                            for (int ox = lo; ox < hi; ox++) d[ox] = img[base + ox * c->sw];
                        for (int ox = hi; ox < c->w_out; ox++) d[ox] = 0.0f;
                    }
                }
            }
}

/* The adjoint of lg_im2col: din[r][ci][iy][ix] += Σ dcol over the entries that read it. */
static void lg_col2im(const lg_conv *c, const float *dcol, int B, float *din)
{
    size_t hw = (size_t)c->h_out * (size_t)c->w_out, N = (size_t)B * hw, n_in = (size_t)c->c_in * c->h_in * c->w_in;
    for (int ci = 0; ci < c->c_in; ci++)
        for (int ky = 0; ky < c->kh; ky++)
            for (int kx = 0; kx < c->kw; kx++) {
                const float *row = dcol + ((size_t)(ci * c->kh + ky) * (size_t)c->kw + (size_t)kx) * N;
                int lo, hi;
                lg_conv_span(c->w_out, c->w_in, c->sw, c->pw, kx, &lo, &hi);
                for (int r = 0; r < B; r++) {
                    float *img = din + (size_t)r * n_in + (size_t)ci * c->h_in * c->w_in;
                    const float *src = row + (size_t)r * hw;
                    for (int oy = 0; oy < c->h_out; oy++) {
                        int iy = oy * c->sh - c->ph + ky;
                        if (iy < 0 || iy >= c->h_in) continue;
                        int base = iy * c->w_in - c->pw + kx;
                        const float *s = src + oy * c->w_out;
                        for (int ox = lo; ox < hi; ox++) img[base + ox * c->sw] += s[ox];
                    }
                }
            }
}

/* [B][c_out][hw] ↔ [c_out][B·hw]: a conv map batch as rows and as the channel-major layout of its sgemm. */
static void lg_conv_to_cb(const lg_conv *c, const float *src, int B, float *dst)
{
    size_t hw = (size_t)c->h_out * (size_t)c->w_out, N = (size_t)B * hw, no = (size_t)c->c_out * hw;
    for (int r = 0; r < B; r++)
        for (int co = 0; co < c->c_out; co++)
            memcpy(dst + (size_t)co * N + (size_t)r * hw, src + (size_t)r * no + (size_t)co * hw, hw * sizeof *dst);
}

static void lg_conv_from_cb(const lg_conv *c, const float *src, int B, float *dst)
{
    size_t hw = (size_t)c->h_out * (size_t)c->w_out, N = (size_t)B * hw, no = (size_t)c->c_out * hw;
    for (int r = 0; r < B; r++)
        for (int co = 0; co < c->c_out; co++)
            memcpy(dst + (size_t)r * no + (size_t)co * hw, src + (size_t)co * N + (size_t)r * hw, hw * sizeof *dst);
}

/* y[B][n_out] (+)= in[B][n_in] gathered through the index map (0 where map[o] = −1). */
static void lg_index_forward(const lg_mterm *T, const float *in, int B, float *y, int accumulate)
{
    size_t no = (size_t)T->n_out, ni = (size_t)T->n_in;
    for (int r = 0; r < B; r++) {
        const float *x = in + (size_t)r * ni;
        float *d = y + (size_t)r * no;
        for (size_t o = 0; o < no; o++) {
            float v = T->map[o] >= 0 ? x[T->map[o]] : 0.0f;
            d[o] = accumulate ? d[o] + v : v;
        }
    }
}

/* gx[B][n_in] += the scatter of gy[B][n_out] (the index map's transpose). */
static void lg_index_backward(const lg_mterm *T, const float *gy, int B, float *gx)
{
    size_t no = (size_t)T->n_out, ni = (size_t)T->n_in;
    for (int r = 0; r < B; r++)
        for (size_t o = 0; o < no; o++)
            if (T->map[o] >= 0) gx[(size_t)r * ni + (size_t)T->map[o]] += gy[(size_t)r * no + o];
}

/* Forward of one conv term: T->col = im2col(in), then z[B][c_out][hw] = W·col + b (per channel; bias NULL:
 * z += W·col). */
static void lg_conv_forward_f(lg_model *m, lg_mterm *T, const float *bias, const float *in, int B, float *z)
{
    const lg_conv *c = &T->conv;
    int K = c->c_in * c->kh * c->kw;
    size_t hw = (size_t)c->h_out * (size_t)c->w_out, N = (size_t)B * hw;
    lg_im2col(c, in, B, T->col);
    lg_sgemm(0, 0, c->c_out, (int)N, K, 1.0f, T->W, K, T->col, (int)N, 0.0f, m->zt, (int)N);
    for (int r = 0; r < B; r++)
        for (int co = 0; co < c->c_out; co++) {
            const float *src = m->zt + (size_t)co * N + (size_t)r * hw;
            float *dst = z + (size_t)r * (size_t)T->n_out + (size_t)co * hw;
            if (bias)
                for (size_t p = 0; p < hw; p++) dst[p] = src[p] + bias[co];
            else
                for (size_t p = 0; p < hw; p++) dst[p] += src[p];
        }
}

/* Backward of one conv term (its forward's im2col still in T->col), with m->zt holding dz as
 * [c_out][B·hw]: dW += dZ·colᵀ and, da ≠ NULL, da[B][n_in] (+)= col2im(Wᵀ·dZ) (overwritten
 * unless accumulate). */
static void lg_conv_backward_f(lg_model *m, lg_mterm *T, float *da, int B, int accumulate)
{
    const lg_conv *c = &T->conv;
    int K = c->c_in * c->kh * c->kw;
    size_t N = (size_t)B * (size_t)c->h_out * (size_t)c->w_out;
    lg_sgemm(0, 1, c->c_out, K, (int)N, 1.0f, m->zt, (int)N, T->col, (int)N, 1.0f, T->dW, K);
    if (!da) return;
    lg_sgemm(1, 0, K, (int)N, c->c_out, 1.0f, T->W, K, m->zt, (int)N, 0.0f, m->dcol, (int)N);
    if (!accumulate) memset(da, 0, (size_t)B * (size_t)T->n_in * sizeof *da);
    lg_col2im(c, m->dcol, B, da);
}

/* A dense term, or a per-token map as the dense block over batch·tokens rows: 1 and the
 * shape of its one matrix product (rows × no ← rows × ni); 0 for the other kinds. */
static int lg_model_gemm_shape(const lg_mterm *T, int B, int *rows, int *no, int *ni)
{
    if (T->kind == LG_LAYER_DENSE) {
        *rows = B, *no = T->n_out, *ni = T->n_in;
        return 1;
    }
    if (T->kind == LG_LAYER_TOKMAP) {
        *rows = B * T->conv.h_out, *no = T->conv.c_out, *ni = T->conv.c_in;
        return 1;
    }
    return 0;
}

void lg_model_linear(lg_model *m, const lg_mterm *T, const float *W, const float *x, int B, float *y, int accumulate)
{
    int rows, no, ni;
    if (T->kind == LG_LAYER_INDEX) {
        lg_index_forward(T, x, B, y, accumulate);
        return;
    }
    if (lg_model_gemm_shape(T, B, &rows, &no, &ni)) {
        lg_sgemm(0, 1, rows, no, ni, 1.0f, x, ni, W, ni, accumulate ? 1.0f : 0.0f, y, no);
        return;
    }
    const lg_conv *c = &T->conv;
    int K = c->c_in * c->kh * c->kw, N = B * c->h_out * c->w_out;
    lg_im2col(c, x, B, m->dcol);
    lg_sgemm(0, 0, c->c_out, N, K, 1.0f, W, K, m->dcol, N, 0.0f, m->zt, N);
    if (!accumulate) {
        lg_conv_from_cb(c, m->zt, B, y);
        return;
    }
    size_t hw = (size_t)c->h_out * (size_t)c->w_out, nout = (size_t)T->n_out;
    for (int r = 0; r < B; r++)
        for (int co = 0; co < c->c_out; co++) {
            const float *src = m->zt + (size_t)co * (size_t)N + (size_t)r * hw;
            float *dst = y + (size_t)r * nout + (size_t)co * hw;
            for (size_t q = 0; q < hw; q++) dst[q] += src[q];
        }
}

void lg_model_linear_t(lg_model *m, const lg_mterm *T, const float *W, const float *gy, int B, float *gx,
                       int accumulate)
{
    if (T->kind == LG_LAYER_INDEX) {
        if (!accumulate) memset(gx, 0, (size_t)B * (size_t)T->n_in * sizeof *gx);
        lg_index_backward(T, gy, B, gx);
        return;
    }
    int rows, no, ni;
    if (lg_model_gemm_shape(T, B, &rows, &no, &ni)) {
        lg_sgemm(0, 0, rows, ni, no, 1.0f, gy, no, W, ni, accumulate ? 1.0f : 0.0f, gx, ni);
        return;
    }
    const lg_conv *c = &T->conv;
    int K = c->c_in * c->kh * c->kw, N = B * c->h_out * c->w_out;
    lg_conv_to_cb(c, gy, B, m->zt);
    lg_sgemm(1, 0, K, N, c->c_out, 1.0f, W, K, m->zt, N, 0.0f, m->dcol, N);
    if (!accumulate) memset(gx, 0, (size_t)B * (size_t)T->n_in * sizeof *gx);
    lg_col2im(c, m->dcol, B, gx);
}

void lg_model_linear_dw(lg_model *m, const lg_mterm *T, const float *gy, const float *x, int B, float *G)
{
    if (T->kind == LG_LAYER_INDEX) return;
    int rows, no, ni;
    if (lg_model_gemm_shape(T, B, &rows, &no, &ni)) {
        lg_sgemm(1, 0, no, ni, rows, 1.0f, gy, no, x, ni, 0.0f, G, ni);
        return;
    }
    const lg_conv *c = &T->conv;
    int K = c->c_in * c->kh * c->kw, N = B * c->h_out * c->w_out;
    lg_conv_to_cb(c, gy, B, m->zt);
    lg_im2col(c, x, B, m->dcol);
    lg_sgemm(0, 1, c->c_out, K, N, 1.0f, m->zt, N, m->dcol, N, 0.0f, G, K);
}

void lg_model_bias_add(const lg_mlayer *L, int B, float *y)
{
    size_t no = (size_t)L->n_out, nb = L->n_b, d = L->b_div;
    if (!nb) return;
    if (d == 1 && no % nb == 0) { /* per output, or per block row tiled over the tokens: runs of nb */
        for (size_t i = 0; i < (size_t)B * no; i += nb)
            for (size_t j = 0; j < nb; j++) y[i + j] += L->b[j];
        return;
    }
    for (int r = 0; r < B; r++)
        for (size_t j = 0; j < no; j++) y[(size_t)r * no + j] += L->b[lg_mlayer_bias_at(L, j)];
}

void lg_model_bias_grad(lg_mlayer *L, const float *gy, int B)
{
    size_t no = (size_t)L->n_out, nb = L->n_b, d = L->b_div;
    if (!nb) return;
    if (d == 1 && no % nb == 0) {
        for (size_t i = 0; i < (size_t)B * no; i += nb)
            for (size_t j = 0; j < nb; j++) L->db[j] += gy[i + j];
        return;
    }
    for (int r = 0; r < B; r++)
        for (size_t j = 0; j < no; j++) L->db[lg_mlayer_bias_at(L, j)] += gy[(size_t)r * no + j];
}

/* One term's forward into z[B][n_out]: with bias (term 0, whose bias it is: one per channel when
 * it is a conv) z = b + A·in, else z += A·in; a conv keeps its im2col in T->col for the backward. */
static void lg_model_term_forward(lg_model *m, lg_mterm *T, const float *bias, const float *in, int B, float *z)
{
    size_t no = (size_t)T->n_out;
    if (T->kind == LG_LAYER_CONV2D) {
        lg_conv_forward_f(m, T, bias, in, B, z);
        return;
    }
    if (T->kind == LG_LAYER_TOKMAP) { /* the block over batch·tokens, then the bias tied over the tokens */
        int o = T->conv.c_out;
        lg_model_linear(m, T, T->W, in, B, z, !bias);
        if (bias)
            for (size_t i = 0; i < (size_t)B * no; i += (size_t)o)
                for (int j = 0; j < o; j++) z[i + (size_t)j] += bias[j];
        return;
    }
    if (bias) /* z = b (broadcast), then the term added: in[B][n_in]·Wᵀ or the index map's gather */
        for (int r = 0; r < B; r++) memcpy(z + (size_t)r * no, bias, no * sizeof(float));
    lg_model_linear(m, T, T->W, in, B, z, 1);
}

/* The trainer's step at term t of a layer in the traversal's visit (core/traverse.h
 * lg_layer_terms_visit of the net's layer k): the float copy of that term is layer M's term t. */
typedef struct lg_model_at {
    lg_model *m;
    lg_mlayer *M;
    const float *dz; /* the backward's ∂L/∂z of M */
    unsigned char *set;
    int B;
} lg_model_at;

/* A node layer M's arrays for its training entry (A: the net's node term). */
static lg_tnode_io lg_model_node_io(lg_model *m, lg_mlayer *M, const lg_linear *A, int B)
{
    lg_tnode_io io = {A, B, lg_model_node(m, A->src), NULL, M->z, M->nkeep, NULL, NULL, M->plan};
    if (lg_op_is(A->kind, LG_OPF_TWO_SRC)) io.b = lg_model_node(m, A->op.src_b);
    if (M->n_w) io.W = M->W, io.dW = M->dW;
    return io;
}

static void lg_model_forward_at(void *ctx, int t, const lg_linear *A)
{
    (void)A;
    const lg_model_at *at = ctx;
    lg_mterm *T = lg_mlayer_term(at->M, t);
    lg_model_term_forward(at->m, T, t == 0 ? at->M->b : NULL, lg_model_node(at->m, T->src), at->B, at->M->z);
}

void lg_model_forward(lg_model *m, int B, const uint8_t *labels, double *loss, int *correct)
{
    for (int k = 0; k < m->n_layers; k++) {
        lg_mlayer *L = &m->layers[k];
        size_t no = (size_t)L->n_out;
        /* z[B][n_out] = b + Σ_t A_t·out(src_t) (DESIGN.md §1 "The network as a graph"): term 0 writes
         * z with the bias, the further terms add to it */
        const lg_layer *NL = &m->net->layers[k];
        if (L->op) { /* a node: its training entry (train/node.h) */
            lg_tnode_io io = lg_model_node_io(m, L, &NL->lin, B);
            L->op->forward(&io);
        } else {
            lg_model_at at = {m, L, NULL, NULL, B};
            lg_layer_terms_visit(NL, lg_model_forward_at, &at);
        }
        lg_act_forward_keep(L->a, L->keep, L->z, L->act, (float)L->lambda, (size_t)B * no);
    }
    /* probs = softmax(logits); loss = mean −log p[label] */
    const float *in = m->layers[m->n_layers - 1].a;
    int C = m->layers[m->n_layers - 1].n_out;
    double sum_loss = 0.0;
    int hits = 0;
    for (int r = 0; r < B; r++) {
        const float *lg = in + (size_t)r * (size_t)C;
        float *pr = m->probs + (size_t)r * (size_t)C;
        int best = 0;
        for (int j = 1; j < C; j++)
            if (lg[j] > lg[best]) best = j;
        float mx = lg[best];
        double z = 0.0;
        for (int j = 0; j < C; j++) {
            pr[j] = expf(lg[j] - mx);
            z += pr[j];
        }
        float inv = (float)(1.0 / z);
        for (int j = 0; j < C; j++) pr[j] *= inv;
        if (labels) {
            int y = labels[r] < C ? labels[r] : 0;
            sum_loss += log(z) + (double)mx - (double)lg[y];
            hits += best == labels[r];
        }
    }
    if (loss) *loss = B > 0 ? sum_loss / B : 0.0;
    if (correct) *correct = hits;
}

void lg_model_zero_grad(lg_model *m)
{
    memset(m->grads, 0, m->n_params * sizeof(float));
    for (int k = 0; k < m->n_layers; k++) m->layers[k].dlambda = 0.0f;
}

/* The slot of ∂L/∂out(src) for one consumer's backward: layers[src].da, or m->dx for the input
 * (NULL there when want_dx is 0, unless `always`: a node writes it as scratch). The first
 * consumer (in backward order) overwrites the slot, the others add to it: *acc says which, and
 * set[src + 1] records it. */
static float *lg_model_grad_slot(lg_model *m, int src, unsigned char *set, int always, int *acc)
{
    if (src < 0 && !m->want_dx && !always) {
        *acc = 0;
        return NULL;
    }
    *acc = set[src + 1];
    set[src + 1] = 1;
    return src < 0 ? m->dx : m->layers[src].da;
}

/* One term's backward with dz = ∂L/∂z of its layer: dW += dz ⊗ in; the term's share of ∂L/∂out(src)
 * into its slot (lg_model_grad_slot; nothing flows into the input unless want_dx). */
static void lg_model_term_backward(lg_model *m, lg_mterm *T, const float *dz, int B, unsigned char *set)
{
    int acc, rows, no, ni;
    float *da = lg_model_grad_slot(m, T->src, set, 0, &acc);
    if (T->kind == LG_LAYER_CONV2D) {
        lg_conv_to_cb(&T->conv, dz, B, m->zt);
        lg_conv_backward_f(m, T, da, B, acc);
    } else if (lg_model_gemm_shape(T, B, &rows, &no, &ni)) {
        /* dW[no][ni] += dzᵀ[no][rows] · in[rows][ni];  da[rows][ni] (+)= dz[rows][no] · W[no][ni]
         * (a per-token map: rows = batch·tokens) */
        lg_sgemm(1, 0, no, ni, rows, 1.0f, dz, no, lg_model_node(m, T->src), ni, 1.0f, T->dW, ni);
        if (da) lg_sgemm(0, 0, rows, ni, no, 1.0f, dz, no, T->W, ni, acc ? 1.0f : 0.0f, da, ni);
    } else if (da) {
        if (!acc) memset(da, 0, (size_t)B * (size_t)T->n_in * sizeof *da);
        lg_index_backward(T, dz, B, da);
    }
}

/* A node layer's backward through its training entry: the gradient slots of its sources (zeroed
 * by their first consumer) receive its share, its weights' gradients their sum. */
static void lg_model_node_backward(lg_model *m, lg_mlayer *M, const lg_linear *A, const float *dz, int B,
                                   unsigned char *set)
{
    lg_tnode_io io = lg_model_node_io(m, M, A, B);
    int acc;
    float *da = lg_model_grad_slot(m, A->src, set, 1, &acc), *db = da;
    if (!acc) memset(da, 0, (size_t)B * (size_t)A->n_in * sizeof *da);
    if (io.b) {
        db = lg_model_grad_slot(m, A->op.src_b, set, 1, &acc);
        if (!acc) memset(db, 0, (size_t)B * (size_t)A->op.n_in_b * sizeof *db);
    }
    M->op->backward(&io, dz, da, db);
}

static void lg_model_backward_at(void *ctx, int t, const lg_linear *A)
{
    (void)A;
    const lg_model_at *at = ctx;
    lg_model_term_backward(at->m, lg_mlayer_term(at->M, t), at->dz, at->B, at->set);
}

void lg_model_backward(lg_model *m, int B, const uint8_t *labels)
{
    int nl = m->n_layers;
    int C = m->layers[nl - 1].n_out;
    float *dz = m->d0;
    /* set[k + 1]: layers[k].da (set[0]: m->dx) holds a gradient (some consumer wrote it); a layer
     * nothing reads gets none */
    unsigned char set[LG_NET_MAX_LAYERS + 1];
    memset(set, 0, (size_t)nl + 1);
    /* dz_last[B][C] = (probs − onehot(label)) / B */
    float invB = 1.0f / (float)B;
    for (int r = 0; r < B; r++)
        for (int j = 0; j < C; j++) {
            size_t i = (size_t)r * (size_t)C + (size_t)j;
            dz[i] = (m->probs[i] - (labels[r] == j ? 1.0f : 0.0f)) * invB;
        }
    for (int k = nl - 1; k >= 0; k--) {
        lg_mlayer *L = &m->layers[k];
        if (k < nl - 1) {
            if (!set[k + 1]) continue;
            /* dz = act'(z) ⊙ da (and ∂L/∂λ), da summed over every consumer of layer k */
            size_t n = (size_t)B * (size_t)L->n_out;
            memset(dz, 0, n * sizeof(float));
            lg_act_backward_kept(dz, &L->dlambda, L->da, L->keep, L->z, L->act, (float)L->lambda, n);
        }
        if (L->op) { /* a node: its training entry (no bias) */
            lg_model_node_backward(m, L, &m->net->layers[k].lin, dz, B, set);
            continue;
        }
        /* db += Σ dz: one per channel when term 0 is a conv (summed in double), else per tied output */
        if (L->lin.kind == LG_LAYER_CONV2D) {
            size_t hw = (size_t)L->lin.conv.h_out * (size_t)L->lin.conv.w_out, no = (size_t)L->n_out;
            for (int co = 0; co < L->lin.conv.c_out; co++) {
                double s = 0.0;
                for (int r = 0; r < B; r++) {
                    const float *row = dz + (size_t)r * no + (size_t)co * hw;
                    for (size_t i = 0; i < hw; i++) s += row[i];
                }
                L->db[co] += (float)s;
            }
        } else {
            lg_model_bias_grad(L, dz, B);
        }
        /* every term's share, term 0 first (the order the sources' gradients are written, then added) */
        lg_model_at at = {m, L, dz, set, B};
        lg_layer_terms_visit(&m->net->layers[k], lg_model_backward_at, &at);
    }
    /* a learned parameter p (the table's has_param): ∂L/∂s = ∂L/∂p · σ(s/t)/t when
     * p = 1 + softplus(s/t) (lgelu λ, swish β), ∂L/∂s = ∂L/∂p when p = s (prelu a) */
    for (int k = 0; k < nl; k++) {
        lg_mlayer *L = &m->layers[k];
        const lg_act_info *ai = lg_act_info_of(L->act);
        if (L->lambda_fixed || !ai || !ai->has_param) continue;
        if (ai->softplus) {
            double u = (double)*L->s / m->t;
            *L->ds += (float)((double)L->dlambda / (1.0 + exp(-u)) / m->t);
        } else {
            *L->ds += L->dlambda;
        }
    }
}

void lg_model_sync_lambda(lg_model *m)
{
    for (int k = 0; k < m->n_layers; k++) {
        lg_mlayer *L = &m->layers[k];
        const lg_act_info *ai = lg_act_info_of(L->act);
        if (L->lambda_fixed || !ai || !ai->has_param) continue;
        L->lambda = ai->softplus ? lg_lambda_from_s((double)*L->s, m->t) : (double)*L->s;
    }
}

int lg_model_finite(const lg_model *m)
{
    for (size_t i = 0; i < m->n_params; i++)
        if (!isfinite(m->params[i])) return 0;
    return 1;
}

lg_status lg_model_to_net(const lg_model *m, lg_net *net)
{
    if (net->n_layers != m->n_layers || net->n_in != m->n_in)
        return lg_fail(LG_ERR_ARG, "network shape differs from the model (%d layers, %d inputs expected)",
                       m->n_layers, m->n_in);
    for (int k = 0; k < m->n_layers; k++) {
        const lg_layer *L = &net->layers[k];
        lg_mlayer *M = &m->layers[k];
        /* the layer's width here; every term's kind, width in and source in the loop below */
        if (L->n_out != M->n_out)
            return lg_fail(LG_ERR_ARG, "layer %d: network has %d outputs, model %d", k, L->n_out, M->n_out);
        if (L->n_terms != M->n_terms)
            return lg_fail(LG_ERR_ARG, "layer %d: network has %d terms, model %d", k, lg_layer_n_lin(L),
                           lg_mlayer_n_lin(M));
        for (int t = 0; t < lg_layer_n_lin(L); t++) {
            const lg_linear *A = lg_layer_lin(L, t);
            const lg_mterm *T = lg_mlayer_term(M, t);
            if (A->kind != T->kind || A->n_in != T->n_in || A->src != T->src || lg_linear_n_weights(A) != T->n_w)
                return lg_fail(LG_ERR_ARG, "layer %d, term %d: network and model differ in kind, source or shape", k,
                               t);
        }
    }
    if (!lg_model_finite(m)) return lg_fail(LG_ERR_NUMERIC, "model has non-finite parameters; nothing written");
    net->t = m->t;
    for (int k = 0; k < m->n_layers; k++) {
        lg_mlayer *M = &m->layers[k];
        lg_layer *L = &net->layers[k];
        for (int t = 0; t < lg_layer_n_lin(L); t++) {
            const lg_mterm *T = lg_mlayer_term(M, t);
            double *W = lg_layer_lin_mut(L, t)->W;
            for (size_t i = 0; i < T->n_w; i++) W[i] = (double)T->W[i];
        }
        if (M->n_b)
            for (int i = 0; i < M->n_out; i++) L->b[i] = (double)M->b[lg_mlayer_bias_at(M, (size_t)i)];
        L->act = M->act;
        if (lg_act_has_param(M->act) && !lg_model_softplus_param(M->act)) { /* p = s (prelu) */
            L->lambda = M->lambda_fixed ? M->lambda : (double)*M->s; /* float → double exact */
            L->s = L->lambda;
        } else if (!lg_model_softplus_param(M->act)) {
            L->lambda = 1.0;
            L->s = 0.0;
        } else if (!M->lambda_fixed) {
            L->s = (double)*M->s;
            L->lambda = lg_lambda_from_s(L->s, m->t);
        } else {
            L->lambda = M->lambda;
            /* λ = 1 exactly has s = −∞; store a finite s whose λ rounds to 1 */
            L->s = M->lambda > 1.0 + 1e-12 ? lg_s_from_lambda(M->lambda, m->t) : -50.0 * m->t;
        }
    }
    return LG_OK;
}

void lg_model_init_weights(lg_net *net, uint64_t seed) { lg_init_weights(net, seed, LG_INIT_HE); }
