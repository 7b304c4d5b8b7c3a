/* rng.h — seeded, portable pseudo-random numbers (PCG32).
 *
 * Same seed → same sequence on every platform. The state is a plain value
 * owned by the caller; there is no global generator.
 */
#ifndef LG_RNG_H
#define LG_RNG_H

#include <stdint.h>
#include <stddef.h>

typedef struct lg_rng {
    uint64_t state;
    uint64_t inc;
} lg_rng;

void lg_rng_init(lg_rng *r, uint64_t seed, uint64_t stream);
uint32_t lg_rng_u32(lg_rng *r);
/* Uniform in [0, n) without modulo bias; n > 0. */
uint32_t lg_rng_below(lg_rng *r, uint32_t n);
/* Uniform double in [0, 1). */
double lg_rng_uniform(lg_rng *r);
/* Standard normal (Box–Muller, no cached state). */
double lg_rng_normal(lg_rng *r);
/* Fisher–Yates shuffle of idx[0..n). */
void lg_rng_shuffle(lg_rng *r, uint32_t *idx, size_t n);

#endif
