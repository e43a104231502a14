/* mask_values.c - the values seen in the stored masks (mask_values.h). */
#include "mask_values.h"

#include <string.h>

void mask_values_clear(mask_values *s)
{
    memset(s, 0, sizeof *s);
}

void mask_values_add(mask_values *s, const uint8_t *values, size_t n, uint32_t bytes)
{
    if (bytes == 1) {
        for (size_t i = 0; i < n; i++)
            s->count[values[i]]++;
        for (unsigned v = 0; v < 256; v++)
            if (s->count[v])
                s->present[v / 64] |= 1ull << (v % 64);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        unsigned v = values[2 * i] | (unsigned)values[2 * i + 1] << 8;
        s->present[v / 64] |= 1ull << (v % 64);
        if (v < 256)
            s->count[v]++;
    }
}

void mask_values_merge(mask_values *dst, const mask_values *src)
{
    for (size_t i = 0; i < sizeof dst->present / sizeof dst->present[0]; i++)
        dst->present[i] |= src->present[i];
    for (size_t v = 0; v < 256; v++)
        dst->count[v] += src->count[v];
}

uint64_t mask_values_list(const mask_values *s, int64_t *out, size_t max)
{
    uint64_t total = 0;
    for (unsigned v = 0; v < 65536; v++) {
        if (!(s->present[v / 64] >> (v % 64) & 1))
            continue;
        if (total < max)
            out[total] = v;
        total++;
    }
    return total;
}
