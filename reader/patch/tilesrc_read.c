/* tilesrc_read.c - reads one tile (tilesrc.h): pread for implicit tiles, H5Dread_chunk + libdeflate for
 * gzip tiles, H5Dread of the region for the rest. */
#include <errno.h>
#include <libdeflate.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "tilesrc_impl.h"

struct tile_scratch {
    uint8_t *stored;
    size_t stored_cap;
    struct libdeflate_decompressor *dec;
};

tile_scratch *h5pack_tilesrc_scratch_new(const tile_source *s)
{
    (void)s;
    return calloc(1, sizeof(tile_scratch));
}

void h5pack_tilesrc_scratch_free(tile_scratch *sc)
{
    if (!sc)
        return;
    if (sc->dec)
        libdeflate_free_decompressor(sc->dec);
    free(sc->stored);
    free(sc);
}

static int read_implicit(tile_source *s, uint64_t i, const tile_image *im, uint64_t k, uint8_t *dst,
                         chunk_read_cost *cost, char *err, size_t err_len)
{
    size_t bytes = (size_t)im->ch * im->cw * s->g.channels, done = 0;
    off_t at = (off_t)(im->addr0 + (int64_t)(k * bytes));
    double t0 = h5pack_clock_s();
    while (done < bytes) {
        ssize_t n = pread(s->fd, dst + done, bytes - done, at + (off_t)done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return h5pack_tilesrc_fail(s, n < 0 ? H5PACK_EIO : H5PACK_ECORRUPT, err, err_len,
                                       "tile %llu of image %llu: %s at byte %lld", (unsigned long long)k,
                                       (unsigned long long)i, n < 0 ? strerror(errno) : "the file ends",
                                       (long long)(at + (off_t)done));
        done += (size_t)n;
    }
    cost->read_s += h5pack_clock_s() - t0;
    cost->bytes_read += bytes;
    return 0;
}

/* The stored bytes of tile OFF of image I into the scratch (under HDF5's lock); 0 or an error. */
static int read_stored(tile_source *s, uint64_t i, const hsize_t off[3], tile_scratch *sc, size_t *size,
                       uint32_t *mask, char *err, size_t err_len)
{
    h5pack_h5_quiet q;
    hsize_t stored = 0;
    int rc = 0;
    h5pack_h5_enter(&q);
    if (H5Dget_chunk_storage_size(s->dset[i], off, &stored) < 0 || stored == 0 || stored > ((hsize_t)1 << 31)) {
        rc = h5pack_tilesrc_fail(s, H5PACK_ECORRUPT, err, err_len, "image %llu: tile at (%llu, %llu) is not stored",
                                 (unsigned long long)i, (unsigned long long)off[0], (unsigned long long)off[1]);
    } else if (stored > sc->stored_cap) {
        uint8_t *grown = realloc(sc->stored, (size_t)stored);
        if (!grown)
            rc = h5pack_tilesrc_fail(s, H5PACK_ENOMEM, err, err_len, "out of memory");
        else
            sc->stored = grown, sc->stored_cap = (size_t)stored;
    }
    if (!rc && H5Dread_chunk(s->dset[i], H5P_DEFAULT, off, mask, sc->stored) < 0) {
        char h5msg[300];
        h5pack_h5_error_text(h5msg, sizeof h5msg);
        rc = h5pack_tilesrc_fail(s, H5PACK_ECORRUPT, err, err_len, "image %llu: cannot read the tile at (%llu, %llu) "
                                 "(HDF5: %s)", (unsigned long long)i, (unsigned long long)off[0],
                                 (unsigned long long)off[1], h5msg);
    }
    h5pack_h5_leave(&q);
    *size = (size_t)stored;
    return rc;
}

static int read_deflate(tile_source *s, uint64_t i, const tile_image *im, const hsize_t off[3], uint8_t *dst,
                        tile_scratch *sc, chunk_read_cost *cost, char *err, size_t err_len)
{
    size_t size = 0, bytes = (size_t)im->ch * im->cw * s->g.channels, got = 0;
    uint32_t mask = 0;
    double t0 = h5pack_clock_s();
    int rc = read_stored(s, i, off, sc, &size, &mask, err, err_len);
    double t1 = h5pack_clock_s();
    cost->read_s += t1 - t0;
    if (rc)
        return rc;
    cost->bytes_read += size;
    if (mask) { /* the filter was skipped for this tile: stored as is */
        if (size != bytes)
            return h5pack_tilesrc_fail(s, H5PACK_ECORRUPT, err, err_len, "image %llu: an unfiltered tile of %zu bytes, "
                                       "expected %zu", (unsigned long long)i, size, bytes);
        memcpy(dst, sc->stored, bytes);
        return 0;
    }
    if (!sc->dec && !(sc->dec = libdeflate_alloc_decompressor()))
        return h5pack_tilesrc_fail(s, H5PACK_ENOMEM, err, err_len, "out of memory");
    enum libdeflate_result r = libdeflate_zlib_decompress(sc->dec, sc->stored, size, dst, bytes, &got);
    cost->inflate_s += h5pack_clock_s() - t1;
    cost->bytes_inflated += got;
    if (r != LIBDEFLATE_SUCCESS || got != bytes)
        return h5pack_tilesrc_fail(s, H5PACK_ECORRUPT, err, err_len, "image %llu: the tile at (%llu, %llu) does not "
                                   "inflate to %zu bytes", (unsigned long long)i, (unsigned long long)off[0],
                                   (unsigned long long)off[1], bytes);
    return 0;
}

/* Any filter: HDF5 reads the tile's region (and checks its checksum) into the top-left of DST. */
static int read_hdf5(tile_source *s, uint64_t i, const tile_image *im, const hsize_t off[3], uint8_t *dst,
                     chunk_read_cost *cost, char *err, size_t err_len)
{
    hsize_t rows = im->h - off[0] < im->ch ? im->h - off[0] : im->ch, cols = im->w - off[1] < im->cw ? im->w - off[1] : im->cw;
    hsize_t count[3] = {rows, cols, s->g.channels}, mdims[3] = {im->ch, im->cw, s->g.channels}, zero[3] = {0, 0, 0};
    size_t bytes = (size_t)im->ch * im->cw * s->g.channels;
    if (rows < im->ch || cols < im->cw)
        memset(dst, 0, bytes); /* an edge tile: what lies past the image reads as 0, as stored */
    double t0 = h5pack_clock_s();
    h5pack_h5_quiet q;
    h5pack_h5_enter(&q);
    hid_t fs = H5Dget_space(s->dset[i]), ms = H5Screate_simple(3, mdims, NULL);
    int ok = fs >= 0 && ms >= 0 && H5Sselect_hyperslab(fs, H5S_SELECT_SET, off, NULL, count, NULL) >= 0 &&
             H5Sselect_hyperslab(ms, H5S_SELECT_SET, zero, NULL, count, NULL) >= 0 &&
             H5Dread(s->dset[i], H5T_NATIVE_UINT8, ms, fs, H5P_DEFAULT, dst) >= 0;
    char h5msg[300] = "";
    if (!ok)
        h5pack_h5_error_text(h5msg, sizeof h5msg);
    if (fs >= 0)
        H5Sclose(fs);
    if (ms >= 0)
        H5Sclose(ms);
    h5pack_h5_leave(&q);
    cost->read_s += h5pack_clock_s() - t0;
    cost->bytes_read += rows * cols * s->g.channels;
    if (!ok)
        return h5pack_tilesrc_fail(s, H5PACK_ECORRUPT, err, err_len, "image %llu: cannot read the tile at (%llu, %llu) "
                                   "(HDF5: %s)", (unsigned long long)i, (unsigned long long)off[0],
                                   (unsigned long long)off[1], h5msg);
    return 0;
}

int h5pack_tilesrc_read(tile_source *s, uint64_t tile, uint8_t *dst, tile_scratch *sc, chunk_read_cost *cost,
                        char *err, size_t err_len)
{
    uint64_t i = h5pack_tilesrc_image_of(s, tile);
    const tile_image *im = &s->img[i];
    uint64_t k = tile - im->first_tile;
    hsize_t off[3] = {(hsize_t)(k / im->nx) * s->g.tile, (hsize_t)(k % im->nx) * s->g.tile, 0};
    if (im->path == TILE_IMPLICIT)
        return read_implicit(s, i, im, k, dst, cost, err, err_len);
    if (im->path == TILE_DEFLATE)
        return read_deflate(s, i, im, off, dst, sc, cost, err, err_len);
    return read_hdf5(s, i, im, off, dst, cost, err, err_len);
}
