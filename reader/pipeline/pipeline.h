/* pipeline.h - the reader's engine: worker threads plan batches in order (plan.h), a few beyond a ring
 * of `prefetch` backend slots, execute the plan against the chunk cache (cache.h), assemble the uint8
 * batches and submit them for conversion; the consumer side hands ready batches out in order, with
 * echoes.
 *
 * Ring: fresh batch t uses slot t % prefetch once the consumer has released that slot's previous batch
 * (all echoes included). Workers share the work per chunk access, not per batch, and load chunks ahead
 * of the ring as far as the cache allows, so all of them read and inflate in parallel even when only a
 * few batches fit in the ring (details and the no-deadlock argument in pipeline_impl.h). Counters of a batch
 * (hits, misses, bytes, busy times) travel with it and are added to the stats when the consumer receives
 * it, so the stats always describe delivered batches.
 * Thread-safety: h5pack_pipeline_next/release/stats from one consumer thread. */
#ifndef H5PACK_PIPELINE_H
#define H5PACK_PIPELINE_H

#include <stddef.h>
#include <stdint.h>

#include "backend.h"
#include "chunksrc.h"
#include "h5pack.h"
#include "masksrc.h"
#include "resolve.h"

typedef struct pipeline pipeline;

typedef struct pipeline_params {
    chunk_source *src;
    backend *be;        /* its ring has `prefetch` slots of batch_size images */
    reader_setup setup; /* order, slots, threads, epochs */
    uint32_t echo;      /* >= 1 */
    int prefetch;       /* >= 1 (sample echo: >= echo + 1) */
    int sample_echo;    /* 1: echo per sample (pipeline_echo.c, echo_sched.h), 0: per batch */
    /* resume: the first delivery is echo start_echo of batch start_batch of epoch start_epoch (checked by
       the caller: start_batch < batches per epoch, start_echo < echo) */
    uint64_t start_epoch, start_batch;
    uint32_t start_echo;
    /* masks (masksrc.h; NULL: none): read into the cache slot beside each image chunk, delivered in
       MASK_DTYPE at the batch's size (at most MASK_MAX_H x MASK_MAX_W) with each image's box and flip */
    mask_source *masks;
    h5pack_mask_dtype mask_dtype;
    uint32_t mask_max_h, mask_max_w;
    int pool_batches; /* sample echo's pool entries (backend_params.pool_batches): masks are pooled too */
} pipeline_params;

/* Allocates the cache and the ring and starts the workers. */
int h5pack_pipeline_start(const pipeline_params *pp, pipeline **out, char *err, size_t err_len);

/* Next batch in order (an echo of the previous one first, when due). Returns H5PACK_OK, H5PACK_END,
 * H5PACK_ESTATE for misuse (too many unreleased batches, asking for an echo before releasing the batch),
 * or the first worker error (every later call returns it again). */
int h5pack_pipeline_next(pipeline *p, h5pack_batch *batch, char *err, size_t err_len);

/* Gives back the delivery named by *TOKEN (h5pack_batch.token) and sets *TOKEN to 0. Refuses, leaving
 * *TOKEN as it is: 0 or a stale token (released already) with H5PACK_ESTATE, another pipeline's with
 * H5PACK_EINVAL. A backend failure to release is returned after the slot was given back anyway. */
int h5pack_pipeline_release(pipeline *p, uint64_t *token, char *err, size_t err_len);

/* h5pack_detach of the delivery TOKEN names (not released): the backend hands its memory over (backend.h). */
int h5pack_pipeline_detach(pipeline *p, uint64_t token, backend_detached *out, int *copied, char *err, size_t err_len);

/* The epoch from which a change of the output size applies: the one after the last delivered batch's
 * (0 before the first batch). */
uint64_t h5pack_pipeline_next_epoch(const pipeline *p);

/* Adds the delivered batches' counters and the backend's times to *ST (other fields untouched). */
void h5pack_pipeline_stats(pipeline *p, h5pack_stats *st);

/* Stops the workers (wherever they wait) and frees everything. NULL is a no-op. */
void h5pack_pipeline_free(pipeline *p);

#endif
