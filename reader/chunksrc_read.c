/* chunksrc_read.c - reads one chunk's decompressed bytes, from any thread (see chunksrc.h):
 *   implicit / contiguous: pread at a computed address, no HDF5 call, no lock;
 *   raw: pread of the stored bytes when every chunk was located at open (chunksrc_locate.c), else
 *        H5Dread_chunk under the HDF5 mutex; then libdeflate, outside any lock;
 *   hdf5: H5Dread of the chunk's rows under the mutex (HDF5 applies and checks the filters). */
#include <errno.h>
#include <libdeflate.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chunksrc_impl.h"
#include "clock.h"

/* Largest stored size we accept for a compressed chunk: deflate can grow incompressible data a little;
 * anything far beyond that is a damaged index, and must not make us allocate gigabytes. */
static uint64_t max_stored_bytes(const chunk_source *s)
{
    return 2 * s->g.chunk_bytes + 65536;
}

chunksrc_scratch *h5pack_chunksrc_scratch_new(const chunk_source *s)
{
    chunksrc_scratch *sc = calloc(1, sizeof *sc);
    if (!sc)
        return NULL;
    if (s && s->g.compressed) {
        sc->dec = libdeflate_alloc_decompressor();
        if (!sc->dec) {
            free(sc);
            return NULL;
        }
    }
    return sc;
}

void h5pack_chunksrc_scratch_free(chunksrc_scratch *sc)
{
    if (!sc)
        return;
    if (sc->dec)
        libdeflate_free_decompressor(sc->dec);
    free(sc->buf);
    free(sc);
}

static int scratch_reserve(chunksrc_scratch *sc, size_t bytes)
{
    if (sc->cap >= bytes)
        return 0;
    uint8_t *p = realloc(sc->buf, bytes);
    if (!p)
        return -1;
    sc->buf = p;
    sc->cap = bytes;
    return 0;
}

int h5pack_chunksrc_query_stored_locked(chunk_source *s, uint64_t chunk, uint64_t *size)
{
    uint64_t known = __atomic_load_n(&s->stored[chunk], __ATOMIC_RELAXED);
    if (known != 0) {
        *size = known - 1;
        return 0;
    }
    hsize_t offset[4] = {chunk * s->g.samples_per_chunk, 0, 0, 0}, bytes = 0;
    unsigned mask = 0;
    haddr_t addr = HADDR_UNDEF;
    /* The by-coordinate lookup tells an unwritten chunk (undefined address) from a failure. */
    if (H5Dget_chunk_storage_size(s->dset, offset, &bytes) < 0) {
        if (H5Dget_chunk_info_by_coord(s->dset, offset, &mask, &addr, &bytes) < 0 || addr != HADDR_UNDEF)
            return -1;
        bytes = 0;
    }
    *size = bytes;
    __atomic_store_n(&s->stored[chunk], (uint64_t)bytes + 1, __ATOMIC_RELAXED);
    return 0;
}

uint64_t h5pack_chunksrc_stored_bytes(const chunk_source *s, uint64_t chunk)
{
    if (chunk >= s->g.n_chunks)
        return 0;
    if (!s->stored)
        return h5pack_chunksrc_chunk_samples(s, chunk) * s->g.image_bytes;
    uint64_t known = __atomic_load_n(&s->stored[chunk], __ATOMIC_RELAXED);
    if (known != 0)
        return known - 1;
    /* Learnt lazily and remembered: the source is logically const, the cache is an implementation detail. */
    chunk_source *ms = (chunk_source *)s;
    h5pack_h5_quiet q;
    uint64_t size = 0;
    h5pack_h5_enter(&q);
    if (h5pack_chunksrc_query_stored_locked(ms, chunk, &size) != 0)
        size = 0;
    h5pack_h5_leave(&q);
    return size;
}

static int pread_all(chunk_source *s, uint64_t chunk, uint64_t addr, uint8_t *dst, uint64_t len, char *err,
                     size_t err_len)
{
    uint64_t done = 0;
    while (done < len) {
        ssize_t n = pread(s->fd, dst + done, len - done, (off_t)(addr + done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return h5pack_chunksrc_fail(s, H5PACK_EIO, err, err_len, "chunk %llu: read failed: %s", (unsigned long long)chunk,
                                 strerror(errno));
        if (n == 0)
            return h5pack_chunksrc_fail(s, H5PACK_ECORRUPT, err, err_len,
                                 "chunk %llu: file truncated: got %llu of %llu bytes at offset %llu",
                                 (unsigned long long)chunk, (unsigned long long)done, (unsigned long long)len,
                                 (unsigned long long)addr);
        done += (uint64_t)n;
    }
    return 0;
}

/* Implicit: chunk i at base + i * chunk_bytes (the last one is stored full size: read its valid images).
 * Contiguous: virtual chunk i starts at image i * k, and chunk_bytes = k * image_bytes too. */
static int read_pread(chunk_source *s, uint64_t chunk, uint8_t *dst, chunk_read_cost *cost, char *err,
                      size_t err_len)
{
    uint64_t len = h5pack_chunksrc_chunk_samples(s, chunk) * s->g.image_bytes;
    double t0 = h5pack_clock_s();
    int rc = pread_all(s, chunk, s->base_addr + chunk * s->g.chunk_bytes, dst, len, err, err_len);
    if (!rc && cost) {
        cost->bytes_read += len;
        cost->read_s += h5pack_clock_s() - t0;
    }
    return rc;
}

static int fail_h5_read(chunk_source *s, uint64_t chunk, const char *what, char *err, size_t err_len)
{
    char h5msg[600];
    h5pack_h5_error_text(h5msg, sizeof h5msg);
    int code = h5pack_h5_error_is_io() ? H5PACK_EIO : H5PACK_ECORRUPT;
    return h5pack_chunksrc_fail(s, code, err, err_len, "chunk %llu: %s (HDF5: %s)", (unsigned long long)chunk, what, h5msg);
}

typedef struct raw_chunk {
    uint64_t stored;
    int deflated;   /* the deflate filter was applied (else the bytes are the pixels) */
    uint8_t *bytes; /* the scratch buffer, or dst for an unfiltered chunk read in place */
} raw_chunk;

/* Where the stored bytes of a chunk go: straight into DST when they are the pixels, else the scratch. */
static int raw_buffer(chunk_source *s, uint64_t chunk, uint8_t *dst, chunksrc_scratch *sc, raw_chunk *raw, char *err,
                      size_t err_len)
{
    if (raw->stored > max_stored_bytes(s))
        return h5pack_chunksrc_fail(s, H5PACK_ECORRUPT, err, err_len, "chunk %llu: stored size %llu is implausible for %llu bytes",
                             (unsigned long long)chunk, (unsigned long long)raw->stored,
                             (unsigned long long)s->g.chunk_bytes);
    if (!s->g.compressed && raw->stored == s->g.chunk_bytes) {
        raw->bytes = dst;
        return 0;
    }
    if (scratch_reserve(sc, raw->stored) != 0)
        return h5pack_chunksrc_fail(s, H5PACK_ENOMEM, err, err_len, "chunk %llu: out of memory", (unsigned long long)chunk);
    raw->bytes = sc->buf;
    return 0;
}

/* Under the lock: the chunk's stored size and its raw bytes (filters not applied). */
static int fetch_raw_locked(chunk_source *s, uint64_t chunk, uint8_t *dst, chunksrc_scratch *sc, raw_chunk *raw,
                            char *err, size_t err_len)
{
    hsize_t offset[4] = {chunk * s->g.samples_per_chunk, 0, 0, 0};
    uint32_t mask = 0;
    if (h5pack_chunksrc_query_stored_locked(s, chunk, &raw->stored) != 0)
        return fail_h5_read(s, chunk, "cannot find the chunk's stored size", err, err_len);
    if (raw->stored == 0)
        return 0; /* never written: the fill value */
    int rc = raw_buffer(s, chunk, dst, sc, raw, err, err_len);
    if (rc)
        return rc;
    if (H5Dread_chunk(s->dset, H5P_DEFAULT, offset, &mask, raw->bytes) < 0)
        return fail_h5_read(s, chunk, "raw chunk read failed", err, err_len);
    raw->deflated = s->deflate_index >= 0 && !(mask & (1u << s->deflate_index));
    return 0;
}

/* No lock: every chunk was located at open (chunksrc_locate.c). */
static int fetch_raw_pread(chunk_source *s, uint64_t chunk, uint8_t *dst, chunksrc_scratch *sc, raw_chunk *raw,
                           char *err, size_t err_len)
{
    raw->stored = s->stored[chunk] - 1; /* all known: locate filled them */
    if (raw->stored == 0)
        return 0;
    int rc = raw_buffer(s, chunk, dst, sc, raw, err, err_len);
    if (!rc)
        rc = pread_all(s, chunk, s->chunk_addr[chunk], raw->bytes, raw->stored, err, err_len);
    raw->deflated = s->chunk_deflated[chunk];
    return rc;
}

static int fetch_raw(chunk_source *s, uint64_t chunk, uint8_t *dst, chunksrc_scratch *sc, raw_chunk *raw, char *err,
                     size_t err_len)
{
    h5pack_h5_quiet q;
    if (s->chunk_addr)
        return fetch_raw_pread(s, chunk, dst, sc, raw, err, err_len);
    h5pack_h5_enter(&q);
    int rc = fetch_raw_locked(s, chunk, dst, sc, raw, err, err_len);
    h5pack_h5_leave(&q);
    return rc;
}

static int inflate_chunk(chunk_source *s, uint64_t chunk, const raw_chunk *raw, uint8_t *dst, chunksrc_scratch *sc,
                         char *err, size_t err_len)
{
    size_t out = 0;
    if (!sc->dec && !(sc->dec = libdeflate_alloc_decompressor()))
        return h5pack_chunksrc_fail(s, H5PACK_ENOMEM, err, err_len, "chunk %llu: out of memory", (unsigned long long)chunk);
    enum libdeflate_result r =
        libdeflate_zlib_decompress(sc->dec, raw->bytes, raw->stored, dst, s->g.chunk_bytes, &out);
    if (r != LIBDEFLATE_SUCCESS)
        return h5pack_chunksrc_fail(s, H5PACK_ECORRUPT, err, err_len, "chunk %llu: damaged deflate data (%s)",
                             (unsigned long long)chunk,
                             r == LIBDEFLATE_INSUFFICIENT_SPACE ? "inflates to more than a chunk" : "bad stream");
    if (out != s->g.chunk_bytes)
        return h5pack_chunksrc_fail(s, H5PACK_ECORRUPT, err, err_len, "chunk %llu: inflates to %zu bytes, expected %llu",
                             (unsigned long long)chunk, out, (unsigned long long)s->g.chunk_bytes);
    return 0;
}

/* A chunk stored without the deflate filter applied (unfiltered dataset, or the optional filter skipped
 * for this chunk): its raw bytes are the pixels. */
static int copy_plain_chunk(chunk_source *s, uint64_t chunk, const raw_chunk *raw, uint8_t *dst, char *err,
                            size_t err_len)
{
    if (raw->stored != s->g.chunk_bytes)
        return h5pack_chunksrc_fail(s, H5PACK_ECORRUPT, err, err_len, "chunk %llu: stored size %llu, expected %llu",
                             (unsigned long long)chunk, (unsigned long long)raw->stored,
                             (unsigned long long)s->g.chunk_bytes);
    if (raw->bytes != dst)
        memcpy(dst, raw->bytes, s->g.chunk_bytes);
    return 0;
}

static int read_raw(chunk_source *s, uint64_t chunk, uint8_t *dst, chunksrc_scratch *sc, chunk_read_cost *cost,
                    char *err, size_t err_len)
{
    raw_chunk raw = {0, 0, NULL};
    double t0 = h5pack_clock_s();
    int rc = fetch_raw(s, chunk, dst, sc, &raw, err, err_len);
    double t1 = h5pack_clock_s();
    if (rc)
        return rc;
    if (raw.stored == 0)
        memset(dst, s->fill_byte, s->g.chunk_bytes);
    else if (raw.deflated)
        rc = inflate_chunk(s, chunk, &raw, dst, sc, err, err_len);
    else
        rc = copy_plain_chunk(s, chunk, &raw, dst, err, err_len);
    if (!rc && cost) {
        cost->bytes_read += raw.stored;
        cost->read_s += t1 - t0;
        if (raw.deflated) {
            cost->bytes_inflated += s->g.chunk_bytes;
            cost->inflate_s += h5pack_clock_s() - t1;
        }
    }
    return rc;
}

static int read_hyperslab_locked(chunk_source *s, uint64_t chunk, uint8_t *dst, char *err, size_t err_len)
{
    hsize_t start[4] = {chunk * s->g.samples_per_chunk, 0, 0, 0}, count[4];
    int rc = 0;
    H5Sget_simple_extent_dims(s->fspace, count, NULL);
    count[0] = h5pack_chunksrc_chunk_samples(s, chunk);
    hid_t mem = H5Screate_simple(4, count, NULL);
    if (mem < 0 || H5Sselect_hyperslab(s->fspace, H5S_SELECT_SET, start, NULL, count, NULL) < 0)
        rc = fail_h5_read(s, chunk, "cannot select the chunk", err, err_len);
    else if (H5Dread(s->dset, H5T_NATIVE_UINT8, mem, s->fspace, H5P_DEFAULT, dst) < 0)
        rc = fail_h5_read(s, chunk, "read failed", err, err_len);
    if (mem >= 0)
        H5Sclose(mem);
    return rc;
}

static int read_hdf5(chunk_source *s, uint64_t chunk, uint8_t *dst, chunk_read_cost *cost, char *err, size_t err_len)
{
    h5pack_h5_quiet q;
    double t0 = h5pack_clock_s();
    h5pack_h5_enter(&q);
    int rc = read_hyperslab_locked(s, chunk, dst, err, err_len);
    h5pack_h5_leave(&q);
    if (!rc && cost) {
        double dt = h5pack_clock_s() - t0;
        cost->bytes_read += h5pack_chunksrc_stored_bytes(s, chunk);
        /* HDF5 reads and inflates in one call: the time counts as reading. */
        cost->read_s += dt;
        if (s->g.compressed)
            cost->bytes_inflated += s->g.chunk_bytes;
    }
    return rc;
}

int h5pack_chunksrc_read(chunk_source *s, uint64_t chunk, uint8_t *dst, chunksrc_scratch *sc, chunk_read_cost *cost,
                  char *err, size_t err_len)
{
    if (!s || !dst || chunk >= s->g.n_chunks)
        return h5pack_chunksrc_fail(s, H5PACK_EINVAL, err, err_len, "chunk %llu out of range",
                             (unsigned long long)chunk);
    switch (s->g.path) {
    case CHUNKSRC_IMPLICIT:
    case CHUNKSRC_CONTIGUOUS:
        return read_pread(s, chunk, dst, cost, err, err_len);
    case CHUNKSRC_RAW_DEFLATE: {
        chunksrc_scratch *own = sc ? NULL : h5pack_chunksrc_scratch_new(s);
        if (!sc && !own)
            return h5pack_chunksrc_fail(s, H5PACK_ENOMEM, err, err_len, "out of memory");
        int rc = read_raw(s, chunk, dst, sc ? sc : own, cost, err, err_len);
        h5pack_chunksrc_scratch_free(own);
        return rc;
    }
    case CHUNKSRC_HDF5:
        return read_hdf5(s, chunk, dst, cost, err, err_len);
    }
    return h5pack_chunksrc_fail(s, H5PACK_EINTERNAL, err, err_len, "unknown read path");
}
