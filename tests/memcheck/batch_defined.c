/* batch_defined - reads one epoch of an h5pack file through the public reader API in several
 * configurations (uint8 as stored, float32/float16/bfloat16 with the other layout, augmentation, echo,
 * a rank of two, a short last batch, resizing crops resampled in one pass) and checks every delivered
 * byte: under valgrind memcheck each batch's data, labels and indices must be defined (client check
 * request, when valgrind's header is there, plus a fold over every byte that memcheck sees as a
 * conditional jump); the uint8 batches must equal H5Dread of the same rows and every sample must come
 * exactly once. A file of images of several sizes (format version 2) runs the resizing crops only (the
 * one-pass path, and the two-pass path through echo), every byte checked the same way. A file of images
 * in tiles (h5pack --tiles) runs patches: sliding windows (uint8 patches equal H5Dread of their region,
 * zero past a small image's edge) and random ones with a one-tile cache, where and labels included.
 *   batch_defined FILE.h5        exit 0 when every check passed (memcheck's own errors: its exit code) */
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "h5pack.h"
#include <hdf5.h>

#if defined(__has_include)
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#define DEFINED_OR_FAIL(p, n) CHECK_MSG(VALGRIND_CHECK_MEM_IS_DEFINED((p), (n)) == 0, "undefined bytes in %s", #p)
#endif
#endif
#ifndef DEFINED_OR_FAIL
#define DEFINED_OR_FAIL(p, n) ((void)0)
#endif

/* A value depending on every byte, used in a branch: memcheck reports any undefined one. */
static void touch_every_byte(const void *p, size_t n, uint64_t *fold)
{
    const uint8_t *b = p;
    uint64_t h = *fold;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    if (h == 0)
        printf("(fold is zero)\n");
    *fold = h;
}

/* Images of several sizes: their count (image_offsets' rows), else 0. */
static size_t several_sizes_count(const char *path)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    hsize_t n = 0;
    if (f >= 0 && H5Lexists(f, "image_offsets", H5P_DEFAULT) > 0) {
        hid_t d = H5Dopen2(f, "image_offsets", H5P_DEFAULT), sp = H5Dget_space(d);
        CHECK(H5Sget_simple_extent_dims(sp, &n, NULL) == 1);
        H5Sclose(sp), H5Dclose(d);
    }
    if (f >= 0)
        H5Fclose(f);
    return (size_t)n;
}

static uint8_t *read_images(const char *path, size_t *n, size_t *image_bytes)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t d = f >= 0 ? H5Dopen2(f, "images", H5P_DEFAULT) : -1;
    hid_t s = d >= 0 ? H5Dget_space(d) : -1;
    hsize_t dims[4] = {0};
    CHECK_MSG(s >= 0 && H5Sget_simple_extent_ndims(s) == 4 && H5Sget_simple_extent_dims(s, dims, NULL) == 4,
              "%s: no 4-D images dataset", path);
    *n = (size_t)dims[0];
    *image_bytes = (size_t)(dims[1] * dims[2] * dims[3]);
    uint8_t *all = malloc(*n * *image_bytes);
    CHECK(all && H5Dread(d, H5T_NATIVE_UINT8, H5S_ALL, H5S_ALL, H5P_DEFAULT, all) >= 0);
    H5Sclose(s), H5Dclose(d), H5Fclose(f);
    return all;
}

typedef struct run_case {
    const char *name;
    h5pack_config cfg;
} run_case;

/* One epoch of CASE: every byte of every batch defined; uint8 as stored equals the file. */
static void run_one(const char *path, const run_case *rc, const uint8_t *truth, size_t n, size_t image_bytes)
{
    h5pack_reader *r = NULL;
    int st = h5pack_open(path, &rc->cfg, &r);
    CHECK_MSG(st == 0, "%s: open: %s", rc->name, h5pack_last_error(r));
    h5pack_info info = H5PACK_INFO_INIT;
    CHECK_OK(h5pack_info_get(r, &info));
    unsigned *seen = calloc(n, sizeof *seen);
    CHECK(seen);
    uint64_t fold = 1469598103934665603ull, samples = 0;
    h5pack_batch b = H5PACK_BATCH_INIT;
    int exact = truth && rc->cfg.dtype == H5PACK_DTYPE_UINT8 && info.output_layout == info.input_layout;
    while ((st = h5pack_next(r, &b)) == H5PACK_OK) {
        DEFINED_OR_FAIL(b.data, b.bytes);
        DEFINED_OR_FAIL(b.indices, b.count * sizeof *b.indices);
        touch_every_byte(b.data, b.bytes, &fold);
        touch_every_byte(b.indices, b.count * sizeof *b.indices, &fold);
        if (b.labels) {
            DEFINED_OR_FAIL(b.labels, b.count * sizeof *b.labels);
            touch_every_byte(b.labels, b.count * sizeof *b.labels, &fold);
        }
        for (size_t i = 0; i < b.count; i++) {
            CHECK(b.indices[i] < n);
            if (b.echo == 0)
                seen[b.indices[i]]++;
            if (exact)
                CHECK_MSG(memcmp((const uint8_t *)b.data + i * image_bytes, truth + b.indices[i] * image_bytes,
                                 image_bytes) == 0,
                          "%s: sample %llu differs from H5Dread", rc->name, (unsigned long long)b.indices[i]);
        }
        samples += b.echo == 0 ? b.count : 0;
        CHECK_OK(h5pack_release(r, &b));
    }
    CHECK_MSG(st == H5PACK_END, "%s: next returned %d: %s", rc->name, st, h5pack_last_error(r));
    CHECK_EQ_U64(samples, info.samples_per_epoch);
    for (size_t i = 0; i < n && rc->cfg.world == 1; i++) /* drop_last may leave some out, never twice */
        CHECK_MSG(seen[i] == 1 || (rc->cfg.drop_last && seen[i] == 0), "%s: sample %zu delivered %u times",
                  rc->name, i, seen[i]);
    printf("ok   %s: %llu samples, every byte defined (fold %016llx)\n", rc->name, (unsigned long long)samples,
           (unsigned long long)fold);
    free(seen);
    h5pack_close(r);
}

static h5pack_config config(h5pack_dtype dtype, h5pack_layout out, h5pack_order order, size_t batch)
{
    h5pack_config c = H5PACK_CONFIG_DEFAULTS;
    c.device = H5PACK_DEVICE_CPU, c.epochs = 1, c.threads = 2, c.prefetch = 3;
    c.dtype = dtype, c.output_layout = out, c.order = order, c.batch_size = batch;
    c.cache_bytes = 4u << 20; /* the chunk order's default window here is the whole file (1.2 MB) */
    return c;
}

/* The S x S region of tiles/<I> at (Y, X) as HWC, zero past the image's edge (what a patch holds). */
static void read_region(hid_t f, int64_t i, int64_t y, int64_t x, uint32_t S, uint32_t C, uint8_t *out)
{
    char name[64];
    snprintf(name, sizeof name, "tiles/%lld", (long long)i);
    hid_t d = H5Dopen2(f, name, H5P_DEFAULT), fs = H5Dget_space(d);
    hsize_t dims[3], off[3] = {(hsize_t)y, (hsize_t)x, 0}, zero[3] = {0, 0, 0}, mdims[3] = {S, S, C};
    CHECK(H5Sget_simple_extent_dims(fs, dims, NULL) == 3);
    hsize_t count[3] = {dims[0] - off[0] < S ? dims[0] - off[0] : S, dims[1] - off[1] < S ? dims[1] - off[1] : S, C};
    hid_t ms = H5Screate_simple(3, mdims, NULL);
    memset(out, 0, (size_t)S * S * C);
    CHECK(H5Sselect_hyperslab(fs, H5S_SELECT_SET, off, NULL, count, NULL) >= 0);
    CHECK(H5Sselect_hyperslab(ms, H5S_SELECT_SET, zero, NULL, count, NULL) >= 0);
    CHECK(H5Dread(d, H5T_NATIVE_UINT8, ms, fs, H5P_DEFAULT, out) >= 0);
    H5Sclose(ms), H5Sclose(fs), H5Dclose(d);
}

/* One epoch of patches: every byte of data, indices, where and labels defined; uint8 NHWC patches equal
 * their region. */
static void run_patches(const char *path, const run_case *rc)
{
    h5pack_reader *r = NULL;
    CHECK_MSG(h5pack_open(path, &rc->cfg, &r) == 0, "%s: open: %s", rc->name, h5pack_last_error(r));
    h5pack_info info = H5PACK_INFO_INIT;
    CHECK_OK(h5pack_info_get(r, &info));
    uint32_t S = info.patch_size, C = info.channels;
    int exact = rc->cfg.dtype == H5PACK_DTYPE_UINT8 && info.output_layout == H5PACK_LAYOUT_NHWC;
    uint8_t *ref = malloc((size_t)S * S * C);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    uint64_t fold = 1469598103934665603ull, patches = 0;
    h5pack_batch b = H5PACK_BATCH_INIT;
    int st;
    while ((st = h5pack_next(r, &b)) == H5PACK_OK) {
        DEFINED_OR_FAIL(b.data, b.bytes);
        DEFINED_OR_FAIL(b.where, b.count * 3 * sizeof *b.where);
        touch_every_byte(b.data, b.bytes, &fold);
        touch_every_byte(b.where, b.count * 3 * sizeof *b.where, &fold);
        touch_every_byte(b.indices, b.count * sizeof *b.indices, &fold);
        if (b.labels)
            touch_every_byte(b.labels, b.count * sizeof *b.labels, &fold);
        for (size_t q = 0; q < b.count; q++) {
            const int64_t *w = b.where + 3 * q;
            CHECK(w[0] >= 0 && (uint64_t)w[0] < info.n_samples && b.indices[q] == (uint64_t)w[0]);
            uint32_t h = 0, wd = 0;
            CHECK_OK(h5pack_image_shape(r, (uint64_t)w[0], &h, &wd));
            CHECK(w[1] >= 0 && w[2] >= 0 && (w[1] + S <= h || w[1] == 0) && (w[2] + S <= wd || w[2] == 0));
            if (!exact)
                continue;
            read_region(f, w[0], w[1], w[2], S, C, ref);
            CHECK_MSG(memcmp((const uint8_t *)b.data + q * S * S * C, ref, (size_t)S * S * C) == 0,
                      "%s: patch (%lld, %lld, %lld) differs from H5Dread", rc->name, (long long)w[0],
                      (long long)w[1], (long long)w[2]);
        }
        patches += b.count;
        CHECK_OK(h5pack_release(r, &b));
    }
    CHECK_MSG(st == H5PACK_END, "%s: next returned %d: %s", rc->name, st, h5pack_last_error(r));
    CHECK_EQ_U64(patches, info.samples_per_epoch);
    printf("ok   %s: %llu patches, every byte defined (fold %016llx)\n", rc->name, (unsigned long long)patches,
           (unsigned long long)fold);
    H5Fclose(f);
    free(ref);
    h5pack_close(r);
}

static void run_all_patches(const char *path)
{
    run_case cases[3] = {
        {"patches 40x40, overlap 8, uint8 NHWC", config(H5PACK_DTYPE_UINT8, H5PACK_LAYOUT_NHWC, H5PACK_ORDER_CHUNK, 5)},
        {"patches 33x33, float32 NCHW, flip", config(H5PACK_DTYPE_FLOAT32, H5PACK_LAYOUT_NCHW, H5PACK_ORDER_CHUNK, 6)},
        {"random patches 50x50, float16 NHWC, one-tile cache, rank 1 of 2",
         config(H5PACK_DTYPE_FLOAT16, H5PACK_LAYOUT_NHWC, H5PACK_ORDER_CHUNK, 4)},
    };
    cases[0].cfg.patch_size = 40, cases[0].cfg.patch_overlap = 8;
    cases[1].cfg.patch_size = 33, cases[1].cfg.random_flip = 1;
    cases[2].cfg.patch_size = 50, cases[2].cfg.patch_mode = H5PACK_PATCH_RANDOM, cases[2].cfg.patches_per_epoch = 37;
    cases[2].cfg.cache_bytes = 1, cases[2].cfg.rank = 1, cases[2].cfg.world = 2;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        run_patches(path, &cases[i]);
}

static int is_tiled(const char *path)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    int tiled = f >= 0 && H5Lexists(f, "tiles", H5P_DEFAULT) > 0;
    if (f >= 0)
        H5Fclose(f);
    return tiled;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: batch_defined FILE.h5\n");
        return 2;
    }
    /* every reader in fresh memory: a ring kept from the reader before (defined bytes) would hide a byte
     * that this reader never writes */
    setenv("H5PACK_NO_KEEP", "1", 1);
    if (is_tiled(argv[1])) {
        run_all_patches(argv[1]);
        return 0;
    }
    size_t n = several_sizes_count(argv[1]), image_bytes = 0;
    uint8_t *truth = n ? NULL : read_images(argv[1], &n, &image_bytes);
    run_case cases[8] = {
        {"uint8 as stored, sequential, short last batch", config(H5PACK_DTYPE_UINT8, H5PACK_LAYOUT_AUTO,
                                                                  H5PACK_ORDER_SEQUENTIAL, 16)},
        {"float32 NHWC, random order, flip + crop padding, echo 2",
         config(H5PACK_DTYPE_FLOAT32, H5PACK_LAYOUT_NHWC, H5PACK_ORDER_RANDOM, 10)},
        {"float16 NCHW, chunk order, file normalisation", config(H5PACK_DTYPE_FLOAT16, H5PACK_LAYOUT_NCHW,
                                                                  H5PACK_ORDER_CHUNK, 7)},
        {"bfloat16 NHWC, rank 1 of 2 (padded)", config(H5PACK_DTYPE_BFLOAT16, H5PACK_LAYOUT_NHWC,
                                                       H5PACK_ORDER_RANDOM, 9)},
        {"uint8 NHWC, chunk order, drop_last", config(H5PACK_DTYPE_UINT8, H5PACK_LAYOUT_NHWC, H5PACK_ORDER_CHUNK,
                                                      8)},
        /* resizing crops: the workers resample straight from the chunks (one pass) */
        {"float32 NCHW, random resized crop to 21x19 + flip", config(H5PACK_DTYPE_FLOAT32, H5PACK_LAYOUT_NCHW,
                                                                      H5PACK_ORDER_RANDOM, 10)},
        {"float16 NHWC, centre crop to 24x24", config(H5PACK_DTYPE_FLOAT16, H5PACK_LAYOUT_NHWC, H5PACK_ORDER_CHUNK, 7)},
        {"uint8 NHWC, random resized crop to 40x12", config(H5PACK_DTYPE_UINT8, H5PACK_LAYOUT_NHWC,
                                                            H5PACK_ORDER_SEQUENTIAL, 9)},
    };
    cases[1].cfg.random_flip = 1, cases[1].cfg.random_crop_padding = 3, cases[1].cfg.echo = 2;
    cases[2].cfg.norm = H5PACK_NORM_FILE;
    cases[3].cfg.rank = 1, cases[3].cfg.world = 2;
    cases[4].cfg.drop_last = 1;
    cases[5].cfg.crop = H5PACK_CROP_RANDOM_RESIZED, cases[5].cfg.random_flip = 1;
    cases[5].cfg.output_height = 21, cases[5].cfg.output_width = 19;
    cases[6].cfg.crop = H5PACK_CROP_CENTER, cases[6].cfg.output_height = cases[6].cfg.output_width = 24;
    cases[7].cfg.crop = H5PACK_CROP_RANDOM_RESIZED, cases[7].cfg.output_height = 40, cases[7].cfg.output_width = 12;
    for (size_t i = truth ? 0 : 5; i < sizeof cases / sizeof cases[0]; i++) /* several sizes: crops only */
        run_one(argv[1], &cases[i], truth, n, image_bytes);
    if (!truth) { /* the two-pass path: images assembled into the uint8 batch, cropped again per echo */
        run_case echo = {"several sizes, float32, random resized crop to 17x23, echo 2",
                         config(H5PACK_DTYPE_FLOAT32, H5PACK_LAYOUT_NCHW, H5PACK_ORDER_RANDOM, 6)};
        echo.cfg.crop = H5PACK_CROP_RANDOM_RESIZED, echo.cfg.output_height = 17, echo.cfg.output_width = 23;
        echo.cfg.echo = 2;
        run_one(argv[1], &echo, NULL, n, 0);
    }
    free(truth);
    return 0;
}
