/* mask_values.h - the values a conversion's stored masks hold: which of the 65,536 occur, and how many
 * pixels have each value below 256 (the histogram of uint8 masks). Each decoded mask gets its own
 * (worker side); the placer adds them up, so the result does not depend on the thread count. */
#ifndef H5PACK_MASK_VALUES_H
#define H5PACK_MASK_VALUES_H

#include <stddef.h>
#include <stdint.h>

#define MASK_VALUES_LISTED 256 /* the attribute lists at most this many values (the smallest) */

typedef struct mask_values {
    uint64_t present[65536 / 64]; /* bit v: value v occurs */
    uint64_t count[256];          /* pixels of value v, for v < 256 */
} mask_values;

void mask_values_clear(mask_values *s);

/* Adds N stored values of BYTES (1, or 2 little-endian) each. */
void mask_values_add(mask_values *s, const uint8_t *values, size_t n, uint32_t bytes);

/* DST += SRC. */
void mask_values_merge(mask_values *dst, const mask_values *src);

/* The distinct values in increasing order, the first MAX of them into OUT; returns how many there are in all. */
uint64_t mask_values_list(const mask_values *s, int64_t *out, size_t max);

#endif
