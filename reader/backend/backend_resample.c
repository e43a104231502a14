/* backend_resample.c - the CPU side of a resampling job (augment_resample.h): for each image, the
 * horizontal sums of the source rows the output needs, then the vertical sums, normalised and stored.
 * This is the scalar pass; backend_resample_avx2.c (float sums) and backend_resample_fixed.c (16-bit
 * integer horizontal sums) compute the same bits faster where AVX2 with FMA runs; this file picks.
 * The vertical pass runs with the output column innermost (it vectorises); its sums are exact
 * (augment_resample.h), so the order does not matter. */
#include <stdlib.h>

#include "augment_resample.h"
#include "backend_prefetch.h"
#include "backend_resample.h"
#include "backend_resample_avx2.h"
#include "backend_resample_avx512.h"
#include "backend_resample_fixed.h"

/* Rows [r0, r1) of the horizontal pass of image I into H: h[(r - r0) * C * out_w + c * out_w + x] is
 * the value output column x (flip applied) reads from source row r: h of augment_resample.h, as
 * aug_hsum computes it, with the addressing hoisted out of the tap loop. */
static void horizontal(const aug_job *j, uint32_t i, int32_t r0, int32_t r1, float *h)
{
    const aug_image *img = &j->images[i];
    const uint8_t *src = (const uint8_t *)(uintptr_t)img->src;
    const int32_t *rx = j->rx + (size_t)i * j->out_w * 2;
    const float *wx = j->wx + (size_t)i * j->out_w * j->kx;
    size_t row_floats = (size_t)j->C * j->out_w;
    /* element steps: along x, between channels, between rows */
    size_t xs = j->in_nhwc ? j->C : 1, cs = j->in_nhwc ? 1 : (size_t)j->H * j->W, ys = j->in_nhwc ? (size_t)j->W * j->C : j->W;
    for (int32_t r = r0; r < r1; r++)
        for (uint32_t c = 0; c < j->C; c++) {
            const uint8_t *row = src + (size_t)r * ys + c * cs;
            float *dst = h + (size_t)(r - r0) * row_floats + (size_t)c * j->out_w;
            for (uint32_t x = 0; x < j->out_w; x++) {
                uint32_t X = aug_tap_column(j, img, x);
                const uint8_t *p = row + (size_t)rx[2 * X] * xs;
                const float *w = wx + (size_t)X * j->kx;
                float acc = 0.0f;
                for (int32_t t = 0; t < rx[2 * X + 1]; t++)
                    acc = AUG_MAC(acc, w[t], (float)p[(size_t)t * xs]);
                dst[x] = aug_round_h(acc);
            }
        }
}

/* acc[x] += w * src[x]: one product and one sum per element, in the element's tap order (vectorises
 * across x without changing any result). */
static void accumulate(float *restrict acc, const float *restrict src, float w, uint32_t n)
{
    for (uint32_t x = 0; x < n; x++)
        acc[x] = AUG_MAC(acc[x], w, src[x]);
}

/* Stores row Y, channel C of image I from the sums ACC: float32 directly (the common case: a multiply,
 * an add and a store per value, as aug_store_value computes them), other types through it. */
static void store_row(const aug_job *j, uint32_t i, uint32_t y, uint32_t c, const float *acc)
{
    if (j->out_type != H5PACK_DTYPE_FLOAT32) {
        for (uint32_t x = 0; x < j->out_w; x++)
            aug_write(j, i, y, x, c, aug_store_value(j, c, acc[x]));
        return;
    }
    size_t first = (size_t)i * j->C * j->out_h * j->out_w + aug_pixel_index(j->out_nhwc, j->C, j->out_h, j->out_w, y, 0, c);
    size_t step = j->out_nhwc ? j->C : 1;
    float *dst = (float *)j->out + first, scale = aug_out_scale(j, c), bias = j->nbias[c];
    if (step == 1) { /* NCHW: contiguous, vectorises */
        for (uint32_t x = 0; x < j->out_w; x++)
            dst[x] = AUG_FADD(AUG_FMUL(acc[x], scale), bias);
        return;
    }
    for (uint32_t x = 0; x < j->out_w; x++)
        dst[x * step] = AUG_FADD(AUG_FMUL(acc[x], scale), bias);
}

/* Output row Y of image I from the horizontal rows H (starting at source row R0); ACC: out_w floats. */
static void vertical_row(const aug_job *j, uint32_t i, uint32_t y, int32_t r0, const float *h, float *acc)
{
    const int32_t *ry = j->ry + ((size_t)i * j->out_h + y) * 2;
    const float *wy = j->wy + ((size_t)i * j->out_h + y) * j->ky;
    size_t row_floats = (size_t)j->C * j->out_w;
    for (uint32_t c = 0; c < j->C; c++) {
        for (uint32_t x = 0; x < j->out_w; x++)
            acc[x] = 0.0f;
        for (int32_t t = 0; t < ry[1]; t++)
            accumulate(acc, h + (size_t)(ry[0] + t - r0) * row_floats + (size_t)c * j->out_w, wy[t], j->out_w);
        store_row(j, i, y, c, acc);
    }
}

/* Floats at the start of the scratch for the horizontal sums: the float passes' (H + 1 rows), or the
 * integer passes' memory (32- or 64-byte aligned inside), whichever is largest (an image uses one). */
static size_t h_floats(const aug_job *j)
{
    size_t rows = ((size_t)j->H + 1) * j->C * j->out_w, fixed = h5pack_resample_fixed_work_bytes(j) / sizeof(float) + 8;
    size_t wide = h5pack_resample_avx512_work_bytes(j) / sizeof(float) + 16;
    size_t most = rows > fixed ? rows : fixed;
    return most > wide ? most : wide;
}

static void *aligned_in(float *scratch, uintptr_t alignment)
{
    return (void *)(((uintptr_t)scratch + alignment - 1) & ~(alignment - 1));
}

size_t h5pack_resample_scratch_floats(const aug_job *j)
{
    return h_floats(j) + j->out_w + h5pack_resample_avx2_work_floats(j);
}

/* Batches of at least this many output bytes are written with non-temporal stores where aligned (as the
 * plain conversion does): they outgrow the caches, and a regular store first reads each line. */
#define STREAM_MIN_BATCH_BYTES ((size_t)8 << 20)

static int streams(const aug_job *j)
{
    return (size_t)j->count * j->C * j->out_h * j->out_w * h5pack_dtype_bytes(j->out_type) >= STREAM_MIN_BATCH_BYTES;
}

/* One image of J, from its view JI (augment_resample.h: its own stored size, for images of several
 * sizes), with the scratch laid out for J; STREAM: streams(j); NEXT (or NULL): the region to prefetch
 * meanwhile (backend_prefetch.h). */
static void resample_one(const aug_job *j, const aug_job *ji, uint32_t i, float *scratch, int simd, int stream,
                         src_prefetch *next)
{
    float *acc = scratch + h_floats(j), *work = acc + j->out_w;
    if (simd == H5PACK_RESAMPLE_AVX512) {
        if (h5pack_resample_avx512_image(ji, i, aligned_in(scratch, 64), stream, next) == 0)
            return;
        simd = H5PACK_RESAMPLE_FIXED; /* the taps do not fit it */
    }
    if (simd) {
        void *fixed = simd == H5PACK_RESAMPLE_FIXED ? aligned_in(scratch, 32) : NULL;
        h5pack_resample_avx2_image(ji, i, scratch, work, fixed, stream, next);
        return;
    }
    const int32_t *ry = ji->ry + (size_t)i * ji->out_h * 2;
    int32_t r0 = ry[0], r1 = ry[2 * (ji->out_h - 1)] + ry[2 * (ji->out_h - 1) + 1];
    horizontal(ji, i, r0, r1, scratch);
    for (uint32_t y = 0; y < ji->out_h; y++) {
        h5pack_src_prefetch_step(next, y, ji->out_h);
        vertical_row(ji, i, y, r0, scratch, acc);
    }
}

void h5pack_resample_images_with(const aug_job *j, uint32_t first, uint32_t n, float *scratch, int simd)
{
    int stream = streams(j);
    for (uint32_t i = first; i < first + n; i++) {
        aug_job own;
        src_prefetch next;
        if (i + 1 < first + n)
            h5pack_src_prefetch_region(&next, j, i + 1, (const uint8_t *)(uintptr_t)j->images[i + 1].src);
        else
            h5pack_src_prefetch_none(&next);
        resample_one(j, aug_job_for_image(j, i, &own), i, scratch, simd, stream, &next);
    }
}

void h5pack_resample_image_then(const aug_job *j, uint32_t i, float *scratch, src_prefetch *next)
{
    aug_job own;
    resample_one(j, aug_job_for_image(j, i, &own), i, scratch, h5pack_resample_best_pass(), streams(j), next);
}

int h5pack_resample_best_pass(void)
{
    if (!h5pack_resample_avx2_supported())
        return H5PACK_RESAMPLE_SCALAR;
    return h5pack_resample_avx512_supported() ? H5PACK_RESAMPLE_AVX512 : H5PACK_RESAMPLE_FIXED;
}

void h5pack_resample_images(const aug_job *j, uint32_t first, uint32_t n, float *scratch)
{
    h5pack_resample_images_with(j, first, n, scratch, h5pack_resample_best_pass());
}
