/* test_reader_belady.c - the threaded reader's chunk hits and misses equal an independent offline
 * Belady simulation (naive_belady.h) on small random cases (order, N, K, cache, batch, threads 1..4,
 * prefetch 1..4, epochs 1..3, ranks); bytes read and needed match the loads; the CHUNK order with a
 * cache of window + threads chunks reads every chunk once per epoch; a cache too small for the default
 * window is refused with the smallest size that works, and that size opens. */
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

/* The default window does not fit: open fails with EINVAL and names NEED bytes; NEED - 1 fails too. */
static void expect_refused(const char *path, h5pack_config *c, uint64_t need)
{
    char text[64];
    snprintf(text, sizeof text, "at least %llu (", (unsigned long long)need);
    size_t keep = c->cache_bytes;
    h5pack_reader *r = NULL;
    CHECK_EQ_INT(h5pack_open(path, c, &r), H5PACK_EINVAL);
    CHECK_STR_CONTAINS(h5pack_last_error(r), text);
    CHECK_STR_CONTAINS(h5pack_last_error(r), path);
    h5pack_close(r);
    c->cache_bytes = (size_t)need - 1;
    r = NULL;
    CHECK_EQ_INT(h5pack_open(path, c, &r), H5PACK_EINVAL);
    CHECK_STR_CONTAINS(h5pack_last_error(r), text);
    h5pack_close(r);
    c->cache_bytes = keep;
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
    uint64_t window = c.window ? c.window : h5pack_order_default_window(n_chunks, chunk_bytes);
    c.drop_last = rng_below(g, 4) == 0;
    c.echo = 1 + (uint32_t)rng_below(g, 2); /* echoes make no chunk accesses */
    order_params op = {c.order, sp.n, sp.k, window > n_chunks ? n_chunks : window, c.seed, c.rank, c.world,
                       c.drop_last, c.batch_size};
    if (h5pack_order_batches_per_epoch(&op) == 0) { /* drop_last leaves no batch: open refuses, see test_reader_life */
        remove(path);
        return;
    }
    uint64_t need = window + (uint64_t)c.threads < n_chunks ? window + (uint64_t)c.threads : n_chunks;
    if (c.order == H5PACK_ORDER_CHUNK && c.window == 0 && slots < need) {
        expect_refused(path, &c, need * chunk_bytes);
        c.cache_bytes = need * chunk_bytes, slots = need; /* the size the message gives opens */
    }
    h5pack_info info = H5PACK_INFO_INIT;
    h5pack_stats st = run_reader(path, &c, &info);
    expected e = simulate(path, &op, slots, c.epochs);
    CHECK_EQ_U64(info.window, op.window);
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
    c.window = 0; /* the default window: all 40 chunks of this small file, so the cache must hold them all */
    expect_refused(path, &c, 40 * 10 * 48);
    c.cache_bytes = 40 * 10 * 48;
    st = run_reader(path, &c, &info);
    CHECK_EQ_U64(info.window, 40);
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
