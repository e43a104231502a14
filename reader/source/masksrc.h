/* masksrc.h - the masks beside the images (h5pack_config.masks_dataset): a dataset of one-channel uint8
 * masks (N,H,W) of the images' N, H and W, chunked (k,H,W) with the images' k, so that chunk i of the
 * images and chunk i of the masks hold the same samples and one cache slot can hold both (pipeline.h).
 * The masks are read by a second chunk source (chunksrc.h) over the same file: same read paths, same
 * validation of the file, no second reader. Immutable after open; reads are thread-safe, each thread with
 * its own scratch. */
#ifndef H5PACK_MASKSRC_H
#define H5PACK_MASKSRC_H

#include <stddef.h>
#include <stdint.h>

#include "chunksrc.h"

typedef struct mask_source mask_source;

/* The masks dataset CFG asks for (NULL: none asked for: masks_dataset NULL or ""). */
const char *h5pack_masksrc_name(const h5pack_config *cfg);

/* Opens dataset NAME of PATH as the masks of the images of geometry IMAGES and checks the contract above.
 * ERR names the file and the dataset: ENOTFOUND (no such dataset), EFORMAT (not uint8, not (N,H,W), another
 * N, H or W, another chunking, images of several sizes), or the chunk source's code for a damaged file. */
int h5pack_masksrc_open(const char *path, const char *name, const source_geometry *images, mask_source **out,
                        char *err, size_t err_len);

/* Bytes of one stored mask (H x W) and of one chunk of masks (k masks). */
uint64_t h5pack_masksrc_mask_bytes(const mask_source *m);
uint64_t h5pack_masksrc_chunk_bytes(const mask_source *m);

/* Stored bytes of the masks of CHUNK (as h5pack_chunksrc_stored_bytes). */
uint64_t h5pack_masksrc_stored_bytes(const mask_source *m, uint64_t chunk);

/* Per-thread read state (chunksrc.h's). */
chunksrc_scratch *h5pack_masksrc_scratch_new(const mask_source *m);

/* Reads the masks of CHUNK into DST (room for h5pack_masksrc_chunk_bytes), adding to *COST; 0 or the
 * chunk source's code with the reason in ERR. */
int h5pack_masksrc_read(mask_source *m, uint64_t chunk, uint8_t *dst, chunksrc_scratch *sc, chunk_read_cost *cost,
                        char *err, size_t err_len);

/* NULL is a no-op. */
void h5pack_masksrc_close(mask_source *m);

#endif
