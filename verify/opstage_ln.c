/* opstage_ln.c — the layernorm node's difference bounds (opstage.h): what the
 * back-substitution knows of its input beyond the box, for the layernorm
 * planes (relax_layernorm.h lg_ln_region, DESIGN.md §3 "Relaxations of the
 * Transformer node kinds"). Layout in lg_bounds dlo[k], dhi[k] (n_diff = 3 per
 * output, n outputs, groups of g; dref unused):
 *   [o]          bounds of the centred input c_o = x_o − μ (μ its group's mean);
 *   [n + o]      a_o in both (dlo = dhi): the coefficient of x_o in its group's form;
 *   [2n + G]     bounds of group G's form Σ_{o in G} a_o·x_o;
 * the rest stays ∓∞. lg_ln_symbolic allocates its scratch and frees it. */
#include "verify/opstage.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "verify/backsub.h"

int lg_ln_n_diff(const lg_layer *L)
{
    return L->lin.src >= 0 && L->lin.op.group > 1 ? 3 : 0;
}

/* Rows ±(g·e_o − Σ_{j in o's group} e_j) over the source's outputs (exact integer
 * coefficients for g < 2^53) and ±(a over o's group), pushed back to the input box
 * through s (backsub.h, rounding carried): g·c_o ≥ out, so c_o ≥ out/g rounded down
 * (and the upper end from the negated row); each kept where tighter (a group's form
 * replaced when its a changed). a = ĉ(m) = c(m)/√(v(m) + eps) in double at the
 * centre m of the source's box (any doubles are sound). The node's own bounds are
 * the pass's interval bounds (opstage_layernorm.c). */
lg_status lg_ln_symbolic(lg_bounds *b, const lg_net *net, int k, struct lg_backsub *s, double *out, int diff)
{
    const lg_layer *L = &net->layers[k];
    if (!diff || !b->dlo[k] || L->lin.src < 0) return LG_OK;
    const lg_layer *S = &net->layers[L->lin.src];
    int ns = S->n_out, g = L->lin.op.group, m = s->m, n = L->n_out;
    if (g < 2 || ns != n || n % g || m < 1) return LG_OK;
    double gd = (double)g, *dl = b->dlo[k], *dh = b->dhi[k];
    /* the forms' coefficients; a group whose a changed forgets its old bounds */
    double *mx = malloc((size_t)g * sizeof *mx);
    if (!mx) return lg_fail(LG_ERR_NOMEM, "bounds: out of memory");
    for (int G = 0; G < n / g; G++) {
        double mu = 0.0, v = 0.0;
        int ok = 1;
        for (int j = 0; j < g; j++) {
            double lo, hi;
            lg_bounds_post(S, b->lo[L->lin.src][G * g + j], b->hi[L->lin.src][G * g + j], &lo, &hi);
            mx[j] = 0.5 * lo + 0.5 * hi;
            ok = ok && isfinite(mx[j]);
            mu += mx[j];
        }
        mu /= gd;
        for (int j = 0; j < g; j++) v += (mx[j] - mu) * (mx[j] - mu);
        double r = 1.0 / sqrt(v / gd + L->lin.op.eps);
        ok = ok && isfinite(r);
        int same = 1;
        for (int j = 0; j < g; j++) {
            double a = ok ? (mx[j] - mu) * r : 0.0;
            if (!isfinite(a)) a = 0.0;
            same = same && dl[n + G * g + j] == a;
            dl[n + G * g + j] = dh[n + G * g + j] = a;
        }
        if (!same) dl[2 * n + G] = -INFINITY, dh[2 * n + G] = INFINITY;
    }
    free(mx);
    /* row q < n: c_q; row n + G: group G's form; only the groups whose outputs something reads (s->want) */
    int nrow = 0;
    int *qs = malloc((size_t)(n + n / g) * sizeof *qs);
    if (!qs) return lg_fail(LG_ERR_NOMEM, "bounds: out of memory");
    for (int q = 0; q < n + n / g; q++) {
        int G = q < n ? q / g : q - n, any = !s->want;
        for (int j = 0; j < g && !any; j++) any = s->want[G * g + j] != 0;
        if (any) qs[nrow++] = q;
    }
    lg_status st = LG_OK;
    for (int q0 = 0; q0 < nrow && st == LG_OK; q0 += m) {
        int nr = nrow - q0 < m ? nrow - q0 : m;
        for (int sign = 0; sign < 2 && st == LG_OK; sign++) {
            double sg = sign ? -1.0 : 1.0;
            for (int r = 0; r < nr; r++) {
                int q = qs[q0 + r];
                double *Ar = s->A + (size_t)r * (size_t)ns;
                memset(Ar, 0, (size_t)ns * sizeof *Ar);
                if (q < n) {
                    int G0 = q / g * g;
                    for (int j = G0; j < G0 + g; j++) Ar[j] = -sg;
                    Ar[q] = sg * (gd - 1.0);
                } else {
                    int G0 = (q - n) * g;
                    for (int j = G0; j < G0 + g; j++) Ar[j] = sg * dl[n + j];
                }
                s->c[r] = 0.0;
            }
            if ((st = lg_backsub_lower(s, L->lin.src, nr, NULL, NULL, 0, NULL, out)) != LG_OK) break;
            for (int r = 0; r < nr; r++) {
                int q = qs[q0 + r];
                if (!(out[r] > -INFINITY)) continue;
                double dv = q < n ? gd : 1.0; /* the form's row is the form itself */
                size_t e = q < n ? (size_t)q : (size_t)(2 * n + (q - n));
                if (sign == 0) {
                    double v = nextafter(out[r] / dv, -INFINITY);
                    if (v > dl[e]) dl[e] = v;
                } else {
                    double v = nextafter(-out[r] / dv, INFINITY);
                    if (v < dh[e]) dh[e] = v;
                }
            }
        }
    }
    free(qs);
    return st;
}

void lg_ln_region_of(const lg_bounds *b, const lg_net *net, int k, int G, lg_ln_region *reg)
{
    const lg_layer *L = &net->layers[k];
    int n = L->n_out, g = L->lin.op.group;
    memset(reg, 0, sizeof *reg);
    reg->plo = -INFINITY;
    reg->phi = INFINITY;
    if (!b->dlo || !b->dlo[k] || g < 2 || lg_ln_n_diff(L) != 3) return;
    const double *dl = b->dlo[k], *dh = b->dhi[k];
    reg->clo = dl + (size_t)G * (size_t)g;
    reg->chi = dh + (size_t)G * (size_t)g;
    for (int j = 0; j < g; j++) {
        double a = dl[n + G * g + j];
        if (!(a == dh[n + G * g + j]) || !isfinite(a)) return; /* not set */
    }
    reg->a = dl + n + (size_t)G * (size_t)g;
    reg->plo = dl[2 * n + G];
    reg->phi = dh[2 * n + G];
}

void lg_ln_forget(lg_bounds *b, const lg_net *net, int k)
{
    const lg_layer *L = &net->layers[k];
    size_t ne = (size_t)L->n_out * (size_t)lg_ln_n_diff(L);
    for (size_t q = 0; q < ne; q++) b->dlo[k][q] = -INFINITY, b->dhi[k][q] = INFINITY;
}

int lg_ln_centred(const lg_bounds *b, const lg_net *net, int k, double **clo, double **chi)
{
    if (!b->dlo || !b->dlo[k] || lg_ln_n_diff(&net->layers[k]) != 3) return 0;
    *clo = b->dlo[k], *chi = b->dhi[k]; /* the first n_out entries: c_o */
    return 1;
}
