/* backend_common.c - what both backends share: output sizes, parameter checks and the per-channel value
 * table (the conversion built on it: backend_convert.c).
 *
 * Every output element is table[c][v] (or table[c][0] in the crop padding): the arithmetic happens
 * once, on the host, in float32, so the CPU and the CUDA backend give bit-identical results. */
#include <stdio.h>
#include <string.h>

#include "augment.h"
#include "augment_geom.h"
#include "backend.h"
#include "dtype.h"
#include "halfbits.h"

size_t h5pack_backend_image_bytes_at(const backend_params *p, uint32_t h, uint32_t w)
{
    return (size_t)p->channels * h * w * h5pack_dtype_bytes(p->dtype);
}

size_t h5pack_backend_output_image_bytes(const backend_params *p)
{
    if (p->crop != H5PACK_CROP_NONE)
        return h5pack_backend_image_bytes_at(p, p->max_out_height, p->max_out_width);
    return h5pack_backend_image_bytes_at(p, p->height, p->width);
}

/* ---- parameter checks ---------------------------------------------------------------------------- */

/* 1 when slots x batch x C x H x W x 4 bytes (stored or largest output size) does not fit in a size_t. */
static int ring_bytes_overflow(const backend_params *p)
{
    uint32_t sizes[2][2] = {{p->height, p->width}, {p->max_out_height, p->max_out_width}};
    for (int k = 0; k < (p->crop != H5PACK_CROP_NONE ? 2 : 1); k++) {
        size_t n = 4;
        size_t factors[5] = {p->channels, sizes[k][0], sizes[k][1], p->batch_size, (size_t)p->slots};
        for (int i = 0; i < 5; i++)
            if (__builtin_mul_overflow(n, factors[i], &n))
                return 1;
        if (n > SIZE_MAX / 4)
            return 1;
    }
    return 0;
}

/* The resizing crop's parameters, or NULL when they are usable. */
static const char *crop_problem(const backend_params *p)
{
    if (p->crop == H5PACK_CROP_NONE)
        return NULL;
    if (p->crop != H5PACK_CROP_RANDOM_RESIZED && p->crop != H5PACK_CROP_CENTER)
        return "unknown crop mode";
    if (p->out_height < 1 || p->out_width < 1 || p->out_height > p->max_out_height ||
        p->out_width > p->max_out_width)
        return "the output size must be at least 1 x 1 and at most the maximum output size";
    if (p->max_out_height > 65536 || p->max_out_width > 65536)
        return "the output size is limited to 65536 x 65536";
    if (!(p->scale_min > 0.0 && p->scale_min <= p->scale_max && p->scale_max < 1e9))
        return "scale must satisfy 0 < scale_min <= scale_max";
    if (!(p->ratio_min > 0.0 && p->ratio_min <= p->ratio_max && p->ratio_max < 1e9))
        return "ratio must satisfy 0 < ratio_min <= ratio_max";
    if (!(p->center_ratio > 0.0 && p->center_ratio <= 1.0))
        return "center_ratio must be in (0, 1]";
    return h5pack_backend_size_problem(p, p->out_height, p->out_width);
}

const char *h5pack_backend_size_problem(const backend_params *p, uint32_t h, uint32_t w)
{
    if (h < 1 || w < 1 || h > p->max_out_height || w > p->max_out_width)
        return "the output size must be at least 1 x 1 and at most the maximum output size set at open";
    /* One output row of one column must fit the kernel's shared memory: downscales up to ~300x. */
    if ((uint64_t)h5pack_aug_max_taps(p->height, h) * p->channels > AUG_MAX_SPAN_FLOATS)
        return "the output is too small for the stored height (a downscale over ~300x)";
    return NULL;
}

/* Rejects parameters the conversion cannot honour, with the reason in ERR (both backends call it;
 * declared where used, since backend.h is fixed). */
int h5pack_backend_check_params(const backend_params *p, char *err, size_t err_len)
{
    const char *why = NULL;
    if (p->channels < 1 || p->channels > H5PACK_MAX_CHANNELS)
        why = "channels must be 1..4";
    else if (p->height < 1 || p->width < 1)
        why = "image height and width must be at least 1";
    else if (p->batch_size < 1 || p->slots < 1)
        why = "batch size and ring slots must be at least 1";
    else if ((p->in_layout != H5PACK_LAYOUT_NCHW && p->in_layout != H5PACK_LAYOUT_NHWC) ||
             (p->out_layout != H5PACK_LAYOUT_NCHW && p->out_layout != H5PACK_LAYOUT_NHWC))
        why = "layouts must be NCHW or NHWC";
    else if (h5pack_dtype_bytes(p->dtype) == 0)
        why = "unknown output dtype";
    else if (p->crop_padding < 0)
        why = "crop padding must be >= 0";
    else if (p->crop != H5PACK_CROP_NONE && p->crop_padding > 0)
        why = "random_crop_padding cannot be combined with a resizing crop";
    else if (p->pool_batches < 0)
        why = "pool size must be >= 0";
    else
        why = crop_problem(p);
    for (uint32_t c = 0; !why && c < p->channels && p->dtype != H5PACK_DTYPE_UINT8; c++)
        if (!(p->std[c] != 0.0f) || p->std[c] != p->std[c] || p->mean[c] != p->mean[c])
            why = "std must be non-zero and mean/std finite numbers";
    if (!why && ring_bytes_overflow(p))
        why = "batch ring size overflows size_t";
    if (why) {
        snprintf(err, err_len, "backend: %s", why);
        return H5PACK_EINVAL;
    }
    return H5PACK_OK;
}

void h5pack_backend_build_table(const backend_params *p, float table_f32[H5PACK_MAX_CHANNELS][256],
                         uint16_t table_16[H5PACK_MAX_CHANNELS][256])
{
    for (uint32_t c = 0; c < H5PACK_MAX_CHANNELS; c++) {
        int used = c < p->channels;
        for (int v = 0; v < 256; v++) {
            float f = used ? ((float)v / 255.0f - p->mean[c]) / p->std[c] : 0.0f;
            if (table_f32)
                table_f32[c][v] = f;
            if (table_16)
                table_16[c][v] = p->dtype == H5PACK_DTYPE_BFLOAT16 ? h5pack_float_to_bfloat16_bits(f)
                                                                   : h5pack_float_to_half_bits(f);
        }
    }
}

void h5pack_backend_batch_labels(h5pack_batch *batch, int has_labels, uint32_t columns, int is_float)
{
    batch->label_columns = has_labels ? columns : 0;
    if (!has_labels) {
        batch->labels = NULL, batch->labels_device = NULL;
    } else if (is_float) {
        batch->labels_float = (const float *)(const void *)batch->labels;
        batch->labels_float_device = (const float *)(const void *)batch->labels_device;
        batch->labels = NULL, batch->labels_device = NULL;
    }
}
