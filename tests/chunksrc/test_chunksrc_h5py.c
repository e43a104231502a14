/* test_chunksrc_h5py.c - files written by h5py (tests/chunksrc/make_foreign.py, run with the given
 * python): each opens on the expected read path and every chunk equals H5Dread of the same rows, or is
 * rejected with the expected message. Usage: test_chunksrc_h5py PYTHON make_foreign.py */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "check.h"
#include "make_files.h"

static char g_dir[512];

static const char *file_path(const char *name)
{
    static char path[700];
    snprintf(path, sizeof path, "%s/%s.h5", g_dir, name);
    return path;
}

static chunk_source *open_ok(const char *name, chunksrc_path want_path, int want_compressed)
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

static void check_readable(const char *name, chunksrc_path want_path, int want_compressed, int pattern)
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

static void check_details(void)
{
    chunk_source *s = open_ok("gzip_nhwc", CHUNKSRC_RAW_DEFLATE, 1);
    CHECK_EQ_INT(h5pack_chunksrc_geometry(s)->layout, H5PACK_LAYOUT_NHWC);
    CHECK_EQ_INT(h5pack_chunksrc_geometry(s)->n_classes, 5);
    CHECK_EQ_INT(h5pack_chunksrc_labels(s)[7], 2);
    h5pack_chunksrc_close(s);
    s = open_ok("contiguous", CHUNKSRC_CONTIGUOUS, 0);
    CHECK(h5pack_chunksrc_geometry(s)->has_stats);
    CHECK_NEAR(h5pack_chunksrc_geometry(s)->std[2], 0.6, 1e-12);
    h5pack_chunksrc_close(s);
    /* Unwritten chunks of partial.h5 read as its fill value, 7. */
    s = open_ok("partial", CHUNKSRC_RAW_DEFLATE, 1);
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
    snprintf(g_dir, sizeof g_dir, "%s", test_tmpdir("chunksrc-h5py"));
    snprintf(cmd, sizeof cmd, "'%s' '%s' '%s'", argv[1], argv[2], g_dir);
    int status = system(cmd);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 77)
        SKIP_TEST("h5py not available");
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s failed (status %d)", cmd, status);

    check_readable("resizable", CHUNKSRC_RAW_DEFLATE, 0, 1);
    check_readable("gzip_nhwc", CHUNKSRC_RAW_DEFLATE, 1, 1);
    check_readable("contiguous", CHUNKSRC_CONTIGUOUS, 0, 1);
    check_readable("appended", CHUNKSRC_RAW_DEFLATE, 1, 1);
    check_readable("partial", CHUNKSRC_RAW_DEFLATE, 1, 0);
    check_details();
    check_rejected("autochunk", H5PACK_EFORMAT, "splits images; repack with h5pack or rechunk to (k,3,64,64)");
    check_rejected("lzf", H5PACK_EFORMAT, "id 32000");
    printf("ok\n");
    return 0;
}
