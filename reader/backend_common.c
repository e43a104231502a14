/* backend_common.c - what both backends share: output sizes, the per-channel value table and the
 * reference conversion (uint8 batch -> normalised, optionally augmented, output in any layout).
 *
 * Every output element is table[c][v] (or table[c][0] in the crop padding): the arithmetic happens
 * once, on the host, in float32, so the CPU and the CUDA backend give bit-identical results. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "augment.h"
#include "augment_geom.h"
#include "backend.h"
#include "halfbits.h"

static size_t dtype_bytes(h5pack_dtype dtype)
{
    switch (dtype) {
    case H5PACK_DTYPE_FLOAT32: return 4;
    case H5PACK_DTYPE_FLOAT16:
    case H5PACK_DTYPE_BFLOAT16: return 2;
    default: return 1;
    }
}

size_t h5pack_backend_image_bytes_at(const backend_params *p, uint32_t h, uint32_t w)
{
    return (size_t)p->channels * h * w * dtype_bytes(p->dtype);
}

size_t h5pack_backend_output_image_bytes(const backend_params *p)
{
    if (p->crop != AUG_CROP_NONE)
        return h5pack_backend_image_bytes_at(p, p->max_out_height, p->max_out_width);
    return h5pack_backend_image_bytes_at(p, p->height, p->width);
}

int h5pack_backend_error(int rc, char *err, size_t err_len, const char *fmt, ...)
{
    if (err && err_len) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, err_len, fmt, ap);
        va_end(ap);
    }
    return rc;
}

/* ---- parameter checks ---------------------------------------------------------------------------- */

/* 1 when slots x batch x C x H x W x 4 bytes (stored or largest output size) does not fit in a size_t. */
static int ring_bytes_overflow(const backend_params *p)
{
    uint32_t sizes[2][2] = {{p->height, p->width}, {p->max_out_height, p->max_out_width}};
    for (int k = 0; k < (p->crop != AUG_CROP_NONE ? 2 : 1); k++) {
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
    if (p->crop == AUG_CROP_NONE)
        return NULL;
    if (p->crop != AUG_CROP_RANDOM_RESIZED && p->crop != AUG_CROP_CENTER)
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
    else if ((unsigned)p->dtype > H5PACK_DTYPE_UINT8)
        why = "unknown output dtype";
    else if (p->crop_padding < 0)
        why = "crop padding must be >= 0";
    else if (p->crop != AUG_CROP_NONE && p->crop_padding > 0)
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

/* ---- the reference conversion ------------------------------------------------------------------- */

/* Element strides of one image in a layout: x step, channel step, row step. */
typedef struct strides {
    ptrdiff_t x, c, y;
} strides;

static strides layout_strides(h5pack_layout layout, size_t C, size_t H, size_t W)
{
    strides s;
    if (layout == H5PACK_LAYOUT_NHWC) {
        s.x = (ptrdiff_t)C, s.c = 1, s.y = (ptrdiff_t)(W * C);
    } else {
        s.x = 1, s.c = (ptrdiff_t)(H * W), s.y = (ptrdiff_t)W;
    }
    return s;
}

/* One image's geometry and augmentation, for the per-type loops below. */
typedef struct image_job {
    size_t C, H, W;
    strides in, out;
    int same_layout;
    aug_draw draw;
    int pad;
    int augmented; /* flip or crop active for this image */
} image_job;

/* The conversion loops, instantiated for 32-bit (float32 bit patterns), 16-bit and 8-bit elements.
 *   whole_: no augmentation and the same layout: one table lookup per byte over the whole image.
 *   fill_:  a run of output pixels in the padding.
 *   run_:   N output pixels whose sources are consecutive columns (step +1, or -1 when flipped). */
#define DEFINE_CONVERT(T)                                                                             \
    static void whole_##T(const image_job *j, const T (*tab)[256], const uint8_t *in, T *out)         \
    {                                                                                                 \
        size_t plane = j->H * j->W;                                                                   \
        if (j->in.c != 1) { /* NCHW: each channel plane is one contiguous run */                    \
            for (size_t c = 0; c < j->C; c++) {                                                       \
                const T *t = tab[c];                                                                  \
                const uint8_t *s = in + c * plane;                                                    \
                T *d = out + c * plane;                                                               \
                for (size_t k = 0; k < plane; k++)                                                    \
                    d[k] = t[s[k]];                                                                   \
            }                                                                                         \
        } else if (j->C == 3) {                                                                       \
            for (size_t k = 0; k < plane; k++) {                                                      \
                out[3 * k] = tab[0][in[3 * k]];                                                       \
                out[3 * k + 1] = tab[1][in[3 * k + 1]];                                               \
                out[3 * k + 2] = tab[2][in[3 * k + 2]];                                               \
            }                                                                                         \
        } else {                                                                                      \
            for (size_t k = 0; k < plane; k++)                                                        \
                for (size_t c = 0; c < j->C; c++)                                                     \
                    out[k * j->C + c] = tab[c][in[k * j->C + c]];                                     \
        }                                                                                             \
    }                                                                                                 \
    static void fill_##T(const image_job *j, const T (*tab)[256], T *out, size_t n)                   \
    {                                                                                                 \
        for (size_t c = 0; c < j->C; c++)                                                             \
            for (size_t k = 0; k < n; k++)                                                            \
                out[(ptrdiff_t)c * j->out.c + (ptrdiff_t)k * j->out.x] = tab[c][0];                   \
    }                                                                                                 \
    static void run_##T(const image_job *j, const T (*tab)[256], const uint8_t *in, ptrdiff_t step,   \
                        T *out, size_t n)                                                             \
    {                                                                                                 \
        ptrdiff_t is = step * j->in.x, os = j->out.x;                                                 \
        if (j->C == 3 && is != 1) { /* RGB from NHWC or flipped: one pass, three output streams */    \
            ptrdiff_t ic = j->in.c;                                                                   \
            T *d0 = out, *d1 = out + j->out.c, *d2 = out + 2 * j->out.c;                              \
            for (size_t k = 0; k < n; k++) {                                                          \
                const uint8_t *px = in + (ptrdiff_t)k * is;                                           \
                d0[(ptrdiff_t)k * os] = tab[0][px[0]];                                                \
                d1[(ptrdiff_t)k * os] = tab[1][px[ic]];                                               \
                d2[(ptrdiff_t)k * os] = tab[2][px[2 * ic]];                                           \
            }                                                                                         \
            return;                                                                                   \
        }                                                                                             \
        for (size_t c = 0; c < j->C; c++) {                                                           \
            const T *t = tab[c];                                                                      \
            const uint8_t *s = in + (ptrdiff_t)c * j->in.c;                                           \
            T *d = out + (ptrdiff_t)c * j->out.c;                                                     \
            if (is == 1 && os == 1) {                                                                 \
                for (size_t k = 0; k < n; k++)                                                        \
                    d[k] = t[s[k]];                                                                   \
            } else {                                                                                  \
                for (size_t k = 0; k < n; k++)                                                        \
                    d[(ptrdiff_t)k * os] = t[s[(ptrdiff_t)k * is]];                                   \
            }                                                                                         \
        }                                                                                             \
    }                                                                                                 \
    static void row_##T(const image_job *j, const T (*tab)[256], const uint8_t *in, T *out, int y)    \
    {                                                                                                 \
        T *orow = out + (ptrdiff_t)y * j->out.y;                                                      \
        int sy = aug_src_y(j->draw, y, j->pad), W = (int)j->W;                                        \
        if (sy < 0 || sy >= (int)j->H) {                                                              \
            fill_##T(j, tab, orow, j->W);                                                             \
            return;                                                                                   \
        }                                                                                             \
        /* Output columns [x0, x1) have their source inside the image; the rest is padding. */        \
        int shift = j->draw.ox - j->pad;                                                              \
        int x0 = j->draw.flip ? shift : -shift, x1 = j->draw.flip ? W + shift : W - shift;            \
        x0 = x0 < 0 ? 0 : (x0 > W ? W : x0);                                                          \
        x1 = x1 > W ? W : (x1 < x0 ? x0 : x1);                                                        \
        fill_##T(j, tab, orow, (size_t)x0);                                                           \
        if (x1 > x0) {                                                                                \
            int sx0 = aug_src_x(j->draw, x0, W, j->pad);                                              \
            const uint8_t *src = in + (ptrdiff_t)sy * j->in.y + (ptrdiff_t)sx0 * j->in.x;             \
            run_##T(j, tab, src, j->draw.flip ? -1 : 1, orow + (ptrdiff_t)x0 * j->out.x,              \
                    (size_t)(x1 - x0));                                                               \
        }                                                                                             \
        fill_##T(j, tab, orow + (ptrdiff_t)x1 * j->out.x, (size_t)(W - x1));                          \
    }                                                                                                 \
    static void image_##T(const image_job *j, const T (*tab)[256], const uint8_t *in, T *out)         \
    {                                                                                                 \
        if (!j->augmented && j->same_layout) {                                                        \
            whole_##T(j, tab, in, out);                                                               \
            return;                                                                                   \
        }                                                                                             \
        for (int y = 0; y < (int)j->H; y++)                                                           \
            row_##T(j, tab, in, out, y);                                                              \
    }

DEFINE_CONVERT(uint32_t)
DEFINE_CONVERT(uint16_t)
DEFINE_CONVERT(uint8_t)

/* The tables of every element type, built once per call (a few microseconds). */
typedef struct conv_tables {
    uint32_t t32[H5PACK_MAX_CHANNELS][256];
    uint16_t t16[H5PACK_MAX_CHANNELS][256];
    uint8_t t8[H5PACK_MAX_CHANNELS][256];
} conv_tables;

static void build_tables(const backend_params *p, conv_tables *t)
{
    if (p->dtype == H5PACK_DTYPE_UINT8) {
        for (int c = 0; c < H5PACK_MAX_CHANNELS; c++)
            for (int v = 0; v < 256; v++)
                t->t8[c][v] = (uint8_t)v;
        return;
    }
    float f32[H5PACK_MAX_CHANNELS][256];
    h5pack_backend_build_table(p, f32, t->t16);
    memcpy(t->t32, f32, sizeof f32);
}

void h5pack_backend_convert_ref(const backend_params *p, const uint8_t *in, const uint8_t *const *srcs, void *out,
                                size_t first, size_t n, uint64_t key)
{
    conv_tables tabs;
    build_tables(p, &tabs);
    image_job j;
    j.C = p->channels, j.H = p->height, j.W = p->width;
    j.in = layout_strides(p->in_layout, j.C, j.H, j.W);
    j.out = layout_strides(p->out_layout, j.C, j.H, j.W);
    j.same_layout = p->in_layout == p->out_layout;
    /* uint8 output is the raw batch: no normalisation and no augmentation (see h5pack.h). */
    int raw = p->dtype == H5PACK_DTYPE_UINT8;
    j.pad = raw || p->crop_padding < 0 ? 0 : p->crop_padding;
    int flip = !raw && p->random_flip;
    size_t in_bytes = j.C * j.H * j.W, out_bytes = h5pack_backend_output_image_bytes(p);
    for (size_t i = first; i < first + n; i++) {
        j.draw = aug_draw_for(key, i, flip, j.pad);
        j.augmented = j.draw.flip || j.pad > 0;
        const uint8_t *src = srcs ? srcs[i] : in + i * in_bytes;
        void *dst = (uint8_t *)out + i * out_bytes;
        if (raw && j.same_layout)
            memcpy(dst, src, in_bytes);
        else if (p->dtype == H5PACK_DTYPE_FLOAT32)
            image_uint32_t(&j, (const uint32_t(*)[256])tabs.t32, src, dst);
        else if (raw)
            image_uint8_t(&j, (const uint8_t(*)[256])tabs.t8, src, dst);
        else
            image_uint16_t(&j, (const uint16_t(*)[256])tabs.t16, src, dst);
    }
}
