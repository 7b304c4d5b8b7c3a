/* rs.c — the RS loss and its gradient (rs.h; DESIGN.md §1, "Verification-aware
 * training: the RS loss"). */
#include "train/rs.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/linalg.h"
#include "core/op.h"
#include "core/traverse.h"

/* Width of node j (LG_NET_INPUT: the input). */
static int lg_rs_width(const lg_model *m, int j) { return j < 0 ? m->n_in : m->layers[j].n_out; }

/* 1 when layer L's activation becomes a ReLU in the substitution (every hidden kind but identity). */
static int lg_rs_clamps(const lg_mlayer *L) { return L->act != LG_ACT_IDENTITY; }

lg_status lg_rs_init(lg_rs *rs, const lg_model *m)
{
    memset(rs, 0, sizeof *rs);
    int nh = m->n_layers - 1;
    if (nh < 1) return LG_OK;
    for (int k = 0; k < m->n_layers; k++)
        if (m->layers[k].op)
            return lg_fail(LG_ERR_UNSUPPORTED, "the RS loss takes term sums only; layer %d is a %s node", k,
                           lg_op(m->layers[k].kind)->name);
    size_t B = (size_t)m->max_batch, W = (size_t)m->max_width, n = 0, maxw = 0;
    for (int k = 0; k < nh; k++) {
        const lg_mlayer *L = &m->layers[k];
        n += 4 * B * (size_t)lg_rs_width(m, k - 1) + 2 * B * (size_t)L->n_out;
        for (int t = 0; t < lg_mlayer_n_lin(L); t++) {
            size_t nw = t == 0 ? L->n_w : L->terms[t - 1].n_w;
            if (nw > maxw) maxw = nw;
        }
    }
    n += 2 * B * W + maxw;
    rs->n_hidden = nh;
    rs->buf = malloc(n * sizeof *rs->buf);
    rs->mu = malloc(6 * (size_t)nh * sizeof *rs->mu);
    rs->set = malloc((size_t)nh);
    if (!rs->buf || !rs->mu || !rs->set) {
        lg_rs_free(rs);
        return lg_fail(LG_ERR_NOMEM, "cannot allocate the RS loss scratch");
    }
    rs->rho = rs->mu + nh;
    rs->dmu = rs->rho + nh;
    rs->drho = rs->dmu + nh;
    rs->lo = rs->drho + nh;
    rs->hi = rs->lo + nh;
    float *p = rs->buf;
    for (int k = 0; k < nh; k++) {
        const lg_mlayer *L = &m->layers[k];
        size_t w = B * (size_t)lg_rs_width(m, k - 1);
        rs->mu[k] = p, p += w;
        rs->rho[k] = p, p += w;
        rs->dmu[k] = p, p += w;
        rs->drho[k] = p, p += w;
        rs->lo[k] = p, p += B * (size_t)L->n_out;
        rs->hi[k] = p, p += B * (size_t)L->n_out;
    }
    rs->g_lo = p, p += B * W;
    rs->g_hi = p, p += B * W;
    rs->absw = p;
    return LG_OK;
}

void lg_rs_free(lg_rs *rs)
{
    free(rs->buf);
    free(rs->mu);
    free(rs->set);
    memset(rs, 0, sizeof *rs);
}

/* The RS loss's step at term t of hidden layer L in the traversal's visit (core/traverse.h
 * lg_layer_terms_visit of the net's layer): the float copy of that term is L's term t. */
typedef struct lg_rs_at {
    lg_rs *rs;
    lg_model *m;
    lg_mlayer *L;
    int k, B; /* L = &m->layers[k] */
} lg_rs_at;

/* lo[B][n_out] (+)= W·μ (+ b after term 0: the centre), hi (+)= |W|·ρ (the radius), μ, ρ the
 * box of the term's source; term 0 writes, the others add. */
static void lg_rs_forward_at(void *ctx, int t, const lg_linear *A)
{
    (void)A;
    const lg_rs_at *at = ctx;
    lg_rs *rs = at->rs;
    const lg_mterm *T = lg_mlayer_term(at->L, t);
    int k = at->k;
    for (size_t i = 0; i < T->n_w; i++) rs->absw[i] = fabsf(T->W[i]);
    lg_model_linear(at->m, T, T->W, rs->mu[T->src + 1], at->B, rs->lo[k], t > 0);
    if (t == 0) lg_model_bias_add(at->L, at->B, rs->lo[k]);
    lg_model_linear(at->m, T, rs->absw, rs->rho[T->src + 1], at->B, rs->hi[k], t > 0);
}

/* The term's share of the backward, from gc = ∂L/∂c (rs->g_lo) and gr = ∂L/∂r (rs->g_hi). */
static void lg_rs_backward_at(void *ctx, int t, const lg_linear *A)
{
    (void)A;
    const lg_rs_at *at = ctx;
    lg_rs *rs = at->rs;
    lg_model *m = at->m;
    int B = at->B;
    const float *gc = rs->g_lo, *gr = rs->g_hi;
    lg_mterm *T = lg_mlayer_term(at->L, t);
    size_t nw = T->n_w;
    int j = T->src + 1; /* the box of the term's source */
    for (size_t i = 0; i < nw; i++) rs->absw[i] = fabsf(T->W[i]);
    if (j > 0) {
        /* ∂L/∂μ[B][n_in] (+)= Wᵀ·gc, ∂L/∂ρ (+)= |W|ᵀ·gr */
        lg_model_linear_t(m, T, T->W, gc, B, rs->dmu[j], rs->set[j]);
        lg_model_linear_t(m, T, rs->absw, gr, B, rs->drho[j], rs->set[j]);
        rs->set[j] = 1;
    }
    /* dW += gc ⊗ μ + sign(W) ⊙ (gr ⊗ ρ) */
    if (!nw) return;
    lg_model_linear_dw(m, T, gc, rs->mu[j], B, rs->absw);
    for (size_t i = 0; i < nw; i++) T->dW[i] += rs->absw[i];
    lg_model_linear_dw(m, T, gr, rs->rho[j], B, rs->absw);
    for (size_t i = 0; i < nw; i++) T->dW[i] += T->W[i] > 0.0f ? rs->absw[i] : T->W[i] < 0.0f ? -rs->absw[i] : 0.0f;
}

double lg_rs_loss(lg_rs *rs, lg_model *m, int B, double eps, double w, int grad, long *unstable)
{
    int nh = rs->n_hidden;
    long n_unst = 0;
    if (unstable) *unstable = 0;
    if (nh < 1 || B < 1) return 0.0;
    /* input box: raw x = x_n / in_div + in_sub, clipped ball, normalised again */
    int n0 = m->n_in;
    for (int r = 0; r < B; r++)
        for (int i = 0; i < n0; i++) {
            size_t q = (size_t)r * (size_t)n0 + (size_t)i;
            double x = m->x[q];
            if (m->in_div) x /= m->in_div[i];
            if (m->in_sub) x += m->in_sub[i];
            double lo = fmax(x - eps, 0.0), hi = fmin(x + eps, 1.0);
            if (lo > hi) lo = hi = fmin(fmax(x, 0.0), 1.0); /* an input outside [0,1]: its clipped point */
            if (m->in_sub) lo -= m->in_sub[i], hi -= m->in_sub[i];
            if (m->in_div) lo *= m->in_div[i], hi *= m->in_div[i];
            rs->mu[0][q] = (float)(0.5 * (hi + lo));
            rs->rho[0][q] = (float)(0.5 * (hi - lo));
        }
    /* forward: l = Σ_t W_t·μ_t + b − Σ_t |W_t|·ρ_t, u = … + …, per hidden layer, μ_t, ρ_t the box of term t's
     * source; the layer's own box is ReLU of [l, u] (or [l, u] itself for an identity layer) */
    double loss = 0.0;
    for (int k = 0; k < nh; k++) {
        lg_mlayer *L = &m->layers[k];
        size_t no = (size_t)L->n_out, n = (size_t)B * no;
        float *lo = rs->lo[k], *hi = rs->hi[k];
        /* lo[B][n_out] = Σ W·μ + b (the centre);  hi = Σ |W|·ρ (the radius) */
        lg_rs_at at = {rs, m, L, k, B};
        lg_layer_terms_visit(&m->net->layers[k], lg_rs_forward_at, &at);
        int clamp = lg_rs_clamps(L);
        for (size_t i = 0; i < n; i++) {
            float c = lo[i], rad = hi[i];
            lo[i] = c - rad;
            hi[i] = c + rad;
            if (!clamp) continue;
            loss -= tanh(1.0 + (double)lo[i] * (double)hi[i]);
            n_unst += lo[i] < 0.0f && hi[i] > 0.0f;
        }
        if (k + 1 < nh) {
            float *mu = rs->mu[k + 1], *rho = rs->rho[k + 1];
            for (size_t i = 0; i < n; i++) {
                float a = lo[i], b = hi[i];
                if (clamp) a = a > 0.0f ? a : 0.0f, b = b > 0.0f ? b : 0.0f;
                mu[i] = 0.5f * (b + a);
                rho[i] = 0.5f * (b - a);
            }
        }
    }
    if (unstable) *unstable = n_unst;
    double scale = w / (double)B;
    if (!grad) return scale * loss;
    /* backward. g_lo, g_hi = ∂L/∂l, ∂L/∂u of layer k: the local term −w/B · sech²(1 + lu) · (u, l), plus what
     * its consumers sent through its box (dmu, drho of node k, summed over them): ∂L/∂a⁻ = (∂μ − ∂ρ)/2
     * reaches l where a⁻ = max(l,0) passes it (always for an identity layer), ∂L/∂a⁺ = (∂μ + ∂ρ)/2 likewise u */
    memset(rs->set, 0, (size_t)nh);
    for (int k = nh - 1; k >= 0; k--) {
        lg_mlayer *L = &m->layers[k];
        size_t no = (size_t)L->n_out, n = (size_t)B * no;
        const float *lo = rs->lo[k], *hi = rs->hi[k];
        int clamp = lg_rs_clamps(L), up = k + 1 < nh && rs->set[k + 1];
        if (!clamp && !up) continue; /* no loss term and nothing reads it: no gradient */
        for (size_t i = 0; i < n; i++) {
            double gl = 0.0, gu = 0.0;
            if (clamp) {
                double th = tanh(1.0 + (double)lo[i] * (double)hi[i]);
                double s = -scale * (1.0 - th * th);
                gl = s * hi[i], gu = s * lo[i];
            }
            if (up) {
                float a = rs->dmu[k + 1][i], b = rs->drho[k + 1][i];
                float am = 0.5f * (a - b), ap = 0.5f * (a + b);
                if (!clamp || lo[i] > 0.0f) gl += am;
                if (!clamp || hi[i] > 0.0f) gu += ap;
            }
            /* l = c − r, u = c + r: ∂L/∂c = gl + gu (kept in g_lo), ∂L/∂r = gu − gl (in g_hi) */
            rs->g_lo[i] = (float)(gl + gu);
            rs->g_hi[i] = (float)(gu - gl);
        }
        lg_rs_at at = {rs, m, L, k, B};
        lg_layer_terms_visit(&m->net->layers[k], lg_rs_backward_at, &at);
        /* db += the bias gradient of gc (rs->g_lo) */
        lg_model_bias_grad(L, rs->g_lo, B);
    }
    return scale * loss;
}
