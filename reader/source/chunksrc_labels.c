/* chunksrc_labels.c - reads and checks the labels: (N,) or (N,K), any integer type (read as int64) or
 * floating point (read as float32), and finds the class count.
 *
 * Class labels are single-column integers: one per image, none negative, and n_classes is the length of
 * "classes" when the file has it, else the largest label + 1. Labels from a table (the converter's
 * --labels writes "label_names" beside them) may be negative (CelebA's 1/-1) or large (ids, timestamps):
 * a single column of them has n_classes = max + 1 when none is negative and max + 1 fits in int32, else 0.
 * Several columns or float labels: n_classes 0. */
#include <stdlib.h>
#include <string.h>

#include "chunksrc_impl.h"
#include "format.h"

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
static int label_kind(chunk_source *s, hid_t dset, const char *name, int *is_float, char *err, size_t err_len)
{
    char tname[64];
    hid_t type = H5Dget_type(dset);
    if (type < 0)
        return h5pack_chunksrc_fail(s, H5PACK_ECORRUPT, err, err_len, "cannot read the type of '%s'", name);
    H5T_class_t cls = H5Tget_class(type);
    h5pack_h5_type_name(type, tname, sizeof tname);
    H5Tclose(type);
    if (cls != H5T_INTEGER && cls != H5T_FLOAT)
        return h5pack_chunksrc_fail(s, H5PACK_EFORMAT, err, err_len, "labels '%s' hold %s, expected integers or floats",
                                    name, tname);
    *is_float = cls == H5T_FLOAT;
    return 0;
}

/* Length of the "classes" dataset, or -1 when there is none. */
static hssize_t classes_length(chunk_source *s)
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
static int check_class_labels(chunk_source *s, const char *name, char *err, size_t err_len)
{
    int64_t max = -1;
    uint64_t n = s->g.n_samples;
    int table = h5pack_h5_path_exists(s->file, H5PACK_DS_LABEL_NAMES);
    for (uint64_t i = 0; i < n; i++) {
        int64_t v = s->labels[i];
        if (v < 0 && table) {
            s->g.n_classes = 0; /* attribute values such as 1/-1, not class indices */
            return 0;
        }
        if (v < 0)
            return h5pack_chunksrc_fail(s, H5PACK_EFORMAT, err, err_len, "labels '%s': label %lld at index %llu is negative",
                                 name, (long long)v, (unsigned long long)i);
        if (v > max)
            max = v;
    }
    if (max >= (int64_t)INT32_MAX && table) {
        s->g.n_classes = 0; /* values such as ids, not class indices: any int64 is fine */
        return 0;
    }
    if (max >= (int64_t)INT32_MAX)
        return h5pack_chunksrc_fail(s, H5PACK_EFORMAT, err, err_len, "labels '%s': label %lld is too large", name,
                             (long long)max);
    hssize_t n_classes = classes_length(s);
    if (n_classes >= 0 && max >= n_classes)
        return h5pack_chunksrc_fail(s, H5PACK_EFORMAT, err, err_len,
                             "labels '%s': label %lld but 'classes' names only %lld classes", name, (long long)max,
                             (long long)n_classes);
    s->g.n_classes = (uint32_t)(n_classes >= 0 ? n_classes : max + 1);
    return 0;
}

static int read_values(chunk_source *s, hid_t dset, const char *name, char *err, size_t err_len)
{
    uint64_t values = s->g.n_samples * s->g.label_columns;
    size_t esize = s->g.labels_are_float ? sizeof(float) : sizeof(int64_t);
    void *buf = malloc(values ? values * esize : 1);
    if (!buf)
        return h5pack_chunksrc_fail(s, H5PACK_ENOMEM, err, err_len, "out of memory for %llu labels",
                             (unsigned long long)values);
    if (s->g.labels_are_float)
        s->labels_float = buf;
    else
        s->labels = buf;
    hid_t mtype = s->g.labels_are_float ? H5T_NATIVE_FLOAT : H5T_NATIVE_INT64;
    if (H5Dread(dset, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) {
        char h5msg[400];
        h5pack_h5_error_text(h5msg, sizeof h5msg);
        return h5pack_chunksrc_fail(s, H5PACK_ECORRUPT, err, err_len, "cannot read labels '%s' (HDF5: %s)", name, h5msg);
    }
    return 0;
}

static int read_labels(chunk_source *s, hid_t dset, const char *name, int is_float, char *err, size_t err_len)
{
    int rank;
    uint64_t columns;
    hssize_t len = labels_shape(dset, &rank, &columns);
    if (len < 0)
        return h5pack_chunksrc_fail(s, H5PACK_EFORMAT, err, err_len,
                                    "labels '%s' have rank %d; expected (N,) or (N,K) with K >= 1", name, rank);
    if ((uint64_t)len != s->g.n_samples)
        return h5pack_chunksrc_fail(s, H5PACK_EFORMAT, err, err_len, "labels '%s' have %lld entries but there are %llu images",
                             name, (long long)len, (unsigned long long)s->g.n_samples);
    s->g.label_rank = rank;
    s->g.label_columns = (uint32_t)columns;
    s->g.labels_are_float = is_float;
    int rc = read_values(s, dset, name, err, err_len);
    if (rc == 0 && !is_float && columns == 1)
        rc = check_class_labels(s, name, err, err_len);
    return rc;
}

int h5pack_chunksrc_load_labels(chunk_source *s, const char *name, char *err, size_t err_len)
{
    if (!name || !name[0])
        return 0;
    if (!h5pack_h5_path_exists(s->file, name)) {
        if (!strcmp(name, H5PACK_DS_LABELS))
            return 0; /* the default name, absent: a file without labels (flat folder) */
        return h5pack_chunksrc_fail(s, H5PACK_ENOTFOUND, err, err_len, "no labels dataset '%s'", name);
    }
    hid_t dset = H5Dopen2(s->file, name, H5P_DEFAULT);
    if (dset < 0)
        return h5pack_chunksrc_fail(s, H5PACK_EFORMAT, err, err_len, "'%s' is not a readable dataset", name);
    int is_float = 0;
    int rc = label_kind(s, dset, name, &is_float, err, err_len);
    if (!rc)
        rc = read_labels(s, dset, name, is_float, err, err_len);
    H5Dclose(dset);
    if (!rc)
        s->g.has_labels = 1;
    return rc;
}
