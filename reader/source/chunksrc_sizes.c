/* chunksrc_sizes.c - images of several sizes (format version 2, docs/format.md): the 1-D byte store, its
 * tables, and the reader's chunks over it. A reader chunk is K consecutive images (K fixed, from the
 * file's chunk_bytes and the mean image), so every part of the reader that maps image i to chunk i / K
 * stays as it is; only the bytes differ per chunk: chunk c is the byte range from its first image to the
 * end of its last (a skipped image's zeros between two of them included). */
#include <stdlib.h>
#include <string.h>

#include "chunksrc_impl.h"
#include "format.h"

#define SEVERAL_SIZES_CHUNK_BYTES (2u << 20)

static uint64_t image_bytes_at(const chunk_source *s, uint64_t i)
{
    return (uint64_t)s->img_hw[2 * i] * s->img_hw[2 * i + 1] * s->g.channels;
}

uint64_t h5pack_chunksrc_chunk_start(const chunk_source *s, uint64_t chunk)
{
    if (!s->g.several_sizes)
        return chunk * s->g.chunk_bytes;
    return s->img_offset[chunk * s->g.samples_per_chunk];
}

uint64_t h5pack_chunksrc_chunk_len(const chunk_source *s, uint64_t chunk)
{
    uint64_t n = h5pack_chunksrc_chunk_samples(s, chunk);
    if (!s->g.several_sizes)
        return n * s->g.image_bytes;
    uint64_t first = chunk * s->g.samples_per_chunk, last = first + n - 1;
    return s->img_offset[last] + image_bytes_at(s, last) - s->img_offset[first];
}

uint64_t h5pack_chunksrc_several_sizes_stored(const chunk_source *s, uint64_t chunk)
{
    return (uint64_t)((double)h5pack_chunksrc_chunk_len(s, chunk) * s->stored_ratio + 0.5);
}

uint64_t h5pack_chunksrc_image_offset(const chunk_source *s, uint64_t i)
{
    uint64_t k = s->g.samples_per_chunk;
    if (!s->g.several_sizes)
        return (i % k) * s->g.image_bytes;
    return s->img_offset[i] - s->img_offset[i / k * k];
}

void h5pack_chunksrc_image_size(const chunk_source *s, uint64_t i, uint32_t *h, uint32_t *w)
{
    *h = s->g.several_sizes ? s->img_hw[2 * i] : s->g.height;
    *w = s->g.several_sizes ? s->img_hw[2 * i + 1] : s->g.width;
}

/* ---- open ---------------------------------------------------------------------------------------- */

/* All of table NAME, (N,) or (N,2) int64, into a new array; its rows into *ROWS. */
static int64_t *read_table(chunk_source *s, const char *name, int cols, uint64_t *rows, char *err, size_t err_len)
{
    hid_t d = H5Dopen2(s->file, name, H5P_DEFAULT), space = d >= 0 ? H5Dget_space(d) : -1;
    hsize_t dims[2] = {0, 0};
    int rank = space >= 0 ? H5Sget_simple_extent_ndims(space) : -1;
    int64_t *v = NULL;
    if (rank != (cols == 1 ? 1 : 2) || H5Sget_simple_extent_dims(space, dims, NULL) != rank || dims[0] == 0 ||
        dims[0] > CHUNKSRC_MAX_CHUNKS || (cols == 2 && dims[1] != 2))
        h5pack_chunksrc_fail(s, H5PACK_EFORMAT, err, err_len, "'%s' must be %s int64 with N >= 1 rows", name,
                             cols == 1 ? "(N,)" : "(N,2)");
    else if (!(v = malloc((size_t)dims[0] * cols * sizeof *v)))
        h5pack_chunksrc_fail(s, H5PACK_ENOMEM, err, err_len, "out of memory for '%s'", name);
    else if (H5Dread(d, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0) {
        h5pack_chunksrc_fail_h5(s, H5PACK_ECORRUPT, err, err_len, "cannot read the image table");
        free(v), v = NULL;
    }
    *rows = dims[0];
    if (space >= 0)
        H5Sclose(space);
    if (d >= 0)
        H5Dclose(d);
    return v;
}

/* Every image inside the store, in order, none overlapping the next; sizes 1..65535. */
static int take_tables(chunk_source *s, const int64_t *off, const int64_t *hw, uint64_t n, uint64_t total,
                       char *err, size_t err_len)
{
    uint64_t end = 0;
    s->img_offset = malloc(n * sizeof *s->img_offset);
    s->img_hw = malloc(2 * n * sizeof *s->img_hw);
    if (!s->img_offset || !s->img_hw)
        return h5pack_chunksrc_fail(s, H5PACK_ENOMEM, err, err_len, "out of memory for %llu image places",
                                    (unsigned long long)n);
    for (uint64_t i = 0; i < n; i++) {
        if (hw[2 * i] < 1 || hw[2 * i] > 65535 || hw[2 * i + 1] < 1 || hw[2 * i + 1] > 65535)
            return h5pack_chunksrc_fail(s, H5PACK_EFORMAT, err, err_len, "image %llu is %lldx%lld: sides must be "
                                        "1..65535", (unsigned long long)i, (long long)hw[2 * i], (long long)hw[2 * i + 1]);
        s->img_hw[2 * i] = (uint32_t)hw[2 * i], s->img_hw[2 * i + 1] = (uint32_t)hw[2 * i + 1];
        uint64_t bytes = image_bytes_at(s, i);
        if (off[i] < 0 || (uint64_t)off[i] < end || (uint64_t)off[i] > total || bytes > total - (uint64_t)off[i])
            return h5pack_chunksrc_fail(s, H5PACK_ECORRUPT, err, err_len, "image %llu at byte %lld (%llu bytes) "
                                        "overlaps the one before or ends past the %llu bytes of the store",
                                        (unsigned long long)i, (long long)off[i], (unsigned long long)bytes,
                                        (unsigned long long)total);
        s->img_offset[i] = (uint64_t)off[i];
        end = s->img_offset[i] + bytes;
        s->g.pixel_bytes += bytes; /* at most the store's bytes: no overflow */
        s->g.height = s->img_hw[2 * i] > s->g.height ? s->img_hw[2 * i] : s->g.height;
        s->g.width = s->img_hw[2 * i + 1] > s->g.width ? s->img_hw[2 * i + 1] : s->g.width;
        /* an image's place in a uint8 batch (two-pass path, echo pool): the largest image, each addressed
         * with its own width (backend_params.in_image_bytes) */
        s->g.image_bytes = bytes > s->g.image_bytes ? bytes : s->g.image_bytes;
    }
    return 0;
}

static int read_image_tables(chunk_source *s, uint64_t total, char *err, size_t err_len)
{
    uint64_t n_off = 0, n_hw = 0;
    int64_t *off = read_table(s, H5PACK_DS_IMAGE_OFFSETS, 1, &n_off, err, err_len), *hw = NULL;
    if (off)
        hw = read_table(s, H5PACK_DS_IMAGE_SHAPES, 2, &n_hw, err, err_len);
    int rc = !off || !hw ? H5PACK_EFORMAT : 0;
    if (!rc && n_off != n_hw)
        rc = h5pack_chunksrc_fail(s, H5PACK_EFORMAT, err, err_len, "%s has %llu rows but %s %llu",
                                  H5PACK_DS_IMAGE_OFFSETS, (unsigned long long)n_off, H5PACK_DS_IMAGE_SHAPES,
                                  (unsigned long long)n_hw);
    if (!rc) {
        s->g.n_samples = n_off;
        rc = take_tables(s, off, hw, n_off, total, err, err_len);
    }
    free(off);
    free(hw);
    return rc;
}

/* K images per reader chunk: about the file's chunk_bytes (else 2 MiB) of the mean image. */
static void set_units(chunk_source *s)
{
    int64_t target = 0;
    uint64_t sum = s->g.pixel_bytes, n = s->g.n_samples;
    if (h5pack_h5_read_int_attr(s->file, H5PACK_ATTR_CHUNK_BYTES, &target, NULL, 0) <= 0 || target <= 0)
        target = SEVERAL_SIZES_CHUNK_BYTES;
    uint64_t mean = sum / n ? sum / n : 1, k = ((uint64_t)target + mean / 2) / mean;
    k = k < 1 ? 1 : k > n ? n : k;
    s->g.samples_per_chunk = k;
    s->g.n_chunks = (n + k - 1) / k;
    s->g.chunks_per_slab = 1;
    for (uint64_t c = 0; c < s->g.n_chunks; c++) {
        uint64_t len = h5pack_chunksrc_chunk_len(s, c);
        s->g.chunk_bytes = len > s->g.chunk_bytes ? len : s->g.chunk_bytes;
    }
}

static void store_chunk_offset(const void *ctx, uint64_t k, hsize_t *offset)
{
    offset[0] = (hsize_t)(k * *(const hsize_t *)ctx);
}

/* Unfiltered, allocated early with fixed dims: HDF5's implicit index puts chunk i at addr0 + i * chunk
 * bytes, so the store is one contiguous range of the file (stored.h checks three chunks). */
static int store_is_contiguous(chunk_source *s, hid_t dcpl, uint64_t total, uint64_t *base)
{
    hsize_t cb = 0, maxdim = 0, dim = 0;
    H5D_alloc_time_t when = H5D_ALLOC_TIME_ERROR;
    stored_chunks implicit;
    if (H5Pget_chunk(dcpl, 1, &cb) != 1 || cb == 0 || H5Pget_nfilters(dcpl) != 0 ||
        H5Pget_alloc_time(dcpl, &when) < 0 || when != H5D_ALLOC_TIME_EARLY ||
        H5Sget_simple_extent_dims(s->fspace, &dim, &maxdim) != 1 || maxdim != dim ||
        !h5pack_stored_find_implicit(s->dset, (total + cb - 1) / cb, cb, s->userblock, store_chunk_offset, &cb,
                                     &implicit))
        return 0;
    *base = implicit.first;
    s->g.hdf5_chunk[0] = cb;
    return 1;
}

/* A compressed store: reader chunks do not start at HDF5 chunk boundaries, so the HDF5 chunk two of them
 * share would be inflated for each. Reopens the dataset with an HDF5 chunk cache of a few chunks (the
 * reader's own cache is off elsewhere), which keeps such a chunk for the neighbouring reader chunk. 0, or -1. */
static int keep_boundary_chunks(chunk_source *s, uint64_t chunk_bytes)
{
    char name[256];
    hid_t dapl = H5Pcreate(H5P_DATASET_ACCESS);
    if (dapl < 0 || H5Iget_name(s->dset, name, sizeof name) <= 0 ||
        H5Pset_chunk_cache(dapl, 521, (size_t)(8 * chunk_bytes), 1.0) < 0) {
        if (dapl >= 0)
            H5Pclose(dapl);
        return -1;
    }
    hid_t d = H5Dopen2(s->file, name, dapl), space = d >= 0 ? H5Dget_space(d) : -1;
    H5Pclose(dapl);
    if (space < 0) {
        if (d >= 0)
            H5Dclose(d);
        return -1;
    }
    H5Sclose(s->fspace), H5Dclose(s->dset);
    s->dset = d, s->fspace = space;
    return 0;
}

/* pread from the file where the store is contiguous in it (unfiltered: implicit chunk index, or no chunks),
 * else H5Dread of the byte range under the lock (HDF5 inflates and checks). */
static int choose_several_sizes_path(chunk_source *s, uint64_t total, char *err, size_t err_len)
{
    hid_t dcpl = H5Dget_create_plist(s->dset);
    if (dcpl < 0)
        return h5pack_chunksrc_fail_h5(s, H5PACK_ECORRUPT, err, err_len, "cannot read the store's properties");
    uint64_t base = 0;
    int chunked = H5Pget_layout(dcpl) == H5D_CHUNKED;
    s->g.chunked = chunked;
    filter_summary f;
    int rc = h5pack_chunksrc_read_filters(s, dcpl, &f, err, err_len);
    if (rc) {
        H5Pclose(dcpl);
        return rc;
    }
    s->g.compressed = f.deflate > 0;
    hsize_t h5_cb = 0;
    int deflate_only = chunked && f.n == 1 && f.deflate == 1 && H5Pget_chunk(dcpl, 1, &h5_cb) == 1;
    if (chunked && store_is_contiguous(s, dcpl, total, &base)) {
        s->g.path = H5PACK_READ_CONTIGUOUS;
    } else if (deflate_only && h5pack_chunksrc_several_sizes_locate(s, total, (uint64_t)h5_cb, f.deflate_index) == 0) {
        s->g.path = H5PACK_READ_RAW_DEFLATE; /* every chunk located: read + libdeflate in the workers */
        s->g.located = 1;
    } else if (!chunked && H5Pget_layout(dcpl) == H5D_CONTIGUOUS && H5Pget_external_count(dcpl) == 0 &&
               (base = H5Dget_offset(s->dset)) != HADDR_UNDEF) {
        s->g.path = H5PACK_READ_CONTIGUOUS; /* H5Dget_offset counts the user block already */
    } else {
        s->g.path = H5PACK_READ_HDF5;
    }
    hsize_t cb = 0;
    int filtered_chunks = chunked && H5Pget_nfilters(dcpl) > 0 && H5Pget_chunk(dcpl, 1, &cb) == 1;
    H5Pclose(dcpl);
    if (s->g.path == H5PACK_READ_HDF5 && filtered_chunks && keep_boundary_chunks(s, (uint64_t)cb) != 0)
        return h5pack_chunksrc_fail_h5(s, H5PACK_ECORRUPT, err, err_len, "cannot reopen the image store");
    hsize_t stored = H5Dget_storage_size(s->dset);
    s->stored_ratio = s->g.path == H5PACK_READ_CONTIGUOUS || stored == 0 ? 1.0 : (double)stored / (double)total;
    if (s->g.path == H5PACK_READ_CONTIGUOUS && (base > s->file_size || total > s->file_size - base))
        return h5pack_chunksrc_fail(s, H5PACK_ECORRUPT, err, err_len, "truncated: the image store ends at byte "
                                    "%llu but the file has %llu bytes", (unsigned long long)(base + total),
                                    (unsigned long long)s->file_size);
    s->base_addr = base;
    return 0;
}

int h5pack_chunksrc_open_several_sizes(chunk_source *s, const char *name, char *err, size_t err_len)
{
    int64_t channels = 0;
    hsize_t total = 0;
    s->fspace = H5Dget_space(s->dset);
    if (s->fspace < 0 || H5Sget_simple_extent_ndims(s->fspace) != 1 ||
        H5Sget_simple_extent_dims(s->fspace, &total, NULL) != 1 || total == 0)
        return h5pack_chunksrc_fail(s, H5PACK_EFORMAT, err, err_len, "'%s' must be a 1-D byte store for images of "
                                    "several sizes (docs/format.md)", name);
    if (h5pack_h5_read_int_attr(s->file, H5PACK_ATTR_CHANNELS, &channels, NULL, 0) <= 0 || channels < 1 ||
        channels > H5PACK_MAX_CHANNELS)
        return h5pack_chunksrc_fail(s, H5PACK_EFORMAT, err, err_len, "root attribute %s missing or not 1..%d",
                                    H5PACK_ATTR_CHANNELS, H5PACK_MAX_CHANNELS);
    s->g.several_sizes = 1;
    s->g.channels = (uint32_t)channels;
    s->g.layout = H5PACK_LAYOUT_NHWC;
    s->g.rank = s->rank = 1;
    int rc = read_image_tables(s, total, err, err_len);
    if (!rc) {
        set_units(s);
        rc = choose_several_sizes_path(s, total, err, err_len);
    }
    return rc;
}
