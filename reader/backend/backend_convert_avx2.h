/* backend_convert_avx2.h - the float32 image conversion with AVX2 for every layout pair (NCHW or NHWC
 * stored, NCHW or NHWC delivered), flipped or not, padded or not (backend_convert.h's conversion, same
 * bytes as its table loops).
 *
 * Eight output pixels at a time: their 8 x C stored bytes are loaded (one load per plane from NCHW, one
 * or two from NHWC), reordered with two byte shuffles per 16 output bytes into output order (channel
 * planes for NCHW, interleaved for NHWC; pixel order reversed when flipped), widened to 8 lanes and
 * converted, either by the table's own expression ((float)v / 255 - mean) / std with per-lane mean and
 * std (correctly rounded in every lane, so the table's bits; checked for all 256 inputs per channel at
 * prepare) or, where that check fails, by eight scalar table lookups (those and vpgatherdd both
 * measured slower than the expression on Zen 3). Each contiguous output run (a plane of NCHW output,
 * the whole image of NHWC output) goes through a "sink" that rotates the vectors onto 32-byte
 * boundaries, so rows of any width, padding and flips are all written with whole aligned stores
 * (non-temporal for large batches: no line is read for ownership); only the first and last block of a
 * run use a masked store. Without flip or padding the whole image is one run; flipped or padded images
 * are one run too: the stored bytes of up to 8k output pixels at a time are first put in output pixel
 * order in a small L1-resident block (h5pack_conv_avx2_stage, backend_convert_avx2_stage.c) and
 * converted from there as if unflipped (no per-row runs, tails or misaligned row starts). NCHW from NCHW is written
 * one plane at a time in the previous kernel's tight loop (one stream in, one out: measured faster); the
 * other pairs write all planes at once. */
#ifndef H5PACK_READER_BACKEND_CONVERT_AVX2_H
#define H5PACK_READER_BACKEND_CONVERT_AVX2_H

#include <stddef.h>
#include <stdint.h>

#include "augment.h"

struct backend_conv;

/* How float32 images are converted (backend_conv.simd.mode; tests may lower it to compare). */
enum { H5PACK_CONV_SCALAR = 0, H5PACK_CONV_TABLE = 1, H5PACK_CONV_ARITH = 2 };

/* The vector kernel's constants for one conversion. Output group g (g < C) is the g-th 8-lane vector of
 * an 8-pixel block: channel g's 8 pixels (NCHW output) or interleaved elements 8g..8g+7 (NHWC). */
typedef struct conv_avx2_plan {
    uint8_t shuf[2][2][2][16] __attribute__((aligned(16))); /* [flip][output half][input half] */
    float mean[4][8], std[4][8]; /* per group and lane: that lane's channel's normalisation */
    int mode;                    /* H5PACK_CONV_* */
} conv_avx2_plan;

/* 1 when the CPU can run the AVX2 kernel. */
int h5pack_conv_avx2_supported(void);

/* Fills cv->simd for the prepared float32 conversion CV (tables, geometry and layouts set): mode
 * ARITH where the vector expression gives the table bit for bit, else TABLE; SCALAR without AVX2. */
void h5pack_conv_avx2_prepare(struct backend_conv *cv);

/* Output pixels Q..Q+N-1 (flat index y * W + x of the output image) of stored image SRC under draw D,
 * as stored bytes in output pixel order (flip and crop applied, 0 in the padding: the table's padding
 * value is its entry 0) into STAGE, in the stored layout: NHWC, pixel k at STAGE + k * C; NCHW, channel
 * c's pixel k at STAGE + c * N + k, for channels C0..C1-1 only. STAGE has 16 bytes of slack past its
 * last pixel (written over). */
void h5pack_conv_avx2_stage(const struct backend_conv *cv, aug_draw d, const uint8_t *src, size_t q, size_t n, int c0,
                            int c1, uint8_t *stage);

/* Converts one stored image SRC into DST (its place in the batch) under draw D, with cv->simd.mode
 * TABLE or ARITH; STREAM: non-temporal stores (the caller fences). */
void h5pack_conv_avx2_image(const struct backend_conv *cv, aug_draw d, const uint8_t *src, float *dst, int stream);

#endif
