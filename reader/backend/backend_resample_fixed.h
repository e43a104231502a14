/* backend_resample_fixed.h - the integer AVX2 pass of the CPU resampling (backend_resample_fixed.c): the
 * common crops (each group of 4 output columns reads at most 16 source bytes per channel, at most 8
 * taps per axis, which covers every random resized crop to 224 from up to about 2.8x its size) with
 * 16-bit multiply-adds for the horizontal sums. Same bits as the float passes: the sums of
 * augment_resample.h are integers. */
#ifndef H5PACK_READER_BACKEND_RESAMPLE_FIXED_H
#define H5PACK_READER_BACKEND_RESAMPLE_FIXED_H

#include <stddef.h>
#include <stdint.h>

#include "augment_resample.h"

/* Tap pair P (taps 2P and 2P + 1) of output column X of image I, as the integer passes' byte shuffles
 * take it: the taps' source columns less BASE at IDX[0] and IDX[2], their 14-bit weights at W2 (integers
 * <= 2^14: augment_resample.h). An unused tap (or X past the row) gets index NONE and weight 0; IDX[1]
 * and IDX[3], the high bytes of 16-bit lanes, get NONE too. */
static inline void h5pack_resample_tap_pair(const aug_job *j, uint32_t i, uint32_t x, uint32_t p, int32_t base,
                                            uint8_t none, uint8_t idx[4], int16_t w2[2])
{
    int32_t first = 0, n = 0;
    const float *w = NULL;
    if (x < j->out_w)
        aug_column_taps(j, i, x, &first, &n, &w);
    for (uint32_t q = 0; q < 2; q++) {
        int32_t t = (int32_t)(2 * p + q);
        int used = t < n;
        idx[2 * q] = used ? (uint8_t)(first + t - base) : none;
        idx[2 * q + 1] = none;
        w2[q] = used ? (int16_t)w[t] : 0;
    }
}

/* One image's run of the integer pass: its tables and rows, in the caller's work memory. */
typedef struct fixed_image {
    const aug_job *j;
    uint32_t image;
    uint32_t pairs;       /* tap pairs per output column (the image's most taps, halved up) */
    uint32_t hs;          /* h row stride in int16 (out_w rounded up to 16) */
    uint32_t col0, col1;  /* source columns the taps read */
    int32_t r0, next;     /* the image's first source row; the next one the horizontal pass makes */
    float *h;             /* C rows of hs values per source row from r0: h of augment_resample.h */
    uint8_t *rows;        /* one source row, C planar channels of row_bytes */
    size_t row_bytes;
    int32_t *base;        /* per 8 output columns, the first source column each half reads */
    uint8_t *masks;       /* per 8 output columns and tap pair, 32 bytes of byte shuffle */
    int16_t *weights;     /* per 8 output columns and tap pair, 16 weights */
} fixed_image;

/* Bytes of work memory h5pack_resample_fixed_begin needs for any image of job J. */
size_t h5pack_resample_fixed_work_bytes(const aug_job *j);

/* Prepares image I of J (its view: aug_job_for_image) in WORK (h5pack_resample_fixed_work_bytes(j),
 * 32-byte aligned). 0, or -1 when its taps do not fit the integer pass (the float pass does it then). */
int h5pack_resample_fixed_begin(const aug_job *j, uint32_t i, void *work, fixed_image *f);

/* The h rows output row Y reads, made first where they are not yet: returns its first tap's row,
 * channel 0; channel c at + c * hs, the next tap's row at + C * hs. Rows go in increasing order. */
const float *h5pack_resample_fixed_rows(fixed_image *f, uint32_t y);

#endif
