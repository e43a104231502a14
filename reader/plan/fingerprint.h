/* fingerprint.h - what identifies a run's stream (docs/reader.md, "Exact resume" and "Distributed
 * training"): one 64-bit hash for every kind of stream, of everything the order and the draws depend on
 * but the split of the global batch, so that a checkpoint taken with other settings (or another
 * algorithm) fails the fingerprint check instead of resuming wrong, and one taken with another world
 * (or another global batch) passes it: the rest of its epoch continues in this run's layout (order.h).
 *
 * Hashed: the algorithm, the samples (N, samples per chunk, C, H, W: the largest for images of several
 * sizes, tiles, patches), seed, order, the order's window (CHUNK only), drop_last, echo, echo mode
 * (echo > 1 only), crop kind, scale and ratio ranges (random resized crop only), flip and padding; with
 * patches also their size, overlap, mode, draws per epoch, every image's size, world and batch size
 * (patches split each epoch by rank: they resume in the same world only). Not batch size and world for
 * whole images (a job compares those itself: the Python Loader does), rank, threads, cache (except
 * through a derived window), prefetch, device, dtype, normalisation or output size: ranks with
 * different machines agree, and a changed setting of that kind resumes fine. */
#ifndef H5PACK_PLAN_FINGERPRINT_H
#define H5PACK_PLAN_FINGERPRINT_H

#include <stdint.h>

#include "h5pack.h"

/* Bumped whenever the order, the echo schedule or the augmentation draws change for the same settings. */
#define H5PACK_ORDER_ALGORITHM 2 /* 2: global batches of the stream, arranged by slot; positional draws */

/* What the stream's samples are, as its kind knows them. */
typedef struct fingerprint_facts {
    uint64_t n_samples, samples_per_chunk;
    uint32_t channels, height, width;
    uint64_t window;  /* the order's window as resolved (hashed for the CHUNK order only) */
    uint64_t n_sizes; /* patches: images whose sizes size_of gives (0 for whole images) */
    void (*size_of)(const void *ctx, uint64_t i, uint32_t *height, uint32_t *width);
    const void *ctx;
} fingerprint_facts;

uint64_t h5pack_fingerprint(const h5pack_config *cfg, const fingerprint_facts *facts);

#endif
