/* augment_kept_taps.h - one planner's store of random resized crops' taps across jobs, per box length.
 *
 * The taps of one axis of a random resized crop depend only on the box's length there and the output
 * size (its offset is added to each first index: augment_crops.c, copy_taps), and a 256-pixel side has
 * at most 256 lengths. So a worker that keeps each length's taps computes PIL's coefficients once per
 * length for as long as the output size stays, instead of once per job (about a tenth of the CPU of
 * 2-thread crops). Owned by one thread: no locking. Stores as many lengths as KEPT_TAPS_BUDGET allows;
 * the others are computed each time. */
#ifndef H5PACK_READER_AUGMENT_KEPT_TAPS_H
#define H5PACK_READER_AUGMENT_KEPT_TAPS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KEPT_TAPS_BUDGET ((size_t)2 << 20) /* bytes of taps per axis and planner */

typedef struct aug_kept_taps {
    uint32_t out, k;      /* the shape the kept taps are for: OUT (first, count) pairs, OUT x K weights */
    uint32_t lengths;     /* box lengths 1 .. lengths - 1 have a place in `at` */
    uint32_t used, room;  /* tap sets stored / allocated */
    uint32_t cap;         /* the most tap sets the budget allows */
    uint32_t *at;         /* per length: 1 + its tap set, 0: not kept */
    int32_t *pairs;       /* cap x out x 2, first indices relative to the box */
    float *w;             /* cap x out x k */
} aug_kept_taps;

/* Copies OUT taps of one axis, OUT (first, count) pairs and OUT x K weights, from FROM_PAIRS / FROM_W to
 * TO_PAIRS / TO_W, each first index moved by SHIFT (the same taps for a box SHIFT pixels further on). */
void h5pack_aug_shift_taps(const int32_t *from_pairs, const float *from_w, int32_t *to_pairs, float *to_w, uint32_t out,
                           uint32_t k, int32_t shift);

/* Points KT at taps of OUT outputs of K weights for boxes up to MAX_LENGTH long, forgetting what it kept
 * for another shape. 0, or -1 without memory (KT then keeps nothing and every lookup misses). */
int h5pack_kept_taps_shape(aug_kept_taps *kt, uint32_t out, uint32_t k, uint32_t max_length);

/* Writes the taps of a box LENGTH long at OFFSET into PAIRS / W when KT has them. 1 if so, else 0. */
int h5pack_kept_taps_get(const aug_kept_taps *kt, uint32_t length, uint32_t offset, int32_t *pairs, float *w);

/* Keeps PAIRS / W, the taps of a box LENGTH long at OFFSET, if there is room. */
void h5pack_kept_taps_put(aug_kept_taps *kt, uint32_t length, uint32_t offset, const int32_t *pairs,
                          const float *w);

void h5pack_kept_taps_free(aug_kept_taps *kt);

#ifdef __cplusplus
}
#endif

#endif
