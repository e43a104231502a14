/* h5out_copy.c - copying the images of a first file into the final one (h5out.h): whole chunks or rows
 * when skipped images left the first file with more rows than images, and the byte ranges of images
 * of several sizes when skips left gaps between them. The first file's chunks are handed back to the file
 * system as soon as the copy is done with them (space_release.h), so the copy needs little more disk than
 * the first file. */
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "h5out.h"
#include "h5out_impl.h"
#include "space_release.h"
#include "writeback.h"

/* The first file FROM and its images dataset (*FILE, *DSET; -1 when not opened), DAPL its access
 * properties. 0, or -1 with ERR. */
static int open_first(const char *from, hid_t dapl, hid_t *file, hid_t *dset, char *err, size_t err_len)
{
    *dset = -1;
    *file = H5Fopen(from, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (*file >= 0 && (*dset = H5Dopen2(*file, H5PACK_DS_IMAGES, dapl)) >= 0)
        return 0;
    return h5out_fail(err, err_len, "%s: cannot open the first pass's images", from);
}

/* Hands the first file's chunk at OFFSET of DSET back to the file system (space_release.h): the copy has
 * read it and never reads it again. Where HDF5 cannot say where the chunk lies, it stays. */
static void release_chunk(hid_t dset, const hsize_t *offset, space_release *rel)
{
    unsigned mask = 0;
    haddr_t addr = HADDR_UNDEF;
    hsize_t size = 0;
    if (rel->fd >= 0 && H5Dget_chunk_info_by_coord(dset, offset, &mask, &addr, &size) >= 0 && addr != HADDR_UNDEF)
        space_release_range(rel, (uint64_t)addr, (uint64_t)size);
}

static void close_first(hid_t file, hid_t dset)
{
    if (dset >= 0)
        H5Dclose(dset);
    if (file >= 0)
        H5Fclose(file);
}

static int copy_one_chunk(h5out *o, hid_t src, uint64_t i, uint8_t **buf, size_t *cap, space_release *rel, char *err,
                          size_t len)
{
    hsize_t offset[4] = {i * o->g.chunk_images, 0, 0, 0}, size = 0;
    uint32_t mask = 0;
    if (H5Dget_chunk_storage_size(src, offset, &size) < 0 || size == 0)
        return h5out_fail(err, len, "%s: cannot find chunk %llu to copy", o->path, (unsigned long long)i);
    if (size > *cap) {
        uint8_t *grown = realloc(*buf, size);
        if (!grown) {
            snprintf(err, len, "out of memory copying chunk %llu", (unsigned long long)i);
            return -1;
        }
        *buf = grown;
        *cap = size;
    }
    if (H5Dread_chunk(src, H5P_DEFAULT, offset, &mask, *buf) < 0)
        return h5out_fail(err, len, "%s: cannot read chunk %llu to copy", o->path, (unsigned long long)i);
    if (H5Dwrite_chunk(o->images, H5P_DEFAULT, mask, offset, size, *buf) < 0)
        return h5out_fail(err, len, "%s: cannot write copied chunk %llu", o->path, (unsigned long long)i);
    writeback_note(o->wb, size);
    release_chunk(src, offset, rel);
    return 0;
}

int h5out_copy_chunks(h5out *o, const char *from, uint64_t n_chunks, char *err, size_t err_len)
{
    uint8_t *buf = NULL;
    size_t cap = 0;
    hid_t file, dset;
    space_release rel;
    int rc = open_first(from, H5P_DEFAULT, &file, &dset, err, err_len);
    space_release_open(&rel, from);
    for (uint64_t i = 0; i < n_chunks && rc == 0; i++)
        rc = copy_one_chunk(o, dset, i, &buf, &cap, &rel, err, err_len);
    space_release_close(&rel);
    free(buf);
    close_first(file, dset);
    return rc;
}

static int copy_rows(h5out *o, hid_t src, uint64_t n, uint8_t *buf)
{
    hsize_t start[4] = {0, 0, 0, 0}, count[4];
    h5out_image_dims(&o->g, n, count);
    hid_t fspace = H5Dget_space(src), mspace = H5Screate_simple(4, count, NULL);
    int rc = -1;
    if (fspace >= 0 && mspace >= 0 && H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, count, NULL) >= 0 &&
        H5Dread(src, H5T_NATIVE_UINT8, mspace, fspace, H5P_DEFAULT, buf) >= 0 &&
        H5Dwrite(o->images, H5T_NATIVE_UINT8, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0)
        rc = 0;
    if (mspace >= 0)
        H5Sclose(mspace);
    if (fspace >= 0)
        H5Sclose(fspace);
    return rc;
}

int h5out_copy_rows(h5out *o, const char *from, uint64_t n, char *err, size_t err_len)
{
    int rc = -1;
    uint8_t *buf = malloc((size_t)n * o->g.channels * o->g.height * o->g.width);
    hid_t file = -1, dset = -1;
    if (!buf)
        snprintf(err, err_len, "out of memory copying %llu images", (unsigned long long)n);
    else if (open_first(from, H5P_DEFAULT, &file, &dset, err, err_len) == 0 && copy_rows(o, dset, n, buf) == 0)
        rc = 0;
    else if (dset >= 0) /* opened: the copy failed */
        h5out_fail(err, err_len, "%s: cannot copy %llu images from %s", o->path, (unsigned long long)n, from);
    free(buf);
    close_first(file, dset);
    return rc;
}

/* ---- images of several sizes: closing the gaps skipped images left ----------------------------------- */

/* BYTES at AT of 1-D dataset D into/out of BUF. */
static int byte_range(hid_t d, uint64_t at, uint64_t bytes, uint8_t *buf, int write)
{
    hsize_t off = at, cnt = bytes;
    hid_t fspace = H5Dget_space(d), mspace = H5Screate_simple(1, &cnt, NULL);
    int rc = -1;
    if (fspace >= 0 && mspace >= 0 && H5Sselect_hyperslab(fspace, H5S_SELECT_SET, &off, NULL, &cnt, NULL) >= 0)
        rc = write ? H5Dwrite(d, H5T_NATIVE_UINT8, mspace, fspace, H5P_DEFAULT, buf)
                   : H5Dread(d, H5T_NATIVE_UINT8, mspace, fspace, H5P_DEFAULT, buf);
    if (mspace >= 0)
        H5Sclose(mspace);
    if (fspace >= 0)
        H5Sclose(fspace);
    return rc < 0 ? -1 : 0;
}

/* The first file's store, read image by image in increasing offsets: its chunk size, and the chunks not yet
 * handed back (those below NEXT are). */
typedef struct ragged_source {
    hid_t file, dset;
    uint64_t chunk_bytes, next;
    space_release rel;
} ragged_source;

/* The 1-D chunk size of FROM's images dataset (0 when it cannot be read), and whether its chunks are
 * filtered. */
static uint64_t first_chunk_bytes(const char *from, int *filtered)
{
    hid_t file = -1, dset = -1, dcpl = -1;
    hsize_t dim = 0;
    *filtered = 0;
    if (open_first(from, H5P_DEFAULT, &file, &dset, NULL, 0) == 0 && (dcpl = H5Dget_create_plist(dset)) >= 0) {
        if (H5Pget_chunk(dcpl, 1, &dim) != 1)
            dim = 0;
        *filtered = H5Pget_nfilters(dcpl) > 0;
    }
    if (dcpl >= 0)
        H5Pclose(dcpl);
    close_first(file, dset);
    return dim;
}

/* Opens FROM; compressed, with a chunk cache of two of its chunks: an image that ends inside a chunk leaves
 * it inflated for the next images (HDF5's default cache, 1 MiB, holds no 2 MiB chunk, so every image read
 * inflated its chunk again: 60 s instead of 11 s for 183 MB), and the chunk a straddling image reads on is
 * kept beside it. Unfiltered chunks are read straight from the file, as by default (a cache would only
 * add a copy). */
static int ragged_source_open(ragged_source *s, const char *from, char *err, size_t len)
{
    int filtered = 0;
    s->next = 0, s->chunk_bytes = first_chunk_bytes(from, &filtered);
    hid_t dapl = filtered && s->chunk_bytes ? H5Pcreate(H5P_DATASET_ACCESS) : -1;
    if (dapl >= 0)
        H5Pset_chunk_cache(dapl, 521, (size_t)(2 * s->chunk_bytes + 1), 1.0);
    int rc = open_first(from, dapl >= 0 ? dapl : H5P_DEFAULT, &s->file, &s->dset, err, len);
    if (dapl >= 0)
        H5Pclose(dapl);
    space_release_open(&s->rel, from);
    if (!s->chunk_bytes) /* no chunk size: nothing can be released, the copy itself is unaffected */
        space_release_close(&s->rel);
    return rc;
}

/* The copy has read every byte of the store below DONE: the chunks wholly below it go back. */
static void ragged_source_done_below(ragged_source *s, uint64_t done)
{
    for (; s->rel.fd >= 0 && (s->next + 1) * s->chunk_bytes <= done; s->next++) {
        hsize_t at = s->next * s->chunk_bytes;
        release_chunk(s->dset, &at, &s->rel);
    }
}

static void ragged_source_close(ragged_source *s)
{
    space_release_close(&s->rel);
    close_first(s->file, s->dset);
}

int h5out_copy_ragged(h5out *o, const char *from, const uint64_t *from_offsets, const uint64_t *to_offsets,
                      const uint32_t *shapes, uint64_t n, char *err, size_t err_len)
{
    uint64_t largest = 0;
    for (uint64_t i = 0; i < n; i++)
        largest = (uint64_t)shapes[2 * i] * shapes[2 * i + 1] > largest ? (uint64_t)shapes[2 * i] * shapes[2 * i + 1]
                                                                          : largest;
    uint64_t buf_bytes = largest * o->g.channels;
    uint8_t *buf = malloc(buf_bytes ? buf_bytes : 1);
    ragged_source src = {.file = -1, .dset = -1, .rel = {.fd = -1}};
    int rc = -1;
    if (!buf)
        snprintf(err, err_len, "out of memory copying an image of %llu bytes", (unsigned long long)largest);
    else
        rc = ragged_source_open(&src, from, err, err_len);
    for (uint64_t i = 0; rc == 0 && i < n; i++) { /* the images lie in increasing offsets, without overlap */
        uint64_t bytes = (uint64_t)shapes[2 * i] * shapes[2 * i + 1] * o->g.channels;
        if (byte_range(src.dset, from_offsets[i], bytes, buf, 0) != 0 ||
            byte_range(o->images, to_offsets[i], bytes, buf, 1) != 0)
            rc = h5out_fail(err, err_len, "%s: cannot copy image %llu from %s", o->path, (unsigned long long)i, from);
        else
            ragged_source_done_below(&src, from_offsets[i] + bytes);
    }
    free(buf);
    ragged_source_close(&src);
    return rc;
}
