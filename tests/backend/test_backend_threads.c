/* test_backend_threads.c - several worker threads submit different slots of one CPU backend at once
 * (as the reader's workers do); every slot's output must equal the naive conversion, and the shared
 * busy-time counter must not race (this test runs under ThreadSanitizer). */
#include <pthread.h>
#include <stdlib.h>

#include "check.h"
#include "naive.h"

enum { WORKERS = 3, ROUNDS = 20, COUNT = 4 };

typedef struct worker_arg {
    backend *b;
    size_t in_bytes;
    int slot, round;
    int rc;
} worker_arg;

static uint64_t key_of(int slot, int round)
{
    return aug_batch_key(3, (uint64_t)round, (uint64_t)slot, 0);
}

static void *worker(void *arg)
{
    worker_arg *w = arg;
    naive_fill_random(w->b->ops->host_input(w->b, w->slot), w->in_bytes, key_of(w->slot, w->round));
    w->rc = w->b->ops->submit(w->b, w->slot, h5pack_backend_job(COUNT, key_of(w->slot, w->round)), NULL, 0);
    return NULL;
}

int main(void)
{
    backend_params p = naive_params(3, 8, 10, H5PACK_DTYPE_FLOAT16, H5PACK_LAYOUT_NHWC, H5PACK_LAYOUT_NCHW, 1, 2);
    p.slots = WORKERS;
    backend *b = NULL;
    char err[256];
    CHECK_OK(h5pack_backend_cpu_create(&p, &b, err, sizeof err));
    size_t in_bytes = COUNT * 3 * 8 * 10, out_bytes = COUNT * h5pack_backend_output_image_bytes(&p);
    uint8_t *want = malloc(out_bytes);
    CHECK(want);
    for (int round = 0; round < ROUNDS; round++) {
        pthread_t t[WORKERS];
        worker_arg args[WORKERS];
        for (int s = 0; s < WORKERS; s++) {
            args[s] = (worker_arg){b, in_bytes, s, round, -1};
            CHECK(pthread_create(&t[s], NULL, worker, &args[s]) == 0);
        }
        double convert_s;
        b->ops->times(b, &convert_s, NULL, NULL); /* the consumer reads the stats meanwhile */
        for (int s = 0; s < WORKERS; s++) {
            CHECK(pthread_join(t[s], NULL) == 0);
            CHECK_OK(args[s].rc);
            h5pack_batch batch;
            CHECK_OK(b->ops->output(b, s, COUNT, &batch, NULL, 0));
            naive_convert(&p, b->ops->host_input(b, s), want, COUNT, key_of(s, round));
            CHECK_MSG(memcmp(batch.data, want, out_bytes) == 0, "slot %d round %d differs", s, round);
            CHECK_OK(b->ops->release(b, s, NULL, 0));
        }
    }
    free(want);
    b->ops->destroy(b);
    printf("backend_threads: %d rounds of %d concurrent submits checked\n", ROUNDS, WORKERS);
    return 0;
}
