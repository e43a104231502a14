/* tilesrc.h - the file side of patch reading: a file of huge images in tiles (h5pack --tiles, storage
 * "tiled", docs/format.md "Huge images in tiles"), opened once, then any tile of any image read from any
 * thread.
 *
 * Image i is the dataset tiles/<i> of (h, w, C) uint8, chunked (ch, cw, C) = (min(T,h), min(T,w), C); its
 * tile (ty, tx) is the HDF5 chunk at (ty*T, tx*T, 0), stored whole (edge tiles zero-padded). Tiles are
 * numbered over the file: image i's tile (ty, tx) is first_tile[i] + ty * nx + tx, which is what the patch
 * plan and its cache see.
 *
 * Every tile is read through the stored-chunk layer (stored.h), from any thread, without HDF5 and without
 * a lock, when its image's tiles are
 *   implicit  unfiltered, allocated at creation (what h5pack writes without --compress): tile k at
 *             first + k * tile bytes, confirmed at open on the first, a middle and the last tile; or
 *   located   gzip or unfiltered in another index: every tile's stored bytes located at open;
 * else (--checksum, other filters, a failed locate) through HDF5: H5Dread of the tile's region under its
 * lock, HDF5 applying and checking every filter. Every image's path is chosen at open; the file's is the
 * slowest of them (h5pack_info/stats name it). Unfiltered tiles are also lent zero-copy where the store
 * has views (h5pack_tilesrc_map). */
#ifndef H5PACK_TILESRC_H
#define H5PACK_TILESRC_H

#include <stddef.h>
#include <stdint.h>

#include "h5pack.h"
#include "stored.h" /* chunk_read_cost */


typedef struct tile_image {
    uint32_t h, w;        /* the image's size */
    uint32_t ch, cw;      /* its chunk (tile) shape: min(T, h), min(T, w) */
    uint32_t ny, nx;      /* tiles down and across */
    uint64_t first_tile;  /* file-wide number of its tile (0, 0) */
    h5pack_read_path path; /* IMPLICIT, LOCATED (unfiltered), RAW_DEFLATE (gzip, located) or HDF5 */
    stored_chunks tiles;  /* implicit and located paths: where its tiles lie (tile k: chunk k) */
} tile_image;

typedef struct tile_geometry {
    uint64_t n_images;
    uint64_t n_tiles;       /* over all images */
    uint32_t channels, tile;
    uint32_t max_h, max_w;
    uint64_t tile_bytes;    /* T x T x C: a cache slot */
    uint64_t pixel_bytes;   /* every image's h x w x C summed */
    h5pack_read_path path;  /* the slowest image's (IMPLICIT < LOCATED < RAW_DEFLATE < HDF5) */
    int compressed;         /* a deflate filter */
    int has_labels, labels_are_float;
    uint32_t label_columns, n_classes;
    int label_rank;
    int has_stats;
    double mean[H5PACK_MAX_CHANNELS], std[H5PACK_MAX_CHANNELS];
    uint64_t file_bytes;
    uint64_t stored_bytes;  /* every tile's stored bytes summed (implicit and located tiles; else their pixels) */
    int format_version;     /* root attribute h5pack_format_version */
} tile_geometry;

typedef struct tile_source tile_source;

/* Opens PATH, a tiled file; LABELS names the labels dataset (NULL/"": none; a missing "labels" is none).
 * Returns 0, or EFORMAT (not a tiled file, or a tile shape the converter does not write), ENOTFOUND,
 * ECORRUPT, EHDF5, ENOMEM with the file and the reason in ERR. */
int h5pack_tilesrc_open(const char *path, const char *labels, tile_source **out, char *err, size_t err_len);

/* Whether PATH is a file of images in tiles (its storage attribute says "tiled"); 0 for anything else,
 * an error included. */
int h5pack_tilesrc_is_tiled(const char *path);

const tile_geometry *h5pack_tilesrc_geometry(const tile_source *s);

/* The store S reads its bytes from (store.h). */
struct store *h5pack_tilesrc_store(const tile_source *s);

/* Whether unfiltered tiles are lent zero-copy (the store has views). */
int h5pack_tilesrc_has_views(const tile_source *s);
const tile_image *h5pack_tilesrc_image(const tile_source *s, uint64_t i);

/* N rows of label_columns int64 or float32 values (labels_are_float), NULL without labels. */
const void *h5pack_tilesrc_label_rows(const tile_source *s);
size_t h5pack_tilesrc_label_bytes(const tile_geometry *g);

/* The image a file-wide tile number belongs to (binary search over first_tile). */
uint64_t h5pack_tilesrc_image_of(const tile_source *s, uint64_t tile);

/* Per-thread read state: stored.h's (a stored-bytes buffer, a decompressor). */
typedef struct stored_scratch tile_scratch;
tile_scratch *h5pack_tilesrc_scratch_new(const tile_source *s);
void h5pack_tilesrc_scratch_free(tile_scratch *sc);

/* Reads file-wide tile TILE into DST (ch x cw x C bytes of its image, row-major). Thread-safe with one
 * scratch per thread; adds to *COST. Returns 0, or EIO / ECORRUPT / EHDF5 naming the image and tile. */
int h5pack_tilesrc_read(tile_source *s, uint64_t tile, uint8_t *dst, tile_scratch *sc, chunk_read_cost *cost,
                        char *err, size_t err_len);

/* h5pack_tilesrc_map answers this when TILE has to go through h5pack_tilesrc_read. */
#define TILESRC_NOT_MAPPED 1

/* Zero-copy read of an unfiltered tile where the store has views (tilesrc_read.c, as chunksrc_map.c for
 * images; a local file's map, unless H5PACK_NO_MMAP=1). Returns 0 with *DATA pointing at the tile's bytes
 * once they can be read, its bytes added to *COST; else TILESRC_NOT_MAPPED. Thread-safe. */
int h5pack_tilesrc_map(tile_source *s, uint64_t tile, const uint8_t **data, chunk_read_cost *cost);

/* TILE's view is no longer used: its pages leave the page tables (h5pack_store_unview), so resident memory
 * follows the tile cache. Anything not viewed is ignored. */
void h5pack_tilesrc_map_release(tile_source *s, uint64_t tile);

void h5pack_tilesrc_close(tile_source *s);

#endif
