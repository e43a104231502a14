/* test_reader_slabs.c - files whose HDF5 chunks split images (read as slabs) and 3-D gray files, through
 * the public API: in every order and over two epochs each sample comes exactly once per epoch with the
 * written bytes and label; the reader's chunk hits, misses and bytes read equal h5pack_simulate's Belady
 * prediction; on the located raw path a whole epoch is read while another thread holds the HDF5 lock. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pthread_timedjoin_np */
#endif
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "reader_drain.h"
#include "h5glue.h" /* h5pack_h5_lock_global */
#include "h5pack.h"
#include "h5pack_sim.h"
#include "chunk_compare.h"

typedef struct slab_file {
    const char *name;
    h5fix_file tf;
    int fast;     /* expected h5pack_file_desc.fast_path */
    uint64_t cps; /* expected h5pack_file_desc.chunks_per_slab */
} slab_file;

static h5pack_config base_config(void)
{
    h5pack_config c = H5PACK_CONFIG_DEFAULTS;
    c.threads = 2, c.device = H5PACK_DEVICE_CPU, c.dtype = H5PACK_DTYPE_UINT8, c.batch_size = 8, c.epochs = 2;
    c.seed = 11, c.output_layout = H5PACK_LAYOUT_AUTO; /* the file's own layout: the bytes as written */
    c.window = 1; /* the tests use caches of a few chunks: a window they hold on every rank */
    return c;
}

/* Every sample once per epoch, its bytes (file layout, uint8) and label as written. */
static void check_delivery(const char *path, const h5fix_file *tf, h5pack_order order, size_t cache_bytes)
{
    h5pack_config c = base_config();
    c.order = order, c.cache_bytes = cache_bytes;
    h5pack_reader *r = NULL;
    int rc = h5pack_open(path, &c, &r);
    CHECK_MSG(rc == 0, "%s: %s", path, h5pack_last_error(r));
    size_t img = (size_t)tf->c * tf->h * tf->w;
    uint8_t *seen = calloc(tf->n * c.epochs, 1);
    h5pack_batch b = H5PACK_BATCH_INIT;
    while ((rc = h5pack_next(r, &b)) == H5PACK_OK) {
        for (size_t i = 0; i < b.count; i++) {
            uint64_t s = b.indices[i];
            CHECK(s < tf->n && b.epoch < c.epochs && !seen[b.epoch * tf->n + s]);
            seen[b.epoch * tf->n + s] = 1;
            const uint8_t *px = (const uint8_t *)b.data + i * img;
            for (size_t j = 0; j < img; j++)
                CHECK_MSG(px[j] == h5fix_pixel_rows(NULL, s, j), "%s order %d: sample %llu byte %zu is %u, wrote %u", path,
                          (int)order, (unsigned long long)s, j, px[j], h5fix_pixel_rows(NULL, s, j));
            CHECK_EQ_INT(b.labels[i], (int64_t)(s % tf->n_classes));
        }
        CHECK_OK(h5pack_release(r, &b));
    }
    CHECK_MSG(rc == H5PACK_END, "%s: next %d %s", path, rc, h5pack_last_error(r));
    for (uint64_t i = 0; i < tf->n * c.epochs; i++)
        CHECK_MSG(seen[i], "%s order %d: sample %llu of epoch %llu never came", path, (int)order,
                  (unsigned long long)(i % tf->n), (unsigned long long)(i / tf->n));
    free(seen);
    h5pack_close(r);
}

/* The simulator plans slabs as the reader does: the same hits, misses and (stored) bytes. */
static void check_belady(const char *path, h5pack_order order, size_t cache_bytes)
{
    h5pack_config c = base_config();
    c.order = order, c.cache_bytes = cache_bytes;
    h5pack_stats st = test_drain_reader(path, &c);
    h5pack_sim_params sp = H5PACK_SIM_PARAMS_DEFAULTS;
    sp.cache_bytes = cache_bytes;
    h5pack_sim_result res = H5PACK_SIM_RESULT_INIT;
    char err[512];
    CHECK_MSG(h5pack_simulate(path, &c, &sp, &res, err, sizeof err) == 0, "%s", err);
    CHECK_MSG(st.chunk_hits == res.hits && st.chunk_misses == res.misses && st.bytes_read == res.bytes_read,
              "%s order %d cache %zu: reader %llu hits %llu misses %llu bytes, simulate %llu / %llu / %llu", path,
              (int)order, cache_bytes, (unsigned long long)st.chunk_hits, (unsigned long long)st.chunk_misses,
              (unsigned long long)st.bytes_read, (unsigned long long)res.hits, (unsigned long long)res.misses,
              (unsigned long long)res.bytes_read);
    CHECK_NEAR(res.read_amplification, st.read_amplification, 1e-9);
}

typedef struct epoch_job {
    h5pack_reader *r;
    int rc;
    uint64_t samples;
} epoch_job;

static void *read_epoch(void *arg)
{
    epoch_job *j = arg;
    h5pack_batch b = H5PACK_BATCH_INIT;
    while ((j->rc = h5pack_next(j->r, &b)) == H5PACK_OK) {
        j->samples += b.count;
        h5pack_release(j->r, &b);
    }
    return NULL;
}

/* A whole epoch while this thread holds the HDF5 lock: the workers never wait for it. */
static void check_lock_free(const char *path, uint64_t n)
{
    h5pack_config c = base_config();
    c.epochs = 1;
    h5pack_reader *r = NULL;
    CHECK_MSG(h5pack_open(path, &c, &r) == 0, "%s: %s", path, h5pack_last_error(r));
    epoch_job job = {.r = r};
    pthread_t th;
    struct timespec deadline;
    h5pack_h5_lock_global();
    CHECK(pthread_create(&th, NULL, read_epoch, &job) == 0);
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += 60;
    int rc = pthread_timedjoin_np(th, NULL, &deadline);
    h5pack_h5_unlock_global();
    if (rc == ETIMEDOUT)
        pthread_join(th, NULL);
    CHECK_MSG(rc == 0, "%s: the reader waited for the HDF5 lock", path);
    CHECK_EQ_INT(job.rc, H5PACK_END);
    CHECK_EQ_U64(job.samples, n);
    h5pack_close(r);
}

static void check_file(const slab_file *f)
{
    char path[700];
    snprintf(path, sizeof path, "%s/%s.h5", h5fix_tmpdir("reader-slabs"), f->name);
    CHECK_OK(h5fix_write(path, &f->tf));
    h5pack_file_desc d = H5PACK_FILE_DESC_INIT;
    char err[512];
    CHECK_MSG(h5pack_describe(path, NULL, &d, err, sizeof err) == 0, "%s", err);
    printf("%-16s %llu images of %ux%ux%u, slabs of %llu images (%llu), read path %s, fast %d\n", f->name,
           (unsigned long long)d.n_samples, d.channels, d.height, d.width, (unsigned long long)d.samples_per_chunk,
           (unsigned long long)d.n_chunks, h5pack_read_path_name(d.read_path), d.fast_path);
    CHECK_EQ_INT(d.fast_path, f->fast);
    CHECK_EQ_U64(d.chunks_per_slab, f->cps);
    CHECK_EQ_INT(d.channels, f->tf.c);
    size_t slab = (size_t)d.chunk_bytes;
    for (int o = H5PACK_ORDER_SEQUENTIAL; o <= H5PACK_ORDER_CHUNK; o++) {
        check_delivery(path, &f->tf, (h5pack_order)o, 3 * slab);
        check_belady(path, (h5pack_order)o, 2 * slab + slab / 2);
        check_belady(path, (h5pack_order)o, 5 * slab);
    }
    if (f->fast)
        check_lock_free(path, f->tf.n);
}

static h5fix_file odd_file(int gzip, int shuffle, int nhwc)
{
    h5fix_file tf = CHUNKSRC_TEST_FILE;
    tf.n = 60, tf.h = 20, tf.w = 30, tf.resizable = 1, tf.old_format = 1, tf.gzip = gzip, tf.shuffle = shuffle;
    tf.nhwc = nhwc;
    uint64_t nchw[4] = {7, 2, 5, 9}, hwc[4] = {7, 5, 9, 2};
    memcpy(tf.chunk, nhwc ? hwc : nchw, sizeof tf.chunk);
    return tf;
}

int main(void)
{
    h5fix_file gray = CHUNKSRC_TEST_FILE;
    gray.rank = 3, gray.c = 1, gray.n = 45, gray.h = 20, gray.w = 30, gray.resizable = 1, gray.old_format = 1, gray.gzip = 2;
    memcpy(gray.chunk, (uint64_t[4]){6, 7, 8, 0}, sizeof gray.chunk);
    h5fix_file fletcher = odd_file(4, 0, 0);
    fletcher.fletcher32 = 1;
    h5fix_file gray_whole = CHUNKSRC_TEST_FILE;
    gray_whole.rank = 3, gray_whole.c = 1;
    const slab_file files[] = {
        {.name = "odd-gzip-shuffle", .tf = odd_file(4, 1, 0), .fast = 1, .cps = 2 * 4 * 4},
        {.name = "odd-nhwc", .tf = odd_file(0, 0, 1), .fast = 1, .cps = 4 * 4 * 2},
        {.name = "gray-split", .tf = gray, .fast = 1, .cps = 3 * 4},
        {.name = "gray-whole", .tf = gray_whole, .fast = 1, .cps = 1},
        {.name = "odd-fletcher", .tf = fletcher, .fast = 0, .cps = 32},
    };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
        check_file(&files[i]);
    printf("reader slabs: all checks passed\n");
    return 0;
}
