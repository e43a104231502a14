/* bench_resize - time image_fit on synthesized images (no decoding) and check it against the
 * pre-speed-up implementation (resize_reference.c).
 *   bench_resize [--reps N] [--case I]   ms/image for each case (or case I only), library vs reference,
 *                                        best of 5 interleaved rounds
 *   bench_resize --check [N]     N random geometries (default 3000) + fixed cases: every output byte equal
 *   --portable (anywhere)        the library uses its plain C passes, not AVX2 (timing the fallback)
 * Exit status: 0 when all checks pass (or after timing), 1 on the first mismatch. */
#include "image.h"
#include "resize_internal.h"

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

image_status reference_image_fit(const image_u8 *src, uint32_t h, uint32_t w, resize_mode mode, image_u8 *dst);

static double now_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static uint32_t rng_next(uint64_t *s) /* xorshift64*: reproducible content and geometries */
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return (uint32_t)((*s * 2685821657736338717ull) >> 32);
}

/* Camera-like content (gradients + grain) or, with HARSH, 0/255 noise that drives the filter to clip. */
static int synth(image_u8 *img, uint32_t h, uint32_t w, uint32_t c, int harsh, uint64_t seed)
{
    img->pixels = malloc((size_t)h * w * c);
    img->height = h;
    img->width = w;
    img->channels = c;
    if (!img->pixels)
        return -1;
    uint64_t s = seed | 1;
    for (uint32_t y = 0; y < h; y++)
        for (uint32_t x = 0; x < w; x++)
            for (uint32_t ch = 0; ch < c; ch++) {
                uint32_t r = rng_next(&s);
                uint32_t v = harsh ? ((r & 1) ? 255u : 0u) : (x * 200 / w + y * 50 / h + ch * 20 + (r & 15)) & 255;
                img->pixels[((size_t)y * w + x) * c + ch] = (uint8_t)v;
            }
    return 0;
}

static const char *mode_name(resize_mode m)
{
    return m == RESIZE_CROP ? "crop" : m == RESIZE_STRETCH ? "stretch" : "pad";
}

/* One geometry: library and reference must agree on status, size and every byte. */
static int check_one(const image_u8 *src, uint32_t h, uint32_t w, resize_mode mode)
{
    image_u8 a, b;
    image_status sa = image_fit(src, h, w, mode, &a), sb = reference_image_fit(src, h, w, mode, &b);
    int ok = sa == sb && (sa != IMAGE_OK || (a.width == b.width && a.height == b.height &&
                                            a.channels == b.channels &&
                                            memcmp(a.pixels, b.pixels, (size_t)h * w * a.channels) == 0));
    if (!ok)
        fprintf(stderr, "MISMATCH %ux%u c=%u -> %ux%u %s\n", src->width, src->height, src->channels, w, h,
                mode_name(mode));
    image_free(&a);
    image_free(&b);
    return ok ? 0 : -1;
}

static uint32_t pick_size(uint64_t *s)
{
    uint32_t r = rng_next(s);
    switch (r % 4) {
    case 0: return 1 + rng_next(s) % 8;     /* tiny: 1-pixel edges */
    case 1: return 1 + rng_next(s) % 64;
    case 2: return 1 + rng_next(s) % 400;
    default: return 1 + rng_next(s) % 1800; /* large downscales: wide kernels */
    }
}

static int run_checks(unsigned n)
{
    static const uint32_t fixed[][4] = {{313, 234, 224, 224}, {500, 375, 224, 224}, {1600, 1200, 224, 224},
                                        {224, 224, 224, 224}, {375, 500, 224, 224}, {234, 313, 224, 224},
                                        {100, 75, 224, 224},  {1, 1, 224, 224},    {5000, 3, 7, 224}};
    uint64_t s = 12345;
    unsigned done = 0;
    for (unsigned f = 0; f < sizeof fixed / sizeof fixed[0]; f++)
        for (uint32_t c = 1; c <= 4; c++)
            for (int harsh = 0; harsh < 2; harsh++) {
                image_u8 src;
                if (synth(&src, fixed[f][1], fixed[f][0], c, harsh, s++) != 0)
                    return -1;
                for (int m = 0; m < 3; m++, done++)
                    if (check_one(&src, fixed[f][3], fixed[f][2], (resize_mode)m) != 0)
                        return -1;
                image_free(&src);
            }
    for (unsigned i = 0; i < n; i++) {
        uint32_t sw = pick_size(&s), sh = pick_size(&s), w = 1 + rng_next(&s) % 300, h = 1 + rng_next(&s) % 300;
        if ((uint64_t)sw * sh > 1u << 20)
            sh = (1u << 20) / sw; /* keep the sweep quick */
        uint32_t c = 1 + rng_next(&s) % 4;
        image_u8 src;
        if (synth(&src, sh, sw, c, (int)(rng_next(&s) & 1), s) != 0)
            return -1;
        for (int m = 0; m < 3; m++, done++)
            if (check_one(&src, h, w, (resize_mode)m) != 0)
                return -1;
        image_free(&src);
    }
    printf("check: %u geometries, image_fit identical to the reference\n", done);
    return 0;
}

typedef image_status (*fit_fn)(const image_u8 *, uint32_t, uint32_t, resize_mode, image_u8 *);

/* Seconds per call of FN over REPS calls. */
static double time_fit(fit_fn fn, const image_u8 *src, uint32_t h, uint32_t w, resize_mode mode, unsigned reps)
{
    double t0 = now_seconds();
    for (unsigned r = 0; r < reps; r++) {
        image_u8 out;
        if (fn(src, h, w, mode, &out) != IMAGE_OK) {
            fprintf(stderr, "image_fit failed\n");
            exit(1);
        }
        image_free(&out);
    }
    return (now_seconds() - t0) / reps;
}

static int run_timing(unsigned reps, int only)
{
    static const struct { uint32_t sw, sh, c, w, h; resize_mode mode; } cases[] = {
        {313, 234, 3, 224, 224, RESIZE_CROP},    {500, 375, 3, 224, 224, RESIZE_CROP},
        {1600, 1200, 3, 224, 224, RESIZE_CROP},  {313, 234, 1, 224, 224, RESIZE_CROP},
        {500, 375, 1, 224, 224, RESIZE_CROP},    {500, 375, 3, 224, 224, RESIZE_STRETCH},
        {500, 375, 3, 224, 224, RESIZE_PAD},     {1600, 1200, 1, 224, 224, RESIZE_CROP},
    };
    printf("%-28s %10s %10s %7s\n", "case", "new ms", "ref ms", "speedup");
    for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (only >= 0 && (unsigned)only != i)
            continue;
        image_u8 src;
        if (synth(&src, cases[i].sh, cases[i].sw, cases[i].c, 0, 7 + i) != 0)
            return -1;
        /* Interleaved rounds, best of each: other load on the machine hits both alike. */
        double best_new = 1e9, best_ref = 1e9;
        unsigned round_reps = reps / 5 ? reps / 5 : 1;
        for (int round = 0; round < 5; round++) {
            double tn = time_fit(image_fit, &src, cases[i].h, cases[i].w, cases[i].mode, round_reps);
            double tr = time_fit(reference_image_fit, &src, cases[i].h, cases[i].w, cases[i].mode, round_reps);
            best_new = tn < best_new ? tn : best_new;
            best_ref = tr < best_ref ? tr : best_ref;
        }
        char name[64];
        snprintf(name, sizeof name, "%ux%u %s -> %ux%u %s", cases[i].sw, cases[i].sh, cases[i].c == 3 ? "RGB" : "L",
                 cases[i].w, cases[i].h, mode_name(cases[i].mode));
        printf("%-28s %10.4f %10.4f %6.2fx\n", name, best_new * 1e3, best_ref * 1e3, best_ref / best_new);
        image_free(&src);
    }
    return 0;
}

int main(int argc, char **argv)
{
    int portable = !resize_avx2_available();
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--portable") == 0) {
            resize_set_path(RESIZE_PATH_PORTABLE);
            portable = 1;
            memmove(argv + i, argv + i + 1, sizeof *argv * (size_t)(argc - i)); /* argv[argc] is NULL */
            argc--;
            break;
        }
    printf("library resize passes: %s\n", portable ? "portable C" : "AVX2");
    if (argc > 1 && strcmp(argv[1], "--check") == 0)
        return run_checks(argc > 2 ? (unsigned)atoi(argv[2]) : 3000) == 0 ? 0 : 1;
    /* As convert/h5pack_main.c: without it every 150 KB buffer is a fresh mmap and its page faults are timed. */
    mallopt(M_MMAP_THRESHOLD, 256 << 20);
    mallopt(M_TRIM_THRESHOLD, 512 << 20);
    unsigned reps = 500;
    int only = -1;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--reps") == 0)
            reps = (unsigned)atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--case") == 0)
            only = atoi(argv[i + 1]);
    }
    return run_timing(reps ? reps : 1, only) == 0 ? 0 : 1;
}
