/* stream_patches.c - the stream of patches of huge images in tiles (stream.h; config.patch_size > 0,
 * docs/patches.md): the tile source, the windows, the backend (batches of S x S x C images stored HWC)
 * and the patch pipeline. Also describes a file of images in tiles, with or without patch_size. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpus.h"
#include "describe.h"
#include "errtext.h"
#include "fingerprint.h"
#include "patch_pipe.h"
#include "patch_windows.h"
#include "resolve.h"
#include "store.h"
#include "stream.h"
#include "tilesrc.h"

typedef struct patch_stream {
    stream base; /* first: reader.c sees this */
    uint32_t patch_size;
    tile_source *tiles;
    patch_windows *windows;
    patch_pipe *pipe;
} patch_stream;

static int patches_accepts(const h5pack_config *cfg)
{
    return cfg->patch_size > 0;
}

/* What patches do not do (yet), refused with the reason rather than ignored. */
static int check_patch_config(const h5pack_config *c, char *err, size_t err_len)
{
    const char *bad = NULL;
    if (c->patch_overlap >= c->patch_size)
        bad = "patch_overlap must be below patch_size";
    else if (c->echo > 1)
        bad = "echo > 1 is not available with patches";
    else if (c->crop != H5PACK_CROP_NONE || c->output_height || c->output_width || c->max_output_height ||
             c->max_output_width)
        bad = "patches are delivered at patch_size: no crop or output size";
    else if (c->random_crop_padding)
        bad = "random_crop_padding is not available with patches (random patches already shift)";
    else if (c->start_echo)
        bad = "start_echo is for echo > 1, which patches do not have";
    else if (c->patch_mode == H5PACK_PATCH_SLIDING && c->patches_per_epoch)
        bad = "patches_per_epoch is for patch_mode RANDOM (sliding windows cover every image once)";
    else if (c->patch_mode == H5PACK_PATCH_RANDOM && c->patch_overlap)
        bad = "patch_overlap is for patch_mode SLIDING (random patches are drawn anywhere)";
    if (!bad)
        return 0;
    return h5pack_errf(H5PACK_EINVAL, err, err_len, "invalid configuration: %s", bad);
}

static const char *labels_of(const h5pack_config *cfg)
{
    return cfg->labels_dataset && cfg->labels_dataset[0] ? cfg->labels_dataset : NULL;
}

/* The normalisation, through the image reader's rules (resolve.h) on a geometry with the tiled file's
 * channels and stats. */
static int resolve_norm(const tile_geometry *tg, const h5pack_config *cfg, float *mean, float *std, char *err,
                        size_t err_len)
{
    source_geometry g;
    memset(&g, 0, sizeof g);
    g.channels = tg->channels, g.has_stats = tg->has_stats;
    memcpy(g.mean, tg->mean, sizeof g.mean), memcpy(g.std, tg->std, sizeof g.std);
    return h5pack_reader_resolve_norm(cfg, &g, mean, std, err, err_len);
}

static int threads_of(const h5pack_config *c)
{
    return c->threads > 0 ? c->threads : h5pack_default_threads();
}

static size_t cache_tiles(const h5pack_config *c, const tile_geometry *g)
{
    return c->cache_bytes / g->tile_bytes ? (size_t)(c->cache_bytes / g->tile_bytes) : 1;
}

static int create_backend(patch_stream *s, const h5pack_config *c, const float *mean, const float *std,
                          backend_params *bp, char *err, size_t err_len)
{
    const tile_geometry *g = h5pack_tilesrc_geometry(s->tiles);
    memset(bp, 0, sizeof *bp);
    bp->channels = g->channels, bp->height = bp->width = c->patch_size;
    bp->in_layout = H5PACK_LAYOUT_NHWC; /* tiles are (h, w, C) */
    bp->out_layout = c->output_layout == H5PACK_LAYOUT_AUTO ? H5PACK_LAYOUT_NHWC : c->output_layout;
    bp->dtype = c->dtype, bp->batch_size = c->batch_size;
    bp->label_bytes = h5pack_tilesrc_label_bytes(g);
    bp->slots = c->prefetch, bp->threads = threads_of(c);
    memcpy(bp->mean, mean, sizeof bp->mean), memcpy(bp->std, std, sizeof bp->std);
    bp->random_flip = c->random_flip;
    bp->gpu_id = c->gpu_id, bp->device_memory_limit = c->device_memory_limit, bp->user_stream = c->cuda_stream;
    bp->out_height = bp->max_out_height = bp->out_width = bp->max_out_width = c->patch_size;
    bp->output_buffers = 1;
    bp->one_pass = 1; /* the CPU backend: each patch converted as it is assembled */
    return h5pack_stream_make_backend(c, bp, &s->base.be, err, err_len);
}

/* The facts of the tiled file alone (no patch_size needed), as h5pack_file_desc gives them. */
static void describe_file(const tile_source *src, const h5pack_config *c, h5pack_file_desc *d)
{
    const tile_geometry *g = h5pack_tilesrc_geometry(src);
    memset(d, 0, sizeof *d);
    d->struct_size = sizeof *d;
    d->format_version = g->format_version;
    d->file_bytes = g->file_bytes;
    d->n_samples = g->n_images;
    d->channels = g->channels, d->height = g->max_h, d->width = g->max_w;
    d->layout = H5PACK_LAYOUT_NHWC;
    d->image_bytes = (uint64_t)g->max_h * g->max_w * g->channels;
    d->chunked = 1, d->samples_per_chunk = 1, d->n_chunks = g->n_tiles, d->chunk_bytes = g->tile_bytes;
    d->chunks_per_slab = 1;
    d->stored_bytes = g->stored_bytes;
    d->compressed = g->compressed;
    d->read_path = g->path;
    d->fast_path = g->path != H5PACK_READ_HDF5;
    d->mapped = g->path != H5PACK_READ_HDF5 && !g->compressed && h5pack_tilesrc_has_views(src);
    d->has_labels = g->has_labels, d->n_classes = g->n_classes;
    d->label_columns = g->label_columns, d->label_rank = g->label_rank, d->labels_are_float = g->labels_are_float;
    d->has_pixel_stats = g->has_stats;
    memcpy(d->mean, g->mean, sizeof d->mean), memcpy(d->std, g->std, sizeof d->std);
    d->output_layout = c->output_layout == H5PACK_LAYOUT_AUTO ? H5PACK_LAYOUT_NHWC : c->output_layout;
    d->dtype = c->dtype;
    d->tile = g->tile;
}

static void image_size(const void *ctx, uint64_t i, uint32_t *height, uint32_t *width)
{
    const tile_image *im = h5pack_tilesrc_image(ctx, i);
    *height = im->h, *width = im->w;
}

/* fingerprint.h's, with every image's size: the patches of every epoch depend on them. */
static uint64_t patches_fingerprint(const h5pack_config *c, const tile_source *src, const patch_windows *w)
{
    const tile_geometry *g = h5pack_tilesrc_geometry(src);
    fingerprint_facts facts = {g->n_images, 1, g->channels, g->max_h, g->max_w,
                               h5pack_patch_windows_region_window(w), g->n_images, image_size, src};
    return h5pack_fingerprint(c, &facts);
}

/* What patches of CFG add to the description: the epoch, the cache, the fingerprint. */
static void describe_patches(const tile_source *src, const patch_windows *w, const h5pack_config *c,
                             h5pack_file_desc *d)
{
    d->height = d->width = c->patch_size;
    d->cache_chunks = cache_tiles(c, h5pack_tilesrc_geometry(src));
    d->window = (size_t)h5pack_patch_windows_region_window(w); /* active regions, 0 for none */
    d->threads = threads_of(c);
    d->samples_per_epoch = h5pack_patch_windows_per_epoch(w);
    d->batches_per_epoch = h5pack_patch_windows_batches(w);
    d->order_fingerprint = patches_fingerprint(c, src, w);
}

static int make_windows(const tile_source *src, const h5pack_config *c, patch_windows **out, char *err,
                        size_t err_len)
{
    patch_params pp = {c->patch_size, c->patch_overlap, c->patch_mode, c->patches_per_epoch, c->seed, c->rank,
                       c->world, c->batch_size, c->drop_last, c->order == H5PACK_ORDER_CHUNK, c->window};
    int rc = h5pack_patch_windows_create(&pp, src, out, err, err_len);
    if (!rc && c->start_batch >= h5pack_patch_windows_batches(*out))
        rc = h5pack_errf(H5PACK_EINVAL, err, err_len, "invalid configuration: start_batch %llu, but an epoch has "
                         "%llu batches of patches", (unsigned long long)c->start_batch,
                         (unsigned long long)h5pack_patch_windows_batches(*out));
    return rc;
}

static void fill_info(patch_stream *s, const h5pack_config *c, const backend_params *bp, const float *mean,
                      const float *std, h5pack_info *in)
{
    h5pack_file_desc d;
    describe_file(s->tiles, c, &d);
    describe_patches(s->tiles, s->windows, c, &d);
    memset(in, 0, sizeof *in);
    in->struct_size = sizeof *in;
#define H5PACK_COPY_FIELD_(f) in->f = d.f;
    H5PACK_SHARED_FILE_FIELDS(H5PACK_COPY_FIELD_)
#undef H5PACK_COPY_FIELD_
    in->input_layout = H5PACK_LAYOUT_NHWC, in->output_layout = bp->out_layout;
    h5pack_stream_backend_info(s->base.be, in);
    memcpy(in->mean, mean, sizeof in->mean), memcpy(in->std, std, sizeof in->std);
    in->output_height = in->output_width = in->max_output_height = in->max_output_width = c->patch_size;
    in->ring_slots = bp->slots;
    in->patch_size = c->patch_size, in->tile = d.tile;
}

static void patches_close(stream *base)
{
    patch_stream *s = (patch_stream *)base;
    if (!s)
        return;
    h5pack_patch_pipe_free(s->pipe); /* first: stops the threads that use the backend and the tiles */
    h5pack_patch_windows_free(s->windows);
    if (s->base.be)
        s->base.be->ops->destroy(s->base.be);
    h5pack_tilesrc_close(s->tiles);
    free(s);
}

static int start(patch_stream *s, const char *path, const h5pack_config *c, h5pack_info *info, char *err,
                 size_t err_len)
{
    float mean[H5PACK_MAX_CHANNELS], std[H5PACK_MAX_CHANNELS];
    backend_params bp;
    int rc = check_patch_config(c, err, err_len);
    if (rc || (rc = h5pack_tilesrc_open(path, labels_of(c), &s->tiles, err, err_len)))
        return rc;
    const tile_geometry *g = h5pack_tilesrc_geometry(s->tiles);
    s->base.st = h5pack_tilesrc_store(s->tiles);
    h5pack_store_limit_views(s->base.st, c->cache_bytes); /* lent tiles are the cache's memory */
    if ((rc = make_windows(s->tiles, c, &s->windows, err, err_len)) ||
        (rc = resolve_norm(g, c, mean, std, err, err_len)) || (rc = create_backend(s, c, mean, std, &bp, err, err_len)))
        return rc;
    patch_pipe_params ppp = {s->tiles, s->base.be, s->windows, c->patch_size, cache_tiles(c, g), c->epochs,
                             c->start_epoch, c->start_batch, threads_of(c), c->prefetch, c->seed, c->rank, c->world};
    if ((rc = h5pack_patch_pipe_start(&ppp, &s->pipe, err, err_len)))
        return rc;
    fill_info(s, c, &bp, mean, std, info);
    return 0;
}

static int patches_open(const char *path, const h5pack_config *cfg, stream **out, h5pack_info *info, char *err,
                        size_t err_len)
{
    *out = NULL;
    if (cfg->masks_dataset && cfg->masks_dataset[0]) /* refused rather than patches delivered without them */
        return h5pack_errf(H5PACK_EINVAL, err, err_len, "%s: masks with patches (patch_size): not yet; masks come "
                           "with whole images", path);
    patch_stream *s = calloc(1, sizeof *s);
    if (!s)
        return h5pack_errf(H5PACK_ENOMEM, err, err_len, "%s: out of memory", path);
    s->base.ops = &h5pack_stream_patches_ops;
    s->patch_size = cfg->patch_size;
    int rc = start(s, path, cfg, info, err, err_len);
    if (rc) {
        patches_close(&s->base);
        return rc;
    }
    *out = &s->base;
    return 0;
}

static int patches_describe(const char *path, const h5pack_config *cfg, h5pack_file_desc *out, char *err,
                            size_t err_len)
{
    tile_source *src = NULL;
    patch_windows *w = NULL;
    int rc = cfg->patch_size ? check_patch_config(cfg, err, err_len) : 0;
    if (rc || (rc = h5pack_tilesrc_open(path, labels_of(cfg), &src, err, err_len)))
        return rc;
    describe_file(src, cfg, out);
    if (cfg->patch_size && !(rc = make_windows(src, cfg, &w, err, err_len)))
        describe_patches(src, w, cfg, out);
    h5pack_patch_windows_free(w);
    h5pack_tilesrc_close(src);
    return rc;
}

static int patches_next(stream *base, h5pack_batch *batch, char *err, size_t err_len)
{
    return h5pack_patch_pipe_next(((patch_stream *)base)->pipe, batch, err, err_len);
}

static int patches_release(stream *base, uint64_t *token, char *err, size_t err_len)
{
    return h5pack_patch_pipe_release(((patch_stream *)base)->pipe, token, err, err_len);
}

static int patches_detach(stream *base, uint64_t token, backend_detached *out, int *copied, char *err,
                          size_t err_len)
{
    return h5pack_patch_pipe_detach(((patch_stream *)base)->pipe, token, out, copied, err, err_len);
}

static void patches_stats(stream *base, h5pack_stats *st)
{
    h5pack_patch_pipe_stats(((patch_stream *)base)->pipe, st);
}

static void patches_image_shape(const stream *base, uint64_t i, uint32_t *height, uint32_t *width)
{
    const tile_image *im = h5pack_tilesrc_image(((const patch_stream *)base)->tiles, i);
    *height = im->h, *width = im->w;
}

static int patches_set_output_size(stream *base, uint32_t height, uint32_t width, char *err, size_t err_len)
{
    (void)height, (void)width;
    return h5pack_errf(H5PACK_EINVAL, err, err_len, "h5pack_set_output_size: patches keep patch_size (%u)",
                       ((patch_stream *)base)->patch_size);
}

const stream_ops h5pack_stream_patches_ops = {
    .name = "patches",
    .accepts = patches_accepts,
    .reads_file = h5pack_tilesrc_is_tiled,
    .open = patches_open,
    .describe = patches_describe,
    .next = patches_next,
    .release = patches_release,
    .detach = patches_detach,
    .stats = patches_stats,
    .image_shape = patches_image_shape,
    .set_output_size = patches_set_output_size,
    .close = patches_close,
};
