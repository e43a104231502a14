/* test_convert_writes.c - the converter's writes in whole 2 MiB blocks (block_gather.h, for chunks written
 * by several threads and for an image's tiles in order): the file gets every byte, and every write starts
 * and ends on a block boundary or at the range's ends, so the page cache can keep the file in huge folios.
 * Chunks smaller and larger than a block, written out of order by three threads; a chunk that never
 * comes (its neighbours' pieces go in at the flush); tiles in order. pwrite is wrapped (-Wl,--wrap) to
 * record every write. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "block_gather.h"
#include "check.h"

#define BLOCK BLOCK_GATHER_STEP

typedef struct span {
    uint64_t at, n;
} span;

static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;
static span writes[100000];
static size_t n_writes;

static uint64_t fail_at = UINT64_MAX; /* a write covering this offset fails with ENOSPC */

ssize_t __real_pwrite(int fd, const void *buf, size_t n, off_t at);
ssize_t __wrap_pwrite(int fd, const void *buf, size_t n, off_t at)
{
    if ((uint64_t)at <= fail_at && fail_at < (uint64_t)at + n) {
        errno = ENOSPC;
        return -1;
    }
    pthread_mutex_lock(&log_mu);
    if (n_writes < sizeof writes / sizeof writes[0])
        writes[n_writes++] = (span){(uint64_t)at, n};
    pthread_mutex_unlock(&log_mu);
    return __real_pwrite(fd, buf, n, at);
}

static uint8_t byte_at(uint64_t off)
{
    return (uint8_t)(off * 2654435761u >> 13);
}

static int on_edge(uint64_t x, uint64_t lo, uint64_t hi)
{
    return x % BLOCK == 0 || x == lo || x == hi;
}

/* The first COUNT recorded writes start and end on block boundaries or at the range's ends. */
static void check_writes(const char *what, uint64_t lo, uint64_t hi, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        uint64_t a = writes[i].at, b = a + writes[i].n;
        CHECK_MSG(on_edge(a, lo, hi) && on_edge(b, lo, hi), "%s: write %zu of [%llu, %llu) cuts a block", what, i,
                  (unsigned long long)a, (unsigned long long)b);
    }
}

/* The file's bytes [LO, HI) are the pattern, but for [SKIP_LO, SKIP_HI) (never written: zero). */
static void check_bytes(const char *what, int fd, uint64_t lo, uint64_t hi, uint64_t skip_lo, uint64_t skip_hi)
{
    size_t n = (size_t)(hi - lo);
    uint8_t *got = malloc(n);
    CHECK(got && pread(fd, got, n, (off_t)lo) == (ssize_t)n);
    for (size_t i = 0; i < n; i++) {
        uint64_t off = lo + i;
        uint8_t want = off >= skip_lo && off < skip_hi ? 0 : byte_at(off);
        CHECK_MSG(got[i] == want, "%s: byte at %llu is %u, not %u", what, (unsigned long long)off, got[i], want);
    }
    free(got);
}

typedef struct job {
    block_gather *g;
    uint64_t lo, size;
    const size_t *order;
    size_t n, skip;
    size_t next; /* shared, under log_mu */
} job;

static void *writer(void *arg)
{
    job *j = arg;
    uint8_t *buf = malloc(j->size);
    CHECK(buf);
    for (;;) {
        pthread_mutex_lock(&log_mu);
        size_t k = j->next < j->n ? j->order[j->next++] : SIZE_MAX;
        pthread_mutex_unlock(&log_mu);
        if (k == SIZE_MAX)
            break;
        if (k == j->skip)
            continue;
        uint64_t at = j->lo + k * j->size;
        for (uint64_t i = 0; i < j->size; i++)
            buf[i] = byte_at(at + i);
        size_t written = 0;
        CHECK_OK(block_gather_write(j->g, buf, (size_t)j->size, at, &written));
    }
    free(buf);
    return NULL;
}

/* N chunks of SIZE bytes from offset LO, in a shuffled order over three threads; chunk SKIP never comes
 * (SIZE_MAX: all do). */
static void gather_case(const char *what, uint64_t lo, uint64_t size, size_t n, size_t skip)
{
    char path[] = "/tmp/h5pack-writes-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    uint64_t hi = lo + n * size;
    size_t *order = malloc(n * sizeof *order);
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    srand(7);
    for (size_t i = n - 1; i > 0; i--) {
        size_t k = (size_t)rand() % (i + 1), t = order[i];
        order[i] = order[k], order[k] = t;
    }
    n_writes = 0;
    job j = {.g = block_gather_new(fd, lo, hi), .lo = lo, .size = size, .order = order, .n = n, .skip = skip};
    CHECK(j.g);
    pthread_t t[3];
    for (int i = 0; i < 3; i++)
        CHECK(pthread_create(&t[i], NULL, writer, &j) == 0);
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], NULL);
    size_t before = n_writes, written = 0;
    CHECK_OK(block_gather_flush(j.g, &written));
    CHECK_MSG(skip != SIZE_MAX || n_writes == before, "%s: every chunk came, yet the flush wrote %zu pieces", what,
              n_writes - before);
    block_gather_free(j.g);
    uint64_t skip_lo = skip == SIZE_MAX ? hi : lo + skip * size, skip_hi = skip == SIZE_MAX ? hi : skip_lo + size;
    check_writes(what, lo, hi, before); /* the flush's pieces (blocks beside the missing chunk) may cut */
    check_bytes(what, fd, lo, hi, skip_lo, skip_hi);
    close(fd), unlink(path), free(order);
}

/* COUNT tiles of TILE bytes from offset LO, in order from one thread (as h5out_tiles.c writes an image). */
static void run_case(const char *what, uint64_t lo, size_t tile, int count)
{
    char path[] = "/tmp/h5pack-writes-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    uint8_t *buf = malloc(tile);
    block_gather *g = block_gather_new(fd, lo, lo + (uint64_t)count * tile);
    CHECK(buf && g);
    n_writes = 0;
    uint64_t at = lo;
    for (int k = 0; k < count; k++, at += tile) {
        for (size_t i = 0; i < tile; i++)
            buf[i] = byte_at(at + i);
        size_t w = 0;
        CHECK_OK(block_gather_write(g, buf, tile, at, &w));
    }
    size_t before = n_writes, w = 0;
    CHECK_OK(block_gather_flush(g, &w));
    CHECK_MSG(n_writes == before, "%s: every tile came, yet the flush wrote %zu pieces", what, n_writes - before);
    check_writes(what, lo, at, n_writes);
    check_bytes(what, fd, lo, at, 0, 0);
    block_gather_free(g);
    free(buf), close(fd), unlink(path);
}

/* A write that fails: the call that completed the block reports it with the block's range (not its own
 * chunk's), errno ENOSPC. */
static void failure_case(void)
{
    char path[] = "/tmp/h5pack-writes-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    uint64_t lo = 1000, size = (3u << 19) + 13, lo_block, hi_block;
    block_gather *g = block_gather_new(fd, lo, lo + 4 * size);
    uint8_t *buf = calloc(1, size);
    CHECK(g && buf);
    fail_at = 5000; /* inside block 0 ([LO, 2 MiB)), which chunks 0 and 1 share */
    size_t w = 0;
    CHECK_OK(block_gather_write(g, buf, size, lo, &w)); /* chunk 0 ends inside block 0: it waits */
    CHECK_MSG(block_gather_failed(g, &lo_block, &hi_block) != 0, "a failure reported before any write failed");
    errno = 0;
    CHECK_MSG(block_gather_write(g, buf, size, lo + size, &w) == -1 && errno == ENOSPC,
              "the write that completes the failing block fails with ENOSPC (errno %d)", errno);
    CHECK_OK(block_gather_failed(g, &lo_block, &hi_block));
    CHECK_MSG(lo_block == lo && hi_block == BLOCK, "the failed range is block 0 from LO ([%llu, %llu))",
              (unsigned long long)lo_block, (unsigned long long)hi_block);
    fail_at = UINT64_MAX;
    block_gather_free(g);
    free(buf), close(fd), unlink(path);
}

int main(void)
{
    gather_case("chunks of 1.5 MiB + 13", 3 * 4096 + 7, (3u << 19) + 13, 9, SIZE_MAX);
    gather_case("chunks of 5 MiB + 7", 1000, (5u << 20) + 7, 5, SIZE_MAX);
    gather_case("chunks of 1000 bytes", 4096, 1000, 5000, SIZE_MAX);
    gather_case("chunks aligned, 2 MiB", 0, BLOCK, 4, SIZE_MAX);
    gather_case("a chunk that never comes", 777, (3u << 19) + 13, 9, 4);
    failure_case();
    run_case("tiles of 192 KiB + 5 in order", 12345, 196608 + 5, 40);
    run_case("tiles of 5 MiB + 3 in order (whole blocks straight from the tile)", 777, (5u << 20) + 3, 4);
    run_case("tiles of 2 MiB from a block boundary", 0, 2u << 20, 3);
    printf("converter writes: all checks passed\n");
    return 0;
}
