/* chunksrc_raw.c - the raw path (see chunksrc.h): the HDF5 chunks of a chunk as stored, filters not applied
 * by HDF5, then libdeflate and the scatter into the chunk's images, all outside any lock. Chunks come from
 * the store at the addresses located at open (stored.h; no HDF5 call at all, and chunks that lie back to
 * back are read with one request), else from H5Dread_chunk under the HDF5 mutex. Chunks that hold whole
 * images (h5pack's files: a chunk is one chunk) are read or inflated straight into the destination. */
#include <stdio.h>
#include <string.h>

#include "chunksrc_impl.h"
#include "clock.h"

/* Back-to-back chunks of a chunk are read together up to this many bytes (h5py's chunks are 16 KiB to
 * 1 MiB; a few MiB per request amortises the call without a large scratch buffer). */
#define RAW_RUN_MAX_BYTES ((uint64_t)4 << 20)

/* HDF5's offset of HDF5 chunk K (chunk * cps + its position in the chunk). */
static void h5_chunk_offset(const void *ctx, uint64_t k, hsize_t *offset)
{
    const chunk_source *s = ctx;
    h5pack_chunksrc_chunk_offset(s, k / s->cps, k % s->cps, offset);
}

int h5pack_chunksrc_locate_chunks(chunk_source *s)
{
    s->located.fill = s->fill_byte;
    if (h5pack_stored_locate(s->file, s->dset, s->n_h5_chunks, s->h5_chunk_bytes, s->deflate_index, s->file_size,
                             h5_chunk_offset, s, &s->located) != 0)
        return -1;
    for (uint64_t chunk = 0; chunk < s->g.n_chunks; chunk++) /* as h5pack_chunksrc_query_stored_locked keeps them */
        s->stored[chunk] = h5pack_stored_bytes(&s->located, chunk * s->cps, (chunk + 1) * s->cps) + 1;
    return 0;
}

/* WHY as the failure of HDF5 chunk R of CHUNK. */
static int fail_h5_chunk(const chunk_source *s, uint64_t chunk, uint64_t r, int rc, const char *why, char *err,
                         size_t err_len)
{
    if (s->cps == 1)
        return h5pack_chunksrc_fail_chunk(s, chunk, rc, why, err, err_len);
    return h5pack_chunksrc_fail(s, rc, err, err_len, "chunk %llu (HDF5 chunk %llu of its %llu): %s",
                                (unsigned long long)chunk, (unsigned long long)r, (unsigned long long)s->cps, why);
}

/* HDF5 chunk R of CHUNK, stored as P with its stored BYTES, into the chunk at DST. */
static int place_chunk(chunk_source *s, uint64_t chunk, uint64_t r, const stored_piece *p, const uint8_t *bytes,
                       uint8_t *dst, chunksrc_scratch *sc, chunk_read_cost *cost, char *err, size_t err_len)
{
    const uint8_t *pixels = NULL;
    char why[256];
    double t0 = h5pack_clock_s();
    int rc = h5pack_stored_unpack(p, s->h5_chunk_bytes, bytes, s->whole ? dst : NULL, sc, &pixels, cost, why,
                                  sizeof why);
    if (rc)
        return fail_h5_chunk(s, chunk, r, rc, why, err, err_len);
    if (!s->whole)
        h5pack_chunksrc_scatter(s, chunk, r, pixels, dst); /* NULL pixels: the fill value */
    else if (!pixels)
        memset(dst, s->fill_byte, s->g.chunk_bytes);
    else if (pixels != dst)
        memcpy(dst, pixels, s->g.chunk_bytes);
    if (!p->deflated)
        cost->read_s += h5pack_clock_s() - t0;
    return 0;
}

/* A located chunk: runs of back-to-back chunks, one read each. */
static int read_located(chunk_source *s, uint64_t chunk, uint8_t *dst, chunksrc_scratch *sc, chunk_read_cost *cost,
                        char *err, size_t err_len)
{
    uint64_t first = chunk * s->cps, last = first + s->cps;
    char why[256];
    int rc;
    if (s->whole) { /* read or inflated straight into place */
        if ((rc = h5pack_stored_get(s->st, &s->located, first, dst, sc, cost, why, sizeof why)))
            return fail_h5_chunk(s, chunk, 0, rc, why, err, err_len);
        return 0;
    }
    for (uint64_t k = first; k < last;) {
        uint64_t end = h5pack_stored_run_end(&s->located, k, last, RAW_RUN_MAX_BYTES);
        const uint8_t *bytes = NULL;
        if ((rc = h5pack_stored_fetch(s->st, &s->located, k, end, sc, &bytes, cost, why, sizeof why)))
            return fail_h5_chunk(s, chunk, k - first, rc, why, err, err_len);
        for (; k < end; k++) {
            stored_piece p = h5pack_stored_piece(&s->located, k);
            if ((rc = place_chunk(s, chunk, k - first, &p, bytes, dst, sc, cost, err, err_len)))
                return rc;
            bytes += p.size;
        }
    }
    return 0;
}

/* H5Dread_chunk writes as many bytes as the chunk index says, which in a damaged file need not be the
 * stored size the buffer was sized by (the index answered differently, or the probe learnt the size in
 * another process): ask the capture driver what the read would be first. */
static int check_read_size(chunk_source *s, uint64_t chunk, uint64_t r, uint64_t stored, const hsize_t *offset,
                           char *err, size_t err_len)
{
    uint64_t addr = 0, size = 0;
    uint32_t mask = 0;
    int rc = h5pack_store_h5_locate(s->file, s->dset, offset, &addr, &size, &mask);
    if (rc == -2 || (rc == 0 && size == stored))
        return 0;
    if (rc != 0)
        return h5pack_chunksrc_fail_read(s, chunk, "cannot find the chunk in the chunk index", err, err_len);
    char why[160];
    snprintf(why, sizeof why, "the chunk index is damaged: HDF5 would read %llu, expected %llu",
             (unsigned long long)size, (unsigned long long)stored);
    return fail_h5_chunk(s, chunk, r, H5PACK_ECORRUPT, why, err, err_len);
}

/* Under the lock: HDF5 chunk R's stored size (asked now, in the same lock as the read: a size remembered
 * from earlier can differ from what H5Dread_chunk writes in a damaged file) and its stored bytes. */
static int fetch_locked(chunk_source *s, uint64_t chunk, uint64_t r, uint8_t *dst, chunksrc_scratch *sc,
                        stored_piece *p, const uint8_t **bytes, char *err, size_t err_len)
{
    hsize_t offset[4];
    uint32_t mask = 0;
    if (h5pack_chunksrc_h5_stored_locked(s, chunk, r, &p->size) != 0)
        return h5pack_chunksrc_fail_read(s, chunk, "cannot find the chunk's stored size", err, err_len);
    if (p->size == 0)
        return 0; /* never written: the fill value */
    if (p->size > 2 * s->h5_chunk_bytes + 65536) {
        char why[160];
        snprintf(why, sizeof why, "stored size %llu is implausible for %llu bytes", (unsigned long long)p->size,
                 (unsigned long long)s->h5_chunk_bytes);
        return fail_h5_chunk(s, chunk, r, H5PACK_ECORRUPT, why, err, err_len);
    }
    uint8_t *buf = s->whole && !s->g.compressed && p->size == s->g.chunk_bytes
                       ? dst /* the pixels, filling the chunk: read into place */
                       : h5pack_stored_bytes_room(sc, (size_t)p->size);
    if (!buf)
        return h5pack_chunksrc_fail(s, H5PACK_ENOMEM, err, err_len, "chunk %llu: out of memory", (unsigned long long)chunk);
    h5pack_chunksrc_chunk_offset(s, chunk, r, offset);
    int rc = check_read_size(s, chunk, r, p->size, offset, err, err_len);
    if (rc)
        return rc;
    if (H5Dread_chunk(s->dset, H5P_DEFAULT, offset, &mask, buf) < 0)
        return h5pack_chunksrc_fail_read(s, chunk, "raw chunk read failed", err, err_len);
    *bytes = buf;
    p->deflated = s->deflate_index >= 0 && !(mask & (1u << s->deflate_index));
    return 0;
}

void h5pack_chunksrc_raw_will_read(chunk_source *s, uint64_t chunk)
{
    uint64_t first = chunk * s->cps, last = first + s->cps;
    for (uint64_t k = first; s->located.addr && k < last;) { /* the runs read_located reads, one by one */
        uint64_t end = s->whole ? k + 1 : h5pack_stored_run_end(&s->located, k, last, RAW_RUN_MAX_BYTES);
        uint64_t bytes = h5pack_stored_bytes(&s->located, k, end);
        if (bytes > 0)
            h5pack_store_will_read(s->st, h5pack_stored_piece(&s->located, k).addr, bytes);
        k = end;
    }
}

/* A chunk whose chunks are not located: each through H5Dread_chunk under the lock, unpacked outside it. */
static int read_unlocated(chunk_source *s, uint64_t chunk, uint8_t *dst, chunksrc_scratch *sc, chunk_read_cost *cost,
                          char *err, size_t err_len)
{
    for (uint64_t r = 0; r < s->cps; r++) {
        h5pack_h5_quiet q;
        stored_piece p = {0, 0, 0};
        const uint8_t *bytes = NULL;
        double t0 = h5pack_clock_s();
        h5pack_h5_enter(&q);
        int rc = fetch_locked(s, chunk, r, dst, sc, &p, &bytes, err, err_len);
        h5pack_h5_leave(&q);
        cost->read_s += h5pack_clock_s() - t0;
        if (rc)
            return rc;
        cost->bytes_read += p.size;
        if (bytes == dst && !p.deflated)
            continue; /* read into place */
        if ((rc = place_chunk(s, chunk, r, &p, bytes, dst, sc, cost, err, err_len)))
            return rc;
    }
    return 0;
}

int h5pack_chunksrc_read_raw(chunk_source *s, uint64_t chunk, uint8_t *dst, chunksrc_scratch *sc,
                             chunk_read_cost *cost, char *err, size_t err_len)
{
    chunk_read_cost own = {0, 0, 0, 0};
    int rc = s->located.addr ? read_located(s, chunk, dst, sc, &own, err, err_len)
                             : read_unlocated(s, chunk, dst, sc, &own, err, err_len);
    if (!rc && cost) {
        cost->bytes_read += own.bytes_read;
        cost->bytes_inflated += own.bytes_inflated;
        cost->read_s += own.read_s;
        cost->inflate_s += own.inflate_s;
    }
    return rc;
}
