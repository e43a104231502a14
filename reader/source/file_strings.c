/* file_strings.c - h5pack_read_strings(): a one-dimensional string dataset of a file (classes, filenames,
 * label_names) as packed NUL-terminated UTF-8, for bindings and programs without an HDF5 library of their
 * own. The file is opened through the store layer (any location the reader takes), under the process's
 * HDF5 lock; an older-format file is first opened by the reader's probe, which catches the damage HDF5
 * 1.10.8 would crash on. Rows are read in blocks, so 1.28M file names never sit in HDF5's memory at once. */
#include <stdlib.h>
#include <string.h>

#include "chunksrc.h"
#include "errtext.h"
#include "format.h"
#include "h5glue.h"
#include "h5pack.h"
#include "store.h"
#include "store_h5.h"

#define ROWS_PER_BLOCK 4096

typedef struct strings_job {
    const char *path, *dataset;
    uint64_t start, count;   /* rows asked (count already clipped to the dataset) */
    char *out;               /* NULL: only measure */
    size_t out_len, needed;  /* needed: bytes of the asked rows with their NULs */
    char *err;
    size_t err_len;
} strings_job;

/* Appends S (LEN bytes, no NUL needed) and a NUL to the job's output, counting the bytes either way. */
static void append(strings_job *j, const char *s, size_t len)
{
    if (j->out && j->needed + len + 1 <= j->out_len) {
        memcpy(j->out + j->needed, s, len);
        j->out[j->needed + len] = '\0';
    }
    j->needed += len + 1;
}

/* The length of a fixed-length string without its padding (NULs, or spaces for space-padded ones). */
static size_t unpadded(const char *s, size_t size, H5T_str_t pad)
{
    size_t n = strnlen(s, size);
    if (pad == H5T_STR_SPACEPAD)
        while (n > 0 && s[n - 1] == ' ')
            n--;
    return n;
}

static int read_block_vlen(strings_job *j, hid_t dset, hid_t space, hid_t mem_type, hsize_t first, hsize_t rows)
{
    char **strs = calloc(rows, sizeof *strs);
    hid_t mspace = H5Screate_simple(1, &rows, NULL);
    int rc = H5PACK_OK;
    if (!strs || mspace < 0)
        rc = h5pack_errf(H5PACK_ENOMEM, j->err, j->err_len, "%s: %s: out of memory", j->path, j->dataset);
    else if (H5Sselect_hyperslab(space, H5S_SELECT_SET, &first, NULL, &rows, NULL) < 0 ||
             H5Dread(dset, mem_type, mspace, space, H5P_DEFAULT, strs) < 0)
        rc = h5pack_errf(H5PACK_EIO, j->err, j->err_len, "%s: %s: cannot read rows %llu..%llu", j->path, j->dataset,
                         (unsigned long long)first, (unsigned long long)(first + rows - 1));
    else {
        for (hsize_t i = 0; i < rows; i++)
            append(j, strs[i] ? strs[i] : "", strs[i] ? strlen(strs[i]) : 0);
        H5Dvlen_reclaim(mem_type, mspace, H5P_DEFAULT, strs);
    }
    if (mspace >= 0)
        H5Sclose(mspace);
    free(strs);
    return rc;
}

static int read_block_fixed(strings_job *j, hid_t dset, hid_t space, hid_t mem_type, size_t size, H5T_str_t pad,
                            hsize_t first, hsize_t rows)
{
    char *buf = malloc(rows * size);
    hid_t mspace = H5Screate_simple(1, &rows, NULL);
    int rc = H5PACK_OK;
    if (!buf || mspace < 0)
        rc = h5pack_errf(H5PACK_ENOMEM, j->err, j->err_len, "%s: %s: out of memory", j->path, j->dataset);
    else if (H5Sselect_hyperslab(space, H5S_SELECT_SET, &first, NULL, &rows, NULL) < 0 ||
             H5Dread(dset, mem_type, mspace, space, H5P_DEFAULT, buf) < 0)
        rc = h5pack_errf(H5PACK_EIO, j->err, j->err_len, "%s: %s: cannot read rows %llu..%llu", j->path, j->dataset,
                         (unsigned long long)first, (unsigned long long)(first + rows - 1));
    else
        for (hsize_t i = 0; i < rows; i++)
            append(j, buf + i * size, unpadded(buf + i * size, size, pad));
    if (mspace >= 0)
        H5Sclose(mspace);
    free(buf);
    return rc;
}

/* Reads the asked rows of the open string dataset DSET (file type FTYPE) block by block. */
static int read_rows(strings_job *j, hid_t dset, hid_t space, hid_t ftype)
{
    int vlen = H5Tis_variable_str(ftype) > 0;
    size_t size = vlen ? 0 : H5Tget_size(ftype);
    H5T_str_t pad = H5Tget_strpad(ftype);
    hid_t mem_type = H5Tcopy(H5T_C_S1);
    if (mem_type < 0 || H5Tset_size(mem_type, vlen ? H5T_VARIABLE : size) < 0 ||
        H5Tset_cset(mem_type, H5Tget_cset(ftype)) < 0 || (!vlen && H5Tset_strpad(mem_type, pad) < 0)) {
        if (mem_type >= 0)
            H5Tclose(mem_type);
        return h5pack_errf(H5PACK_EFORMAT, j->err, j->err_len, "%s: %s: unusable string type", j->path, j->dataset);
    }
    int rc = H5PACK_OK;
    for (uint64_t done = 0; rc == H5PACK_OK && done < j->count; done += ROWS_PER_BLOCK) {
        hsize_t rows = j->count - done < ROWS_PER_BLOCK ? j->count - done : ROWS_PER_BLOCK;
        rc = vlen ? read_block_vlen(j, dset, space, mem_type, j->start + done, rows)
                  : read_block_fixed(j, dset, space, mem_type, size, pad, j->start + done, rows);
    }
    H5Tclose(mem_type);
    return rc;
}

/* The dataset: checked to be one-dimensional strings, its row count in *ROWS, the asked rows read. */
static int read_dataset(strings_job *j, hid_t file, uint64_t *rows)
{
    if (H5Lexists(file, j->dataset, H5P_DEFAULT) <= 0)
        return h5pack_errf(H5PACK_ENOTFOUND, j->err, j->err_len, "%s: no dataset \"%s\"", j->path, j->dataset);
    hid_t dset = H5Dopen2(file, j->dataset, H5P_DEFAULT);
    hid_t space = dset >= 0 ? H5Dget_space(dset) : -1, ftype = dset >= 0 ? H5Dget_type(dset) : -1;
    hsize_t dims[1] = {0};
    int rc = H5PACK_OK;
    if (dset < 0 || space < 0 || ftype < 0)
        rc = h5pack_errf(H5PACK_EFORMAT, j->err, j->err_len, "%s: \"%s\" is not a dataset HDF5 can open", j->path,
                         j->dataset);
    else if (H5Tget_class(ftype) != H5T_STRING || H5Sget_simple_extent_ndims(space) != 1)
        rc = h5pack_errf(H5PACK_EFORMAT, j->err, j->err_len, "%s: \"%s\" is not a one-dimensional string dataset",
                         j->path, j->dataset);
    else if (H5Sget_simple_extent_dims(space, dims, NULL) != 1)
        rc = h5pack_errf(H5PACK_EFORMAT, j->err, j->err_len, "%s: \"%s\": unreadable shape", j->path, j->dataset);
    if (rc == H5PACK_OK) {
        *rows = dims[0];
        if (j->start > dims[0])
            rc = h5pack_errf(H5PACK_EINVAL, j->err, j->err_len, "%s: \"%s\" has %llu rows, start %llu is past them",
                             j->path, j->dataset, (unsigned long long)dims[0], (unsigned long long)j->start);
        else {
            j->count = j->count < dims[0] - j->start ? j->count : dims[0] - j->start;
            rc = read_rows(j, dset, space, ftype);
        }
    }
    if (ftype >= 0)
        H5Tclose(ftype);
    if (space >= 0)
        H5Sclose(space);
    if (dset >= 0)
        H5Dclose(dset);
    return rc;
}

/* An older-format file goes through the reader's probe first: HDF5 1.10.8 may crash on its damage. */
static int probe_if_old(store *st, const char *path, char *err, size_t err_len)
{
    int version = h5pack_store_superblock_version(st);
    if (version < 0 || version >= 2)
        return H5PACK_OK;
    chunk_source *src = NULL;
    int rc = h5pack_chunksrc_open(path, H5PACK_DS_IMAGES, NULL, H5PACK_LAYOUT_AUTO, &src, err, err_len);
    h5pack_chunksrc_close(src);
    /* Only a probe that failed hard (ECORRUPT: HDF5 crashed or hung on the metadata) stops us: a file the
     * chunk source refuses for its images (no images, an ambiguous layout) has metadata HDF5 reads. */
    return rc == H5PACK_ECORRUPT ? rc : H5PACK_OK;
}

H5PACK_API int h5pack_read_strings(const char *path, const char *dataset, uint64_t start, uint64_t count, char *out,
                                   size_t out_len, uint64_t *rows, size_t *needed, char *err, size_t err_len)
{
    if (err && err_len)
        err[0] = '\0';
    if (!path || !dataset || !rows || !needed)
        return h5pack_errf(H5PACK_EINVAL, err, err_len, "h5pack_read_strings: path, dataset, rows and needed are required");
    *rows = 0, *needed = 0;
    strings_job j = {.path = path, .dataset = dataset, .start = start, .count = count, .err = err, .err_len = err_len};
    store *st = NULL;
    int rc = h5pack_store_open(path, &st, err, err_len);
    if (rc == H5PACK_OK && !h5pack_store_is_hdf5(st))
        rc = h5pack_errf(H5PACK_EFORMAT, err, err_len, "%s: not an HDF5 file", path);
    if (rc == H5PACK_OK)
        rc = probe_if_old(st, path, err, err_len);
    if (rc != H5PACK_OK) {
        h5pack_store_close(st);
        return rc;
    }
    h5pack_h5_quiet q;
    h5pack_h5_enter(&q);
    hid_t file = h5pack_store_h5_open(st);
    if (file < 0) {
        rc = h5pack_errf(H5PACK_EFORMAT, err, err_len, "%s: HDF5 cannot open the file", path);
    } else {
        j.out = out, j.out_len = out ? out_len : 0; /* one pass: copies what fits, counts everything */
        rc = read_dataset(&j, file, rows);
        H5Fclose(file);
    }
    h5pack_h5_leave(&q);
    h5pack_store_close(st);
    *needed = j.needed;
    return rc;
}
