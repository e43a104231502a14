/* h5out.h - writing an h5pack file (format version 1, or 2 for images of several sizes; docs/format.md) with the HDF5 C API.
 *
 * The images dataset is created first with its final dims; chunks arrive already filtered (raw, or
 * deflate + optional fletcher32 done by worker threads) and go in with H5Dwrite_chunk. Metadata datasets
 * and attributes are written at the end. Every object has track times off, so the same calls give the
 * same bytes. HDF5 is called from one thread only; an unfiltered dataset's chunks may instead be written
 * with pwrite from any thread (h5out_pwrite_chunk). */
#ifndef H5PACK_H5OUT_H
#define H5PACK_H5OUT_H

#include <stddef.h>
#include <stdint.h>

#include "skips.h"

typedef struct h5out h5out;

typedef struct h5out_geometry {
    uint64_t n;          /* images in the dataset */
    uint32_t channels, height, width;
    int nhwc;            /* layout */
    uint64_t chunk_images;
    int gzip_level;      /* 0 = no deflate filter */
    int checksum;        /* fletcher32 after deflate */
    /* images of several sizes (format version 2, "ragged"): images is 1-D, TOTAL_BYTES long, in chunks of
     * CHUNK_BYTES; channels is shared, height and width are the largest ones (attributes only) */
    int ragged;
    uint64_t total_bytes, chunk_bytes;
    /* huge images in tiles ("tiled", h5out_tiles.c): no images dataset; each image its own dataset
     * tiles/<i> of (h, w, C), chunked (TILE, TILE, C); height and width are the largest ones */
    uint32_t tile; /* 0: not tiled */
    /* --masks (h5out_masks.c): a masks dataset (n, height, width) of uint8 (1) or uint16 (2) beside the
     * images, chunked (chunk_images, height, width), same filters: chunk i of both holds the same images */
    uint32_t mask_bytes; /* 0: no masks */
} h5out_geometry;

/* Labels from a table (--labels): labels (n,K), or (n,) for one column, with label_names (K,). */
typedef struct h5out_label_table {
    uint64_t columns;          /* K */
    const char *const *names;  /* K column names */
    int is_float;              /* values are double, stored float32; else int64 stored in the type below */
    int bytes, is_signed;      /* integer storage: 1, 2, 4 or 8 bytes, signed or not */
    const void *values;        /* n x K, row-major, in the file's row order */
} h5out_label_table;

typedef struct h5out_metadata {
    uint64_t n;
    int has_classes;
    const uint32_t *labels;      /* n (when has_classes) */
    const char *const *classes;  /* n_classes */
    uint32_t n_classes;
    const char *const *filenames; /* n */
    const skip_list *skipped;
    const char *resize_mode;     /* "crop", "stretch", "pad", "none" */
    const char *jpeg_scale;      /* "exact", "dct" (--jpeg-scale), "none" (no --size) */
    const char *alpha;           /* "drop", "black", "white" (--alpha): what became of PNG transparency */
    double mean[3], std[3];
    int64_t chunk_images, chunk_target_bytes, batch_size, seed;
    const char *chunk_reason;
    const char *compression;     /* "none", "gzip:4" */
    int checksum, shuffled;
    const h5out_label_table *table; /* NULL: class labels (above) or none; else these (has_classes 0) */
    /* ragged files: every image's first byte in images and its (height, width) */
    const uint64_t *offsets;     /* n */
    const uint32_t *shapes;      /* n x 2 */
    uint32_t max_side;           /* --max-side, 0 = none */
    uint32_t short_side;         /* --short-side, 0 = none */
    const struct mask_values *mask_seen; /* --masks: the values of the stored masks (attributes on masks) */
} h5out_metadata;

/* Creates PATH (truncating) with the images dataset. Returns 0, or -1 with a message in ERR. */
int h5out_create(const char *path, const h5out_geometry *g, h5out **out, char *err, size_t err_len);

/* ---- huge images in tiles (h5out_tiles.c) ----------------------------------------------------- */

/* Creates PATH for storage "tiled" (G->tile > 0): the file and the tiles group, no images dataset. */
int h5out_create_tiled(const char *path, const h5out_geometry *g, h5out **out, char *err, size_t err_len);

/* One image being written in tiles. The calls below may come from several threads at once (one image
 * each): they serialise their HDF5 work on the writer's lock. */
typedef struct h5out_tiled {
    int64_t dset;  /* the HDF5 dataset (hid_t), -1 when none */
    char name[32]; /* its name in the tiles group */
    const char *source; /* the image's file, named in write errors (NULL: the dataset's name) */
    int64_t base;  /* unfiltered: tile (ty, tx) at base + (ty * nx + tx) * tile_bytes, written with pwrite
                      through RUN beside HDF5; -1: H5Dwrite_chunk */
    uint32_t nx;
    size_t tile_bytes;
    struct block_gather *run;
} h5out_tiled;

/* Starts dataset tiles/NAME of H x W x channels, chunked (min(T,H), min(T,W), C), into *T. */
int h5out_tile_begin(h5out *o, const char *name, uint32_t h, uint32_t w, h5out_tiled *t, char *err, size_t err_len);

/* Writes tile (TY, TX) of T: SIZE bytes, a whole chunk, filters already applied. */
int h5out_tile_write(h5out *o, h5out_tiled *t, uint32_t ty, uint32_t tx, const void *data, size_t size, char *err,
                     size_t err_len);

/* Ends T; KEEP 0 unlinks its dataset (an image that failed halfway: its bytes stay in the file until
 * h5repack). Returns 0, or -1 with ERR set. */
int h5out_tile_end(h5out *o, h5out_tiled *t, int keep, char *err, size_t err_len);

/* Renames tiles/FROM to tiles/<INDEX>: the packer names images by position while workers pack them, and by
 * their index among the kept ones at the end. Returns 0, or -1 with ERR set. */
int h5out_tile_rename(h5out *o, const char *from, uint64_t index, char *err, size_t err_len);

/* Where chunk 0 of the images lies in the file when every chunk's address is computable (chunk i at
 * base + i * chunk bytes: unfiltered, allocated at creation, in a POSIX file), else -1. >= 0 is when
 * chunks may be written with h5out_pwrite_chunk, and what other processes need to write them too. */
int64_t h5out_chunk_base(const h5out *o);

/* Writes chunk INDEX (SIZE bytes, the full chunk) at its computed address with pwrite: the one call that
 * may be made from any thread, concurrently with the others and with HDF5 (which never touches the
 * chunks' bytes of such a dataset). Returns 0, or -1 with ERR set. */
int h5out_pwrite_chunk(h5out *o, uint64_t index, const void *data, size_t size, char *err, size_t err_len);

/* From now on h5out_pwrite_chunk puts the chunks into the file in pieces that cover whole 2 MiB blocks
 * (block_gather.h: the page cache then keeps the file in huge folios), holding the pieces of blocks that
 * neighbouring chunks share until they are complete. Needs h5out_chunk_base >= 0. 0, or -1 (without
 * memory: chunks keep going straight in). */
int h5out_gather_chunks(h5out *o);

/* Writes what h5out_gather_chunks holds back, after the last chunk and before h5out_close. 0, or -1 with
 * ERR set. */
int h5out_flush_chunks(h5out *o, char *err, size_t err_len);

/* Writes chunk INDEX (images INDEX*K ..., or bytes INDEX*chunk_bytes ... of a ragged file): SIZE bytes
 * exactly as stored (filters already applied). */
int h5out_write_chunk(h5out *o, uint64_t index, const void *data, size_t size, char *err, size_t err_len);

/* --masks: the masks of chunk INDEX, SIZE bytes exactly as stored (filters applied), through HDF5 ... */
int h5out_write_mask_chunk(h5out *o, uint64_t index, const void *data, size_t size, char *err, size_t err_len);

/* ... or with pwrite at its computed address, from any thread, where h5out_chunk_base >= 0 (which then
 * holds for the masks too). */
int h5out_pwrite_mask_chunk(h5out *o, uint64_t index, const void *data, size_t size, char *err, size_t err_len);

/* --masks: the masks of the first file FROM into this one, as h5out_copy_chunks and h5out_copy_rows copy the
 * images (the same chunk count or row count). */
int h5out_copy_mask_chunks(h5out *o, const char *from, uint64_t n_chunks, char *err, size_t err_len);
int h5out_copy_mask_rows(h5out *o, const char *from, uint64_t n, char *err, size_t err_len);

/* Bytes the masks dataset occupies in the file (0 without masks). */
uint64_t h5out_masks_storage(h5out *o);

/* Copies the first N_CHUNKS chunks of the images dataset of file FROM (same chunk shape) byte for byte:
 * used when skipped images leave the first file with more rows than images. */
int h5out_copy_chunks(h5out *o, const char *from, uint64_t n_chunks, char *err, size_t err_len);

/* Copies the first N images of file FROM through H5Dread/H5Dwrite (HDF5 applies the filters): for the
 * case where the first file's chunk holds more images than were converted. Bounded by one chunk. */
int h5out_copy_rows(h5out *o, const char *from, uint64_t n, char *err, size_t err_len);

/* Images of several sizes: copies the N images of file FROM (at FROM_OFFSETS, SHAPES (h, w) each, CHANNELS)
 * one after the other into this file's store (at TO_OFFSETS), through H5Dread/H5Dwrite (HDF5 applies the
 * filters): used when skipped images left large gaps in the first file. */
int h5out_copy_ragged(h5out *o, const char *from, const uint64_t *from_offsets, const uint64_t *to_offsets,
                      const uint32_t *shapes, uint64_t n, char *err, size_t err_len);

/* Images of several sizes: the largest height and width the attributes give (the converted images'). */
void h5out_set_largest(h5out *o, uint32_t height, uint32_t width);

/* Writes labels, classes, filenames, skipped/ and all attributes. */
int h5out_write_metadata(h5out *o, const h5out_metadata *m, char *err, size_t err_len);

/* Bytes the images dataset occupies in the file (after compression). */
uint64_t h5out_images_storage(h5out *o);

/* Closes everything (flushes the file). Accepts NULL. Returns 0, or -1 with a message in ERR. */
int h5out_close(h5out *o, char *err, size_t err_len);


#endif
