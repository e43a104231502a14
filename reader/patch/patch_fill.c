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
    cache_slot *slots = realloc(p->slots, want * sizeof *slots);
    if (!slots)
        return h5pack_errf(H5PACK_ENOMEM, err, err_len, "out of memory for %zu cached tiles", want);
    for (size_t s = have; s < want; s++)
        slots[s] = (cache_slot){.lent = NO_TILE};
    p->slots = slots;
    __atomic_store_n(&p->slot_n, want, __ATOMIC_RELAXED); /* the stats read it from the consumer */
    return 0;
}

/* Load ITEM of the batch being loaded: the mapped tile lent, else read into the slot's own buffer. */
static void load_one(patch_pipe *p, size_t item, int t)
{
    fill_state *f = p->loading;
    const patch_access *x = &f->loads[item];
    if (__atomic_load_n(&p->load_failed, __ATOMIC_RELAXED))
        return;
    cache_slot *slot = &p->slots[x->slot];
    if (slot->lent != NO_TILE) /* the slot's previous tile was lent: nobody reads it any more */
        h5pack_tilesrc_map_release(p->pp.src, slot->lent);
    slot->lent = NO_TILE;
    uint64_t before = p->cost[t].bytes_read;
    const uint8_t *data = NULL;
    int rc = 0;
    char msg[384];
    if (h5pack_tilesrc_map(p->pp.src, x->tile, &data, &p->cost[t]) == 0) {
        slot->lent = x->tile;
    } else if (!slot->buf && !(slot->buf = malloc((size_t)p->g->tile_bytes))) {
        rc = h5pack_errf(H5PACK_ENOMEM, msg, sizeof msg, "out of memory for a tile of %llu bytes",
                         (unsigned long long)p->g->tile_bytes);
    } else {
        data = slot->buf;
        rc = h5pack_tilesrc_read(p->pp.src, x->tile, slot->buf, p->scratch[t], &p->cost[t], msg, sizeof msg);
    }
    slot->data = data;
    slot->stored = p->cost[t].bytes_read - before;
    if (rc && !__atomic_exchange_n(&p->load_failed, 1, __ATOMIC_ACQ_REL)) {
        memcpy(f->err, msg, sizeof msg);
        f->rc = rc;
    }
}

/* Takes the planner's next batch into F (its plan copied: the planner reuses its buffers) with its tiles'
 * slots: 1, 0 after the last epoch, or a negative code (F->err says why). */
static int plan_into(patch_pipe *p, fill_state *f)
{
    patch_planned b;
    f->rc = 0, f->err[0] = 0, f->n_loads = 0;
    memset(&f->counts, 0, sizeof f->counts);
    int rc = h5pack_patch_plan_next(p->plan, &b);
    if (rc < 0)
        return h5pack_errf(rc, f->err, sizeof f->err, "out of memory while planning the patches");
    if (rc == 0)
        return 0;
    if ((rc = grow_slots(p, f->err, sizeof f->err)))
        return rc;
    if (b.n_acc > f->cap) {
        patch_access *acc = realloc(f->acc, b.n_acc * sizeof *acc);
        if (acc)
            f->acc = acc;
        patch_access *loads = acc ? realloc(f->loads, b.n_acc * sizeof *loads) : NULL;
        if (!loads)
            return h5pack_errf(H5PACK_ENOMEM, f->err, sizeof f->err, "out of memory for %zu tiles", b.n_acc);
        f->loads = loads, f->cap = b.n_acc;
    }
    f->epoch = b.epoch, f->index = b.index, f->count = b.count, f->n_acc = b.n_acc;
    memcpy(f->where, b.where, b.count * 3 * sizeof *f->where);
    memcpy(f->acc, b.acc, b.n_acc * sizeof *f->acc);
    h5pack_tile_map_clear(&f->slots);
    for (size_t a = 0; a < b.n_acc; a++) {
        if (h5pack_tile_map_put(&f->slots, b.acc[a].tile, b.acc[a].slot))
            return h5pack_errf(H5PACK_ENOMEM, f->err, sizeof f->err, "out of memory");
        if (b.acc[a].load)
            f->loads[f->n_loads++] = b.acc[a];
    }
    return 1;
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
    h5pack_tile_map_get(&p->assembling->slots, tile, &slot); /* every tile of the batch is there */
    const uint8_t *src = p->slots[slot].data;
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

/* Patch Q of the batch being assembled: into the backend's uint8 input; on the CPU one-pass path
 * converted into the output as it is assembled, or assembled there directly when the output is the raw
 * uint8 HWC patch itself. */
static void assemble_one(patch_pipe *p, size_t q, int t)
{
    uint64_t *tiles = p->tile_list + (size_t)t * h5pack_patch_windows_max_tiles(p->pp.w);
    const int64_t *where = p->assembling->where + 3 * q;
    if (!p->one_pass) {
        assemble_patch(p, where, tiles, p->fill_in + q * p->patch_bytes);
    } else if (p->one_pass->raw && p->one_pass->same_layout) {
        assemble_patch(p, where, tiles, (uint8_t *)p->fill_out + q * p->patch_bytes);
    } else {
        uint8_t *buf = p->assemble_buf + (size_t)t * p->patch_bytes;
        assemble_patch(p, where, tiles, buf);
        h5pack_backend_conv_image(p->one_pass, buf, p->fill_out, q, p->fill_key);
    }
}

/* One pool job: the patches of `assembling` first, then the loads of `loading`. */
static void job_item(void *ctx, size_t item, int t)
{
    patch_pipe *p = ctx;
    size_t n = p->assembling ? p->assembling->count : 0;
    if (item < n) {
        double t0 = h5pack_clock_s();
        assemble_one(p, item, t);
        p->assemble_s[t] += h5pack_clock_s() - t0;
    } else
        load_one(p, item - n, t);
}

/* Assembles A (NULL: none) and loads L's tiles (NULL: none) in one job; L's read costs are collected.
 * Returns the threads' seconds spent assembling A. */
static double run_job(patch_pipe *p, fill_state *a, fill_state *l)
{
    p->assembling = a, p->loading = l, p->load_failed = 0;
    h5pack_patch_pool_run(p->pool, (a ? a->count : 0) + (l ? l->n_loads : 0), job_item, p);
    double assemble_s = 0;
    for (int t = 0; t < p->pp.threads; t++) {
        assemble_s += p->assemble_s[t], p->assemble_s[t] = 0;
        if (l) {
            l->counts.bytes_read += p->cost[t].bytes_read, l->counts.bytes_inflated += p->cost[t].bytes_inflated;
            l->counts.read_s += p->cost[t].read_s, l->counts.inflate_s += p->cost[t].inflate_s;
        }
        memset(&p->cost[t], 0, sizeof p->cost[t]);
    }
    return assemble_s;
}

static void write_labels(patch_pipe *p, const patch_entry *e, int slot)
{
    if (!p->labels)
        return;
    uint8_t *dst = (uint8_t *)p->pp.be->ops->host_labels(p->pp.be, slot);
    for (size_t q = 0; q < e->count; q++)
        memcpy(dst + q * p->label_bytes, p->labels + e->indices[q] * p->label_bytes, p->label_bytes);
}

/* F's hits, misses and the bytes a perfect cache would read (its loads are done, its slots still hold
 * its tiles). */
static void count_accesses(const patch_pipe *p, fill_state *f)
{
    for (size_t a = 0; a < f->n_acc; a++) {
        f->counts.misses += f->acc[a].load, f->counts.hits += !f->acc[a].load;
        if (f->acc[a].first_in_epoch) /* needed once per epoch: what a perfect cache reads */
            f->counts.bytes_needed += p->slots[f->acc[a].slot].stored;
    }
}

/* Batch F into entry E (ring slot SLOT) while the tiles of NEXT (NULL: none) are loaded, then the submit. */
static int fill_batch(patch_pipe *p, fill_state *f, fill_state *next, patch_entry *e, int slot)
{
    e->epoch = f->epoch, e->index = f->index, e->count = f->count;
    memcpy(e->where, f->where, f->count * 3 * sizeof *e->where);
    for (size_t q = 0; q < f->count; q++)
        e->indices[q] = (uint64_t)f->where[3 * q];
    count_accesses(p, f);
    e->counts = f->counts;
    p->fill_key = aug_batch_key(p->pp.seed, f->epoch, f->index * p->pp.world + p->pp.rank, 0);
    p->fill_in = p->one_pass ? NULL : p->pp.be->ops->host_input(p->pp.be, slot);
    p->fill_out = p->one_pass ? h5pack_backend_cpu_output(p->pp.be, slot) : NULL;
    e->counts.assemble_s = run_job(p, f, next); /* summed over the threads, as busy_read_s */
    write_labels(p, e, slot);
    backend_job job = h5pack_backend_job(f->count, p->fill_key);
    job.epoch = f->epoch;
    job.pixels_done = p->one_pass != NULL;
    char detail[256] = "";
    int rc = p->pp.be->ops->submit(p->pp.be, slot, job, detail, sizeof detail);
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

static void publish_end(patch_pipe *p, uint64_t ticket)
{
    pthread_mutex_lock(&p->lock);
    p->ended = 1, p->end_ticket = ticket;
    pthread_cond_broadcast(&p->ready);
    pthread_mutex_unlock(&p->lock);
}

/* Batch after batch: plan k + 1, then one job assembles k and loads k + 1. */
void *h5pack_patch_fill_main(void *arg)
{
    patch_pipe *p = arg;
    int have = plan_into(p, &p->fs[0]);
    if (have > 0)
        run_job(p, NULL, &p->fs[0]);
    for (uint64_t t = 0;; t++) {
        fill_state *f = &p->fs[t % 2], *next = &p->fs[(t + 1) % 2];
        int slot = (int)(t % (uint64_t)p->pp.prefetch);
        patch_entry *e = &p->ring[slot];
        if (have == 0) {
            publish_end(p, t);
            break;
        }
        int next_have = have > 0 && !f->rc ? plan_into(p, next) : 0;
        if (wait_free(p, e))
            break;
        e->rc = 0, e->err[0] = 0;
        int rc = have < 0 ? have : f->rc;
        if (rc)
            memcpy(e->err, f->err, sizeof e->err);
        else
            rc = fill_batch(p, f, next_have > 0 ? next : NULL, e, slot);
        publish(p, e, t, rc);
        if (rc)
            break;
        have = next_have;
    }
    return NULL;
}
