/* chunksrc_sizes_raw.c - the raw path of a compressed store of images of several sizes: every HDF5 chunk
 * of the 1-D store is located at open (stored.h), and a reader chunk is read outside HDF5's lock by the
 * workers: each HDF5 chunk it overlaps read and inflated, the overlap copied (an HDF5 chunk wholly inside it
 * is inflated in place). Reader chunks do not start at HDF5 chunk boundaries, so the HDF5 chunk two of
 * them share is inflated by each. */
#include <string.h>

#include "chunksrc_impl.h"

static void store_chunk_offset(const void *ctx, uint64_t k, hsize_t *offset)
{
    offset[0] = (hsize_t)(k * ((const chunk_source *)ctx)->h5_chunk_bytes);
}

int h5pack_chunksrc_several_sizes_locate(chunk_source *s, uint64_t total, uint64_t chunk_bytes, int deflate_index)
{
    uint64_t n = (total + chunk_bytes - 1) / chunk_bytes;
    s->h5_chunk_bytes = chunk_bytes; /* before the locate: the offsets come from it */
    s->located.fill = s->fill_byte;
    if (h5pack_stored_locate(s->file, s->dset, n, chunk_bytes, deflate_index, s->file_size, store_chunk_offset, s,
                             &s->located) != 0)
        return -1;
    s->n_h5_chunks = n;
    return 0;
}

int h5pack_chunksrc_read_several_sizes_raw(chunk_source *s, uint64_t chunk, uint8_t *dst, chunksrc_scratch *sc,
                                    chunk_read_cost *cost, char *err, size_t err_len)
{
    uint64_t start = h5pack_chunksrc_chunk_start(s, chunk), end = start + h5pack_chunksrc_chunk_len(s, chunk);
    uint64_t cb = s->h5_chunk_bytes;
    char why[256];
    for (uint64_t k = start / cb; k * cb < end; k++) {
        uint64_t from = k * cb > start ? k * cb : start, to = (k + 1) * cb < end ? (k + 1) * cb : end;
        int inside = from == k * cb && to == (k + 1) * cb;
        uint8_t *room = inside ? dst + (from - start) : h5pack_stored_chunk_room(sc, (size_t)cb);
        if (!room)
            return h5pack_chunksrc_fail(s, H5PACK_ENOMEM, err, err_len, "chunk %llu: out of memory",
                                        (unsigned long long)chunk);
        int rc = h5pack_stored_get(s->st, &s->located, k, room, sc, cost, why, sizeof why);
        if (rc)
            return h5pack_chunksrc_fail(s, rc, err, err_len, "chunk %llu (HDF5 chunk %llu of the store): %s",
                                        (unsigned long long)chunk, (unsigned long long)k, why);
        if (!inside)
            memcpy(dst + (from - start), room + (from - k * cb), (size_t)(to - from));
    }
    return 0;
}
