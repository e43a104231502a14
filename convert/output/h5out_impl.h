/* h5out_impl.h - the writer's state and helpers shared by h5out.c and h5out_copy.c. */
#ifndef H5PACK_H5OUT_IMPL_H
#define H5PACK_H5OUT_IMPL_H

#include <hdf5.h>
#include <pthread.h>
#include <stdint.h>

#include "h5out.h"
#include "writeback.h"

/* The file is flushed every this many bytes of chunks while it is written (see writeback.h). */
#define H5OUT_WRITEBACK_STEP (8u << 20)

struct h5out {
    hid_t file, images;
    h5out_geometry g;
    char *path;      /* named in every error message */
    writeback *wb;   /* NULL when the file is not a plain POSIX file (other HDF5 driver) */
    int fd;          /* the sec2 driver's descriptor, or -1 */
    int64_t base;    /* >= 0: chunk i of the images lies at base + i * chunk size (h5out_pwrite_chunk) */
    struct block_gather *gather; /* h5out_gather_chunks: pwrite in whole 2 MiB blocks, else NULL */
    hid_t tiles;             /* tiled: the group */
    pthread_mutex_t tile_mu; /* tiled: the HDF5 calls of the threads that write images */
    int tile_mu_ready;
    uint64_t tile_bytes;     /* tiled: stored bytes of the tiles written (under tile_mu) */
    hid_t masks;             /* --masks: the masks dataset, else -1 */
    int64_t mask_base;       /* >= 0: chunk i of the masks lies at mask_base + i * its chunk size */
};

/* --masks (h5out_masks.c): creates the masks dataset beside the images (o->masks, o->mask_base). 0, or -1
 * with ERR set. */
int h5out_masks_create(h5out *o, char *err, size_t err_len);

/* Where chunk 0 of the masks lies when every chunk's address is computable (h5out_implicit_base), else -1. */
int64_t h5out_masks_base(const h5out *o);

struct mask_values;
/* --masks: the masks dataset's attributes: the values seen (sorted, at most MASK_VALUES_LISTED), their count,
 * the histogram of uint8 masks, the resampling. 0, or -1. */
int h5out_masks_write_attrs(h5out *o, const struct mask_values *seen);

/* An unfiltered dataset allocated at creation has its chunks at computable addresses (HDF5's implicit
 * index), which the first, a middle and the last chunk confirm: chunk (i, j) of a GRID[0] x GRID[1] grid
 * starts at offset (i * EXTENT[0], j * EXTENT[1]) and lies at base + (i * GRID[1] + j) * BYTES. Returns the
 * base, or -1 (filtered, no POSIX descriptor, or not so laid out). */
int64_t h5out_implicit_base(const h5out *o, int64_t dset, const uint64_t grid[2], const uint64_t extent[2],
                            uint64_t bytes);

/* "WHAT: HDF5's innermost error text" into ERR; returns -1. */
int h5out_fail(char *err, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* A writer for PATH with geometry G: the file created, nothing in it yet. NULL with ERR set. */
h5out *h5out_new(const char *path, const h5out_geometry *g, char *err, size_t err_len);

/* HDF5's errors captured for the messages (h5out_fail), not printed. */
void h5out_capture_errors(void);

/* The writeback thread for O's file under the sec2 driver (sets o->fd), or NULL. */
writeback *h5out_start_writeback(h5out *o);

/* Creates the HDF5 file PATH (no time stamps, the latest format). */
hid_t h5out_create_file(const char *path);

/* A chunked dataset's creation properties: CHUNK (RANK dims), G's filters, no time stamps, no fill;
 * unfiltered ones allocated at creation (every chunk's address computable). -1 on failure. */
hid_t h5out_chunked_dcpl(const h5out_geometry *g, int rank, const hsize_t *chunk);

/* The images dataset's dims for FIRST rows (bytes, for a ragged store), as 4 values. */
void h5out_image_dims(const h5out_geometry *g, uint64_t first, hsize_t dims[4]);

#endif
