/* chunksrc_raw.c - the raw path (see chunksrc.h): the HDF5 chunks of a slab as stored, filters not applied
 * by HDF5, then libdeflate and the scatter into the slab's images, all outside any lock. Chunks come
 * from pread at the addresses located at open (chunksrc_locate.c; no HDF5 call at all, and chunks that
 * lie back to back in the file are read with one pread), else from H5Dread_chunk under the HDF5 mutex.
 * Chunks that hold whole images (h5pack's files: a slab is one chunk) are read or inflated straight into
 * the destination. */
#include <libdeflate.h>
#include <stdio.h>
#include <string.h>

#include "chunksrc_impl.h"
#include "clock.h"

/* Back-to-back chunks of a slab are read together up to this many bytes (h5py's chunks are 16 KiB to
 * 1 MiB; a few MiB per pread amortises the system call without a large scratch buffer). */
#define RAW_RUN_MAX_BYTES ((uint64_t)4 << 20)

typedef struct slab_read {
    chunk_source *s;
    uint64_t slab;
    uint8_t *dst;
    chunksrc_scratch *sc;
    chunk_read_cost cost;
    char *err;
    size_t err_len;
} slab_read;

typedef struct raw_chunk {
    uint64_t r;           /* position in the slab */
    uint64_t stored;      /* 0: never written, the fill value */
    int deflated;         /* the deflate filter was applied (else the bytes are the pixels) */
    const uint8_t *bytes; /* the stored bytes: scratch, or the destination when read in place */
} raw_chunk;

/* Largest stored size we accept for a compressed chunk: deflate can grow incompressible data a little;
 * anything far beyond that is a damaged index, and must not make us allocate gigabytes. */
static int check_stored(const slab_read *x, uint64_t r, uint64_t stored)
{
    const chunk_source *s = x->s;
    if (stored <= 2 * s->h5_chunk_bytes + 65536)
        return 0;
    if (s->cps == 1)
        return h5pack_chunksrc_fail(s, H5PACK_ECORRUPT, x->err, x->err_len,
                                    "chunk %llu: stored size %llu is implausible for %llu bytes",
                                    (unsigned long long)x->slab, (unsigned long long)stored,
                                    (unsigned long long)s->h5_chunk_bytes);
    return h5pack_chunksrc_fail(s, H5PACK_ECORRUPT, x->err, x->err_len,
                                "chunk %llu (HDF5 chunk %llu of its %llu): stored size %llu is implausible for %llu "
                                "bytes", (unsigned long long)x->slab, (unsigned long long)r,
                                (unsigned long long)s->cps, (unsigned long long)stored,
                                (unsigned long long)s->h5_chunk_bytes);
}

/* The stored bytes are the pixels and fill the whole slab: they can be read straight into place. */
static int in_place(const chunk_source *s, uint64_t stored)
{
    return s->whole && !s->g.compressed && stored == s->g.chunk_bytes;
}

static int fail_chunk(const slab_read *x, const raw_chunk *raw, const char *what, unsigned long long a,
                      unsigned long long b)
{
    const chunk_source *s = x->s;
    char where[96] = "";
    if (s->cps > 1)
        snprintf(where, sizeof where, " (HDF5 chunk %llu of its %llu)", (unsigned long long)raw->r,
                 (unsigned long long)s->cps);
    return h5pack_chunksrc_fail(s, H5PACK_ECORRUPT, x->err, x->err_len, "chunk %llu%s: %s %llu, expected %llu",
                                (unsigned long long)x->slab, where, what, a, b);
}

static int inflate_chunk(slab_read *x, const raw_chunk *raw, uint8_t *out)
{
    chunk_source *s = x->s;
    chunksrc_scratch *sc = x->sc;
    size_t got = 0;
    if (!sc->dec && !(sc->dec = libdeflate_alloc_decompressor()))
        return h5pack_chunksrc_fail(s, H5PACK_ENOMEM, x->err, x->err_len, "chunk %llu: out of memory",
                                    (unsigned long long)x->slab);
    enum libdeflate_result r =
        libdeflate_zlib_decompress(sc->dec, raw->bytes, raw->stored, out, s->h5_chunk_bytes, &got);
    if (r != LIBDEFLATE_SUCCESS) {
        char where[96] = "";
        if (s->cps > 1)
            snprintf(where, sizeof where, " (HDF5 chunk %llu of its %llu)", (unsigned long long)raw->r,
                     (unsigned long long)s->cps);
        return h5pack_chunksrc_fail(s, H5PACK_ECORRUPT, x->err, x->err_len, "chunk %llu%s: damaged deflate data (%s)",
                                    (unsigned long long)x->slab, where,
                                    r == LIBDEFLATE_INSUFFICIENT_SPACE ? "inflates to more than a chunk" : "bad stream");
    }
    if (got != s->h5_chunk_bytes)
        return fail_chunk(x, raw, "inflates to", got, s->h5_chunk_bytes);
    x->cost.bytes_inflated += s->h5_chunk_bytes;
    return 0;
}

/* Turns one chunk's stored bytes into its pixels in the slab. */
static int decode_chunk(slab_read *x, const raw_chunk *raw)
{
    chunk_source *s = x->s;
    double t0 = h5pack_clock_s();
    int rc = 0;
    if (raw->stored == 0) {
        if (s->whole)
            memset(x->dst, s->fill_byte, s->g.chunk_bytes);
        else
            h5pack_chunksrc_scatter(s, x->slab, raw->r, NULL, x->dst);
    } else if (raw->deflated) {
        uint8_t *out = x->dst;
        if (!s->whole && h5pack_chunksrc_reserve(&x->sc->chunk, &x->sc->chunk_cap, s->h5_chunk_bytes) != 0)
            return h5pack_chunksrc_fail(s, H5PACK_ENOMEM, x->err, x->err_len, "chunk %llu: out of memory",
                                        (unsigned long long)x->slab);
        if (!s->whole)
            out = x->sc->chunk;
        rc = inflate_chunk(x, raw, out);
        if (!rc && !s->whole)
            h5pack_chunksrc_scatter(s, x->slab, raw->r, out, x->dst);
    } else if (raw->stored != s->h5_chunk_bytes) {
        return fail_chunk(x, raw, "stored size", raw->stored, s->h5_chunk_bytes);
    } else if (s->whole) {
        if (raw->bytes != x->dst)
            memcpy(x->dst, raw->bytes, s->g.chunk_bytes);
    } else {
        h5pack_chunksrc_scatter(s, x->slab, raw->r, raw->bytes, x->dst);
    }
    double dt = h5pack_clock_s() - t0;
    if (raw->deflated)
        x->cost.inflate_s += dt;
    else
        x->cost.read_s += dt;
    return rc;
}

/* Located chunks R0.. that lie back to back in the file: one pread into the scratch (or into place),
 * then each is decoded. *NEXT is the first chunk not done. */
static int read_located_run(slab_read *x, uint64_t r0, uint64_t *next)
{
    chunk_source *s = x->s;
    const uint64_t *addr = s->chunk_addr + x->slab * s->cps, *size = s->chunk_size + x->slab * s->cps;
    const uint8_t *deflated = s->chunk_deflated + x->slab * s->cps;
    uint64_t end = r0 + 1, total = size[r0];
    raw_chunk raw = {.r = r0, .stored = size[r0], .deflated = deflated[r0]};
    *next = end;
    if (size[r0] == 0)
        return decode_chunk(x, &raw);
    int rc = check_stored(x, r0, size[r0]);
    for (; !rc && end < s->cps && size[end] > 0 && addr[end] == addr[end - 1] + size[end - 1] &&
           total + size[end] <= RAW_RUN_MAX_BYTES; end++)
        if (!(rc = check_stored(x, end, size[end])))
            total += size[end];
    if (rc)
        return rc;
    uint8_t *buf = x->dst;
    if (!in_place(s, total)) {
        if (h5pack_chunksrc_reserve(&x->sc->buf, &x->sc->cap, total) != 0)
            return h5pack_chunksrc_fail(s, H5PACK_ENOMEM, x->err, x->err_len, "chunk %llu: out of memory",
                                        (unsigned long long)x->slab);
        buf = x->sc->buf;
    }
    double t0 = h5pack_clock_s();
    rc = h5pack_chunksrc_pread(s, x->slab, addr[r0], buf, total, x->err, x->err_len);
    x->cost.read_s += h5pack_clock_s() - t0;
    x->cost.bytes_read += rc ? 0 : total;
    *next = end;
    for (uint64_t r = r0, off = 0; !rc && r < end; off += size[r], r++) {
        raw = (raw_chunk){.r = r, .stored = size[r], .deflated = deflated[r], .bytes = buf + off};
        rc = decode_chunk(x, &raw);
    }
    return rc;
}

/* H5Dread_chunk writes as many bytes as the chunk index says, which in a damaged file need not be the
 * stored size the buffer was sized by (the index answered differently, or the probe learnt the size in
 * another process): ask the capture driver what the read would be first. Without that driver (it failed
 * to register) the sizes go unchecked. */
static int check_read_size(const slab_read *x, const raw_chunk *raw, const hsize_t *offset)
{
    chunk_source *s = x->s;
    uint64_t addr = 0, size = 0;
    uint32_t mask = 0;
    int rc = h5pack_chunksrc_vfd_locate_chunk(s->file, s->dset, offset, &addr, &size, &mask);
    if (rc == -2 || (rc == 0 && size == raw->stored))
        return 0;
    if (rc != 0)
        return h5pack_chunksrc_fail_read(s, x->slab, "cannot find the chunk in the chunk index", x->err, x->err_len);
    return fail_chunk(x, raw, "the chunk index is damaged: HDF5 would read", size, raw->stored);
}

/* Under the lock: chunk R's stored size and its raw bytes (filters not applied). */
static int fetch_locked(slab_read *x, raw_chunk *raw)
{
    chunk_source *s = x->s;
    hsize_t offset[4];
    uint32_t mask = 0;
    /* Asked of HDF5 now, in the same lock as the read: H5Dread_chunk writes as many bytes as the chunk index
     * says at this moment, and a size remembered from earlier (or learnt by the probe's child) can differ
     * from it in a damaged file, which would overflow the buffer. */
    int rc = h5pack_chunksrc_h5_stored_locked(s, x->slab, raw->r, &raw->stored);
    if (rc != 0)
        return h5pack_chunksrc_fail_read(s, x->slab, "cannot find the chunk's stored size", x->err, x->err_len);
    if (raw->stored == 0)
        return 0; /* never written: the fill value */
    if ((rc = check_stored(x, raw->r, raw->stored)) != 0)
        return rc;
    uint8_t *buf = x->dst;
    if (!in_place(s, raw->stored)) {
        if (h5pack_chunksrc_reserve(&x->sc->buf, &x->sc->cap, raw->stored) != 0)
            return h5pack_chunksrc_fail(s, H5PACK_ENOMEM, x->err, x->err_len, "chunk %llu: out of memory",
                                        (unsigned long long)x->slab);
        buf = x->sc->buf;
    }
    h5pack_chunksrc_chunk_offset(s, x->slab, raw->r, offset);
    if ((rc = check_read_size(x, raw, offset)) != 0)
        return rc;
    if (H5Dread_chunk(s->dset, H5P_DEFAULT, offset, &mask, buf) < 0)
        return h5pack_chunksrc_fail_read(s, x->slab, "raw chunk read failed", x->err, x->err_len);
    raw->bytes = buf;
    raw->deflated = s->deflate_index >= 0 && !(mask & (1u << s->deflate_index));
    return 0;
}

static int read_unlocated(slab_read *x, uint64_t r)
{
    h5pack_h5_quiet q;
    raw_chunk raw = {.r = r};
    double t0 = h5pack_clock_s();
    h5pack_h5_enter(&q);
    int rc = fetch_locked(x, &raw);
    h5pack_h5_leave(&q);
    x->cost.read_s += h5pack_clock_s() - t0;
    if (rc)
        return rc;
    x->cost.bytes_read += raw.stored;
    return decode_chunk(x, &raw);
}

int h5pack_chunksrc_read_raw(chunk_source *s, uint64_t chunk, uint8_t *dst, chunksrc_scratch *sc,
                             chunk_read_cost *cost, char *err, size_t err_len)
{
    slab_read x = {.s = s, .slab = chunk, .dst = dst, .sc = sc, .err = err, .err_len = err_len};
    int rc = 0;
    for (uint64_t r = 0; !rc && r < s->cps;) {
        if (s->chunk_addr) {
            rc = read_located_run(&x, r, &r);
        } else {
            rc = read_unlocated(&x, r);
            r++;
        }
    }
    if (!rc && cost) {
        cost->bytes_read += x.cost.bytes_read;
        cost->bytes_inflated += x.cost.bytes_inflated;
        cost->read_s += x.cost.read_s;
        cost->inflate_s += x.cost.inflate_s;
    }
    return rc;
}
