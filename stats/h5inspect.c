/* h5inspect.c - reads the listing `h5pack-stats info` prints besides the reader's view (see h5inspect.h)
 * with the HDF5 C API. */
#include "h5inspect.h"

#include <errno.h>
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "format.h"
#include "h5glue.h"

#define MAX_DATASETS 256
#define MAX_ATTRS 64
#define MAX_CLASSES_LISTED 64

static void filter_list(hid_t dcpl, char *buf, size_t len)
{
    buf[0] = '\0';
    int n = H5Pget_nfilters(dcpl);
    for (int i = 0; i < n; i++) {
        unsigned flags = 0, cd[8] = {0}, cfg = 0;
        size_t ncd = 8;
        char name[64] = "";
        H5Z_filter_t id = H5Pget_filter2(dcpl, (unsigned)i, &flags, &ncd, cd, sizeof name, name, &cfg);
        h5pack_h5_filter_append(id, ncd ? cd[0] : 0, name, buf, len);
    }
}

static void chunk_facts(hid_t d, hid_t dcpl, ds_report *r)
{
    hsize_t ch[INSPECT_MAX_RANK] = {0};
    H5Pget_chunk(dcpl, r->rank, ch);
    r->n_chunks = 1;
    hid_t t = H5Dget_type(d);
    r->chunk_bytes = H5Tget_size(t);
    H5Tclose(t);
    for (int i = 0; i < r->rank; i++) {
        r->chunk[i] = ch[i];
        r->chunk_bytes *= ch[i];
        r->n_chunks *= ch[i] ? (r->dims[i] + ch[i] - 1) / ch[i] : 0;
    }
    hid_t fs = H5Dget_space(d);
    hsize_t n = 0;
    if (H5Dget_num_chunks(d, fs, &n) >= 0)
        r->n_allocated = n;
    H5Sclose(fs);
    filter_list(dcpl, r->filters, sizeof r->filters);
}

static void dataset_facts(hid_t d, const char *name, ds_report *r)
{
    memset(r, 0, sizeof *r);
    snprintf(r->name, sizeof r->name, "%s", name);
    hid_t t = H5Dget_type(d), sp = H5Dget_space(d), dcpl = H5Dget_create_plist(d);
    h5pack_h5_type_name(t, r->dtype, sizeof r->dtype);
    int rank = H5Sget_simple_extent_ndims(sp);
    r->rank = rank < 0 ? 0 : (rank > INSPECT_MAX_RANK ? INSPECT_MAX_RANK : rank);
    hsize_t dims[32] = {0}, maxd[32] = {0};
    if (rank > 0 && rank <= 32)
        H5Sget_simple_extent_dims(sp, dims, maxd);
    r->logical_bytes = H5Tget_size(t);
    for (int i = 0; i < r->rank; i++)
        r->dims[i] = dims[i], r->maxdims[i] = maxd[i], r->logical_bytes *= dims[i];
    r->storage_bytes = H5Dget_storage_size(d);
    H5D_layout_t lay = H5Pget_layout(dcpl);
    r->layout = lay == H5D_CHUNKED ? "chunked" : lay == H5D_COMPACT ? "compact" : lay == H5D_VIRTUAL ? "virtual"
                                                                                                     : "contiguous";
    if (lay == H5D_CHUNKED)
        chunk_facts(d, dcpl, r);
    H5Pclose(dcpl), H5Sclose(sp), H5Tclose(t);
}

static herr_t visit_link(hid_t group, const char *name, const H5L_info_t *info, void *data)
{
    file_report *r = data;
    if (info->type != H5L_TYPE_HARD || r->n_datasets >= MAX_DATASETS)
        return 0;
    hid_t obj = H5Oopen(group, name, H5P_DEFAULT);
    if (obj < 0)
        return 0;
    if (H5Iget_type(obj) == H5I_DATASET)
        dataset_facts(obj, name, &r->datasets[r->n_datasets++]);
    H5Oclose(obj);
    return 0;
}

/* Attribute NAME of LOC (opened as A): a string's text, or up to INSPECT_MAX_VALUES numbers. */
static void read_attr(hid_t loc, hid_t a, const char *owner, const char *name, attr_report *r)
{
    memset(r, 0, sizeof *r);
    snprintf(r->owner, sizeof r->owner, "%s", owner);
    snprintf(r->name, sizeof r->name, "%s", name);
    hid_t t = H5Aget_type(a), sp = H5Aget_space(a);
    hssize_t n = H5Sget_simple_extent_npoints(sp);
    if (H5Tget_class(t) == H5T_STRING && n == 1) {
        r->is_string = 1;
        h5pack_h5_read_string_attr(loc, name, r->text, sizeof r->text);
    } else if ((H5Tget_class(t) == H5T_INTEGER || H5Tget_class(t) == H5T_FLOAT) && n >= 1 && n <= 4096) {
        double *v = malloc((size_t)n * sizeof *v);
        if (v && H5Aread(a, H5T_NATIVE_DOUBLE, v) >= 0) {
            r->n_values = n < INSPECT_MAX_VALUES ? (int)n : INSPECT_MAX_VALUES;
            memcpy(r->values, v, (size_t)r->n_values * sizeof *v);
        }
        free(v);
    } else {
        r->is_string = 1;
        snprintf(r->text, sizeof r->text, "(%lld values of an unsupported type)", (long long)n);
    }
    H5Sclose(sp), H5Tclose(t);
}

typedef struct attr_ctx {
    file_report *r;
    const char *owner;
} attr_ctx;

static herr_t visit_attr(hid_t loc, const char *name, const H5A_info_t *info, void *data)
{
    (void)info;
    attr_ctx *c = data;
    if (c->r->n_attrs >= MAX_ATTRS)
        return 1;
    hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
    if (a >= 0) {
        read_attr(loc, a, c->owner, name, &c->r->attrs[c->r->n_attrs++]);
        H5Aclose(a);
    }
    return 0;
}

static void list_attrs(hid_t obj, const char *owner, file_report *r)
{
    attr_ctx c = {.r = r, .owner = owner};
    hsize_t idx = 0;
    H5Aiterate2(obj, H5_INDEX_NAME, H5_ITER_INC, &idx, visit_attr, &c);
}

static void read_classes(hid_t f, file_report *r)
{
    if (!h5pack_h5_path_exists(f, H5PACK_DS_CLASSES))
        return;
    hid_t d = H5Dopen2(f, H5PACK_DS_CLASSES, H5P_DEFAULT);
    if (d < 0)
        return;
    hid_t t = H5Dget_type(d), sp = H5Dget_space(d);
    hssize_t n = H5Sget_simple_extent_npoints(sp);
    r->n_classes = n > 0 ? (uint64_t)n : 0;
    if (H5Tget_class(t) == H5T_STRING && H5Tis_variable_str(t) > 0 && n > 0) {
        char **names = calloc((size_t)n, sizeof *names);
        hid_t mt = H5Tcopy(H5T_C_S1);
        H5Tset_size(mt, H5T_VARIABLE);
        H5Tset_cset(mt, H5T_CSET_UTF8);
        if (names && H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, names) >= 0) {
            int k = n < MAX_CLASSES_LISTED ? (int)n : MAX_CLASSES_LISTED;
            r->classes = calloc((size_t)k, sizeof *r->classes);
            for (int i = 0; r->classes && i < k; i++)
                r->classes[r->n_classes_listed++] = strdup(names[i] ? names[i] : "");
            H5Dvlen_reclaim(mt, sp, H5P_DEFAULT, names);
        }
        free(names);
        H5Tclose(mt);
    }
    H5Sclose(sp), H5Tclose(t), H5Dclose(d);
}

static int open_checked(const char *path, hid_t *f, char *err, size_t err_len)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        snprintf(err, err_len, "%s: %s", path, strerror(errno));
        return -1;
    }
    if (S_ISDIR(st.st_mode)) {
        snprintf(err, err_len, "%s: a folder, not a file: pack an image folder first (h5pack --size 224x224 "
                 "FOLDER train.h5), then look at train.h5", path);
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(err, err_len, "%s: not a regular file", path);
        return -1;
    }
    if (H5Fis_hdf5(path) <= 0) {
        snprintf(err, err_len, "%s: not an HDF5 file (no HDF5 signature found)", path);
        return -1;
    }
    *f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (*f < 0) {
        snprintf(err, err_len, "%s: HDF5 cannot open it (truncated or damaged?)", path);
        return -1;
    }
    return 0;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Min, median, max of V (N values, sorted here). */
static void spread_u64(uint64_t *v, uint64_t n, uint64_t out[3])
{
    qsort(v, (size_t)n, sizeof *v, cmp_u64);
    out[0] = v[0], out[1] = v[n / 2], out[2] = v[n - 1];
}

/* image_shapes (N,2), when present and readable: the sizes of images of several sizes. */
static void read_size_spread(hid_t f, size_spread *z)
{
    hid_t d = h5pack_h5_path_exists(f, H5PACK_DS_IMAGE_SHAPES) ? H5Dopen2(f, H5PACK_DS_IMAGE_SHAPES, H5P_DEFAULT) : -1;
    hid_t space = d >= 0 ? H5Dget_space(d) : -1;
    hsize_t dims[2] = {0, 0};
    if (space < 0 || H5Sget_simple_extent_ndims(space) != 2 || H5Sget_simple_extent_dims(space, dims, NULL) != 2 ||
        dims[1] != 2 || dims[0] == 0 || dims[0] > ((uint64_t)1 << 32)) {
        dims[0] = 0;
    }
    uint64_t n = dims[0], *hw = n ? malloc(2 * n * sizeof *hw) : NULL, *col = n ? malloc(n * sizeof *col) : NULL;
    double *aspect = n ? malloc(n * sizeof *aspect) : NULL;
    if (hw && col && aspect && H5Dread(d, H5T_NATIVE_UINT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, hw) >= 0) {
        z->n = n;
        for (uint64_t i = 0; i < n; i++) {
            col[i] = hw[2 * i];
            aspect[i] = hw[2 * i] ? (double)hw[2 * i + 1] / (double)hw[2 * i] : 0.0;
            z->pixels += hw[2 * i] * hw[2 * i + 1];
        }
        spread_u64(col, n, z->height);
        for (uint64_t i = 0; i < n; i++)
            col[i] = hw[2 * i + 1];
        spread_u64(col, n, z->width);
        qsort(aspect, (size_t)n, sizeof *aspect, cmp_double);
        z->aspect[0] = aspect[0], z->aspect[1] = aspect[n / 2], z->aspect[2] = aspect[n - 1];
    }
    free(hw), free(col), free(aspect);
    if (space >= 0)
        H5Sclose(space);
    if (d >= 0)
        H5Dclose(d);
}

int inspect_file(const char *path, const char *images, file_report *r, char *err, size_t err_len)
{
    memset(r, 0, sizeof *r);
    r->format_version = -1;
    snprintf(r->path, sizeof r->path, "%s", path);
    h5pack_h5_quiet quiet;
    h5pack_h5_quiet_begin(&quiet);
    hid_t f = -1;
    int rc = open_checked(path, &f, err, err_len);
    r->datasets = calloc(MAX_DATASETS, sizeof *r->datasets);
    r->attrs = calloc(MAX_ATTRS, sizeof *r->attrs);
    if (rc == 0 && (!r->datasets || !r->attrs)) {
        snprintf(err, err_len, "%s: out of memory", path);
        rc = -1;
    }
    if (rc == 0) {
        hsize_t size = 0;
        H5Fget_filesize(f, &size);
        r->file_bytes = size;
        if (H5Lvisit(f, H5_INDEX_NAME, H5_ITER_INC, visit_link, r) < 0) {
            snprintf(err, err_len, "%s: cannot list its objects (damaged metadata?)", path);
            rc = -1;
        }
    }
    if (rc == 0) {
        r->listed = 1;
        list_attrs(f, "/", r);
        if (images && h5pack_h5_path_exists(f, images)) {
            hid_t d = H5Oopen(f, images, H5P_DEFAULT);
            if (d >= 0)
                list_attrs(d, images, r), H5Oclose(d);
        }
        read_classes(f, r);
        read_size_spread(f, &r->sizes);
        for (int i = 0; i < r->n_attrs; i++)
            if (strcmp(r->attrs[i].owner, "/") == 0 && strcmp(r->attrs[i].name, H5PACK_ATTR_FORMAT_VERSION) == 0 &&
                r->attrs[i].n_values == 1)
                r->format_version = (int)r->attrs[i].values[0];
    }
    if (f >= 0)
        H5Fclose(f);
    h5pack_h5_quiet_end(&quiet);
    if (rc < 0)
        report_free(r);
    return rc;
}

void report_free(file_report *r)
{
    for (int i = 0; i < r->n_classes_listed; i++)
        free(r->classes[i]);
    free(r->classes), free(r->datasets), free(r->attrs);
    r->classes = NULL, r->datasets = NULL, r->attrs = NULL;
    r->n_classes_listed = r->n_datasets = r->n_attrs = 0;
}

const ds_report *report_dataset(const file_report *r, const char *name)
{
    if (name && name[0] == '/')
        name++;
    for (int i = 0; name && i < r->n_datasets; i++)
        if (strcmp(r->datasets[i].name, name) == 0)
            return &r->datasets[i];
    return NULL;
}
