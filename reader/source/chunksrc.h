/* chunksrc.h - the file side of the reader: opens and validates the HDF5 file, learns where every chunk
 * is, and reads one chunk's decompressed bytes from any thread.
 *
 * The reader's "chunk" is a run of samples_per_chunk = k whole images. For an HDF5 chunked dataset it is
 * the chunk of every HDF5 chunk of rows [i*k, (i+1)*k), k the chunk shape's extent along the sample axis:
 * one HDF5 chunk for h5pack's whole-image chunks (k,C,H,W), several for shapes that split images (h5py's
 * chunks=True, e.g. (188,1,28,23) for 218x178 RGB images: 192 per chunk), which are read and scattered
 * into the chunk's k images (chunksrc_split.c). Plan, order, cache and simulator only see chunks.
 *
 * Read paths (h5pack.h's H5PACK_READ_PATH_MAP), fastest first (see shared notes on HDF5 1.10.8: one
 * global lock, O(n^2) chunk listing). Every byte comes from the file's store (store.h), located chunks
 * through stored.h:
 *   implicit  whole-image chunks, unfiltered, fixed dims, early allocation, latest format: chunk i at
 *             addr0 + i*chunk_bytes; read (or lent from the store's map) by workers, no HDF5, no lock.
 *   contiguous an unchunked dataset: one address range; "chunks" are runs of samples_per_chunk images
 *             (chosen at about 1 MiB); read, no lock.
 *   raw       (LOCATED unfiltered, RAW_DEFLATE with deflate) deflate-only (plus shuffle, a no-op for
 *             uint8) or unfiltered chunks of any shape and index type (h5py's maxshape=(None,...),
 *             chunks=True): every HDF5 chunk's address and size are located once at open (stored.h);
 *             workers then read (back-to-back chunks of a chunk in one request), inflate with libdeflate
 *             and scatter, no HDF5 call, no lock. If locating fails: H5Dread_chunk under the mutex,
 *             inflate and scatter outside it.
 *   hdf5      anything else (fletcher32, lzf, other filters): H5Dread of the chunk's rows under the mutex;
 *             HDF5 applies and checks every filter.
 * Images are 4-D (N,C,H,W) / (N,H,W,C) uint8, or 3-D (N,H,W) gray images read as C = 1.
 */
#ifndef H5PACK_CHUNKSRC_H
#define H5PACK_CHUNKSRC_H

#include <stddef.h>
#include <stdint.h>

#include "h5pack.h"
#include "stored.h" /* chunk_read_cost */

/* The raw path (see above): located, or through H5Dread_chunk; deflate (RAW_DEFLATE) or not (LOCATED). */
static inline int h5pack_read_path_is_raw(h5pack_read_path p)
{
    return p == H5PACK_READ_RAW_DEFLATE || p == H5PACK_READ_LOCATED;
}

typedef struct source_geometry {
    uint64_t n_samples;
    uint32_t channels, height, width;
    h5pack_layout layout;       /* NCHW or NHWC */
    uint64_t image_bytes;       /* C*H*W */
    uint64_t samples_per_chunk; /* k */
    uint64_t n_chunks;          /* chunks */
    uint64_t chunk_bytes;       /* k * image_bytes (the last chunk may hold fewer images) */
    uint64_t chunks_per_slab;   /* HDF5 chunks per reader chunk: 1 for whole-image chunks (and unchunked) */
    uint64_t hdf5_chunk[4];     /* HDF5 chunk shape as 4-D in file order (C = 1 inserted for 3-D); 0s unchunked */
    int rank;                   /* of the images dataset: 4, or 3 for (N,H,W) gray images */
    h5pack_read_path path;      /* h5pack.h's list; the raw path is RAW_DEFLATE or LOCATED (no deflate) */
    int compressed;             /* a deflate filter is present */
    int has_labels;
    uint32_t n_classes;         /* length of "classes", else max label + 1, 0 without labels (and for
                                   table labels: several columns, floats, negative values) */
    uint32_t label_columns;     /* K: values per sample (1 for (N,)); 0 without labels */
    int label_rank;             /* 1: (N,), 2: (N,K); 0 without labels */
    int labels_are_float;       /* float32 rows (h5pack_chunksrc_label_rows), else int64 */
    int has_stats;              /* root attributes "mean" and "std" (C float64 values in [0,1]) */
    double mean[H5PACK_MAX_CHANNELS], std[H5PACK_MAX_CHANNELS];
    int located;                /* raw path with every chunk located at open: reads take no lock */
    /* Facts that only describe the file (h5pack_describe), learnt by the same open. */
    uint64_t file_bytes;
    int chunked;                /* HDF5 chunked layout (else the chunks above are runs of images) */
    int n_filters;              /* filters in the images' pipeline */
    char filters[128];          /* "shuffle, deflate(4)", "" for none */
    int format_version;         /* root attribute h5pack_format_version, -1 when absent (foreign file) */
    int several_sizes;                 /* images of several sizes (format version 2): height, width and image_bytes
                                   are the largest; chunk_bytes the largest chunk; each image's own place
                                   and size: h5pack_chunksrc_image_offset / _image_size */
    uint64_t pixel_bytes;       /* every image's bytes summed (n_samples x image_bytes for one size) */
} source_geometry;

/* Whether workers read chunks outside HDF5's lock (h5pack_info.fast_path, h5pack_file_desc.fast_path). */
static inline int h5pack_chunksrc_fast_path(const source_geometry *g)
{
    return g->path == H5PACK_READ_IMPLICIT || g->path == H5PACK_READ_CONTIGUOUS || g->located;
}

typedef struct chunk_source chunk_source;

/* Opens PATH and checks IMAGES (4-D uint8, or 3-D gray; any chunk shape) and LABELS (NULL/"" = none; a
 * missing dataset named "labels" is allowed and means none; any other name must exist; length must equal
 * N; integer type). LAYOUT_HINT: AUTO reads the "layout" attribute of the images dataset ("NCHW" or
 * "NHWC"), else of the root group, else infers (a last dim of 1, 3 or 4 with a second dim not in
 * {1,3,4} means NHWC; 3-D: NCHW with C = 1). Error codes: ENOTFOUND, EFORMAT, ECORRUPT, EHDF5, ENOMEM, with the file name and
 * the reason in ERR. */
int h5pack_chunksrc_open(const char *path, const char *images, const char *labels, h5pack_layout layout_hint,
                  chunk_source **out, char *err, size_t err_len);

const source_geometry *h5pack_chunksrc_geometry(const chunk_source *s);

/* The store S reads its bytes from (store.h). */
struct store *h5pack_chunksrc_store(const chunk_source *s);

/* All N x K integer labels as int64, row-major (read once at open), or NULL without labels or when they
 * are floating point. */
const int64_t *h5pack_chunksrc_labels(const chunk_source *s);

/* All N rows of labels: K int64 or K float32 values each (labels_are_float), NULL without labels. */
const void *h5pack_chunksrc_label_rows(const chunk_source *s);

/* Bytes of one sample's labels: K * 8 (int64) or K * 4 (float32); 0 without labels. */
static inline size_t h5pack_chunksrc_label_bytes(const source_geometry *g)
{
    return g->has_labels ? (size_t)g->label_columns * (g->labels_are_float ? 4 : 8) : 0;
}

/* Bytes the read of CHUNK takes from the file (stored size, summed over a chunk's HDF5 chunks; for
 * compressed chunks the compressed size). */
uint64_t h5pack_chunksrc_stored_bytes(const chunk_source *s, uint64_t chunk);

/* Byte offset of image I in its chunk as read (images of one size: (I mod k) * image_bytes), and its
 * stored height and width (one size: the file's). */
uint64_t h5pack_chunksrc_image_offset(const chunk_source *s, uint64_t i);
void h5pack_chunksrc_image_size(const chunk_source *s, uint64_t i, uint32_t *h, uint32_t *w);

/* Samples in CHUNK (k, or fewer for the last one). */
uint64_t h5pack_chunksrc_chunk_samples(const chunk_source *s, uint64_t chunk);

/* Per-thread state for reads: stored.h's (stored bytes, one inflated HDF5 chunk of a split chunk, a
 * decompressor). */
typedef struct stored_scratch chunksrc_scratch;
chunksrc_scratch *h5pack_chunksrc_scratch_new(const chunk_source *s);
void h5pack_chunksrc_scratch_free(chunksrc_scratch *sc);

/* Reads CHUNK into DST (room for chunk_bytes) as images in the file's layout. Thread-safe (each thread
 * with its own scratch). Adds to *COST. Returns 0, or EIO / ECORRUPT (short read, inflate failure, size
 * mismatch, checksum) / EHDF5 with the chunk number and the reason in ERR. */
int h5pack_chunksrc_read(chunk_source *s, uint64_t chunk, uint8_t *dst, chunksrc_scratch *sc, chunk_read_cost *cost,
                  char *err, size_t err_len);

/* CHUNK will be read soon (the plan loads it): the store is told the byte ranges h5pack_chunksrc_read will
 * ask for, so that a remote store can fetch them ahead (store.h, will_read). Nothing for stores that do
 * not read ahead, nor for the hdf5 path and unlocated chunks (HDF5 reads those). Calls in plan order. */
void h5pack_chunksrc_will_read(chunk_source *s, uint64_t chunk);

/* h5pack_chunksrc_map answers this when CHUNK has to go through h5pack_chunksrc_read. */
#define CHUNKSRC_NOT_MAPPED 1

/* Zero-copy read of the implicit and contiguous paths of an uncompressed file whose store has views
 * (store.h: a local file's memory map, unless H5PACK_NO_MMAP=1). Returns 0 with *DATA pointing at CHUNK's
 * images in the file's layout (valid until h5pack_chunksrc_close) once they can be read, with the chunk's
 * bytes added to *COST as h5pack_chunksrc_read would; else CHUNKSRC_NOT_MAPPED (no views, or the pages
 * cannot be brought in, e.g. the file was truncated since open: h5pack_chunksrc_read then reports it).
 * Thread-safe. A file truncated by another process while a pointer is in use raises SIGBUS: see
 * docs/reader.md. */
int h5pack_chunksrc_map(chunk_source *s, uint64_t chunk, const uint8_t **data, chunk_read_cost *cost);

/* DATA (from h5pack_chunksrc_map) is no longer used: its pages leave the process's page tables
 * (h5pack_store_unview; the page cache keeps them), so that resident memory follows the chunk cache as
 * with pread, not the whole file. Pointers lent for the same chunk elsewhere stay valid (they fault the
 * pages back in). Anything else is ignored. */
void h5pack_chunksrc_map_release(chunk_source *s, const uint8_t *data);

/* Whether S reads through the mapping (see h5pack_chunksrc_map). */
int h5pack_chunksrc_is_mapped(const chunk_source *s);

/* Closes the file. NULL is a no-op. */
void h5pack_chunksrc_close(chunk_source *s);

#endif
