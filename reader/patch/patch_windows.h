/* patch_windows.h - which patches an epoch reads, and which tiles each batch touches: the determinism
 * contract of patch reading (a pure function of the file's image sizes and the parameters below, never
 * of threads or the cache).
 *
 * SLIDING (inference): every image in file order, each row by row, windows of S x S at stride S - O.
 *   Along a side of L pixels the positions are 0, s, 2s, ... while they fit, and a last one at L - S
 *   (shifted inward, so every window lies inside its image and together they cover it); a side of
 *   L <= S has the one position 0 (the window reaches past the image: those pixels are 0). Every epoch
 *   is the same. Ranks take balanced contiguous slices (rank r: windows [r n / world, (r + 1) n / world),
 *   rounded so that the sizes differ by at most one; no padding: stitched inference needs no duplicate).
 * RANDOM (training): per_epoch draws per epoch (default: the windows of a grid without overlap), each
 *   from rng_key(seed, epoch, PATCH_STREAM, j): an image with probability proportional to its area, then
 *   y and x uniform over the window's valid positions (0 .. h - S, 0 .. w - S; 0 when the side is <= S).
 *   The global draw is padded to per_rank * world; rank r takes draws [r * per_rank, (r+1) * per_rank),
 *   which (regions set: config order CHUNK, the default) it puts in the region order of patch_regions.h.
 * Batches: consecutive runs of batch_size patches of the rank's list; drop_last drops a short last one.
 * Accesses: for each batch, the distinct tiles its patches overlap, in the order first touched. */
#ifndef H5PACK_PATCH_WINDOWS_H
#define H5PACK_PATCH_WINDOWS_H

#include <stddef.h>
#include <stdint.h>

#include "h5pack.h"
#include "tilesrc.h"

typedef struct patch_params {
    uint32_t size, overlap; /* S >= 1, O < S */
    h5pack_patch_mode mode;
    uint64_t per_epoch;     /* RANDOM: draws per epoch (0: the default above) */
    uint64_t seed;
    uint32_t rank, world;
    size_t batch_size;
    int drop_last;
    int regions;            /* RANDOM: the draws in the region order of patch_regions.h (config order CHUNK) */
    uint64_t window;        /* its active regions (0: h5pack_patch_regions_window) */
} patch_params;

typedef struct patch_windows patch_windows;

/* Lays out the windows of every image of S. Returns 0, EINVAL (with the reason in ERR) or ENOMEM. */
int h5pack_patch_windows_create(const patch_params *pp, const tile_source *s, patch_windows **out, char *err,
                                size_t err_len);
void h5pack_patch_windows_free(patch_windows *w);

/* Patches of this rank per epoch, and its batches (after drop_last). */
uint64_t h5pack_patch_windows_per_epoch(const patch_windows *w);
uint64_t h5pack_patch_windows_batches(const patch_windows *w);

size_t h5pack_patch_windows_batch_size(const patch_windows *w);

/* RANDOM in the region order: its active regions (the config's window, else the default); 0 otherwise. */
uint64_t h5pack_patch_windows_region_window(const patch_windows *w);

/* SLIDING: all windows of all images (before the rank's slice); RANDOM: the global draws per epoch. */
uint64_t h5pack_patch_windows_total(const patch_windows *w);

/* Writes this rank's patches of EPOCH as (image, y, x) triples into WHERE (3 * per_epoch values). 0 or
 * ENOMEM. */
int h5pack_patch_windows_epoch(const patch_windows *w, uint64_t epoch, int64_t *where);

/* The tiles patch (image, y, x) overlaps, row by row, into TILES (room for h5pack_patch_windows_max_tiles);
 * returns how many. */
size_t h5pack_patch_windows_tiles(const patch_windows *w, const int64_t *where, uint64_t *tiles);
size_t h5pack_patch_windows_max_tiles(const patch_windows *w);

/* The distinct tiles of each batch of an epoch whose patches are WHERE (per_epoch of them): writes the
 * accesses to *ACC (*CAP entries, grown with realloc as needed) and their count to *N_ACC, and per batch b
 * its first access to BATCH_START[b] (batches + 1 entries). SEEN is the caller's scratch map, *STAMP a
 * running batch mark in it (no clearing needed between calls). 0 or ENOMEM. */
struct tile_map;
int h5pack_patch_windows_accesses(const patch_windows *w, const int64_t *where, uint64_t **acc, size_t *cap,
                                  uint64_t *batch_start, struct tile_map *seen, uint64_t *stamp, uint64_t *n_acc);

#endif
