/* space_release.c - see space_release.h. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* fallocate and its FALLOC_FL_* flags */
#endif
#include "space_release.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#define DEFAULT_BLOCK 4096u
/* Whole blocks are handed back in steps of at least this much: a punch costs a journal transaction (one per
 * 2 MiB chunk made the copy of 266 MB about 0.2 s slower, 8 MiB steps about 0.1 s); the peak disk use grows
 * by at most one step. */
#define RELEASE_STEP (8u << 20)

void space_release_open(space_release *r, const char *path)
{
    struct stat st;
    r->lo = r->hi = r->done = r->released = 0;
    r->block = DEFAULT_BLOCK;
#ifdef FALLOC_FL_PUNCH_HOLE
    r->fd = open(path, O_WRONLY | O_CLOEXEC);
#else
    (void)path;
    r->fd = -1; /* no hole punching on this system: the copy runs with the old peak */
#endif
    if (r->fd >= 0 && fstat(r->fd, &st) == 0 && st.st_blksize > 0 && (st.st_blksize & (st.st_blksize - 1)) == 0)
        r->block = (uint64_t)st.st_blksize;
}

/* Deallocates [FROM, TO). KEEP_SIZE: the file's length (and HDF5's view of it) stays; only blocks go. The
 * range reads back as zeros; a block partly outside it is zeroed in place, never freed, so the neighbouring
 * bytes (HDF5's metadata, chunks still to read) are untouched. */
static void punch(space_release *r, uint64_t from, uint64_t to)
{
    if (r->fd < 0 || to <= from)
        return;
#ifdef FALLOC_FL_PUNCH_HOLE
    if (fallocate(r->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)from, (off_t)(to - from)) == 0) {
        r->released += to - from;
        return;
    }
#endif
    close(r->fd); /* EOPNOTSUPP and the like: the file system keeps the blocks; stop asking */
    r->fd = -1;
}

void space_release_range(space_release *r, uint64_t at, uint64_t bytes)
{
    if (r->fd < 0 || bytes == 0)
        return;
    if (at != r->hi) { /* a new run: the old one's partial last block will not grow any more */
        punch(r, r->done, r->hi);
        r->lo = r->done = at;
    }
    r->hi = at + bytes;
    uint64_t whole = r->hi & ~(r->block - 1); /* the run's complete blocks end here */
    if (whole >= r->done + RELEASE_STEP) {
        punch(r, r->done, whole);
        r->done = whole;
    }
}

void space_release_close(space_release *r)
{
    punch(r, r->done, r->hi);
    if (r->fd >= 0)
        close(r->fd);
    r->fd = -1;
}
