/* pack_pipeline.c - worker threads (decode, then compress) and the in-order placer/writer (calling thread).
 *
 * Shared state, all under one mutex:
 *   slots:  a ring of n_slots decoded images; packed position p uses slot p % n_slots. Workers take
 *           positions in order (next_decode) but never more than n_slots ahead of `consumed`, the next
 *           position the placer needs. EMPTY -> BUSY (worker decodes) -> DONE (placer copies) -> EMPTY.
 *   chunks: a ring of chunk buffers. FREE -> FILLING (placer copies images in) -> TO_FILTER (workers
 *           compress and checksum) -> READY -> written by the placer in chunk order -> FREE. Without
 *           filters, where every chunk's address is known (h5out_chunk_base): FILLING -> TO_WRITE ->
 *           written by a worker with pwrite, in any order -> FREE; else FILLING -> READY.
 * Workers prefer filtering and writing over decoding so chunks never pile up; the placer writes READY
 * chunks first.
 *
 * Hand-offs are batched: waking a sleeping thread costs a futex call and a context switch, which for small
 * images was a few percent of the whole conversion when the placer woke up for every image. Workers wake
 * the placer only when wake_batch images are ready in order from `consumed` (done_end tracks that run),
 * when the input is finished, or when the ring is full (they would run out of work); the placer then
 * places the whole run. The placer wakes workers only when some are waiting for a free slot. */
#include "pack_pipeline.h"
#include "chunk_filter.h"
#include "clock.h"
#include "pack_pipeline_impl.h"

#include <errno.h>
#include <libdeflate.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- setup --------------------------------------------------------------------------------------- */

/* Decoded images in memory at most (unless 2*threads+2 images alone are more). */
#define RING_MAX_BYTES ((size_t)64 << 20)

/* The ring holds two batches (a chunk's worth each, when that fits RING_MAX_BYTES: one batch is being
 * placed while the workers fill the other) or 8 images per thread if more, within RING_MAX_BYTES, and
 * never fewer than 2*threads+2 images. */
static void choose_ring(pack_pipeline *p)
{
    size_t min_slots = 2 * (size_t)p->cfg->threads + 2;
    size_t batch = p->cfg->ragged ? p->chunk_bytes / p->image_bytes : p->cfg->chunk_images;
    size_t fit = p->image_bytes ? RING_MAX_BYTES / p->image_bytes : min_slots;
    if (batch > fit / 2)
        batch = fit / 2;
    if (batch < 1)
        batch = 1;
    p->wake_batch = batch;
    /* Lookahead: images are placed in order, so one slow image (a PNG decodes several times slower than a
     * JPEG of its size) holds the ring's head while the other workers go on; with 2 slots per thread they
     * soon waited for room (16 threads, device run: 3.9 of 12 thread-seconds). 8 per thread where the
     * ring's memory allows. */
    size_t lookahead = 8 * (size_t)p->cfg->threads + 2, want = 2 * batch > lookahead ? 2 * batch : lookahead;
    if (want > fit)
        want = fit;
    p->n_slots = want > min_slots ? want : min_slots;
}

/* --masks: a mask and its values beside every slot's image, the chunk's masks beside its images. */
static int allocate_mask_buffers(pack_pipeline *p)
{
    if (!(p->res->mask_seen = calloc(1, sizeof *p->res->mask_seen)))
        return -1;
    for (size_t i = 0; i < p->n_slots; i++)
        if (!(p->slots[i].img.mask = malloc(p->mask_bytes)) ||
            !(p->slots[i].img.mask_seen = malloc(sizeof *p->slots[i].img.mask_seen)))
            return -1;
    p->mask_filtered_cap = chunk_filter_bound(p->mask_chunk_bytes);
    for (size_t i = 0; i < p->n_chunks; i++) {
        if (!(p->chunks[i].mask_raw = malloc(p->mask_chunk_bytes)))
            return -1;
        if (p->filtered && !(p->chunks[i].mask_filtered = malloc(p->mask_filtered_cap)))
            return -1;
    }
    return 0;
}

static int allocate_buffers(pack_pipeline *p)
{
    const pipeline_config *cfg = p->cfg;
    if (cfg->ragged) { /* the mean image sizes the ring; each slot grows to its image */
        p->image_bytes = cfg->n ? (size_t)(cfg->total_bytes / cfg->n) + 1 : 1;
        p->chunk_bytes = cfg->chunk_bytes;
    } else {
        p->image_bytes = (size_t)cfg->job.height * cfg->job.width * cfg->job.channels;
        p->chunk_bytes = p->image_bytes * cfg->chunk_images;
        p->mask_bytes = (size_t)cfg->job.height * cfg->job.width * cfg->job.mask_bytes;
        p->mask_chunk_bytes = p->mask_bytes * cfg->chunk_images;
    }
    p->filtered = cfg->gzip_level > 0 || cfg->checksum;
    choose_ring(p);
    /* filters: one per worker; direct writes: a few in flight (one file's writes mostly serialise in the
     * kernel) while the placer fills the next */
    size_t writers = cfg->threads < 8 ? (size_t)cfg->threads : 8;
    p->n_chunks = p->filtered ? (size_t)cfg->threads + 2 : p->direct ? writers + 2 : 3;
    p->slots = calloc(p->n_slots, sizeof *p->slots);
    p->chunks = calloc(p->n_chunks, sizeof *p->chunks);
    if (!p->slots || !p->chunks)
        return -1;
    for (size_t i = 0; i < p->n_slots && !cfg->ragged; i++)
        if (!(p->slots[i].img.pixels = malloc(p->image_bytes)))
            return -1;
    p->filtered_cap = chunk_filter_bound(p->chunk_bytes);
    for (size_t i = 0; i < p->n_chunks; i++) {
        if (!(p->chunks[i].raw = malloc(p->chunk_bytes)))
            return -1;
        if (p->filtered && !(p->chunks[i].filtered = malloc(p->filtered_cap)))
            return -1;
    }
    return p->mask_bytes ? allocate_mask_buffers(p) : 0;
}

static void free_buffers(pack_pipeline *p)
{
    for (size_t i = 0; p->slots && i < p->n_slots; i++) {
        free(p->slots[i].img.pixels);
        free(p->slots[i].img.mask);
        free(p->slots[i].img.mask_seen);
    }
    for (size_t i = 0; p->chunks && i < p->n_chunks; i++) {
        free(p->chunks[i].raw);
        free(p->chunks[i].filtered);
        free(p->chunks[i].mask_raw);
        free(p->chunks[i].mask_filtered);
    }
    free(p->slots);
    free(p->chunks);
}

/* ---- placer / writer (calling thread) ------------------------------------------------------------ */

static void submit_chunk(pack_pipeline *p, chunk_buf *cb)
{
    cb->stored_size = p->chunk_bytes;
    cb->mask_stored_size = p->mask_chunk_bytes;
    cb->state = p->filtered ? CHUNK_TO_FILTER : p->direct ? CHUNK_TO_WRITE : CHUNK_READY;
    if (cb->state != CHUNK_READY && p->workers_waiting)
        pthread_cond_broadcast(&p->work_cv);
}

/* Writes the READY chunk CB (called with the lock held; releases it during the write). */
static int write_ready_chunk(pack_pipeline *p, chunk_buf *cb, pipeline_result *res, char *err, size_t len)
{
    if (cb->failed) {
        snprintf(err, len, "cannot compress chunk %llu: compressor unavailable (out of memory?)",
                 (unsigned long long)cb->index);
        return -1;
    }
    pthread_mutex_unlock(&p->mu);
    const void *data = p->filtered ? (const void *)cb->filtered : (const void *)cb->raw;
    int rc = h5out_write_chunk(p->cfg->out, cb->index, data, cb->stored_size, err, len);
    if (rc == 0 && p->mask_bytes) {
        const void *masks = p->filtered ? (const void *)cb->mask_filtered : (const void *)cb->mask_raw;
        rc = h5out_write_mask_chunk(p->cfg->out, cb->index, masks, cb->mask_stored_size, err, len);
    }
    pthread_mutex_lock(&p->mu);
    if (rc == 0) {
        res->bytes_written += cb->stored_size;
        res->chunks_written++;
        p->chunks_written++;
        cb->state = CHUNK_FREE;
    }
    return rc;
}

static chunk_buf *next_ready_chunk(pack_pipeline *p)
{
    for (size_t i = 0; i < p->n_chunks; i++)
        if (p->chunks[i].state == CHUNK_READY && p->chunks[i].index == p->chunks_written)
            return &p->chunks[i];
    return NULL;
}

static pipeline_status skip_image(pipeline_result *res, const char *name, const char *reason, int strict, char *err,
                                  size_t len)
{
    if (skip_list_add(&res->skipped, name, reason) != 0) {
        snprintf(err, len, "out of memory");
        return PIPELINE_ERROR;
    }
    return strict ? PIPELINE_STRICT_STOP : PIPELINE_OK;
}

/* Puts the decoded image of position POS in place (lock NOT held: the slot and the filling chunk belong
 * to the placer now). Returns PIPELINE_OK, or the status that ends the run. */
static pipeline_status place_image(pack_pipeline *p, size_t pos, decoded_image *img, placer *pl,
                                   pipeline_result *res, char *err, size_t len)
{
    const pipeline_config *cfg = p->cfg;
    const scan_entry *e = &cfg->entries[cfg->order[pos]];
    switch (img->outcome) {
    case DECODE_OK:
        if (cfg->ragged) { /* the bytes are in place already (ragged_step) */
            const ragged_place *r = &cfg->ragged[pos];
            res->offsets[res->converted] = r->offset;
            res->shapes[2 * res->converted] = r->height, res->shapes[2 * res->converted + 1] = r->width;
            res->pixels += (uint64_t)r->height * r->width;
        } else {
            memcpy(pl->filling->raw + pl->filled * p->image_bytes, img->pixels, p->image_bytes);
            if (p->mask_bytes) {
                memcpy(pl->filling->mask_raw + pl->filled * p->mask_bytes, img->mask, p->mask_bytes);
                mask_values_merge(res->mask_seen, img->mask_seen);
            }
            pl->filled++;
            res->pixels += (uint64_t)cfg->job.height * cfg->job.width;
        }
        res->kept[res->converted++] = cfg->order[pos];
        for (uint32_t c = 0; c < cfg->job.channels; c++) {
            res->sum[c] += img->sum[c];
            res->sum_sq[c] += img->sum_sq[c];
        }
        return PIPELINE_OK;
    case DECODE_SKIP:
        return skip_image(res, e->name, img->reason, cfg->strict, err, len);
    case DECODE_SIZE_MISMATCH:
        if (cfg->ragged) { /* its header promised another size: its place cannot hold it */
            decode_mismatch_reason(cfg->ragged[pos].height, cfg->ragged[pos].width, img);
            return skip_image(res, e->name, img->reason, cfg->strict, err, len);
        }
        decode_size_mismatch_text(&cfg->job, e->name, img, err, len);
        return PIPELINE_ERROR;
    default:
        snprintf(err, len, "%s: %s", e->name, img->reason);
        return PIPELINE_ERROR;
    }
}

/* Waits for a worker's signal, or 150 ms for the progress bar. The deadline is on the monotonic clock
 * (main_cv is created for it): a wall-clock step (NTP, a suspended VM) neither stretches nor skips it. */
static void wait_main(pack_pipeline *p)
{
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_nsec += 150 * 1000 * 1000; /* wake up for the progress bar */
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    p->placer_waiting = 1;
    double t0 = h5pack_clock_s();
    pthread_cond_timedwait(&p->main_cv, &p->mu, &until);
    p->placer_wait_s += h5pack_clock_s() - t0;
    p->placer_waiting = 0;
}

/* Takes a FREE chunk buffer for the next chunk. Returns 0, or -1 when none is free yet. */
static int start_chunk(pack_pipeline *p, placer *pl)
{
    chunk_buf *cb = pipeline_lowest_chunk(p, CHUNK_FREE);
    if (!cb)
        return -1;
    cb->state = CHUNK_FILLING;
    cb->index = p->chunks_started++;
    cb->failed = 0;
    pl->filling = cb;
    pl->filled = 0;
    return 0;
}

/* Consumes the DONE slot of position p->consumed. */
static pipeline_status consume_slot(pack_pipeline *p, slot *s, placer *pl, pipeline_result *res, char *err,
                                    size_t len)
{
    size_t pos = p->consumed;
    pthread_mutex_unlock(&p->mu);
    pipeline_status st = place_image(p, pos, &s->img, pl, res, err, len);
    pthread_mutex_lock(&p->mu);
    s->state = SLOT_EMPTY;
    p->consumed++;
    if (p->workers_waiting)
        pthread_cond_broadcast(&p->work_cv);
    if (!p->cfg->ragged && pl->filling && pl->filled == p->cfg->chunk_images) {
        submit_chunk(p, pl->filling);
        pl->filling = NULL;
    }
    return st;
}

/* Zero-pads and submits the last, partly filled chunk. */
static void finish_last_chunk(pack_pipeline *p, placer *pl)
{
    size_t used = pl->filled * p->image_bytes, masks_used = pl->filled * p->mask_bytes;
    memset(pl->filling->raw + used, 0, p->chunk_bytes - used);
    if (p->mask_bytes)
        memset(pl->filling->mask_raw + masks_used, 0, p->mask_chunk_bytes - masks_used);
    submit_chunk(p, pl->filling);
    pl->filling = NULL;
}

/* ---- images of several sizes: a byte stream cut into chunks -------------------------------------- */

/* Moves the placer's cursor to END, copying the dataset's bytes from SRC (which holds them from byte
 * SRC_FROM on) or zeros when SRC is NULL, and submitting every chunk it completes. Returns 1 when the
 * cursor is at END, 0 when it needs a free chunk buffer first (the cursor keeps what was done). Lock held:
 * the copies are small next to a decode. */
static int ragged_fill(pack_pipeline *p, placer *pl, uint64_t end, const uint8_t *src, uint64_t src_from)
{
    while (pl->cursor < end) {
        if (!pl->filling && start_chunk(p, pl) != 0)
            return 0;
        uint64_t in_chunk = pl->cursor - pl->filling->index * p->chunk_bytes;
        uint64_t n = p->chunk_bytes - in_chunk < end - pl->cursor ? p->chunk_bytes - in_chunk : end - pl->cursor;
        uint8_t *dst = pl->filling->raw + in_chunk;
        if (src)
            memcpy(dst, src + (pl->cursor - src_from), (size_t)n);
        else
            memset(dst, 0, (size_t)n);
        pl->cursor += n;
        if (in_chunk + n == p->chunk_bytes) {
            submit_chunk(p, pl->filling);
            pl->filling = NULL;
        }
    }
    return 1;
}

/* Waits for a chunk buffer to come free, unless a READY chunk can be written right away. */
static void wait_for_chunk_buffer(pack_pipeline *p)
{
    if (!next_ready_chunk(p))
        wait_main(p);
}

/* Places the DONE slot S of position p->consumed: zeros up to its place, then its bytes. */
static pipeline_status ragged_step(pack_pipeline *p, slot *s, placer *pl, pipeline_result *res, char *err,
                                   size_t len)
{
    const ragged_place *r = &p->cfg->ragged[p->consumed];
    if (s->img.outcome == DECODE_OK) {
        uint64_t end = r->offset + (uint64_t)r->height * r->width * p->cfg->job.channels;
        if (!ragged_fill(p, pl, r->offset, NULL, 0) || !ragged_fill(p, pl, end, s->img.pixels, r->offset)) {
            wait_for_chunk_buffer(p);
            return PIPELINE_OK;
        }
    }
    pipeline_status st = consume_slot(p, s, pl, res, err, len);
    /* Slots grow to their largest image: a rare huge one must not stay in every slot (the slot is EMPTY
     * now and no worker takes it while the lock is held). */
    size_t keep = 4 * p->image_bytes > ((size_t)1 << 20) ? 4 * p->image_bytes : (size_t)1 << 20;
    if (s->cap > keep) {
        free(s->img.pixels);
        s->img.pixels = NULL, s->cap = 0;
    }
    return st;
}

/* After the last image: zeros to the end of the last chunk. Returns 1 when every chunk is submitted. */
static int ragged_finish(pack_pipeline *p, placer *pl)
{
    uint64_t chunks = (p->cfg->total_bytes + p->chunk_bytes - 1) / p->chunk_bytes;
    if (ragged_fill(p, pl, chunks * p->chunk_bytes, NULL, 0))
        return 1;
    wait_for_chunk_buffer(p);
    return 0;
}

/* One step of the placer; *DONE set when everything is written. Called with the lock held. */
static pipeline_status placer_step(pack_pipeline *p, placer *pl, pipeline_result *res, int *done, char *err,
                                   size_t len)
{
    if (p->write_err[0]) {
        snprintf(err, len, "%s", p->write_err);
        return PIPELINE_ERROR;
    }
    chunk_buf *ready = next_ready_chunk(p);
    if (ready)
        return write_ready_chunk(p, ready, res, err, len) == 0 ? PIPELINE_OK : PIPELINE_ERROR;
    if (p->consumed == p->cfg->n) {
        if (p->cfg->ragged && !ragged_finish(p, pl))
            return PIPELINE_OK;
        if (pl->filling)
            finish_last_chunk(p, pl);
        else if (p->chunks_written == p->chunks_started)
            *done = 1;
        else
            wait_main(p);
        return PIPELINE_OK;
    }
    slot *s = &p->slots[p->consumed % p->n_slots];
    if (s->state == SLOT_DONE && p->cfg->ragged)
        return ragged_step(p, s, pl, res, err, len);
    if (s->state != SLOT_DONE || (s->img.outcome == DECODE_OK && !pl->filling && start_chunk(p, pl) != 0)) {
        wait_main(p);
        return PIPELINE_OK;
    }
    return consume_slot(p, s, pl, res, err, len);
}

static pipeline_status run_placer(pack_pipeline *p, pipeline_result *res, char *err, size_t len)
{
    placer pl = {.filling = NULL};
    int done = 0;
    pipeline_status st = PIPELINE_OK;
    pthread_mutex_lock(&p->mu);
    while (!done && st == PIPELINE_OK) {
        st = placer_step(p, &pl, res, &done, err, len);
        if (p->cfg->progress) {
            size_t consumed = p->consumed;
            uint64_t converted = res->converted;
            pthread_mutex_unlock(&p->mu);
            p->cfg->progress(p->cfg->progress_ctx, consumed, p->cfg->n, converted);
            pthread_mutex_lock(&p->mu);
        }
    }
    pthread_mutex_unlock(&p->mu);
    return st;
}

/* The lock and both conditions (main_cv on the monotonic clock, for wait_main), or none of them (-1). */
static int init_sync(pack_pipeline *p)
{
    pthread_condattr_t attr;
    if (pthread_condattr_init(&attr) != 0)
        return -1;
    int ok = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC) == 0;
    if (ok && pthread_mutex_init(&p->mu, NULL) != 0)
        ok = 0;
    else if (ok && pthread_cond_init(&p->work_cv, NULL) != 0)
        pthread_mutex_destroy(&p->mu), ok = 0;
    else if (ok && pthread_cond_init(&p->main_cv, &attr) != 0)
        pthread_cond_destroy(&p->work_cv), pthread_mutex_destroy(&p->mu), ok = 0;
    pthread_condattr_destroy(&attr);
    return ok ? 0 : -1;
}

pipeline_status pipeline_run(const pipeline_config *cfg, pipeline_result *res, char *err, size_t err_len)
{
    pack_pipeline p;
    memset(&p, 0, sizeof p);
    memset(res, 0, sizeof *res);
    p.cfg = cfg;
    p.res = res;
    p.direct = h5out_chunk_base(cfg->out) >= 0; /* unfiltered, every chunk's address computable */
    if (p.direct)
        (void)h5out_gather_chunks(cfg->out); /* a hint: without memory for it chunks go straight in */
    if (init_sync(&p) != 0) {
        snprintf(err, err_len, "cannot set up the converter's lock and conditions");
        return PIPELINE_ERROR;
    }
    pipeline_status st = PIPELINE_ERROR;
    res->kept = malloc((cfg->n ? cfg->n : 1) * sizeof *res->kept);
    if (cfg->ragged) {
        res->offsets = malloc((cfg->n ? cfg->n : 1) * sizeof *res->offsets);
        res->shapes = malloc((cfg->n ? cfg->n : 1) * 2 * sizeof *res->shapes);
    }
    if (!res->kept || (cfg->ragged && (!res->offsets || !res->shapes)) || allocate_buffers(&p) != 0) {
        snprintf(err, err_len, "out of memory for %zu decode buffers and %zu chunk buffers", p.n_slots,
                 p.n_chunks);
    } else if (pipeline_start_workers(&p) != 0) {
        snprintf(err, err_len, "cannot start %d threads: %s", cfg->threads, strerror(errno));
    } else {
        st = run_placer(&p, res, err, err_len);
    }
    pipeline_stop_workers(&p);
    if (p.direct && st == PIPELINE_OK && h5out_flush_chunks(cfg->out, err, err_len) != 0)
        st = PIPELINE_ERROR;
    res->writer_wait_s = p.placer_wait_s, res->workers_wait_s = p.workers_wait_s;
    res->pwrite_by_workers = p.direct;
    free_buffers(&p);
    pthread_cond_destroy(&p.main_cv);
    pthread_cond_destroy(&p.work_cv);
    pthread_mutex_destroy(&p.mu);
    return st;
}

void pipeline_result_free(pipeline_result *res)
{
    free(res->kept);
    free(res->offsets);
    free(res->shapes);
    free(res->mask_seen);
    skip_list_free(&res->skipped);
    memset(res, 0, sizeof *res);
}
