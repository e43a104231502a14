/* space_release.h - giving a first file's disk space back while its images are copied into the final one.
 *
 * Images skipped at decode time leave the first temporary file larger than the output (rows for every
 * scanned image, or gaps between images of several sizes); the converter then copies the images into a
 * second temporary file of the exact size (h5out_copy.c). Without more, both files sit on the disk at once
 * at the end of the copy: about twice the output at the peak. Instead, each range of the first file that
 * the copy is done with is deallocated at once (fallocate(FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE)), so
 * the two files together never hold much more than the first file alone.
 *
 * Safe for the rule that OUT is either absent or complete: only the first temporary file is punched, and it
 * is never renamed to OUT; it is removed right after the copy. A failed or interrupted copy fails the
 * conversion as before (nothing falls back on the first file), and a leftover first file (kill -9) is
 * removed by the next run like any other. A file system that cannot punch holes (EOPNOTSUPP: ext3, NFS
 * before 4.2, ...) releases nothing: the copy goes on, with the old peak. */
#ifndef H5PACK_SPACE_RELEASE_H
#define H5PACK_SPACE_RELEASE_H

#include <stdint.h>

/* Ranges arrive one chunk at a time, and a file system frees only whole blocks: a compressed chunk of a few
 * KiB rarely covers one. Adjacent ranges (chunks written one after the other) are therefore gathered into a
 * run whose whole blocks are freed as soon as they are complete. */
typedef struct space_release {
    int fd;            /* the first file, open for writing; -1: nothing is released */
    uint64_t block;    /* the file system's block size (a power of two) */
    uint64_t lo, hi;   /* the current run of released bytes, [lo, hi) */
    uint64_t done;     /* [lo, done) of the run is punched */
    uint64_t released; /* bytes punched so far */
} space_release;

/* Opens PATH (the first file, which HDF5 reads meanwhile through its own descriptor) to release its ranges.
 * Never fails: without a descriptor nothing is released. */
void space_release_open(space_release *r, const char *path);

/* BYTES at file offset AT are not read again: deallocates them (the whole blocks of the run so far; a run's
 * partial last block when the next range starts elsewhere, or at the close). The first refusal of the file
 * system ends the releasing (the copy does not depend on it). */
void space_release_range(space_release *r, uint64_t at, uint64_t bytes);

/* Releases the rest of the current run and closes the descriptor. */
void space_release_close(space_release *r);

#endif
