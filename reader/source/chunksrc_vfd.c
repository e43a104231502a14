/* chunksrc_vfd.c - a read-only HDF5 file driver that passes everything to sec2, except that it can
 * "capture" raw-data reads: it records their address and size instead of reading.
 *
 * Why: HDF5 1.10.8 has no cheap way to ask where a chunk is (H5Dget_chunk_info_by_coord walks the whole
 * index: O(n) per call, O(n^2) for all chunks; H5Dchunk_iter arrived in 1.10.10). But H5Dread_chunk finds
 * a chunk through the index in O(1) (fixed/extensible array) or O(log n) (B-tree) and then reads exactly
 * the chunk's bytes through the file driver. With capture on, that read is recorded, not done: every
 * chunk's address is learnt in O(n) without reading any image data, and workers can then pread the
 * compressed chunks outside HDF5's lock. Metadata reads always go through. */
#include <pthread.h>
#include <sys/types.h>
#include <stdlib.h>
#include <string.h>

#include "chunksrc_impl.h"

typedef struct capture_file {
    H5FD_t pub; /* must be first: HDF5 fills it */
    H5FD_t *inner;
    int capturing;
    unsigned draw_reads; /* raw-data reads seen while capturing */
    haddr_t last_addr;
    size_t last_size;
} capture_file;

static H5FD_t *cap_open(const char *name, unsigned flags, hid_t fapl, haddr_t maxaddr)
{
    (void)fapl;
    if (flags & (H5F_ACC_RDWR | H5F_ACC_CREAT | H5F_ACC_TRUNC))
        return NULL; /* read-only driver */
    hid_t inner_fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (inner_fapl < 0)
        return NULL;
    capture_file *f = NULL;
    if (H5Pset_fapl_sec2(inner_fapl) >= 0 && (f = calloc(1, sizeof *f)) != NULL) {
        f->inner = H5FDopen(name, flags, inner_fapl, maxaddr);
        if (!f->inner) {
            free(f);
            f = NULL;
        }
    }
    H5Pclose(inner_fapl);
    return f ? &f->pub : NULL;
}

static herr_t cap_close(H5FD_t *file)
{
    capture_file *f = (capture_file *)file;
    herr_t rc = H5FDclose(f->inner);
    free(f);
    return rc;
}

static int cap_cmp(const H5FD_t *a, const H5FD_t *b)
{
    return H5FDcmp(((const capture_file *)a)->inner, ((const capture_file *)b)->inner);
}

static herr_t cap_query(const H5FD_t *file, unsigned long *flags)
{
    (void)file;
    /* What sec2 offers for reading, minus the claims about a POSIX handle (ours is not an fd). */
    *flags = H5FD_FEAT_AGGREGATE_METADATA | H5FD_FEAT_ACCUMULATE_METADATA | H5FD_FEAT_DATA_SIEVE |
             H5FD_FEAT_AGGREGATE_SMALLDATA;
    return 0;
}

static haddr_t cap_get_eoa(const H5FD_t *file, H5FD_mem_t type)
{
    return H5FDget_eoa(((const capture_file *)file)->inner, type);
}

static herr_t cap_set_eoa(H5FD_t *file, H5FD_mem_t type, haddr_t addr)
{
    return H5FDset_eoa(((capture_file *)file)->inner, type, addr);
}

static haddr_t cap_get_eof(const H5FD_t *file, H5FD_mem_t type)
{
    return H5FDget_eof(((const capture_file *)file)->inner, type);
}

/* The handle is the driver's own file: chunksrc_vfd_capture() finds its state through it. */
static herr_t cap_get_handle(H5FD_t *file, hid_t fapl, void **handle)
{
    (void)fapl;
    *handle = file;
    return 0;
}

static herr_t cap_read(H5FD_t *file, H5FD_mem_t type, hid_t dxpl, haddr_t addr, size_t size, void *buf)
{
    capture_file *f = (capture_file *)file;
    if (f->capturing && type == H5FD_MEM_DRAW) {
        f->draw_reads++;
        f->last_addr = addr;
        f->last_size = size;
        return 0;
    }
    return H5FDread(f->inner, type, dxpl, addr, size, buf);
}

static herr_t cap_write(H5FD_t *file, H5FD_mem_t type, hid_t dxpl, haddr_t addr, size_t size, const void *buf)
{
    (void)file, (void)type, (void)dxpl, (void)addr, (void)size, (void)buf;
    return -1;
}

static herr_t cap_truncate(H5FD_t *file, hid_t dxpl, hbool_t closing)
{
    (void)file, (void)dxpl, (void)closing;
    return 0;
}

static herr_t cap_lock(H5FD_t *file, hbool_t rw)
{
    return H5FDlock(((capture_file *)file)->inner, rw);
}

static herr_t cap_unlock(H5FD_t *file)
{
    return H5FDunlock(((capture_file *)file)->inner);
}

static const H5FD_class_t capture_class = {
    "h5pack_capture", /* name */
    (haddr_t)(((uint64_t)1 << (8 * sizeof(off_t) - 1)) - 1), /* maxaddr: sec2's, it is passed on */
    H5F_CLOSE_WEAK,   /* fc_degree */
    NULL,             /* terminate */
    NULL, NULL, NULL, /* sb_size, sb_encode, sb_decode */
    0, NULL, NULL, NULL, /* fapl_size, fapl_get, fapl_copy, fapl_free */
    0, NULL, NULL,    /* dxpl_size, dxpl_copy, dxpl_free */
    cap_open, cap_close, cap_cmp, cap_query,
    NULL,             /* get_type_map */
    NULL, NULL,       /* alloc, free: never called read-only */
    cap_get_eoa, cap_set_eoa, cap_get_eof, cap_get_handle, cap_read, cap_write,
    NULL,             /* flush */
    cap_truncate, cap_lock, cap_unlock,
    H5FD_FLMAP_DICHOTOMY,
};

static pthread_once_t g_register_once = PTHREAD_ONCE_INIT;
static hid_t g_driver = -1;

static void register_driver(void)
{
    g_driver = H5FDregister(&capture_class);
}

hid_t h5pack_chunksrc_vfd_fapl(void)
{
    pthread_once(&g_register_once, register_driver);
    if (g_driver < 0)
        return -1;
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl >= 0 && H5Pset_driver(fapl, g_driver, NULL) < 0) {
        H5Pclose(fapl);
        return -1;
    }
    return fapl;
}

static capture_file *capture_state(hid_t file)
{
    void *handle = NULL;
    if (g_driver < 0 || H5Fget_vfd_handle(file, H5P_DEFAULT, &handle) < 0 || !handle)
        return NULL;
    H5FD_t *fd = handle;
    return fd->driver_id == g_driver ? (capture_file *)fd : NULL;
}

int h5pack_chunksrc_vfd_locate_chunk(hid_t file, hid_t dset, const hsize_t *offset, uint64_t *addr, uint64_t *size,
                              uint32_t *filter_mask)
{
    capture_file *f = capture_state(file);
    unsigned char never_written;
    if (!f)
        return -2;
    f->capturing = 1;
    f->draw_reads = 0;
    herr_t rc = H5Dread_chunk(dset, H5P_DEFAULT, offset, filter_mask, &never_written);
    f->capturing = 0;
    if (rc < 0 || f->draw_reads != 1)
        return -1;
    *addr = f->last_addr;
    *size = f->last_size;
    return 0;
}
