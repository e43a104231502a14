/* chunksrc_ragged_raw.c - the raw deflate path of a compressed store of images of several sizes: every
 * HDF5 chunk of the 1-D store is located at open (address, stored size, deflated or not), and a run is
 * read outside HDF5's lock by the workers: pread of each chunk the run overlaps, libdeflate, copy of the
 * overlap. Runs do not start at chunk boundaries, so the chunk two runs share is inflated by each. */
#include <libdeflate.h>
#include <stdlib.h>
#include <string.h>

#include "chunksrc_impl.h"
#include "clock.h"

int h5pack_chunksrc_ragged_locate(chunk_source *s, uint64_t total, uint64_t chunk_bytes, int deflate_index)
{
    uint64_t n = (total + chunk_bytes - 1) / chunk_bytes;
    int rc = h5pack_chunksrc_locations_alloc(s, n);
    for (uint64_t k = 0; rc == 0 && k < n; k++) {
        hsize_t offset = k * chunk_bytes;
        uint64_t addr = 0, size = 0;
        uint32_t mask = 0;
        if (h5pack_chunksrc_vfd_locate_chunk(s->file, s->dset, &offset, &addr, &size, &mask) != 0 ||
            addr > s->file_size || size > s->file_size - addr || size == 0)
            rc = -1; /* never-written chunks included: the HDF5 path reads those */
        else
            s->chunk_addr[k] = addr, s->chunk_size[k] = size,
            s->chunk_deflated[k] = deflate_index >= 0 && !(mask & (1u << deflate_index));
    }
    if (rc != 0) {
        h5pack_chunksrc_locations_free(s);
        return -1;
    }
    s->h5_chunk_bytes = chunk_bytes, s->n_h5_chunks = n;
    return 0;
}

/* HDF5 chunk K, unfiltered, into SC->chunk (h5_chunk_bytes). */
static int load_h5_chunk(chunk_source *s, uint64_t run, uint64_t k, chunksrc_scratch *sc, chunk_read_cost *cost,
                         char *err, size_t err_len)
{
    uint64_t cb = s->h5_chunk_bytes, size = s->chunk_size[k];
    if (h5pack_chunksrc_reserve(&sc->chunk, &sc->chunk_cap, cb) != 0 ||
        (s->chunk_deflated[k] && h5pack_chunksrc_reserve(&sc->buf, &sc->cap, size) != 0))
        return h5pack_chunksrc_fail(s, H5PACK_ENOMEM, err, err_len, "chunk %llu: out of memory",
                                    (unsigned long long)run);
    uint8_t *into = s->chunk_deflated[k] ? sc->buf : sc->chunk;
    if (!s->chunk_deflated[k] && size != cb)
        return h5pack_chunksrc_fail(s, H5PACK_ECORRUPT, err, err_len, "chunk %llu: HDF5 chunk %llu holds %llu "
                                    "bytes, expected %llu", (unsigned long long)run, (unsigned long long)k,
                                    (unsigned long long)size, (unsigned long long)cb);
    double t0 = h5pack_clock_s();
    int rc = h5pack_chunksrc_pread(s, run, s->chunk_addr[k], into, size, err, err_len);
    double t1 = h5pack_clock_s();
    cost->bytes_read += size, cost->read_s += t1 - t0;
    if (rc || !s->chunk_deflated[k])
        return rc;
    size_t got = 0;
    if (libdeflate_zlib_decompress(sc->dec, sc->buf, size, sc->chunk, cb, &got) != LIBDEFLATE_SUCCESS || got != cb)
        return h5pack_chunksrc_fail(s, H5PACK_ECORRUPT, err, err_len, "chunk %llu: HDF5 chunk %llu does not inflate "
                                    "to %llu bytes", (unsigned long long)run, (unsigned long long)k,
                                    (unsigned long long)cb);
    cost->bytes_inflated += cb, cost->inflate_s += h5pack_clock_s() - t1;
    return 0;
}

int h5pack_chunksrc_read_ragged_raw(chunk_source *s, uint64_t run, uint8_t *dst, chunksrc_scratch *sc,
                                    chunk_read_cost *cost, char *err, size_t err_len)
{
    uint64_t start = h5pack_chunksrc_unit_start(s, run), end = start + h5pack_chunksrc_unit_len(s, run);
    uint64_t cb = s->h5_chunk_bytes;
    if (!sc->dec && !(sc->dec = libdeflate_alloc_decompressor()))
        return h5pack_chunksrc_fail(s, H5PACK_ENOMEM, err, err_len, "chunk %llu: out of memory", (unsigned long long)run);
    for (uint64_t k = start / cb; k * cb < end; k++) {
        int rc = load_h5_chunk(s, run, k, sc, cost, err, err_len);
        if (rc)
            return rc;
        uint64_t from = k * cb > start ? k * cb : start, to = (k + 1) * cb < end ? (k + 1) * cb : end;
        memcpy(dst + (from - start), sc->chunk + (from - k * cb), (size_t)(to - from));
    }
    return 0;
}
