/* store_h5.h - HDF5 over a store (store_h5.c): the file's metadata read by HDF5 through the store, and
 * where a chunk's stored bytes lie learnt without reading them. Every call here runs inside
 * h5pack_h5_enter / h5pack_h5_leave (h5glue.h). */
#ifndef H5PACK_STORE_STORE_H5_H
#define H5PACK_STORE_STORE_H5_H

#include <hdf5.h>
#include <stdint.h>

#include "store.h"

/* H5Fopen of S's object, read-only, every read going to S (which must outlive the file id); -1 with HDF5's
 * error stack left for the caller when HDF5 cannot open it. */
hid_t h5pack_store_h5_open(store *s);

/* Where the stored bytes of DSET's chunk at OFFSET are (offset in the object, size) and its filter mask,
 * learnt by an H5Dread_chunk whose data read is captured, not done. 0, -1 (HDF5 failed, or read the chunk
 * in other than one piece), or -2 when FILE was not opened by h5pack_store_h5_open. */
int h5pack_store_h5_locate(hid_t file, hid_t dset, const hsize_t *offset, uint64_t *addr, uint64_t *size,
                           uint32_t *filter_mask);

#endif
