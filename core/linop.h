/* linop.h — a linear operator (core/net.h lg_linear: a layer's own term or
 * a further term of a graph layer) applied through its structure.
 *
 * The lg_linear_* calls take one term; the lg_layer_* calls are the same on
 * a layer's own term (L->lin). An index map (Pad, Slice, Concat part, …) is
 * applied as its table: its |W| is itself, its rows have at most one entry
 * (a 1), and its transpose scatters.
 *
 * Every stage that needs W of a layer as a matrix (bounds, back-
 * substitution, α/β-CROWN, the certified deviation, the attack's gradient,
 * the encodings, the exact re-check) goes through these calls, so a conv
 * layer (core/net.h) is never written out as its dense matrix there. For a
 * dense layer they are the BLAS products on the stored matrix; for a conv
 * layer, im2col and one dgemm per row when the kernel has at least 32
 * weights per output, else direct loops over the kernel that skip the zero
 * entries of a row (and fall back to them if the im2col scratch cannot be
 * allocated). All compute the same real products
 * (a conv's dense matrix has a kernel weight or 0 in each entry): only the
 * order of the floating-point additions differs, and every sum here has at
 * most n_in terms (forward) or n_out terms (transpose) — the counts the
 * dense path's rounding margins (verify/bounds.h, verify/backsub.h) are
 * taken with, so those margins stay valid for both.
 *
 * A per-token map (core/net.h LG_LAYER_TOKMAP) is one dgemm over all its
 * tokens (rows of [m·T][i] times its block), never kron(I_T, A); its sums
 * have i ≤ n_in terms (o ≤ n_out in the transpose).
 *
 * Buffers are the caller's; the conv path allocates its im2col scratch per
 * call (not per row). No bias is added.
 */
#ifndef LG_LINOP_H
#define LG_LINOP_H

#include "core/net.h"

void lg_linear_mul(const lg_linear *L, int m, const double *X, double *Y, int absw, int accumulate);
void lg_linear_mul_t(const lg_linear *L, int m, const double *A, double *Y, int absw);
int lg_linear_row_cap(const lg_linear *L);
int lg_linear_row_nz(const lg_linear *L, int o, int *idx, double *w);
const double *lg_linear_row(const lg_linear *L, int o, double *row);

/* Y[m][n_out] = X[m][n_in]·Wᵀ (+ Y when accumulate); with absw, |W| in place
 * of W and zero weights skipped (an infinite x times a zero weight adds 0). */
void lg_layer_mul(const lg_layer *L, int m, const double *X, double *Y, int absw, int accumulate);

/* Y[m][n_in] = A[m][n_out]·W (the transpose, for back-substitution and
 * gradients); with absw, |W|. Y is overwritten. */
void lg_layer_mul_t(const lg_layer *L, int m, const double *A, double *Y, int absw);

/* Largest number of nonzero positions of a row of W (n_in for a dense
 * layer, c_in·kh·kw for a conv): the capacity lg_layer_row_nz needs. */
int lg_layer_row_cap(const lg_layer *L);

/* Row o of W as its structural nonzeros, input indices ascending:
 * idx[t], w[t] for t < the returned count (a dense layer lists every
 * input, zeros included). idx and w hold lg_layer_row_cap(L) entries. */
int lg_layer_row_nz(const lg_layer *L, int o, int *idx, double *w);

/* Allocate idx and w with room for the largest row of any term of any layer of net
 * (the caller frees both): 0, or −1 out of memory (both NULL). */
int lg_net_row_alloc(const lg_net *net, int **idx, double **w);

/* Row o of W as n_in doubles: a pointer into the stored matrix for a dense
 * layer; for a conv layer, row (n_in doubles of the caller) filled with the
 * kernel weights at the receptive field and 0 elsewhere, and returned. */
const double *lg_layer_row(const lg_layer *L, int o, double *row);

#endif
