/* layout.h - one pass over a decoded image: the copy in the dataset's layout and the per-channel sums.
 *
 * Every image goes through this once, right after decoding: for small images (218x178, no resize) the
 * plain loop took a quarter of the converter's CPU time (one byte at a time, three strided stores), so on
 * x86-64 with SSSE3 (checked at run time) 16 pixels go at a time. Same bytes and the same integer sums as
 * the plain code (tests/convert/test_convert_layout). */
#ifndef H5PACK_CONVERT_LAYOUT_H
#define H5PACK_CONVERT_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

/* HWC (COUNT pixels of CHANNELS = 1 or 3 bytes) -> DST as CHW (planar) or, with NHWC, as is; SUM and
 * SUM_SQ get, per channel, the sum of the values and of their squares. */
void layout_store(const uint8_t *hwc, size_t count, uint32_t channels, int nhwc, uint8_t *dst, uint64_t sum[3],
                  uint64_t sum_sq[3]);

/* The plain C version (reference for the tests and for builds without SSSE3). */
void layout_store_plain(const uint8_t *hwc, size_t count, uint32_t channels, int nhwc, uint8_t *dst,
                        uint64_t sum[3], uint64_t sum_sq[3]);

#endif
