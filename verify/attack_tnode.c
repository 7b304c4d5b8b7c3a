/* attack_tnode.c — gradients of the Transformer nodes for the attack
 * (attack.h lg_attack_tnode_backward, DESIGN.md §1 "Transformer nodes").
 * A heuristic in double: every hit is re-checked by the witness gate.
 * No allocation. */
#include "verify/attack.h"

#include <math.h>

void lg_attack_tnode_backward(const lg_layer *L, const double *a, const double *b, const double *out,
                              const double *dz, double *da, double *db)
{
    int n = L->n_out;
    if (L->lin.kind == LG_LAYER_BILINEAR) { /* ∂(a_i·b_j) = b_j·da_i + a_i·db_j */
        size_t K = (size_t)L->lin.op.K;
        const int *ia = L->lin.map, *ib = L->lin.map + (size_t)n * K;
        for (size_t o = 0; o < (size_t)n; o++)
            for (size_t q = o * K; q < (o + 1) * K; q++) {
                da[ia[q]] += dz[o] * b[ib[q]];
                db[ib[q]] += dz[o] * a[ia[q]];
            }
        return;
    }
    int g = L->lin.op.group;
    if (L->lin.kind == LG_LAYER_SOFTMAX) { /* dx_i = s_i·(dz_i − Σ_j s_j·dz_j) */
        for (int s = 0; s < n; s += g) {
            double m = 0;
            for (int i = s; i < s + g; i++) m += out[i] * dz[i];
            for (int i = s; i < s + g; i++) da[i] += out[i] * (dz[i] - m);
        }
        return;
    }
    /* layernorm: n_i = (x_i − μ)·r, y_i = γ_i·n_i + β_i;
     * dx_i = r·(dn_i − mean(dn) − n_i·mean(dn·n)), dn_i = γ_i·dz_i */
    const double *gamma = L->lin.W;
    for (int s = 0; s < n; s += g) {
        double mu = 0, var = 0;
        for (int i = s; i < s + g; i++) mu += a[i];
        mu /= g;
        for (int i = s; i < s + g; i++) var += (a[i] - mu) * (a[i] - mu);
        var /= g;
        double r = 1.0 / sqrt(var + L->lin.op.eps), m1 = 0, m2 = 0;
        for (int i = s; i < s + g; i++) {
            double dn = gamma[i - s] * dz[i], nv = (a[i] - mu) * r;
            m1 += dn;
            m2 += dn * nv;
        }
        m1 /= g;
        m2 /= g;
        for (int i = s; i < s + g; i++) {
            double dn = gamma[i - s] * dz[i], nv = (a[i] - mu) * r;
            da[i] += r * (dn - m1 - nv * m2);
        }
    }
}
