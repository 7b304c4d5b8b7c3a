/* vit_net.c — a ViT as an lg_net of sum, product, softmax and layernorm
 * nodes (vit_net.h). */
#include "train/vit_net.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/act.h"
#include "core/op.h"
#include "train/layernorm.h"

/* Layers of the net: what each is, for filling after lg_net_build. */
enum { LG_VN_PATCH, LG_VN_TOKENS, LG_VN_LN, LG_VN_Q, LG_VN_K, LG_VN_V, LG_VN_S, LG_VN_P, LG_VN_O, LG_VN_XM, LG_VN_Z,
       LG_VN_X, LG_VN_HEAD, LG_VN_POOL };

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

/* A per-token map's block W[o][i] = A[o][i]·scale (core/net.h LG_LAYER_TOKMAP) and
 * its layer's bias b[T·o] = the bias tiled over the tokens, times scale. */
static void lg_vn_block(double *W, double *b, const float *A, const float *bias, int T, int i, int o, double scale)
{
    for (int r = 0; r < o; r++)
        for (int c = 0; c < i; c++) W[(size_t)r * i + c] = A[(size_t)r * i + c] * scale;
    for (int t = 0; t < T; t++)
        for (int r = 0; r < o; r++) b[(size_t)t * o + r] = bias[r] * scale;
}

/* The net of m with the head of the given form (vit_net.h): 0 the per-token head and its gather or
 * sum, 1 the earlier dense head over every token's values. */
static lg_status lg_vit_to_net_form(const lg_vit *m, lg_net *net, int dense_head)
{
    memset(net, 0, sizeof *net);
    const lg_vit_spec *s = &m->spec;
    int D = m->D, M = m->M, T = m->T, NH = s->heads, dh = D / NH, L = s->depth, off = s->cls, TD = T * D;
    int cap = 5 + 12 * L;
    lg_vn v = {0};
    v.sp = calloc((size_t)cap, sizeof *v.sp);
    v.tm = calloc((size_t)cap * 2 + (size_t)T, sizeof *v.tm);
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
        lg_linear d = lg_tokmap_term(y, T, D, D);
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
        lg_linear two[2] = {lg_tokmap_term(o, T, D, D), lg_vn_index(x, TD)};
        int xm = lg_vn_add(&v, TD, LG_ACT_IDENTITY, LG_VN_XM, l, 0, 2, two);
        ln.src = xm;
        y = lg_vn_add(&v, TD, LG_ACT_IDENTITY, LG_VN_LN, l, bo[LG_VB_G2], 1, &ln);
        d = lg_tokmap_term(y, T, D, M);
        int z = lg_vn_add(&v, T * M, m->act, LG_VN_Z, l, 0, 1, &d);
        two[0] = lg_tokmap_term(z, T, M, D), two[1] = lg_vn_index(xm, TD);
        x = lg_vn_add(&v, TD, LG_ACT_IDENTITY, LG_VN_X, l, 0, 2, two);
    }
    lg_linear ln = {.kind = LG_LAYER_LAYERNORM, .n_in = TD, .src = x, .op = {.group = D, .eps = (double)LG_LN_EPS}};
    int y = lg_vn_add(&v, TD, LG_ACT_IDENTITY, LG_VN_LN, -1, m->glob[LG_VG_GF], 1, &ln);
    if (dense_head) {
        lg_linear d = lg_vn_dense(y, TD);
        lg_vn_add(&v, s->n_out, LG_ACT_IDENTITY, LG_VN_HEAD, -1, 0, 1, &d);
    } else { /* the head on every token, then the class token's logits (or the sum over the tokens) */
        lg_linear d = lg_tokmap_term(y, T, D, s->n_out);
        int h = lg_vn_add(&v, T * s->n_out, LG_ACT_IDENTITY, LG_VN_HEAD, -1, 0, 1, &d);
        int ng = off ? 1 : T;
        lg_linear *g = malloc((size_t)ng * sizeof *g);
        if (!g) {
            st = lg_fail(LG_ERR_NOMEM, "cannot allocate the ViT's graph");
            goto done;
        }
        for (int t = 0; t < ng; t++) g[t] = lg_vn_index(h, T * s->n_out);
        lg_vn_add(&v, s->n_out, LG_ACT_IDENTITY, LG_VN_POOL, -1, 0, ng, g);
        free(g);
    }
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
            lg_vn_block(A->W, Lk->b, P + bo[LG_VB_WQ], P + bo[LG_VB_BQ], T, D, D, 1.0 / sqrt((double)dh));
            break;
        case LG_VN_K: lg_vn_block(A->W, Lk->b, P + bo[LG_VB_WK], P + bo[LG_VB_BK], T, D, D, 1.0); break;
        case LG_VN_V: lg_vn_block(A->W, Lk->b, P + bo[LG_VB_WV], P + bo[LG_VB_BV], T, D, D, 1.0); break;
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
            lg_vn_block(A->W, Lk->b, P + bo[z ? LG_VB_W2 : LG_VB_WO], P + bo[z ? LG_VB_B2 : LG_VB_BO], T, z ? M : D, D,
                       1.0);
            lg_linear *S = lg_layer_lin_mut(Lk, 1);
            for (int i = 0; i < TD; i++) S->map[i] = i;
            break;
        }
        case LG_VN_Z:
            lg_vn_block(A->W, Lk->b, P + bo[LG_VB_W1], P + bo[LG_VB_B1], T, D, M, 1.0);
            if (ai && ai->has_param) {
                Lk->lambda = (double)P[bo[LG_VB_ACT]];
                Lk->s = ai->softplus ? lg_s_from_lambda(Lk->lambda, net->t) : Lk->lambda;
                if (ai->softplus && !(Lk->s > -50.0 * net->t)) Lk->s = -50.0 * net->t; /* λ = 1 (a gelu made lgelu) */
            }
            break;
        case LG_VN_HEAD:
            if (!dense_head) { /* block W_h (over T for mean pooling), bias b_h likewise, tiled */
                double sc = off ? 1.0 : 1.0 / T;
                for (int j = 0; j < s->n_out; j++) {
                    for (int c = 0; c < D; c++)
                        A->W[(size_t)j * D + c] = P[m->glob[LG_VG_WH] + (size_t)(j * D + c)] * sc;
                    for (int t = 0; t < T; t++) Lk->b[(size_t)t * s->n_out + j] = P[m->glob[LG_VG_BH] + (size_t)j] * sc;
                }
                break;
            }
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
        case LG_VN_POOL: /* term t reads token t's logits (the class token's alone with one); bias 0 */
            for (int t = 0; t <= Lk->n_terms; t++) {
                lg_linear *G = lg_layer_lin_mut(Lk, t);
                for (int j = 0; j < s->n_out; j++) G->map[j] = t * s->n_out + j;
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

lg_status lg_vit_to_net(const lg_vit *m, lg_net *net) { return lg_vit_to_net_form(m, net, 0); }

int lg_net_has_tnode(const lg_net *net)
{
    for (int k = 0; k < net->n_layers; k++)
        for (int t = 0; t <= net->layers[k].n_terms; t++)
            if (lg_kind_is_tnode(lg_layer_lin(&net->layers[k], t)->kind)) return 1;
    return 0;
}

#define LG_VN_FORM "the form `lgelu train --arch CxHxW,vit:...` writes"

/* The spec of the ViT whose net is n, from its first layers' shapes. */
static lg_status lg_vn_spec(const lg_net *n, lg_vit_spec *s, lg_act *act, int *dense_head, const char *name)
{
    memset(s, 0, sizeof *s);
    int nl = n->n_layers, head = (nl - 4) % LG_VIT_NET_PER_BLOCK == 0 ? 4 : 5; /* the dense head's form: 4 */
    *dense_head = head == 4;
    if (nl < head + LG_VIT_NET_PER_BLOCK || (nl - head) % LG_VIT_NET_PER_BLOCK)
        return lg_fail(LG_ERR_ARG, "%s: %d layers is not 4 or 5 + %d per encoder block (not a ViT of %s)", name,
                       nl, LG_VIT_NET_PER_BLOCK, LG_VN_FORM);
    const lg_layer *L0 = &n->layers[0];
    const lg_conv *c = &L0->lin.conv;
    if (L0->lin.kind != LG_LAYER_CONV2D || L0->lin.src != LG_NET_INPUT || L0->n_terms || c->kh != c->kw || c->sh != c->kh ||
        c->sw != c->kw || c->ph || c->pw || c->h_in % c->kh || c->w_in % c->kw)
        return lg_fail(LG_ERR_ARG, "%s: layer 0 is not a patch embedding (a conv of the input with kernel = stride, "
                                   "no padding; not a ViT of %s)", name, LG_VN_FORM);
    s->C = c->c_in, s->H = c->h_in, s->W = c->w_in, s->patch = c->kh, s->dim = c->c_out;
    int np = c->h_out * c->w_out;
    const lg_layer *L1 = &n->layers[1], *Ls = &n->layers[2 + 4], *Lz = &n->layers[2 + 9];
    int T = L1->n_out / s->dim;
    if (L1->lin.kind != LG_LAYER_INDEX || L1->n_out % s->dim || (T != np && T != np + 1))
        return lg_fail(LG_ERR_ARG, "%s: layer 1 is not the %d or %d tokens of width %d (not a ViT of %s)", name, np,
                       np + 1, s->dim, LG_VN_FORM);
    s->cls = T - np;
    if (!lg_layer_is(Ls, LG_OPF_TWO_SRC) || Ls->lin.op.K < 1 || s->dim % Ls->lin.op.K) /* the product of two nodes */
        return lg_fail(LG_ERR_ARG, "%s: layer 6 is not the product Q·Kᵀ of the first block (not a ViT of %s)", name,
                       LG_VN_FORM);
    s->heads = s->dim / Ls->lin.op.K;
    if (Lz->n_out % T || Lz->n_out < T)
        return lg_fail(LG_ERR_ARG, "%s: layer 11 is not the first MLP layer (width a multiple of %d tokens; not a ViT "
                                   "of %s)", name, T, LG_VN_FORM);
    s->mlp = Lz->n_out / T;
    s->depth = (nl - head) / LG_VIT_NET_PER_BLOCK;
    s->n_out = n->layers[n->n_layers - 1].n_out;
    if (s->depth > 64) return lg_fail(LG_ERR_ARG, "%s: %d encoder blocks, at most 64", name, s->depth);
    *act = Lz->act;
    return LG_OK;
}

/* 1 if a and b are the same real number up to the float rounding of the ViT's parameters. */
static int lg_vn_close(double a, double b) { return fabs(a - b) <= 1e-6 * (1.0 + fabs(a)); }

/* Compare net a with the rebuilt b: shapes, kinds, sources, maps, node
 * parameters exactly; with values also W, b and the activation parameter. */
static lg_status lg_vn_compare(const lg_net *a, const lg_net *b, int values, int fold, const char *name)
{
    if (a->n_in != b->n_in || a->n_layers != b->n_layers)
        return lg_fail(LG_ERR_ARG, "%s: not a ViT of %s (input or layer count)", name, LG_VN_FORM);
    if (a->in_sub || a->in_div)
        return lg_fail(LG_ERR_ARG, "%s: has an input normalisation, which a ViT of %s does not", name, LG_VN_FORM);
    for (int k = 0; k < a->n_layers; k++) {
        const lg_layer *x = &a->layers[k], *y = &b->layers[k];
        const char *why = NULL;
        if (x->n_out != y->n_out) why = "width";
        else if (x->n_terms != y->n_terms) why = "number of terms";
        else if (x->act != y->act) why = "activation";
        for (int t = 0; !why && t <= x->n_terms; t++) {
            const lg_linear *p = lg_layer_lin(x, t), *q = lg_layer_lin(y, t);
            if (p->kind != q->kind || p->n_in != q->n_in || p->src != q->src) why = "operator kind, width or source";
            else if (memcmp(&p->conv, &q->conv, sizeof p->conv)) why = "conv geometry";
            else if (p->op.src_b != q->op.src_b || p->op.n_in_b != q->op.n_in_b || p->op.K != q->op.K ||
                     p->op.group != q->op.group || p->op.eps != q->op.eps)
                why = "node parameters";
            else if (lg_linear_n_map(p) && memcmp(p->map, q->map, lg_linear_n_map(p) * sizeof *p->map))
                why = lg_op_is(p->kind, LG_OPF_NODE) ? "node's index tables" : "index map";
            else if (values) {
                size_t nw = lg_linear_n_weights(p);
                for (size_t i = 0; i < nw && !why; i++)
                    if (!lg_vn_close(p->W[i], q->W[i])) why = "weights (not of the ViT's shared per-token form)";
            }
        }
        if (!why && values && fold && k >= a->n_layers - 2) { /* the head's two biases: by their sum */
            const lg_layer *xh = &a->layers[a->n_layers - 2], *yh = &b->layers[b->n_layers - 2];
            const lg_layer *xo = &a->layers[a->n_layers - 1], *yo = &b->layers[b->n_layers - 1];
            double w = xo->n_terms ? (double)(xo->n_terms + 1) : 1.0; /* summed over the tokens: T */
            for (int i = 0; i < xh->n_out && !why; i++) {
                int j = i % xo->n_out;
                if (!lg_vn_close(w * xh->b[i] + xo->b[j], w * yh->b[i] + yo->b[j]))
                    why = "head bias (not of the ViT's shared per-token form)";
            }
        } else if (!why && values) {
            for (int i = 0; i < x->n_out && !why; i++)
                if (!lg_vn_close(x->b[i], y->b[i])) why = "bias (not of the ViT's shared per-token form)";
            if (!why && lg_act_has_param(x->act) && !lg_vn_close(x->lambda, y->lambda)) why = "activation parameter";
        }
        if (why)
            return lg_fail(LG_ERR_ARG, "%s: layer %d differs from a ViT of %s in its %s", name, k, LG_VN_FORM, why);
    }
    return LG_OK;
}

/* The float parameters of m read from net (whose shapes match m's). */
static void lg_vn_read(lg_vit *m, const lg_net *net, int dense_head)
{
    const lg_vit_spec *s = &m->spec;
    int D = m->D, M = m->M, T = m->T, NH = s->heads, dh = D / NH, off = s->cls, TD = T * D;
    float *P = m->params;
    const lg_layer *Lp = &net->layers[0], *Lt = &net->layers[1];
    for (size_t i = 0; i < (size_t)D * m->PL; i++) P[m->glob[LG_VG_WP] + i] = (float)Lp->lin.W[i];
    for (int c = 0; c < D; c++) P[m->glob[LG_VG_BP] + (size_t)c] = (float)Lp->b[(size_t)c * m->NP];
    for (int t = 0; t < T; t++)
        for (int c = 0; c < D; c++) {
            double b = Lt->b[t * D + c];
            float cls = t < off ? (float)b : 0.0f;
            if (t < off) P[m->glob[LG_VG_CLS] + (size_t)c] = cls;
            P[m->glob[LG_VG_POS] + (size_t)(t * D + c)] = (float)(b - (double)cls);
        }
    /* a per-token map's block (core/net.h LG_LAYER_TOKMAP) and its bias, scaled back */
#define LG_VN_BLOCK(k, Woff, boff, i, o, scale)                                                              \
    do {                                                                                                  \
        const lg_layer *Lk_ = &net->layers[k];                                                            \
        for (int r_ = 0; r_ < (o); r_++) {                                                                \
            for (int c_ = 0; c_ < (i); c_++)                                                              \
                P[(Woff) + (size_t)r_ * (i) + c_] = (float)(Lk_->lin.W[(size_t)r_ * (i) + c_] / (scale));                \
            P[(boff) + (size_t)r_] = (float)(Lk_->b[r_] / (scale));                                       \
        }                                                                                                 \
    } while (0)
    for (int l = 0; l < s->depth; l++) {
        const size_t *bo = m->blk[l];
        int k0 = 2 + LG_VIT_NET_PER_BLOCK * l;
        const double *g1 = net->layers[k0].lin.W, *g2 = net->layers[k0 + 8].lin.W;
        for (int j = 0; j < 2 * D; j++) { /* γ then β, in both layouts */
            P[bo[LG_VB_G1] + (size_t)j] = (float)g1[j];
            P[bo[LG_VB_G2] + (size_t)j] = (float)g2[j];
        }
        LG_VN_BLOCK(k0 + 1, bo[LG_VB_WQ], bo[LG_VB_BQ], D, D, 1.0 / sqrt((double)dh));
        LG_VN_BLOCK(k0 + 2, bo[LG_VB_WK], bo[LG_VB_BK], D, D, 1.0);
        LG_VN_BLOCK(k0 + 3, bo[LG_VB_WV], bo[LG_VB_BV], D, D, 1.0);
        LG_VN_BLOCK(k0 + 7, bo[LG_VB_WO], bo[LG_VB_BO], D, D, 1.0);
        LG_VN_BLOCK(k0 + 9, bo[LG_VB_W1], bo[LG_VB_B1], D, M, 1.0);
        LG_VN_BLOCK(k0 + 10, bo[LG_VB_W2], bo[LG_VB_B2], M, D, 1.0);
        const lg_act_info *ai = lg_act_info_of(m->act);
        if (ai && ai->has_param) P[bo[LG_VB_ACT]] = (float)net->layers[k0 + 9].lambda;
    }
#undef LG_VN_BLOCK
    int kf = 2 + LG_VIT_NET_PER_BLOCK * s->depth;
    for (int j = 0; j < 2 * D; j++) P[m->glob[LG_VG_GF] + (size_t)j] = (float)net->layers[kf].lin.W[j];
    const lg_layer *Lh = &net->layers[kf + 1], *Lo = dense_head ? NULL : &net->layers[kf + 2];
    double w = off ? 1.0 : (double)T;
    for (int j = 0; j < s->n_out; j++) {
        for (int c = 0; c < D; c++)
            P[m->glob[LG_VG_WH] + (size_t)(j * D + c)] =
                (float)(Lh->lin.W[(size_t)j * (dense_head ? TD : D) + c] * w);
        P[m->glob[LG_VG_BH] + (size_t)j] = (float)(Lo ? w * Lh->b[j] + Lo->b[j] : Lh->b[j]);
    }
}

lg_status lg_net_to_vit(const lg_net *net, lg_vit *m, int max_batch, const char *name)
{
    memset(m, 0, sizeof *m);
    lg_vit_spec s;
    lg_act act = LG_ACT_IDENTITY;
    int dense_head = 0;
    lg_status st = lg_vn_spec(net, &s, &act, &dense_head, name);
    if (st != LG_OK) return st;
    if (!lg_act_name(act) || act == LG_ACT_IDENTITY)
        return lg_fail(LG_ERR_ARG, "%s: layer 11 (the first MLP layer) has no hidden activation (not a ViT of %s)",
                       name, LG_VN_FORM);
    if ((st = lg_vit_init(m, &s, act, max_batch)) != LG_OK) return st;
    lg_net shape;
    if ((st = lg_vit_to_net_form(m, &shape, dense_head)) != LG_OK) goto fail;
    st = lg_vn_compare(net, &shape, 0, 0, name); /* the shapes match: reading the parameters is safe */
    lg_net_free(&shape);
    if (st != LG_OK) goto fail;
    lg_vn_read(m, net, dense_head);
    if ((st = lg_vit_to_net_form(m, &shape, dense_head)) != LG_OK) goto fail;
    st = lg_vn_compare(net, &shape, 1, !dense_head, name); /* the weights have the shared per-token form */
    lg_net_free(&shape);
    if (st == LG_OK) return LG_OK;
fail:
    lg_vit_free(m);
    return st;
}

/* Parameters [p, p + n) of m get scale a and count c (model.h). */
static void lg_vn_pset(lg_model *m, const float *p, size_t n, float a, float c)
{
    if (!n) return;
    size_t o = (size_t)(p - m->params);
    for (size_t i = o; i < o + n; i++) m->p_scale[i] = a, m->p_count[i] = c;
}

lg_status lg_vit_model_param(lg_model *m, const lg_net *net)
{
    lg_vit_spec s;
    lg_act act;
    int dense_head = 0;
    lg_status st = lg_vn_spec(net, &s, &act, &dense_head, "the ViT's graph");
    if (st != LG_OK) return st;
    if (dense_head || m->n_layers != net->n_layers)
        return lg_fail(LG_ERR_ARG, "the ViT's graph: a head over every token's values (the earlier form) has no "
                                   "ViT parameterisation; read it back (lg_net_to_vit) and write it again");
    float *a = malloc(2 * m->n_params * sizeof *a);
    if (!a) return lg_fail(LG_ERR_NOMEM, "cannot allocate the ViT's parameterisation");
    free(m->p_scale);
    m->p_scale = a, m->p_count = a + m->n_params;
    for (size_t i = 0; i < m->n_params; i++) m->p_scale[i] = 1.0f, m->p_count[i] = 1.0f;
    int D = s.dim, T = net->layers[1].n_out / D;
    float q = (float)(1.0 / sqrt((double)(D / s.heads)));
    for (int l = 0; l < s.depth; l++) { /* Q holds 1/√d_h of the ViT's W_q, b_q */
        lg_mlayer *Q = &m->layers[2 + LG_VIT_NET_PER_BLOCK * l + 1];
        lg_vn_pset(m, Q->W, Q->n_w, q, 1.0f);
        lg_vn_pset(m, Q->b, Q->n_b, q, 1.0f);
    }
    if (s.cls) lg_vn_pset(m, m->layers[1].b, (size_t)D, 1.0f, 2.0f); /* the class token's row: cls + pos */
    lg_mlayer *H = &m->layers[m->n_layers - 2];
    lg_vn_pset(m, H->W, H->n_w, s.cls ? 1.0f : 1.0f / (float)T, 1.0f); /* 1/T of W_h for mean pooling */
    lg_vn_pset(m, H->b, H->n_b, 1.0f, 0.0f); /* b_h trains in the logits layer's bias */
    return LG_OK;
}
