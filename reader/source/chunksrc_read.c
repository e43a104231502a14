/* chunksrc_read.c - reads one chunk's (chunk's) decompressed bytes, from any thread (see chunksrc.h):
 *   implicit / contiguous: a read from the store at a computed address, no HDF5 call, no lock;
 *   raw: chunksrc_raw.c;
 *   hdf5: H5Dread of the chunk's rows under the mutex (HDF5 applies and checks the filters).
 * Also the stored sizes (per chunk: its HDF5 chunks' summed) and the per-thread scratch. */
#include <stdlib.h>
#include <string.h>

#include "chunksrc_impl.h"
#include "clock.h"

chunksrc_scratch *h5pack_chunksrc_scratch_new(const chunk_source *s)
{
    (void)s;
    return h5pack_stored_scratch_new();
}

void h5pack_chunksrc_scratch_free(chunksrc_scratch *sc)
{
    h5pack_stored_scratch_free(sc);
}

int h5pack_chunksrc_h5_stored_locked(chunk_source *s, uint64_t chunk, uint64_t r, uint64_t *size)
{
    hsize_t offset[4], bytes = 0;
    unsigned mask = 0;
    haddr_t addr = HADDR_UNDEF;
    h5pack_chunksrc_chunk_offset(s, chunk, r, offset);
    /* The by-coordinate lookup tells an unwritten chunk (undefined address) from a failure. */
    if (H5Dget_chunk_storage_size(s->dset, offset, &bytes) < 0) {
        if (H5Dget_chunk_info_by_coord(s->dset, offset, &mask, &addr, &bytes) < 0 || addr != HADDR_UNDEF)
            return -1;
        bytes = 0;
    }
    *size = bytes;
    return 0;
}

int h5pack_chunksrc_query_stored_locked(chunk_source *s, uint64_t chunk, uint64_t *size)
{
    uint64_t known = __atomic_load_n(&s->stored[chunk], __ATOMIC_RELAXED), sum = 0;
    if (known != 0) {
        *size = known - 1;
        return 0;
    }
    for (uint64_t r = 0; r < s->cps; r++) {
        uint64_t one;
        if (h5pack_chunksrc_h5_stored_locked(s, chunk, r, &one) != 0)
            return -1;
        sum += one;
    }
    *size = sum;
    __atomic_store_n(&s->stored[chunk], sum + 1, __ATOMIC_RELAXED);
    return 0;
}

uint64_t h5pack_chunksrc_stored_bytes(const chunk_source *s, uint64_t chunk)
{
    if (chunk >= s->g.n_chunks)
        return 0;
    if (s->g.several_sizes)
        return h5pack_chunksrc_several_sizes_stored(s, chunk);
    if (!s->stored)
        return h5pack_chunksrc_chunk_len(s, chunk);
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

int h5pack_chunksrc_fail_chunk(const chunk_source *s, uint64_t chunk, int rc, const char *why, char *err,
                               size_t err_len)
{
    return h5pack_chunksrc_fail(s, rc, err, err_len, "chunk %llu: %s", (unsigned long long)chunk, why);
}

/* Implicit: chunk i at base + i * chunk_bytes (the last one is stored full size: read its valid images).
 * Contiguous: virtual chunk i starts at image i * k, and chunk_bytes = k * image_bytes too. */
static int read_range(chunk_source *s, uint64_t chunk, uint8_t *dst, chunk_read_cost *cost, char *err,
                      size_t err_len)
{
    uint64_t len = h5pack_chunksrc_chunk_len(s, chunk);
    char why[256];
    double t0 = h5pack_clock_s();
    int rc = s->st->ops->read(s->st, s->base_addr + h5pack_chunksrc_chunk_start(s, chunk), dst, (size_t)len, why,
                              sizeof why);
    if (rc)
        return h5pack_chunksrc_fail_chunk(s, chunk, rc, why, err, err_len);
    if (cost) {
        cost->bytes_read += len;
        cost->read_s += h5pack_clock_s() - t0;
    }
    return 0;
}

int h5pack_chunksrc_fail_read(chunk_source *s, uint64_t chunk, const char *what, char *err, size_t err_len)
{
    char h5msg[600];
    h5pack_h5_error_text(h5msg, sizeof h5msg);
    int code = h5pack_h5_error_is_io() ? H5PACK_EIO : H5PACK_ECORRUPT;
    return h5pack_chunksrc_fail(s, code, err, err_len, "chunk %llu: %s (HDF5: %s)", (unsigned long long)chunk, what, h5msg);
}

static int read_hyperslab_locked(chunk_source *s, uint64_t chunk, uint8_t *dst, char *err, size_t err_len)
{
    hsize_t start[4] = {chunk * s->g.samples_per_chunk, 0, 0, 0}, count[4];
    int rc = 0;
    H5Sget_simple_extent_dims(s->fspace, count, NULL); /* the dataset's rank: 4, or 3 for gray images */
    count[0] = h5pack_chunksrc_chunk_samples(s, chunk);
    if (s->g.several_sizes) /* the chunk's byte range of the 1-D store */
        start[0] = h5pack_chunksrc_chunk_start(s, chunk), count[0] = h5pack_chunksrc_chunk_len(s, chunk);
    hid_t mem = H5Screate_simple(s->rank, count, NULL);
    if (mem < 0 || H5Sselect_hyperslab(s->fspace, H5S_SELECT_SET, start, NULL, count, NULL) < 0)
        rc = h5pack_chunksrc_fail_read(s, chunk, "cannot select the chunk", err, err_len);
    else if (H5Dread(s->dset, H5T_NATIVE_UINT8, mem, s->fspace, H5P_DEFAULT, dst) < 0)
        rc = h5pack_chunksrc_fail_read(s, chunk, "read failed", err, err_len);
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
            cost->bytes_inflated += s->g.several_sizes ? h5pack_chunksrc_chunk_len(s, chunk) : s->g.chunk_bytes;
    }
    return rc;
}

void h5pack_chunksrc_will_read(chunk_source *s, uint64_t chunk)
{
    if (!s || chunk >= s->g.n_chunks || h5pack_store_reads_ahead(s->st) == 0)
        return;
    if (s->g.path == H5PACK_READ_IMPLICIT || s->g.path == H5PACK_READ_CONTIGUOUS)
        h5pack_store_will_read(s->st, s->base_addr + h5pack_chunksrc_chunk_start(s, chunk),
                               h5pack_chunksrc_chunk_len(s, chunk)); /* read_range's one read */
    else if ((s->g.path == H5PACK_READ_RAW_DEFLATE || s->g.path == H5PACK_READ_LOCATED) && !s->g.several_sizes)
        h5pack_chunksrc_raw_will_read(s, chunk);
}

int h5pack_chunksrc_read(chunk_source *s, uint64_t chunk, uint8_t *dst, chunksrc_scratch *sc, chunk_read_cost *cost,
                  char *err, size_t err_len)
{
    if (!s || !dst || chunk >= s->g.n_chunks)
        return h5pack_chunksrc_fail(s, H5PACK_EINVAL, err, err_len, "chunk %llu out of range",
                             (unsigned long long)chunk);
    switch (s->g.path) {
    case H5PACK_READ_IMPLICIT:
    case H5PACK_READ_CONTIGUOUS:
        return read_range(s, chunk, dst, cost, err, err_len);
    case H5PACK_READ_RAW_DEFLATE:
    case H5PACK_READ_LOCATED: {
        chunksrc_scratch *own = sc ? NULL : h5pack_chunksrc_scratch_new(s);
        if (!sc && !own)
            return h5pack_chunksrc_fail(s, H5PACK_ENOMEM, err, err_len, "out of memory");
        chunk_read_cost none = {0, 0, 0, 0};
        int rc = s->g.several_sizes ? h5pack_chunksrc_read_several_sizes_raw(s, chunk, dst, sc ? sc : own, cost ? cost : &none,
                                                               err, err_len)
                             : h5pack_chunksrc_read_raw(s, chunk, dst, sc ? sc : own, cost, err, err_len);
        h5pack_chunksrc_scratch_free(own);
        return rc;
    }
    case H5PACK_READ_HDF5:
        return read_hdf5(s, chunk, dst, cost, err, err_len);
    }
    return h5pack_chunksrc_fail(s, H5PACK_EINTERNAL, err, err_len, "unknown read path");
}
