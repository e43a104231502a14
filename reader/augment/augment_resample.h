/* augment_resample.h - the resampling job of one delivery (crop box + PIL bilinear taps per image, made
 * on the host by augment_crops.c) and the arithmetic that turns it into output values, shared by the CPU
 * code (backend_resample.c) and the CUDA kernel (cuda/resample_kernel.cuh).
 *
 * Output pixel (y, x), channel c, of image i, with box B, flip F and taps (first, count, weights) per
 * output row (ry, wy) and per output column (rx, wx), column index X = F ? out_w - 1 - x : x. The
 * weights are non-negative integers summing to AUG_WEIGHT_ONE = 2^14 (augment_geom.h), held in float32:
 *   s(r, c, X) = sum over t < rx[X].count of wx[X][t] * src(r, rx[X].first + t, c)  integer <= 255 * 2^14
 *   h(r, c, X) = floor(s / 2^12 + 1/2)                     the source row resampled, in quarter levels (<= 1020)
 *   v(y, x, c) = sum over t < ry[y].count of wy[y][t] * h(ry[y].first + t, c, X)   integer <= 1020 * 2^14
 *   float32 out = v * (nscale[c] / 2^16) + nbias[c]; float16/bfloat16 rounded from it;
 *   uint8 out = floor(v / 2^16 + 1/2)
 * Every product and partial sum of s and v is an integer below 2^24, which float32 holds exactly: the
 * sums come out the same in any order, with or without FMA, in any backend, so each pass sums in the
 * order that suits it (rows or columns first, 8 lanes at a time, threads of a block). Only the last step
 * rounds, one product and one sum each rounded on its own (the host code is compiled with
 * -ffp-contract=off; the device code uses __fmul_rn / __fadd_rn), so the scalar pass, the AVX2 pass and
 * the CUDA kernel give the same bits. h keeps 2 bits below PIL's intermediate (whole levels): the most
 * that keeps v below 2^24. */
#ifndef H5PACK_READER_AUGMENT_RESAMPLE_H
#define H5PACK_READER_AUGMENT_RESAMPLE_H

#include <stddef.h>
#include <stdint.h>

#include "augment_geom.h"
#include "dtype.h"
#include "halfbits.h"
#include "rng.h"

/* AUG_FMUL, AUG_FADD: one product or sum, rounded on its own. AUG_MAC(acc, w, v): acc + w * v for the
 * exact sums (a fused multiply-add on the device: the same value, one instruction). */
#ifdef __CUDA_ARCH__
#define AUG_FMUL(a, b) __fmul_rn((a), (b))
#define AUG_FADD(a, b) __fadd_rn((a), (b))
#define AUG_MAC(acc, w, v) __fmaf_rn((w), (v), (acc))
#else
#define AUG_FMUL(a, b) ((a) * (b))
#define AUG_FADD(a, b) ((a) + (b))
#define AUG_MAC(acc, w, v) ((acc) + (w) * (v))
#endif

/* One output image of a resampling job. */
typedef struct aug_image {
    uint64_t src;        /* address of its uint8 source image (stored size and layout) */
    int32_t y, x, h, w;  /* crop box in the stored image */
    int32_t flip;
    int32_t src_h, src_w; /* images of several sizes: this source's stored size; 0: the job's H x W */
    int32_t reserved;
} aug_image;

/* A delivery's resampling job. The pointers address host memory on the CPU and device memory in the
 * kernel (the same blob, copied). */
typedef struct aug_job {
    uint32_t count;              /* images */
    uint32_t C, H, W;            /* stored image */
    uint32_t out_h, out_w;
    uint32_t ky, kx;             /* weights per output row / column (stride of wy / wx) */
    int in_nhwc, out_nhwc;
    int out_type;                /* h5pack_dtype */
    float nscale[4], nbias[4];   /* out = v * nscale[c] + nbias[c] */
    const aug_image *images;     /* count */
    const int32_t *ry;           /* count * out_h * 2: first source row (absolute), taps */
    const float *wy;             /* count * out_h * ky */
    const int32_t *rx;           /* count * out_w * 2: first source column (absolute), taps */
    const float *wx;             /* count * out_w * kx */
    void *out;                   /* count output images of out_h x out_w in the output layout */
} aug_job;

/* J as image I sees it: an image of several sizes addresses its source with its own stored size (a copy
 * in OWN); images of one size use J itself. Everything else of the job is shared. */
H5PACK_HD const aug_job *aug_job_for_image(const aug_job *j, uint32_t i, aug_job *own)
{
    const aug_image *img = &j->images[i];
    if (img->src_h == 0)
        return j;
    *own = *j;
    own->H = (uint32_t)img->src_h, own->W = (uint32_t)img->src_w;
    return own;
}

/* Index of channel c at (y, x) of an H x W x C image in NHWC or NCHW order. */
H5PACK_HD size_t aug_pixel_index(int nhwc, uint32_t C, uint32_t H, uint32_t W, uint32_t y, uint32_t x, uint32_t c)
{
    return nhwc ? ((size_t)y * W + x) * C + c : ((size_t)c * H + y) * W + x;
}

/* h from the exact sum S (augment_resample.h): S / 2^12 and the half are exact; the truncation is the
 * floor (S >= 0) and needs no libm call. */
H5PACK_HD float aug_round_h(float s)
{
    return (float)(int32_t)AUG_FADD(AUG_FMUL(s, 1.0f / 4096.0f), 0.5f);
}

/* h(r, c, X) for the source image SRC. */
H5PACK_HD float aug_hsum(const aug_job *j, const uint8_t *src, uint32_t r, uint32_t c, const int32_t *rx,
                         const float *wx)
{
    float acc = 0.0f;
    int32_t first = rx[0], n = rx[1];
    for (int32_t t = 0; t < n; t++) {
        float v = (float)src[aug_pixel_index(j->in_nhwc, j->C, j->H, j->W, r, (uint32_t)(first + t), c)];
        acc = AUG_MAC(acc, wx[t], v);
    }
    return aug_round_h(acc);
}

/* Column X of the x taps used by output column x of image IMG (the flip mirrors the output). */
H5PACK_HD uint32_t aug_tap_column(const aug_job *j, const aug_image *img, uint32_t x)
{
    return img->flip ? j->out_w - 1 - x : x;
}

/* Output column X of image I (flip applied): its first source column, tap count and weights. */
H5PACK_HD void aug_column_taps(const aug_job *j, uint32_t i, uint32_t x, int32_t *first, int32_t *n, const float **w)
{
    uint32_t X = aug_tap_column(j, &j->images[i], x);
    const int32_t *rx = j->rx + ((size_t)i * j->out_w + X) * 2;
    *first = rx[0], *n = rx[1];
    *w = j->wx + ((size_t)i * j->out_w + X) * j->kx;
}

/* The scale that turns v into pixel units times nscale[c] (2^-16: exact). */
H5PACK_HD float aug_out_scale(const aug_job *j, uint32_t c)
{
    return AUG_FMUL(j->nscale[c], 1.0f / 65536.0f);
}

/* The stored element of output value V (the exact sum v: float32 bits, 16-bit pattern, or uint8). */
H5PACK_HD uint32_t aug_store_value(const aug_job *j, uint32_t c, float v)
{
    if (j->out_type == H5PACK_DTYPE_UINT8) {
        float r = AUG_FADD(AUG_FMUL(v, 1.0f / 65536.0f), 0.5f); /* exact: 0 <= v < 2^24 */
        return r <= 0.0f ? 0u : r >= 255.0f ? 255u : (uint32_t)r;
    }
    float o = AUG_FADD(AUG_FMUL(v, aug_out_scale(j, c)), j->nbias[c]);
    if (j->out_type == H5PACK_DTYPE_FLOAT16)
        return h5pack_float_to_half_bits(o);
    if (j->out_type == H5PACK_DTYPE_BFLOAT16)
        return h5pack_float_to_bfloat16_bits(o);
    return h5pack_float_bits(o);
}

/* Writes element E of output pixel (y, x), channel c, of image I. */
H5PACK_HD void aug_write(const aug_job *j, uint32_t i, uint32_t y, uint32_t x, uint32_t c, uint32_t e)
{
    size_t per_image = (size_t)j->C * j->out_h * j->out_w;
    size_t k = (size_t)i * per_image + aug_pixel_index(j->out_nhwc, j->C, j->out_h, j->out_w, y, x, c);
    if (j->out_type == H5PACK_DTYPE_FLOAT32)
        ((uint32_t *)j->out)[k] = e;
    else if (j->out_type == H5PACK_DTYPE_UINT8)
        ((uint8_t *)j->out)[k] = (uint8_t)e;
    else
        ((uint16_t *)j->out)[k] = (uint16_t)e;
}

#endif
