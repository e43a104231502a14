/* file_strings.c - h5pack_read_strings(): a one-dimensional string dataset of a file (classes, filenames,
 * label_names) as packed NUL-terminated strings, for bindings and programs without an HDF5 library of
 * their own. The file is opened through the store layer (any location the reader takes), under the
 * process's HDF5 lock with HDF5's error printing off (h5pack_h5_enter). Rows are read in blocks of
 * ROWS_PER_BLOCK (each block's variable-length strings reclaimed before the next), so 1.28M file names
 * never sit in HDF5's memory at once.
 *
 * Damaged files (isolate.h): HDF5 1.10.8 can crash on what carries no checksum, which is the metadata of
 * old-format files (h5py's default) and, in every format, the global heap that holds variable-length
 * strings and the heap references in the dataset's rows. So those reads run in the helper process
 * (h5pack-isolate), which streams the strings back through a pipe: old-format files always, latest-format
 * files (h5pack's) when variable-length rows are read. Fixed-length rows of a latest-format file, and row
 * counts, are read here. H5PACK_PROBE=always|never overrides, as for the reader's open.
 *
 * The job "strings": arguments LOCATION SIZE DATASET START COUNT OUT_LEN (0: only measure); reply: frames
 * of the rows' bytes, then a strings_reply. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "errtext.h"
#include "h5glue.h"
#include "h5pack.h"
#include "isolate.h"
#include "store.h"
#include "store_h5.h"

#define ROWS_PER_BLOCK 4096
#define STAGE_BYTES 65536            /* the helper sends the strings in frames of at most this many bytes */
#define REPLY_MAGIC 0x68357273u      /* "h5rs" */
#define NO_HELPER 1                  /* read_isolated: no helper could be run (never an h5pack code) */

/* The helper's frames: a header, then LEN bytes. */
enum { FRAME_BEAT = 'b', FRAME_DATA = 'd', FRAME_END = 'e' };
typedef struct frame {
    uint32_t kind, len;
} frame;

/* The helper's last frame: what the call returns. */
typedef struct strings_reply {
    uint32_t magic;
    int32_t rc;
    uint64_t rows, needed;
    char err[1024];
} strings_reply;

typedef struct strings_job {
    const char *path, *dataset;
    uint64_t start, count;  /* rows asked (count clipped to the dataset once its rows are known) */
    char *out;              /* where the rows go (in the helper NULL: they go to the pipe) */
    size_t out_len, needed; /* out_len 0: only measure; needed: bytes of the asked rows with their NULs */
    uint64_t rows;          /* the dataset's rows */
    char *err;
    size_t err_len;
    int vlen_here;          /* 1: variable-length rows may be read in this process */
    int vlen_later;         /* set when they were not: the helper reads them */
    store *st;              /* the file's bytes */
    /* in the helper: the pipe to the caller's process, and OUT's bytes not sent yet */
    int fd;
    char *stage;
    size_t staged;
    int broken;             /* the pipe failed: the caller's process is gone or gave up */
    /* in the caller's process: OUT's bytes received from the helper, and its reply */
    size_t got;
    strings_reply reply;
} strings_job;

/* ---- output ---------------------------------------------------------------------------------------- */

static void send_frame(strings_job *j, uint32_t kind, const void *data, uint32_t len)
{
    frame f = {kind, len};
    if (!j->broken && (h5pack_isolate_write(j->fd, &f, sizeof f) != 0 ||
                       (len && h5pack_isolate_write(j->fd, data, len) != 0)))
        j->broken = 1;
}

/* In the helper: sends what is staged (or, with nothing staged, a beat: the waiting side's limit is on
 * silence). */
static void flush_stage(strings_job *j)
{
    if (j->fd < 0)
        return;
    send_frame(j, j->staged ? FRAME_DATA : FRAME_BEAT, j->stage, (uint32_t)j->staged);
    j->staged = 0;
}

static void put_bytes(strings_job *j, const char *s, size_t len)
{
    if (j->fd < 0) {
        memcpy(j->out + j->needed, s, len);
        return;
    }
    while (len > 0) {
        size_t n = STAGE_BYTES - j->staged < len ? STAGE_BYTES - j->staged : len;
        memcpy(j->stage + j->staged, s, n);
        j->staged += n, s += n, len -= n;
        if (j->staged == STAGE_BYTES)
            flush_stage(j);
    }
}

/* Appends S (LEN bytes, no NUL needed) and a NUL to the output while it fits in OUT_LEN, counting the
 * bytes either way: a too-small OUT is filled with whole rows only, and nothing is written past it. */
static void append(strings_job *j, const char *s, size_t len)
{
    if (j->needed + len + 1 <= j->out_len) {
        put_bytes(j, s, len);
        j->needed += len;
        put_bytes(j, "", 1);
        j->needed += 1;
    } else {
        j->needed += len + 1;
    }
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

/* ---- HDF5 (every call inside h5pack_h5_enter / _leave) --------------------------------------------- */

static int fail_read(strings_job *j, hsize_t first, hsize_t rows)
{
    char h5msg[600];
    int io = h5pack_h5_error_is_io();
    h5pack_h5_error_text(h5msg, sizeof h5msg);
    return h5pack_errf(io ? H5PACK_EIO : H5PACK_ECORRUPT, j->err, j->err_len,
                       "%s: \"%s\": cannot read rows %llu..%llu (HDF5: %s)", j->path, j->dataset,
                       (unsigned long long)first, (unsigned long long)(first + rows - 1), h5msg);
}

static int read_block_vlen(strings_job *j, hid_t dset, hid_t space, hid_t mem_type, hsize_t first, hsize_t rows)
{
    char **strs = calloc(rows, sizeof *strs);
    hid_t mspace = H5Screate_simple(1, &rows, NULL);
    int rc = H5PACK_OK;
    if (!strs || mspace < 0)
        rc = h5pack_errf(H5PACK_ENOMEM, j->err, j->err_len, "%s: \"%s\": out of memory", j->path, j->dataset);
    else if (H5Sselect_hyperslab(space, H5S_SELECT_SET, &first, NULL, &rows, NULL) < 0 ||
             H5Dread(dset, mem_type, mspace, space, H5P_DEFAULT, strs) < 0)
        rc = fail_read(j, first, rows);
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
        rc = h5pack_errf(H5PACK_ENOMEM, j->err, j->err_len, "%s: \"%s\": out of memory for %llu rows of %zu bytes",
                         j->path, j->dataset, (unsigned long long)rows, size);
    else if (H5Sselect_hyperslab(space, H5S_SELECT_SET, &first, NULL, &rows, NULL) < 0 ||
             H5Dread(dset, mem_type, mspace, space, H5P_DEFAULT, buf) < 0)
        rc = fail_read(j, first, rows);
    else
        for (hsize_t i = 0; i < rows; i++)
            append(j, buf + i * size, unpadded(buf + i * size, size, pad));
    if (mspace >= 0)
        H5Sclose(mspace);
    free(buf);
    return rc;
}

/* Reads the asked rows of the open string dataset DSET (file type FTYPE) block by block. */
static int read_rows(strings_job *j, hid_t dset, hid_t space, hid_t ftype, int vlen)
{
    size_t size = vlen ? 0 : H5Tget_size(ftype);
    H5T_str_t pad = H5Tget_strpad(ftype);
    H5T_cset_t cset = H5Tget_cset(ftype);
    hid_t mem_type = H5Tcopy(H5T_C_S1);
    if (mem_type < 0 || (!vlen && size == 0) || cset < 0 || H5Tset_size(mem_type, vlen ? H5T_VARIABLE : size) < 0 ||
        H5Tset_cset(mem_type, cset) < 0 || (!vlen && (pad < 0 || H5Tset_strpad(mem_type, pad) < 0))) {
        if (mem_type >= 0)
            H5Tclose(mem_type);
        return h5pack_errf(H5PACK_EFORMAT, j->err, j->err_len, "%s: \"%s\": unusable string type", j->path,
                           j->dataset);
    }
    int rc = H5PACK_OK;
    for (uint64_t done = 0; rc == H5PACK_OK && done < j->count; done += ROWS_PER_BLOCK) {
        hsize_t rows = j->count - done < ROWS_PER_BLOCK ? j->count - done : ROWS_PER_BLOCK;
        rc = vlen ? read_block_vlen(j, dset, space, mem_type, j->start + done, rows)
                  : read_block_fixed(j, dset, space, mem_type, size, pad, j->start + done, rows);
        flush_stage(j);
    }
    H5Tclose(mem_type);
    return rc;
}

/* DSET checked to be one-dimensional strings, its rows in j->rows, the window checked, the rows read
 * (or, variable-length ones where they may not be read here, j->vlen_later set). */
static int read_dataset(strings_job *j, hid_t dset)
{
    hid_t space = H5Dget_space(dset), ftype = H5Dget_type(dset);
    hsize_t dims[1] = {0};
    int rc = H5PACK_OK, vlen = 0;
    if (space < 0 || ftype < 0)
        rc = h5pack_errf(H5PACK_ECORRUPT, j->err, j->err_len, "%s: \"%s\": cannot read its type and shape", j->path,
                         j->dataset);
    else if (H5Tget_class(ftype) != H5T_STRING || H5Sget_simple_extent_type(space) != H5S_SIMPLE ||
             H5Sget_simple_extent_ndims(space) != 1) {
        char type[64], shape[64] = "()";
        hsize_t d[H5S_MAX_RANK];
        int rank = H5Sget_simple_extent_dims(space, d, NULL);
        h5pack_h5_type_name(ftype, type, sizeof type);
        if (rank > 0)
            h5pack_h5_dims_text(d, rank, shape, sizeof shape);
        rc = h5pack_errf(H5PACK_EFORMAT, j->err, j->err_len,
                         "%s: \"%s\" is not a one-dimensional string dataset (it holds %s %s)", j->path, j->dataset,
                         type, shape);
    } else if (H5Sget_simple_extent_dims(space, dims, NULL) != 1 || (vlen = H5Tis_variable_str(ftype)) < 0)
        rc = h5pack_errf(H5PACK_ECORRUPT, j->err, j->err_len, "%s: \"%s\": cannot read its shape", j->path, j->dataset);
    if (rc == H5PACK_OK) {
        j->rows = dims[0];
        if (j->start > dims[0])
            rc = h5pack_errf(H5PACK_EINVAL, j->err, j->err_len, "%s: \"%s\" has %llu rows: start %llu is past them",
                             j->path, j->dataset, (unsigned long long)dims[0], (unsigned long long)j->start);
        else {
            j->count = j->count < dims[0] - j->start ? j->count : dims[0] - j->start;
            if (vlen && j->count > 0 && !j->vlen_here)
                j->vlen_later = 1;
            else
                rc = read_rows(j, dset, space, ftype, vlen);
        }
    }
    if (ftype >= 0)
        H5Tclose(ftype);
    if (space >= 0)
        H5Sclose(space);
    return rc;
}

static int read_file(strings_job *j, hid_t file)
{
    if (!h5pack_h5_path_exists(file, j->dataset)) /* "no dataset": the Python binding's None */
        return h5pack_errf(H5PACK_ENOTFOUND, j->err, j->err_len, "%s: no dataset \"%s\"", j->path, j->dataset);
    hid_t obj = H5Oopen(file, j->dataset, H5P_DEFAULT);
    if (obj < 0) {
        char h5msg[600];
        h5pack_h5_error_text(h5msg, sizeof h5msg);
        return h5pack_errf(H5PACK_ECORRUPT, j->err, j->err_len, "%s: cannot open \"%s\" (HDF5: %s)", j->path,
                           j->dataset, h5msg);
    }
    int rc = H5Iget_type(obj) == H5I_DATASET
                 ? read_dataset(j, obj)
                 : h5pack_errf(H5PACK_EFORMAT, j->err, j->err_len,
                               "%s: \"%s\" is not a dataset (a group or a named type): a one-dimensional string "
                               "dataset was asked for", j->path, j->dataset);
    H5Oclose(obj);
    return rc;
}

/* The whole read through HDF5 in this process (or the helper), under the lock. */
static int read_here(strings_job *j)
{
    h5pack_h5_quiet q;
    h5pack_h5_enter(&q);
    int rc;
    hid_t file = h5pack_store_h5_open(j->st);
    if (file < 0) {
        char h5msg[600];
        h5pack_h5_error_text(h5msg, sizeof h5msg);
        if (strstr(h5msg, "unable to lock"))
            rc = h5pack_errf(H5PACK_EIO, j->err, j->err_len,
                             "%s: cannot open: the file is locked (HDF5 file locking: a writer has it open); close "
                             "the writer, or set HDF5_USE_FILE_LOCKING=FALSE if nothing writes it (HDF5: %s)",
                             j->path, h5msg);
        else
            rc = h5pack_errf(H5PACK_ECORRUPT, j->err, j->err_len,
                             "%s: cannot open as HDF5 (truncated or damaged?) (HDF5: %s)", j->path, h5msg);
    } else {
        rc = read_file(j, file);
        H5Fclose(file);
    }
    h5pack_h5_leave(&q);
    return rc;
}

/* ---- in the helper (isolate.h) ---------------------------------------------------------------------- */

/* The read of J (its store open, or failed to open with R's result) streamed to FD. */
static void serve(strings_job *j, int fd, strings_reply *r)
{
    j->fd = fd, j->err = r->err, j->err_len = sizeof r->err, j->vlen_here = 1, j->needed = 0;
    j->stage = j->out_len ? malloc(STAGE_BYTES) : NULL;
    if (r->rc == H5PACK_OK && j->out_len && !j->stage)
        r->rc = h5pack_errf(H5PACK_ENOMEM, r->err, sizeof r->err, "%s: out of memory", j->path);
    else if (r->rc == H5PACK_OK)
        r->rc = read_here(j);
    flush_stage(j);
    r->rows = j->rows, r->needed = j->needed;
    send_frame(j, FRAME_END, r, sizeof *r);
}

void h5pack_read_strings_job(int fd, int n, char **args)
{
    if (n != 6)
        _exit(2);
    strings_job j = {.path = args[0], .dataset = args[2], .start = h5pack_isolate_arg_u64(args[3]),
                     .count = h5pack_isolate_arg_u64(args[4]), .out_len = (size_t)h5pack_isolate_arg_u64(args[5])};
    strings_reply r;
    memset(&r, 0, sizeof r);
    r.magic = REPLY_MAGIC;
    r.rc = h5pack_isolate_open_store(j.path, args[1], &j.st, r.err, sizeof r.err);
    serve(&j, fd, &r);
}

/* 1: the whole reply arrived (OUT's bytes in place, the result in j->reply); 0: it ended early or broke
 * the protocol; -2: the helper fell silent. */
static int strings_parent(int fd, int silence_ms, void *ctx)
{
    strings_job *j = ctx;
    for (;;) {
        frame f;
        size_t got;
        int rc = h5pack_isolate_read(fd, &f, sizeof f, &got, silence_ms);
        if (rc || got != sizeof f)
            return rc == -2 ? -2 : 0;
        if (f.kind == FRAME_BEAT && f.len == 0)
            continue;
        if (f.kind == FRAME_DATA && j->out && f.len <= j->out_len - j->got) {
            rc = h5pack_isolate_read(fd, j->out + j->got, f.len, &got, silence_ms);
            j->got += got;
        } else if (f.kind == FRAME_END && f.len == sizeof j->reply) {
            rc = h5pack_isolate_read(fd, &j->reply, sizeof j->reply, &got, silence_ms);
            if (rc == 0 && got == sizeof j->reply && j->reply.magic == REPLY_MAGIC) {
                j->reply.err[sizeof j->reply.err - 1] = '\0';
                return 1;
            }
        } else
            return 0;
        if (rc || got != f.len)
            return rc == -2 ? -2 : 0;
    }
}

/* The whole read in the helper: its strings into OUT, its result as the call's. Returns NO_HELPER when
 * no helper could be run (the caller reads here). */
static int read_isolated(strings_job *j)
{
    char size[24], start[24], count[24], out_len[24];
    snprintf(size, sizeof size, "%llu", (unsigned long long)j->st->size);
    snprintf(start, sizeof start, "%llu", (unsigned long long)j->start);
    snprintf(count, sizeof count, "%llu", (unsigned long long)j->count);
    snprintf(out_len, sizeof out_len, "%zu", j->out_len);
    const char *args[] = {"strings", j->path, size, j->dataset, start, count, out_len, NULL};
    j->needed = 0, j->vlen_later = 0, j->got = 0;
    int rc = h5pack_isolate_run(j->path, "reading the strings", args, strings_parent, j, j->err, j->err_len);
    if (rc != 0)
        return rc == 1 ? NO_HELPER : rc;
    if (j->reply.rc != H5PACK_OK && j->err && j->err_len)
        snprintf(j->err, j->err_len, "%s", j->reply.err);
    j->rows = j->reply.rows, j->needed = (size_t)j->reply.needed;
    if (j->reply.rc == H5PACK_OK && j->out && j->needed <= j->out_len && j->got != j->needed)
        return h5pack_errf(H5PACK_EINTERNAL, j->err, j->err_len, "%s: \"%s\": %zu of %zu bytes came back from the "
                           "reading process", j->path, j->dataset, j->got, j->needed);
    return j->reply.rc;
}

H5PACK_API int h5pack_read_strings(const char *path, const char *dataset, uint64_t start, uint64_t count, char *out,
                                   size_t out_len, uint64_t *rows, size_t *needed, char *err, size_t err_len)
{
    if (err && err_len)
        err[0] = '\0';
    if (!path || !dataset || !rows || !needed)
        return h5pack_errf(H5PACK_EINVAL, err, err_len, "h5pack_read_strings: path, dataset, rows and needed are required");
    *rows = 0, *needed = 0;
    strings_job j = {.path = path, .dataset = dataset, .start = start, .count = count, .out = out,
                     .out_len = out ? out_len : 0, .err = err, .err_len = err_len, .fd = -1};
    store *st = NULL;
    int rc = h5pack_store_open(path, &st, err, err_len);
    int is_h5 = rc == H5PACK_OK ? h5pack_store_is_hdf5(st) : 1;
    if (is_h5 == 0)
        rc = h5pack_errf(H5PACK_EFORMAT, err, err_len, "%s: not an HDF5 file (no HDF5 signature in its %llu bytes)",
                         path, (unsigned long long)st->size);
    else if (is_h5 < 0)
        rc = h5pack_errf(H5PACK_EIO, err, err_len, "%s: cannot read the HDF5 signature", path);
    if (rc != H5PACK_OK) {
        h5pack_store_close(st);
        return rc;
    }
    j.st = st;
    j.vlen_here = h5pack_isolate_setting() < 0; /* H5PACK_PROBE=never: everything here */
    int isolate = h5pack_isolate_wanted(st);
    if (!isolate) {
        rc = read_here(&j);
        isolate = rc == H5PACK_OK && j.vlen_later; /* the metadata was safe here, the heap is not */
    }
    if (isolate) {
        j.count = count;
        rc = read_isolated(&j);
        if (rc == NO_HELPER) { /* as with H5PACK_PROBE=never */
            j.count = count, j.needed = 0, j.vlen_here = 1, j.fd = -1;
            rc = read_here(&j);
        }
    }
    h5pack_store_close(st);
    *rows = j.rows;
    *needed = rc == H5PACK_OK ? j.needed : 0;
    return rc;
}
