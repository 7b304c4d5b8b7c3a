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
static void lg_alpha_grad(const lg_bounds *b, const lg_net *net, const double *alpha, const double *lam,
                          const double *ain, double *grad, double *g, double *h)
{
    memset(grad, 0, (size_t)lg_alpha_size(net) * sizeof *grad);
    for (int i = 0; i < net->n_in; i++) g[i] = ain[i] >= 0.0 ? b->xlo[i] : b->xhi[i];
    for (int l = 0; l < net->n_layers; l++) {
        const lg_layer *Ly = &net->layers[l];
        int n = Ly->n_out, ni = Ly->n_in, off = lg_alpha_offset(net, l);
        /* h[n] = W_ℓ[n][ni]·g[ni] + b_ℓ : gradient w.r.t. the relaxed coefficients */
        memcpy(h, Ly->b, (size_t)n * sizeof *h);
        cblas_dgemv(CblasRowMajor, CblasNoTrans, n, ni, 1.0, Ly->W, ni, g, 1, 1.0, h, 1);
        if (Ly->act == LG_ACT_RELU) {
            for (int j = 0; j < n; j++) {
                double a = lam[off + j], lo = b->lo[l][j], hi = b->hi[l][j];
                lg_relu_lines ln;
                lg_relax_relu_lines(lo, hi, alpha ? alpha[off + j] : lg_relax_alpha_default(lo, hi), &ln);
                if (ln.phase == LG_RELU_ACTIVE) continue;
                if (ln.phase == LG_RELU_INACTIVE) {
                    h[j] = 0.0;
                } else if (a >= 0.0) { /* coef = λ·α */
                    grad[off + j] = h[j] * a;
                    h[j] *= ln.lo_s;
                } else { /* coef = λ·s, intercept −λ·s·x0 */
                    h[j] = h[j] * ln.up_s - ln.up_s * ln.up_x0;
                }
            }
        }
        double *sw = g;
        g = h;
        h = sw;
    }
}

lg_status lg_alpha_bound(const lg_bounds *b, const lg_net *net, int m, const double *C, const double *d,
                         const double *alpha, double *out, double *Ain, double *lam, double *grad)
{
    lg_status st = lg_bounds_check_net(net);
    if (st != LG_OK) return st;
    if (m < 1) return LG_OK;
    size_t size = (size_t)lg_alpha_size(net), w = (size_t)lg_net_max_width(net), no = (size_t)lg_net_n_out(net);
    size_t n_in = (size_t)net->n_in;
    /* one row at a time (dgemv), exactly as lg_alpha_optimize computes it,
     * so an optimised bound is never below this one by rounding */
    lg_backsub s;
    if ((st = lg_backsub_init(&s, b, net, 1)) != LG_OK) return st;
    /* g, h [w]; lam, ain of one row [size], [n_in] */
    double *buf = malloc((2 * w + size + n_in) * sizeof *buf);
    if (!buf) {
        lg_backsub_free(&s);
        return lg_fail(LG_ERR_NOMEM, "alpha: out of memory");
    }
    for (int r = 0; r < m; r++) {
        size_t ro = (size_t)r * size;
        double *lm = lam ? lam + ro : buf + 2 * w, *ai = Ain ? Ain + (size_t)r * n_in : buf + 2 * w + size;
        const double *al = alpha ? alpha + ro : NULL;
        memcpy(s.A, C + (size_t)r * no, no * sizeof *s.A);
        s.c[0] = d[r];
        lg_backsub_lower(&s, net->n_layers - 1, 1, al, lm, size, ai, &out[r]);
        if (grad) lg_alpha_grad(b, net, al, lm, ai, grad + ro, buf, buf + w);
    }
    free(buf);
    lg_backsub_free(&s);
    return LG_OK;
}

lg_status lg_alpha_optimize(const lg_bounds *b, const lg_net *net, int m, const double *C, const double *d, int steps,
                            double lr, double deadline, double *alpha, double *out, double *Ain)
{
    lg_status st = lg_bounds_check_net(net);
    if (st != LG_OK) return st;
    size_t size = (size_t)lg_alpha_size(net), w = (size_t)lg_net_max_width(net), no = (size_t)lg_net_n_out(net);
    size_t n_in = (size_t)net->n_in;
    lg_backsub s;
    if ((st = lg_backsub_init(&s, b, net, 1)) != LG_OK) return st;
    /* cur, nxt [w]; lam, grad, a, best, m1, m2 [size]; ain [n_in] */
    double *buf = malloc((2 * w + 6 * size + n_in) * sizeof *buf);
    if (!buf) {
        lg_backsub_free(&s);
        return lg_fail(LG_ERR_NOMEM, "alpha: out of memory");
    }
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
            double v;
            memcpy(s.A, Cr, no * sizeof *s.A);
            s.c[0] = d[r];
            lg_backsub_lower(&s, net->n_layers - 1, 1, a, lam, size, ain, &v);
            if (it < steps) lg_alpha_grad(b, net, a, lam, ain, grad, cur, nxt);
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
    lg_backsub_free(&s);
    return LG_OK;
}
