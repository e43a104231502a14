/* labelset.c - reads and checks the labels (labelset.h): (N,) or (N,K), any integer type (read as int64)
 * or floating point (read as float32), and finds the class count.
 *
 * Class labels are single-column integers: one per image, none negative, and n_classes is the length of
 * "classes" when the file has it, else the largest label + 1. Labels from a table (the converter's
 * --labels writes "label_names" beside them) may be negative (CelebA's 1/-1) or large (ids, timestamps):
 * a single column of them has n_classes = max + 1 when none is negative and max + 1 fits in int32, else 0.
 * Several columns or float labels: n_classes 0. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errtext.h"
#include "format.h"
#include "h5glue.h"
#include "h5pack.h"
#include "labelset.h"

/* What a load works on: the file, its image count, and the result. */
typedef struct label_load {
    hid_t file;
    const char *path;
    uint64_t n;
    label_set *ls;
} label_load;

/* "PATH: reason" into ERR; returns CODE. */
static int fail(const label_load *s, int code, char *err, size_t err_len, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static int fail(const label_load *s, int code, char *err, size_t err_len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    h5pack_verrf_at(code, err, err_len, s->path, fmt, ap);
    va_end(ap);
    return code;
}

/* Labels as (N,) or (N,K); returns N or -1 for another shape. */
static hssize_t labels_shape(hid_t dset, int *rank_out, uint64_t *columns)
{
    hsize_t dims[2] = {0, 0};
    hid_t space = H5Dget_space(dset);
    int rank = space >= 0 ? H5Sget_simple_extent_ndims(space) : -1;
    *rank_out = rank;
    if (rank == 1 || rank == 2)
        H5Sget_simple_extent_dims(space, dims, NULL);
    if (space >= 0)
        H5Sclose(space);
    *columns = rank == 2 ? dims[1] : 1;
    if (rank == 1 || (rank == 2 && dims[1] >= 1 && dims[1] <= UINT32_MAX))
        return (hssize_t)dims[0];
    return -1;
}

/* 0 for integers, 1 for floating point, else an error. */
static int label_kind(label_load *s, hid_t dset, const char *name, int *is_float, char *err, size_t err_len)
{
    char tname[64];
    hid_t type = H5Dget_type(dset);
    if (type < 0)
        return fail(s, H5PACK_ECORRUPT, err, err_len, "cannot read the type of '%s'", name);
    H5T_class_t cls = H5Tget_class(type);
    h5pack_h5_type_name(type, tname, sizeof tname);
    H5Tclose(type);
    if (cls != H5T_INTEGER && cls != H5T_FLOAT)
        return fail(s, H5PACK_EFORMAT, err, err_len, "labels '%s' hold %s, expected integers or floats",
                                    name, tname);
    *is_float = cls == H5T_FLOAT;
    return 0;
}

/* Length of the "classes" dataset, or -1 when there is none. */
static hssize_t classes_length(label_load *s)
{
    hssize_t n = -1;
    if (!h5pack_h5_path_exists(s->file, H5PACK_DS_CLASSES))
        return -1;
    hid_t d = H5Dopen2(s->file, H5PACK_DS_CLASSES, H5P_DEFAULT);
    hid_t space = d >= 0 ? H5Dget_space(d) : -1;
    if (space >= 0 && H5Sget_simple_extent_ndims(space) == 1)
        n = H5Sget_simple_extent_npoints(space);
    if (space >= 0)
        H5Sclose(space);
    if (d >= 0)
        H5Dclose(d);
    return n;
}

/* Single-column integer labels: class checks and the class count (see the top of the file). */
static int check_class_labels(label_load *s, const char *name, char *err, size_t err_len)
{
    int64_t max = -1;
    uint64_t n = s->n;
    int table = h5pack_h5_path_exists(s->file, H5PACK_DS_LABEL_NAMES);
    for (uint64_t i = 0; i < n; i++) {
        int64_t v = s->ls->ints[i];
        if (v < 0 && table) {
            s->ls->n_classes = 0; /* attribute values such as 1/-1, not class indices */
            return 0;
        }
        if (v < 0)
            return fail(s, H5PACK_EFORMAT, err, err_len, "labels '%s': label %lld at index %llu is negative",
                                 name, (long long)v, (unsigned long long)i);
        if (v > max)
            max = v;
    }
    if (max >= (int64_t)INT32_MAX && table) {
        s->ls->n_classes = 0; /* values such as ids, not class indices: any int64 is fine */
        return 0;
    }
    if (max >= (int64_t)INT32_MAX)
        return fail(s, H5PACK_EFORMAT, err, err_len, "labels '%s': label %lld is too large", name,
                             (long long)max);
    hssize_t n_classes = classes_length(s);
    if (n_classes >= 0 && max >= n_classes)
        return fail(s, H5PACK_EFORMAT, err, err_len,
                             "labels '%s': label %lld but 'classes' names only %lld classes", name, (long long)max,
                             (long long)n_classes);
    s->ls->n_classes = (uint32_t)(n_classes >= 0 ? n_classes : max + 1);
    return 0;
}

static int read_values(label_load *s, hid_t dset, const char *name, char *err, size_t err_len)
{
    uint64_t values = s->n * s->ls->label_columns;
    size_t esize = s->ls->labels_are_float ? sizeof(float) : sizeof(int64_t);
    void *buf = malloc(values ? values * esize : 1);
    if (!buf)
        return fail(s, H5PACK_ENOMEM, err, err_len, "out of memory for %llu labels",
                             (unsigned long long)values);
    if (s->ls->labels_are_float)
        s->ls->floats = buf;
    else
        s->ls->ints = buf;
    hid_t mtype = s->ls->labels_are_float ? H5T_NATIVE_FLOAT : H5T_NATIVE_INT64;
    if (H5Dread(dset, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) {
        char h5msg[400];
        h5pack_h5_error_text(h5msg, sizeof h5msg);
        return fail(s, H5PACK_ECORRUPT, err, err_len, "cannot read labels '%s' (HDF5: %s)", name, h5msg);
    }
    return 0;
}

static int read_labels(label_load *s, hid_t dset, const char *name, int is_float, char *err, size_t err_len)
{
    int rank;
    uint64_t columns;
    hssize_t len = labels_shape(dset, &rank, &columns);
    if (len < 0)
        return fail(s, H5PACK_EFORMAT, err, err_len,
                                    "labels '%s' have rank %d; expected (N,) or (N,K) with K >= 1", name, rank);
    if ((uint64_t)len != s->n)
        return fail(s, H5PACK_EFORMAT, err, err_len, "labels '%s' have %lld entries but there are %llu images",
                             name, (long long)len, (unsigned long long)s->n);
    s->ls->label_rank = rank;
    s->ls->label_columns = (uint32_t)columns;
    s->ls->labels_are_float = is_float;
    int rc = read_values(s, dset, name, err, err_len);
    if (rc == 0 && !is_float && columns == 1)
        rc = check_class_labels(s, name, err, err_len);
    return rc;
}

static int load(label_load *s, const char *name, char *err, size_t err_len)
{
    if (!name || !name[0])
        return 0;
    if (!h5pack_h5_path_exists(s->file, name)) {
        if (!strcmp(name, H5PACK_DS_LABELS))
            return 0; /* the default name, absent: a file without labels (flat folder) */
        return fail(s, H5PACK_ENOTFOUND, err, err_len, "no labels dataset '%s'", name);
    }
    hid_t dset = H5Dopen2(s->file, name, H5P_DEFAULT);
    if (dset < 0)
        return fail(s, H5PACK_EFORMAT, err, err_len, "'%s' is not a readable dataset", name);
    int is_float = 0;
    int rc = label_kind(s, dset, name, &is_float, err, err_len);
    if (!rc)
        rc = read_labels(s, dset, name, is_float, err, err_len);
    H5Dclose(dset);
    if (!rc)
        s->ls->has_labels = 1;
    return rc;
}

int h5pack_labelset_load(hid_t file, const char *path, uint64_t n, const char *name, label_set *out, char *err,
                         size_t err_len)
{
    memset(out, 0, sizeof *out);
    label_load s = {file, path ? path : "?", n, out};
    return load(&s, name, err, err_len);
}

void h5pack_labelset_free(label_set *ls)
{
    if (!ls)
        return;
    free(ls->ints), free(ls->floats);
    ls->ints = NULL, ls->floats = NULL;
}
