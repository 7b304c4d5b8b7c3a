/* rs.c — the RS loss and its gradient (rs.h; DESIGN.md §1, "Verification-aware
 * training: the RS loss"). */
#include "train/rs.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/linalg.h"

lg_status lg_rs_init(lg_rs *rs, const lg_model *m)
{
    memset(rs, 0, sizeof *rs);
    int nh = m->n_layers - 1;
    if (nh < 1) return LG_OK;
    size_t B = (size_t)m->max_batch, W = (size_t)m->max_width, n = 0, maxw = 0;
    for (int k = 0; k < nh; k++) {
        const lg_mlayer *L = &m->layers[k];
        n += 2 * B * (size_t)L->n_in + 2 * B * (size_t)L->n_out;
        if (L->n_w > maxw) maxw = L->n_w;
    }
    n += 4 * B * W + maxw;
    rs->n_hidden = nh;
    rs->buf = malloc(n * sizeof *rs->buf);
    rs->mu = malloc(4 * (size_t)nh * sizeof *rs->mu);
    if (!rs->buf || !rs->mu) {
        lg_rs_free(rs);
        return lg_fail(LG_ERR_NOMEM, "cannot allocate the RS loss scratch");
    }
    rs->rho = rs->mu + nh;
    rs->lo = rs->rho + nh;
    rs->hi = rs->lo + nh;
    float *p = rs->buf;
    for (int k = 0; k < nh; k++) {
        const lg_mlayer *L = &m->layers[k];
        rs->mu[k] = p, p += B * (size_t)L->n_in;
        rs->rho[k] = p, p += B * (size_t)L->n_in;
        rs->lo[k] = p, p += B * (size_t)L->n_out;
        rs->hi[k] = p, p += B * (size_t)L->n_out;
    }
    rs->g_lo = p, p += B * W;
    rs->g_hi = p, p += B * W;
    rs->t0 = p, p += B * W;
    rs->t1 = p, p += B * W;
    rs->absw = p;
    return LG_OK;
}

void lg_rs_free(lg_rs *rs)
{
    free(rs->buf);
    free(rs->mu);
    memset(rs, 0, sizeof *rs);
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
    /* forward: l = Wμ + b − |W|ρ, u = Wμ + b + |W|ρ per hidden layer; the next box is ReLU of [l, u] */
    double loss = 0.0;
    for (int k = 0; k < nh; k++) {
        const lg_mlayer *L = &m->layers[k];
        size_t no = (size_t)L->n_out, nw = L->n_w, n = (size_t)B * no;
        for (size_t i = 0; i < nw; i++) rs->absw[i] = fabsf(L->W[i]);
        float *lo = rs->lo[k], *hi = rs->hi[k];
        /* lo[B][n_out] = W·μ + b (the centre);  hi = |W|·ρ (the radius) */
        lg_model_linear(m, L, L->W, rs->mu[k], B, lo);
        lg_model_bias_add(L, B, lo);
        lg_model_linear(m, L, rs->absw, rs->rho[k], B, hi);
        for (size_t i = 0; i < n; i++) {
            float c = lo[i], rad = hi[i];
            lo[i] = c - rad;
            hi[i] = c + rad;
            loss -= tanh(1.0 + (double)lo[i] * (double)hi[i]);
            n_unst += lo[i] < 0.0f && hi[i] > 0.0f;
        }
        if (k + 1 < nh) {
            float *mu = rs->mu[k + 1], *rho = rs->rho[k + 1];
            for (size_t i = 0; i < n; i++) {
                float a = lo[i] > 0.0f ? lo[i] : 0.0f, b = hi[i] > 0.0f ? hi[i] : 0.0f;
                mu[i] = 0.5f * (b + a);
                rho[i] = 0.5f * (b - a);
            }
        }
    }
    if (unstable) *unstable = n_unst;
    double scale = w / (double)B;
    if (!grad) return scale * loss;
    /* backward. g_lo, g_hi = ∂L/∂l, ∂L/∂u of layer k: the local term −w/B · sech²(1 + lu) · (u, l), plus what
     * the layer above sent through a⁻ = max(l,0), a⁺ = max(u,0) (held in t0 = ∂L/∂a⁻, t1 = ∂L/∂a⁺) */
    for (int k = nh - 1; k >= 0; k--) {
        lg_mlayer *L = &m->layers[k];
        size_t no = (size_t)L->n_out, n = (size_t)B * no;
        const float *lo = rs->lo[k], *hi = rs->hi[k];
        for (size_t i = 0; i < n; i++) {
            double th = tanh(1.0 + (double)lo[i] * (double)hi[i]);
            double s = -scale * (1.0 - th * th);
            double gl = s * hi[i], gu = s * lo[i];
            if (k + 1 < nh) {
                if (lo[i] > 0.0f) gl += rs->t0[i];
                if (hi[i] > 0.0f) gu += rs->t1[i];
            }
            /* l = c − r, u = c + r: ∂L/∂c = gl + gu (kept in g_lo), ∂L/∂r = gu − gl (in g_hi) */
            rs->g_lo[i] = (float)(gl + gu);
            rs->g_hi[i] = (float)(gu - gl);
        }
        const float *gc = rs->g_lo, *gr = rs->g_hi;
        size_t nw = L->n_w;
        for (size_t i = 0; i < nw; i++) rs->absw[i] = fabsf(L->W[i]);
        if (k > 0) {
            /* ∂L/∂μ[B][n_in] = Wᵀ·gc, ∂L/∂ρ = |W|ᵀ·gr; then ∂L/∂a⁻ = (∂μ − ∂ρ)/2, ∂L/∂a⁺ = (∂μ + ∂ρ)/2 */
            float *dmu = rs->t0, *drho = rs->t1;
            lg_model_linear_t(m, L, L->W, gc, B, dmu);
            lg_model_linear_t(m, L, rs->absw, gr, B, drho);
            size_t ni = (size_t)B * (size_t)L->n_in;
            for (size_t i = 0; i < ni; i++) {
                float a = dmu[i], b = drho[i];
                dmu[i] = 0.5f * (a - b);
                drho[i] = 0.5f * (a + b);
            }
        }
        /* dW += gc ⊗ μ + sign(W) ⊙ (gr ⊗ ρ);  db += the bias gradient of gc */
        lg_model_linear_dw(m, L, gc, rs->mu[k], B, rs->absw);
        for (size_t i = 0; i < nw; i++) L->dW[i] += rs->absw[i];
        lg_model_linear_dw(m, L, gr, rs->rho[k], B, rs->absw);
        for (size_t i = 0; i < nw; i++) L->dW[i] += L->W[i] > 0.0f ? rs->absw[i] : L->W[i] < 0.0f ? -rs->absw[i] : 0.0f;
        lg_model_bias_grad(L, gc, B);
    }
    return scale * loss;
}
