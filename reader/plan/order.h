/* order.h - the sample order of every epoch, how its global batches are split among ranks, and the chunk
 * access sequence derived from it.
 *
 * This is the determinism contract of the reader: h5pack_open(), h5pack_simulate() and the tests all
 * derive what is read, and when, from these functions alone. Nothing here reads the thread count or the
 * cache size, so ranks with different machines, threads or caches share one global order.
 *
 * The stream of epoch e (order.c): N sample ids, a pure function of (file geometry, seed, epoch, order,
 * window), never of batch_size or world (N samples, chunks of k samples, n_chunks = ceil(N/k)):
 *   SEQUENTIAL  0, 1, ..., N-1.
 *   RANDOM      Fisher-Yates permutation of 0..N-1 drawn from rng(seed, e).
 *   CHUNK       the chunks in a random permutation; a window of W "active" chunks (the first W of
 *               the permutation); each step picks one active chunk uniformly at random and emits its
 *               next sample (samples inside a chunk are shuffled too); a chunk that runs out is
 *               replaced by the next chunk of the permutation, in the same window slot. Every chunk is
 *               active exactly once per epoch, so with a cache of >= W chunks it is read once per
 *               epoch. The default W (config window 0) is h5pack_order_default_window(): the file's
 *               geometry only. Each draw also names its slot (0 .. W-1); a chunk keeps its slot while open.
 *
 * Global batches (order_layout.c): G = batch_size * world samples, consecutive in the stream: global
 *   batch b holds stream positions [o + bG, o + (b+1)G), o the layout's origin (0 for an epoch delivered
 *   from its start; h5pack_order_start() gives a resumed epoch's). Within a global batch the samples are
 *   arranged by window slot (stable: stream order within a slot; the other orders keep stream order),
 *   and rank r takes the r-th run of batch_size of that arrangement. So the global batches (which
 *   samples, in which order, hence every draw keyed by a position in them) depend on G alone, not on how
 *   G is split into ranks, and a rank's share of each batch comes from about 1/world of the window's
 *   slots: each chunk is read by one rank, mostly (the locality contiguous slices of the epoch had).
 * Batches per epoch: ceil(N/G) (floor with drop_last), the same on every rank and for any split of G.
 *   The last global batch (unless drop_last) holds the stream's rest, R <= G samples, padded to
 *   world * ceil(R/world) by repeating the stream's first samples (as torch's DistributedSampler pads);
 *   the padding follows the real samples and so lands on the last ranks. Every rank gets
 *   ceil(N/world) samples per epoch (floor(N/G) * batch_size with drop_last), as DistributedSampler's.
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
    uint64_t batch_size;        /* >= 1; batch_size * world < 2^32 */
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

/* G = batch_size * world: the samples of one step of the whole job. */
uint64_t h5pack_order_global_batch(const order_params *p);

/* Samples this rank sees per epoch (after padding, and after dropping the short batch if drop_last). */
uint64_t h5pack_order_samples_per_epoch(const order_params *p);

/* Batches per epoch for this rank (equal on every rank). */
uint64_t h5pack_order_batches_per_epoch(const order_params *p);

/* Writes the stream of EPOCH (n_samples entries) into OUT and, when SLOTS is not NULL, the window slot of
 * each entry (CHUNK order; 0 for the others). Returns 0 or H5PACK_ENOMEM. */
int h5pack_order_stream(const order_params *p, uint64_t epoch, uint64_t *out, uint32_t *slots);

/* The stream alone (h5pack_order_stream without slots). */
int h5pack_order_global(const order_params *p, uint64_t epoch, uint64_t *out);

/* Writes this rank's samples of EPOCH (h5pack_order_samples_per_epoch entries) into OUT, batch after
 * batch. 0 or H5PACK_ENOMEM. */
int h5pack_order_epoch(const order_params *p, uint64_t epoch, uint64_t *out);

/* ---- resumed epochs: the rest of an epoch from a position of its stream ---------------------------- */

/* Where an epoch resumed at stream position SAMPLE (0 <= SAMPLE <= N: the stream's first SAMPLE samples
 * were delivered, by any split of any global batch) starts with this G: its rest is laid out in global
 * batches of G from SAMPLE on, numbered so that the last is the epoch's last (batch index
 * batches_per_epoch - 1): *BATCH is the first one's index, *ORIGIN the layout's origin
 * (SAMPLE - *BATCH * G; the batches before *BATCH hold what the origin puts there, positions outside
 * 0 .. N-1 wrapping around, and only sample echo's pool reads them). With SAMPLE = b * G the layout is
 * the epoch's own from batch b (origin 0). Returns 0, 1 when nothing of the epoch is left at SAMPLE (with
 * drop_last: fewer than G samples), or H5PACK_EINVAL (SAMPLE > N). */
int h5pack_order_start(const order_params *p, uint64_t sample, uint64_t *batch, int64_t *origin);

/* The samples this rank gets in batch B of a layout with ORIGIN: batch_size, but the last batch's
 * ceil(R / world), R the stream's real samples in it (batch_size with drop_last). */
uint64_t h5pack_order_batch_count(const order_params *p, int64_t origin, uint64_t b);

/* Real (unpadded) samples of the last global batch of a layout with ORIGIN: G with drop_last. */
uint64_t h5pack_order_last_real(const order_params *p, int64_t origin);

/* h5pack_order_epoch for a layout with ORIGIN (from h5pack_order_start; 0: the epoch's own): every batch
 * of the epoch, its count from h5pack_order_batch_count, into OUT (room for batches_per_epoch *
 * batch_size); the total to *COUNT. 0, H5PACK_EINVAL (an origin no start gives) or H5PACK_ENOMEM. */
int h5pack_order_epoch_at(const order_params *p, uint64_t epoch, int64_t origin, uint64_t *out, uint64_t *count);

/* h5pack_order_epoch_at building only batches [0, KEEP) and [FROM, end): the others (a resumed run skips
 * them) hold some sample of the epoch. What a resume costs then shrinks with its position. */
int h5pack_order_epoch_part(const order_params *p, uint64_t epoch, int64_t origin, uint64_t keep, uint64_t from,
                            uint64_t *out, uint64_t *count);

/* Chunk accesses of a rank's epoch whose samples are SAMPLES[0..n): writes the chunk of each access to
 * ACC (room for n entries) and, for each batch b, the index of its first access to BATCH_START[b]
 * (room for h5pack_order_batches_per_epoch + 1 entries; the last entry is the total). Returns the number of
 * accesses, or 0 on ENOMEM. */
uint64_t h5pack_order_accesses(const order_params *p, const uint64_t *samples, uint64_t n, uint64_t *acc,
                        uint64_t *batch_start);

/* h5pack_order_accesses with batches [KEEP, FROM) left empty (those h5pack_order_epoch_part skips). */
uint64_t h5pack_order_accesses_part(const order_params *p, const uint64_t *samples, uint64_t n, uint64_t keep,
                                    uint64_t from, uint64_t *acc, uint64_t *batch_start);

#endif
