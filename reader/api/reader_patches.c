/* reader_patches.c - h5pack_open for patches (config.patch_size > 0, docs/patches.md): the tile source,
 * the windows, the backend (batches of S x S x C images stored HWC) and the patch pipeline; h5pack_next
 * and the rest then go to the patch pipeline instead of the image pipeline (reader.c). */
#include <stdio.h>
#include <string.h>

#include "cpus.h"
#include "reader_impl.h"
#include "rng.h"

/* What patches do not do (yet), refused with the reason rather than ignored. */
static int check_patch_config(h5pack_reader *r)
{
    const h5pack_config *c = &r->cfg;
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
    else if (c->timeline_path && c->timeline_path[0])
        bad = "no timeline with patches yet (timeline_path; $H5PACK_TIMELINE is not read for them)";
    if (!bad)
        return 0;
    snprintf(r->err, ERR_LEN, "invalid configuration: %s", bad);
    return H5PACK_EINVAL;
}

/* The normalisation, through the image reader's rules (resolve.h) on a geometry with the tiled file's
 * channels and stats. */
static int resolve_norm(h5pack_reader *r, float *mean, float *std)
{
    const tile_geometry *tg = h5pack_tilesrc_geometry(r->tiles);
    source_geometry g;
    memset(&g, 0, sizeof g);
    g.channels = tg->channels, g.has_stats = tg->has_stats;
    memcpy(g.mean, tg->mean, sizeof g.mean), memcpy(g.std, tg->std, sizeof g.std);
    return h5pack_reader_resolve_norm(&r->cfg, &g, mean, std, r->err, ERR_LEN);
}

static int create_backend(h5pack_reader *r, int threads, const float *mean, const float *std)
{
    const h5pack_config *c = &r->cfg;
    const tile_geometry *g = h5pack_tilesrc_geometry(r->tiles);
    backend_params bp;
    memset(&bp, 0, sizeof bp);
    bp.channels = g->channels, bp.height = bp.width = c->patch_size;
    bp.in_layout = H5PACK_LAYOUT_NHWC; /* tiles are (h, w, C) */
    bp.out_layout = c->output_layout == H5PACK_LAYOUT_AUTO ? H5PACK_LAYOUT_NHWC : c->output_layout;
    bp.dtype = c->dtype, bp.batch_size = c->batch_size;
    bp.label_bytes = h5pack_tilesrc_label_bytes(g);
    bp.slots = c->prefetch, bp.threads = threads;
    memcpy(bp.mean, mean, sizeof bp.mean), memcpy(bp.std, std, sizeof bp.std);
    bp.random_flip = c->random_flip;
    bp.gpu_id = c->gpu_id, bp.device_memory_limit = c->device_memory_limit, bp.user_stream = c->cuda_stream;
    bp.out_height = bp.max_out_height = bp.out_width = bp.max_out_width = c->patch_size;
    bp.output_buffers = 1;
    bp.one_pass = 1; /* the CPU backend: each patch converted as it is assembled */
    r->bp = bp;
    return h5pack_reader_make_backend(r);
}

/* What the patches of every epoch depend on: the image sizes, patch size, overlap, mode, draws per epoch,
 * seed, world, batch size, drop_last and flip (not rank, threads or cache): equal on every rank of a job. */
static uint64_t patch_fingerprint(const h5pack_reader *r)
{
    const h5pack_config *c = &r->cfg;
    const tile_geometry *g = h5pack_tilesrc_geometry(r->tiles);
    uint64_t h = rng_key(c->seed, c->patch_size, c->patch_overlap, (uint64_t)c->patch_mode);
    h = rng_key(h, c->patches_per_epoch, c->world, (uint64_t)c->batch_size);
    h = rng_key(h, (uint64_t)c->drop_last, (uint64_t)c->random_flip, g->n_images);
    h = rng_key(h, (uint64_t)c->order, c->window, 0);
    for (uint64_t i = 0; i < g->n_images; i++) {
        const tile_image *im = h5pack_tilesrc_image(r->tiles, i);
        h = rng_key(h, im->h, im->w, i);
    }
    return h;
}

static void fill_info(h5pack_reader *r, int threads, size_t cache_tiles, const float *mean, const float *std)
{
    const tile_geometry *g = h5pack_tilesrc_geometry(r->tiles);
    const h5pack_config *c = &r->cfg;
    h5pack_info *in = &r->info;
    memset(in, 0, sizeof *in);
    in->struct_size = sizeof *in;
    in->n_samples = g->n_images;
    in->channels = g->channels, in->height = in->width = c->patch_size;
    in->input_layout = H5PACK_LAYOUT_NHWC, in->output_layout = r->bp.out_layout, in->dtype = c->dtype;
    in->has_labels = g->has_labels, in->n_classes = g->n_classes;
    in->label_columns = g->label_columns, in->label_rank = g->label_rank, in->labels_are_float = g->labels_are_float;
    in->samples_per_chunk = 1, in->n_chunks = g->n_tiles, in->chunk_bytes = g->tile_bytes;
    in->compressed = g->compressed, in->fast_path = g->path != TILE_HDF5;
    in->cache_chunks = cache_tiles, in->threads = threads;
    in->window = (size_t)h5pack_patch_windows_region_window(r->windows); /* active regions, 0 for none */
    in->samples_per_epoch = h5pack_patch_windows_per_epoch(r->windows);
    in->batches_per_epoch = h5pack_patch_windows_batches(r->windows);
    in->device = r->be->device;
    snprintf(in->device_name, sizeof in->device_name, "%s", r->be->name);
    r->be->ops->times(r->be, NULL, NULL, &in->device_bytes);
    in->pinned_bytes = r->be->pinned_bytes;
    memcpy(in->mean, mean, sizeof in->mean), memcpy(in->std, std, sizeof in->std);
    in->output_height = in->output_width = in->max_output_height = in->max_output_width = c->patch_size;
    in->ring_slots = r->bp.slots;
    in->patch_size = c->patch_size, in->tile = g->tile;
    in->order_fingerprint = patch_fingerprint(r);
}

int h5pack_reader_open_patches(h5pack_reader *r, const char *path)
{
    const h5pack_config *c = &r->cfg;
    const char *labels = r->labels_name && r->labels_name[0] ? r->labels_name : NULL;
    int rc = check_patch_config(r);
    if (!rc)
        rc = h5pack_tilesrc_open(path, labels, &r->tiles, r->err, ERR_LEN);
    if (rc)
        return rc;
    const tile_geometry *g = h5pack_tilesrc_geometry(r->tiles);
    float mean[H5PACK_MAX_CHANNELS], std[H5PACK_MAX_CHANNELS];
    int threads = c->threads > 0 ? c->threads : h5pack_default_threads();
    patch_params pp = {c->patch_size, c->patch_overlap, c->patch_mode, c->patches_per_epoch, c->seed, c->rank,
                       c->world, c->batch_size, c->drop_last, c->order == H5PACK_ORDER_CHUNK, c->window};
    if ((rc = h5pack_patch_windows_create(&pp, r->tiles, &r->windows, r->err, ERR_LEN)) ||
        (rc = resolve_norm(r, mean, std)) || (rc = create_backend(r, threads, mean, std)))
        return rc;
    size_t cache_tiles = c->cache_bytes / g->tile_bytes ? (size_t)(c->cache_bytes / g->tile_bytes) : 1;
    if (c->start_batch >= h5pack_patch_windows_batches(r->windows))
        return h5pack_errf(H5PACK_EINVAL, r->err, ERR_LEN, "invalid configuration: start_batch %llu, but an epoch has "
                           "%llu batches of patches", (unsigned long long)c->start_batch,
                           (unsigned long long)h5pack_patch_windows_batches(r->windows));
    patch_pipe_params ppp = {r->tiles, r->be, r->windows, c->patch_size, cache_tiles, c->epochs, c->start_epoch,
                             c->start_batch, threads, c->prefetch, c->seed, c->rank, c->world};
    if ((rc = h5pack_patch_pipe_start(&ppp, &r->patches, r->err, ERR_LEN)))
        return rc;
    fill_info(r, threads, cache_tiles, mean, std);
    r->cfg.timeline_path = NULL; /* the caller's string: not kept past the open */
    return 0;
}
