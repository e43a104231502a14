/* chunksrc_labels.c - reads and checks the labels (integers, one per image, none negative) and finds the
 * class count: the length of "classes" when the file has it, else the largest label + 1. */
#include <stdlib.h>
#include <string.h>

#include "chunksrc_impl.h"
#include "format.h"

/* Labels as (N,) or (N,1); returns the length or -1 for another shape. */
static hssize_t labels_length(hid_t dset, int *rank_out)
{
    hsize_t dims[2] = {0, 0};
    hid_t space = H5Dget_space(dset);
    int rank = space >= 0 ? H5Sget_simple_extent_ndims(space) : -1;
    *rank_out = rank;
    if (rank == 1 || rank == 2)
        H5Sget_simple_extent_dims(space, dims, NULL);
    if (space >= 0)
        H5Sclose(space);
    if (rank == 1 || (rank == 2 && dims[1] == 1))
        return (hssize_t)dims[0];
    return -1;
}

static int check_label_type(chunk_source *s, hid_t dset, const char *name, char *err, size_t err_len)
{
    char tname[64];
    hid_t type = H5Dget_type(dset);
    if (type < 0)
        return h5pack_chunksrc_fail(s, H5PACK_ECORRUPT, err, err_len, "cannot read the type of '%s'", name);
    int ok = H5Tget_class(type) == H5T_INTEGER;
    h5pack_h5_type_name(type, tname, sizeof tname);
    H5Tclose(type);
    if (!ok)
        return h5pack_chunksrc_fail(s, H5PACK_EFORMAT, err, err_len, "labels '%s' hold %s, expected integers", name, tname);
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

static int check_label_values(chunk_source *s, const char *name, char *err, size_t err_len)
{
    int64_t max = -1;
    uint64_t n = s->g.n_samples;
    for (uint64_t i = 0; i < n; i++) {
        int64_t v = s->labels[i];
        if (v < 0)
            return h5pack_chunksrc_fail(s, H5PACK_EFORMAT, err, err_len, "labels '%s': label %lld at index %llu is negative",
                                 name, (long long)v, (unsigned long long)i);
        if (v > max)
            max = v;
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

static int read_labels(chunk_source *s, hid_t dset, const char *name, char *err, size_t err_len)
{
    int rank;
    hssize_t len = labels_length(dset, &rank);
    if (len < 0)
        return h5pack_chunksrc_fail(s, H5PACK_EFORMAT, err, err_len, "labels '%s' have rank %d; expected one label per image",
                             name, rank);
    if ((uint64_t)len != s->g.n_samples)
        return h5pack_chunksrc_fail(s, H5PACK_EFORMAT, err, err_len, "labels '%s' have %lld entries but there are %llu images",
                             name, (long long)len, (unsigned long long)s->g.n_samples);
    s->labels = malloc(s->g.n_samples * sizeof *s->labels);
    if (!s->labels)
        return h5pack_chunksrc_fail(s, H5PACK_ENOMEM, err, err_len, "out of memory for %llu labels",
                             (unsigned long long)s->g.n_samples);
    if (H5Dread(dset, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, s->labels) < 0) {
        char h5msg[400];
        h5pack_h5_error_text(h5msg, sizeof h5msg);
        return h5pack_chunksrc_fail(s, H5PACK_ECORRUPT, err, err_len, "cannot read labels '%s' (HDF5: %s)", name, h5msg);
    }
    return check_label_values(s, name, err, err_len);
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
    int rc = check_label_type(s, dset, name, err, err_len);
    if (!rc)
        rc = read_labels(s, dset, name, err, err_len);
    H5Dclose(dset);
    if (!rc)
        s->g.has_labels = 1;
    return rc;
}
