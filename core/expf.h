/* expf.h — the one float e^x of the training kernels (a Cody–Waite range
 * reduction and a degree-6 polynomial, relative error ≤ 4e-7, tested in the
 * hardness suite), shared by the scalar kernels (act.c) and the vectorised
 * ones (act_simd.c, which inlines it into each SIMD target). No state. */
#ifndef LG_TRAIN_EXPF_H
#define LG_TRAIN_EXPF_H

#include <stdint.h>
#include <string.h>

/* e^x for x ≤ 88; 0 for x < −87 (below FLT_MIN). NaN clamps inside (the
 * int conversion must see a finite value); callers multiply by x, so a NaN
 * input still gives NaN. */
static inline __attribute__((always_inline)) float lg_v_expf(float x)
{
    float lo = x > -87.0f ? x : -87.0f;
    float xc = lo < 88.0f ? lo : 88.0f;
    /* n = round(x/ln2) by the 1.5·2^23 trick; r = x − n·ln2 in two parts */
    float n = (xc * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
    float r = xc - n * 0.693359375f;
    r = r + n * 2.12194440e-4f;
    float p = 1.0f + r + r * r * (5.0000001201e-1f + r * (1.6666665459e-1f + r * (4.1665795894e-2f +
                                    r * (8.3334519073e-3f + r * (1.3981999507e-3f + r * 1.9875691500e-4f)))));
    int32_t bits = ((int32_t)n + 127) * 8388608; /* << 23 without shifting a signed value */
    float scale;
    memcpy(&scale, &bits, sizeof scale);
    float e = p * scale;
    return x < -87.0f ? 0.0f : e;
}

#endif
