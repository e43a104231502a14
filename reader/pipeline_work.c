/* pipeline_work.c - the worker side of the pipeline: plan batches in order, claim their chunk accesses
 * in plan order, execute them against the cache, and hand finished batches to the backend (the scheme
 * and why it cannot deadlock: pipeline_impl.h). */
#include <stdio.h>
#include <string.h>

#include "augment.h"
#include "pipeline_impl.h"

uint64_t h5pack_pipeline_batch_key(const pipeline *p, const ring_entry *e, uint32_t echo)
{
    const order_params *op = &p->pp.setup.op;
    return aug_batch_key(op->seed, e->epoch, e->index * op->world + op->rank, echo);
}

int h5pack_pipeline_load_chunk(void *ctx, void *worker_state, uint64_t chunk, uint8_t *dst, const uint8_t **data, char *err,
                        size_t err_len)
{
    pipeline *p = ctx;
    worker *w = worker_state;
    if (*data != dst) /* the slot lent a chunk of the mapping: its pages leave our page tables */
        h5pack_chunksrc_map_release(p->pp.src, *data);
    if (h5pack_chunksrc_map(p->pp.src, chunk, data, &w->cost) == 0)
        return 0;
    *data = dst;
    return h5pack_chunksrc_read(p->pp.src, chunk, dst, w->scratch, &w->cost, err, err_len);
}

/* ---- planning (one worker at a time) ------------------------------------------------------------- */

/* Plan-order bookkeeping: cache generations and the plan's counters. */
static void note_planned(pipeline *p, ring_entry *e)
{
    for (size_t j = 0; j < e->n_acc; j++) {
        const plan_access *a = &e->acc[j];
        e->wait_users[j] = h5pack_cache_planned(p->cache, a);
        if (a->load)
            e->counts.misses++;
        else
            e->counts.hits++;
        if (a->first_in_epoch)
            e->counts.bytes_needed += h5pack_chunksrc_stored_bytes(p->pp.src, a->chunk);
    }
}

/* Groups the batch positions by the access (chunk) they need: order[group_start[j] .. group_start[j+1]). */
static void group_by_access(pipeline *p, ring_entry *e)
{
    uint64_t k = p->geo->samples_per_chunk, stamp = e->ticket + 1;
    for (size_t j = 0; j < e->n_acc; j++) {
        p->mark_ticket[e->acc[j].chunk] = stamp;
        p->mark_access[e->acc[j].chunk] = (uint32_t)j;
        e->group_start[j] = 0;
    }
    e->group_start[e->n_acc] = 0;
    for (size_t i = 0; i < e->count; i++) {
        uint64_t c = e->indices[i] / k;
        p->access_of[i] = p->mark_ticket[c] == stamp ? p->mark_access[c] : 0;
        e->group_start[p->access_of[i] + 1]++;
    }
    for (size_t j = 0; j < e->n_acc; j++)
        e->group_start[j + 1] += e->group_start[j];
    for (size_t i = 0; i < e->count; i++)
        e->order[e->group_start[p->access_of[i]]++] = (uint32_t)i;
    for (size_t j = e->n_acc; j > 0; j--) /* undo the shift made by the placement pass */
        e->group_start[j] = e->group_start[j - 1];
    e->group_start[0] = 0;
}

static int planning_done(const pipeline *p)
{
    return p->plan_failed || (p->total_batches && p->next_ticket >= p->total_batches);
}

static int can_plan(const pipeline *p)
{
    return !p->planning && !planning_done(p) &&
           p->ring[p->next_ticket % (uint64_t)p->pp.prefetch].state == RING_FREE;
}

/* Reserves the next batch and its (free) ring slot, then plans it and fetches the slot's host buffers
 * with the lock released, so that an epoch change (computing the next epoch's order) never holds up
 * the other workers or the consumer; only one worker plans at a time (p->planning), which keeps the
 * plan sequential. The CUDA backend's host_input() waits for the slot's previous host-to-device copy.
 * Called and returns with the lock held; afterwards the batch's accesses can be claimed, or the batch
 * is published with the planning error. */
static void plan_batch(pipeline *p)
{
    uint64_t t = p->next_ticket++;
    int slot = (int)(t % (uint64_t)p->pp.prefetch);
    ring_entry *e = &p->ring[slot];
    e->state = RING_FILLING;
    e->ticket = t;
    e->host_ready = 0;
    e->rc = 0;
    e->err[0] = '\0';
    e->n_acc = e->next_claim = e->n_done = 0;
    memset(&e->counts, 0, sizeof e->counts);
    p->planning = 1;
    pthread_mutex_unlock(&p->lock);
    int rc = h5pack_planner_next(p->plan, e->indices, &e->count, e->acc, &e->n_acc, &e->epoch, &e->index);
    if (rc == 1) {
        note_planned(p, e);
        group_by_access(p, e);
        e->host_in = p->pp.be->ops->host_input(p->pp.be, slot);
        e->host_labels = p->pp.be->ops->host_labels(p->pp.be, slot);
    }
    pthread_mutex_lock(&p->lock);
    p->planning = 0;
    if (rc == 1) {
        e->host_ready = 1;
        pthread_cond_broadcast(&p->work);
        return;
    }
    p->plan_failed = 1;
    e->n_acc = 0;
    e->rc = rc < 0 ? rc : H5PACK_EINTERNAL;
    snprintf(e->err, sizeof e->err, "planning batch %llu failed: %s", (unsigned long long)t, h5pack_strerror(e->rc));
    e->state = RING_READY;
    pthread_cond_broadcast(&p->ready);
    pthread_cond_broadcast(&p->work);
}

/* The next access in plan order that nobody has claimed yet, or NULL. Stops at a batch that is still
 * being planned: claims stay in plan order. */
static ring_entry *claim_access(pipeline *p, size_t *j)
{
    for (; p->claim_ticket < p->next_ticket; p->claim_ticket++) {
        ring_entry *e = &p->ring[p->claim_ticket % (uint64_t)p->pp.prefetch];
        if (e->ticket != p->claim_ticket || e->state != RING_FILLING)
            continue; /* published (a planning failure), or finished and its slot reused */
        if (!e->host_ready)
            return NULL;
        if (e->next_claim < e->n_acc) {
            *j = e->next_claim++;
            return e;
        }
    }
    return NULL;
}

/* ---- executing (outside the lock) --------------------------------------------------------------- */

/* Copies the batch's images that live in access J's chunk from the cache slot into the batch. */
static void copy_group(const pipeline *p, const ring_entry *e, size_t j, const uint8_t *chunk, uint8_t *dst)
{
    uint64_t k = p->geo->samples_per_chunk, img = p->geo->image_bytes, first = e->acc[j].chunk * k;
    for (uint32_t g = e->group_start[j]; g < e->group_start[j + 1]; g++) {
        uint32_t pos = e->order[g];
        memcpy(dst + (size_t)pos * img, chunk + (size_t)(e->indices[pos] - first) * img, (size_t)img);
    }
}

/* Executes access J of E; its costs go into E's counters and a failure into E's error (under the lock,
 * which the caller holds again when this returns). */
static void execute_access(pipeline *p, worker *w, ring_entry *e, size_t j)
{
    uint8_t *dst = e->host_in;
    chunk_read_cost before = w->cost;
    char err[384] = "";
    const uint8_t *chunk = NULL;
    pthread_mutex_unlock(&p->lock);
    int rc = h5pack_cache_acquire(p->cache, &e->acc[j], e->wait_users[j], 0, w, &chunk, err, sizeof err);
    double t0 = h5pack_clock_s();
    if (rc == 0)
        copy_group(p, e, j, chunk, dst);
    double assemble_s = h5pack_clock_s() - t0;
    h5pack_cache_finish(p->cache, e->acc[j].slot);
    pthread_mutex_lock(&p->lock);
    e->counts.bytes_read += w->cost.bytes_read - before.bytes_read;
    e->counts.bytes_inflated += w->cost.bytes_inflated - before.bytes_inflated;
    e->counts.read_s += w->cost.read_s - before.read_s;
    e->counts.inflate_s += w->cost.inflate_s - before.inflate_s;
    e->counts.assemble_s += assemble_s;
    if (rc && !e->rc) {
        e->rc = rc;
        snprintf(e->err, sizeof e->err, "%s", err[0] ? err : h5pack_strerror(rc));
    }
    e->n_done++;
}

/* All accesses of E are done: labels, conversion, then the consumer may have it. Called and returns
 * with the lock held; the conversion runs outside it. */
static void finish_batch(pipeline *p, ring_entry *e)
{
    int slot = (int)(e->ticket % (uint64_t)p->pp.prefetch);
    int rc = e->rc;
    pthread_mutex_unlock(&p->lock);
    if (rc == 0 && p->labels)
        for (size_t i = 0; i < e->count; i++)
            e->host_labels[i] = p->labels[e->indices[i]];
    char detail[256] = "";
    backend_job job = h5pack_backend_job(e->count, h5pack_pipeline_batch_key(p, e, 0));
    job.epoch = e->epoch;
    job.convert = !p->pp.sample_echo; /* sample echo composes and converts at delivery */
    if (rc == 0)
        rc = p->pp.be->ops->submit(p->pp.be, slot, job, detail, sizeof detail);
    pthread_mutex_lock(&p->lock);
    if (rc && !e->rc) {
        e->rc = rc;
        snprintf(e->err, sizeof e->err, "converting batch %llu of epoch %llu failed: %s",
                 (unsigned long long)e->index, (unsigned long long)e->epoch,
                 detail[0] ? detail : h5pack_strerror(rc));
    }
    e->state = RING_READY;
    pthread_cond_broadcast(&p->ready);
}

void *h5pack_pipeline_worker_main(void *arg)
{
    worker *w = arg;
    pipeline *p = w->p;
    pthread_mutex_lock(&p->lock);
    while (!atomic_load(&p->stop)) {
        size_t j;
        ring_entry *e = claim_access(p, &j);
        if (!e && can_plan(p)) {
            plan_batch(p);
            continue;
        }
        if (!e) {
            if (planning_done(p) && !p->planning)
                break; /* nothing left to claim or plan, and nothing about to become claimable */
            pthread_cond_wait(&p->work, &p->lock);
            continue;
        }
        execute_access(p, w, e, j);
        if (e->n_done == e->n_acc)
            finish_batch(p, e);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}
