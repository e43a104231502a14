/* chunksrc_locate.c - learns, at open, where every chunk of a raw-path dataset is stored, so that workers
 * read compressed chunks with pread and never enter HDF5 (see chunksrc_vfd.c for how, in O(n) total on
 * HDF5 1.10.8). Each chunk costs one index lookup (~2 us); nothing is read but index metadata. */
#include <stdlib.h>

#include "chunksrc_impl.h"

/* Beyond this many chunks the tables (9 bytes per chunk) are not worth it: reads use H5Dread_chunk. */
#define LOCATE_MAX_CHUNKS ((uint64_t)1 << 24)

static int locate_one(chunk_source *s, uint64_t chunk)
{
    hsize_t offset[4] = {chunk * s->g.samples_per_chunk, 0, 0, 0};
    uint64_t stored, addr, size;
    uint32_t mask = 0;
    if (h5pack_chunksrc_query_stored_locked(s, chunk, &stored) != 0)
        return -1;
    if (stored == 0)
        return 0; /* never written: reads as the fill value */
    if (h5pack_chunksrc_vfd_locate_chunk(s->file, s->dset, offset, &addr, &size, &mask) != 0 || size != stored ||
        addr > s->file_size || size > s->file_size - addr)
        return -1;
    s->chunk_addr[chunk] = addr;
    s->chunk_deflated[chunk] = s->deflate_index >= 0 && !(mask & (1u << s->deflate_index));
    return 0;
}

int h5pack_chunksrc_locate_chunks(chunk_source *s)
{
    uint64_t n = s->g.n_chunks;
    if (n > LOCATE_MAX_CHUNKS || getenv("H5PACK_NO_LOCATE"))
        return -1;
    s->chunk_addr = calloc(n, sizeof *s->chunk_addr);
    s->chunk_deflated = calloc(n, 1);
    int rc = s->chunk_addr && s->chunk_deflated ? 0 : -1;
    for (uint64_t c = 0; rc == 0 && c < n; c++)
        rc = locate_one(s, c);
    if (rc != 0) {
        free(s->chunk_addr);
        free(s->chunk_deflated);
        s->chunk_addr = NULL;
        s->chunk_deflated = NULL;
    }
    return rc;
}
