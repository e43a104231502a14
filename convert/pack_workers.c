/* pack_workers.c - the converter's worker threads (pack_pipeline.c describes the shared state): they
 * decode images into the ring's slots, filter chunks, and write unfiltered chunks with pwrite. */
#include <errno.h>
#include <libdeflate.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chunk_filter.h"
#include "clock.h"
#include "pack_pipeline_impl.h"

chunk_buf *pipeline_lowest_chunk(pack_pipeline *p, chunk_state state)
{
    chunk_buf *best = NULL;
    for (size_t i = 0; i < p->n_chunks; i++)
        if (p->chunks[i].state == state && (!best || p->chunks[i].index < best->index))
            best = &p->chunks[i];
    return best;
}

/* The dataset's filters on one chunk (chunk_filter.h). Returns 0, or -1 when the compressor is unavailable. */
static int filter_chunk(pack_pipeline *p, chunk_buf *cb, struct libdeflate_compressor **comp)
{
    cb->stored_size = chunk_filter_apply(p->cfg->gzip_level, p->cfg->checksum, comp, cb->raw, p->chunk_bytes,
                                         cb->filtered);
    if (p->mask_bytes)
        cb->mask_stored_size = chunk_filter_apply(p->cfg->gzip_level, p->cfg->checksum, comp, cb->mask_raw,
                                                  p->mask_chunk_bytes, cb->mask_filtered);
    return cb->stored_size && (!p->mask_bytes || cb->mask_stored_size) ? 0 : -1;
}

static void worker_filter(pack_pipeline *p, chunk_buf *cb, struct libdeflate_compressor **comp)
{
    cb->state = CHUNK_FILTERING;
    pthread_mutex_unlock(&p->mu);
    int rc = filter_chunk(p, cb, comp);
    pthread_mutex_lock(&p->mu);
    cb->failed = rc != 0;
    cb->state = CHUNK_READY;
    pthread_cond_signal(&p->main_cv);
}

/* Writes chunk CB where it belongs (the unfiltered dataset's computed address) while the placer fills
 * the next ones: with one writing thread, page-cache writes were the limit past 8 cores. */
static void worker_write(pack_pipeline *p, chunk_buf *cb)
{
    char err[sizeof p->write_err];
    cb->state = CHUNK_WRITING;
    pthread_mutex_unlock(&p->mu);
    int rc = h5out_pwrite_chunk(p->cfg->out, cb->index, cb->raw, p->chunk_bytes, err, sizeof err);
    if (rc == 0 && p->mask_bytes)
        rc = h5out_pwrite_mask_chunk(p->cfg->out, cb->index, cb->mask_raw, p->mask_chunk_bytes, err, sizeof err);
    pthread_mutex_lock(&p->mu);
    if (rc != 0 && !p->write_err[0])
        memcpy(p->write_err, err, sizeof err);
    if (rc == 0) {
        p->res->bytes_written += p->chunk_bytes;
        p->res->chunks_written++;
        p->chunks_written++;
    }
    cb->state = CHUNK_FREE;
    pthread_cond_signal(&p->main_cv);
}

int pipeline_ring_full(const pack_pipeline *p)
{
    return p->next_decode >= p->consumed + p->n_slots;
}

/* Called with the lock held by a worker that finished an image or found no work. */
void pipeline_wake_placer_if_worth(pack_pipeline *p)
{
    size_t ready = p->done_end - p->consumed;
    if (p->placer_waiting && ready > 0 &&
        (ready >= p->wake_batch || p->done_end == p->cfg->n || pipeline_ring_full(p)))
        pthread_cond_signal(&p->main_cv);
}

/* The reason a place the size plan refused gives (size_plan.c): a side the reader cannot index, or an image
 * that --short-side would grow past --max-pixels. */
static void refused_place(const ragged_place *r, uint64_t max_pixels, decoded_image *img)
{
    img->outcome = DECODE_SKIP;
    if (r->too_long)
        snprintf(img->reason, sizeof img->reason, "too large: %ux%u, a side above %u cannot be stored (use "
                 "--max-side or --size)", r->height, r->width, RAGGED_MAX_SIDE);
    else
        snprintf(img->reason, sizeof img->reason, "too large: --short-side makes it %ux%u = %llu pixels, above the "
                 "limit of %llu (--max-pixels)", r->height, r->width, (unsigned long long)r->height * r->width,
                 (unsigned long long)max_pixels);
}

static void worker_decode(pack_pipeline *p)
{
    size_t pos = p->next_decode++;
    slot *s = &p->slots[pos % p->n_slots];
    s->state = SLOT_BUSY;
    pthread_mutex_unlock(&p->mu);
    const pipeline_config *cfg = p->cfg;
    if (cfg->ragged && (cfg->ragged[pos].too_long || cfg->ragged[pos].too_many_pixels))
        refused_place(&cfg->ragged[pos], cfg->job.opts.max_pixels, &s->img);
    else if (cfg->ragged) {
        const ragged_place *r = &cfg->ragged[pos];
        decode_entry_sized(&cfg->job, cfg->entries[cfg->order[pos]].relpath, r->height, r->width, r->resize, &s->img,
                           &s->cap);
    } else {
        const scan_entry *e = &cfg->entries[cfg->order[pos]];
        decode_entry(&cfg->job, e->relpath, &s->img);
        if (cfg->job.mask_dir && s->img.outcome == DECODE_OK)
            decode_mask_entry(&cfg->job, e->mask, &s->img);
    }
    pthread_mutex_lock(&p->mu);
    s->state = SLOT_DONE;
    while (p->done_end < p->next_decode && p->slots[p->done_end % p->n_slots].state == SLOT_DONE)
        p->done_end++;
    pipeline_wake_placer_if_worth(p);
}

static void *worker_main(void *arg)
{
    pack_pipeline *p = arg;
    struct libdeflate_compressor *comp = NULL;
    pthread_mutex_lock(&p->mu);
    while (!p->stop) {
        chunk_buf *cb = pipeline_lowest_chunk(p, CHUNK_TO_FILTER), *out = NULL;
        if (cb)
            worker_filter(p, cb, &comp);
        else if ((out = pipeline_lowest_chunk(p, CHUNK_TO_WRITE)))
            worker_write(p, out);
        else if (p->next_decode < p->cfg->n && !pipeline_ring_full(p))
            worker_decode(p);
        else {
            pipeline_wake_placer_if_worth(p); /* the ring is full: only the placer can make room */
            p->workers_waiting++;
            double t0 = h5pack_clock_s();
            pthread_cond_wait(&p->work_cv, &p->mu);
            p->workers_wait_s += h5pack_clock_s() - t0;
            p->workers_waiting--;
        }
    }
    pthread_mutex_unlock(&p->mu);
    if (comp)
        libdeflate_free_compressor(comp);
    return NULL;
}

int pipeline_start_workers(pack_pipeline *p)
{
    p->threads = calloc((size_t)p->cfg->threads, sizeof *p->threads);
    if (!p->threads)
        return -1;
    for (int i = 0; i < p->cfg->threads; i++) {
        if (pthread_create(&p->threads[i], NULL, worker_main, p) != 0)
            return -1;
        p->n_threads++;
    }
    return 0;
}

void pipeline_stop_workers(pack_pipeline *p)
{
    pthread_mutex_lock(&p->mu);
    p->stop = 1;
    pthread_cond_broadcast(&p->work_cv);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->n_threads; i++)
        pthread_join(p->threads[i], NULL);
    free(p->threads);
}
