/* backend_resample_avx2.h - the AVX2 pass of the CPU resampling (backend_resample_avx2.c), chosen at run
 * time by backend_resample.c; same bits as the scalar pass. */
#ifndef H5PACK_READER_BACKEND_RESAMPLE_AVX2_H
#define H5PACK_READER_BACKEND_RESAMPLE_AVX2_H

#include <stddef.h>
#include <stdint.h>

#include "augment_resample.h"
#include "backend_prefetch.h"

/* 1 when this CPU runs AVX2 and F16C (and the library was built for x86-64 with GCC or clang). */
int h5pack_resample_avx2_supported(void);

/* Floats of WORK that h5pack_resample_avx2_image needs for job J (8 source rows, twice). */
size_t h5pack_resample_avx2_work_floats(const aug_job *j);

/* Image I of job J into j->out: H holds the horizontal sums (as the scalar pass's scratch), WORK
 * h5pack_resample_avx2_work_floats(j) floats. FIXED_WORK: the integer pass's memory
 * (backend_resample_fixed.h; it may overlap H), or NULL to use the float pass only. STREAM:
 * non-temporal stores where aligned. NEXT (or NULL): the region to bring into the cache meanwhile. */
void h5pack_resample_avx2_image(const aug_job *j, uint32_t i, float *h, float *work, void *fixed_work, int stream,
                                src_prefetch *next);

#endif
