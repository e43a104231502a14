/* chunksrc_map.c - the zero-copy path of uncompressed implicit and contiguous sources: a chunk "load" asks
 * the store for a view of its range (store.h: a local file's map, its pages brought in by the loading
 * thread, the pixels untouched) and hands out that pointer. The assembly then copies store -> batch in one
 * pass, where a read + copy make two (read: store -> cache slot, later slot -> batch). What makes views
 * safe on a file that may be truncated is store_file.c's. */
#include "chunksrc_impl.h"
#include "clock.h"

int h5pack_chunksrc_is_mapped(const chunk_source *s)
{
    return s && s->views;
}

int h5pack_chunksrc_map(chunk_source *s, uint64_t chunk, const uint8_t **data, chunk_read_cost *cost)
{
    if (!s || !s->views || chunk >= s->g.n_chunks)
        return CHUNKSRC_NOT_MAPPED;
    uint64_t addr = s->base_addr + h5pack_chunksrc_chunk_start(s, chunk), len = h5pack_chunksrc_chunk_len(s, chunk);
    double t0 = h5pack_clock_s();
    const uint8_t *v = h5pack_store_view(s->st, addr, len);
    if (!v)
        return CHUNKSRC_NOT_MAPPED; /* e.g. truncated since open: the read reports it */
    *data = v;
    if (cost) {
        cost->bytes_read += len;
        cost->read_s += h5pack_clock_s() - t0;
    }
    return 0;
}

/* The chunk that starts at byte REL of the image data: 0, or -1 when none does. */
static int chunk_at(const chunk_source *s, uint64_t rel, uint64_t *chunk)
{
    uint64_t lo = 0, hi = s->g.n_chunks; /* the chunk starts rise with the chunk: bisect */
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (h5pack_chunksrc_chunk_start(s, mid) <= rel)
            lo = mid;
        else
            hi = mid;
    }
    *chunk = lo;
    return h5pack_chunksrc_chunk_start(s, lo) == rel ? 0 : -1;
}

void h5pack_chunksrc_map_release(chunk_source *s, const uint8_t *data)
{
    const uint8_t *base = s && s->views ? h5pack_store_view(s->st, 0, 0) : NULL;
    if (!base || data < base || (uint64_t)(data - base) >= s->file_size)
        return;
    uint64_t addr = (uint64_t)(data - base), chunk = 0;
    if (addr < s->base_addr || chunk_at(s, addr - s->base_addr, &chunk) != 0)
        return; /* not a chunk start */
    h5pack_store_unview(s->st, addr, h5pack_chunksrc_chunk_len(s, chunk));
}
