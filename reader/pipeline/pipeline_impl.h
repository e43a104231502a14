/* pipeline_impl.h - state shared by the worker side (pipeline_schedule.c: planning and binding batches;
 * pipeline_work.c: loads and copies) and the consumer side and life cycle (pipeline.c). Internal.
 *
 * Batches ("tickets") go through: planned (in order, by one worker at a time, outside the lock) into an
 * entry of `depth` = prefetch + lookahead entries; bound (in order) to the backend's ring slot
 * ticket % prefetch once the consumer has released that slot's previous batch; filled; published;
 * delivered; released. Every chunk access of a batch is two steps:
 *   - its load, for a miss: reading the chunk into its cache slot. Loads run as soon as the cache allows
 *     (the slot's previous generation has no use left: cache.h), in plan order among those that can,
 *     also for batches planned ahead of the ring that have no buffer yet. So with slow storage every
 *     worker has a read in flight even when the ring is full (loading ahead into the slots Belady's plan
 *     frees; what is read, and which chunk each load evicts, is still exactly the plan).
 *   - its use: copying the batch's images out of the slot, once the batch is bound and the chunk loaded.
 *     Uses are claimed in plan order; one whose chunk is not loaded yet is parked on its cache slot, and
 *     the load moves it to the ready list when it finishes.
 * A worker never waits for the cache: it takes whatever step can run now (bind, ready use, next use, load,
 * plan), else sleeps on `work`, which every event that can make a step runnable signals. The earliest
 * unfinished step in plan order can always run (its load's previous users are earlier uses, its use's
 * load is earlier), so the pipeline cannot deadlock. One lock (`lock`) guards all of this state. The worker
 * finishing a batch's last use writes the labels, submits the batch to the backend and publishes it. */
#ifndef H5PACK_PIPELINE_IMPL_H
#define H5PACK_PIPELINE_IMPL_H

#include <pthread.h>
#include <stdatomic.h>

#include "cache.h"
#include "clock.h"
#include "pipeline.h"
#include "plan.h"
#include "token.h"

enum ring_state { RING_FREE, RING_FILLING, RING_READY, RING_DELIVERED };
enum load_state { LOAD_PENDING, LOAD_RUNNING, LOAD_DONE };

/* A use, named by its entry and access: entry index * batch_size + access index; ITEM_NONE ends a list. */
#define ITEM_NONE UINT64_MAX

/* h5pack_batch.token of a delivery (token.h): its ring slot is an entry of `depth`, so at most this many. */
#define PIPELINE_MAX_PREFETCH H5PACK_TOKEN_MAX_SLOTS

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
    int planned;            /* the plan is complete: its loads may run */
    int host_ready;         /* bound: host_in / host_labels fetched, its uses may be claimed */
    uint8_t *host_in;       /* the backend's uint8 input buffer of its ring slot */
    int64_t *host_labels;   /* the backend's label buffer of its ring slot */
    /* the batch's plan and its execution (under the lock) */
    plan_access *acc;       /* batch_size */
    uint64_t *wait_users;   /* per access: uses of the slot's previous generation to wait for */
    uint32_t *order;        /* batch positions grouped by access */
    uint32_t *group_start;  /* batch_size + 1: access j's positions are order[group_start[j] ..) */
    uint8_t *load_state;    /* per access: enum load_state (hits: LOAD_DONE) */
    uint64_t *next_item;    /* per access: link of its use in a parked list or the ready list */
    size_t n_acc, next_claim, n_done;
    size_t load_scan;       /* accesses before it have no pending load */
    size_t loads_pending;   /* loads not started */
    int rc;
    char err[384];
    batch_counts counts;
    /* consumer only */
    uint64_t token;         /* the consumer holds a delivered (echo of this) batch under this token; 0 = not */
    uint32_t echoes_delivered;
    int detached;           /* the delivery under `token` handed its memory over (h5pack_detach) */
} ring_entry;

/* A use a worker claimed before running it: with direct crops, each worker claims its next use while it
 * runs the one before, so that resampling the last image of one can prefetch the first of the next
 * (backend_prefetch.h). Its cache use (h5pack_cache_use) is made at once: the chunk, or the load's error. */
typedef struct claimed_use {
    struct ring_entry *e; /* NULL: none */
    size_t j;
    int in_hand;          /* the cache use was made: chunk, rc and err hold its answer (always, in `ahead`) */
    const uint8_t *chunk;
    int rc;
    char err[384];
} claimed_use;

typedef struct worker {
    pipeline *p;
    pthread_t thread;
    chunksrc_scratch *scratch;
    chunk_read_cost cost; /* running total of this worker's reads */
    float *crop_scratch;  /* one-pass crops: the resampling's scratch, grown to the largest job */
    size_t crop_scratch_floats;
    struct cpu_crop_memo *crop_memo; /* one-pass crops: the taps this worker planned (backend_convert.h) */
    claimed_use ahead;    /* one-pass crops: the use this worker runs next (this worker's alone) */
    chunksrc_scratch *mask_scratch; /* masks: reads of the mask chunks (made at the first) */
} worker;

typedef struct pipeline_masks pipeline_masks;

struct pipeline {
    pipeline_params pp;
    const source_geometry *geo;
    const uint8_t *labels;  /* N rows of label_bytes (int64 or float32 values), NULL without labels */
    size_t label_bytes;
    uint64_t total_batches; /* tickets to plan (the end of the configured epochs); 0 = endless */
    uint64_t batches_per_epoch;
    planner *plan;
    chunk_cache *cache;
    _Atomic int stop;
    pthread_mutex_t lock;
    pthread_cond_t work;  /* workers: a step may have become runnable, or stop */
    pthread_cond_t ready; /* consumer: a batch was published */
    ring_entry *ring;      /* `depth` entries: ticket t lives in ring[t % depth] */
    int depth;             /* prefetch + batches planned ahead of the ring */
    int *slot_busy;        /* per backend ring slot: bound to a batch the consumer has not released */
    uint64_t next_ticket;  /* next batch to plan */
    uint64_t bind_ticket;  /* next batch to bind */
    uint64_t claim_ticket; /* oldest bound batch that may have unclaimed uses */
    uint64_t load_ticket;  /* oldest planned batch that may have pending loads */
    uint64_t batches_done; /* published batches */
    uint64_t loads_pending; /* loads not started, over all planned batches */
    uint64_t loads_known;   /* workers plan ahead while fewer loads are pending: the threads, or the
                             * reads a store fetches ahead (store.h, reads_ahead) */
    int plan_failed;
    int planning;          /* a worker is planning a batch (outside the lock; one at a time) */
    int binding;           /* a worker is binding a batch (outside the lock; one at a time) */
    int n_waiting;         /* workers asleep on `work` */
    uint64_t *slot_loaded; /* per cache slot: newest generation whose load finished (0: none) */
    uint64_t *parked_head, *parked_tail; /* per cache slot: uses waiting for a load, in claim order */
    uint64_t ready_head, ready_tail;      /* uses whose chunk is loaded, in the order they became so */
    uint32_t *access_of;   /* planning scratch (the planning worker's): access index of each position */
    uint64_t *mark_ticket; /* planning scratch, per chunk: 1 + ticket that last indexed it */
    uint32_t *mark_access; /* planning scratch, per chunk: its access index in that batch */
    worker *workers;
    int n_started;
    const struct backend_conv *one_pass; /* the CPU one-pass path (uses convert into the output), or NULL */
    int one_pass_crops;       /* the CPU one-pass path with a resizing crop (uses resample into the output) */
    worker redo;            /* direct_crops: the consumer's reads and scratch when a batch must be redone */
    uint8_t *redo_chunk;    /* one chunk, read again for a redo */
    uint32_t *slot_dims;    /* images of several sizes: per backend ring slot, the stored sizes of its batch,
                               for planning crops (bind, submit, delivery and a redo happen one after the
                               other for one slot) */
    /* consumer side (consumer thread only) */
    uint64_t next_fresh;
    uint64_t token_tag;    /* this pipeline's tag, already shifted into place */
    uint64_t deliveries;   /* batches handed out (echoes included): numbers the tokens */
    int echo_slot; /* entry whose echoes are still due, or -1 */
    int failed;
    char failed_err[384];
    batch_counts delivered;
    uint64_t samples, batches_fresh, batches_echoed, epochs_completed;
    double stall_s;
    struct echo_state *sample; /* sample echo's consumer state (pipeline_echo.c), NULL for batch echo */
    pipeline_masks *masks;     /* the masks' buffers (pipeline_masks.c), NULL without masks */
    const backend_source *delivery_sources; /* the delivery being prepared: where its images come from
                                               (a composed sample-echo delivery), else NULL */
    /* Resume. Tickets number the planned batches from 0; a batch's position is epoch * batches_per_epoch
     * + index. Ticket t is position pos0 + t, except that positions [pos0 + prefill, pos0 + resume_g) are
     * never planned (the skipped part of the first epoch): from ticket `prefill` on, add resume_g - prefill.
     * The `prefill` batches are sample echo's pool (the first epoch's first E - 1 batches, which its last
     * groups read again): taken and pooled but never delivered. No resume: all 0, ticket = position. */
    uint64_t pos0, resume_g, prefill;
    uint64_t prefill_left;     /* consumer: prefill batches not yet pooled */
    uint32_t start_echo;       /* consumer: the echo of the first delivery, 0 once it is made */
    int nothing_left;          /* the start lies at or past the configured end: H5PACK_END at once */
};

/* The position (epoch * batches_per_epoch + index) of ticket T, and back. */
static inline uint64_t h5pack_pipeline_pos_of(const pipeline *p, uint64_t t)
{
    return p->pos0 + t + (t >= p->prefill ? p->resume_g - p->prefill : 0);
}

static inline uint64_t h5pack_pipeline_ticket_of(const pipeline *p, uint64_t epoch, uint64_t index)
{
    uint64_t pos = epoch * p->batches_per_epoch + index;
    return pos - p->pos0 - (pos >= p->pos0 + p->resume_g ? p->resume_g - p->prefill : 0);
}

static inline ring_entry *h5pack_pipeline_entry(const pipeline *p, uint64_t ticket)
{
    return &p->ring[ticket % (uint64_t)p->depth];
}

/* The backend ring slot of the batch in E. */
static inline int h5pack_pipeline_ring_slot(const pipeline *p, const ring_entry *e)
{
    return (int)(e->ticket % (uint64_t)p->pp.prefetch);
}

/* Wakes the sleeping workers (after anything that can make a step runnable). Lock held. */
static inline void h5pack_pipeline_wake(pipeline *p)
{
    if (p->n_waiting)
        pthread_cond_broadcast(&p->work);
}

/* Augmentation key of echo ECHO of the batch in E: (seed, epoch, index, echo) at global position rank * count. */
uint64_t h5pack_pipeline_batch_key(const pipeline *p, const ring_entry *e, uint32_t echo);

/* One-pass crops: when E's slot was planned at an output size its epoch no longer has
 * (h5pack_set_output_size after the plan), plans it again and resamples every image from its chunk,
 * read once more from the file (the cache may no longer hold it; the reads count in E's stats).
 * Consumer thread; rare: only batches prepared ahead across a size change. 0 or a negative code
 * (message in ERR). */
int h5pack_pipeline_redo_crops(pipeline *p, ring_entry *e, char *err, size_t err_len);

/* Images of several sizes: the stored (height, width) of the COUNT rows INDICES into SLOT's buffer (2 per
 * image), which it returns; NULL for images of one size. */
const uint32_t *h5pack_pipeline_sizes(const pipeline *p, int slot, const uint64_t *indices, size_t count);

/* cache_load_fn reading through the chunk source with the worker's scratch; a mapped source lends the
 * chunk's bytes (h5pack_chunksrc_map) instead of copying them into DST. */
int h5pack_pipeline_load_chunk(void *ctx, void *worker_state, uint64_t chunk, uint8_t *dst, const uint8_t **data, char *err,
                        size_t err_len);

/* pipeline_schedule.c, all called with the lock held (and returning with it held) */
int h5pack_pipeline_planning_done(const pipeline *p);
int h5pack_pipeline_can_schedule(const pipeline *p);
void h5pack_pipeline_schedule_batch(pipeline *p);
int h5pack_pipeline_can_bind(const pipeline *p);
void h5pack_pipeline_bind_batch(pipeline *p);

void *h5pack_pipeline_worker_main(void *arg);

/* The conversion the workers apply straight from the chunks (the CPU backend's one-pass path,
 * backend_convert.h), or NULL: a resizing crop (p->one_pass_crops then says whether the workers resample
 * instead) or the two-pass path: another backend, any echo, or the environment variable
 * H5PACK_TWO_PASS set to anything but "" or "0" (reader.c decides at open; tests and benches compare). */
const struct backend_conv *h5pack_pipeline_one_pass(const pipeline_params *pp);

/* pipeline_echo.c: the conversion of each delivery on the consumer side. */
int h5pack_pipeline_echo_start(pipeline *p);
void h5pack_pipeline_echo_free(pipeline *p);

/* Sample echo: H5PACK_ESTATE (with the batch to release in ERR) when a batch the next delivery reads
 * ahead would land in a slot the consumer still holds; else 0. Nothing is taken. */
int h5pack_pipeline_sample_check(pipeline *p, char *err, size_t err_len);

/* Sample echo, resume: keeps the prefill batch in ENTRY (taken, never delivered) in its pool entry. */
int h5pack_pipeline_pool_prefill(pipeline *p, int entry, char *err, size_t err_len);

/* Sample echo, resume at batch G of an epoch: how many of its first batches must be pooled first (the
 * pooled ones before G, when a composed group from G on reads them); 0 without sample echo. */
uint64_t h5pack_pipeline_prefill_count(const pipeline *p, uint64_t g);

/* Converts delivery ECHO of the batch in SLOT before it is handed out: an echo of batch echo, or any
 * delivery of sample echo (waits for the batches it reads ahead, pools, composes). A failure fails the
 * pipeline (p->failed) and returns its code with the message in ERR. Consumer thread. */
int h5pack_pipeline_prepare_delivery(pipeline *p, int entry, uint32_t echo, char *err, size_t err_len);

/* The file rows of SLOT's current delivery. */
const uint64_t *h5pack_pipeline_delivery_indices(const pipeline *p, int slot);

/* pipeline_masks.c (all no-ops without masks, but slot_bytes and load, which are only called with them
 * where masks matter). Bytes of one cache slot: the image chunk, then its mask chunk. */
uint64_t h5pack_pipeline_slot_bytes(const pipeline *p);
int h5pack_pipeline_masks_start(pipeline *p);
void h5pack_pipeline_masks_free(pipeline *p);
/* Worker: reads CHUNK's masks into the cache slot SLOT (after its image chunk). 0 or the read's error. */
int h5pack_pipeline_masks_load(pipeline *p, worker *w, uint64_t chunk, uint8_t *slot, char *err, size_t err_len);
/* Worker: copies the stored masks of the batch's samples in access J's chunk (CHUNK: the slot's bytes) into
 * the mask input of E's ring slot. */
void h5pack_pipeline_masks_copy_group(const pipeline *p, const ring_entry *e, size_t j, const uint8_t *chunk);
/* Consumer, sample echo: keeps ring slot SLOT's COUNT stored masks in pool entry ENTRY. */
void h5pack_pipeline_masks_pool_keep(const pipeline *p, int slot, size_t count, int entry);
/* Consumer: the masks of the delivery in ring slot SLOT, at BATCH's size with its boxes, into
 * batch->masks (SOURCES: p->delivery_sources). */
void h5pack_pipeline_masks_deliver(pipeline *p, int slot, const backend_source *sources, h5pack_batch *batch);

#endif
