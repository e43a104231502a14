/* reader.c - the public reader API of h5pack.h: open (file, backend, pipeline), next/release, stats,
 * info, close, and the error messages. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api_structs.h"
#include "augment_config.h"
#include "backend.h"
#include "chunksrc.h"
#include "clock.h"
#include "describe.h"
#include "env.h"
#include "errtext.h"
#include "h5pack.h"
#include "pipeline.h"
#include "reader_impl.h"
#include "resolve.h"
#include "resume.h"
#include "timeline.h"




static char *copy_string(const char *s)
{
    if (!s)
        return NULL;
    size_t n = strlen(s) + 1;
    char *c = malloc(n);
    return c ? memcpy(c, s, n) : NULL;
}

/* ---- open ---------------------------------------------------------------------------------------- */

/* The CPU one-pass path (backend_convert.h) unless an echo needs the uint8 pixels again or
 * H5PACK_TWO_PASS=1 asks for the two-pass path (for comparisons). */
static int one_pass_wanted(const h5pack_config *c)
{
    return c->echo <= 1 && !h5pack_env_flag("H5PACK_TWO_PASS");
}

static int create_backend(h5pack_reader *r, const float *mean, const float *std)
{
    const source_geometry *g = h5pack_chunksrc_geometry(r->src);
    const h5pack_config *c = &r->cfg;
    backend_params bp;
    memset(&bp, 0, sizeof bp);
    int rc = h5pack_augment_backend_params(c, g, &r->setup, &bp, r->err, ERR_LEN); /* also the ring size */
    if (rc)
        return rc;
    bp.channels = g->channels, bp.height = g->height, bp.width = g->width;
    bp.in_image_bytes = g->ragged ? g->image_bytes : 0; /* the largest image, not largest h x largest w */
    bp.in_layout = g->layout;
    bp.out_layout = c->output_layout == H5PACK_LAYOUT_AUTO ? g->layout : c->output_layout;
    bp.dtype = c->dtype;
    bp.batch_size = c->batch_size;
    bp.label_bytes = h5pack_chunksrc_label_bytes(g);
    bp.threads = r->setup.threads;
    memcpy(bp.mean, mean, sizeof bp.mean);
    memcpy(bp.std, std, sizeof bp.std);
    bp.random_flip = c->random_flip;
    bp.crop_padding = c->random_crop_padding;
    bp.gpu_id = c->gpu_id;
    bp.device_memory_limit = c->device_memory_limit;
    bp.user_stream = c->cuda_stream;
    bp.output_buffers = c->echo > 1 && c->echo_mode == H5PACK_ECHO_BATCH ? 2 : 1;
    bp.one_pass = one_pass_wanted(c);
    r->bp = bp;
    return h5pack_reader_make_backend(r);
}

int h5pack_reader_make_backend(h5pack_reader *r)
{
    const h5pack_config *c = &r->cfg;
    int use_cuda = c->device == H5PACK_DEVICE_CUDA ||
                   (c->device == H5PACK_DEVICE_AUTO && h5pack_backend_cuda_available(c->gpu_id));
    if (use_cuda)
        return h5pack_backend_cuda_create(&r->bp, &r->be, r->err, ERR_LEN);
    return h5pack_backend_cpu_create(&r->bp, &r->be, r->err, ERR_LEN);
}

/* The file's facts come from the description h5pack_describe gives (describe.h), the rest from the
 * backend and the augmentation. */
static void fill_info(h5pack_reader *r, const float *mean, const float *std)
{
    h5pack_file_desc d;
    h5pack_describe_opened(r->src, &r->cfg, &r->setup, &d);
    h5pack_info *in = &r->info;
    memset(in, 0, sizeof *in);
    in->struct_size = sizeof *in;
#define H5PACK_COPY_FIELD_(f) in->f = d.f;
    H5PACK_SHARED_FILE_FIELDS(H5PACK_COPY_FIELD_)
#undef H5PACK_COPY_FIELD_
    in->input_layout = d.layout;
    in->device = r->be->device;
    snprintf(in->device_name, sizeof in->device_name, "%s", r->be->name);
    r->be->ops->times(r->be, NULL, NULL, &in->device_bytes);
    in->pinned_bytes = r->be->pinned_bytes;
    memcpy(in->mean, mean, sizeof in->mean);
    memcpy(in->std, std, sizeof in->std);
    h5pack_augment_fill_info(&r->cfg, &r->bp, r->be, in);
}

/* Images of several sizes (format version 2) are delivered at one size: a resizing crop with an output
 * size is needed (each image's box is drawn from its own size, on every path and device). */
static int check_several_sizes(const h5pack_reader *r, const char *path, const source_geometry *g)
{
    const h5pack_config *c = &r->cfg;
    if (!g->ragged)
        return 0;
    if (c->crop == H5PACK_CROP_NONE || !c->output_height || !c->output_width)
        return h5pack_errf(H5PACK_EINVAL, r->err, ERR_LEN, "%s: images of several sizes (largest %ux%u) are "
                           "delivered at one size: set crop (RANDOM_RESIZED for training, CENTER for evaluation) "
                           "and output_height/output_width (Python: crop=\"random_resized\", output_size=224; "
                           "h5pack-stats: --crop random_resized --output-size 224)", path, g->height, g->width);
    return 0;
}

/* Everything after the config check; on failure r->err names the file and the reason. */
static int open_reader(h5pack_reader *r, const char *path)
{
    if (r->cfg.patch_size)
        return h5pack_reader_open_patches(r, path);
    const char *labels = r->labels_name && r->labels_name[0] ? r->labels_name : NULL;
    int rc = h5pack_chunksrc_open(path, r->images_name, labels, r->cfg.input_layout, &r->src, r->err, ERR_LEN);
    if (rc)
        return rc;
    const source_geometry *g = h5pack_chunksrc_geometry(r->src);
    if (g->channels < 1 || g->channels > H5PACK_MAX_CHANNELS) {
        snprintf(r->err, ERR_LEN, "%s: %u channels per image, the reader supports 1..%d", path, g->channels,
                 H5PACK_MAX_CHANNELS);
        return H5PACK_EFORMAT;
    }
    float mean[H5PACK_MAX_CHANNELS], std[H5PACK_MAX_CHANNELS];
    if ((rc = check_several_sizes(r, path, g)) || (rc = h5pack_reader_resolve_setup(&r->cfg, g, &r->setup, r->err, ERR_LEN)) ||
        (rc = h5pack_reader_check_start(&r->cfg, &r->setup, r->err, ERR_LEN)) ||
        (rc = h5pack_reader_resolve_norm(&r->cfg, g, mean, std, r->err, ERR_LEN)) || (rc = create_backend(r, mean, std)))
        return rc;
    pipeline_params pp = {r->src, r->be, r->setup, r->cfg.echo, r->bp.slots, h5pack_augment_sample_echo(&r->cfg),
                          r->cfg.start_epoch, r->cfg.start_batch, r->cfg.start_echo};
    if ((rc = h5pack_pipeline_start(&pp, &r->pipe, r->err, ERR_LEN)))
        return rc;
    fill_info(r, mean, std);
    /* the config's path is the caller's string: the timeline resolves and copies it now */
    rc = h5pack_timeline_open(&r->cfg, r->pipe, r->be, r->t_open, &r->timeline, r->err, ERR_LEN);
    r->cfg.timeline_path = NULL;
    return rc;
}

/* Frees what open_reader built, keeping the reader itself and its message. */
static void release_resources(h5pack_reader *r)
{
    h5pack_timeline_close(r->timeline); /* its last row reads the backend */
    r->timeline = NULL;
    h5pack_pipeline_free(r->pipe); /* first: stops the workers that use the backend and the source */
    r->pipe = NULL;
    h5pack_patch_pipe_free(r->patches);
    r->patches = NULL;
    h5pack_patch_windows_free(r->windows);
    r->windows = NULL;
    if (r->be)
        r->be->ops->destroy(r->be);
    r->be = NULL;
    h5pack_chunksrc_close(r->src);
    r->src = NULL;
    h5pack_tilesrc_close(r->tiles);
    r->tiles = NULL;
}

/* WHAT (the file, or the call) and why, for h5pack_last_error(NULL). */
static int fail_without_reader(int rc, const char *what, const char *why)
{
    h5pack_reader_set_thread_error("%s: %s", what, why);
    return rc;
}

H5PACK_API int h5pack_open(const char *path, const h5pack_config *cfg, h5pack_reader **out)
{
    if (!out)
        return fail_without_reader(H5PACK_EINVAL, "h5pack_open", "out must not be NULL");
    *out = NULL;
    if (!path || !path[0])
        return fail_without_reader(H5PACK_EINVAL, "h5pack_open", "no file name given");
    h5pack_config own;
    char err[ERR_LEN] = "";
    int rc = h5pack_reader_config_in(cfg, &own, err, sizeof err);
    if (rc)
        return fail_without_reader(rc, path, err);
    h5pack_reader *r = calloc(1, sizeof *r);
    if (!r)
        return fail_without_reader(H5PACK_ENOMEM, path, "out of memory");
    r->t_open = h5pack_clock_s();
    r->pid = getpid();
    r->cfg = own;
    r->err = calloc(1, ERR_LEN);
    r->images_name = copy_string(own.images_dataset);
    r->labels_name = copy_string(own.labels_dataset);
    r->cfg.images_dataset = r->images_name, r->cfg.labels_dataset = r->labels_name;
    if (!r->err || !r->images_name || (own.labels_dataset && !r->labels_name)) {
        free(r->err), free(r->images_name), free(r->labels_name), free(r);
        return fail_without_reader(H5PACK_ENOMEM, path, "out of memory");
    }
    rc = open_reader(r, path);
    if (rc) {
        release_resources(r);
        r->open_rc = rc;
        if (!r->err[0])
            snprintf(r->err, ERR_LEN, "%s", h5pack_strerror(rc));
        if (!strstr(r->err, path)) { /* every open error names the file */
            char detail[ERR_LEN];
            memcpy(detail, r->err, sizeof detail);
            int room = (int)(ERR_LEN / 2); /* the reason keeps at least half the buffer */
            snprintf(r->err, ERR_LEN, "%.*s: %.*s", room - 3, path, room, detail);
        }
        h5pack_reader_set_thread_error("%s", r->err);
    }
    *out = r;
    return rc;
}

/* ---- the consumer's calls ------------------------------------------------------------------------ */

H5PACK_API const char *h5pack_timeline_path(const h5pack_reader *r)
{
    return r ? h5pack_timeline_file(r->timeline) : NULL;
}

H5PACK_API const char *h5pack_last_error(const h5pack_reader *r)
{
    return r ? r->err : h5pack_reader_thread_error();
}

static int check_usable(h5pack_reader *r)
{
    if (!r) {
        h5pack_reader_set_thread_error("h5pack: the reader is NULL");
        return H5PACK_EINVAL;
    }
    if (r->open_rc < 0 || (!r->pipe && !r->patches)) /* the open failed: r->err keeps its reason */
        return H5PACK_ESTATE;
    if (getpid() != r->pid) { /* fork() copies the reader but not its threads: next would wait forever */
        snprintf(r->err, ERR_LEN,
                 "this reader was opened in process %d and this is a fork() of it (%d): its worker threads "
                 "are not here; open the reader in this process (e.g. in a DataLoader worker_init_fn)",
                 (int)r->pid, (int)getpid());
        return H5PACK_ESTATE;
    }
    return 0;
}

H5PACK_API int h5pack_next(h5pack_reader *r, h5pack_batch *batch)
{
    int rc = check_usable(r);
    if (rc)
        return rc;
    if (!batch) {
        snprintf(r->err, ERR_LEN, "h5pack_next: batch must not be NULL");
        return H5PACK_EINVAL;
    }
    /* Checked before a batch is taken from the ring: one the caller cannot receive would be lost. */
    if ((rc = h5pack_abi_check(batch, &h5pack_abi_batch, r->err, ERR_LEN)))
        return rc;
    h5pack_batch own;
    h5pack_timeline_enter(r->timeline);
    rc = r->patches ? h5pack_patch_pipe_next(r->patches, &own, r->err, ERR_LEN)
                    : h5pack_pipeline_next(r->pipe, &own, r->err, ERR_LEN);
    h5pack_timeline_leave(r->timeline, rc == H5PACK_OK ? &own : NULL);
    if (rc != H5PACK_OK) /* a cleared batch (token 0): h5pack_release rejects it cleanly */
        memset(&own, 0, sizeof own);
    own.struct_size = sizeof own;
    h5pack_abi_copy_out(batch, &own, &h5pack_abi_batch, r->err, ERR_LEN); /* cannot fail: checked */
    return rc;
}

H5PACK_API int h5pack_set_output_size(h5pack_reader *r, uint32_t height, uint32_t width)
{
    int rc = check_usable(r);
    if (rc)
        return rc;
    if (r->patches) {
        snprintf(r->err, ERR_LEN, "h5pack_set_output_size: patches keep patch_size (%u)", r->cfg.patch_size);
        return H5PACK_EINVAL;
    }
    return h5pack_backend_set_output_size(r->be, height, width, h5pack_pipeline_next_epoch(r->pipe), &r->bp, r->err,
                                          ERR_LEN);
}

H5PACK_API int h5pack_release(h5pack_reader *r, h5pack_batch *batch)
{
    int rc = check_usable(r);
    if (rc)
        return rc;
    if (!batch) {
        snprintf(r->err, ERR_LEN, "h5pack_release: batch must not be NULL");
        return H5PACK_EINVAL;
    }
    if ((rc = h5pack_abi_check(batch, &h5pack_abi_batch, r->err, ERR_LEN)))
        return rc;
    if (r->patches)
        return h5pack_patch_pipe_release(r->patches, &batch->token, r->err, ERR_LEN);
    return h5pack_pipeline_release(r->pipe, &batch->token, r->err, ERR_LEN); /* token: in every release */
}

H5PACK_API int h5pack_stats_get(const h5pack_reader *r, h5pack_stats *stats)
{
    if (!r || !stats || r->open_rc < 0 || (!r->pipe && !r->patches))
        return !r || !stats ? H5PACK_EINVAL : H5PACK_ESTATE;
    if (h5pack_abi_check(stats, &h5pack_abi_stats, r->err, ERR_LEN))
        return H5PACK_EINVAL;
    h5pack_stats st;
    memset(&st, 0, sizeof st);
    st.struct_size = sizeof st;
    if (r->patches)
        h5pack_patch_pipe_stats(r->patches, &st);
    else
        h5pack_pipeline_stats(r->pipe, &st);
    st.read_amplification = st.bytes_needed ? (double)st.bytes_read / (double)st.bytes_needed : 0.0;
    uint64_t uses = st.chunk_hits + st.chunk_misses;
    st.hit_rate = uses ? (double)st.chunk_hits / (double)uses : 0.0;
    st.elapsed_s = h5pack_clock_s() - r->t_open;
    return h5pack_abi_copy_out(stats, &st, &h5pack_abi_stats, r->err, ERR_LEN);
}

H5PACK_API int h5pack_info_get(const h5pack_reader *r, h5pack_info *info)
{
    if (!r || !info || r->open_rc < 0 || (!r->pipe && !r->patches))
        return !r || !info ? H5PACK_EINVAL : H5PACK_ESTATE;
    return h5pack_abi_copy_out(info, &r->info, &h5pack_abi_info, r->err, ERR_LEN);
}

H5PACK_API int h5pack_image_shape(const h5pack_reader *r, uint64_t i, uint32_t *height, uint32_t *width)
{
    if (!r || !height || !width)
        return H5PACK_EINVAL;
    if (r->open_rc < 0 || (!r->src && !r->tiles))
        return H5PACK_ESTATE;
    if (i >= r->info.n_samples) {
        snprintf(r->err, ERR_LEN, "h5pack_image_shape: image %llu of %llu", (unsigned long long)i,
                 (unsigned long long)r->info.n_samples);
        return H5PACK_EINVAL;
    }
    if (r->tiles) {
        const tile_image *im = h5pack_tilesrc_image(r->tiles, i);
        *height = im->h, *width = im->w;
        return H5PACK_OK;
    }
    const source_geometry *g = h5pack_chunksrc_geometry(r->src);
    *height = g->height, *width = g->width;
    h5pack_chunksrc_image_size(r->src, i, height, width);
    return H5PACK_OK;
}

H5PACK_API void h5pack_close(h5pack_reader *r)
{
    if (!r)
        return;
    if (r->pid && getpid() != r->pid)
        return; /* a fork's copy: its threads are the parent's, not to be joined here; left to the exit */
    release_resources(r);
    free(r->images_name), free(r->labels_name);
    free(r->err);
    free(r);
}
