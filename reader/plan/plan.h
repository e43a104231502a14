/* plan.h - the clairvoyant cache plan: walks the chunk access sequence of order.h, epoch after epoch,
 * and decides for every access whether it hits a cached chunk or loads it into a slot, evicting the
 * cached chunk whose next use is furthest in the future (Belady / MIN: the fewest loads possible for
 * that sequence and cache size).
 *
 * Definition (the simulator and the tests depend on it):
 *   - capacity: `slots` chunks (>= 1). Free slots are filled lowest index first.
 *   - the next use of a cached chunk is looked up in the rest of the current epoch, then in the next
 *     epoch's sequence (the planner computes epoch e+1's order while in epoch e); a chunk used in
 *     neither counts as never used again. The victim is the cached chunk with the furthest next use;
 *     among chunks never used again, the one whose last use is earliest. That decides every hit and
 *     miss (the simulator's Belady counts are these).
 *   - the slot a load takes: the plan may evict, instead of that victim, any other cached chunk that
 *     the rule above evicts later in the epoch without using it in between (swapping the two eviction
 *     times changes no hit): it takes the one of them used longest ago, whose slot the reader's workers
 *     are the most likely to be done with when they load ahead. The slots are the plan's, not Belady's.
 *   - the loaded chunk always enters the cache (the access needs it), even if its next use is later
 *     than every cached chunk's.
 * The plan is sequential and deterministic; the reader executes it with many threads, which changes
 * when things happen, never what hits or misses.
 */
#ifndef H5PACK_PLAN_H
#define H5PACK_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "order.h"

typedef struct plan_access {
    uint64_t chunk;
    uint32_t slot;
    int load;             /* 1: miss, read the chunk into the slot; 0: hit */
    int first_in_epoch;   /* 1: the first access of this chunk in the current epoch (for bytes_needed) */
    uint64_t slot_gen;    /* generation of the slot's content this access uses (bumped by each load) */
    uint64_t evicted;     /* on a load into an occupied slot: the chunk it held, else UINT64_MAX */
} plan_access;

typedef struct planner planner;

/* EPOCHS = 0: endless. Returns 0, H5PACK_EINVAL or H5PACK_ENOMEM. */
int h5pack_planner_create(const order_params *op, size_t slots, uint64_t epochs, planner **out);

/* Where a resumed run's plan starts: epoch EPOCH, laid out from ORIGIN (h5pack_order_start; 0: the
 * epoch's own layout), and batches [SKIP_FROM, SKIP_TO) of that first epoch are neither planned nor
 * counted as uses (SKIP_TO < batches per epoch; SKIP_FROM = SKIP_TO: none). Later epochs are laid out
 * from origin 0. */
typedef struct plan_start {
    uint64_t epoch;
    int64_t origin;
    uint64_t skip_from, skip_to;
} plan_start;

/* The same plan for a resumed run: it starts at START with an empty cache (EPOCHS still counts from
 * epoch 0: past it, nothing is planned). The batches planned hold exactly the samples of the
 * uninterrupted run's (of a run with that layout); only hits and misses differ (the cache starts cold).
 * The cost is the order of two epochs, whatever START's epoch. */
int h5pack_planner_create_from(const order_params *op, size_t slots, uint64_t epochs, const plan_start *start,
                               planner **out);

/* h5pack_planner_create_from with origin 0. */
int h5pack_planner_create_at(const order_params *op, size_t slots, uint64_t epochs, uint64_t start_epoch,
                             uint64_t skip_from, uint64_t skip_to, planner **out);

/* Plans the next fresh batch: copies its samples (<= batch_size) to SAMPLES and its accesses (<= batch_size)
 * to ACC. Returns 1 when a batch was planned, 0 after the last epoch, or a negative error. Not thread-safe:
 * callers serialise. */
int h5pack_planner_next(planner *p, uint64_t *samples, size_t *count, plan_access *acc, size_t *n_acc, uint64_t *epoch,
                 uint64_t *batch_index);

void h5pack_planner_free(planner *p);

#endif
