/* augment_crops.h - builds a delivery's resampling job (augment_resample.h) on the host: draws each
 * image's box and flip (augment_geom.h) and computes its taps into one contiguous blob, which the CUDA
 * backend copies to the device as it is (the job's pointers are then moved by the same offset). */
#ifndef H5PACK_READER_AUGMENT_CROPS_H
#define H5PACK_READER_AUGMENT_CROPS_H

#include <stddef.h>
#include <stdint.h>

#include "augment_geom.h"
#include "augment_kept_taps.h"
#include "augment_resample.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct aug_crops_params {
    uint32_t C, H, W;          /* stored image */
    int in_nhwc, out_nhwc;
    int out_type;              /* h5pack_dtype */
    float nscale[4], nbias[4]; /* normalisation: out = v * nscale + nbias */
    aug_crop_params crop;      /* RANDOM_RESIZED or CENTER */
    int flip;                  /* random horizontal flip */
} aug_crops_params;

/* Bytes of the blob of COUNT images resized to OH x OW. */
size_t h5pack_aug_blob_bytes(const aug_crops_params *pp, size_t count, uint32_t oh, uint32_t ow);

/* The most bytes a blob of COUNT images needs for any output size up to MAX_H x MAX_W (what a backend
 * allocates once at open). */
size_t h5pack_aug_blob_capacity(const aug_crops_params *pp, size_t count, uint32_t max_h, uint32_t max_w);

/* Plans COUNT images with augmentation key KEY resized to OH x OW: SRC[i] is the address of image i's
 * uint8 source. Writes the blob (h5pack_aug_blob_bytes bytes) at BLOB and points *JOB into it (job->out
 * is left NULL). The draws depend on (KEY, i) only, not on OH x OW. */
void h5pack_aug_crops(const aug_crops_params *pp, uint64_t key, size_t count, uint32_t oh, uint32_t ow,
                     const uint64_t *src, void *blob, aug_job *job);

/* The same for images of several sizes: DIMS[2i], DIMS[2i+1] is image i's stored height and width (each
 * at most PP's H x W, the largest); its box is drawn from them (torchvision's RandomResizedCrop of the
 * whole image, or the centre crop of its shorter side) and its source addressed with them. */
void h5pack_aug_crops_sized(const aug_crops_params *pp, uint64_t key, size_t count, uint32_t oh, uint32_t ow,
                           const uint64_t *src, const uint32_t *dims, void *blob, aug_job *job);

/* Planning in two steps, so that each image's taps can be computed by the thread that resamples it:
 * h5pack_aug_crop_boxes draws every image's box and flip and lays out the blob (the taps left unset);
 * h5pack_aug_crop_taps then computes image I's taps into it. h5pack_aug_crops_sized is the two in a row.
 * Concurrent h5pack_aug_crop_taps calls for different images of one job are safe with a memo each. */
void h5pack_aug_crop_boxes(const aug_crops_params *pp, uint64_t key, size_t count, uint32_t oh, uint32_t ow,
                           const uint64_t *src, const uint32_t *dims, void *blob, aug_job *job);

/* What one planner of taps remembers. Of the images of the job it plans: per box length (modulo
 * AUG_LEN_MEMO), the last image with it + 1, and for centre crops the last image + 1 (0: none), whose
 * taps it copies instead of computing PIL's coefficients again. With KEEPS, also each box length's taps
 * themselves, across jobs, for as long as the output size stays (augment_kept_taps.h). */
#define AUG_LEN_MEMO 512
typedef struct aug_tap_memo {
    uint32_t seen_h[AUG_LEN_MEMO], seen_w[AUG_LEN_MEMO];
    uint32_t last_center;
    int keeps;
    aug_kept_taps kept[2]; /* rows, columns (KEEPS) */
} aug_tap_memo;

/* An empty memo; KEEPS: it keeps taps across jobs (free it with h5pack_aug_tap_memo_free). */
void h5pack_aug_tap_memo_init(aug_tap_memo *memo, int keeps);

/* Forgets the images of the last job (before planning another job's images); what it keeps stays. */
void h5pack_aug_tap_memo_new_job(aug_tap_memo *memo);

void h5pack_aug_tap_memo_free(aug_tap_memo *memo);

/* Image I's taps of JOB (planned by h5pack_aug_crop_boxes with PP), copied from an image planned before
 * through MEMO where they are the same, else computed. */
void h5pack_aug_crop_taps(const aug_crops_params *pp, const aug_job *job, size_t i, aug_tap_memo *memo);

/* The same job with its blob pointers moved from HOST_BLOB to DEVICE_BLOB (a copy of the blob). */
aug_job h5pack_aug_job_moved(const aug_job *job, const void *host_blob, uint64_t device_blob);

#ifdef __cplusplus
}
#endif

#endif
