/* chunksrc_locate.c - learns, at open, where every HDF5 chunk of a raw-path dataset is stored (all the
 * chunks of every slab), so that workers read compressed chunks with pread and never enter HDF5 (see
 * chunksrc_vfd.c for how, in O(n) total on HDF5 1.10.8). Each chunk costs one index lookup (~2 us);
 * nothing is read but index metadata. */
#include <stdlib.h>

#include "chunksrc_impl.h"
#include "env.h"

/* Beyond this many HDF5 chunks the tables (17 bytes per chunk) are not worth it: reads use
 * H5Dread_chunk (or, for images of several sizes, H5Dread). */
#define LOCATE_MAX_CHUNKS ((uint64_t)1 << 24)

/* Locates HDF5 chunk R of SLAB; adds its stored size to *SUM. */
static int locate_one(chunk_source *s, uint64_t slab, uint64_t r, uint64_t *sum)
{
    hsize_t offset[4];
    uint64_t h = slab * s->cps + r, stored, addr, size;
    uint32_t mask = 0;
    if (h5pack_chunksrc_h5_stored_locked(s, slab, r, &stored) != 0)
        return -1;
    if (stored == 0)
        return 0; /* never written: reads as the fill value */
    h5pack_chunksrc_chunk_offset(s, slab, r, offset);
    if (h5pack_chunksrc_vfd_locate_chunk(s->file, s->dset, offset, &addr, &size, &mask) != 0 || size != stored ||
        addr > s->file_size || size > s->file_size - addr)
        return -1;
    s->chunk_addr[h] = addr;
    s->chunk_size[h] = size;
    s->chunk_deflated[h] = s->deflate_index >= 0 && !(mask & (1u << s->deflate_index));
    *sum += size;
    return 0;
}

static int locate_slab(chunk_source *s, uint64_t slab)
{
    uint64_t sum = 0;
    for (uint64_t r = 0; r < s->cps; r++)
        if (locate_one(s, slab, r, &sum) != 0)
            return -1;
    s->stored[slab] = sum + 1; /* the slab's stored size, as h5pack_chunksrc_query_stored_locked keeps it */
    return 0;
}

int h5pack_chunksrc_locations_alloc(chunk_source *s, uint64_t n)
{
    if (n > LOCATE_MAX_CHUNKS || h5pack_env_flag("H5PACK_NO_LOCATE"))
        return -1;
    s->chunk_addr = calloc(n, sizeof *s->chunk_addr);
    s->chunk_size = calloc(n, sizeof *s->chunk_size);
    s->chunk_deflated = calloc(n, 1);
    if (s->chunk_addr && s->chunk_size && s->chunk_deflated)
        return 0;
    h5pack_chunksrc_locations_free(s);
    return -1;
}

void h5pack_chunksrc_locations_free(chunk_source *s)
{
    free(s->chunk_addr), free(s->chunk_size), free(s->chunk_deflated);
    s->chunk_addr = s->chunk_size = NULL, s->chunk_deflated = NULL;
}

int h5pack_chunksrc_locate_chunks(chunk_source *s)
{
    int rc = h5pack_chunksrc_locations_alloc(s, s->n_h5_chunks);
    for (uint64_t slab = 0; rc == 0 && slab < s->g.n_chunks; slab++)
        rc = locate_slab(s, slab);
    if (rc != 0)
        h5pack_chunksrc_locations_free(s);
    return rc;
}
