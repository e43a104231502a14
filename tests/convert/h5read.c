/* h5read.c - reading h5pack files back for the converter tests. */
#define _XOPEN_SOURCE 700
#include "h5read.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

int64_t attr_int(hid_t loc, const char *name)
{
    int64_t v = 0;
    hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
    CHECK_MSG(a >= 0, "attribute %s missing", name);
    CHECK(H5Aread(a, H5T_NATIVE_INT64, &v) >= 0);
    H5Aclose(a);
    return v;
}

char *attr_string(hid_t loc, const char *name)
{
    hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
    CHECK_MSG(a >= 0, "attribute %s missing", name);
    hid_t t = H5Aget_type(a);
    CHECK(H5Tget_class(t) == H5T_STRING && !H5Tis_variable_str(t));
    size_t size = H5Tget_size(t);
    char *s = calloc(1, size + 1);
    CHECK(s && H5Aread(a, t, s) >= 0);
    H5Tclose(t);
    H5Aclose(a);
    return s;
}

void attr_doubles(hid_t loc, const char *name, double *out, size_t count)
{
    hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
    CHECK_MSG(a >= 0, "attribute %s missing", name);
    hid_t s = H5Aget_space(a);
    CHECK_EQ_INT(H5Sget_simple_extent_npoints(s), count);
    CHECK(H5Aread(a, H5T_NATIVE_DOUBLE, out) >= 0);
    H5Sclose(s);
    H5Aclose(a);
}

int dataset_exists(hid_t file, const char *name)
{
    return H5Lexists(file, name, H5P_DEFAULT) > 0;
}

static char **read_strings(hid_t file, const char *name, size_t *count)
{
    hid_t d = H5Dopen2(file, name, H5P_DEFAULT);
    CHECK_MSG(d >= 0, "dataset %s missing", name);
    hid_t s = H5Dget_space(d);
    hssize_t n = H5Sget_simple_extent_npoints(s);
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, H5T_VARIABLE);
    H5Tset_cset(t, H5T_CSET_UTF8);
    hid_t ft = H5Dget_type(d);
    CHECK_MSG(H5Tis_variable_str(ft) > 0 && H5Tget_cset(ft) == H5T_CSET_UTF8, "%s: not vlen UTF-8", name);
    char **raw = calloc((size_t)n + 1, sizeof *raw), **out = calloc((size_t)n + 1, sizeof *out);
    CHECK(raw && out);
    if (n > 0)
        CHECK(H5Dread(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, raw) >= 0);
    for (hssize_t i = 0; i < n; i++)
        out[i] = strdup(raw[i]);
    if (n > 0)
        H5Dvlen_reclaim(t, s, H5P_DEFAULT, raw);
    free(raw);
    H5Tclose(ft);
    H5Tclose(t);
    H5Sclose(s);
    H5Dclose(d);
    *count = (size_t)n;
    return out;
}

static void free_strings(char **s, size_t n)
{
    for (size_t i = 0; s && i < n; i++)
        free(s[i]);
    free(s);
}

static void read_images(hid_t file, packed_file *pf)
{
    hid_t d = H5Dopen2(file, "images", H5P_DEFAULT);
    CHECK(d >= 0);
    hid_t s = H5Dget_space(d), t = H5Dget_type(d);
    CHECK_EQ_INT(H5Sget_simple_extent_ndims(s), 4);
    CHECK(H5Tequal(t, H5T_STD_U8LE) > 0);
    H5Sget_simple_extent_dims(s, pf->dims, NULL);
    pf->n = pf->dims[0];
    pf->image_bytes = (size_t)(pf->dims[1] * pf->dims[2] * pf->dims[3]);
    pf->images = malloc(pf->n * pf->image_bytes + 1);
    CHECK(pf->images && H5Dread(d, H5T_NATIVE_UINT8, H5S_ALL, H5S_ALL, H5P_DEFAULT, pf->images) >= 0);
    H5Tclose(t);
    H5Sclose(s);
    H5Dclose(d);
}

void packed_open(const char *path, packed_file *pf)
{
    size_t n;
    memset(pf, 0, sizeof *pf);
    pf->file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    CHECK_MSG(pf->file >= 0, "cannot open %s", path);
    read_images(pf->file, pf);
    pf->filenames = read_strings(pf->file, "filenames", &n);
    CHECK_EQ_U64(n, pf->n);
    if (dataset_exists(pf->file, "labels")) {
        hid_t d = H5Dopen2(pf->file, "labels", H5P_DEFAULT);
        pf->labels = malloc(pf->n * sizeof *pf->labels + 1);
        CHECK(pf->labels && H5Dread(d, H5T_NATIVE_UINT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, pf->labels) >= 0);
        H5Dclose(d);
        pf->classes = read_strings(pf->file, "classes", &pf->n_classes);
    }
    size_t nr;
    pf->skipped_files = read_strings(pf->file, "skipped/files", &pf->n_skipped);
    pf->skipped_reasons = read_strings(pf->file, "skipped/reasons", &nr);
    CHECK_EQ_U64(nr, pf->n_skipped);
}

void packed_close(packed_file *pf)
{
    free(pf->images);
    free(pf->labels);
    free_strings(pf->filenames, pf->n);
    free_strings(pf->classes, pf->n_classes);
    free_strings(pf->skipped_files, pf->n_skipped);
    free_strings(pf->skipped_reasons, pf->n_skipped);
    H5Fclose(pf->file);
    memset(pf, 0, sizeof *pf);
}

long packed_find(const packed_file *pf, const char *name)
{
    for (uint64_t i = 0; i < pf->n; i++)
        if (strcmp(pf->filenames[i], name) == 0)
            return (long)i;
    return -1;
}

uint8_t *read_whole_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    CHECK_MSG(f != NULL, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *buf = malloc((size_t)size + 1);
    CHECK(buf && fread(buf, 1, (size_t)size, f) == (size_t)size);
    fclose(f);
    *len = (size_t)size;
    return buf;
}

int files_identical(const char *a, const char *b)
{
    size_t la, lb;
    uint8_t *x = read_whole_file(a, &la), *y = read_whole_file(b, &lb);
    int same = la == lb && memcmp(x, y, la) == 0;
    free(x);
    free(y);
    return same;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    remove(path);
    return 0;
}

void remove_tree(const char *path)
{
    nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}
