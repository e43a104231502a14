/* patch_pipe.c - life cycle and consumer side of patch reading (patch_pipe.h); the planning thread is
 * patch_fill.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend_convert.h"
#include "clock.h"
#include "patch_pipe_impl.h"
#include "token.h"

static int allocate(patch_pipe *p)
{
    int threads = p->pp.threads, P = p->pp.prefetch;
    size_t max_tiles = h5pack_patch_windows_max_tiles(p->pp.w);
    p->ring = calloc((size_t)P, sizeof *p->ring);
    p->scratch = calloc((size_t)threads, sizeof *p->scratch);
    p->cost = calloc((size_t)threads, sizeof *p->cost);
    p->assemble_s = calloc((size_t)threads, sizeof *p->assemble_s);
    p->tile_list = malloc((size_t)threads * max_tiles * sizeof *p->tile_list);
    for (int k = 0; k < 2; k++) {
        fill_state *f = &p->fs[k];
        f->where = malloc(p->batch_size * 3 * sizeof *f->where); /* acc and loads grow with the batches */
        if (!f->where || h5pack_tile_map_init(&f->slots, 256))
            return H5PACK_ENOMEM;
    }
    p->assemble_buf = p->one_pass ? malloc((size_t)threads * p->patch_bytes) : NULL;
    if (!p->ring || !p->scratch || !p->cost || !p->assemble_s || !p->tile_list || (p->one_pass && !p->assemble_buf) ||
        h5pack_patch_pool_start(threads, &p->pool))
        return H5PACK_ENOMEM;
    for (int t = 0; t < threads; t++)
        if (!(p->scratch[t] = h5pack_tilesrc_scratch_new(p->pp.src)))
            return H5PACK_ENOMEM;
    for (int i = 0; i < P; i++) {
        p->ring[i].where = malloc(p->batch_size * 3 * sizeof *p->ring[i].where);
        p->ring[i].indices = malloc(p->batch_size * sizeof *p->ring[i].indices);
        if (!p->ring[i].where || !p->ring[i].indices)
            return H5PACK_ENOMEM;
    }
    return 0;
}

int h5pack_patch_pipe_start(const patch_pipe_params *pp, patch_pipe **out, char *err, size_t err_len)
{
    *out = NULL;
    patch_pipe *p = calloc(1, sizeof *p);
    if (!p)
        return h5pack_errf(H5PACK_ENOMEM, err, err_len, "out of memory");
    p->pp = *pp;
    p->g = h5pack_tilesrc_geometry(pp->src);
    p->S = pp->patch_size;
    p->batch_size = h5pack_patch_windows_batch_size(pp->w);
    p->patch_bytes = (size_t)p->S * p->S * p->g->channels;
    p->label_bytes = h5pack_tilesrc_label_bytes(p->g);
    p->labels = h5pack_tilesrc_label_rows(pp->src);
    p->one_pass = h5pack_backend_cpu_one_pass(pp->be);
    p->token_tag = h5pack_token_new_tag();
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->freed, NULL), pthread_cond_init(&p->ready, NULL);
    *out = p; /* from here on h5pack_patch_pipe_free cleans up */
    if (allocate(p) ||
        h5pack_patch_plan_create(pp->w, pp->cache_slots, pp->epochs, pp->start_epoch, pp->start_batch, &p->plan))
        return h5pack_errf(H5PACK_ENOMEM, err, err_len, "out of memory for the patch pipeline (%llu patches per "
                           "epoch, batch %zu)", (unsigned long long)h5pack_patch_windows_per_epoch(pp->w), p->batch_size);
    if (pthread_create(&p->thread, NULL, h5pack_patch_fill_main, p))
        return h5pack_errf(H5PACK_ENOMEM, err, err_len, "cannot start the patch thread");
    p->started = 1;
    return 0;
}

void h5pack_patch_pipe_free(patch_pipe *p)
{
    if (!p)
        return;
    if (p->started) {
        pthread_mutex_lock(&p->lock);
        p->stop = 1;
        pthread_cond_broadcast(&p->freed);
        pthread_mutex_unlock(&p->lock);
        pthread_join(p->thread, NULL);
    }
    h5pack_patch_pool_stop(p->pool);
    for (size_t i = 0; p->slots && i < p->slot_n; i++) {
        if (p->slots[i].lent != UINT64_MAX)
            h5pack_tilesrc_map_release(p->pp.src, p->slots[i].lent);
        free(p->slots[i].buf);
    }
    for (int t = 0; p->scratch && t < p->pp.threads; t++)
        h5pack_tilesrc_scratch_free(p->scratch[t]);
    for (int i = 0; p->ring && i < p->pp.prefetch; i++)
        free(p->ring[i].where), free(p->ring[i].indices);
    h5pack_patch_plan_free(p->plan);
    free(p->slots), free(p->scratch), free(p->cost), free(p->tile_list), free(p->assemble_buf), free(p->assemble_s);
    for (int k = 0; k < 2; k++) {
        free(p->fs[k].where), free(p->fs[k].acc), free(p->fs[k].loads);
        h5pack_tile_map_free(&p->fs[k].slots);
    }
    free(p->ring);
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->freed), pthread_cond_destroy(&p->ready);
    free(p);
}

/* ---- the consumer -------------------------------------------------------------------------------- */

static int fail(patch_pipe *p, int rc, const char *msg, char *err, size_t err_len)
{
    p->failed = rc;
    snprintf(p->failed_err, sizeof p->failed_err, "%s", msg);
    snprintf(err, err_len, "%s", msg);
    return rc;
}

static void add_counts(patch_counts *to, const patch_counts *c)
{
    to->hits += c->hits, to->misses += c->misses, to->bytes_read += c->bytes_read;
    to->bytes_inflated += c->bytes_inflated, to->bytes_needed += c->bytes_needed;
    to->read_s += c->read_s, to->inflate_s += c->inflate_s, to->assemble_s += c->assemble_s;
}

/* Waits for ticket T: its entry, or NULL at the end of the configured epochs. */
static patch_entry *wait_ticket(patch_pipe *p, uint64_t t)
{
    patch_entry *e = &p->ring[t % (uint64_t)p->pp.prefetch];
    double t0 = h5pack_clock_s();
    pthread_mutex_lock(&p->lock);
    while (!(e->state == PATCH_READY && e->ticket == t) && !(p->ended && t >= p->end_ticket))
        pthread_cond_wait(&p->ready, &p->lock);
    int done = !(e->state == PATCH_READY && e->ticket == t);
    pthread_mutex_unlock(&p->lock);
    p->stall_s += h5pack_clock_s() - t0;
    return done ? NULL : e;
}

static int deliver(patch_pipe *p, patch_entry *e, int slot, h5pack_batch *batch, char *err, size_t err_len)
{
    char detail[256] = "";
    memset(batch, 0, sizeof *batch);
    int rc = p->pp.be->ops->output(p->pp.be, slot, e->count, batch, detail, sizeof detail);
    if (rc) {
        char msg[384];
        snprintf(msg, sizeof msg, "the backend could not hand out the batch: %s", detail[0] ? detail : h5pack_strerror(rc));
        return fail(p, rc, msg, err, err_len);
    }
    h5pack_backend_batch_labels(batch, p->labels != NULL, p->g->label_columns, p->g->labels_are_float);
    const backend_box *boxes = NULL;
    p->pp.be->ops->geometry(p->pp.be, slot, &boxes, &batch->height, &batch->width);
    batch->boxes = (const h5pack_crop_box *)(const void *)boxes;
    batch->indices = e->indices, batch->where = e->where;
    batch->count = e->count, batch->epoch = e->epoch, batch->index = e->index;
    batch->token = e->token = h5pack_token_make(p->token_tag, ++p->deliveries, slot);
    e->detached = 0;
    return 0;
}

int h5pack_patch_pipe_next(patch_pipe *p, h5pack_batch *batch, char *err, size_t err_len)
{
    if (p->failed) {
        snprintf(err, err_len, "%s", p->failed_err);
        return p->failed;
    }
    uint64_t t = p->next_ticket;
    int slot = (int)(t % (uint64_t)p->pp.prefetch);
    patch_entry *e = &p->ring[slot];
    pthread_mutex_lock(&p->lock);
    int held = e->state == PATCH_DELIVERED;
    pthread_mutex_unlock(&p->lock);
    if (held) {
        snprintf(err, err_len, "release batch %llu of epoch %llu first: all %d ring slots are held (prefetch)",
                 (unsigned long long)e->index, (unsigned long long)e->epoch, p->pp.prefetch);
        return H5PACK_ESTATE;
    }
    if (!(e = wait_ticket(p, t)))
        return H5PACK_END;
    if (e->rc < 0)
        return fail(p, e->rc, e->err, err, err_len);
    int rc = deliver(p, e, slot, batch, err, err_len);
    if (rc)
        return rc;
    pthread_mutex_lock(&p->lock);
    e->state = PATCH_DELIVERED;
    pthread_mutex_unlock(&p->lock);
    p->next_ticket++;
    add_counts(&p->delivered, &e->counts);
    p->samples += e->count, p->batches++;
    if (e->index + 1 == h5pack_patch_windows_batches(p->pp.w))
        p->epochs_completed++;
    return H5PACK_OK;
}

int h5pack_patch_pipe_release(patch_pipe *p, uint64_t *token, char *err, size_t err_len)
{
    uint64_t tok = *token;
    int slot = (int)h5pack_token_slot(tok), held = 0;
    if (tok != 0 && h5pack_token_has_tag(tok, p->token_tag) && slot < p->pp.prefetch) {
        pthread_mutex_lock(&p->lock);
        held = p->ring[slot].state == PATCH_DELIVERED && p->ring[slot].token == tok;
        pthread_mutex_unlock(&p->lock);
    }
    if (!held) {
        snprintf(err, err_len, "h5pack_release: not a batch of this reader that is held (already released, or "
                               "from another reader)");
        return H5PACK_EINVAL;
    }
    char detail[256] = "";
    int rc = p->pp.be->ops->release(p->pp.be, slot, detail, sizeof detail);
    if (rc)
        return fail(p, rc, detail[0] ? detail : h5pack_strerror(rc), err, err_len);
    *token = 0;
    pthread_mutex_lock(&p->lock);
    p->ring[slot].token = 0;
    p->ring[slot].state = PATCH_FREE;
    pthread_cond_broadcast(&p->freed);
    pthread_mutex_unlock(&p->lock);
    return 0;
}

int h5pack_patch_pipe_detach(patch_pipe *p, uint64_t token, backend_detached *out, int *copied, char *err,
                             size_t err_len)
{
    int slot = (int)h5pack_token_slot(token), held = 0;
    if (token != 0 && !h5pack_token_has_tag(token, p->token_tag))
        return h5pack_errf(H5PACK_EINVAL, err, err_len, "h5pack_detach: the batch is not from this reader");
    if (token != 0 && slot < p->pp.prefetch) {
        pthread_mutex_lock(&p->lock); /* (the planning thread reads the states under it) */
        held = p->ring[slot].state == PATCH_DELIVERED && p->ring[slot].token == token;
        pthread_mutex_unlock(&p->lock);
    }
    if (!held)
        return h5pack_errf(H5PACK_ESTATE, err, err_len, "h5pack_detach: the batch holds no delivery (released "
                           "already, or its h5pack_next did not return H5PACK_OK)");
    patch_entry *e = &p->ring[slot];
    if (e->detached) /* the slot holds new memory now, not this delivery's */
        return h5pack_errf(H5PACK_ESTATE, err, err_len, "h5pack_detach: this delivery's memory was handed over "
                           "already");
    /* the planning thread fills this slot again only after the release (wait_free, under the lock) */
    int rc = p->pp.be->ops->detach(p->pp.be, slot, 0, out, copied, err, err_len);
    e->detached = rc == H5PACK_OK;
    return rc;
}

void h5pack_patch_pipe_stats(const patch_pipe *p, h5pack_stats *st)
{
    const patch_counts *c = &p->delivered;
    st->samples = p->samples, st->batches = st->batches_fresh = p->batches;
    st->epochs_completed = p->epochs_completed;
    st->chunk_hits = c->hits, st->chunk_misses = c->misses;
    st->bytes_read = c->bytes_read, st->bytes_inflated = c->bytes_inflated, st->bytes_needed = c->bytes_needed;
    st->stall_s = p->stall_s;
    st->busy_read_s = c->read_s, st->busy_inflate_s = c->inflate_s, st->busy_assemble_s = c->assemble_s;
    double convert_s = 0, copy_s = 0;
    uint64_t device_bytes = 0;
    p->pp.be->ops->times(p->pp.be, &convert_s, &copy_s, &device_bytes);
    st->busy_convert_s = convert_s, st->busy_copy_s = copy_s, st->device_bytes = device_bytes;
    st->cache_bytes_used = (uint64_t)h5pack_patch_pipe_cache_tiles(p) * p->g->tile_bytes;
}

size_t h5pack_patch_pipe_cache_tiles(const patch_pipe *p)
{
    return __atomic_load_n(&p->slot_n, __ATOMIC_RELAXED);
}
