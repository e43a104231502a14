/* The patch reader's worker pool (reader/patch/patch_pool.h): for 1, 2 and 5 threads, 300 jobs back to back
 * of 0 to 999 items each: every item is done exactly once per job, by a thread index in range, and a job
 * returns only when all of its items are done. ThreadSanitizer runs it (label threads). */
#include <stdatomic.h>
#include <stdint.h>

#include "check.h"
#include "patch_pool.h"
#include "rng.h"

#define MAX_ITEMS 1000

typedef struct job {
    _Atomic int done[MAX_ITEMS];
    int threads;
    _Atomic int bad_thread;
} job;

static void count(void *ctx, size_t item, int thread)
{
    job *j = ctx;
    if (thread < 0 || thread >= j->threads)
        atomic_store(&j->bad_thread, 1);
    atomic_fetch_add(&j->done[item], 1);
}

int main(void)
{
    static job j;
    int counts[] = {1, 2, 5};
    rng_state r = {7};
    for (int c = 0; c < 3; c++) {
        patch_pool *pool;
        CHECK_OK(h5pack_patch_pool_start(counts[c], &pool));
        j.threads = counts[c];
        for (int round = 0; round < 300; round++) {
            size_t n = (size_t)rng_below(&r, MAX_ITEMS);
            for (size_t i = 0; i < MAX_ITEMS; i++)
                atomic_store(&j.done[i], 0);
            h5pack_patch_pool_run(pool, n, count, &j);
            for (size_t i = 0; i < MAX_ITEMS; i++)
                CHECK_MSG(atomic_load(&j.done[i]) == (i < n), "%d threads, job %d: item %zu done %d times",
                          counts[c], round, i, atomic_load(&j.done[i]));
        }
        CHECK(!atomic_load(&j.bad_thread));
        h5pack_patch_pool_stop(pool);
    }
    printf("patch_pool: 900 jobs on 1, 2 and 5 threads, every item exactly once\n");
    return 0;
}
