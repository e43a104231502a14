/* tile_pack.h - one image into storage "tiled" (`h5pack --tiles`, docs/format.md): decoded band by band
 * (band.h), each band's row of tiles written whole, so memory is one band and a tile, whatever the
 * image's size. */
#ifndef H5PACK_TILE_PACK_H
#define H5PACK_TILE_PACK_H

#include <stddef.h>
#include <stdint.h>

#include "h5out.h"
#include "image.h"

typedef struct tile_image {
    uint32_t height, width;
    uint64_t sum[3], sum_sq[3]; /* per channel, for the file's mean and std */
} tile_image;

typedef enum tile_outcome { TILE_PACKED = 0, TILE_SKIPPED, TILE_FAILED } tile_outcome;

/* Packs the image file PATH as dataset tiles/NAME of O (geometry G: tile, channels, filters). TILE_SKIPPED:
 * the image is bad (WHY: "category: detail", as the skip list records it; a dataset begun is unlinked);
 * TILE_FAILED: the output failed (ERR). Several threads may pack images into O at once. */
tile_outcome tile_pack_image(h5out *o, const h5out_geometry *g, const char *name, const char *path,
                             const decode_opts *opts, tile_image *done, char *why, size_t why_len, char *err,
                             size_t err_len);

#endif
