/* test_hdf5_model.c - the HDF5 chunk cache model of sim_policies.c against HDF5 itself.
 *
 * Real HDF5 reads the samples one H5Dread at a time (as h5py's __getitem__ does) through the log VFD
 * (H5Pset_fapl_log with H5FD_LOG_LOC_READ), which writes one line per read with its memory type; the
 * raw-data reads ("H5FD_MEM_DRAW") are the chunk loads and bypassing reads. The model replays the same
 * sequence; both the number of reads and their bytes must agree exactly, for unfiltered and gzip chunks,
 * chunks that fit and chunks larger than the cache, few hash slots (collisions) and several w0.
 * Then the same comparison through the public h5pack_simulate(): its bytes_read for the HDF5 policy
 * must equal the bytes HDF5 read for the reader's order. */
#include <hdf5.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "h5fixture.h"
#include "h5pack_sim.h"
#include "order.h"
#include "sim_policies.h"

enum { N = 96, C = 3, H = 20, W = 20, K = 4 }; /* image 1200 bytes, chunk 4800 bytes */
#define IMG ((uint64_t)C * H * W)
#define CHUNK (IMG * K)

static char dir[256];

/* Pixel values vary so gzip chunk sizes differ: 7 x the sample, plus g*31 at every 13th byte g. */
static uint8_t model_pixel(const h5fix_file *f, uint64_t sample, uint64_t offset)
{
    uint64_t g = sample * h5fix_image_bytes(f) + offset;
    return (uint8_t)(sample * 7 + (g % 13 == 0 ? g * 31 : 0));
}

static uint8_t zero_pixel(const h5fix_file *f, uint64_t sample, uint64_t offset)
{
    (void)f, (void)sample, (void)offset;
    return 0;
}

/* An h5pack-like file: images (N,C,H,W) uint8 chunked (K,C,H,W), latest format, early allocation;
 * GZIP adds the deflate filter (then chunks are written on H5Dwrite). */
static void make_file(const char *path, int gzip)
{
    const h5fix_file f = {.n = N, .c = C, .h = H, .w = W, .k = K, .gzip = gzip ? 4 : 0, .pixel = model_pixel};
    CHECK_OK(h5fix_write(path, &f));
}

static void stored_sizes(const char *path, uint64_t *stored)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t d = H5Dopen2(f, "images", H5P_DEFAULT);
    for (uint64_t c = 0; c < N / K; c++) {
        hsize_t off[4] = {c * K, 0, 0, 0}, sz = 0;
        CHECK(H5Dget_chunk_storage_size(d, off, &sz) >= 0);
        stored[c] = sz;
    }
    H5Dclose(d), H5Fclose(f);
}

typedef struct io_count {
    uint64_t reads, bytes;
} io_count;

/* Reads SEQ one sample per H5Dread through the log VFD; counts the raw-data reads in the log. */
static io_count real_hdf5(const char *path, const uint64_t *seq, size_t n, size_t nbytes, size_t nslots, double w0)
{
    char log[300];
    snprintf(log, sizeof log, "%s/vfd.log", dir);
    unlink(log);
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    CHECK(H5Pset_fapl_log(fapl, log, H5FD_LOG_LOC_READ, 0) >= 0);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, fapl);
    hid_t dapl = H5Pcreate(H5P_DATASET_ACCESS);
    H5Pset_chunk_cache(dapl, nslots, nbytes, w0);
    hid_t d = H5Dopen2(f, "images", dapl);
    CHECK(d >= 0);
    hid_t fs = H5Dget_space(d);
    hsize_t cnt[4];
    CHECK(H5Sget_simple_extent_dims(fs, cnt, NULL) == 4);
    cnt[0] = 1;
    hid_t ms = H5Screate_simple(4, cnt, NULL);
    uint8_t *img = malloc(cnt[1] * cnt[2] * cnt[3]);
    for (size_t i = 0; i < n; i++) {
        hsize_t start[4] = {seq[i], 0, 0, 0};
        H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, cnt, NULL);
        CHECK(H5Dread(d, H5T_NATIVE_UINT8, ms, fs, H5P_DEFAULT, img) >= 0);
    }
    free(img);
    H5Sclose(ms), H5Sclose(fs), H5Dclose(d), H5Pclose(dapl), H5Fclose(f), H5Pclose(fapl);
    io_count r = {0, 0};
    FILE *lf = fopen(log, "r");
    CHECK_MSG(lf != NULL, "no log file %s", log);
    char line[512];
    while (fgets(line, sizeof line, lf)) {
        unsigned long long a, b, len;
        if (strstr(line, "(H5FD_MEM_DRAW) Read") && sscanf(line, " %llu-%llu (%llu bytes)", &a, &b, &len) == 3)
            r.reads++, r.bytes += len;
    }
    fclose(lf);
    return r;
}

static io_count model(const uint64_t *seq, size_t n, const uint64_t *stored, size_t nbytes, size_t nslots,
                      double w0, int filtered)
{
    hdf5_sim_params p = {nbytes, nslots, w0, CHUNK, filtered};
    hdf5_sim *s = NULL;
    CHECK_OK(h5pack_hdf5_sim_create(&p, &s));
    io_count r = {0, 0};
    for (size_t i = 0; i < n; i++)
        r.reads += (uint64_t)h5pack_hdf5_sim_read(s, seq[i] / K, IMG, stored[seq[i] / K], &r.bytes);
    h5pack_hdf5_sim_free(s);
    return r;
}

/* two epochs of an order.h order as one sequence */
static size_t sequence(h5pack_order kind, uint64_t window, uint64_t seed, uint64_t *seq)
{
    order_params op = {kind, N, K, window, seed, 0, 1, 0, 8};
    CHECK_OK(h5pack_order_epoch(&op, 0, seq));
    CHECK_OK(h5pack_order_epoch(&op, 1, seq + N));
    return 2 * N;
}

static void compare_grid(const char *path, int gzip)
{
    uint64_t stored[N / K], seq[2 * N];
    stored_sizes(path, stored);
    const size_t nbytes[] = {CHUNK - 1, CHUNK * 3, CHUNK * 6 + 100, CHUNK * 30};
    const size_t nslots[] = {5, 7, 521};
    const double w0s[] = {0.0, 0.5, 0.75, 1.0};
    const h5pack_order kinds[] = {H5PACK_ORDER_RANDOM, H5PACK_ORDER_CHUNK, H5PACK_ORDER_SEQUENTIAL};
    int cases = 0, nonzero_hits = 0;
    for (int o = 0; o < 3; o++) {
        size_t n = sequence(kinds[o], 3, 11 + (uint64_t)o, seq);
        for (int b = 0; b < 4; b++)
            for (int s = 0; s < 3; s++)
                for (int w = 0; w < 4; w++) {
                    io_count real = real_hdf5(path, seq, n, nbytes[b], nslots[s], w0s[w]);
                    io_count sim = model(seq, n, stored, nbytes[b], nslots[s], w0s[w], gzip);
                    CHECK_MSG(real.reads == sim.reads && real.bytes == sim.bytes,
                              "%s order %d nbytes %zu nslots %zu w0 %.2f: HDF5 %llu reads / %llu bytes, model "
                              "%llu / %llu",
                              gzip ? "gzip" : "plain", o, nbytes[b], nslots[s], w0s[w],
                              (unsigned long long)real.reads, (unsigned long long)real.bytes,
                              (unsigned long long)sim.reads, (unsigned long long)sim.bytes);
                    cases++;
                    nonzero_hits += real.reads < n;
                }
    }
    CHECK(nonzero_hits > cases / 4); /* the grid exercises caching, not only misses */
    printf("%s: %d cases agree (%d with cache hits)\n", gzip ? "gzip" : "plain", cases, nonzero_hits);
}

/* A contiguous dataset (h5py's default) of N2 images of SIDE x SIDE x 3: no chunk cache, HDF5's data
 * sieve instead. */
static void make_contiguous(const char *path, hsize_t n, hsize_t side)
{
    const h5fix_file f = {.n = n, .c = 3, .h = (uint32_t)side, .w = (uint32_t)side, .contiguous = 1,
                          .old_format = 1, .pixel = zero_pixel};
    CHECK_OK(h5fix_write(path, &f));
}

static void compare_contiguous(void)
{
    const hsize_t sides[] = {20, 100, 160}; /* images of 1200, 30000 and 76800 bytes (the sieve: 65536) */
    const hsize_t counts[] = {96, 40, 24};
    char path[300];
    snprintf(path, sizeof path, "%s/contiguous.h5", dir);
    for (int i = 0; i < 3; i++) {
        make_contiguous(path, counts[i], sides[i]);
        uint64_t img = 3 * sides[i] * sides[i], seq[2 * 96];
        for (int o = 0; o < 3; o++) {
            order_params op = {(h5pack_order)o, counts[i], 4, 3, 9, 0, 1, 0, 8};
            CHECK_OK(h5pack_order_epoch(&op, 0, seq));
            CHECK_OK(h5pack_order_epoch(&op, 1, seq + counts[i]));
            size_t n = 2 * (size_t)counts[i];
            io_count real = real_hdf5(path, seq, n, 1 << 20, 521, 0.75);
            hdf5_sieve sv;
            h5pack_hdf5_sieve_init(&sv, HDF5_SIM_DEFAULT_SIEVE, counts[i] * img);
            io_count sim = {0, 0};
            for (size_t k = 0; k < n; k++)
                sim.reads += (uint64_t)h5pack_hdf5_sieve_read(&sv, seq[k] * img, img, &sim.bytes);
            CHECK_MSG(real.reads == sim.reads && real.bytes == sim.bytes,
                      "contiguous %llux%llu order %d: HDF5 %llu reads / %llu bytes, model %llu / %llu",
                      (unsigned long long)sides[i], (unsigned long long)sides[i], o, (unsigned long long)real.reads,
                      (unsigned long long)real.bytes, (unsigned long long)sim.reads, (unsigned long long)sim.bytes);
            CHECK(i == 2 || real.reads < n); /* small images: the sieve serves some reads */
        }
    }
    printf("contiguous: 9 cases agree\n");
    unlink(path);
}

/* The public simulator (HDF5 policy) against HDF5 for the reader's own order; needs the chunk source
 * to open the file. */
static void compare_public(const char *path, h5pack_order kind, size_t nbytes, size_t nslots, double w0)
{
    h5pack_config cfg = H5PACK_CONFIG_DEFAULTS;
    cfg.batch_size = 8, cfg.order = kind, cfg.window = 3, cfg.seed = 5, cfg.epochs = 2, cfg.labels_dataset = NULL;
    h5pack_sim_params sp = H5PACK_SIM_PARAMS_DEFAULTS;
    sp.policy = H5PACK_POLICY_HDF5, sp.cache_bytes = nbytes, sp.hdf5_nslots = nslots, sp.hdf5_w0 = w0;
    h5pack_sim_result r = H5PACK_SIM_RESULT_INIT;
    char err[512];
    int rc = h5pack_simulate(path, &cfg, &sp, &r, err, sizeof err);
    CHECK_MSG(rc == 0, "h5pack_simulate: %s", err);
    uint64_t seq[2 * N];
    order_params op = {kind, N, K, 3, 5, 0, 1, 0, 8};
    CHECK_OK(h5pack_order_epoch(&op, 0, seq));
    CHECK_OK(h5pack_order_epoch(&op, 1, seq + N));
    io_count real = real_hdf5(path, seq, 2 * N, nbytes, nslots, w0);
    CHECK_EQ_U64(r.bytes_read, real.bytes);
    CHECK(r.misses <= real.reads);
    CHECK_EQ_U64(r.hits + r.misses, r.accesses);
}

int main(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/h5pack_hdf5_model_XXXXXX", tmp && *tmp ? tmp : "/tmp");
    CHECK(mkdtemp(dir) != NULL);
    char plain[300], gz[300];
    snprintf(plain, sizeof plain, "%s/plain.h5", dir);
    snprintf(gz, sizeof gz, "%s/gzip.h5", dir);
    make_file(plain, 0);
    make_file(gz, 1);
    compare_grid(plain, 0);
    compare_grid(gz, 1);
    compare_contiguous();
    char contiguous[300];
    snprintf(contiguous, sizeof contiguous, "%s/contiguous_public.h5", dir);
    make_contiguous(contiguous, N, H);
    compare_public(contiguous, H5PACK_ORDER_RANDOM, CHUNK * 3, 521, 0.75);
    compare_public(contiguous, H5PACK_ORDER_SEQUENTIAL, CHUNK * 3, 521, 0.75);
    unlink(contiguous);
    for (int gzip = 0; gzip < 2; gzip++) {
        compare_public(gzip ? gz : plain, H5PACK_ORDER_RANDOM, CHUNK * 3, 7, 0.75);
        compare_public(gzip ? gz : plain, H5PACK_ORDER_CHUNK, CHUNK * 6, 521, 1.0);
        compare_public(gzip ? gz : plain, H5PACK_ORDER_SEQUENTIAL, CHUNK - 1, 521, 0.75);
    }
    char log[300];
    snprintf(log, sizeof log, "%s/vfd.log", dir);
    unlink(log), unlink(plain), unlink(gz), rmdir(dir);
    return 0;
}
