/* test_sim_handle.c - the simulation handle of h5pack_sim.h: one open replayed many times gives what
 * h5pack_simulate() and the real reader give, the same answer every time; the params' defaults macro;
 * what-if chunks: K = the file's own chunk is the file's own row exactly, sequential replays have the
 * miss counts computed here independently, larger K moves hits and bytes the expected way, the chunk
 * order's window follows the what-if chunks, and Belady's what-if rows equal the reader on the same
 * images converted with K-image chunks; the struct_size convention and errors. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "reader_drain.h"
#include "h5pack_sim.h"
#include "h5fixture.h"

static char dir[256];
#define SIM_FILE .labels = 1, .n_classes = 5, .pixel = h5fix_pixel_sparse, .attrs = {{.name = "h5pack_format_version", .value = 1}}
static const h5fix_file implicit = {.n = 203, .c = 3, .h = 8, .w = 10, .k = 6, SIM_FILE};
static const h5fix_file gzip = {.n = 203, .c = 3, .h = 8, .w = 10, .k = 6, .gzip = 6, SIM_FILE};
static const h5fix_file contiguous = {.n = 203, .c = 3, .h = 64, .w = 64, .k = 1, .contiguous = 1, SIM_FILE};
#define IMG ((uint64_t)3 * 8 * 10)

static h5pack_config base_config(h5pack_order order, size_t cache, size_t batch, uint64_t epochs)
{
    h5pack_config cfg = H5PACK_CONFIG_DEFAULTS;
    cfg.device = H5PACK_DEVICE_CPU, cfg.dtype = H5PACK_DTYPE_UINT8, cfg.threads = 2, cfg.seed = 11;
    cfg.order = order, cfg.cache_bytes = cache, cfg.batch_size = batch, cfg.epochs = epochs;
    return cfg;
}

static h5pack_sim *open_sim(const char *path, const h5pack_config *cfg)
{
    h5pack_sim *sim = NULL;
    int rc = h5pack_sim_open(path, cfg, &sim);
    CHECK_MSG(rc == 0, "h5pack_sim_open(%s): %s", path, h5pack_sim_last_error(sim));
    return sim;
}

static h5pack_sim_result run(h5pack_sim *sim, h5pack_policy policy, size_t cache, int order, uint64_t k)
{
    h5pack_sim_params p = H5PACK_SIM_PARAMS_DEFAULTS;
    p.policy = policy, p.cache_bytes = cache, p.order = order, p.chunk_samples = k;
    h5pack_sim_result r = H5PACK_SIM_RESULT_INIT;
    int rc = h5pack_sim_run(sim, &p, &r);
    CHECK_MSG(rc == 0, "h5pack_sim_run: %s", h5pack_sim_last_error(sim));
    CHECK_EQ_U64(r.accesses, r.hits + r.misses);
    return r;
}

static void same_counts(const h5pack_sim_result *a, const h5pack_sim_result *b, const char *what)
{
    CHECK_MSG(a->accesses == b->accesses && a->hits == b->hits && a->misses == b->misses &&
                  a->bytes_read == b->bytes_read && a->bytes_needed == b->bytes_needed &&
                  a->hit_rate == b->hit_rate && a->read_amplification == b->read_amplification,
              "%s: %llu/%llu/%llu/%llu vs %llu/%llu/%llu/%llu (uses/hits/misses/bytes)", what,
              (unsigned long long)a->accesses, (unsigned long long)a->hits, (unsigned long long)a->misses,
              (unsigned long long)a->bytes_read, (unsigned long long)b->accesses, (unsigned long long)b->hits,
              (unsigned long long)b->misses, (unsigned long long)b->bytes_read);
}

static void same_result(const h5pack_sim_result *a, const h5pack_sim_result *b, const char *what)
{
    same_counts(a, b, what);
    CHECK_MSG(a->order == b->order && a->chunk_samples == b->chunk_samples && a->chunk_bytes == b->chunk_bytes &&
                  a->n_chunks == b->n_chunks && a->cache_chunks == b->cache_chunks && a->window == b->window &&
                  a->hypothetical == b->hypothetical && a->stored_estimated == b->stored_estimated,
              "%s: replayed geometry differs", what);
}

static void check_defaults(void)
{
    h5pack_sim_params p = H5PACK_SIM_PARAMS_DEFAULTS;
    CHECK_EQ_U64(p.struct_size, sizeof p);
    CHECK_EQ_INT(p.policy, H5PACK_POLICY_BELADY);
    CHECK_EQ_U64(p.cache_bytes, (uint64_t)1 << 30);
    CHECK_EQ_U64(p.hdf5_nslots, 521);
    CHECK(p.hdf5_w0 == 0.75);
    CHECK_EQ_INT(p.order, H5PACK_SIM_ORDER_CONFIG);
    CHECK_EQ_U64(p.chunk_samples, 0);
    h5pack_sim_result r = H5PACK_SIM_RESULT_INIT;
    CHECK_EQ_U64(r.struct_size, sizeof r);
}

/* One handle, many runs: each equals h5pack_simulate() with the equivalent config, Belady equals the
 * reader, and running everything a second time (after other runs) gives identical results. */
static void check_replays(const char *path)
{
    const size_t chunk = 6 * IMG, caches[] = {chunk / 2, chunk * 3, chunk * 9 + 7, chunk * 40};
    h5pack_config cfg = base_config(H5PACK_ORDER_SEQUENTIAL, chunk, 16, 2);
    cfg.window = 3; /* the default window (the whole small file) needs more than these caches hold */
    h5pack_sim *sim = open_sim(path, &cfg);
    h5pack_sim_result first[3][4][3];
    for (int pass = 0; pass < 2; pass++)
        for (int o = 0; o < 3; o++)
            for (int c = 0; c < 4; c++)
                for (int p = 0; p < 3; p++) {
                    h5pack_sim_result r = run(sim, (h5pack_policy)p, caches[c], o, 0);
                    if (pass == 1) {
                        same_result(&r, &first[o][c][p], "second pass of the same handle");
                        continue;
                    }
                    first[o][c][p] = r;
                    h5pack_config one = cfg;
                    one.order = (h5pack_order)o, one.cache_bytes = caches[c];
                    h5pack_sim_params sp = H5PACK_SIM_PARAMS_DEFAULTS;
                    sp.policy = (h5pack_policy)p, sp.cache_bytes = caches[c];
                    h5pack_sim_result s = H5PACK_SIM_RESULT_INIT;
                    char err[512];
                    CHECK_MSG(h5pack_simulate(path, &one, &sp, &s, err, sizeof err) == 0, "%s", err);
                    same_result(&r, &s, "handle vs h5pack_simulate");
                    CHECK_EQ_INT(r.order, o);
                    CHECK_EQ_INT(r.hypothetical, 0);
                    if (p != H5PACK_POLICY_BELADY)
                        continue;
                    h5pack_stats st = test_drain_reader(path, &one);
                    CHECK_MSG(st.chunk_hits == r.hits && st.chunk_misses == r.misses && st.bytes_read == r.bytes_read,
                              "%s order %d cache %zu: reader %llu/%llu/%llu, handle %llu/%llu/%llu", path, o,
                              caches[c], (unsigned long long)st.chunk_hits, (unsigned long long)st.chunk_misses,
                              (unsigned long long)st.bytes_read, (unsigned long long)r.hits,
                              (unsigned long long)r.misses, (unsigned long long)r.bytes_read);
                }
    h5pack_file_desc a = H5PACK_FILE_DESC_INIT, b = H5PACK_FILE_DESC_INIT;
    char err[512];
    CHECK_OK(h5pack_sim_describe(sim, &a));
    CHECK_OK(h5pack_describe(path, &cfg, &b, err, sizeof err));
    CHECK(memcmp(&a, &b, sizeof a) == 0); /* the handle's description is h5pack_describe's */
    h5pack_sim_close(sim);
}

/* K = the file's own chunk: the file's own row, for every order, policy and cache. */
static void check_own_k(const char *path, int chunked)
{
    h5pack_config cfg = base_config(H5PACK_ORDER_CHUNK, 1 << 20, 10, 2);
    h5pack_sim *sim = open_sim(path, &cfg);
    h5pack_file_desc d = H5PACK_FILE_DESC_INIT;
    CHECK_OK(h5pack_sim_describe(sim, &d));
    for (int o = 0; o < 3; o++)
        for (int p = 0; p < 3; p++)
            for (size_t cache = d.chunk_bytes / 2; cache < 64 * d.chunk_bytes; cache *= 3) {
                h5pack_sim_result own = run(sim, (h5pack_policy)p, cache, o, 0);
                h5pack_sim_result k = run(sim, (h5pack_policy)p, cache, o, d.samples_per_chunk);
                CHECK_EQ_INT(k.hypothetical, !chunked);
                CHECK_EQ_U64(k.chunk_samples, d.samples_per_chunk);
                /* a contiguous file has no chunks of its own: only HDF5's sieve differs from its chunk cache */
                if (chunked || p != H5PACK_POLICY_HDF5)
                    same_counts(&k, &own, "K = the file's own chunk");
            }
    h5pack_sim_close(sim);
}

/* Sequential order, one epoch, a cache of two what-if chunks: every chunk is loaded once, and a batch's
 * uses are the chunks its samples span: counted here from the numbers alone. */
static void check_sequential_exact(const char *path)
{
    const uint64_t n = implicit.n, batch = 16, ks[] = {1, 5, 6, 13, 64, 203, 500};
    h5pack_config cfg = base_config(H5PACK_ORDER_SEQUENTIAL, 1 << 20, batch, 1);
    h5pack_sim *sim = open_sim(path, &cfg);
    uint64_t last_misses = UINT64_MAX;
    for (size_t i = 0; i < sizeof ks / sizeof *ks; i++) {
        uint64_t k = ks[i] < n ? ks[i] : n, chunks = (n + k - 1) / k, uses = 0;
        for (uint64_t first = 0; first < n; first += batch) {
            uint64_t last = (first + batch < n ? first + batch : n) - 1;
            uses += last / k - first / k + 1;
        }
        for (int p = 0; p < 3; p++) {
            h5pack_sim_result r = run(sim, (h5pack_policy)p, (size_t)(2 * k * IMG), H5PACK_SIM_ORDER_CONFIG, ks[i]);
            CHECK_MSG(r.misses == chunks && r.accesses == uses && r.bytes_read == n * IMG,
                      "K %llu policy %d: %llu uses %llu misses %llu bytes, expected %llu / %llu / %llu",
                      (unsigned long long)ks[i], p, (unsigned long long)r.accesses, (unsigned long long)r.misses,
                      (unsigned long long)r.bytes_read, (unsigned long long)uses, (unsigned long long)chunks,
                      (unsigned long long)(n * IMG));
            CHECK_EQ_U64(r.chunk_samples, k);
            CHECK_EQ_U64(r.n_chunks, chunks);
            CHECK_EQ_U64(r.chunk_bytes, k * IMG);
            CHECK_EQ_U64(r.cache_chunks, chunks < 2 ? chunks : 2);
            CHECK_EQ_INT(r.hypothetical, k != implicit.k);
            CHECK_EQ_INT(r.stored_estimated, 0);
            CHECK_NEAR(r.read_amplification, 1.0, 1e-12);
        }
        h5pack_sim_result b = run(sim, H5PACK_POLICY_BELADY, (size_t)(2 * k * IMG), H5PACK_SIM_ORDER_CONFIG, ks[i]);
        CHECK(b.misses <= last_misses); /* larger chunks, fewer loads */
        last_misses = b.misses;
    }
    h5pack_sim_close(sim);
    /* two epochs with room for every chunk: the second epoch is all hits */
    cfg.epochs = 2;
    sim = open_sim(path, &cfg);
    h5pack_sim_result r = run(sim, H5PACK_POLICY_BELADY, 1 << 20, H5PACK_SIM_ORDER_CONFIG, 13);
    CHECK_EQ_U64(r.misses, (n + 12) / 13);
    CHECK_EQ_U64(r.bytes_needed, 2 * n * IMG);
    h5pack_sim_close(sim);
}

/* A compressed file's what-if chunks: stored sizes scaled by its compression ratio (from HDF5 here). */
static void check_estimated(const char *path)
{
    const uint64_t n = gzip.n;
    double ratio = (double)h5fix_storage_bytes(path) / (double)(n * IMG);
    CHECK(ratio < 0.5);
    h5pack_config cfg = base_config(H5PACK_ORDER_SEQUENTIAL, 1 << 20, 16, 1);
    h5pack_sim *sim = open_sim(path, &cfg);
    for (uint64_t k = 4; k <= 64; k *= 4) {
        h5pack_sim_result r = run(sim, H5PACK_POLICY_BELADY, (size_t)(2 * k * IMG), H5PACK_SIM_ORDER_CONFIG, k);
        CHECK_EQ_INT(r.stored_estimated, 1);
        CHECK_EQ_U64(r.misses, (n + k - 1) / k);
        CHECK_NEAR((double)r.bytes_read, (double)(n * IMG) * ratio, (double)r.n_chunks);
    }
    h5pack_sim_close(sim);
}

/* Random order, batch 1, a cache of 16 images: the larger the chunks, the more bytes each sample costs;
 * the chunk order's window is counted in what-if chunks (256 MiB of them, at least 16, at most all,
 * shrunk to what the cache holds beside the chunks a batch starts). */
static void check_direction(const char *path)
{
    h5pack_config cfg = base_config(H5PACK_ORDER_RANDOM, 1 << 20, 1, 1);
    h5pack_sim *sim = open_sim(path, &cfg);
    uint64_t last_bytes = 0;
    double last_amp = 0;
    for (uint64_t k = 1; k <= 16; k *= 2) {
        h5pack_sim_result r = run(sim, H5PACK_POLICY_BELADY, (size_t)(16 * IMG), H5PACK_SIM_ORDER_CONFIG, k);
        CHECK_MSG(r.bytes_read > last_bytes && r.read_amplification > last_amp,
                  "random order, K %llu: %llu bytes (amplification %.3f) after %llu (%.3f)", (unsigned long long)k,
                  (unsigned long long)r.bytes_read, r.read_amplification, (unsigned long long)last_bytes, last_amp);
        last_bytes = r.bytes_read, last_amp = r.read_amplification;
        h5pack_sim_result c = run(sim, H5PACK_POLICY_BELADY, (size_t)(40 * IMG), H5PACK_ORDER_CHUNK, k);
        uint64_t chunks = (implicit.n + k - 1) / k, window = ((uint64_t)256 << 20) / (k * IMG);
        window = window < 16 ? 16 : window;
        window = window < chunks ? window : chunks;
        /* shrunk to the cache's 40 / k chunks minus the ceil(1 / k) + 1 = 2 a batch of 1 may start, unless
         * the cache holds every chunk */
        uint64_t slots = 40 / k, fit = slots > 2 ? slots - 2 : 1;
        CHECK_EQ_U64(c.window, slots >= chunks || window < fit ? window : fit);
        CHECK_EQ_INT(c.order, H5PACK_ORDER_CHUNK);
    }
    h5pack_sim_close(sim);
}

/* The what-if rows of an uncompressed file are what the reader measures on the same images converted
 * with chunks of K: the same file made again with K-image chunks, read for real. */
static void check_against_rechunked(const char *path)
{
    const uint64_t ks[] = {1, 13, 40};
    for (size_t i = 0; i < sizeof ks / sizeof *ks; i++) {
        char other[300];
        snprintf(other, sizeof other, "%s/k%llu.h5", dir, (unsigned long long)ks[i]);
        h5fix_file t = implicit;
        t.k = ks[i];
        CHECK_OK(h5fix_write(other, &t));
        for (int o = 0; o < 3; o++)
            for (size_t cache = IMG * 7; cache < IMG * 400; cache *= 4) {
                h5pack_config cfg = base_config((h5pack_order)o, cache, 16, 2);
                cfg.window = 2; /* these caches hold less than the default window (the whole small file) */
                h5pack_sim *sim = open_sim(path, &cfg);
                h5pack_sim_result r = run(sim, H5PACK_POLICY_BELADY, cache, H5PACK_SIM_ORDER_CONFIG, ks[i]);
                h5pack_sim_close(sim);
                h5pack_stats st = test_drain_reader(other, &cfg);
                CHECK_MSG(st.chunk_hits == r.hits && st.chunk_misses == r.misses && st.bytes_read == r.bytes_read,
                          "K %llu order %d cache %zu: reader on the K file %llu/%llu/%llu, what-if %llu/%llu/%llu",
                          (unsigned long long)ks[i], o, cache, (unsigned long long)st.chunk_hits,
                          (unsigned long long)st.chunk_misses, (unsigned long long)st.bytes_read,
                          (unsigned long long)r.hits, (unsigned long long)r.misses, (unsigned long long)r.bytes_read);
            }
        unlink(other);
    }
}

static void check_abi_and_errors(const char *path)
{
    h5pack_config cfg = base_config(H5PACK_ORDER_CHUNK, 1 << 20, 8, 1);
    h5pack_sim *sim = open_sim(path, &cfg);
    h5pack_sim_params p = H5PACK_SIM_PARAMS_DEFAULTS;
    h5pack_sim_result r = H5PACK_SIM_RESULT_INIT;
    struct {
        h5pack_sim_params p;
        uint64_t tail[2];
    } newer = {.p = H5PACK_SIM_PARAMS_DEFAULTS, .tail = {0, 0}};
    newer.p.struct_size = sizeof newer;
    CHECK_OK(h5pack_sim_run(sim, &newer.p, &r)); /* unknown fields left zero: fine */
    newer.tail[1] = 1;
    CHECK_EQ_INT(h5pack_sim_run(sim, &newer.p, &r), H5PACK_EINVAL);
    CHECK_STR_CONTAINS(h5pack_sim_last_error(sim), "newer");
    h5pack_sim_params zero;
    memset(&zero, 0, sizeof zero);
    CHECK_EQ_INT(h5pack_sim_run(sim, &zero, &r), H5PACK_EINVAL);
    CHECK_STR_CONTAINS(h5pack_sim_last_error(sim), "struct_size");
    struct {
        h5pack_sim_result r;
        unsigned char tail[24];
    } big;
    memset(&big, 0x5a, sizeof big);
    big.r.struct_size = sizeof big;
    CHECK_OK(h5pack_sim_run(sim, &p, &big.r));
    CHECK_EQ_U64(big.r.struct_size, sizeof big);
    for (size_t i = 0; i < sizeof big.tail; i++)
        CHECK_EQ_INT(big.tail[i], 0);
    h5pack_sim_result small = H5PACK_SIM_RESULT_INIT;
    small.struct_size = 16;
    CHECK_EQ_INT(h5pack_sim_run(sim, &p, &small), H5PACK_EINVAL);
    p.policy = (h5pack_policy)9;
    CHECK_EQ_INT(h5pack_sim_run(sim, &p, &r), H5PACK_EINVAL);
    CHECK_STR_CONTAINS(h5pack_sim_last_error(sim), "policy");
    p = (h5pack_sim_params)H5PACK_SIM_PARAMS_DEFAULTS;
    p.order = 7;
    CHECK_EQ_INT(h5pack_sim_run(sim, &p, &r), H5PACK_EINVAL);
    p = (h5pack_sim_params)H5PACK_SIM_PARAMS_DEFAULTS;
    p.policy = H5PACK_POLICY_HDF5, p.hdf5_w0 = -0.1;
    CHECK_EQ_INT(h5pack_sim_run(sim, &p, &r), H5PACK_EINVAL);
    p = (h5pack_sim_params)H5PACK_SIM_PARAMS_DEFAULTS; /* SIZE_MAX slots: refused, not an allocation attempt */
    p.policy = H5PACK_POLICY_HDF5, p.hdf5_nslots = SIZE_MAX;
    CHECK_EQ_INT(h5pack_sim_run(sim, &p, &r), H5PACK_EINVAL);
    CHECK_STR_CONTAINS(h5pack_sim_last_error(sim), "hdf5_nslots must be at most 16777216");
    p.hdf5_nslots = H5PACK_SIM_MAX_NSLOTS;
    CHECK_OK(h5pack_sim_run(sim, &p, &r));
    CHECK_EQ_INT(h5pack_sim_run(sim, NULL, &r), H5PACK_EINVAL);
    CHECK_EQ_INT(h5pack_sim_run(sim, &p, NULL), H5PACK_EINVAL);
    h5pack_sim_close(sim);

    char missing[300];
    snprintf(missing, sizeof missing, "%s/missing.h5", dir);
    sim = NULL;
    CHECK(h5pack_sim_open(missing, &cfg, &sim) == H5PACK_ENOTFOUND);
    CHECK(sim != NULL);
    CHECK_STR_CONTAINS(h5pack_sim_last_error(sim), "missing.h5");
    CHECK_STR_CONTAINS(h5pack_sim_last_error(NULL), "missing.h5");
    CHECK_EQ_INT(h5pack_sim_run(sim, &p, &r), H5PACK_ESTATE);
    h5pack_sim_close(sim);
    cfg.world = 0;
    CHECK_EQ_INT(h5pack_sim_open(path, &cfg, &sim), H5PACK_EINVAL);
    CHECK(sim == NULL);
    CHECK_STR_CONTAINS(h5pack_sim_last_error(NULL), "world");
    CHECK_EQ_INT(h5pack_sim_open(path, NULL, NULL), H5PACK_EINVAL);
    h5pack_sim_close(NULL);
}

int main(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/h5pack_sim_handle_XXXXXX", tmp && *tmp ? tmp : "/tmp");
    CHECK(mkdtemp(dir) != NULL);
    char p_implicit[300], p_gzip[300], p_contiguous[300];
    snprintf(p_implicit, sizeof p_implicit, "%s/implicit.h5", dir);
    snprintf(p_gzip, sizeof p_gzip, "%s/gzip.h5", dir);
    snprintf(p_contiguous, sizeof p_contiguous, "%s/contiguous.h5", dir);
    CHECK_OK(h5fix_write(p_implicit, &implicit));
    CHECK_OK(h5fix_write(p_gzip, &gzip));
    CHECK_OK(h5fix_write(p_contiguous, &contiguous));
    check_defaults();
    check_replays(p_implicit);
    check_replays(p_gzip);
    check_own_k(p_implicit, 1);
    check_own_k(p_gzip, 1);
    check_own_k(p_contiguous, 0);
    check_sequential_exact(p_implicit);
    check_estimated(p_gzip);
    check_direction(p_implicit);
    check_against_rechunked(p_implicit);
    check_abi_and_errors(p_implicit);
    unlink(p_implicit), unlink(p_gzip), unlink(p_contiguous);
    rmdir(dir);
    printf("simulation handle: replays, what-if chunks, struct_size and errors checked\n");
    return 0;
}
