/* pipeline.c - workers, ring and consumer side of the reader (design in pipeline.h). */
#include "pipeline.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "augment.h"
#include "cache.h"
#include "plan.h"

enum ring_state { RING_FREE, RING_FILLING, RING_READY, RING_DELIVERED };

/* What one fresh batch cost; added to the stats when the consumer receives it. */
typedef struct batch_counts {
    uint64_t hits, misses, bytes_read, bytes_inflated, bytes_needed;
    double read_s, inflate_s, assemble_s;
} batch_counts;

typedef struct ring_entry {
    int state;
    int held;         /* the consumer holds a delivered (echo of this) batch */
    uint64_t ticket;  /* fresh batch number since open */
    uint64_t epoch, index;
    size_t count;
    uint32_t echoes_delivered;
    int rc;
    char err[384];
    uint64_t *indices; /* batch_size samples */
    batch_counts counts;
} ring_entry;

typedef struct worker {
    pipeline *p;
    pthread_t thread;
    chunksrc_scratch *scratch;
    chunk_read_cost cost;  /* running total of this worker's reads */
    plan_access *acc;      /* batch_size */
    uint64_t *wait_users;  /* batch_size */
    uint32_t *order;       /* batch positions grouped by access */
    uint32_t *group_start; /* batch_size + 1 */
    uint32_t *access_of;   /* access index of each batch position */
    uint8_t *done;         /* per access of the batch: executed */
    uint64_t *mark_ticket; /* per chunk: 1 + ticket of the batch that last indexed it */
    uint32_t *mark_access; /* per chunk: its access index in that batch */
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
    /* planning: tickets are handed out and planned in order under plan_lock */
    pthread_mutex_t plan_lock;
    uint64_t next_ticket;
    int plan_failed;
    /* ring */
    pthread_mutex_t ring_lock;
    pthread_cond_t ring_free, ring_ready;
    ring_entry *ring;
    worker *workers;
    int n_started;
    /* consumer side (consumer thread only) */
    uint64_t next_fresh;
    int echo_slot;          /* slot whose echoes are still due, or -1 */
    int failed;
    char failed_err[384];
    batch_counts delivered;
    uint64_t samples, batches_fresh, batches_echoed, epochs_completed;
    double stall_s;
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- worker: claim a ring slot and plan the next batch ------------------------------------------ */

/* Waits until ring slot SLOT is free and claims it for TICKET. 0 on success, -1 when stopping. */
static int claim_slot(pipeline *p, int slot, uint64_t ticket)
{
    ring_entry *e = &p->ring[slot];
    pthread_mutex_lock(&p->ring_lock);
    while (!atomic_load(&p->stop) && e->state != RING_FREE)
        pthread_cond_wait(&p->ring_free, &p->ring_lock);
    int ok = !atomic_load(&p->stop);
    if (ok) {
        e->state = RING_FILLING;
        e->ticket = ticket;
        e->rc = 0;
        e->err[0] = '\0';
        memset(&e->counts, 0, sizeof e->counts);
    }
    pthread_mutex_unlock(&p->ring_lock);
    return ok ? 0 : -1;
}

/* Plan-order bookkeeping of one planned batch: cache generations and the plan's counters. */
static void note_planned(pipeline *p, worker *w, ring_entry *e, size_t n_acc)
{
    for (size_t j = 0; j < n_acc; j++) {
        const plan_access *a = &w->acc[j];
        w->wait_users[j] = cache_planned(p->cache, a);
        if (a->load)
            e->counts.misses++;
        else
            e->counts.hits++;
        if (a->first_in_epoch)
            e->counts.bytes_needed += chunksrc_stored_bytes(p->pp.src, a->chunk);
    }
}

/* Takes the next ticket, claims its slot and plans it. Returns the slot, -1 when there is nothing
 * (more) to do, or -2 - slot when planning failed (the error is in the entry). */
static int take_batch(pipeline *p, worker *w, size_t *n_acc)
{
    pthread_mutex_lock(&p->plan_lock);
    int slot = -1;
    uint64_t t = p->next_ticket;
    if (p->plan_failed || (p->total_batches && t >= p->total_batches))
        goto done;
    slot = (int)(t % (uint64_t)p->pp.prefetch);
    if (claim_slot(p, slot, t) < 0) {
        slot = -1;
        goto done;
    }
    ring_entry *e = &p->ring[slot];
    int rc = planner_next(p->plan, e->indices, &e->count, w->acc, n_acc, &e->epoch, &e->index);
    p->next_ticket++;
    if (rc == 1) {
        note_planned(p, w, e, *n_acc);
    } else {
        p->plan_failed = 1;
        e->rc = rc < 0 ? rc : H5PACK_EINTERNAL;
        snprintf(e->err, sizeof e->err, "planning batch %llu failed: %s", (unsigned long long)t,
                 h5pack_strerror(e->rc));
        slot = -2 - slot;
    }
done:
    pthread_mutex_unlock(&p->plan_lock);
    return slot;
}

/* ---- worker: execute the plan and assemble the uint8 batch -------------------------------------- */

/* Groups the batch positions by the access (chunk) they need: order[group_start[j] .. group_start[j+1]). */
static void group_by_access(pipeline *p, worker *w, const ring_entry *e, size_t n_acc)
{
    uint64_t k = p->geo->samples_per_chunk, stamp = e->ticket + 1;
    for (size_t j = 0; j < n_acc; j++) {
        w->mark_ticket[w->acc[j].chunk] = stamp;
        w->mark_access[w->acc[j].chunk] = (uint32_t)j;
        w->group_start[j] = 0;
    }
    w->group_start[n_acc] = 0;
    for (size_t i = 0; i < e->count; i++) {
        uint64_t c = e->indices[i] / k;
        w->access_of[i] = w->mark_ticket[c] == stamp ? w->mark_access[c] : 0;
        w->group_start[w->access_of[i] + 1]++;
    }
    for (size_t j = 0; j < n_acc; j++)
        w->group_start[j + 1] += w->group_start[j];
    for (size_t i = 0; i < e->count; i++)
        w->order[w->group_start[w->access_of[i]]++] = (uint32_t)i;
    for (size_t j = n_acc; j > 0; j--) /* undo the shift made by the placement pass */
        w->group_start[j] = w->group_start[j - 1];
    w->group_start[0] = 0;
}

/* Copies the batch's images that live in access J's chunk from the cache slot into the batch. */
static void copy_group(pipeline *p, worker *w, const ring_entry *e, size_t j, const uint8_t *chunk, uint8_t *dst)
{
    uint64_t k = p->geo->samples_per_chunk, img = p->geo->image_bytes, first = w->acc[j].chunk * k;
    for (uint32_t g = w->group_start[j]; g < w->group_start[j + 1]; g++) {
        uint32_t pos = w->order[g];
        memcpy(dst + (size_t)pos * img, chunk + (size_t)(e->indices[pos] - first) * img, (size_t)img);
    }
}

/* Executes access J (waits only when TRY_ONLY is 0) and copies its images. */
static int run_access(pipeline *p, worker *w, ring_entry *e, size_t j, uint8_t *dst, int try_only)
{
    const uint8_t *chunk = NULL;
    int rc = cache_acquire(p->cache, &w->acc[j], w->wait_users[j], try_only, w, &chunk, e->err, sizeof e->err);
    if (rc == CACHE_WOULD_WAIT)
        return rc;
    if (rc == 0) {
        double t0 = now_s();
        copy_group(p, w, e, j, chunk, dst);
        e->counts.assemble_s += now_s() - t0;
    }
    cache_finish(p->cache, w->acc[j].slot);
    return rc;
}

/* Runs the accesses of the batch that can go ahead at once, HITS_ONLY or all; marks them done. */
static int try_accesses(pipeline *p, worker *w, ring_entry *e, size_t n_acc, uint8_t *dst, int hits_only)
{
    for (size_t j = 0; j < n_acc; j++) {
        if (w->done[j] || (hits_only && w->acc[j].load))
            continue;
        int rc = run_access(p, w, e, j, dst, 1);
        if (rc == CACHE_WOULD_WAIT)
            continue;
        if (rc)
            return rc;
        w->done[j] = 1;
    }
    return 0;
}

/* Order of work inside a batch: first the hits on chunks already loaded (cheap copies: they finish the
 * last uses of old chunks, which frees slots that other workers are waiting to load into), then the
 * loads that need no wait, then everything left in plan order, waiting. A worker only waits for
 * accesses planned before its own, so this cannot deadlock. On an error the rest is abandoned: the
 * consumer stops at this batch, and whatever waits on it is woken at close. */
static int assemble(pipeline *p, worker *w, ring_entry *e, int slot, size_t n_acc)
{
    uint8_t *dst = p->pp.be->ops->host_input(p->pp.be, slot);
    group_by_access(p, w, e, n_acc);
    memset(w->done, 0, n_acc);
    int rc = try_accesses(p, w, e, n_acc, dst, 1);
    if (rc == 0)
        rc = try_accesses(p, w, e, n_acc, dst, 0);
    for (size_t j = 0; rc == 0 && j < n_acc; j++)
        if (!w->done[j])
            rc = run_access(p, w, e, j, dst, 0);
    if (rc)
        return rc;
    if (p->labels) {
        int64_t *labels = p->pp.be->ops->host_labels(p->pp.be, slot);
        for (size_t i = 0; i < e->count; i++)
            labels[i] = p->labels[e->indices[i]];
    }
    return 0;
}

/* Augmentation key of a batch: the global batch number (index * world + rank), so ranks draw differently. */
static uint64_t batch_key(const pipeline *p, const ring_entry *e, uint32_t echo)
{
    const order_params *op = &p->pp.setup.op;
    return aug_batch_key(op->seed, e->epoch, e->index * op->world + op->rank, echo);
}

static int fill_batch(pipeline *p, worker *w, int slot, size_t n_acc)
{
    ring_entry *e = &p->ring[slot];
    chunk_read_cost before = w->cost;
    int rc = assemble(p, w, e, slot, n_acc);
    e->counts.bytes_read = w->cost.bytes_read - before.bytes_read;
    e->counts.bytes_inflated = w->cost.bytes_inflated - before.bytes_inflated;
    e->counts.read_s = w->cost.read_s - before.read_s;
    e->counts.inflate_s = w->cost.inflate_s - before.inflate_s;
    if (rc == 0) {
        rc = p->pp.be->ops->submit(p->pp.be, slot, e->count, batch_key(p, e, 0));
        if (rc)
            snprintf(e->err, sizeof e->err, "converting batch %llu of epoch %llu failed: %s",
                     (unsigned long long)e->index, (unsigned long long)e->epoch, h5pack_strerror(rc));
    }
    return rc;
}

static void publish(pipeline *p, int slot, int rc)
{
    pthread_mutex_lock(&p->ring_lock);
    p->ring[slot].rc = rc;
    p->ring[slot].state = RING_READY;
    pthread_cond_broadcast(&p->ring_ready);
    pthread_mutex_unlock(&p->ring_lock);
}

static int load_chunk(void *ctx, void *worker_state, uint64_t chunk, uint8_t *dst, char *err, size_t err_len)
{
    pipeline *p = ctx;
    worker *w = worker_state;
    return chunksrc_read(p->pp.src, chunk, dst, w->scratch, &w->cost, err, err_len);
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    pipeline *p = w->p;
    for (;;) {
        size_t n_acc = 0;
        int slot = take_batch(p, w, &n_acc);
        if (slot == -1)
            break;
        if (slot <= -2) {
            publish(p, -2 - slot, p->ring[-2 - slot].rc);
            break;
        }
        publish(p, slot, fill_batch(p, w, slot, n_acc));
    }
    return NULL;
}

/* ---- consumer ------------------------------------------------------------------------------------ */

/* Waits for fresh batch TICKET in SLOT; adds the time to the stall. Returns 0, or -1 when stopping. */
static int wait_ready(pipeline *p, int slot, uint64_t ticket)
{
    ring_entry *e = &p->ring[slot];
    pthread_mutex_lock(&p->ring_lock);
    if (!(e->state == RING_READY && e->ticket == ticket)) {
        double t0 = now_s();
        while (!atomic_load(&p->stop) && !(e->state == RING_READY && e->ticket == ticket))
            pthread_cond_wait(&p->ring_ready, &p->ring_lock);
        p->stall_s += now_s() - t0;
    }
    int ok = e->state == RING_READY && e->ticket == ticket;
    if (ok)
        e->state = RING_DELIVERED;
    pthread_mutex_unlock(&p->ring_lock);
    return ok ? 0 : -1;
}

static void add_counts(batch_counts *to, const batch_counts *c)
{
    to->hits += c->hits, to->misses += c->misses, to->bytes_read += c->bytes_read;
    to->bytes_inflated += c->bytes_inflated, to->bytes_needed += c->bytes_needed;
    to->read_s += c->read_s, to->inflate_s += c->inflate_s, to->assemble_s += c->assemble_s;
}

static int fail(pipeline *p, int rc, const char *msg, char *err, size_t err_len)
{
    p->failed = rc;
    snprintf(p->failed_err, sizeof p->failed_err, "%s", msg);
    snprintf(err, err_len, "%s", msg);
    return rc;
}

/* Hands out echo ECHO of the batch in SLOT (already converted for it). */
static int deliver(pipeline *p, int slot, uint32_t echo, h5pack_batch *batch, char *err, size_t err_len)
{
    ring_entry *e = &p->ring[slot];
    memset(batch, 0, sizeof *batch);
    int rc = p->pp.be->ops->output(p->pp.be, slot, e->count, batch);
    if (rc)
        return fail(p, rc, "the backend could not hand out the batch", err, err_len);
    if (!p->labels)
        batch->labels = NULL, batch->labels_device = NULL;
    batch->indices = e->indices;
    batch->count = e->count;
    batch->epoch = e->epoch;
    batch->index = e->index;
    batch->echo = echo;
    batch->slot_ = slot;
    e->held = 1;
    e->echoes_delivered = echo + 1;
    p->samples += e->count;
    if (echo + 1 == p->pp.echo && e->index + 1 == p->batches_per_epoch)
        p->epochs_completed++;
    p->echo_slot = echo + 1 < p->pp.echo ? slot : -1;
    return H5PACK_OK;
}

static int next_echo(pipeline *p, h5pack_batch *batch, char *err, size_t err_len)
{
    int slot = p->echo_slot;
    ring_entry *e = &p->ring[slot];
    if (e->held) {
        snprintf(err, err_len, "release the batch before asking for its echo (echo > 1 reuses its buffers)");
        return H5PACK_ESTATE;
    }
    int rc = p->pp.be->ops->resubmit(p->pp.be, slot, e->count, batch_key(p, e, e->echoes_delivered));
    if (rc)
        return fail(p, rc, "converting an echoed batch failed", err, err_len);
    p->batches_echoed++;
    return deliver(p, slot, e->echoes_delivered, batch, err, err_len);
}

int pipeline_next(pipeline *p, h5pack_batch *batch, char *err, size_t err_len)
{
    if (p->failed) {
        snprintf(err, err_len, "%s", p->failed_err);
        return p->failed;
    }
    if (p->echo_slot >= 0)
        return next_echo(p, batch, err, err_len);
    if (p->total_batches && p->next_fresh >= p->total_batches)
        return H5PACK_END;
    int slot = (int)(p->next_fresh % (uint64_t)p->pp.prefetch);
    if (p->ring[slot].held) { /* its slot still holds a batch the consumer has not released */
        snprintf(err, err_len, "%d batches are unreleased: release one before asking for more (prefetch = %d)",
                 p->pp.prefetch, p->pp.prefetch);
        return H5PACK_ESTATE;
    }
    if (wait_ready(p, slot, p->next_fresh) < 0)
        return fail(p, H5PACK_ESTATE, "the reader is shutting down", err, err_len);
    ring_entry *e = &p->ring[slot];
    if (e->rc < 0)
        return fail(p, e->rc, e->err, err, err_len);
    p->next_fresh++;
    p->batches_fresh++;
    add_counts(&p->delivered, &e->counts);
    return deliver(p, slot, 0, batch, err, err_len);
}

int pipeline_release(pipeline *p, h5pack_batch *batch, char *err, size_t err_len)
{
    int slot = batch ? batch->slot_ : -1;
    if (slot < 0 || slot >= p->pp.prefetch || !p->ring[slot].held) {
        snprintf(err, err_len, "release of a batch that is not held (released twice, or not from this reader)");
        return H5PACK_ESTATE;
    }
    ring_entry *e = &p->ring[slot];
    e->held = 0;
    int rc = p->pp.be->ops->release(p->pp.be, slot);
    batch->slot_ = -1;
    if (e->echoes_delivered < p->pp.echo)
        return rc; /* more echoes of this batch to come: the slot stays ours */
    pthread_mutex_lock(&p->ring_lock);
    e->state = RING_FREE;
    pthread_cond_broadcast(&p->ring_free);
    pthread_mutex_unlock(&p->ring_lock);
    if (rc)
        snprintf(err, err_len, "the backend could not release the batch");
    return rc;
}

void pipeline_stats(pipeline *p, h5pack_stats *st)
{
    const batch_counts *c = &p->delivered;
    st->samples = p->samples;
    st->batches_fresh = p->batches_fresh;
    st->batches_echoed = p->batches_echoed;
    st->batches = p->batches_fresh + p->batches_echoed;
    st->epochs_completed = p->epochs_completed;
    st->chunk_hits = c->hits, st->chunk_misses = c->misses;
    st->bytes_read = c->bytes_read, st->bytes_inflated = c->bytes_inflated, st->bytes_needed = c->bytes_needed;
    st->busy_read_s = c->read_s, st->busy_inflate_s = c->inflate_s, st->busy_assemble_s = c->assemble_s;
    st->stall_s = p->stall_s;
    p->pp.be->ops->times(p->pp.be, &st->busy_convert_s, &st->busy_copy_s, &st->device_bytes);
    st->cache_bytes_used = (uint64_t)cache_slot_count(p->cache) * p->geo->chunk_bytes;
}

/* ---- life cycle ---------------------------------------------------------------------------------- */

static int worker_init(pipeline *p, worker *w)
{
    size_t bs = p->pp.setup.op.batch_size, nc = (size_t)p->geo->n_chunks;
    w->p = p;
    w->scratch = chunksrc_scratch_new(p->pp.src);
    w->acc = malloc(bs * sizeof *w->acc);
    w->wait_users = malloc(bs * sizeof *w->wait_users);
    w->order = malloc(bs * sizeof *w->order);
    w->group_start = malloc((bs + 1) * sizeof *w->group_start);
    w->access_of = malloc(bs * sizeof *w->access_of);
    w->done = malloc(bs);
    w->mark_ticket = calloc(nc, sizeof *w->mark_ticket);
    w->mark_access = calloc(nc, sizeof *w->mark_access);
    return w->scratch && w->acc && w->wait_users && w->order && w->group_start && w->access_of && w->done &&
                   w->mark_ticket && w->mark_access
               ? 0
               : H5PACK_ENOMEM;
}

static void worker_free(worker *w)
{
    chunksrc_scratch_free(w->scratch);
    free(w->acc), free(w->wait_users), free(w->order), free(w->group_start), free(w->access_of), free(w->done);
    free(w->mark_ticket), free(w->mark_access);
}

static int ring_alloc(pipeline *p)
{
    p->ring = calloc((size_t)p->pp.prefetch, sizeof *p->ring);
    if (!p->ring)
        return H5PACK_ENOMEM;
    for (int i = 0; i < p->pp.prefetch; i++) {
        p->ring[i].indices = malloc(p->pp.setup.op.batch_size * sizeof *p->ring[i].indices);
        if (!p->ring[i].indices)
            return H5PACK_ENOMEM;
    }
    return 0;
}

static int start_workers(pipeline *p, char *err, size_t err_len)
{
    int n = p->pp.setup.threads;
    p->workers = calloc((size_t)n, sizeof *p->workers);
    if (!p->workers)
        return H5PACK_ENOMEM;
    for (int i = 0; i < n; i++) {
        if (worker_init(p, &p->workers[i]))
            return H5PACK_ENOMEM;
        if (pthread_create(&p->workers[i].thread, NULL, worker_main, &p->workers[i])) {
            snprintf(err, err_len, "cannot start worker thread %d of %d", i + 1, n);
            return H5PACK_ENOMEM;
        }
        p->n_started++;
    }
    return 0;
}

int pipeline_start(const pipeline_params *pp, pipeline **out, char *err, size_t err_len)
{
    *out = NULL;
    pipeline *p = calloc(1, sizeof *p);
    if (!p)
        return H5PACK_ENOMEM;
    p->pp = *pp;
    p->geo = chunksrc_geometry(pp->src);
    p->labels = chunksrc_labels(pp->src);
    p->echo_slot = -1;
    p->batches_per_epoch = order_batches_per_epoch(&pp->setup.op);
    p->total_batches = pp->setup.epochs * p->batches_per_epoch;
    atomic_init(&p->stop, 0);
    pthread_mutex_init(&p->plan_lock, NULL);
    pthread_mutex_init(&p->ring_lock, NULL);
    pthread_cond_init(&p->ring_free, NULL);
    pthread_cond_init(&p->ring_ready, NULL);
    int rc = planner_create(&pp->setup.op, pp->setup.slots, pp->setup.epochs, &p->plan);
    if (rc == 0)
        rc = cache_create(pp->setup.slots_allocated, (size_t)p->geo->chunk_bytes, load_chunk, p, &p->cache);
    if (rc == 0)
        rc = ring_alloc(p);
    if (rc == 0)
        rc = start_workers(p, err, err_len);
    if (rc)
        goto fail;
    *out = p;
    return 0;
fail:
    if (!err[0])
        snprintf(err, err_len, "cannot set up the reader: %s (cache of %zu chunks of %llu bytes)", h5pack_strerror(rc),
                 pp->setup.slots_allocated, (unsigned long long)p->geo->chunk_bytes);
    pipeline_free(p);
    return rc;
}

static void stop_everything(pipeline *p)
{
    pthread_mutex_lock(&p->ring_lock);
    atomic_store(&p->stop, 1);
    pthread_cond_broadcast(&p->ring_free);
    pthread_cond_broadcast(&p->ring_ready);
    pthread_mutex_unlock(&p->ring_lock);
    if (p->cache)
        cache_stop(p->cache);
}

void pipeline_free(pipeline *p)
{
    if (!p)
        return;
    stop_everything(p);
    for (int i = 0; i < p->n_started; i++)
        pthread_join(p->workers[i].thread, NULL);
    for (int i = 0; p->workers && i < p->pp.setup.threads; i++)
        worker_free(&p->workers[i]);
    for (int i = 0; p->ring && i < p->pp.prefetch; i++)
        free(p->ring[i].indices);
    free(p->workers), free(p->ring);
    cache_free(p->cache);
    planner_free(p->plan);
    pthread_cond_destroy(&p->ring_free), pthread_cond_destroy(&p->ring_ready);
    pthread_mutex_destroy(&p->plan_lock), pthread_mutex_destroy(&p->ring_lock);
    free(p);
}
