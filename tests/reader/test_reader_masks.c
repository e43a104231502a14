/* test_reader_masks.c - config.masks_dataset (issue 42): every delivered mask pixel is the stored mask's
 * pixel that PIL's NEAREST resize over the delivered box picks (written out here as PIL's ImagingScaleAffine
 * computes it: a running double sum, truncated), then mirrored with the image's flip; for every crop mode,
 * flip, pad-and-crop, batch and sample echo (which redraw the boxes), progressive resizing, ranks, both mask
 * dtypes, resume and two read paths. Without a resize the image says where its pixels came from (h5fix_pixel_chw), so
 * each image pixel and its mask pixel are checked to come from the same stored position. And the refusals:
 * no such dataset, another length, size, type, rank or chunking, patches. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "h5fixture.h"
#include "h5pack.h"

#define N 60
#define C 3
#define H 12
#define W 16
#define K 8

/* The stored position PIL's NEAREST picks for output index I of OUT over a box of LEN from START: -1
 * outside 0 .. SIZE - 1 (PIL leaves those pixels 0). */
static int pil_source(int32_t start, int32_t len, uint32_t out, uint32_t i, uint32_t size)
{
    double scale = (double)len / out, pos = start + scale * 0.5;
    for (uint32_t k = 0; k < i; k++)
        pos += scale;
    int v = pos < 0 ? -1 : (int)pos;
    return v >= 0 && (uint32_t)v < size ? v : -1;
}

static uint64_t mask_at(const h5pack_batch *b, size_t i, uint32_t y, uint32_t x)
{
    size_t at = (i * b->height + y) * b->width + x;
    if (b->mask_dtype == H5PACK_MASK_DTYPE_INT64)
        return (uint64_t)((const int64_t *)b->masks)[at];
    return ((const uint8_t *)b->masks)[at];
}

/* Image I's channel-0 value at (y, x) of a float32 NCHW batch with norm none, back in 0..255. */
static int image_at(const h5pack_batch *b, size_t i, uint32_t y, uint32_t x)
{
    float v = ((const float *)b->data)[(i * C * b->height + y) * b->width + x];
    return (int)(v * 255.0f + 0.5f);
}

/* Every mask pixel of B against the stored masks through B's boxes; with NO_RESIZE the image pixels too.
 * Returns the number of flipped images (so callers can see flips happened). */
static int check_batch(const h5pack_batch *b, h5pack_mask_dtype dtype, int no_resize)
{
    CHECK(b->masks != NULL && b->boxes != NULL && b->masks_device == NULL);
    CHECK_EQ_INT(b->mask_dtype, dtype);
    size_t elem = dtype == H5PACK_MASK_DTYPE_INT64 ? 8 : 1;
    CHECK_EQ_U64(b->mask_bytes, b->count * b->height * b->width * elem);
    int flips = 0;
    for (size_t i = 0; i < b->count; i++) {
        const h5pack_crop_box *box = &b->boxes[i];
        uint64_t idx = b->indices[i];
        flips += box->flip != 0;
        for (uint32_t y = 0; y < b->height; y++)
            for (uint32_t x = 0; x < b->width; x++) {
                uint32_t rx = box->flip ? b->width - 1 - x : x; /* the column before the flip */
                int sy = pil_source(box->y, box->height, b->height, y, H);
                int sx = pil_source(box->x, box->width, b->width, rx, W);
                uint64_t want = sy < 0 || sx < 0 ? 0 : h5fix_mask_value(idx, (uint32_t)sy, (uint32_t)sx);
                uint64_t got = mask_at(b, i, y, x);
                CHECK_MSG(got == want, "sample %llu box (%d,%d %dx%d flip %d) out %ux%u at (%u,%u): mask %llu, "
                          "want %llu", (unsigned long long)idx, box->y, box->x, box->height, box->width, box->flip,
                          b->height, b->width, y, x, (unsigned long long)got, (unsigned long long)want);
                if (no_resize) { /* the image's pixel came from the same place (padding: 0) */
                    int pix = sy < 0 || sx < 0 ? 0 : h5fix_chw_value(idx, 0, (uint32_t)sy, (uint32_t)sx);
                    CHECK_MSG(image_at(b, i, y, x) == pix, "sample %llu at (%u,%u): image %d, want %d",
                              (unsigned long long)idx, y, x, image_at(b, i, y, x), pix);
                }
            }
    }
    return flips;
}

typedef struct run {
    const char *name;
    h5pack_crop crop;
    uint32_t out_h, out_w, max_h, max_w;
    int flip, padding;
    uint32_t echo;
    h5pack_echo_mode echo_mode;
    h5pack_mask_dtype dtype;
    uint32_t world;
    int resize_to; /* > 0: h5pack_set_output_size(resize_to, resize_to) after the first batch */
} run;

static h5pack_config config_of(const run *t, uint32_t rank)
{
    h5pack_config c = H5PACK_CONFIG_DEFAULTS;
    c.device = H5PACK_DEVICE_CPU, c.batch_size = 7, c.threads = 2, c.prefetch = 3, c.epochs = 2, c.seed = 5;
    c.cache_bytes = 3 * K * (C + 1) * H * W; /* three slots of image + mask chunk: evictions happen */
    c.dtype = H5PACK_DTYPE_FLOAT32, c.norm = H5PACK_NORM_NONE, c.masks_dataset = "masks", c.mask_dtype = t->dtype;
    c.crop = t->crop, c.output_height = t->out_h, c.output_width = t->out_w;
    c.max_output_height = t->max_h, c.max_output_width = t->max_w;
    c.random_flip = t->flip, c.random_crop_padding = t->padding;
    c.echo = t->echo ? t->echo : 1, c.echo_mode = t->echo_mode;
    c.world = t->world ? t->world : 1, c.rank = rank;
    return c;
}

static void run_one(const char *path, const run *t, uint32_t rank)
{
    h5pack_config c = config_of(t, rank);
    h5pack_reader *r = NULL;
    int rc = h5pack_open(path, &c, &r);
    CHECK_MSG(rc == 0, "%s: open: %s", t->name, h5pack_last_error(r));
    h5pack_batch b = H5PACK_BATCH_INIT;
    uint64_t batches = 0, samples = 0;
    int flips = 0;
    while ((rc = h5pack_next(r, &b)) == H5PACK_OK) {
        if (t->resize_to && batches == 0)
            CHECK_OK(h5pack_set_output_size(r, (uint32_t)t->resize_to, (uint32_t)t->resize_to));
        if (t->resize_to && b.epoch == 1)
            CHECK_MSG(b.height == (uint32_t)t->resize_to && b.width == (uint32_t)t->resize_to,
                      "%s: epoch 1 at %ux%u", t->name, b.height, b.width);
        flips += check_batch(&b, t->dtype, t->crop == H5PACK_CROP_NONE);
        batches++, samples += b.count;
        CHECK_OK(h5pack_release(r, &b));
    }
    CHECK_MSG(rc == H5PACK_END, "%s: next: %d %s", t->name, rc, h5pack_last_error(r));
    uint32_t world = t->world ? t->world : 1, echo = t->echo ? t->echo : 1;
    CHECK_MSG(samples == 2 * echo * ((N + world - 1) / world), "%s: %llu samples", t->name,
              (unsigned long long)samples);
    CHECK_MSG(!t->flip || flips > 0, "%s: no image was flipped", t->name);
    h5pack_stats st = H5PACK_STATS_INIT;
    CHECK_OK(h5pack_stats_get(r, &st));
    CHECK_MSG(st.cache_bytes_used % ((C + 1) * H * W * K) == 0, "%s: cache_bytes_used %llu is not whole slots of "
              "image + mask chunks", t->name, (unsigned long long)st.cache_bytes_used);
    h5pack_close(r);
    printf("%-28s rank %u: %llu batches, %d flipped\n", t->name, rank, (unsigned long long)batches, flips);
}

static const run RUNS[] = {
    {.name = "none"},
    {.name = "none flip pad", .flip = 1, .padding = 3},
    {.name = "none int64", .flip = 1, .dtype = H5PACK_MASK_DTYPE_INT64},
    {.name = "random resized", .crop = H5PACK_CROP_RANDOM_RESIZED, .out_h = 10, .out_w = 14, .flip = 1},
    {.name = "random resized up int64", .crop = H5PACK_CROP_RANDOM_RESIZED, .out_h = 29, .out_w = 23, .flip = 1,
     .dtype = H5PACK_MASK_DTYPE_INT64},
    {.name = "center", .crop = H5PACK_CROP_CENTER, .out_h = 9, .out_w = 9},
    {.name = "batch echo", .crop = H5PACK_CROP_RANDOM_RESIZED, .out_h = 8, .out_w = 8, .flip = 1, .echo = 3},
    {.name = "sample echo", .crop = H5PACK_CROP_RANDOM_RESIZED, .out_h = 8, .out_w = 8, .flip = 1, .echo = 3,
     .echo_mode = H5PACK_ECHO_SAMPLE},
    {.name = "batch echo none flip", .flip = 1, .echo = 2},
    {.name = "progressive", .crop = H5PACK_CROP_RANDOM_RESIZED, .out_h = 8, .out_w = 8, .max_h = 20, .max_w = 20,
     .flip = 1, .resize_to = 17},
    {.name = "ranks", .crop = H5PACK_CROP_RANDOM_RESIZED, .out_h = 8, .out_w = 8, .flip = 1, .world = 2},
};

/* Resume mid-epoch (the first delivery an echo of batch 3 of epoch 1): the masks still follow the boxes. */
static void run_resumed(const char *path, h5pack_echo_mode mode)
{
    const run t = {.name = "resume", .crop = H5PACK_CROP_RANDOM_RESIZED, .out_h = 8, .out_w = 8, .flip = 1, .echo = 2,
                   .echo_mode = mode};
    h5pack_config c = config_of(&t, 0);
    c.start_epoch = 1, c.start_batch = 3, c.start_echo = mode == H5PACK_ECHO_BATCH ? 1 : 0;
    h5pack_reader *r = NULL;
    int rc = h5pack_open(path, &c, &r);
    CHECK_MSG(rc == 0, "resume: open: %s", h5pack_last_error(r));
    h5pack_batch b = H5PACK_BATCH_INIT;
    uint64_t batches = 0;
    while ((rc = h5pack_next(r, &b)) == H5PACK_OK) {
        CHECK(b.epoch == 1);
        check_batch(&b, H5PACK_MASK_DTYPE_UINT8, 0);
        batches++;
        CHECK_OK(h5pack_release(r, &b));
    }
    CHECK_MSG(rc == H5PACK_END && batches > 0, "resume: %llu batches, next %d %s", (unsigned long long)batches, rc,
              h5pack_last_error(r));
    h5pack_close(r);
    printf("%-28s rank 0: %llu batches\n", mode == H5PACK_ECHO_BATCH ? "resume batch echo" : "resume sample echo",
           (unsigned long long)batches);
}

static void run_all(const char *path)
{
    for (size_t i = 0; i < sizeof RUNS / sizeof RUNS[0]; i++)
        for (uint32_t rank = 0; rank < (RUNS[i].world ? RUNS[i].world : 1); rank++)
            run_one(path, &RUNS[i], rank);
    run_resumed(path, H5PACK_ECHO_BATCH);
    run_resumed(path, H5PACK_ECHO_SAMPLE);
}

/* Opening PATH with masks NAME fails with RC and a message naming the file and the dataset (and WHAT). */
static void check_refused(const char *path, const char *name, int want, const char *what, uint32_t patch)
{
    h5pack_config c = H5PACK_CONFIG_DEFAULTS;
    c.device = H5PACK_DEVICE_CPU, c.batch_size = 4, c.threads = 1, c.masks_dataset = name, c.patch_size = patch;
    h5pack_reader *r = NULL;
    int rc = h5pack_open(path, &c, &r);
    const char *e = h5pack_last_error(r);
    CHECK_MSG(rc == want, "masks '%s': open gave %d (want %d): %s", name, rc, want, e);
    CHECK_STR_CONTAINS(e, path);
    if (!patch)
        CHECK_STR_CONTAINS(e, name);
    CHECK_STR_CONTAINS(e, what);
    printf("refused as it should be: %s\n", e);
    h5pack_close(r);
}

static void check_bad_files(void)
{
    static const struct {
        const char *tag, *what;
        h5fix_file spec;
        int rc;
    } bad[] = {
        {"masks_len", "hold 59 masks for 60 images", {.n = N, .c = C, .h = H, .w = W, .k = K, .masks = 1, .masks_n = N - 1}, H5PACK_EFORMAT},
        {"masks_size", "are 12x15, the images 12x16", {.n = N, .c = C, .h = H, .w = W, .k = K, .masks = 1, .masks_w = W - 1}, H5PACK_EFORMAT},
        {"masks_type", "expected uint8", {.n = N, .c = C, .h = H, .w = W, .k = K, .masks = 1, .mask_type = H5FIX_UINT16}, H5PACK_EFORMAT},
        {"masks_chunk", "come 4 per chunk, the images 8", {.n = N, .c = C, .h = H, .w = W, .k = K, .masks = 1, .masks_k = 4}, H5PACK_EFORMAT},
        {"masks_rank", "are 4-D", {.n = N, .c = C, .h = H, .w = W, .k = K, .masks = 1, .masks_rank4 = 1}, H5PACK_EFORMAT},
        {"masks_none", "no images dataset 'masks'", {.n = N, .c = C, .h = H, .w = W, .k = K}, H5PACK_ENOTFOUND},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char path[256];
        h5fix_local_name(path, sizeof path, bad[i].tag);
        CHECK_OK(h5fix_write(path, &bad[i].spec));
        check_refused(path, "masks", bad[i].rc, bad[i].what, 0);
        unlink(path);
    }
}

int main(void)
{
    char path[256];
    h5fix_local_name(path, sizeof path, "masks");
    const h5fix_file plain = {.n = N, .c = C, .h = H, .w = W, .k = K, .layout_attr = "NCHW", .labels = 1,
                              .n_classes = 5, .pixel = h5fix_pixel_chw, .masks = 1};
    CHECK_OK(h5fix_write(path, &plain));
    run_all(path);
    check_refused(path, "masks", H5PACK_EINVAL, "patches", 8); /* not with patches */
    check_refused(path, "labels", H5PACK_EFORMAT, "masks", 0);  /* 1-D: not masks */
    /* compressed images (the raw deflate path, no lent chunks) beside implicit masks */
    const h5fix_file gz = {.n = N, .c = C, .h = H, .w = W, .k = K, .layout_attr = "NCHW", .gzip = 4,
                           .pixel = h5fix_pixel_chw, .masks = 1};
    CHECK_OK(h5fix_write(path, &gz));
    run_one(path, &RUNS[3], 0);
    run_one(path, &RUNS[7], 0);
    unlink(path);
    check_bad_files();
    return 0;
}
