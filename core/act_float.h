/* act_float.h — the batched float kernels of training, one forward and one
 * backward per activation; the table of core/act.h (lg_act_info.fwd, .bwd,
 * .keep) points at them and train/act.h calls them through it. Not meant
 * to be called directly.
 *
 * fwd(out, keep, inp, p, n): out[i] = f(inp[i]; p). keep is NULL or, for a
 *   kind whose entry has keep = K > 0, K·n floats the backward reuses
 *   (lgelu, gelu: ∂f/∂x then ∂f/∂λ); out may alias inp when keep is NULL.
 * bwd(dinp, dp, dout, keep, inp, p, n): dinp[i] += dout[i]·∂f/∂x and, if dp
 *   is non-NULL and the kind has a learned parameter, *dp += Σ dout[i]·∂f/∂p
 *   (summed in double). keep NULL: recomputed from inp.
 * p is the layer's parameter as a float (gelu reads 1, parameterless kinds
 * ignore it). DESIGN.md §1 has the formulas:
 *   λ-GELU x·Φ(λx):  ∂f/∂x = Φ(λx) + λx·φ(λx), ∂f/∂λ = x²·φ(λx) (act_simd.h);
 *   sigmoid σ(x):    σ' = σ(1 − σ);
 *   Swish-β x·σ(βx): ∂f/∂x = σ(βx) + βx·σ(βx)(1 − σ(βx)), ∂f/∂β = x²·σ(βx)(1 − σ(βx));
 *   PReLU:           ∂f/∂x = 1 or a (a at x = 0), ∂f/∂a = min(x, 0);
 *   relu max(0, x) (derivative 0 at 0); identity x.
 * Arrays are borrowed; nothing is allocated.
 */
#ifndef LG_ACT_FLOAT_H
#define LG_ACT_FLOAT_H

#include <stddef.h>

void lg_actf_identity_fwd(float *out, float *keep, const float *inp, float p, size_t n);
void lg_actf_identity_bwd(float *dinp, float *dp, const float *dout, const float *keep, const float *inp, float p,
                          size_t n);
void lg_actf_relu_fwd(float *out, float *keep, const float *inp, float p, size_t n);
void lg_actf_relu_bwd(float *dinp, float *dp, const float *dout, const float *keep, const float *inp, float p,
                      size_t n);
void lg_actf_gelu_fwd(float *out, float *keep, const float *inp, float p, size_t n);
void lg_actf_gelu_bwd(float *dinp, float *dp, const float *dout, const float *keep, const float *inp, float p,
                      size_t n);
void lg_actf_lgelu_fwd(float *out, float *keep, const float *inp, float p, size_t n);
void lg_actf_lgelu_bwd(float *dinp, float *dp, const float *dout, const float *keep, const float *inp, float p,
                       size_t n);
void lg_actf_sigmoid_fwd(float *out, float *keep, const float *inp, float p, size_t n);
void lg_actf_sigmoid_bwd(float *dinp, float *dp, const float *dout, const float *keep, const float *inp, float p,
                         size_t n);
void lg_actf_swish_fwd(float *out, float *keep, const float *inp, float p, size_t n);
void lg_actf_swish_bwd(float *dinp, float *dp, const float *dout, const float *keep, const float *inp, float p,
                       size_t n);
void lg_actf_prelu_fwd(float *out, float *keep, const float *inp, float p, size_t n);
void lg_actf_prelu_bwd(float *dinp, float *dp, const float *dout, const float *keep, const float *inp, float p,
                       size_t n);

#endif
