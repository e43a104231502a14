/* test_chunksrc_version.c - the reader checks the root attribute h5pack_format_version (docs/format.md,
 * "Compatibility rules"): a newer format is refused with a message naming both versions, a value that is
 * no version is refused with a message naming the attribute, the current version and an absent attribute
 * (files from other tools) open. For a latest-format file (opened here) and an old-format one (opened in
 * the probe's child first, whose message must come through). */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "format.h"
#include "chunk_compare.h"

typedef enum attr_kind { ATTR_NONE, ATTR_INT32, ATTR_INT64_PAIR, ATTR_STRING, ATTR_FLOAT } attr_kind;

/* Writes an h5pack-like file NAME with the format version attribute of KIND holding VALUE. */
static const char *write_case(const char *name, int old_format, attr_kind kind, int value)
{
    static char path[600];
    h5fix_file tf = CHUNKSRC_TEST_FILE;
    tf.resizable = tf.old_format = old_format; /* as h5py writes it */
    snprintf(path, sizeof path, "%s/%s-%d.h5", h5fix_tmpdir("chunksrc-version"), name, old_format);
    CHECK_OK(h5fix_write(path, &tf));
    if (kind == ATTR_NONE)
        return path;
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    CHECK(f >= 0);
    hsize_t two = 2;
    hid_t type = kind == ATTR_STRING ? H5Tcopy(H5T_C_S1) : -1;
    if (type >= 0)
        H5Tset_size(type, 1);
    hid_t space = kind == ATTR_INT64_PAIR ? H5Screate_simple(1, &two, NULL) : H5Screate(H5S_SCALAR);
    hid_t ftype = kind == ATTR_INT32 ? H5T_STD_I32LE : kind == ATTR_INT64_PAIR ? H5T_STD_I64LE
                  : kind == ATTR_FLOAT ? H5T_IEEE_F64LE : type;
    hid_t a = H5Acreate2(f, H5PACK_ATTR_FORMAT_VERSION, ftype, space, H5P_DEFAULT, H5P_DEFAULT);
    int32_t i32 = value;
    int64_t pair[2] = {value, value};
    double d = value;
    char text = (char)('0' + value);
    herr_t w = kind == ATTR_INT32 ? H5Awrite(a, H5T_NATIVE_INT32, &i32)
               : kind == ATTR_INT64_PAIR ? H5Awrite(a, H5T_NATIVE_INT64, pair)
               : kind == ATTR_FLOAT ? H5Awrite(a, H5T_NATIVE_DOUBLE, &d) : H5Awrite(a, type, &text);
    CHECK(a >= 0 && w >= 0);
    H5Aclose(a);
    H5Sclose(space);
    if (type >= 0)
        H5Tclose(type);
    CHECK(H5Fclose(f) >= 0);
    return path;
}

static void expect_open(const char *path)
{
    char err[1024] = "";
    chunk_source *s = NULL;
    int rc = h5pack_chunksrc_open(path, H5PACK_DS_IMAGES, H5PACK_DS_LABELS, H5PACK_LAYOUT_AUTO, &s, err, sizeof err);
    CHECK_MSG(rc == 0, "%s: open failed (%d): %s", path, rc, err);
    h5pack_chunksrc_close(s);
}

/* Opening PATH fails with H5PACK_EFORMAT and a message naming the file; returns the message. */
static const char *expect_refused(const char *path)
{
    static char err[1024];
    chunk_source *s = NULL;
    err[0] = '\0';
    int rc = h5pack_chunksrc_open(path, H5PACK_DS_IMAGES, H5PACK_DS_LABELS, H5PACK_LAYOUT_AUTO, &s, err, sizeof err);
    printf("%s\n", err);
    CHECK_EQ_INT(rc, H5PACK_EFORMAT);
    CHECK(s == NULL);
    CHECK_STR_CONTAINS(err, path);
    return err;
}

static void test_storage_kind(int st)
{
    char newer[64], current[64];
    snprintf(newer, sizeof newer, "h5pack format version %d is newer", H5PACK_FORMAT_VERSION + 98);
    snprintf(current, sizeof current, "this reader's (%d)", H5PACK_FORMAT_VERSION);

    expect_open(write_case("absent", st, ATTR_NONE, 0));
    expect_open(write_case("current", st, ATTR_INT32, H5PACK_FORMAT_VERSION));

    const char *err = expect_refused(write_case("v99", st, ATTR_INT32, H5PACK_FORMAT_VERSION + 98));
    CHECK_STR_CONTAINS(err, newer);
    CHECK_STR_CONTAINS(err, current);
    CHECK_STR_CONTAINS(err, "update h5pack");
    err = expect_refused(write_case("v2", st, ATTR_INT32, H5PACK_FORMAT_VERSION + 1));
    CHECK_STR_CONTAINS(err, "is newer");

    err = expect_refused(write_case("zero", st, ATTR_INT32, 0));
    CHECK_STR_CONTAINS(err, H5PACK_ATTR_FORMAT_VERSION " = 0 is not a format version");
    err = expect_refused(write_case("string", st, ATTR_STRING, 1));
    CHECK_STR_CONTAINS(err, H5PACK_ATTR_FORMAT_VERSION " holds string (fixed length), not an integer");
    err = expect_refused(write_case("float", st, ATTR_FLOAT, 1));
    CHECK_STR_CONTAINS(err, "holds float64, not an integer");
    err = expect_refused(write_case("pair", st, ATTR_INT64_PAIR, 1));
    CHECK_STR_CONTAINS(err, "holds 2 values, not one");
}

/* The public API says the same (h5pack_last_error(NULL) after a failed h5pack_open). */
static void test_public_api(void)
{
    const char *path = write_case("public", 0, ATTR_INT32, 99);
    h5pack_config cfg = H5PACK_CONFIG_DEFAULTS;
    h5pack_reader *r = NULL;
    CHECK_EQ_INT(h5pack_open(path, &cfg, &r), H5PACK_EFORMAT);
    const char *msg = r ? h5pack_last_error(r) : h5pack_last_error(NULL); /* a failed reader, or none */
    char want[96];
    snprintf(want, sizeof want, "format version 99 is newer than this reader's (%d)", H5PACK_FORMAT_VERSION);
    printf("h5pack_open: %s\n", msg);
    CHECK_STR_CONTAINS(msg, want);
    CHECK_STR_CONTAINS(msg, path);
    h5pack_close(r);
}

int main(void)
{
    test_storage_kind(0); /* latest format: opened here, no probe */
    test_storage_kind(1); /* old format: the probe's child opens it first */
    test_public_api();
    printf("format version checks: ok\n");
    return 0;
}
