/* test_floatpath_layouts.c - the float32 conversion in every (stored layout, output layout) pair, with
 * and without flip and padding, against the table loops and a naive model, byte for byte.
 *
 * 1. The kernel (backend_convert.h): for 1 to 4 channels, widths 1 to 33 (tails of every length below
 *    8), padding wider than the image, images over one staging chunk and widths around the staging's
 *    16- and 32-byte groups, ordinary and non-temporal stores, two normalisations and every
 *    byte value, each image converted by the table loops (mode SCALAR) must equal the naive formula
 *    under the augment.h draw, and the AVX2 kernel (ARITH, the default, and TABLE) must equal the
 *    table loops, at every output alignment, writing nothing outside its images (guard bytes).
 * 2. The reader: files of 1, 2, 3 and 4 channels stored NCHW and NHWC with odd widths, read one-pass
 *    and two-pass (H5PACK_TWO_PASS=1) into both output layouts, flip and padding on and off: both runs
 *    give the same bytes and each batch equals the model; one case has batches over the size where
 *    non-temporal stores are used. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "augment.h"
#include "backend_convert.h"
#include "check.h"
#include "h5fixture.h"
#include "h5pack.h"
#include "reader_drain.h"

#define GUARD 96
#define GUARD_BYTE 0xA5

static const float NORMS[2][2][4] = {{{0.485f, 0.456f, 0.406f, 0.5f}, {0.229f, 0.224f, 0.225f, 0.25f}},
                                     {{0.9f, -0.3f, 0.013f, 1.7f}, {3.7f, 0.011f, 0.61f, 0.093f}}};

/* The model of element (c, y, x) of an image: the stored byte under draw D (0 in the padding) through
 * ((float)v / 255 - mean) / std. */
static float model_at(const backend_params *p, const uint8_t *img, aug_draw d, uint32_t c, int y, int x)
{
    int sy = aug_src_y(d, y, p->crop_padding), sx = aug_src_x(d, x, (int)p->width, p->crop_padding);
    uint8_t v = 0;
    if (sy >= 0 && sy < (int)p->height && sx >= 0 && sx < (int)p->width) {
        size_t H = p->height, W = p->width, C = p->channels;
        v = img[p->in_layout == H5PACK_LAYOUT_NHWC ? ((size_t)sy * W + (size_t)sx) * C + c
                                                   : ((size_t)c * H + (size_t)sy) * W + (size_t)sx];
    }
    return ((float)v / 255.0f - p->mean[c]) / p->std[c];
}

static size_t out_index(const backend_params *p, uint32_t c, int y, int x)
{
    size_t H = p->height, W = p->width, C = p->channels;
    return p->out_layout == H5PACK_LAYOUT_NHWC ? ((size_t)y * W + (size_t)x) * C + c
                                               : ((size_t)c * H + (size_t)y) * W + (size_t)x;
}

typedef struct kcase {
    uint32_t C, H, W;
    int nhwc_in, nhwc_out, flip, pad, stream, norm;
    size_t shift; /* the batch starts SHIFT bytes past a 64-byte boundary */
} kcase;

/* Converts N images of SRC with CV (mode MODE) into a guarded buffer; returns the batch (inside BUF). */
static uint8_t *convert_batch(const backend_conv *cv0, int mode, const uint8_t *src, size_t n, uint64_t key,
                              uint8_t *buf, size_t shift)
{
    backend_conv cv = *cv0;
    cv.simd.mode = mode;
    size_t bytes = n * cv.out_bytes;
    memset(buf, GUARD_BYTE, GUARD + shift + bytes + GUARD);
    uint8_t *out = buf + GUARD + shift;
    for (size_t i = 0; i < n; i++)
        h5pack_backend_conv_image(&cv, src + i * cv.in_bytes, out, i, key);
    for (size_t k = 0; k < GUARD + shift; k++)
        CHECK_MSG(buf[k] == GUARD_BYTE, "mode %d wrote %zu bytes before the batch", mode, GUARD + shift - k);
    for (size_t k = 0; k < GUARD; k++)
        CHECK_MSG(out[bytes + k] == GUARD_BYTE, "mode %d wrote byte %zu after the batch", mode, k);
    return out;
}

static void kernel_case(const kcase *k, int avx2)
{
    enum { N = 12 };
    backend_params p = {.channels = k->C, .height = k->H, .width = k->W, .dtype = H5PACK_DTYPE_FLOAT32,
                        .in_layout = k->nhwc_in ? H5PACK_LAYOUT_NHWC : H5PACK_LAYOUT_NCHW,
                        .out_layout = k->nhwc_out ? H5PACK_LAYOUT_NHWC : H5PACK_LAYOUT_NCHW, .batch_size = N,
                        .random_flip = k->flip, .crop_padding = k->pad, .slots = 1, .threads = 1};
    memcpy(p.mean, NORMS[k->norm][0], sizeof p.mean);
    memcpy(p.std, NORMS[k->norm][1], sizeof p.std);
    backend_conv cv;
    h5pack_backend_conv_init(&cv, &p);
    cv.stream = k->stream;
    CHECK_EQ_INT(cv.simd.mode, avx2 ? H5PACK_CONV_ARITH : H5PACK_CONV_SCALAR);
    size_t img = cv.in_bytes, fl = (size_t)k->C * k->H * k->W;
    size_t buf_bytes = (2 * GUARD + 64 + N * cv.out_bytes + 63) / 64 * 64; /* aligned_alloc: a multiple */
    uint8_t *src = malloc(N * img), *buf = aligned_alloc(64, buf_bytes);
    float *want = malloc(fl * sizeof *want);
    CHECK(src && buf && want);
    uint64_t seed = 0x9E3779B97F4A7C15ull * (k->C * 1000003u + k->W * 131u + k->H);
    for (size_t b = 0; b < N * img; b++) { /* every byte value, 0 and 255 included */
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        src[b] = b < 256 ? (uint8_t)b : (uint8_t)(seed >> 56);
    }
    uint64_t key = 1;
    int flips = 0;
    do { /* a key whose draws flip some images and not others */
        key++, flips = 0;
        for (size_t i = 0; i < N; i++)
            flips += aug_draw_for(key, i, k->flip, k->pad).flip;
    } while (k->flip && (flips == 0 || flips == N));
    char what[160];
    snprintf(what, sizeof what, "C %u H %u W %u %s->%s flip %d pad %d stream %d norm %d shift %zu", k->C, k->H, k->W,
             k->nhwc_in ? "NHWC" : "NCHW", k->nhwc_out ? "NHWC" : "NCHW", k->flip, k->pad, k->stream, k->norm,
             k->shift);
    uint8_t *ref = convert_batch(&cv, H5PACK_CONV_SCALAR, src, N, key, buf, k->shift);
    for (size_t i = 0; i < N; i++) {
        aug_draw d = aug_draw_for(key, i, k->flip, k->pad);
        for (uint32_t c = 0; c < k->C; c++)
            for (int y = 0; y < (int)k->H; y++)
                for (int x = 0; x < (int)k->W; x++)
                    want[out_index(&p, c, y, x)] = model_at(&p, src + i * img, d, c, y, x);
        CHECK_MSG(memcmp(ref + i * cv.out_bytes, want, fl * sizeof *want) == 0, "%s: table loops != model, image %zu",
                  what, i);
    }
    uint8_t *ref_copy = malloc(N * cv.out_bytes);
    CHECK(ref_copy);
    memcpy(ref_copy, ref, N * cv.out_bytes);
    const int modes[] = {H5PACK_CONV_ARITH, H5PACK_CONV_TABLE};
    for (int m = 0; avx2 && m < 2; m++) {
        uint8_t *got = convert_batch(&cv, modes[m], src, N, key, buf, k->shift);
        for (size_t b = 0; b < N * cv.out_bytes; b++)
            CHECK_MSG(got[b] == ref_copy[b], "%s: AVX2 mode %d differs from the table loops at byte %zu (image %zu)",
                      what, modes[m], b, b / cv.out_bytes);
    }
    free(src), free(buf), free(want), free(ref_copy);
}

static void kernel_sweep(void)
{
    int avx2 = h5pack_conv_avx2_supported();
    if (!avx2)
        printf("floatpath_layouts: no AVX2 on this CPU: only the table loops are checked (against the model)\n");
    const uint32_t widths[] = {1, 3, 7, 8, 9, 13, 16, 23, 33};
    const uint32_t heights[] = {1, 5};
    const int pads[] = {0, 1, 3, 40};
    size_t cases = 0;
    for (uint32_t C = 1; C <= 4; C++)
        for (size_t wi = 0; wi < sizeof widths / sizeof *widths; wi++)
            for (size_t hi = 0; hi < 2; hi++)
                for (int lay = 0; lay < 4; lay++)
                    for (int flip = 0; flip < 2; flip++)
                        for (size_t pi = 0; pi < 4; pi++) {
                            kcase k = {.C = C, .H = heights[hi], .W = widths[wi], .nhwc_in = lay & 1,
                                       .nhwc_out = lay >> 1, .flip = flip, .pad = pads[pi],
                                       .stream = (int)((wi + pi + (size_t)flip) % 2), .norm = (int)((wi + hi) % 2),
                                       .shift = 4 * ((cases * 5) % 16)};
                            kernel_case(&k, avx2);
                            cases++;
                        }
    /* Images over one staging chunk (8192 / C pixels; flipped and padded images are staged) and widths
     * around the staging's 16- and 32-byte groups. */
    const uint32_t large[][2] = {{97, 89}, {64, 40}, {3, 47}, {2, 64}, {2, 65}, {1, 31}};
    for (uint32_t C = 1; C <= 4; C++)
        for (size_t si = 0; si < sizeof large / sizeof *large; si++)
            for (int lay = 0; lay < 4; lay++)
                for (int pad = 0; pad <= 5; pad += 5) {
                    kcase k = {.C = C, .H = large[si][0], .W = large[si][1], .nhwc_in = lay & 1, .nhwc_out = lay >> 1,
                               .flip = 1, .pad = pad, .stream = (int)(si % 2), .norm = (int)(C % 2),
                               .shift = 4 * ((cases * 5) % 16)};
                    kernel_case(&k, avx2);
                    cases++;
                }
    printf("floatpath_layouts: %zu kernel cases: AVX2 == table loops == model\n", cases);
}

/* ---- through the reader ------------------------------------------------------------------------- */

typedef struct run_out {
    uint8_t *data;
    size_t bytes;
    uint64_t batches;
} run_out;

static void check_batch(const h5fix_file *sp, const h5pack_config *cfg, const h5pack_info *info, const h5pack_batch *b,
                        const char *what)
{
    backend_params p = {.channels = sp->c, .height = sp->h, .width = sp->w, .crop_padding = cfg->random_crop_padding,
                        .out_layout = info->output_layout};
    memcpy(p.mean, info->mean, sizeof p.mean);
    memcpy(p.std, info->std, sizeof p.std);
    uint64_t key = aug_batch_key(cfg->seed, b->epoch, b->index, b->echo);
    size_t fl = (size_t)sp->c * sp->h * sp->w;
    for (size_t i = 0; i < b->count; i++) {
        aug_draw d = aug_draw_for(key, i, cfg->random_flip, cfg->random_crop_padding);
        const float *got = (const float *)b->data + i * fl;
        for (uint32_t c = 0; c < sp->c; c++)
            for (int y = 0; y < (int)sp->h; y++)
                for (int x = 0; x < (int)sp->w; x++) {
                    int sy = aug_src_y(d, y, p.crop_padding), sx = aug_src_x(d, x, (int)sp->w, p.crop_padding);
                    int inside = sy >= 0 && sy < (int)sp->h && sx >= 0 && sx < (int)sp->w;
                    uint8_t v = inside ? h5fix_chw_value(b->indices[i], c, (uint32_t)sy, (uint32_t)sx) : 0;
                    float want = ((float)v / 255.0f - p.mean[c]) / p.std[c];
                    CHECK_MSG(memcmp(&got[out_index(&p, c, y, x)], &want, 4) == 0,
                              "%s: batch %llu image %zu c %u y %d x %d differs from the model", what,
                              (unsigned long long)b->index, i, c, y, x);
                }
    }
}

/* What each delivered batch does to a run (test_drain_reader_each's callback). */
typedef struct drain_ctx {
    run_out *o;
    const h5fix_file *sp;
    const h5pack_config *cfg;
    const char *what;
} drain_ctx;

static void take_batch(void *ctx, const h5pack_info *info, const h5pack_batch *b)
{
    drain_ctx *d = ctx;
    CHECK_EQ_INT(info->input_layout, d->sp->nhwc ? H5PACK_LAYOUT_NHWC : H5PACK_LAYOUT_NCHW);
    check_batch(d->sp, d->cfg, info, b, d->what);
    d->o->data = realloc(d->o->data, d->o->bytes + b->bytes);
    CHECK(d->o->data != NULL);
    memcpy(d->o->data + d->o->bytes, b->data, b->bytes);
    d->o->bytes += b->bytes, d->o->batches++;
}

static run_out drain(const char *path, const h5fix_file *sp, const h5pack_config *cfg, int two_pass, const char *what)
{
    setenv("H5PACK_TWO_PASS", two_pass ? "1" : "0", 1);
    run_out o = {0};
    drain_ctx d = {.o = &o, .sp = sp, .cfg = cfg, .what = what};
    h5pack_stats st = test_drain_reader_each(path, cfg, take_batch, &d);
    if (!two_pass)
        CHECK_MSG(st.busy_assemble_s == 0.0 && st.busy_convert_s > 0.0, "%s: not one-pass (assemble %g convert %g)",
                  what, st.busy_assemble_s, st.busy_convert_s);
    return o;
}

static void reader_file(const h5fix_file *sp, size_t batch, const int (*augs)[2], size_t n_augs)
{
    char path[96], tag[32];
    snprintf(tag, sizeof tag, "fpl_c%u_%s", sp->c, sp->nhwc ? "nhwc" : "nchw");
    h5fix_local_name(path, sizeof path, tag);
    CHECK_OK(h5fix_write(path, sp));
    for (int out = 0; out < 2; out++)
        for (size_t a = 0; a < n_augs; a++) {
            h5pack_config cfg = H5PACK_CONFIG_DEFAULTS;
            cfg.device = H5PACK_DEVICE_CPU, cfg.batch_size = batch, cfg.epochs = 1, cfg.threads = 2, cfg.seed = 7;
            cfg.order = H5PACK_ORDER_RANDOM, cfg.dtype = H5PACK_DTYPE_FLOAT32;
            cfg.output_layout = out ? H5PACK_LAYOUT_NHWC : H5PACK_LAYOUT_NCHW;
            cfg.random_flip = augs[a][0], cfg.random_crop_padding = augs[a][1];
            cfg.norm = H5PACK_NORM_CUSTOM;
            memcpy(cfg.mean, NORMS[1][0], sizeof cfg.mean);
            memcpy(cfg.std, NORMS[1][1], sizeof cfg.std);
            char what[128];
            snprintf(what, sizeof what, "%u x %u x %u stored %s, %s out, flip %d, pad %d", sp->c, sp->h, sp->w,
                     sp->nhwc ? "NHWC" : "NCHW", out ? "NHWC" : "NCHW", augs[a][0], augs[a][1]);
            run_out one = drain(path, sp, &cfg, 0, what), two = drain(path, sp, &cfg, 1, what);
            CHECK_MSG(one.bytes == two.bytes && one.batches == two.batches && one.bytes > 0, "%s: %zu vs %zu bytes",
                      what, one.bytes, two.bytes);
            CHECK_MSG(memcmp(one.data, two.data, one.bytes) == 0, "%s: one-pass and two-pass differ", what);
            free(one.data), free(two.data);
        }
    remove(path);
}

static void reader_sweep(void)
{
    static const int augs[][2] = {{0, 0}, {1, 0}, {0, 2}, {1, 3}};
    const uint32_t shapes[][3] = {{1, 7, 13}, {2, 5, 9}, {3, 6, 29}, {4, 5, 11}}; /* C, H, W */
    for (size_t s = 0; s < 4; s++)
        for (int nhwc = 0; nhwc < 2; nhwc++) {
            h5fix_file sp = {.n = 27, .c = shapes[s][0], .h = shapes[s][1], .w = shapes[s][2], .k = 4, .nhwc = nhwc,
                             .labels = 1, .label_type = H5FIX_UINT16, .n_classes = 5,
                             .layout_attr = nhwc ? "NHWC" : "NCHW", .pixel = h5fix_pixel_chw};
            reader_file(&sp, 8, augs, 4);
        }
    /* float32 batches of 64 x 4x67x131 (8.6 MiB): over the size where non-temporal stores are used */
    h5fix_file big = {.n = 128, .c = 4, .h = 67, .w = 131, .k = 8, .nhwc = 1, .labels = 1, .label_type = H5FIX_UINT16,
                      .n_classes = 5, .layout_attr = "NHWC", .pixel = h5fix_pixel_chw};
    CHECK((size_t)64 * 4 * 67 * 131 * 4 >= (size_t)8 << 20);
    static const int big_augs[][2] = {{0, 0}, {1, 2}};
    reader_file(&big, 64, big_augs, 2);
    printf("floatpath_layouts: reader one-pass == two-pass == model for 1-4 channels, both layouts in and out\n");
}

int main(void)
{
    kernel_sweep();
    reader_sweep();
    return 0;
}
