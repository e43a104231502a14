/* patch_windows.c - the windows of every image and each epoch's patches and tile accesses
 * (patch_windows.h). */
#include "patch_windows.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errtext.h"
#include "patch_regions.h"
#include "rng.h"
#include "tile_map.h"

#define PATCH_STREAM 0x70617463ull /* "patc": the random draws' own rng stream */

struct patch_windows {
    patch_params pp;
    const tile_source *src;
    uint64_t n_images;
    uint32_t *ny, *nx;    /* SLIDING: windows down and across each image */
    uint64_t *first;      /* SLIDING: each image's first window; n_images + 1 entries */
    uint64_t *area_end;   /* RANDOM: running sum of the areas; n_images entries */
    uint64_t total;       /* windows (SLIDING) or draws (RANDOM, padded to a multiple of world) */
    uint64_t start;       /* this rank's first window or draw */
    uint64_t per_epoch;   /* this rank's, after drop_last */
    uint64_t batches;
    size_t max_tiles;
    uint64_t *tiles;      /* max_tiles: the accesses' scratch */
};

/* Windows along a side of L pixels (see patch_windows.h). */
static uint32_t windows_along(uint32_t L, uint32_t S, uint32_t stride)
{
    if (L <= S)
        return 1;
    return (uint32_t)((L - S + stride - 1) / stride) + 1;
}

/* Position of window K of N along a side of L. */
static uint32_t window_at(uint32_t k, uint32_t n, uint32_t L, uint32_t S, uint32_t stride)
{
    if (L <= S)
        return 0;
    return k + 1 == n ? L - S : k * stride;
}

static int lay_out_sliding(patch_windows *w)
{
    uint32_t S = w->pp.size, stride = w->pp.size - w->pp.overlap;
    w->ny = malloc(w->n_images * sizeof *w->ny), w->nx = malloc(w->n_images * sizeof *w->nx);
    w->first = malloc((w->n_images + 1) * sizeof *w->first);
    if (!w->ny || !w->nx || !w->first)
        return H5PACK_ENOMEM;
    uint64_t at = 0;
    for (uint64_t i = 0; i < w->n_images; i++) {
        const tile_image *im = h5pack_tilesrc_image(w->src, i);
        w->ny[i] = windows_along(im->h, S, stride), w->nx[i] = windows_along(im->w, S, stride);
        w->first[i] = at;
        at += (uint64_t)w->ny[i] * w->nx[i];
    }
    w->first[w->n_images] = at;
    w->total = at;
    return 0;
}

/* RANDOM: the areas' running sum; the default draws per epoch (a grid of S x S without overlap). */
static int lay_out_random(patch_windows *w)
{
    uint32_t S = w->pp.size;
    w->area_end = malloc(w->n_images * sizeof *w->area_end);
    if (!w->area_end)
        return H5PACK_ENOMEM;
    uint64_t area = 0, grid = 0;
    for (uint64_t i = 0; i < w->n_images; i++) {
        const tile_image *im = h5pack_tilesrc_image(w->src, i);
        area += (uint64_t)im->h * im->w;
        w->area_end[i] = area;
        grid += (uint64_t)((im->h + S - 1) / S) * ((im->w + S - 1) / S);
    }
    w->total = w->pp.per_epoch ? w->pp.per_epoch : grid;
    return 0;
}

/* Tiles one patch can overlap: ceil((S - 1) / T) + 1 per side. */
static size_t tiles_per_patch(uint32_t S, uint32_t T)
{
    size_t side = (S + T - 2) / T + 1; /* rows y .. y + S - 1 start anywhere in a tile */
    return side * side;
}

/* What one epoch of patches may hold: the plan keeps two epochs of windows and tile accesses in memory. */
#define PATCH_PLAN_BYTES_MAX ((uint64_t)8 << 30)

/* This rank's share: SLIDING in balanced contiguous slices (sizes differ by at most one window), RANDOM
 * padded to the same number of draws per rank; its batches; and the planning memory bound. */
static int share_out(patch_windows *w, char *err, size_t err_len)
{
    const patch_params *pp = &w->pp;
    uint64_t mine;
    if (pp->mode == H5PACK_PATCH_RANDOM) {
        mine = w->total / pp->world + (w->total % pp->world != 0);
        w->total = mine * pp->world;
        w->start = (uint64_t)pp->rank * mine;
    } else {
        uint64_t q = w->total / pp->world, r = w->total % pp->world;
        w->start = pp->rank * q + (pp->rank < r ? pp->rank : r);
        mine = q + (pp->rank < r);
    }
    w->batches = pp->drop_last ? mine / pp->batch_size : (mine + pp->batch_size - 1) / pp->batch_size;
    w->per_epoch = pp->drop_last ? w->batches * pp->batch_size : mine;
    if (w->batches == 0)
        return h5pack_errf(H5PACK_EINVAL, err, err_len, "no batch of patches for rank %u of %u: %llu patches per "
                           "epoch in all, batch_size %zu%s", pp->rank, pp->world, (unsigned long long)w->total,
                           pp->batch_size, pp->drop_last ? " with drop_last" : "");
    /* per patch: its window in two epochs (48 bytes), the region order's scratch (64), and up to max_tiles
     * accesses of about 26 bytes each */
    uint64_t per_patch = 112 + 26 * (uint64_t)w->max_tiles;
    if (w->per_epoch > PATCH_PLAN_BYTES_MAX / per_patch)
        return h5pack_errf(H5PACK_EINVAL, err, err_len, "%llu patches per epoch for this rank: planning them needs "
                           "more than %llu GiB (the plan holds two epochs); use epochs of at most %llu patches "
                           "(%s)", (unsigned long long)w->per_epoch, (unsigned long long)(PATCH_PLAN_BYTES_MAX >> 30),
                           (unsigned long long)(PATCH_PLAN_BYTES_MAX / per_patch),
                           pp->mode == H5PACK_PATCH_RANDOM ? "patches_per_epoch" : "fewer images per file, or "
                           "more ranks");
    return 0;
}

int h5pack_patch_windows_create(const patch_params *pp, const tile_source *s, patch_windows **out, char *err,
                                size_t err_len)
{
    *out = NULL;
    if (pp->size < 1 || pp->overlap >= pp->size || pp->world < 1 || pp->rank >= pp->world || pp->batch_size < 1) {
        snprintf(err, err_len, "invalid patch parameters: patch_overlap (%u) must be below patch_size (%u)",
                 pp->overlap, pp->size);
        return H5PACK_EINVAL;
    }
    patch_windows *w = calloc(1, sizeof *w);
    if (!w)
        return H5PACK_ENOMEM;
    w->pp = *pp, w->src = s;
    const tile_geometry *g = h5pack_tilesrc_geometry(s);
    if (pp->mode != H5PACK_PATCH_RANDOM || !pp->regions)
        w->pp.window = 0;
    else if (!pp->window)
        w->pp.window = h5pack_patch_regions_window(g->tile, g->channels);
    w->n_images = g->n_images;
    int rc = pp->mode == H5PACK_PATCH_SLIDING ? lay_out_sliding(w) : lay_out_random(w);
    if (rc) {
        h5pack_patch_windows_free(w);
        return rc;
    }
    w->max_tiles = tiles_per_patch(pp->size, g->tile);
    if ((rc = share_out(w, err, err_len)) == 0 && !(w->tiles = malloc(w->max_tiles * sizeof *w->tiles)))
        rc = H5PACK_ENOMEM;
    if (rc) {
        h5pack_patch_windows_free(w);
        return rc;
    }
    *out = w;
    return 0;
}

void h5pack_patch_windows_free(patch_windows *w)
{
    if (!w)
        return;
    free(w->ny), free(w->nx), free(w->first), free(w->area_end), free(w->tiles);
    free(w);
}

uint64_t h5pack_patch_windows_per_epoch(const patch_windows *w)
{
    return w->per_epoch;
}

uint64_t h5pack_patch_windows_batches(const patch_windows *w)
{
    return w->batches;
}

uint64_t h5pack_patch_windows_region_window(const patch_windows *w)
{
    return w->pp.window;
}

size_t h5pack_patch_windows_batch_size(const patch_windows *w)
{
    return w->pp.batch_size;
}

uint64_t h5pack_patch_windows_total(const patch_windows *w)
{
    return w->total;
}

size_t h5pack_patch_windows_max_tiles(const patch_windows *w)
{
    return w->max_tiles;
}

/* The image holding global window G (SLIDING): the last whose first window is <= G. */
static uint64_t image_of_window(const patch_windows *w, uint64_t g)
{
    uint64_t lo = 0, hi = w->n_images;
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (w->first[mid] <= g)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

static void sliding_window(const patch_windows *w, uint64_t g, int64_t *where)
{
    uint32_t S = w->pp.size, stride = w->pp.size - w->pp.overlap;
    uint64_t i = image_of_window(w, g), k = g - w->first[i];
    const tile_image *im = h5pack_tilesrc_image(w->src, i);
    where[0] = (int64_t)i;
    where[1] = window_at((uint32_t)(k / w->nx[i]), w->ny[i], im->h, S, stride);
    where[2] = window_at((uint32_t)(k % w->nx[i]), w->nx[i], im->w, S, stride);
}

/* Draw J of EPOCH: an image by area, then a uniform valid position. */
static void random_window(const patch_windows *w, uint64_t epoch, uint64_t j, int64_t *where)
{
    rng_state r = {rng_key(w->pp.seed, epoch, PATCH_STREAM, j)};
    uint64_t u = rng_below(&r, w->area_end[w->n_images - 1]), lo = 0, hi = w->n_images - 1;
    while (lo < hi) { /* the first image whose area_end > u */
        uint64_t mid = lo + (hi - lo) / 2;
        if (w->area_end[mid] > u)
            hi = mid;
        else
            lo = mid + 1;
    }
    const tile_image *im = h5pack_tilesrc_image(w->src, lo);
    uint32_t S = w->pp.size;
    where[0] = (int64_t)lo;
    where[1] = im->h > S ? (int64_t)rng_below(&r, (uint64_t)(im->h - S) + 1) : 0;
    where[2] = im->w > S ? (int64_t)rng_below(&r, (uint64_t)(im->w - S) + 1) : 0;
}

int h5pack_patch_windows_epoch(const patch_windows *w, uint64_t epoch, int64_t *where)
{
    uint64_t start = w->start;
    for (uint64_t j = 0; j < w->per_epoch; j++) {
        if (w->pp.mode == H5PACK_PATCH_SLIDING)
            sliding_window(w, start + j, where + 3 * j);
        else
            random_window(w, epoch, start + j, where + 3 * j);
    }
    if (w->pp.mode != H5PACK_PATCH_RANDOM || !w->pp.regions)
        return 0;
    return h5pack_patch_regions_order(where, w->per_epoch, h5pack_tilesrc_geometry(w->src)->tile, w->pp.window,
                                      w->pp.seed, epoch);
}

size_t h5pack_patch_windows_tiles(const patch_windows *w, const int64_t *where, uint64_t *tiles)
{
    const tile_image *im = h5pack_tilesrc_image(w->src, (uint64_t)where[0]);
    uint32_t T = h5pack_tilesrc_geometry(w->src)->tile, S = w->pp.size;
    uint64_t y1 = (uint64_t)where[1] + S, x1 = (uint64_t)where[2] + S;
    y1 = y1 < im->h ? y1 : im->h, x1 = x1 < im->w ? x1 : im->w;
    size_t n = 0;
    for (uint64_t ty = (uint64_t)where[1] / T; ty <= (y1 - 1) / T; ty++)
        for (uint64_t tx = (uint64_t)where[2] / T; tx <= (x1 - 1) / T; tx++)
            tiles[n++] = im->first_tile + ty * im->nx + tx;
    return n;
}

int h5pack_patch_windows_accesses(const patch_windows *w, const int64_t *where, uint64_t **acc, size_t *cap,
                                  uint64_t *batch_start, struct tile_map *seen, uint64_t *stamp, uint64_t *n_acc)
{
    uint64_t n = 0, b = 0, *tiles = w->tiles, v;
    for (uint64_t j = 0; j < w->per_epoch; j += w->pp.batch_size, b++) {
        uint64_t end = j + w->pp.batch_size < w->per_epoch ? j + w->pp.batch_size : w->per_epoch, mark = ++*stamp;
        batch_start[b] = n;
        for (uint64_t q = j; q < end; q++) {
            size_t k = h5pack_patch_windows_tiles(w, where + 3 * q, tiles);
            for (size_t t = 0; t < k; t++) {
                if (h5pack_tile_map_get(seen, tiles[t], &v) && v == mark)
                    continue; /* already in this batch */
                if (h5pack_tile_map_put(seen, tiles[t], mark))
                    return H5PACK_ENOMEM;
                if (n == *cap) {
                    size_t grown = *cap ? 2 * *cap : 1024;
                    uint64_t *a = realloc(*acc, grown * sizeof *a);
                    if (!a)
                        return H5PACK_ENOMEM;
                    *acc = a, *cap = grown;
                }
                (*acc)[n++] = tiles[t];
            }
        }
    }
    batch_start[b] = n;
    *n_acc = n;
    return 0;
}
