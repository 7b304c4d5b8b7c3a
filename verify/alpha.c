/* alpha.c — objective bounds with explicit lower slopes and their
 * projected-gradient optimisation (alpha.h).
 *
 * One row at a time: the coefficient vector A over the post-activations of
 * layer ℓ is relaxed through the ReLU (lower slope α if A_j > 0, the upper
 * chord s = u/(u−l) with intercept −s·l if A_j < 0), then pushed through
 * z_ℓ = W_ℓ a_{ℓ−1} + b_ℓ (dgemv) down to the normalised input box, where
 * the minimum of A·x' + c sits at a corner. The gradient with respect to α
 * is the reverse pass of these linear steps with the corner and the signs
 * held fixed (they are piecewise constant in α).
 */
#include "verify/alpha.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int lg_alpha_size(const lg_net *net)
{
    int n = 0;
    for (int k = 0; k < net->n_layers; k++) n += net->layers[k].n_out;
    return n;
}

int lg_alpha_offset(const lg_net *net, int k)
{
    int n = 0;
    for (int l = 0; l < k; l++) n += net->layers[l].n_out;
    return n;
}

void lg_alpha_default(const lg_bounds *b, const lg_net *net, int m, double *alpha)
{
    int size = lg_alpha_size(net);
    for (int k = 0, off = 0; k < net->n_layers; off += net->layers[k].n_out, k++)
        for (int j = 0; j < net->layers[k].n_out; j++) alpha[off + j] = b->hi[k][j] > -b->lo[k][j] ? 1.0 : 0.0;
    for (int r = 1; r < m; r++) memcpy(alpha + (size_t)r * (size_t)size, alpha, (size_t)size * sizeof *alpha);
}

/* One row: out, Ain [n_in], lam [size] (always filled: needed for grad),
 * grad [size] or NULL. cur/nxt: [max width] scratch. */
static double lg_alpha_row(const lg_bounds *b, const lg_net *net, const double *Crow, double d, const double *alpha,
                           double *Ain, double *lam, double *grad, double *cur, double *nxt)
{
    int L = net->n_layers, no = lg_net_n_out(net);
    double c = d, ca = fabs(d), nterms = 0;
    memcpy(cur, Crow, (size_t)no * sizeof *cur);
    for (int l = L - 1; l >= 0; l--) {
        const lg_layer *Ly = &net->layers[l];
        int n = Ly->n_out, ni = Ly->n_in, off = lg_alpha_offset(net, l);
        const double *zl = b->lo[l], *zh = b->hi[l];
        memcpy(lam + off, cur, (size_t)n * sizeof *cur);
        if (Ly->act == LG_ACT_RELU) {
            for (int j = 0; j < n; j++) {
                double a = cur[j], lo = zl[j], hi = zh[j];
                if (a == 0.0 || lo >= 0.0) continue;
                if (hi <= 0.0) {
                    cur[j] = 0.0;
                } else if (a > 0.0) {
                    double s = alpha ? alpha[off + j] : (hi > -lo ? 1.0 : 0.0);
                    cur[j] = a * s; /* a ≥ α·z */
                } else {
                    double s = hi / (hi - lo), t = -a * s * lo; /* a ≤ s·(z − l) */
                    cur[j] = a * s;
                    c += t;
                    ca += fabs(t);
                }
            }
        }
        for (int j = 0; j < n; j++) {
            double t = cur[j] * Ly->b[j];
            c += t;
            ca += fabs(t);
        }
        /* nxt[ni] = cur[n] · W_ℓ[n][ni] */
        cblas_dgemv(CblasRowMajor, CblasTrans, n, ni, 1.0, Ly->W, ni, cur, 1, 0.0, nxt, 1);
        double *sw = cur;
        cur = nxt;
        nxt = sw;
        nterms += n + 2;
    }
    double v = c, mass = ca;
    for (int i = 0; i < net->n_in; i++) {
        double p = cur[i] * b->xlo[i], q = cur[i] * b->xhi[i];
        v += fmin(p, q);
        mass += fmax(fabs(p), fabs(q));
    }
    if (Ain) memcpy(Ain, cur, (size_t)net->n_in * sizeof *Ain);
    double out = v - lg_bounds_margin(v, mass, nterms + net->n_in);
    if (!grad) return out;
    /* reverse pass: g = ∂v/∂(coefficients at the current level) */
    memset(grad, 0, (size_t)lg_alpha_size(net) * sizeof *grad);
    for (int i = 0; i < net->n_in; i++) nxt[i] = cur[i] >= 0.0 ? b->xlo[i] : b->xhi[i];
    double *g = nxt, *h = cur;
    for (int l = 0; l < L; l++) {
        const lg_layer *Ly = &net->layers[l];
        int n = Ly->n_out, ni = Ly->n_in, off = lg_alpha_offset(net, l);
        /* h[n] = W_ℓ[n][ni]·g[ni] + b_ℓ : gradient w.r.t. the relaxed coefficients */
        memcpy(h, Ly->b, (size_t)n * sizeof *h);
        cblas_dgemv(CblasRowMajor, CblasNoTrans, n, ni, 1.0, Ly->W, ni, g, 1, 1.0, h, 1);
        if (Ly->act == LG_ACT_RELU) {
            for (int j = 0; j < n; j++) {
                double a = lam[off + j], lo = b->lo[l][j], hi = b->hi[l][j];
                if (lo >= 0.0) continue;
                if (hi <= 0.0) {
                    h[j] = 0.0;
                } else if (a >= 0.0) {
                    double s = alpha ? alpha[off + j] : (hi > -lo ? 1.0 : 0.0);
                    grad[off + j] = h[j] * a;
                    h[j] *= s;
                } else {
                    double s = hi / (hi - lo);
                    h[j] = h[j] * s - s * lo;
                }
            }
        }
        double *sw = g;
        g = h;
        h = sw;
    }
    return out;
}

lg_status lg_alpha_bound(const lg_bounds *b, const lg_net *net, int m, const double *C, const double *d,
                         const double *alpha, double *out, double *Ain, double *lam, double *grad)
{
    lg_status st = lg_bounds_check_net(net);
    if (st != LG_OK) return st;
    size_t size = (size_t)lg_alpha_size(net), w = (size_t)lg_net_max_width(net), no = (size_t)lg_net_n_out(net);
    double *buf = malloc((2 * w + size) * sizeof *buf);
    if (!buf) return lg_fail(LG_ERR_NOMEM, "alpha: out of memory");
    double *cur = buf, *nxt = buf + w, *lam_tmp = buf + 2 * w;
    for (int r = 0; r < m; r++) {
        size_t ro = (size_t)r * size;
        out[r] = lg_alpha_row(b, net, C + (size_t)r * no, d[r], alpha ? alpha + ro : NULL,
                              Ain ? Ain + (size_t)r * (size_t)net->n_in : NULL, lam ? lam + ro : lam_tmp,
                              grad ? grad + ro : NULL, cur, nxt);
    }
    free(buf);
    return LG_OK;
}

lg_status lg_alpha_optimize(const lg_bounds *b, const lg_net *net, int m, const double *C, const double *d, int steps,
                            double lr, double deadline, double *alpha, double *out, double *Ain)
{
    lg_status st = lg_bounds_check_net(net);
    if (st != LG_OK) return st;
    size_t size = (size_t)lg_alpha_size(net), w = (size_t)lg_net_max_width(net), no = (size_t)lg_net_n_out(net);
    size_t n_in = (size_t)net->n_in;
    /* cur, nxt [w]; lam, grad, a, best, m1, m2 [size]; ain [n_in] */
    double *buf = malloc((2 * w + 6 * size + n_in) * sizeof *buf);
    if (!buf) return lg_fail(LG_ERR_NOMEM, "alpha: out of memory");
    double *cur = buf, *nxt = cur + w, *lam = nxt + w, *grad = lam + size, *a = grad + size, *best = a + size;
    double *m1 = best + size, *m2 = m1 + size, *ain = m2 + size;
    const double b1 = 0.9, b2 = 0.999;
    for (int r = 0; r < m; r++) {
        double *al = alpha + (size_t)r * size;
        const double *Cr = C + (size_t)r * no;
        memcpy(a, al, size * sizeof *a);
        memset(m1, 0, 2 * size * sizeof *m1);
        double bestv = -INFINITY, p1 = 1, p2 = 1;
        for (int it = 0; it <= steps; it++) {
            double v = lg_alpha_row(b, net, Cr, d[r], a, ain, lam, it < steps ? grad : NULL, cur, nxt);
            if (v > bestv || it == 0) {
                bestv = v;
                memcpy(best, a, size * sizeof *a);
                if (Ain) memcpy(Ain + (size_t)r * n_in, ain, n_in * sizeof *ain);
            }
            if (it == steps || (deadline > 0 && lg_bounds_now() >= deadline)) break;
            p1 *= b1;
            p2 *= b2;
            for (size_t j = 0; j < size; j++) {
                if (grad[j] == 0.0 && m1[j] == 0.0) continue;
                m1[j] = b1 * m1[j] + (1 - b1) * grad[j];
                m2[j] = b2 * m2[j] + (1 - b2) * grad[j] * grad[j];
                double step = lr * (m1[j] / (1 - p1)) / (sqrt(m2[j] / (1 - p2)) + 1e-12);
                double x = a[j] + step; /* ascent: maximise the bound */
                a[j] = x < 0 ? 0 : x > 1 ? 1 : x;
            }
        }
        memcpy(al, best, size * sizeof *al);
        out[r] = bestv;
    }
    free(buf);
    return LG_OK;
}
