/* backsub_tgemm.h — the back-substitution's step through a softmax or
 * layernorm node (backsub_tnode.h) as products of matrices: per group of
 * the node, the rows' coefficients on its outputs times the group's plane
 * slopes, one dgemm per side over the rows that touch the group. Internal
 * to backsub_tnode.c.
 *
 * Each plane row o (lower and upper side) carries sums for the rounding
 * term of backsub_tnode.h: P_o = Σ_j |w_oj|·max|x_j|, U_o = Σ_{w_oj ≠ 0}
 * max|x_j| and the count of its non-zero slopes, so a row's term is
 * Σ_o |λ_o|·P_o instead of Σ_o Σ_j |fl(λ_o·w_oj)|·max|x_j| (the same real
 * sum; the computed one within the rounding that backsub_tnode.c's growth
 * factor (cnt + nic + 2)·2^-52 already covers: each of its addends passes
 * through at most nnz(w_o) + 1 + (terms of the row) ≤ cnt + 2 roundings).
 * The coefficients themselves are summed in the dgemm's order, with or
 * without FMA: γ'_N of backsub.h covers any order. A group whose slopes are
 * not all finite is left to the element-wise loop (a 0·∞ would otherwise
 * reach rows that do not read it).
 *
 * Memory: the sums live in the node's plane table (backsub_tnode.c, the
 * LG_BS_TGEMM_LEN(n, gs) doubles after its planes); lg_bs_tgemm_apply
 * allocates and frees its own scratch.
 */
#ifndef LG_BACKSUB_TGEMM_H
#define LG_BACKSUB_TGEMM_H

#include <stddef.h>

/* Doubles of the sums of a node with n outputs in groups of gs:
 * [P_lo n][P_up n][U_lo n][U_up n][nnz_lo n][nnz_up n][finite n/gs] (finite: 0 not all finite, 1 finite,
 * 2 finite and the lower and upper slopes the same). */
#define LG_BS_TGEMM_LEN(n, gs) (6 * (n) + (n) / (gs))

/* The sums of one node's planes (lo_w, up_w: [n][gs], row o over its
 * group's inputs; xm: [n] max|x_j| of the inputs) into X. */
void lg_bs_tgemm_sums(size_t n, size_t gs, const double *lo_w, const double *up_w, const double *xm, double *X);

/* The parts of X (lg_bs_tgemm_sums). */
static inline const double *lg_bs_tgemm_P(const double *X, size_t n, int up) { return X + (up ? n : 0); }
static inline const double *lg_bs_tgemm_U(const double *X, size_t n, int up) { return X + 2 * n + (up ? n : 0); }
static inline const double *lg_bs_tgemm_nnz(const double *X, size_t n, int up) { return X + 4 * n + (up ? n : 0); }
static inline int lg_bs_tgemm_finite(const double *X, size_t n, size_t G) { return X[6 * n + G] != 0.0; }
/* Group G's lower and upper slopes are the same (one product serves both signs). */
static inline int lg_bs_tgemm_same(const double *X, size_t n, size_t G) { return X[6 * n + G] == 2.0; }

/* Ya[r][·] += Σ_o Lm[r][o]·w_o (w: the lower plane's slopes where
 * Lm[r][o] > 0, the upper's where < 0) for rows r < m, over every group G
 * whose slopes are finite in the planes of the row's group: planes[g] is
 * group g's table ([n][gs] lower slopes at +0, upper at + n·gs + n, as
 * backsub_tnode.c lays them out), X[g] its sums, grp[r] the row's group
 * (ng groups). Lm: [m][n] (0 where the element-wise loop did the work),
 * Ya: [m][n]. use: NULL (a row reads group G where its Lm there is not all
 * 0), or [m][n/gs], 1 where row r reads group G: Lm is then read only there
 * (it may hold anything elsewhere) and must be 0 where use is 0 in the
 * first sense too. Returns 0 when out of memory (Ya then unchanged by it). */
int lg_bs_tgemm_apply(int m, size_t n, size_t gs, int ng, const int *grp, const double *const *planes,
                      const double *const *X, const double *Lm, const unsigned char *use, double *Ya);

#endif
