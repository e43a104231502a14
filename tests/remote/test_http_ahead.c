/* The remote stores' read-ahead (reader/store/store_http_ahead.c), at the store API, as the reader uses it:
 * ranges announced in order (will_read), then read from several threads, each equal to the file's bytes,
 * while the server (rangeserver.py, which runs this program with H5PACK_TEST_URL set) injects 503s,
 * dropped connections and cut bodies; announced ranges read in pieces, never read, or not announced; a
 * budget far smaller than what is announced; the object deleted (404) and rewritten (another ETag) while
 * fetches are on their way: each read fails with the URL and the cause, none hangs; a close with fetches
 * in flight. Built for the ThreadSanitizer run too (label "threads"). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "h5pack.h"
#include "store.h"

#define BLOB_BYTES (4u << 20)
#define PIECE (96u << 10)
#define N_RANGES (BLOB_BYTES / PIECE)
#define THREADS 4

static uint8_t *g_blob;

static uint64_t next_random(uint64_t *s)
{
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    return *s;
}

static void write_blob(const char *path)
{
    FILE *f = fopen(path, "wb");
    CHECK(f && fwrite(g_blob, 1, BLOB_BYTES, f) == BLOB_BYTES);
    fclose(f);
}

static store *open_blob(const char *base, const char *name, uint64_t budget)
{
    char url[512], err[512];
    snprintf(url, sizeof url, "%s%s", base, name);
    store *st = NULL;
    CHECK_MSG(h5pack_store_open(url, &st, err, sizeof err) == 0, "%s", err);
    h5pack_store_limit_views(st, budget);
    CHECK_MSG(h5pack_store_reads_ahead(st) > 0, "the http store reads ahead once it has a budget");
    return st;
}

/* Workers take the announced ranges in order, as the reader's workers take loads. */
typedef struct job {
    store *st;
    atomic_uint next;
    int split; /* read each range in two pieces */
} job;

static void *reader(void *arg)
{
    job *j = arg;
    uint8_t *buf = malloc(PIECE);
    char err[512];
    CHECK(buf);
    for (unsigned i; (i = atomic_fetch_add(&j->next, 1)) < N_RANGES;) {
        uint64_t off = (uint64_t)i * PIECE;
        size_t half = j->split ? PIECE / 2 : PIECE;
        for (size_t at = 0; at < PIECE; at += half) {
            int rc = h5pack_store_read(j->st, off + at, buf, half, "range", err, sizeof err);
            CHECK_MSG(rc == 0, "read of %zu bytes at %llu: %s", half, (unsigned long long)(off + at), err);
            CHECK_MSG(!memcmp(buf, g_blob + off + at, half), "%zu bytes at %llu differ", half,
                      (unsigned long long)(off + at));
        }
    }
    free(buf);
    return NULL;
}

static void read_announced(const char *base, uint64_t budget, int split)
{
    job j = {.st = open_blob(base, "http_ahead_blob.bin", budget), .split = split};
    atomic_init(&j.next, 0);
    for (unsigned i = 0; i < N_RANGES; i++)
        h5pack_store_will_read(j.st, (uint64_t)i * PIECE, PIECE);
    pthread_t t[THREADS];
    for (uintptr_t i = 0; i < THREADS; i++)
        CHECK_EQ_INT(pthread_create(&t[i], NULL, reader, &j), 0);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    /* announced and never read, then a read nobody announced: its own request */
    uint8_t b[64];
    char err[512];
    h5pack_store_will_read(j.st, 7, 100);
    CHECK_OK(h5pack_store_read(j.st, 1000, b, sizeof b, "unannounced", err, sizeof err));
    CHECK(!memcmp(b, g_blob + 1000, sizeof b));
    CHECK_EQ_INT(h5pack_store_check(j.st, err, sizeof err), 0);
    h5pack_store_close(j.st);
}

/* Reads of announced ranges after the object went (CHANGE): every one fails within the retry budget,
 * naming the URL and WANT; none hangs. */
static void read_after(const char *base, void (*change)(const char *path), const char *want, int code)
{
    write_blob("http_ahead_gone.bin");
    store *st = open_blob(base, "http_ahead_gone.bin", 1u << 20);
    uint8_t *buf = malloc(PIECE);
    char err[512];
    CHECK(buf);
    for (unsigned i = 0; i < 16; i++)
        h5pack_store_will_read(st, (uint64_t)i * PIECE, PIECE);
    CHECK_OK(h5pack_store_read(st, 0, buf, PIECE, "first", err, sizeof err)); /* some are fetched by now */
    change("http_ahead_gone.bin");
    int failed = 0;
    time_t t0 = time(NULL);
    for (unsigned i = 1; i < 16; i++) {
        int rc = h5pack_store_read(st, (uint64_t)i * PIECE, buf, PIECE, "range", err, sizeof err);
        if (rc == 0) { /* fetched before the change */
            CHECK(!memcmp(buf, g_blob + (uint64_t)i * PIECE, PIECE));
            continue;
        }
        failed++;
        CHECK_EQ_INT(rc, code);
        CHECK_STR_CONTAINS(err, "http_ahead_gone.bin");
        CHECK_STR_CONTAINS(err, want);
    }
    CHECK_MSG(failed > 0, "the reads after the change fail (%s)", want);
    CHECK_MSG(time(NULL) - t0 < 30, "the failures came within the retry budget");
    free(buf);
    h5pack_store_close(st);
    remove("http_ahead_gone.bin");
}

static void delete_file(const char *path)
{
    remove(path);
}

/* Another ETag: the server's is the file's size and modification time. */
static void rewrite_file(const char *path)
{
    struct timespec later[2] = {{0, UTIME_NOW}, {time(NULL) + 100, 0}};
    CHECK_EQ_INT(utimensat(AT_FDCWD, path, later, 0), 0);
}

/* Closed while its fetches are on their way. */
static void close_in_flight(const char *base)
{
    store *st = open_blob(base, "http_ahead_blob.bin", 8u << 20);
    for (unsigned i = 0; i < N_RANGES; i++)
        h5pack_store_will_read(st, (uint64_t)i * PIECE, PIECE);
    h5pack_store_close(st);
}

int main(void)
{
    const char *base = getenv("H5PACK_TEST_URL");
    if (!base) {
        printf("skipped: run by rangeserver.py, which sets H5PACK_TEST_URL\n");
        return 77;
    }
    setenv("H5PACK_HTTP_BACKOFF_MS", "5", 1);
    setenv("H5PACK_HTTP_RETRIES", "4", 1);
    g_blob = malloc(BLOB_BYTES);
    CHECK(g_blob);
    uint64_t s = 0x2545f4914f6cdd1dull;
    for (size_t i = 0; i < BLOB_BYTES; i++)
        g_blob[i] = (uint8_t)(next_random(&s) >> 32);
    write_blob("http_ahead_blob.bin");
    read_announced(base, 64u << 20, 0);  /* everything fits */
    read_announced(base, 400u << 10, 1); /* four ranges at a time, each read in two pieces */
    close_in_flight(base);
    read_after(base, delete_file, "404", H5PACK_ENOTFOUND);
    read_after(base, rewrite_file, "changed", H5PACK_ECORRUPT);
    remove("http_ahead_blob.bin");
    free(g_blob);
    printf("http read-ahead: %u announced ranges read by %d threads equal to the file's, with faults; failures "
           "named\n", (unsigned)N_RANGES, THREADS);
    return 0;
}
