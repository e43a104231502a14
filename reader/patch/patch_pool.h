/* patch_pool.h - the patch reader's worker threads: a fork-join "parallel for" whose helpers sleep on a
 * condition variable between jobs (OpenMP's workers spin between parallel regions, which on a small
 * machine takes a core from the consumer while the planning thread works alone). The caller takes part
 * in every job as thread 0. */
#ifndef H5PACK_PATCH_POOL_H
#define H5PACK_PATCH_POOL_H

#include <stddef.h>

typedef void (*patch_pool_fn)(void *ctx, size_t item, int thread);

typedef struct patch_pool patch_pool;

/* THREADS >= 1 in all (THREADS - 1 helpers). 0, or H5PACK_ENOMEM when they cannot be started. */
int h5pack_patch_pool_start(int threads, patch_pool **out);

/* FN(CTX, item, thread) for every item in [0, N), spread over the threads (thread in [0, THREADS)); returns
 * when all are done. One job at a time, from one thread. */
void h5pack_patch_pool_run(patch_pool *pool, size_t n, patch_pool_fn fn, void *ctx);

/* Stops and joins the helpers. NULL is a no-op. */
void h5pack_patch_pool_stop(patch_pool *pool);

#endif
