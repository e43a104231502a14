/* sample_rng.h - splitmix64, the generator this sample draws its images with. It is the algorithm of
 * h5pack's own generator (sequential steps and Lemire's unbiased range), written out here because a
 * sample uses only h5pack's public API: the same seed gives the same images as before. */
#ifndef H5PACK_SAMPLES_SAMPLE_RNG_H
#define H5PACK_SAMPLES_SAMPLE_RNG_H

#include <stdint.h>

typedef struct rng_state {
    uint64_t s;
} rng_state;

static inline uint64_t rng_next(rng_state *r)
{
    r->s += 0x9E3779B97F4A7C15ull;
    uint64_t z = r->s;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform in [0, n) for 1 <= n < 2^32, without modulo bias: multiply-shift with rejection. */
static inline uint32_t rng_below32(rng_state *r, uint32_t n)
{
    uint32_t reject_below = (0u - n) % n; /* 2^32 mod n */
    for (;;) {
        uint64_t m = (rng_next(r) >> 32) * n;
        if ((uint32_t)m >= reject_below)
            return (uint32_t)(m >> 32);
    }
}

#endif
