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
