/* packorder.c - seeded Fisher-Yates shuffle of the packed order. */
#include "packorder.h"

#include <stdlib.h>

static uint64_t splitmix64_next(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform in [0, bound) without modulo bias (rejection of the incomplete top range). */
static uint64_t uniform_below(uint64_t *state, uint64_t bound)
{
    uint64_t limit = UINT64_MAX - UINT64_MAX % bound;
    uint64_t r;
    do
        r = splitmix64_next(state);
    while (r >= limit);
    return r % bound;
}

size_t *pack_order(size_t n, uint64_t seed, int keep_order)
{
    size_t *perm = malloc((n ? n : 1) * sizeof *perm);
    if (!perm)
        return NULL;
    for (size_t i = 0; i < n; i++)
        perm[i] = i;
    if (keep_order)
        return perm;
    uint64_t state = seed;
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)uniform_below(&state, i);
        size_t t = perm[i - 1];
        perm[i - 1] = perm[j];
        perm[j] = t;
    }
    return perm;
}
