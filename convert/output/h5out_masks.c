/* h5out_masks.c - the masks dataset (--masks, docs/format.md): (N, H, W) uint8 or uint16 beside the images,
 * chunked (K, H, W) with the images' K and filters, so chunk i of both holds the same images; its chunks
 * written as the images' are (H5Dwrite_chunk, or pwrite at computed addresses), copied with them into the
 * exact-size file, and its attributes: the values the stored masks hold. */
#include <errno.h>
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "h5out.h"
#include "h5out_impl.h"
#include "mask_values.h"
#include "pwrite_full.h"
#include "writeback.h"

static hid_t mask_file_type(const h5out *o)
{
    return o->g.mask_bytes == 2 ? H5T_STD_U16LE : H5T_STD_U8LE;
}

static uint64_t mask_chunk_bytes(const h5out *o)
{
    return o->g.chunk_images * o->g.height * o->g.width * o->g.mask_bytes;
}

int h5out_masks_create(h5out *o, char *err, size_t err_len)
{
    hsize_t dims[3] = {o->g.n, o->g.height, o->g.width}, chunk[3] = {o->g.chunk_images, o->g.height, o->g.width};
    hid_t dcpl = h5out_chunked_dcpl(&o->g, 3, chunk), space = H5Screate_simple(3, dims, NULL);
    if (dcpl >= 0 && space >= 0)
        o->masks = H5Dcreate2(o->file, H5PACK_DS_MASKS, mask_file_type(o), space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    if (space >= 0)
        H5Sclose(space);
    if (dcpl >= 0)
        H5Pclose(dcpl);
    return o->masks >= 0 ? 0 : h5out_fail(err, err_len, "%s: cannot create the masks dataset", o->path);
}

int64_t h5out_masks_base(const h5out *o)
{
    uint64_t grid[2] = {(o->g.n + o->g.chunk_images - 1) / o->g.chunk_images, 1}, extent[2] = {o->g.chunk_images, 0};
    return h5out_implicit_base(o, o->masks, grid, extent, mask_chunk_bytes(o));
}

int h5out_write_mask_chunk(h5out *o, uint64_t index, const void *data, size_t size, char *err, size_t err_len)
{
    hsize_t offset[3] = {index * o->g.chunk_images, 0, 0};
    if (H5Dwrite_chunk(o->masks, H5P_DEFAULT, 0, offset, size, data) < 0)
        return h5out_fail(err, err_len, "%s: cannot write chunk %llu of the masks", o->path, (unsigned long long)index);
    writeback_note(o->wb, size);
    return 0;
}

int h5out_pwrite_mask_chunk(h5out *o, uint64_t index, const void *data, size_t size, char *err, size_t err_len)
{
    uint64_t at = (uint64_t)o->mask_base + index * mask_chunk_bytes(o);
    if (pwrite_full(o->fd, data, size, (off_t)at) != 0) {
        snprintf(err, err_len, "%s: cannot write chunk %llu of the masks: %s", o->path, (unsigned long long)index,
                 strerror(errno));
        return -1;
    }
    writeback_note(o->wb, size);
    return 0;
}

/* The first file's masks dataset (*FILE, *DSET; -1 when not opened). 0, or -1 with ERR. */
static int open_first_masks(const char *from, hid_t *file, hid_t *dset, char *err, size_t err_len)
{
    *dset = -1;
    *file = H5Fopen(from, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (*file >= 0 && (*dset = H5Dopen2(*file, H5PACK_DS_MASKS, H5P_DEFAULT)) >= 0)
        return 0;
    return h5out_fail(err, err_len, "%s: cannot open the first pass's masks", from);
}

static void close_first_masks(hid_t file, hid_t dset)
{
    if (dset >= 0)
        H5Dclose(dset);
    if (file >= 0)
        H5Fclose(file);
}

/* Chunk I of SRC into O's masks byte for byte, through BUF (*CAP bytes, grown as needed). */
static int copy_mask_chunk(h5out *o, hid_t src, uint64_t i, uint8_t **buf, size_t *cap, char *err, size_t len)
{
    hsize_t offset[3] = {i * o->g.chunk_images, 0, 0}, size = 0;
    uint32_t filters = 0;
    if (H5Dget_chunk_storage_size(src, offset, &size) < 0 || size == 0)
        return h5out_fail(err, len, "%s: cannot find chunk %llu of the masks to copy", o->path, (unsigned long long)i);
    if (size > *cap) {
        uint8_t *grown = realloc(*buf, size);
        if (!grown) {
            snprintf(err, len, "out of memory copying chunk %llu of the masks", (unsigned long long)i);
            return -1;
        }
        *buf = grown, *cap = size;
    }
    if (H5Dread_chunk(src, H5P_DEFAULT, offset, &filters, *buf) < 0 ||
        H5Dwrite_chunk(o->masks, H5P_DEFAULT, filters, offset, size, *buf) < 0)
        return h5out_fail(err, len, "%s: cannot copy chunk %llu of the masks", o->path, (unsigned long long)i);
    writeback_note(o->wb, size);
    return 0;
}

int h5out_copy_mask_chunks(h5out *o, const char *from, uint64_t n_chunks, char *err, size_t err_len)
{
    uint8_t *buf = NULL;
    size_t cap = 0;
    hid_t file, dset;
    int rc = open_first_masks(from, &file, &dset, err, err_len);
    for (uint64_t i = 0; i < n_chunks && rc == 0; i++)
        rc = copy_mask_chunk(o, dset, i, &buf, &cap, err, err_len);
    free(buf);
    close_first_masks(file, dset);
    return rc;
}

int h5out_copy_mask_rows(h5out *o, const char *from, uint64_t n, char *err, size_t err_len)
{
    hsize_t start[3] = {0, 0, 0}, count[3] = {n, o->g.height, o->g.width};
    uint8_t *buf = malloc((size_t)(n ? n : 1) * o->g.height * o->g.width * o->g.mask_bytes);
    hid_t file = -1, dset = -1, fspace = -1, mspace = -1, mtype = mask_file_type(o);
    int rc = -1;
    if (!buf)
        snprintf(err, err_len, "out of memory copying %llu masks", (unsigned long long)n);
    else if (open_first_masks(from, &file, &dset, err, err_len) == 0) {
        fspace = H5Dget_space(dset), mspace = H5Screate_simple(3, count, NULL);
        if (fspace >= 0 && mspace >= 0 && H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, count, NULL) >= 0 &&
            H5Dread(dset, mtype, mspace, fspace, H5P_DEFAULT, buf) >= 0 &&
            H5Dwrite(o->masks, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0)
            rc = 0;
        else
            h5out_fail(err, err_len, "%s: cannot copy %llu masks from %s", o->path, (unsigned long long)n, from);
    }
    if (mspace >= 0)
        H5Sclose(mspace);
    if (fspace >= 0)
        H5Sclose(fspace);
    free(buf);
    close_first_masks(file, dset);
    return rc;
}

uint64_t h5out_masks_storage(h5out *o)
{
    if (o->masks < 0)
        return 0;
    H5Dflush(o->masks);
    return (uint64_t)H5Dget_storage_size(o->masks);
}

/* ---- attributes ---------------------------------------------------------------------------------- */

/* An int64 attribute of COUNT values (0: a scalar). */
static int attr_i64s(hid_t loc, const char *name, const int64_t *values, hsize_t count)
{
    hid_t space = count ? H5Screate_simple(1, &count, NULL) : H5Screate(H5S_SCALAR), attr = -1;
    int rc = -1;
    if (space >= 0)
        attr = H5Acreate2(loc, name, H5T_STD_I64LE, space, H5P_DEFAULT, H5P_DEFAULT);
    if (attr >= 0 && H5Awrite(attr, H5T_NATIVE_INT64, values) >= 0)
        rc = 0;
    if (attr >= 0)
        H5Aclose(attr);
    if (space >= 0)
        H5Sclose(space);
    return rc;
}

/* A fixed-length ASCII attribute, null-padded, as the root's strings. */
static int attr_text(hid_t loc, const char *name, const char *value)
{
    hid_t t = H5Tcopy(H5T_C_S1), space = H5Screate(H5S_SCALAR), attr = -1;
    int rc = -1;
    if (t >= 0 && space >= 0 && H5Tset_size(t, strlen(value)) >= 0 && H5Tset_strpad(t, H5T_STR_NULLPAD) >= 0)
        attr = H5Acreate2(loc, name, t, space, H5P_DEFAULT, H5P_DEFAULT);
    if (attr >= 0 && H5Awrite(attr, t, value) >= 0)
        rc = 0;
    if (attr >= 0)
        H5Aclose(attr);
    if (space >= 0)
        H5Sclose(space);
    if (t >= 0)
        H5Tclose(t);
    return rc;
}

int h5out_masks_write_attrs(h5out *o, const mask_values *seen)
{
    int64_t listed[MASK_VALUES_LISTED], histogram[256];
    mask_values none;
    if (!seen) {
        mask_values_clear(&none);
        seen = &none;
    }
    int64_t total = (int64_t)mask_values_list(seen, listed, MASK_VALUES_LISTED);
    hsize_t n_listed = total < MASK_VALUES_LISTED ? (hsize_t)total : MASK_VALUES_LISTED;
    for (int v = 0; v < 256; v++)
        histogram[v] = (int64_t)seen->count[v];
    /* an empty list is a 0-length attribute, which HDF5 has no simple dataspace for: a null one instead */
    int rc = n_listed ? attr_i64s(o->masks, H5PACK_ATTR_MASK_VALUES, listed, n_listed) : 0;
    return rc || attr_i64s(o->masks, H5PACK_ATTR_MASK_VALUE_COUNT, &total, 0) ||
           (o->g.mask_bytes == 1 && attr_i64s(o->masks, H5PACK_ATTR_MASK_HISTOGRAM, histogram, 256)) ||
           attr_text(o->masks, H5PACK_ATTR_MASK_RESAMPLE, H5PACK_MASK_RESAMPLE_TEXT_NEAREST) ? -1 : 0;
}
