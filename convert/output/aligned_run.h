/* aligned_run.h - bytes bound for one contiguous range of a file, gathered and written in pieces that
 * start and end on 2 MiB boundaries of the file (except at the range's ends).
 *
 * Why: Linux (6.x, ext4 and others with large folios) caches a buffered write in folios no larger than
 * the write allows, and a folio is never merged afterwards. Tiles of 192 KiB written one by one leave
 * the file in the page cache as small folios; written as whole aligned 2 MiB pieces, they are cached as
 * 2 MiB folios, which a reader's mapping takes as one huge-page entry each: populating the tiles of a
 * 20,000^2 image went from 36 ms to under 1 ms per pass, with fewer TLB misses in the copies after it
 * (docs/performance.md, "Patches"). Elsewhere the pieces are simply large writes. */
#ifndef H5PACK_ALIGNED_RUN_H
#define H5PACK_ALIGNED_RUN_H

#include <stddef.h>
#include <stdint.h>

#define ALIGNED_RUN_STEP ((uint64_t)2 << 20) /* x86-64's and arm64's (4 KiB pages) huge page */

typedef struct aligned_run {
    int fd;
    uint8_t *buf;   /* the bytes of one block not written yet (less than STEP) */
    size_t len;
    uint64_t at;    /* the file offset of buf[0] */
} aligned_run;

/* A run writing to FD. 0, or -1 without memory. */
int aligned_run_init(aligned_run *r, int fd);

/* N bytes of P for file offset AT. Bytes that do not continue the run flush it first; whole blocks go
 * into the file straight from P, and only a block's unfinished start or end waits in the buffer (so
 * memory is one block, whatever N). *WRITTEN gets the bytes written to the file by this call. 0, or -1
 * with errno (pwrite's). */
int aligned_run_add(aligned_run *r, uint64_t at, const void *p, size_t n, size_t *written);

/* Writes what is left. 0, or -1 with errno; *WRITTEN as above. */
int aligned_run_flush(aligned_run *r, size_t *written);

/* Frees the buffer; anything not flushed is dropped. */
void aligned_run_free(aligned_run *r);

#endif
