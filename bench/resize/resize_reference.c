/* resize_reference.c - the image_fit of commit c438ec8 (before the speed-up), kept verbatim apart from
 * its name: bench_resize --check compares the library's image_fit with it pixel for pixel. */
#include "image_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

image_status reference_image_fit(const image_u8 *src, uint32_t h, uint32_t w, resize_mode mode, image_u8 *dst);

#define FIX_BITS 22 /* as PIL: 32 - 8 (pixel) - 2 (headroom) */
#define FIX_HALF (1 << (FIX_BITS - 1))

/* Weights of one axis: output pixel i reads first[i] .. first[i] + count[i] - 1 with weights k[i*ksize..]. */
typedef struct axis_coeffs {
    uint32_t out, ksize;
    int32_t *first, *count;
    int32_t *k;
} axis_coeffs;

static double triangle(double x)
{
    if (x < 0.0)
        x = -x;
    return x < 1.0 ? 1.0 - x : 0.0;
}

/* Coefficients for resizing IN pixels to RESIZED pixels, kept only for outputs OFFSET .. OFFSET+OUT-1. */
static int axis_init(axis_coeffs *ax, uint32_t in, uint32_t resized, uint32_t offset, uint32_t out)
{
    double scale = (double)in / (double)resized;
    double filterscale = scale < 1.0 ? 1.0 : scale;
    double support = 1.0 * filterscale;
    ax->out = out;
    ax->ksize = (uint32_t)ceil(support) * 2 + 1;
    ax->first = malloc(sizeof(int32_t) * out);
    ax->count = malloc(sizeof(int32_t) * out);
    ax->k = calloc((size_t)out * ax->ksize, sizeof(int32_t));
    double *w = malloc(sizeof(double) * ax->ksize);
    if (!ax->first || !ax->count || !ax->k || !w) {
        free(w);
        return -1;
    }
    for (uint32_t i = 0; i < out; i++) {
        double center = ((double)(i + offset) + 0.5) * scale;
        int lo = (int)(center - support + 0.5), hi = (int)(center + support + 0.5);
        lo = lo < 0 ? 0 : lo;
        hi = hi > (int)in ? (int)in : hi;
        double sum = 0.0;
        for (int x = 0; x < hi - lo; x++)
            sum += w[x] = triangle(((double)(x + lo) - center + 0.5) / filterscale);
        for (int x = 0; x < hi - lo; x++) {
            double v = sum != 0.0 ? w[x] / sum : w[x];
            ax->k[(size_t)i * ax->ksize + x] = (int32_t)(v < 0 ? trunc(-0.5 + v * (1 << FIX_BITS))
                                                               : trunc(0.5 + v * (1 << FIX_BITS)));
        }
        ax->first[i] = lo;
        ax->count[i] = hi - lo;
    }
    free(w);
    return 0;
}

static void axis_free(axis_coeffs *ax)
{
    free(ax->first);
    free(ax->count);
    free(ax->k);
}

static uint8_t clip_fixed(int32_t acc)
{
    acc >>= FIX_BITS;
    return (uint8_t)(acc < 0 ? 0 : acc > 255 ? 255 : acc);
}

/* One row through the horizontal weights (C channels interleaved). */
static void horizontal_row(const uint8_t *src, uint8_t *dst, uint32_t c, const axis_coeffs *ax)
{
    for (uint32_t i = 0; i < ax->out; i++) {
        const int32_t *k = ax->k + (size_t)i * ax->ksize;
        const uint8_t *p = src + (size_t)ax->first[i] * c;
        int32_t n = ax->count[i];
        if (c == 3) {
            int32_t a0 = FIX_HALF, a1 = FIX_HALF, a2 = FIX_HALF;
            for (int32_t j = 0; j < n; j++, p += 3) {
                a0 += p[0] * k[j];
                a1 += p[1] * k[j];
                a2 += p[2] * k[j];
            }
            dst[3 * i] = clip_fixed(a0);
            dst[3 * i + 1] = clip_fixed(a1);
            dst[3 * i + 2] = clip_fixed(a2);
        } else {
            for (uint32_t ch = 0; ch < c; ch++) {
                int32_t a = FIX_HALF;
                for (int32_t j = 0; j < n; j++)
                    a += p[(size_t)j * c + ch] * k[j];
                dst[(size_t)i * c + ch] = clip_fixed(a);
            }
        }
    }
}

/* Two RGB rows at once: the weights and bounds are loaded once for both (the pass is load-bound). */
static void horizontal_two_rows_rgb(const uint8_t *src, size_t src_stride, uint8_t *dst, size_t dst_stride,
                                    const axis_coeffs *ax)
{
    for (uint32_t i = 0; i < ax->out; i++) {
        const int32_t *k = ax->k + (size_t)i * ax->ksize;
        const uint8_t *p = src + (size_t)ax->first[i] * 3, *q = p + src_stride;
        int32_t n = ax->count[i];
        int32_t a0 = FIX_HALF, a1 = FIX_HALF, a2 = FIX_HALF, b0 = FIX_HALF, b1 = FIX_HALF, b2 = FIX_HALF;
        for (int32_t j = 0; j < n; j++, p += 3, q += 3) {
            int32_t kj = k[j];
            a0 += p[0] * kj;
            a1 += p[1] * kj;
            a2 += p[2] * kj;
            b0 += q[0] * kj;
            b1 += q[1] * kj;
            b2 += q[2] * kj;
        }
        uint8_t *d = dst + 3 * (size_t)i, *e = d + dst_stride;
        d[0] = clip_fixed(a0);
        d[1] = clip_fixed(a1);
        d[2] = clip_fixed(a2);
        e[0] = clip_fixed(b0);
        e[1] = clip_fixed(b1);
        e[2] = clip_fixed(b2);
    }
}

/* ACC[x] += ROW[x] * K over LEN values (restrict: lets the compiler vectorise). Baseline x86-64 (SSE2)
 * has no 32-bit vector multiply, so an AVX2 version is also built and picked when the program loads. */
#if defined(__x86_64__) && defined(__GNUC__) && (!defined(__clang__) || __clang_major__ >= 14)
__attribute__((target_clones("avx2", "default")))
#endif
static void accumulate_row(int32_t *restrict acc, const uint8_t *restrict row, int32_t k, size_t len)
{
    for (size_t x = 0; x < len; x++)
        acc[x] += (int32_t)row[x] * k;
}

static void store_row(uint8_t *restrict dst, const int32_t *restrict acc, size_t len)
{
    for (size_t x = 0; x < len; x++) {
        int32_t v = acc[x] >> FIX_BITS;
        v = v < 0 ? 0 : v;
        dst[x] = (uint8_t)(v > 255 ? 255 : v);
    }
}

/* Output row I of the vertical pass: a weighted sum of whole rows of TMP (ACC: LEN scratch ints). */
static void vertical_row(const uint8_t *tmp, size_t tmp_stride, int32_t first_row, const axis_coeffs *ax,
                         uint32_t i, int32_t *acc, size_t len, uint8_t *dst)
{
    const int32_t *k = ax->k + (size_t)i * ax->ksize;
    for (size_t x = 0; x < len; x++)
        acc[x] = FIX_HALF;
    for (int32_t j = 0; j < ax->count[i]; j++)
        accumulate_row(acc, tmp + (size_t)(ax->first[i] - first_row + j) * tmp_stride, k[j], len);
    store_row(dst, acc, len);
}

/* Resizes SRC into the window G describes, written at (g->dy, g->dx) of DST (row stride DST_STRIDE). */
static image_status resample(const image_u8 *src, const fit_geometry *g, uint8_t *dst, size_t dst_stride)
{
    image_status st = IMAGE_NOMEM;
    uint32_t c = src->channels;
    axis_coeffs hx = {0}, vy = {0};
    uint8_t *tmp = NULL;
    int32_t *acc = NULL;
    if (axis_init(&hx, src->width, g->rw, g->ox, g->ww) != 0 || axis_init(&vy, src->height, g->rh, g->oy, g->wh) != 0)
        goto fail;
    /* Only the source rows the vertical pass reads go through the horizontal pass. */
    int32_t row0 = vy.first[0], row1 = vy.first[g->wh - 1] + vy.count[g->wh - 1];
    for (uint32_t i = 0; i < g->wh; i++) {
        row0 = vy.first[i] < row0 ? vy.first[i] : row0;
        row1 = vy.first[i] + vy.count[i] > row1 ? vy.first[i] + vy.count[i] : row1;
    }
    size_t tmp_stride = (size_t)g->ww * c, src_stride = (size_t)src->width * c;
    tmp = malloc(tmp_stride * (size_t)(row1 > row0 ? row1 - row0 : 1));
    acc = malloc(sizeof(int32_t) * tmp_stride);
    if (!tmp || !acc)
        goto fail;
    int32_t y = row0;
    for (; c == 3 && y + 1 < row1; y += 2)
        horizontal_two_rows_rgb(src->pixels + (size_t)y * src_stride, src_stride,
                                tmp + (size_t)(y - row0) * tmp_stride, tmp_stride, &hx);
    for (; y < row1; y++)
        horizontal_row(src->pixels + (size_t)y * src_stride, tmp + (size_t)(y - row0) * tmp_stride, c, &hx);
    uint8_t *out = dst + (size_t)g->dy * dst_stride + (size_t)g->dx * c;
    for (uint32_t i = 0; i < g->wh; i++)
        vertical_row(tmp, tmp_stride, row0, &vy, i, acc, tmp_stride, out + (size_t)i * dst_stride);
    st = IMAGE_OK;
fail:
    axis_free(&hx);
    axis_free(&vy);
    free(tmp);
    free(acc);
    return st;
}

/* Same size, no offset: the filter is the identity, so copy (PIL skips such passes too). */
static int is_identity(const image_u8 *src, const fit_geometry *g)
{
    return g->rh == src->height && g->rw == src->width && g->wh == src->height && g->ww == src->width;
}

image_status reference_image_fit(const image_u8 *src, uint32_t h, uint32_t w, resize_mode mode, image_u8 *dst)
{
    memset(dst, 0, sizeof *dst);
    if (!src || !src->pixels || !src->width || !src->height || !src->channels || !h || !w)
        return IMAGE_UNSUPPORTED; /* invalid arguments */
    fit_geometry g;
    image_fit_geometry(src->height, src->width, h, w, mode, &g);
    size_t stride = (size_t)w * src->channels;
    uint8_t *pixels = calloc((size_t)h * stride, 1); /* zero: the padding of pad mode */
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
