/* test_resize_paths - image_fit's AVX2 passes give exactly the bytes of its portable (plain C) passes:
 * fixed geometries (the converter's usual ones, 1-pixel edges, huge downscales with wide kernels, rows
 * not a multiple of 8 so the AVX2 pass's bottom-row copy runs) and seeded random ones, every mode,
 * 1 to 4 channels, camera-like content, 0/255 noise (drives the sums to clip) and all-255 (largest sums).
 *   test_resize_paths [N [MAX]]  N random geometries (default 600); sources above MAX pixels left out
 *                                (default: none; the memcheck test runs a small sweep under valgrind)
 * Exit 77 ("skipped: no AVX2") on a CPU or build without the AVX2 passes. */
#include "check.h"
#include "image.h"
#include "resize_internal.h"

static uint32_t rng_next(uint64_t *s) /* xorshift64* */
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return (uint32_t)((*s * 2685821657736338717ull) >> 32);
}

enum content { CAMERA, NOISE, WHITE };

static image_u8 synth(uint32_t h, uint32_t w, uint32_t c, enum content kind, uint64_t seed)
{
    image_u8 img = {.pixels = malloc((size_t)h * w * c), .width = w, .height = h, .channels = c};
    CHECK(img.pixels);
    uint64_t s = seed | 1;
    for (size_t i = 0; i < (size_t)h * w * c; i++) {
        uint32_t r = rng_next(&s), x = (uint32_t)(i / c % w), y = (uint32_t)(i / c / w);
        img.pixels[i] = kind == WHITE   ? 255
                        : kind == NOISE ? ((r & 1) ? 255 : 0)
                                        : (uint8_t)((x * 200 / w + y * 50 / h + (i % c) * 20 + (r & 15)) & 255);
    }
    return img;
}

static const char *mode_name(resize_mode m)
{
    return m == RESIZE_CROP ? "crop" : m == RESIZE_STRETCH ? "stretch" : "pad";
}

/* Both paths on SRC -> H x W in MODE: same status, same bytes. */
static void compare_paths(const image_u8 *src, uint32_t h, uint32_t w, resize_mode mode)
{
    image_u8 a, b;
    CHECK_OK(resize_set_path(RESIZE_PATH_PORTABLE));
    image_status sa = image_fit(src, h, w, mode, &a);
    CHECK_OK(resize_set_path(RESIZE_PATH_AVX2));
    image_status sb = image_fit(src, h, w, mode, &b);
    CHECK_MSG(sa == IMAGE_OK && sb == IMAGE_OK, "%ux%u c=%u -> %ux%u %s: status %d / %d", src->width,
              src->height, src->channels, w, h, mode_name(mode), (int)sa, (int)sb);
    size_t n = (size_t)h * w * src->channels;
    for (size_t i = 0; i < n; i++)
        CHECK_MSG(a.pixels[i] == b.pixels[i], "%ux%u c=%u -> %ux%u %s: byte %zu (y %zu x %zu ch %zu) portable %u, "
                  "AVX2 %u", src->width, src->height, src->channels, w, h, mode_name(mode), i,
                  i / src->channels / w, i / src->channels % w, i % src->channels, a.pixels[i], b.pixels[i]);
    image_free(&a);
    image_free(&b);
}

static void all_modes(uint32_t sw, uint32_t sh, uint32_t c, enum content kind, uint32_t w, uint32_t h, uint64_t seed)
{
    image_u8 src = synth(sh, sw, c, kind, seed);
    for (int m = 0; m < 3; m++)
        compare_paths(&src, h, w, (resize_mode)m);
    image_free(&src);
}

static uint32_t pick_size(uint64_t *s)
{
    switch (rng_next(s) % 4) {
    case 0: return 1 + rng_next(s) % 9;   /* 1-pixel edges, fewer than 8 rows */
    case 1: return 1 + rng_next(s) % 70;
    case 2: return 1 + rng_next(s) % 400;
    default: return 1 + rng_next(s) % 1500; /* large downscales: wide kernels */
    }
}

int main(int argc, char **argv)
{
    if (!resize_avx2_available())
        SKIP_TEST("no AVX2 (this CPU or build has only the portable passes)");
    unsigned n_random = argc > 1 ? (unsigned)atoi(argv[1]) : 600;
    uint64_t max_pixels = argc > 2 ? strtoull(argv[2], NULL, 10) : UINT64_MAX;
    /* source w, h -> target w, h */
    static const uint32_t fixed[][4] = {
        {313, 234, 224, 224}, {500, 375, 224, 224}, {1600, 1200, 224, 224}, {224, 224, 224, 224},
        {375, 500, 224, 224}, {100, 75, 224, 224},  {1, 1, 224, 224},       {5000, 3, 7, 224},
        {38, 38, 32, 32},     {13, 13, 32, 32},     {101, 67, 17, 40},      {9, 1, 5, 3},
        {2, 3, 1, 1},         {1, 1500, 31, 29},    {17, 15, 16, 16},       {640, 9, 64, 8},
    };
    uint64_t seed = 99;
    unsigned done = 0;
    for (size_t f = 0; f < sizeof fixed / sizeof fixed[0]; f++)
        for (uint32_t c = 1; c <= 4 && (uint64_t)fixed[f][0] * fixed[f][1] <= max_pixels; c++)
            for (int kind = CAMERA; kind <= WHITE; kind++, done += 3)
                all_modes(fixed[f][0], fixed[f][1], c, (enum content)kind, fixed[f][2], fixed[f][3], seed++);
    for (unsigned i = 0; i < n_random; i++, done += 3) {
        uint32_t sw = pick_size(&seed), sh = pick_size(&seed);
        uint32_t w = 1 + rng_next(&seed) % 300, h = 1 + rng_next(&seed) % 300;
        uint64_t cap = max_pixels < (1u << 19) ? max_pixels : (1u << 19); /* keeps the test quick */
        if ((uint64_t)sw * sh > cap)
            sh = (uint32_t)(cap / sw) ? (uint32_t)(cap / sw) : 1;
        uint32_t c = (i % 3 == 2) ? 1 + rng_next(&seed) % 4 : (i % 3 ? 1 : 3); /* mostly the converter's 1, 3 */
        all_modes(sw, sh, c, (enum content)(rng_next(&seed) % 3), w, h, seed);
    }
    CHECK_OK(resize_set_path(RESIZE_PATH_AUTO));
    printf("%u fits: AVX2 passes byte for byte equal to the portable passes\n", done);
    return 0;
}
