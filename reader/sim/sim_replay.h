/* sim_replay.h - the replays behind h5pack_sim_run() (simulate.c): an access sequence from order.h over
 * a set of chunks (the file's own or what-if ones), under a cache policy. Nothing here touches the file:
 * the handle (sim_handle.c) learnt the stored sizes at open. */
#ifndef H5PACK_SIM_REPLAY_H
#define H5PACK_SIM_REPLAY_H

#include <stddef.h>
#include <stdint.h>

#include "h5pack_sim.h"
#include "order.h"

/* The chunks a replay runs on. */
typedef struct sim_space {
    uint64_t n_samples, image_bytes;
    uint64_t samples_per_chunk, n_chunks, chunk_bytes;
    const uint64_t *stored; /* stored bytes of each chunk, or NULL: the chunk's image bytes x stored_ratio */
    double stored_ratio;
    int contiguous;         /* HDF5 policy: an unchunked dataset, read through HDF5's data sieve */
    int filtered;           /* HDF5 policy: a filter pipeline (HDF5 decodes whole chunks) */
} sim_space;

/* Everything one replay needs. */
typedef struct sim_setup {
    order_params op;        /* op.samples_per_chunk == space.samples_per_chunk */
    uint64_t slots;         /* chunks the cache holds (the plan's capacity) */
    uint64_t epochs;
    sim_space space;
    h5pack_policy policy;
    uint64_t cache_bytes, hdf5_nslots; /* HDF5 policy */
    double hdf5_w0;
} sim_setup;

typedef struct sim_counts {
    uint64_t accesses, hits, misses, bytes_read, bytes_needed;
} sim_counts;

/* Stored bytes of CHUNK of SP. */
uint64_t h5pack_sim_stored_bytes(const sim_space *sp, uint64_t chunk);

/* Replays S and adds its counts to *C. Returns 0, H5PACK_EINVAL (unknown policy) or H5PACK_ENOMEM. */
int h5pack_sim_replay(const sim_setup *s, sim_counts *c);

#endif
