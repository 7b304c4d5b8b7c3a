/* attention.h — batched float multi-head self-attention core and row
 * softmax, for training (DESIGN.md §1 "Training a Transformer").
 *
 * Q, K, V, O are [B][T][D] (row-major, D = NH·dh); head h reads columns
 * h·dh .. h·dh+dh−1. The forward keeps the probabilities P[B][NH][T][T]:
 *   S = Q_h K_hᵀ/√dh,  P = softmax over each row of S,  O_h = P V_h.
 * The backward WRITES dQ, dK, dV (dP[T][T] is scratch):
 *   dV_h = Pᵀ dO_h,  dP = dO_h V_hᵀ,  dS = P ⊙ (dP − rowsum(dP ⊙ P)),
 *   dQ_h = dS K_h/√dh,  dK_h = dSᵀ Q_h/√dh.
 * Arrays are borrowed; no allocation.
 */
#ifndef LG_TRAIN_ATTENTION_H
#define LG_TRAIN_ATTENTION_H

/* y = softmax of each of the n rows of width g of x (y may alias x). */
void lg_softmax_rows(float *y, const float *x, int n, int g);
/* dx += the softmax backward of rows y = softmax(x) with upstream dy. */
void lg_softmax_rows_backward(float *dx, const float *dy, const float *y, int n, int g);

void lg_attn_forward(float *O, float *P, const float *Q, const float *K, const float *V, int B, int T, int D, int NH);
void lg_attn_backward(float *dQ, float *dK, float *dV, float *dP, const float *dO, const float *P, const float *Q,
                      const float *K, const float *V, int B, int T, int D, int NH);

#endif
