/* pack_pipeline.h - the parallel part of a conversion: worker threads decode the images of the packed order and
 * compress finished chunks; the calling thread places each decoded image in order, fills chunks and
 * writes them with H5Dwrite_chunk while the workers go on.
 *
 * Determinism: images are placed strictly in packed order once the outcome of every earlier image is
 * known, so a skipped image shifts the later ones and leaves no hole (images of several sizes have their
 * places from their headers: a skipped one leaves its bytes zero); chunk bytes and per-channel integer
 * sums are therefore the same for every thread count. Memory: two chunks' worth of decoded images
 * (at least 2*threads+2 images, at most 64 MiB of them unless 2*threads+2 images are more; images of
 * several sizes: the mean image sizes the ring, and a slot grown for a rare large image gives its buffer
 * back once placed) and 3 chunk buffers (threads+2, each with its compressed copy, with filters), never
 * the dataset. */
#ifndef H5PACK_CONVERT_PACK_PIPELINE_H
#define H5PACK_CONVERT_PACK_PIPELINE_H

#include <stddef.h>
#include <stdint.h>

#include "decodejob.h"
#include "h5out.h"
#include "scan.h"

/* Images of several sizes: where packed position p goes in the 1-D byte dataset and at what size, from
 * its header (image_probe_size). A position whose header gave no size has 0 x 0 (no bytes): if it
 * decodes after all, it is skipped; so is one that decodes to another size than its header said. */
typedef struct ragged_place {
    uint64_t offset;        /* first byte */
    uint32_t height, width; /* stored size */
    int resize;             /* 1: --max-side or --short-side resizes it to that size */
    int too_long;           /* 1: a side above RAGGED_MAX_SIDE (height x width say which): skipped, no bytes */
    int too_many_pixels;    /* 1: --short-side grows it past --max-pixels (height x width say so): skipped,
                               no bytes, before any memory is allocated for it */
} ragged_place;

/* The longest side an image of several sizes may have (the reader's limit, chunksrc_ragged.c). */
#define RAGGED_MAX_SIDE 65535u

typedef void (*pipeline_progress_fn)(void *ctx, uint64_t done, uint64_t total, uint64_t converted);

typedef struct pipeline_config {
    decode_job_cfg job;
    const scan_entry *entries; /* the scanned files */
    const size_t *order;       /* n positions: entries[order[p]] is packed p-th */
    size_t n;
    uint64_t chunk_images;     /* K */
    int gzip_level;            /* 0 = none */
    int checksum;
    int threads;               /* >= 1 */
    int strict;                /* stop at the first skipped image */
    h5out *out;                /* dataset created with n rows (or more) */
    pipeline_progress_fn progress; /* called often from the calling thread (may be NULL) */
    void *progress_ctx;
    const ragged_place *ragged;    /* n places: images of several sizes (then chunk_bytes, total_bytes); NULL:
                                      one size, chunk_images per chunk */
    uint64_t chunk_bytes, total_bytes;
} pipeline_config;

typedef enum pipeline_status {
    PIPELINE_OK = 0,
    PIPELINE_ERROR,       /* I/O, HDF5, memory, or images of different sizes without --size */
    PIPELINE_STRICT_STOP  /* --strict and an image would be skipped: skipped holds it */
} pipeline_status;

typedef struct pipeline_result {
    size_t *kept;          /* converted images: entry indices in packed order (malloc'ed) */
    uint64_t converted;
    skip_list skipped;     /* decode failures in packed order */
    uint64_t sum[3], sum_sq[3];
    uint64_t chunks_written, bytes_written; /* bytes as stored (after compression) */
    uint64_t pixels;       /* pixels of the converted images (per channel) */
    uint64_t *offsets;     /* ragged: the converted images' first bytes, in packed order (malloc'ed) */
    uint32_t *shapes;      /* ragged: their (height, width) */
    int pwrite_by_workers; /* chunks went in with pwrite from the workers (h5out_chunk_base), not HDF5 */
    double writer_wait_s;  /* the calling thread's time waiting for decoded images (-v) */
    double workers_wait_s; /* the workers' time waiting for room, summed: the writer is the limit */
    mask_values *mask_seen; /* --masks: the values of the stored masks (malloc'ed) */
} pipeline_result;

/* Runs the conversion. ERR gets the message of PIPELINE_ERROR. The result is filled in every case and
 * freed with pipeline_result_free. */
pipeline_status pipeline_run(const pipeline_config *cfg, pipeline_result *res, char *err, size_t err_len);

void pipeline_result_free(pipeline_result *res);

#endif
