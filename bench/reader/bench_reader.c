/* bench_reader.c - libh5pack's reader against what users run today, side by side in one run.
 *
 *   bench_reader [--file F.h5] [--gzip-file G.h5] [--n 4000] [--k 16] [--size 224|HxW] [--threads T]
 *                [--batch 256] [--epochs 3] [--cache-mib 512] [--window W] [--prefetch 4] [--dir DIR]
 *                [--rounds 3]
 *                [--only plain|gzip|rss|scaling|mmap|slow]
 *
 * Without --file it writes DIR/bench_reader.h5 (N images 3 x H x W, chunks of K, uncompressed, implicit
 * chunk index) and DIR/bench_reader_gz.h5 (N/4 images, gzip level 4), with the HDF5 C API. Measures:
 *   1. memcpy bandwidth (1 and T threads) on buffers larger than the caches;
 *   2. our reader, CHUNK order, T threads, dtype UINT8 and FLOAT32: samples/s, GB/s of uint8 images,
 *      hit rate, read amplification, stall;
 *   3. per-sample H5Dread of the same sample order (what h5py + DataLoader do), T worker processes, with
 *      HDF5's chunk cache at h5py's default (1 MiB, 521 slots) and at the size of our cache, with and
 *      without the collation copy into a batch buffer that DataLoader adds;
 *   4. gzip: our reader with 1 and 2 threads (scaling) and the per-sample H5Dread baseline;
 *   5. resident memory after each of 10 epochs;
 *   6. only with --only scaling: samples/s for 1..16 workers (with LD_PRELOAD=libslow_pread.so and
 *      SLOW_PREAD_US=5000 it shows the workers overlapping slow reads, as on network storage; the
 *      reader then reads with pread, H5PACK_NO_MMAP=1, since a mapped file makes no pread to delay);
 *   7. only with --only mmap: uint8 through the mapped file (zero-copy, the default) against
 *      H5PACK_NO_MMAP=1 (pread into the cache), interleaved with memcpy, each round's ratios printed.
 *   8. only with --only slow (run by slow_storage.sh, under LD_PRELOAD=libslow_pread.so): chunk reads
 *      per second against the bound T reads per SLOW_PREAD_US, and the hits against the simulator's
 *      Belady plan for the same configuration.
 * Uses only the public API (include/h5pack.h) and HDF5's. */
#include <hdf5.h>
#include <libdeflate.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "h5pack.h"
#include "h5pack_sim.h"
#include "sizes.h"

typedef struct options {
    const char *file, *gzip_file, *dir, *only;
    uint64_t n, k, height, width, batch, epochs, cache_mib, window;
    int threads, rounds, prefetch;
} options;

static double rss_mib(void)
{
    long pages = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f) {
        if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
            resident = 0;
        fclose(f);
    }
    return (double)resident * (double)sysconf(_SC_PAGESIZE) / (1 << 20);
}

/* ---- test files ---------------------------------------------------------------------------------- */

/* Smooth gradients plus a little noise: compresses about as well as natural images do with deflate. */
static void synth_images(uint8_t *out, uint64_t first, uint64_t count, uint64_t h, uint64_t w)
{
    uint64_t x = first * 0x9E3779B97F4A7C15ull + 1;
    for (uint64_t i = 0; i < count; i++)
        for (uint64_t c = 0; c < 3; c++)
            for (uint64_t y = 0; y < h; y++)
                for (uint64_t z = 0; z < w; z++) {
                    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                    *out++ = (uint8_t)((first + i) * 17 + c * 60 + (y + z) / 2 + (x & 7));
                }
}

static int write_file(const char *path, uint64_t n, uint64_t k, uint64_t h, uint64_t w, int gzip)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST, H5F_LIBVER_LATEST);
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    hsize_t dims[4] = {n, 3, h, w}, chunk[4] = {k, 3, h, w};
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 4, chunk);
    if (gzip)
        H5Pset_deflate(dcpl, 4);
    else
        H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_EARLY);
    hid_t space = H5Screate_simple(4, dims, NULL);
    hid_t d = H5Dcreate2(f, "images", H5T_NATIVE_UINT8, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    uint8_t *buf = malloc(k * 3 * h * w);
    int rc = f >= 0 && d >= 0 && buf ? 0 : -1;
    for (uint64_t first = 0; rc == 0 && first < n; first += k) {
        uint64_t count = first + k <= n ? k : n - first;
        hsize_t start[4] = {first, 0, 0, 0}, cnt[4] = {count, 3, h, w};
        synth_images(buf, first, count, h, w);
        hid_t mem = H5Screate_simple(4, cnt, NULL);
        H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, cnt, NULL);
        rc = H5Dwrite(d, H5T_NATIVE_UINT8, mem, space, H5P_DEFAULT, buf) < 0 ? -1 : 0;
        H5Sclose(mem);
    }
    free(buf);
    H5Dclose(d), H5Sclose(space), H5Pclose(dcpl), H5Pclose(fapl);
    if (H5Fclose(f) < 0)
        rc = -1;
    return rc;
}

/* ---- memcpy bandwidth ---------------------------------------------------------------------------- */

typedef struct copy_job {
    uint8_t *dst, *src;
    size_t bytes;
    int reps;
} copy_job;

static void *copy_worker(void *arg)
{
    copy_job *j = arg;
    for (int r = 0; r < j->reps; r++) {
        memcpy(j->dst, j->src, j->bytes);
        __asm__ volatile("" ::: "memory");
    }
    return NULL;
}

/* GB/s of THREADS threads each copying its own 64 MiB buffers (best of 3). */
static double memcpy_gbps(int threads)
{
    size_t bytes = (size_t)64 << 20;
    copy_job jobs[64];
    pthread_t t[64];
    double best = 0;
    for (int i = 0; i < threads; i++) {
        jobs[i].src = malloc(bytes), jobs[i].dst = malloc(bytes), jobs[i].bytes = bytes, jobs[i].reps = 4;
        memset(jobs[i].src, i + 1, bytes), memset(jobs[i].dst, 0, bytes);
    }
    for (int trial = 0; trial < 3; trial++) {
        double t0 = h5pack_clock_s();
        for (int i = 0; i < threads; i++)
            pthread_create(&t[i], NULL, copy_worker, &jobs[i]);
        for (int i = 0; i < threads; i++)
            pthread_join(t[i], NULL);
        double gbps = (double)bytes * 4 * threads / (h5pack_clock_s() - t0) / 1e9;
        best = gbps > best ? gbps : best;
    }
    for (int i = 0; i < threads; i++)
        free(jobs[i].src), free(jobs[i].dst);
    return best;
}

/* ---- control: how far inflating alone scales on this machine now ------------------------------- */

typedef struct inflate_job {
    const uint8_t *comp;
    size_t comp_bytes, bytes;
    int reps;
} inflate_job;

static void *inflate_worker(void *arg)
{
    inflate_job *j = arg;
    struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();
    uint8_t *out = malloc(j->bytes);
    for (int r = 0; d && out && r < j->reps; r++) {
        size_t got;
        libdeflate_zlib_decompress(d, j->comp, j->comp_bytes, out, j->bytes, &got);
    }
    free(out);
    libdeflate_free_decompressor(d);
    return NULL;
}

/* MB/s of THREADS threads each inflating one synthetic chunk of K images over and over (best of 3). */
static double inflate_mbps(const options *o, int threads)
{
    size_t bytes = (size_t)o->k * 3 * o->height * o->width;
    uint8_t *src = malloc(bytes), *comp = malloc(bytes + bytes / 2 + 1024);
    synth_images(src, 0, o->k, o->height, o->width);
    struct libdeflate_compressor *c = libdeflate_alloc_compressor(4);
    inflate_job job = {comp, libdeflate_zlib_compress(c, src, bytes, comp, bytes + bytes / 2 + 1024), bytes, 40};
    libdeflate_free_compressor(c);
    double best = 0;
    pthread_t t[64];
    for (int trial = 0; trial < 3; trial++) {
        double t0 = h5pack_clock_s();
        for (int i = 0; i < threads; i++)
            pthread_create(&t[i], NULL, inflate_worker, &job);
        for (int i = 0; i < threads; i++)
            pthread_join(t[i], NULL);
        double mbps = (double)bytes * job.reps * threads / (h5pack_clock_s() - t0) / 1e6;
        best = mbps > best ? mbps : best;
    }
    free(src), free(comp);
    return best;
}

/* ---- our reader ---------------------------------------------------------------------------------- */

typedef struct run_result {
    double samples_per_s, gbps, hit_rate, read_amp, stall_fraction, seconds;
    double busy_read, busy_inflate, busy_assemble, busy_convert;
    uint64_t samples, hits, misses, n_indices;
    uint64_t *indices; /* epoch 0's sample order, when asked for */
    double rss_mib[16];
} run_result;

static h5pack_config bench_config(const options *o, h5pack_dtype dtype, int threads, uint64_t epochs)
{
    h5pack_config c = H5PACK_CONFIG_DEFAULTS;
    c.batch_size = o->batch, c.threads = threads, c.epochs = epochs, c.dtype = dtype, c.device = H5PACK_DEVICE_CPU;
    c.cache_bytes = (size_t)o->cache_mib << 20;
    c.window = (size_t)o->window;
    c.prefetch = o->prefetch;
    return c;
}

static int run_reader(const char *path, const options *o, h5pack_dtype dtype, int threads, uint64_t epochs,
                      int keep_indices, run_result *res)
{
    memset(res, 0, sizeof *res);
    h5pack_config c = bench_config(o, dtype, threads, epochs);
    h5pack_reader *r = NULL;
    if (h5pack_open(path, &c, &r) != H5PACK_OK) {
        fprintf(stderr, "bench_reader: %s\n", h5pack_last_error(r));
        h5pack_close(r);
        return -1;
    }
    h5pack_info info = H5PACK_INFO_INIT;
    h5pack_info_get(r, &info);
    uint64_t image_bytes = (uint64_t)info.channels * info.height * info.width;
    if (keep_indices)
        res->indices = malloc(info.samples_per_epoch * sizeof *res->indices);
    h5pack_batch b = H5PACK_BATCH_INIT;
    int rc;
    double t0 = h5pack_clock_s();
    while ((rc = h5pack_next(r, &b)) == H5PACK_OK) {
        if (keep_indices && b.epoch == 0)
            memcpy(res->indices + res->n_indices, b.indices, b.count * 8), res->n_indices += b.count;
        res->samples += b.count;
        int last_of_epoch = b.index + 1 == info.batches_per_epoch;
        uint64_t epoch = b.epoch;
        h5pack_release(r, &b);
        if (last_of_epoch && epoch < 16)
            res->rss_mib[epoch] = rss_mib();
    }
    res->seconds = h5pack_clock_s() - t0;
    h5pack_stats st = H5PACK_STATS_INIT;
    h5pack_stats_get(r, &st);
    if (rc != H5PACK_END)
        fprintf(stderr, "bench_reader: %s\n", h5pack_last_error(r));
    h5pack_close(r);
    res->samples_per_s = (double)res->samples / res->seconds;
    res->gbps = res->samples_per_s * (double)image_bytes / 1e9;
    res->hit_rate = st.hit_rate, res->read_amp = st.read_amplification, res->misses = st.chunk_misses;
    res->hits = st.chunk_hits;
    res->stall_fraction = st.stall_s / res->seconds;
    res->busy_read = st.busy_read_s, res->busy_inflate = st.busy_inflate_s;
    res->busy_assemble = st.busy_assemble_s, res->busy_convert = st.busy_convert_s;
    return rc == H5PACK_END ? 0 : -1;
}

/* ---- the per-sample H5Dread baseline --------------------------------------------------------------- */

/* Worker process W of T: reads the samples of batches W, W+T, ... one H5Dread each, as a DataLoader
 * worker calling dataset[i] per sample does; with COLLATE it also stacks them into a batch buffer, as
 * DataLoader's default_collate does (into shared memory) before the batch reaches the training loop. */
static int baseline_worker(const char *path, const options *o, const uint64_t *order, uint64_t n, int w, int t,
                           size_t rdcc_bytes, size_t rdcc_slots, int collate)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t dapl = H5Pcreate(H5P_DATASET_ACCESS);
    H5Pset_chunk_cache(dapl, rdcc_slots, rdcc_bytes, 0.75);
    hid_t d = H5Dopen2(f, "images", dapl);
    hid_t space = H5Dget_space(d);
    hsize_t dims[4];
    H5Sget_simple_extent_dims(space, dims, NULL);
    hsize_t cnt[4] = {1, dims[1], dims[2], dims[3]};
    size_t img_bytes = dims[1] * dims[2] * dims[3];
    hid_t mem = H5Screate_simple(4, cnt, NULL);
    uint8_t *img = malloc(img_bytes), *batch = collate ? malloc(img_bytes * o->batch) : NULL;
    int rc = f >= 0 && d >= 0 && img && (batch || !collate) ? 0 : 1;
    for (uint64_t first = (uint64_t)w * o->batch; rc == 0 && first < n; first += (uint64_t)t * o->batch)
        for (uint64_t i = first; rc == 0 && i < first + o->batch && i < n; i++) {
            hsize_t start[4] = {order[i], 0, 0, 0};
            H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, cnt, NULL);
            rc = H5Dread(d, H5T_NATIVE_UINT8, mem, space, H5P_DEFAULT, img) < 0;
            if (collate)
                memcpy(batch + (i - first) * img_bytes, img, img_bytes);
        }
    free(img), free(batch);
    H5Sclose(mem), H5Sclose(space), H5Dclose(d), H5Pclose(dapl), H5Fclose(f);
    return rc;
}

/* Samples/s of one epoch in ORDER read by T forked worker processes. */
static double baseline(const char *path, const options *o, const uint64_t *order, uint64_t n, int t,
                       size_t rdcc_bytes, size_t rdcc_slots, int collate)
{
    double t0 = h5pack_clock_s();
    pid_t pids[64];
    for (int w = 0; w < t; w++) {
        pids[w] = fork();
        if (pids[w] == 0)
            _exit(baseline_worker(path, o, order, n, w, t, rdcc_bytes, rdcc_slots, collate));
    }
    int failed = 0;
    for (int w = 0; w < t; w++) {
        int status = 0;
        waitpid(pids[w], &status, 0);
        failed |= !WIFEXITED(status) || WEXITSTATUS(status) != 0;
    }
    if (failed)
        fprintf(stderr, "bench_reader: a baseline worker failed\n");
    return failed ? 0.0 : (double)n / (h5pack_clock_s() - t0);
}

/* ---- main ---------------------------------------------------------------------------------------- */

/* A count or size (h5pack's rule: 4000, 4K = 4096); 0 when malformed, which parse() rejects. */
static uint64_t count_of(const char *v)
{
    uint64_t n = 0;
    return h5pack_parse_size(v, &n, NULL, 0) == H5PACK_SIZE_OK ? n : 0;
}

static int parse(int argc, char **argv, options *o)
{
    *o = (options){NULL, NULL, "/tmp", NULL, 4000, 16, 224, 224, 256, 3, 512, 0, 0, 3, 4};
    o->threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v)
            return -1;
        if (!strcmp(a, "--file"))
            o->file = v;
        else if (!strcmp(a, "--gzip-file"))
            o->gzip_file = v;
        else if (!strcmp(a, "--dir"))
            o->dir = v;
        else if (!strcmp(a, "--only"))
            o->only = v;
        else if (!strcmp(a, "--n"))
            o->n = count_of(v);
        else if (!strcmp(a, "--k"))
            o->k = count_of(v);
        else if (!strcmp(a, "--size")) { /* S (square) or HxW */
            char *end = NULL;
            o->height = o->width = strtoull(v, &end, 10);
            if (end && *end == 'x')
                o->width = strtoull(end + 1, NULL, 10);
            else if (!end || *end)
                o->height = o->width = 0; /* parse() rejects it */
        } else if (!strcmp(a, "--window"))
            o->window = count_of(v);
        else if (!strcmp(a, "--batch"))
            o->batch = count_of(v);
        else if (!strcmp(a, "--epochs"))
            o->epochs = count_of(v);
        else if (!strcmp(a, "--cache-mib"))
            o->cache_mib = count_of(v);
        else if (!strcmp(a, "--threads"))
            o->threads = atoi(v);
        else if (!strcmp(a, "--rounds"))
            o->rounds = atoi(v);
        else if (!strcmp(a, "--prefetch"))
            o->prefetch = atoi(v);
        else
            return -1;
        i++;
    }
    return o->n && o->k && o->height && o->width && o->batch && o->epochs && o->threads > 0 && o->threads <= 64 && o->rounds > 0 &&
                   o->prefetch > 0 ? 0 : -1;
}

static const char *prepare(const char *given, const options *o, const char *name, uint64_t n, int gzip, char *buf)
{
    if (given)
        return given;
    snprintf(buf, 512, "%s/%s", o->dir, name);
    double t0 = h5pack_clock_s();
    if (write_file(buf, n, o->k, o->height, o->width, gzip) != 0) {
        fprintf(stderr, "bench_reader: cannot write %s\n", buf);
        exit(1);
    }
    printf("wrote %s: %llu images 3x%llux%llu, chunks of %llu%s (%.1f s)\n", buf, (unsigned long long)n,
           (unsigned long long)o->height, (unsigned long long)o->width, (unsigned long long)o->k,
           gzip ? ", gzip level 4" : ", uncompressed", h5pack_clock_s() - t0);
    return buf;
}

static void print_run(const char *what, const run_result *r)
{
    printf("%-44s %9.0f samples/s %6.2f GB/s  hit %.3f  amplification %.2f  stall %.1f%%\n", what,
           r->samples_per_s, r->gbps, r->hit_rate, r->read_amp, 100 * r->stall_fraction);
    printf("%-44s busy s: read %.2f inflate %.2f assemble %.2f convert %.2f (wall %.2f)\n", "", r->busy_read,
           r->busy_inflate, r->busy_assemble, r->busy_convert, r->seconds);
}

/* Keeps the faster of *BEST and *R (and the sample order of whichever has one). */
static void keep_best(run_result *best, run_result *r, int first)
{
    if (first || r->samples_per_s > best->samples_per_s) {
        uint64_t *indices = best->indices ? best->indices : r->indices;
        uint64_t n = best->indices ? best->n_indices : r->n_indices;
        if (!first && best->indices && r->indices && r->indices != indices)
            free(r->indices);
        *best = *r;
        best->indices = indices, best->n_indices = n;
    } else if (r->indices && r->indices != best->indices) {
        free(r->indices);
    }
}

static double max2(double a, double b)
{
    return a > b ? a : b;
}

/* Every measurement is repeated in ROUNDS interleaved rounds and the best kept: on a shared machine the
 * background load then hits each contender alike. */
static void bench_uncompressed(const char *path, const options *o)
{
    run_result u8 = {0}, f32 = {0}, r;
    double m1 = 0, mt = 0, b1 = 0, bc = 0, bg = 0;
    run_reader(path, o, H5PACK_DTYPE_UINT8, o->threads, 1, 0, &r); /* page cache warm */
    for (int round = 0; round < o->rounds; round++) {
        run_reader(path, o, H5PACK_DTYPE_UINT8, o->threads, o->epochs, round == 0, &r);
        keep_best(&u8, &r, round == 0);
        run_reader(path, o, H5PACK_DTYPE_FLOAT32, o->threads, o->epochs, 0, &r);
        keep_best(&f32, &r, round == 0);
        m1 = max2(m1, memcpy_gbps(1)), mt = max2(mt, memcpy_gbps(o->threads));
        b1 = max2(b1, baseline(path, o, u8.indices, u8.n_indices, o->threads, 1 << 20, 521, 0));
        bc = max2(bc, baseline(path, o, u8.indices, u8.n_indices, o->threads, 1 << 20, 521, 1));
        bg = max2(bg, baseline(path, o, u8.indices, u8.n_indices, o->threads, (size_t)o->cache_mib << 20, 100003, 1));
    }
    printf("\n== uncompressed, CHUNK order, batch %llu, cache %llu MiB, %d threads, %llu epochs, best of %d\n",
           (unsigned long long)o->batch, (unsigned long long)o->cache_mib, o->threads, (unsigned long long)o->epochs,
           o->rounds);
    printf("memcpy bandwidth: %.2f GB/s (1 thread), %.2f GB/s (%d threads)\n", m1, mt, o->threads);
    print_run("h5pack uint8 (file -> cache -> uint8 batch)", &u8);
    print_run("h5pack float32 (+ normalisation on the CPU)", &f32);
    printf("host-side throughput / memcpy (%d threads): %.2f   (goal >= 0.6)\n", o->threads, u8.gbps / mt);
    printf("%-44s %9.0f samples/s  (h5pack uint8 is %.2fx)\n", "per-sample H5Dread only, rdcc 1 MiB (h5py dflt)",
           b1, u8.samples_per_s / b1);
    printf("%-44s %9.0f samples/s  (h5pack uint8 is %.2fx)\n", "per-sample H5Dread + collate, rdcc 1 MiB", bc,
           u8.samples_per_s / bc);
    printf("%-44s %9.0f samples/s  (h5pack uint8 is %.2fx)\n", "per-sample H5Dread + collate, rdcc = our cache", bg,
           u8.samples_per_s / bg);
    free(u8.indices);
}

/* The gzip runs use a quarter of the cache: smaller than the file, so every epoch inflates again. */
/* A window for a cache smaller than the default window needs: what the cache holds besides one chunk per
 * thread, the same for every thread count (unless --window is given). */
static uint64_t window_for(const options *o, int threads)
{
    if (o->window)
        return o->window;
    uint64_t slots = (o->cache_mib << 20) / (o->k * 3 * o->height * o->width);
    return slots > (uint64_t)threads ? slots - (uint64_t)threads : 1;
}

static void bench_gzip(const char *path, const options *base)
{
    options small = *base, *o = &small;
    small.cache_mib = base->cache_mib / 4 ? base->cache_mib / 4 : 1;
    small.window = window_for(&small, 2); /* the default window (the whole file here) needs a larger cache */
    run_result one = {0}, two = {0}, r;
    double b1 = 0, bg = 0, i1 = 0, i2 = 0;
    run_reader(path, o, H5PACK_DTYPE_UINT8, 1, 1, 0, &r); /* page cache warm */
    for (int round = 0; round < o->rounds; round++) {
        run_reader(path, o, H5PACK_DTYPE_UINT8, 1, o->epochs, round == 0, &r);
        keep_best(&one, &r, round == 0);
        run_reader(path, o, H5PACK_DTYPE_UINT8, 2, o->epochs, 0, &r);
        keep_best(&two, &r, round == 0);
        i1 = max2(i1, inflate_mbps(o, 1)), i2 = max2(i2, inflate_mbps(o, 2));
        if (round == 0) { /* the baselines are slow and steady: once is enough */
            b1 = baseline(path, o, one.indices, one.n_indices, 2, 1 << 20, 521, 1);
            bg = baseline(path, o, one.indices, one.n_indices, 2, (size_t)o->cache_mib << 20, 100003, 1);
        }
    }
    printf("\n== gzip level 4, CHUNK order, batch %llu, cache %llu MiB, %llu epochs, best of %d\n",
           (unsigned long long)o->batch, (unsigned long long)o->cache_mib, (unsigned long long)o->epochs, o->rounds);
    print_run("h5pack uint8, 1 thread", &one);
    print_run("h5pack uint8, 2 threads", &two);
    printf("gzip scaling 1 -> 2 threads: %.2fx   (goal >= 1.8x)\n", two.samples_per_s / one.samples_per_s);
    printf("control, libdeflate alone on this machine now: %.0f MB/s (1 thread), %.0f MB/s (2 threads): %.2fx\n", i1,
           i2, i2 / i1);
    printf("%-44s %9.0f samples/s  (h5pack 2 threads is %.1fx)\n", "per-sample H5Dread + collate x2, rdcc 1 MiB", b1,
           two.samples_per_s / b1);
    printf("%-44s %9.0f samples/s  (h5pack 2 threads is %.1fx)\n", "per-sample H5Dread + collate x2, rdcc = cache",
           bg, two.samples_per_s / bg);
    free(one.indices);
}

/* Samples/s against the worker count on the uncompressed file. Run under LD_PRELOAD=libslow_pread.so with
 * SLOW_PREAD_US set, it shows how well the workers overlap slow reads (network storage). */
static void bench_scaling(const char *path, const options *given)
{
    options fixed = *given, *o = &fixed;
    fixed.window = window_for(given, 16); /* one order for every thread count, which the cache holds */
    const char *slow = getenv("SLOW_PREAD_US");
    if (slow && !getenv("H5PACK_NO_MMAP"))
        setenv("H5PACK_NO_MMAP", "1", 1); /* a mapped file makes no pread for libslow_pread to delay */
    printf("\n== worker scaling, uncompressed, CHUNK order, uint8, cache %llu MiB, window %llu, %s\n",
           (unsigned long long)o->cache_mib, (unsigned long long)o->window,
           slow ? "every chunk read delayed (SLOW_PREAD_US)" : "no added latency");
    if (slow)
        printf("added latency per chunk read: %s us\n", slow);
    double base = 0;
    for (int t = 1; t <= 16; t *= 2) {
        run_result best = {0}, r;
        for (int round = 0; round < o->rounds; round++) {
            run_reader(path, o, H5PACK_DTYPE_UINT8, t, 1, 0, &r);
            keep_best(&best, &r, round == 0);
        }
        base = t == 1 ? best.samples_per_s : base;
        printf("%2d threads %9.0f samples/s  %5.2fx  misses %llu  read amplification %.2f  stall %.1f%%\n", t,
               best.samples_per_s, best.samples_per_s / base, (unsigned long long)best.misses, best.read_amp,
               100 * best.stall_fraction);
    }
}

/* One contender of bench_mmap: the reader with the mapping on or off (read at open). */
static void run_mapped(const char *path, const options *o, int mapped, run_result *r)
{
    if (mapped)
        unsetenv("H5PACK_NO_MMAP");
    else
        setenv("H5PACK_NO_MMAP", "1", 1);
    run_reader(path, o, H5PACK_DTYPE_UINT8, o->threads, o->epochs, 0, r);
    unsetenv("H5PACK_NO_MMAP");
}

/* The zero-copy path against pread, in interleaved rounds (order alternating), each against the memcpy
 * bandwidth measured in the same round. */
static void bench_mmap(const char *path, const options *o)
{
    run_result best[2], r;
    double best_ratio[2] = {0, 0}, mt = 0;
    memset(best, 0, sizeof best);
    run_reader(path, o, H5PACK_DTYPE_UINT8, o->threads, 1, 0, &r); /* page cache warm */
    printf("\n== uint8, uncompressed, CHUNK order, batch %llu, cache %llu MiB, %d threads, %llu epochs: mapped vs "
           "pread\n",
           (unsigned long long)o->batch, (unsigned long long)o->cache_mib, o->threads, (unsigned long long)o->epochs);
    for (int round = 0; round < o->rounds; round++) {
        double m = memcpy_gbps(o->threads);
        mt = max2(mt, m);
        for (int i = 0; i < 2; i++) {
            int mapped = (round + i) % 2 == 0;
            run_mapped(path, o, mapped, &r);
            double ratio = r.gbps / m;
            printf("round %d %-7s %9.0f samples/s %6.2f GB/s  memcpy %5.2f GB/s  ratio %.2f  busy read %.2f "
                   "assemble %.2f  amplification %.2f\n",
                   round, mapped ? "mapped" : "pread", r.samples_per_s, r.gbps, m, ratio, r.busy_read,
                   r.busy_assemble, r.read_amp);
            best_ratio[mapped] = max2(best_ratio[mapped], ratio);
            keep_best(&best[mapped], &r, round == 0);
        }
    }
    print_run("h5pack uint8, mapped (zero-copy)", &best[1]);
    print_run("h5pack uint8, H5PACK_NO_MMAP=1 (pread)", &best[0]);
    printf("best memcpy %.2f GB/s; best per-round ratio: mapped %.2f, pread %.2f; best/best: mapped %.2f, pread "
           "%.2f; mapped/pread %.2fx\n",
           mt, best_ratio[1], best_ratio[0], best[1].gbps / mt, best[0].gbps / mt,
           best[1].samples_per_s / best[0].samples_per_s);
}

/* Slow storage: every chunk read takes SLOW_PREAD_US longer (libslow_pread.so), and at most T reads can be
 * in flight (one per worker), so T reads per delay is the bound; the ratio says how close the reader gets.
 * The hits must be the Belady plan's (h5pack_simulate on the same configuration). */
static void bench_slow(const char *path, const options *o)
{
    const char *slow = getenv("SLOW_PREAD_US"), *pre = getenv("LD_PRELOAD");
    if (!slow || atol(slow) <= 0 || !pre || !strstr(pre, "slow_pread")) {
        fprintf(stderr, "bench_reader --only slow: run it under LD_PRELOAD=.../libslow_pread.so with SLOW_PREAD_US "
                        "set (bench/reader/slow_storage.sh does)\n");
        exit(1);
    }
    setenv("H5PACK_NO_MMAP", "1", 1); /* a mapped file makes no pread for libslow_pread to delay */
    double delay_s = (double)atol(slow) * 1e-6, bound = o->threads / delay_s;
    printf("\n== slow storage: every chunk read +%.0f ms, CHUNK order, batch %llu, cache %llu MiB, window %llu%s, %d "
           "threads, %llu epochs\n",
           delay_s * 1e3, (unsigned long long)o->batch, (unsigned long long)o->cache_mib,
           (unsigned long long)o->window, o->window ? "" : " (default)", o->threads, (unsigned long long)o->epochs);
    run_result best = {0}, r;
    for (int round = 0; round < o->rounds; round++) {
        if (run_reader(path, o, H5PACK_DTYPE_UINT8, o->threads, o->epochs, 0, &r) != 0)
            exit(1);
        double reads = (double)r.misses / r.seconds;
        printf("round %d: %7.0f samples/s  %6.1f chunk reads/s  = %.2f of the bound (%d reads per %.0f ms = %.0f/s)  "
               "hits %llu misses %llu  stall %.1f%%\n",
               round, r.samples_per_s, reads, reads / bound, o->threads, delay_s * 1e3, bound,
               (unsigned long long)r.hits, (unsigned long long)r.misses, 100 * r.stall_fraction);
        keep_best(&best, &r, round == 0);
    }
    h5pack_config c = bench_config(o, H5PACK_DTYPE_UINT8, o->threads, o->epochs);
    h5pack_sim_params sp = H5PACK_SIM_PARAMS_DEFAULTS;
    sp.policy = H5PACK_POLICY_BELADY, sp.cache_bytes = c.cache_bytes;
    h5pack_sim_result sr = H5PACK_SIM_RESULT_INIT;
    char err[512] = "";
    if (h5pack_simulate(path, &c, &sp, &sr, err, sizeof err) != H5PACK_OK) {
        fprintf(stderr, "bench_reader: simulate: %s\n", err);
        exit(1);
    }
    printf("best: %.2f of the bound; hits %llu, Belady plan (h5pack_simulate) %llu: %s\n",
           (double)best.misses / best.seconds / bound, (unsigned long long)best.hits, (unsigned long long)sr.hits,
           best.hits == sr.hits && best.misses == sr.misses ? "same" : "DIFFERENT");
}

static void bench_rss(const char *path, const options *o)
{
    run_result r;
    run_reader(path, o, H5PACK_DTYPE_FLOAT32, o->threads, 10, 0, &r);
    printf("\n== resident memory after each of 10 epochs (float32, cache %llu MiB): MiB", (unsigned long long)o->cache_mib);
    for (int e = 0; e < 10; e++)
        printf(" %.0f", r.rss_mib[e]);
    printf("\nRSS growth epoch 2 -> 10: %.1f MiB\n", r.rss_mib[9] - r.rss_mib[1]);
}

int main(int argc, char **argv)
{
    options o;
    if (parse(argc, argv, &o) != 0) {
        fprintf(stderr, "usage: bench_reader [--file F.h5] [--gzip-file G.h5] [--dir DIR] [--n N] [--k K] "
                        "[--size S] [--batch B] [--epochs E] [--cache-mib M] [--threads T] [--window W] [--prefetch P] [--rounds R] [--only plain|gzip|rss|scaling|mmap|slow]\n");
        return 1;
    }
    int plain_part = !o.only || strcmp(o.only, "gzip") != 0, gzip_part = !o.only || !strcmp(o.only, "gzip");
    char plain_buf[512], gzip_buf[512];
    const char *plain = plain_part ? prepare(o.file, &o, "bench_reader.h5", o.n, 0, plain_buf) : NULL;
    const char *gz = gzip_part ? prepare(o.gzip_file, &o, "bench_reader_gz.h5", o.n / 4 ? o.n / 4 : 1, 1, gzip_buf)
                               : NULL;
    double load[3] = {0, 0, 0};
    if (getloadavg(load, 3) < 0)
        load[0] = -1;
    printf("libh5pack %s, HDF5 C API, %ld online cores, load average %.2f at start\n", h5pack_version_string(),
           sysconf(_SC_NPROCESSORS_ONLN), load[0]);
    if (plain_part && (!o.only || !strcmp(o.only, "plain")))
        bench_uncompressed(plain, &o);
    if (gzip_part)
        bench_gzip(gz, &o);
    if (plain_part && (!o.only || !strcmp(o.only, "rss")))
        bench_rss(plain, &o);
    if (plain_part && o.only && !strcmp(o.only, "scaling"))
        bench_scaling(plain, &o);
    if (plain_part && o.only && !strcmp(o.only, "mmap"))
        bench_mmap(plain, &o);
    if (plain_part && o.only && !strcmp(o.only, "slow"))
        bench_slow(plain, &o);
    if (plain && !o.file)
        remove(plain);
    if (gz && !o.gzip_file)
        remove(gz);
    return 0;
}
