/* test_chunksrc_h5py.c - files written by h5py (tests/chunksrc/make_foreign.py, run with the given
 * python): each opens on the expected read path and every chunk (slab) equals H5Dread of the same rows,
 * or is rejected with the expected message. h5py's automatic chunks (chunks=True), which split images,
 * are read as slabs. Usage: test_chunksrc_h5py PYTHON make_foreign.py */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "check.h"
#include "chunk_compare.h"

static char g_dir[512];

static const char *file_path(const char *name)
{
    static char path[700];
    snprintf(path, sizeof path, "%s/%s.h5", g_dir, name);
    return path;
}

static chunk_source *open_ok(const char *name, h5pack_read_path want_path, int want_compressed)
{
    char err[1024];
    chunk_source *s = NULL;
    int rc = h5pack_chunksrc_open(file_path(name), "images", "labels", H5PACK_LAYOUT_AUTO, &s, err, sizeof err);
    CHECK_MSG(rc == 0, "%s: %d %s", name, rc, err);
    const source_geometry *g = h5pack_chunksrc_geometry(s);
    printf("%-12s path %d, k %llu, %llu chunks, layout %s\n", name, (int)g->path,
           (unsigned long long)g->samples_per_chunk, (unsigned long long)g->n_chunks,
           g->layout == H5PACK_LAYOUT_NHWC ? "NHWC" : "NCHW");
    CHECK_EQ_INT(g->path, want_path);
    CHECK_EQ_INT(g->compressed, want_compressed);
    CHECK_EQ_U64(g->n_samples, 23);
    CHECK_EQ_INT(g->channels, 3);
    CHECK_EQ_INT(g->height, 8);
    CHECK_EQ_INT(g->width, 10);
    return s;
}

static void check_readable(const char *name, h5pack_read_path want_path, int want_compressed, int pattern)
{
    chunk_source *s = open_ok(name, want_path, want_compressed);
    CHECK_OK(test_compare_all_chunks(s, file_path(name), "images", pattern));
    h5pack_chunksrc_close(s);
}

static void check_rejected(const char *name, int code, const char *what)
{
    char err[1024];
    chunk_source *s = NULL;
    int rc = h5pack_chunksrc_open(file_path(name), "images", "labels", H5PACK_LAYOUT_AUTO, &s, err, sizeof err);
    printf("%-12s -> %d: %s\n", name, rc, err);
    CHECK_EQ_INT(rc, code);
    CHECK_STR_CONTAINS(err, file_path(name));
    CHECK_STR_CONTAINS(err, what);
}

typedef struct slab_want {
    h5pack_read_path path;
    int compressed;
    uint64_t n;
    uint32_t c, h, w;
    h5pack_layout layout;
    int rank;
} slab_want;

/* The HDF5 chunk shape as HDF5 itself reports it, and the slab geometry that follows from it. */
static void check_slab_geometry(const char *name, const source_geometry *g, const slab_want *want)
{
    hid_t f = H5Fopen(file_path(name), H5F_ACC_RDONLY, H5P_DEFAULT), d = H5Dopen2(f, "images", H5P_DEFAULT);
    hid_t dcpl = H5Dget_create_plist(d);
    hsize_t cd[4] = {0, 0, 0, 0}, dims[4];
    CHECK_EQ_INT(H5Pget_chunk(dcpl, want->rank, cd), want->rank);
    H5Pclose(dcpl), H5Dclose(d), H5Fclose(f);
    if (want->rank == 3) /* (N,H,W) read as (N,1,H,W) */
        cd[3] = cd[2], cd[2] = cd[1], cd[1] = 1;
    dims[0] = want->n, dims[1] = g->layout == H5PACK_LAYOUT_NHWC ? want->h : want->c;
    dims[2] = g->layout == H5PACK_LAYOUT_NHWC ? want->w : want->h;
    dims[3] = g->layout == H5PACK_LAYOUT_NHWC ? want->c : want->w;
    uint64_t cps = 1;
    for (int i = 0; i < 4; i++) {
        CHECK_EQ_U64(g->hdf5_chunk[i], cd[i]);
        if (i > 0)
            cps *= (dims[i] + cd[i] - 1) / cd[i];
    }
    CHECK(cps > 1); /* h5py's guess split the images */
    CHECK_EQ_U64(g->chunks_per_slab, cps);
    CHECK_EQ_U64(g->samples_per_chunk, cd[0]);
    CHECK_EQ_U64(g->n_chunks, (want->n + cd[0] - 1) / cd[0]);
}

static chunk_source *open_slabs(const char *name, const slab_want *want)
{
    char err[1024];
    chunk_source *s = NULL;
    int rc = h5pack_chunksrc_open(file_path(name), "images", "labels", H5PACK_LAYOUT_AUTO, &s, err, sizeof err);
    CHECK_MSG(rc == 0, "%s: %d %s", name, rc, err);
    const source_geometry *g = h5pack_chunksrc_geometry(s);
    printf("%-14s path %d, k %llu, %llu slabs of %llu HDF5 chunks (%llu,%llu,%llu,%llu)\n", name, (int)g->path,
           (unsigned long long)g->samples_per_chunk, (unsigned long long)g->n_chunks,
           (unsigned long long)g->chunks_per_slab, (unsigned long long)g->hdf5_chunk[0],
           (unsigned long long)g->hdf5_chunk[1], (unsigned long long)g->hdf5_chunk[2],
           (unsigned long long)g->hdf5_chunk[3]);
    CHECK_EQ_INT(g->path, want->path);
    CHECK_EQ_INT(g->compressed, want->compressed);
    CHECK_EQ_U64(g->n_samples, want->n);
    CHECK_EQ_INT(g->channels, want->c);
    CHECK_EQ_INT(g->height, want->h);
    CHECK_EQ_INT(g->width, want->w);
    CHECK_EQ_INT(g->layout, want->layout);
    CHECK_EQ_INT(g->rank, want->rank);
    if (h5pack_read_path_is_raw(g->path))
        CHECK(g->located); /* read outside HDF5's lock */
    check_slab_geometry(name, g, want);
    return s;
}

static void check_slabs(const char *name, const slab_want *want)
{
    chunk_source *s = open_slabs(name, want);
    CHECK_OK(test_compare_all_chunks(s, file_path(name), "images", 1));
    h5pack_chunksrc_close(s);
}

/* The issue's (3000,3,218,178) with h5py's (188,1,28,23): 16 slabs of 192 chunks; 5 images written. */
static void check_issue_shape(void)
{
    const slab_want want = {H5PACK_READ_RAW_DEFLATE, 1, 3000, 3, 218, 178, H5PACK_LAYOUT_NCHW, 4};
    chunk_source *s = open_slabs("issue13", &want);
    const source_geometry *g = h5pack_chunksrc_geometry(s);
    CHECK_EQ_U64(g->samples_per_chunk, 188);
    CHECK_EQ_U64(g->chunks_per_slab, 3 * 8 * 8);
    CHECK_EQ_U64(g->n_chunks, 16);
    uint8_t *buf = malloc(g->chunk_bytes);
    char err[512];
    CHECK_OK(h5pack_chunksrc_read(s, 0, buf, NULL, NULL, err, sizeof err));
    for (uint64_t j = 0; j < g->chunk_bytes; j++) {
        uint64_t img = j / g->image_bytes, off = j % g->image_bytes;
        CHECK_MSG(buf[j] == (img < 5 ? h5fix_pixel_rows(NULL, img, off) : 0), "byte %llu of slab 0", (unsigned long long)j);
    }
    CHECK_OK(h5pack_chunksrc_read(s, 15, buf, NULL, NULL, err, sizeof err)); /* never written: fill value */
    for (uint64_t j = 0; j < h5pack_chunksrc_chunk_samples(s, 15) * g->image_bytes; j++)
        CHECK(buf[j] == 0);
    CHECK(h5pack_chunksrc_stored_bytes(s, 0) > 0);
    CHECK_EQ_U64(h5pack_chunksrc_stored_bytes(s, 15), 0);
    free(buf);
    h5pack_chunksrc_close(s);
}

static void check_autochunked(void)
{
    slab_want want = {H5PACK_READ_LOCATED, 0, 40, 3, 218, 178, H5PACK_LAYOUT_NCHW, 4};
    check_slabs("autochunk", &want);
    want.path = H5PACK_READ_RAW_DEFLATE, want.compressed = 1; /* gzip + shuffle */
    check_slabs("autochunk_gzip", &want);
    want.layout = H5PACK_LAYOUT_NHWC;
    check_slabs("autochunk_nhwc", &want);
    want = (slab_want){H5PACK_READ_LOCATED, 0, 60, 1, 218, 178, H5PACK_LAYOUT_NCHW, 3};
    check_slabs("autochunk_gray", &want);
    want = (slab_want){H5PACK_READ_HDF5, 0, 50, 3, 20, 30, H5PACK_LAYOUT_NCHW, 4};
    check_slabs("odd_fletcher", &want);
    want = (slab_want){H5PACK_READ_RAW_DEFLATE, 1, 50, 3, 20, 30, H5PACK_LAYOUT_NCHW, 4};
    check_slabs("odd_gzip", &want);
    check_issue_shape();
}

static void check_details(void)
{
    chunk_source *s = open_ok("gzip_nhwc", H5PACK_READ_RAW_DEFLATE, 1);
    CHECK_EQ_INT(h5pack_chunksrc_geometry(s)->layout, H5PACK_LAYOUT_NHWC);
    CHECK_EQ_INT(h5pack_chunksrc_geometry(s)->n_classes, 5);
    CHECK_EQ_INT(h5pack_chunksrc_labels(s)[7], 2);
    h5pack_chunksrc_close(s);
    s = open_ok("contiguous", H5PACK_READ_CONTIGUOUS, 0);
    CHECK(h5pack_chunksrc_geometry(s)->has_stats);
    CHECK_NEAR(h5pack_chunksrc_geometry(s)->std[2], 0.6, 1e-12);
    h5pack_chunksrc_close(s);
    /* Unwritten chunks of partial.h5 read as its fill value, 7. */
    s = open_ok("partial", H5PACK_READ_RAW_DEFLATE, 1);
    const source_geometry *g = h5pack_chunksrc_geometry(s);
    uint8_t *buf = malloc(g->chunk_bytes);
    char err[512];
    CHECK_OK(h5pack_chunksrc_read(s, 3, buf, NULL, NULL, err, sizeof err));
    CHECK_EQ_INT(buf[0], 7);
    CHECK_EQ_INT(buf[g->chunk_bytes - 1], 7);
    CHECK_EQ_U64(h5pack_chunksrc_stored_bytes(s, 3), 0);
    free(buf);
    h5pack_chunksrc_close(s);
}

int main(int argc, char **argv)
{
    char cmd[2048];
    if (argc < 3) {
        fprintf(stderr, "usage: %s PYTHON make_foreign.py\n", argv[0]);
        return 2;
    }
    snprintf(g_dir, sizeof g_dir, "%s", h5fix_tmpdir("chunksrc-h5py"));
    snprintf(cmd, sizeof cmd, "'%s' '%s' '%s'", argv[1], argv[2], g_dir);
    int status = system(cmd);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 77)
        SKIP_TEST("h5py not available");
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s failed (status %d)", cmd, status);

    check_readable("resizable", H5PACK_READ_LOCATED, 0, 1);
    check_readable("gzip_nhwc", H5PACK_READ_RAW_DEFLATE, 1, 1);
    check_readable("contiguous", H5PACK_READ_CONTIGUOUS, 0, 1);
    check_readable("appended", H5PACK_READ_RAW_DEFLATE, 1, 1);
    check_readable("partial", H5PACK_READ_RAW_DEFLATE, 1, 0);
    check_details();
    check_autochunked();
    check_rejected("lzf", H5PACK_EFORMAT, "id 32000");
    printf("ok\n");
    return 0;
}
