/* linop.c — a layer's W applied through its structure (linop.h). */
#include "core/linop.h"

#include <cblas.h>
#include <math.h>
#include <string.h>

/* y[n_out] (+)= conv(x) without bias, |W| when absw. Sums run over
 * ci, ky, kx ascending (input indices ascending). */
static void lg_conv_mul1(const lg_conv *c, const double *W, const double *x, double *y, int absw, int acc)
{
    size_t hw_in = (size_t)c->h_in * (size_t)c->w_in, kk = (size_t)c->kh * (size_t)c->kw;
    for (int co = 0; co < c->c_out; co++)
        for (int oy = 0; oy < c->h_out; oy++) {
            int y0 = oy * c->sh - c->ph;
            int ky0 = y0 < 0 ? -y0 : 0, ky1 = c->h_in - y0 < c->kh ? c->h_in - y0 : c->kh;
            for (int ox = 0; ox < c->w_out; ox++) {
                int x0 = ox * c->sw - c->pw;
                int kx0 = x0 < 0 ? -x0 : 0, kx1 = c->w_in - x0 < c->kw ? c->w_in - x0 : c->kw;
                double s = 0.0;
                for (int ci = 0; ci < c->c_in; ci++) {
                    const double *Wk = W + ((size_t)co * (size_t)c->c_in + (size_t)ci) * kk;
                    const double *xc = x + (size_t)ci * hw_in;
                    for (int ky = ky0; ky < ky1; ky++) {
                        const double *wr = Wk + (size_t)ky * (size_t)c->kw;
                        const double *xr = xc + (size_t)(y0 + ky) * (size_t)c->w_in + x0;
                        if (absw) {
                            for (int kx = kx0; kx < kx1; kx++)
                                if (wr[kx] != 0.0) s += fabs(wr[kx]) * xr[kx]; /* 0·∞ */
                        } else {
                            for (int kx = kx0; kx < kx1; kx++) s += wr[kx] * xr[kx];
                        }
                    }
                }
                size_t o = ((size_t)co * (size_t)c->h_out + (size_t)oy) * (size_t)c->w_out + (size_t)ox;
                y[o] = acc ? y[o] + s : s;
            }
        }
}

/* y[n_in] = Σ_o a[o]·W[o][·] for a conv, |W| when absw (y overwritten). */
static void lg_conv_mul1_t(const lg_conv *c, const double *W, const double *a, double *y, int absw)
{
    size_t hw_in = (size_t)c->h_in * (size_t)c->w_in, kk = (size_t)c->kh * (size_t)c->kw;
    memset(y, 0, (size_t)c->c_in * hw_in * sizeof *y);
    for (int co = 0; co < c->c_out; co++)
        for (int oy = 0; oy < c->h_out; oy++) {
            int y0 = oy * c->sh - c->ph;
            int ky0 = y0 < 0 ? -y0 : 0, ky1 = c->h_in - y0 < c->kh ? c->h_in - y0 : c->kh;
            for (int ox = 0; ox < c->w_out; ox++) {
                double ao = a[((size_t)co * (size_t)c->h_out + (size_t)oy) * (size_t)c->w_out + (size_t)ox];
                if (ao == 0.0) continue; /* exact: 0·w adds nothing (and 0·∞ stays out) */
                int x0 = ox * c->sw - c->pw;
                int kx0 = x0 < 0 ? -x0 : 0, kx1 = c->w_in - x0 < c->kw ? c->w_in - x0 : c->kw;
                for (int ci = 0; ci < c->c_in; ci++) {
                    const double *Wk = W + ((size_t)co * (size_t)c->c_in + (size_t)ci) * kk;
                    double *yc = y + (size_t)ci * hw_in;
                    for (int ky = ky0; ky < ky1; ky++) {
                        const double *wr = Wk + (size_t)ky * (size_t)c->kw;
                        double *yr = yc + (size_t)(y0 + ky) * (size_t)c->w_in + x0;
                        if (absw)
                            for (int kx = kx0; kx < kx1; kx++) yr[kx] += ao * fabs(wr[kx]);
                        else
                            for (int kx = kx0; kx < kx1; kx++) yr[kx] += ao * wr[kx];
                    }
                }
            }
        }
}

void lg_layer_mul(const lg_layer *L, int m, const double *X, double *Y, int absw, int accumulate)
{
    int n = L->n_out, ni = L->n_in;
    if (L->kind == LG_LAYER_CONV2D) {
        for (int r = 0; r < m; r++)
            lg_conv_mul1(&L->conv, L->W, X + (size_t)r * (size_t)ni, Y + (size_t)r * (size_t)n, absw, accumulate);
        return;
    }
    if (absw) {
        for (int r = 0; r < m; r++) {
            const double *x = X + (size_t)r * (size_t)ni;
            double *y = Y + (size_t)r * (size_t)n;
            for (int o = 0; o < n; o++) {
                const double *Wr = L->W + (size_t)o * (size_t)ni;
                double s = 0.0;
                for (int i = 0; i < ni; i++)
                    if (Wr[i] != 0.0) s += fabs(Wr[i]) * x[i]; /* 0·∞ */
                y[o] = accumulate ? y[o] + s : s;
            }
        }
        return;
    }
    double beta = accumulate ? 1.0 : 0.0;
    if (m == 1)
        cblas_dgemv(CblasRowMajor, CblasNoTrans, n, ni, 1.0, L->W, ni, X, 1, beta, Y, 1);
    else
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, ni, 1.0, X, ni, L->W, ni, beta, Y, n);
}

void lg_layer_mul_t(const lg_layer *L, int m, const double *A, double *Y, int absw)
{
    int n = L->n_out, ni = L->n_in;
    if (L->kind == LG_LAYER_CONV2D) {
        for (int r = 0; r < m; r++)
            lg_conv_mul1_t(&L->conv, L->W, A + (size_t)r * (size_t)n, Y + (size_t)r * (size_t)ni, absw);
        return;
    }
    if (absw) {
        for (int r = 0; r < m; r++) {
            const double *a = A + (size_t)r * (size_t)n;
            double *y = Y + (size_t)r * (size_t)ni;
            memset(y, 0, (size_t)ni * sizeof *y);
            for (int o = 0; o < n; o++) {
                if (a[o] == 0.0) continue;
                const double *Wr = L->W + (size_t)o * (size_t)ni;
                for (int i = 0; i < ni; i++) y[i] += a[o] * fabs(Wr[i]);
            }
        }
        return;
    }
    if (m == 1)
        cblas_dgemv(CblasRowMajor, CblasTrans, n, ni, 1.0, L->W, ni, A, 1, 0.0, Y, 1);
    else
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, ni, n, 1.0, A, n, L->W, ni, 0.0, Y, ni);
}

int lg_layer_row_cap(const lg_layer *L)
{
    if (L->kind == LG_LAYER_CONV2D) return L->conv.c_in * L->conv.kh * L->conv.kw;
    return L->n_in;
}

int lg_layer_row_nz(const lg_layer *L, int o, int *idx, double *w)
{
    if (L->kind != LG_LAYER_CONV2D) {
        const double *Wr = L->W + (size_t)o * (size_t)L->n_in;
        for (int i = 0; i < L->n_in; i++) {
            idx[i] = i;
            w[i] = Wr[i];
        }
        return L->n_in;
    }
    const lg_conv *c = &L->conv;
    int hw_out = c->h_out * c->w_out, co = o / hw_out, oy = (o % hw_out) / c->w_out, ox = o % c->w_out;
    int y0 = oy * c->sh - c->ph, x0 = ox * c->sw - c->pw, n = 0;
    for (int ci = 0; ci < c->c_in; ci++)
        for (int ky = 0; ky < c->kh; ky++) {
            int iy = y0 + ky;
            if (iy < 0 || iy >= c->h_in) continue;
            for (int kx = 0; kx < c->kw; kx++) {
                int ix = x0 + kx;
                if (ix < 0 || ix >= c->w_in) continue;
                idx[n] = (ci * c->h_in + iy) * c->w_in + ix;
                w[n++] = L->W[(((size_t)co * (size_t)c->c_in + (size_t)ci) * (size_t)c->kh + (size_t)ky) * (size_t)c->kw +
                              (size_t)kx];
            }
        }
    return n;
}

const double *lg_layer_row(const lg_layer *L, int o, double *row)
{
    if (L->kind != LG_LAYER_CONV2D) return L->W + (size_t)o * (size_t)L->n_in;
    const lg_conv *c = &L->conv;
    memset(row, 0, (size_t)L->n_in * sizeof *row);
    int hw_out = c->h_out * c->w_out, co = o / hw_out, oy = (o % hw_out) / c->w_out, ox = o % c->w_out;
    int y0 = oy * c->sh - c->ph, x0 = ox * c->sw - c->pw;
    for (int ci = 0; ci < c->c_in; ci++)
        for (int ky = 0; ky < c->kh; ky++) {
            int iy = y0 + ky;
            if (iy < 0 || iy >= c->h_in) continue;
            for (int kx = 0; kx < c->kw; kx++) {
                int ix = x0 + kx;
                if (ix < 0 || ix >= c->w_in) continue;
                row[(ci * c->h_in + iy) * c->w_in + ix] =
                    L->W[(((size_t)co * (size_t)c->c_in + (size_t)ci) * (size_t)c->kh + (size_t)ky) * (size_t)c->kw +
                         (size_t)kx];
            }
        }
    return row;
}
