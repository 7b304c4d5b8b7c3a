/* gen_tnet.c — random small Transformer-like networks (gen_tnet.h). */
#include "gen_tnet.h"

#include <math.h>
#include <string.h>

#include "core/op.h"

/* Per-token map [T·d] → [T·d2] with a random block M[d2][d]: as a per-token map
 * term, W = M (dense 0), or as its dense kron(I_T, M), W[(t,o)][(t,i)] = M[o][i]
 * and zero across tokens (dense 1). */
static void tnet_token_dense(lg_rng *r, double *W, int T, int d, int d2, double scale, int dense)
{
    double M[64 * 64];
    for (int o = 0; o < d2; o++)
        for (int i = 0; i < d; i++) M[o * d + i] = lg_rng_normal(r) * scale / sqrt((double)d);
    if (!dense) {
        memcpy(W, M, (size_t)d2 * (size_t)d * sizeof *W);
        return;
    }
    memset(W, 0, (size_t)T * (size_t)d2 * (size_t)T * (size_t)d * sizeof *W);
    for (int t = 0; t < T; t++)
        for (int o = 0; o < d2; o++)
            for (int i = 0; i < d; i++) W[((size_t)t * d2 + o) * ((size_t)T * d) + (size_t)t * d + i] = M[o * d + i];
}

lg_status lg_test_tnet_random(lg_net *net, lg_rng *r, const lg_test_tnet_opts *o)
{
    int h = o->heads ? o->heads : 1 + (int)lg_rng_below(r, 2);
    int T = o->tokens ? o->tokens : 2 + (int)lg_rng_below(r, 4);
    int d = o->width;
    if (!d) {
        do d = 2 + (int)lg_rng_below(r, 7);
        while (d % h != 0);
    }
    int n_out = o->n_out ? o->n_out : 2 + (int)lg_rng_below(r, 2);
    int dh = d / h, m = 2 + (int)lg_rng_below(r, 4), n = T * d;
    int ln2 = o->post_norm != 0, nl = 10 + ln2, lm = 8 + ln2; /* lm: the MLP's layer */
    lg_linear tm[12];
    memset(tm, 0, sizeof tm);
    lg_layer_spec sp[11];
    tm[0] = (lg_linear){.kind = LG_LAYER_LAYERNORM, .n_in = n, .src = LG_NET_INPUT, .op = {.group = d, .eps = 1e-5}};
    int dn = o->dense_maps;
#define TNET_MAP(s_, i_, o_) (dn ? (lg_linear){.kind = LG_LAYER_DENSE, .n_in = T * (i_), .src = (s_)} \
                              : lg_tokmap_term((s_), T, (i_), (o_)))
    for (int q = 1; q <= 3; q++) tm[q] = TNET_MAP(0, d, d);
    tm[4] = (lg_linear){.kind = LG_LAYER_BILINEAR, .n_in = n, .src = 1, .op = {.src_b = 2, .n_in_b = n, .K = dh}};
    tm[5] = (lg_linear){.kind = LG_LAYER_SOFTMAX, .n_in = h * T * T, .src = 4, .op = {.group = T}};
    tm[6] = (lg_linear){.kind = LG_LAYER_BILINEAR, .n_in = h * T * T, .src = 5, .op = {.src_b = 3, .n_in_b = n, .K = T}};
    tm[7] = TNET_MAP(6, d, d);
    tm[8] = (lg_linear){.kind = LG_LAYER_INDEX, .n_in = n, .src = LG_NET_INPUT};
    tm[9] = TNET_MAP(7 + ln2, d, m);
#undef TNET_MAP
    tm[10] = (lg_linear){.kind = LG_LAYER_DENSE, .n_in = T * m, .src = lm};
    tm[11] = (lg_linear){.kind = LG_LAYER_LAYERNORM, .n_in = n, .src = 7, .op = {.group = d, .eps = 1e-5}};
    int outs[11] = {n, n, n, n, h * T * T, h * T * T, n, n, T * m, n_out, 0};
    if (ln2) outs[10] = n_out, outs[9] = T * m, outs[8] = n;
    for (int k = 0; k < nl; k++)
        sp[k] = (lg_layer_spec){outs[k], LG_ACT_IDENTITY, 1, &tm[k < 8 ? k : ln2 && k == 8 ? 11 : k + 1 - ln2]};
    sp[7].n_terms = 2;
    sp[lm].act = LG_ACT_RELU;
    lg_status st = lg_net_build(net, n, nl, sp);
    if (st != LG_OK) return st;
    lg_layer *L = net->layers;
    for (int i = 0; i < d; i++) {
        L[0].lin.W[i] = 1.0 + 0.3 * lg_rng_normal(r);
        L[0].lin.W[d + i] = 0.2 * lg_rng_normal(r);
    }
    tnet_token_dense(r, L[1].lin.W, T, d, d, 1.0 / sqrt((double)dh), dn);
    tnet_token_dense(r, L[2].lin.W, T, d, d, 1.0, dn);
    tnet_token_dense(r, L[3].lin.W, T, d, d, 1.0, dn);
    for (int k = 1; k <= 3; k++)
        for (int i = 0; i < n; i++) L[k].b[i] = 0.1 * lg_rng_normal(r);
    for (int hh = 0, q = 0; hh < h; hh++) /* S[hh][i][j] */
        for (int i = 0; i < T; i++)
            for (int j = 0; j < T; j++, q++)
                for (int c = 0; c < dh; c++) {
                    L[4].lin.map[q * dh + c] = i * d + hh * dh + c;
                    L[4].lin.map[(size_t)h * T * T * dh + q * dh + c] = j * d + hh * dh + c;
                }
    for (int i = 0; i < T; i++) /* A[i][hh·dh+c] */
        for (int hh = 0; hh < h; hh++)
            for (int c = 0; c < dh; c++) {
                int q = i * d + hh * dh + c;
                for (int j = 0; j < T; j++) {
                    L[6].lin.map[q * T + j] = (hh * T + i) * T + j;
                    L[6].lin.map[(size_t)n * T + q * T + j] = j * d + hh * dh + c;
                }
            }
    tnet_token_dense(r, L[7].lin.W, T, d, d, 1.0, dn);
    for (int i = 0; i < n; i++) {
        L[7].terms[0].map[i] = i;
        L[7].b[i] = 0.1 * lg_rng_normal(r);
    }
    tnet_token_dense(r, L[lm].lin.W, T, d, m, 1.0, dn);
    for (int i = 0; i < T * m; i++) L[lm].b[i] = 0.3 * lg_rng_normal(r);
    for (int i = 0; i < n_out * T * m; i++) L[lm + 1].lin.W[i] = lg_rng_normal(r) / sqrt((double)(T * m));
    for (int i = 0; i < n_out; i++) L[lm + 1].b[i] = 0.3 * lg_rng_normal(r);
    if (ln2) /* the second layernorm's scale and shift, drawn last (the other draws as without it) */
        for (int i = 0; i < d; i++) {
            L[8].lin.W[i] = 1.0 + 0.3 * lg_rng_normal(r);
            L[8].lin.W[d + i] = 0.2 * lg_rng_normal(r);
        }
    return lg_net_validate(net);
}

void lg_test_tnet_shape(const lg_net *net, int *T, int *d, int *h)
{
    *d = net->layers[0].lin.op.group;
    *T = net->layers[5].lin.op.group;
    *h = *d / net->layers[4].lin.op.K;
}
