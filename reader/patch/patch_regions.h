/* patch_regions.h - the order of random training patches that keeps the tile cache hitting (the patch
 * counterpart of the CHUNK order, order.h). Uniform draws over huge images hardly ever share a tile, so a
 * cache smaller than the images misses on nearly every patch. The epoch's draws are the same ones; only
 * their order changes, so every patch keeps its distribution (images by area, positions uniform):
 *   - each draw belongs to a region: its image and the block of REGION_TILES x REGION_TILES tiles its
 *     top-left corner lies in;
 *   - the regions of the epoch are put in a random order (rng_key(seed, epoch, stream));
 *   - a window of W "active" regions (the first W); each step picks an active region uniformly at random
 *     and emits its next draw; a region that runs out is replaced by the next one.
 * W (config window, 0 = derived) defaults to 256 MiB of regions' tiles, at least 16: a function of the file
 * and the tile size only, so ranks with different caches share one order. A cache of W regions' tiles then
 * reads each tile about once per epoch. Each rank orders its own share of the draws. */
#ifndef H5PACK_PATCH_REGIONS_H
#define H5PACK_PATCH_REGIONS_H

#include <stddef.h>
#include <stdint.h>

#define PATCH_REGION_TILES 8
#define PATCH_WINDOW_BYTES ((uint64_t)256 << 20)
#define PATCH_WINDOW_MIN 16

/* The default window for tiles of T x T x C. */
uint64_t h5pack_patch_regions_window(uint32_t tile, uint32_t channels);

/* Reorders the N draws WHERE (image, y, x triples) of EPOCH as above, with W active regions. 0 or ENOMEM
 * (then WHERE is unchanged). */
int h5pack_patch_regions_order(int64_t *where, uint64_t n, uint32_t tile, uint64_t window, uint64_t seed,
                               uint64_t epoch);

#endif
