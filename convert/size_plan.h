/* size_plan.h - where images of several sizes go: every image's size from its header (read by worker
 * threads before any decoding), the --max-side or --short-side rule applied, and their places one after
 * the other in the 1-D byte dataset (docs/format.md, "Images of several sizes"). Knowing every place before
 * decoding lets the decode pipeline write whole chunks in order, and any thread place any image. */
#ifndef H5PACK_CONVERT_SIZE_PLAN_H
#define H5PACK_CONVERT_SIZE_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "image.h"
#include "pack_pipeline.h"
#include "scan.h"

/* How the stored size follows from the header's (at most one of the two is set; none: as decoded). */
typedef struct size_rule {
    uint32_t max_side;   /* --max-side N: the longer side at most N, smaller images kept */
    uint32_t short_side; /* --short-side S: the shorter side exactly S (torchvision's Resize(S)) */
} size_rule;

typedef struct size_plan {
    ragged_place *places;     /* n, in packed order (malloc'ed) */
    uint64_t total_bytes;     /* sum of the places' bytes */
    size_t sized;             /* images whose header gave a size */
    uint32_t max_height, max_width;
    int one_size;             /* 1: every header gave the same size and no size rule applies: an ordinary
                                 one-size file (then height x width) */
    uint32_t height, width;
} size_plan;

/* Reads the headers of the N images ENTRIES[ORDER[p]] under SRC_DIR with THREADS threads and plans their
 * places (CHANNELS per pixel; RULE all zero: every image at its own size). OPTS gives the pixel limit, for
 * the headers and for the sizes --short-side grows images to. Returns 0, or -1 with a message in ERR (out of
 * memory, no thread). */
int size_plan_make(const char *src_dir, const scan_entry *entries, const size_t *order, size_t n,
                   const decode_opts *opts, uint32_t channels, const size_rule *rule, int threads, size_plan *out,
                   char *err, size_t err_len);

void size_plan_free(size_plan *p);

#endif
