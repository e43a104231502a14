/* test_sim_vs_reader.c - h5pack_simulate(BELADY) predicts exactly what the real reader does: the same
 * chunk hits, misses and bytes read, through the public API only, for every order, several cache sizes
 * and batch sizes, explicit and derived windows, ranks, drop_last, several epochs, echo, and
 * uncompressed (implicit index), gzip and contiguous files. Also: LRU and HDF5 never beat Belady's
 * misses, and bad inputs give errors with the file name. */
#include <hdf5.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "h5fixture.h"
#include "reader_drain.h"
#include "h5pack_sim.h"

enum { N = 203, C = 3, H = 8, W = 10, K = 6 }; /* 34 chunks, the last one short */
#define IMG ((hsize_t)C * H * W)

static char dir[256];

/* An h5pack-like file: images (N,C,H,W) uint8 and labels; KIND 0 = chunked uncompressed with early
 * allocation and the latest format (implicit index), 1 = gzip chunks, 2 = contiguous. */
static void make_file(const char *path, int kind)
{
    const h5fix_file f = {.n = N, .c = C, .h = H, .w = W, .k = K, .gzip = kind == 1 ? 6 : 0, .contiguous = kind == 2,
                          .labels = 1, .n_classes = 5, .pixel = h5fix_pixel_sparse};
    CHECK_OK(h5fix_write(path, &f));
}

static h5pack_sim_result simulate(const char *path, const h5pack_config *cfg, h5pack_policy policy, size_t cache)
{
    h5pack_sim_params sp = H5PACK_SIM_PARAMS_DEFAULTS;
    sp.policy = policy, sp.cache_bytes = cache;
    h5pack_sim_result res = H5PACK_SIM_RESULT_INIT;
    char err[512];
    int rc = h5pack_simulate(path, cfg, &sp, &res, err, sizeof err);
    CHECK_MSG(rc == 0, "h5pack_simulate(%s): %s", path, err);
    return res;
}

static int cases;

static void compare(const char *path, h5pack_config cfg)
{
    h5pack_stats st = test_drain_reader(path, &cfg);
    h5pack_sim_result b = simulate(path, &cfg, H5PACK_POLICY_BELADY, cfg.cache_bytes);
    CHECK_MSG(st.chunk_hits == b.hits && st.chunk_misses == b.misses && st.bytes_read == b.bytes_read,
              "%s order %d cache %zu batch %zu window %zu rank %u/%u drop_last %d epochs %llu: reader %llu hits "
              "%llu misses %llu bytes, simulate %llu / %llu / %llu",
              path, (int)cfg.order, cfg.cache_bytes, cfg.batch_size, cfg.window, cfg.rank, cfg.world, cfg.drop_last,
              (unsigned long long)cfg.epochs, (unsigned long long)st.chunk_hits,
              (unsigned long long)st.chunk_misses, (unsigned long long)st.bytes_read, (unsigned long long)b.hits,
              (unsigned long long)b.misses, (unsigned long long)b.bytes_read);
    CHECK_EQ_U64(b.accesses, b.hits + b.misses);
    CHECK_NEAR(b.read_amplification, st.read_amplification, 1e-9);
    /* no policy loads fewer chunks than Belady for the same sequence and cache */
    h5pack_sim_result l = simulate(path, &cfg, H5PACK_POLICY_LRU, cfg.cache_bytes);
    CHECK_EQ_U64(l.accesses, b.accesses);
    CHECK_MSG(l.misses >= b.misses, "lru %llu misses < belady %llu", (unsigned long long)l.misses,
              (unsigned long long)b.misses);
    h5pack_sim_result h = simulate(path, &cfg, H5PACK_POLICY_HDF5, cfg.cache_bytes);
    CHECK_EQ_U64(h.accesses, b.accesses);
    CHECK(h.misses >= b.misses);
    cases++;
}

static void compare_grid(const char *path)
{
    const size_t chunk = K * IMG;
    const size_t caches[] = {chunk / 2, chunk * 3, chunk * 9 + 7, chunk * 40};
    const size_t batches[] = {1, 16, 64};
    for (int o = 0; o < 3; o++)
        for (int c = 0; c < 4; c++)
            for (int bi = 0; bi < 3; bi++) {
                h5pack_config cfg = H5PACK_CONFIG_DEFAULTS;
                cfg.order = (h5pack_order)o, cfg.cache_bytes = caches[c], cfg.batch_size = batches[bi];
                cfg.threads = 2, cfg.device = H5PACK_DEVICE_CPU, cfg.dtype = H5PACK_DTYPE_UINT8;
                cfg.epochs = 2, cfg.seed = 7 + (uint64_t)c;
                if (caches[c] < chunk * 36) /* smaller than the default window (all 34 chunks) + threads */
                    cfg.window = 3;
                compare(path, cfg);
            }
    /* explicit window, ranks, drop_last, echo, more epochs */
    h5pack_config cfg = H5PACK_CONFIG_DEFAULTS;
    cfg.threads = 2, cfg.device = H5PACK_DEVICE_CPU, cfg.dtype = H5PACK_DTYPE_UINT8;
    cfg.order = H5PACK_ORDER_CHUNK, cfg.cache_bytes = chunk * 5, cfg.batch_size = 10, cfg.window = 6;
    cfg.epochs = 3;
    compare(path, cfg); /* window larger than the cache: chunks get read more than once */
    cfg.window = 0, cfg.rank = 1, cfg.world = 3, cfg.drop_last = 1, cfg.echo = 2;
    cfg.cache_bytes = chunk * 34; /* the default window is the whole file */
    compare(path, cfg);
    cfg.cache_bytes = chunk * 5;
    cfg.rank = 2, cfg.drop_last = 0, cfg.order = H5PACK_ORDER_RANDOM, cfg.echo = 1;
    compare(path, cfg);
}

static void check_errors(void)
{
    h5pack_config cfg = H5PACK_CONFIG_DEFAULTS;
    h5pack_sim_params sp = H5PACK_SIM_PARAMS_DEFAULTS;
    sp.cache_bytes = 1 << 20;
    h5pack_sim_result res = H5PACK_SIM_RESULT_INIT;
    char err[512], missing[300], text[300];
    snprintf(missing, sizeof missing, "%s/missing.h5", dir);
    CHECK(h5pack_simulate(missing, &cfg, &sp, &res, err, sizeof err) < 0);
    CHECK_STR_CONTAINS(err, "missing.h5");
    snprintf(text, sizeof text, "%s/text.h5", dir);
    FILE *f = fopen(text, "w");
    fputs("not an HDF5 file\n", f);
    fclose(f);
    CHECK(h5pack_simulate(text, &cfg, &sp, &res, err, sizeof err) < 0);
    CHECK_STR_CONTAINS(err, "text.h5");
    sp.policy = H5PACK_POLICY_HDF5, sp.hdf5_w0 = 1.5;
    CHECK(h5pack_simulate(text, &cfg, &sp, &res, err, sizeof err) == H5PACK_EINVAL);
    CHECK(h5pack_simulate(text, &cfg, NULL, &res, err, sizeof err) == H5PACK_EINVAL);
    unlink(text);
}

int main(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/h5pack_sim_vs_reader_XXXXXX", tmp && *tmp ? tmp : "/tmp");
    CHECK(mkdtemp(dir) != NULL);
    const char *names[] = {"implicit.h5", "gzip.h5", "contiguous.h5"};
    for (int kind = 0; kind < 3; kind++) {
        char path[300];
        snprintf(path, sizeof path, "%s/%s", dir, names[kind]);
        make_file(path, kind);
        compare_grid(path);
        unlink(path);
    }
    check_errors();
    rmdir(dir);
    printf("%d configurations: simulate(belady) == reader\n", cases);
    return 0;
}
