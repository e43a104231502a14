/* resize_internal.h - the pieces of image_fit (resize.c) shared by its files: fixed-point weights of one
 * axis (resize_coeffs.c), their per-thread cache (resize_cache.c), the portable passes
 * (resize_scalar.c) and the AVX2 passes (resize_avx2.c, compiled for AVX2 alone and called only after a
 * run-time CPU check). Not used outside convert/resize*.c (tests and bench may include it). */
#ifndef H5PACK_CONVERT_RESIZE_INTERNAL_H
#define H5PACK_CONVERT_RESIZE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "image_internal.h"

#define RESIZE_FIX_BITS 22 /* as PIL: 32 - 8 (pixel) - 2 (headroom) */
#define RESIZE_FIX_HALF (1 << (RESIZE_FIX_BITS - 1))

/* Weights of one axis: output pixel i reads first[i] .. first[i] + count[i] - 1 with weights k[i*ksize..];
 * ksize is a multiple of 4 and the weights after count[i] are 0 (the SIMD gray pass reads 4 at a time). */
typedef struct axis_coeffs {
    uint32_t out, ksize;
    int32_t *first, *count;
    int32_t *k;
    uint32_t *pairs; /* optional, for the AVX2 passes: see resize_axis_split_pairs */
} axis_coeffs;

/* Coefficients for resizing IN pixels to RESIZED pixels, kept only for outputs OFFSET .. OFFSET+OUT-1
 * (PIL's BILINEAR: triangle of support max(1, IN/RESIZED), normalised, 22-bit fixed point). 0 or -1 (no
 * memory: free with resize_axis_free all the same). */
int resize_axis_init(axis_coeffs *ax, uint32_t in, uint32_t resized, uint32_t offset, uint32_t out);

/* Adds ax->pairs, the weights as 16-bit halves for a multiply-add of 16-bit pairs (k = hi * 2^15 + lo,
 * 0 <= lo < 2^15): for output i and taps 2q, 2q+1, pairs[i*ksize + 2q] = lo(2q) | lo(2q+1) << 16 and
 * pairs[i*ksize + 2q + 1] = hi(2q) | hi(2q+1) << 16. 0 or -1 (no memory). */
int resize_axis_split_pairs(axis_coeffs *ax);

void resize_axis_free(axis_coeffs *ax);

/* Tables for both axes of a fit. From the calling thread's cache (kept until the thread exits; a
 * converter thread fits many images of the same few sizes), or, when that cache cannot be had, owned by
 * the caller: resize_tables_release frees those. */
typedef struct resize_tables {
    const axis_coeffs *h, *v;
    axis_coeffs own_h, own_v; /* used when there is no thread cache */
    int owned;
} resize_tables;

/* Horizontal table for SRC_W -> (resized RW, window OX + WW) and vertical for SRC_H -> (RH, OY + WH);
 * with WANT_PAIRS_H / WANT_PAIRS_V the 16-bit weight pairs too. 0 or -1 (no memory). */
int resize_tables_get(resize_tables *t, const fit_geometry *g, uint32_t src_w, uint32_t src_h, int want_pairs_h,
                      int want_pairs_v);
void resize_tables_release(resize_tables *t);

/* Rounds and clips a fixed-point sum to 0..255, as PIL. */
static inline uint8_t resize_clip_fixed(int32_t acc)
{
    acc >>= RESIZE_FIX_BITS;
    return (uint8_t)(acc < 0 ? 0 : acc > 255 ? 255 : acc);
}

/* ---- portable passes (resize_scalar.c) ---- */

/* One row through the horizontal weights (C channels interleaved). */
void resize_horizontal_row(const uint8_t *src, uint8_t *dst, uint32_t c, const axis_coeffs *ax);

/* Two RGB rows at once (SRC_STRIDE / DST_STRIDE apart): the weights are loaded once for both. */
void resize_horizontal_two_rows_rgb(const uint8_t *src, size_t src_stride, uint8_t *dst, size_t dst_stride,
                                    const axis_coeffs *ax);

/* Values X0 .. LEN-1 of a vertical-pass row: the weighted sum of the COUNT rows ROWS + j*STRIDE with
 * weights K[j], written to DST[X0 ..]. */
void resize_vertical_span(const uint8_t *rows, size_t stride, const int32_t *k, int32_t count, size_t x0,
                          size_t len, uint8_t *dst);

/* ---- AVX2 passes (resize_avx2.c; only when H5PACK_RESIZE_AVX2 is defined, only on an AVX2 CPU) ---- */

/* The horizontal pass over the rows ROW0 .. ROW1-1 (at least 8) of SRC (1 or 3 channels; needs
 * hx->pairs for 3) into TMP (row stride TMP_STRIDE, one spare byte per row after the values).
 * Returns 0, or -1 (no memory) with *NEXT the first row not done (the caller does the rest). */
int resize_horizontal_pass_avx2(const image_u8 *src, int32_t row0, int32_t row1, const axis_coeffs *hx,
                                uint8_t *tmp, size_t tmp_stride, int32_t *next);

/* resize_vertical_span from X0 = 0, with KP the output row's weight pairs. */
void resize_vertical_span_avx2(const uint8_t *rows, size_t stride, const int32_t *k, const uint32_t *kp,
                               int32_t count, size_t len, uint8_t *dst);

/* ---- which passes image_fit uses (resize.c) ---- */

typedef enum resize_path {
    RESIZE_PATH_AUTO = 0, /* AVX2 when built in and the CPU has it, else portable (the default) */
    RESIZE_PATH_PORTABLE, /* plain C passes */
    RESIZE_PATH_AVX2      /* AVX2 passes */
} resize_path;

/* 1 when the AVX2 passes are built in and this CPU runs them. */
int resize_avx2_available(void);

/* Chooses the passes of later image_fit calls (for tests and benchmarks: set it while no fit runs).
 * Returns 0, or -1 (nothing changed) for RESIZE_PATH_AVX2 when resize_avx2_available() is 0. */
int resize_set_path(resize_path path);

#endif
