/* chunksrc_impl.h - private parts of the chunk source, shared by chunksrc_open.c (validation, path
 * choice), chunksrc_read.c (the four read paths) and the other chunksrc_*.c files; the HDF5 helpers are
 * reader/common/h5glue.h. Not for other parts: they use chunksrc.h. */
#ifndef H5PACK_CHUNKSRC_IMPL_H
#define H5PACK_CHUNKSRC_IMPL_H

#include <hdf5.h>

#include "chunksrc.h"
#include "h5glue.h" /* every HDF5 call of the chunk sources runs inside h5pack_h5_enter / h5pack_h5_leave */

#define CHUNKSRC_MAX_FILTERS 8
/* More chunks than this: a damaged header (HDF5 itself cannot index that many in practice). */
#define CHUNKSRC_MAX_CHUNKS ((uint64_t)1 << 32)

struct chunk_source {
    char *path;
    source_geometry g;
    int fd;               /* pread paths (implicit, contiguous); -1 otherwise */
    uint64_t userblock;   /* bytes before the HDF5 data: HDF5 addresses are relative to this */
    uint64_t base_addr;   /* file offset of: chunk 0 (implicit), the data (contiguous) */
    uint64_t file_size;

    /* raw and hdf5 paths: HDF5 stays open; every HDF5 call happens inside h5pack_h5_enter / h5pack_h5_leave. */
    hid_t file, dset, fspace;
    int chunked;          /* the dataset has a chunked layout (else "chunks" are runs of images) */
    int deflate_index;    /* position of the deflate filter in the pipeline (filter mask bit), -1 none */
    uint8_t fill_byte;    /* value of never-written chunks */
    uint64_t *stored;     /* chunked raw/hdf5 paths: stored size + 1 per chunk, 0 = not known yet (calloc'd:
                             pages of chunks never asked about are never touched) */

    /* raw path with every chunk located (chunksrc_locate.c): pread, no HDF5 after open. */
    uint64_t *chunk_addr;     /* file offset of each chunk's stored bytes (unused when its size is 0) */
    uint8_t *chunk_deflated;  /* 1: the deflate filter was applied to this chunk (filter mask bit clear) */

    int64_t *labels;

    /* implicit / contiguous, uncompressed: the data range mapped read-only (chunksrc_map.c), or NULL. */
    const uint8_t *map;
    size_t map_len;
    uint64_t map_offset;  /* file offset of map[0] (page-aligned) */
};

struct chunksrc_scratch {
    struct libdeflate_decompressor *dec;
    uint8_t *buf;
    size_t cap;
};

/* --- chunksrc_open.c helpers used by chunksrc_read.c ------------------------------------------------- */

/* snprintf into ERR with the file name of S first (S NULL: FMT names it). Returns CODE. */
int h5pack_chunksrc_fail(const chunk_source *s, int code, char *err, size_t err_len, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* h5pack_chunksrc_fail with WHAT followed by the current HDF5 error stack's text. */
int h5pack_chunksrc_fail_h5(const chunk_source *s, int code, char *err, size_t err_len, const char *what);

/* chunksrc_path.c: chunk shape, filters, index: sets the path and the chunk geometry of S. */
int h5pack_chunksrc_choose_path(chunk_source *s, const char *name, const hsize_t *dims, const hsize_t *maxdims,
                         char *err, size_t err_len);

/* Stored bytes of a chunk (the caller is inside h5pack_h5_enter); 0 = not allocated. */
int h5pack_chunksrc_query_stored_locked(chunk_source *s, uint64_t chunk, uint64_t *size);

/* h5pack_chunksrc_open without the probe: the HDF5 work in this process. The caller is inside h5pack_h5_enter. */
int h5pack_chunksrc_open_in_process(const char *path, const char *images, const char *labels, h5pack_layout hint,
                             chunk_source **out, char *err, size_t err_len);

/* --- chunksrc_probe.c ------------------------------------------------------------------------------- */

/* HDF5 1.10.8 can crash or loop on damaged metadata (old-format files have no checksums). The probe
 * runs the whole open, plus a lookup of every chunk's stored size, in a forked child first: a crash or
 * a hang there becomes ECORRUPT here. On success *STORED (malloc'd, N_STORED entries; NULL when the
 * path keeps no sizes) holds the sizes the child found. Only files without metadata checksums
 * (superblock < 2) are probed; H5PACK_PROBE=always|never overrides (see chunksrc_probe.c). */
int h5pack_chunksrc_probe(const char *path, const char *images, const char *labels, h5pack_layout hint,
                   uint64_t **stored, uint64_t *n_stored, char *err, size_t err_len);

/* --- chunksrc_vfd.c, chunksrc_locate.c ------------------------------------------------------------- */

/* A file access property list with the capture driver (sec2 underneath), or -1. */
hid_t h5pack_chunksrc_vfd_fapl(void);

/* Where the stored bytes of the chunk at OFFSET are (file offset, size) and its filter mask, learnt by
 * an H5Dread_chunk whose data read is captured, not done. FILE must be open with h5pack_chunksrc_vfd_fapl().
 * Returns 0 or -1. Caller inside h5pack_h5_enter. */
int h5pack_chunksrc_vfd_locate_chunk(hid_t file, hid_t dset, const hsize_t *offset, uint64_t *addr, uint64_t *size,
                              uint32_t *filter_mask);

/* Learns every chunk's address, size and filter mask (raw path). 0 when all are known, -1 otherwise
 * (nothing kept: reads then go through H5Dread_chunk). Caller inside h5pack_h5_enter. */
int h5pack_chunksrc_locate_chunks(chunk_source *s);

/* --- chunksrc_map.c -------------------------------------------------------------------------------- */

/* Maps the data range of an uncompressed implicit/contiguous source (see chunksrc_map.c); silently
 * leaves S on pread when that is not possible or not wanted. */
void h5pack_chunksrc_map_file(chunk_source *s);
void h5pack_chunksrc_unmap_file(chunk_source *s);

/* --- chunksrc_labels.c --------------------------------------------------------------------------------- */

/* Reads and checks the labels dataset NAME (see h5pack_chunksrc_open): sets s->labels, has_labels, n_classes. */
int h5pack_chunksrc_load_labels(chunk_source *s, const char *name, char *err, size_t err_len);

#endif
