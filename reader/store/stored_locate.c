/* stored_locate.c - learning where a dataset's chunks lie, at open (stored.h): HDF5's implicit index
 * checked on three chunks, or every chunk located through the capture of store_h5.c (one index lookup,
 * about 2 us, per chunk; nothing but index metadata is read). */
#include <stdlib.h>

#include "env.h"
#include "store_h5.h"
#include "stored.h"

/* Chunk K's address and stored size through HDF5's by-coordinate lookup (a walk of the whole index in
 * 1.10.8: only for a few probes). 0, or -1 when unknown or never written. */
static int probe_address(hid_t dset, stored_offset_fn offset_of, const void *ctx, uint64_t k, haddr_t *addr,
                         hsize_t *size)
{
    hsize_t offset[H5S_MAX_RANK];
    unsigned mask = 0;
    offset_of(ctx, k, offset);
    *addr = HADDR_UNDEF;
    if (H5Dget_chunk_info_by_coord(dset, offset, &mask, addr, size) < 0 || *addr == HADDR_UNDEF)
        return -1;
    return 0;
}

int h5pack_stored_find_implicit(hid_t dset, uint64_t n, uint64_t chunk_bytes, uint64_t userblock,
                                stored_offset_fn offset_of, const void *ctx, stored_chunks *out)
{
    uint64_t probes[3] = {0, n / 2, n - 1};
    haddr_t addr0 = HADDR_UNDEF;
    for (int i = 0; i < 3; i++) {
        haddr_t a;
        hsize_t size = 0;
        if (probe_address(dset, offset_of, ctx, probes[i], &a, &size) != 0 || size != chunk_bytes)
            return 0;
        if (i == 0)
            addr0 = a;
        else if (a != addr0 + probes[i] * chunk_bytes)
            return 0;
    }
    *out = (stored_chunks){.n = n, .chunk_bytes = chunk_bytes, .first = userblock + addr0};
    return 1;
}

void h5pack_stored_free(stored_chunks *c)
{
    free(c->addr), free(c->size), free(c->deflated);
    c->addr = c->size = NULL, c->deflated = NULL;
}

/* A chunk H5Dread_chunk cannot hand over: written nowhere (the fill value), or a failure. */
static int never_written(hid_t dset, stored_offset_fn offset_of, const void *ctx, uint64_t k)
{
    hsize_t offset[H5S_MAX_RANK], bytes = 0;
    offset_of(ctx, k, offset);
    if (H5Dget_chunk_storage_size(dset, offset, &bytes) >= 0)
        return bytes == 0;
    haddr_t addr = 0; /* the by-coordinate lookup tells an unwritten chunk (undefined address) from a failure */
    unsigned mask = 0;
    return H5Dget_chunk_info_by_coord(dset, offset, &mask, &addr, &bytes) >= 0 && addr == HADDR_UNDEF;
}

static int locate_one(hid_t file, hid_t dset, int deflate_index, uint64_t store_size, stored_offset_fn offset_of,
                      const void *ctx, uint64_t k, stored_chunks *c)
{
    hsize_t offset[H5S_MAX_RANK];
    uint64_t addr = 0, size = 0;
    uint32_t mask = 0;
    offset_of(ctx, k, offset);
    if (h5pack_store_h5_locate(file, dset, offset, &addr, &size, &mask) != 0)
        return never_written(dset, offset_of, ctx, k) ? 0 : -1; /* size 0 in the table */
    if (size == 0 || addr > store_size || size > store_size - addr)
        return -1;
    c->addr[k] = addr, c->size[k] = size;
    c->deflated[k] = deflate_index >= 0 && !(mask & (1u << deflate_index));
    return 0;
}

int h5pack_stored_locate(hid_t file, hid_t dset, uint64_t n, uint64_t chunk_bytes, int deflate_index,
                         uint64_t store_size, stored_offset_fn offset_of, const void *ctx, stored_chunks *out)
{
    stored_chunks c = {.n = n, .chunk_bytes = chunk_bytes, .fill = out->fill};
    if (n == 0 || n > STORED_LOCATE_MAX || h5pack_env_flag("H5PACK_NO_LOCATE"))
        return -1;
    c.addr = calloc(n, sizeof *c.addr);
    c.size = calloc(n, sizeof *c.size);
    c.deflated = calloc(n, 1);
    int rc = c.addr && c.size && c.deflated ? 0 : -1;
    for (uint64_t k = 0; rc == 0 && k < n; k++)
        rc = locate_one(file, dset, deflate_index, store_size, offset_of, ctx, k, &c);
    if (rc != 0) {
        h5pack_stored_free(&c);
        return -1;
    }
    *out = c;
    return 0;
}
