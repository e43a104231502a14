/* patch_pipe.h - the pipeline of patch reading: one planning thread walks the plan (patch_plan.h) batch
 * by batch and, with `threads` OpenMP threads, reads the batch's missing tiles into the tile cache, then
 * assembles each patch from its tiles straight into the backend's ring slot (the CPU backend: converted
 * into the output as it is assembled; CUDA: the uint8 patches, then the H2D copy and the kernel). The
 * consumer takes the batches in order, as from the image pipeline (pipeline.h): same ring model, same
 * backends, same token rules. Batches are prepared up to `prefetch` ahead of the consumer. */
#ifndef H5PACK_PATCH_PIPE_H
#define H5PACK_PATCH_PIPE_H

#include <stddef.h>
#include <stdint.h>

#include "backend.h"
#include "patch_windows.h"
#include "tilesrc.h"

typedef struct patch_pipe_params {
    tile_source *src;
    backend *be;              /* its ring: prefetch slots of batch_size S x S x C images (input NHWC) */
    const patch_windows *w;
    uint32_t patch_size;      /* S */
    size_t cache_slots;       /* tiles the cache holds (at least one batch's tiles: the plan grows it) */
    uint64_t epochs;          /* 0: endless */
    uint64_t start_epoch, start_batch; /* resume: the first batch (patch_plan.h) */
    int threads, prefetch;
    uint64_t seed;            /* the augmentation key: (seed, epoch, index * world + rank) as for images */
    uint32_t rank, world;
} patch_pipe_params;

typedef struct patch_pipe patch_pipe;

int h5pack_patch_pipe_start(const patch_pipe_params *pp, patch_pipe **out, char *err, size_t err_len);

/* As h5pack_pipeline_next / _release (pipeline.h), with batch->where set. */
int h5pack_patch_pipe_next(patch_pipe *p, h5pack_batch *batch, char *err, size_t err_len);
int h5pack_patch_pipe_release(patch_pipe *p, uint64_t *token, char *err, size_t err_len);

/* h5pack_detach of the delivery TOKEN (held, not released): the backend hands its slot's memory over
 * (backend.h; patches have no echoes, so nothing is copied). */
int h5pack_patch_pipe_detach(patch_pipe *p, uint64_t token, backend_detached *out, int *copied, char *err,
                             size_t err_len);

/* Counters of the delivered batches (hits and misses count tiles). */
void h5pack_patch_pipe_stats(const patch_pipe *p, h5pack_stats *st);

/* Tiles the cache holds now. */
size_t h5pack_patch_pipe_cache_tiles(const patch_pipe *p);

void h5pack_patch_pipe_free(patch_pipe *p);

#endif
