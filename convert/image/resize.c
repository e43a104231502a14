/* resize.c - image_fit: crop / stretch / pad to H x W with an antialiased triangle filter.
 *
 * The filter behaves like PIL's Image.resize(..., BILINEAR): a separable triangle whose support grows
 * with the downscale factor, weights normalised per output pixel in 22-bit fixed point
 * (resize_coeffs.c), a horizontal pass over only the source rows the vertical pass needs (rounded and
 * clipped to uint8), then the vertical pass. Same arithmetic, so the result matches PIL's to the level.
 * Crop mode is PIL's "resize the whole image, then centre crop" computed only on the kept window
 * (resize_geometry.c). The passes: portable C (resize_scalar.c) or, on x86-64 CPUs with AVX2 (checked
 * at run time), AVX2 code (resize_avx2.c) with exactly the same bytes, about 3x faster (bench/resize).
 * Each thread keeps its last coefficient tables (resize_cache.c); one intermediate buffer per call. */
#include "resize_internal.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

static atomic_int chosen_path = RESIZE_PATH_AUTO; /* resize_set_path */

int resize_avx2_available(void)
{
#if defined(H5PACK_RESIZE_AVX2) && defined(__GNUC__)
    return __builtin_cpu_supports("avx2") != 0;
#else
    return 0;
#endif
}

int resize_set_path(resize_path path)
{
    if (path == RESIZE_PATH_AVX2 && !resize_avx2_available())
        return -1;
    atomic_store_explicit(&chosen_path, (int)path, memory_order_relaxed);
    return 0;
}

static int use_avx2(void)
{
    int p = atomic_load_explicit(&chosen_path, memory_order_relaxed);
    return p == RESIZE_PATH_AVX2 || (p == RESIZE_PATH_AUTO && resize_avx2_available());
}

/* The horizontal pass over source rows ROW0 .. ROW1-1 into TMP (row stride TMP_STRIDE, one spare byte). */
static void horizontal_pass(const image_u8 *src, int32_t row0, int32_t row1, const axis_coeffs *hx, uint8_t *tmp,
                            size_t tmp_stride, int avx2)
{
    uint32_t c = src->channels;
    size_t src_stride = (size_t)src->width * c;
    int32_t y = row0;
#ifdef H5PACK_RESIZE_AVX2
    /* On -1 (no memory for its bottom-rows copy) the rows from y on are done below: nothing is lost. */
    if (avx2 && (c == 3 || c == 1) && row1 - row0 >= 8)
        (void)resize_horizontal_pass_avx2(src, row0, row1, hx, tmp, tmp_stride, &y);
#else
    (void)avx2;
#endif
    for (; c == 3 && y + 1 < row1; y += 2)
        resize_horizontal_two_rows_rgb(src->pixels + (size_t)y * src_stride, src_stride,
                                       tmp + (size_t)(y - row0) * tmp_stride, tmp_stride, hx);
    for (; y < row1; y++)
        resize_horizontal_row(src->pixels + (size_t)y * src_stride, tmp + (size_t)(y - row0) * tmp_stride, c, hx);
}

/* Output row I of the vertical pass: a weighted sum of consecutive rows of TMP (LEN values each). */
static void vertical_row(const uint8_t *tmp, size_t tmp_stride, int32_t first_row, const axis_coeffs *ax,
                         uint32_t i, size_t len, uint8_t *dst, int avx2)
{
    const int32_t *k = ax->k + (size_t)i * ax->ksize;
    const uint8_t *rows = tmp + (size_t)(ax->first[i] - first_row) * tmp_stride;
#ifdef H5PACK_RESIZE_AVX2
    if (avx2) {
        resize_vertical_span_avx2(rows, tmp_stride, k, ax->pairs + (size_t)i * ax->ksize, ax->count[i], len, dst);
        return;
    }
#else
    (void)avx2;
#endif
    resize_vertical_span(rows, tmp_stride, k, ax->count[i], 0, len, dst);
}

/* Resizes SRC into the window G describes, written at (g->dy, g->dx) of DST (row stride DST_STRIDE). */
static image_status resample(const image_u8 *src, const fit_geometry *g, uint8_t *dst, size_t dst_stride)
{
    uint32_t c = src->channels;
    int avx2 = use_avx2();
    resize_tables t;
    if (resize_tables_get(&t, g, src->width, src->height, avx2 && c == 3, avx2) != 0)
        return IMAGE_NOMEM;
    const axis_coeffs *hx = t.h, *vy = t.v;
    /* Only the source rows the vertical pass reads go through the horizontal pass. */
    int32_t row0 = vy->first[0], row1 = vy->first[0] + vy->count[0];
    for (uint32_t i = 0; i < g->wh; i++) {
        row0 = vy->first[i] < row0 ? vy->first[i] : row0;
        row1 = vy->first[i] + vy->count[i] > row1 ? vy->first[i] + vy->count[i] : row1;
    }
    size_t len = (size_t)g->ww * c, tmp_stride = len + 1; /* + 1: the AVX2 pass stores 4 bytes per pixel */
    uint8_t *tmp = malloc(tmp_stride * (size_t)(row1 > row0 ? row1 - row0 : 1));
    if (!tmp) {
        resize_tables_release(&t);
        return IMAGE_NOMEM;
    }
    horizontal_pass(src, row0, row1, hx, tmp, tmp_stride, avx2);
    uint8_t *out = dst + (size_t)g->dy * dst_stride + (size_t)g->dx * c;
    for (uint32_t i = 0; i < g->wh; i++)
        vertical_row(tmp, tmp_stride, row0, vy, i, len, out + (size_t)i * dst_stride, avx2);
    free(tmp);
    resize_tables_release(&t);
    return IMAGE_OK;
}

/* Same size, no offset: the filter is the identity, so copy (PIL skips such passes too). */
static int is_identity(const image_u8 *src, const fit_geometry *g)
{
    return g->rh == src->height && g->rw == src->width && g->wh == src->height && g->ww == src->width;
}

image_status image_fit(const image_u8 *src, uint32_t h, uint32_t w, resize_mode mode, image_u8 *dst)
{
    memset(dst, 0, sizeof *dst);
    if (!src || !src->pixels || !src->width || !src->height || !src->channels || !h || !w)
        return IMAGE_UNSUPPORTED; /* invalid arguments */
    fit_geometry g;
    image_fit_geometry(src->height, src->width, h, w, mode, &g);
    size_t stride = (size_t)w * src->channels;
    /* Zeroed only when the window leaves padding (pad mode): crop and stretch write every byte. */
    int covers_all = g.wh == h && g.ww == w;
    uint8_t *pixels = covers_all ? malloc((size_t)h * stride) : calloc((size_t)h * stride, 1);
    if (!pixels)
        return IMAGE_NOMEM;
    if (is_identity(src, &g)) {
        for (uint32_t y = 0; y < g.wh; y++)
            memcpy(pixels + (size_t)(g.dy + y) * stride + (size_t)g.dx * src->channels,
                   src->pixels + (size_t)y * src->width * src->channels, (size_t)g.ww * src->channels);
    } else if (resample(src, &g, pixels, stride) != IMAGE_OK) {
        free(pixels);
        return IMAGE_NOMEM;
    }
    dst->pixels = pixels;
    dst->width = w;
    dst->height = h;
    dst->channels = src->channels;
    return IMAGE_OK;
}
