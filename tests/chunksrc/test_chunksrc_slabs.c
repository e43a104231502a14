/* test_chunksrc_slabs.c - HDF5 chunk shapes that split images, read as slabs (every HDF5 chunk of a range
 * of rows), and 3-D (N,H,W) gray images, in files made with the HDF5 C API. Each case opens on the
 * expected read path with the expected slab geometry; every slab equals H5Dread of its rows (and the
 * written pattern); its stored size is the sum of its HDF5 chunks' (listed independently with
 * H5Dget_chunk_info); reads on the pread paths finish while another thread holds the HDF5 lock; a
 * damaged chunk or a truncated file is an error naming the file, never a crash. Runs again with
 * H5PACK_NO_LOCATE=1 (raw reads through H5Dread_chunk under the lock). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pthread_timedjoin_np */
#endif
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "chunksrc_impl.h" /* the slab geometry and whether chunks were located */
#include "chunk_compare.h"

static int g_located_expected;

static const char *case_path(const char *name)
{
    static char path[700];
    snprintf(path, sizeof path, "%s/%s.h5", h5fix_tmpdir("chunksrc-slabs"), name);
    return path;
}

/* Stored bytes of each slab, from HDF5's own chunk listing (O(n^2) in 1.10.8: small files only). */
static void listed_slab_sizes(const char *path, uint64_t k, uint64_t *sizes, uint64_t n_slabs)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT), d = H5Dopen2(f, "images", H5P_DEFAULT);
    hid_t space = H5Dget_space(d);
    hsize_t n = 0;
    CHECK(H5Dget_num_chunks(d, space, &n) >= 0);
    memset(sizes, 0, n_slabs * sizeof *sizes);
    for (hsize_t i = 0; i < n; i++) {
        hsize_t offset[4], size = 0;
        unsigned mask = 0;
        haddr_t addr = 0;
        CHECK(H5Dget_chunk_info(d, space, i, offset, &mask, &addr, &size) >= 0);
        CHECK(offset[0] % k == 0 && offset[0] / k < n_slabs);
        sizes[offset[0] / k] += size;
    }
    H5Sclose(space), H5Dclose(d), H5Fclose(f);
}

typedef struct reader_job {
    chunk_source *src;
    int failures;
    char err[512];
} reader_job;

static void *read_every_slab(void *arg)
{
    reader_job *j = arg;
    const source_geometry *g = h5pack_chunksrc_geometry(j->src);
    uint8_t *buf = malloc(g->chunk_bytes);
    chunksrc_scratch *sc = h5pack_chunksrc_scratch_new(j->src);
    for (uint64_t c = 0; c < g->n_chunks; c++)
        if (!buf || !sc || h5pack_chunksrc_read(j->src, c, buf, sc, NULL, j->err, sizeof j->err) != 0)
            j->failures++;
    h5pack_chunksrc_scratch_free(sc);
    free(buf);
    return NULL;
}

/* The fast paths read without HDF5: every slab is read while this thread holds the HDF5 lock. */
static void check_lock_free(chunk_source *s, const char *name)
{
    reader_job job = {.src = s};
    pthread_t th;
    struct timespec deadline;
    h5pack_h5_lock_global();
    CHECK(pthread_create(&th, NULL, read_every_slab, &job) == 0);
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += 60;
    int rc = pthread_timedjoin_np(th, NULL, &deadline);
    h5pack_h5_unlock_global();
    if (rc == ETIMEDOUT)
        pthread_join(th, NULL);
    CHECK_MSG(rc == 0, "%s: reads waited for the HDF5 lock", name);
    CHECK_MSG(job.failures == 0, "%s: %d reads failed: %s", name, job.failures, job.err);
}

typedef struct expect {
    h5pack_read_path path;
    uint64_t k, cps;
    uint32_t channels;
} expect;

static chunk_source *check_case(const char *name, const h5fix_file *tf, expect want, int pattern)
{
    char err[1024];
    chunk_source *s = NULL;
    const char *path = case_path(name);
    CHECK_OK(h5fix_write(path, tf));
    int rc = h5pack_chunksrc_open(path, "images", "labels", H5PACK_LAYOUT_AUTO, &s, err, sizeof err);
    CHECK_MSG(rc == 0, "%s: %d %s", name, rc, err);
    const source_geometry *g = h5pack_chunksrc_geometry(s);
    printf("%-18s path %d, k %llu, %llu slabs of %llu chunks (%llu,%llu,%llu,%llu), rank %d, located %d\n", name,
           (int)g->path, (unsigned long long)g->samples_per_chunk, (unsigned long long)g->n_chunks,
           (unsigned long long)g->chunks_per_slab, (unsigned long long)g->hdf5_chunk[0],
           (unsigned long long)g->hdf5_chunk[1], (unsigned long long)g->hdf5_chunk[2],
           (unsigned long long)g->hdf5_chunk[3], g->rank, g->located);
    CHECK_EQ_INT(g->path, want.path);
    CHECK_EQ_U64(g->samples_per_chunk, want.k);
    CHECK_EQ_U64(g->chunks_per_slab, want.cps);
    CHECK_EQ_U64(g->n_chunks, (tf->n + want.k - 1) / want.k);
    CHECK_EQ_U64(g->chunk_bytes, want.k * g->image_bytes);
    CHECK_EQ_INT(g->channels, want.channels);
    CHECK_EQ_INT(g->height, tf->h);
    CHECK_EQ_INT(g->width, tf->w);
    CHECK_EQ_INT(g->rank, tf->rank ? tf->rank : 4);
    if (h5pack_read_path_is_raw(g->path))
        CHECK_EQ_INT(g->located, g_located_expected);
    CHECK_OK(test_compare_all_chunks(s, path, "images", pattern));
    if (g->chunked) {
        uint64_t *listed = malloc(g->n_chunks * sizeof *listed);
        listed_slab_sizes(path, g->samples_per_chunk, listed, g->n_chunks);
        for (uint64_t c = 0; c < g->n_chunks; c++) {
            if (g->path == H5PACK_READ_IMPLICIT) /* the short last chunk: only its images are read */
                listed[c] = h5pack_chunksrc_chunk_samples(s, c) * g->image_bytes;
            CHECK_MSG(h5pack_chunksrc_stored_bytes(s, c) == listed[c], "%s slab %llu: stored %llu, HDF5 lists %llu",
                      name, (unsigned long long)c, (unsigned long long)h5pack_chunksrc_stored_bytes(s, c),
                      (unsigned long long)listed[c]);
        }
        free(listed);
    }
    if (h5pack_chunksrc_fast_path(g))
        check_lock_free(s, name);
    return s;
}

static void check_case_closed(const char *name, const h5fix_file *tf, expect want, int pattern)
{
    h5pack_chunksrc_close(check_case(name, tf, want, pattern));
}

/* (50,3,20,30) in chunks (7,2,5,9): no chunk dim divides its axis, every slab has edge chunks. */
static h5fix_file odd_file(void)
{
    h5fix_file tf = CHUNKSRC_TEST_FILE;
    tf.n = 50, tf.h = 20, tf.w = 30, tf.resizable = 1, tf.old_format = 1;
    tf.chunk[0] = 7, tf.chunk[1] = 2, tf.chunk[2] = 5, tf.chunk[3] = 9;
    return tf;
}

static void test_split_shapes(void)
{
    h5fix_file tf = odd_file();
    check_case_closed("odd", &tf, (expect){H5PACK_READ_LOCATED, 7, 2 * 4 * 4, 3}, 1);
    tf.gzip = 4;
    check_case_closed("odd-gzip", &tf, (expect){H5PACK_READ_RAW_DEFLATE, 7, 32, 3}, 1);
    tf.shuffle = 1;
    check_case_closed("odd-gzip-shuffle", &tf, (expect){H5PACK_READ_RAW_DEFLATE, 7, 32, 3}, 1);
    tf.fletcher32 = 1; /* HDF5 checks the checksum: H5Dread of the slab's rows */
    check_case_closed("odd-fletcher", &tf, (expect){H5PACK_READ_HDF5, 7, 32, 3}, 1);

    tf = odd_file();
    tf.nhwc = 1, tf.gzip = 6, tf.shuffle = 1; /* (50,20,30,3) in (7,5,9,2) */
    tf.chunk[1] = 5, tf.chunk[2] = 9, tf.chunk[3] = 2;
    chunk_source *s = check_case("odd-nhwc", &tf, (expect){H5PACK_READ_RAW_DEFLATE, 7, 4 * 4 * 2, 3}, 1);
    CHECK_EQ_INT(h5pack_chunksrc_geometry(s)->layout, H5PACK_LAYOUT_NHWC);
    h5pack_chunksrc_close(s);

    /* What h5pack's own writer does (fixed dims, early allocation, latest format) with a split shape:
     * not the implicit path (a slab is two chunks), located like any other index. */
    tf = CHUNKSRC_TEST_FILE;
    tf.chunk[0] = 5, tf.chunk[1] = 3, tf.chunk[2] = 4, tf.chunk[3] = 10;
    check_case_closed("implicit-split", &tf, (expect){H5PACK_READ_LOCATED, 5, 2, 3}, 1);

    /* One image per slab, each split in four: the smallest slab, every image needs four HDF5 chunks. */
    tf = CHUNKSRC_TEST_FILE;
    tf.resizable = 1, tf.old_format = 1;
    tf.chunk[0] = 1, tf.chunk[1] = 3, tf.chunk[2] = 7, tf.chunk[3] = 5;
    check_case_closed("k1", &tf, (expect){H5PACK_READ_LOCATED, 1, 4, 3}, 1);
}

/* Slabs 3.. never written: the fill value (0) in every chunk of them, stored size 0. */
static void test_partial(void)
{
    h5fix_file tf = odd_file();
    tf.gzip = 4, tf.write_chunks = 3;
    chunk_source *s = check_case("partial-split", &tf, (expect){H5PACK_READ_RAW_DEFLATE, 7, 32, 3}, 0);
    const source_geometry *g = h5pack_chunksrc_geometry(s);
    uint8_t *buf = malloc(g->chunk_bytes);
    char err[512];
    CHECK_OK(h5pack_chunksrc_read(s, 5, buf, NULL, NULL, err, sizeof err));
    for (uint64_t i = 0; i < g->chunk_bytes; i++)
        CHECK(buf[i] == 0);
    CHECK_EQ_U64(h5pack_chunksrc_stored_bytes(s, 5), 0);
    CHECK(h5pack_chunksrc_stored_bytes(s, 2) > 0);
    free(buf);
    h5pack_chunksrc_close(s);
}

static h5fix_file gray_file(void)
{
    h5fix_file tf = CHUNKSRC_TEST_FILE;
    tf.rank = 3, tf.c = 1;
    return tf;
}

static void test_gray(void)
{
    h5fix_file tf = gray_file(); /* (23,8,10) in whole-image chunks (4,8,10), as h5pack writes them */
    chunk_source *s = check_case("gray", &tf, (expect){H5PACK_READ_IMPLICIT, 4, 1, 1}, 1);
    CHECK_EQ_INT(h5pack_chunksrc_geometry(s)->layout, H5PACK_LAYOUT_NCHW);
    CHECK_EQ_U64(h5pack_chunksrc_geometry(s)->image_bytes, 80);
    h5pack_chunksrc_close(s);

    tf = gray_file();
    tf.contiguous = 1, tf.old_format = 1;
    check_case_closed("gray-contiguous", &tf, (expect){H5PACK_READ_CONTIGUOUS, 23, 1, 1}, 1);

    tf = gray_file(); /* (50,20,30) in (7,6,7) */
    tf.n = 50, tf.h = 20, tf.w = 30, tf.resizable = 1, tf.old_format = 1, tf.gzip = 3;
    tf.chunk[0] = 7, tf.chunk[1] = 6, tf.chunk[2] = 7;
    check_case_closed("gray-split-gzip", &tf, (expect){H5PACK_READ_RAW_DEFLATE, 7, 4 * 5, 1}, 1);
    tf.fletcher32 = 1;
    check_case_closed("gray-split-fletcher", &tf, (expect){H5PACK_READ_HDF5, 7, 20, 1}, 1);

    /* Asked to read it as NHWC: C = 1 goes last, the bytes are the same. */
    char err[512];
    CHECK_OK(h5pack_chunksrc_open(case_path("gray-split-gzip"), "images", "labels", H5PACK_LAYOUT_NHWC, &s, err,
                                  sizeof err));
    CHECK_EQ_INT(h5pack_chunksrc_geometry(s)->layout, H5PACK_LAYOUT_NHWC);
    CHECK_EQ_INT(h5pack_chunksrc_geometry(s)->channels, 1);
    CHECK_OK(test_compare_all_chunks(s, case_path("gray-split-gzip"), "images", 1));
    h5pack_chunksrc_close(s);
}

/* Junk in the middle of one HDF5 chunk of slab 3: that slab is ECORRUPT naming the file and the slab,
 * every other slab still reads. */
static void test_damaged_chunk(void)
{
    h5fix_file tf = odd_file();
    tf.gzip = 4;
    const char *path = case_path("damaged");
    CHECK_OK(h5fix_write(path, &tf));
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT), d = H5Dopen2(f, "images", H5P_DEFAULT);
    hid_t space = H5Dget_space(d);
    hsize_t offset[4] = {21, 2, 10, 18}, size = 0; /* slab 3 = rows 21..27 */
    unsigned mask = 0;
    haddr_t addr = 0;
    CHECK(H5Dget_chunk_info_by_coord(d, offset, &mask, &addr, &size) >= 0 && size > 30);
    H5Sclose(space), H5Dclose(d), H5Fclose(f);
    int fd = open(path, O_WRONLY);
    uint8_t junk[16];
    memset(junk, 0xA5, sizeof junk);
    CHECK(pwrite(fd, junk, sizeof junk, (off_t)(addr + size / 3)) == (ssize_t)sizeof junk);
    close(fd);

    char err[1024];
    chunk_source *s = NULL;
    CHECK_OK(h5pack_chunksrc_open(path, "images", "labels", H5PACK_LAYOUT_AUTO, &s, err, sizeof err));
    const source_geometry *g = h5pack_chunksrc_geometry(s);
    uint8_t *buf = malloc(g->chunk_bytes);
    for (uint64_t c = 0; c < g->n_chunks; c++) {
        int rc = h5pack_chunksrc_read(s, c, buf, NULL, NULL, err, sizeof err);
        if (c != 3) {
            CHECK_MSG(rc == 0, "slab %llu: %s", (unsigned long long)c, err);
            continue;
        }
        printf("damaged slab: %d %s\n", rc, err);
        CHECK_EQ_INT(rc, H5PACK_ECORRUPT);
        CHECK_STR_CONTAINS(err, path);
        CHECK_STR_CONTAINS(err, "chunk 3");
    }
    free(buf);
    h5pack_chunksrc_close(s);
}

/* Cut to 60%: the open refuses it, or the slabs whose chunks are gone fail to read; with a message that
 * names the file either way. */
static void test_truncated(void)
{
    h5fix_file tf = odd_file();
    const char *path = case_path("truncated");
    CHECK_OK(h5fix_write(path, &tf));
    FILE *fp = fopen(path, "rb");
    fseek(fp, 0, SEEK_END);
    long size = ftell(fp);
    fclose(fp);
    CHECK(truncate(path, size * 6 / 10) == 0);
    char err[1024] = "";
    chunk_source *s = NULL;
    int rc = h5pack_chunksrc_open(path, "images", "labels", H5PACK_LAYOUT_AUTO, &s, err, sizeof err);
    if (rc == 0) {
        const source_geometry *g = h5pack_chunksrc_geometry(s);
        uint8_t *buf = malloc(g->chunk_bytes);
        for (uint64_t c = 0; rc == 0 && c < g->n_chunks; c++)
            rc = h5pack_chunksrc_read(s, c, buf, NULL, NULL, err, sizeof err);
        free(buf);
        h5pack_chunksrc_close(s);
    }
    printf("truncated: %d %s\n", rc, err);
    CHECK(rc == H5PACK_ECORRUPT || rc == H5PACK_EIO);
    CHECK_STR_CONTAINS(err, path);
}

int main(void)
{
    g_located_expected = getenv("H5PACK_NO_LOCATE") == NULL;
    test_split_shapes();
    test_partial();
    test_gray();
    test_damaged_chunk();
    test_truncated();
    printf("ok\n");
    return 0;
}
