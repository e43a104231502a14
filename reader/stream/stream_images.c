/* stream_images.c - the stream of whole images (stream.h): the chunk source (chunksrc.h), the setup the
 * config and the file resolve to (resolve.h), the backend, and the pipeline of workers (pipeline.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "augment_config.h"
#include "chunksrc.h"
#include "describe.h"
#include "env.h"
#include "errtext.h"
#include "masksrc.h"
#include "pipeline.h"
#include "resolve.h"
#include "store.h"
#include "resume.h"
#include "stream.h"

typedef struct image_stream {
    stream base; /* first: reader.c sees this */
    chunk_source *src;
    mask_source *masks; /* config.masks_dataset, else NULL */
    reader_setup setup;
    backend_params bp; /* what the backend was created with */
    pipeline *pipe;
} image_stream;

static int images_accepts(const h5pack_config *cfg)
{
    (void)cfg;
    return 1;
}

static const char *labels_of(const h5pack_config *cfg)
{
    return cfg->labels_dataset && cfg->labels_dataset[0] ? cfg->labels_dataset : NULL;
}

/* The CPU one-pass path (backend_convert.h) unless an echo needs the uint8 pixels again or
 * H5PACK_TWO_PASS=1 asks for the two-pass path (for comparisons). */
static int one_pass_wanted(const h5pack_config *c)
{
    return c->echo <= 1 && !h5pack_env_flag("H5PACK_TWO_PASS");
}

static int create_backend(image_stream *s, const h5pack_config *c, const float *mean, const float *std, char *err,
                          size_t err_len)
{
    const source_geometry *g = h5pack_chunksrc_geometry(s->src);
    backend_params bp;
    memset(&bp, 0, sizeof bp);
    int rc = h5pack_augment_backend_params(c, g, &s->setup, &bp, err, err_len); /* also the ring size */
    if (rc)
        return rc;
    bp.channels = g->channels, bp.height = g->height, bp.width = g->width;
    bp.in_image_bytes = g->several_sizes ? g->image_bytes : 0; /* the largest image, not largest h x largest w */
    bp.in_layout = g->layout;
    bp.out_layout = c->output_layout == H5PACK_LAYOUT_AUTO ? g->layout : c->output_layout;
    bp.dtype = c->dtype;
    bp.batch_size = c->batch_size;
    bp.label_bytes = h5pack_chunksrc_label_bytes(g);
    bp.threads = s->setup.threads;
    memcpy(bp.mean, mean, sizeof bp.mean);
    memcpy(bp.std, std, sizeof bp.std);
    bp.random_flip = c->random_flip;
    bp.crop_padding = c->random_crop_padding;
    bp.gpu_id = c->gpu_id;
    bp.device_memory_limit = c->device_memory_limit;
    bp.user_stream = c->cuda_stream;
    bp.output_buffers = c->echo > 1 && c->echo_mode == H5PACK_ECHO_BATCH ? 2 : 1;
    bp.one_pass = one_pass_wanted(c);
    s->bp = bp;
    return h5pack_stream_make_backend(c, &s->bp, &s->base.be, err, err_len);
}

/* The file's facts come from the description h5pack_describe gives (describe.h), the rest from the
 * backend and the augmentation. */
static void fill_info(image_stream *s, const h5pack_config *cfg, const float *mean, const float *std,
                      h5pack_info *in)
{
    h5pack_file_desc d;
    h5pack_describe_opened(s->src, cfg, &s->setup, &d);
    memset(in, 0, sizeof *in);
    in->struct_size = sizeof *in;
#define H5PACK_COPY_FIELD_(f) in->f = d.f;
    H5PACK_SHARED_FILE_FIELDS(H5PACK_COPY_FIELD_)
#undef H5PACK_COPY_FIELD_
    in->input_layout = d.layout;
    h5pack_stream_backend_info(s->base.be, in);
    memcpy(in->mean, mean, sizeof in->mean);
    memcpy(in->std, std, sizeof in->std);
    h5pack_augment_fill_info(cfg, &s->bp, s->base.be, in);
}

/* Images of several sizes (format version 2) are delivered at one size: a resizing crop with an output
 * size is needed (each image's box is drawn from its own size, on every path and device). */
static int check_several_sizes(const h5pack_config *c, const char *path, const source_geometry *g, char *err,
                               size_t err_len)
{
    if (!g->several_sizes)
        return 0;
    if (c->crop == H5PACK_CROP_NONE || !c->output_height || !c->output_width)
        return h5pack_errf(H5PACK_EINVAL, err, err_len, "%s: images of several sizes (largest %ux%u) are "
                           "delivered at one size: set crop (RANDOM_RESIZED for training, CENTER for evaluation) "
                           "and output_height/output_width (Python: crop=\"random_resized\", output_size=224; "
                           "h5pack-stats: --crop random_resized --output-size 224)", path, g->height, g->width);
    return 0;
}

static int check_channels(const char *path, const source_geometry *g, char *err, size_t err_len)
{
    if (g->channels >= 1 && g->channels <= H5PACK_MAX_CHANNELS)
        return 0;
    return h5pack_errf(H5PACK_EFORMAT, err, err_len, "%s: %u channels per image, the reader supports 1..%d", path,
                       g->channels, H5PACK_MAX_CHANNELS);
}

static void images_close(stream *base)
{
    image_stream *s = (image_stream *)base;
    if (!s)
        return;
    h5pack_pipeline_free(s->pipe); /* first: stops the workers that use the backend and the source */
    if (s->base.be)
        s->base.be->ops->destroy(s->base.be);
    h5pack_masksrc_close(s->masks);
    h5pack_chunksrc_close(s->src);
    free(s);
}

/* The CUDA backend cannot deliver masks yet: refused by name rather than delivered without them, or on
 * the host while the images are on the device. */
static int refuse_masks_on_gpu(const image_stream *s, const char *path, const h5pack_config *cfg, char *err,
                               size_t err_len)
{
    if (!s->masks || s->base.be->device != H5PACK_DEVICE_CUDA)
        return 0;
    return h5pack_errf(H5PACK_EINVAL, err, err_len, "%s: masks on the GPU backend: not yet (masks '%s' come with "
                       "the CPU backend: set device to cpu; Python: device=\"cpu\")", path, cfg->masks_dataset);
}

/* The geometry the cache is planned with: a slot holds an image chunk and, with masks, its mask chunk,
 * so cache_bytes buys fewer slots (and the derived window counts both). */
static source_geometry cache_geometry(const image_stream *s)
{
    source_geometry g = *h5pack_chunksrc_geometry(s->src);
    if (s->masks)
        g.chunk_bytes += h5pack_masksrc_chunk_bytes(s->masks);
    return g;
}

static int start(image_stream *s, const char *path, const h5pack_config *cfg, h5pack_info *info, char *err,
                 size_t err_len)
{
    int rc = h5pack_chunksrc_open(path, cfg->images_dataset, labels_of(cfg), cfg->input_layout, &s->src, err, err_len);
    if (rc)
        return rc;
    const source_geometry *g = h5pack_chunksrc_geometry(s->src);
    s->base.st = h5pack_chunksrc_store(s->src);
    h5pack_store_limit_views(s->base.st, cfg->cache_bytes); /* lent chunks are the cache's memory */
    if (h5pack_masksrc_name(cfg) && (rc = h5pack_masksrc_open(path, h5pack_masksrc_name(cfg), g, &s->masks, err,
                                                              err_len)))
        return rc;
    source_geometry planned = cache_geometry(s);
    float mean[H5PACK_MAX_CHANNELS], std[H5PACK_MAX_CHANNELS];
    if ((rc = check_channels(path, g, err, err_len)) || (rc = check_several_sizes(cfg, path, g, err, err_len)) ||
        (rc = h5pack_reader_resolve_setup(cfg, &planned, &s->setup, err, err_len)) ||
        (rc = h5pack_reader_check_start(cfg, &s->setup, err, err_len)) ||
        (rc = h5pack_reader_resolve_norm(cfg, g, mean, std, err, err_len)) ||
        (rc = create_backend(s, cfg, mean, std, err, err_len)) || (rc = refuse_masks_on_gpu(s, path, cfg, err, err_len)))
        return rc;
    pipeline_params pp = {.src = s->src, .be = s->base.be, .setup = s->setup, .echo = cfg->echo,
                          .prefetch = s->bp.slots, .sample_echo = h5pack_augment_sample_echo(cfg),
                          .start_epoch = s->setup.start_epoch, .start_batch = s->setup.start_batch,
                          .start_echo = s->setup.start_echo, /* resolved (resume.h) */
                          .masks = s->masks, .mask_dtype = cfg->mask_dtype, .mask_max_h = s->bp.max_out_height,
                          .mask_max_w = s->bp.max_out_width, .pool_batches = s->bp.pool_batches};
    if ((rc = h5pack_pipeline_start(&pp, &s->pipe, err, err_len)))
        return rc;
    fill_info(s, cfg, mean, std, info);
    return 0;
}

static int images_open(const char *path, const h5pack_config *cfg, stream **out, h5pack_info *info, char *err,
                       size_t err_len)
{
    *out = NULL;
    image_stream *s = calloc(1, sizeof *s);
    if (!s)
        return h5pack_errf(H5PACK_ENOMEM, err, err_len, "%s: out of memory", path);
    s->base.ops = &h5pack_stream_images_ops;
    int rc = start(s, path, cfg, info, err, err_len);
    if (rc) {
        images_close(&s->base);
        return rc;
    }
    *out = &s->base;
    return 0;
}

static int images_describe(const char *path, const h5pack_config *cfg, h5pack_file_desc *out, char *err,
                           size_t err_len)
{
    chunk_source *src = NULL;
    char msg[512] = "";
    int rc = h5pack_chunksrc_open(path, cfg->images_dataset, labels_of(cfg), cfg->input_layout, &src, err, err_len);
    if (rc < 0)
        return rc;
    rc = h5pack_describe_source(src, cfg, out, NULL, msg, sizeof msg);
    h5pack_chunksrc_close(src);
    return rc < 0 ? h5pack_errf(rc, err, err_len, "%s: %s", path, msg) : 0;
}

static int images_next(stream *base, h5pack_batch *batch, char *err, size_t err_len)
{
    return h5pack_pipeline_next(((image_stream *)base)->pipe, batch, err, err_len);
}

static int images_release(stream *base, uint64_t *token, char *err, size_t err_len)
{
    return h5pack_pipeline_release(((image_stream *)base)->pipe, token, err, err_len);
}

static int images_detach(stream *base, uint64_t token, backend_detached *out, int *copied, char *err,
                         size_t err_len)
{
    return h5pack_pipeline_detach(((image_stream *)base)->pipe, token, out, copied, err, err_len);
}

static void images_stats(stream *base, h5pack_stats *st)
{
    h5pack_pipeline_stats(((image_stream *)base)->pipe, st);
}

static void images_image_shape(const stream *base, uint64_t i, uint32_t *height, uint32_t *width)
{
    const image_stream *s = (const image_stream *)base;
    const source_geometry *g = h5pack_chunksrc_geometry(s->src);
    *height = g->height, *width = g->width;
    h5pack_chunksrc_image_size(s->src, i, height, width);
}

static int images_set_output_size(stream *base, uint32_t height, uint32_t width, char *err, size_t err_len)
{
    image_stream *s = (image_stream *)base;
    return h5pack_backend_set_output_size(s->base.be, height, width, h5pack_pipeline_next_epoch(s->pipe), &s->bp, err,
                                          err_len);
}

const stream_ops h5pack_stream_images_ops = {
    .name = "images",
    .accepts = images_accepts,
    .reads_file = NULL,
    .open = images_open,
    .describe = images_describe,
    .next = images_next,
    .release = images_release,
    .detach = images_detach,
    .stats = images_stats,
    .image_shape = images_image_shape,
    .set_output_size = images_set_output_size,
    .close = images_close,
};
