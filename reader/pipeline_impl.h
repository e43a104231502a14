/* pipeline_impl.h - state shared by the worker side (pipeline_work.c) and the consumer side and life
 * cycle (pipeline.c) of the reader's pipeline. Internal.
 *
 * One lock (`lock`) guards the ring states and the claiming of accesses; the planner is used by one
 * worker at a time (`planning`), outside the lock. Work is shared at the level of chunk accesses:
 * batches are planned in order into ring slots, and any worker claims the next unclaimed access of the
 * oldest batch that has one, so accesses are claimed in plan order across all batches. A worker executes one access at a time (h5pack_cache_acquire + copying its images into
 * the batch) outside the lock; it can only wait for accesses claimed before its own, the earliest
 * unfinished access never waits, so the pipeline cannot deadlock. The worker finishing a batch's last
 * access writes the labels, submits the batch to the backend and publishes it. */
#ifndef H5PACK_PIPELINE_IMPL_H
#define H5PACK_PIPELINE_IMPL_H

#include <pthread.h>
#include <stdatomic.h>

#include "cache.h"
#include "clock.h"
#include "pipeline.h"
#include "plan.h"

enum ring_state { RING_FREE, RING_FILLING, RING_READY, RING_DELIVERED };

/* h5pack_batch.token of a delivery: reader tag (16 bits, never 0) | delivery number (38) | ring slot (10).
 * The slot makes release O(1); the delivery number makes a stale copy of an earlier batch in the same slot
 * fail to match; the tag, drawn per pipeline, makes another reader's batch recognisable. */
#define PIPELINE_TOKEN_SLOT_BITS 10
#define PIPELINE_TOKEN_TAG_SHIFT 48
#define PIPELINE_MAX_PREFETCH (1 << PIPELINE_TOKEN_SLOT_BITS)

/* What one fresh batch cost; added to the stats when the consumer receives it. */
typedef struct batch_counts {
    uint64_t hits, misses, bytes_read, bytes_inflated, bytes_needed;
    double read_s, inflate_s, assemble_s;
} batch_counts;

typedef struct ring_entry {
    int state;
    uint64_t ticket; /* fresh batch number since open */
    uint64_t epoch, index;
    size_t count;
    uint64_t *indices;      /* batch_size samples */
    int host_ready;         /* host_in / host_labels fetched for this batch: its accesses may be claimed */
    uint8_t *host_in;       /* the backend's uint8 input buffer of this slot (host_input, per batch) */
    int64_t *host_labels;   /* the backend's label buffer of this slot (host_labels, per batch) */
    /* the batch's plan and its execution (under the lock) */
    plan_access *acc;       /* batch_size */
    uint64_t *wait_users;   /* per access: uses of the slot's previous generation to wait for */
    uint32_t *order;        /* batch positions grouped by access */
    uint32_t *group_start;  /* batch_size + 1: access j's positions are order[group_start[j] ..) */
    size_t n_acc, next_claim, n_done;
    int rc;
    char err[384];
    batch_counts counts;
    /* consumer only */
    uint64_t token;         /* the consumer holds a delivered (echo of this) batch under this token; 0 = not */
    uint32_t echoes_delivered;
} ring_entry;

typedef struct worker {
    pipeline *p;
    pthread_t thread;
    chunksrc_scratch *scratch;
    chunk_read_cost cost; /* running total of this worker's reads */
} worker;

struct pipeline {
    pipeline_params pp;
    const source_geometry *geo;
    const int64_t *labels;
    uint64_t total_batches; /* 0 = endless */
    uint64_t batches_per_epoch;
    planner *plan;
    chunk_cache *cache;
    _Atomic int stop;
    pthread_mutex_t lock;
    pthread_cond_t work;  /* workers: accesses to claim, a free ring slot, or stop */
    pthread_cond_t ready; /* consumer: a batch was published */
    ring_entry *ring;
    uint64_t next_ticket;  /* next batch to plan */
    uint64_t claim_ticket; /* oldest batch that may have unclaimed accesses */
    int plan_failed;
    int planning;          /* a worker is planning a batch (outside the lock; one at a time) */
    uint32_t *access_of;   /* planning scratch (the planning worker's): access index of each position */
    uint64_t *mark_ticket; /* planning scratch, per chunk: 1 + ticket that last indexed it */
    uint32_t *mark_access; /* planning scratch, per chunk: its access index in that batch */
    worker *workers;
    int n_started;
    /* consumer side (consumer thread only) */
    uint64_t next_fresh;
    uint64_t token_tag;    /* this pipeline's tag, already shifted into place */
    uint64_t deliveries;   /* batches handed out (echoes included): numbers the tokens */
    int echo_slot; /* slot whose echoes are still due, or -1 */
    int failed;
    char failed_err[384];
    batch_counts delivered;
    uint64_t samples, batches_fresh, batches_echoed, epochs_completed;
    double stall_s;
};

/* Augmentation key of echo ECHO of the batch in E: (seed, epoch, index * world + rank, echo). */
uint64_t h5pack_pipeline_batch_key(const pipeline *p, const ring_entry *e, uint32_t echo);

/* cache_load_fn reading through the chunk source with the worker's scratch; a mapped source lends the
 * chunk's bytes (h5pack_chunksrc_map) instead of copying them into DST. */
int h5pack_pipeline_load_chunk(void *ctx, void *worker_state, uint64_t chunk, uint8_t *dst, const uint8_t **data, char *err,
                        size_t err_len);

void *h5pack_pipeline_worker_main(void *arg);

#endif
