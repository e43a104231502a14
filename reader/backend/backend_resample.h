/* backend_resample.h - runs a resampling job (augment_resample.h) on the CPU. */
#ifndef H5PACK_READER_BACKEND_RESAMPLE_H
#define H5PACK_READER_BACKEND_RESAMPLE_H

#include <stddef.h>
#include <stdint.h>

#include "augment_resample.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Floats of scratch h5pack_resample_images needs for job J. */
size_t h5pack_resample_scratch_floats(const aug_job *j);

/* Images [first, first + n) of job J into j->out, with AVX2 where the CPU has it. */
void h5pack_resample_images(const aug_job *j, uint32_t first, uint32_t n, float *scratch);

/* The same with the pass chosen: SIMD 1 = AVX2 (only where h5pack_resample_avx2_supported()), 0 = the
 * scalar pass. Both give the same bits; tests and benches compare them. */
void h5pack_resample_images_with(const aug_job *j, uint32_t first, uint32_t n, float *scratch, int simd);

#ifdef __cplusplus
}
#endif

#endif
