/* test_chunksrc_probe.c - files on which HDF5 1.10.8 itself crashes or loops forever (found by
 * fuzz_reader_open, kept in tests/fuzz/corpus/reader_open/): h5pack_chunksrc_open must return ECORRUPT with a
 * message saying so, in bounded time, and the process must go on working (a good file opens after).
 * Usage: test_chunksrc_probe CORPUS_DIR */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "clock.h"
#include "chunk_compare.h"

static void expect_damaged(const char *dir, const char *name, const char *what, double max_s)
{
    char path[1024], err[1024];
    chunk_source *s = NULL;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    double t0 = h5pack_clock_s();
    int rc = h5pack_chunksrc_open(path, "images", "labels", H5PACK_LAYOUT_AUTO, &s, err, sizeof err);
    double dt = h5pack_clock_s() - t0;
    printf("%s -> %d in %.2f s: %s\n", name, rc, dt, err);
    CHECK_EQ_INT(rc, H5PACK_ECORRUPT);
    CHECK(s == NULL);
    CHECK_STR_CONTAINS(err, path);
    CHECK_STR_CONTAINS(err, what);
    CHECK_MSG(dt < max_s, "%s took %.1f s", name, dt);
}

int main(int argc, char **argv)
{
    char path[700], err[1024];
    if (argc < 2) {
        fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
        return 2;
    }
    setenv("H5PACK_PROBE_TIMEOUT", "5", 1); /* generous for a loaded CI machine: good files answer in ms */
    /* "crashed ... (signal 11)", or "failed hard" under ASan, whose handler ends the child with exit 1 */
    expect_damaged(argv[1], "crash-hdf5-segv-gzip-nhwc.h5", "reading the file's metadata", 30);
    expect_damaged(argv[1], "crash-hdf5-local-heap-memcpy.h5", "the file is damaged", 30);
    expect_damaged(argv[1], "timeout-hdf5-endless-loop.h5", "made no progress", 30);
    expect_damaged(argv[1], "crash-implausible-chunk-count.h5", "implausible", 30);
    expect_damaged(argv[1], "timeout-more-chunks-than-bytes.h5", "damaged shape", 30);

    /* The process is intact: a good old-format file (probed) and a latest-format one (not) open and read. */
    h5fix_file tf = CHUNKSRC_TEST_FILE;
    for (int storage = 0; storage < 2; storage++) {
        chunk_source *s = NULL;
        tf.resizable = tf.old_format = storage; /* 1: as h5py writes it */
        snprintf(path, sizeof path, "%s/good-%d.h5", h5fix_tmpdir("chunksrc-probe"), storage);
        CHECK_OK(h5fix_write(path, &tf));
        CHECK_OK(h5pack_chunksrc_open(path, "images", "labels", H5PACK_LAYOUT_AUTO, &s, err, sizeof err));
        CHECK_OK(test_compare_all_chunks(s, path, "images", 1));
        h5pack_chunksrc_close(s);
    }
    printf("ok\n");
    return 0;
}
