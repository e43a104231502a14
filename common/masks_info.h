/* masks_info.h - what `h5pack --masks` stored (docs/format.md, the masks dataset): its type, shape and the
 * values its attributes list, read with HDF5 for `h5pack-stats info` (the reader's public API does not
 * describe masks yet). */
#ifndef H5PACK_COMMON_MASKS_INFO_H
#define H5PACK_COMMON_MASKS_INFO_H

#include <stdint.h>

#define H5PACK_MASKS_INFO_VALUES 32 /* values listed here at most (the file lists up to 256) */

typedef struct h5pack_masks_info {
    int present;           /* the file has a masks dataset */
    char dtype[32];        /* "uint8", "uint16", ... */
    int rank;
    uint64_t dims[3];      /* (N, H, W) */
    int64_t value_count;   /* distinct values the masks hold; -1 when the file does not say */
    int64_t values[H5PACK_MASKS_INFO_VALUES];
    int n_listed;          /* how many of them are in VALUES (the smallest ones) */
} h5pack_masks_info;

/* Fills *OUT from the local file PATH (present 0 when it has no masks). 0, or -1 when PATH cannot be opened
 * or the masks cannot be read. */
int h5pack_masks_info_read(const char *path, h5pack_masks_info *out);

#endif
