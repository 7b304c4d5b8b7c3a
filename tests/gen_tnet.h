/* gen_tnet.h — seeded random small Transformer-like networks for tests
 * (DESIGN.md §1 "Transformer nodes"): one pre-norm attention block over T
 * tokens of width d with h heads, then a ReLU MLP and a dense head.
 *
 * Nodes, in order (x: the input, T·d values, token-major [T][d]):
 *   0 LN  = layernorm(x), groups of d            (gamma ≈ 1, beta ≈ 0, random)
 *   1 Q   = per-token map of LN (scaled by 1/√d_head)
 *   2 K   = per-token map of LN
 *   3 V   = per-token map of LN
 *   4 S   = product Q·Kᵀ per head: S[hh][i][j] = Σ_c Q[i][hh·dh+c]·K[j][hh·dh+c]   (K = dh)
 *   5 P   = softmax of S over j (groups of T)
 *   6 A   = product P·V per head: A[i][hh·dh+c] = Σ_j P[hh][i][j]·V[j][hh·dh+c] (K = T)
 *   7 R   = per-token map of A + x (an identity index-map term: the residual)
 *   8 M   = relu(per-token map R → T·m)
 *   9 y   = dense M → n_out
 * With post_norm, a second layernorm N = layernorm(R) (groups of d) is node 8,
 * and M (node 9) reads N, y is node 10.
 * The per-token maps are per-token map terms (core/net.h LG_LAYER_TOKMAP),
 * or with dense_maps their dense expansion kron(I_T, A): the same function
 * from the same draws.
 * The caller frees the net with lg_net_free; it is a pure function of the
 * generator's state and the options. */
#ifndef LG_GEN_TNET_H
#define LG_GEN_TNET_H

#include "core/net.h"
#include "core/rng.h"

typedef struct lg_test_tnet_opts {
    int tokens; /* T (0: 2–5 drawn) */
    int width;  /* d (0: 2–8 drawn, a multiple of the heads) */
    int heads;  /* h (0: 1–2 drawn) */
    int n_out;  /* outputs (0: 2–3 drawn) */
    int dense_maps; /* 1: the per-token maps as dense kron(I_T, A) terms */
    int post_norm;  /* 1: a layernorm of the residual before the MLP (node 8) */
} lg_test_tnet_opts;

lg_status lg_test_tnet_random(lg_net *net, lg_rng *r, const lg_test_tnet_opts *o);
/* The shape drawn for net (T, d, h) as stored by lg_test_tnet_random. */
void lg_test_tnet_shape(const lg_net *net, int *T, int *d, int *h);

#endif
