/* resample_cases.h - resampling jobs for the tests: a batch of random stored images, plan parameters for
 * each dtype / layout / crop mode, and a job planned over them (host memory). Header only; C and CUDA
 * (host) tests include it. */
#ifndef H5PACK_TEST_RESAMPLE_CASES_H
#define H5PACK_TEST_RESAMPLE_CASES_H

#include <stdlib.h>
#include <string.h>

#include "augment_crops.h"
#include "check.h"
#include "naive.h"

typedef struct rs_case {
    aug_crops_params pp;
    size_t count;
    uint32_t oh, ow;
    uint8_t *in;    /* count stored images */
    uint64_t *src;  /* their addresses */
    uint32_t *dims; /* images of several sizes: each one's (h, w), NULL for one size */
    void *blob;
    aug_job job;
    size_t out_bytes;
} rs_case;

static inline aug_crops_params rs_params(uint32_t C, uint32_t H, uint32_t W, int out_type, int in_nhwc, int out_nhwc,
                                        int mode, int flip)
{
    aug_crops_params pp;
    memset(&pp, 0, sizeof pp);
    pp.C = C, pp.H = H, pp.W = W;
    pp.in_nhwc = in_nhwc, pp.out_nhwc = out_nhwc, pp.out_type = out_type;
    for (int c = 0; c < 4; c++) { /* ImageNet-like normalisation */
        pp.nscale[c] = (float)(1.0 / (255.0 * (0.22 + 0.01 * c)));
        pp.nbias[c] = (float)(-(0.45 + 0.01 * c) / (0.22 + 0.01 * c));
    }
    pp.crop.mode = mode;
    pp.crop.scale_min = 0.08, pp.crop.scale_max = 1.0;
    pp.crop.ratio_min = 3.0 / 4.0, pp.crop.ratio_max = 4.0 / 3.0;
    pp.crop.center_ratio = 0.875;
    pp.flip = flip;
    return pp;
}

/* Plans COUNT random images for PP at OH x OW with KEY. */
static inline rs_case rs_make(aug_crops_params pp, size_t count, uint32_t oh, uint32_t ow, uint64_t key)
{
    rs_case k;
    k.pp = pp, k.count = count, k.oh = oh, k.ow = ow, k.dims = NULL;
    size_t img = (size_t)pp.C * pp.H * pp.W;
    k.in = (uint8_t *)malloc(count * img);
    k.src = (uint64_t *)malloc(count * sizeof(uint64_t));
    CHECK(k.in && k.src);
    naive_fill_random(k.in, count * img, key ^ 0x1234);
    for (size_t i = 0; i < count; i++)
        k.src[i] = (uint64_t)(uintptr_t)(k.in + i * img);
    size_t bytes = h5pack_aug_blob_bytes(&pp, count, oh, ow);
    CHECK(bytes <= h5pack_aug_blob_capacity(&pp, count, oh, ow));
    k.blob = malloc(bytes);
    CHECK(k.blob);
    h5pack_aug_crops(&pp, key, count, oh, ow, k.src, k.blob, &k.job);
    k.out_bytes = count * pp.C * oh * ow * h5pack_dtype_bytes(pp.out_type);
    return k;
}

/* The same with images of several sizes: image i is DIMS[2i] x DIMS[2i+1] (each at most PP's H x W),
 * stored one after the other at its own size, planned with h5pack_aug_crops_sized. */
static inline rs_case rs_make_sized(aug_crops_params pp, size_t count, uint32_t oh, uint32_t ow, uint64_t key,
                                    const uint32_t *dims)
{
    rs_case k;
    k.pp = pp, k.count = count, k.oh = oh, k.ow = ow;
    size_t total = 0;
    for (size_t i = 0; i < count; i++)
        total += (size_t)pp.C * dims[2 * i] * dims[2 * i + 1];
    k.in = (uint8_t *)malloc(total ? total : 1);
    k.src = (uint64_t *)malloc(count * sizeof(uint64_t));
    k.dims = (uint32_t *)malloc(2 * count * sizeof(uint32_t));
    CHECK(k.in && k.src && k.dims);
    memcpy(k.dims, dims, 2 * count * sizeof(uint32_t));
    naive_fill_random(k.in, total, key ^ 0x1234);
    for (size_t i = 0, at = 0; i < count; at += (size_t)pp.C * dims[2 * i] * dims[2 * i + 1], i++)
        k.src[i] = (uint64_t)(uintptr_t)(k.in + at);
    k.blob = malloc(h5pack_aug_blob_bytes(&pp, count, oh, ow));
    CHECK(k.blob);
    h5pack_aug_crops_sized(&pp, key, count, oh, ow, k.src, k.dims, k.blob, &k.job);
    k.out_bytes = count * pp.C * oh * ow * h5pack_dtype_bytes(pp.out_type);
    return k;
}

static inline void rs_free(rs_case *k)
{
    free(k->in), free(k->src), free(k->blob), free(k->dims);
}

#endif
