/* order_arrange.c - a global batch arranged by window slot (order_arrange.h): a stable LSD radix sort of
 * the real entries' positions, with digits about as wide as the batch is long (so each pass costs about
 * twice the batch, whatever the number of slots). */
#include "order_arrange.h"

#include <stdlib.h>
#include <string.h>

#include "h5pack.h"

#define MAX_DIGIT_BITS 16

int h5pack_arrange_init(arrange_scratch *a, uint64_t g)
{
    size_t n = g ? (size_t)g : 1;
    a->idx = malloc(n * sizeof *a->idx);
    a->tmp = malloc(n * sizeof *a->tmp);
    a->count = malloc(((size_t)1 << MAX_DIGIT_BITS) * sizeof *a->count);
    a->copy = malloc(n * sizeof *a->copy);
    return a->idx && a->tmp && a->count && a->copy ? 0 : H5PACK_ENOMEM;
}

void h5pack_arrange_free(arrange_scratch *a)
{
    free(a->idx), free(a->tmp), free(a->count), free(a->copy);
    a->idx = a->tmp = a->count = NULL;
    a->copy = NULL;
}

static unsigned bits_of(uint64_t v)
{
    unsigned b = 0;
    while (v >> b)
        b++;
    return b;
}

/* Sorts IDX[0..m) (offsets from the stream position BASE >= 0) stably by their entries' slots. */
static void sort_by_slot(const arrange_batch *ab, arrange_scratch *a, uint64_t base, uint32_t m)
{
    unsigned key_bits = bits_of(ab->n_slots - 1), d = bits_of(m);
    d = d < 4 ? 4 : (d > MAX_DIGIT_BITS ? MAX_DIGIT_BITS : d);
    unsigned passes = (key_bits + d - 1) / d;
    if (passes == 0)
        return;
    d = (key_bits + passes - 1) / passes; /* as narrow as the passes allow */
    const uint32_t *slot = ab->slots + base;
    uint32_t *src = a->idx, *dst = a->tmp, mask = ((uint32_t)1 << d) - 1;
    for (unsigned pass = 0, shift = 0; pass < passes; pass++, shift += d) {
        memset(a->count, 0, ((size_t)mask + 1) * sizeof *a->count);
        for (uint32_t i = 0; i < m; i++)
            a->count[(slot[src[i]] >> shift) & mask]++;
        for (uint32_t v = 0, sum = 0; v <= mask; v++) {
            uint32_t c = a->count[v];
            a->count[v] = sum, sum += c;
        }
        for (uint32_t i = 0; i < m; i++)
            dst[a->count[(slot[src[i]] >> shift) & mask]++] = src[i];
        uint32_t *t = src;
        src = dst, dst = t;
    }
    if (src != a->idx)
        memcpy(a->idx, src, m * sizeof *src);
}

/* The sample at stream position Q, which wraps outside 0 .. n-1 (padding, skipped batches). */
static uint64_t at(const arrange_batch *ab, int64_t q)
{
    int64_t n = (int64_t)ab->n;
    if (q >= 0 && q < n) /* real: no division */
        return ab->stream[q];
    int64_t r = q % n;
    return ab->stream[r < 0 ? r + n : r];
}

void h5pack_arrange_take(const arrange_batch *ab, arrange_scratch *a, uint64_t from, uint64_t count,
                         uint64_t *out)
{
    int64_t n = (int64_t)ab->n, size = (int64_t)ab->size;
    int64_t lo = ab->first < 0 ? -ab->first : 0, hi = n - ab->first; /* real: offsets [lo, hi) */
    lo = lo > size ? size : lo;
    hi = hi > size ? size : (hi < lo ? lo : hi);
    uint32_t m = (uint32_t)(hi - lo);
    int sorted = ab->slots && m > 1 && ab->n_slots > 1 && from < m;
    if (sorted) {
        for (uint32_t i = 0; i < m; i++)
            a->idx[i] = i;
        sort_by_slot(ab, a, (uint64_t)(ab->first + lo), m);
    }
    for (uint64_t k = from; k < from + count; k++) {
        int64_t t; /* the offset of arranged entry k */
        if (k < m)
            t = lo + (sorted ? (int64_t)a->idx[k] : (int64_t)k);
        else
            t = (int64_t)k - m < lo ? (int64_t)k - m : hi + ((int64_t)k - m - lo);
        out[k - from] = at(ab, ab->first + t);
    }
}
