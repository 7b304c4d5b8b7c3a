/* attention.c — float multi-head attention and row softmax (attention.h). */
#include "train/attention.h"

#include <math.h>

#include "core/expf.h"
#include "core/linalg.h"

void lg_softmax_rows(float *y, const float *x, int n, int g)
{
    for (int i = 0; i < n; i++) {
        const float *xi = x + (long)i * g;
        float *yi = y + (long)i * g;
        float mx = xi[0];
        for (int j = 1; j < g; j++) mx = xi[j] > mx ? xi[j] : mx;
        for (int j = 0; j < g; j++) yi[j] = lg_v_expf(xi[j] - mx); /* no reduction: vectorised */
        float s = 0;
        for (int j = 0; j < g; j++) s += yi[j];
        float inv = 1.0f / s;
        for (int j = 0; j < g; j++) yi[j] *= inv;
    }
}

void lg_softmax_rows_backward(float *dx, const float *dy, const float *y, int n, int g)
{
    for (int i = 0; i < n; i++) {
        const float *dyi = dy + (long)i * g, *yi = y + (long)i * g;
        float s = 0;
        for (int j = 0; j < g; j++) s += dyi[j] * yi[j];
        for (int j = 0; j < g; j++) dx[(long)i * g + j] += yi[j] * (dyi[j] - s);
    }
}

void lg_attn_forward(float *O, float *P, const float *Q, const float *K, const float *V, int B, int T, int D, int NH)
{
    int dh = D / NH;
    float sc = 1.0f / sqrtf((float)dh);
    for (int b = 0; b < B; b++)
        for (int h = 0; h < NH; h++) {
            long off = (long)b * T * D + (long)h * dh;
            float *Pb = P + ((long)b * NH + h) * T * T;
            lg_sgemm(0, 1, T, T, dh, sc, Q + off, D, K + off, D, 0.0f, Pb, T);
            lg_softmax_rows(Pb, Pb, T, T);
            lg_sgemm(0, 0, T, dh, T, 1.0f, Pb, T, V + off, D, 0.0f, O + off, D);
        }
}

void lg_attn_backward(float *dQ, float *dK, float *dV, float *dP, const float *dO, const float *P, const float *Q,
                      const float *K, const float *V, int B, int T, int D, int NH)
{
    int dh = D / NH;
    float sc = 1.0f / sqrtf((float)dh);
    for (int b = 0; b < B; b++)
        for (int h = 0; h < NH; h++) {
            long off = (long)b * T * D + (long)h * dh;
            const float *Pb = P + ((long)b * NH + h) * T * T;
            lg_sgemm(1, 0, T, dh, T, 1.0f, Pb, T, dO + off, D, 0.0f, dV + off, D);
            lg_sgemm(0, 1, T, T, dh, 1.0f, dO + off, D, V + off, D, 0.0f, dP, T);
            for (int i = 0; i < T; i++) { /* dS in place of dP */
                float *r = dP + (long)i * T;
                const float *p = Pb + (long)i * T;
                float s = 0;
                for (int j = 0; j < T; j++) s += r[j] * p[j];
                for (int j = 0; j < T; j++) r[j] = p[j] * (r[j] - s);
            }
            lg_sgemm(0, 0, T, dh, T, sc, dP, T, K + off, D, 0.0f, dQ + off, D);
            lg_sgemm(1, 0, T, dh, T, sc, dP, T, Q + off, D, 0.0f, dK + off, D);
        }
}
