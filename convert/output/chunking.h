/* chunking.h - how many whole images go into one chunk (docs/chunking.md explains the reasoning). */
#ifndef H5PACK_CHUNKING_H
#define H5PACK_CHUNKING_H

#include <stddef.h>
#include <stdint.h>

/* Auto mode aims at chunks of about this many bytes. */
#define CHUNK_TARGET_BYTES (2ull << 20)

/* HDF5 limits a chunk to 2^32-1 elements (and 4 GiB): for uint8 data the element limit decides. */
#define CHUNK_MAX_BYTES 0xFFFFFFFEull

typedef struct chunk_choice {
    uint64_t images;       /* K: whole images per chunk (0 for images of several sizes) */
    uint64_t bytes;        /* images of several sizes: bytes per chunk of the 1-D byte dataset */
    uint64_t target_bytes; /* the auto target (stored as a tuning input even for --chunk K) */
    char reason[320];      /* one line: why K */
} chunk_choice;

/* Chooses K for images of IMAGE_BYTES each, N_IMAGES in the file (>= 1) and the expected training BATCH.
 * REQUESTED = 0 for auto, else the --chunk value (reduced to N_IMAGES when larger). Returns 0, or -1 with
 * a message in ERR when not even one image fits HDF5's chunk limit or REQUESTED exceeds it. */
int choose_chunk(uint64_t image_bytes, uint64_t n_images, uint64_t batch, uint64_t requested,
                 chunk_choice *out, char *err, size_t err_len);

/* Images of several sizes share one 1-D byte dataset (docs/format.md): its chunks are CHUNK_TARGET_BYTES,
 * or REQUESTED (--chunk K) times the mean image, never more than the TOTAL_BYTES stored: OUT->bytes.
 * Returns 0, or -1 with a message in ERR. */
int choose_chunk_bytes(uint64_t total_bytes, uint64_t n_images, uint64_t requested, chunk_choice *out, char *err,
                       size_t err_len);

#endif
