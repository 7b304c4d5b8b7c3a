/* act_simd.c — λ-GELU forward/backward kernels, one source compiled for
 * SSE2, AVX2 and AVX-512F, chosen at run time (see act_simd.h; formulas in
 * DESIGN.md §1). The element loops have no calls and no branches (the
 * helpers are always inlined, selects are if-converted under
 * -fno-trapping-math), so GCC vectorises them at each level's width. */
#include "core/act_simd.h"
#include "core/expf.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define LG_INV_SQRT2 0.70710678118654752440f
#define LG_INV_SQRT2PI 0.39894228040143267794f
#define LG_CHUNK 64
#define LG_INLINE static inline __attribute__((always_inline))

/* erfc(z) for z ≥ 0 */
LG_INLINE float lg_v_erfc_pos(float z)
{
    float t = 1.0f / (1.0f + 0.5f * z);
    float poly = -1.26551223f +
                 t * (1.00002368f +
                      t * (0.37409196f +
                           t * (0.09678418f +
                                t * (-0.18628806f +
                                     t * (0.27886807f +
                                          t * (-1.13520398f + t * (1.48851587f + t * (-0.82215223f + t * 0.17087277f))))))));
    return t * lg_v_expf(-z * z + poly);
}

/* Φ(u) = ½·erfc(−u/√2) */
LG_INLINE float lg_v_Phif(float u)
{
    float mu = -u;
    float z = (u < 0.0f ? mu : u) * LG_INV_SQRT2;
    float h = 0.5f * lg_v_erfc_pos(z), omh = 1.0f - h;
    return u < 0.0f ? h : omh;
}

/* φ(u) with u clamped to ±40 (φ(40) is 0 in float), so huge or infinite λx
 * give 0, not NaN; *uc receives the clamped u. */
LG_INLINE float lg_v_phif(float u, float *uc)
{
    float ul = u < -40.0f ? -40.0f : u;
    float c = ul > 40.0f ? 40.0f : ul;
    *uc = c;
    return LG_INV_SQRT2PI * lg_v_expf(-0.5f * c * c);
}

/* Kernel bodies, instantiated once per level with the level's target
 * attribute (ATTR) and name suffix (SFX). */
#define LG_SIMD_KERNELS(SFX, ATTR)                                                                                   \
    ATTR static void lg_fwd_##SFX(float *out, const float *x, float lambda, size_t n)                                 \
    {                                                                                                                 \
        for (size_t i = 0; i < n; i++) {                                                                              \
            float xi = x[i];                                                                                          \
            out[i] = xi * lg_v_Phif(lambda * xi);                                                                     \
        }                                                                                                             \
    }                                                                                                                 \
    ATTR static void lg_fwd_keep_##SFX(float *restrict out, float *restrict d1, float *restrict d2,                   \
                                       const float *restrict x, float lambda, size_t n)                               \
    {                                                                                                                 \
        for (size_t i = 0; i < n; i++) {                                                                              \
            float xi = x[i], u = lambda * xi, uc;                                                                     \
            float P = lg_v_Phif(u), phi = lg_v_phif(u, &uc);                                                          \
            out[i] = xi * P;                                                                                          \
            d1[i] = P + uc * phi;                                                                                     \
            d2[i] = xi * (xi * phi);                                                                                  \
        }                                                                                                             \
    }                                                                                                                 \
    ATTR static double lg_bwd_##SFX(float *d, const float *g, const float *x, float lambda, size_t n)                 \
    {                                                                                                                 \
        float dl[LG_CHUNK];                                                                                           \
        double sum = 0.0;                                                                                             \
        for (size_t c = 0; c < n; c += LG_CHUNK) {                                                                    \
            size_t m = n - c < LG_CHUNK ? n - c : LG_CHUNK;                                                           \
            for (size_t i = 0; i < m; i++) {                                                                          \
                float xi = x[c + i], u = lambda * xi, uc;                                                             \
                float phi = lg_v_phif(u, &uc);                                                                        \
                d[c + i] += g[c + i] * (lg_v_Phif(u) + uc * phi);                                                     \
                dl[i] = g[c + i] * (xi * (xi * phi));                                                                 \
            }                                                                                                         \
            for (size_t i = 0; i < m; i++) sum += (double)dl[i];                                                      \
        }                                                                                                             \
        return sum;                                                                                                   \
    }                                                                                                                 \
    ATTR static double lg_bwd_kept_##SFX(float *restrict d, const float *restrict g, const float *restrict d1,        \
                                         const float *restrict d2, int want_sum, size_t n)                            \
    {                                                                                                                 \
        for (size_t i = 0; i < n; i++) d[i] += g[i] * d1[i];                                                          \
        if (!want_sum) return 0.0;                                                                                    \
        float dl[LG_CHUNK];                                                                                           \
        double sum = 0.0;                                                                                             \
        for (size_t c = 0; c < n; c += LG_CHUNK) {                                                                    \
            size_t m = n - c < LG_CHUNK ? n - c : LG_CHUNK;                                                           \
            for (size_t i = 0; i < m; i++) dl[i] = g[c + i] * d2[c + i];                                              \
            for (size_t i = 0; i < m; i++) sum += (double)dl[i];                                                      \
        }                                                                                                             \
        return sum;                                                                                                   \
    }                                                                                                                 \
    ATTR static void lg_exp_##SFX(float *out, const float *x, size_t n)                                               \
    {                                                                                                                 \
        for (size_t i = 0; i < n; i++) out[i] = lg_v_expf(x[i]);                                                      \
    }                                                                                                                 \
    ATTR static void lg_Phi_##SFX(float *out, const float *x, size_t n)                                               \
    {                                                                                                                 \
        for (size_t i = 0; i < n; i++) out[i] = lg_v_Phif(x[i]);                                                      \
    }

LG_SIMD_KERNELS(sse2, )
/* gcc takes the vector width in the target attribute; clang does not (it
 * would ignore the whole attribute), so clang gets the ISA alone. */
#if defined(__clang__)
#define LG_TARGET_AVX2 "avx2"
#define LG_TARGET_AVX512 "avx512f"
#else
#define LG_TARGET_AVX2 "avx2,prefer-vector-width=256"
#define LG_TARGET_AVX512 "avx512f,prefer-vector-width=512"
#endif
LG_SIMD_KERNELS(avx2, __attribute__((target(LG_TARGET_AVX2))))
LG_SIMD_KERNELS(avx512, __attribute__((target(LG_TARGET_AVX512))))

typedef struct lg_simd_ops {
    void (*fwd)(float *, const float *, float, size_t);
    void (*fwd_keep)(float *, float *, float *, const float *, float, size_t);
    double (*bwd)(float *, const float *, const float *, float, size_t);
    double (*bwd_kept)(float *, const float *, const float *, const float *, int, size_t);
    void (*exp)(float *, const float *, size_t);
    void (*Phi)(float *, const float *, size_t);
} lg_simd_ops;

#define LG_OPS(SFX) {lg_fwd_##SFX, lg_fwd_keep_##SFX, lg_bwd_##SFX, lg_bwd_kept_##SFX, lg_exp_##SFX, lg_Phi_##SFX}
static const lg_simd_ops lg_simd_table[3] = {LG_OPS(sse2), LG_OPS(avx2), LG_OPS(avx512)};

static atomic_int lg_simd_current = -1;

int lg_simd_level_max(void)
{
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) return LG_SIMD_AVX512;
    if (__builtin_cpu_supports("avx2")) return LG_SIMD_AVX2;
    return LG_SIMD_SSE2;
}

const char *lg_simd_level_name(int level)
{
    static const char *names[3] = {"sse2", "avx2", "avx512"};
    return level >= 0 && level < 3 ? names[level] : "?";
}

int lg_simd_set_level(int level)
{
    int mx = lg_simd_level_max();
    int l = level < 0 ? 0 : level > mx ? mx : level;
    atomic_store(&lg_simd_current, l);
    return l;
}

int lg_simd_level(void)
{
    int l = atomic_load(&lg_simd_current);
    if (l >= 0) return l;
    l = lg_simd_level_max();
    const char *env = getenv("LG_SIMD");
    if (env)
        for (int k = 0; k < 3; k++)
            if (strcmp(env, lg_simd_level_name(k)) == 0 && k < l) l = k;
    atomic_store(&lg_simd_current, l);
    return l;
}

static const lg_simd_ops *lg_ops(void) { return &lg_simd_table[lg_simd_level()]; }

void lg_simd_lgelu_forward(float *out, float *d1, float *d2, const float *x, float lambda, size_t n)
{
    if (d1 && d2) lg_ops()->fwd_keep(out, d1, d2, x, lambda, n);
    else lg_ops()->fwd(out, x, lambda, n);
}

void lg_simd_lgelu_backward(float *dinp, float *dlambda, const float *dout, const float *x, float lambda, size_t n)
{
    double s = lg_ops()->bwd(dinp, dout, x, lambda, n);
    if (dlambda) *dlambda += (float)s;
}

void lg_simd_lgelu_backward_kept(float *dinp, float *dlambda, const float *dout, const float *d1, const float *d2,
                                 size_t n)
{
    double s = lg_ops()->bwd_kept(dinp, dout, d1, d2, dlambda != NULL, n);
    if (dlambda) *dlambda += (float)s;
}

void lg_simd_expf(float *out, const float *x, size_t n) { lg_ops()->exp(out, x, n); }

void lg_simd_Phif(float *out, const float *x, size_t n) { lg_ops()->Phi(out, x, n); }
