/* test_reader_data.c - what the reader delivers: every sample exactly once per epoch for every order
 * (by indices and by content), contents equal to H5Dread of the same rows, labels, float32 equal to
 * (x/255 - mean)/std, NHWC and gzip files, ranks disjoint and complete, determinism of the seed. */
#include <hdf5.h>
#include <string.h>
#include <stdlib.h>
#include <stdio.h>

#include <math.h>

#include "backend.h"
#include "check.h"
#include "h5fixture.h"
#include "h5pack.h"

static char path_nchw[256], path_gzip[256], path_nhwc[256], path_h5py[256], path_contig[256];
/* The root attributes mean/std of spec_nchw (file_mean/file_std below: the same as floats). */
#define READER_MEAN ((const double[]){0.3, 0.4, 0.5})
#define READER_STD ((const double[]){0.2, 0.25, 0.3})

static const h5fix_file spec_nchw = {.n = 203, .c = 3, .h = 5, .w = 4, .k = 8, .layout_attr = "NCHW", .labels = 1, .label_type = H5FIX_UINT16, .n_classes = 7, .mean = READER_MEAN, .std = READER_STD, .pixel = h5fix_pixel_chw};
static const h5fix_file spec_gzip = {.n = 150, .c = 1, .h = 6, .w = 7, .k = 16, .gzip = 4, .layout_attr = "NCHW", .labels = 1, .label_type = H5FIX_UINT16, .n_classes = 7, .pixel = h5fix_pixel_chw};
static const h5fix_file spec_nhwc = {.n = 97, .c = 3, .h = 4, .w = 6, .k = 5, .nhwc = 1, .layout_attr = "NHWC", .pixel = h5fix_pixel_chw};
static const h5fix_file spec_h5py = {.n = 77, .c = 3, .h = 5, .w = 6, .k = 6, .nhwc = 1, .gzip = 3, .resizable = 1, .old_format = 1, .labels = 1, .label_type = H5FIX_UINT16, .n_classes = 7, .pixel = h5fix_pixel_chw};   /* maxshape None, gzip, NHWC */
static const h5fix_file spec_contig = {.n = 61, .c = 3, .h = 3, .w = 5, .k = 1, .contiguous = 1, .old_format = 1, .pixel = h5fix_pixel_chw}; /* contiguous */

static uint8_t *read_all_with_hdf5(const char *path, const h5fix_file *sp)
{
    size_t img = (size_t)sp->c * sp->h * sp->w;
    uint8_t *all = malloc(sp->n * img);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t d = H5Dopen2(f, "images", H5P_DEFAULT);
    CHECK(d >= 0 && H5Dread(d, H5T_NATIVE_UINT8, H5S_ALL, H5S_ALL, H5P_DEFAULT, all) >= 0);
    H5Dclose(d), H5Fclose(f);
    return all;
}

static h5pack_config base_config(h5pack_order order, size_t batch)
{
    h5pack_config c = H5PACK_CONFIG_DEFAULTS;
    c.order = order, c.batch_size = batch, c.epochs = 2, c.threads = 2, c.prefetch = 3;
    c.device = H5PACK_DEVICE_CPU, c.dtype = H5PACK_DTYPE_UINT8, c.output_layout = H5PACK_LAYOUT_AUTO;
    c.cache_bytes = 3 * 8 * 60; /* a few chunks: evictions happen */
    c.window = 2; /* explicit: the default window of these small files is all of them, more than 3 chunks */
    c.seed = 11;
    return c;
}

/* Reads every epoch; checks counts, indices, content against H5Dread, labels. */
static void check_every_sample_once(const char *path, const h5fix_file *sp, h5pack_config cfg)
{
    h5pack_reader *r = NULL;
    int rc = h5pack_open(path, &cfg, &r);
    CHECK_MSG(rc == 0, "open %s: %s", path, h5pack_last_error(r));
    h5pack_info info = H5PACK_INFO_INIT;
    CHECK_OK(h5pack_info_get(r, &info));
    CHECK_EQ_U64(info.n_samples, sp->n);
    CHECK_EQ_INT(info.input_layout, sp->nhwc ? H5PACK_LAYOUT_NHWC : H5PACK_LAYOUT_NCHW);
    uint8_t *truth = read_all_with_hdf5(path, sp);
    size_t img = (size_t)sp->c * sp->h * sp->w;
    unsigned *seen = calloc(sp->n, sizeof *seen);
    h5pack_batch b = H5PACK_BATCH_INIT;
    uint64_t batches = 0, expect_index = 0, expect_epoch = 0;
    while ((rc = h5pack_next(r, &b)) == H5PACK_OK) {
        CHECK_EQ_U64(b.epoch, expect_epoch);
        CHECK_EQ_U64(b.index, expect_index);
        CHECK_EQ_U64(b.bytes, b.count * img);
        CHECK(b.count >= 1 && b.count <= cfg.batch_size);
        for (size_t i = 0; i < b.count; i++) {
            uint64_t s = b.indices[i];
            CHECK(s < sp->n);
            CHECK_MSG(seen[s] == b.epoch, "sample %llu twice in epoch %llu", (unsigned long long)s,
                      (unsigned long long)b.epoch);
            seen[s]++;
            CHECK_MSG(memcmp((const uint8_t *)b.data + i * img, truth + s * img, img) == 0,
                      "batch %llu position %zu: sample %llu differs from H5Dread", (unsigned long long)b.index, i,
                      (unsigned long long)s);
            if (sp->labels)
                CHECK_EQ_INT(b.labels[i], (int64_t)(s % 7));
        }
        if (!sp->labels)
            CHECK(b.labels == NULL);
        CHECK_OK(h5pack_release(r, &b));
        batches++;
        if (++expect_index == info.batches_per_epoch)
            expect_index = 0, expect_epoch++;
    }
    CHECK_EQ_INT(rc, H5PACK_END);
    CHECK_EQ_INT(h5pack_next(r, &b), H5PACK_END);
    CHECK_EQ_U64(batches, info.batches_per_epoch * cfg.epochs);
    for (uint64_t s = 0; s < sp->n; s++)
        CHECK_EQ_U64(seen[s], cfg.epochs);
    h5pack_stats st = H5PACK_STATS_INIT;
    CHECK_OK(h5pack_stats_get(r, &st));
    CHECK_EQ_U64(st.samples, sp->n * cfg.epochs);
    CHECK_EQ_U64(st.batches_fresh, batches);
    CHECK_EQ_U64(st.epochs_completed, cfg.epochs);
    free(seen), free(truth);
    h5pack_close(r);
}

static void test_orders_and_files(void)
{
    const h5pack_order orders[] = {H5PACK_ORDER_SEQUENTIAL, H5PACK_ORDER_RANDOM, H5PACK_ORDER_CHUNK};
    for (int o = 0; o < 3; o++) {
        check_every_sample_once(path_nchw, &spec_nchw, base_config(orders[o], 16));
        check_every_sample_once(path_gzip, &spec_gzip, base_config(orders[o], 10));
        check_every_sample_once(path_nhwc, &spec_nhwc, base_config(orders[o], 7));
        check_every_sample_once(path_h5py, &spec_h5py, base_config(orders[o], 8));
        check_every_sample_once(path_contig, &spec_contig, base_config(orders[o], 5));
    }
    h5pack_config c = base_config(H5PACK_ORDER_CHUNK, 1); /* batch of one, one thread, ring of one */
    c.threads = 1, c.prefetch = 1, c.epochs = 1;
    check_every_sample_once(path_nchw, &spec_nchw, c);
}

/* The indices of one epoch for CFG. */
static uint64_t *epoch_indices(const char *path, h5pack_config cfg, uint64_t *n)
{
    cfg.epochs = 1;
    h5pack_reader *r = NULL;
    CHECK_OK(h5pack_open(path, &cfg, &r));
    uint64_t *out = malloc(1000 * sizeof *out);
    *n = 0;
    h5pack_batch b = H5PACK_BATCH_INIT;
    while (h5pack_next(r, &b) == H5PACK_OK) {
        memcpy(out + *n, b.indices, b.count * sizeof *out);
        *n += b.count;
        CHECK_OK(h5pack_release(r, &b));
    }
    h5pack_close(r);
    return out;
}

static void test_seed_determinism(void)
{
    for (int o = H5PACK_ORDER_RANDOM; o <= H5PACK_ORDER_CHUNK; o++) {
        h5pack_config c = base_config((h5pack_order)o, 16);
        uint64_t na, nb, nc;
        c.window = 0, c.cache_bytes = (size_t)1 << 20; /* the default window: the file's geometry alone */
        uint64_t *a = epoch_indices(path_nchw, c, &na);
        c.threads = 1, c.cache_bytes = (size_t)4 << 20; /* neither threads nor the cache change the order */
        uint64_t *a1 = epoch_indices(path_nchw, c, &na);
        CHECK(memcmp(a, a1, na * 8) == 0);
        c.threads = 3, c.cache_bytes = (size_t)1 << 20;
        uint64_t *b = epoch_indices(path_nchw, c, &nb);
        CHECK_EQ_U64(na, nb);
        CHECK(memcmp(a1, b, na * 8) == 0); /* same seed, same order */
        c.seed = 12;
        uint64_t *d = epoch_indices(path_nchw, c, &nc);
        CHECK(memcmp(a1, d, na * 8) != 0); /* different seed, different order */
        free(a), free(a1), free(b), free(d);
    }
}

static void test_ranks(void)
{
    for (uint32_t world = 2; world <= 3; world++) {
        unsigned *count = calloc(spec_nchw.n, sizeof *count);
        uint64_t per = 0;
        for (uint32_t rank = 0; rank < world; rank++) {
            h5pack_config c = base_config(H5PACK_ORDER_CHUNK, 16);
            c.rank = rank, c.world = world;
            uint64_t n;
            uint64_t *idx = epoch_indices(path_nchw, c, &n);
            CHECK(rank == 0 || n == per); /* equal shares */
            per = n;
            for (uint64_t i = 0; i < n; i++)
                count[idx[i]]++;
            free(idx);
        }
        CHECK_EQ_U64(per, (spec_nchw.n + world - 1) / world);
        uint64_t padding = per * world - spec_nchw.n, repeated = 0;
        for (uint64_t s = 0; s < spec_nchw.n; s++) {
            CHECK_MSG(count[s] >= 1, "sample %llu on no rank", (unsigned long long)s); /* complete */
            repeated += count[s] - 1;
        }
        CHECK_EQ_U64(repeated, padding); /* disjoint but for DistributedSampler's padding */
        free(count);
    }
}

/* float32 output equals (x/255 - mean)/std for ImageNet, FILE and NONE, in NCHW from an NHWC file too. */
static void check_float(const char *path, const h5fix_file *sp, h5pack_norm norm, const float *mean, const float *std)
{
    h5pack_config c = base_config(H5PACK_ORDER_RANDOM, 9);
    c.dtype = H5PACK_DTYPE_FLOAT32, c.output_layout = H5PACK_LAYOUT_NCHW, c.norm = norm, c.epochs = 1;
    for (uint32_t ch = 0; norm == H5PACK_NORM_CUSTOM && ch < sp->c; ch++)
        c.mean[ch] = mean[ch], c.std[ch] = std[ch];
    h5pack_reader *r = NULL;
    int rc = h5pack_open(path, &c, &r);
    CHECK_MSG(rc == 0, "%s", h5pack_last_error(r));
    h5pack_info info = H5PACK_INFO_INIT;
    CHECK_OK(h5pack_info_get(r, &info));
    for (uint32_t ch = 0; ch < sp->c; ch++) /* the normalisation in use is reported */
        CHECK(info.mean[ch] == mean[ch] && info.std[ch] == std[ch]);
    h5pack_batch b = H5PACK_BATCH_INIT;
    size_t img = (size_t)sp->c * sp->h * sp->w;
    while (h5pack_next(r, &b) == H5PACK_OK) {
        CHECK_EQ_U64(b.bytes, b.count * img * 4);
        const float *f = b.data;
        for (size_t i = 0; i < b.count; i++)
            for (uint32_t ch = 0; ch < sp->c; ch++)
                for (uint32_t y = 0; y < sp->h; y++)
                    for (uint32_t x = 0; x < sp->w; x++) {
                        float want = ((float)h5fix_chw_value(b.indices[i], ch, y, x) / 255.0f - mean[ch]) / std[ch];
                        float got = f[i * img + ((size_t)ch * sp->h + y) * sp->w + x];
                        CHECK_NEAR(got, want, 1e-5 * (1 + fabs(want)));
                    }
        CHECK_OK(h5pack_release(r, &b));
    }
    h5pack_close(r);
}

static void test_float_output(void)
{
    const float in_mean[3] = {0.485f, 0.456f, 0.406f}, in_std[3] = {0.229f, 0.224f, 0.225f};
    const float gray_mean[1] = {0.449f}, gray_std[1] = {0.226f};
    const float zero[3] = {0, 0, 0}, one[3] = {1, 1, 1};
    const float file_mean[3] = {0.3f, 0.4f, 0.5f}, file_std[3] = {0.2f, 0.25f, 0.3f};
    check_float(path_nchw, &spec_nchw, H5PACK_NORM_IMAGENET, in_mean, in_std);
    check_float(path_nhwc, &spec_nhwc, H5PACK_NORM_IMAGENET, in_mean, in_std);
    check_float(path_gzip, &spec_gzip, H5PACK_NORM_IMAGENET, gray_mean, gray_std);
    check_float(path_nchw, &spec_nchw, H5PACK_NORM_FILE, file_mean, file_std);
    check_float(path_nchw, &spec_nchw, H5PACK_NORM_NONE, zero, one);
    const float custom_mean[3] = {0.1f, 0.9f, 0.5f}, custom_std[3] = {0.5f, 2.0f, 0.125f};
    check_float(path_nhwc, &spec_nhwc, H5PACK_NORM_CUSTOM, custom_mean, custom_std);
    /* FILE on a file without mean/std: a clear error */
    h5pack_config c = base_config(H5PACK_ORDER_CHUNK, 8);
    c.norm = H5PACK_NORM_FILE, c.dtype = H5PACK_DTYPE_FLOAT32;
    h5pack_reader *r = NULL;
    CHECK_EQ_INT(h5pack_open(path_nhwc, &c, &r), H5PACK_EINVAL);
    CHECK_STR_CONTAINS(h5pack_last_error(r), "mean");
    CHECK_STR_CONTAINS(h5pack_last_error(NULL), "mean");
    h5pack_close(r);
}

/* Every dtype and output layout: the delivered batch equals the reference conversion (backend.h) of the
 * same images, byte for byte, with the normalisation the reader reports. */
static void check_dtype_layout(const char *path, const h5fix_file *sp, h5pack_dtype dtype, h5pack_layout out)
{
    h5pack_config c = base_config(H5PACK_ORDER_CHUNK, 8);
    c.dtype = dtype, c.output_layout = out, c.epochs = 1;
    h5pack_reader *r = NULL;
    CHECK_OK(h5pack_open(path, &c, &r));
    h5pack_info info = H5PACK_INFO_INIT;
    CHECK_OK(h5pack_info_get(r, &info));
    backend_params bp;
    memset(&bp, 0, sizeof bp);
    bp.channels = sp->c, bp.height = sp->h, bp.width = sp->w;
    bp.in_layout = sp->nhwc ? H5PACK_LAYOUT_NHWC : H5PACK_LAYOUT_NCHW;
    bp.out_layout = out == H5PACK_LAYOUT_AUTO ? bp.in_layout : out;
    CHECK_EQ_INT(info.output_layout, bp.out_layout);
    bp.dtype = dtype, bp.batch_size = c.batch_size, bp.slots = 1, bp.threads = 1;
    memcpy(bp.mean, info.mean, sizeof bp.mean), memcpy(bp.std, info.std, sizeof bp.std);
    size_t img = (size_t)sp->c * sp->h * sp->w, out_img = h5pack_backend_output_image_bytes(&bp);
    uint8_t *in = malloc(c.batch_size * img), *want = malloc(c.batch_size * out_img);
    h5pack_batch b = H5PACK_BATCH_INIT;
    while (h5pack_next(r, &b) == H5PACK_OK) {
        CHECK_EQ_U64(b.bytes, b.count * out_img);
        for (size_t i = 0; i < b.count; i++)
            h5fix_image(sp, b.indices[i], in + i * img);
        h5pack_backend_convert_ref(&bp, in, NULL, want, 0, b.count, 0);
        CHECK_MSG(memcmp(b.data, want, b.bytes) == 0, "dtype %d layout %d: batch %llu differs", dtype, out,
                  (unsigned long long)b.index);
        CHECK_OK(h5pack_release(r, &b));
    }
    free(in), free(want);
    h5pack_close(r);
}

static void test_dtypes_and_layouts(void)
{
    const h5pack_dtype dtypes[] = {H5PACK_DTYPE_FLOAT32, H5PACK_DTYPE_FLOAT16, H5PACK_DTYPE_BFLOAT16,
                                   H5PACK_DTYPE_UINT8};
    const h5pack_layout layouts[] = {H5PACK_LAYOUT_NCHW, H5PACK_LAYOUT_NHWC, H5PACK_LAYOUT_AUTO};
    for (int d = 0; d < 4; d++)
        for (int l = 0; l < 3; l++) {
            check_dtype_layout(path_nchw, &spec_nchw, dtypes[d], layouts[l]);
            check_dtype_layout(path_nhwc, &spec_nhwc, dtypes[d], layouts[l]);
        }
}

int main(void)
{
    h5fix_local_name(path_nchw, sizeof path_nchw, "nchw");
    h5fix_local_name(path_gzip, sizeof path_gzip, "gzip");
    h5fix_local_name(path_nhwc, sizeof path_nhwc, "nhwc");
    CHECK_OK(h5fix_write(path_nchw, &spec_nchw));
    CHECK_OK(h5fix_write(path_gzip, &spec_gzip));
    CHECK_OK(h5fix_write(path_nhwc, &spec_nhwc));
    h5fix_local_name(path_h5py, sizeof path_h5py, "h5py");
    h5fix_local_name(path_contig, sizeof path_contig, "contig");
    CHECK_OK(h5fix_write(path_h5py, &spec_h5py));
    CHECK_OK(h5fix_write(path_contig, &spec_contig));
    test_orders_and_files();
    test_seed_determinism();
    test_ranks();
    test_float_output();
    test_dtypes_and_layouts();
    remove(path_nchw), remove(path_gzip), remove(path_nhwc), remove(path_h5py), remove(path_contig);
    printf("reader data: all checks passed\n");
    return 0;
}
