/* rng.h - the project's one random number generator (splitmix64), header only: the converter's packed
 * order, the reader's orders, the augmentation draws (CPU and CUDA), the samples and the tests. splitmix64
 * is a counter-based hash: the same (seed, counters) give the same numbers on every platform and in any
 * thread, which is what makes packed orders and epochs reproducible. The functions are static inline
 * (host and device under nvcc), so they are no global symbols and keep their short rng_ names. */
#ifndef H5PACK_COMMON_RNG_H
#define H5PACK_COMMON_RNG_H

#include <stdint.h>

#if defined(__CUDACC__)
#define H5PACK_HD __host__ __device__ __forceinline__
#else
#define H5PACK_HD static inline
#endif

/* One splitmix64 step applied to X: a well-mixed 64-bit hash. */
H5PACK_HD uint64_t rng_mix64(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* Hash of a seed and up to three counters (epoch, stream, index...). */
H5PACK_HD uint64_t rng_key(uint64_t seed, uint64_t a, uint64_t b, uint64_t c)
{
    return rng_mix64(rng_mix64(rng_mix64(seed ^ 0x6A09E667F3BCC909ull) ^ a) ^ (b * 0x9E3779B97F4A7C15ull)) ^
           rng_mix64(c + 0x243F6A8885A308D3ull);
}

/* Sequential generator for shuffles. */
typedef struct rng_state {
    uint64_t s;
} rng_state;

H5PACK_HD uint64_t rng_next(rng_state *r)
{
    r->s += 0x9E3779B97F4A7C15ull;
    uint64_t z = r->s;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform integer in [0, n), 1 <= n < 2^32, without modulo bias (Lemire's multiply-shift with
 * rejection, the division only when a draw may be rejected: the same numbers as dividing every time);
 * larger n falls back to rejection on the 64-bit value. */
H5PACK_HD uint64_t rng_below(rng_state *r, uint64_t n)
{
    if (n <= 0xFFFFFFFFull) {
        uint32_t n32 = (uint32_t)n;
        uint64_t m = (rng_next(r) >> 32) * n32;
        if ((uint32_t)m < n32) { /* only then can it fall below 2^32 mod n (< n): the division is rare */
            uint32_t reject_below = (uint32_t)(0u - n32) % n32; /* 2^32 mod n */
            while ((uint32_t)m < reject_below)
                m = (rng_next(r) >> 32) * n32;
        }
        return m >> 32;
    }
    uint64_t reject_below = (0 - n) % n; /* 2^64 mod n */
    for (;;) {
        uint64_t x = rng_next(r);
        if (x >= reject_below)
            return x % n;
    }
}

#endif
