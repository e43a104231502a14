/* test_chunksrc_bad.c - files the reader must reject, each with the expected error code and a message
 * that names the file and the reason: missing file, not HDF5, missing dataset, wrong dtype, wrong rank,
 * zero samples, slabs too large to be read units, bad labels, bad layout attribute, too many channels. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "chunk_compare.h"

static char g_path[600];

static const char *write_case(const char *name, const h5fix_file *tf)
{
    snprintf(g_path, sizeof g_path, "%s/%s.h5", h5fix_tmpdir("chunksrc-bad"), name);
    CHECK_OK(h5fix_write(g_path, tf));
    return g_path;
}

/* Opening PATH must fail with CODE and a message holding the file name and WHAT. */
static void expect_open_error(const char *path, const char *images, const char *labels, h5pack_layout hint, int code,
                              const char *what)
{
    char err[1024] = "";
    chunk_source *s = (chunk_source *)&err; /* must be reset to NULL on failure */
    int rc = h5pack_chunksrc_open(path, images, labels, hint, &s, err, sizeof err);
    printf("%-60s -> %d: %s\n", strrchr(path, '/') ? strrchr(path, '/') + 1 : path, rc, err);
    CHECK_EQ_INT(rc, code);
    CHECK(s == NULL);
    CHECK_STR_CONTAINS(err, path);
    CHECK_STR_CONTAINS(err, what);
}

static void expect_case(const char *name, const h5fix_file *tf, int code, const char *what)
{
    expect_open_error(write_case(name, tf), "images", "labels", H5PACK_LAYOUT_AUTO, code, what);
}

static void test_not_files(void)
{
    char path[600];
    snprintf(path, sizeof path, "%s/does-not-exist.h5", h5fix_tmpdir("chunksrc-bad"));
    expect_open_error(path, "images", "labels", H5PACK_LAYOUT_AUTO, H5PACK_ENOTFOUND, "No such file");
    snprintf(path, sizeof path, "%s/text.h5", h5fix_tmpdir("chunksrc-bad"));
    FILE *f = fopen(path, "w");
    CHECK(f);
    fputs("this is not an HDF5 file, just text that someone named .h5\n", f);
    fclose(f);
    expect_open_error(path, "images", "labels", H5PACK_LAYOUT_AUTO, H5PACK_EFORMAT, "not an HDF5 file");
    /* an image folder given where its packed file is meant: the message says to pack it first */
    expect_open_error(h5fix_tmpdir("chunksrc-bad"), "images", "labels", H5PACK_LAYOUT_AUTO, H5PACK_EFORMAT,
                      "a folder, not a file: pack an image folder first (h5pack");
    expect_open_error("/dev/null", "images", "labels", H5PACK_LAYOUT_AUTO, H5PACK_EFORMAT, "not a regular file");
}

static void test_bad_images(void)
{
    h5fix_file tf = CHUNKSRC_TEST_FILE;
    const char *ok = write_case("fine", &tf);
    expect_open_error(ok, "pixels", "labels", H5PACK_LAYOUT_AUTO, H5PACK_ENOTFOUND, "no images dataset 'pixels'");
    expect_open_error(ok, "pixels", "labels", H5PACK_LAYOUT_AUTO, H5PACK_ENOTFOUND, "images, labels");
    expect_open_error(ok, "images/sub", "labels", H5PACK_LAYOUT_AUTO, H5PACK_ENOTFOUND, "images/sub");
    expect_open_error(ok, "images", "targets", H5PACK_LAYOUT_AUTO, H5PACK_ENOTFOUND, "no labels dataset 'targets'");
    /* (23,3,8,10) forced to NHWC: 10 channels. */
    expect_open_error(ok, "images", "labels", H5PACK_LAYOUT_NHWC, H5PACK_EFORMAT, "10 channels");

    tf.image_type = H5FIX_FLOAT32;
    expect_case("float32", &tf, H5PACK_EFORMAT, "holds float32, expected uint8");
    tf.image_type = H5FIX_INT8;
    expect_case("int8", &tf, H5PACK_EFORMAT, "holds int8");
    tf.image_type = H5FIX_UINT16;
    expect_case("uint16", &tf, H5PACK_EFORMAT, "holds uint16");

    tf = CHUNKSRC_TEST_FILE;
    tf.rank = 2;
    expect_case("rank2", &tf, H5PACK_EFORMAT, "rank 2, shape (23,8); expected 4-D images");

    tf = CHUNKSRC_TEST_FILE;
    tf.n = 0;
    tf.contiguous = 1, tf.old_format = 1;
    tf.labels = 0;
    expect_case("zero", &tf, H5PACK_EFORMAT, "zero samples");

    /* Chunks of 100000 rows that split images: a slab would be 100000 whole images, 11 GiB. */
    tf = CHUNKSRC_TEST_FILE;
    tf.n = 100000, tf.h = 200, tf.w = 200, tf.labels = 0, tf.classes = 0;
    tf.resizable = 1, tf.old_format = 1, tf.no_pixels = 1; /* nothing written: a small file */
    tf.chunk[0] = 100000, tf.chunk[1] = 1, tf.chunk[2] = 1, tf.chunk[3] = 1;
    expect_case("huge-slab", &tf, H5PACK_EFORMAT, "spans 100000 images along the sample axis");

    tf = CHUNKSRC_TEST_FILE;
    tf.layout_attr = "CHWN";
    expect_case("layout-attr", &tf, H5PACK_EFORMAT, "layout = 'CHWN' is neither NCHW nor NHWC");
}

static void test_bad_labels(void)
{
    h5fix_file tf = CHUNKSRC_TEST_FILE;
    tf.label_len_delta = -1;
    expect_case("labels-short", &tf, H5PACK_EFORMAT, "have 22 entries but there are 23 images");
    tf.label_len_delta = 2;
    expect_case("labels-long", &tf, H5PACK_EFORMAT, "have 25 entries");

    /* float labels are read as float32 (tests/labels); other label types: tests/labels/test_reader_labels */

    tf = CHUNKSRC_TEST_FILE;
    tf.label_type = H5FIX_INT32;
    tf.negative_label = 1;
    expect_case("labels-negative", &tf, H5PACK_EFORMAT, "label -1 at index 11 is negative");

    tf = CHUNKSRC_TEST_FILE;
    tf.n_classes = 9; /* labels up to 8, but "classes" lists 3 */
    tf.classes = 3;
    expect_case("labels-beyond-classes", &tf, H5PACK_EFORMAT, "label 8 but 'classes' names only 3");
}

int main(void)
{
    test_not_files();
    test_bad_images();
    test_bad_labels();
    printf("ok\n");
    return 0;
}
