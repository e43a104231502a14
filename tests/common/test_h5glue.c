/* test_h5glue.c - the HDF5 glue every part shares (common/h5glue.h): type and shape names, the
 * attribute reads (the reader's format version check uses h5pack_h5_read_int_attr), error text and the
 * converter's capture of it, quiet mode, the lock. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "h5glue.h"

static void write_attr(hid_t loc, const char *name, hid_t type, hsize_t n, const void *value)
{
    hid_t space = n ? H5Screate_simple(1, &n, NULL) : H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(loc, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
    CHECK(a >= 0 && H5Awrite(a, type, value) >= 0);
    H5Aclose(a);
    H5Sclose(space);
}

static hid_t string_type(size_t size)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, size);
    return t;
}

static void expect_type(hid_t type, const char *name)
{
    char buf[64];
    h5pack_h5_type_name(type, buf, sizeof buf);
    CHECK_MSG(strcmp(buf, name) == 0, "type name \"%s\", expected \"%s\"", buf, name);
}

static void test_names(void)
{
    expect_type(H5T_NATIVE_UINT8, "uint8");
    expect_type(H5T_STD_I16BE, "int16");
    expect_type(H5T_STD_U64LE, "uint64");
    expect_type(H5T_IEEE_F32LE, "float32");
    expect_type(H5T_NATIVE_DOUBLE, "float64");
    hid_t vs = string_type(H5T_VARIABLE), fs = string_type(7);
    expect_type(vs, "string (variable length)");
    expect_type(fs, "string (fixed length)");
    H5Tclose(vs), H5Tclose(fs);
    hid_t c = H5Tcreate(H5T_COMPOUND, 8);
    H5Tinsert(c, "x", 0, H5T_NATIVE_DOUBLE);
    expect_type(c, "compound");
    H5Tclose(c);
    hid_t e = H5Tenum_create(H5T_NATIVE_INT8);
    int8_t v0 = 0;
    H5Tenum_insert(e, "FALSE", &v0);
    expect_type(e, "enum");
    H5Tclose(e);

    char buf[64];
    hsize_t dims[4] = {5, 3, 224, 224};
    h5pack_h5_dims_text(dims, 4, buf, sizeof buf);
    CHECK_MSG(strcmp(buf, "(5,3,224,224)") == 0, "dims \"%s\"", buf);
    h5pack_h5_dims_text(dims, 0, buf, sizeof buf);
    CHECK_MSG(strcmp(buf, "()") == 0, "scalar dims \"%s\"", buf);
    h5pack_h5_dims_text(dims, 4, buf, 6); /* cut, still terminated */
    CHECK_MSG(strlen(buf) == 5, "cut dims \"%s\"", buf);

    /* filter names: the one spelling of the reader and of h5pack-stats info */
    buf[0] = '\0';
    h5pack_h5_filter_append(H5Z_FILTER_SHUFFLE, 0, "", buf, sizeof buf);
    h5pack_h5_filter_append(H5Z_FILTER_DEFLATE, 4, "deflate", buf, sizeof buf);
    h5pack_h5_filter_append(32000, 0, "lzf", buf, sizeof buf);
    h5pack_h5_filter_append(307, 0, "", buf, sizeof buf);
    CHECK_MSG(strcmp(buf, "shuffle, deflate(4), lzf(id 32000), filter(id 307)") == 0, "filters \"%s\"", buf);
    char small[12] = "";
    h5pack_h5_filter_append(H5Z_FILTER_FLETCHER32, 0, "", small, sizeof small);
    h5pack_h5_filter_append(H5Z_FILTER_SHUFFLE, 0, "", small, sizeof small); /* cut, still terminated */
    CHECK_MSG(strlen(small) == sizeof small - 1 && strncmp(small, "fletcher32", 10) == 0, "cut \"%s\"", small);
}

static void test_attrs(const char *path)
{
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    CHECK(f >= 0);
    int32_t i32 = 7;
    int64_t i64x1[1] = {-3}, three[3] = {1, 2, 3};
    double d = 1.5, means[3] = {0.1, 0.2, 0.3};
    write_attr(f, "i32", H5T_NATIVE_INT32, 0, &i32);
    write_attr(f, "i64x1", H5T_NATIVE_INT64, 1, i64x1);
    write_attr(f, "three", H5T_NATIVE_INT64, 3, three);
    write_attr(f, "dbl", H5T_NATIVE_DOUBLE, 0, &d);
    write_attr(f, "means", H5T_NATIVE_DOUBLE, 3, means);
    hid_t s5 = string_type(5);
    write_attr(f, "text", s5, 0, "NHWC ");
    H5Tclose(s5);

    h5pack_h5_quiet q;
    h5pack_h5_enter(&q);
    int64_t v = 0;
    char why[128] = "", text[32];
    CHECK_EQ_INT(h5pack_h5_read_int_attr(f, "i32", &v, why, sizeof why), 1);
    CHECK_EQ_INT(v, 7);
    CHECK_EQ_INT(h5pack_h5_read_int_attr(f, "i64x1", &v, why, sizeof why), 1);
    CHECK_EQ_INT(v, -3);
    CHECK_EQ_INT(h5pack_h5_read_int_attr(f, "absent", &v, why, sizeof why), 0);
    CHECK_EQ_INT(h5pack_h5_read_int_attr(f, "three", &v, why, sizeof why), -1);
    CHECK_STR_CONTAINS(why, "3 values");
    CHECK_EQ_INT(h5pack_h5_read_int_attr(f, "dbl", &v, why, sizeof why), -1);
    CHECK_STR_CONTAINS(why, "float64, not an integer");
    CHECK_EQ_INT(h5pack_h5_read_int_attr(f, "text", &v, why, sizeof why), -1);
    CHECK_STR_CONTAINS(why, "string (fixed length), not an integer");

    CHECK_EQ_INT(h5pack_h5_read_string_attr(f, "text", text, sizeof text), 1);
    CHECK_MSG(strcmp(text, "NHWC") == 0, "string attribute \"%s\" (padding not trimmed?)", text);
    CHECK_EQ_INT(h5pack_h5_read_string_attr(f, "i32", text, sizeof text), -1);
    CHECK_EQ_INT(h5pack_h5_read_string_attr(f, "absent", text, sizeof text), 0);
    double got[3] = {0};
    CHECK_EQ_INT(h5pack_h5_read_doubles_attr(f, "means", got, 3), 1);
    CHECK(got[0] == 0.1 && got[2] == 0.3);
    CHECK_EQ_INT(h5pack_h5_read_doubles_attr(f, "means", got, 2), 0); /* another length */
    CHECK_EQ_INT(h5pack_h5_path_exists(f, "absent/deeper"), 0);
    h5pack_h5_leave(&q);
    H5Fclose(f);
}

static herr_t count_prints(hid_t stack, void *data)
{
    (void)stack;
    ++*(int *)data;
    return 0;
}

static void test_errors(const char *dir)
{
    char missing[1024], text[512];
    snprintf(missing, sizeof missing, "%s/no-such-file.h5", dir);
    int printed = 0;
    H5Eset_auto2(H5E_DEFAULT, count_prints, &printed);

    /* Quiet: nothing reaches the handler, the stack is there to read, the handler comes back after. */
    h5pack_h5_quiet q;
    h5pack_h5_quiet_begin(&q);
    CHECK(H5Fopen(missing, H5F_ACC_RDONLY, H5P_DEFAULT) < 0);
    h5pack_h5_error_text(text, sizeof text);
    CHECK_MSG(strlen(text) > 5 && !strstr(text, "no detail"), "error text \"%s\"", text);
    CHECK_MSG(strstr(text, "unable to open file") || strstr(text, "No such file"), "error text \"%s\"", text);
    h5pack_h5_quiet_end(&q);
    CHECK_EQ_INT(printed, 0);
    CHECK(H5Fopen(missing, H5F_ACC_RDONLY, H5P_DEFAULT) < 0);
    CHECK_EQ_INT(printed, 1);

    /* Capture: the text of the failing call survives the clean-up calls that clear the stack. */
    static h5pack_h5_capture cap;
    h5pack_h5_capture_install(&cap);
    CHECK(H5Fopen(missing, H5F_ACC_RDONLY, H5P_DEFAULT) < 0);
    hid_t p = H5Pcreate(H5P_FILE_ACCESS); /* succeeds: clears the stack */
    H5Pclose(p);
    h5pack_h5_error_text(text, sizeof text);
    CHECK_MSG(strstr(text, "no detail"), "the stack was not cleared: \"%s\"", text);
    h5pack_h5_capture_take(&cap, text, sizeof text);
    CHECK_MSG(strstr(text, "unable to open file"), "captured \"%s\"", text);
    h5pack_h5_capture_take(&cap, text, sizeof text);
    CHECK_MSG(strcmp(text, "no detail from HDF5") == 0, "taken twice: \"%s\"", text);
    CHECK_EQ_INT(printed, 1);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

int main(void)
{
    char dir[] = "/tmp/h5pack-h5glue-XXXXXX", path[1024];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/attrs.h5", dir);
    test_names();
    test_attrs(path);
    test_errors(dir);
    unlink(path);
    rmdir(dir);
    printf("h5glue: ok\n");
    return 0;
}
