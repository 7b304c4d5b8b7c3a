/* act_simd.h — the λ-GELU kernels of training (DESIGN.md §1), vectorised
 * with runtime CPU dispatch. Reached through the activation table
 * (core/act.h, act_float.h); public only for tests and benchmarks.
 *
 * Each kernel is compiled three times from one source: for the x86-64
 * baseline (SSE2, runs anywhere), for AVX2 and for AVX-512F (through
 * __attribute__((target))); the widest level the CPU supports
 * (__builtin_cpu_supports) is used, or the one set by lg_simd_set_level or
 * by the environment variable LG_SIMD=sse2|avx2|avx512 (never above what the
 * CPU has). No FMA contraction (C11 keeps a·b + c rounded twice), so every
 * level gives bit-identical elementwise results; sums over elements (∂L/∂λ)
 * are accumulated in double in a fixed order, so they match too.
 *
 * Math: e^x by Cody–Waite reduction and the Cephes expf polynomial with an
 * exact power of two (relative error ≤ 2e-7 on [−87, 88], 0 below −87);
 * erfc(z) = t·exp(−z² + P(t)), t = 1/(1 + z/2) (Numerical Recipes' erfcc,
 * fractional error < 1.2e-7 for z ≥ 0); Φ(u) = ½·erfc(|u|/√2) or 1 − that,
 * relative error ≤ 5e-7·(1 + u²) down to Φ = FLT_MIN (the float rounding of
 * z² in the exponent); both bounds are asserted in tests/check_optim.c, tests/check_init.c and tests/check_act_simd.c.
 *
 * All arrays are borrowed; nothing is allocated. n may be 0.
 */
#ifndef LG_TRAIN_ACT_SIMD_H
#define LG_TRAIN_ACT_SIMD_H

#include <stddef.h>

enum { LG_SIMD_SSE2 = 0, LG_SIMD_AVX2 = 1, LG_SIMD_AVX512 = 2 };

/* Level in use (resolved on first call). */
int lg_simd_level(void);
/* Highest level this CPU supports. */
int lg_simd_level_max(void);
/* Use level (clipped to lg_simd_level_max); returns the level now in use. */
int lg_simd_set_level(int level);
const char *lg_simd_level_name(int level);

/* out[i] = x[i]·Φ(λx[i]); out may alias x. If d1 and d2 are non-NULL they
 * receive what the backward needs: d1[i] = Φ(u) + u·φ(u) (∂f/∂x) and
 * d2[i] = x²·φ(u) (∂f/∂λ), u = λx (clamped to ±40 for φ, where it is 0).
 * With keeping, out must not alias x. */
void lg_simd_lgelu_forward(float *out, float *d1, float *d2, const float *x, float lambda, size_t n);

/* dinp[i] += dout[i]·∂f/∂x; *dlambda (if non-NULL) += Σ dout[i]·∂f/∂λ,
 * recomputing both from x. */
void lg_simd_lgelu_backward(float *dinp, float *dlambda, const float *dout, const float *x, float lambda, size_t n);

/* The same from the d1, d2 kept by the forward (no transcendental call). */
void lg_simd_lgelu_backward_kept(float *dinp, float *dlambda, const float *dout, const float *d1, const float *d2,
                                 size_t n);

/* Test hooks: out[i] = e^{x[i]} and Φ(x[i]) by the vector kernels. */
void lg_simd_expf(float *out, const float *x, size_t n);
void lg_simd_Phif(float *out, const float *x, size_t n);

#endif
