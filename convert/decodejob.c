/* decodejob.c - decode + fit + layout + per-channel sums of one image (worker thread side). */
#include "decodejob.h"

#include "layout.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void channel_sums(const uint8_t *hwc, size_t count, uint32_t channels, uint64_t sum[3], uint64_t sum_sq[3])
{
    for (uint32_t c = 0; c < channels; c++) {
        uint64_t s = 0, q = 0;
        for (size_t i = 0; i < count; i++) {
            uint32_t v = hwc[i * channels + c];
            s += v;
            q += v * v;
        }
        sum[c] = s;
        sum_sq[c] = q;
    }
}

/* The dataset's layout (CHW for nchw) and the per-channel sums, in one pass (layout.c). */
static void store_layout(const image_u8 *img, int nhwc, uint8_t *dst, uint64_t sum[3], uint64_t sum_sq[3])
{
    layout_store(img->pixels, (size_t)img->width * img->height, img->channels, nhwc, dst, sum, sum_sq);
}

static void fail_with(decoded_image *out, decode_outcome outcome, const char *category, const char *why)
{
    out->outcome = outcome;
    if (why && *why)
        snprintf(out->reason, sizeof out->reason, "%s: %s", category, why);
    else
        snprintf(out->reason, sizeof out->reason, "%s", category);
}

/* Loads and fits; on success *IMG holds the dataset-sized image. */
static int load_fitted(const decode_job_cfg *cfg, const char *path, image_u8 *img, decoded_image *out)
{
    char why[256] = "";
    image_u8 src = {0};
    image_status st = image_load(path, &cfg->opts, &src, why, sizeof why);
    if (st != IMAGE_OK) {
        fail_with(out, st == IMAGE_NOMEM ? DECODE_FAILED : DECODE_SKIP, image_status_text(st), why);
        return -1;
    }
    out->src_height = src.height, out->src_width = src.width;
    if (cfg->opts.target_h == 0) {
        *img = src;
        return 0;
    }
    st = image_fit(&src, cfg->height, cfg->width, cfg->opts.mode, img);
    image_free(&src);
    if (st != IMAGE_OK) {
        fail_with(out, DECODE_FAILED, image_status_text(st), "while resizing");
        return -1;
    }
    return 0;
}

static int check_shape(const decode_job_cfg *cfg, const image_u8 *img, decoded_image *out)
{
    char why[200];
    if (img->channels != cfg->channels) {
        snprintf(why, sizeof why, "decoder returned %u channels, expected %u", img->channels, cfg->channels);
        fail_with(out, DECODE_FAILED, "internal error", why);
        return -1;
    }
    if (img->height != cfg->height || img->width != cfg->width) {
        out->outcome = DECODE_SIZE_MISMATCH;
        out->src_height = img->height;
        out->src_width = img->width;
        snprintf(out->reason, sizeof out->reason, "size %ux%u differs from %ux%u", img->height, img->width,
                 cfg->height, cfg->width);
        return -1;
    }
    return 0;
}

void decode_entry(const decode_job_cfg *cfg, const char *relpath, decoded_image *out)
{
    image_u8 img = {0};
    size_t len = strlen(cfg->src_dir) + strlen(relpath) + 2;
    char *path = malloc(len);
    out->outcome = DECODE_OK;
    out->reason[0] = '\0';
    if (!path) {
        fail_with(out, DECODE_FAILED, "out of memory", NULL);
        return;
    }
    snprintf(path, len, "%s/%s", cfg->src_dir, relpath);
    if (load_fitted(cfg, path, &img, out) == 0 && check_shape(cfg, &img, out) == 0) {
        store_layout(&img, cfg->nhwc, out->pixels, out->sum, out->sum_sq);
    }
    image_free(&img);
    free(path);
}

void decode_entry_sized(const decode_job_cfg *cfg, const char *relpath, uint32_t h, uint32_t w, int resize,
                        decoded_image *out, size_t *cap)
{
    decode_job_cfg job = *cfg;
    job.height = h, job.width = w, job.nhwc = 1;
    job.opts.target_h = resize ? h : 0;
    job.opts.target_w = resize ? w : 0;
    job.opts.mode = RESIZE_STRETCH; /* the stored size keeps the aspect already: nothing to crop */
    size_t need = (size_t)h * w * job.channels;
    if (need > *cap) {
        uint8_t *grown = realloc(out->pixels, need);
        if (!grown) {
            fail_with(out, DECODE_FAILED, "out of memory", "for the image's pixels");
            return;
        }
        out->pixels = grown, *cap = need;
    }
    decode_entry(&job, relpath, out);
}

void decode_mismatch_reason(uint32_t h, uint32_t w, decoded_image *out)
{
    if (h == 0)
        snprintf(out->reason, sizeof out->reason, "corrupt image: its header gives no size, but it decodes to %ux%u",
                 out->src_height, out->src_width);
    else
        snprintf(out->reason, sizeof out->reason, "corrupt image: its header says %ux%u, but it decodes to %ux%u", h,
                 w, out->src_height, out->src_width);
}

void decode_size_mismatch_text(const decode_job_cfg *cfg, const char *name, const decoded_image *img, char *err,
                               size_t len)
{
    snprintf(err, len,
             "%s: image is %ux%u (HxW) but the first image is %ux%u: images of different sizes need "
             "--size HxW (e.g. --size %ux%u) to be packed together",
             name, img->src_height, img->src_width, cfg->height, cfg->width, cfg->height, cfg->width);
}
