/* chunksrc_impl.h - private parts of the chunk source, shared by chunksrc_open.c (validation, path
 * choice), chunksrc_read.c / chunksrc_raw.c (the read paths), chunksrc_split.c (chunks of HDF5 chunks that
 * split images) and the other chunksrc_*.c files; the HDF5 helpers are
 * common/h5glue.h. Not for other parts: they use chunksrc.h. */
#ifndef H5PACK_CHUNKSRC_IMPL_H
#define H5PACK_CHUNKSRC_IMPL_H

#include <hdf5.h>

#include "chunksrc.h"
#include "h5glue.h" /* every HDF5 call of the chunk sources runs inside h5pack_h5_enter / h5pack_h5_leave */
#include "store_h5.h"
#include "stored.h"

#define CHUNKSRC_MAX_FILTERS 8
/* More chunks than this: a damaged header (HDF5 itself cannot index that many in practice). */
#define CHUNKSRC_MAX_CHUNKS ((uint64_t)1 << 32)

struct chunk_source {
    char *path;
    source_geometry g;
    store *st;            /* where the file's bytes come from (store.h); HDF5 reads its metadata through it */
    uint64_t userblock;   /* bytes before the HDF5 data: HDF5 addresses are relative to this */
    uint64_t base_addr;   /* offset in the store of: chunk 0 (implicit), the data (contiguous) */
    uint64_t file_size;   /* the store's size */
    int views;            /* implicit / contiguous, uncompressed, and the store has views: chunks lent zero-copy */

    /* raw and hdf5 paths: HDF5 stays open; every HDF5 call happens inside h5pack_h5_enter / h5pack_h5_leave. */
    hid_t file, dset, fspace;
    int chunked;          /* the dataset has a chunked layout (else "chunks" are runs of images) */

    /* Shape as 4-D in file order (chunksrc_split.c): a 3-D (N,H,W) dataset gets C = 1 at unit_axis. The
     * reader's chunk is the chunk of the grid[1]*grid[2]*grid[3] = cps HDF5 chunks of k = cdims[0] rows. */
    int rank;             /* of the images dataset: 4, or 3 for gray images */
    int unit_axis;        /* rank 3: 1 (NCHW) or 3 (NHWC), the axis HDF5 does not know; -1 for rank 4 */
    uint64_t dims[4];
    uint64_t cdims[4];    /* HDF5 chunk shape (chunked datasets) */
    uint64_t grid[4];     /* HDF5 chunks along each axis (grid[0] = chunks = g.n_chunks) */
    uint64_t cps;         /* HDF5 chunks per chunk */
    uint64_t n_h5_chunks; /* chunks x cps */
    uint64_t h5_chunk_bytes; /* unfiltered bytes of one HDF5 chunk (edge chunks are stored full size) */
    int whole;            /* HDF5 chunks hold whole images: a chunk is one HDF5 chunk, read in place */
    int deflate_index;    /* position of the deflate filter in the pipeline (filter mask bit), -1 none */
    uint8_t fill_byte;    /* value of never-written chunks */
    uint64_t *stored;     /* chunked raw/hdf5 paths: stored size + 1 per chunk (its HDF5 chunks' sizes
                             summed), 0 = not known yet (calloc'd: pages of chunks never asked about are
                             never touched) */

    /* raw path with every HDF5 chunk located (stored.h): read from the store, no HDF5 after open. Indexed
     * by chunk * cps + (position of the chunk in its chunk, row-major over grid[1..3]); for images of several
     * sizes, the HDF5 chunks of the 1-D store in order. located.addr NULL: not located. */
    stored_chunks located;

    int64_t *labels;          /* integer labels, N x K */
    float *labels_float;      /* floating-point labels, N x K */

    /* images of several sizes (chunksrc_sizes.c): each image's first byte in the store, its (h, w) */
    uint64_t *img_offset;
    uint32_t *img_hw;
    double stored_ratio;      /* stored bytes / pixel bytes of the whole store (a reader chunk's share,
                                 for compressed stores: HDF5 chunks do not follow the reader's) */
};

/* --- chunksrc_open.c helpers used by chunksrc_read.c ------------------------------------------------- */

/* snprintf into ERR with the file name of S first (S NULL: FMT names it). Returns CODE. */
int h5pack_chunksrc_fail(const chunk_source *s, int code, char *err, size_t err_len, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* h5pack_chunksrc_fail with WHAT followed by the current HDF5 error stack's text. */
int h5pack_chunksrc_fail_h5(const chunk_source *s, int code, char *err, size_t err_len, const char *what);

/* The images' filter pipeline: counts, and the deflate filter's position (-1: none). */
typedef struct filter_summary {
    int n, deflate, shuffle, other;
    int deflate_index;
} filter_summary;

/* chunksrc_path.c: reads DCPL's filters into *F and their names into S's geometry; EFORMAT for a filter
 * this HDF5 cannot decode, ECORRUPT for an unreadable pipeline. */
int h5pack_chunksrc_read_filters(chunk_source *s, hid_t dcpl, filter_summary *f, char *err, size_t err_len);

/* chunksrc_path.c: chunk shape, filters, index: sets the path and the chunk geometry of S. */
int h5pack_chunksrc_choose_path(chunk_source *s, const char *name, const hsize_t *dims, const hsize_t *maxdims,
                         char *err, size_t err_len);

/* Stored bytes of a chunk (its HDF5 chunks' summed; the caller is inside h5pack_h5_enter); 0 = none of
 * them allocated. */
int h5pack_chunksrc_query_stored_locked(chunk_source *s, uint64_t chunk, uint64_t *size);

/* Stored bytes of HDF5 chunk R of CHUNK (caller inside h5pack_h5_enter); 0 = never written. 0 or -1. */
int h5pack_chunksrc_h5_stored_locked(chunk_source *s, uint64_t chunk, uint64_t r, uint64_t *size);

/* --- chunksrc_sizes.c ------------------------------------------------------------------------------ */

/* Images of several sizes: the store NAME (open in s->dset), its tables, the chunks over it and the read
 * path. Replaces the shape, layout and path steps of images of one size. */
int h5pack_chunksrc_open_several_sizes(chunk_source *s, const char *name, char *err, size_t err_len);

/* First byte of CHUNK relative to the start of the image data, and its bytes (every path). */
uint64_t h5pack_chunksrc_chunk_start(const chunk_source *s, uint64_t chunk);
uint64_t h5pack_chunksrc_chunk_len(const chunk_source *s, uint64_t chunk);

/* chunksrc_sizes_raw.c: locates every HDF5 chunk (CHUNK_BYTES each) of the TOTAL-byte store (0, or -1:
 * the HDF5 path then), and reads reader chunk CHUNK through them (stored.h: no lock). */
int h5pack_chunksrc_several_sizes_locate(chunk_source *s, uint64_t total, uint64_t chunk_bytes, int deflate_index);
int h5pack_chunksrc_read_several_sizes_raw(chunk_source *s, uint64_t chunk, uint8_t *dst, chunksrc_scratch *sc,
                                    chunk_read_cost *cost, char *err, size_t err_len);

/* Images of several sizes: CHUNK's stored bytes, its share of the store's (compressed stores: by its
 * pixel bytes, the HDF5 chunks not being aligned with the reader's). */
uint64_t h5pack_chunksrc_several_sizes_stored(const chunk_source *s, uint64_t chunk);

/* --- chunksrc_split.c ------------------------------------------------------------------------------- */

/* FILE_DIMS (the dataset's rank) as 4-D in file order. */
void h5pack_chunksrc_expand_dims(const chunk_source *s, const hsize_t *file_dims, hsize_t *out4);

/* 4-D V4 in the dataset's rank, for HDF5 calls; returns the rank. */
int h5pack_chunksrc_file_coords(const chunk_source *s, const uint64_t *v4, hsize_t *out);

/* 4-D origin of HDF5 chunk R of CHUNK, and the same as an HDF5 chunk offset (returns the rank). */
void h5pack_chunksrc_chunk_origin(const chunk_source *s, uint64_t chunk, uint64_t r, uint64_t *o4);
int h5pack_chunksrc_chunk_offset(const chunk_source *s, uint64_t chunk, uint64_t r, hsize_t *offset);

/* From the HDF5 chunk shape CDIMS4 (4-D, file order): the chunk geometry of S and g (samples_per_chunk,
 * n_chunks, chunk_bytes, chunks_per_slab). EFORMAT / ECORRUPT for shapes that cannot be read. */
int h5pack_chunksrc_set_split(chunk_source *s, const char *name, const hsize_t *cdims4, char *err, size_t err_len);

/* Copies HDF5 chunk R of CHUNK (its h5_chunk_bytes, unfiltered) into the chunk's images at DST, clipped to
 * the extent and to the chunk's rows; PIXELS NULL writes the fill value instead. */
void h5pack_chunksrc_scatter(const chunk_source *s, uint64_t chunk, uint64_t r, const uint8_t *pixels, uint8_t *dst);

/* --- chunksrc_raw.c -------------------------------------------------------------------------------- */

/* The raw path's read of chunk CHUNK (see chunksrc.h). */
int h5pack_chunksrc_read_raw(chunk_source *s, uint64_t chunk, uint8_t *dst, chunksrc_scratch *sc,
                             chunk_read_cost *cost, char *err, size_t err_len);

/* chunksrc_read.c: WHY (a stored.h or store read's reason) as the failure of reading CHUNK. Returns RC. */
int h5pack_chunksrc_fail_chunk(const chunk_source *s, uint64_t chunk, int rc, const char *why, char *err,
                               size_t err_len);

/* chunksrc_read.c: an HDF5 failure reading CHUNK: EIO or ECORRUPT with WHAT and HDF5's text. */
int h5pack_chunksrc_fail_read(chunk_source *s, uint64_t chunk, const char *what, char *err, size_t err_len);

/* h5pack_chunksrc_open without the probe: the HDF5 work in this process, on PATH's store ST (opened by
 * the caller; the source takes it over, and closes it on failure too). The caller is inside
 * h5pack_h5_enter. */
int h5pack_chunksrc_open_in_process(store *st, const char *path, const char *images, const char *labels,
                                    h5pack_layout hint, chunk_source **out, char *err, size_t err_len);

/* --- chunksrc_probe.c ------------------------------------------------------------------------------- */

/* HDF5 1.10.8 can crash or loop on damaged metadata (old-format files have no checksums). The probe
 * runs the whole open, plus a lookup of every chunk's stored size, in another process first (the helper
 * program h5pack-isolate, isolate.h; never a fork of this one): a crash or a hang there becomes ECORRUPT
 * here. On success *STORED (malloc'd, N_STORED entries; NULL when the path keeps no sizes) holds the sizes
 * the helper found. Only files without metadata checksums
 * (superblock < 2) are probed; H5PACK_PROBE=always|never overrides (see chunksrc_probe.c). */
int h5pack_chunksrc_probe(store *st, const char *path, const char *images, const char *labels, h5pack_layout hint,
                   uint64_t **stored, uint64_t *n_stored, char *err, size_t err_len);

/* --- chunksrc_raw.c: the raw path's chunks located (stored.h) ------------------------------------- */

/* Learns every HDF5 chunk's address, size and filter mask into s->located. 0 when all are known, -1
 * otherwise (nothing kept: reads then go through H5Dread_chunk). Caller inside h5pack_h5_enter. */
int h5pack_chunksrc_locate_chunks(chunk_source *s);

/* The runs read_located reads for CHUNK, told to the store (h5pack_chunksrc_will_read); nothing when the
 * chunks are not located. */
void h5pack_chunksrc_raw_will_read(chunk_source *s, uint64_t chunk);

#endif
