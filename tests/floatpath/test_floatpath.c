/* test_floatpath.c - the CPU backend's one-pass path (workers convert each image straight from the
 * cached or mapped chunk into the output batch) against the two-pass path (H5PACK_TWO_PASS=1: the uint8
 * batch is assembled, then converted), byte for byte, over every output dtype, both layouts in and out,
 * flips, pad-and-crop, normalisations, 1 and 2 threads, mapped / pread / gzip chunks, short last
 * batches; and both against a naive per-element model (table formula, augment.h draws), so a change in
 * the shared kernels cannot hide behind "both paths agree". One case has batches over the size where
 * float32 runs use non-temporal stores, with odd widths (unaligned row starts). Batch and sample echo
 * take the two-pass path (their echoes need the uint8 pixels): checked to agree too. The stats must say
 * what ran: one-pass assembles nothing (busy_assemble_s 0) and converts (busy_convert_s > 0). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "augment.h"
#include "check.h"
#include "h5fixture.h"
#include "h5pack.h"
#include "halfbits.h"
#include "reader_drain.h"

typedef struct run_out {
    uint8_t *data;  /* every delivered batch's bytes, concatenated */
    size_t bytes;
    int64_t *labels;
    size_t n_labels;
    double assemble_s, convert_s;
    uint64_t batches;
} run_out;

static void append(run_out *o, const void *data, size_t bytes, const int64_t *labels, size_t count)
{
    o->data = realloc(o->data, o->bytes + bytes);
    CHECK(o->data != NULL);
    memcpy(o->data + o->bytes, data, bytes);
    o->bytes += bytes;
    if (labels) {
        o->labels = realloc(o->labels, (o->n_labels + count) * sizeof *o->labels);
        CHECK(o->labels != NULL);
        memcpy(o->labels + o->n_labels, labels, count * sizeof *labels);
        o->n_labels += count;
    }
}

static size_t dtype_size(h5pack_dtype d)
{
    return d == H5PACK_DTYPE_FLOAT32 ? 4 : d == H5PACK_DTYPE_UINT8 ? 1 : 2;
}

/* The naive model of output element (c, y, x) of image i: the stored pixel under the draw, or the
 * padding's value 0, through the per-channel formula, as bytes of the output dtype. */
static void expect_element(const h5fix_file *sp, const h5pack_config *cfg, const float *mean, const float *std,
                           uint64_t sample, aug_draw d, uint32_t c, int y, int x, uint8_t *out)
{
    int raw = cfg->dtype == H5PACK_DTYPE_UINT8, pad = raw ? 0 : cfg->random_crop_padding;
    if (raw)
        d.flip = 0, d.ox = d.oy = 0;
    int sy = aug_src_y(d, y, pad), sx = aug_src_x(d, x, (int)sp->w, pad);
    int inside = sy >= 0 && sy < (int)sp->h && sx >= 0 && sx < (int)sp->w;
    uint8_t v = inside ? h5fix_chw_value(sample, c, (uint32_t)sy, (uint32_t)sx) : 0;
    if (raw) {
        *out = v;
        return;
    }
    float f = ((float)v / 255.0f - mean[c]) / std[c];
    if (cfg->dtype == H5PACK_DTYPE_FLOAT32) {
        memcpy(out, &f, 4);
    } else {
        uint16_t h = cfg->dtype == H5PACK_DTYPE_BFLOAT16 ? h5pack_float_to_bfloat16_bits(f) : h5pack_float_to_half_bits(f);
        memcpy(out, &h, 2);
    }
}

/* Checks one delivered batch against the model (batch echo: the delivery's own echo key). */
static void check_model(const h5fix_file *sp, const h5pack_config *cfg, const h5pack_info *info, const h5pack_batch *b,
                        const char *what)
{
    size_t es = dtype_size(cfg->dtype), C = sp->c, H = sp->h, W = sp->w, img = C * H * W * es;
    int nhwc = info->output_layout == H5PACK_LAYOUT_NHWC;
    uint64_t key = aug_batch_key(cfg->seed, b->epoch, b->index, b->echo);
    uint8_t want[4];
    for (size_t i = 0; i < b->count; i++) {
        aug_draw d = aug_draw_for(key, i, cfg->random_flip, cfg->random_crop_padding);
        const uint8_t *got = (const uint8_t *)b->data + i * img;
        for (uint32_t c = 0; c < C; c++)
            for (int y = 0; y < (int)H; y++)
                for (int x = 0; x < (int)W; x++) {
                    size_t e = nhwc ? ((size_t)y * W + (size_t)x) * C + c : ((size_t)c * H + (size_t)y) * W + (size_t)x;
                    expect_element(sp, cfg, info->mean, info->std, b->indices[i], d, c, y, x, want);
                    CHECK_MSG(memcmp(got + e * es, want, es) == 0,
                              "%s: epoch %llu batch %llu echo %u image %zu (sample %llu) c %u y %d x %d differs from the model",
                              what, (unsigned long long)b->epoch, (unsigned long long)b->index, b->echo, i,
                              (unsigned long long)b->indices[i], c, y, x);
                }
    }
}

/* What each delivered batch does to a run (test_drain_reader_each's callback). */
typedef struct drain_ctx {
    run_out *o;
    const h5fix_file *sp;
    const h5pack_config *cfg;
    int model;
    const char *what;
} drain_ctx;

static void take_batch(void *ctx, const h5pack_info *info, const h5pack_batch *b)
{
    drain_ctx *d = ctx;
    CHECK(!b->on_device);
    append(d->o, b->data, b->bytes, b->labels, b->count);
    if (d->model && d->cfg->echo_mode == H5PACK_ECHO_BATCH)
        check_model(d->sp, d->cfg, info, b, d->what);
    d->o->batches++;
}

/* Drains PATH with CFG on the CPU backend, one-pass allowed (two_pass 0) or forced off. */
static run_out drain(const char *path, const h5fix_file *sp, const h5pack_config *cfg, int two_pass, int model,
                     const char *what)
{
    setenv("H5PACK_TWO_PASS", two_pass ? "1" : "0", 1);
    run_out o = {0};
    drain_ctx d = {.o = &o, .sp = sp, .cfg = cfg, .model = model, .what = what};
    h5pack_stats st = test_drain_reader_each(path, cfg, take_batch, &d);
    o.assemble_s = st.busy_assemble_s, o.convert_s = st.busy_convert_s;
    return o;
}

static int one_pass_expected(const h5pack_config *cfg, int nhwc_in)
{
    int passthrough = cfg->dtype == H5PACK_DTYPE_UINT8 &&
                      (cfg->output_layout == H5PACK_LAYOUT_AUTO ||
                       (cfg->output_layout == H5PACK_LAYOUT_NHWC) == nhwc_in);
    return cfg->echo == 1 && !passthrough;
}

/* One combination: one-pass vs two-pass, byte for byte, and (MODEL) both against the model. */
static void compare(const char *path, const h5fix_file *sp, const h5pack_config *cfg, int model, const char *what)
{
    run_out one = drain(path, sp, cfg, 0, model, what), two = drain(path, sp, cfg, 1, model, what);
    CHECK_MSG(one.batches == two.batches && one.bytes == two.bytes && one.bytes > 0, "%s: %llu/%llu batches, %zu/%zu bytes",
              what, (unsigned long long)one.batches, (unsigned long long)two.batches, one.bytes, two.bytes);
    for (size_t k = 0; k < one.bytes; k++)
        CHECK_MSG(one.data[k] == two.data[k], "%s: byte %zu differs: one-pass %u, two-pass %u", what, k,
                  one.data[k], two.data[k]);
    CHECK_MSG(one.n_labels == two.n_labels &&
                  (one.n_labels == 0 || memcmp(one.labels, two.labels, one.n_labels * sizeof *one.labels) == 0),
              "%s: labels differ", what);
    if (one_pass_expected(cfg, sp->nhwc)) {
        CHECK_MSG(one.assemble_s == 0.0 && one.convert_s > 0.0, "%s: one-pass stats assemble %g convert %g", what,
                  one.assemble_s, one.convert_s);
        CHECK_MSG(two.assemble_s > 0.0, "%s: two-pass assembled nothing", what);
    }
    free(one.data), free(two.data), free(one.labels), free(two.labels);
}

static const char *dtype_name(h5pack_dtype d)
{
    static const char *n[] = {"float32", "float16", "bfloat16", "uint8"};
    return (unsigned)d < 4 ? n[d] : "?";
}

/* uint8 without a crop is the stored pixels: a flip or padding is refused at open, saying why. */
static void expect_refused(const char *path, const h5pack_config *cfg, const char *what)
{
    h5pack_reader *r = NULL;
    int rc = h5pack_open(path, cfg, &r);
    CHECK_MSG(rc == H5PACK_EINVAL && strstr(h5pack_last_error(r), "uint8"), "%s: refused (%d: %s)", what, rc,
              h5pack_last_error(r));
    h5pack_close(r);
}

/* Every dtype x output layout x augmentation x norm x threads on one file. */
static void sweep(const char *path, const h5fix_file *sp, const char *file_what)
{
    const h5pack_dtype dtypes[] = {H5PACK_DTYPE_FLOAT32, H5PACK_DTYPE_FLOAT16, H5PACK_DTYPE_BFLOAT16, H5PACK_DTYPE_UINT8};
    const h5pack_layout outs[] = {H5PACK_LAYOUT_NCHW, H5PACK_LAYOUT_NHWC};
    const int augs[][2] = {{0, 0}, {1, 0}, {0, 3}, {1, 2}}; /* flip, padding */
    for (size_t di = 0; di < 4; di++)
        for (size_t li = 0; li < 2; li++)
            for (size_t ai = 0; ai < 4; ai++)
                for (int threads = 1; threads <= 2; threads++) {
                    h5pack_config cfg = H5PACK_CONFIG_DEFAULTS;
                    cfg.device = H5PACK_DEVICE_CPU, cfg.batch_size = 8, cfg.epochs = 2, cfg.seed = 11;
                    cfg.order = H5PACK_ORDER_RANDOM, cfg.threads = threads, cfg.cache_bytes = 1 << 20;
                    cfg.dtype = dtypes[di], cfg.output_layout = outs[li];
                    cfg.random_flip = augs[ai][0], cfg.random_crop_padding = augs[ai][1];
                    if ((ai + (size_t)threads) % 2) { /* the custom normalisation on half the cases */
                        cfg.norm = H5PACK_NORM_CUSTOM;
                        for (int c = 0; c < 4; c++)
                            cfg.mean[c] = 0.25f + 0.125f * (float)c, cfg.std[c] = 0.3f + 0.07f * (float)c;
                    }
                    char what[192];
                    snprintf(what, sizeof what, "%s, %s, %s out, flip %d, pad %d, %d threads, norm %d", file_what,
                             dtype_name(cfg.dtype), cfg.output_layout == H5PACK_LAYOUT_NHWC ? "NHWC" : "NCHW",
                             cfg.random_flip, cfg.random_crop_padding, threads, (int)cfg.norm);
                    if (cfg.dtype == H5PACK_DTYPE_UINT8 && (cfg.random_flip || cfg.random_crop_padding))
                        expect_refused(path, &cfg, what);
                    else
                        compare(path, sp, &cfg, 1, what);
                }
}

int main(void)
{
    char path[96];
    /* small odd images, 37 samples in chunks of 4 (short last chunk and batch), labels */
    for (int nhwc = 0; nhwc <= 1; nhwc++)
        for (int gzip = 0; gzip <= 1; gzip++) {
            h5fix_file sp = {.n = 37, .c = 3, .h = 13, .w = 11, .k = 4, .nhwc = nhwc, .gzip = gzip ? 1 : 0, .labels = 1, .label_type = H5FIX_UINT16, .n_classes = 7, .layout_attr = nhwc ? "NHWC" : "NCHW", .pixel = h5fix_pixel_chw};
            h5fix_local_name(path, sizeof path, nhwc ? "fp_nhwc" : "fp_nchw");
            CHECK_OK(h5fix_write(path, &sp));
            char what[64];
            snprintf(what, sizeof what, "%s in, %s", nhwc ? "NHWC" : "NCHW", gzip ? "gzip" : "mapped");
            sweep(path, &sp, what);
            if (!gzip) { /* the same file read with pread into cache slots instead of the mapping */
                setenv("H5PACK_NO_MMAP", "1", 1);
                snprintf(what, sizeof what, "%s in, pread", nhwc ? "NHWC" : "NCHW");
                sweep(path, &sp, what);
                unsetenv("H5PACK_NO_MMAP");
            }
            remove(path);
        }
    /* gray images, one channel */
    {
        h5fix_file sp = {.n = 21, .c = 1, .h = 9, .w = 7, .k = 5, .labels = 1, .label_type = H5FIX_UINT16, .n_classes = 7, .layout_attr = "NCHW", .pixel = h5fix_pixel_chw};
        h5fix_local_name(path, sizeof path, "fp_gray");
        CHECK_OK(h5fix_write(path, &sp));
        sweep(path, &sp, "gray");
        remove(path);
    }
    /* float32 batches of 80 x 3x101x97 (9.4 MB, over the non-temporal store threshold), odd widths:
     * rows start unaligned, so the aligned body, head and tail of each run are all exercised */
    {
        h5fix_file sp = {.n = 200, .c = 3, .h = 101, .w = 97, .k = 8, .labels = 1, .label_type = H5FIX_UINT16, .n_classes = 7, .layout_attr = "NCHW", .pixel = h5fix_pixel_chw};
        h5fix_local_name(path, sizeof path, "fp_big");
        CHECK_OK(h5fix_write(path, &sp));
        CHECK((size_t)80 * 3 * 101 * 97 * 4 >= (size_t)8 << 20);
        const int augs[][2] = {{0, 0}, {1, 0}, {1, 4}};
        for (int li = 0; li < 2; li++)
            for (int ai = 0; ai < 3; ai++) {
                h5pack_config cfg = H5PACK_CONFIG_DEFAULTS;
                cfg.device = H5PACK_DEVICE_CPU, cfg.batch_size = 80, cfg.epochs = 1, cfg.threads = 2, cfg.seed = 5;
                cfg.output_layout = li ? H5PACK_LAYOUT_NHWC : H5PACK_LAYOUT_NCHW;
                cfg.random_flip = augs[ai][0], cfg.random_crop_padding = augs[ai][1];
                char what[96];
                snprintf(what, sizeof what, "big float32, %s out, flip %d, pad %d", li ? "NHWC" : "NCHW", augs[ai][0],
                         augs[ai][1]);
                compare(path, &sp, &cfg, 1, what);
            }
        /* an echoed delivery is converted on the consumer thread, by several OpenMP threads only when
         * the batch is large (backend_cpu.c, MIN_PART_BYTES): this one is 9.4 MB, two parts */
        h5pack_config cfg = H5PACK_CONFIG_DEFAULTS;
        cfg.device = H5PACK_DEVICE_CPU, cfg.batch_size = 80, cfg.epochs = 1, cfg.threads = 2, cfg.seed = 5;
        cfg.echo = 2, cfg.random_flip = 1, cfg.random_crop_padding = 4;
        compare(path, &sp, &cfg, 1, "big float32, batch echo 2 (two conversion threads)");
        remove(path);
    }
    /* batch and sample echo keep the two-pass path: both runs must still agree (and batch echo the model) */
    {
        h5fix_file sp = {.n = 40, .c = 3, .h = 12, .w = 10, .k = 4, .labels = 1, .label_type = H5FIX_UINT16, .n_classes = 7, .layout_attr = "NCHW", .pixel = h5fix_pixel_chw};
        h5fix_local_name(path, sizeof path, "fp_echo");
        CHECK_OK(h5fix_write(path, &sp));
        for (int mode = 0; mode <= 1; mode++) {
            h5pack_config cfg = H5PACK_CONFIG_DEFAULTS;
            cfg.device = H5PACK_DEVICE_CPU, cfg.batch_size = 8, cfg.epochs = 2, cfg.threads = 2, cfg.seed = 3;
            cfg.order = H5PACK_ORDER_RANDOM, cfg.echo = 2, cfg.random_flip = 1, cfg.random_crop_padding = 2;
            cfg.echo_mode = mode ? H5PACK_ECHO_SAMPLE : H5PACK_ECHO_BATCH;
            cfg.prefetch = mode ? 4 : 4;
            compare(path, &sp, &cfg, 1, mode ? "sample echo 2" : "batch echo 2");
        }
        remove(path);
    }
    printf("floatpath: one-pass == two-pass == model over every combination\n");
    return 0;
}
