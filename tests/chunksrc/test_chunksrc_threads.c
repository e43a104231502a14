/* test_chunksrc_threads.c - several threads read random chunks of one source at the same time, each with
 * its own scratch, on every read path; every read must give the written bytes. Also what the TSan build
 * runs to check the locking (HDF5 mutex, lazily cached stored sizes). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "chunk_compare.h"

#define THREADS 4
#define READS_PER_THREAD 150

typedef struct worker {
    chunk_source *src;
    uint64_t seed;
    int failures;
    uint64_t bytes_read;
    char err[512];
} worker;

static uint64_t next_random(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

static int chunk_is_right(const source_geometry *g, uint64_t chunk, uint64_t samples, const uint8_t *buf)
{
    uint64_t first = chunk * g->samples_per_chunk;
    for (uint64_t j = 0; j < samples * g->image_bytes; j++)
        if (buf[j] != h5fix_pixel_rows(NULL, first + j / g->image_bytes, j % g->image_bytes))
            return 0;
    return 1;
}

static void *work(void *arg)
{
    worker *w = arg;
    const source_geometry *g = h5pack_chunksrc_geometry(w->src);
    uint8_t *buf = malloc(g->chunk_bytes);
    chunksrc_scratch *sc = h5pack_chunksrc_scratch_new(w->src);
    chunk_read_cost cost = {0, 0, 0, 0};
    if (!buf || !sc) {
        w->failures++;
        goto done;
    }
    for (int i = 0; i < READS_PER_THREAD; i++) {
        uint64_t chunk = next_random(&w->seed) % g->n_chunks;
        (void)h5pack_chunksrc_stored_bytes(w->src, chunk); /* races with the reads' own size lookups */
        memset(buf, 0xee, g->chunk_bytes);
        if (h5pack_chunksrc_read(w->src, chunk, buf, sc, &cost, w->err, sizeof w->err) != 0 ||
            !chunk_is_right(g, chunk, h5pack_chunksrc_chunk_samples(w->src, chunk), buf))
            w->failures++;
    }
    w->bytes_read = cost.bytes_read;
done:
    h5pack_chunksrc_scratch_free(sc);
    free(buf);
    return NULL;
}

static void run_case(const char *name, const h5fix_file *tf, h5pack_read_path want)
{
    char path[600], err[512];
    chunk_source *s = NULL;
    snprintf(path, sizeof path, "%s/%s.h5", h5fix_tmpdir("chunksrc-threads"), name);
    CHECK_OK(h5fix_write(path, tf));
    CHECK_OK(h5pack_chunksrc_open(path, "images", "labels", H5PACK_LAYOUT_AUTO, &s, err, sizeof err));
    CHECK_EQ_INT(h5pack_chunksrc_geometry(s)->path, want);
    pthread_t th[THREADS];
    worker w[THREADS];
    for (int t = 0; t < THREADS; t++) {
        memset(&w[t], 0, sizeof w[t]);
        w[t].src = s;
        w[t].seed = 0x9e3779b97f4a7c15ull * (uint64_t)(t + 1);
        CHECK(pthread_create(&th[t], NULL, work, &w[t]) == 0);
    }
    int failures = 0;
    for (int t = 0; t < THREADS; t++) {
        pthread_join(th[t], NULL);
        failures += w[t].failures;
        if (w[t].failures)
            fprintf(stderr, "%s thread %d: %d bad reads; last error: %s\n", name, t, w[t].failures, w[t].err);
        CHECK(w[t].bytes_read > 0);
    }
    printf("%-12s %d threads x %d reads: %d failures\n", name, THREADS, READS_PER_THREAD, failures);
    CHECK_EQ_INT(failures, 0);
    h5pack_chunksrc_close(s);
}

int main(void)
{
    h5fix_file tf = CHUNKSRC_TEST_FILE;
    tf.n = 61;
    tf.k = 3;
    run_case("implicit", &tf, H5PACK_READ_IMPLICIT);
    tf.gzip = 3;
    run_case("gzip", &tf, H5PACK_READ_RAW_DEFLATE);
    tf.gzip = 0;
    tf.fletcher32 = 1;
    run_case("fletcher32", &tf, H5PACK_READ_HDF5);
    tf.fletcher32 = 0;
    tf.contiguous = 1, tf.old_format = 1;
    tf.h = tf.w = 96; /* 27 KiB images: several 1 MiB virtual chunks */
    run_case("contiguous", &tf, H5PACK_READ_CONTIGUOUS);
    printf("ok\n");
    return 0;
}
