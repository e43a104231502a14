/* augment_crops.c - a delivery's resampling job on the host; see augment_crops.h. */
#include "augment_crops.h"

#include <string.h>

#define BLOB_ALIGN 16

static size_t align_up(size_t n)
{
    return (n + BLOB_ALIGN - 1) / BLOB_ALIGN * BLOB_ALIGN;
}

/* Offsets of the blob's arrays (images, ry, wy, rx, wx) and its total size. */
typedef struct blob_layout {
    size_t images, ry, wy, rx, wx, total;
    uint32_t ky, kx;
} blob_layout;

static blob_layout layout_of(const aug_crops_params *pp, size_t count, uint32_t oh, uint32_t ow)
{
    blob_layout l;
    /* A box is never larger than the stored image: its taps are bounded by those of the whole image. */
    l.ky = h5pack_aug_max_taps(pp->H, oh), l.kx = h5pack_aug_max_taps(pp->W, ow);
    l.images = 0;
    l.ry = align_up(count * sizeof(aug_image));
    l.wy = l.ry + align_up(count * oh * 2 * sizeof(int32_t));
    l.rx = l.wy + align_up(count * oh * l.ky * sizeof(float));
    l.wx = l.rx + align_up(count * ow * 2 * sizeof(int32_t));
    l.total = l.wx + align_up(count * ow * l.kx * sizeof(float));
    return l;
}

size_t h5pack_aug_blob_bytes(const aug_crops_params *pp, size_t count, uint32_t oh, uint32_t ow)
{
    return layout_of(pp, count, oh, ow).total;
}

/* Words per image of one axis, o * (2 + taps(in, o)), bounded over 1 <= o <= max_o: with
 * taps = 2 * ceil(max(1, in / o)) + 1 <= 2 * in / o + 5 it is at most 7 * max_o + 2 * in. */
static size_t axis_words_bound(uint32_t in, uint32_t max_o)
{
    return 7 * (size_t)max_o + 2 * (size_t)in;
}

size_t h5pack_aug_blob_capacity(const aug_crops_params *pp, size_t count, uint32_t max_h, uint32_t max_w)
{
    size_t words = axis_words_bound(pp->H, max_h) + axis_words_bound(pp->W, max_w);
    return count * (sizeof(aug_image) + 4 * words) + 5 * BLOB_ALIGN;
}

/* The box of an H x W source. */
static aug_box draw_box(const aug_crops_params *pp, uint64_t h, uint32_t H, uint32_t W, uint32_t oh, uint32_t ow)
{
    if (pp->crop.mode == H5PACK_CROP_CENTER)
        return h5pack_aug_center_box(H, W, oh, ow, pp->crop.center_ratio);
    rng_state r = {h ^ AUG_CROP_STREAM};
    return h5pack_aug_rrc_box(H, W, &pp->crop, &r);
}

void h5pack_aug_crops(const aug_crops_params *pp, uint64_t key, size_t count, uint32_t oh, uint32_t ow,
                     const uint64_t *src, void *blob, aug_job *job)
{
    h5pack_aug_crops_sized(pp, key, count, oh, ow, src, NULL, blob, job);
}

/* The taps of one axis of a delivery: per image, OUT (first, count) pairs and OUT * K weights. */
typedef struct axis_taps {
    int32_t *pairs;
    float *w;
    uint32_t out, k;
} axis_taps;

static axis_taps axis_of(const aug_job *job, int y_axis)
{
    /* the job points into its planner's blob, which is writable (h5pack_aug_crop_boxes) */
    axis_taps a = {(int32_t *)(uintptr_t)(y_axis ? job->ry : job->rx), (float *)(uintptr_t)(y_axis ? job->wy : job->wx),
                   y_axis ? job->out_h : job->out_w, y_axis ? job->ky : job->kx};
    return a;
}

/* Image I's taps on axis A are image J's, with the first source index moved by SHIFT: the weights of an
 * axis depend only on the box's length there (its offset is added to the first index), so images whose
 * boxes share a length share them. Copying is exact, and much cheaper than PIL's coefficients. */
static void copy_taps(const axis_taps *a, size_t i, size_t j, int32_t shift)
{
    h5pack_aug_shift_taps(a->pairs + j * a->out * 2, a->w + j * a->out * a->k, a->pairs + i * a->out * 2,
                          a->w + i * a->out * a->k, a->out, a->k, shift);
}

/* A random resized crop's taps of image I on axis A (Y_AXIS: rows, else columns), for the box in
 * IMAGES[I]: from KEPT (NULL: none) when it has the box's length, else copied from an image planned
 * earlier through the same memo with a box of the same length there, else computed (and then kept).
 * SEEN: per length modulo AUG_LEN_MEMO, the last image with it + 1 (0: none). */
static void rrc_axis_taps(const axis_taps *a, size_t i, const aug_image *images, int y_axis, uint32_t *seen,
                          aug_kept_taps *kept)
{
    int32_t length = y_axis ? images[i].h : images[i].w, offset = y_axis ? images[i].y : images[i].x;
    int32_t *pairs = a->pairs + i * a->out * 2;
    float *w = a->w + i * a->out * a->k;
    if (kept && h5pack_kept_taps_get(kept, (uint32_t)length, (uint32_t)offset, pairs, w))
        return;
    uint32_t at = (uint32_t)length % AUG_LEN_MEMO;
    size_t j = seen[at] ? seen[at] - 1 : i;
    if (j != i && (y_axis ? images[j].h : images[j].w) == length)
        copy_taps(a, i, j, offset - (y_axis ? images[j].y : images[j].x));
    else
        h5pack_aug_axis_coeffs((uint32_t)length, (uint32_t)offset, a->out, a->k, pairs, w);
    seen[at] = (uint32_t)i + 1;
    if (kept)
        h5pack_kept_taps_put(kept, (uint32_t)length, (uint32_t)offset, pairs, w);
}

void h5pack_aug_crop_boxes(const aug_crops_params *pp, uint64_t key, size_t count, uint32_t oh, uint32_t ow,
                           const uint64_t *src, const uint32_t *dims, void *blob, aug_job *job)
{
    blob_layout l = layout_of(pp, count, oh, ow);
    uint8_t *base = blob;
    aug_image *images = (aug_image *)(base + l.images);
    for (size_t i = 0; i < count; i++) {
        uint64_t h = rng_mix64(key + i * 0x9E3779B97F4A7C15ull); /* as augment.h's aug_draw_for */
        uint32_t H = dims ? dims[2 * i] : pp->H, W = dims ? dims[2 * i + 1] : pp->W;
        aug_box b = draw_box(pp, h, H, W, oh, ow);
        aug_image *im = &images[i];
        im->src = src[i];
        im->y = b.y, im->x = b.x, im->h = b.h, im->w = b.w;
        im->flip = pp->flip ? (int32_t)(h & 1) : 0;
        im->src_h = dims ? (int32_t)H : 0, im->src_w = dims ? (int32_t)W : 0;
        im->reserved = 0;
    }
    job->count = (uint32_t)count;
    job->C = pp->C, job->H = pp->H, job->W = pp->W;
    job->out_h = oh, job->out_w = ow, job->ky = l.ky, job->kx = l.kx;
    job->in_nhwc = pp->in_nhwc, job->out_nhwc = pp->out_nhwc, job->out_type = pp->out_type;
    for (int c = 0; c < 4; c++)
        job->nscale[c] = pp->nscale[c], job->nbias[c] = pp->nbias[c];
    job->images = images;
    job->ry = (int32_t *)(base + l.ry), job->wy = (float *)(base + l.wy);
    job->rx = (int32_t *)(base + l.rx), job->wx = (float *)(base + l.wx);
    job->out = NULL;
}

void h5pack_aug_tap_memo_init(aug_tap_memo *memo, int keeps)
{
    memset(memo, 0, sizeof *memo);
    memo->keeps = keeps;
}

void h5pack_aug_tap_memo_new_job(aug_tap_memo *memo)
{
    memset(memo->seen_h, 0, sizeof memo->seen_h), memset(memo->seen_w, 0, sizeof memo->seen_w);
    memo->last_center = 0;
}

void h5pack_aug_tap_memo_free(aug_tap_memo *memo)
{
    h5pack_kept_taps_free(&memo->kept[0]), h5pack_kept_taps_free(&memo->kept[1]);
}

void h5pack_aug_crop_taps(const aug_crops_params *pp, const aug_job *job, size_t i, aug_tap_memo *memo)
{
    axis_taps ya = axis_of(job, 1), xa = axis_of(job, 0);
    const aug_image *im = &job->images[i];
    if (pp->crop.mode == H5PACK_CROP_CENTER) {
        size_t j = memo->last_center ? memo->last_center - 1 : i;
        memo->last_center = (uint32_t)i + 1;
        if (j != i && job->images[j].src_h == im->src_h && job->images[j].src_w == im->src_w) {
            copy_taps(&ya, i, j, 0), copy_taps(&xa, i, j, 0); /* the same stored size: the same taps */
            return;
        }
        /* torchvision's resize of the whole image, then the crop */
        uint32_t H = im->src_h ? (uint32_t)im->src_h : job->H, W = im->src_w ? (uint32_t)im->src_w : job->W;
        aug_center c = h5pack_aug_center(H, W, job->out_h, job->out_w, pp->crop.center_ratio);
        h5pack_aug_axis_coeffs_resized(H, c.rh, c.oy, job->out_h, job->ky, ya.pairs + i * ya.out * 2,
                                       ya.w + i * ya.out * ya.k);
        h5pack_aug_axis_coeffs_resized(W, c.rw, c.ox, job->out_w, job->kx, xa.pairs + i * xa.out * 2,
                                       xa.w + i * xa.out * xa.k);
        return;
    }
    /* torchvision's resized_crop: the box is the image the resize sees */
    aug_kept_taps *ky = NULL, *kx = NULL;
    if (memo->keeps) { /* a memo without memory for them keeps nothing */
        ky = h5pack_kept_taps_shape(&memo->kept[0], job->out_h, job->ky, job->H) == 0 ? &memo->kept[0] : NULL;
        if (job->out_w == job->out_h && job->kx == job->ky && job->W == job->H)
            kx = ky; /* both axes the same shape: the same taps per length, one table */
        else
            kx = h5pack_kept_taps_shape(&memo->kept[1], job->out_w, job->kx, job->W) == 0 ? &memo->kept[1] : NULL;
    }
    rrc_axis_taps(&ya, i, job->images, 1, memo->seen_h, ky);
    rrc_axis_taps(&xa, i, job->images, 0, memo->seen_w, kx);
}

void h5pack_aug_crops_sized(const aug_crops_params *pp, uint64_t key, size_t count, uint32_t oh, uint32_t ow,
                           const uint64_t *src, const uint32_t *dims, void *blob, aug_job *job)
{
    h5pack_aug_crop_boxes(pp, key, count, oh, ow, src, dims, blob, job);
    aug_tap_memo memo;
    h5pack_aug_tap_memo_init(&memo, 0);
    for (size_t i = 0; i < count; i++)
        h5pack_aug_crop_taps(pp, job, i, &memo);
}

aug_job h5pack_aug_job_moved(const aug_job *job, const void *host_blob, uint64_t device_blob)
{
    aug_job d = *job;
    const uint8_t *h = host_blob;
#define MOVED(ptr) (void *)(uintptr_t)(device_blob + (uint64_t)((const uint8_t *)(ptr) - h))
    d.images = MOVED(job->images);
    d.ry = MOVED(job->ry), d.wy = MOVED(job->wy), d.rx = MOVED(job->rx), d.wx = MOVED(job->wx);
#undef MOVED
    return d;
}
