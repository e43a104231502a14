/* test_floatpath_crops.c - resizing crops on the CPU one-pass path (workers resample each image straight
 * from its chunk) against the two-pass path (H5PACK_TWO_PASS=1: the uint8 batch is assembled, then
 * resampled), byte for byte: both crops, every dtype, both output layouts, flip, 1 to 4 threads,
 * mapped, pread and gzip chunks, a short last batch. Then what one-pass is for: no slot keeps a uint8
 * batch (pinned_bytes is the outputs and labels only), and an output size changed by
 * h5pack_set_output_size after batches of the next epoch were prepared still switches exactly (those
 * batches are resampled again from their chunks, read once more). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "h5fixture.h"
#include "h5pack.h"

typedef struct run_out {
    uint8_t *data; /* every delivered batch's bytes, concatenated */
    size_t bytes;
    uint64_t batches, pinned_bytes, bytes_read;
    double assemble_s, convert_s;
    uint32_t sizes[8][2]; /* output height x width of each epoch's first batch */
} run_out;

/* Drains PATH with CFG, one-pass allowed (TWO_PASS 0) or forced off; with RESIZE_TO, calls
 * h5pack_set_output_size after the first batch (it applies from epoch 1, whose first batches the
 * workers have prepared by then at the old size). */
static run_out drain(const char *path, const h5pack_config *cfg, int two_pass, uint32_t resize_to)
{
    setenv("H5PACK_TWO_PASS", two_pass ? "1" : "0", 1);
    run_out o = {0};
    h5pack_reader *r = NULL;
    CHECK_MSG(h5pack_open(path, cfg, &r) == 0, "open: %s", h5pack_last_error(r));
    h5pack_info info = H5PACK_INFO_INIT;
    CHECK_OK(h5pack_info_get(r, &info));
    o.pinned_bytes = info.pinned_bytes;
    h5pack_batch b = H5PACK_BATCH_INIT;
    int rc;
    while ((rc = h5pack_next(r, &b)) == H5PACK_OK) {
        o.data = realloc(o.data, o.bytes + b.bytes);
        CHECK(o.data != NULL);
        memcpy(o.data + o.bytes, b.data, b.bytes);
        o.bytes += b.bytes;
        if (b.index == 0 && b.epoch < 8)
            o.sizes[b.epoch][0] = b.height, o.sizes[b.epoch][1] = b.width;
        CHECK_OK(h5pack_release(r, &b));
        if (resize_to && o.batches == 0) {
            usleep(200 * 1000); /* let the workers prepare epoch 1's first batches at the old size */
            CHECK_OK(h5pack_set_output_size(r, resize_to, resize_to));
        }
        o.batches++;
    }
    CHECK_EQ_INT(rc, H5PACK_END);
    h5pack_stats st = H5PACK_STATS_INIT;
    CHECK_OK(h5pack_stats_get(r, &st));
    o.assemble_s = st.busy_assemble_s, o.convert_s = st.busy_convert_s, o.bytes_read = st.bytes_read;
    h5pack_close(r);
    return o;
}

static void compare(const char *path, const h5pack_config *cfg, uint32_t resize_to, const char *what)
{
    run_out one = drain(path, cfg, 0, resize_to), two = drain(path, cfg, 1, resize_to);
    CHECK_MSG(one.batches == two.batches && one.bytes == two.bytes && one.bytes > 0, "%s: %llu/%llu batches, %zu/%zu bytes",
              what, (unsigned long long)one.batches, (unsigned long long)two.batches, one.bytes, two.bytes);
    for (size_t k = 0; k < one.bytes; k++)
        CHECK_MSG(one.data[k] == two.data[k], "%s: byte %zu differs: one-pass %u, two-pass %u", what, k, one.data[k],
                  two.data[k]);
    CHECK_MSG(one.assemble_s == 0.0 && one.convert_s > 0.0 && two.assemble_s > 0.0,
              "%s: stats assemble %g / %g, convert %g", what, one.assemble_s, two.assemble_s, one.convert_s);
    /* one-pass holds no uint8 batch: slots x batch x stored image bytes less */
    CHECK_MSG(one.pinned_bytes < two.pinned_bytes, "%s: pinned %llu (one-pass) vs %llu", what,
              (unsigned long long)one.pinned_bytes, (unsigned long long)two.pinned_bytes);
    if (resize_to) {
        CHECK_MSG(one.sizes[0][0] != resize_to && one.sizes[1][0] == resize_to && one.sizes[1][1] == resize_to,
                  "%s: epoch sizes %u then %u", what, one.sizes[0][0], one.sizes[1][0]);
        /* batches of epoch 1 were prepared at the old size: one-pass read their chunks again */
        CHECK_MSG(one.bytes_read > two.bytes_read, "%s: the redone batches' reads are counted (%llu vs %llu)", what,
                  (unsigned long long)one.bytes_read, (unsigned long long)two.bytes_read);
    }
    free(one.data), free(two.data);
}

static void sweep(const char *path, const char *file_what)
{
    const h5pack_dtype dtypes[] = {H5PACK_DTYPE_FLOAT32, H5PACK_DTYPE_FLOAT16, H5PACK_DTYPE_BFLOAT16, H5PACK_DTYPE_UINT8};
    int cases = 0;
    for (int crop = H5PACK_CROP_RANDOM_RESIZED; crop <= H5PACK_CROP_CENTER; crop++)
        for (size_t di = 0; di < 4; di++)
            for (int nhwc = 0; nhwc <= 1; nhwc++) {
                h5pack_config cfg = H5PACK_CONFIG_DEFAULTS;
                cfg.device = H5PACK_DEVICE_CPU, cfg.batch_size = 8, cfg.epochs = 2, cfg.seed = 11;
                cfg.order = H5PACK_ORDER_RANDOM, cfg.threads = 1 + cases % 4, cfg.cache_bytes = 1 << 20;
                cfg.dtype = dtypes[di], cfg.output_layout = nhwc ? H5PACK_LAYOUT_NHWC : H5PACK_LAYOUT_NCHW;
                cfg.crop = (h5pack_crop)crop, cfg.random_flip = cases % 3 != 0;
                cfg.output_height = 20, cfg.output_width = 14 + (uint32_t)(cases % 3) * 5; /* up- and downscaling */
                char what[160];
                snprintf(what, sizeof what, "%s, crop %d, dtype %d, %s out, flip %d, %d threads, %ux%u", file_what,
                         crop, (int)cfg.dtype, nhwc ? "NHWC" : "NCHW", cfg.random_flip, cfg.threads,
                         cfg.output_height, cfg.output_width);
                compare(path, &cfg, 0, what);
                cases++;
            }
}

int main(void)
{
    char path[96];
    for (int gzip = 0; gzip <= 1; gzip++) { /* 37 images of 3x31x27 in chunks of 4: short last chunk and batch */
        h5fix_file sp = {.n = 37, .c = 3, .h = 31, .w = 27, .k = 4, .gzip = gzip, .labels = 1, .n_classes = 7,
                         .layout_attr = "NCHW", .pixel = h5fix_pixel_chw};
        h5fix_local_name(path, sizeof path, "fpc");
        CHECK_OK(h5fix_write(path, &sp));
        sweep(path, gzip ? "gzip" : "mapped");
        if (!gzip) {
            setenv("H5PACK_NO_MMAP", "1", 1);
            sweep(path, "pread");
            unsetenv("H5PACK_NO_MMAP");
        }
        /* progressive resizing across prepared batches: 24 -> 16 from epoch 1 */
        h5pack_config cfg = H5PACK_CONFIG_DEFAULTS;
        cfg.device = H5PACK_DEVICE_CPU, cfg.batch_size = 16, cfg.epochs = 3, cfg.threads = 2, cfg.seed = 5;
        cfg.crop = H5PACK_CROP_RANDOM_RESIZED, cfg.random_flip = 1, cfg.prefetch = 4;
        cfg.output_height = cfg.output_width = 24, cfg.max_output_height = cfg.max_output_width = 24;
        cfg.drop_last = 1; /* 2 batches an epoch: the prefetch reaches into epoch 1 during batch 0's wait */
        compare(path, &cfg, 16, gzip ? "resize, gzip" : "resize, mapped");
        remove(path);
    }
    printf("floatpath_crops: one-pass crops == two-pass, byte for byte, including a size change\n");
    return 0;
}
