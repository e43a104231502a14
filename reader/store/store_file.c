/* store_file.c - the local file store: pread, and views into a read-only map of the whole file.
 *
 * Views: a mapped page beyond the end of the file raises SIGBUS when touched. The map covers the file as
 * it was at open, and a view first populates its pages (MADV_POPULATE_READ: the page cache lookups and
 * faults happen there, in the loading thread, the pixels untouched); that fails with EFAULT where a touch
 * would raise SIGBUS (the file was truncated since), and the caller then reads instead, which reports it.
 * A truncation after the populate (a batch copied later from a cache slot) raises SIGBUS when the copy
 * touches the lost pages: the map is guarded (map_guard.h), the copy reads zeros and the file counts as
 * changed, which h5pack_store_check reports. A kernel without MADV_POPULATE_READ (before 5.14) could not
 * report it: no map there. H5PACK_NO_MMAP=1: no map.
 *
 * Changes after open: each check compares the file's size and modification time with those at open, so
 * a file truncated, rewritten in place (cp over it) or appended to is an error, not pixels of another
 * file. A file replaced by a rename is not a change: the open descriptor keeps reading the old one. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "env.h"
#include "errtext.h"
#include "h5pack.h"
#include "map_guard.h"
#include "view_budget.h"
#include "store_list.h"

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22 /* Linux 5.14 */
#endif

typedef struct file_store {
    store base; /* first: the store API sees this */
    int fd;
    const uint8_t *map; /* the whole file, or NULL */
    int guard;          /* the map's (map_guard.h), -1 without */
    struct timespec mtime; /* at open */
    view_budget views;     /* what the lent views may hold resident (view_budget.h) */
} file_store;

static const char *path_of(const char *location)
{
    return strncmp(location, "file://", 7) ? location : location + 7;
}

static uint64_t page_size(void)
{
    return (uint64_t)sysconf(_SC_PAGESIZE);
}

/* MADV_POPULATE_READ of the pages of [offset, offset + len); 0, or -1 (EFAULT: past the end of the file). */
static int populate(const file_store *f, uint64_t offset, uint64_t len)
{
    uint64_t start = offset / page_size() * page_size();
    int rc;
    do
        rc = madvise((void *)(f->map + start), (size_t)(offset + len - start), MADV_POPULATE_READ);
    while (rc != 0 && errno == EINTR);
    return rc;
}

static void drop_pages(void *ctx, uint64_t offset, uint64_t len);

static void map_file(file_store *f)
{
    if (f->base.size == 0 || sizeof(size_t) < 8 || h5pack_env_flag("H5PACK_NO_MMAP"))
        return;
    void *m = mmap(NULL, (size_t)f->base.size, PROT_READ, MAP_SHARED, f->fd, 0);
    if (m == MAP_FAILED)
        return;
    f->map = m;
    /* without MADV_POPULATE_READ a truncated file could not be reported; without a guard it would kill */
    if (populate(f, 0, 1) != 0 || (f->guard = h5pack_map_guard_add(m, (size_t)f->base.size, f->fd)) < 0) {
        munmap(m, (size_t)f->base.size);
        f->map = NULL;
    } else {
        drop_pages(f, 0, 1); /* the probe's page (a whole folio, maybe) is nobody's view */
    }
}

static int file_open(const char *location, store **out, char *err, size_t err_len)
{
    struct stat st;
    file_store *f = calloc(1, sizeof *f);
    if (!f || !(f->base.location = strdup(location))) {
        free(f);
        return h5pack_errf(H5PACK_ENOMEM, err, err_len, "out of memory");
    }
    f->base.ops = &h5pack_store_file_ops;
    f->guard = -1;
    int rc = 0;
    if ((f->fd = open(path_of(location), O_RDONLY | O_CLOEXEC)) < 0)
        rc = h5pack_errf(errno == ENOENT || errno == ENOTDIR ? H5PACK_ENOTFOUND : H5PACK_EIO, err, err_len,
                         "cannot open: %s", strerror(errno));
    else if (fstat(f->fd, &st) != 0)
        rc = h5pack_errf(H5PACK_EIO, err, err_len, "cannot stat: %s", strerror(errno));
    else if (S_ISDIR(st.st_mode)) /* an image folder given where its packed file is meant */
        rc = h5pack_errf(H5PACK_EFORMAT, err, err_len, "a folder, not a file: pack an image folder first (h5pack "
                         "--size 224x224 FOLDER train.h5), then read train.h5");
    else if (!S_ISREG(st.st_mode))
        rc = h5pack_errf(H5PACK_EFORMAT, err, err_len, "not a regular file");
    if (rc) {
        h5pack_store_file_ops.close(&f->base);
        return rc;
    }
    f->base.size = (uint64_t)st.st_size;
    f->mtime = st.st_mtim;
    map_file(f);
    *out = &f->base;
    return 0;
}

static int file_read(store *s, uint64_t offset, void *dst, size_t len, char *err, size_t err_len)
{
    file_store *f = (file_store *)s;
    size_t done = 0;
    while (done < len) {
        ssize_t n = pread(f->fd, (uint8_t *)dst + done, len - done, (off_t)(offset + done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return h5pack_errf(H5PACK_EIO, err, err_len, "read failed: %s", strerror(errno));
        if (n == 0) {
            struct stat st;
            if (fstat(f->fd, &st) == 0 && (uint64_t)st.st_size < s->size)
                return h5pack_errf(H5PACK_ECORRUPT, err, err_len, "the file changed while being read: truncated "
                                   "to %llu bytes (%llu at open)", (unsigned long long)st.st_size,
                                   (unsigned long long)s->size);
            return h5pack_errf(H5PACK_ECORRUPT, err, err_len, "file truncated: got %zu of %zu bytes at offset %llu",
                               done, len, (unsigned long long)offset);
        }
        done += (size_t)n;
    }
    return 0;
}

static int file_check(store *s, char *err, size_t err_len)
{
    file_store *f = (file_store *)s;
    struct stat st;
    if (fstat(f->fd, &st) != 0)
        return h5pack_errf(H5PACK_EIO, err, err_len, "cannot stat: %s", strerror(errno));
    if ((uint64_t)st.st_size != s->size || h5pack_map_guard_hit(f->guard))
        return h5pack_errf(H5PACK_ECORRUPT, err, err_len, "the file changed while being read: %s to %llu bytes "
                           "(%llu at open); its batches since are refused: reopen it once it is written whole",
                           (uint64_t)st.st_size < s->size ? "truncated" : "resized", (unsigned long long)st.st_size,
                           (unsigned long long)s->size);
    if (st.st_mtim.tv_sec != f->mtime.tv_sec || st.st_mtim.tv_nsec != f->mtime.tv_nsec)
        return h5pack_errf(H5PACK_ECORRUPT, err, err_len, "the file changed while being read: written since open "
                           "(its modification time changed); reopen it once it is written whole");
    return 0;
}

/* Every page the range touches, the ones it shares with its neighbours too: on a read-only shared map
 * MADV_DONTNEED only drops page-table entries (the page cache keeps the pages), and a neighbour still in
 * use faults its page back in; keeping shared pages instead would leave two pages per range resident. */
static void drop_pages(void *ctx, uint64_t offset, uint64_t len)
{
    file_store *f = ctx;
    uint64_t first = offset / page_size() * page_size();
    uint64_t last = (offset + len + page_size() - 1) / page_size() * page_size();
    last = last < f->base.size ? last : f->base.size;
    if (last > first)
        madvise((void *)(f->map + first), (size_t)(last - first), MADV_DONTNEED);
}

static const uint8_t *file_view(store *s, uint64_t offset, uint64_t len)
{
    file_store *f = (file_store *)s;
    if (!f->map)
        return NULL;
    if (len == 0) /* the map's address, no view */
        return f->map + offset;
    if (h5pack_view_budget_take(&f->views, offset, len) != 0)
        return NULL; /* the views hold what they may: the caller reads instead */
    if (populate(f, offset, len) != 0) {
        h5pack_view_budget_give(&f->views, offset, len, drop_pages, f);
        return NULL;
    }
    return f->map + offset;
}

static void file_unview(store *s, uint64_t offset, uint64_t len)
{
    file_store *f = (file_store *)s;
    if (f->map && len > 0)
        h5pack_view_budget_give(&f->views, offset, len, drop_pages, f);
}

static void file_limit_views(store *s, uint64_t bytes)
{
    file_store *f = (file_store *)s;
    if (f->map)
        (void)h5pack_view_budget_init(&f->views, f->base.size, bytes); /* no memory: no limit */
}

/* A hint for pages not in the page cache yet: read ahead in 2 MiB folios, each then mapped by one
 * page-table entry, instead of the small ones a small read makes (docs/patches.md, "Huge pages of the
 * page cache"). */
static void file_advise_large(store *s)
{
#ifdef MADV_HUGEPAGE
    file_store *f = (file_store *)s;
    if (f->map)
        (void)madvise((void *)f->map, (size_t)f->base.size, MADV_HUGEPAGE);
#else
    (void)s;
#endif
}

/* As HDF5's own sec2 driver locks: shared, without waiting; a file system without flock is no refusal. */
static int file_lock(store *s)
{
    file_store *f = (file_store *)s;
    if (flock(f->fd, LOCK_SH | LOCK_NB) == 0 || errno == ENOSYS)
        return 0;
    return -1;
}

static void file_unlock(store *s)
{
    (void)flock(((file_store *)s)->fd, LOCK_UN);
}

static void file_close(store *s)
{
    file_store *f = (file_store *)s;
    if (f->map) {
        h5pack_map_guard_remove(f->guard);
        munmap((void *)f->map, (size_t)f->base.size);
    }
    h5pack_view_budget_free(&f->views);
    if (f->fd >= 0)
        close(f->fd);
    free(f->base.location);
    free(f);
}

const store_ops h5pack_store_file_ops = {
    .name = "file",
    .open = file_open,
    .read = file_read,
    .check = file_check,
    .view = file_view,
    .unview = file_unview,
    .limit_views = file_limit_views,
    .advise_large = file_advise_large,
    .lock = file_lock,
    .unlock = file_unlock,
    .close = file_close,
};
