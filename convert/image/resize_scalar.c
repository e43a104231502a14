/* resize_scalar.c - the portable (plain C) passes of image_fit: the horizontal pass one row (or two RGB
 * rows) at a time, the vertical pass a bounded block of values at a time. PIL's integer arithmetic:
 * int32 sums of pixel * 22-bit weight, started at one half, shifted and clipped to 0..255. The AVX2
 * passes (resize_avx2.c) give the same bytes; test_resize_paths compares them. */
#include "resize_internal.h"

void resize_horizontal_row(const uint8_t *src, uint8_t *dst, uint32_t c, const axis_coeffs *ax)
{
    for (uint32_t i = 0; i < ax->out; i++) {
        const int32_t *k = ax->k + (size_t)i * ax->ksize;
        const uint8_t *p = src + (size_t)ax->first[i] * c;
        int32_t n = ax->count[i];
        if (c == 3) {
            int32_t a0 = RESIZE_FIX_HALF, a1 = RESIZE_FIX_HALF, a2 = RESIZE_FIX_HALF;
            for (int32_t j = 0; j < n; j++, p += 3) {
                a0 += p[0] * k[j];
                a1 += p[1] * k[j];
                a2 += p[2] * k[j];
            }
            dst[3 * i] = resize_clip_fixed(a0);
            dst[3 * i + 1] = resize_clip_fixed(a1);
            dst[3 * i + 2] = resize_clip_fixed(a2);
        } else {
            for (uint32_t ch = 0; ch < c; ch++) {
                int32_t a = RESIZE_FIX_HALF;
                for (int32_t j = 0; j < n; j++)
                    a += p[(size_t)j * c + ch] * k[j];
                dst[(size_t)i * c + ch] = resize_clip_fixed(a);
            }
        }
    }
}

/* The pass is load-bound: the weights and bounds are loaded once for both rows. */
void resize_horizontal_two_rows_rgb(const uint8_t *src, size_t src_stride, uint8_t *dst, size_t dst_stride,
                                    const axis_coeffs *ax)
{
    for (uint32_t i = 0; i < ax->out; i++) {
        const int32_t *k = ax->k + (size_t)i * ax->ksize;
        const uint8_t *p = src + (size_t)ax->first[i] * 3, *q = p + src_stride;
        int32_t n = ax->count[i];
        int32_t a0 = RESIZE_FIX_HALF, a1 = RESIZE_FIX_HALF, a2 = RESIZE_FIX_HALF;
        int32_t b0 = RESIZE_FIX_HALF, b1 = RESIZE_FIX_HALF, b2 = RESIZE_FIX_HALF;
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
        d[0] = resize_clip_fixed(a0);
        d[1] = resize_clip_fixed(a1);
        d[2] = resize_clip_fixed(a2);
        e[0] = resize_clip_fixed(b0);
        e[1] = resize_clip_fixed(b1);
        e[2] = resize_clip_fixed(b2);
    }
}

static void store_row(uint8_t *restrict dst, const int32_t *restrict acc, size_t len)
{
    for (size_t x = 0; x < len; x++)
        dst[x] = resize_clip_fixed(acc[x]);
}

/* Accumulated a bounded block at a time so the sums stay in L1 (vectorised by the compiler where the
 * target has a 32-bit multiply). */
void resize_vertical_span(const uint8_t *rows, size_t stride, const int32_t *k, int32_t count, size_t x0,
                          size_t len, uint8_t *dst)
{
    enum { BLOCK = 256 };
    int32_t acc[BLOCK];
    for (size_t x = x0; x < len; x += BLOCK) {
        size_t n = len - x < BLOCK ? len - x : BLOCK;
        for (size_t t = 0; t < n; t++)
            acc[t] = RESIZE_FIX_HALF;
        for (int32_t j = 0; j < count; j++) {
            const uint8_t *restrict row = rows + (size_t)j * stride + x;
            int32_t kj = k[j];
            for (size_t t = 0; t < n; t++)
                acc[t] += (int32_t)row[t] * kj;
        }
        store_row(dst + x, acc, n);
    }
}
