/* describe.c - h5pack_describe(): the reader's own open (each stream kind's: stream.h; for whole images
 * chunksrc.h's checks, probe and read-path choice) and its own derivation of cache slots and window
 * (resolve.h), reported without starting anything. */
#include "describe.h"

#include <stdio.h>
#include <string.h>

#include "api_structs.h"
#include "resolve.h"
#include "fingerprint.h"
#include "stream.h"

#define READ_PATH_CASE_(group, name, value, text) \
    case H5PACK_##group##_##name:                \
        return text;

H5PACK_API const char *h5pack_read_path_name(h5pack_read_path path)
{
    switch (path) {
        H5PACK_READ_PATH_MAP(READ_PATH_CASE_)
    }
    return "unknown";
}
#undef READ_PATH_CASE_

static void describe_geometry(const source_geometry *g, h5pack_file_desc *d)
{
    d->format_version = g->format_version;
    d->file_bytes = g->file_bytes;
    d->n_samples = g->n_samples;
    d->channels = g->channels, d->height = g->height, d->width = g->width;
    d->layout = g->layout;
    d->image_bytes = g->image_bytes;
    d->chunked = g->chunked;
    d->samples_per_chunk = g->samples_per_chunk;
    d->n_chunks = g->n_chunks;
    d->chunk_bytes = g->chunk_bytes;
    d->chunks_per_slab = g->chunks_per_slab;
    d->compressed = g->compressed;
    d->n_filters = g->n_filters;
    snprintf(d->filters, sizeof d->filters, "%s", g->filters);
    d->read_path = g->path;
    d->fast_path = h5pack_chunksrc_fast_path(g);
    d->has_labels = g->has_labels;
    d->n_classes = g->n_classes;
    d->label_columns = g->label_columns, d->label_rank = g->label_rank, d->labels_are_float = g->labels_are_float;
    d->several_sizes = g->several_sizes;
    d->has_pixel_stats = g->has_stats;
    memcpy(d->mean, g->mean, sizeof d->mean);
    memcpy(d->std, g->std, sizeof d->std);
}

void h5pack_describe_opened(const chunk_source *src, const h5pack_config *cfg, const reader_setup *rs,
                            h5pack_file_desc *out)
{
    const source_geometry *g = h5pack_chunksrc_geometry(src);
    memset(out, 0, sizeof *out);
    out->struct_size = sizeof *out;
    describe_geometry(g, out);
    out->mapped = h5pack_chunksrc_is_mapped(src);
    out->output_layout = cfg->output_layout == H5PACK_LAYOUT_AUTO ? g->layout : cfg->output_layout;
    out->dtype = cfg->dtype;
    out->cache_chunks = rs->slots_allocated;
    out->window = (size_t)rs->op.window;
    out->threads = rs->threads;
    out->samples_per_epoch = h5pack_order_samples_per_epoch(&rs->op);
    out->batches_per_epoch = h5pack_order_batches_per_epoch(&rs->op);
    fingerprint_facts facts = {rs->op.n_samples, rs->op.samples_per_chunk, g->channels, g->height, g->width,
                               rs->op.window, 0, NULL, NULL};
    out->order_fingerprint = h5pack_fingerprint(cfg, &facts);
    out->chunk_order_cache_min = 0; /* every cache opens: the window follows the cache (resolve.h) */
}

int h5pack_describe_source(const chunk_source *src, const h5pack_config *cfg, h5pack_file_desc *out, uint64_t *stored,
                           char *err, size_t err_len)
{
    const source_geometry *g = h5pack_chunksrc_geometry(src);
    reader_setup rs;
    int rc = h5pack_reader_resolve_setup(cfg, g, &rs, err, err_len);
    if (rc < 0)
        return rc;
    h5pack_describe_opened(src, cfg, &rs, out);
    for (uint64_t c = 0; c < g->n_chunks; c++) {
        uint64_t bytes = h5pack_chunksrc_stored_bytes(src, c);
        out->stored_bytes += bytes;
        if (stored)
            stored[c] = bytes;
    }
    return 0;
}

static int fail(char *err, size_t err_len, int code, const char *path, const char *what)
{
    if (err && err_len)
        snprintf(err, err_len, "%s%s%s", path ? path : "", path ? ": " : "", what);
    return code;
}

H5PACK_API int h5pack_describe(const char *path, const h5pack_config *cfg, h5pack_file_desc *desc, char *err,
                               size_t err_len)
{
    char msg[512] = "";
    if (err && err_len)
        err[0] = '\0';
    if (!path || !path[0] || !desc)
        return fail(err, err_len, H5PACK_EINVAL, NULL, "h5pack_describe: path and desc are required");
    if (h5pack_abi_check(desc, &h5pack_abi_file_desc, msg, sizeof msg))
        return fail(err, err_len, H5PACK_EINVAL, path, msg);
    h5pack_config own_cfg; /* the caller's over the defaults (cfg NULL: the defaults), checked */
    int rc = h5pack_reader_config_in(cfg, &own_cfg, msg, sizeof msg);
    if (rc < 0)
        return fail(err, err_len, rc, path, msg);
    cfg = &own_cfg;
    h5pack_file_desc own;
    rc = h5pack_stream_describing(path, cfg)->describe(path, cfg, &own, err, err_len); /* errors name PATH */
    if (rc < 0)
        return rc;
    rc = h5pack_abi_copy_out(desc, &own, &h5pack_abi_file_desc, msg, sizeof msg);
    return rc < 0 ? fail(err, err_len, rc, path, msg) : 0;
}
