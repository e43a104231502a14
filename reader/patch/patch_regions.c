/* patch_regions.c - see patch_regions.h. */
#include "patch_regions.h"

#include <stdlib.h>
#include <string.h>

#include "h5pack.h"
#include "rng.h"

#define REGION_STREAM 0x7265676eull /* "regn": the region order's own rng stream */

typedef struct keyed {
    uint64_t region, index;
} keyed;

static int by_region(const void *a, const void *b)
{
    const keyed *x = a, *y = b;
    if (x->region != y->region)
        return x->region < y->region ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index; /* stable: draws keep their order in a region */
}

uint64_t h5pack_patch_regions_window(uint32_t tile, uint32_t channels)
{
    uint64_t side = (uint64_t)PATCH_REGION_TILES * tile, bytes = side * side * channels;
    uint64_t w = PATCH_WINDOW_BYTES / (bytes ? bytes : 1);
    return w < PATCH_WINDOW_MIN ? PATCH_WINDOW_MIN : w;
}

/* The draws sorted by region into K (n entries); the regions' first entries into START (room for n + 1),
 * their count returned. */
static uint64_t group(const int64_t *where, uint64_t n, uint32_t tile, keyed *k, uint64_t *start)
{
    uint64_t side = (uint64_t)PATCH_REGION_TILES * tile, groups = 0;
    for (uint64_t q = 0; q < n; q++) /* image < 2^24 and < 2^20 regions a side: one 64-bit key */
        k[q] = (keyed){((uint64_t)where[3 * q] << 40) | ((uint64_t)where[3 * q + 1] / side) << 20 |
                           ((uint64_t)where[3 * q + 2] / side), q};
    qsort(k, (size_t)n, sizeof *k, by_region);
    for (uint64_t q = 0; q < n; q++)
        if (q == 0 || k[q].region != k[q - 1].region)
            start[groups++] = q;
    start[groups] = n;
    return groups;
}

int h5pack_patch_regions_order(int64_t *where, uint64_t n, uint32_t tile, uint64_t window, uint64_t seed,
                               uint64_t epoch)
{
    keyed *k = malloc((n ? n : 1) * sizeof *k);
    uint64_t *start = malloc((n + 1) * sizeof *start), *perm = malloc((n ? n : 1) * sizeof *perm);
    uint64_t *next = malloc((n ? n : 1) * sizeof *next);
    int64_t *out = malloc((n ? n : 1) * 3 * sizeof *out);
    if (!k || !start || !perm || !next || !out) {
        free(k), free(start), free(perm), free(next), free(out);
        return H5PACK_ENOMEM;
    }
    uint64_t groups = group(where, n, tile, k, start);
    rng_state r = {rng_key(seed, epoch, REGION_STREAM, 0)};
    for (uint64_t g = 0; g < groups; g++) /* the regions in a random order (Fisher-Yates) */
        perm[g] = g;
    for (uint64_t g = groups; g > 1; g--) {
        uint64_t j = rng_below(&r, g), t = perm[g - 1];
        perm[g - 1] = perm[j], perm[j] = t;
    }
    uint64_t active = window < groups ? window : groups, coming = active, emitted = 0;
    for (uint64_t g = 0; g < groups; g++)
        next[g] = start[g];
    while (active > 0) { /* perm[0 .. active) are the active regions */
        uint64_t a = rng_below(&r, active), g = perm[a];
        memcpy(out + 3 * emitted++, where + 3 * k[next[g]].index, 3 * sizeof *out);
        if (++next[g] < start[g + 1])
            continue;
        if (coming < groups) /* the region ran out: the next one in order takes its place */
            perm[a] = perm[coming++];
        else
            perm[a] = perm[--active];
    }
    memcpy(where, out, (size_t)n * 3 * sizeof *out);
    free(k), free(start), free(perm), free(next), free(out);
    return 0;
}
