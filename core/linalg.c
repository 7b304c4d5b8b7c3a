/* linalg.c — dense float matrix products: cblas_sgemm and the naive oracle kernel (linalg.h). */
#include "core/linalg.h"

#include <cblas.h>

void lg_sgemm(int transA, int transB, int M, int N, int K, float alpha, const float *A, int lda, const float *B,
              int ldb, float beta, float *C, int ldc)
{
    cblas_sgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans, transB ? CblasTrans : CblasNoTrans, M, N, K, alpha,
                A, lda, B, ldb, beta, C, ldc);
}

void lg_sgemm_naive(int transA, int transB, int M, int N, int K, float alpha, const float *A, int lda,
                    const float *B, int ldb, float beta, float *C, int ldc)
{
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double s = 0;
            for (int k = 0; k < K; k++) {
                float a = transA ? A[k * lda + i] : A[i * lda + k];
                float b = transB ? B[j * ldb + k] : B[k * ldb + j];
                s += (double)a * b;
            }
            C[i * ldc + j] = (float)(alpha * s + (beta == 0.0f ? 0.0 : (double)beta * C[i * ldc + j]));
        }
}

void lg_blas_set_threads(int n) { openblas_set_num_threads(n); }
