/* node_bilinear.c — the product node's training entry (node.h):
 *   z[o] = Σ_k a[ia[o·K+k]] · b[ib[o·K+k]]
 * over its index tables (core/net.h), and its backward
 *   ∂L/∂a[ia] += ∂L/∂z[o] · b[ib],  ∂L/∂b[ib] += ∂L/∂z[o] · a[ia].
 * The products are read from the sources' outputs (kept by the trainer), so
 * it keeps nothing of its own. */
#include "train/node.h"

void lg_tnode_bilinear_forward(const lg_tnode_io *io)
{
    const lg_linear *A = io->A;
    size_t K = (size_t)A->op.K, no = (size_t)A->n_out, na = (size_t)A->n_in, nb = (size_t)A->op.n_in_b;
    const int *ia = A->map, *ib = A->map + no * K;
    for (int r = 0; r < io->B; r++) {
        const float *a = io->a + (size_t)r * na, *b = io->b + (size_t)r * nb;
        float *z = io->z + (size_t)r * no;
        for (size_t o = 0; o < no; o++) {
            float s = 0.0f;
            for (size_t q = o * K; q < (o + 1) * K; q++) s += a[ia[q]] * b[ib[q]];
            z[o] = s;
        }
    }
}

void lg_tnode_bilinear_backward(const lg_tnode_io *io, const float *dz, float *da, float *db)
{
    const lg_linear *A = io->A;
    size_t K = (size_t)A->op.K, no = (size_t)A->n_out, na = (size_t)A->n_in, nb = (size_t)A->op.n_in_b;
    const int *ia = A->map, *ib = A->map + no * K;
    for (int r = 0; r < io->B; r++) {
        const float *a = io->a + (size_t)r * na, *b = io->b + (size_t)r * nb, *g = dz + (size_t)r * no;
        float *ga = da + (size_t)r * na, *gb = db + (size_t)r * nb;
        for (size_t o = 0; o < no; o++) {
            float d = g[o];
            if (d == 0.0f) continue;
            for (size_t q = o * K; q < (o + 1) * K; q++) {
                ga[ia[q]] += d * b[ib[q]];
                gb[ib[q]] += d * a[ia[q]];
            }
        }
    }
}
