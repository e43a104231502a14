/* naive.h - the conversion written out per pixel, straight from the formulas in augment.h and
 * h5pack.h, as the independent reference the backends are checked against. Also shared helpers for
 * the backend tests (random data, parameter sets). Header only; C and CUDA (host) tests include it. */
#ifndef H5PACK_TEST_NAIVE_H
#define H5PACK_TEST_NAIVE_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "augment.h"
#include "backend.h"

static inline uint32_t naive_float_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static inline float naive_bits_float(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* bfloat16 by comparing the two neighbouring candidates in double precision (ties to the even one). */
static inline uint16_t naive_bfloat16(float f)
{
    uint32_t lo = naive_float_bits(f) & 0xFFFF0000u, hi = lo + 0x10000u;
    double dlo = fabs((double)naive_bits_float(lo) - (double)f);
    double dhi = fabs((double)naive_bits_float(hi) - (double)f);
    if (dlo < dhi || (dlo == dhi && ((lo >> 16) & 1u) == 0))
        return (uint16_t)(lo >> 16);
    return (uint16_t)(hi >> 16);
}

/* binary16 by search: the pattern whose value is nearest to f (ties to even), for |f| < 65520. */
static inline double naive_half_value(uint16_t h)
{
    int e = (h >> 10) & 0x1F, m = h & 0x3FF;
    double v = e ? ldexp(1024 + m, e - 25) : ldexp(m, -24);
    return (h & 0x8000) ? -v : v;
}

static inline uint16_t naive_half(float f)
{
    uint16_t sign = signbit(f) ? 0x8000 : 0;
    double a = fabs((double)f);
    if (a >= 65520.0)
        return (uint16_t)(sign | 0x7C00);
    uint16_t lo = 0, hi = 0x7BFF; /* largest pattern with value <= a, by bisection */
    while (lo < hi) {
        uint16_t mid = (uint16_t)((lo + hi + 1) / 2);
        if (naive_half_value(mid) <= a)
            lo = mid;
        else
            hi = (uint16_t)(mid - 1);
    }
    uint16_t up = (uint16_t)(lo + 1);
    double dlo = a - naive_half_value(lo), dup = naive_half_value(up) - a;
    uint16_t best = (dup < dlo || (dup == dlo && (up & 1) == 0)) ? up : lo;
    return (uint16_t)(sign | best);
}

static inline size_t naive_index(h5pack_layout layout, size_t i, size_t c, size_t y, size_t x, size_t C,
                                 size_t H, size_t W)
{
    if (layout == H5PACK_LAYOUT_NHWC)
        return ((i * H + y) * W + x) * C + c;
    return ((i * C + c) * H + y) * W + x;
}

/* Output element of image I, channel C, row Y, column X, written to DST (element size of the dtype). */
static inline void naive_element(const backend_params *p, const uint8_t *in, uint64_t key, size_t i, size_t c,
                                 size_t y, size_t x, void *dst)
{
    size_t C = p->channels, H = p->height, W = p->width;
    if (p->dtype == H5PACK_DTYPE_UINT8) { /* raw: no augmentation, no normalisation */
        *(uint8_t *)dst = in[naive_index(p->in_layout, i, c, y, x, C, H, W)];
        return;
    }
    int P = p->crop_padding;
    aug_draw d = aug_draw_for(key, i, p->random_flip, P);
    long sy = (long)y + d.oy - P;
    long sx = (d.flip ? (long)W - 1 - (long)x : (long)x) + d.ox - P;
    int v = 0;
    if (sy >= 0 && sy < (long)H && sx >= 0 && sx < (long)W)
        v = in[naive_index(p->in_layout, i, c, (size_t)sy, (size_t)sx, C, H, W)];
    float f = ((float)v / 255.0f - p->mean[c]) / p->std[c];
    if (p->dtype == H5PACK_DTYPE_FLOAT32)
        memcpy(dst, &f, 4);
    else {
        uint16_t h = p->dtype == H5PACK_DTYPE_FLOAT16 ? naive_half(f) : naive_bfloat16(f);
        memcpy(dst, &h, 2);
    }
}

/* Whole batch of N images into OUT (the output layout of P). */
static inline void naive_convert(const backend_params *p, const uint8_t *in, void *out, size_t n, uint64_t key)
{
    size_t C = p->channels, H = p->height, W = p->width;
    size_t es = p->dtype == H5PACK_DTYPE_FLOAT32 ? 4 : p->dtype == H5PACK_DTYPE_UINT8 ? 1 : 2;
    for (size_t i = 0; i < n; i++)
        for (size_t c = 0; c < C; c++)
            for (size_t y = 0; y < H; y++)
                for (size_t x = 0; x < W; x++)
                    naive_element(p, in, key, i, c, y, x,
                                  (uint8_t *)out + es * naive_index(p->out_layout, i, c, y, x, C, H, W));
}

/* Deterministic pseudo-random bytes. */
static inline void naive_fill_random(uint8_t *buf, size_t n, uint64_t seed)
{
    rng_state r = {seed};
    for (size_t k = 0; k < n; k++)
        buf[k] = (uint8_t)(rng_next(&r) >> 56);
}

static inline backend_params naive_params(uint32_t C, uint32_t H, uint32_t W, h5pack_dtype dtype,
                                          h5pack_layout in, h5pack_layout out, int flip, int pad)
{
    static const float mean[4] = {0.485f, 0.456f, 0.406f, 0.5f}, std[4] = {0.229f, 0.224f, 0.225f, 0.25f};
    backend_params p;
    memset(&p, 0, sizeof p);
    p.channels = C, p.height = H, p.width = W;
    p.in_layout = in, p.out_layout = out, p.dtype = dtype;
    p.batch_size = 8, p.slots = 2, p.threads = 1;
    for (int c = 0; c < 4; c++)
        p.mean[c] = mean[c], p.std[c] = std[c];
    p.random_flip = flip, p.crop_padding = pad;
    return p;
}

#endif
