/* vit_net.c — a ViT as an lg_net of sum, product, softmax and layernorm
 * nodes (vit_net.h). */
#include "train/vit_net.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/act.h"
#include "train/layernorm.h"

/* Layers of the net: what each is, for filling after lg_net_build. */
enum { LG_VN_PATCH, LG_VN_TOKENS, LG_VN_LN, LG_VN_Q, LG_VN_K, LG_VN_V, LG_VN_S, LG_VN_P, LG_VN_O, LG_VN_XM, LG_VN_Z,
       LG_VN_X, LG_VN_HEAD };

typedef struct lg_vn {
    int n, n_terms;
    lg_layer_spec *sp;
    lg_linear *tm;
    int *what, *blk, *first;
    size_t *ln_off;
} lg_vn;

static int lg_vn_add(lg_vn *v, int n_out, lg_act act, int what, int blk, size_t ln_off, int nt, const lg_linear *t)
{
    int k = v->n++;
    v->first[k] = v->n_terms;
    for (int i = 0; i < nt; i++) {
        v->tm[v->n_terms] = t[i];
        v->tm[v->n_terms].n_out = n_out;
        v->n_terms++;
    }
    v->sp[k] = (lg_layer_spec){n_out, act, nt, NULL};
    v->what[k] = what, v->blk[k] = blk, v->ln_off[k] = ln_off;
    return k;
}

static lg_linear lg_vn_dense(int src, int n_in)
{
    return (lg_linear){.kind = LG_LAYER_DENSE, .n_in = n_in, .src = src};
}
static lg_linear lg_vn_index(int src, int n_in)
{
    return (lg_linear){.kind = LG_LAYER_INDEX, .n_in = n_in, .src = src};
}

/* W[T·o][T·i] = kron(I_T, A[o][i])·scale, b[T·o] = tiled bias·scale. */
static void lg_vn_kron(double *W, double *b, const float *A, const float *bias, int T, int i, int o, double scale)
{
    memset(W, 0, (size_t)T * o * (size_t)T * i * sizeof *W);
    for (int t = 0; t < T; t++)
        for (int r = 0; r < o; r++) {
            for (int c = 0; c < i; c++)
                W[((size_t)t * o + r) * ((size_t)T * i) + (size_t)t * i + c] = A[(size_t)r * i + c] * scale;
            b[(size_t)t * o + r] = bias[r] * scale;
        }
}

lg_status lg_vit_to_net(const lg_vit *m, lg_net *net)
{
    memset(net, 0, sizeof *net);
    const lg_vit_spec *s = &m->spec;
    int D = m->D, M = m->M, T = m->T, NH = s->heads, dh = D / NH, L = s->depth, off = s->cls, TD = T * D;
    int cap = 4 + 12 * L;
    lg_vn v = {0};
    v.sp = calloc((size_t)cap, sizeof *v.sp);
    v.tm = calloc((size_t)cap * 2, sizeof *v.tm);
    v.what = calloc((size_t)cap, sizeof *v.what);
    v.blk = calloc((size_t)cap, sizeof *v.blk);
    v.first = calloc((size_t)cap, sizeof *v.first);
    v.ln_off = calloc((size_t)cap, sizeof *v.ln_off);
    lg_status st = LG_OK;
    if (!v.sp || !v.tm || !v.what || !v.blk || !v.first || !v.ln_off) {
        st = lg_fail(LG_ERR_NOMEM, "cannot allocate the ViT's graph");
        goto done;
    }
    const lg_conv cv = {s->C,     s->H,     s->W,     D, s->H / s->patch, s->W / s->patch,
                        s->patch, s->patch, s->patch, s->patch, 0, 0};
    lg_linear t1 = {.kind = LG_LAYER_CONV2D, .n_in = s->C * s->H * s->W, .conv = cv, .src = LG_NET_INPUT};
    int x = lg_vn_add(&v, D * m->NP, LG_ACT_IDENTITY, LG_VN_PATCH, -1, 0, 1, &t1);
    t1 = lg_vn_index(x, D * m->NP);
    x = lg_vn_add(&v, TD, LG_ACT_IDENTITY, LG_VN_TOKENS, -1, 0, 1, &t1);
    for (int l = 0; l < L; l++) {
        const size_t *bo = m->blk[l];
        lg_linear ln = {.kind = LG_LAYER_LAYERNORM, .n_in = TD, .src = x, .op = {.group = D, .eps = (double)LG_LN_EPS}};
        int y = lg_vn_add(&v, TD, LG_ACT_IDENTITY, LG_VN_LN, l, bo[LG_VB_G1], 1, &ln);
        lg_linear d = lg_vn_dense(y, TD);
        int q = lg_vn_add(&v, TD, LG_ACT_IDENTITY, LG_VN_Q, l, 0, 1, &d);
        int k = lg_vn_add(&v, TD, LG_ACT_IDENTITY, LG_VN_K, l, 0, 1, &d);
        int vv = lg_vn_add(&v, TD, LG_ACT_IDENTITY, LG_VN_V, l, 0, 1, &d);
        lg_linear pr = {.kind = LG_LAYER_BILINEAR, .n_in = TD, .src = q, .op = {.src_b = k, .n_in_b = TD, .K = dh}};
        int sc = lg_vn_add(&v, NH * T * T, LG_ACT_IDENTITY, LG_VN_S, l, 0, 1, &pr);
        lg_linear sm = {.kind = LG_LAYER_SOFTMAX, .n_in = NH * T * T, .src = sc, .op = {.group = T}};
        int p = lg_vn_add(&v, NH * T * T, LG_ACT_IDENTITY, LG_VN_P, l, 0, 1, &sm);
        pr = (lg_linear){.kind = LG_LAYER_BILINEAR, .n_in = NH * T * T, .src = p,
                         .op = {.src_b = vv, .n_in_b = TD, .K = T}};
        int o = lg_vn_add(&v, TD, LG_ACT_IDENTITY, LG_VN_O, l, 0, 1, &pr);
        lg_linear two[2] = {lg_vn_dense(o, TD), lg_vn_index(x, TD)};
        int xm = lg_vn_add(&v, TD, LG_ACT_IDENTITY, LG_VN_XM, l, 0, 2, two);
        ln.src = xm;
        y = lg_vn_add(&v, TD, LG_ACT_IDENTITY, LG_VN_LN, l, bo[LG_VB_G2], 1, &ln);
        d = lg_vn_dense(y, TD);
        int z = lg_vn_add(&v, T * M, m->act, LG_VN_Z, l, 0, 1, &d);
        two[0] = lg_vn_dense(z, T * M), two[1] = lg_vn_index(xm, TD);
        x = lg_vn_add(&v, TD, LG_ACT_IDENTITY, LG_VN_X, l, 0, 2, two);
    }
    lg_linear ln = {.kind = LG_LAYER_LAYERNORM, .n_in = TD, .src = x, .op = {.group = D, .eps = (double)LG_LN_EPS}};
    int y = lg_vn_add(&v, TD, LG_ACT_IDENTITY, LG_VN_LN, -1, m->glob[LG_VG_GF], 1, &ln);
    lg_linear d = lg_vn_dense(y, TD);
    lg_vn_add(&v, s->n_out, LG_ACT_IDENTITY, LG_VN_HEAD, -1, 0, 1, &d);
    for (int k = 0; k < v.n; k++) v.sp[k].terms = v.tm + v.first[k];
    if ((st = lg_net_build(net, s->C * s->H * s->W, v.n, v.sp)) != LG_OK) goto done;
    const float *P = m->params;
    const lg_act_info *ai = lg_act_info_of(m->act);
    for (int k = 0; k < v.n; k++) {
        lg_layer *Lk = &net->layers[k];
        lg_linear *A = lg_layer_lin_mut(Lk, 0);
        int l = v.blk[k];
        const size_t *bo = l >= 0 ? m->blk[l] : NULL;
        switch (v.what[k]) {
        case LG_VN_PATCH: /* conv weights [D][C][P][P] = W_p[d][c·P² + dy·P + dx]; bias per output position */
            for (size_t i = 0; i < (size_t)D * m->PL; i++) A->W[i] = P[m->glob[LG_VG_WP] + i];
            for (int c = 0; c < D; c++)
                for (int q = 0; q < m->NP; q++) Lk->b[(size_t)c * m->NP + q] = P[m->glob[LG_VG_BP] + (size_t)c];
            break;
        case LG_VN_TOKENS: /* token t, feature c: patch t − off of channel c; class token and position in the bias */
            for (int t = 0; t < T; t++)
                for (int c = 0; c < D; c++) {
                    A->map[t * D + c] = t < off ? -1 : c * m->NP + (t - off);
                    Lk->b[t * D + c] = (double)P[m->glob[LG_VG_POS] + (size_t)(t * D + c)] +
                                       (t < off ? (double)P[m->glob[LG_VG_CLS] + (size_t)c] : 0.0);
                }
            break;
        case LG_VN_LN:
            for (int j = 0; j < D; j++) {
                A->W[j] = P[v.ln_off[k] + (size_t)j];
                A->W[D + j] = P[v.ln_off[k] + (size_t)(D + j)]; /* β follows γ in both layouts */
            }
            break;
        case LG_VN_Q:
            lg_vn_kron(A->W, Lk->b, P + bo[LG_VB_WQ], P + bo[LG_VB_BQ], T, D, D, 1.0 / sqrt((double)dh));
            break;
        case LG_VN_K: lg_vn_kron(A->W, Lk->b, P + bo[LG_VB_WK], P + bo[LG_VB_BK], T, D, D, 1.0); break;
        case LG_VN_V: lg_vn_kron(A->W, Lk->b, P + bo[LG_VB_WV], P + bo[LG_VB_BV], T, D, D, 1.0); break;
        case LG_VN_S: /* out[(h, i, j)] = Σ_c Q[i][h·dh + c]·K[j][h·dh + c] */
            for (int h = 0; h < NH; h++)
                for (int i = 0; i < T; i++)
                    for (int j = 0; j < T; j++)
                        for (int c = 0; c < dh; c++) {
                            size_t e = ((size_t)(h * T + i) * T + j) * dh + c;
                            A->map[e] = i * D + h * dh + c;
                            A->map[(size_t)NH * T * T * dh + e] = j * D + h * dh + c;
                        }
            break;
        case LG_VN_O: /* out[i][h·dh + c] = Σ_j P[(h, i, j)]·V[j][h·dh + c] */
            for (int i = 0; i < T; i++)
                for (int h = 0; h < NH; h++)
                    for (int c = 0; c < dh; c++)
                        for (int j = 0; j < T; j++) {
                            size_t e = ((size_t)i * D + h * dh + c) * T + j;
                            A->map[e] = (h * T + i) * T + j;
                            A->map[(size_t)TD * T + e] = j * D + h * dh + c;
                        }
            break;
        case LG_VN_XM:
        case LG_VN_X: {
            int z = v.what[k] == LG_VN_X;
            lg_vn_kron(A->W, Lk->b, P + bo[z ? LG_VB_W2 : LG_VB_WO], P + bo[z ? LG_VB_B2 : LG_VB_BO], T, z ? M : D, D,
                       1.0);
            lg_linear *S = lg_layer_lin_mut(Lk, 1);
            for (int i = 0; i < TD; i++) S->map[i] = i;
            break;
        }
        case LG_VN_Z:
            lg_vn_kron(A->W, Lk->b, P + bo[LG_VB_W1], P + bo[LG_VB_B1], T, D, M, 1.0);
            if (ai && ai->has_param) {
                Lk->lambda = (double)P[bo[LG_VB_ACT]];
                Lk->s = ai->softplus ? lg_s_from_lambda(Lk->lambda, net->t) : Lk->lambda;
            }
            break;
        case LG_VN_HEAD:
            memset(A->W, 0, (size_t)s->n_out * TD * sizeof *A->W);
            for (int j = 0; j < s->n_out; j++) {
                for (int c = 0; c < D; c++) {
                    double w = P[m->glob[LG_VG_WH] + (size_t)(j * D + c)];
                    if (off) A->W[(size_t)j * TD + c] = w;
                    else
                        for (int t = 0; t < T; t++) A->W[(size_t)j * TD + (size_t)t * D + c] = w / T;
                }
                Lk->b[j] = P[m->glob[LG_VG_BH] + (size_t)j];
            }
            break;
        }
    }
    st = lg_net_validate(net);
    if (st != LG_OK) lg_net_free(net);
done:
    free(v.sp), free(v.tm), free(v.what), free(v.blk), free(v.first), free(v.ln_off);
    return st;
}
