/* opstage_ln.c — the layernorm node's difference bounds (opstage.h): the
 * centred input c_o = x_o − μ (μ the mean of o's group of the source's
 * outputs) bounded by back-substitution, kept in lg_bounds dlo, dhi (one
 * per output; dref unused) for the layernorm planes (relax_layernorm.h,
 * DESIGN.md §3 "Relaxations of the Transformer node kinds"). No allocation. */
#include "verify/opstage.h"

#include <math.h>
#include <string.h>

#include "verify/backsub.h"

int lg_ln_n_diff(const lg_layer *L)
{
    return L->src >= 0 && L->op.group > 1 ? 1 : 0;
}

/* Rows ±(g·e_o − Σ_{j in o's group} e_j) over the source's outputs (exact integer
 * coefficients for g < 2^53), pushed back to the input box through s (backsub.h,
 * rounding carried): g·c_o ≥ out, so c_o ≥ out/g rounded down (and the upper end
 * from the negated row); each kept where tighter. The node's own bounds are the
 * pass's interval bounds (bounds_tnode.c). */
lg_status lg_ln_symbolic(lg_bounds *b, const lg_net *net, int k, struct lg_backsub *s, double *out, int diff)
{
    const lg_layer *L = &net->layers[k];
    if (!diff || !b->dlo[k] || L->src < 0) return LG_OK;
    int ns = net->layers[L->src].n_out, g = L->op.group, m = s->m;
    if (g < 2 || ns != L->n_out || L->n_out % g) return LG_OK;
    double gd = (double)g;
    lg_status st = LG_OK;
    for (int o0 = 0; o0 < L->n_out && st == LG_OK; o0 += m) {
        int n = L->n_out - o0 < m ? L->n_out - o0 : m;
        for (int sign = 0; sign < 2 && st == LG_OK; sign++) {
            double sg = sign ? -1.0 : 1.0;
            for (int r = 0; r < n; r++) {
                int o = o0 + r, G0 = o / g * g;
                double *Ar = s->A + (size_t)r * (size_t)ns;
                memset(Ar, 0, (size_t)ns * sizeof *Ar);
                for (int j = G0; j < G0 + g; j++) Ar[j] = -sg;
                Ar[o] = sg * (gd - 1.0);
                s->c[r] = 0.0;
            }
            if ((st = lg_backsub_lower(s, L->src, n, NULL, NULL, 0, NULL, out)) != LG_OK) break;
            for (int r = 0; r < n; r++) {
                int o = o0 + r;
                if (!(out[r] > -INFINITY)) continue;
                if (sign == 0) {
                    double v = nextafter(out[r] / gd, -INFINITY);
                    if (v > b->dlo[k][o]) b->dlo[k][o] = v;
                } else {
                    double v = nextafter(-out[r] / gd, INFINITY);
                    if (v < b->dhi[k][o]) b->dhi[k][o] = v;
                }
            }
        }
    }
    return st;
}
