/* tilesrc_impl.h - private state of the tile source, shared by tilesrc_open.c (validation, read-path
 * choice) and tilesrc_read.c (the reads). Other parts use tilesrc.h. */
#ifndef H5PACK_TILESRC_IMPL_H
#define H5PACK_TILESRC_IMPL_H

#include <hdf5.h>

#include "h5glue.h" /* every HDF5 call runs inside h5pack_h5_enter / h5pack_h5_leave */
#include "labelset.h"
#include "store_h5.h"
#include "tilesrc.h"

struct tile_source {
    char *path;
    tile_geometry g;
    tile_image *img;   /* n_images */
    hid_t file;
    hid_t *dset;       /* per image (-1 once closed) */
    store *st;         /* the file's bytes (store.h): HDF5 reads its metadata through it, workers the tiles */
    uint64_t userblock;
    label_set labels;
};

/* "PATH: reason" into ERR (h5pack_errf's rules); returns CODE. */
int h5pack_tilesrc_fail(const tile_source *s, int code, char *err, size_t err_len, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

#endif
