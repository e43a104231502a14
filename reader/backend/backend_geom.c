/* backend_geom.c - what both backends share about a delivery's geometry: the plan parameters of the
 * resizing crops, the per-epoch output size (progressive resizing) and the boxes the consumer sees. */
#include <stddef.h>
#include <string.h>

#include "augment.h"
#include "augment_crops.h"
#include "backend.h"

_Static_assert(sizeof(backend_box) == sizeof(h5pack_crop_box) &&
                   offsetof(backend_box, flip) == offsetof(h5pack_crop_box, flip),
               "backend_box is handed out as h5pack_crop_box");

void h5pack_backend_crop_params(const backend_params *p, aug_crops_params *pp)
{
    pp->C = p->channels, pp->H = p->height, pp->W = p->width;
    pp->in_nhwc = p->in_layout == H5PACK_LAYOUT_NHWC;
    pp->out_nhwc = p->out_layout == H5PACK_LAYOUT_NHWC;
    pp->out_type = (int)p->dtype;
    for (int c = 0; c < 4; c++) { /* (v / 255 - mean) / std as one multiply-add */
        int used = c < (int)p->channels;
        pp->nscale[c] = used ? (float)(1.0 / (255.0 * (double)p->std[c])) : 0.0f;
        pp->nbias[c] = used ? (float)(-(double)p->mean[c] / (double)p->std[c]) : 0.0f;
    }
    pp->crop.mode = p->crop;
    pp->crop.scale_min = p->scale_min, pp->crop.scale_max = p->scale_max;
    pp->crop.ratio_min = p->ratio_min, pp->crop.ratio_max = p->ratio_max;
    pp->crop.center_ratio = p->center_ratio;
    pp->flip = p->random_flip;
}

void h5pack_backend_sizes_init(backend *b, const backend_params *p)
{
    pthread_mutex_init(&b->sizes.lock, NULL);
    int crop = p->crop != H5PACK_CROP_NONE;
    b->sizes.n = 1;
    b->sizes.h[0] = crop ? p->out_height : p->height;
    b->sizes.w[0] = crop ? p->out_width : p->width;
    b->sizes.from[0] = 0;
}

void h5pack_backend_sizes_destroy(backend *b)
{
    pthread_mutex_destroy(&b->sizes.lock);
}

void h5pack_backend_size_for(backend *b, uint64_t epoch, uint32_t *h, uint32_t *w)
{
    pthread_mutex_lock(&b->sizes.lock);
    int k = b->sizes.n - 1;
    while (k > 0 && b->sizes.from[k] > epoch)
        k--;
    *h = b->sizes.h[k], *w = b->sizes.w[k];
    pthread_mutex_unlock(&b->sizes.lock);
}

int h5pack_backend_set_output_size(backend *b, uint32_t h, uint32_t w, uint64_t from, const backend_params *p,
                                   char *err, size_t err_len)
{
    if (p->crop == H5PACK_CROP_NONE)
        return h5pack_errf(H5PACK_EINVAL, err, err_len,
                                    "the output size can only change with a resizing crop (crop is none)");
    const char *why = h5pack_backend_size_problem(p, h, w);
    if (why)
        return h5pack_errf(H5PACK_EINVAL, err, err_len, "output size %u x %u: %s (max %u x %u)", h, w, why,
                                    p->max_out_height, p->max_out_width);
    backend_sizes *s = &b->sizes;
    pthread_mutex_lock(&s->lock);
    while (s->n > 1 && s->from[s->n - 1] >= from) /* a later call overrides changes from its epoch on */
        s->n--;
    if (s->n == BACKEND_SIZE_CHANGES) { /* full: the oldest change becomes the base (long delivered) */
        memmove(s->h, s->h + 1, sizeof s->h[0] * (BACKEND_SIZE_CHANGES - 1));
        memmove(s->w, s->w + 1, sizeof s->w[0] * (BACKEND_SIZE_CHANGES - 1));
        memmove(s->from, s->from + 1, sizeof s->from[0] * (BACKEND_SIZE_CHANGES - 1));
        s->n--;
    }
    if (from == 0 && s->n == 1)
        s->h[0] = h, s->w[0] = w;
    else
        s->h[s->n] = h, s->w[s->n] = w, s->from[s->n] = from, s->n++;
    pthread_mutex_unlock(&s->lock);
    return H5PACK_OK;
}

void h5pack_backend_plain_boxes(const backend_params *p, uint64_t key, size_t count, backend_box *boxes)
{
    int raw = p->dtype == H5PACK_DTYPE_UINT8, pad = raw ? 0 : p->crop_padding;
    for (size_t i = 0; i < count; i++) {
        aug_draw d = aug_draw_for(key, i, !raw && p->random_flip, pad);
        backend_box b = {.y = d.oy - pad, .x = d.ox - pad, .height = (int32_t)p->height, .width = (int32_t)p->width,
                          .flip = d.flip};
        boxes[i] = b;
    }
}

void h5pack_backend_job_boxes(const aug_job *j, backend_box *boxes)
{
    for (uint32_t i = 0; i < j->count; i++) {
        const aug_image *im = &j->images[i];
        backend_box b = {.y = im->y, .x = im->x, .height = im->h, .width = im->w, .flip = im->flip};
        boxes[i] = b;
    }
}
