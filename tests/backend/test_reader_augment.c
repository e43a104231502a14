/* test_reader_augment.c - resizing crops and sample echo through the public API (CPU backend), on a file
 * whose pixels are a known function of (sample, channel, y, x):
 *   - random resized crop: every delivered image equals the resampling of its own file row with the box
 *     and flip the batch reports (so indices, boxes, sizes and the gather agree); the same seed gives the
 *     same bytes, another epoch other boxes for the same rows; 1 to 4 workers the same bytes; a close
 *     mid-epoch is clean;
 *   - progressive resizing: h5pack_set_output_size applies from the next epoch, exactly; bad sizes and
 *     sizes without a crop are refused with a reason;
 *   - sample echo: every file row delivered exactly E times per epoch, never twice in one batch, in E
 *     different batches; labels follow the rows; pixels are the rows' (raw uint8), with and without a
 *     resizing crop; info reports the pool and the ring;
 *   - bad crop / echo_mode values are refused at open. */
#include <string.h>
#include <stdio.h>

#include <stdlib.h>

#include "augment_crops.h"
#include "backend_resample.h"
#include "check.h"
#include "h5fixture.h"

#include "h5pack.h"

static const h5fix_file SPEC = {.n = 50, .c = 3, .h = 40, .w = 48, .k = 6, .nhwc = 1, .layout_attr = "NHWC", .labels = 1, .label_type = H5FIX_UINT16, .n_classes = 7,
                                  .pixel = h5fix_pixel_chw};

static h5pack_config base_config(void)
{
    h5pack_config c = H5PACK_CONFIG_DEFAULTS;
    c.batch_size = 8, c.device = H5PACK_DEVICE_CPU, c.threads = 2, c.seed = 5, c.epochs = 2;
    c.norm = H5PACK_NORM_NONE, c.order = H5PACK_ORDER_RANDOM;
    return c;
}

static h5pack_reader *open_or_die(const char *path, const h5pack_config *c)
{
    h5pack_reader *r = NULL;
    int rc = h5pack_open(path, c, &r);
    CHECK_MSG(rc == H5PACK_OK, "open: %s", h5pack_last_error(r));
    return r;
}

/* Image I of batch B must be the resampling of its file row with its box and flip (float32, NCHW). */
static void check_image(const h5pack_batch *b, size_t i, uint32_t oh, uint32_t ow)
{
    size_t img = (size_t)SPEC.c * SPEC.h * SPEC.w;
    uint8_t *src = malloc(img);
    CHECK(src);
    h5fix_image(&SPEC, b->indices[i], src);
    const h5pack_crop_box *box = &b->boxes[i];
    CHECK(box->y >= 0 && box->x >= 0 && box->y + box->height <= (int)SPEC.h && box->x + box->width <= (int)SPEC.w);
    aug_image im = {.src = (uint64_t)(uintptr_t)src, .y = box->y, .x = box->x, .h = box->height, .w = box->width,
                    .flip = box->flip};
    uint32_t ky = h5pack_aug_max_taps(SPEC.h, oh), kx = h5pack_aug_max_taps(SPEC.w, ow);
    int32_t *ry = malloc(sizeof(int32_t) * 2 * oh), *rx = malloc(sizeof(int32_t) * 2 * ow);
    float *wy = malloc(sizeof(float) * ky * oh), *wx = malloc(sizeof(float) * kx * ow);
    float *out = malloc(sizeof(float) * 3 * oh * ow);
    CHECK(ry && rx && wy && wx && out);
    h5pack_aug_axis_coeffs((uint32_t)box->height, (uint32_t)box->y, oh, ky, ry, wy);
    h5pack_aug_axis_coeffs((uint32_t)box->width, (uint32_t)box->x, ow, kx, rx, wx);
    aug_job j = {1, 3, SPEC.h, SPEC.w, oh, ow, ky, kx, 1, 0, H5PACK_DTYPE_FLOAT32, {1 / 255.f, 1 / 255.f, 1 / 255.f, 0},
                 {0, 0, 0, 0}, &im, ry, wy, rx, wx, out};
    float *scratch = malloc(sizeof(float) * h5pack_resample_scratch_floats(&j));
    CHECK(scratch);
    h5pack_resample_images(&j, 0, 1, scratch);
    CHECK_MSG(memcmp((const float *)b->data + i * 3 * oh * ow, out, sizeof(float) * 3 * oh * ow) == 0,
              "image %zu (row %llu) of batch %llu differs from its box's resampling", i,
              (unsigned long long)b->indices[i], (unsigned long long)b->index);
    free(src), free(ry), free(rx), free(wy), free(wx), free(out), free(scratch);
}

/* Runs the reader; checks every image; returns a hash of all delivered bytes and fills BOX0 with the box
 * of file row 0 in each epoch. With RESIZE_AT, sets the size to 16 x 28 after that many batches. */
static uint64_t run_crop(const char *path, h5pack_config c, h5pack_crop_box box0[2], uint64_t resize_at)
{
    h5pack_reader *r = open_or_die(path, &c);
    h5pack_batch b = H5PACK_BATCH_INIT;
    uint64_t hash = 1469598103934665603ull, n = 0;
    int rc;
    while ((rc = h5pack_next(r, &b)) == H5PACK_OK) {
        uint32_t oh = resize_at && b.epoch >= 1 ? 16 : 24, ow = resize_at && b.epoch >= 1 ? 28 : 20;
        CHECK_MSG(b.height == oh && b.width == ow, "epoch %llu: %ux%u", (unsigned long long)b.epoch, b.height, b.width);
        CHECK_EQ_U64(b.bytes, b.count * 3 * oh * ow * 4);
        for (size_t i = 0; i < b.count; i++) {
            check_image(&b, i, oh, ow);
            if (b.indices[i] == 0)
                box0[b.epoch] = b.boxes[i];
        }
        for (size_t k = 0; k < b.bytes; k++)
            hash = (hash ^ ((const uint8_t *)b.data)[k]) * 1099511628211ull;
        CHECK_OK(h5pack_release(r, &b));
        if (resize_at && ++n == resize_at)
            CHECK_OK(h5pack_set_output_size(r, 16, 28)); /* mid-epoch 0: applies from epoch 1 */
    }
    CHECK_EQ_INT(rc, H5PACK_END);
    h5pack_close(r);
    return hash;
}

static void test_random_resized(const char *path)
{
    h5pack_config c = base_config();
    c.crop = H5PACK_CROP_RANDOM_RESIZED, c.random_flip = 1;
    c.output_height = 24, c.output_width = 20, c.max_output_height = c.max_output_width = 32;
    h5pack_crop_box a[2], b[2];
    uint64_t h1 = run_crop(path, c, a, 0), h2 = run_crop(path, c, b, 0);
    CHECK_MSG(h1 == h2 && memcmp(a, b, sizeof a) == 0, "the same seed must give the same crops");
    CHECK_MSG(memcmp(&a[0], &a[1], sizeof a[0]) != 0, "another epoch must give other crops");
    c.seed = 6;
    CHECK(run_crop(path, c, b, 0) != h1);
    c.seed = 5;
    run_crop(path, c, b, 3);                            /* progressive resizing */
    CHECK(memcmp(&a[1], &b[1], sizeof a[1]) == 0);      /* the draws do not depend on the size */

    h5pack_reader *r = open_or_die(path, &c);
    CHECK_EQ_INT(h5pack_set_output_size(r, 33, 8), H5PACK_EINVAL);
    CHECK_STR_CONTAINS(h5pack_last_error(r), "maximum output size");
    h5pack_info info = H5PACK_INFO_INIT;
    CHECK_OK(h5pack_info_get(r, &info));
    CHECK(info.crop == H5PACK_CROP_RANDOM_RESIZED && info.output_height == 24 && info.output_width == 20 &&
          info.max_output_height == 32 && info.echo_pool_bytes == 0);
    h5pack_close(r);
    h5pack_config none = base_config();
    r = open_or_die(path, &none);
    CHECK_EQ_INT(h5pack_set_output_size(r, 8, 8), H5PACK_EINVAL);
    CHECK_STR_CONTAINS(h5pack_last_error(r), "crop is none");
    h5pack_close(r);
}

/* Hash of the first N batches' bytes of a random resized crop run with THREADS workers, then closed
 * mid-epoch (N = 0: at once). Each worker claims its next use while it runs one (pipeline_impl.h,
 * claimed_use), so a close can find claimed uses not run yet. */
static uint64_t crops_then_close(const char *path, int threads, int n)
{
    h5pack_config c = base_config();
    c.crop = H5PACK_CROP_RANDOM_RESIZED, c.random_flip = 1, c.threads = threads, c.prefetch = 3;
    c.output_height = 24, c.output_width = 20, c.cache_bytes = 200000; /* a few chunks: loads during the run */
    h5pack_reader *r = open_or_die(path, &c);
    h5pack_batch b = H5PACK_BATCH_INIT;
    uint64_t hash = 1469598103934665603ull;
    for (int k = 0; k < n; k++) {
        CHECK_OK(h5pack_next(r, &b));
        for (size_t i = 0; i < b.count; i++)
            check_image(&b, i, 24, 20);
        for (size_t x = 0; x < b.bytes; x++)
            hash = (hash ^ ((const uint8_t *)b.data)[x]) * 1099511628211ull;
        CHECK_OK(h5pack_release(r, &b));
    }
    h5pack_close(r);
    return hash;
}

/* Crops delivered by 1 to 4 workers are the same bytes; closing mid-epoch (workers holding claimed uses)
 * neither hangs nor leaks (the sanitizer builds run this). */
static void test_crops_any_threads_and_close(const char *path)
{
    uint64_t one = crops_then_close(path, 1, 5);
    for (int t = 2; t <= 4; t++)
        CHECK_MSG(crops_then_close(path, t, 5) == one, "%d workers deliver other crops than one", t);
    for (int t = 1; t <= 4; t++)
        for (int n = 0; n <= 2; n++)
            crops_then_close(path, t, n);
}

/* Sample echo over two epochs: counts, spread, labels and pixels. */
static void run_sample_echo(const char *path, int crop)
{
    const uint32_t E = 3;
    h5pack_config c = base_config();
    c.echo = E, c.echo_mode = H5PACK_ECHO_SAMPLE, c.prefetch = 2; /* raised to echo + 1 */
    if (crop) {
        c.crop = H5PACK_CROP_RANDOM_RESIZED, c.random_flip = 1, c.output_height = 24, c.output_width = 20;
    } else {
        c.dtype = H5PACK_DTYPE_UINT8, c.output_layout = H5PACK_LAYOUT_NHWC;
    }
    h5pack_reader *r = open_or_die(path, &c);
    h5pack_info info = H5PACK_INFO_INIT;
    CHECK_OK(h5pack_info_get(r, &info));
    CHECK_EQ_INT(info.ring_slots, E + 1);
    CHECK_EQ_U64(info.echo_pool_bytes, (E - 1) * 8 * (size_t)SPEC.c * SPEC.h * SPEC.w);
    size_t img = (size_t)SPEC.c * SPEC.h * SPEC.w;
    uint8_t *want = malloc(img);
    uint32_t count[2][50] = {{0}};
    uint64_t seen_in[2][50][3], deliveries = 0;
    h5pack_batch b = H5PACK_BATCH_INIT;
    int rc;
    while ((rc = h5pack_next(r, &b)) == H5PACK_OK) {
        for (size_t i = 0; i < b.count; i++) {
            uint64_t row = b.indices[i], delivery = b.index * E + b.echo;
            CHECK(row < 50 && b.labels[i] == (int64_t)(row % 7));
            for (uint32_t k = 0; k < count[b.epoch][row]; k++)
                CHECK_MSG(seen_in[b.epoch][row][k] != delivery, "row %llu twice in one batch", (unsigned long long)row);
            CHECK_MSG(count[b.epoch][row] < E, "row %llu delivered more than %u times", (unsigned long long)row, E);
            seen_in[b.epoch][row][count[b.epoch][row]++] = delivery;
            if (crop) {
                check_image(&b, i, 24, 20);
            } else {
                h5fix_image(&SPEC, row, want);
                CHECK_MSG(memcmp((const uint8_t *)b.data + i * img, want, img) == 0, "row %llu: wrong pixels",
                          (unsigned long long)row);
            }
        }
        deliveries++;
        CHECK_OK(h5pack_release(r, &b));
    }
    CHECK_EQ_INT(rc, H5PACK_END);
    for (int e = 0; e < 2; e++)
        for (int row = 0; row < 50; row++)
            CHECK_MSG(count[e][row] == E, "epoch %d row %d: %u deliveries", e, row, count[e][row]);
    CHECK_EQ_U64(deliveries, 2 * 7 * E); /* 7 batches per epoch (the last short, batch-echoed) */
    h5pack_stats st = H5PACK_STATS_INIT;
    CHECK_OK(h5pack_stats_get(r, &st));
    CHECK_EQ_U64(st.samples, 2 * 50 * E);
    free(want);
    h5pack_close(r);
}

/* Holding a batch whose buffer sample echo must read ahead into is refused (not a hang), and the
 * reader goes on once it is released. */
static void test_sample_echo_held(const char *path)
{
    h5pack_config c = base_config();
    c.echo = 3, c.echo_mode = H5PACK_ECHO_SAMPLE, c.prefetch = 4, c.epochs = 1;
    h5pack_reader *r = open_or_die(path, &c);
    h5pack_batch held = H5PACK_BATCH_INIT, b = H5PACK_BATCH_INIT;
    for (int k = 0; k < 3; k++) { /* group 0: keep its last delivery */
        CHECK_OK(h5pack_next(r, k < 2 ? &b : &held));
        if (k < 2)
            CHECK_OK(h5pack_release(r, &b));
    }
    for (int k = 0; k < 3; k++) { /* group 1 reads ahead batches 2 and 3: fine */
        CHECK_OK(h5pack_next(r, &b));
        CHECK_OK(h5pack_release(r, &b));
    }
    CHECK_EQ_INT(h5pack_next(r, &b), H5PACK_ESTATE); /* group 2 reads batch 4, into batch 0's buffer */
    CHECK_STR_CONTAINS(h5pack_last_error(r), "sample echo reads 2 batches ahead");
    CHECK_OK(h5pack_release(r, &held));
    int n = 0, rc;
    while ((rc = h5pack_next(r, &b)) == H5PACK_OK) {
        n++;
        CHECK_OK(h5pack_release(r, &b));
    }
    CHECK_EQ_INT(rc, H5PACK_END);
    CHECK_EQ_INT(n, 7 * 3 - 6);
    h5pack_close(r);
}

static void test_bad_config(const char *path)
{
    h5pack_config c = base_config();
    h5pack_reader *r = NULL;
    c.crop = (h5pack_crop)7;
    CHECK_EQ_INT(h5pack_open(path, &c, &r), H5PACK_EINVAL);
    CHECK_STR_CONTAINS(h5pack_last_error(r), "crop must be one of none/random_resized/center (0 .. 2) (got 7)");
    h5pack_close(r);
    c = base_config(), c.echo_mode = (h5pack_echo_mode)3;
    CHECK_EQ_INT(h5pack_open(path, &c, &r), H5PACK_EINVAL);
    CHECK_STR_CONTAINS(h5pack_last_error(r), "echo_mode");
    h5pack_close(r);
    c = base_config(), c.output_height = 10;
    CHECK_EQ_INT(h5pack_open(path, &c, &r), H5PACK_EINVAL);
    CHECK_STR_CONTAINS(h5pack_last_error(r), "needs a resizing crop");
    h5pack_close(r);
    c = base_config(), c.crop = H5PACK_CROP_CENTER, c.center_ratio = 0;
    CHECK_EQ_INT(h5pack_open(path, &c, &r), H5PACK_EINVAL);
    CHECK_STR_CONTAINS(h5pack_last_error(r), "center_ratio");
    h5pack_close(r);
}

int main(void)
{
    char path[128];
    h5fix_local_name(path, sizeof path, "augment");
    CHECK_OK(h5fix_write(path, &SPEC));
    test_random_resized(path);
    test_crops_any_threads_and_close(path);
    run_sample_echo(path, 0);
    run_sample_echo(path, 1);
    test_sample_echo_held(path);
    test_bad_config(path);
    remove(path);
    printf("reader_augment: crops, progressive resizing and sample echo through the reader\n");
    return 0;
}
