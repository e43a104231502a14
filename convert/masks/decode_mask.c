/* decode_mask.c - an image's mask beside its pixels (--masks; worker thread side): load, check the size
 * against the source image's, fit as the image was fitted, count the values. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decodejob.h"
#include "mask.h"

static void skip_with(decoded_image *out, const char *category, const char *path, const char *why)
{
    out->outcome = DECODE_SKIP;
    snprintf(out->reason, sizeof out->reason, "%s: %s: %s", category, path, why);
}

/* The fitted mask into OUT->mask, or the reason it is skipped. MASK is the decoded file (PATH). */
static void fit_mask(const decode_job_cfg *cfg, const char *path, const mask_image *mask, decoded_image *out)
{
    char why[160];
    if (mask->height != out->src_height || mask->width != out->src_width) {
        snprintf(why, sizeof why, "the mask is %ux%u (HxW), its image %ux%u", mask->height, mask->width,
                 out->src_height, out->src_width);
        skip_with(out, "mask size differs", path, why);
        return;
    }
    /* no --size: every mask is stored at its own (the image's) size; stretching to it is the identity */
    uint32_t h = cfg->opts.target_h ? cfg->height : mask->height, w = cfg->opts.target_h ? cfg->width : mask->width;
    resize_mode mode = cfg->opts.target_h ? cfg->opts.mode : RESIZE_STRETCH;
    if (mask_fit(mask, h, w, mode, cfg->mask_bytes, out->mask) != 0) {
        out->outcome = DECODE_FAILED;
        snprintf(out->reason, sizeof out->reason, "out of memory resizing the mask %s", path);
        return;
    }
    mask_values_clear(out->mask_seen);
    mask_values_add(out->mask_seen, out->mask, (size_t)h * w, cfg->mask_bytes);
}

void decode_mask_entry(const decode_job_cfg *cfg, const char *mask_relpath, decoded_image *out)
{
    size_t len = strlen(cfg->mask_dir) + strlen(mask_relpath) + 2;
    char *path = malloc(len), why[256] = "";
    mask_image mask = {0};
    if (!path) {
        out->outcome = DECODE_FAILED;
        snprintf(out->reason, sizeof out->reason, "out of memory");
        return;
    }
    snprintf(path, len, "%s/%s", cfg->mask_dir, mask_relpath);
    image_status st = mask_load(path, cfg->opts.max_pixels, &mask, why, sizeof why);
    if (st == IMAGE_NOMEM) {
        out->outcome = DECODE_FAILED;
        snprintf(out->reason, sizeof out->reason, "%s: %s", path, why);
    } else if (st != IMAGE_OK) {
        skip_with(out, "bad mask", path, why);
    } else {
        fit_mask(cfg, path, &mask, out);
    }
    mask_free(&mask);
    free(path);
}
