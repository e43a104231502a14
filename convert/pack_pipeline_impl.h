/* pack_pipeline_impl.h - the converter pipeline's shared state (pack_pipeline.c describes it), shared by
 * the placing thread's code (pack_pipeline.c) and the workers' (pack_workers.c). */
#ifndef H5PACK_PACK_PIPELINE_IMPL_H
#define H5PACK_PACK_PIPELINE_IMPL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "pack_pipeline.h"

typedef enum slot_state { SLOT_EMPTY = 0, SLOT_BUSY, SLOT_DONE } slot_state;
typedef enum chunk_state {
    CHUNK_FREE = 0, CHUNK_FILLING, CHUNK_TO_FILTER, CHUNK_FILTERING, CHUNK_READY, CHUNK_TO_WRITE, CHUNK_WRITING
} chunk_state;

typedef struct slot {
    slot_state state;
    decoded_image img;
    size_t cap; /* bytes img.pixels holds (images of several sizes grow it) */
} slot;

typedef struct chunk_buf {
    chunk_state state;
    uint64_t index;     /* chunk number in the dataset */
    uint8_t *raw;       /* K images in the dataset's layout */
    uint8_t *filtered;  /* deflated (+ fletcher32) bytes, when filters are on */
    size_t stored_size; /* bytes to write */
    int failed;         /* filtering failed */
    uint8_t *mask_raw;  /* --masks: the K masks of the same images (NULL without) */
    uint8_t *mask_filtered;
    size_t mask_stored_size;
} chunk_buf;

typedef struct pack_pipeline {
    const pipeline_config *cfg;
    int filtered;
    int direct;           /* workers write full chunks with pwrite (h5out_chunk_base): FILLING -> TO_WRITE */
    pipeline_result *res; /* counts the workers' writes */
    char write_err[512];  /* a worker's failed write, reported by the placer */
    size_t image_bytes, chunk_bytes, filtered_cap;
    size_t mask_bytes, mask_chunk_bytes, mask_filtered_cap; /* --masks: one mask, a chunk of them (0 without) */
    slot *slots;
    size_t n_slots;
    chunk_buf *chunks;
    size_t n_chunks;
    pthread_mutex_t mu;
    pthread_cond_t work_cv, main_cv;
    size_t next_decode, consumed;
    size_t done_end;      /* positions [consumed, done_end) are all DONE */
    size_t wake_batch;    /* DONE images in order that are worth waking the placer for */
    int placer_waiting, workers_waiting;
    double placer_wait_s, workers_wait_s; /* where the time goes (-v): who waited for whom */
    uint64_t chunks_started, chunks_written;
    int stop;
    pthread_t *threads;
    int n_threads;
} pack_pipeline;

/* Placer-side state of the chunk being filled. */
typedef struct placer {
    chunk_buf *filling;
    uint64_t filled; /* images in it */
    uint64_t cursor; /* images of several sizes: bytes of the dataset placed so far */
} placer;

/* The chunk buffer in STATE with the lowest chunk index, or NULL. Lock held. */
chunk_buf *pipeline_lowest_chunk(pack_pipeline *p, chunk_state state);

/* 1 when the workers may not decode further ahead of the placer. Lock held. */
int pipeline_ring_full(const pack_pipeline *p);

/* Wakes the placer when enough images are ready in order (or it would otherwise wait for nothing). */
void pipeline_wake_placer_if_worth(pack_pipeline *p);

/* Starts / joins cfg->threads workers. */
int pipeline_start_workers(pack_pipeline *p);
void pipeline_stop_workers(pack_pipeline *p);

#endif
