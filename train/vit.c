/* vit.c — float forward/backward of a pre-norm ViT encoder (vit.h;
 * DESIGN.md §1 "Training a Transformer"). */
#include "train/vit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/linalg.h"
#include "core/rng.h"
#include "train/act.h"
#include "train/attention.h"
#include "train/layernorm.h"

/* y[n][o] = x[n][i]·Wᵀ + b (b may be NULL). */
static void lg_vit_lin(float *y, const float *x, const float *W, const float *b, int n, int i, int o)
{
    lg_sgemm(0, 1, n, o, i, 1.0f, x, i, W, i, 0.0f, y, o);
    if (b)
        for (int r = 0; r < n; r++)
            for (int j = 0; j < o; j++) y[(long)r * o + j] += b[j];
}

/* dW += dyᵀ·x, db += Σ_rows dy, dx = dy·W (accumulate into dx when acc; dx may be NULL). */
static void lg_vit_lin_back(float *dx, float *dW, float *db, const float *dy, const float *x, const float *W, int n,
                            int i, int o, int acc)
{
    lg_sgemm(1, 0, o, i, n, 1.0f, dy, o, x, i, 1.0f, dW, i);
    if (db)
        for (int r = 0; r < n; r++)
            for (int j = 0; j < o; j++) db[j] += dy[(long)r * o + j];
    if (dx) lg_sgemm(0, 0, n, i, o, 1.0f, dy, o, W, i, acc ? 1.0f : 0.0f, dx, i);
}

static int lg_vit_param_kind_default(lg_act a, float *p)
{
    const lg_act_info *ai = lg_act_info_of(a);
    if (!ai || !ai->has_param) {
        *p = a == LG_ACT_GELU ? 1.0f : 0.0f;
        return 0;
    }
    *p = ai->softplus ? (float)(1.0 + log(2.0)) : 0.25f;
    return 1;
}

lg_status lg_vit_init(lg_vit *m, const lg_vit_spec *s, lg_act act, int max_batch)
{
    memset(m, 0, sizeof *m);
    if (max_batch < 1) return lg_fail(LG_ERR_ARG, "batch size must be at least 1, got %d", max_batch);
    if (!lg_act_name(act)) return lg_fail(LG_ERR_ARG, "unknown activation code %d", (int)act);
    m->spec = *s;
    m->act = act;
    m->max_batch = max_batch;
    int D = m->D = s->dim, M = m->M = s->mlp, L = s->depth;
    m->NP = lg_vit_n_patches(s);
    m->T = lg_vit_n_tokens(s);
    m->PL = lg_vit_patch_len(s);
    int T = m->T, NH = s->heads;
    m->blk = calloc((size_t)L, sizeof *m->blk);
    m->ba = calloc((size_t)L, sizeof *m->ba);
    m->ranges = calloc((size_t)(LG_VG_N + L * LG_VB_N), sizeof *m->ranges);
    if (!m->blk || !m->ba || !m->ranges) goto nomem;
    size_t off = 0;
#define LG_VIT_RANGE(slot, len, dec, isact)                                                    \
    do {                                                                                       \
        slot = off;                                                                            \
        m->ranges[m->n_ranges++] = (lg_vit_range){off, (size_t)(len), dec, isact};             \
        off += (size_t)(len);                                                                  \
    } while (0)
    LG_VIT_RANGE(m->glob[LG_VG_WP], (long)D * m->PL, 1, 0);
    LG_VIT_RANGE(m->glob[LG_VG_BP], D, 0, 0);
    LG_VIT_RANGE(m->glob[LG_VG_CLS], s->cls ? D : 0, 0, 0);
    LG_VIT_RANGE(m->glob[LG_VG_POS], (long)T * D, 0, 0);
    for (int l = 0; l < L; l++) {
        size_t *b = m->blk[l];
        static const int dec[LG_VB_N] = {0, 0, 1, 0, 1, 0, 1, 0, 1, 0, 0, 0, 1, 0, 1, 0, 0};
        long len[LG_VB_N] = {D, D, (long)D * D, D, (long)D * D, D, (long)D * D, D, (long)D * D, D,
                             D, D, (long)M * D, M, (long)D * M, D, 1};
        for (int f = 0; f < LG_VB_N; f++) LG_VIT_RANGE(b[f], len[f], dec[f], f == LG_VB_ACT);
    }
    LG_VIT_RANGE(m->glob[LG_VG_GF], D, 0, 0);
    LG_VIT_RANGE(m->glob[LG_VG_BF], D, 0, 0);
    LG_VIT_RANGE(m->glob[LG_VG_WH], (long)s->n_out * D, 1, 0);
    LG_VIT_RANGE(m->glob[LG_VG_BH], s->n_out, 0, 0);
#undef LG_VIT_RANGE
    m->n_params = off;
    m->params = calloc(off, sizeof(float));
    m->grads = calloc(off, sizeof(float));
    m->mom1 = calloc(off, sizeof(float));
    m->mom2 = calloc(off, sizeof(float));
    if (!m->params || !m->grads || !m->mom1 || !m->mom2) goto nomem;
    for (int l = 0; l < L; l++) lg_vit_param_kind_default(act, &m->params[m->blk[l][LG_VB_ACT]]);
    size_t B = (size_t)max_batch, BT = B * (size_t)T, BTD = BT * (size_t)D, BTM = BT * (size_t)M;
    size_t kc = lg_act_keep_count(act);
    size_t per_block = 10 * BTD + 2 * BT + B * (size_t)NH * T * T + BTM * (2 + kc);
    size_t total = B * (size_t)(s->C * s->H * s->W) + B * (size_t)m->NP * m->PL + 3 * BTD + BT + B * (size_t)D +
                   B * (size_t)s->n_out + (size_t)L * per_block + /* backward */ 6 * BTD + 2 * BTM + (size_t)T * T +
                   B * (size_t)m->NP * D + B * (size_t)D + B * (size_t)s->n_out + BTD;
    if (!(m->mem = calloc(total, sizeof(float)))) goto nomem;
    float *a = m->mem;
#define LG_VIT_CARVE(ptr, len) (ptr = a, a += (len))
    LG_VIT_CARVE(m->x, B * (size_t)(s->C * s->H * s->W));
    LG_VIT_CARVE(m->patches, B * (size_t)m->NP * m->PL);
    for (int l = 0; l < L; l++) {
        lg_vit_block_acts *A = &m->ba[l];
        LG_VIT_CARVE(A->x, BTD);
        LG_VIT_CARVE(A->y1, BTD);
        LG_VIT_CARVE(A->h1, BTD);
        LG_VIT_CARVE(A->r1, BT);
        LG_VIT_CARVE(A->q, BTD);
        LG_VIT_CARVE(A->k, BTD);
        LG_VIT_CARVE(A->v, BTD);
        LG_VIT_CARVE(A->p, B * (size_t)NH * T * T);
        LG_VIT_CARVE(A->o, BTD);
        LG_VIT_CARVE(A->xm, BTD);
        LG_VIT_CARVE(A->y2, BTD);
        LG_VIT_CARVE(A->h2, BTD);
        LG_VIT_CARVE(A->r2, BT);
        LG_VIT_CARVE(A->z, BTM);
        LG_VIT_CARVE(A->a, BTM);
        LG_VIT_CARVE(A->keep, BTM * kc);
    }
    LG_VIT_CARVE(m->xout, BTD);
    LG_VIT_CARVE(m->yf, BTD);
    LG_VIT_CARVE(m->hf, BTD);
    LG_VIT_CARVE(m->rf, BT);
    LG_VIT_CARVE(m->pooled, B * (size_t)D);
    LG_VIT_CARVE(m->logits, B * (size_t)s->n_out);
    LG_VIT_CARVE(m->dx, BTD);
    LG_VIT_CARVE(m->dy, BTD);
    LG_VIT_CARVE(m->dq, BTD);
    LG_VIT_CARVE(m->dk, BTD);
    LG_VIT_CARVE(m->dv, BTD);
    LG_VIT_CARVE(m->dO, BTD);
    LG_VIT_CARVE(m->da, BTM);
    LG_VIT_CARVE(m->dz, BTM);
    LG_VIT_CARVE(m->dP, (size_t)T * T);
    LG_VIT_CARVE(m->dE, B * (size_t)m->NP * D);
    LG_VIT_CARVE(m->dpool, B * (size_t)D);
    LG_VIT_CARVE(m->dlog, B * (size_t)s->n_out);
#undef LG_VIT_CARVE
    if ((size_t)(a - m->mem) > total) abort(); /* the size table above and the carving disagree */
    return LG_OK;
nomem:
    lg_vit_free(m);
    return lg_fail(LG_ERR_NOMEM, "cannot allocate a ViT model");
}

void lg_vit_free(lg_vit *m)
{
    free(m->blk);
    free(m->ba);
    free(m->ranges);
    free(m->params);
    free(m->grads);
    free(m->mom1);
    free(m->mom2);
    free(m->mem);
    memset(m, 0, sizeof *m);
}

void lg_vit_init_weights(lg_vit *m, uint64_t seed)
{
    lg_rng r;
    lg_rng_init(&r, seed, 11);
    int D = m->D, M = m->M;
    float *P = m->params;
#define LG_VIT_FILL(off, n, sd)                                                                    \
    for (size_t i_ = 0; i_ < (size_t)(n); i_++) P[(off) + i_] = (float)((sd) * lg_rng_normal(&r))
    memset(P, 0, m->n_params * sizeof *P);
    LG_VIT_FILL(m->glob[LG_VG_WP], (long)D * m->PL, sqrt(2.0 / (D + m->PL)));
    LG_VIT_FILL(m->glob[LG_VG_CLS], m->spec.cls ? D : 0, 0.02);
    LG_VIT_FILL(m->glob[LG_VG_POS], (long)m->T * D, 0.02);
    for (int l = 0; l < m->spec.depth; l++) {
        size_t *b = m->blk[l];
        for (int j = 0; j < D; j++) P[b[LG_VB_G1] + j] = P[b[LG_VB_G2] + j] = 1.0f;
        LG_VIT_FILL(b[LG_VB_WQ], (long)D * D, sqrt(1.0 / D));
        LG_VIT_FILL(b[LG_VB_WK], (long)D * D, sqrt(1.0 / D));
        LG_VIT_FILL(b[LG_VB_WV], (long)D * D, sqrt(1.0 / D));
        LG_VIT_FILL(b[LG_VB_WO], (long)D * D, sqrt(1.0 / D));
        LG_VIT_FILL(b[LG_VB_W1], (long)M * D, sqrt(2.0 / (D + M)));
        LG_VIT_FILL(b[LG_VB_W2], (long)D * M, sqrt(2.0 / (D + M)));
        lg_vit_param_kind_default(m->act, &P[b[LG_VB_ACT]]);
    }
    for (int j = 0; j < D; j++) P[m->glob[LG_VG_GF] + j] = 1.0f;
    LG_VIT_FILL(m->glob[LG_VG_WH], (long)m->spec.n_out * D, sqrt(2.0 / (D + m->spec.n_out)));
#undef LG_VIT_FILL
}

void lg_vit_gather(lg_vit *m, const float *X, const uint32_t *idx, int B)
{
    size_t n = (size_t)(m->spec.C * m->spec.H * m->spec.W);
    for (int r = 0; r < B; r++) memcpy(m->x + (size_t)r * n, X + (size_t)idx[r] * n, n * sizeof(float));
}

float lg_vit_act_param(const lg_vit *m, int l) { return m->params[m->blk[l][LG_VB_ACT]]; }

int lg_vit_finite(const lg_vit *m)
{
    for (size_t i = 0; i < m->n_params; i++)
        if (!isfinite(m->params[i])) return 0;
    return 1;
}

void lg_vit_zero_grad(lg_vit *m) { memset(m->grads, 0, m->n_params * sizeof *m->grads); }

/* patches[b][p][c·P·P + dy·P + dx] = x[b][c][py·P+dy][px·P+dx], p = py·(W/P) + px. */
static void lg_vit_patchify(lg_vit *m, int B)
{
    const lg_vit_spec *s = &m->spec;
    int P = s->patch, gw = s->W / P;
    for (int b = 0; b < B; b++)
        for (int p = 0; p < m->NP; p++) {
            int py = p / gw, px = p % gw;
            float *dst = m->patches + ((size_t)b * m->NP + p) * m->PL;
            for (int c = 0; c < s->C; c++)
                for (int dy = 0; dy < P; dy++)
                    for (int dx = 0; dx < P; dx++)
                        *dst++ = m->x[(size_t)b * s->C * s->H * s->W + ((size_t)c * s->H + py * P + dy) * s->W +
                                      px * P + dx];
        }
}

void lg_vit_forward(lg_vit *m, int B, const uint8_t *labels, double *loss, int *correct)
{
    const lg_vit_spec *s = &m->spec;
    int D = m->D, M = m->M, T = m->T, BT = B * T, off = s->cls ? 1 : 0, C = s->n_out;
    const float *P = m->params;
    lg_vit_patchify(m, B);
    /* tokens: the class token, then the patch embeddings; plus the position embedding */
    float *X0 = m->spec.depth ? m->ba[0].x : m->xout;
    float *E = m->dE; /* backward scratch, free during the forward: every patch embedding in one product */
    lg_vit_lin(E, m->patches, P + m->glob[LG_VG_WP], P + m->glob[LG_VG_BP], B * m->NP, m->PL, D);
    const float *pos = P + m->glob[LG_VG_POS];
    for (int b = 0; b < B; b++) {
        float *xb = X0 + (size_t)b * T * D;
        const float *eb = E + (size_t)b * m->NP * D;
        if (off)
            for (int j = 0; j < D; j++) xb[j] = P[m->glob[LG_VG_CLS] + (size_t)j] + pos[j];
        for (int i = 0; i < m->NP * D; i++) xb[off * D + i] = eb[i] + pos[off * D + i];
    }
    for (int l = 0; l < s->depth; l++) {
        lg_vit_block_acts *A = &m->ba[l];
        const size_t *bo = m->blk[l];
        float *xnext = l + 1 < s->depth ? m->ba[l + 1].x : m->xout;
        lg_ln_forward(A->y1, A->h1, A->r1, A->x, P + bo[LG_VB_G1], P + bo[LG_VB_B1N], BT, D, LG_LN_EPS);
        lg_vit_lin(A->q, A->y1, P + bo[LG_VB_WQ], P + bo[LG_VB_BQ], BT, D, D);
        lg_vit_lin(A->k, A->y1, P + bo[LG_VB_WK], P + bo[LG_VB_BK], BT, D, D);
        lg_vit_lin(A->v, A->y1, P + bo[LG_VB_WV], P + bo[LG_VB_BV], BT, D, D);
        lg_attn_forward(A->o, A->p, A->q, A->k, A->v, B, T, D, s->heads);
        lg_vit_lin(A->xm, A->o, P + bo[LG_VB_WO], P + bo[LG_VB_BO], BT, D, D);
        for (long i = 0; i < (long)BT * D; i++) A->xm[i] += A->x[i];
        lg_ln_forward(A->y2, A->h2, A->r2, A->xm, P + bo[LG_VB_G2], P + bo[LG_VB_B2N], BT, D, LG_LN_EPS);
        lg_vit_lin(A->z, A->y2, P + bo[LG_VB_W1], P + bo[LG_VB_B1], BT, D, M);
        lg_act_forward_keep(A->a, lg_act_keep_count(m->act) ? A->keep : NULL, A->z, m->act, P[bo[LG_VB_ACT]],
                            (size_t)BT * M);
        lg_vit_lin(xnext, A->a, P + bo[LG_VB_W2], P + bo[LG_VB_B2], BT, M, D);
        for (long i = 0; i < (long)BT * D; i++) xnext[i] += A->xm[i];
    }
    lg_ln_forward(m->yf, m->hf, m->rf, m->xout, P + m->glob[LG_VG_GF], P + m->glob[LG_VG_BF], BT, D, LG_LN_EPS);
    for (int b = 0; b < B; b++) {
        float *pb = m->pooled + (size_t)b * D;
        const float *yb = m->yf + (size_t)b * T * D;
        if (off) memcpy(pb, yb, (size_t)D * sizeof(float));
        else {
            for (int j = 0; j < D; j++) pb[j] = 0;
            for (int t = 0; t < T; t++)
                for (int j = 0; j < D; j++) pb[j] += yb[(size_t)t * D + j];
            for (int j = 0; j < D; j++) pb[j] /= (float)T;
        }
    }
    lg_vit_lin(m->logits, m->pooled, P + m->glob[LG_VG_WH], P + m->glob[LG_VG_BH], B, D, C);
    if (!labels) return;
    double sl = 0;
    int hits = 0;
    for (int b = 0; b < B; b++) {
        const float *z = m->logits + (size_t)b * C;
        int am = 0;
        double mx = z[0], se = 0;
        for (int j = 1; j < C; j++)
            if (z[j] > z[am]) am = j;
        mx = z[am];
        for (int j = 0; j < C; j++) se += exp((double)z[j] - mx);
        sl += mx + log(se) - z[labels[b]];
        hits += am == labels[b];
    }
    if (loss) *loss = sl / B;
    if (correct) *correct = hits;
}

void lg_vit_backward(lg_vit *m, int B, const uint8_t *labels)
{
    const lg_vit_spec *s = &m->spec;
    int D = m->D, M = m->M, T = m->T, BT = B * T, off = s->cls ? 1 : 0, C = s->n_out;
    const float *P = m->params;
    float *G = m->grads;
    /* loss → logits → pooled */
    for (int b = 0; b < B; b++) {
        const float *z = m->logits + (size_t)b * C;
        float *g = m->dlog + (size_t)b * C;
        float mx = z[0], se = 0;
        for (int j = 1; j < C; j++) mx = z[j] > mx ? z[j] : mx;
        for (int j = 0; j < C; j++) se += (g[j] = expf(z[j] - mx));
        for (int j = 0; j < C; j++) g[j] = g[j] / se / (float)B;
        g[labels[b]] -= 1.0f / (float)B;
    }
    lg_vit_lin_back(m->dpool, G + m->glob[LG_VG_WH], G + m->glob[LG_VG_BH], m->dlog, m->pooled, P + m->glob[LG_VG_WH],
                    B, D, C, 0);
    memset(m->dy, 0, (size_t)BT * D * sizeof(float));
    for (int b = 0; b < B; b++) {
        float *db = m->dy + (size_t)b * T * D;
        const float *gp = m->dpool + (size_t)b * D;
        if (off) memcpy(db, gp, (size_t)D * sizeof(float));
        else
            for (int t = 0; t < T; t++)
                for (int j = 0; j < D; j++) db[(size_t)t * D + j] = gp[j] / (float)T;
    }
    memset(m->dx, 0, (size_t)BT * D * sizeof(float));
    lg_ln_backward(m->dx, G + m->glob[LG_VG_GF], G + m->glob[LG_VG_BF], m->dy, m->hf, m->rf, P + m->glob[LG_VG_GF], BT,
                   D);
    /* blocks in reverse; m->dx holds ∂L/∂(block output), then ∂L/∂(block input) */
    for (int l = s->depth - 1; l >= 0; l--) {
        lg_vit_block_acts *A = &m->ba[l];
        const size_t *bo = m->blk[l];
        /* MLP residual: xnext = xm + W₂·act(W₁·LN₂(xm) + b₁) + b₂ */
        lg_vit_lin_back(m->da, G + bo[LG_VB_W2], G + bo[LG_VB_B2], m->dx, A->a, P + bo[LG_VB_W2], BT, M, D, 0);
        memset(m->dz, 0, (size_t)BT * M * sizeof(float));
        float dp = 0.0f;
        lg_act_backward_kept(m->dz, &dp, m->da, lg_act_keep_count(m->act) ? A->keep : NULL, A->z, m->act,
                             P[bo[LG_VB_ACT]], (size_t)BT * M);
        if (lg_act_info_of(m->act)->has_param) G[bo[LG_VB_ACT]] += dp;
        lg_vit_lin_back(m->dy, G + bo[LG_VB_W1], G + bo[LG_VB_B1], m->dz, A->y2, P + bo[LG_VB_W1], BT, D, M, 0);
        lg_ln_backward(m->dx, G + bo[LG_VB_G2], G + bo[LG_VB_B2N], m->dy, A->h2, A->r2, P + bo[LG_VB_G2], BT, D);
        /* attention residual: xm = x + Wo·Attn(Q, K, V) + bo, Q, K, V from LN₁(x) */
        lg_vit_lin_back(m->dO, G + bo[LG_VB_WO], G + bo[LG_VB_BO], m->dx, A->o, P + bo[LG_VB_WO], BT, D, D, 0);
        lg_attn_backward(m->dq, m->dk, m->dv, m->dP, m->dO, A->p, A->q, A->k, A->v, B, T, D, s->heads);
        lg_vit_lin_back(m->dy, G + bo[LG_VB_WQ], G + bo[LG_VB_BQ], m->dq, A->y1, P + bo[LG_VB_WQ], BT, D, D, 0);
        lg_vit_lin_back(m->dy, G + bo[LG_VB_WK], G + bo[LG_VB_BK], m->dk, A->y1, P + bo[LG_VB_WK], BT, D, D, 1);
        lg_vit_lin_back(m->dy, G + bo[LG_VB_WV], G + bo[LG_VB_BV], m->dv, A->y1, P + bo[LG_VB_WV], BT, D, D, 1);
        lg_ln_backward(m->dx, G + bo[LG_VB_G1], G + bo[LG_VB_B1N], m->dy, A->h1, A->r1, P + bo[LG_VB_G1], BT, D);
    }
    /* tokens: position embedding, class token, patch embedding */
    for (int b = 0; b < B; b++) {
        const float *db = m->dx + (size_t)b * T * D;
        for (int i = 0; i < T * D; i++) G[m->glob[LG_VG_POS] + (size_t)i] += db[i];
        if (off)
            for (int j = 0; j < D; j++) G[m->glob[LG_VG_CLS] + (size_t)j] += db[j];
        memcpy(m->dE + (size_t)b * m->NP * D, db + (size_t)off * D, (size_t)m->NP * D * sizeof(float));
    }
    lg_vit_lin_back(NULL, G + m->glob[LG_VG_WP], G + m->glob[LG_VG_BP], m->dE, m->patches, P + m->glob[LG_VG_WP],
                    B * m->NP, m->PL, D, 0);
}
