/* patch_fill.c - the planning thread of patch reading (patch_pipe.h): per batch, the plan, the tile loads
 * (in parallel: mapped tiles are populated and lent, others read into the slot's buffer), the patches
 * assembled from the tiles (in parallel), the labels, and the backend's submit. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "augment.h"
#include "backend_convert.h"
#include "clock.h"
#include "patch_pipe_impl.h"

#define NO_TILE UINT64_MAX

/* Room for the plan's slots (it grows the cache when one batch needs more tiles than it holds). */
static int grow_slots(patch_pipe *p, char *err, size_t err_len)
{
    size_t want = h5pack_patch_plan_slots(p->plan), have = p->slot_n;
    if (want <= have)
        return 0;
    uint8_t **buf = realloc(p->slot_buf, want * sizeof *buf);
    if (buf)
        p->slot_buf = buf;
    const uint8_t **data = buf ? realloc(p->slot_data, want * sizeof *data) : NULL;
    if (data)
        p->slot_data = data;
    uint64_t *stored = data ? realloc(p->slot_stored, want * sizeof *stored) : NULL;
    if (stored)
        p->slot_stored = stored;
    uint64_t *lent = stored ? realloc(p->slot_lent, want * sizeof *lent) : NULL;
    if (!lent)
        return h5pack_errf(H5PACK_ENOMEM, err, err_len, "out of memory for %zu cached tiles", want);
    p->slot_lent = lent;
    for (size_t s = have; s < want; s++)
        buf[s] = NULL, data[s] = NULL, stored[s] = 0, lent[s] = NO_TILE;
    __atomic_store_n(&p->slot_n, want, __ATOMIC_RELAXED); /* the stats read it from the consumer */
    return 0;
}

/* One load of the batch (pool job): the mapped tile lent, else read into the slot's own buffer. */
static void load_one(void *ctx, size_t item, int t)
{
    patch_pipe *p = ctx;
    const patch_access *x = &p->loads[item];
    patch_entry *e = p->filling;
    if (__atomic_load_n(&p->load_failed, __ATOMIC_RELAXED))
        return;
    if (p->slot_lent[x->slot] != NO_TILE) /* the slot's previous tile was lent: nobody reads it any more */
        h5pack_tilesrc_map_release(p->pp.src, p->slot_lent[x->slot]);
    p->slot_lent[x->slot] = NO_TILE;
    uint64_t before = p->cost[t].bytes_read;
    const uint8_t *data = NULL;
    int rc = 0;
    char msg[384];
    if (h5pack_tilesrc_map(p->pp.src, x->tile, &data, &p->cost[t]) == 0) {
        p->slot_lent[x->slot] = x->tile;
    } else if (!p->slot_buf[x->slot] && !(p->slot_buf[x->slot] = malloc((size_t)p->g->tile_bytes))) {
        rc = h5pack_errf(H5PACK_ENOMEM, msg, sizeof msg, "out of memory for a tile of %llu bytes",
                         (unsigned long long)p->g->tile_bytes);
    } else {
        data = p->slot_buf[x->slot];
        rc = h5pack_tilesrc_read(p->pp.src, x->tile, p->slot_buf[x->slot], p->scratch[t], &p->cost[t], msg, sizeof msg);
    }
    p->slot_data[x->slot] = data;
    p->slot_stored[x->slot] = p->cost[t].bytes_read - before;
    if (rc && !__atomic_exchange_n(&p->load_failed, 1, __ATOMIC_ACQ_REL)) {
        memcpy(e->err, msg, sizeof msg);
        e->rc = rc;
    }
}

/* Reads the batch's missing tiles into their slots, on the pool's threads. */
static int load_tiles(patch_pipe *p, const patch_planned *b, patch_entry *e)
{
    int rc = grow_slots(p, e->err, sizeof e->err);
    size_t n = 0;
    h5pack_tile_map_clear(&p->batch_slots);
    for (size_t a = 0; a < b->n_acc && !rc; a++) {
        if (h5pack_tile_map_put(&p->batch_slots, b->acc[a].tile, b->acc[a].slot))
            rc = h5pack_errf(H5PACK_ENOMEM, e->err, sizeof e->err, "out of memory");
        if (b->acc[a].load)
            p->loads[n++] = b->acc[a];
    }
    if (rc)
        return rc;
    p->filling = e, p->load_failed = 0;
    h5pack_patch_pool_run(p->pool, n, load_one, p);
    return p->load_failed ? e->rc : 0;
}

/* Copies the part of tile TILE that patch (Y, X) of image IM covers into DST (S x S x C, HWC). */
static void copy_tile(const patch_pipe *p, const tile_image *im, uint64_t tile, int64_t y, int64_t x, uint8_t *dst)
{
    uint32_t T = p->g->tile, C = p->g->channels;
    int64_t S = p->S;
    uint64_t k = tile - im->first_tile, ty = k / im->nx, tx = k % im->nx, slot = 0;
    int64_t ty0 = (int64_t)(ty * T), tx0 = (int64_t)(tx * T);
    int64_t r0 = y > ty0 ? y : ty0, r1 = y + S < ty0 + im->ch ? y + S : ty0 + im->ch;
    int64_t c0 = x > tx0 ? x : tx0, c1 = x + S < tx0 + im->cw ? x + S : tx0 + im->cw;
    r1 = r1 < (int64_t)im->h ? r1 : (int64_t)im->h, c1 = c1 < (int64_t)im->w ? c1 : (int64_t)im->w;
    h5pack_tile_map_get(&p->batch_slots, tile, &slot); /* every tile of the batch is there */
    const uint8_t *src = p->slot_data[slot];
    size_t run = (size_t)(c1 - c0) * C;
    for (int64_t r = r0; r < r1; r++)
        memcpy(dst + ((size_t)(r - y) * (size_t)S + (size_t)(c0 - x)) * C,
               src + ((size_t)(r - ty0) * im->cw + (size_t)(c0 - tx0)) * C, run);
}

/* A patch into DST: every tile it overlaps; pixels past a small image's edge are 0. */
static void assemble_patch(const patch_pipe *p, const int64_t *where, uint64_t *tiles, uint8_t *dst)
{
    const tile_image *im = h5pack_tilesrc_image(p->pp.src, (uint64_t)where[0]);
    if (where[1] + p->S > (int64_t)im->h || where[2] + p->S > (int64_t)im->w)
        memset(dst, 0, p->patch_bytes);
    size_t n = h5pack_patch_windows_tiles(p->pp.w, where, tiles);
    for (size_t t = 0; t < n; t++)
        copy_tile(p, im, tiles[t], where[1], where[2], dst);
}

/* Patch Q of the batch being filled (pool job): into the backend's uint8 input; on the CPU one-pass path
 * converted into the output as it is assembled, or assembled there directly when the output is the raw
 * uint8 HWC patch itself. */
static void assemble_one(void *ctx, size_t q, int t)
{
    patch_pipe *p = ctx;
    uint64_t *tiles = p->tile_list + (size_t)t * h5pack_patch_windows_max_tiles(p->pp.w);
    const int64_t *where = p->filling->where + 3 * q;
    if (!p->direct) {
        assemble_patch(p, where, tiles, p->fill_in + q * p->patch_bytes);
    } else if (p->direct->raw && p->direct->same_layout) {
        assemble_patch(p, where, tiles, (uint8_t *)p->fill_out + q * p->patch_bytes);
    } else {
        uint8_t *buf = p->assemble_buf + (size_t)t * p->patch_bytes;
        assemble_patch(p, where, tiles, buf);
        h5pack_backend_conv_image(p->direct, buf, p->fill_out, q, p->fill_key);
    }
}

static void write_labels(patch_pipe *p, const patch_entry *e, int slot)
{
    if (!p->labels)
        return;
    uint8_t *dst = (uint8_t *)p->pp.be->ops->host_labels(p->pp.be, slot);
    for (size_t q = 0; q < e->count; q++)
        memcpy(dst + q * p->label_bytes, p->labels + e->indices[q] * p->label_bytes, p->label_bytes);
}

/* The reads of the batch, summed over the threads' costs (reset for the next batch). */
static void collect_costs(patch_pipe *p, const patch_planned *b, patch_entry *e)
{
    for (int t = 0; t < p->pp.threads; t++) {
        e->counts.bytes_read += p->cost[t].bytes_read, e->counts.bytes_inflated += p->cost[t].bytes_inflated;
        e->counts.read_s += p->cost[t].read_s, e->counts.inflate_s += p->cost[t].inflate_s;
        memset(&p->cost[t], 0, sizeof p->cost[t]);
    }
    for (size_t a = 0; a < b->n_acc; a++) {
        e->counts.misses += b->acc[a].load, e->counts.hits += !b->acc[a].load;
        if (b->acc[a].first_in_epoch) /* needed once per epoch: what a perfect cache reads */
            e->counts.bytes_needed += p->slot_stored[b->acc[a].slot];
    }
}

/* Fills entry E (ring slot SLOT) with planned batch B and submits it. */
static int fill_batch(patch_pipe *p, const patch_planned *b, patch_entry *e, int slot)
{
    memset(&e->counts, 0, sizeof e->counts);
    e->epoch = b->epoch, e->index = b->index, e->count = b->count;
    memcpy(e->where, b->where, b->count * 3 * sizeof *e->where);
    for (size_t q = 0; q < b->count; q++)
        e->indices[q] = (uint64_t)b->where[3 * q];
    int rc = load_tiles(p, b, e);
    collect_costs(p, b, e);
    if (rc)
        return rc;
    double t0 = h5pack_clock_s();
    p->fill_key = aug_batch_key(p->pp.seed, b->epoch, b->index * p->pp.world + p->pp.rank, 0);
    p->fill_in = p->direct ? NULL : p->pp.be->ops->host_input(p->pp.be, slot);
    p->fill_out = p->direct ? h5pack_backend_cpu_output(p->pp.be, slot) : NULL;
    h5pack_patch_pool_run(p->pool, b->count, assemble_one, p);
    write_labels(p, e, slot);
    e->counts.assemble_s = h5pack_clock_s() - t0;
    backend_job job = h5pack_backend_job(b->count, p->fill_key);
    job.epoch = b->epoch;
    job.pixels_done = p->direct != NULL;
    char detail[256] = "";
    rc = p->pp.be->ops->submit(p->pp.be, slot, job, detail, sizeof detail);
    if (rc)
        snprintf(e->err, sizeof e->err, "the backend could not convert the batch: %s", detail[0] ? detail : h5pack_strerror(rc));
    return rc;
}

/* Waits until entry E is free and takes it; 0, or -1 when stopping. */
static int wait_free(patch_pipe *p, patch_entry *e)
{
    pthread_mutex_lock(&p->lock);
    while (e->state != PATCH_FREE && !p->stop)
        pthread_cond_wait(&p->freed, &p->lock);
    int rc = p->stop ? -1 : 0;
    if (!rc)
        e->state = PATCH_FILLING;
    pthread_mutex_unlock(&p->lock);
    return rc;
}

static void publish(patch_pipe *p, patch_entry *e, uint64_t ticket, int rc)
{
    pthread_mutex_lock(&p->lock);
    e->ticket = ticket, e->rc = rc;
    e->state = PATCH_READY;
    if (rc)
        p->ended = 1, p->end_ticket = ticket + 1; /* the failure is the last thing delivered */
    pthread_cond_broadcast(&p->ready);
    pthread_mutex_unlock(&p->lock);
}

static void publish_end(patch_pipe *p, patch_entry *e, uint64_t ticket)
{
    pthread_mutex_lock(&p->lock);
    e->state = PATCH_FREE;
    p->ended = 1, p->end_ticket = ticket;
    pthread_cond_broadcast(&p->ready);
    pthread_mutex_unlock(&p->lock);
}

void *h5pack_patch_fill_main(void *arg)
{
    patch_pipe *p = arg;
    for (uint64_t t = 0;; t++) {
        int slot = (int)(t % (uint64_t)p->pp.prefetch);
        patch_entry *e = &p->ring[slot];
        if (wait_free(p, e))
            break;
        patch_planned b;
        e->rc = 0, e->err[0] = 0;
        int rc = h5pack_patch_plan_next(p->plan, &b);
        if (rc == 0) { /* the configured epochs are done */
            publish_end(p, e, t);
            break;
        }
        if (rc < 0)
            snprintf(e->err, sizeof e->err, "out of memory while planning the patches");
        else
            rc = fill_batch(p, &b, e, slot);
        publish(p, e, t, rc < 0 ? rc : 0);
        if (rc < 0)
            break;
    }
    return NULL;
}
