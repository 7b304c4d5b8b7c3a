/* bounds_symbolic.c — DeepPoly/CROWN back-substitution (bounds.h).
 *
 * A batch of m linear functions A·a_ℓ + c over the post-activations of layer
 * ℓ is pushed back to the input: through the activation of layer ℓ with the
 * ReLU relaxations chosen per coefficient sign (lower bound wanted), then
 * through the affine map z_ℓ = W_ℓ·a_{ℓ−1} + b_ℓ (one dgemm), until it is a
 * function of the normalised input x', where it is minimised over the box.
 * Upper bounds are minus the lower bounds of −A, −c.
 */
#include "verify/bounds.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Lower bounds out[m] of A·a_level + c over the box of b.
 * A: [m][width(level)] (width(−1) = n_in), overwritten; tmp: same capacity
 * as A for the widest layer; c, cabs: [m], overwritten. */
static void lg_bounds_backsub(const lg_bounds *b, const lg_net *net, int level, int m, double *A, double *tmp,
                              double *c, double *cabs, double *out)
{
    double nterms = 0;
    for (int l = level; l >= 0; l--) {
        const lg_layer *L = &net->layers[l];
        int n = L->n_out, ni = L->n_in;
        const double *zl = b->lo[l], *zh = b->hi[l];
        for (int r = 0; r < m; r++) {
            double *Ar = A + (size_t)r * (size_t)n;
            double cr = c[r], ca = cabs[r];
            if (L->act == LG_ACT_RELU) {
                for (int j = 0; j < n; j++) {
                    double lam = Ar[j], lo = zl[j], hi = zh[j];
                    if (lam == 0.0 || lo >= 0.0) continue;
                    if (hi <= 0.0) {
                        Ar[j] = 0.0;
                    } else if (lam > 0.0) {
                        /* a ≥ α·z, α = 1 iff u > −l (area heuristic) */
                        if (!(hi > -lo)) Ar[j] = 0.0;
                    } else {
                        /* a ≤ s·(z − l), s = u/(u − l); λ < 0 ⇒ λa ≥ λs·z − λs·l */
                        double s = hi / (hi - lo);
                        double t = -lam * s * lo;
                        Ar[j] = lam * s;
                        cr += t;
                        ca += fabs(t);
                    }
                }
            }
            /* c += A·b_ℓ */
            for (int j = 0; j < n; j++) {
                double t = Ar[j] * L->b[j];
                cr += t;
                ca += fabs(t);
            }
            c[r] = cr;
            cabs[r] = ca;
        }
        /* tmp[m][ni] = A[m][n] · W_ℓ[n][ni] */
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, ni, n, 1.0, A, n, L->W, ni, 0.0, tmp, ni);
        memcpy(A, tmp, (size_t)m * (size_t)ni * sizeof *A);
        nterms += n + 2;
    }
    for (int r = 0; r < m; r++) {
        const double *Ar = A + (size_t)r * (size_t)net->n_in;
        double v = c[r], mass = cabs[r];
        for (int i = 0; i < net->n_in; i++) {
            double p = Ar[i] * b->xlo[i], q = Ar[i] * b->xhi[i];
            v += fmin(p, q);
            mass += fmax(fabs(p), fabs(q));
        }
        out[r] = v - lg_bounds_margin(v, mass, nterms + net->n_in);
    }
}

typedef struct lg_bs_scratch {
    double *A, *tmp, *c, *cabs, *out;
} lg_bs_scratch;

static lg_status lg_bs_alloc(lg_bs_scratch *s, const lg_net *net, int m)
{
    size_t w = (size_t)lg_net_max_width(net);
    size_t n = 2 * (size_t)m * w + 3 * (size_t)m;
    double *p = malloc(n * sizeof *p);
    if (!p) return lg_fail(LG_ERR_NOMEM, "bounds: cannot allocate %zu doubles for back-substitution", n);
    s->A = p;
    s->tmp = p + (size_t)m * w;
    s->c = s->tmp + (size_t)m * w;
    s->cabs = s->c + m;
    s->out = s->cabs + m;
    return LG_OK;
}

lg_status lg_bounds_symbolic(lg_bounds *b, const lg_net *net, const double *lo, const double *hi)
{
    lg_status st = lg_bounds_interval(b, net, lo, hi);
    if (st != LG_OK) return st;
    return lg_bounds_symbolic_from(b, net, 1); /* layer 0 is exact by interval */
}

lg_status lg_bounds_symbolic_from(lg_bounds *b, const lg_net *net, int k0)
{
    lg_bs_scratch s = {0};
    int m = lg_net_max_width(net);
    lg_status st = lg_bs_alloc(&s, net, m);
    if (st != LG_OK) return st;
    for (int k = k0 < 1 ? 1 : k0; k < net->n_layers; k++) {
        const lg_layer *L = &net->layers[k];
        size_t n = (size_t)L->n_out * (size_t)L->n_in;
        for (int sign = 0; sign < 2; sign++) {
            double g = sign ? -1.0 : 1.0;
            for (size_t i = 0; i < n; i++) s.A[i] = g * L->W[i];
            for (int o = 0; o < L->n_out; o++) {
                s.c[o] = g * L->b[o];
                s.cabs[o] = fabs(L->b[o]);
            }
            lg_bounds_backsub(b, net, k - 1, L->n_out, s.A, s.tmp, s.c, s.cabs, s.out);
            for (int o = 0; o < L->n_out; o++) {
                if (sign == 0 && s.out[o] > b->lo[k][o]) b->lo[k][o] = s.out[o];
                if (sign == 1 && -s.out[o] < b->hi[k][o]) b->hi[k][o] = -s.out[o];
            }
        }
    }
    free(s.A);
    return LG_OK;
}

lg_status lg_bounds_objective_lower(const lg_bounds *b, const lg_net *net, int m, const double *C, const double *d,
                                    double *out)
{
    lg_status st = lg_bounds_check_net(net);
    if (st != LG_OK) return st;
    if (m < 1) return LG_OK;
    lg_bs_scratch s = {0};
    if ((st = lg_bs_alloc(&s, net, m)) != LG_OK) return st;
    int no = lg_net_n_out(net);
    memcpy(s.A, C, (size_t)m * (size_t)no * sizeof *s.A);
    for (int r = 0; r < m; r++) {
        s.c[r] = d[r];
        s.cabs[r] = fabs(d[r]);
    }
    lg_bounds_backsub(b, net, net->n_layers - 1, m, s.A, s.tmp, s.c, s.cabs, out);
    free(s.A);
    return LG_OK;
}
