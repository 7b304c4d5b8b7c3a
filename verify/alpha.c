/* alpha.c — objective bounds with explicit lower slopes and their
 * projected-gradient optimisation (alpha.h).
 *
 * The bound is the one back-substitution of backsub.h with the lower slope
 * of each unstable ReLU taken from α (relax.h: the ReLU relaxation lives
 * there and only there), so its floating-point soundness is the same. The
 * gradient with respect to α is the reverse pass of the linear steps with
 * the corner and the signs held fixed (they are piecewise constant in α).
 */
#include "verify/alpha.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "verify/backsub.h"
#include "verify/relax.h"

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
        for (int j = 0; j < net->layers[k].n_out; j++) alpha[off + j] = lg_relax_alpha_default(b->lo[k][j], b->hi[k][j]);
    for (int r = 1; r < m; r++) memcpy(alpha + (size_t)r * (size_t)size, alpha, (size_t)size * sizeof *alpha);
}

/* ∂out/∂alpha of one row (grad [size]) from the coefficients lam [size]
 * recorded by the back-substitution and the final ones ain [n_in]: the
 * reverse pass of its linear steps with the corner and the signs held fixed.
 * g, h: [max width] scratch. The rounding terms are left out (they are
 * ~1e-16 of the bound and only steer the ascent). */
static void lg_alpha_grad(const lg_bounds *b, const lg_net *net, const double *alpha, const signed char *sign,
                          const double *lam, const double *ain, double *grad, double *gbeta, double *g, double *h)
{
    memset(grad, 0, (size_t)lg_alpha_size(net) * sizeof *grad);
    if (gbeta) memset(gbeta, 0, (size_t)lg_alpha_size(net) * sizeof *gbeta);
    for (int i = 0; i < net->n_in; i++) g[i] = ain[i] >= 0.0 ? b->xlo[i] : b->xhi[i];
    for (int l = 0; l < net->n_layers; l++) {
        const lg_layer *Ly = &net->layers[l];
        int n = Ly->n_out, ni = Ly->n_in, off = lg_alpha_offset(net, l);
        /* h[n] = W_ℓ[n][ni]·g[ni] + b_ℓ : gradient w.r.t. the relaxed coefficients */
        memcpy(h, Ly->b, (size_t)n * sizeof *h);
        cblas_dgemv(CblasRowMajor, CblasNoTrans, n, ni, 1.0, Ly->W, ni, g, 1, 1.0, h, 1);
        /* ∂/∂β_j: the coefficient of z_ℓ[j] moved by σ_j·β_j */
        if (sign && gbeta)
            for (int j = 0; j < n; j++)
                if (sign[off + j]) gbeta[off + j] = sign[off + j] * h[j];
        if (Ly->act == LG_ACT_RELU) {
            for (int j = 0; j < n; j++) {
                double a = lam[off + j], lo = b->lo[l][j], hi = b->hi[l][j];
                lg_relu_lines ln = {.phase = lg_relax_phase(lo, hi)}; /* the lines of relax.h, built lazily */
                if (ln.phase == LG_RELU_ACTIVE) continue;
                if (ln.phase == LG_RELU_INACTIVE) {
                    h[j] = 0.0;
                } else if (a >= 0.0) { /* coef = λ·α */
                    lg_relax_set_alpha(&ln, alpha ? alpha[off + j] : lg_relax_alpha_default(lo, hi));
                    grad[off + j] = h[j] * a;
                    h[j] *= ln.lo_s;
                } else { /* coef = λ·s, intercept −λ·s·l */
                    double s = lg_relax_chord(lo, hi);
                    h[j] = h[j] * s - s * lo;
                }
            }
        }
        double *sw = g;
        g = h;
        h = sw;
    }
}

/* zadd[size] = σ·max(β, 0) (NaN → 0): the terms lg_backsub_lower_beta adds. */
static void lg_alpha_zadd(size_t size, const signed char *sign, const double *beta, double *zadd)
{
    for (size_t j = 0; j < size; j++) zadd[j] = sign[j] && beta[j] > 0.0 ? sign[j] * beta[j] : 0.0;
}

lg_status lg_alpha_bound(const lg_bounds *b, const lg_net *net, int m, const double *C, const double *d,
                         const double *alpha, double *out, double *Ain, double *lam, double *grad)
{
    return lg_alpha_bound_beta(b, net, m, C, d, alpha, NULL, NULL, out, Ain, lam, grad, NULL);
}

lg_status lg_alpha_bound_beta(const lg_bounds *b, const lg_net *net, int m, const double *C, const double *d,
                              const double *alpha, const signed char *sign, const double *beta, double *out,
                              double *Ain, double *lam, double *grad, double *gbeta)
{
    lg_status st = lg_bounds_check_net(net);
    if (st != LG_OK) return st;
    if (m < 1) return LG_OK;
    if (!beta) sign = NULL;
    size_t size = (size_t)lg_alpha_size(net), w = (size_t)lg_net_max_width(net), no = (size_t)lg_net_n_out(net);
    size_t n_in = (size_t)net->n_in;
    /* one row at a time (dgemv), exactly as lg_alpha_optimize computes it,
     * so an optimised bound is never below this one by rounding */
    lg_backsub s;
    if ((st = lg_backsub_init(&s, b, net, 1)) != LG_OK) return st;
    /* g, h [w]; lam, zadd of one row [size], ain [n_in] */
    double *buf = malloc((2 * w + 2 * size + n_in) * sizeof *buf);
    if (!buf) {
        lg_backsub_free(&s);
        return lg_fail(LG_ERR_NOMEM, "alpha: out of memory");
    }
    double *za = buf + 2 * w + size;
    for (int r = 0; r < m; r++) {
        size_t ro = (size_t)r * size;
        double *lm = lam ? lam + ro : buf + 2 * w, *ai = Ain ? Ain + (size_t)r * n_in : za + size;
        const double *al = alpha ? alpha + ro : NULL;
        if (sign) lg_alpha_zadd(size, sign, beta + ro, za);
        memcpy(s.A, C + (size_t)r * no, no * sizeof *s.A);
        s.c[0] = d[r];
        lg_backsub_lower_beta(&s, net->n_layers - 1, 1, al, sign ? za : NULL, lm, size, ai, &out[r]);
        if (grad || gbeta) {
            double *gr = grad ? grad + ro : za; /* za is no longer needed */
            lg_alpha_grad(b, net, al, sign, lm, ai, gr, gbeta && sign ? gbeta + ro : NULL, buf, buf + w);
        }
        if (gbeta && !sign) memset(gbeta + ro, 0, size * sizeof *gbeta);
    }
    free(buf);
    lg_backsub_free(&s);
    return LG_OK;
}

lg_status lg_alpha_optimize(const lg_bounds *b, const lg_net *net, int m, const double *C, const double *d, int steps,
                            double lr, const lg_runctx *run, double *alpha, double *out, double *Ain)
{
    return lg_alpha_optimize_beta(b, net, m, C, d, NULL, steps, lr, run, alpha, NULL, out, Ain);
}

lg_status lg_alpha_optimize_beta(const lg_bounds *b, const lg_net *net, int m, const double *C, const double *d,
                                 const signed char *sign, int steps, double lr, const lg_runctx *run, double *alpha,
                                 double *beta, double *out, double *Ain)
{
    lg_status st = lg_bounds_check_net(net);
    if (st != LG_OK) return st;
    if (!beta) sign = NULL;
    size_t size = (size_t)lg_alpha_size(net), w = (size_t)lg_net_max_width(net), no = (size_t)lg_net_n_out(net);
    size_t n_in = (size_t)net->n_in, np = sign ? 2 * size : size; /* parameters: α, then β */
    lg_backsub s;
    if ((st = lg_backsub_init(&s, b, net, 1)) != LG_OK) return st;
    /* cur, nxt [w]; lam, zadd [size]; grad, p, best, m1, m2 [np]; ain [n_in] */
    double *buf = malloc((2 * w + 2 * size + 5 * np + n_in) * sizeof *buf);
    if (!buf) {
        lg_backsub_free(&s);
        return lg_fail(LG_ERR_NOMEM, "alpha: out of memory");
    }
    double *cur = buf, *nxt = cur + w, *lam = nxt + w, *za = lam + size, *grad = za + size, *a = grad + np;
    double *best = a + np, *m1 = best + np, *m2 = m1 + np, *ain = m2 + np;
    const double b1 = 0.9, b2 = 0.999;
    for (int r = 0; r < m; r++) {
        double *al = alpha + (size_t)r * size, *be = sign ? beta + (size_t)r * size : NULL;
        const double *Cr = C + (size_t)r * no;
        memcpy(a, al, size * sizeof *a);
        if (be)
            for (size_t j = 0; j < size; j++) a[size + j] = sign[j] && be[j] > 0.0 ? be[j] : 0.0;
        memset(m1, 0, 2 * np * sizeof *m1);
        double bestv = -INFINITY, p1 = 1, p2 = 1;
        for (int it = 0; it <= steps; it++) {
            double v;
            memcpy(s.A, Cr, no * sizeof *s.A);
            s.c[0] = d[r];
            if (be) lg_alpha_zadd(size, sign, a + size, za);
            lg_backsub_lower_beta(&s, net->n_layers - 1, 1, a, be ? za : NULL, lam, size, ain, &v);
            if (it < steps) lg_alpha_grad(b, net, a, sign, lam, ain, grad, be ? grad + size : NULL, cur, nxt);
            if (v > bestv || it == 0) {
                bestv = v;
                memcpy(best, a, np * sizeof *a);
                if (Ain) memcpy(Ain + (size_t)r * n_in, ain, n_in * sizeof *ain);
            }
            if (it == steps || (run && lg_runctx_expired(run))) break;
            p1 *= b1;
            p2 *= b2;
            for (size_t j = 0; j < np; j++) {
                if (grad[j] == 0.0 && m1[j] == 0.0) continue;
                m1[j] = b1 * m1[j] + (1 - b1) * grad[j];
                m2[j] = b2 * m2[j] + (1 - b2) * grad[j] * grad[j];
                double step = lr * (m1[j] / (1 - p1)) / (sqrt(m2[j] / (1 - p2)) + 1e-12);
                double x = a[j] + step; /* ascent: maximise the bound; α ∈ [0, 1], β ≥ 0 */
                a[j] = x < 0 ? 0 : (j < size && x > 1) ? 1 : x;
            }
        }
        memcpy(al, best, size * sizeof *al);
        if (be) memcpy(be, best + size, size * sizeof *be);
        out[r] = bestv;
    }
    free(buf);
    lg_backsub_free(&s);
    return LG_OK;
}
