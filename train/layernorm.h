/* layernorm.h — batched float LayerNorm over rows of width g, for training
 * (DESIGN.md §1 "Training a Transformer"):
 *   y = γ ⊙ x̂ + β,  x̂ = (x − μ)·r,  r = 1/√(σ² + ε), σ² biased.
 * The forward keeps x̂[n·g] and r[n] for the backward; the backward
 * ACCUMULATES into dx, dgamma, dbeta:
 *   dx = r·(ĝ − mean(ĝ) − x̂·mean(ĝ ⊙ x̂)),  ĝ = γ ⊙ dy.
 * y, xhat and x must not overlap. Arrays are borrowed; no allocation.
 */
#ifndef LG_TRAIN_LAYERNORM_H
#define LG_TRAIN_LAYERNORM_H

#define LG_LN_EPS 1e-5f

void lg_ln_forward(float *y, float *xhat, float *rstd, const float *x, const float *gamma, const float *beta, int n,
                   int g, float eps);
void lg_ln_backward(float *dx, float *dgamma, float *dbeta, const float *dy, const float *xhat, const float *rstd,
                    const float *gamma, int n, int g);

#endif
