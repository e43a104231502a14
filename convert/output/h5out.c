/* h5out.c - the HDF5 side of the converter: file and images dataset creation, direct chunk writes,
 * metadata and attributes (docs/format.md). Called from one thread only, except h5out_pwrite_chunk. */
#include "h5out.h"

#include <errno.h>
#include <hdf5.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format.h"
#include "h5glue.h"
#include "h5pack.h"
#include "block_gather.h"
#include "h5out_impl.h"
#include "pwrite_full.h"
#include "writeback.h"

/* ---- errors -------------------------------------------------------------------------------------- */

/* The text of the last failed HDF5 call, captured when it fails, because the clean-up calls that follow
 * (H5Pclose, ...) clear the error stack. Global on purpose: HDF5 is called from the converter's main
 * thread only. */
static h5pack_h5_capture last_hdf5_error;

int h5out_fail(char *err, size_t len, const char *fmt, ...)
{
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    char h5msg[512];
    h5pack_h5_capture_take(&last_hdf5_error, h5msg, sizeof h5msg);
    snprintf(err, len, "%s: HDF5: %s", what, h5msg);
    return -1;
}


/* ---- creation ------------------------------------------------------------------------------------ */

void h5out_image_dims(const h5out_geometry *g, uint64_t first, hsize_t dims[4])
{
    dims[0] = first;
    if (g->nhwc) {
        dims[1] = g->height;
        dims[2] = g->width;
        dims[3] = g->channels;
    } else {
        dims[1] = g->channels;
        dims[2] = g->height;
        dims[3] = g->width;
    }
}

/* Rank of the images dataset, and its dims with FIRST rows (a ragged file: FIRST bytes). */
static int images_rank(const h5out_geometry *g, uint64_t first, hsize_t dims[4])
{
    if (g->ragged) {
        dims[0] = first;
        return 1;
    }
    h5out_image_dims(g, first, dims);
    return 4;
}

/* The first row (byte, for a ragged file) of chunk INDEX. */
static hsize_t chunk_start(const h5out_geometry *g, uint64_t index)
{
    return index * (g->ragged ? g->chunk_bytes : g->chunk_images);
}

static hid_t images_dcpl(const h5out_geometry *g)
{
    hsize_t chunk[4];
    int rank = images_rank(g, g->ragged ? g->chunk_bytes : g->chunk_images, chunk);
    return h5out_chunked_dcpl(g, rank, chunk);
}

hid_t h5out_chunked_dcpl(const h5out_geometry *g, int rank, const hsize_t *chunk)
{
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    if (dcpl < 0)
        return -1;
    int filtered = g->gzip_level > 0 || g->checksum;
    if (H5Pset_chunk(dcpl, rank, chunk) < 0 || H5Pset_obj_track_times(dcpl, 0) < 0 ||
        H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER) < 0 ||
        (!filtered && H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_EARLY) < 0) ||
        (g->gzip_level > 0 && H5Pset_deflate(dcpl, (unsigned)g->gzip_level) < 0) ||
        (g->checksum && H5Pset_fletcher32(dcpl) < 0)) {
        H5Pclose(dcpl);
        return -1;
    }
    return dcpl;
}

hid_t h5out_create_file(const char *path)
{
    hid_t fcpl = H5Pcreate(H5P_FILE_CREATE), fapl = H5Pcreate(H5P_FILE_ACCESS), file = -1;
    if (fcpl >= 0 && fapl >= 0 && H5Pset_obj_track_times(fcpl, 0) >= 0 &&
        H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST, H5F_LIBVER_LATEST) >= 0)
        file = H5Fcreate(path, H5F_ACC_TRUNC, fcpl, fapl);
    if (fcpl >= 0)
        H5Pclose(fcpl);
    if (fapl >= 0)
        H5Pclose(fapl);
    return file;
}

/* The file descriptor under HDF5's default (sec2) driver, or -1 under another driver. */
static int sec2_descriptor(hid_t file)
{
    void *handle = NULL;
    hid_t fapl = H5Fget_access_plist(file);
    int sec2 = fapl >= 0 && H5Pget_driver(fapl) == H5FD_SEC2;
    if (fapl >= 0)
        H5Pclose(fapl);
    if (!sec2 || H5Fget_vfd_handle(file, H5P_DEFAULT, &handle) < 0 || !handle)
        return -1;
    return *(int *)handle;
}

static uint64_t chunk_size(const h5out_geometry *g)
{
    return g->ragged ? g->chunk_bytes : g->chunk_images * g->channels * g->height * g->width;
}

static uint64_t chunk_count(const h5out_geometry *g)
{
    uint64_t per = g->ragged ? g->chunk_bytes : g->chunk_images, n = g->ragged ? g->total_bytes : g->n;
    return (n + per - 1) / per;
}

/* The file address of the chunk at OFFSET (the dataset's rank used) of DSET and its stored size in *SIZE
 * (0 when not allocated); HADDR_UNDEF when HDF5 cannot tell. */
static uint64_t chunk_address(int64_t dset, const uint64_t *offset, uint64_t *size)
{
    hsize_t at[4] = {0}, got = 0;
    unsigned mask = 0;
    haddr_t addr = HADDR_UNDEF;
    for (int d = 0; d < 4; d++)
        at[d] = offset[d];
    *size = 0;
    if (H5Dget_chunk_info_by_coord((hid_t)dset, at, &mask, &addr, &got) < 0)
        return HADDR_UNDEF;
    *size = got;
    return addr;
}

int64_t h5out_implicit_base(const h5out *o, int64_t dset, const uint64_t grid[2], const uint64_t extent[2],
                            uint64_t bytes)
{
    uint64_t n = grid[0] * grid[1], probes[3] = {0, n / 2, n - 1}, base = 0, size;
    if (o->fd < 0 || o->g.gzip_level > 0 || o->g.checksum || n == 0)
        return -1;
    for (int i = 0; i < 3; i++) {
        uint64_t at[4] = {probes[i] / grid[1] * extent[0], probes[i] % grid[1] * extent[1], 0, 0};
        uint64_t a = chunk_address(dset, at, &size);
        if (a == HADDR_UNDEF || size != bytes || (i > 0 && a != base + probes[i] * bytes))
            return -1;
        base = i == 0 ? a : base;
    }
    return (int64_t)base;
}

/* The images dataset's base for h5out_pwrite_chunk: its chunks lie along the first axis. */
static int64_t implicit_base(const h5out *o)
{
    uint64_t grid[2] = {chunk_count(&o->g), 1}, extent[2] = {o->g.ragged ? o->g.chunk_bytes : o->g.chunk_images, 0};
    return h5out_implicit_base(o, o->images, grid, extent, chunk_size(&o->g));
}

void h5out_capture_errors(void)
{
    h5pack_h5_capture_install(&last_hdf5_error); /* no printing: reported with their context */
}

writeback *h5out_start_writeback(h5out *o)
{
    o->fd = sec2_descriptor(o->file);
    return o->fd >= 0 ? writeback_start(o->fd, H5OUT_WRITEBACK_STEP) : NULL;
}

h5out *h5out_new(const char *path, const h5out_geometry *g, char *err, size_t err_len)
{
    h5out_capture_errors();
    h5out *o = calloc(1, sizeof *o);
    if (o && (o->path = strdup(path))) {
        o->g = *g;
        o->file = o->images = o->tiles = o->masks = -1;
        o->fd = -1, o->base = -1, o->mask_base = -1;
        if ((o->file = h5out_create_file(path)) >= 0)
            return o;
        h5out_fail(err, err_len, "%s: cannot create the file", path);
        h5out_close(o, NULL, 0);
        return NULL;
    }
    free(o);
    snprintf(err, err_len, "%s: out of memory", path);
    return NULL;
}

int h5out_create(const char *path, const h5out_geometry *g, h5out **out, char *err, size_t err_len)
{
    hsize_t dims[4];
    hid_t dcpl = -1, space = -1;
    h5out *o = h5out_new(path, g, err, err_len);
    if (!o)
        return -1;
    int rank = images_rank(g, g->ragged ? g->total_bytes : g->n, dims);
    hid_t dapl = H5Pcreate(H5P_DATASET_ACCESS); /* a copy of several sizes appends: chunks fill in the cache */
    if (dapl >= 0 && g->ragged)
        H5Pset_chunk_cache(dapl, 521, (size_t)(4 * g->chunk_bytes), 1.0);
    if ((dcpl = images_dcpl(g)) < 0 || (space = H5Screate_simple(rank, dims, NULL)) < 0 ||
        (o->images = H5Dcreate2(o->file, H5PACK_DS_IMAGES, H5T_STD_U8LE, space, H5P_DEFAULT, dcpl,
                                dapl >= 0 ? dapl : H5P_DEFAULT)) < 0) {
        if (dapl >= 0)
            H5Pclose(dapl);
        h5out_fail(err, err_len, "%s: cannot create the images dataset", path);
        goto fail;
    }
    H5Sclose(space);
    H5Pclose(dcpl);
    space = dcpl = -1;
    if (dapl >= 0)
        H5Pclose(dapl);
    if (g->mask_bytes && h5out_masks_create(o, err, err_len) != 0)
        goto fail;
    o->wb = h5out_start_writeback(o);
    o->base = implicit_base(o);
    o->mask_base = o->masks >= 0 ? h5out_masks_base(o) : -1;
    if (o->masks >= 0 && o->mask_base < 0)
        o->base = -1; /* the masks' chunks cannot be written beside HDF5: neither are the images' */
    *out = o;
    return 0;
fail:
    if (space >= 0)
        H5Sclose(space);
    if (dcpl >= 0)
        H5Pclose(dcpl);
    h5out_close(o, NULL, 0);
    return -1;
}

int h5out_write_chunk(h5out *o, uint64_t index, const void *data, size_t size, char *err, size_t err_len)
{
    hsize_t offset[4] = {chunk_start(&o->g, index), 0, 0, 0};
    if (H5Dwrite_chunk(o->images, H5P_DEFAULT, 0, offset, size, data) < 0)
        return h5out_fail(err, err_len, "%s: cannot write chunk %llu of the images", o->path, (unsigned long long)index);
    writeback_note(o->wb, size);
    return 0;
}

int64_t h5out_chunk_base(const h5out *o)
{
    return o->base;
}

int h5out_gather_chunks(h5out *o)
{
    if (o->base >= 0 && !o->gather)
        o->gather = block_gather_new(o->fd, (uint64_t)o->base,
                                     (uint64_t)o->base + chunk_count(&o->g) * chunk_size(&o->g));
    return o->gather ? 0 : -1;
}

/* "cannot write chunk(s) ..." for the gatherer's failed write (whose chunks are not the caller's when
 * pieces were held back), with ERRNO's text. */
static void gather_failure(const h5out *o, int error, char *err, size_t err_len)
{
    uint64_t lo = 0, hi = 0, cs = chunk_size(&o->g), base = (uint64_t)o->base;
    if (block_gather_failed(o->gather, &lo, &hi) != 0 || hi <= lo) {
        snprintf(err, err_len, "%s: cannot write the images' chunks: %s", o->path, strerror(error));
        return;
    }
    unsigned long long first = (lo - base) / cs, last = (hi - 1 - base) / cs;
    char which[64];
    snprintf(which, sizeof which, first == last ? "chunk %llu" : "chunks %llu-%llu", first, last);
    snprintf(err, err_len, "%s: cannot write %s of the images (bytes %llu-%llu of the file): %s", o->path, which,
             (unsigned long long)lo, (unsigned long long)hi, strerror(error));
}

int h5out_pwrite_chunk(h5out *o, uint64_t index, const void *data, size_t size, char *err, size_t err_len)
{
    uint64_t at = (uint64_t)o->base + index * chunk_size(&o->g);
    size_t written = size;
    if (o->gather) {
        int rc = block_gather_write(o->gather, data, size, at, &written);
        writeback_note(o->wb, written);
        if (rc != 0)
            gather_failure(o, errno, err, err_len);
        return rc;
    }
    if (pwrite_full(o->fd, data, size, (off_t)at) != 0) {
        snprintf(err, err_len, "%s: cannot write chunk %llu of the images: %s", o->path, (unsigned long long)index,
                 strerror(errno));
        return -1;
    }
    writeback_note(o->wb, written);
    return 0;
}

int h5out_flush_chunks(h5out *o, char *err, size_t err_len)
{
    size_t written = 0;
    if (!o->gather)
        return 0;
    int rc = block_gather_flush(o->gather, &written);
    if (rc != 0)
        gather_failure(o, errno, err, err_len);
    writeback_note(o->wb, written);
    return rc;
}

void h5out_set_largest(h5out *o, uint32_t height, uint32_t width)
{
    o->g.height = height, o->g.width = width;
}

/* ---- metadata ------------------------------------------------------------------------------------ */

static hid_t untimed_dcpl(void)
{
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    if (dcpl >= 0 && H5Pset_obj_track_times(dcpl, 0) < 0) {
        H5Pclose(dcpl);
        return -1;
    }
    return dcpl;
}

/* A 1-D dataset NAME of COUNT elements of file type FTYPE from memory type MTYPE. */
/* A dataset of RANK (1 or 2) dims DIMS written from DATA in memory type MTYPE (nothing when empty). */
static int write_dataset(hid_t loc, const char *name, int rank, const hsize_t *dims, hid_t ftype, hid_t mtype,
                         const void *data)
{
    hid_t space = H5Screate_simple(rank, dims, NULL), dcpl = untimed_dcpl(), dset = -1;
    int rc = -1;
    if (space >= 0 && dcpl >= 0)
        dset = H5Dcreate2(loc, name, ftype, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    if (dset >= 0 && (dims[0] == 0 || H5Dwrite(dset, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) >= 0))
        rc = 0;
    if (dset >= 0)
        H5Dclose(dset);
    if (dcpl >= 0)
        H5Pclose(dcpl);
    if (space >= 0)
        H5Sclose(space);
    return rc;
}

static int write_1d(hid_t loc, const char *name, hid_t ftype, hid_t mtype, uint64_t count, const void *data)
{
    hsize_t dims[1] = {count};
    return write_dataset(loc, name, 1, dims, ftype, mtype, data);
}

static hid_t vlen_utf8_type(void)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    if (t >= 0 && (H5Tset_size(t, H5T_VARIABLE) < 0 || H5Tset_cset(t, H5T_CSET_UTF8) < 0)) {
        H5Tclose(t);
        return -1;
    }
    return t;
}

static int write_strings(hid_t loc, const char *name, const char *const *strings, uint64_t count)
{
    hid_t t = vlen_utf8_type();
    int rc = t >= 0 ? write_1d(loc, name, t, t, count, strings) : -1;
    if (t >= 0)
        H5Tclose(t);
    return rc;
}

static int write_labels(hid_t file, const h5out_metadata *m)
{
    hid_t ftype = m->n_classes <= 256 ? H5T_STD_U8LE : m->n_classes <= 65536 ? H5T_STD_U16LE : H5T_STD_U32LE;
    return write_1d(file, H5PACK_DS_LABELS, ftype, H5T_NATIVE_UINT32, m->n, m->labels);
}

static hid_t table_file_type(const h5out_label_table *t)
{
    if (t->is_float)
        return H5T_IEEE_F32LE;
    switch (t->bytes) {
    case 1: return t->is_signed ? H5T_STD_I8LE : H5T_STD_U8LE;
    case 2: return t->is_signed ? H5T_STD_I16LE : H5T_STD_U16LE;
    case 4: return t->is_signed ? H5T_STD_I32LE : H5T_STD_U32LE;
    default: return t->is_signed ? H5T_STD_I64LE : H5T_STD_U64LE;
    }
}

/* labels (n,K) from the table (n,) for one column; HDF5 converts int64 / double to the stored type. */
static int write_table(hid_t file, uint64_t n, const h5out_label_table *t)
{
    hsize_t dims[2] = {n, t->columns};
    hid_t mtype = t->is_float ? H5T_NATIVE_DOUBLE : H5T_NATIVE_INT64;
    if (write_dataset(file, H5PACK_DS_LABELS, t->columns == 1 ? 1 : 2, dims, table_file_type(t), mtype, t->values) != 0)
        return -1;
    return write_strings(file, H5PACK_DS_LABEL_NAMES, t->names, t->columns);
}

static int write_skipped(hid_t file, const skip_list *s)
{
    hid_t gcpl = H5Pcreate(H5P_GROUP_CREATE), group = -1;
    int rc = -1;
    if (gcpl >= 0 && H5Pset_obj_track_times(gcpl, 0) >= 0)
        group = H5Gcreate2(file, H5PACK_GROUP_SKIPPED, H5P_DEFAULT, gcpl, H5P_DEFAULT);
    if (group >= 0 && write_strings(group, H5PACK_DS_SKIPPED_FILES, (const char *const *)s->names, s->count) == 0 &&
        write_strings(group, H5PACK_DS_SKIPPED_REASONS, (const char *const *)s->reasons, s->count) == 0)
        rc = 0;
    if (group >= 0)
        H5Gclose(group);
    if (gcpl >= 0)
        H5Pclose(gcpl);
    return rc;
}

/* ---- attributes ---------------------------------------------------------------------------------- */

static int write_attr(hid_t loc, const char *name, hid_t ftype, hid_t mtype, hsize_t count, const void *value)
{
    hid_t space = count ? H5Screate_simple(1, &count, NULL) : H5Screate(H5S_SCALAR), attr = -1;
    int rc = -1;
    if (space >= 0)
        attr = H5Acreate2(loc, name, ftype, space, H5P_DEFAULT, H5P_DEFAULT);
    if (attr >= 0 && H5Awrite(attr, mtype, value) >= 0)
        rc = 0;
    if (attr >= 0)
        H5Aclose(attr);
    if (space >= 0)
        H5Sclose(space);
    return rc;
}

/* Fixed-length ASCII string attribute, null-padded to the exact length (as h5py writes bytes). */
static int attr_string(hid_t loc, const char *name, const char *value)
{
    size_t len = strlen(value);
    hid_t t = H5Tcopy(H5T_C_S1);
    int rc = -1;
    if (t >= 0 && H5Tset_size(t, len ? len : 1) >= 0 && H5Tset_strpad(t, H5T_STR_NULLPAD) >= 0)
        rc = write_attr(loc, name, t, t, 0, len ? value : "");
    if (t >= 0)
        H5Tclose(t);
    return rc;
}

static int attr_i32(hid_t loc, const char *name, int32_t v)
{
    return write_attr(loc, name, H5T_STD_I32LE, H5T_NATIVE_INT32, 0, &v);
}

static int attr_i64(hid_t loc, const char *name, int64_t v)
{
    return write_attr(loc, name, H5T_STD_I64LE, H5T_NATIVE_INT64, 0, &v);
}

static int write_shape_attrs(hid_t file, const h5out_geometry *g, const char *layout)
{
    int32_t version = g->ragged || g->tile ? H5PACK_FORMAT_VERSION_RAGGED : H5PACK_FORMAT_VERSION_FIXED;
    return attr_i32(file, H5PACK_ATTR_FORMAT_VERSION, version) ||
           attr_string(file, H5PACK_ATTR_WRITER_VERSION, H5PACK_VERSION_STRING) ||
           attr_string(file, H5PACK_ATTR_LAYOUT, layout) || attr_i32(file, H5PACK_ATTR_HEIGHT, (int32_t)g->height) ||
           attr_i32(file, H5PACK_ATTR_WIDTH, (int32_t)g->width) ||
           attr_i32(file, H5PACK_ATTR_CHANNELS, (int32_t)g->channels);
}

/* Images of several sizes: where each one starts and its size, and what says the file is made so. */
static int write_ragged(hid_t file, const h5out_geometry *g, const h5out_metadata *m)
{
    hsize_t shape_dims[2] = {m->n, 2};
    return write_1d(file, H5PACK_DS_IMAGE_OFFSETS, H5T_STD_I64LE, H5T_NATIVE_UINT64, m->n, m->offsets) ||
           write_dataset(file, H5PACK_DS_IMAGE_SHAPES, 2, shape_dims, H5T_STD_I64LE, H5T_NATIVE_UINT32, m->shapes) ||
           attr_string(file, H5PACK_ATTR_STORAGE, H5PACK_STORAGE_TEXT_RAGGED) ||
           attr_i32(file, H5PACK_ATTR_MAX_SIDE, (int32_t)m->max_side) ||
           attr_i32(file, H5PACK_ATTR_SHORT_SIDE, (int32_t)m->short_side) ||
           attr_i64(file, H5PACK_ATTR_CHUNK_BYTES, (int64_t)g->chunk_bytes);
}

/* Huge images in tiles: each image's size, and what says the file is made so. */
static int write_tiled(hid_t file, const h5out_geometry *g, const h5out_metadata *m)
{
    hsize_t shape_dims[2] = {m->n, 2};
    return write_dataset(file, H5PACK_DS_IMAGE_SHAPES, 2, shape_dims, H5T_STD_I64LE, H5T_NATIVE_UINT32, m->shapes) ||
           attr_string(file, H5PACK_ATTR_STORAGE, H5PACK_STORAGE_TEXT_TILED) ||
           attr_i32(file, H5PACK_ATTR_TILE, (int32_t)g->tile);
}

static int write_tuning_attrs(hid_t file, const h5out_metadata *m, uint32_t channels, int ragged)
{
    return attr_string(file, H5PACK_ATTR_RESIZE_MODE, m->resize_mode) ||
           attr_string(file, H5PACK_ATTR_JPEG_SCALE, m->jpeg_scale) ||
           attr_string(file, H5PACK_ATTR_ALPHA, m->alpha) ||
           write_attr(file, H5PACK_ATTR_MEAN, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, channels, m->mean) ||
           write_attr(file, H5PACK_ATTR_STD, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, channels, m->std) ||
           (!ragged && attr_i64(file, H5PACK_ATTR_CHUNK_IMAGES, m->chunk_images)) ||
           attr_string(file, H5PACK_ATTR_CHUNK_REASON, m->chunk_reason) ||
           attr_i64(file, H5PACK_ATTR_CHUNK_TARGET_BYTES, m->chunk_target_bytes) ||
           attr_i64(file, H5PACK_ATTR_BATCH_SIZE, m->batch_size) ||
           attr_string(file, H5PACK_ATTR_COMPRESSION, m->compression) ||
           attr_i32(file, H5PACK_ATTR_CHECKSUM, m->checksum) || attr_i32(file, H5PACK_ATTR_SHUFFLED, m->shuffled) ||
           attr_i64(file, H5PACK_ATTR_SEED, m->seed);
}

int h5out_write_metadata(h5out *o, const h5out_metadata *m, char *err, size_t err_len)
{
    const char *layout = o->g.nhwc || o->g.ragged || o->g.tile ? H5PACK_LAYOUT_TEXT_NHWC : H5PACK_LAYOUT_TEXT_NCHW;
    if (m->has_classes && write_labels(o->file, m) != 0)
        return h5out_fail(err, err_len, "%s: cannot write the labels", o->path);
    if (m->has_classes && write_strings(o->file, H5PACK_DS_CLASSES, m->classes, m->n_classes) != 0)
        return h5out_fail(err, err_len, "%s: cannot write the class names", o->path);
    if (m->table && write_table(o->file, m->n, m->table) != 0)
        return h5out_fail(err, err_len, "%s: cannot write the labels from the table", o->path);
    if (write_strings(o->file, H5PACK_DS_FILENAMES, m->filenames, m->n) != 0)
        return h5out_fail(err, err_len, "%s: cannot write the file names", o->path);
    if (write_skipped(o->file, m->skipped) != 0)
        return h5out_fail(err, err_len, "%s: cannot write the list of skipped files", o->path);
    if (o->g.ragged && write_ragged(o->file, &o->g, m) != 0)
        return h5out_fail(err, err_len, "%s: cannot write the image offsets and shapes", o->path);
    if (o->g.tile && write_tiled(o->file, &o->g, m) != 0)
        return h5out_fail(err, err_len, "%s: cannot write the image shapes", o->path);
    if (o->masks >= 0 && h5out_masks_write_attrs(o, m->mask_seen) != 0)
        return h5out_fail(err, err_len, "%s: cannot write the masks' attributes", o->path);
    if ((o->images >= 0 && attr_string(o->images, H5PACK_ATTR_LAYOUT, layout) != 0) ||
        write_shape_attrs(o->file, &o->g, layout) != 0 ||
        write_tuning_attrs(o->file, m, o->g.channels, o->g.ragged || o->g.tile) != 0)
        return h5out_fail(err, err_len, "%s: cannot write the attributes", o->path);
    return 0;
}

uint64_t h5out_images_storage(h5out *o)
{
    if (o->g.tile)
        return o->tile_bytes;
    H5Dflush(o->images); /* chunks written through H5Dwrite may still sit in HDF5's chunk cache */
    return (uint64_t)H5Dget_storage_size(o->images);
}

int h5out_close(h5out *o, char *err, size_t err_len)
{
    int rc = 0;
    if (!o)
        return 0;
    writeback_stop(o->wb); /* before HDF5 closes the descriptor it uses */
    block_gather_free(o->gather); /* flushed by h5out_flush_chunks, or the file is being given up */
    if (o->images >= 0 && H5Dclose(o->images) < 0)
        rc = -1;
    if (o->masks >= 0 && H5Dclose(o->masks) < 0)
        rc = -1;
    if (o->tiles >= 0 && H5Gclose(o->tiles) < 0)
        rc = -1;
    if (o->file >= 0 && H5Fclose(o->file) < 0)
        rc = -1;
    if (rc != 0 && err)
        h5out_fail(err, err_len, "%s: cannot close (flush) the file", o->path);
    if (o->tile_mu_ready)
        pthread_mutex_destroy(&o->tile_mu);
    free(o->path);
    free(o);
    return rc;
}
