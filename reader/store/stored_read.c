/* stored_read.c - stored chunks back as pixels (stored.h): one read of a chunk (or of a run of chunks
 * that lie back to back) from the store, then libdeflate for what the deflate filter wrote. No HDF5, no
 * lock: each thread brings its own scratch. */
#include <libdeflate.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "errtext.h"
#include "h5pack.h"
#include "stored.h"

struct stored_scratch {
    struct libdeflate_decompressor *dec; /* made on the first inflate */
    uint8_t *buf;   /* stored bytes of one chunk or a run */
    size_t cap;
    uint8_t *chunk; /* one inflated chunk, for callers that scatter it */
    size_t chunk_cap;
};

stored_scratch *h5pack_stored_scratch_new(void)
{
    return calloc(1, sizeof(stored_scratch));
}

void h5pack_stored_scratch_free(stored_scratch *sc)
{
    if (!sc)
        return;
    if (sc->dec)
        libdeflate_free_decompressor(sc->dec);
    free(sc->buf), free(sc->chunk);
    free(sc);
}

/* Grows *BUF to BYTES, keeping nothing (no realloc copy). */
static uint8_t *reserve(uint8_t **buf, size_t *cap, size_t bytes)
{
    if (*buf && *cap >= bytes)
        return *buf;
    free(*buf);
    *buf = malloc(bytes ? bytes : 1);
    *cap = *buf ? bytes : 0;
    return *buf;
}

uint8_t *h5pack_stored_chunk_room(stored_scratch *sc, size_t bytes)
{
    return reserve(&sc->chunk, &sc->chunk_cap, bytes);
}

uint8_t *h5pack_stored_bytes_room(stored_scratch *sc, size_t bytes)
{
    return reserve(&sc->buf, &sc->cap, bytes);
}

uint64_t h5pack_stored_bytes(const stored_chunks *c, uint64_t k, uint64_t end)
{
    if (!c->addr)
        return (end - k) * c->chunk_bytes;
    uint64_t sum = 0;
    for (; k < end; k++)
        sum += c->size[k];
    return sum;
}

uint64_t h5pack_stored_run_end(const stored_chunks *c, uint64_t k, uint64_t limit, uint64_t max_bytes)
{
    stored_piece p = h5pack_stored_piece(c, k);
    uint64_t end = k + 1, total = p.size;
    for (; end < limit; end++) {
        stored_piece q = h5pack_stored_piece(c, end);
        if (q.size == 0 || p.size == 0 || q.addr != p.addr + p.size || total + q.size > max_bytes)
            break;
        total += q.size, p = q;
    }
    return end;
}

/* Largest stored size accepted for a chunk of CHUNK_BYTES: deflate can grow incompressible data a little;
 * anything far beyond that is a damaged index, and must not make us allocate gigabytes. */
static int plausible(uint64_t stored, uint64_t chunk_bytes)
{
    return stored <= 2 * chunk_bytes + 65536;
}

static int read_bytes(store *st, uint64_t addr, uint8_t *dst, uint64_t len, chunk_read_cost *cost, char *why,
                      size_t why_len)
{
    double t0 = h5pack_clock_s();
    int rc = st->ops->read(st, addr, dst, (size_t)len, why, why_len);
    cost->read_s += h5pack_clock_s() - t0;
    if (!rc)
        cost->bytes_read += len;
    return rc;
}

int h5pack_stored_fetch(store *st, const stored_chunks *c, uint64_t k, uint64_t end, stored_scratch *sc,
                        const uint8_t **bytes, chunk_read_cost *cost, char *why, size_t why_len)
{
    stored_piece p = h5pack_stored_piece(c, k);
    uint64_t total = 0;
    for (uint64_t j = k; j < end; j++) {
        uint64_t size = h5pack_stored_piece(c, j).size;
        if (!plausible(size, c->chunk_bytes))
            return h5pack_errf(H5PACK_ECORRUPT, why, why_len, "stored size %llu is implausible for %llu bytes",
                               (unsigned long long)size, (unsigned long long)c->chunk_bytes);
        total += size;
    }
    uint8_t *buf = reserve(&sc->buf, &sc->cap, (size_t)total);
    if (!buf)
        return h5pack_errf(H5PACK_ENOMEM, why, why_len, "out of memory for %llu stored bytes",
                           (unsigned long long)total);
    *bytes = buf;
    return total ? read_bytes(st, p.addr, buf, total, cost, why, why_len) : 0;
}

static int inflate_into(const stored_piece *p, uint64_t chunk_bytes, const uint8_t *bytes, uint8_t *out,
                        stored_scratch *sc, chunk_read_cost *cost, char *why, size_t why_len)
{
    size_t got = 0;
    if (!sc->dec && !(sc->dec = libdeflate_alloc_decompressor()))
        return h5pack_errf(H5PACK_ENOMEM, why, why_len, "out of memory for a decompressor");
    double t0 = h5pack_clock_s();
    enum libdeflate_result r = libdeflate_zlib_decompress(sc->dec, bytes, (size_t)p->size, out, (size_t)chunk_bytes,
                                                          &got);
    cost->inflate_s += h5pack_clock_s() - t0;
    if (r != LIBDEFLATE_SUCCESS)
        return h5pack_errf(H5PACK_ECORRUPT, why, why_len, "damaged deflate data: does not inflate (%s)",
                           r == LIBDEFLATE_INSUFFICIENT_SPACE ? "inflates to more than a chunk" : "bad stream");
    if (got != chunk_bytes)
        return h5pack_errf(H5PACK_ECORRUPT, why, why_len, "inflates to %zu bytes, expected %llu", got,
                           (unsigned long long)chunk_bytes);
    cost->bytes_inflated += chunk_bytes;
    return 0;
}

int h5pack_stored_unpack(const stored_piece *p, uint64_t chunk_bytes, const uint8_t *bytes, uint8_t *out,
                         stored_scratch *sc, const uint8_t **pixels, chunk_read_cost *cost, char *why,
                         size_t why_len)
{
    *pixels = NULL;
    if (p->size == 0)
        return 0;
    if (!p->deflated) {
        if (p->size != chunk_bytes)
            return h5pack_errf(H5PACK_ECORRUPT, why, why_len, "stored size %llu, expected %llu",
                               (unsigned long long)p->size, (unsigned long long)chunk_bytes);
        *pixels = bytes;
        return 0;
    }
    if (!out && !(out = h5pack_stored_chunk_room(sc, (size_t)chunk_bytes)))
        return h5pack_errf(H5PACK_ENOMEM, why, why_len, "out of memory for a chunk of %llu bytes",
                           (unsigned long long)chunk_bytes);
    int rc = inflate_into(p, chunk_bytes, bytes, out, sc, cost, why, why_len);
    *pixels = rc ? NULL : out;
    return rc;
}

int h5pack_stored_get(store *st, const stored_chunks *c, uint64_t k, uint8_t *out, stored_scratch *sc,
                      chunk_read_cost *cost, char *why, size_t why_len)
{
    stored_piece p = h5pack_stored_piece(c, k);
    if (p.size == 0) {
        memset(out, c->fill, (size_t)c->chunk_bytes);
        return 0;
    }
    if (!p.deflated) { /* the pixels themselves: straight into place */
        if (p.size != c->chunk_bytes)
            return h5pack_errf(H5PACK_ECORRUPT, why, why_len, "stored size %llu, expected %llu",
                               (unsigned long long)p.size, (unsigned long long)c->chunk_bytes);
        return read_bytes(st, p.addr, out, p.size, cost, why, why_len);
    }
    const uint8_t *bytes, *pixels;
    int rc = h5pack_stored_fetch(st, c, k, k + 1, sc, &bytes, cost, why, why_len);
    return rc ? rc : h5pack_stored_unpack(&p, c->chunk_bytes, bytes, out, sc, &pixels, cost, why, why_len);
}

const uint8_t *h5pack_stored_view(store *st, const stored_chunks *c, uint64_t k, chunk_read_cost *cost)
{
    stored_piece p = h5pack_stored_piece(c, k);
    if (p.size != c->chunk_bytes || p.deflated)
        return NULL;
    double t0 = h5pack_clock_s();
    const uint8_t *v = h5pack_store_view(st, p.addr, p.size);
    if (v) {
        cost->bytes_read += p.size;
        cost->read_s += h5pack_clock_s() - t0;
    }
    return v;
}

void h5pack_stored_unview(store *st, const stored_chunks *c, uint64_t k)
{
    stored_piece p = h5pack_stored_piece(c, k);
    if (p.size == c->chunk_bytes && !p.deflated)
        h5pack_store_unview(st, p.addr, p.size);
}
