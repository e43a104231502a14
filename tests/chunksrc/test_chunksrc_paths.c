/* test_chunksrc_paths.c - files written with the HDF5 C API in every storage the reader meets: the read
 * path chosen is the expected one, the geometry is right, and every chunk read equals H5Dread of the same
 * rows (and the written pattern). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "chunksrc_impl.h" /* to see whether the raw path located its chunks */
#include "chunk_compare.h"

static char g_path[600];

static chunk_source *open_written(const char *name, const h5fix_file *tf, h5pack_layout hint)
{
    char err[1024];
    chunk_source *s = NULL;
    snprintf(g_path, sizeof g_path, "%s/%s.h5", h5fix_tmpdir("chunksrc-paths"), name);
    CHECK_OK(h5fix_write(g_path, tf));
    int rc = h5pack_chunksrc_open(g_path, "images", "labels", hint, &s, err, sizeof err);
    CHECK_MSG(rc == 0, "%s: open returned %d: %s", name, rc, err);
    return s;
}

/* Opens, checks path and geometry, compares every chunk; returns nothing, exits on failure. */
static void check_case(const char *name, const h5fix_file *tf, h5pack_read_path want_path, int want_compressed)
{
    chunk_source *s = open_written(name, tf, H5PACK_LAYOUT_AUTO);
    const source_geometry *g = h5pack_chunksrc_geometry(s);
    printf("%-22s path %d, k %llu, %llu chunks\n", name, (int)g->path, (unsigned long long)g->samples_per_chunk,
           (unsigned long long)g->n_chunks);
    CHECK_EQ_INT(g->path, want_path);
    CHECK_EQ_INT(g->compressed, want_compressed);
    CHECK_EQ_U64(g->n_samples, tf->n);
    CHECK_EQ_INT(g->channels, tf->c);
    CHECK_EQ_INT(g->height, tf->h);
    CHECK_EQ_INT(g->width, tf->w);
    CHECK_EQ_INT(g->layout, tf->nhwc ? H5PACK_LAYOUT_NHWC : H5PACK_LAYOUT_NCHW);
    CHECK_EQ_U64(g->image_bytes, (uint64_t)tf->c * tf->h * tf->w);
    CHECK_EQ_U64(g->chunk_bytes, g->samples_per_chunk * g->image_bytes);
    CHECK_EQ_U64(g->n_chunks, (tf->n + g->samples_per_chunk - 1) / g->samples_per_chunk);
    if (!tf->contiguous)
        CHECK_EQ_U64(g->samples_per_chunk, tf->k);
    /* Raw path: chunks located at open (pread, no HDF5) unless H5PACK_NO_LOCATE asks for H5Dread_chunk. */
    if (h5pack_read_path_is_raw(want_path))
        CHECK_EQ_INT(s->located.addr != NULL, getenv("H5PACK_NO_LOCATE") == NULL);
    uint64_t total = 0;
    for (uint64_t c = 0; c < g->n_chunks; c++)
        total += h5pack_chunksrc_chunk_samples(s, c);
    CHECK_EQ_U64(total, tf->n);
    int pattern = !tf->no_pixels && tf->write_chunks == 0;
    CHECK_OK(test_compare_all_chunks(s, g_path, "images", pattern));
    h5pack_chunksrc_close(s);
}

static void test_labels_and_stats(void)
{
    h5fix_file tf = CHUNKSRC_TEST_FILE;
    tf.mean = (const double[]){0.1, 0.2, 0.3}, tf.std = (const double[]){0.5, 0.6, 0.7};
    chunk_source *s = open_written("labels", &tf, H5PACK_LAYOUT_AUTO);
    const source_geometry *g = h5pack_chunksrc_geometry(s);
    const int64_t *labels = h5pack_chunksrc_labels(s);
    CHECK(g->has_labels && labels);
    CHECK_EQ_INT(g->n_classes, 5);
    for (uint64_t i = 0; i < tf.n; i++)
        CHECK_EQ_INT(labels[i], (int64_t)(i % 5));
    CHECK(g->has_stats);
    CHECK_NEAR(g->mean[2], 0.3, 1e-12);
    CHECK_NEAR(g->std[0], 0.5, 1e-12);
    h5pack_chunksrc_close(s);

    /* No "classes": max label + 1; signed 16-bit labels are fine. */
    tf = CHUNKSRC_TEST_FILE;
    tf.classes = 0;
    tf.n_classes = 7;
    tf.label_type = H5FIX_INT16BE;
    s = open_written("labels-noclasses", &tf, H5PACK_LAYOUT_AUTO);
    CHECK_EQ_INT(h5pack_chunksrc_geometry(s)->n_classes, 7);
    CHECK(!h5pack_chunksrc_geometry(s)->has_stats);
    h5pack_chunksrc_close(s);

    /* No labels dataset under the default name: fine, no labels. */
    tf = CHUNKSRC_TEST_FILE;
    tf.labels = 0;
    tf.classes = 0;
    s = open_written("nolabels", &tf, H5PACK_LAYOUT_AUTO);
    CHECK(!h5pack_chunksrc_geometry(s)->has_labels);
    CHECK(h5pack_chunksrc_labels(s) == NULL);
    CHECK_EQ_INT(h5pack_chunksrc_geometry(s)->n_classes, 0);
    h5pack_chunksrc_close(s);
}

static void test_stored_bytes(void)
{
    h5fix_file tf = CHUNKSRC_TEST_FILE;
    chunk_source *s = open_written("stored-implicit", &tf, H5PACK_LAYOUT_AUTO);
    const source_geometry *g = h5pack_chunksrc_geometry(s);
    CHECK_EQ_U64(h5pack_chunksrc_stored_bytes(s, 0), g->chunk_bytes);
    CHECK_EQ_U64(h5pack_chunksrc_stored_bytes(s, g->n_chunks - 1), h5pack_chunksrc_chunk_samples(s, g->n_chunks - 1) * g->image_bytes);
    h5pack_chunksrc_close(s);

    tf.gzip = 6;
    s = open_written("stored-gzip", &tf, H5PACK_LAYOUT_AUTO);
    g = h5pack_chunksrc_geometry(s);
    uint8_t *buf = malloc(g->chunk_bytes);
    chunksrc_scratch *sc = h5pack_chunksrc_scratch_new(s);
    for (uint64_t c = 0; c < g->n_chunks; c++) {
        uint64_t stored = h5pack_chunksrc_stored_bytes(s, c);
        chunk_read_cost cost = {0, 0, 0, 0};
        char err[512];
        CHECK_MSG(stored > 0 && stored < g->chunk_bytes, "chunk %llu stored %llu of %llu", (unsigned long long)c, (unsigned long long)stored, (unsigned long long)g->chunk_bytes);
        CHECK_OK(h5pack_chunksrc_read(s, c, buf, sc, &cost, err, sizeof err));
        CHECK_EQ_U64(cost.bytes_read, stored);
        CHECK_EQ_U64(cost.bytes_inflated, g->chunk_bytes);
    }
    h5pack_chunksrc_scratch_free(sc);
    free(buf);
    h5pack_chunksrc_close(s);
}

static void test_paths(void)
{
    h5fix_file tf = CHUNKSRC_TEST_FILE;
    check_case("implicit-edge", &tf, H5PACK_READ_IMPLICIT, 0);
    tf.n = 24;
    check_case("implicit-exact", &tf, H5PACK_READ_IMPLICIT, 0);
    tf.n = 4;
    check_case("implicit-one-chunk", &tf, H5PACK_READ_IMPLICIT, 0);
    tf.n = 3; /* fewer images than one chunk: only with a resizable first dimension */
    tf.resizable = 1, tf.old_format = 1;
    check_case("chunk-beyond-n", &tf, H5PACK_READ_LOCATED, 0);

    tf = CHUNKSRC_TEST_FILE;
    tf.nhwc = 1;
    tf.layout_attr = "NHWC";
    check_case("implicit-nhwc-attr", &tf, H5PACK_READ_IMPLICIT, 0);
    tf.layout_attr = NULL; /* (N,8,10,3): inferred */
    check_case("implicit-nhwc-inferred", &tf, H5PACK_READ_IMPLICIT, 0);

    tf = CHUNKSRC_TEST_FILE;
    tf.gzip = 4;
    check_case("gzip-fixed", &tf, H5PACK_READ_RAW_DEFLATE, 1);
    tf.shuffle = 1;
    check_case("gzip-shuffle", &tf, H5PACK_READ_RAW_DEFLATE, 1);
    tf.resizable = 1, tf.old_format = 1;
    check_case("gzip-resizable", &tf, H5PACK_READ_RAW_DEFLATE, 1);
    tf.write_chunks = 3; /* chunks 3.. never written: read as the fill value */
    check_case("gzip-unwritten", &tf, H5PACK_READ_RAW_DEFLATE, 1);

    tf = CHUNKSRC_TEST_FILE;
    tf.resizable = 1, tf.old_format = 1;
    check_case("plain-resizable", &tf, H5PACK_READ_LOCATED, 0);

    tf = CHUNKSRC_TEST_FILE;
    tf.fletcher32 = 1;
    check_case("fletcher32", &tf, H5PACK_READ_HDF5, 0);
    tf.gzip = 2;
    check_case("fletcher32-gzip", &tf, H5PACK_READ_HDF5, 1);

    tf = CHUNKSRC_TEST_FILE;
    tf.contiguous = 1, tf.old_format = 1;
    check_case("contiguous-small", &tf, H5PACK_READ_CONTIGUOUS, 0);
    tf.n = 50;
    tf.h = tf.w = 128; /* 48 KiB images: 21 per 1 MiB virtual chunk, 3 chunks */
    check_case("contiguous-large", &tf, H5PACK_READ_CONTIGUOUS, 0);
    /* A user block shifts every HDF5 address: the pread paths must add it. */
    tf = CHUNKSRC_TEST_FILE;
    tf.userblock = 1024;
    check_case("implicit-userblock", &tf, H5PACK_READ_IMPLICIT, 0);
    tf.contiguous = 1, tf.old_format = 1;
    check_case("contiguous-userblock", &tf, H5PACK_READ_CONTIGUOUS, 0);
    tf.contiguous = 0, tf.resizable = 1;
    tf.gzip = 1;
    check_case("gzip-userblock", &tf, H5PACK_READ_RAW_DEFLATE, 1);

    tf = CHUNKSRC_TEST_FILE;
    tf.contiguous = 1, tf.old_format = 1, tf.no_pixels = 1;
    check_case("contiguous-unwritten", &tf, H5PACK_READ_HDF5, 0);
}

int main(void)
{
    test_paths();
    test_labels_and_stats();
    test_stored_bytes();
    printf("ok\n");
    return 0;
}
