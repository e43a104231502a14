/* backend_resample_avx512.h - the AVX-512 pass of the CPU resampling (backend_resample_avx512.c): the
 * integer pass of backend_resample_fixed.c 16 output columns at a time, with VBMI byte permutes, and
 * the float vertical sums 16 columns at a time. Same bits as every other pass (augment_resample.h).
 * It takes the common crops: each 16 output columns' taps within 64 source bytes, at most 8 taps per
 * axis (every random resized crop to 224 from up to about 3.5x its size), NCHW output or one channel. */
#ifndef H5PACK_READER_BACKEND_RESAMPLE_AVX512_H
#define H5PACK_READER_BACKEND_RESAMPLE_AVX512_H

#include <stddef.h>
#include <stdint.h>

#include "augment_resample.h"
#include "backend_prefetch.h"

/* 1 when this CPU runs AVX-512 F, BW, VL, VBMI and VNNI (Ice Lake and later, Zen 4 and later) and the
 * library was built for x86-64 with GCC or clang; 0 when H5PACK_NO_AVX512 is on (env.h; read once), for
 * CPUs where 512-bit code lowers the clock more than it gains, and for comparisons. */
int h5pack_resample_avx512_supported(void);

/* Bytes of work memory h5pack_resample_avx512_image needs for any image of job J. */
size_t h5pack_resample_avx512_work_bytes(const aug_job *j);

/* Image I of job J (its view: aug_job_for_image) into j->out, with WORK (h5pack_resample_avx512_work_bytes,
 * 64-byte aligned). STREAM: non-temporal stores where aligned. NEXT (or NULL): the region to bring into
 * the cache meanwhile (backend_prefetch.h). 0, or -1 when the image does not fit this pass (nothing
 * written or asked for then: another pass does it). Call only where supported. */
int h5pack_resample_avx512_image(const aug_job *j, uint32_t i, void *work, int stream, src_prefetch *next);

#endif
