/* test_describe.c - h5pack_describe() reports what an opened reader reports (h5pack_info_get) for every
 * kind of file the reader meets (implicit index, gzip, contiguous, h5py-style old-format resizable gzip
 * NHWC, fletcher32), plus facts checked independently: read path, filters, stored bytes (HDF5's storage
 * size), file size, format version, classes; the struct_size convention; errors that name the file. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "h5pack.h"
#include "h5fixture.h"

static char dir[256];

/* The kinds of file the reader meets, each with what describe must report. */
typedef enum test_kind {
    TF_IMPLICIT,   /* what h5pack writes: latest format, chunked, unfiltered, fixed dims, early allocation */
    TF_GZIP,       /* latest format, chunked, deflate(6) */
    TF_CONTIGUOUS, /* latest format, unchunked */
    TF_H5PY_GZIP,  /* h5py's defaults: superblock 0 (probed), maxshape (None,...), shuffle + deflate(4), NHWC */
    TF_FLETCHER,   /* superblock 0, fletcher32 + deflate(4): the hdf5 read path */
    TF_H5PY_PLAIN, /* h5py unfiltered but resizable: chunks located at open, nothing to inflate */
    TF_KINDS
} test_kind;

/* Labels i % 5 and a compressible pattern in every file. */
#define DESCRIBE_FILE .labels = 1, .n_classes = 5, .pixel = h5fix_pixel_sparse
static const char *const class_names[] = {"a", "b", "c", "d", "e"};
static const h5fix_file files[TF_KINDS] = {
    [TF_IMPLICIT] = {.n = 203, .c = 3, .h = 8, .w = 10, .k = 6, DESCRIBE_FILE,
                     .attrs = {{.name = "h5pack_format_version", .value = 1}}},
    [TF_GZIP] = {.n = 203, .c = 3, .h = 8, .w = 10, .k = 6, .gzip = 6, DESCRIBE_FILE, .classes = 5,
                 .class_names = class_names},
    [TF_CONTIGUOUS] = {.n = 97, .c = 3, .h = 64, .w = 64, .k = 1, .contiguous = 1, DESCRIBE_FILE,
                       .attrs = {{.name = "h5pack_format_version", .value = 1}}},
    [TF_H5PY_GZIP] = {.n = 150, .c = 3, .h = 12, .w = 9, .k = 7, .nhwc = 1, .layout_attr = "NHWC", .resizable = 1,
                      .old_format = 1, .shuffle = 1, .gzip = 4, DESCRIBE_FILE},
    /* a newer version is refused: tests/chunksrc/test_chunksrc_version.c */
    [TF_FLETCHER] = {.n = 60, .c = 4, .h = 5, .w = 6, .k = 4, .old_format = 1, .fletcher32 = 1, .gzip = 4,
                     DESCRIBE_FILE, .attrs = {{.name = "h5pack_format_version", .value = 1}}},
    [TF_H5PY_PLAIN] = {.n = 150, .c = 3, .h = 12, .w = 9, .k = 7, .resizable = 1, .old_format = 1, DESCRIBE_FILE},
};

typedef struct expect {
    h5pack_read_path path;
    const char *filters;
    int fast_path, chunked;
} expect;

static const expect expected[TF_KINDS] = {
    [TF_IMPLICIT] = {H5PACK_READ_IMPLICIT, "", 1, 1},
    [TF_GZIP] = {H5PACK_READ_RAW_DEFLATE, "deflate(6)", 1, 1},
    [TF_CONTIGUOUS] = {H5PACK_READ_CONTIGUOUS, "", 1, 0},
    [TF_H5PY_GZIP] = {H5PACK_READ_RAW_DEFLATE, "shuffle, deflate(4)", 1, 1},
    [TF_FLETCHER] = {H5PACK_READ_HDF5, "fletcher32, deflate(4)", 0, 1},
    [TF_H5PY_PLAIN] = {H5PACK_READ_LOCATED, "", 1, 1},
};

static h5pack_config test_config(size_t cache, h5pack_order order, int threads)
{
    h5pack_config cfg = H5PACK_CONFIG_DEFAULTS;
    cfg.device = H5PACK_DEVICE_CPU, cfg.dtype = H5PACK_DTYPE_UINT8, cfg.output_layout = H5PACK_LAYOUT_AUTO;
    cfg.cache_bytes = cache, cfg.order = order, cfg.threads = threads, cfg.batch_size = 10, cfg.epochs = 1;
    return cfg;
}

/* Every field h5pack_info also has carries the same value. */
static void compare_with_reader(const char *path, const h5pack_config *cfg, const h5pack_file_desc *d)
{
    h5pack_reader *r = NULL;
    int rc = h5pack_open(path, cfg, &r);
    CHECK_MSG(rc == 0, "h5pack_open(%s): %s", path, h5pack_last_error(r));
    h5pack_info in = H5PACK_INFO_INIT;
    CHECK_OK(h5pack_info_get(r, &in));
    h5pack_close(r);
    CHECK_EQ_U64(d->n_samples, in.n_samples);
    CHECK_EQ_INT(d->channels, in.channels);
    CHECK_EQ_INT(d->height, in.height);
    CHECK_EQ_INT(d->width, in.width);
    CHECK_EQ_INT(d->layout, in.input_layout);
    CHECK_EQ_INT(d->output_layout, in.output_layout);
    CHECK_EQ_INT(d->dtype, in.dtype);
    CHECK_EQ_INT(d->has_labels, in.has_labels);
    CHECK_EQ_INT(d->n_classes, in.n_classes);
    CHECK_EQ_U64(d->samples_per_chunk, in.samples_per_chunk);
    CHECK_EQ_U64(d->n_chunks, in.n_chunks);
    CHECK_EQ_U64(d->chunk_bytes, in.chunk_bytes);
    CHECK_EQ_INT(d->compressed, in.compressed);
    CHECK_EQ_INT(d->fast_path, in.fast_path);
    CHECK_EQ_U64(d->cache_chunks, in.cache_chunks);
    CHECK_EQ_U64(d->window, in.window);
    CHECK_EQ_INT(d->threads, in.threads);
    CHECK_EQ_U64(d->samples_per_epoch, in.samples_per_epoch);
    CHECK_EQ_U64(d->batches_per_epoch, in.batches_per_epoch);
}

/* Facts known from how the file was made. */
static void check_facts(const char *path, test_kind kind, const h5pack_file_desc *d)
{
    const h5fix_file *t = &files[kind];
    const expect *e = &expected[kind];
    uint64_t img = (uint64_t)t->c * t->h * t->w;
    struct stat st;
    CHECK(stat(path, &st) == 0);
    CHECK_EQ_U64(d->file_bytes, (uint64_t)st.st_size);
    CHECK_EQ_INT(d->read_path, e->path);
    CHECK_MSG(strcmp(d->filters, e->filters) == 0, "%s: filters \"%s\", expected \"%s\"", path, d->filters, e->filters);
    CHECK_EQ_INT(d->n_filters, e->filters[0] ? (strchr(e->filters, ',') ? 2 : 1) : 0);
    CHECK_EQ_INT(d->fast_path, e->fast_path);
    CHECK_EQ_INT(d->chunked, e->chunked);
    CHECK_EQ_INT(d->layout, t->nhwc ? H5PACK_LAYOUT_NHWC : H5PACK_LAYOUT_NCHW);
    CHECK_EQ_U64(d->image_bytes, img);
    CHECK_EQ_INT(d->format_version, t->attrs[0].name ? t->attrs[0].value : -1);
    CHECK_EQ_INT(d->n_classes, t->classes > 0 ? t->classes : 5);
    CHECK_EQ_INT(d->has_pixel_stats, 0);
    if (e->chunked) {
        CHECK_EQ_U64(d->samples_per_chunk, t->k);
        CHECK_EQ_U64(d->n_chunks, (t->n + t->k - 1) / t->k);
    }
    /* The reader's stored sizes: HDF5's for filtered chunks, the images' bytes for the pread paths (the
     * last implicit chunk is read only as far as it holds images). */
    uint64_t storage = h5fix_storage_bytes(path);
    CHECK_EQ_U64(d->stored_bytes, kind == TF_IMPLICIT ? t->n * img : storage);
    if (kind == TF_GZIP || kind == TF_H5PY_GZIP)
        CHECK_MSG(d->stored_bytes < t->n * img / 2, "%s: gzip stores %llu of %llu bytes", path,
                  (unsigned long long)d->stored_bytes, (unsigned long long)(t->n * img));
    if (!getenv("H5PACK_NO_MMAP"))
        CHECK_EQ_INT(d->mapped, kind == TF_IMPLICIT || kind == TF_CONTIGUOUS);
}

static void describe_kind(test_kind kind, const char *name)
{
    char path[300];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    CHECK_OK(h5fix_write(path, &files[kind]));
    const size_t caches[] = {1, 5000, 1 << 30};
    for (int c = 0; c < 3; c++)
        for (int o = 0; o < 3; o++) {
            h5pack_config cfg = test_config(caches[c], (h5pack_order)o, 1 + c);
            if (c < 2) /* open refuses these caches with the default window (the whole small file) */
                cfg.window = 2;
            h5pack_file_desc d = H5PACK_FILE_DESC_INIT;
            char err[512];
            int rc = h5pack_describe(path, &cfg, &d, err, sizeof err);
            CHECK_MSG(rc == 0, "h5pack_describe(%s): %s", path, err);
            CHECK_EQ_U64(d.struct_size, sizeof d);
            check_facts(path, kind, &d);
            compare_with_reader(path, &cfg, &d);
        }
    unlink(path);
}

/* struct_size: too small is EINVAL naming the struct; a newer caller's longer struct gets a zeroed tail. */
static void check_abi(const char *path)
{
    char err[512];
    h5pack_file_desc small = H5PACK_FILE_DESC_INIT;
    small.struct_size = 8;
    CHECK_EQ_INT(h5pack_describe(path, NULL, &small, err, sizeof err), H5PACK_EINVAL);
    CHECK_STR_CONTAINS(err, "H5PACK_FILE_DESC_INIT");
    struct {
        h5pack_file_desc d;
        unsigned char tail[32];
    } big;
    memset(&big, 0xab, sizeof big);
    big.d.struct_size = sizeof big;
    CHECK_OK(h5pack_describe(path, NULL, &big.d, err, sizeof err));
    CHECK_EQ_U64(big.d.struct_size, sizeof big);
    for (size_t i = 0; i < sizeof big.tail; i++)
        CHECK_EQ_INT(big.tail[i], 0);
    CHECK(big.d.n_samples > 0);
}

static void check_errors(const char *good)
{
    char err[512], path[300];
    h5pack_file_desc d = H5PACK_FILE_DESC_INIT;
    snprintf(path, sizeof path, "%s/missing.h5", dir);
    CHECK_EQ_INT(h5pack_describe(path, NULL, &d, err, sizeof err), H5PACK_ENOTFOUND);
    CHECK_STR_CONTAINS(err, "missing.h5");
    snprintf(path, sizeof path, "%s/text.h5", dir);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    fputs("not an HDF5 file\n", f);
    fclose(f);
    CHECK_EQ_INT(h5pack_describe(path, NULL, &d, err, sizeof err), H5PACK_EFORMAT);
    CHECK_STR_CONTAINS(err, "text.h5");
    unlink(path);
    h5pack_config cfg = H5PACK_CONFIG_DEFAULTS;
    cfg.images_dataset = "pixels";
    CHECK_EQ_INT(h5pack_describe(good, &cfg, &d, err, sizeof err), H5PACK_ENOTFOUND);
    CHECK_STR_CONTAINS(err, "pixels");
    cfg = (h5pack_config)H5PACK_CONFIG_DEFAULTS;
    cfg.batch_size = 0;
    CHECK_EQ_INT(h5pack_describe(good, &cfg, &d, err, sizeof err), H5PACK_EINVAL);
    CHECK_STR_CONTAINS(err, "batch_size");
    CHECK_EQ_INT(h5pack_describe(good, NULL, NULL, err, sizeof err), H5PACK_EINVAL);
    CHECK_EQ_INT(h5pack_describe(NULL, NULL, &d, err, sizeof err), H5PACK_EINVAL);
}

/* Every cache opens: chunk_order_cache_min is 0 whatever the config, and the chunk order streams one epoch
 * reading every chunk once with a cache of one chunk (less than a chunk's bytes), of a few chunks and of
 * the whole file; h5pack_describe's window equals the opened reader's (it follows the cache). */
static void check_any_cache(const char *path)
{
    char err[512];
    for (int threads = 1; threads <= 3; threads += 2)
        for (int o = 0; o < 3; o++) {
            h5pack_config cfg = test_config(1, (h5pack_order)o, threads);
            h5pack_file_desc d = H5PACK_FILE_DESC_INIT;
            CHECK_OK(h5pack_describe(path, &cfg, &d, err, sizeof err));
            CHECK_EQ_U64(d.chunk_order_cache_min, 0);
            const size_t caches[] = {1, 3 * d.chunk_bytes, d.n_chunks * d.chunk_bytes};
            for (size_t k = 0; k < sizeof caches / sizeof caches[0]; k++) {
                h5pack_config chunk = test_config(caches[k], H5PACK_ORDER_CHUNK, threads);
                chunk.epochs = 1;
                CHECK_OK(h5pack_describe(path, &chunk, &d, err, sizeof err));
                h5pack_reader *r = NULL;
                CHECK_MSG(h5pack_open(path, &chunk, &r) == 0, "cache %zu: %s", chunk.cache_bytes, h5pack_last_error(r));
                h5pack_info info = H5PACK_INFO_INIT;
                CHECK_OK(h5pack_info_get(r, &info));
                CHECK_EQ_U64(info.window, d.window);
                CHECK_EQ_U64(info.order_fingerprint, d.order_fingerprint);
                h5pack_batch b = H5PACK_BATCH_INIT;
                int rc;
                while ((rc = h5pack_next(r, &b)) == H5PACK_OK)
                    CHECK_OK(h5pack_release(r, &b));
                CHECK_EQ_INT(rc, H5PACK_END);
                h5pack_stats st = H5PACK_STATS_INIT;
                CHECK_OK(h5pack_stats_get(r, &st));
                CHECK_MSG(st.chunk_misses == d.n_chunks, "cache %zu: %llu loads of %llu chunks", caches[k],
                          (unsigned long long)st.chunk_misses, (unsigned long long)d.n_chunks);
                h5pack_close(r);
            }
        }
}

int main(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/h5pack_describe_XXXXXX", tmp && *tmp ? tmp : "/tmp");
    CHECK(mkdtemp(dir) != NULL);
    const char *names[TF_KINDS] = {"implicit.h5", "gzip.h5", "contiguous.h5", "h5py_gzip.h5", "fletcher.h5",
                                   "h5py_plain.h5"};
    for (int k = 0; k < TF_KINDS; k++)
        describe_kind((test_kind)k, names[k]);
    char good[300];
    snprintf(good, sizeof good, "%s/good.h5", dir);
    CHECK_OK(h5fix_write(good, &files[TF_IMPLICIT]));
    check_abi(good);
    check_any_cache(good);
    check_errors(good);
    CHECK(strcmp(h5pack_read_path_name(H5PACK_READ_IMPLICIT), "implicit") == 0);
    CHECK(strcmp(h5pack_read_path_name(H5PACK_READ_RAW_DEFLATE), "raw deflate") == 0);
    CHECK(strcmp(h5pack_read_path_name(H5PACK_READ_LOCATED), "located") == 0);
    CHECK(strcmp(h5pack_read_path_name((h5pack_read_path)42), "unknown") == 0);
    unlink(good);
    rmdir(dir);
    printf("h5pack_describe == h5pack_info on %d kinds of file x 9 configurations\n", TF_KINDS);
    return 0;
}
