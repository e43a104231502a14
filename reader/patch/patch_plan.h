/* patch_plan.h - the cache plan of patch reading: Belady (MIN) over the tile accesses of
 * patch_windows.h, epoch after epoch, with the next epoch's accesses in view.
 *
 * Definition: the cache holds `slots` tiles. For each access in order: a cached tile is a hit; else the
 * tile is loaded into a free slot, or into the slot of the cached tile whose next use is furthest away,
 * never one that the current batch or the batch before it uses (the reader assembles batch k while it
 * loads the tiles of batch k + 1: all of both are in the cache then). When every cached tile belongs to
 * those two batches, the cache grows by one slot (h5pack_patch_plan_slots says how many there are now).
 * A sliding window with a cache of one band of tiles (the tile rows one row of windows covers) plus a
 * batch's tiles therefore reads every tile once per epoch. Sequential and deterministic: the reader carries
 * it out batch by batch. */
#ifndef H5PACK_PATCH_PLAN_H
#define H5PACK_PATCH_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "patch_windows.h"

typedef struct patch_access {
    uint64_t tile;
    uint32_t slot;
    int load;           /* 1: read the tile into the slot; 0: it is there */
    int first_in_epoch; /* the tile's first access this epoch (its bytes count as needed) */
} patch_access;

typedef struct patch_planned {
    uint64_t epoch, index;
    size_t count;
    const int64_t *where;     /* count (image, y, x) triples */
    const patch_access *acc;  /* the batch's distinct tiles */
    size_t n_acc;
} patch_planned;

typedef struct patch_plan patch_plan;

/* SLOTS >= 1; EPOCHS 0 = endless (counted from epoch 0). The first batch planned is batch START_BATCH
 * (< batches per epoch) of epoch START_EPOCH, with an empty cache: a resumed run's patches are the
 * uninterrupted run's, only its hits differ. Returns 0 or H5PACK_ENOMEM. */
int h5pack_patch_plan_create(const patch_windows *w, size_t slots, uint64_t epochs, uint64_t start_epoch,
                             uint64_t start_batch, patch_plan **out);

/* The next batch's plan into *OUT (valid until the next call): 1, 0 after the last epoch, or ENOMEM. Memory
 * follows the slots and two epochs' accesses, not the file's tile count. */
int h5pack_patch_plan_next(patch_plan *p, patch_planned *out);

/* Slots the plan has filled so far: at most the request, unless one batch needed more. */
size_t h5pack_patch_plan_slots(const patch_plan *p);

void h5pack_patch_plan_free(patch_plan *p);

#endif
