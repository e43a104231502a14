/* stored.h - the stored chunks of a dataset: where each HDF5 chunk's bytes lie in the store, and getting
 * them back as pixels (read, and inflate what the deflate filter wrote) from any thread, without HDF5 and
 * without a lock. Every storage kind reads through it: whole images (one chunk each, or chunks of chunks
 * that split images), images of several sizes (runs of a 1-D store), tiles (one chunk each).
 *
 * Where chunks lie is learnt once, at open, under HDF5's lock:
 *   implicit  HDF5's implicit index (unfiltered, fixed dimensions, allocated early: what h5pack writes
 *             uncompressed): chunk k at first + k * chunk_bytes, confirmed on the first, a middle and the
 *             last chunk; no table.
 *   located   any index, unfiltered or deflate (a shuffle filter is a no-op on bytes): every chunk's
 *             address, stored size and filter mask, learnt through store_h5.c's capture in O(n); one
 *             table entry (17 bytes) per chunk, up to STORED_LOCATE_MAX chunks (H5PACK_NO_LOCATE=1: none).
 * What neither covers (other filters, a failed locate) is read by the storage kind through HDF5. */
#ifndef H5PACK_STORE_STORED_H
#define H5PACK_STORE_STORED_H

#include <hdf5.h>
#include <stddef.h>
#include <stdint.h>

#include "store.h"

#define STORED_LOCATE_MAX ((uint64_t)1 << 24)

/* What reads cost, summed by the caller per thread (h5pack_stats' busy times and byte counts). */
typedef struct chunk_read_cost {
    uint64_t bytes_read;     /* from the store */
    uint64_t bytes_inflated; /* produced by decompression (0 for uncompressed) */
    double read_s, inflate_s;
} chunk_read_cost;

/* Where the HDF5 chunks of one dataset lie. Immutable after open: read from any thread. */
typedef struct stored_chunks {
    uint64_t n;           /* HDF5 chunks */
    uint64_t chunk_bytes; /* unfiltered bytes of each (edge chunks are stored full size) */
    uint64_t first;       /* implicit: the offset of chunk 0 in the store */
    uint64_t *addr;       /* located (NULL: implicit): each chunk's stored bytes in the store */
    uint64_t *size;       /* its stored size; 0: never written, it reads as the fill value */
    uint8_t *deflated;    /* 1: the deflate filter was applied to it (its filter mask bit is clear) */
    uint8_t fill;         /* the value of never-written chunks */
} stored_chunks;

/* One chunk's stored bytes. */
typedef struct stored_piece {
    uint64_t addr, size; /* size 0: never written */
    int deflated;
} stored_piece;

/* HDF5's offset (dataset coordinates) of chunk K, for the storage kind that numbers the chunks. */
typedef void (*stored_offset_fn)(const void *ctx, uint64_t k, hsize_t *offset);

/* ---- open (stored_locate.c), inside h5pack_h5_enter ----------------------------------------------- */

/* Whether DSET's N chunks of CHUNK_BYTES follow HDF5's implicit index; on 1, OUT describes them (the
 * dataset must be unfiltered, fixed and allocated early: the caller checks its properties). USERBLOCK:
 * the bytes before HDF5's address 0. */
int h5pack_stored_find_implicit(hid_t dset, uint64_t n, uint64_t chunk_bytes, uint64_t userblock,
                                stored_offset_fn offset_of, const void *ctx, stored_chunks *out);

/* Locates DSET's N chunks (FILE opened by h5pack_store_h5_open over a store of STORE_SIZE bytes).
 * DEFLATE_INDEX: the deflate filter's position in the pipeline, -1 for none. 0 with OUT filled, or -1
 * (too many chunks, H5PACK_NO_LOCATE, a chunk HDF5 cannot hand over in one piece, out of memory): OUT
 * then holds nothing and the caller reads through HDF5. */
int h5pack_stored_locate(hid_t file, hid_t dset, uint64_t n, uint64_t chunk_bytes, int deflate_index,
                         uint64_t store_size, stored_offset_fn offset_of, const void *ctx, stored_chunks *out);

void h5pack_stored_free(stored_chunks *c);

/* ---- reads (stored_read.c), from any thread -------------------------------------------------------- */

static inline stored_piece h5pack_stored_piece(const stored_chunks *c, uint64_t k)
{
    if (!c->addr)
        return (stored_piece){c->first + k * c->chunk_bytes, c->chunk_bytes, 0};
    return (stored_piece){c->addr[k], c->size[k], c->deflated[k]};
}

/* The stored bytes of C (summed sizes of chunks [K, END)). */
uint64_t h5pack_stored_bytes(const stored_chunks *c, uint64_t k, uint64_t end);

/* Per-thread room: stored bytes of a run, one unfiltered chunk, a decompressor. */
typedef struct stored_scratch stored_scratch;
stored_scratch *h5pack_stored_scratch_new(void);
void h5pack_stored_scratch_free(stored_scratch *sc);

/* Room for BYTES in SC's chunk buffer (unfiltered bytes a caller scatters from), or in its buffer of
 * stored bytes (what a caller fetched itself, e.g. through HDF5, before h5pack_stored_unpack); the two
 * never share memory. NULL when out of memory. */
uint8_t *h5pack_stored_chunk_room(stored_scratch *sc, size_t bytes);
uint8_t *h5pack_stored_bytes_room(stored_scratch *sc, size_t bytes);

/* The end of the run of chunks from K (< LIMIT) that lie back to back in the store, every one written,
 * their stored bytes at most MAX_BYTES (at least K + 1). */
uint64_t h5pack_stored_run_end(const stored_chunks *c, uint64_t k, uint64_t limit, uint64_t max_bytes);

/* One read of the stored bytes of chunks [K, END) (a run: h5pack_stored_run_end) into SC; *BYTES points at
 * them. 0, or EIO / ECORRUPT / ENOMEM with the reason in WHY. */
int h5pack_stored_fetch(store *st, const stored_chunks *c, uint64_t k, uint64_t end, stored_scratch *sc,
                        const uint8_t **bytes, chunk_read_cost *cost, char *why, size_t why_len);

/* The unfiltered bytes (CHUNK_BYTES) of the chunk P whose stored bytes are BYTES: BYTES themselves when it
 * was stored unfiltered (its size checked), else inflated into OUT (or, OUT NULL, into SC's chunk buffer);
 * *PIXELS NULL for a chunk never written. 0, or ECORRUPT / ENOMEM with the reason in WHY. */
int h5pack_stored_unpack(const stored_piece *p, uint64_t chunk_bytes, const uint8_t *bytes, uint8_t *out,
                         stored_scratch *sc, const uint8_t **pixels, chunk_read_cost *cost, char *why,
                         size_t why_len);

/* Chunk K's unfiltered bytes into OUT (chunk_bytes; a never-written chunk as the fill value): read straight
 * into OUT when stored unfiltered, else read and inflated into it. 0, or EIO / ECORRUPT / ENOMEM. */
int h5pack_stored_get(store *st, const stored_chunks *c, uint64_t k, uint8_t *out, stored_scratch *sc,
                      chunk_read_cost *cost, char *why, size_t why_len);

/* Zero-copy: chunk K's bytes where the store has views and K is stored unfiltered, its pages brought in
 * (the chunk's stored bytes counted as read); NULL: use h5pack_stored_get. */
const uint8_t *h5pack_stored_view(store *st, const stored_chunks *c, uint64_t k, chunk_read_cost *cost);

/* The view of chunk K is no longer used (see h5pack_store_unview). */
void h5pack_stored_unview(store *st, const stored_chunks *c, uint64_t k);

#endif
