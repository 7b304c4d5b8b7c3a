/* rng.c — seeded PCG32 random numbers (rng.h). */
#include "core/rng.h"

#include <math.h>

void lg_rng_init(lg_rng *r, uint64_t seed, uint64_t stream)
{
    r->state = 0;
    r->inc = (stream << 1u) | 1u;
    (void)lg_rng_u32(r);
    r->state += seed;
    (void)lg_rng_u32(r);
}

uint32_t lg_rng_u32(lg_rng *r)
{
    uint64_t old = r->state;
    r->state = old * 6364136223846793005ULL + r->inc;
    uint32_t xorshifted = (uint32_t)(((old >> 18u) ^ old) >> 27u);
    uint32_t rot = (uint32_t)(old >> 59u);
    return (xorshifted >> rot) | (xorshifted << ((32u - rot) & 31u));
}

uint32_t lg_rng_below(lg_rng *r, uint32_t n)
{
    uint32_t threshold = (uint32_t)(-n) % n;
    for (;;) {
        uint32_t x = lg_rng_u32(r);
        if (x >= threshold) return x % n;
    }
}

double lg_rng_uniform(lg_rng *r)
{
    uint64_t hi = lg_rng_u32(r), lo = lg_rng_u32(r);
    return (double)(((hi << 32) | lo) >> 11) * 0x1.0p-53;
}

double lg_rng_normal(lg_rng *r)
{
    double u1 = lg_rng_uniform(r), u2 = lg_rng_uniform(r);
    if (u1 < 1e-300) u1 = 1e-300;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

void lg_rng_shuffle(lg_rng *r, uint32_t *idx, size_t n)
{
    for (size_t i = n; i > 1; i--) {
        uint32_t j = lg_rng_below(r, (uint32_t)i);
        uint32_t t = idx[i - 1];
        idx[i - 1] = idx[j];
        idx[j] = t;
    }
}
