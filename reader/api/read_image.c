/* read_image.c - h5pack_read_image(): one stored image, (height, width, channels) uint8, for looking at a
 * file (h5pack.read_image in Python). Images of one size go through the chunk source (it knows every
 * layout and read path); images of several sizes are read with two small table reads and one slice of the
 * byte dataset (docs/format.md, "Images of several sizes"). Not a training path: it opens the file per call. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chunksrc.h"
#include "errtext.h"
#include "format.h"
#include "h5glue.h"
#include "h5pack.h"

/* IMAGE (in the file's layout) as (H,W,C) into OUT. */
static void copy_hwc(const source_geometry *g, const uint8_t *image, uint8_t *out)
{
    size_t plane = (size_t)g->height * g->width;
    if (g->layout == H5PACK_LAYOUT_NHWC || g->channels == 1) {
        memcpy(out, image, plane * g->channels);
        return;
    }
    for (size_t p = 0; p < plane; p++)
        for (uint32_t c = 0; c < g->channels; c++)
            out[p * g->channels + c] = image[c * plane + p];
}

static int read_one_size(const char *path, uint64_t index, uint8_t *out, size_t out_len, uint64_t dims[3],
                         char *err, size_t err_len)
{
    chunk_source *src = NULL;
    int rc = h5pack_chunksrc_open(path, H5PACK_DS_IMAGES, NULL, H5PACK_LAYOUT_AUTO, &src, err, err_len);
    if (rc)
        return rc;
    const source_geometry *g = h5pack_chunksrc_geometry(src);
    dims[0] = g->height, dims[1] = g->width, dims[2] = g->channels;
    if (index >= g->n_samples)
        rc = h5pack_errf(H5PACK_EINVAL, err, err_len, "%s: no image %llu: the file holds %llu", path,
                         (unsigned long long)index, (unsigned long long)g->n_samples);
    else if (out && out_len < g->image_bytes)
        rc = h5pack_errf(H5PACK_EINVAL, err, err_len, "%s: %llu bytes given for an image of %llu", path,
                         (unsigned long long)out_len, (unsigned long long)g->image_bytes);
    if (rc || !out) {
        h5pack_chunksrc_close(src);
        return rc;
    }
    uint64_t chunk = index / g->samples_per_chunk;
    uint8_t *buf = malloc(g->chunk_bytes);
    chunksrc_scratch *sc = h5pack_chunksrc_scratch_new(src);
    chunk_read_cost cost = {0};
    if (!buf || !sc)
        rc = h5pack_errf(H5PACK_ENOMEM, err, err_len, "%s: out of memory for one chunk", path);
    else if (!(rc = h5pack_chunksrc_read(src, chunk, buf, sc, &cost, err, err_len)))
        copy_hwc(g, buf + (index - chunk * g->samples_per_chunk) * g->image_bytes, out);
    h5pack_chunksrc_scratch_free(sc);
    free(buf);
    h5pack_chunksrc_close(src);
    return rc;
}

/* Rows of dataset NAME (0 when it cannot be read). */
static uint64_t table_rows(hid_t file, const char *name)
{
    hid_t d = H5Dopen2(file, name, H5P_DEFAULT), space = d >= 0 ? H5Dget_space(d) : -1;
    hsize_t dims[2] = {0, 0};
    int rank = space >= 0 ? H5Sget_simple_extent_ndims(space) : -1;
    if (rank < 1 || rank > 2 || H5Sget_simple_extent_dims(space, dims, NULL) != rank)
        dims[0] = 0;
    if (space >= 0)
        H5Sclose(space);
    if (d >= 0)
        H5Dclose(d);
    return dims[0];
}

/* COUNT int64 values of dataset NAME from START (a row of a (N,K) table when K = COUNT). */
static int read_int64s(hid_t file, const char *name, uint64_t start, int count, int64_t *out)
{
    hid_t d = H5Dopen2(file, name, H5P_DEFAULT), space = d >= 0 ? H5Dget_space(d) : -1, mem = -1;
    int rank = space >= 0 ? H5Sget_simple_extent_ndims(space) : -1, rc = -1;
    hsize_t dims[2] = {0, 0}, off[2] = {start, 0}, cnt[2] = {1, (hsize_t)count}, n = (hsize_t)count;
    if (rank == (count == 1 ? 1 : 2) && H5Sget_simple_extent_dims(space, dims, NULL) == rank && start < dims[0] &&
        (rank == 1 || dims[1] == (hsize_t)count) &&
        H5Sselect_hyperslab(space, H5S_SELECT_SET, off, NULL, cnt, NULL) >= 0 &&
        (mem = H5Screate_simple(1, &n, NULL)) >= 0 && H5Dread(d, H5T_NATIVE_INT64, mem, space, H5P_DEFAULT, out) >= 0)
        rc = 0;
    if (mem >= 0)
        H5Sclose(mem);
    if (space >= 0)
        H5Sclose(space);
    if (d >= 0)
        H5Dclose(d);
    return rc;
}

static int read_bytes(hid_t file, uint64_t offset, uint64_t count, uint8_t *out)
{
    hid_t d = H5Dopen2(file, H5PACK_DS_IMAGES, H5P_DEFAULT), space = d >= 0 ? H5Dget_space(d) : -1, mem = -1;
    hsize_t dim = 0, off = offset, cnt = count;
    int rc = -1;
    if (space >= 0 && H5Sget_simple_extent_ndims(space) == 1 && H5Sget_simple_extent_dims(space, &dim, NULL) == 1 &&
        offset + count <= dim && H5Sselect_hyperslab(space, H5S_SELECT_SET, &off, NULL, &cnt, NULL) >= 0 &&
        (mem = H5Screate_simple(1, &cnt, NULL)) >= 0 && H5Dread(d, H5T_NATIVE_UINT8, mem, space, H5P_DEFAULT, out) >= 0)
        rc = 0;
    if (mem >= 0)
        H5Sclose(mem);
    if (space >= 0)
        H5Sclose(space);
    if (d >= 0)
        H5Dclose(d);
    return rc;
}

/* Images of several sizes, with the HDF5 lock held. */
static int read_ragged(hid_t file, const char *path, uint64_t index, uint8_t *out, size_t out_len, uint64_t dims[3],
                       char *err, size_t err_len)
{
    int64_t offset = 0, hw[2] = {0, 0}, channels = 0;
    char why[128] = "";
    if (h5pack_h5_read_int_attr(file, H5PACK_ATTR_CHANNELS, &channels, why, sizeof why) <= 0 || channels < 1 ||
        channels > H5PACK_MAX_CHANNELS)
        return h5pack_errf(H5PACK_EFORMAT, err, err_len, "%s: root attribute %s missing or not 1..%d", path,
                           H5PACK_ATTR_CHANNELS, H5PACK_MAX_CHANNELS);
    uint64_t n = table_rows(file, H5PACK_DS_IMAGE_OFFSETS);
    if (index >= n)
        return h5pack_errf(H5PACK_EINVAL, err, err_len, "%s: no image %llu: the file holds %llu", path,
                           (unsigned long long)index, (unsigned long long)n);
    if (read_int64s(file, H5PACK_DS_IMAGE_OFFSETS, index, 1, &offset) != 0 ||
        read_int64s(file, H5PACK_DS_IMAGE_SHAPES, index, 2, hw) != 0)
        return h5pack_errf(H5PACK_ECORRUPT, err, err_len, "%s: cannot read image %llu's place (%s (N,) and %s (N,2) "
                           "name every image)", path, (unsigned long long)index, H5PACK_DS_IMAGE_OFFSETS,
                           H5PACK_DS_IMAGE_SHAPES);
    if (offset < 0 || hw[0] < 1 || hw[1] < 1 || hw[0] > INT32_MAX || hw[1] > INT32_MAX)
        return h5pack_errf(H5PACK_ECORRUPT, err, err_len, "%s: image %llu has offset %lld and size %lldx%lld",
                           path, (unsigned long long)index, (long long)offset, (long long)hw[0], (long long)hw[1]);
    dims[0] = (uint64_t)hw[0], dims[1] = (uint64_t)hw[1], dims[2] = (uint64_t)channels;
    uint64_t bytes = dims[0] * dims[1] * dims[2];
    if (!out)
        return H5PACK_OK;
    if (out_len < bytes)
        return h5pack_errf(H5PACK_EINVAL, err, err_len, "%s: %llu bytes given for an image of %llu", path,
                           (unsigned long long)out_len, (unsigned long long)bytes);
    if (read_bytes(file, (uint64_t)offset, bytes, out) != 0)
        return h5pack_errf(H5PACK_ECORRUPT, err, err_len, "%s: cannot read image %llu (%llu bytes at %lld of %s)",
                           path, (unsigned long long)index, (unsigned long long)bytes, (long long)offset,
                           H5PACK_DS_IMAGES);
    return H5PACK_OK;
}

/* Whether PATH holds images of several sizes (H5PACK_OK with *RAGGED), read under the lock. */
static int open_and_read_ragged(const char *path, uint64_t index, uint8_t *out, size_t out_len, uint64_t dims[3],
                                int *ragged, char *err, size_t err_len)
{
    h5pack_h5_quiet q;
    h5pack_h5_enter(&q);
    hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    int rc = H5PACK_OK;
    *ragged = file >= 0 && h5pack_h5_path_exists(file, H5PACK_DS_IMAGE_OFFSETS);
    if (*ragged)
        rc = read_ragged(file, path, index, out, out_len, dims, err, err_len);
    if (file >= 0)
        H5Fclose(file);
    h5pack_h5_leave(&q);
    return rc;
}

H5PACK_API int h5pack_read_image(const char *path, uint64_t index, uint8_t *out, size_t out_len, uint64_t dims[3],
                                 char *err, size_t err_len)
{
    int ragged = 0;
    if (err && err_len)
        err[0] = '\0';
    if (!path || !dims)
        return h5pack_errf(H5PACK_EINVAL, err, err_len, "h5pack_read_image: path and dims are required");
    int rc = open_and_read_ragged(path, index, out, out_len, dims, &ragged, err, err_len);
    if (ragged)
        return rc;
    return read_one_size(path, index, out, out_len, dims, err, err_len); /* also says why a file does not open */
}
