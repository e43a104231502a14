/* pipeline_echo.c - the consumer side's conversion of each delivery: the echoes of batch echo, and every
 * delivery of sample echo (echo_sched.h): wait for the fresh batches the delivery reads ahead (they sit
 * READY in the ring, untaken), keep the epoch's first E - 1 batches in the backend's pool, compose the
 * delivery's sources, file rows and labels, and convert it into the delivered batch's slot. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "echo_sched.h"
#include "pipeline_impl.h"

struct echo_state {
    echo_sched sched;
    uint64_t per_epoch;       /* fresh batches per epoch (T) */
    backend_source *sources;  /* B: the delivery being composed */
    uint8_t *labels;          /* B label rows */
    uint32_t *lag, *pos, *perm;
    uint64_t *indices;        /* slots x B: each slot's current delivery's file rows */
    uint64_t *pool_indices;   /* pool entries x B: the pooled batches' file rows */
    size_t *pool_count;       /* per pool entry */
    uint64_t *pool_epoch;     /* per pool entry: 1 + the epoch whose batch it holds */
};

int h5pack_pipeline_echo_start(pipeline *p)
{
    if (!p->pp.sample_echo)
        return 0;
    struct echo_state *s = calloc(1, sizeof *s);
    if (!s)
        return H5PACK_ENOMEM;
    p->sample = s;
    const order_params *op = &p->pp.setup.op;
    size_t B = (size_t)op->batch_size, slots = (size_t)p->pp.prefetch;
    s->per_epoch = p->batches_per_epoch;
    h5pack_echo_sched_for(&s->sched, p->pp.echo, op, p->pp.start_epoch, p->pp.setup.start_origin);
    size_t pool = (size_t)h5pack_echo_pool_batches(&s->sched);
    s->sources = malloc(B * sizeof *s->sources);
    s->labels = malloc(B * (p->label_bytes ? p->label_bytes : 1));
    s->lag = malloc(B * sizeof *s->lag), s->pos = malloc(B * sizeof *s->pos), s->perm = malloc(B * sizeof *s->perm);
    s->indices = malloc(slots * B * sizeof *s->indices);
    s->pool_indices = malloc((pool ? pool : 1) * B * sizeof *s->pool_indices);
    s->pool_count = calloc(pool ? pool : 1, sizeof *s->pool_count);
    s->pool_epoch = calloc(pool ? pool : 1, sizeof *s->pool_epoch);
    if (!s->sources || !s->labels || !s->lag || !s->pos || !s->perm || !s->indices || !s->pool_indices ||
        !s->pool_count || !s->pool_epoch)
        return H5PACK_ENOMEM;
    return 0;
}

void h5pack_pipeline_echo_free(pipeline *p)
{
    struct echo_state *s = p->sample;
    if (!s)
        return;
    free(s->sources), free(s->labels), free(s->lag), free(s->pos), free(s->perm);
    free(s->indices), free(s->pool_indices), free(s->pool_count), free(s->pool_epoch);
    free(s);
    p->sample = NULL;
}

const uint64_t *h5pack_pipeline_delivery_indices(const pipeline *p, int slot)
{
    return p->sample->indices + (size_t)slot * p->pp.setup.op.batch_size;
}

uint64_t h5pack_pipeline_next_epoch(const pipeline *p)
{
    if (p->next_fresh <= p->prefill || !p->batches_per_epoch) /* nothing delivered yet: the start's epoch */
        return p->pp.start_epoch;
    return h5pack_pipeline_pos_of(p, p->next_fresh - 1) / p->batches_per_epoch + 1;
}

uint64_t h5pack_pipeline_prefill_count(const pipeline *p, uint64_t g)
{
    if (!p->sample)
        return 0;
    echo_sched view = h5pack_echo_in_epoch(&p->sample->sched, p->pp.start_epoch), *s = &view;
    if (!h5pack_echo_composed(s, g)) /* a batch-echoed group on: the pool is not read again */
        return 0;
    uint64_t pooled = (uint64_t)h5pack_echo_pool_batches(s);
    return g < pooled ? g : pooled;
}

static int slot_of(const pipeline *p, uint64_t ticket)
{
    return (int)(ticket % (uint64_t)p->pp.prefetch);
}

/* Fails the pipeline (every later next returns it) with WHAT and DETAIL. */
static int fail(pipeline *p, int rc, const char *what, const char *detail, char *err, size_t err_len)
{
    p->failed = rc;
    snprintf(p->failed_err, sizeof p->failed_err, "%s%s%s", what, detail[0] ? ": " : "", detail);
    snprintf(err, err_len, "%s", p->failed_err);
    return rc;
}

/* Tickets of the fresh batches group G of EPOCH reads ahead (not pooled, after G): into OUT, their
 * number. */
static int lookahead(const pipeline *p, uint64_t epoch, uint64_t g, uint64_t *out)
{
    echo_sched view = h5pack_echo_in_epoch(&p->sample->sched, epoch), *s = &view;
    int n = 0;
    if (!h5pack_echo_composed(s, g))
        return 0;
    for (uint32_t d = 1; d < s->echo; d++) {
        uint64_t t = h5pack_echo_window(s, g, d);
        if (t > g && !(h5pack_echo_pooled(s, t) && p->sample->pool_epoch[t] == epoch + 1))
            out[n++] = h5pack_pipeline_ticket_of(p, epoch, t);
    }
    return n;
}

int h5pack_pipeline_sample_check(pipeline *p, char *err, size_t err_len)
{
    uint64_t pos = h5pack_pipeline_pos_of(p, p->next_fresh), ahead[64];
    int n = lookahead(p, pos / p->sample->per_epoch, pos % p->sample->per_epoch, ahead);
    /* Batch T read ahead is planned once its entry's previous batch (T - depth) is released, and bound
     * once its backend slot's previous batch (T - prefetch) is: either one held would block forever. */
    for (int k = 0; k < n; k++)
        for (int w = 0; w < 2; w++) {
            uint64_t back = w ? (uint64_t)p->depth : (uint64_t)p->pp.prefetch;
            if (ahead[k] < back)
                continue;
            const ring_entry *e = h5pack_pipeline_entry(p, ahead[k] - back);
            if (e->token && e->ticket == ahead[k] - back) {
                snprintf(err, err_len,
                         "batch %llu of epoch %llu is still unreleased and sample echo reads %u batches ahead into "
                         "its buffer: release it first",
                         (unsigned long long)e->index, (unsigned long long)e->epoch, p->pp.echo - 1);
                return H5PACK_ESTATE;
            }
        }
    return 0;
}

/* Waits until fresh batch TICKET is READY in its slot, leaving it there; 0 or the failure. */
static int wait_ticket(pipeline *p, uint64_t ticket, char *err, size_t err_len)
{
    ring_entry *e = h5pack_pipeline_entry(p, ticket);
    pthread_mutex_lock(&p->lock);
    while (!atomic_load(&p->stop) && !(e->state == RING_READY && e->ticket == ticket))
        pthread_cond_wait(&p->ready, &p->lock);
    int ok = e->state == RING_READY && e->ticket == ticket;
    pthread_mutex_unlock(&p->lock);
    if (!ok)
        return fail(p, H5PACK_ESTATE, "the reader is shutting down", "", err, err_len);
    if (e->rc < 0)
        return fail(p, e->rc, e->err, "", err, err_len);
    return 0;
}

/* Keeps fresh batch T (epoch-local) of EPOCH, in ring entry E, in pool entry T. */
static int pool_keep(pipeline *p, const ring_entry *e, uint64_t epoch, uint64_t t, char *err, size_t err_len)
{
    struct echo_state *s = p->sample;
    char detail[256] = "";
    int rc = p->pp.be->ops->pool_store(p->pp.be, h5pack_pipeline_ring_slot(p, e), e->count, (int)t, detail,
                                       sizeof detail);
    if (rc)
        return fail(p, rc, "keeping a batch for sample echo failed", detail, err, err_len);
    h5pack_pipeline_masks_pool_keep(p, h5pack_pipeline_ring_slot(p, e), e->count, (int)t);
    memcpy(s->pool_indices + t * s->sched.batch_size, e->indices, e->count * sizeof *e->indices);
    s->pool_count[t] = e->count;
    s->pool_epoch[t] = epoch + 1;
    return 0;
}

int h5pack_pipeline_pool_prefill(pipeline *p, int entry, char *err, size_t err_len)
{
    const ring_entry *e = &p->ring[entry];
    return pool_keep(p, e, e->epoch, e->index, err, err_len);
}

/* Sample echo, before group G's first delivery: the batches it reads ahead are ready, and the epoch's
 * first E - 1 batches are in the pool (stored when first seen, i.e. at group 0; on resume, the ones
 * before the start were stored by the prefill). */
static int prepare_group(pipeline *p, uint64_t epoch, uint64_t g, char *err, size_t err_len)
{
    struct echo_state *s = p->sample;
    echo_sched view = h5pack_echo_in_epoch(&s->sched, epoch);
    uint64_t ahead[64];
    int n = lookahead(p, epoch, g, ahead), rc;
    for (int k = 0; k < n; k++)
        if ((rc = wait_ticket(p, ahead[k], err, err_len)))
            return rc;
    for (uint32_t d = 0; h5pack_echo_composed(&view, g) && d < view.echo; d++) {
        uint64_t t = h5pack_echo_window(&view, g, d);
        if (!h5pack_echo_pooled(&view, t) || s->pool_epoch[t] == epoch + 1)
            continue;
        if ((rc = pool_keep(p, h5pack_pipeline_entry(p, h5pack_pipeline_ticket_of(p, epoch, t)), epoch, t, err,
                            err_len)))
            return rc;
    }
    return 0;
}

/* Composes delivery ECHO of group G of EPOCH into s->sources, s->labels and the slot's indices; returns
 * its count. */
static size_t compose(pipeline *p, int slot, uint64_t epoch, uint64_t g, uint32_t echo)
{
    struct echo_state *s = p->sample;
    echo_sched view = h5pack_echo_in_epoch(&s->sched, epoch);
    size_t B = s->sched.batch_size;
    uint64_t *rows = s->indices + (size_t)slot * B;
    size_t n = h5pack_echo_compose(&view, epoch, g, echo, s->lag, s->pos, s->perm);
    for (size_t i = 0; i < n; i++) {
        uint64_t t = h5pack_echo_window(&view, g, s->lag[i]);
        int pooled = h5pack_echo_pooled(&view, t);
        uint64_t ticket = pooled ? 0 : h5pack_pipeline_ticket_of(p, epoch, t);
        s->sources[i].buf = pooled ? p->pp.prefetch + (int32_t)t : slot_of(p, ticket);
        s->sources[i].image = s->pos[i];
        rows[i] = pooled ? s->pool_indices[t * B + s->pos[i]] : h5pack_pipeline_entry(p, ticket)->indices[s->pos[i]];
        if (p->labels)
            memcpy(s->labels + i * p->label_bytes, p->labels + rows[i] * p->label_bytes, p->label_bytes);
    }
    return n;
}

int h5pack_pipeline_prepare_delivery(pipeline *p, int entry, uint32_t echo, char *err, size_t err_len)
{
    ring_entry *e = &p->ring[entry];
    int slot = h5pack_pipeline_ring_slot(p, e); /* the backend's ring slot (and sample echo's per-slot rows) */
    backend_job job = h5pack_backend_job(e->count, h5pack_pipeline_batch_key(p, e, echo));
    job.epoch = e->epoch;
    if (p->sample) {
        uint64_t g = e->index;
        /* a group's first delivery (echo 0, or a resumed run's first, whatever its echo) prepares it */
        int rc = echo == 0 || p->deliveries == 0 ? prepare_group(p, e->epoch, g, err, err_len) : 0;
        if (rc)
            return rc;
        echo_sched view = h5pack_echo_in_epoch(&p->sample->sched, e->epoch);
        if (h5pack_echo_composed(&view, g)) {
            job.count = compose(p, slot, e->epoch, g, echo);
            job.sources = p->delivery_sources = p->sample->sources;
            job.labels = p->labels ? (const int64_t *)(const void *)p->sample->labels : NULL;
        } else { /* batch-echoed group: its own images */
            memcpy(p->sample->indices + (size_t)slot * p->sample->sched.batch_size, e->indices,
                   e->count * sizeof *e->indices);
        }
    }
    const uint64_t *rows = p->sample ? h5pack_pipeline_delivery_indices(p, slot) : e->indices;
    job.dims = h5pack_pipeline_sizes(p, slot, rows, job.count);
    char detail[256] = "";
    int rc = p->pp.be->ops->resubmit(p->pp.be, slot, job, detail, sizeof detail);
    if (rc)
        return fail(p, rc, echo ? "converting an echoed batch failed" : "converting a batch failed", detail, err,
                    err_len);
    return 0;
}
