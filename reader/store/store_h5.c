/* store_h5.c - HDF5 over a store: a read-only HDF5 file driver whose every read goes to a store (so HDF5
 * reads the metadata of any kind of store the same way), and which can "capture" raw-data reads: record
 * their address and size instead of reading.
 *
 * Why capture: HDF5 1.10.8 has no cheap way to ask where a chunk is (H5Dget_chunk_info_by_coord walks the
 * whole index: O(n) per call, O(n^2) for all chunks; H5Dchunk_iter arrived in 1.10.10). But H5Dread_chunk
 * finds a chunk through the index in O(1) (fixed/extensible array) or O(log n) (B-tree) and then reads
 * exactly the chunk's bytes through the file driver. With capture on, that read is recorded, not done:
 * every chunk's address is learnt in O(n) without reading any image data (stored_locate.c), and workers
 * then read the stored chunks from the store outside HDF5's lock. Metadata reads always go through. */
#include "store_h5.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct store_fapl_info {
    store *s;
} store_fapl_info;

typedef struct store_h5_file {
    H5FD_t pub; /* first: HDF5 fills it */
    store *s;
    haddr_t eoa;
    int locked;
    int capturing;
    unsigned draw_reads; /* raw-data reads seen while capturing */
    haddr_t last_addr;
    size_t last_size;
} store_h5_file;

static hid_t g_driver = -1;

static void *info_copy(const void *info)
{
    store_fapl_info *c = malloc(sizeof *c);
    if (c)
        memcpy(c, info, sizeof *c);
    return c;
}

static herr_t info_free(void *info)
{
    free(info);
    return 0;
}

static void *info_get(H5FD_t *file)
{
    store_fapl_info info = {((store_h5_file *)file)->s};
    return info_copy(&info);
}

static H5FD_t *sh_open(const char *name, unsigned flags, hid_t fapl, haddr_t maxaddr)
{
    (void)name, (void)maxaddr;
    const store_fapl_info *info = H5Pget_driver_info(fapl);
    if ((flags & (H5F_ACC_RDWR | H5F_ACC_CREAT | H5F_ACC_TRUNC)) || !info || !info->s)
        return NULL; /* read-only, and only over a store */
    store_h5_file *f = calloc(1, sizeof *f);
    if (f)
        f->s = info->s;
    return f ? &f->pub : NULL;
}

static herr_t sh_unlock(H5FD_t *file)
{
    store_h5_file *f = (store_h5_file *)file;
    if (f->locked && f->s->ops->unlock)
        f->s->ops->unlock(f->s);
    f->locked = 0;
    return 0;
}

static herr_t sh_close(H5FD_t *file)
{
    sh_unlock(file); /* the store outlives HDF5's use of it: its lock must not */
    free(file);
    return 0;
}

static int sh_cmp(const H5FD_t *a, const H5FD_t *b)
{
    const store *sa = ((const store_h5_file *)a)->s, *sb = ((const store_h5_file *)b)->s;
    return sa < sb ? -1 : sa > sb;
}

static herr_t sh_query(const H5FD_t *file, unsigned long *flags)
{
    (void)file;
    *flags = H5FD_FEAT_AGGREGATE_METADATA | H5FD_FEAT_ACCUMULATE_METADATA | H5FD_FEAT_DATA_SIEVE |
             H5FD_FEAT_AGGREGATE_SMALLDATA;
    return 0;
}

static haddr_t sh_get_eoa(const H5FD_t *file, H5FD_mem_t type)
{
    (void)type;
    return ((const store_h5_file *)file)->eoa;
}

static herr_t sh_set_eoa(H5FD_t *file, H5FD_mem_t type, haddr_t addr)
{
    (void)type;
    ((store_h5_file *)file)->eoa = addr;
    return 0;
}

static haddr_t sh_get_eof(const H5FD_t *file, H5FD_mem_t type)
{
    (void)type;
    return (haddr_t)((const store_h5_file *)file)->s->size;
}

/* The handle is the driver's own file: capture_state() finds its state through it. */
static herr_t sh_get_handle(H5FD_t *file, hid_t fapl, void **handle)
{
    (void)fapl;
    *handle = file;
    return 0;
}

/* As HDF5's own drivers read: what lies past the end of the object reads as zeros (HDF5 may ask for a
 * speculative block at the end). A failed read puts the store's reason on HDF5's error stack as an I/O
 * error, so messages carry it and h5pack_h5_error_is_io() sees it. */
static herr_t sh_read(H5FD_t *file, H5FD_mem_t type, hid_t dxpl, haddr_t addr, size_t size, void *buf)
{
    (void)dxpl;
    store_h5_file *f = (store_h5_file *)file;
    if (f->capturing && type == H5FD_MEM_DRAW) {
        f->draw_reads++;
        f->last_addr = addr;
        f->last_size = size;
        return 0;
    }
    uint64_t end = f->s->size, have = addr >= end ? 0 : end - addr < size ? end - addr : size;
    char why[256] = "";
    int (*rd)(store *, uint64_t, void *, size_t, char *, size_t) =
        type != H5FD_MEM_DRAW && f->s->ops->read_meta ? f->s->ops->read_meta : f->s->ops->read;
    if (have && rd(f->s, addr, buf, (size_t)have, why, sizeof why) != 0) {
        H5Epush2(H5E_DEFAULT, __FILE__, __func__, __LINE__, H5E_ERR_CLS, H5E_IO, H5E_READERROR, "%s", why);
        return -1;
    }
    memset((uint8_t *)buf + have, 0, size - (size_t)have);
    return 0;
}

static herr_t sh_write(H5FD_t *file, H5FD_mem_t type, hid_t dxpl, haddr_t addr, size_t size, const void *buf)
{
    (void)file, (void)type, (void)dxpl, (void)addr, (void)size, (void)buf;
    return -1;
}

static herr_t sh_truncate(H5FD_t *file, hid_t dxpl, hbool_t closing)
{
    (void)file, (void)dxpl, (void)closing;
    return 0;
}

static herr_t sh_lock(H5FD_t *file, hbool_t rw)
{
    store_h5_file *f = (store_h5_file *)file;
    if (rw || !f->s->ops->lock)
        return rw ? -1 : 0;
    if (f->s->ops->lock(f->s) != 0) {
        H5Epush2(H5E_DEFAULT, __FILE__, __func__, __LINE__, H5E_ERR_CLS, H5E_VFL, H5E_CANTLOCKFILE,
                 "unable to lock file: another process or handle holds it for writing");
        return -1;
    }
    f->locked = 1;
    return 0;
}

static const H5FD_class_t store_h5_class = {
    "h5pack_store",   /* name */
    (haddr_t)(((uint64_t)1 << 63) - 1), /* maxaddr */
    H5F_CLOSE_WEAK,   /* fc_degree */
    NULL,             /* terminate */
    NULL, NULL, NULL, /* sb_size, sb_encode, sb_decode */
    sizeof(store_fapl_info), info_get, info_copy, info_free,
    0, NULL, NULL,    /* dxpl_size, dxpl_copy, dxpl_free */
    sh_open, sh_close, sh_cmp, sh_query,
    NULL,             /* get_type_map */
    NULL, NULL,       /* alloc, free: never called read-only */
    sh_get_eoa, sh_set_eoa, sh_get_eof, sh_get_handle, sh_read, sh_write,
    NULL,             /* flush */
    sh_truncate, sh_lock, sh_unlock,
    H5FD_FLMAP_DICHOTOMY,
};

static pthread_once_t g_register_once = PTHREAD_ONCE_INIT;

static void register_driver(void)
{
    g_driver = H5FDregister(&store_h5_class);
}

hid_t h5pack_store_h5_open(store *s)
{
    pthread_once(&g_register_once, register_driver);
    if (g_driver < 0)
        return -1;
    store_fapl_info info = {s};
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS), file = -1;
    if (fapl >= 0 && H5Pset_driver(fapl, g_driver, &info) >= 0)
        file = H5Fopen(s->location, H5F_ACC_RDONLY, fapl);
    if (fapl >= 0) { /* the error stack of a failed open is the caller's to read: H5Pclose would clear it */
        hid_t stack = H5Eget_current_stack();
        H5Pclose(fapl);
        if (stack >= 0)
            H5Eset_current_stack(stack);
    }
    return file;
}

static store_h5_file *capture_state(hid_t file)
{
    void *handle = NULL;
    if (g_driver < 0 || H5Fget_vfd_handle(file, H5P_DEFAULT, &handle) < 0 || !handle)
        return NULL;
    H5FD_t *fd = handle;
    return fd->driver_id == g_driver ? (store_h5_file *)fd : NULL;
}

int h5pack_store_h5_locate(hid_t file, hid_t dset, const hsize_t *offset, uint64_t *addr, uint64_t *size,
                           uint32_t *filter_mask)
{
    store_h5_file *f = capture_state(file);
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
