/* size_plan.h - where images of several sizes go: every image's size from its header (read by worker
 * threads before any decoding), the --max-side rule applied, and their places one after the other in the
 * 1-D byte dataset (docs/format.md, "Images of several sizes"). Knowing every place before decoding lets
 * the decode pipeline write whole chunks in order, and any thread place any image. */
#ifndef H5PACK_CONVERT_SIZE_PLAN_H
#define H5PACK_CONVERT_SIZE_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "image.h"
#include "pack_pipeline.h"
#include "scan.h"

typedef struct size_plan {
    ragged_place *places;     /* n, in packed order (malloc'ed) */
    uint64_t total_bytes;     /* sum of the places' bytes */
    size_t sized;             /* images whose header gave a size */
    uint32_t max_height, max_width;
    int one_size;             /* 1: every header gave the same size and no --max-side resizes: an ordinary
                                 one-size file (then height x width) */
    uint32_t height, width;
} size_plan;

/* Reads the headers of the N images ENTRIES[ORDER[p]] under SRC_DIR with THREADS threads and plans their
 * places (CHANNELS per pixel; MAX_SIDE 0: every image at its own size). OPTS gives the pixel limit.
 * Returns 0, or -1 with a message in ERR (out of memory, no thread). */
int size_plan_make(const char *src_dir, const scan_entry *entries, const size_t *order, size_t n,
                   const decode_opts *opts, uint32_t channels, uint32_t max_side, int threads, size_plan *out,
                   char *err, size_t err_len);

void size_plan_free(size_plan *p);

#endif
