/* node_bilinear.c — the product node's training entry (node.h):
 *   z[o] = Σ_k a[ia[o·K+k]] · b[ib[o·K+k]]
 * over its index tables (core/net.h), and its backward
 *   ∂L/∂a[ia] += ∂L/∂z[o] · b[ib],  ∂L/∂b[ib] += ∂L/∂z[o] · a[ia].
 * The products are read from the sources' outputs (kept by the trainer), so
 * it keeps nothing of its own.
 *
 * Plan: when the tables are matrix products — the outputs in runs of Nj
 * (a row), the rows in groups that share one K×Nj matrix of b, each group
 * an M×K matrix of a with equally spaced rows written to equally spaced
 * output rows (attention's Q·Kᵀ per head and P·V per head are such) — the
 * plan lists the groups and every pass is one sgemm per group and example.
 * The plan is checked against every table entry when it is made; any other
 * table goes through the gather loops above.
 *
 * Plan layout (ints): [0] the number of groups G (0: no plan, gather),
 * [1] K, [2] Nj, [3] 1 when b's matrix is stored [j][k] (else [k][j]),
 * [4] its leading dimension; then per group: first output, output row
 * stride (ldc), first a entry, a row stride (lda), first b entry, rows M. */
#include <string.h>

#include "core/linalg.h"
#include "train/node.h"

enum { LG_BP_HEAD = 5, LG_BP_GROUP = 6, LG_BP_MAX_GROUPS = 256 };

size_t lg_tnode_bilinear_plan_len(const lg_linear *A)
{
    (void)A;
    return LG_BP_HEAD + LG_BP_GROUP * LG_BP_MAX_GROUPS;
}

void lg_tnode_bilinear_plan(const lg_linear *A, int *plan)
{
    memset(plan, 0, lg_tnode_bilinear_plan_len(A) * sizeof *plan);
    long K = A->op.K, no = A->n_out;
    const int *ia = A->map, *ib = A->map + no * K;
    long a_sk = K > 1 ? ia[1] - ia[0] : 1, b_sk = K > 1 ? ib[1] - ib[0] : 1;
    if (a_sk != 1) return;
    long Nj = 1;
    while (Nj < no && ia[Nj * K] == ia[0]) Nj++;
    if (no % Nj) return;
    long b_sj = Nj > 1 ? ib[K] - ib[0] : 1, ldb;
    int bt;
    if (b_sj == 1 && (K == 1 || b_sk >= Nj)) {
        bt = 0, ldb = K == 1 ? Nj : b_sk;
    } else if (b_sk == 1 && (Nj == 1 || b_sj >= K)) {
        bt = 1, ldb = Nj == 1 ? K : b_sj;
    } else {
        return;
    }
    /* rows into groups by their b matrix, each group's rows and outputs equally spaced */
    int G = 0, *g = plan + LG_BP_HEAD;
    for (long r = 0; r < no / Nj; r++) {
        long out = r * Nj, a0 = ia[out * K], b0 = ib[out * K];
        int q = 0;
        while (q < G && g[q * LG_BP_GROUP + 4] != b0) q++;
        int *e = g + q * LG_BP_GROUP;
        if (q == G) {
            if (G == LG_BP_MAX_GROUPS) return;
            G++;
            e[0] = (int)out, e[1] = 0, e[2] = (int)a0, e[3] = 0, e[4] = (int)b0, e[5] = 1;
            continue;
        }
        if (e[5] == 1) e[1] = (int)(out - e[0]), e[3] = (int)(a0 - e[2]);
        if (out != e[0] + (long)e[5] * e[1] || a0 != e[2] + (long)e[5] * e[3]) return;
        e[5]++;
    }
    for (int q = 0; q < G; q++) { /* sgemm's leading dimensions; then every entry checked */
        int *e = g + q * LG_BP_GROUP;
        if (e[5] == 1) e[1] = (int)Nj, e[3] = (int)K;
        if (e[1] < Nj || e[3] < K) return;
        for (long m = 0; m < e[5]; m++)
            for (long j = 0; j < Nj; j++)
                for (long k = 0; k < K; k++) {
                    long o = e[0] + m * e[1] + j;
                    if (ia[o * K + k] != e[2] + m * e[3] + k || ib[o * K + k] != e[4] + j * b_sj + k * b_sk) return;
                }
    }
    plan[1] = (int)K, plan[2] = (int)Nj, plan[3] = bt, plan[4] = (int)ldb;
    plan[0] = G;
}

void lg_tnode_bilinear_forward(const lg_tnode_io *io)
{
    const lg_linear *A = io->A;
    size_t K = (size_t)A->op.K, no = (size_t)A->n_out, na = (size_t)A->n_in, nb = (size_t)A->op.n_in_b;
    const int *P = io->plan;
    if (P && P[0]) {
        for (int r = 0; r < io->B; r++) {
            const float *a = io->a + (size_t)r * na, *b = io->b + (size_t)r * nb;
            float *z = io->z + (size_t)r * no;
            for (int q = 0; q < P[0]; q++) {
                const int *e = P + LG_BP_HEAD + q * LG_BP_GROUP;
                lg_sgemm(0, P[3], e[5], P[2], P[1], 1.0f, a + e[2], e[3], b + e[4], P[4], 0.0f, z + e[0], e[1]);
            }
        }
        return;
    }
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
    const int *P = io->plan;
    if (P && P[0]) { /* dA += dC·Bᵀ, dB += Aᵀ·dC per group (dB stored as B is) */
        for (int r = 0; r < io->B; r++) {
            const float *a = io->a + (size_t)r * na, *b = io->b + (size_t)r * nb, *g = dz + (size_t)r * no;
            float *ga = da + (size_t)r * na, *gb = db + (size_t)r * nb;
            for (int q = 0; q < P[0]; q++) {
                const int *e = P + LG_BP_HEAD + q * LG_BP_GROUP;
                int M = e[5], Nj = P[2], Kk = P[1];
                lg_sgemm(0, !P[3], M, Kk, Nj, 1.0f, g + e[0], e[1], b + e[4], P[4], 1.0f, ga + e[2], e[3]);
                if (P[3])
                    lg_sgemm(1, 0, Nj, Kk, M, 1.0f, g + e[0], e[1], a + e[2], e[3], 1.0f, gb + e[4], P[4]);
                else
                    lg_sgemm(1, 0, Kk, Nj, M, 1.0f, a + e[2], e[3], g + e[0], e[1], 1.0f, gb + e[4], P[4]);
            }
        }
        return;
    }
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
