/* test_cache.c - the chunk cache executing a Belady plan with several threads, no file: a fake loader
 * writes a pattern derived from the chunk number; every access checks that its slot holds its chunk
 * from acquire to finish (a premature overwrite by a later load would show), and the loads done equal
 * the plan's misses, also when some loads lend their bytes instead of copying them (a slot switching
 * between its own buffer and a lent pointer must always show its current chunk). Also: h5pack_cache_stop wakes a worker blocked on a load that never comes. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#include "cache.h"
#include "check.h"
#include "plan.h"
#include "rng.h"

#define CHUNK_BYTES 64
#define MAX_CHUNKS 128

typedef struct shared {
    planner *plan;
    chunk_cache *cache;
    pthread_mutex_t plan_lock;
    uint64_t batch_size, misses_planned;
    _Atomic uint64_t loads, bad;
    int lend;          /* odd chunks are lent from `lent` (as a mapped file's are), even ones copied */
    uint8_t *lent;     /* MAX_CHUNKS chunks holding their pattern */
} shared;

static int fake_load(void *ctx, void *worker, uint64_t chunk, uint8_t *dst, const uint8_t **data, char *err,
                     size_t err_len)
{
    shared *s = ctx;
    (void)worker, (void)err, (void)err_len;
    atomic_fetch_add(&s->loads, 1);
    /* on entry: what the slot held, its own buffer or a lent chunk */
    if (*data != dst && (*data < s->lent || *data >= s->lent + MAX_CHUNKS * CHUNK_BYTES))
        atomic_fetch_add(&s->bad, 1);
    *data = dst;
    if (s->lend && chunk % 2 == 1 && chunk < MAX_CHUNKS) {
        *data = s->lent + chunk * CHUNK_BYTES;
        return 0;
    }
    for (int i = 0; i < CHUNK_BYTES; i++) {
        dst[i] = (uint8_t)(chunk * 131 + (uint64_t)i);
        if (i % 16 == 0)
            sched_yield(); /* widen the window in which a wrong overlap would be seen */
    }
    return 0;
}

static int holds(const uint8_t *d, uint64_t chunk)
{
    for (int i = 0; i < CHUNK_BYTES; i++)
        if (d[i] != (uint8_t)(chunk * 131 + (uint64_t)i))
            return 0;
    return 1;
}

static void *worker(void *arg)
{
    shared *s = arg;
    uint64_t *samples = malloc(s->batch_size * 8), *wait = malloc(s->batch_size * 8);
    plan_access *acc = malloc(s->batch_size * sizeof *acc);
    for (;;) {
        size_t count, n_acc;
        uint64_t epoch, index;
        pthread_mutex_lock(&s->plan_lock);
        int rc = h5pack_planner_next(s->plan, samples, &count, acc, &n_acc, &epoch, &index);
        for (size_t j = 0; rc == 1 && j < n_acc; j++) {
            wait[j] = h5pack_cache_planned(s->cache, &acc[j]);
            s->misses_planned += (uint64_t)acc[j].load;
        }
        pthread_mutex_unlock(&s->plan_lock);
        if (rc != 1)
            break;
        /* odd batches: first what can go at once, then the rest in order (as the pipeline does) */
        char *done = calloc(n_acc, 1);
        for (int pass = index % 2 ? 0 : 1; pass < 2; pass++)
            for (size_t j = 0; j < n_acc; j++) {
                const uint8_t *d;
                char err[64];
                if (done[j])
                    continue;
                int rc = h5pack_cache_acquire(s->cache, &acc[j], wait[j], pass == 0, NULL, &d, err, sizeof err);
                if (rc == CACHE_WOULD_WAIT)
                    continue;
                if (rc || !holds(d, acc[j].chunk))
                    atomic_fetch_add(&s->bad, 1);
                sched_yield();
                if (!holds(d, acc[j].chunk))
                    atomic_fetch_add(&s->bad, 1);
                h5pack_cache_finish(s->cache, acc[j].slot);
                done[j] = 1;
            }
        for (size_t j = 0; j < n_acc; j++)
            if (!done[j])
                atomic_fetch_add(&s->bad, 1);
        free(done);
    }
    free(samples), free(wait), free(acc);
    return NULL;
}

static void run_case(const order_params *op, size_t slots, uint64_t epochs, int threads, int lend)
{
    shared s = {0};
    s.batch_size = op->batch_size;
    s.lend = lend;
    s.lent = malloc(MAX_CHUNKS * CHUNK_BYTES);
    CHECK(s.lent != NULL);
    for (uint64_t c = 0; c < MAX_CHUNKS; c++)
        for (int i = 0; i < CHUNK_BYTES; i++)
            s.lent[c * CHUNK_BYTES + i] = (uint8_t)(c * 131 + (uint64_t)i);
    pthread_mutex_init(&s.plan_lock, NULL);
    CHECK_OK(h5pack_planner_create(op, slots, epochs, &s.plan));
    CHECK_OK(h5pack_cache_create(slots, CHUNK_BYTES, fake_load, &s, &s.cache));
    pthread_t t[4];
    for (int i = 0; i < threads; i++)
        CHECK_OK(pthread_create(&t[i], NULL, worker, &s));
    for (int i = 0; i < threads; i++)
        pthread_join(t[i], NULL);
    CHECK_EQ_U64(atomic_load(&s.bad), 0);
    CHECK_EQ_U64(atomic_load(&s.loads), s.misses_planned);
    h5pack_cache_free(s.cache);
    h5pack_planner_free(s.plan);
    pthread_mutex_destroy(&s.plan_lock);
    free(s.lent);
}

static void test_threads_follow_the_plan(void)
{
    rng_state r = {777};
    for (int t = 0; t < 60; t++) {
        order_params op = {(h5pack_order)rng_below(&r, 3), 1 + rng_below(&r, 120), 1 + rng_below(&r, 8),
                           1 + rng_below(&r, 5), rng_next(&r), 0, 1, 0, 1 + rng_below(&r, 20)};
        run_case(&op, 1 + rng_below(&r, 6), 1 + rng_below(&r, 3), 1 + (int)rng_below(&r, 4), t % 2);
    }
}

typedef struct blocked_arg {
    chunk_cache *cache;
    plan_access a;
    int rc;
} blocked_arg;

static void *blocked_hit(void *arg)
{
    blocked_arg *b = arg;
    const uint8_t *d;
    char err[64];
    b->rc = h5pack_cache_acquire(b->cache, &b->a, 0, 0, NULL, &d, err, sizeof err);
    h5pack_cache_finish(b->cache, b->a.slot);
    return NULL;
}

static void test_stop_wakes_waiters(void)
{
    shared s = {0};
    chunk_cache *c;
    CHECK_OK(h5pack_cache_create(2, CHUNK_BYTES, fake_load, &s, &c));
    plan_access load = {5, 1, 1, 1, 1, UINT64_MAX}, hit = {5, 1, 0, 0, 1, UINT64_MAX};
    CHECK_EQ_U64(h5pack_cache_planned(c, &load), 0);
    CHECK_EQ_U64(h5pack_cache_planned(c, &hit), 0);
    blocked_arg b = {c, hit, 0}; /* the load is planned but never executed: the hit waits */
    pthread_t t;
    CHECK_OK(pthread_create(&t, NULL, blocked_hit, &b));
    for (int i = 0; i < 1000; i++)
        sched_yield();
    h5pack_cache_stop(c);
    pthread_join(t, NULL);
    CHECK_EQ_INT(b.rc, H5PACK_ESTATE);
    CHECK_EQ_U64(atomic_load(&s.loads), 0);
    h5pack_cache_free(c);
}

int main(void)
{
    test_stop_wakes_waiters();
    test_threads_follow_the_plan();
    printf("cache: all checks passed\n");
    return 0;
}
