/* block_gather.h - bytes bound for computable offsets of one file range (the chunks several workers write,
 * or the tiles of one image in order), put into the file in pieces that cover whole 2 MiB-aligned blocks
 * wherever the range allows.
 *
 * Why: Linux caches a buffered write in folios no larger than the write allows, and never merges them
 * afterwards. A block shared by two chunks (or tiles) and written piece by piece stays in small folios,
 * and every pass of a reader that maps the file then populates its pages one by one (120-170 ns a page
 * here: 36 ms for a 20,000^2 image in tiles) where a 2 MiB folio is one page-table entry. So the parts of
 * a write that fill whole blocks go in at once, and the pieces of shared blocks wait in a buffer until the
 * block is complete, then go in with one write. */
#ifndef H5PACK_BLOCK_GATHER_H
#define H5PACK_BLOCK_GATHER_H

#include <stddef.h>
#include <stdint.h>

#define BLOCK_GATHER_STEP ((uint64_t)2 << 20) /* x86-64's and arm64's (4 KiB pages) huge page */

typedef struct block_gather block_gather;

/* A gatherer for file FD's range [LO, HI) (the chunks' bytes; blocks are clipped to it). NULL without
 * memory. */
block_gather *block_gather_new(int fd, uint64_t lo, uint64_t hi);

/* N bytes of P for offset AT (inside the range). Thread-safe. *WRITTEN gets the bytes this call put into
 * the file (its own and the waiting pieces it completed). 0, or -1 with errno (pwrite's, or ENOMEM). */
int block_gather_write(block_gather *g, const void *p, size_t n, uint64_t at, size_t *written);

/* Writes every piece still waiting (blocks whose other pieces never came), each with its own write.
 * 0, or -1 with errno; *WRITTEN as above. */
int block_gather_flush(block_gather *g, size_t *written);

/* The file range [*LO, *HI) of the last write that failed (for the message: with pieces held back it is
 * not the range of the chunk whose call reported it). 0, or -1 when none failed. */
int block_gather_failed(block_gather *g, uint64_t *lo, uint64_t *hi);

/* Frees G; pieces not flushed are dropped. NULL is a no-op. */
void block_gather_free(block_gather *g);

#endif
