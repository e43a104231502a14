/* order.h - the sample order of every epoch, and the chunk access sequence derived from it.
 *
 * This is the determinism contract of the reader: h5pack_open(), h5pack_simulate() and the tests all
 * derive what is read, and when, from these functions alone. The order of an epoch is a pure function
 * of (file geometry, seed, epoch, order, window, world) (and drop_last for the padding): nothing here
 * reads the thread count or the cache size, so ranks with different machines, threads or caches still
 * share one global order and get disjoint shares.
 *
 * Global order of epoch e (N samples, chunks of k samples, n_chunks = ceil(N/k)):
 *   SEQUENTIAL  0, 1, ..., N-1.
 *   RANDOM      Fisher-Yates permutation of 0..N-1 drawn from rng(seed, e).
 *   CHUNK       the chunks in a random permutation; a window of W "active" chunks (the first W of
 *               the permutation); each step picks one active chunk uniformly at random and emits its
 *               next sample (samples inside a chunk are shuffled too); a chunk that runs out is
 *               replaced by the next chunk of the permutation. Every chunk is active exactly once per
 *               epoch, so with a cache of >= W chunks it is read once per epoch. The default W
 *               (config window 0) is h5pack_order_default_window(): the file's geometry only.
 * Ranks: per_rank = ceil(N/world) (floor with drop_last); the global order is padded by repeating its
 *   first samples up to per_rank*world (as torch's DistributedSampler does), and rank r takes the
 *   contiguous slice [r*per_rank, (r+1)*per_rank). Contiguous slices keep each rank on its own chunks.
 * Batches: consecutive runs of batch_size samples of the rank's slice; the last may be short, unless
 *   drop_last, which drops it.
 *
 * Chunk accesses ("uses"): for each batch, the distinct chunks its samples live in, in the order of
 * their first sample in the batch. The cache, its Belady plan and the simulator all count hits and
 * misses over this sequence; an echoed batch makes no accesses.
 */
#ifndef H5PACK_ORDER_H
#define H5PACK_ORDER_H

#include <stddef.h>
#include <stdint.h>

#include "h5pack.h"

typedef struct order_params {
    h5pack_order kind;
    uint64_t n_samples;         /* N >= 1 */
    uint64_t samples_per_chunk; /* k >= 1 */
    uint64_t window;            /* W >= 1 (CHUNK order only; clamped to n_chunks) */
    uint64_t seed;
    uint32_t rank, world;       /* rank < world, world >= 1 */
    int drop_last;
    uint64_t batch_size;        /* >= 1 */
} order_params;

/* The CHUNK order's default window: a fixed byte budget of chunks, at least a few chunks, at most all:
 *   W = min(n_chunks, max(H5PACK_WINDOW_MIN_CHUNKS, H5PACK_WINDOW_BYTES / chunk_bytes))
 * 256 MiB is about 1,800 224x224 images (128 chunks of 2 MiB, the converter's target): a batch of 256
 * draws about 2 samples per chunk, and the window fits the default 1 GiB cache with room for the chunks
 * being read. Chunks over 16 MiB get 16 of them (fewer would make every batch come from a handful of
 * chunks). A function of the file alone, never of threads or cache: every rank derives the same W.
 * The reader and the simulator both take it from here (through h5pack_reader_resolve_setup). */
#define H5PACK_WINDOW_BYTES ((uint64_t)256 << 20)
#define H5PACK_WINDOW_MIN_CHUNKS 16
uint64_t h5pack_order_default_window(uint64_t n_chunks, uint64_t chunk_bytes);

/* 0 when the parameters are usable, else H5PACK_EINVAL. */
int h5pack_order_check(const order_params *p);

uint64_t h5pack_order_n_chunks(const order_params *p);

/* Samples this rank sees per epoch (after padding, and after dropping the short batch if drop_last). */
uint64_t h5pack_order_samples_per_epoch(const order_params *p);

/* Batches per epoch for this rank (equal on every rank). */
uint64_t h5pack_order_batches_per_epoch(const order_params *p);

/* Writes the global order of EPOCH (n_samples entries) into OUT. Returns 0 or H5PACK_ENOMEM. */
int h5pack_order_global(const order_params *p, uint64_t epoch, uint64_t *out);

/* Writes this rank's samples of EPOCH (h5pack_order_samples_per_epoch entries) into OUT. 0 or H5PACK_ENOMEM. */
int h5pack_order_epoch(const order_params *p, uint64_t epoch, uint64_t *out);

/* Chunk accesses of a rank's epoch whose samples are SAMPLES[0..n): writes the chunk of each access to
 * ACC (room for n entries) and, for each batch b, the index of its first access to BATCH_START[b]
 * (room for h5pack_order_batches_per_epoch + 1 entries; the last entry is the total). Returns the number of
 * accesses, or 0 on ENOMEM. */
uint64_t h5pack_order_accesses(const order_params *p, const uint64_t *samples, uint64_t n, uint64_t *acc,
                        uint64_t *batch_start);

#endif
