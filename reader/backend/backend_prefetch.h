/* backend_prefetch.h - brings the next image's source into the cache while the CPU resamples the
 * current one. A crop's source rows come from the chunk cache in memory, one plane row at a time; the
 * hardware prefetchers stop at every 4 KiB page (16 rows of a 256-pixel plane), so without help each
 * image paid tens of cold misses (on a 2-core EPYC VM the kernel ran 1.6x faster with its sources in the
 * cache than from memory; docs/performance.md, "Sources from memory"). Spreading prefetches of the next
 * image's crop region over the output rows of the current one hides that latency at a few instructions
 * per output row.
 *
 * A prefetch is only a hint: a wrong or stale address costs nothing but the bandwidth (x86 prefetches
 * never fault), so the region is computed from the crop box alone, with a margin for the filter's reach,
 * before the image's taps are planned. */
#ifndef H5PACK_READER_BACKEND_PREFETCH_H
#define H5PACK_READER_BACKEND_PREFETCH_H

#include <stddef.h>
#include <stdint.h>

#include "augment_resample.h"

/* The part of one source image a resampling will read, and how much of it has been asked for. */
typedef struct src_prefetch {
    const uint8_t *base;      /* the source image; NULL: nothing to prefetch */
    size_t row_step;          /* bytes between rows */
    size_t plane_step;        /* bytes between planes (NCHW channels), 0 for one plane */
    uint32_t planes;
    uint32_t row0, rows;      /* the rows read */
    uint32_t byte0, byte1;    /* the bytes of each row read: [byte0, byte1) */
    uint32_t issued;          /* rows asked for so far (every plane of each) */
} src_prefetch;

/* The region image I of job J reads (at its own stored size: aug_job_for_image), from its crop box and a
 * margin for the filter's reach, with the source at SRC (the image's own j->images[i].src may not be set
 * yet); at most its first 512 KiB of rows (a crop of a large source). */
void h5pack_src_prefetch_region(src_prefetch *pf, const aug_job *j, uint32_t i, const uint8_t *src);

/* 1 unless H5PACK_NO_PREFETCH is on (env.h; read once) or a bench turned it off: then plans are empty. */
int h5pack_src_prefetch_enabled(void);

/* Turns the prefetch on or off for the process, whatever the environment said (benches compare both in
 * one run). */
void h5pack_src_prefetch_set_enabled(int on);

/* Nothing to prefetch. */
void h5pack_src_prefetch_none(src_prefetch *pf);

/* Whether the bytes [at, at + n) of plane PLANE, row ROW lie in the region (tests). */
int h5pack_src_prefetch_covers(const src_prefetch *pf, uint32_t plane, uint32_t row, uint32_t at, uint32_t n);

/* Output row Y of OUT_H of the image being resampled is next: asks for the region's next lines, so that
 * the whole region has been asked for by the last output row. PF may be NULL. */
void h5pack_src_prefetch_step(src_prefetch *pf, uint32_t y, uint32_t out_h);

#endif
