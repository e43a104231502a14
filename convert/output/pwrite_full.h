/* pwrite_full.h - all of a buffer written at an offset, whatever pwrite returns short: the one loop for
 * the chunks written beside HDF5 (h5out_pwrite_chunk, the MPI ranks' chunk writer). */
#ifndef H5PACK_PWRITE_FULL_H
#define H5PACK_PWRITE_FULL_H

#include <stddef.h>
#include <sys/types.h>

/* Writes N bytes at P to FD at offset AT, retrying short writes and EINTR. 0, or -1 with errno set
 * (ENOSPC when the system wrote nothing and gave no error). */
int pwrite_full(int fd, const void *p, size_t n, off_t at);

#endif
