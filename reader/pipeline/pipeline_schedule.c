/* pipeline_schedule.c - the worker side's bookkeeping steps: planning the next batch (in order, one worker at
 * a time) into a free entry, ahead of the ring, and binding planned batches (in order) to the backend's
 * ring slots as the consumer releases them (scheme in pipeline_impl.h). */
#include <stdio.h>
#include <string.h>

#include "backend_convert.h"
#include "pipeline_impl.h"

/* Plan-order bookkeeping: cache generations, the plan's counters, which accesses load. */
static void note_planned(pipeline *p, ring_entry *e)
{
    e->loads_pending = 0;
    for (size_t j = 0; j < e->n_acc; j++) {
        const plan_access *a = &e->acc[j];
        e->wait_users[j] = h5pack_cache_planned(p->cache, a);
        e->load_state[j] = a->load ? LOAD_PENDING : LOAD_DONE;
        e->next_item[j] = ITEM_NONE;
        if (a->load) {
            e->counts.misses++, e->loads_pending++;
            h5pack_chunksrc_will_read(p->pp.src, a->chunk); /* in plan order: a remote store fetches it ahead */
        } else
            e->counts.hits++;
        if (a->first_in_epoch)
            e->counts.bytes_needed += h5pack_chunksrc_stored_bytes(p->pp.src, a->chunk) +
                                      (p->pp.masks ? h5pack_masksrc_stored_bytes(p->pp.masks, a->chunk) : 0);
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

int h5pack_pipeline_planning_done(const pipeline *p)
{
    return p->plan_failed || p->nothing_left || (p->total_batches && p->next_ticket >= p->total_batches);
}

int h5pack_pipeline_can_schedule(const pipeline *p)
{
    return !p->planning && !h5pack_pipeline_planning_done(p) &&
           h5pack_pipeline_entry(p, p->next_ticket)->state == RING_FREE;
}

static void reset_entry(ring_entry *e, uint64_t ticket)
{
    e->state = RING_FILLING;
    e->ticket = ticket;
    e->planned = e->host_ready = 0;
    e->rc = 0;
    e->err[0] = '\0';
    e->n_acc = e->next_claim = e->n_done = e->load_scan = e->loads_pending = 0;
    memset(&e->counts, 0, sizeof e->counts);
}

/* Reserves the next batch and its free entry, then plans it with the lock released, so that an epoch
 * change (computing the next epoch's order) never holds up the other workers or the consumer; only one
 * worker plans at a time (p->planning), which keeps the plan sequential. Afterwards its loads can run,
 * or the batch is published with the planning error. */
void h5pack_pipeline_schedule_batch(pipeline *p)
{
    uint64_t t = p->next_ticket++;
    ring_entry *e = h5pack_pipeline_entry(p, t);
    reset_entry(e, t);
    p->planning = 1;
    pthread_mutex_unlock(&p->lock);
    int rc = h5pack_planner_next(p->plan, e->indices, &e->count, e->acc, &e->n_acc, &e->epoch, &e->index);
    if (rc == 1) {
        note_planned(p, e);
        group_by_access(p, e);
    }
    pthread_mutex_lock(&p->lock);
    p->planning = 0;
    if (rc == 1) {
        e->planned = 1;
        p->loads_pending += e->loads_pending;
        h5pack_pipeline_wake(p);
        return;
    }
    p->plan_failed = 1;
    e->n_acc = 0;
    e->rc = rc < 0 ? rc : H5PACK_EINTERNAL;
    snprintf(e->err, sizeof e->err, "planning batch %llu failed: %s", (unsigned long long)t, h5pack_strerror(e->rc));
    e->state = RING_READY;
    p->batches_done++;
    pthread_cond_broadcast(&p->ready);
    pthread_cond_broadcast(&p->work);
}

/* The next batch in order is planned and its ring slot's previous batch released. */
int h5pack_pipeline_can_bind(const pipeline *p)
{
    if (p->binding || p->bind_ticket >= p->next_ticket)
        return 0;
    const ring_entry *e = h5pack_pipeline_entry(p, p->bind_ticket);
    return e->ticket == p->bind_ticket && e->planned && e->state == RING_FILLING &&
           !p->slot_busy[p->bind_ticket % (uint64_t)p->pp.prefetch];
}

/* Gives the next batch its ring slot's host buffers, fetched with the lock released: the CUDA backend's
 * host_input() waits for the slot's previous host-to-device copy; one-pass crops plan the slot's
 * resampling job here. Then its uses can be claimed. */
void h5pack_pipeline_bind_batch(pipeline *p)
{
    ring_entry *e = h5pack_pipeline_entry(p, p->bind_ticket);
    int slot = h5pack_pipeline_ring_slot(p, e);
    p->binding = 1;
    p->slot_busy[slot] = 1;
    pthread_mutex_unlock(&p->lock);
    uint8_t *in = p->pp.be->ops->host_input(p->pp.be, slot);
    int64_t *labels = p->pp.be->ops->host_labels(p->pp.be, slot);
    if (p->one_pass_crops) /* before any of its images is resampled (its uses are claimed after this) */
        h5pack_backend_cpu_bind_crops(p->pp.be, slot, h5pack_pipeline_batch_key(p, e, 0), e->count, e->epoch,
                                      h5pack_pipeline_sizes(p, slot, e->indices, e->count));
    pthread_mutex_lock(&p->lock);
    e->host_in = in, e->host_labels = labels;
    e->host_ready = 1;
    p->bind_ticket++;
    p->binding = 0;
    h5pack_pipeline_wake(p);
}
