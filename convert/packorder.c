/* packorder.c - seeded Fisher-Yates shuffle of the packed order. */
#include "packorder.h"

#include <stdlib.h>

#include "rng.h"

size_t *pack_order(size_t n, uint64_t seed, int keep_order)
{
    size_t *perm = malloc((n ? n : 1) * sizeof *perm);
    if (!perm)
        return NULL;
    for (size_t i = 0; i < n; i++)
        perm[i] = i;
    if (keep_order)
        return perm;
    rng_state r = {seed};
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)rng_below(&r, i);
        size_t t = perm[i - 1];
        perm[i - 1] = perm[j];
        perm[j] = t;
    }
    return perm;
}
