/* pipeline.c - the consumer side of the pipeline (batches in order, echoes, stats) and its life cycle
 * (the worker side is pipeline_schedule.c and pipeline_work.c; the shared scheme is in pipeline_impl.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend_convert.h"
#include "pipeline_impl.h"
#include "store.h"

/* ---- consumer ------------------------------------------------------------------------------------ */

/* Waits for fresh batch TICKET; adds the time to the stall. Returns 0, or -1 when stopping. */
static int wait_ready(pipeline *p, uint64_t ticket)
{
    ring_entry *e = h5pack_pipeline_entry(p, ticket);
    pthread_mutex_lock(&p->lock);
    if (!(e->state == RING_READY && e->ticket == ticket)) {
        double t0 = h5pack_clock_s();
        while (!atomic_load(&p->stop) && !(e->state == RING_READY && e->ticket == ticket))
            pthread_cond_wait(&p->ready, &p->lock);
        p->stall_s += h5pack_clock_s() - t0;
    }
    int ok = e->state == RING_READY && e->ticket == ticket;
    if (ok)
        e->state = RING_DELIVERED;
    pthread_mutex_unlock(&p->lock);
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

/* A backend op failed: WHAT, plus the backend's own DETAIL (CUDA's text) when it gave one. */
static int backend_fail(pipeline *p, int rc, const char *what, const char *detail, char *err, size_t err_len)
{
    char msg[sizeof p->failed_err];
    snprintf(msg, sizeof msg, "%s: %s", what, detail[0] ? detail : h5pack_strerror(rc));
    return fail(p, rc, msg, err, err_len);
}

static uint64_t new_token(pipeline *p, int slot)
{
    return h5pack_token_make(p->token_tag, ++p->deliveries, slot);
}

static void set_labels(const pipeline *p, h5pack_batch *batch)
{
    h5pack_backend_batch_labels(batch, p->labels != NULL, p->geo->label_columns, p->geo->labels_are_float);
}

/* Hands out echo ECHO of the batch in entry SLOT (already converted for it). */
static int deliver(pipeline *p, int slot, uint32_t echo, h5pack_batch *batch, char *err, size_t err_len)
{
    ring_entry *e = &p->ring[slot];
    memset(batch, 0, sizeof *batch);
    char detail[256] = "";
    int rc = p->pp.be->ops->output(p->pp.be, h5pack_pipeline_ring_slot(p, e), e->count, batch, detail, sizeof detail);
    if (rc)
        return backend_fail(p, rc, "the backend could not hand out the batch", detail, err, err_len);
    set_labels(p, batch);
    const backend_box *boxes = NULL; /* backend_box has h5pack_crop_box's layout (backend_geom.c) */
    p->pp.be->ops->geometry(p->pp.be, h5pack_pipeline_ring_slot(p, e), &boxes, &batch->height, &batch->width);
    batch->boxes = (const h5pack_crop_box *)(const void *)boxes;
    batch->indices = p->sample ? h5pack_pipeline_delivery_indices(p, h5pack_pipeline_ring_slot(p, e)) : e->indices;
    batch->count = e->count;
    batch->epoch = e->epoch;
    batch->index = e->index;
    batch->echo = echo;
    h5pack_pipeline_masks_deliver(p, h5pack_pipeline_ring_slot(p, e), p->delivery_sources, batch);
    p->delivery_sources = NULL;
    batch->token = e->token = new_token(p, slot); /* the entry; the backend's ring slot follows from its ticket */
    e->echoes_delivered = echo + 1;
    e->detached = 0;
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
    if (e->token) {
        snprintf(err, err_len, "release the batch before asking for its echo (echo > 1 reuses its buffers)");
        return H5PACK_ESTATE;
    }
    /* The CPU backend converts the echo right here, on the consumer thread: h5pack_next() is blocked
     * waiting for data as surely as in wait_ready(), so the time is stall (the GPU only enqueues). */
    double t0 = h5pack_clock_s();
    int rc = h5pack_pipeline_prepare_delivery(p, slot, e->echoes_delivered, err, err_len);
    p->stall_s += h5pack_clock_s() - t0;
    if (rc)
        return rc;
    p->batches_echoed++;
    return deliver(p, slot, e->echoes_delivered, batch, err, err_len);
}

/* Gives entry E's batch and ring slot back to the workers (the consumer holds no delivery of it). */
static void free_entry(pipeline *p, ring_entry *e)
{
    pthread_mutex_lock(&p->lock);
    e->state = RING_FREE; /* the entry can take a new plan, the ring slot a new batch */
    p->slot_busy[h5pack_pipeline_ring_slot(p, e)] = 0;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->lock);
}

/* Resume with sample echo: takes the prefill batches (the resumed epoch's first ones, which its last
 * groups read again), keeps them in the pool and frees their slots. Never delivered, so they count in
 * no batch or sample counter; their reads do count (bytes_read, misses): they happened. */
static int take_prefill(pipeline *p, char *err, size_t err_len)
{
    while (p->prefill_left) {
        uint64_t t = p->next_fresh;
        if (wait_ready(p, t) < 0)
            return fail(p, H5PACK_ESTATE, "the reader is shutting down", err, err_len);
        ring_entry *e = h5pack_pipeline_entry(p, t);
        if (e->rc < 0)
            return fail(p, e->rc, e->err, err, err_len);
        int rc = h5pack_pipeline_pool_prefill(p, (int)(e - p->ring), err, err_len);
        if (rc)
            return rc;
        batch_counts c = e->counts;
        c.bytes_needed = 0; /* bytes_needed is about delivered batches */
        add_counts(&p->delivered, &c);
        char detail[256] = "";
        rc = p->pp.be->ops->release(p->pp.be, h5pack_pipeline_ring_slot(p, e), detail, sizeof detail);
        if (rc)
            return backend_fail(p, rc, "the backend could not release a pooled batch", detail, err, err_len);
        free_entry(p, e);
        p->next_fresh++;
        p->prefill_left--;
    }
    return 0;
}

int h5pack_pipeline_next(pipeline *p, h5pack_batch *batch, char *err, size_t err_len)
{
    if (p->failed) {
        snprintf(err, err_len, "%s", p->failed_err);
        return p->failed;
    }
    if (p->echo_slot >= 0)
        return next_echo(p, batch, err, err_len);
    if (p->nothing_left || (p->total_batches && p->next_fresh >= p->total_batches))
        return H5PACK_END;
    int rc = p->prefill_left ? take_prefill(p, err, err_len) : 0;
    if (rc)
        return rc;
    uint64_t t = p->next_fresh, prefetch = (uint64_t)p->pp.prefetch;
    const ring_entry *old = t >= prefetch ? h5pack_pipeline_entry(p, t - prefetch) : NULL;
    if (old && old->token && old->ticket == t - prefetch) { /* its ring slot holds a batch not released */
        snprintf(err, err_len,
                 "batch %llu of epoch %llu is still unreleased and its buffer is the next one's (prefetch = %d): "
                 "release it first",
                 (unsigned long long)old->index, (unsigned long long)old->epoch, p->pp.prefetch);
        return H5PACK_ESTATE;
    }
    rc = p->sample ? h5pack_pipeline_sample_check(p, err, err_len) : 0;
    if (rc)
        return rc;
    if (wait_ready(p, t) < 0)
        return fail(p, H5PACK_ESTATE, "the reader is shutting down", err, err_len);
    ring_entry *e = h5pack_pipeline_entry(p, t);
    if (e->rc < 0)
        return fail(p, e->rc, e->err, err, err_len);
    uint32_t echo = p->start_echo; /* a resumed run's first delivery may be an echo */
    p->start_echo = 0;
    p->next_fresh++;
    if (echo)
        p->batches_echoed++;
    else
        p->batches_fresh++;
    if (p->one_pass_crops) { /* prepared before h5pack_set_output_size changed its epoch's size: redo it */
        double t0 = h5pack_clock_s();
        char why[384] = "";
        rc = h5pack_pipeline_redo_crops(p, e, why, sizeof why);
        p->stall_s += h5pack_clock_s() - t0;
        if (rc)
            return fail(p, rc, why[0] ? why : h5pack_strerror(rc), err, err_len);
    }
    add_counts(&p->delivered, &e->counts);
    if (p->sample || echo) { /* sample echo converts every delivery here (the workers only copied the batch in) */
        double t0 = h5pack_clock_s();
        rc = h5pack_pipeline_prepare_delivery(p, (int)(e - p->ring), echo, err, err_len);
        p->stall_s += h5pack_clock_s() - t0;
        if (rc)
            return rc;
    }
    return deliver(p, (int)(e - p->ring), echo, batch, err, err_len);
}

/* The ring entry of the delivery TOKEN names, or NULL with the reason (WHO: the caller, for the message). */
static ring_entry *delivered_entry(pipeline *p, uint64_t t, const char *who, int *rc, char *err, size_t err_len)
{
    uint64_t slot = h5pack_token_slot(t);
    *rc = H5PACK_ESTATE;
    if (t == 0) {
        snprintf(err, err_len, "%s: the batch holds no delivery (released already, or its h5pack_next did not "
                               "return H5PACK_OK)", who);
        return NULL;
    }
    if (!h5pack_token_has_tag(t, p->token_tag)) {
        snprintf(err, err_len, "%s: the batch is not from this reader (its token belongs to another h5pack_reader, "
                               "or was not set by h5pack_next)", who);
        *rc = H5PACK_EINVAL;
        return NULL;
    }
    if (slot >= (uint64_t)p->depth || p->ring[slot].token != t) {
        snprintf(err, err_len, "%s: the batch was released already (a stale copy of an earlier delivery)", who);
        return NULL;
    }
    *rc = H5PACK_OK;
    return &p->ring[slot];
}

int h5pack_pipeline_release(pipeline *p, uint64_t *token, char *err, size_t err_len)
{
    int rc;
    ring_entry *e = delivered_entry(p, *token, "h5pack_release", &rc, err, err_len);
    if (!e)
        return rc;
    e->token = 0;
    *token = 0;
    char detail[256] = "";
    rc = p->pp.be->ops->release(p->pp.be, h5pack_pipeline_ring_slot(p, e), detail, sizeof detail);
    if (rc)
        snprintf(err, err_len, "the backend could not release the batch: %s",
                 detail[0] ? detail : h5pack_strerror(rc));
    if (e->echoes_delivered < p->pp.echo)
        return rc; /* more echoes of this batch to come: the slot stays ours */
    free_entry(p, e);
    return rc;
}

int h5pack_pipeline_detach(pipeline *p, uint64_t token, backend_detached *out, int *copied, char *err, size_t err_len)
{
    int rc;
    ring_entry *e = delivered_entry(p, token, "h5pack_detach", &rc, err, err_len);
    if (!e)
        return rc;
    backend *be = p->pp.be;
    if (e->detached) /* the slot holds new memory now, not this delivery's */
        return h5pack_errf(H5PACK_ESTATE, err, err_len, "h5pack_detach: this delivery's memory was handed over "
                           "already");
    if (!be->ops->detach)
        return h5pack_errf(H5PACK_ESTATE, err, err_len, "h5pack_detach: the %s backend cannot hand its batch memory "
                           "over yet", be->name);
    /* the slot's later deliveries of this batch (echoes) follow this one: the backend knows what they read */
    rc = be->ops->detach(be, h5pack_pipeline_ring_slot(p, e), e->echoes_delivered < p->pp.echo, out, copied, err,
                         err_len);
    e->detached = rc == H5PACK_OK;
    return rc;
}

void h5pack_pipeline_stats(pipeline *p, h5pack_stats *st)
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
    st->cache_bytes_used = (uint64_t)h5pack_cache_slot_count(p->cache) * h5pack_pipeline_slot_bytes(p);
}

/* ---- life cycle ---------------------------------------------------------------------------------- */

/* Batches planned beyond the ring, so that their loads can start before they get a buffer: enough for
 * about two reads per worker when each batch needs batch/k new chunks (the CHUNK and SEQUENTIAL orders'
 * steady state), at least 1, at most 64 batches or 64 Ki samples. A store that reads ahead (remote:
 * store.h, reads_ahead) counts as that many workers: its fetches start when their batch is planned. */
static int lookahead(const pipeline_params *pp, const source_geometry *g)
{
    uint64_t bs = pp->setup.op.batch_size, k = g->samples_per_chunk, t = (uint64_t)pp->setup.threads;
    uint64_t ahead = h5pack_store_reads_ahead(h5pack_chunksrc_store(pp->src));
    t = ahead > t ? ahead : t;
    uint64_t a = (2 * t * k + bs - 1) / bs, cap = ((uint64_t)1 << 16) / bs;
    if (a > 64)
        a = 64;
    if (a > cap)
        a = cap;
    return a < 1 ? 1 : (int)a;
}

static int ring_alloc(pipeline *p)
{
    size_t bs = p->pp.setup.op.batch_size, nc = (size_t)p->geo->n_chunks, slots = p->pp.setup.slots_allocated;
    unsigned ahead = h5pack_store_reads_ahead(h5pack_chunksrc_store(p->pp.src));
    p->loads_known = ahead > (unsigned)p->pp.setup.threads ? ahead : (uint64_t)p->pp.setup.threads;
    p->depth = p->pp.prefetch + lookahead(&p->pp, p->geo);
    if (p->depth > PIPELINE_MAX_PREFETCH) /* the token names the entry in H5PACK_TOKEN_SLOT_BITS bits */
        p->depth = PIPELINE_MAX_PREFETCH;
    p->ring = calloc((size_t)p->depth, sizeof *p->ring);
    p->slot_busy = calloc((size_t)p->pp.prefetch, sizeof *p->slot_busy);
    p->slot_loaded = calloc(slots, sizeof *p->slot_loaded);
    p->parked_head = malloc(slots * sizeof *p->parked_head);
    p->parked_tail = malloc(slots * sizeof *p->parked_tail);
    p->access_of = malloc(bs * sizeof *p->access_of);
    p->mark_ticket = calloc(nc, sizeof *p->mark_ticket);
    p->mark_access = calloc(nc, sizeof *p->mark_access);
    if (p->geo->several_sizes)
        p->slot_dims = malloc(2 * bs * (size_t)p->pp.prefetch * sizeof *p->slot_dims);
    if (!p->ring || !p->slot_busy || !p->slot_loaded || !p->parked_head || !p->parked_tail || !p->access_of ||
        !p->mark_ticket || !p->mark_access || (p->geo->several_sizes && !p->slot_dims))
        return H5PACK_ENOMEM;
    for (size_t s = 0; s < slots; s++)
        p->parked_head[s] = p->parked_tail[s] = ITEM_NONE;
    p->ready_head = p->ready_tail = ITEM_NONE;
    for (int i = 0; i < p->depth; i++) {
        ring_entry *e = &p->ring[i];
        e->indices = malloc(bs * sizeof *e->indices);
        e->acc = malloc(bs * sizeof *e->acc);
        e->wait_users = malloc(bs * sizeof *e->wait_users);
        e->order = malloc(bs * sizeof *e->order);
        e->group_start = malloc((bs + 1) * sizeof *e->group_start);
        e->load_state = malloc(bs * sizeof *e->load_state);
        e->next_item = malloc(bs * sizeof *e->next_item);
        if (!e->indices || !e->acc || !e->wait_users || !e->order || !e->group_start || !e->load_state ||
            !e->next_item)
            return H5PACK_ENOMEM;
    }
    return 0;
}

static void ring_free(pipeline *p)
{
    for (int i = 0; p->ring && i < p->depth; i++) {
        ring_entry *e = &p->ring[i];
        free(e->indices), free(e->acc), free(e->wait_users), free(e->order), free(e->group_start);
        free(e->load_state), free(e->next_item);
    }
    free(p->ring), free(p->slot_busy), free(p->slot_loaded), free(p->parked_head), free(p->parked_tail);
    free(p->access_of), free(p->mark_ticket), free(p->mark_access);
}

static int start_workers(pipeline *p, char *err, size_t err_len)
{
    int n = p->pp.setup.threads;
    p->workers = calloc((size_t)n, sizeof *p->workers);
    if (!p->workers)
        return H5PACK_ENOMEM;
    for (int i = 0; i < n; i++) {
        worker *w = &p->workers[i];
        w->p = p;
        w->scratch = h5pack_chunksrc_scratch_new(p->pp.src);
        if (!w->scratch)
            return H5PACK_ENOMEM;
        if (pthread_create(&w->thread, NULL, h5pack_pipeline_worker_main, w)) {
            snprintf(err, err_len, "cannot start worker thread %d of %d", i + 1, n);
            return H5PACK_ENOMEM;
        }
        p->n_started++;
    }
    return 0;
}

/* The start position (pipeline_impl.h, "Resume"): the tickets' numbering, the planner that starts there,
 * and the run's end counted in tickets (epochs counts from epoch 0, whatever the start). */
static int resume_setup(pipeline *p)
{
    const pipeline_params *pp = &p->pp;
    uint64_t bpe = p->batches_per_epoch, g = pp->start_batch;
    if (bpe && pp->start_epoch > (UINT64_MAX - g) / bpe)
        return H5PACK_EINVAL;
    p->pos0 = pp->start_epoch * bpe;
    p->resume_g = g;
    p->prefill = h5pack_pipeline_prefill_count(p, g);
    p->prefill_left = p->prefill;
    p->start_echo = pp->start_echo;
    uint64_t start = p->pos0 + g;
    if (p->total_batches) { /* finite: the tickets up to the end */
        if (start >= p->total_batches)
            p->nothing_left = 1; /* no planner: planning_done() and next() see nothing_left */
        else
            p->total_batches = p->total_batches - start + p->prefill;
    }
    if (p->nothing_left)
        return 0;
    plan_start at = {pp->start_epoch, pp->setup.start_origin, p->prefill, g}; /* origin: start_sample's layout */
    return h5pack_planner_create_from(&pp->setup.op, pp->setup.slots, pp->setup.epochs, &at, &p->plan);
}

/* The lock and both conditions, or none of them (-1). */
static int init_sync(pipeline *p)
{
    if (pthread_mutex_init(&p->lock, NULL) != 0)
        return -1;
    if (pthread_cond_init(&p->work, NULL) != 0) {
        pthread_mutex_destroy(&p->lock);
        return -1;
    }
    if (pthread_cond_init(&p->ready, NULL) != 0) {
        pthread_cond_destroy(&p->work), pthread_mutex_destroy(&p->lock);
        return -1;
    }
    return 0;
}

int h5pack_pipeline_start(const pipeline_params *pp, pipeline **out, char *err, size_t err_len)
{
    *out = NULL;
    if (pp->prefetch < 1 || pp->prefetch > PIPELINE_MAX_PREFETCH) {
        snprintf(err, err_len, "prefetch must be in 1..%d", PIPELINE_MAX_PREFETCH);
        return H5PACK_EINVAL;
    }
    pipeline *p = calloc(1, sizeof *p);
    if (!p)
        return H5PACK_ENOMEM;
    p->pp = *pp;
    p->geo = h5pack_chunksrc_geometry(pp->src);
    p->labels = h5pack_chunksrc_label_rows(pp->src);
    p->label_bytes = h5pack_chunksrc_label_bytes(p->geo);
    p->echo_slot = -1;
    p->one_pass = h5pack_pipeline_one_pass(pp);
    p->one_pass_crops = h5pack_backend_cpu_one_pass_crops(pp->be);
    p->token_tag = h5pack_token_new_tag();
    p->batches_per_epoch = h5pack_order_batches_per_epoch(&pp->setup.op);
    /* 0 = endless; so is a product past 2^64, which no run reaches (wrapping it could end a run early) */
    uint64_t epochs = pp->setup.epochs, bpe = p->batches_per_epoch;
    p->total_batches = bpe && epochs > UINT64_MAX / bpe ? 0 : epochs * bpe;
    atomic_init(&p->stop, 0);
    if (init_sync(p) != 0) {
        snprintf(err, err_len, "cannot set up the reader's lock and conditions");
        free(p);
        return H5PACK_ENOMEM;
    }
    int rc = h5pack_pipeline_echo_start(p);
    if (rc == 0)
        rc = resume_setup(p);
    if (rc == 0)
        rc = h5pack_pipeline_masks_start(p);
    if (rc == 0)
        rc = h5pack_cache_create(pp->setup.slots_allocated, (size_t)h5pack_pipeline_slot_bytes(p),
                                 h5pack_pipeline_load_chunk, p, &p->cache);
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
    h5pack_pipeline_free(p);
    return rc;
}

static void stop_everything(pipeline *p)
{
    pthread_mutex_lock(&p->lock);
    atomic_store(&p->stop, 1);
    pthread_cond_broadcast(&p->work);
    pthread_cond_broadcast(&p->ready);
    pthread_mutex_unlock(&p->lock);
    if (p->cache)
        h5pack_cache_stop(p->cache);
}

void h5pack_pipeline_free(pipeline *p)
{
    if (!p)
        return;
    stop_everything(p);
    for (int i = 0; i < p->n_started; i++)
        pthread_join(p->workers[i].thread, NULL);
    for (int i = 0; p->workers && i < p->pp.setup.threads; i++) {
        h5pack_chunksrc_scratch_free(p->workers[i].scratch), free(p->workers[i].crop_scratch);
        h5pack_chunksrc_scratch_free(p->workers[i].mask_scratch);
        h5pack_backend_cpu_crop_memo_free(p->workers[i].crop_memo);
    }
    h5pack_chunksrc_scratch_free(p->redo.scratch), free(p->redo.crop_scratch), free(p->redo_chunk);
    h5pack_backend_cpu_crop_memo_free(p->redo.crop_memo);
    free(p->slot_dims);
    free(p->workers);
    ring_free(p);
    h5pack_pipeline_echo_free(p);
    h5pack_pipeline_masks_free(p);
    h5pack_cache_free(p->cache);
    h5pack_planner_free(p->plan);
    pthread_cond_destroy(&p->work), pthread_cond_destroy(&p->ready);
    pthread_mutex_destroy(&p->lock);
    free(p);
}
