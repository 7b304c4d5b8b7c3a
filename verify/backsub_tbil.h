/* backsub_tbil.h — the back-substitution's step through a product node
 * (backsub_tnode.h) with a block of rows as the inner dimension: the rows'
 * coefficients on the node's outputs transposed to [output][row], each
 * pair's slope applied to the whole block at once (one contiguous
 * multiply-add per pair and factor) into transposed coefficient blocks of
 * the two sources, added to the rows' buffers at the end. Internal to
 * backsub_tnode.c.
 *
 * Each output o and side (lower, upper) carries the sums of its K pairs
 * for the rounding term of backsub_tnode.h: P_o = Σ_k |w_a|·max|a| +
 * |w_b|·max|b|, U_o = Σ max|·| of the non-zero slopes, their count, and the
 * pairs' intercepts summed, C_o = fl(Σ_k c_k), with E_o ≥ |C_o − Σ_k c_k|
 * (≤ γ_K·Σ|c_k|, taken as (K + 2)·2^-52 times an upper bound of Σ|c_k|,
 * rounded up). A row then adds Σ_o |λ_o|·P_o (the same real sum as the
 * pair-wise loop; its own rounding within the growth factor of
 * backsub_tnode.c, as backsub_tgemm.h argues), one intercept fl(λ_o·C_o)
 * per output (its product's rounding in the 2^-51·|icpt| term) and
 * |λ_o|·E_o rounded up. The coefficients are summed in the blocks' order,
 * with or without FMA: γ'_N of backsub.h covers any order. A node whose
 * slopes are not all finite is left to the pair-wise loop (a 0·∞ would
 * otherwise reach rows that do not read it).
 *
 * Memory: the sums live in the node's plane table (backsub_tnode.c, the
 * LG_BS_TBIL_LEN(n) doubles after its pairs); lg_bs_tbil_apply allocates
 * and frees its own scratch.
 */
#ifndef LG_BACKSUB_TBIL_H
#define LG_BACKSUB_TBIL_H

#include <stddef.h>

/* Doubles of the sums of a product with n outputs:
 * [P_lo n][P_up n][U_lo n][U_up n][nnz_lo n][nnz_up n][C_lo n][C_up n][E_lo n][E_up n][finite][same]
 * (same: the lower and upper slopes agree at every pair). */
#define LG_BS_TBIL_LEN(n) (10 * (n) + 2)
/* Doubles per pair in the plane table: lo_a, lo_b, lo_c, up_a, up_b, up_c, max|a|, max|b|. */
#define LG_BS_TBIL_PAIR 8

/* The sums of one product's pairs (pairs: [n·K][LG_BS_TBIL_PAIR]) into X. */
void lg_bs_tbil_sums(size_t n, size_t K, const double *pairs, double *X);

/* The parts of X (lg_bs_tbil_sums); up = 1: the upper planes. */
static inline const double *lg_bs_tbil_P(const double *X, size_t n, int up) { return X + (up ? n : 0); }
static inline const double *lg_bs_tbil_U(const double *X, size_t n, int up) { return X + 2 * n + (up ? n : 0); }
static inline const double *lg_bs_tbil_nnz(const double *X, size_t n, int up) { return X + 4 * n + (up ? n : 0); }
static inline const double *lg_bs_tbil_C(const double *X, size_t n, int up) { return X + 6 * n + (up ? n : 0); }
static inline const double *lg_bs_tbil_E(const double *X, size_t n, int up) { return X + 8 * n + (up ? n : 0); }
static inline int lg_bs_tbil_finite(const double *X, size_t n) { return X[10 * n] != 0.0; }

/* Ya[r][ia[q]] += λ·w_a(q) and Yb[r][ib[q]] += λ·w_b(q) for every pair q =
 * o·K + k, λ = A[r][o] ≠ 0, w the lower planes' slopes where λ > 0 and the
 * upper's where λ < 0, of row r's group g (pairs[g], X[g]: its table and
 * sums; grp[r] < ng), for rows r < m. A: [m][n], Ya: [m][na], Yb: [m][nb]
 * (may equal Ya). Every group's slopes must be finite. Returns 0 when out
 * of memory (Ya, Yb then unchanged). */
int lg_bs_tbil_apply(int m, size_t n, size_t K, const int *ia, const int *ib, size_t na, size_t nb, int ng,
                     const int *grp, const double *const *pairs, const double *const *X, const double *A, double *Ya,
                     double *Yb);

#endif
