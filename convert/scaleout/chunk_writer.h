/* chunk_writer.h - a thread that writes whole unfiltered chunks at their computed addresses while the
 * rank decodes its next window (mpi_pack.c): the MPI conversion's counterpart of the serial pipeline's
 * workers writing chunks. Each chunk is K images given by pointers, written with pwritev.
 *
 * Batches are numbered by the caller's buffer bank (0 or 1): submit hands over a bank's chunks, wait
 * returns once they are on their way to the disk (written to the page cache); only then may the bank's
 * images be overwritten. One batch per bank at a time. Plain POSIX: no MPI call is made here. */
#ifndef H5PACK_CHUNK_WRITER_H
#define H5PACK_CHUNK_WRITER_H

#include <stddef.h>
#include <stdint.h>

typedef struct chunk_writer chunk_writer;

/* A writer for file descriptor FD (named PATH in messages): chunk i at BASE + i * K * IMAGE_BYTES.
 * NULL when out of memory or the thread cannot start. */
chunk_writer *chunk_writer_start(int fd, const char *path, int64_t base, uint64_t k, uint64_t image_bytes);

/* Hands over bank BANK's N chunks: INDEX[c] and its K images IMAGES[c * K + i]. The arrays are copied.
 * Returns 0, or -1 when out of memory (nothing was handed over). */
int chunk_writer_submit(chunk_writer *w, int bank, const uint64_t *index, const uint8_t *const *images, size_t n);

/* Waits until bank BANK's chunks are written. Returns 0, or -1 with ERR set (the first failed write).
 * *CHUNKS and *BYTES grow by what was written. */
int chunk_writer_wait(chunk_writer *w, int bank, uint64_t *chunks, uint64_t *bytes, char *err, size_t err_len);

/* Waits for everything, stops and frees the writer. Accepts NULL. */
void chunk_writer_stop(chunk_writer *w);

#endif
