/* test_reader_life.c - the reader's life cycle and its errors: echo counts and identical echoes, misuse
 * answered with ESTATE, close mid-epoch (unreleased batches, workers blocked on a full ring), many
 * open/close cycles, bad files rejected with a message naming the file and the reason, a corrupt
 * chunk reported by h5pack_next. */
#include <hdf5.h>
#include <string.h>
#include <stdlib.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/wait.h>

#include <fcntl.h>

#include "augment.h"
#include "backend.h"
#include "check.h"
#include "h5fixture.h"
#include "h5pack.h"

static char path_ok[256], path_gzip[256];
static const h5fix_file spec_ok = {.n = 120, .c = 3, .h = 4, .w = 5, .k = 6, .layout_attr = "NCHW", .labels = 1, .label_type = H5FIX_UINT16, .n_classes = 7, .pixel = h5fix_pixel_chw};
static const h5fix_file spec_gzip = {.n = 64, .c = 1, .h = 8, .w = 8, .k = 8, .gzip = 6, .layout_attr = "NCHW", .pixel = h5fix_pixel_chw};

static h5pack_config small_config(void)
{
    h5pack_config c = H5PACK_CONFIG_DEFAULTS;
    c.device = H5PACK_DEVICE_CPU, c.batch_size = 16, c.threads = 2, c.prefetch = 2, c.cache_bytes = 4 * 6 * 60;
    c.window = 2; /* explicit: the default window is the whole (small) file, more than the cache */
    return c;
}

static h5pack_reader *open_ok(const char *path, const h5pack_config *c)
{
    h5pack_reader *r = NULL;
    int rc = h5pack_open(path, c, &r);
    CHECK_MSG(rc == 0 && r, "open %s: %d %s", path, rc, h5pack_last_error(r));
    return r;
}

static void check_echo(h5pack_dtype dtype, int flip)
{
    h5pack_config c = small_config();
    c.echo = 3, c.epochs = 2, c.dtype = dtype, c.random_flip = flip;
    h5pack_reader *r = open_ok(path_ok, &c);
    h5pack_info info = H5PACK_INFO_INIT;
    CHECK_OK(h5pack_info_get(r, &info));
    h5pack_batch b = H5PACK_BATCH_INIT;
    uint8_t *fresh = malloc(16 * 60 * 4);
    uint64_t fresh_indices[16];
    uint64_t n = 0, differing_echoes = 0;
    int rc;
    while ((rc = h5pack_next(r, &b)) == H5PACK_OK) {
        CHECK_EQ_U64(b.echo, n % 3);
        CHECK_EQ_U64(b.index, (n / 3) % info.batches_per_epoch);
        if (b.echo == 0) {
            memcpy(fresh, b.data, b.bytes);
            memcpy(fresh_indices, b.indices, b.count * 8);
            h5pack_batch early = H5PACK_BATCH_INIT; /* its echo needs the buffers back first */
            CHECK_EQ_INT(h5pack_next(r, &early), H5PACK_ESTATE);
            CHECK_STR_CONTAINS(h5pack_last_error(r), "release");
        } else {
            CHECK(memcmp(fresh_indices, b.indices, b.count * 8) == 0);
            int same = memcmp(fresh, b.data, b.bytes) == 0;
            if (!flip)
                CHECK_MSG(same, "echo %u of batch %llu differs without augmentation", b.echo,
                          (unsigned long long)b.index);
            differing_echoes += !same;
        }
        CHECK_OK(h5pack_release(r, &b));
        n++;
    }
    CHECK_EQ_INT(rc, H5PACK_END);
    h5pack_stats st = H5PACK_STATS_INIT;
    CHECK_OK(h5pack_stats_get(r, &st));
    CHECK_EQ_U64(st.batches_fresh, 2 * info.batches_per_epoch);
    CHECK_EQ_U64(st.batches_echoed, 2 * st.batches_fresh);
    CHECK_EQ_U64(st.batches, n);
    CHECK_EQ_U64(st.samples, 3 * 2 * spec_ok.n);
    CHECK_EQ_U64(st.epochs_completed, 2);
    if (flip) /* fresh draws per echo: with 16 images a batch, some echo must differ */
        CHECK(differing_echoes > 0);
    free(fresh);
    h5pack_close(r);
}

/* With flips and crops, every delivery (echoes included) equals the reference conversion of the same
 * images with the key of (seed, epoch, index, echo) at the rank's place in the global batch (rank * count):
 * fresh draws per echo and per rank. */
static void test_augmented_echoes(void)
{
    h5pack_config c = small_config();
    c.echo = 2, c.epochs = 1, c.dtype = H5PACK_DTYPE_FLOAT32, c.random_flip = 1, c.random_crop_padding = 2;
    c.world = 2, c.rank = 1, c.seed = 77;
    h5pack_reader *r = open_ok(path_ok, &c);
    backend_params bp;
    memset(&bp, 0, sizeof bp);
    bp.channels = spec_ok.c, bp.height = spec_ok.h, bp.width = spec_ok.w;
    bp.in_layout = bp.out_layout = H5PACK_LAYOUT_NCHW;
    bp.dtype = H5PACK_DTYPE_FLOAT32, bp.batch_size = c.batch_size, bp.slots = 1, bp.threads = 1;
    const float mean[3] = {0.485f, 0.456f, 0.406f}, std[3] = {0.229f, 0.224f, 0.225f};
    memcpy(bp.mean, mean, sizeof mean), memcpy(bp.std, std, sizeof std);
    bp.random_flip = 1, bp.crop_padding = 2;
    size_t img = 60, out_img = h5pack_backend_output_image_bytes(&bp);
    uint8_t *in = malloc(c.batch_size * img);
    float *want = malloc(c.batch_size * out_img);
    h5pack_batch b = H5PACK_BATCH_INIT;
    int rc, echo_differs = 0;
    while ((rc = h5pack_next(r, &b)) == H5PACK_OK) {
        for (size_t i = 0; i < b.count; i++)
            h5fix_image(&spec_ok, b.indices[i], in + i * img);
        uint64_t key = aug_batch_key_at(c.seed, b.epoch, b.index, b.echo, (uint64_t)c.rank * b.count);
        h5pack_backend_convert_ref(&bp, in, NULL, want, 0, b.count, key);
        CHECK_MSG(memcmp(b.data, want, b.count * out_img) == 0, "batch %llu echo %u differs from the reference",
                  (unsigned long long)b.index, b.echo);
        if (b.echo == 1) { /* the echo's draws differ from the fresh batch's */
            float *fresh = malloc(b.count * out_img);
            h5pack_backend_convert_ref(&bp, in, NULL, fresh, 0, b.count,
                                aug_batch_key_at(c.seed, b.epoch, b.index, 0, (uint64_t)c.rank * b.count));
            echo_differs += memcmp(fresh, b.data, b.count * out_img) != 0;
            free(fresh);
        }
        CHECK_OK(h5pack_release(r, &b));
    }
    CHECK_EQ_INT(rc, H5PACK_END);
    CHECK(echo_differs > 0);
    free(in), free(want);
    h5pack_close(r);
}

static void test_misuse(void)
{
    h5pack_config c = small_config();
    h5pack_reader *r = open_ok(path_ok, &c);
    h5pack_batch a = H5PACK_BATCH_INIT, b = H5PACK_BATCH_INIT, d = H5PACK_BATCH_INIT;
    CHECK_OK(h5pack_next(r, &a));
    CHECK_OK(h5pack_next(r, &b));
    CHECK_EQ_INT(h5pack_next(r, &d), H5PACK_ESTATE); /* prefetch = 2 batches held */
    CHECK_STR_CONTAINS(h5pack_last_error(r), "unreleased");
    CHECK_OK(h5pack_release(r, &a));
    CHECK_EQ_INT(h5pack_release(r, &a), H5PACK_ESTATE); /* twice */
    CHECK_OK(h5pack_next(r, &d));
    CHECK_EQ_U64(d.index, 2);
    CHECK_OK(h5pack_release(r, &d)); /* only b is held now, and batch 3 would need its buffer */
    CHECK_EQ_INT(h5pack_next(r, &d), H5PACK_ESTATE);
    CHECK_STR_CONTAINS(h5pack_last_error(r), "batch 1 of epoch 0 is still unreleased"); /* the one held */
    CHECK_EQ_INT(h5pack_next(r, NULL), H5PACK_EINVAL);
    h5pack_close(r); /* b unreleased */
    h5pack_close(NULL);
}

/* Workers blocked on a full ring, in the middle of an endless run. */
static void test_close_mid_epoch(void)
{
    for (int threads = 1; threads <= 4; threads++) {
        h5pack_config c = small_config();
        c.threads = threads, c.prefetch = 1, c.epochs = H5PACK_EPOCHS_ENDLESS, c.order = H5PACK_ORDER_RANDOM;
        h5pack_reader *r = open_ok(path_ok, &c);
        h5pack_batch b = H5PACK_BATCH_INIT;
        for (int i = 0; i < 5; i++) {
            CHECK_OK(h5pack_next(r, &b));
            CHECK_OK(h5pack_release(r, &b));
        }
        CHECK_OK(h5pack_next(r, &b)); /* held: every worker now waits for the ring */
        h5pack_close(r);
    }
    h5pack_config c = small_config();
    h5pack_close(open_ok(path_gzip, &c)); /* closed before any batch was asked for */
}

/* fork() copies an open reader but not its worker threads: in the child, h5pack_next is ESTATE naming
 * fork (it used to wait forever) and h5pack_close returns; the parent reads on. The child only calls
 * what needs no allocation (fork in a threaded process, sanitizer allocators included). */
static void test_fork(void)
{
    h5pack_config c = small_config();
    c.epochs = 1;
    h5pack_reader *r = open_ok(path_ok, &c);
    h5pack_batch b = H5PACK_BATCH_INIT;
    CHECK_OK(h5pack_next(r, &b));
    CHECK_OK(h5pack_release(r, &b));
    fflush(NULL);
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        h5pack_batch cb = H5PACK_BATCH_INIT;
        int ok = h5pack_next(r, &cb) == H5PACK_ESTATE && strstr(h5pack_last_error(r), "fork()") != NULL;
        h5pack_close(r);
        _exit(ok ? 0 : 1);
    }
    int status = 0;
    CHECK(waitpid(child, &status, 0) == child);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "forked child: status %d", status);
    int n = 1, rc;
    while ((rc = h5pack_next(r, &b)) == H5PACK_OK) {
        CHECK_OK(h5pack_release(r, &b));
        n++;
    }
    CHECK_EQ_INT(rc, H5PACK_END);
    h5pack_info in = H5PACK_INFO_INIT;
    CHECK_OK(h5pack_info_get(r, &in));
    CHECK_EQ_U64((uint64_t)n, in.batches_per_epoch);
    h5pack_close(r);
    CHECK_EQ_INT(h5pack_next(NULL, &b), H5PACK_EINVAL);
    CHECK_STR_CONTAINS(h5pack_last_error(NULL), "reader is NULL");
}

static void test_many_cycles(void)
{
    h5pack_config c = small_config();
    c.threads = 2, c.cache_bytes = 1;
    for (int i = 0; i < 200; i++) {
        h5pack_reader *r = open_ok(i % 2 ? path_ok : path_gzip, &c);
        if (i % 3 == 0) {
            h5pack_batch b = H5PACK_BATCH_INIT;
            CHECK_OK(h5pack_next(r, &b));
        }
        h5pack_close(r);
    }
}

static void expect_open_error(const char *path, const h5pack_config *c, int code, const char *reason)
{
    h5pack_reader *r = NULL;
    int rc = h5pack_open(path, c, &r);
    CHECK_MSG(rc == code, "open %s: %d (%s), expected %d", path, rc, h5pack_last_error(r), code);
    CHECK_STR_CONTAINS(h5pack_last_error(NULL), reason);
    CHECK_STR_CONTAINS(h5pack_last_error(NULL), path); /* every open error names the file */
    if (r) {
        CHECK_STR_CONTAINS(h5pack_last_error(r), reason);
        h5pack_batch b = H5PACK_BATCH_INIT;
        CHECK_EQ_INT(h5pack_next(r, &b), H5PACK_ESTATE);
        CHECK_STR_CONTAINS(h5pack_last_error(r), reason); /* still the open's reason */
        h5pack_stats st = H5PACK_STATS_INIT;
        CHECK(h5pack_stats_get(r, &st) < 0);
    }
    h5pack_close(r);
}

static void test_bad_files(void)
{
    h5pack_config c = small_config();
    char path[256];
    h5fix_file bad_type = spec_ok, bad_rank = spec_ok;
    bad_type.image_type = H5FIX_INT16, bad_type.no_pixels = 1;
    h5fix_local_name(path, sizeof path, "int16");
    CHECK_OK(h5fix_write(path, &bad_type));
    expect_open_error(path, &c, H5PACK_EFORMAT, path);
    remove(path);
    bad_rank.rank = 3, bad_rank.no_pixels = 1; /* (N,H,W): gray images, read as C = 1 */
    h5fix_local_name(path, sizeof path, "rank3");
    CHECK_OK(h5fix_write(path, &bad_rank));
    h5pack_reader *gray = open_ok(path, &c);
    h5pack_info gi = H5PACK_INFO_INIT;
    CHECK_OK(h5pack_info_get(gray, &gi));
    CHECK_EQ_INT(gi.channels, 1);
    h5pack_close(gray);
    remove(path);
    expect_open_error("no_such_file.h5", &c, H5PACK_ENOTFOUND, "no_such_file.h5");
    h5fix_local_name(path, sizeof path, "text");
    FILE *f = fopen(path, "w");
    fputs("not an HDF5 file\n", f);
    fclose(f);
    h5pack_reader *r = NULL;
    CHECK(h5pack_open(path, &c, &r) < 0);
    CHECK_STR_CONTAINS(h5pack_last_error(NULL), path);
    h5pack_close(r);
    remove(path);
    c.images_dataset = "pictures";
    expect_open_error(path_ok, &c, H5PACK_ENOTFOUND, "pictures");
    c = small_config();
    c.batch_size = 0;
    expect_open_error(path_ok, &c, H5PACK_EINVAL, "batch_size");
    c.batch_size = SIZE_MAX; /* was "drop_last ... leaves no batch" without drop_last: the count overflowed */
    expect_open_error(path_ok, &c, H5PACK_EINVAL, "batch_size must be 1 .. 2147483648 (got 18446744073709551615)");
    c = small_config();
    c.threads = 1025; /* a typo would start thousands of threads */
    expect_open_error(path_ok, &c, H5PACK_EINVAL, "threads must be 0 .. 1024 (got 1025): worker threads");
    c.threads = -1;
    expect_open_error(path_ok, &c, H5PACK_EINVAL, "threads");
    c = small_config();
    c.drop_last = 1, c.batch_size = 1000;
    expect_open_error(path_ok, &c, H5PACK_EINVAL, "drop_last");
    CHECK_EQ_INT(h5pack_open(path_ok, &c, NULL), H5PACK_EINVAL);
}

/* Damaged and hostile files through the public API: an error code and a message, never a crash or hang. */
static void test_hostile_files(void)
{
    h5pack_config c = small_config();
    char path[256];
    h5fix_file sp = spec_ok;
    sp.label_len_delta = -1; /* uint16 labels, one short */
    sp.extra[0] = (h5fix_dataset){"rank5", H5FIX_UINT8, 5, {10, 1, 3, 4, 5}};
    sp.extra[1] = (h5fix_dataset){"empty", H5FIX_UINT8, 4, {0, 3, 4, 5}};
    h5fix_local_name(path, sizeof path, "hostile");
    CHECK_OK(h5fix_write(path, &sp));
    expect_open_error(path, &c, H5PACK_EFORMAT, "labels"); /* labels shorter than images */
    c.labels_dataset = NULL;
    c.images_dataset = "rank5";
    expect_open_error(path, &c, H5PACK_EFORMAT, "rank 5"); /* neither images nor gray images */
    c.images_dataset = "empty";
    expect_open_error(path, &c, H5PACK_EFORMAT, "zero"); /* no samples */
    /* truncated to 60%: refused at open, or the missing chunks are an error at read time */
    FILE *f = fopen(path, "rb");
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fclose(f);
    CHECK(truncate(path, size * 6 / 10) == 0);
    c = small_config();
    c.labels_dataset = NULL, c.order = H5PACK_ORDER_SEQUENTIAL, c.epochs = 1;
    h5pack_reader *r = NULL;
    int rc = h5pack_open(path, &c, &r);
    if (rc == 0) {
        h5pack_batch b = H5PACK_BATCH_INIT;
        while ((rc = h5pack_next(r, &b)) == H5PACK_OK)
            CHECK_OK(h5pack_release(r, &b));
        CHECK_MSG(rc < 0, "a truncated file read to the end without error");
    }
    CHECK_MSG(strlen(h5pack_last_error(r)) > 0, "no message for the truncated file");
    h5pack_close(r);
    remove(path);
}

/* Flips bytes inside one compressed chunk: h5pack_next reports it, with the chunk, and keeps doing so. */
static void test_corrupt_chunk(void)
{
    char path[256];
    h5fix_local_name(path, sizeof path, "corrupt");
    CHECK_OK(h5fix_write(path, &spec_gzip));
    hid_t fid = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT), d = H5Dopen2(fid, "images", H5P_DEFAULT);
    hid_t space = H5Dget_space(d);
    hsize_t offset[4];
    unsigned mask;
    haddr_t addr;
    hsize_t size;
    CHECK(H5Dget_chunk_info(d, space, 3, offset, &mask, &addr, &size) >= 0);
    H5Sclose(space), H5Dclose(d), H5Fclose(fid);
    int fd = open(path, O_WRONLY);
    uint8_t junk[16];
    memset(junk, 0xA5, sizeof junk);
    CHECK(pwrite(fd, junk, sizeof junk, (off_t)(addr + size / 3)) == (ssize_t)sizeof junk);
    close(fd);
    h5pack_config c = small_config();
    c.order = H5PACK_ORDER_SEQUENTIAL, c.batch_size = 8, c.epochs = 1;
    h5pack_reader *r = open_ok(path, &c);
    h5pack_batch b = H5PACK_BATCH_INIT;
    int rc;
    uint64_t good = 0;
    while ((rc = h5pack_next(r, &b)) == H5PACK_OK) {
        good++;
        CHECK_OK(h5pack_release(r, &b));
    }
    CHECK_MSG(rc == H5PACK_ECORRUPT || rc == H5PACK_EIO || rc == H5PACK_EHDF5, "next: %d", rc);
    CHECK_EQ_U64(good, 3); /* chunk 3 is batch 3 of the sequential order */
    CHECK_STR_CONTAINS(h5pack_last_error(r), "3");
    CHECK_STR_CONTAINS(h5pack_last_error(r), path);
    CHECK_EQ_INT(h5pack_next(r, &b), rc);
    h5pack_close(r);
    remove(path);
}

/* AUTO picks a GPU when usable, else the CPU, and says which; CUDA without a GPU is ENODEV. */
static void test_device_choice(void)
{
    h5pack_config c = small_config();
    c.device = H5PACK_DEVICE_AUTO;
    h5pack_reader *r = open_ok(path_ok, &c);
    h5pack_info info = H5PACK_INFO_INIT;
    CHECK_OK(h5pack_info_get(r, &info));
    CHECK(info.device == H5PACK_DEVICE_CPU || info.device == H5PACK_DEVICE_CUDA);
    if (info.device == H5PACK_DEVICE_CPU)
        CHECK(strcmp(info.device_name, "cpu") == 0);
    int gpu = info.device == H5PACK_DEVICE_CUDA;
    h5pack_close(r);
    c.device = H5PACK_DEVICE_CUDA;
    r = NULL;
    int rc = h5pack_open(path_ok, &c, &r);
    if (gpu) {
        CHECK_EQ_INT(rc, 0);
    } else {
        CHECK_EQ_INT(rc, H5PACK_ENODEV);
        CHECK(strlen(h5pack_last_error(r)) > 0);
    }
    h5pack_close(r);
}

int main(void)
{
    h5fix_local_name(path_ok, sizeof path_ok, "life");
    h5fix_local_name(path_gzip, sizeof path_gzip, "lifegz");
    CHECK_OK(h5fix_write(path_ok, &spec_ok));
    CHECK_OK(h5fix_write(path_gzip, &spec_gzip));
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL); /* the bad files would print HDF5's error stack */
    check_echo(H5PACK_DTYPE_UINT8, 0);
    check_echo(H5PACK_DTYPE_FLOAT32, 0);
    check_echo(H5PACK_DTYPE_FLOAT32, 1);
    test_augmented_echoes();
    test_misuse();
    test_close_mid_epoch();
    test_fork();
    test_many_cycles();
    test_bad_files();
    test_corrupt_chunk();
    test_hostile_files();
    test_device_choice();
    remove(path_ok), remove(path_gzip);
    printf("reader life: all checks passed\n");
    return 0;
}
