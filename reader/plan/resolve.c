/* resolve.c - config + geometry -> run parameters (rules in resolve.h). */
#include "resolve.h"

#include <stdio.h>

#include "cpus.h"

#include "api_structs.h"
#include "params.h"

static const float imagenet_mean[3] = {0.485f, 0.456f, 0.406f};
static const float imagenet_std[3] = {0.229f, 0.224f, 0.225f};

int h5pack_reader_check_config(const h5pack_config *cfg, char *err, size_t err_len)
{
    if (h5pack_abi_check(cfg, &h5pack_abi_config, err, err_len)) /* a zeroed struct is not "all fields 0" */
        return H5PACK_EINVAL;
    if (h5pack_params_check(cfg, err, err_len)) /* each field within its bounds (params.c) */
        return H5PACK_EINVAL;
    const char *bad = NULL; /* the rules across fields */
    if (!cfg->images_dataset || !cfg->images_dataset[0])
        bad = "images_dataset must name a dataset";
    else if (cfg->rank >= cfg->world)
        bad = "rank must be < world";
    else if (cfg->start_sample && cfg->start_batch)
        bad = "start_batch and start_sample both name where to start: set one (start_sample: a position of "
              "the epoch's order, from any split of any global batch; start_batch: this run's batch)";
    else if (cfg->start_sample && cfg->patch_size)
        bad = "start_sample is for whole images: patches resume with start_batch, in the same world";
    else if (cfg->dtype == H5PACK_DTYPE_UINT8 && cfg->crop == H5PACK_CROP_NONE &&
             (cfg->random_flip || cfg->random_crop_padding))
        /* refused rather than ignored: training on unflipped images by mistake is silent */
        bad = "dtype uint8 without a crop delivers the stored pixels as they are: random_flip and "
              "random_crop_padding need a float dtype or a crop";
    if (!bad)
        return 0;
    snprintf(err, err_len, "invalid configuration: %s", bad);
    return H5PACK_EINVAL;
}

int h5pack_reader_resolve_setup(const h5pack_config *cfg, const source_geometry *g, reader_setup *out, char *err,
                         size_t err_len)
{
    out->threads = cfg->threads > 0 ? cfg->threads : h5pack_default_threads();
    size_t budget = g->chunk_bytes ? cfg->cache_bytes / g->chunk_bytes : 0;
    out->slots = budget < 1 ? 1 : budget;
    out->slots_allocated = out->slots < g->n_chunks ? out->slots : (size_t)g->n_chunks;
    /* the order's window: from the file and the cache, never from threads (resolve.h) */
    uint64_t window = cfg->window;
    out->window_derived = window == 0;
    if (window == 0)
        window = h5pack_reader_derived_window(g, out->slots, cfg->batch_size);
    if (window > g->n_chunks)
        window = g->n_chunks;
    order_params op = {cfg->order, g->n_samples, g->samples_per_chunk, window < 1 ? 1 : window, cfg->seed,
                       cfg->rank, cfg->world, cfg->drop_last, cfg->batch_size};
    out->op = op;
    out->epochs = cfg->epochs == H5PACK_EPOCHS_ENDLESS ? 0 : cfg->epochs; /* the planners' 0 = endless */
    out->start_epoch = cfg->start_epoch, out->start_batch = cfg->start_batch, out->start_echo = cfg->start_echo;
    out->start_origin = 0;
    if (h5pack_order_check(&op)) {
        snprintf(err, err_len, "invalid order parameters (samples %llu, batch %zu, rank %u of %u)",
                 (unsigned long long)g->n_samples, cfg->batch_size, cfg->rank, cfg->world);
        return H5PACK_EINVAL;
    }
    if (h5pack_order_batches_per_epoch(&op) == 0) {
        snprintf(err, err_len, "drop_last with %llu samples per rank and batch_size %zu leaves no batch",
                 (unsigned long long)(g->n_samples / cfg->world), cfg->batch_size);
        return H5PACK_EINVAL;
    }
    return 0;
}

uint64_t h5pack_reader_derived_window(const source_geometry *g, size_t slots, uint64_t batch)
{
    /* every batch of BATCH samples starts at most ceil(BATCH / k) + 1 chunks (one that starts near its end
     * continues into the next batch); a rank's share of a global batch, arranged by slot, mostly reads its
     * own chunks (order.h) */
    uint64_t k = g->samples_per_chunk ? g->samples_per_chunk : 1;
    uint64_t started = (batch + k - 1) / k + 1;
    uint64_t w = h5pack_order_default_window(g->n_chunks, g->chunk_bytes);
    if (slots >= g->n_chunks)
        return w; /* the whole file stays cached */
    uint64_t fit = slots > started ? slots - started : 1;
    return w < fit ? w : fit;
}

int h5pack_reader_resolve_norm(const h5pack_config *cfg, const source_geometry *g, float mean[H5PACK_MAX_CHANNELS],
                        float std[H5PACK_MAX_CHANNELS], char *err, size_t err_len)
{
    for (uint32_t c = 0; c < H5PACK_MAX_CHANNELS; c++) {
        mean[c] = 0.0f, std[c] = 1.0f;
        if (c >= g->channels)
            continue;
        if (cfg->norm == H5PACK_NORM_IMAGENET) {
            mean[c] = g->channels == 3 ? imagenet_mean[c] : (g->channels == 1 ? 0.449f : imagenet_mean[c % 3]);
            std[c] = g->channels == 3 ? imagenet_std[c] : (g->channels == 1 ? 0.226f : imagenet_std[c % 3]);
        } else if (cfg->norm == H5PACK_NORM_FILE) {
            if (!g->has_stats) {
                snprintf(err, err_len, "norm = FILE but the file has no \"mean\"/\"std\" attributes");
                return H5PACK_EINVAL;
            }
            mean[c] = (float)g->mean[c], std[c] = (float)g->std[c];
        } else if (cfg->norm == H5PACK_NORM_CUSTOM) {
            mean[c] = cfg->mean[c], std[c] = cfg->std[c];
        }
        if (!(std[c] > 0.0f)) {
            snprintf(err, err_len, "std[%u] = %g: must be > 0", c, (double)std[c]);
            return H5PACK_EINVAL;
        }
    }
    return 0;
}
