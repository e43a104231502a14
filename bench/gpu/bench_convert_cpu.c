/* bench_convert_cpu.c - the CPU backend's conversion speed against memcpy of the same output size,
 * measured side by side in one run, with 1 thread (submit: what one worker does) and with N threads
 * (resubmit: OpenMP over the images of one batch, what an echo on the consumer thread does).
 *
 *   bench_convert_cpu [--batch N] [--size HxW] [--threads N] [--reps N] [--crop-from HxW] [--crops]
 *                     [--kernel [--pass scalar|float|fixed|avx512] [--nchw-in] [--sources N] [--prefetch-ab]]
 *
 * The last cases are the resizing crops: stored images of --crop-from (256x256) resized to --size by
 * a random resized crop (float32, float16, bfloat16, uint8) and a centre crop (float32), NHWC -> NCHW
 * with flip: the geometry planned on the host per batch (included in the time) and PIL's antialiased
 * bilinear filter. --crops runs only those. --kernel times the resampling alone (one thread, a planned
 * job of --batch images, every dtype): the scalar, AVX2 and AVX-512 passes alternated, best of --reps;
 * --pass NAME times one of them alone (for perf), --nchw-in stores the sources NCHW (h5pack's default),
 * --sources N makes the batch cycle through N stored images (a few: sources in the cache; the default, one
 * per image: sources from memory, as the reader's are), --prefetch-ab times the fastest pass with the next
 * image's prefetch (reader/backend/backend_prefetch.h) on and off, alternated.
 * Output: one line per case with output GB/s, memcpy GB/s with the same thread count, and their ratio.
 * It drives the internal backend interface directly (reader/backend/backend.h): it measures the conversion
 * stage alone, without the file and cache side of the reader. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#ifdef H5PACK_HAVE_OPENMP
#include <omp.h>
#endif

#include "augment.h"
#include "augment_crops.h"
#include "backend.h"
#include "backend_prefetch.h"
#include "backend_resample.h"
#include "backend_resample_avx2.h"
#include "backend_resample_avx512.h"
#include "backend_resample_fixed.h"
#include "clock.h"
#include "sizes.h"

typedef struct bench_opts {
    size_t batch;
    uint32_t height, width;
    int threads, reps;
    uint32_t from_h, from_w; /* stored size of the resizing-crop cases */
    int crops_only, kernel;
    int pass; /* --kernel --pass: only this resampling pass (H5PACK_RESAMPLE_*; -1: all), e.g. under perf */
    int kernel_nchw; /* --kernel --nchw-in: stored images NCHW (as h5pack packs by default), else NHWC */
    size_t sources;  /* --kernel --sources N: the batch cycles through N stored images (0: one each); a few
                        stay in the cache, a batch of them does not */
    int prefetch_ab; /* --kernel --prefetch-ab: the next image's prefetch on and off, alternated */
} bench_opts;

static void copy_split(uint8_t *dst, const uint8_t *src, size_t bytes, int threads)
{
#ifdef H5PACK_HAVE_OPENMP
#pragma omp parallel for num_threads(threads) schedule(static, 1)
#endif
    for (int t = 0; t < threads; t++) {
        size_t part = bytes / (size_t)threads, off = part * (size_t)t;
        memcpy(dst + off, src + off, t == threads - 1 ? bytes - off : part);
    }
}

static void convert_batch(backend *b, const backend_params *p, int use_resubmit, uint64_t key)
{
    int rc = use_resubmit ? b->ops->resubmit(b, 0, h5pack_backend_job(p->batch_size, key), NULL, 0) : b->ops->submit(b, 0, h5pack_backend_job(p->batch_size, key), NULL, 0);
    if (rc != H5PACK_OK) {
        fprintf(stderr, "bench_convert_cpu: conversion failed (%d)\n", rc);
        exit(1);
    }
}

/* Conversion of one full batch (submit: 1 thread, resubmit: p->threads) and memcpy of the same output
 * bytes with the same thread count, alternated so both see the same machine load; best of REPS each
 * (the first round warms the pages and is not counted). */
static void time_pair(backend *b, const backend_params *p, int use_resubmit, uint8_t *dst, const uint8_t *src,
                      size_t bytes, int threads, int reps, double *convert_s, double *memcpy_s)
{
    *convert_s = *memcpy_s = 1e30;
    for (int r = 0; r < reps + 1; r++) {
        double t0 = h5pack_clock_s();
        convert_batch(b, p, use_resubmit, aug_batch_key(1, 0, (uint64_t)r, 0));
        double t1 = h5pack_clock_s();
        copy_split(dst, src, bytes, threads);
        double t2 = h5pack_clock_s();
        if (r > 0) {
            *convert_s = t1 - t0 < *convert_s ? t1 - t0 : *convert_s;
            *memcpy_s = t2 - t1 < *memcpy_s ? t2 - t1 : *memcpy_s;
        }
    }
}

static const char *dtype_name(h5pack_dtype d)
{
    static const char *names[] = {"float32", "float16", "bfloat16", "uint8"};
    return names[d];
}

static void run_case(const bench_opts *o, h5pack_dtype dtype, h5pack_layout in, h5pack_layout out, int flip, int pad,
                     int crop)
{
    backend_params p;
    memset(&p, 0, sizeof p);
    p.channels = 3, p.height = o->height, p.width = o->width;
    if (crop) { /* CROP_RANDOM_RESIZED = 1, CROP_CENTER = 2 (augment_geom.h) */
        p.crop = crop, p.height = o->from_h, p.width = o->from_w;
        p.out_height = p.max_out_height = o->height, p.out_width = p.max_out_width = o->width;
        p.scale_min = 0.08, p.scale_max = 1.0, p.ratio_min = 0.75, p.ratio_max = 4.0 / 3.0, p.center_ratio = 0.875;
    }
    p.in_layout = in, p.out_layout = out, p.dtype = dtype;
    p.batch_size = o->batch, p.slots = 1, p.threads = o->threads;
    const float mean[3] = {0.485f, 0.456f, 0.406f}, std[3] = {0.229f, 0.224f, 0.225f};
    for (int c = 0; c < 3; c++)
        p.mean[c] = mean[c], p.std[c] = std[c];
    p.random_flip = flip, p.crop_padding = pad;
    backend *b = NULL;
    char err[256];
    if (h5pack_backend_cpu_create(&p, &b, err, sizeof err) != H5PACK_OK) {
        fprintf(stderr, "bench_convert_cpu: %s\n", err);
        exit(1);
    }
    uint8_t *input = b->ops->host_input(b, 0);
    size_t in_bytes = p.batch_size * 3 * p.height * p.width;
    size_t out_bytes = p.batch_size * h5pack_backend_output_image_bytes(&p);
    rng_state rng = {7};
    for (size_t k = 0; k < in_bytes; k++)
        input[k] = (uint8_t)(rng_next(&rng) >> 56);
    uint8_t *src = malloc(out_bytes), *dst = malloc(out_bytes);
    if (!src || !dst) {
        fprintf(stderr, "bench_convert_cpu: out of memory\n");
        exit(1);
    }
    memset(src, 1, out_bytes);
    memset(dst, 0, out_bytes);
    for (int pass = 0; pass < 2; pass++) {
        int threads = pass == 0 ? 1 : o->threads;
        if (pass == 1 && o->threads < 2)
            break;
        double tc, tm;
        time_pair(b, &p, pass == 1, dst, src, out_bytes, threads, o->reps, &tc, &tm);
        if (crop)
            printf("%s crop %ux%u->%ux%u ", crop == 1 ? "random resized" : "centre", p.height, p.width, o->height,
                   o->width);
        printf("%-8s %s->%s flip=%d pad=%-2d threads=%d  convert %6.2f GB/s (%7.0f img/s)  memcpy %6.2f GB/s  "
               "ratio %.2f\n",
               dtype_name(dtype), in == H5PACK_LAYOUT_NCHW ? "nchw" : "nhwc", out == H5PACK_LAYOUT_NCHW ? "nchw" : "nhwc",
               flip, pad, threads, out_bytes / tc * 1e-9, (double)p.batch_size / tc, out_bytes / tm * 1e-9,
               tm / tc);
    }
    free(src);
    free(dst);
    b->ops->destroy(b);
}

/* 1 when this CPU runs pass SIMD (H5PACK_RESAMPLE_*). */
static int pass_runs(int simd)
{
    return simd <= h5pack_resample_best_pass();
}

/* How many images of J the integer AVX2 pass and the AVX-512 pass take themselves (the others go to the
 * next pass down: the figures of a pass that took fewer than all mix in its fallback). */
static void count_taken(const aug_job *j, size_t *fixed, size_t *wide)
{
    size_t fb = h5pack_resample_fixed_work_bytes(j), wb = h5pack_resample_avx512_work_bytes(j);
    void *work = NULL;
    *fixed = *wide = 0;
    if (posix_memalign(&work, 64, (fb > wb ? fb : wb) + 64) != 0)
        return;
    for (uint32_t i = 0; i < j->count; i++) {
        fixed_image f;
        *fixed += pass_runs(H5PACK_RESAMPLE_FIXED) && h5pack_resample_fixed_begin(j, i, work, &f) == 0;
        *wide += pass_runs(H5PACK_RESAMPLE_AVX512) && h5pack_resample_avx512_image(j, i, work, 0, NULL) == 0;
    }
    free(work);
}

/* --kernel --prefetch-ab: job J through the fastest pass (or --pass) with the next image's prefetch on
 * and off, alternated rep by rep (the machine's phases then move both alike): mean and best of each. */
static void prefetch_ab(const bench_opts *o, const aug_job *j, float *scratch, h5pack_dtype dtype)
{
    int simd = o->pass >= 0 ? o->pass : h5pack_resample_best_pass();
    double sum[2] = {0, 0}, best[2] = {1e30, 1e30};
    for (int r = 0; r <= o->reps; r++)
        for (int on = 1; on >= 0; on--) {
            h5pack_src_prefetch_set_enabled(on);
            double t0 = h5pack_clock_s();
            h5pack_resample_images_with(j, 0, (uint32_t)o->batch, scratch, simd);
            double t = h5pack_clock_s() - t0;
            if (r > 0) /* the first rep warms up */
                sum[on] += t, best[on] = t < best[on] ? t : best[on];
        }
    h5pack_src_prefetch_set_enabled(1);
    double n = (double)o->batch;
    printf("resample kernel %-8s 1 thread, sources %s: prefetch on %7.0f img/s (best %7.0f), off %7.0f img/s "
           "(best %7.0f), on/off %.2f\n",
           dtype_name(dtype), o->sources ? "cycled" : "one per image", n * o->reps / sum[1], n / best[1],
           n * o->reps / sum[0], n / best[0], sum[0] / sum[1]);
}

/* --kernel: one dtype's random resized crop job of o->batch stored images, resampled by each pass this
 * CPU runs in turn (one thread, best of reps each), with how many images the integer passes took. */
static void kernel_case(const bench_opts *o, h5pack_dtype dtype)
{
    backend_params p;
    memset(&p, 0, sizeof p);
    p.channels = 3, p.height = o->from_h, p.width = o->from_w, p.dtype = dtype, p.crop = 1, p.random_flip = 1;
    p.in_layout = o->kernel_nchw ? H5PACK_LAYOUT_NCHW : H5PACK_LAYOUT_NHWC, p.out_layout = H5PACK_LAYOUT_NCHW;
    p.batch_size = o->batch;
    p.scale_min = 0.08, p.scale_max = 1.0, p.ratio_min = 0.75, p.ratio_max = 4.0 / 3.0, p.center_ratio = 0.875;
    for (int c = 0; c < 3; c++)
        p.mean[c] = 0.45f, p.std[c] = 0.225f;
    aug_crops_params pp;
    h5pack_backend_crop_params(&p, &pp);
    size_t in_img = (size_t)3 * p.height * p.width;
    uint8_t *in = NULL;
    if (posix_memalign((void **)&in, (size_t)2 << 20, o->batch * in_img) != 0)
        in = NULL;
#ifdef MADV_HUGEPAGE
    if (in) /* the reader's sources are in a file mapping of huge folios (docs/reader.md): few TLB misses */
        (void)madvise(in, o->batch * in_img, MADV_HUGEPAGE);
#endif
    uint64_t *src = malloc(o->batch * sizeof *src);
    void *blob = malloc(h5pack_aug_blob_capacity(&pp, o->batch, o->height, o->width));
    void *out = NULL; /* aligned as the reader's batch buffers, so streaming stores apply as there */
    if (posix_memalign(&out, 64, o->batch * h5pack_backend_image_bytes_at(&p, o->height, o->width)) != 0)
        out = NULL;
    if (!in || !src || !blob || !out) {
        fprintf(stderr, "bench_convert_cpu: out of memory\n");
        exit(1);
    }
    rng_state rng = {9};
    for (size_t k = 0; k < o->batch * in_img; k++)
        in[k] = (uint8_t)(rng_next(&rng) >> 56);
    for (size_t i = 0; i < o->batch; i++)
        src[i] = (uint64_t)(uintptr_t)(in + (o->sources ? i % o->sources : i) * in_img);
    aug_job j;
    h5pack_aug_crops(&pp, 77, o->batch, o->height, o->width, src, blob, &j);
    j.out = out;
    float *scratch = malloc(sizeof(float) * h5pack_resample_scratch_floats(&j));
    double best[4] = {1e30, 1e30, 1e30, 1e30}; /* H5PACK_RESAMPLE_SCALAR, _FLOAT, _FIXED, _AVX512 */
    int wide = pass_runs(H5PACK_RESAMPLE_AVX512);
    size_t took_fixed, took_wide;
    count_taken(&j, &took_fixed, &took_wide);
    if (o->prefetch_ab) {
        prefetch_ab(o, &j, scratch, dtype);
        free(in), free(src), free(blob), free(out), free(scratch);
        return;
    }
    for (int r = 0; r <= o->reps; r++)
        for (int simd = 0; simd < 4; simd++) {
            if (!pass_runs(simd) || (o->pass >= 0 && simd != o->pass))
                continue;
            double t0 = h5pack_clock_s();
            h5pack_resample_images_with(&j, 0, (uint32_t)o->batch, scratch, simd);
            double t = h5pack_clock_s() - t0;
            if (r > 0 && t < best[simd])
                best[simd] = t;
        }
    static const char *const pass_names[] = {"scalar", "avx2 float", "avx2 int16", "avx512"};
    if (o->pass >= 0)
        printf("resample kernel %ux%u->%ux%u %-8s 1 thread: %s %7.0f img/s\n", p.height, p.width, o->height,
               o->width, dtype_name(dtype), pass_names[o->pass], o->batch / best[o->pass]);
    else if (!h5pack_resample_avx2_supported())
        printf("resample kernel %ux%u->%ux%u %-8s 1 thread: scalar %7.0f img/s  (no AVX2 with FMA on this CPU)\n",
               p.height, p.width, o->height, o->width, dtype_name(dtype), o->batch / best[0]);
    else {
        printf("resample kernel %ux%u->%ux%u %-8s 1 thread: scalar %7.0f img/s  avx2 float %7.0f img/s  avx2 int16 "
               "%7.0f img/s  int16/float %.2f",
               p.height, p.width, o->height, o->width, dtype_name(dtype), o->batch / best[0], o->batch / best[1],
               o->batch / best[2], best[1] / best[2]);
        if (wide)
            printf("  avx512 %7.0f img/s  avx512/int16 %.2f", o->batch / best[3], best[2] / best[3]);
        if (took_fixed < o->batch || (wide && took_wide < o->batch))
            printf("  (of %zu images the int16 pass took %zu, avx512 %zu; the rest the pass below)", o->batch,
                   took_fixed, wide ? took_wide : 0);
        printf("\n");
    }
    free(in), free(src), free(blob), free(out), free(scratch);
}

/* --pass NAME: H5PACK_RESAMPLE_SCALAR, _FLOAT, _FIXED or _AVX512; -1 for an unknown name. */
static int pass_named(const char *name)
{
    static const char *const names[] = {"scalar", "float", "fixed", "avx512"};
    for (int k = 0; k < 4; k++)
        if (!strcmp(name, names[k]))
            return k;
    return -1;
}

static int parse_args(int argc, char **argv, bench_opts *o)
{
    const char *argv_pass = "";
    uint64_t n = 0; /* --batch: a count in h5pack's size rule */
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(argv[i], "--batch") && v)
            o->batch = h5pack_parse_size(v, &n, NULL, 0) == H5PACK_SIZE_OK ? (size_t)n : 0, i++;
        else if (!strcmp(argv[i], "--size") && v && sscanf(v, "%ux%u", &o->height, &o->width) == 2)
            i++;
        else if (!strcmp(argv[i], "--threads") && v)
            o->threads = atoi(v), i++;
        else if (!strcmp(argv[i], "--reps") && v)
            o->reps = atoi(v), i++;
        else if (!strcmp(argv[i], "--crop-from") && v && sscanf(v, "%ux%u", &o->from_h, &o->from_w) == 2)
            i++;
        else if (!strcmp(argv[i], "--crops"))
            o->crops_only = 1;
        else if (!strcmp(argv[i], "--kernel"))
            o->kernel = 1;
        else if (!strcmp(argv[i], "--pass") && v && (o->pass = pass_named(v)) >= 0)
            argv_pass = v, i++;
        else if (!strcmp(argv[i], "--nchw-in"))
            o->kernel_nchw = 1;
        else if (!strcmp(argv[i], "--sources") && v)
            o->sources = (size_t)atol(v), i++;
        else if (!strcmp(argv[i], "--prefetch-ab"))
            o->prefetch_ab = 1;
        else {
            fprintf(stderr, "usage: %s [--batch N] [--size HxW] [--threads N] [--reps N] [--crop-from HxW] [--crops] [--kernel [--pass scalar|float|fixed|avx512] [--nchw-in] [--sources N] [--prefetch-ab]]\n",
                    argv[0]);
            return 1;
        }
    }
    if ((o->pass >= 0 || o->kernel_nchw || o->sources || o->prefetch_ab) && !o->kernel) {
        fprintf(stderr, "bench_convert_cpu: --pass, --nchw-in, --sources and --prefetch-ab go with --kernel\n");
        return 1;
    }
    if (o->pass >= 0 && !pass_runs(o->pass)) {
        fprintf(stderr, "bench_convert_cpu: --pass %s does not run on this CPU (no AVX2 with FMA%s)\n", argv_pass,
                o->pass == H5PACK_RESAMPLE_AVX512 ? ", or no AVX-512 VBMI and VNNI, or H5PACK_NO_AVX512 is on" : "");
        return 1;
    }
    if (o->batch < 1 || o->height < 1 || o->width < 1 || o->threads < 1 || o->reps < 1) {
        fprintf(stderr, "bench_convert_cpu: batch, size, threads and reps must be positive\n");
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    bench_opts o = {64, 224, 224, 2, 10, 256, 256, 0, 0, -1, 0, 0, 0};
    if (parse_args(argc, argv, &o))
        return 1;
    printf("CPU backend conversion, batch %zu of 3x%ux%u uint8 (output bytes/s; best of %d)\n", o.batch, o.height,
           o.width, o.reps);
    if (o.kernel) {
        for (int d = H5PACK_DTYPE_FLOAT32; d <= H5PACK_DTYPE_UINT8; d++)
            kernel_case(&o, (h5pack_dtype)d);
        return 0;
    }
    if (!o.crops_only) {
        run_case(&o, H5PACK_DTYPE_FLOAT32, H5PACK_LAYOUT_NCHW, H5PACK_LAYOUT_NCHW, 0, 0, 0);
        run_case(&o, H5PACK_DTYPE_FLOAT32, H5PACK_LAYOUT_NHWC, H5PACK_LAYOUT_NHWC, 0, 0, 0);
        run_case(&o, H5PACK_DTYPE_FLOAT32, H5PACK_LAYOUT_NHWC, H5PACK_LAYOUT_NCHW, 0, 0, 0);
        run_case(&o, H5PACK_DTYPE_FLOAT32, H5PACK_LAYOUT_NCHW, H5PACK_LAYOUT_NCHW, 1, 4, 0);
        run_case(&o, H5PACK_DTYPE_FLOAT16, H5PACK_LAYOUT_NCHW, H5PACK_LAYOUT_NCHW, 0, 0, 0);
        run_case(&o, H5PACK_DTYPE_BFLOAT16, H5PACK_LAYOUT_NHWC, H5PACK_LAYOUT_NCHW, 1, 4, 0);
        run_case(&o, H5PACK_DTYPE_UINT8, H5PACK_LAYOUT_NHWC, H5PACK_LAYOUT_NCHW, 0, 0, 0);
    }
    for (int d = H5PACK_DTYPE_FLOAT32; d <= H5PACK_DTYPE_UINT8; d++)
        run_case(&o, (h5pack_dtype)d, H5PACK_LAYOUT_NHWC, H5PACK_LAYOUT_NCHW, 1, 0, 1);
    run_case(&o, H5PACK_DTYPE_FLOAT32, H5PACK_LAYOUT_NHWC, H5PACK_LAYOUT_NCHW, 0, 0, 2);
    return 0;
}
