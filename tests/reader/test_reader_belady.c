/* test_reader_belady.c - the threaded reader's chunk hits and misses equal an independent offline
 * Belady simulation (naive_belady.h) on small random cases (order, N, K, cache, batch, threads 1..4,
 * prefetch 1..4, epochs 1..3, ranks); bytes read and needed match the loads; the CHUNK order reads every
 * chunk once per epoch with an explicit window the cache holds, and with the window derived from any cache
 * (down to one chunk), which the reader reports in h5pack_info.window. */
#include <stdlib.h>
#include <stdio.h>

#include "chunksrc.h"
#include "check.h"
#include "h5fixture.h"
#include "h5pack.h"
#include "naive_belady.h"
#include "rng.h"

typedef struct expected {
    uint64_t hits, misses, bytes_read, bytes_needed, bytes_decoded;
} expected;

static expected simulate(const char *path, const order_params *op, size_t slots, uint64_t epochs)
{
    char err[256];
    chunk_source *src = NULL;
    CHECK_OK(h5pack_chunksrc_open(path, "images", NULL, H5PACK_LAYOUT_AUTO, &src, err, sizeof err));
    naive_sim s;
    naive_belady(op, slots, epochs, epochs, &s);
    expected e = {s.hits, s.misses, 0, 0, 0};
    uint64_t nc = h5pack_order_n_chunks(op), *seen = calloc(nc, 8);
    for (uint64_t i = 0; i < s.n; i++) {
        uint64_t c = s.acc[i].chunk, stored = h5pack_chunksrc_stored_bytes(src, c);
        if (s.acc[i].load) {
            e.bytes_read += stored;
            e.bytes_decoded += h5pack_chunksrc_chunk_samples(src, c) * h5pack_chunksrc_geometry(src)->image_bytes;
        }
        if (seen[c] != s.acc[i].epoch + 1)
            e.bytes_needed += stored;
        seen[c] = s.acc[i].epoch + 1;
    }
    free(seen);
    naive_free(&s);
    h5pack_chunksrc_close(src);
    return e;
}

static h5pack_stats run_reader(const char *path, const h5pack_config *cfg, h5pack_info *info)
{
    h5pack_reader *r = NULL;
    int rc = h5pack_open(path, cfg, &r);
    CHECK_MSG(rc == 0, "%s", h5pack_last_error(r));
    CHECK_OK(h5pack_info_get(r, info));
    h5pack_batch b = H5PACK_BATCH_INIT;
    while ((rc = h5pack_next(r, &b)) == H5PACK_OK)
        CHECK_OK(h5pack_release(r, &b));
    CHECK_MSG(rc == H5PACK_END, "next: %d %s", rc, h5pack_last_error(r));
    h5pack_stats st = H5PACK_STATS_INIT;
    CHECK_OK(h5pack_stats_get(r, &st));
    h5pack_close(r);
    return st;
}

/* The window the reader derives when config.window is 0 (docs/reader.md): the default window of the file,
 * shrunk to the cache's slots minus the chunks one batch may start, ceil(batch / k) + 1; at least 1; the
 * default when the cache holds every chunk. Written here independently of resolve.c. */
static uint64_t derived_window(uint64_t n_chunks, uint64_t chunk_bytes, uint64_t k, uint64_t slots, uint64_t batch)
{
    uint64_t w = h5pack_order_default_window(n_chunks, chunk_bytes);
    if (slots >= n_chunks)
        return w;
    uint64_t started = (batch + k - 1) / k + 1;
    uint64_t fit = slots > started ? slots - started : 1;
    return fit < w ? fit : w;
}

static void random_case(rng_state *g, int t)
{
    h5fix_file sp = {.n = 1 + rng_below(g, 90), .c = 1, .h = 2, .w = 3, .k = 1 + rng_below(g, 9), .gzip = rng_below(g, 3) == 0 ? 3 : 0, .layout_attr = "NCHW", .pixel = h5fix_pixel_chw};
    if (sp.k > sp.n)
        sp.k = sp.n; /* HDF5: a chunk cannot exceed a fixed dimension */
    char path[256];
    h5fix_local_name(path, sizeof path, "belady");
    CHECK_OK(h5fix_write(path, &sp));
    h5pack_config c = H5PACK_CONFIG_DEFAULTS;
    c.device = H5PACK_DEVICE_CPU, c.dtype = H5PACK_DTYPE_UINT8;
    c.order = (h5pack_order)rng_below(g, 3);
    c.batch_size = 1 + rng_below(g, 20);
    c.threads = 1 + (int)rng_below(g, 4);
    c.prefetch = 1 + (int)rng_below(g, 4);
    c.epochs = 1 + rng_below(g, 3);
    c.seed = rng_next(g);
    c.world = 1 + (uint32_t)rng_below(g, 2);
    c.rank = (uint32_t)rng_below(g, c.world);
    c.window = rng_below(g, 2) ? 0 : 1 + rng_below(g, 5); /* 0: the default rule */
    uint64_t chunk_bytes = sp.k * 6, slots = 1 + rng_below(g, 8);
    c.cache_bytes = slots * chunk_bytes + rng_below(g, chunk_bytes); /* a partial chunk does not count */
    uint64_t n_chunks = (sp.n + sp.k - 1) / sp.k;
    uint64_t window = c.window ? c.window : derived_window(n_chunks, chunk_bytes, sp.k, slots, c.batch_size);
    c.drop_last = rng_below(g, 4) == 0;
    c.echo = 1 + (uint32_t)rng_below(g, 2); /* echoes make no chunk accesses */
    order_params op = {c.order, sp.n, sp.k, window > n_chunks ? n_chunks : window, c.seed, c.rank, c.world,
                       c.drop_last, c.batch_size};
    if (h5pack_order_batches_per_epoch(&op) == 0) { /* drop_last leaves no batch: open refuses, see test_reader_life */
        remove(path);
        return;
    }
    h5pack_info info = H5PACK_INFO_INIT;
    h5pack_stats st = run_reader(path, &c, &info);
    expected e = simulate(path, &op, slots, c.epochs);
    CHECK_EQ_U64(info.window, op.window);
    if (c.order == H5PACK_ORDER_CHUNK && c.window == 0) /* any cache: each chunk read once per epoch */
        CHECK_MSG(st.chunk_misses <= n_chunks * c.epochs, "case %d: %llu misses for %llu chunks x %llu epochs",
                  t, (unsigned long long)st.chunk_misses, (unsigned long long)n_chunks, (unsigned long long)c.epochs);
    CHECK_MSG(st.chunk_hits == e.hits && st.chunk_misses == e.misses,
              "case %d: reader %llu hits %llu misses, simulation %llu / %llu", t, (unsigned long long)st.chunk_hits,
              (unsigned long long)st.chunk_misses, (unsigned long long)e.hits, (unsigned long long)e.misses);
    CHECK_EQ_U64(st.bytes_read, e.bytes_read);
    CHECK_EQ_U64(st.bytes_needed, e.bytes_needed);
    if (!sp.gzip) /* uncompressed: every miss reads exactly the chunk's images */
        CHECK_EQ_U64(st.bytes_read, e.bytes_decoded);
    /* gzip: HDF5 stores edge chunks whole, so every load inflates a full chunk */
    CHECK_EQ_U64(st.bytes_inflated, sp.gzip ? st.chunk_misses * sp.k * 6 : 0);
    remove(path);
}

static void test_random_cases(void)
{
    rng_state g = {2024};
    for (int t = 0; t < 120; t++)
        random_case(&g, t);
}

/* CHUNK order, cache = window + threads chunks: each chunk once per epoch, amplification 1.00. */
static void test_chunk_order_reads_once(void)
{
    h5fix_file sp = {.n = 400, .c = 3, .h = 4, .w = 4, .k = 10, .layout_attr = "NCHW", .pixel = h5fix_pixel_chw};
    char path[256];
    h5fix_local_name(path, sizeof path, "once");
    CHECK_OK(h5fix_write(path, &sp));
    h5pack_config c = H5PACK_CONFIG_DEFAULTS;
    c.device = H5PACK_DEVICE_CPU, c.dtype = H5PACK_DTYPE_UINT8, c.batch_size = 32, c.threads = 2, c.epochs = 1;
    c.window = 5;
    c.cache_bytes = (c.window + 2) * 10 * 48;
    h5pack_info info = H5PACK_INFO_INIT;
    h5pack_stats st = run_reader(path, &c, &info);
    CHECK_EQ_U64(st.chunk_misses, 40);
    CHECK_EQ_U64(st.bytes_read, st.bytes_needed);
    CHECK_NEAR(st.read_amplification, 1.0, 1e-12);
    /* the other counters are consistent with these */
    CHECK_NEAR(st.hit_rate, (double)st.chunk_hits / (double)(st.chunk_hits + st.chunk_misses), 1e-12);
    CHECK_EQ_U64(st.cache_bytes_used, info.cache_chunks * info.chunk_bytes);
    CHECK_EQ_U64(info.cache_chunks, c.window + 2);
    CHECK(st.busy_read_s > 0 && st.busy_assemble_s > 0 && st.stall_s >= 0 && st.elapsed_s >= st.stall_s);
    CHECK_EQ_U64(st.bytes_inflated, 0);
    CHECK_EQ_U64(st.samples, 400);
    CHECK_EQ_U64(st.batches, 13);
    /* the window follows the cache: 7 slots - (ceil(32 / 10) + 1) = 2 chunks; one slot: 1 chunk; the whole
     * file: the default window (all 40 chunks). Each reads every chunk once. */
    c.window = 0;
    const uint64_t caches[][2] = {{7, 2}, {1, 1}, {6, 1}, {40, 40}, {39, 34}};
    for (size_t i = 0; i < sizeof caches / sizeof caches[0]; i++) {
        c.cache_bytes = caches[i][0] * 10 * 48;
        st = run_reader(path, &c, &info);
        CHECK_EQ_U64(info.window, caches[i][1]);
        CHECK_EQ_U64(st.chunk_misses, 40);
        CHECK_NEAR(st.read_amplification, 1.0, 1e-12);
    }
    c.cache_bytes = 1; /* less than a chunk: the cache still holds one */
    st = run_reader(path, &c, &info);
    CHECK_EQ_U64(info.cache_chunks, 1);
    CHECK_EQ_U64(st.chunk_misses, 40);
    c.cache_bytes = (5 + 2) * 10 * 48;
    c.order = H5PACK_ORDER_RANDOM; /* a random order with the same cache re-reads chunks */
    st = run_reader(path, &c, &info);
    CHECK(st.read_amplification > 2.0);
    remove(path);
}

int main(void)
{
    test_chunk_order_reads_once();
    test_random_cases();
    printf("reader belady: all checks passed\n");
    return 0;
}
