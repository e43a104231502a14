/* augment.h - the per-sample augmentation draws and the source pixel of each output pixel, shared by
 * the CPU backend, the CUDA kernel and the tests, so both backends compute exactly the same thing.
 *
 * For output image i of a batch, with key = rng_key(seed, epoch, batch_index, echo) + i0 * golden, i0
 * the global position of the batch's first image (rank * its count: docs/reader.md, draws follow the
 * global batch, not its split into ranks):
 *   h = rng_mix64(key + i * golden), i.e. that of global position i0 + i; flip = random_flip && (h & 1);
 *   oy = (h >> 8) % (2P+1), ox = (h >> 24) % (2P+1) when random_crop_padding P > 0, else 0.
 * Output pixel (y, x) takes the source pixel (y + oy - P, xs + ox - P) with xs = flip ? W-1-x : x
 * (torchvision order: RandomCrop(padding=P) then RandomHorizontalFlip), or the pixel value 0 when that
 * falls in the padding. Normalisation is a 256-entry table per channel, computed once on the host, so
 * float32/float16/bfloat16 results are identical on CPU and GPU. */
#ifndef H5PACK_AUGMENT_H
#define H5PACK_AUGMENT_H

#include "rng.h"

typedef struct aug_draw {
    int flip;
    int oy, ox; /* crop offsets in [0, 2P] */
} aug_draw;

H5PACK_HD uint64_t aug_batch_key(uint64_t seed, uint64_t epoch, uint64_t batch_index, uint32_t echo)
{
    return rng_key(seed, epoch, batch_index, echo);
}

/* The key of a rank's batch whose first image is at global position FIRST of its global batch: output i
 * then draws what global position FIRST + i draws. */
H5PACK_HD uint64_t aug_batch_key_at(uint64_t seed, uint64_t epoch, uint64_t batch_index, uint32_t echo,
                                    uint64_t first)
{
    return rng_key(seed, epoch, batch_index, echo) + first * 0x9E3779B97F4A7C15ull;
}

H5PACK_HD aug_draw aug_draw_for(uint64_t batch_key, uint64_t i, int random_flip, int pad)
{
    uint64_t h = rng_mix64(batch_key + i * 0x9E3779B97F4A7C15ull);
    aug_draw d;
    d.flip = random_flip ? (int)(h & 1) : 0;
    d.oy = pad > 0 ? (int)((h >> 8) % (2 * (uint64_t)pad + 1)) : 0;
    d.ox = pad > 0 ? (int)((h >> 24) % (2 * (uint64_t)pad + 1)) : 0;
    return d;
}

/* Source row of output row Y (may be outside [0, H): padding). */
H5PACK_HD int aug_src_y(aug_draw d, int y, int pad)
{
    return y + d.oy - pad;
}

/* Source column of output column X (may be outside [0, W): padding). */
H5PACK_HD int aug_src_x(aug_draw d, int x, int width, int pad)
{
    return (d.flip ? width - 1 - x : x) + d.ox - pad;
}

#endif
