/* augment_geom.h - per-image geometry of the resizing crops, computed on the host for each delivered
 * batch: the crop box (torchvision's RandomResizedCrop sampling, or the centre crop), the flip, and the
 * separable filter of PIL's antialiased bilinear resize of that box to the output size (first source
 * pixel, tap count and normalised float32 weights of every output row and column). The kernel and the
 * CPU code only gather and sum in the fixed order written here (augment_resample.h), which is what keeps
 * CPU and GPU float32 bit-identical.
 *
 * Draws: image i of a delivery with augmentation key K (augment.h: seed, epoch, batch, echo) uses
 * h = rng_mix64(K + i * golden) as aug_draw_for: flip = bit 0 of h; the crop's uniform draws come from the
 * sequential generator seeded with h ^ AUG_CROP_STREAM, consumed as torchvision consumes its draws:
 * per attempt one draw for the area fraction, one for the log aspect ratio; after an accepted attempt
 * one for the row offset, one for the column offset. */
#ifndef H5PACK_READER_AUGMENT_GEOM_H
#define H5PACK_READER_AUGMENT_GEOM_H

#include <stddef.h>
#include <stdint.h>

#include "h5pack.h"
#include "rng.h"

#ifdef __cplusplus
extern "C" {
#endif

#define AUG_CROP_STREAM 0x5DEECE66DA3B9F01ull
#define AUG_RRC_ATTEMPTS 10

typedef struct aug_box {
    int32_t y, x, h, w; /* top row, left column, height, width in the stored image */
} aug_box;

typedef struct aug_crop_params {
    int mode;                     /* h5pack_crop */
    double scale_min, scale_max;  /* random resized: area fraction range */
    double ratio_min, ratio_max;  /* random resized: aspect ratio (w/h) range, sampled log-uniformly */
    double center_ratio;          /* centre: the kept fraction of the shorter side */
} aug_crop_params;

/* A 24-bit uniform float in [0, 1) from a 64-bit draw (the top 24 bits), exact in float32. */
float h5pack_aug_unit_float(uint64_t x);

/* An integer in [0, n) from a 64-bit draw (multiply-shift of the top 32 bits; bias below n / 2^32). */
uint32_t h5pack_aug_int_below(uint64_t x, uint32_t n);

/* torchvision RandomResizedCrop.get_params for an H x W image, its uniforms drawn from R (see above):
 * float32 uniform_ draws (u * (b - a) + a in float32), log/exp of the ratio in float32, sqrt and
 * round-half-even in double, 10 attempts, then the central fallback. */
aug_box h5pack_aug_rrc_box(uint32_t H, uint32_t W, const aug_crop_params *cp, rng_state *r);

/* The centre crop is torchvision's Resize(S) + CenterCrop((OH, OW)) of the H x W image: the shorter
 * side resized to S, the longer to int(S * longer / shorter) (RH x RW), the crop at offsets (OY, OX) =
 * round((RH - OH) / 2), round((RW - OW) / 2) of the resized image (Python's round: half to even), and
 * resampled in one pass at exactly those positions (h5pack_aug_axis_coeffs_resized). S =
 * round(min(OH, OW) / center_ratio) (224 and 0.875: Resize(256) + CenterCrop(224)), raised where a
 * non-square crop would not fit the resized image, so the crop keeps the output's aspect. */
typedef struct aug_center {
    uint32_t rh, rw; /* the resized image */
    uint32_t oy, ox; /* the crop's offsets in it */
} aug_center;

aug_center h5pack_aug_center(uint32_t H, uint32_t W, uint32_t oh, uint32_t ow, double center_ratio);

/* The centre crop's region of the source in whole pixels (what last_boxes reports): the crop's edges
 * scaled back to the H x W image and rounded, clamped to it. */
aug_box h5pack_aug_center_box(uint32_t H, uint32_t W, uint32_t oh, uint32_t ow, double center_ratio);

/* One in the fixed point of the resampling weights (14 bits): see augment_resample.h for why. */
#define AUG_WEIGHT_ONE 16384

/* Most taps an output pixel can have when resizing IN pixels to OUT: 2 * ceil(support) + 1 with
 * support = max(1, IN / OUT) (PIL's bilinear filter widened by the downscale factor). */
uint32_t h5pack_aug_max_taps(uint32_t in, uint32_t out);

/* PIL's precompute_coeffs for the bilinear filter: resizing the IN pixels starting at OFFSET to OUT
 * pixels. Output i reads pixels PAIRS[2i] .. PAIRS[2i] + PAIRS[2i+1] - 1 (absolute: OFFSET included)
 * with weights W[i * K ..] (K >= h5pack_aug_max_taps(in, out); weights past the count are 0). Weights
 * are computed and normalised in double as PIL does, then quantised to non-negative integers summing to
 * exactly AUG_WEIGHT_ONE (stored as float32, exactly), for the exact sums of augment_resample.h. */
void h5pack_aug_axis_coeffs(uint32_t in, uint32_t offset, uint32_t out, uint32_t k, int32_t *pairs, float *w);

/* The same for OUT pixels of a resize of the whole axis (IN pixels) to RESIZED pixels, starting at resized
 * pixel FIRST: PIL's resize of the whole image, then a crop (taps reach up to the image's edges, not the
 * crop's). K >= h5pack_aug_max_taps(in, resized). */
void h5pack_aug_axis_coeffs_resized(uint32_t in, uint32_t resized, uint32_t first, uint32_t out, uint32_t k,
                                    int32_t *pairs, float *w);

#ifdef __cplusplus
}
#endif

#endif
