/* The http:// store read from many threads at once, as the reader's workers read it (store.h: read and
 * check from any thread): random ranges, large (one request each) and small (HDF5's metadata path, served
 * from shared blocks), each equal to the file's bytes; then whole readers (4 workers, a cache of a few
 * chunks) over an uncompressed and a gzip file, their batches equal to the local file's. All while the
 * server (rangeserver.py, which runs this program with H5PACK_TEST_URL set) injects 503s, dropped
 * connections and cut bodies. Built for the ThreadSanitizer run too (label "threads"). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "h5fixture.h"
#include "h5pack.h"
#include "reader_drain.h"
#include "store.h"

#define BLOB_BYTES (3u << 20)
#define THREADS 8
#define READS 60

static uint8_t *g_blob;
static store *g_store;

static uint64_t next_random(uint64_t *s)
{
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    return *s;
}

static void write_blob(const char *path)
{
    g_blob = malloc(BLOB_BYTES);
    CHECK(g_blob);
    uint64_t s = 88172645463325252ull;
    for (size_t i = 0; i < BLOB_BYTES; i++)
        g_blob[i] = (uint8_t)(next_random(&s) >> 32);
    FILE *f = fopen(path, "wb");
    CHECK(f && fwrite(g_blob, 1, BLOB_BYTES, f) == BLOB_BYTES);
    fclose(f);
}

static void *reader(void *arg)
{
    uint64_t s = 0x9e3779b97f4a7c15ull * (uint64_t)(uintptr_t)arg + 1;
    uint8_t *buf = malloc(300 << 10);
    char err[512];
    CHECK(buf);
    for (int i = 0; i < READS; i++) {
        int small = next_random(&s) % 2;
        size_t len = small ? 1 + next_random(&s) % 4000 : 1 + next_random(&s) % (300 << 10);
        uint64_t off = next_random(&s) % (BLOB_BYTES - len);
        int rc = small && g_store->ops->read_meta ? g_store->ops->read_meta(g_store, off, buf, len, err, sizeof err)
                                                  : h5pack_store_read(g_store, off, buf, len, "range", err, sizeof err);
        CHECK_MSG(rc == 0, "read of %zu bytes at %llu: %s", len, (unsigned long long)off, err);
        CHECK_MSG(!memcmp(buf, g_blob + off, len), "%zu bytes at %llu differ", len, (unsigned long long)off);
        CHECK_EQ_INT(h5pack_store_check(g_store, err, sizeof err), 0);
    }
    free(buf);
    return NULL;
}

/* FNV-1a over every batch's pixels, labels and indices, in delivery order. */
static void hash_batch(void *ctx, const h5pack_info *info, const h5pack_batch *b)
{
    (void)info;
    uint64_t *h = ctx;
    const uint8_t *parts[] = {b->data, (const uint8_t *)b->labels, (const uint8_t *)b->indices};
    size_t lens[] = {b->bytes, b->count * sizeof(int64_t), b->count * sizeof(uint64_t)};
    for (int p = 0; p < 3; p++)
        for (size_t i = 0; i < lens[p]; i++)
            *h = (*h ^ parts[p][i]) * 1099511628211ull;
}

static uint64_t epoch_hash(const char *location)
{
    h5pack_config cfg = H5PACK_CONFIG_DEFAULTS;
    cfg.device = H5PACK_DEVICE_CPU, cfg.dtype = H5PACK_DTYPE_UINT8, cfg.batch_size = 12, cfg.epochs = 2;
    cfg.threads = 4, cfg.cache_bytes = 6 * 8 * 3 * 16 * 16; /* 6 chunks of the 25 */
    uint64_t h = 14695981039346656037ull;
    test_drain_reader_each(location, &cfg, hash_batch, &h);
    return h;
}

static void readers(const char *base)
{
    static const h5fix_file plain = {.n = 200, .c = 3, .h = 16, .w = 16, .k = 8, .labels = 1};
    static const h5fix_file gzip = {.n = 200, .c = 3, .h = 16, .w = 16, .k = 8, .labels = 1, .gzip = 4,
                                    .pixel = h5fix_pixel_sparse};
    const h5fix_file *specs[] = {&plain, &gzip};
    const char *names[] = {"http_threads_plain.h5", "http_threads_gzip.h5"};
    for (int i = 0; i < 2; i++) {
        CHECK_OK(h5fix_write(names[i], specs[i]));
        char url[512];
        snprintf(url, sizeof url, "%s%s", base, names[i]);
        CHECK_MSG(epoch_hash(names[i]) == epoch_hash(url), "%s: the batches through http:// differ", names[i]);
        remove(names[i]);
    }
}

int main(void)
{
    const char *base = getenv("H5PACK_TEST_URL");
    if (!base) {
        printf("skipped: run by rangeserver.py, which sets H5PACK_TEST_URL\n");
        return 77;
    }
    setenv("H5PACK_HTTP_BACKOFF_MS", "5", 1);
    write_blob("http_threads_blob.bin");
    char url[512], err[512];
    snprintf(url, sizeof url, "%shttp_threads_blob.bin", base);
    CHECK_MSG(h5pack_store_open(url, &g_store, err, sizeof err) == 0, "%s", err);
    CHECK_EQ_U64(g_store->size, BLOB_BYTES);
    pthread_t t[THREADS];
    for (uintptr_t i = 0; i < THREADS; i++)
        CHECK_EQ_INT(pthread_create(&t[i], NULL, reader, (void *)i), 0);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    uint8_t b;
    CHECK_EQ_INT(h5pack_store_read(g_store, BLOB_BYTES, &b, 1, "past the end", err, sizeof err), H5PACK_ECORRUPT);
    h5pack_store_close(g_store);

    snprintf(url, sizeof url, "%sno_such_blob.bin", base);
    CHECK_EQ_INT(h5pack_store_open(url, &g_store, err, sizeof err), H5PACK_ENOTFOUND);
    CHECK_STR_CONTAINS(err, url);
    remove("http_threads_blob.bin");
    free(g_blob);
    readers(base);
    printf("http store: %d threads x %d ranges, and readers of 4 workers, equal to the file's, with faults "
           "injected\n", THREADS, READS);
    return 0;
}
