/* test_reader_kept.c - a closed reader's ring is kept for the next reader of the same sizes
 * (reader/backend/ring_memory.h, h5pack_trim in h5pack.h):
 *   - a reader given another file's kept ring delivers exactly what it delivers in fresh memory;
 *   - the ring stays allocated after close, h5pack_trim() frees it, H5PACK_NO_KEEP=1 frees it at close;
 *   - a reader of other (kept) sizes frees the kept ring before allocating its own (never both at once).
 * The memory checks read glibc's malloc statistics, which a sanitizer's allocator bypasses: under
 * ASan/TSan they say so and only the data checks run. */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "h5fixture.h"
#include "h5pack.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define MALLOC_STATS 0
#else
#define MALLOC_STATS 1
#endif

enum { N = 256, C = 3, SIDE = 48, BATCH = 128, PREFETCH = 4 };

/* The ring's float32 outputs alone, a lower bound of what the CPU backend keeps. */
static const size_t RING = (size_t)PREFETCH * BATCH * C * SIDE * SIDE * 4;
static const size_t SLACK = (size_t)2 << 20;

static char path_a[256], path_b[256];

/* Bytes malloc has handed out and not got back (heap and mmapped blocks, every arena). */
static size_t in_use(void)
{
    struct mallinfo2 mi = mallinfo2();
    return mi.uordblks + mi.hblkhd;
}

static h5pack_config config(size_t batch)
{
    h5pack_config c = H5PACK_CONFIG_DEFAULTS;
    c.device = H5PACK_DEVICE_CPU, c.dtype = H5PACK_DTYPE_FLOAT32, c.batch_size = batch, c.threads = 2;
    c.prefetch = PREFETCH, c.epochs = 1, c.seed = 7;
    return c;
}

/* FNV-1a over every delivered batch (indices and data) of one epoch of PATH; *PEAK: the most malloc had
 * handed out while the reader was open. */
static uint64_t epoch_digest(const char *path, size_t batch, size_t *peak)
{
    h5pack_config c = config(batch);
    h5pack_reader *r = NULL;
    int rc = h5pack_open(path, &c, &r);
    CHECK_MSG(rc == 0, "open %s: %s", path, h5pack_last_error(r));
    uint64_t h = 1469598103934665603ull;
    h5pack_batch b = H5PACK_BATCH_INIT;
    size_t most = in_use();
    while ((rc = h5pack_next(r, &b)) == H5PACK_OK) {
        const uint8_t *parts[2] = {(const uint8_t *)b.indices, b.data};
        size_t lens[2] = {b.count * sizeof *b.indices, b.bytes};
        for (int p = 0; p < 2; p++)
            for (size_t i = 0; i < lens[p]; i++)
                h = (h ^ parts[p][i]) * 1099511628211ull;
        most = in_use() > most ? in_use() : most;
        CHECK_OK(h5pack_release(r, &b));
    }
    CHECK_EQ_INT(rc, H5PACK_END);
    h5pack_close(r);
    if (peak)
        *peak = most;
    return h;
}

static void test_same_batches_in_a_kept_ring(void)
{
    h5pack_trim();
    uint64_t fresh = epoch_digest(path_b, BATCH, NULL);
    h5pack_trim();
    epoch_digest(path_a, BATCH, NULL); /* its ring, full of A's pixels, is kept */
    uint64_t reused = epoch_digest(path_b, BATCH, NULL);
    CHECK_MSG(reused == fresh, "file B read in file A's kept ring differs from B read in fresh memory");
    h5pack_trim();
}

static void test_memory(void)
{
    if (!MALLOC_STATS) {
        printf("skipped: the kept ring's memory checks (a sanitizer's allocator bypasses malloc's statistics)\n");
        return;
    }
    h5pack_trim();
    size_t base = in_use(), peak = 0;
    epoch_digest(path_a, BATCH, &peak);
    CHECK_MSG(peak >= base + RING, "a reader open: %zu bytes more than before, its ring alone is %zu", peak - base, RING);
    CHECK_MSG(in_use() >= base + RING, "closed: %zu bytes kept, the ring is %zu", in_use() - base, RING);
    size_t kept = in_use();
    epoch_digest(path_a, BATCH, &peak);
    CHECK_MSG(peak <= kept + SLACK, "a reader of the same sizes took %zu bytes more than the kept ring", peak - kept);
    h5pack_trim();
    CHECK_MSG(in_use() <= base + SLACK, "h5pack_trim left %zu bytes", in_use() - base);

    epoch_digest(path_a, BATCH, NULL); /* kept */
    size_t other = 0;
    epoch_digest(path_a, BATCH * 3 / 4, &other); /* a ring of 3/4 (still kept size): the kept one goes first */
    CHECK_MSG(other <= base + RING * 3 / 4 + SLACK, "a reader of other sizes held %zu bytes (its ring %zu, the kept %zu)",
              other - base, RING * 3 / 4, RING);
    h5pack_trim();

    setenv("H5PACK_NO_KEEP", "1", 1);
    epoch_digest(path_a, BATCH, NULL);
    CHECK_MSG(in_use() <= base + SLACK, "H5PACK_NO_KEEP=1: %zu bytes still held after close", in_use() - base);
    unsetenv("H5PACK_NO_KEEP");
}

int main(void)
{
    h5fix_local_name(path_a, sizeof path_a, "kept_a");
    h5fix_local_name(path_b, sizeof path_b, "kept_b");
    h5fix_file a = {.n = N, .c = C, .h = SIDE, .w = SIDE, .k = 8, .layout_attr = "NCHW", .pixel = h5fix_pixel_chw};
    h5fix_file b = a;
    b.pixel = h5fix_pixel_sparse;
    CHECK_OK(h5fix_write(path_a, &a));
    CHECK_OK(h5fix_write(path_b, &b));
    test_same_batches_in_a_kept_ring();
    test_memory();
    remove(path_a), remove(path_b);
    printf("reader kept ring: all checks passed\n");
    return 0;
}
