/* linop.c — a layer's W applied through its structure (linop.h). */
#include "core/linop.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* y[ci][iy][ix] += the entries of col that lg_conv_im2col would read from there. */
static void lg_lo_col2im(const lg_conv *c, const double *col, double *y)
{
    size_t hw = (size_t)c->h_out * (size_t)c->w_out;
    for (int ci = 0; ci < c->c_in; ci++)
        for (int ky = 0; ky < c->kh; ky++)
            for (int kx = 0; kx < c->kw; kx++) {
                const double *row = col + ((size_t)(ci * c->kh + ky) * (size_t)c->kw + (size_t)kx) * hw;
                double *img = y + (size_t)ci * (size_t)c->h_in * (size_t)c->w_in;
                for (int oy = 0; oy < c->h_out; oy++) {
                    int iy = oy * c->sh - c->ph + ky;
                    if (iy < 0 || iy >= c->h_in) continue;
                    const double *d = row + (size_t)oy * (size_t)c->w_out;
                    for (int ox = 0; ox < c->w_out; ox++) {
                        int ix = ox * c->sw - c->pw + kx;
                        if (ix >= 0 && ix < c->w_in) img[(size_t)iy * c->w_in + ix] += d[ox];
                    }
                }
            }
}

/* Scratch of the BLAS path: col [K][hw] and, for absw, |kernel|; NULL when
 * out of memory (the caller falls back to the direct loops). */
static double *lg_lo_scratch(const lg_conv *c, const double *W, int absw)
{
    size_t K = (size_t)c->c_in * (size_t)c->kh * (size_t)c->kw, hw = (size_t)c->h_out * (size_t)c->w_out;
    size_t nk = absw ? (size_t)c->c_out * K : 0;
    double *s = malloc((K * hw + nk + 1) * sizeof *s);
    if (s && absw)
        for (size_t i = 0; i < nk; i++) s[K * hw + i] = fabs(W[i]);
    return s;
}

/* Kernels with fewer weights per output (c_in·kh·kw) than this run as direct
 * loops, which also skip the zero entries of the rows: faster than im2col and
 * a dgemm there (measured on 1- and 8-channel 3x3 convs). */
#define LG_LO_BLAS_K 32

static int lg_lo_finite(const double *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i])) return 0;
    return 1;
}

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

/* Y[r][o] (+)= Σ_i |W[o][i]|·X[r][i] for rows r of X[rows][ni], W[no][ni]:
 * the direct loop, which skips zero weights (0·∞ when X is not finite). */
static void lg_lo_absw_rows(const double *W, int no, int ni, int rows, const double *X, double *Y, int accumulate)
{
    for (int r = 0; r < rows; r++) {
        const double *x = X + (size_t)r * (size_t)ni;
        double *y = Y + (size_t)r * (size_t)no;
        for (int o = 0; o < no; o++) {
            const double *Wr = W + (size_t)o * (size_t)ni;
            double s = 0.0;
            for (int i = 0; i < ni; i++)
                if (Wr[i] != 0.0) s += fabs(Wr[i]) * x[i]; /* 0·∞ */
            y[o] = accumulate ? y[o] + s : s;
        }
    }
}

/* Y[r][i] = Σ_o A[r][o]·|W[o][i]| for rows r of A[rows][no]: the transpose's direct loop. */
static void lg_lo_absw_rows_t(const double *W, int no, int ni, int rows, const double *A, double *Y)
{
    for (int r = 0; r < rows; r++) {
        const double *a = A + (size_t)r * (size_t)no;
        double *y = Y + (size_t)r * (size_t)ni;
        memset(y, 0, (size_t)ni * sizeof *y);
        for (int o = 0; o < no; o++) {
            if (a[o] == 0.0) continue;
            const double *Wr = W + (size_t)o * (size_t)ni;
            for (int i = 0; i < ni; i++) y[i] += a[o] * fabs(Wr[i]);
        }
    }
}

/* A per-token map as one product over every token of every row: X[m·T][bi]
 * times the block's transpose (core/net.h LG_LAYER_TOKMAP), |block| when
 * absw (a copy; the direct loops, which skip zero weights, when x is not
 * finite or the copy cannot be allocated). Each sum has bi ≤ n_in terms. */
static void lg_tokmap_mul(const lg_linear *L, int m, const double *X, double *Y, int absw, int accumulate)
{
    int T = L->conv.h_in, bi = L->conv.c_in, bo = L->conv.c_out, rows = m * T;
    const double *W = L->W;
    double *aw = NULL;
    if (absw) {
        aw = lg_lo_finite(X, (size_t)m * (size_t)L->n_in) ? malloc((size_t)bo * (size_t)bi * sizeof *aw) : NULL;
        if (!aw) {
            lg_lo_absw_rows(W, bo, bi, rows, X, Y, accumulate);
            return;
        }
        for (size_t i = 0; i < (size_t)bo * (size_t)bi; i++) aw[i] = fabs(W[i]);
        W = aw;
    }
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, bo, bi, 1.0, X, bi, W, bi, accumulate ? 1.0 : 0.0, Y,
                bo);
    free(aw);
}

/* Y[m·T][bi] = A[m·T][bo]·block (|block| when absw): the transpose, token by token. */
static void lg_tokmap_mul_t(const lg_linear *L, int m, const double *A, double *Y, int absw)
{
    int T = L->conv.h_in, bi = L->conv.c_in, bo = L->conv.c_out, rows = m * T;
    const double *W = L->W;
    double *aw = NULL;
    if (absw) {
        aw = malloc((size_t)bo * (size_t)bi * sizeof *aw);
        if (!aw) {
            lg_lo_absw_rows_t(W, bo, bi, rows, A, Y);
            return;
        }
        for (size_t i = 0; i < (size_t)bo * (size_t)bi; i++) aw[i] = fabs(W[i]);
        W = aw;
    }
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, bi, bo, 1.0, A, bo, W, bi, 0.0, Y, bi);
    free(aw);
}

void lg_linear_mul(const lg_linear *L, int m, const double *X, double *Y, int absw, int accumulate)
{
    int n = L->n_out, ni = L->n_in;
    if (L->kind == LG_LAYER_TOKMAP) {
        lg_tokmap_mul(L, m, X, Y, absw, accumulate);
        return;
    }
    if (L->kind == LG_LAYER_INDEX) {
        /* y[o] = x[map[o]], 0 where map[o] < 0; |W| = W (entries 0 or 1) */
        for (int r = 0; r < m; r++) {
            const double *x = X + (size_t)r * (size_t)ni;
            double *y = Y + (size_t)r * (size_t)n;
            for (int o = 0; o < n; o++) {
                double v = L->map[o] >= 0 ? x[L->map[o]] : 0.0;
                y[o] = accumulate ? y[o] + v : v;
            }
        }
        return;
    }
    if (L->kind == LG_LAYER_CONV2D) {
        /* per image: Y[c_out][hw] = kernel[c_out][K]·im2col(x)[K][hw] (one dgemm); the direct
         * loops when out of memory, or with |W| when x is not finite (they skip zero weights) */
        const lg_conv *c = &L->conv;
        int K = c->c_in * c->kh * c->kw, hw = c->h_out * c->w_out;
        double *sc = K < LG_LO_BLAS_K || (absw && !lg_lo_finite(X, (size_t)m * (size_t)ni)) ? NULL
                                                                                         : lg_lo_scratch(c, L->W, absw);
        for (int r = 0; r < m; r++) {
            const double *x = X + (size_t)r * (size_t)ni;
            double *y = Y + (size_t)r * (size_t)n;
            if (!sc) {
                lg_conv_mul1(c, L->W, x, y, absw, accumulate);
                continue;
            }
            lg_conv_im2col(c, x, sc);
            cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, c->c_out, hw, K, 1.0,
                        absw ? sc + (size_t)K * (size_t)hw : L->W, K, sc, hw, accumulate ? 1.0 : 0.0, y, hw);
        }
        free(sc);
        return;
    }
    if (absw) {
        lg_lo_absw_rows(L->W, n, ni, m, X, Y, accumulate);
        return;
    }
    double beta = accumulate ? 1.0 : 0.0;
    if (m == 1)
        cblas_dgemv(CblasRowMajor, CblasNoTrans, n, ni, 1.0, L->W, ni, X, 1, beta, Y, 1);
    else
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, ni, 1.0, X, ni, L->W, ni, beta, Y, n);
}

void lg_linear_mul_t(const lg_linear *L, int m, const double *A, double *Y, int absw)
{
    int n = L->n_out, ni = L->n_in;
    if (L->kind == LG_LAYER_TOKMAP) {
        lg_tokmap_mul_t(L, m, A, Y, absw);
        return;
    }
    if (L->kind == LG_LAYER_INDEX) {
        /* y[i] = Σ_{o: map[o] = i} a[o] */
        for (int r = 0; r < m; r++) {
            const double *a = A + (size_t)r * (size_t)n;
            double *y = Y + (size_t)r * (size_t)ni;
            memset(y, 0, (size_t)ni * sizeof *y);
            for (int o = 0; o < n; o++)
                if (L->map[o] >= 0) y[L->map[o]] += a[o];
        }
        return;
    }
    if (L->kind == LG_LAYER_CONV2D) {
        /* per row: col[K][hw] = kernelᵀ[K][c_out]·a[c_out][hw] (one dgemm), then col2im */
        const lg_conv *c = &L->conv;
        int K = c->c_in * c->kh * c->kw, hw = c->h_out * c->w_out;
        double *sc = K < LG_LO_BLAS_K ? NULL : lg_lo_scratch(c, L->W, absw);
        for (int r = 0; r < m; r++) {
            const double *a = A + (size_t)r * (size_t)n;
            double *y = Y + (size_t)r * (size_t)ni;
            if (!sc) {
                lg_conv_mul1_t(c, L->W, a, y, absw);
                continue;
            }
            cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, K, hw, c->c_out, 1.0,
                        absw ? sc + (size_t)K * (size_t)hw : L->W, K, a, hw, 0.0, sc, hw);
            memset(y, 0, (size_t)ni * sizeof *y);
            lg_lo_col2im(c, sc, y);
        }
        free(sc);
        return;
    }
    if (absw) {
        lg_lo_absw_rows_t(L->W, n, ni, m, A, Y);
        return;
    }
    if (m == 1)
        cblas_dgemv(CblasRowMajor, CblasTrans, n, ni, 1.0, L->W, ni, A, 1, 0.0, Y, 1);
    else
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, ni, n, 1.0, A, n, L->W, ni, 0.0, Y, ni);
}

int lg_linear_row_cap(const lg_linear *L)
{
    if (L->kind == LG_LAYER_INDEX) return 1;
    if (L->kind == LG_LAYER_CONV2D) return L->conv.c_in * L->conv.kh * L->conv.kw;
    if (L->kind == LG_LAYER_TOKMAP) return L->conv.c_in;
    return L->n_in;
}

int lg_net_row_alloc(const lg_net *net, int **idx, double **w)
{
    int cap = 1;
    for (int k = 0; k < net->n_layers; k++)
        for (int t = 0; t < lg_layer_n_lin(&net->layers[k]); t++)
            if (lg_linear_row_cap(lg_layer_lin(&net->layers[k], t)) > cap)
                cap = lg_linear_row_cap(lg_layer_lin(&net->layers[k], t));
    *idx = malloc((size_t)cap * sizeof **idx);
    *w = malloc((size_t)cap * sizeof **w);
    if (*idx && *w) return 0;
    free(*idx);
    free(*w);
    *idx = NULL;
    *w = NULL;
    return -1;
}

int lg_linear_row_nz(const lg_linear *L, int o, int *idx, double *w)
{
    if (L->kind == LG_LAYER_INDEX) {
        if (L->map[o] < 0) return 0;
        idx[0] = L->map[o];
        w[0] = 1.0;
        return 1;
    }
    if (L->kind == LG_LAYER_TOKMAP) { /* token t = o / bo reads inputs t·bi .. t·bi + bi − 1 */
        int bi = L->conv.c_in, bo = L->conv.c_out, t = o / bo;
        const double *Wr = L->W + (size_t)(o % bo) * (size_t)bi;
        for (int i = 0; i < bi; i++) {
            idx[i] = t * bi + i;
            w[i] = Wr[i];
        }
        return bi;
    }
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

const double *lg_linear_row(const lg_linear *L, int o, double *row)
{
    if (L->kind == LG_LAYER_INDEX) {
        memset(row, 0, (size_t)L->n_in * sizeof *row);
        if (L->map[o] >= 0) row[L->map[o]] = 1.0;
        return row;
    }
    if (L->kind == LG_LAYER_TOKMAP) {
        int bi = L->conv.c_in, bo = L->conv.c_out, t = o / bo;
        memset(row, 0, (size_t)L->n_in * sizeof *row);
        memcpy(row + (size_t)t * (size_t)bi, L->W + (size_t)(o % bo) * (size_t)bi, (size_t)bi * sizeof *row);
        return row;
    }
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

void lg_layer_mul(const lg_layer *L, int m, const double *X, double *Y, int absw, int accumulate)
{
    lg_linear_mul(&L->lin, m, X, Y, absw, accumulate);
}
void lg_layer_mul_t(const lg_layer *L, int m, const double *A, double *Y, int absw) { lg_linear_mul_t(&L->lin, m, A, Y, absw); }
int lg_layer_row_cap(const lg_layer *L) { return lg_linear_row_cap(&L->lin); }
int lg_layer_row_nz(const lg_layer *L, int o, int *idx, double *w) { return lg_linear_row_nz(&L->lin, o, idx, w); }
const double *lg_layer_row(const lg_layer *L, int o, double *row) { return lg_linear_row(&L->lin, o, row); }
