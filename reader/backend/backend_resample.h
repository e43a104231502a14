/* backend_resample.h - runs a resampling job (augment_resample.h) on the CPU. */
#ifndef H5PACK_READER_BACKEND_RESAMPLE_H
#define H5PACK_READER_BACKEND_RESAMPLE_H

#include <stddef.h>
#include <stdint.h>

#include "augment_resample.h"
#include "backend_prefetch.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Floats of scratch h5pack_resample_images needs for job J. */
size_t h5pack_resample_scratch_floats(const aug_job *j);

/* Images [first, first + n) of job J into j->out, with AVX-512 or AVX2 where the CPU has it; each
 * image's source region is prefetched while the image before it is resampled (backend_prefetch.h). */
void h5pack_resample_images(const aug_job *j, uint32_t first, uint32_t n, float *scratch);

/* Image I of job J alone, prefetching NEXT (h5pack_src_prefetch_region; NULL: nothing) meanwhile: for a
 * caller that knows which image it resamples next only image by image (the reader's workers). */
void h5pack_resample_image_then(const aug_job *j, uint32_t i, float *scratch, src_prefetch *next);

/* The passes h5pack_resample_images_with can be told to use, each faster than the one before. */
enum {
    H5PACK_RESAMPLE_SCALAR = 0, /* plain C */
    H5PACK_RESAMPLE_FLOAT = 1,  /* AVX2, float sums */
    H5PACK_RESAMPLE_FIXED = 2,  /* AVX2, 16-bit integer sums where the taps fit (backend_resample_fixed.h), else
                                   float */
    H5PACK_RESAMPLE_AVX512 = 3  /* AVX-512 where the taps fit (backend_resample_avx512.h), else as FIXED */
};

/* The fastest pass this CPU runs, which h5pack_resample_images uses; every pass up to it runs here. */
int h5pack_resample_best_pass(void);

/* The same with the pass chosen (SIMD: H5PACK_RESAMPLE_*, at most h5pack_resample_best_pass()). All give
 * the same bits; tests and benches compare them. */
void h5pack_resample_images_with(const aug_job *j, uint32_t first, uint32_t n, float *scratch, int simd);

#ifdef __cplusplus
}
#endif

#endif
