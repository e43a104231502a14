/* test_reader_ranks.c - ranks of one job on different machines: world 3 with threads 1/2/4 get disjoint,
 * equal and complete shares of every epoch, the global order padded by repeating samples on the last
 * ranks (docs/reader.md); with drop_last, equal disjoint slices of the unpadded order. Once through h5pack_open
 * on a real file whose 128 chunks of 64 KiB fit each rank's cache (8M/64M/512M: the whole file, so the
 * default window), once on an ImageNet-sized geometry through the reader's own setup (no file) with one
 * cache smaller than the default window (the window then follows the cache, the same on every rank).
 * A rank that sets another cache gets another window and fingerprint: a job can tell before it starts. */
#include <string.h>
#include <stdlib.h>
#include <stdio.h>

#include "check.h"
#include "h5fixture.h"
#include "h5pack.h"
#include "order.h"
#include "resolve.h"

#define WORLD 3

static const int rank_threads[WORLD] = {1, 2, 4};
static const size_t rank_cache[WORLD] = {(size_t)8 << 20, (size_t)64 << 20, (size_t)512 << 20};

/* SHARE[r][0..n) of every rank for one epoch: equal counts, no sample on two ranks; without drop_last
 * their concatenation is a permutation of 0..N-1 followed by its own first samples (the padding). */
static void check_shares(uint64_t *const share[WORLD], const uint64_t count[WORLD], uint64_t n_samples,
                         int drop_last, uint64_t batch, const char *what)
{
    for (int r = 1; r < WORLD; r++)
        CHECK_MSG(count[r] == count[0], "%s: rank %d has %llu samples, rank 0 %llu", what, r,
                  (unsigned long long)count[r], (unsigned long long)count[0]);
    uint64_t per_rank = drop_last ? n_samples / WORLD : (n_samples + WORLD - 1) / WORLD;
    uint64_t expect = drop_last ? per_rank / batch * batch : per_rank;
    CHECK_EQ_U64(count[0], expect);
    unsigned char *seen = calloc(n_samples, 1);
    uint64_t total = 0;
    for (int r = 0; r < WORLD; r++)
        for (uint64_t i = 0; i < count[r]; i++, total++) {
            uint64_t s = share[r][i];
            CHECK(s < n_samples);
            if (!drop_last && total >= n_samples) { /* the padding (the last ranks' tail): samples again */
                CHECK_MSG(seen[s], "%s: padding entry %llu is no repeat", what, (unsigned long long)(total - n_samples));
                continue;
            }
            CHECK_MSG(!seen[s], "%s: sample %llu delivered to two ranks", what, (unsigned long long)s);
            seen[s] = 1;
        }
    if (!drop_last)
        for (uint64_t s = 0; s < n_samples; s++)
            CHECK_MSG(seen[s], "%s: sample %llu delivered to no rank", what, (unsigned long long)s);
    free(seen);
}

/* ---- through h5pack_open ------------------------------------------------------------------------- */

typedef struct rank_run {
    uint64_t *epoch_samples[2];
    uint64_t count[2];
    size_t window;
} rank_run;

static void run_rank(const char *path, int rank, int drop_last, rank_run *out)
{
    h5pack_config c = H5PACK_CONFIG_DEFAULTS;
    c.device = H5PACK_DEVICE_CPU, c.dtype = H5PACK_DTYPE_UINT8, c.batch_size = 32, c.epochs = 2, c.seed = 77;
    c.rank = (uint32_t)rank, c.world = WORLD, c.drop_last = drop_last;
    c.threads = rank_threads[rank], c.cache_bytes = rank_cache[rank];
    h5pack_reader *r = NULL;
    int rc = h5pack_open(path, &c, &r);
    CHECK_MSG(rc == H5PACK_OK, "rank %d: %s", rank, h5pack_last_error(r));
    h5pack_info info = H5PACK_INFO_INIT;
    CHECK_OK(h5pack_info_get(r, &info));
    CHECK_EQ_INT(info.threads, rank_threads[rank]);
    out->window = info.window;
    for (int e = 0; e < 2; e++)
        out->epoch_samples[e] = malloc(info.samples_per_epoch * sizeof(uint64_t)), out->count[e] = 0;
    h5pack_batch b = H5PACK_BATCH_INIT;
    while ((rc = h5pack_next(r, &b)) == H5PACK_OK) {
        CHECK(b.epoch < 2);
        memcpy(out->epoch_samples[b.epoch] + out->count[b.epoch], b.indices, b.count * sizeof(uint64_t));
        out->count[b.epoch] += b.count;
        CHECK_OK(h5pack_release(r, &b));
    }
    CHECK_MSG(rc == H5PACK_END, "rank %d: %s", rank, h5pack_last_error(r));
    h5pack_close(r);
}

static void test_open_ranks(void)
{
    /* 1x64x64 images, chunks of 16 = 64 KiB, 128 chunks (the last one short): 8 MiB, the smallest cache */
    h5fix_file sp = {.n = 2042, .c = 1, .h = 64, .w = 64, .k = 16, .layout_attr = "NCHW", .pixel = h5fix_pixel_chw};
    char path[256];
    h5fix_local_name(path, sizeof path, "ranks");
    CHECK_OK(h5fix_write(path, &sp));
    for (int drop_last = 0; drop_last <= 1; drop_last++) {
        rank_run runs[WORLD];
        for (int r = 0; r < WORLD; r++)
            run_rank(path, r, drop_last, &runs[r]);
        for (int e = 0; e < 2; e++) {
            uint64_t *share[WORLD], count[WORLD];
            for (int r = 0; r < WORLD; r++)
                share[r] = runs[r].epoch_samples[e], count[r] = runs[r].count[e];
            char what[64];
            snprintf(what, sizeof what, "h5pack_open, drop_last %d, epoch %d", drop_last, e);
            check_shares(share, count, sp.n, drop_last, 32, what);
        }
        for (int r = 0; r < WORLD; r++) {
            CHECK_EQ_U64(runs[r].window, h5pack_order_default_window(128, 65536));
            free(runs[r].epoch_samples[0]), free(runs[r].epoch_samples[1]);
        }
    }
    /* a rank with a 4M cache (64 chunks) opens: its window is 64 - (32 / 16 + 1) = 61, and its fingerprint
     * differs from the other ranks' (the launcher or the Python check refuses such a job) */
    h5pack_config c = H5PACK_CONFIG_DEFAULTS;
    c.device = H5PACK_DEVICE_CPU, c.threads = 2, c.world = WORLD, c.batch_size = 32, c.seed = 77;
    h5pack_info small = H5PACK_INFO_INIT, full = H5PACK_INFO_INIT;
    for (int k = 0; k < 2; k++) {
        c.cache_bytes = k ? rank_cache[0] : (size_t)4 << 20;
        h5pack_reader *r = NULL;
        CHECK_MSG(h5pack_open(path, &c, &r) == H5PACK_OK, "%s", h5pack_last_error(r));
        CHECK_OK(h5pack_info_get(r, k ? &full : &small));
        h5pack_close(r);
    }
    CHECK_EQ_U64(small.window, 61);
    CHECK_EQ_U64(full.window, 128);
    CHECK(small.order_fingerprint != full.order_fingerprint);
    remove(path);
}

/* ---- the reader's setup on a large geometry ------------------------------------------------------ */

static void test_setup_ranks(h5pack_order order, int drop_last)
{
    /* ImageNet-like: 224x224 RGB in chunks of 8 (1.15 MiB), 100003 images */
    source_geometry g;
    memset(&g, 0, sizeof g);
    g.n_samples = 100003, g.channels = 3, g.height = 224, g.width = 224, g.image_bytes = 150528;
    g.samples_per_chunk = 8, g.n_chunks = (g.n_samples + 7) / 8, g.chunk_bytes = 8 * g.image_bytes;
    CHECK_EQ_U64(h5pack_order_default_window(g.n_chunks, g.chunk_bytes), (256u << 20) / g.chunk_bytes); /* 222 */
    /* a 64M cache: 55 chunks of 1.15 MiB, minus the 256 / 8 + 1 = 33 a batch may start: a window of 22 */
    const uint64_t window = 22;
    uint64_t *share[WORLD], count[WORLD];
    for (int r = 0; r < WORLD; r++) {
        h5pack_config c = H5PACK_CONFIG_DEFAULTS;
        c.order = order, c.batch_size = 256, c.seed = 3, c.rank = (uint32_t)r, c.world = WORLD;
        c.drop_last = drop_last, c.threads = rank_threads[r], c.cache_bytes = (size_t)64 << 20;
        reader_setup s;
        char err[512];
        CHECK_OK(h5pack_reader_resolve_setup(&c, &g, &s, err, sizeof err));
        CHECK_EQ_U64(s.op.window, window); /* threads never enter */
        count[r] = h5pack_order_samples_per_epoch(&s.op);
        share[r] = malloc(count[r] * sizeof(uint64_t));
        CHECK_OK(h5pack_order_epoch(&s.op, 1, share[r]));
    }
    char what[64];
    snprintf(what, sizeof what, "setup, order %d, drop_last %d", (int)order, drop_last);
    check_shares(share, count, g.n_samples, drop_last, 256, what);
    for (int r = 0; r < WORLD; r++)
        free(share[r]);
}

int main(void)
{
    test_open_ranks();
    for (int o = H5PACK_ORDER_SEQUENTIAL; o <= H5PACK_ORDER_CHUNK; o++)
        for (int d = 0; d <= 1; d++)
            test_setup_ranks((h5pack_order)o, d);
    printf("reader ranks: all checks passed\n");
    return 0;
}
