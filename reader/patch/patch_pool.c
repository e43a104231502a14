/* patch_pool.c - see patch_pool.h. */
#include "patch_pool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "h5pack.h"

struct patch_pool {
    int threads;
    pthread_t *helpers;
    int started;            /* helpers running */
    pthread_mutex_t lock;
    pthread_cond_t begin, end;
    unsigned long job;      /* bumped by every run: a helper works once per job */
    int busy;               /* helpers still in the current job */
    int stop;
    patch_pool_fn fn;
    void *ctx;
    size_t n;
    _Atomic size_t next;    /* the next item to hand out */
};

typedef struct helper_arg {
    patch_pool *pool;
    int thread;
} helper_arg;

static void work(patch_pool *pool, int thread)
{
    for (;;) {
        size_t item = atomic_fetch_add_explicit(&pool->next, 1, memory_order_relaxed);
        if (item >= pool->n)
            return;
        pool->fn(pool->ctx, item, thread);
    }
}

static void *helper_main(void *arg)
{
    patch_pool *pool = ((helper_arg *)arg)->pool;
    int thread = ((helper_arg *)arg)->thread;
    free(arg);
    unsigned long seen = 0;
    pthread_mutex_lock(&pool->lock);
    for (;;) {
        while (pool->job == seen && !pool->stop)
            pthread_cond_wait(&pool->begin, &pool->lock);
        if (pool->stop)
            break;
        seen = pool->job;
        pthread_mutex_unlock(&pool->lock);
        work(pool, thread);
        pthread_mutex_lock(&pool->lock);
        if (--pool->busy == 0)
            pthread_cond_signal(&pool->end);
    }
    pthread_mutex_unlock(&pool->lock);
    return NULL;
}

int h5pack_patch_pool_start(int threads, patch_pool **out)
{
    *out = NULL;
    patch_pool *pool = calloc(1, sizeof *pool);
    if (!pool)
        return H5PACK_ENOMEM;
    pool->threads = threads < 1 ? 1 : threads;
    pthread_mutex_init(&pool->lock, NULL);
    pthread_cond_init(&pool->begin, NULL), pthread_cond_init(&pool->end, NULL);
    pool->helpers = calloc((size_t)pool->threads, sizeof *pool->helpers);
    *out = pool;
    if (!pool->helpers)
        return H5PACK_ENOMEM;
    for (int t = 1; t < pool->threads; t++) {
        helper_arg *a = malloc(sizeof *a);
        if (!a)
            return H5PACK_ENOMEM;
        a->pool = pool, a->thread = t;
        if (pthread_create(&pool->helpers[t], NULL, helper_main, a)) {
            free(a);
            return H5PACK_ENOMEM;
        }
        pool->started++;
    }
    return 0;
}

void h5pack_patch_pool_run(patch_pool *pool, size_t n, patch_pool_fn fn, void *ctx)
{
    pthread_mutex_lock(&pool->lock);
    pool->fn = fn, pool->ctx = ctx, pool->n = n;
    atomic_store_explicit(&pool->next, 0, memory_order_relaxed);
    pool->busy = pool->started;
    pool->job++;
    pthread_cond_broadcast(&pool->begin);
    pthread_mutex_unlock(&pool->lock);
    work(pool, 0);
    pthread_mutex_lock(&pool->lock);
    while (pool->busy)
        pthread_cond_wait(&pool->end, &pool->lock);
    pthread_mutex_unlock(&pool->lock);
}

void h5pack_patch_pool_stop(patch_pool *pool)
{
    if (!pool)
        return;
    pthread_mutex_lock(&pool->lock);
    pool->stop = 1;
    pthread_cond_broadcast(&pool->begin);
    pthread_mutex_unlock(&pool->lock);
    for (int t = 1; t <= pool->started; t++)
        pthread_join(pool->helpers[t], NULL);
    pthread_mutex_destroy(&pool->lock);
    pthread_cond_destroy(&pool->begin), pthread_cond_destroy(&pool->end);
    free(pool->helpers);
    free(pool);
}
