/* linalg.h — dense float matrix products for training: cblas_sgemm, and a
 * naive triple-loop kernel with the same contract kept as a test oracle.
 *
 * Row-major. C[M][N] = alpha·op(A)·op(B) + beta·C, op(X) = X or Xᵀ.
 * lda/ldb/ldc are the row strides of A, B, C as stored. No allocation.
 */
#ifndef LG_LINALG_H
#define LG_LINALG_H

void lg_sgemm(int transA, int transB, int M, int N, int K, float alpha, const float *A, int lda, const float *B,
              int ldb, float beta, float *C, int ldc);

void lg_sgemm_naive(int transA, int transB, int M, int N, int K, float alpha, const float *A, int lda,
                    const float *B, int ldb, float beta, float *C, int ldc);

/* Set the number of BLAS threads (n ≥ 1). */
void lg_blas_set_threads(int n);

#endif
