/* chunksrc_open.c - opens the HDF5 file, validates the images dataset (4-D, or 3-D gray read as C = 1),
 * and picks the read path (implicit > contiguous > raw deflate > hdf5; see chunksrc.h). Everything learnt here is immutable
 * afterwards, so reads need no lock except around the HDF5 calls of the raw and hdf5 paths. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chunksrc_impl.h"
#include "errtext.h"
#include "format.h"
#include "labelset.h"

static void chunksrc_close_in_process(chunk_source *s);

int h5pack_chunksrc_fail(const chunk_source *s, int code, char *err, size_t err_len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    h5pack_verrf_at(code, err, err_len, s ? s->path : NULL, fmt, ap); /* no source: FMT names the file */
    va_end(ap);
    return code;
}

int h5pack_chunksrc_fail_h5(const chunk_source *s, int code, char *err, size_t err_len, const char *what)
{
    char h5msg[600];
    h5pack_h5_error_text(h5msg, sizeof h5msg);
    return h5pack_chunksrc_fail(s, code, err, err_len, "%s (HDF5: %s)", what, h5msg);
}

/* HDF5 addresses count from the end of the user block (h5py's userblock_size, h5jam); the chunk info
 * calls of 1.10.8 return them so, while H5Dget_offset adds the user block itself (the tests check both). */
static int read_userblock(chunk_source *s, char *err, size_t err_len)
{
    hsize_t size = 0;
    hid_t fcpl = H5Fget_create_plist(s->file);
    herr_t rc = fcpl >= 0 ? H5Pget_userblock(fcpl, &size) : -1;
    if (fcpl >= 0)
        H5Pclose(fcpl);
    if (rc < 0 || size > s->file_size)
        return h5pack_chunksrc_fail_h5(s, H5PACK_ECORRUPT, err, err_len, "cannot read the user block size");
    s->userblock = size;
    return 0;
}

/* The store's (store.h) HDF5 signature, then HDF5 over it (store_h5.h). */
static int open_file(chunk_source *s, char *err, size_t err_len)
{
    s->file_size = s->g.file_bytes = s->st->size;
    int is_h5 = h5pack_store_is_hdf5(s->st);
    if (is_h5 == 0)
        return h5pack_chunksrc_fail(s, H5PACK_EFORMAT, err, err_len, "not an HDF5 file (no HDF5 signature in its %llu bytes)",
                             (unsigned long long)s->file_size);
    if (is_h5 < 0)
        return h5pack_chunksrc_fail(s, H5PACK_EIO, err, err_len, "cannot read the HDF5 signature");
    s->file = h5pack_store_h5_open(s->st);
    char h5msg[600] = "";
    if (s->file < 0)
        h5pack_h5_error_text(h5msg, sizeof h5msg);
    if (s->file < 0 && strstr(h5msg, "unable to lock"))
        return h5pack_chunksrc_fail(s, H5PACK_EIO, err, err_len,
                                    "cannot open: the file is locked (HDF5 file locking: a writer has it open, in "
                                    "another process or this one); close the writer, or set "
                                    "HDF5_USE_FILE_LOCKING=FALSE if nothing writes it (HDF5: %s)", h5msg);
    if (s->file < 0)
        return h5pack_chunksrc_fail(s, H5PACK_ECORRUPT, err, err_len,
                                    "cannot open as HDF5 (truncated or damaged?) (HDF5: %s)", h5msg);
    return read_userblock(s, err, err_len);
}

/* docs/format.md, "Compatibility rules": a newer format may have changed what the datasets and attributes
 * mean, so it is refused rather than misread. A file without the attribute comes from another tool (h5py
 * scripts, ...) and is read by its shape, as always (g.format_version -1). */
static int check_format_version(chunk_source *s, char *err, size_t err_len)
{
    char why[128] = "";
    int64_t v = 0;
    int found = h5pack_h5_read_int_attr(s->file, H5PACK_ATTR_FORMAT_VERSION, &v, why, sizeof why);
    if (found < 0)
        return h5pack_chunksrc_fail(s, H5PACK_EFORMAT, err, err_len,
                                    "root attribute %s %s (it must be the h5pack format version, an integer "
                                    "such as %d)", H5PACK_ATTR_FORMAT_VERSION, why, H5PACK_FORMAT_VERSION);
    if (found > 0 && v > H5PACK_FORMAT_VERSION)
        return h5pack_chunksrc_fail(s, H5PACK_EFORMAT, err, err_len,
                                    "h5pack format version %lld is newer than this reader's (%d): update h5pack",
                                    (long long)v, H5PACK_FORMAT_VERSION);
    if (found > 0 && v < 1)
        return h5pack_chunksrc_fail(s, H5PACK_EFORMAT, err, err_len,
                                    "root attribute %s = %lld is not a format version (they start at 1)",
                                    H5PACK_ATTR_FORMAT_VERSION, (long long)v);
    s->g.format_version = found > 0 ? (int)v : -1;
    return 0;
}

/* "a, b, c" names at the root, for "dataset missing" messages. */
static herr_t add_name(hid_t group, const char *name, const H5L_info_t *info, void *data)
{
    (void)group;
    (void)info;
    char *list = data;
    size_t used = strlen(list);
    if (used + strlen(name) + 8 < 200)
        snprintf(list + used, 200 - used, "%s%s", used ? ", " : "", name);
    else if (!strstr(list, "..."))
        snprintf(list + used, 200 - used, ", ...");
    return 0;
}

static int fail_missing(chunk_source *s, const char *what, const char *name, char *err, size_t err_len)
{
    if (H5Lexists(s->file, H5PACK_DS_TILES, H5P_DEFAULT) > 0) /* h5pack --tiles: no images dataset */
        return h5pack_chunksrc_fail(s, H5PACK_ENOTFOUND, err, err_len, "no %s dataset '%s': a file of huge images in "
                                    "tiles (h5pack --tiles): read it as patches (patch_size; Python: "
                                    "h5pack.Patches(path, size=512) or h5pack.Loader(path, patch=512); "
                                    "h5pack-stats run --patch 512)",
                                    what, name);
    char list[200] = "";
    hsize_t idx = 0;
    H5Literate(s->file, H5_INDEX_NAME, H5_ITER_INC, &idx, add_name, list);
    return h5pack_chunksrc_fail(s, H5PACK_ENOTFOUND, err, err_len, "no %s dataset '%s' (the root holds: %s)", what, name,
                         list[0] ? list : "nothing");
}

/* Opens NAME as a dataset with HDF5's chunk cache off: our own cache holds chunks, and a chunk read
 * whole through H5Dread would only be copied once more. */
static int open_dataset(chunk_source *s, const char *what, const char *name, hid_t *out, char *err, size_t err_len)
{
    if (!h5pack_h5_path_exists(s->file, name))
        return fail_missing(s, what, name, err, err_len);
    hid_t obj = H5Oopen(s->file, name, H5P_DEFAULT);
    if (obj < 0)
        return h5pack_chunksrc_fail_h5(s, H5PACK_ECORRUPT, err, err_len, "cannot open the object");
    H5I_type_t kind = H5Iget_type(obj);
    H5Oclose(obj);
    if (kind != H5I_DATASET)
        return h5pack_chunksrc_fail(s, H5PACK_EFORMAT, err, err_len, "'%s' is not a dataset", name);
    hid_t dapl = H5Pcreate(H5P_DATASET_ACCESS);
    if (dapl >= 0)
        H5Pset_chunk_cache(dapl, H5D_CHUNK_CACHE_NSLOTS_DEFAULT, 0, H5D_CHUNK_CACHE_W0_DEFAULT);
    *out = H5Dopen2(s->file, name, dapl >= 0 ? dapl : H5P_DEFAULT);
    if (dapl >= 0)
        H5Pclose(dapl);
    if (*out < 0)
        return h5pack_chunksrc_fail_h5(s, H5PACK_ECORRUPT, err, err_len, "cannot open the dataset");
    return 0;
}

static int check_image_type(chunk_source *s, const char *name, char *err, size_t err_len)
{
    char tname[64];
    hid_t type = H5Dget_type(s->dset);
    if (type < 0)
        return h5pack_chunksrc_fail_h5(s, H5PACK_ECORRUPT, err, err_len, "cannot read the type of the images");
    int ok = H5Tget_class(type) == H5T_INTEGER && H5Tget_size(type) == 1 && H5Tget_sign(type) == H5T_SGN_NONE;
    h5pack_h5_type_name(type, tname, sizeof tname);
    H5Tclose(type);
    if (!ok)
        return h5pack_chunksrc_fail(s, H5PACK_EFORMAT, err, err_len, "'%s' holds %s, expected uint8 images", name, tname);
    return 0;
}

/* Reads the shape (in the dataset's rank) into DIMS/MAXDIMS and checks rank 4 or 3 and N > 0. */
static int check_image_shape(chunk_source *s, const char *name, hsize_t *dims, hsize_t *maxdims, char *err,
                             size_t err_len)
{
    char shape[128];
    s->fspace = H5Dget_space(s->dset);
    if (s->fspace < 0)
        return h5pack_chunksrc_fail_h5(s, H5PACK_ECORRUPT, err, err_len, "cannot read the shape of the images");
    int rank = H5Sget_simple_extent_ndims(s->fspace);
    if (rank != 4 && rank != 3) {
        hsize_t d[H5S_MAX_RANK];
        int r = rank > 0 && rank <= H5S_MAX_RANK ? H5Sget_simple_extent_dims(s->fspace, d, NULL) : 0;
        h5pack_h5_dims_text(d, r > 0 ? r : 0, shape, sizeof shape);
        return h5pack_chunksrc_fail(s, H5PACK_EFORMAT, err, err_len,
                                    "'%s' has rank %d, shape %s; expected 4-D images (N,C,H,W) or (N,H,W,C), or 3-D "
                                    "gray images (N,H,W)", name, rank, shape);
    }
    s->rank = rank;
    H5Sget_simple_extent_dims(s->fspace, dims, maxdims);
    h5pack_h5_dims_text(dims, rank, shape, sizeof shape);
    if (dims[0] == 0)
        return h5pack_chunksrc_fail(s, H5PACK_EFORMAT, err, err_len, "'%s' holds zero samples (shape %s)", name, shape);
    for (int i = 1; i < rank; i++)
        if (dims[i] == 0 || dims[i] > 65536)
            return h5pack_chunksrc_fail(s, H5PACK_EFORMAT, err, err_len, "'%s' has shape %s: image dimensions must be 1..65536",
                                 name, shape);
    return 0;
}

static int parse_layout(const char *text, h5pack_layout *out)
{
    if (!strcasecmp(text, H5PACK_LAYOUT_TEXT_NCHW) || !strcasecmp(text, "channels_first"))
        *out = H5PACK_LAYOUT_NCHW;
    else if (!strcasecmp(text, H5PACK_LAYOUT_TEXT_NHWC) || !strcasecmp(text, "channels_last"))
        *out = H5PACK_LAYOUT_NHWC;
    else
        return -1;
    return 0;
}

static int is_channel_count(hsize_t d)
{
    return d == 1 || d == 3 || d == 4;
}

/* Attribute on the dataset, else on the root, else inferred from the shape (see chunksrc.h). */
static int choose_layout(chunk_source *s, h5pack_layout hint, const hsize_t *dims, char *err, size_t err_len)
{
    char text[64];
    if (hint == H5PACK_LAYOUT_NCHW || hint == H5PACK_LAYOUT_NHWC) {
        s->g.layout = hint;
        return 0;
    }
    if (hint != H5PACK_LAYOUT_AUTO)
        return h5pack_chunksrc_fail(s, H5PACK_EINVAL, err, err_len, "invalid input layout %d", (int)hint);
    int found = h5pack_h5_read_string_attr(s->dset, H5PACK_ATTR_LAYOUT, text, sizeof text);
    if (found == 0) {
        hid_t root = H5Gopen2(s->file, "/", H5P_DEFAULT);
        found = root >= 0 ? h5pack_h5_read_string_attr(root, H5PACK_ATTR_LAYOUT, text, sizeof text) : 0;
        if (root >= 0)
            H5Gclose(root);
    }
    if (found > 0) {
        if (parse_layout(text, &s->g.layout) == 0)
            return 0;
        return h5pack_chunksrc_fail(s, H5PACK_EFORMAT, err, err_len,
                             "attribute layout = '%s' is neither NCHW nor NHWC; set the input layout explicitly", text);
    }
    /* (N,H,W) gray images have no channel axis to infer from: NCHW with C = 1 (the same bytes as NHWC). */
    s->g.layout = s->rank == 4 && is_channel_count(dims[3]) && !is_channel_count(dims[1]) ? H5PACK_LAYOUT_NHWC
                                                                                         : H5PACK_LAYOUT_NCHW;
    return 0;
}

/* The shape as 4-D in file order from here on: a 3-D dataset gets its C = 1 where the layout puts it. */
static void expand_shape(chunk_source *s, hsize_t *dims, hsize_t *maxdims)
{
    hsize_t d[4], m[4];
    s->unit_axis = s->rank == 4 ? -1 : (s->g.layout == H5PACK_LAYOUT_NHWC ? 3 : 1);
    h5pack_chunksrc_expand_dims(s, dims, d);
    h5pack_chunksrc_expand_dims(s, maxdims, m);
    memcpy(dims, d, sizeof d);
    memcpy(maxdims, m, sizeof m);
    for (int i = 0; i < 4; i++)
        s->dims[i] = dims[i];
}

static int set_image_geometry(chunk_source *s, const hsize_t *dims, char *err, size_t err_len)
{
    int nhwc = s->g.layout == H5PACK_LAYOUT_NHWC;
    hsize_t c = nhwc ? dims[3] : dims[1];
    s->g.n_samples = dims[0];
    s->g.channels = (uint32_t)c;
    s->g.height = (uint32_t)(nhwc ? dims[1] : dims[2]);
    s->g.width = (uint32_t)(nhwc ? dims[2] : dims[3]);
    s->g.rank = s->rank;
    s->g.image_bytes = (uint64_t)s->g.channels * s->g.height * s->g.width;
    s->g.pixel_bytes = s->g.n_samples * s->g.image_bytes; /* overflow checked below */
    if (c < 1 || c > H5PACK_MAX_CHANNELS) {
        char shape[128];
        h5pack_h5_dims_text(dims, 4, shape, sizeof shape); /* 4-D: only a rank-4 dataset gets here */
        return h5pack_chunksrc_fail(s, H5PACK_EFORMAT, err, err_len,
                                    "images of shape %s read as %s have %llu channels; at most %d are supported "
                                    "(wrong layout? set the input layout or a \"%s\" attribute)",
                                    shape, nhwc ? H5PACK_LAYOUT_TEXT_NHWC : H5PACK_LAYOUT_TEXT_NCHW,
                                    (unsigned long long)c, H5PACK_MAX_CHANNELS, H5PACK_ATTR_LAYOUT);
    }
    if (s->g.n_samples > ((uint64_t)1 << 62) / s->g.image_bytes)
        return h5pack_chunksrc_fail(s, H5PACK_ECORRUPT, err, err_len, "%llu images of %llu bytes: implausibly large",
                             (unsigned long long)s->g.n_samples, (unsigned long long)s->g.image_bytes);
    return 0;
}

static void read_pixel_stats(chunk_source *s)
{
    hid_t root = H5Gopen2(s->file, "/", H5P_DEFAULT);
    if (root < 0)
        return;
    size_t c = s->g.channels;
    int ok = h5pack_h5_read_doubles_attr(root, H5PACK_ATTR_MEAN, s->g.mean, c) &&
             h5pack_h5_read_doubles_attr(root, H5PACK_ATTR_STD, s->g.std, c);
    for (size_t i = 0; ok && i < c; i++)
        ok = s->g.mean[i] == s->g.mean[i] && s->g.std[i] > 0 && s->g.std[i] < 1e30;
    s->g.has_stats = ok;
    if (!ok) {
        memset(s->g.mean, 0, sizeof s->g.mean);
        memset(s->g.std, 0, sizeof s->g.std);
    }
    H5Gclose(root);
}

/* The pread paths need nothing from HDF5 after open: close it. The others keep it, behind a mutex. */
static void close_hdf5(chunk_source *s)
{
    H5Sclose(s->fspace);
    H5Dclose(s->dset);
    H5Fclose(s->file);
    s->fspace = s->dset = s->file = -1;
}

/* The store paths need nothing from HDF5 after open: close it. So does the raw path once every chunk's
 * address is known (stored.h); otherwise it keeps HDF5 open for H5Dread_chunk. */
static int finish_open(chunk_source *s, char *err, size_t err_len)
{
    if (s->g.path == H5PACK_READ_IMPLICIT || s->g.path == H5PACK_READ_CONTIGUOUS) {
        close_hdf5(s);
        s->views = !s->g.compressed && h5pack_store_has_views(s->st);
        return 0;
    }
    if (s->chunked && !s->g.several_sizes) { /* images of several sizes: a chunk's bytes are its span */
        s->stored = calloc(s->g.n_chunks, sizeof *s->stored);
        if (!s->stored)
            return h5pack_chunksrc_fail(s, H5PACK_ENOMEM, err, err_len, "out of memory for %llu chunk sizes",
                                 (unsigned long long)s->g.n_chunks);
    }
    if (h5pack_read_path_is_raw(s->g.path) && (s->g.located || h5pack_chunksrc_locate_chunks(s) == 0)) {
        s->g.located = 1;
        close_hdf5(s);
    }
    return 0;
}

/* Images of several sizes (docs/format.md): image_offsets beside a 1-D images store, or in a format
 * version 2 file (whose damaged store then gets the store's message). A file of one size that happens to
 * have a dataset of that name is read as before. */
static int is_several_sizes(const chunk_source *s)
{
    if (!h5pack_h5_path_exists(s->file, H5PACK_DS_IMAGE_OFFSETS))
        return 0;
    hid_t space = H5Dget_space(s->dset);
    int rank = space >= 0 ? H5Sget_simple_extent_ndims(space) : -1;
    if (space >= 0)
        H5Sclose(space);
    return rank == 1 || s->g.format_version >= H5PACK_FORMAT_VERSION_RAGGED;
}

/* Images of one size: shape, layout, geometry and read path. */
static int open_one_size(chunk_source *s, const char *images, h5pack_layout hint, char *err, size_t err_len)
{
    hsize_t dims[4], maxdims[4];
    int rc = check_image_shape(s, images, dims, maxdims, err, err_len);
    if (!rc)
        rc = choose_layout(s, hint, dims, err, err_len);
    if (!rc) {
        expand_shape(s, dims, maxdims);
        rc = set_image_geometry(s, dims, err, err_len);
    }
    if (!rc)
        rc = h5pack_chunksrc_choose_path(s, images, dims, maxdims, err, err_len);
    return rc;
}

/* The labels, through labelset.c, into the source's geometry. */
static int load_labels(chunk_source *s, const char *name, char *err, size_t err_len)
{
    label_set ls;
    int rc = h5pack_labelset_load(s->file, s->path, s->g.n_samples, name, &ls, err, err_len);
    s->labels = ls.ints, s->labels_float = ls.floats; /* freed at close, also after a failure */
    s->g.has_labels = ls.has_labels, s->g.label_rank = ls.label_rank;
    s->g.labels_are_float = ls.labels_are_float, s->g.label_columns = ls.label_columns;
    s->g.n_classes = ls.n_classes;
    return rc;
}

static int open_all(chunk_source *s, const char *images, const char *labels, h5pack_layout hint, char *err,
                    size_t err_len)
{
    int rc = open_file(s, err, err_len);
    if (!rc)
        rc = check_format_version(s, err, err_len);
    if (!rc)
        rc = open_dataset(s, "images", images, &s->dset, err, err_len);
    if (!rc)
        rc = check_image_type(s, images, err, err_len);
    if (!rc && is_several_sizes(s)) /* images of several sizes */
        rc = h5pack_chunksrc_open_several_sizes(s, images, err, err_len);
    else if (!rc)
        rc = open_one_size(s, images, hint, err, err_len);
    if (!rc)
        rc = load_labels(s, labels, err, err_len);
    if (!rc)
        read_pixel_stats(s);
    if (!rc)
        rc = finish_open(s, err, err_len);
    return rc;
}

int h5pack_chunksrc_open_in_process(store *st, const char *path, const char *images, const char *labels,
                                    h5pack_layout hint, chunk_source **out, char *err, size_t err_len)
{
    chunk_source *s = calloc(1, sizeof *s);
    if (!s || !(s->path = strdup(path))) {
        free(s);
        h5pack_store_close(st);
        return h5pack_chunksrc_fail(NULL, H5PACK_ENOMEM, err, err_len, "out of memory");
    }
    s->st = st;
    s->file = s->dset = s->fspace = -1;
    s->rank = 4, s->unit_axis = -1;
    int rc = open_all(s, images, labels, hint, err, err_len);
    if (rc) {
        chunksrc_close_in_process(s);
        return rc;
    }
    *out = s;
    return 0;
}

/* Takes over the stored sizes the probe found (the first N chunks; same encoding). */
static void adopt_stored_sizes(chunk_source *s, const uint64_t *stored, uint64_t n)
{
    if (s->stored && stored && n <= s->g.n_chunks)
        memcpy(s->stored, stored, n * sizeof *stored);
}

int h5pack_chunksrc_open(const char *path, const char *images, const char *labels, h5pack_layout layout_hint,
                  chunk_source **out, char *err, size_t err_len)
{
    uint64_t *stored = NULL, n_stored = 0;
    h5pack_h5_quiet q;
    if (err && err_len)
        err[0] = '\0';
    if (!out)
        return H5PACK_EINVAL;
    *out = NULL;
    if (!path || !images || !images[0])
        return h5pack_chunksrc_fail(NULL, H5PACK_EINVAL, err, err_len, "no file or images dataset name given");
    store *st = NULL;
    int rc = h5pack_store_open(path, &st, err, err_len); /* once: the probe and the open share it */
    if (rc)
        return rc;
    rc = h5pack_chunksrc_probe(st, path, images, labels, layout_hint, &stored, &n_stored, err, err_len);
    if (rc == 0) {
        h5pack_h5_enter(&q);
        rc = h5pack_chunksrc_open_in_process(st, path, images, labels, layout_hint, out, err, err_len);
        h5pack_h5_leave(&q);
    } else {
        h5pack_store_close(st);
    }
    if (rc == 0)
        adopt_stored_sizes(*out, stored, n_stored);
    free(stored);
    return rc;
}

const source_geometry *h5pack_chunksrc_geometry(const chunk_source *s)
{
    return &s->g;
}

struct store *h5pack_chunksrc_store(const chunk_source *s)
{
    return s->st;
}

const int64_t *h5pack_chunksrc_labels(const chunk_source *s)
{
    return s->labels;
}

const void *h5pack_chunksrc_label_rows(const chunk_source *s)
{
    return s->labels_float ? (const void *)s->labels_float : (const void *)s->labels;
}

uint64_t h5pack_chunksrc_chunk_samples(const chunk_source *s, uint64_t chunk)
{
    uint64_t k = s->g.samples_per_chunk, first = chunk * k;
    if (chunk >= s->g.n_chunks)
        return 0;
    return s->g.n_samples - first < k ? s->g.n_samples - first : k;
}

/* Frees S; the caller is inside h5pack_h5_enter when S holds HDF5 objects. */
static void chunksrc_close_in_process(chunk_source *s)
{
    if (s->fspace >= 0)
        H5Sclose(s->fspace);
    if (s->dset >= 0)
        H5Dclose(s->dset);
    if (s->file >= 0)
        H5Fclose(s->file);
    h5pack_store_close(s->st); /* after HDF5, which reads through it */
    free(s->stored);
    h5pack_stored_free(&s->located);
    free(s->labels);
    free(s->labels_float);
    free(s->img_offset);
    free(s->img_hw);
    free(s->path);
    free(s);
}

void h5pack_chunksrc_close(chunk_source *s)
{
    h5pack_h5_quiet q;
    if (!s)
        return;
    h5pack_h5_enter(&q);
    chunksrc_close_in_process(s);
    h5pack_h5_leave(&q);
}
