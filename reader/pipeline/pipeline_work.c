/* pipeline_work.c - the worker side of the pipeline: loads chunks into the cache (ahead of the ring when
 * the plan allows), copies each batch's images out of the cache (or, on the CPU one-pass path, converts
 * them straight into the output batch), hands finished batches to the backend; the worker loop that
 * picks the next step (the scheme and why it cannot deadlock: pipeline_impl.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "augment.h"
#include "backend_convert.h"
#include "pipeline_impl.h"

/* Pending loads looked at per search for one that can start: keeps the search short when many loads
 * wait for uses that have not run yet (they become ready in plan order anyway). */
#define LOAD_SEARCH_MAX 256

uint64_t h5pack_pipeline_batch_key(const pipeline *p, const ring_entry *e, uint32_t echo)
{
    const order_params *op = &p->pp.setup.op;
    /* keyed by the global batch and this rank's place in it: the draws do not depend on the split */
    return aug_batch_key_at(op->seed, e->epoch, e->index, echo, (uint64_t)op->rank * e->count);
}

int h5pack_pipeline_load_chunk(void *ctx, void *worker_state, uint64_t chunk, uint8_t *dst, const uint8_t **data, char *err,
                        size_t err_len)
{
    pipeline *p = ctx;
    worker *w = worker_state;
    if (*data != dst) /* the slot lent a chunk of the mapping: its pages leave our page tables */
        h5pack_chunksrc_map_release(p->pp.src, *data);
    /* with masks the slot's own buffer holds both chunks, so nothing is lent */
    if (!p->masks && h5pack_chunksrc_map(p->pp.src, chunk, data, &w->cost) == 0)
        return 0;
    *data = dst;
    int rc = h5pack_chunksrc_read(p->pp.src, chunk, dst, w->scratch, &w->cost, err, err_len);
    return rc == 0 && p->masks ? h5pack_pipeline_masks_load(p, w, chunk, dst, err, err_len) : rc;
}

/* ---- uses: copying a batch's images out of the cache ------------------------------------------- */

static uint64_t item_of(const pipeline *p, const ring_entry *e, size_t j)
{
    return (uint64_t)(e - p->ring) * p->pp.setup.op.batch_size + j;
}

static ring_entry *entry_of_item(pipeline *p, uint64_t item, size_t *j)
{
    uint64_t bs = p->pp.setup.op.batch_size;
    *j = (size_t)(item % bs);
    return &p->ring[item / bs];
}

static void list_append(pipeline *p, uint64_t *head, uint64_t *tail, uint64_t item)
{
    size_t j;
    entry_of_item(p, item, &j)->next_item[j] = ITEM_NONE;
    if (*tail == ITEM_NONE) {
        *head = item;
    } else {
        size_t k;
        ring_entry *last = entry_of_item(p, *tail, &k);
        last->next_item[k] = item;
    }
    *tail = item;
}

/* The load of generation GEN of cache slot SLOT finished: its parked uses become ready (uses of the next
 * generation stay parked). */
static void unpark(pipeline *p, uint32_t slot, uint64_t gen)
{
    uint64_t item = p->parked_head[slot];
    p->parked_head[slot] = p->parked_tail[slot] = ITEM_NONE;
    while (item != ITEM_NONE) {
        size_t j;
        ring_entry *e = entry_of_item(p, item, &j);
        uint64_t next = e->next_item[j];
        if (e->acc[j].slot_gen == gen)
            list_append(p, &p->ready_head, &p->ready_tail, item);
        else
            list_append(p, &p->parked_head[slot], &p->parked_tail[slot], item);
        item = next;
    }
}

/* The next use that can run now: a ready one, else the next unclaimed one in plan order (of the bound
 * batches); a use whose chunk is not loaded yet is parked on its slot and the next one is tried. */
static ring_entry *next_use(pipeline *p, size_t *j)
{
    if (p->ready_head != ITEM_NONE) {
        uint64_t item = p->ready_head;
        ring_entry *e = entry_of_item(p, item, j);
        p->ready_head = e->next_item[*j];
        if (p->ready_head == ITEM_NONE)
            p->ready_tail = ITEM_NONE;
        return e;
    }
    for (; p->claim_ticket < p->bind_ticket; p->claim_ticket++) {
        ring_entry *e = h5pack_pipeline_entry(p, p->claim_ticket);
        if (e->ticket != p->claim_ticket || e->state != RING_FILLING)
            continue; /* finished and its entry reused */
        while (e->next_claim < e->n_acc) {
            size_t k = e->next_claim++;
            const plan_access *a = &e->acc[k];
            if (p->slot_loaded[a->slot] == a->slot_gen) {
                *j = k;
                return e;
            }
            list_append(p, &p->parked_head[a->slot], &p->parked_tail[a->slot], item_of(p, e, k));
        }
    }
    return NULL;
}

const uint32_t *h5pack_pipeline_sizes(const pipeline *p, int slot, const uint64_t *indices, size_t count)
{
    if (!p->geo->several_sizes)
        return NULL;
    uint32_t *dims = p->slot_dims + 2 * (size_t)slot * p->pp.setup.op.batch_size;
    for (size_t i = 0; i < count; i++)
        h5pack_chunksrc_image_size(p->pp.src, indices[i], &dims[2 * i], &dims[2 * i + 1]);
    return dims;
}

/* Image INDEX in the chunk read at CHUNK (images of several sizes: at its own offset). */
static const uint8_t *image_in(const pipeline *p, const uint8_t *chunk, uint64_t index)
{
    return chunk + h5pack_chunksrc_image_offset(p->pp.src, index);
}

/* Copies the batch's images that live in access J's chunk from the cache slot into the batch (each in a
 * place of the largest image's size). */
static void copy_group(const pipeline *p, const ring_entry *e, size_t j, const uint8_t *chunk, uint8_t *dst)
{
    size_t img = (size_t)p->geo->image_bytes;
    for (uint32_t g = e->group_start[j]; g < e->group_start[j + 1]; g++) {
        uint32_t pos = e->order[g], h = p->geo->height, w = p->geo->width;
        h5pack_chunksrc_image_size(p->pp.src, e->indices[pos], &h, &w);
        memcpy(dst + (size_t)pos * img, image_in(p, chunk, e->indices[pos]), (size_t)h * w * p->geo->channels);
    }
}

/* One-pass: converts the batch's images that live in access J's chunk straight into the output batch. */
static void convert_group(const pipeline *p, const ring_entry *e, size_t j, const uint8_t *chunk)
{
    void *out = h5pack_backend_cpu_output(p->pp.be, h5pack_pipeline_ring_slot(p, e));
    uint64_t key = h5pack_pipeline_batch_key(p, e, 0);
    for (uint32_t g = e->group_start[j]; g < e->group_start[j + 1]; g++) {
        uint32_t pos = e->order[g];
        h5pack_backend_conv_image(p->one_pass, image_in(p, chunk, e->indices[pos]), out, pos, key);
    }
}

/* The image resampled after position G of E's group J: the group's next one, else the first of the use
 * claimed to run next (AHEAD, with its chunk in hand; NULL: none). 0 when there is none. */
static int next_crop(const pipeline *p, const ring_entry *e, size_t j, uint32_t g, const uint8_t *chunk,
                     const claimed_use *ahead, cpu_crop_next *next)
{
    if (g + 1 < e->group_start[j + 1]) {
        uint32_t pos = e->order[g + 1];
        *next = (cpu_crop_next){h5pack_pipeline_ring_slot(p, e), pos, image_in(p, chunk, e->indices[pos])};
        return 1;
    }
    if (!ahead || !ahead->e || ahead->rc != 0) /* a claimed use is in hand (execute_use) */
        return 0;
    const ring_entry *n = ahead->e;
    uint32_t pos = n->order[n->group_start[ahead->j]];
    *next = (cpu_crop_next){h5pack_pipeline_ring_slot(p, n), pos, image_in(p, ahead->chunk, n->indices[pos])};
    return 1;
}

/* One-pass crops: plans the taps of the batch's images that live in access J's chunk and resamples them
 * straight into the output (the slot's boxes were planned at bind), each prefetching the next one's
 * source (AHEAD: the use that follows; NULL: none). 0, or ENOMEM when the scratch or the memo cannot be
 * had. */
static int crop_group(const pipeline *p, worker *w, const ring_entry *e, size_t j, const uint8_t *chunk,
                      const claimed_use *ahead)
{
    int slot = h5pack_pipeline_ring_slot(p, e);
    size_t need = h5pack_backend_cpu_crop_scratch_floats(p->pp.be, slot);
    if (need > w->crop_scratch_floats) {
        float *grown = realloc(w->crop_scratch, need * sizeof *grown);
        if (!grown)
            return H5PACK_ENOMEM;
        w->crop_scratch = grown, w->crop_scratch_floats = need;
    }
    if (!w->crop_memo && !(w->crop_memo = h5pack_backend_cpu_crop_memo_new()))
        return H5PACK_ENOMEM;
    for (uint32_t g = e->group_start[j]; g < e->group_start[j + 1]; g++) {
        uint32_t pos = e->order[g];
        cpu_crop_next next;
        int has_next = next_crop(p, e, j, g, chunk, ahead, &next);
        h5pack_backend_cpu_crop_image(p->pp.be, slot, pos, image_in(p, chunk, e->indices[pos]), w->crop_scratch,
                                      w->crop_memo, has_next ? &next : NULL);
    }
    return 0;
}

int h5pack_pipeline_redo_crops(pipeline *p, ring_entry *e, char *err, size_t err_len)
{
    int slot = h5pack_pipeline_ring_slot(p, e);
    if (!h5pack_backend_cpu_crops_stale(p->pp.be, slot))
        return 0;
    h5pack_backend_cpu_bind_crops(p->pp.be, slot, h5pack_pipeline_batch_key(p, e, 0), e->count, e->epoch,
                                  h5pack_pipeline_sizes(p, slot, e->indices, e->count));
    if (!p->redo.scratch)
        p->redo.scratch = h5pack_chunksrc_scratch_new(p->pp.src);
    if (!p->redo_chunk)
        p->redo_chunk = malloc((size_t)p->geo->chunk_bytes);
    if (!p->redo.scratch || !p->redo_chunk) {
        snprintf(err, err_len, "out of memory redoing a batch at the new output size");
        return H5PACK_ENOMEM;
    }
    for (size_t j = 0; j < e->n_acc; j++) {
        chunk_read_cost cost = {0};
        int rc = h5pack_chunksrc_read(p->pp.src, e->acc[j].chunk, p->redo_chunk, p->redo.scratch, &cost, err, err_len);
        uint64_t t0 = h5pack_clock_ns();
        if (rc == 0)
            rc = crop_group(p, &p->redo, e, j, p->redo_chunk, NULL);
        h5pack_backend_cpu_add_convert_ns(p->pp.be, h5pack_clock_ns() - t0);
        e->counts.bytes_read += cost.bytes_read, e->counts.bytes_inflated += cost.bytes_inflated;
        e->counts.read_s += cost.read_s, e->counts.inflate_s += cost.inflate_s;
        if (rc)
            return rc;
    }
    return 0;
}

/* The CPU backend's one-pass conversion without a crop (NULL otherwise: with a crop the backend
 * resamples, h5pack_backend_cpu_one_pass_crops). The backend chose it at open (reader.c). */
const struct backend_conv *h5pack_pipeline_one_pass(const pipeline_params *pp)
{
    return h5pack_backend_cpu_one_pass(pp->be);
}

/* All uses of E are done: labels, conversion, then the consumer may have it. Called and returns with
 * the lock held; the conversion runs outside it. */
static void finish_batch(pipeline *p, ring_entry *e)
{
    int slot = h5pack_pipeline_ring_slot(p, e);
    int rc = e->rc;
    pthread_mutex_unlock(&p->lock);
    if (rc == 0 && p->labels)
        for (size_t i = 0, lb = p->label_bytes; i < e->count; i++)
            memcpy((uint8_t *)e->host_labels + i * lb, p->labels + e->indices[i] * lb, lb);
    char detail[256] = "";
    backend_job job = h5pack_backend_job(e->count, h5pack_pipeline_batch_key(p, e, 0));
    job.epoch = e->epoch;
    job.convert = !p->pp.sample_echo; /* sample echo composes and converts at delivery */
    job.pixels_done = p->one_pass != NULL || p->one_pass_crops;
    job.dims = h5pack_pipeline_sizes(p, slot, e->indices, e->count);
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
    p->batches_done++;
    pthread_cond_broadcast(&p->ready);
    h5pack_pipeline_wake(p); /* the last batch: the workers may leave */
}

/* Makes U's cache use (outside the lock), unless made already: its chunk, or the load's error. */
static void take_in_hand(pipeline *p, claimed_use *u)
{
    if (u->in_hand)
        return;
    u->err[0] = '\0';
    u->rc = h5pack_cache_use(p->cache, &u->e->acc[u->j], 0, &u->chunk, u->err, sizeof u->err);
    u->in_hand = 1;
}

/* Runs use U (its chunk is loaded) outside the lock; a failed load's error goes into its entry's. With
 * direct crops it first claims the next use (pipeline_impl.h, claimed_use), which this worker runs next,
 * unless a worker sleeps: that one is better off running it now than this one after U. */
static void execute_use(pipeline *p, worker *w, claimed_use u)
{
    ring_entry *e = u.e;
    size_t j = u.j;
    int one_pass = p->one_pass || p->one_pass_crops;
    claimed_use next = {0};
    if (p->one_pass_crops && p->n_waiting == 0)
        next.e = next_use(p, &next.j);
    pthread_mutex_unlock(&p->lock);
    take_in_hand(p, &u);
    if (next.e)
        take_in_hand(p, &next);
    int rc = u.rc;
    uint64_t t0 = h5pack_clock_ns();
    if (rc == 0 && p->one_pass)
        convert_group(p, e, j, u.chunk);
    else if (rc == 0 && p->one_pass_crops)
        rc = crop_group(p, w, e, j, u.chunk, &next);
    else if (rc == 0)
        copy_group(p, e, j, u.chunk, e->host_in);
    if (rc == 0 && p->masks)
        h5pack_pipeline_masks_copy_group(p, e, j, u.chunk);
    uint64_t ns = h5pack_clock_ns() - t0;
    h5pack_cache_finish(p->cache, e->acc[j].slot); /* may let a load of the slot's next generation start */
    if (one_pass) /* the copy is the conversion; nothing is assembled */
        h5pack_backend_cpu_add_convert_ns(p->pp.be, ns);
    pthread_mutex_lock(&p->lock);
    w->ahead = next;
    if (!one_pass)
        e->counts.assemble_s += (double)ns * 1e-9;
    if (rc && !e->rc) {
        e->rc = rc;
        snprintf(e->err, sizeof e->err, "%s", u.err[0] ? u.err : h5pack_strerror(rc));
    }
    if (++e->n_done == e->n_acc)
        finish_batch(p, e);
    h5pack_pipeline_wake(p);
}

/* ---- loads: reading chunks into the cache, as far ahead as the plan lets them ------------------- */

/* Moves the scan positions past what has no pending load left. */
static void skip_started(pipeline *p, ring_entry *e)
{
    while (e->load_scan < e->n_acc && e->load_state[e->load_scan] != LOAD_PENDING)
        e->load_scan++;
    if (e->loads_pending == 0 && p->load_ticket == e->ticket)
        p->load_ticket++;
}

/* The first pending load in plan order that can start now (its slot's previous generation has no use
 * left), among the planned batches, bound or not. */
static ring_entry *next_load(pipeline *p, size_t *j)
{
    if (p->loads_pending == 0)
        return NULL;
    int budget = LOAD_SEARCH_MAX;
    for (uint64_t t = p->load_ticket; t < p->next_ticket && budget > 0; t++) {
        ring_entry *e = h5pack_pipeline_entry(p, t);
        if (e->ticket != t || e->state != RING_FILLING || !e->planned) {
            if (e->ticket == t && e->state == RING_FILLING)
                return NULL; /* being planned: nothing after it is planned either */
            if (p->load_ticket == t)
                p->load_ticket++;
            continue;
        }
        skip_started(p, e);
        for (size_t k = e->load_scan; k < e->n_acc && e->loads_pending > 0 && budget > 0; k++) {
            if (e->load_state[k] != LOAD_PENDING)
                continue;
            if (h5pack_cache_load_ready(p->cache, &e->acc[k], e->wait_users[k])) {
                *j = k;
                return e;
            }
            budget--;
        }
    }
    return NULL;
}

/* Loads access J of E (outside the lock); its costs and a failure go to E, whose use comes first. */
static void execute_load(pipeline *p, worker *w, ring_entry *e, size_t j)
{
    const plan_access *a = &e->acc[j];
    e->load_state[j] = LOAD_RUNNING;
    e->loads_pending--, p->loads_pending--;
    chunk_read_cost before = w->cost;
    char err[384] = "";
    pthread_mutex_unlock(&p->lock);
    int rc = h5pack_cache_load(p->cache, a, e->wait_users[j], 1, w, err, sizeof err);
    pthread_mutex_lock(&p->lock);
    if (rc == CACHE_WOULD_WAIT) { /* cannot happen (it was ready, and only this worker loads it): retry later */
        e->load_state[j] = LOAD_PENDING;
        e->loads_pending++, p->loads_pending++;
        e->load_scan = j < e->load_scan ? j : e->load_scan;
        if (p->load_ticket > e->ticket)
            p->load_ticket = e->ticket;
        return;
    }
    e->counts.bytes_read += w->cost.bytes_read - before.bytes_read;
    e->counts.bytes_inflated += w->cost.bytes_inflated - before.bytes_inflated;
    e->counts.read_s += w->cost.read_s - before.read_s;
    e->counts.inflate_s += w->cost.inflate_s - before.inflate_s;
    if (rc < 0 && !e->rc) {
        e->rc = rc;
        snprintf(e->err, sizeof e->err, "%s", err[0] ? err : h5pack_strerror(rc));
    }
    e->load_state[j] = LOAD_DONE;
    p->slot_loaded[a->slot] = a->slot_gen;
    unpark(p, a->slot, a->slot_gen);
    h5pack_pipeline_wake(p);
}

/* ---- the loop ------------------------------------------------------------------------------------ */

static int all_done(const pipeline *p)
{
    return h5pack_pipeline_planning_done(p) && !p->planning && p->batches_done == p->next_ticket;
}

void *h5pack_pipeline_worker_main(void *arg)
{
    worker *w = arg;
    pipeline *p = w->p;
    pthread_mutex_lock(&p->lock);
    while (!atomic_load(&p->stop)) {
        size_t j;
        ring_entry *e;
        if (h5pack_pipeline_can_bind(p)) {
            h5pack_pipeline_bind_batch(p);
        } else if (w->ahead.e) {
            execute_use(p, w, w->ahead);
        } else if ((e = next_use(p, &j)) != NULL) {
            execute_use(p, w, (claimed_use){.e = e, .j = j});
        } else if (p->loads_pending < p->loads_known && h5pack_pipeline_can_schedule(p)) {
            h5pack_pipeline_schedule_batch(p); /* too few loads known to keep every worker (every read) busy */
        } else if ((e = next_load(p, &j)) != NULL) {
            execute_load(p, w, e, j);
        } else if (h5pack_pipeline_can_schedule(p)) {
            h5pack_pipeline_schedule_batch(p);
        } else if (all_done(p)) {
            break;
        } else {
            p->n_waiting++;
            pthread_cond_wait(&p->work, &p->lock);
            p->n_waiting--;
        }
    }
    pthread_mutex_unlock(&p->lock);
    if (w->ahead.e) /* stopped before running it: its cache use (made when claimed) still ends */
        h5pack_cache_finish(p->cache, w->ahead.e->acc[w->ahead.j].slot);
    return NULL;
}
