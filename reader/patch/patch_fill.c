/* patch_fill.c - the planning thread of patch reading (patch_pipe.h): per batch, the plan, the tile loads
 * (in parallel), the patches assembled from the tiles (in parallel), the labels, and the backend's submit. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "augment.h"
#include "backend_convert.h"
#include "clock.h"
#include "patch_pipe_impl.h"

/* Room for the plan's slots (it grows the cache when one batch needs more tiles than it holds). */
static int grow_slots(patch_pipe *p, char *err, size_t err_len)
{
    size_t want = h5pack_patch_plan_slots(p->plan);
    if (want > p->slot_n) {
        uint8_t **grown = realloc(p->slot_buf, want * sizeof *grown);
        if (!grown)
            return h5pack_errf(H5PACK_ENOMEM, err, err_len, "out of memory for %zu cached tiles", want);
        memset(grown + p->slot_n, 0, (want - p->slot_n) * sizeof *grown);
        p->slot_buf = grown;
        __atomic_store_n(&p->slot_n, want, __ATOMIC_RELAXED); /* the stats read it from the consumer */
    }
    return 0;
}

static int slot_buffer(patch_pipe *p, uint32_t slot, char *err, size_t err_len)
{
    if (!p->slot_buf[slot] && !(p->slot_buf[slot] = malloc((size_t)p->g->tile_bytes)))
        return h5pack_errf(H5PACK_ENOMEM, err, err_len, "out of memory for a tile of %llu bytes",
                           (unsigned long long)p->g->tile_bytes);
    return 0;
}

/* Reads the batch's missing tiles into their slots, THREADS at a time. */
static int load_tiles(patch_pipe *p, const patch_planned *b, patch_entry *e)
{
    int rc = grow_slots(p, e->err, sizeof e->err);
    for (size_t a = 0; a < b->n_acc && !rc; a++) {
        p->tile_slot[b->acc[a].tile] = b->acc[a].slot;
        if (b->acc[a].load)
            rc = slot_buffer(p, b->acc[a].slot, e->err, sizeof e->err);
    }
    if (rc)
        return rc;
    int failed = 0;
#pragma omp parallel for num_threads(p->pp.threads) schedule(dynamic, 1)
    for (size_t a = 0; a < b->n_acc; a++) {
        const patch_access *x = &b->acc[a];
        if (!x->load || __atomic_load_n(&failed, __ATOMIC_RELAXED))
            continue;
        int t = omp_get_thread_num();
        char msg[384];
        int r = h5pack_tilesrc_read(p->pp.src, x->tile, p->slot_buf[x->slot], p->scratch[t], &p->cost[t], msg, sizeof msg);
        if (r && !__atomic_exchange_n(&failed, 1, __ATOMIC_ACQ_REL)) {
            memcpy(e->err, msg, sizeof msg);
            e->rc = r;
        }
    }
    return failed ? e->rc : 0;
}

/* Copies the part of tile TILE that patch (Y, X) of image IM covers into DST (S x S x C, HWC). */
static void copy_tile(const patch_pipe *p, const tile_image *im, uint64_t tile, int64_t y, int64_t x, uint8_t *dst)
{
    uint32_t T = p->g->tile, C = p->g->channels;
    int64_t S = p->S;
    uint64_t k = tile - im->first_tile, ty = k / im->nx, tx = k % im->nx;
    int64_t ty0 = (int64_t)(ty * T), tx0 = (int64_t)(tx * T);
    int64_t r0 = y > ty0 ? y : ty0, r1 = y + S < ty0 + im->ch ? y + S : ty0 + im->ch;
    int64_t c0 = x > tx0 ? x : tx0, c1 = x + S < tx0 + im->cw ? x + S : tx0 + im->cw;
    r1 = r1 < (int64_t)im->h ? r1 : (int64_t)im->h, c1 = c1 < (int64_t)im->w ? c1 : (int64_t)im->w;
    const uint8_t *src = p->slot_buf[p->tile_slot[tile]];
    size_t run = (size_t)(c1 - c0) * C;
    for (int64_t r = r0; r < r1; r++)
        memcpy(dst + ((size_t)(r - y) * (size_t)S + (size_t)(c0 - x)) * C,
               src + ((size_t)(r - ty0) * im->cw + (size_t)(c0 - tx0)) * C, run);
}

/* Patch Q of the batch into DST: every tile it overlaps; pixels past a small image's edge are 0. */
static void assemble_patch(const patch_pipe *p, const int64_t *where, uint64_t *tiles, uint8_t *dst)
{
    const tile_image *im = h5pack_tilesrc_image(p->pp.src, (uint64_t)where[0]);
    if (where[1] + p->S > (int64_t)im->h || where[2] + p->S > (int64_t)im->w)
        memset(dst, 0, p->patch_bytes);
    size_t n = h5pack_patch_windows_tiles(p->pp.w, where, tiles);
    for (size_t t = 0; t < n; t++)
        copy_tile(p, im, tiles[t], where[1], where[2], dst);
}

/* Every patch of the batch into SLOT: into the backend's uint8 input, or (CPU one-pass) converted into its
 * output as it is assembled. */
static void assemble_batch(patch_pipe *p, const patch_planned *b, int slot, uint64_t key)
{
    uint8_t *in = p->direct ? NULL : p->pp.be->ops->host_input(p->pp.be, slot);
    void *out = p->direct ? h5pack_backend_cpu_output(p->pp.be, slot) : NULL;
#pragma omp parallel for num_threads(p->pp.threads) schedule(dynamic, 4)
    for (size_t q = 0; q < b->count; q++) {
        int t = omp_get_thread_num();
        uint64_t *tiles = p->tile_list + (size_t)t * h5pack_patch_windows_max_tiles(p->pp.w);
        if (!p->direct) {
            assemble_patch(p, b->where + 3 * q, tiles, in + q * p->patch_bytes);
            continue;
        }
        uint8_t *buf = p->assemble_buf + (size_t)t * p->patch_bytes;
        assemble_patch(p, b->where + 3 * q, tiles, buf);
        h5pack_backend_conv_image(p->direct, buf, out, q, key);
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
            e->counts.bytes_needed += h5pack_tilesrc_stored_bytes(p->pp.src, b->acc[a].tile);
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
    uint64_t key = aug_batch_key(p->pp.seed, b->epoch, b->index * p->pp.world + p->pp.rank, 0);
    double t0 = h5pack_clock_s();
    assemble_batch(p, b, slot, key);
    write_labels(p, e, slot);
    e->counts.assemble_s = h5pack_clock_s() - t0;
    backend_job job = h5pack_backend_job(b->count, key);
    job.epoch = b->epoch;
    job.pixels_done = p->direct != NULL;
    char detail[256] = "";
    rc = p->pp.be->ops->submit(p->pp.be, slot, job, detail, sizeof detail);
    if (rc)
        snprintf(e->err, sizeof e->err, "the backend could not convert the batch: %s", detail[0] ? detail : h5pack_strerror(rc));
    return rc;
}

/* Waits until ring entry T's slot is free; 0, or -1 when stopping. */
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
            pthread_mutex_lock(&p->lock);
            e->state = PATCH_FREE;
            p->ended = 1, p->end_ticket = t;
            pthread_cond_broadcast(&p->ready);
            pthread_mutex_unlock(&p->lock);
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
