/* tilesrc_read.c - reads one tile (tilesrc.h): through the stored-chunk layer (stored.h: a read from the
 * store, inflated if gzip, no HDF5, no lock) for implicit and located tiles, else an H5Dread of the
 * tile's region under HDF5's lock. Also the zero-copy views of unfiltered tiles. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "tilesrc_impl.h"

tile_scratch *h5pack_tilesrc_scratch_new(const tile_source *s)
{
    (void)s;
    return h5pack_stored_scratch_new();
}

void h5pack_tilesrc_scratch_free(tile_scratch *sc)
{
    h5pack_stored_scratch_free(sc);
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
    if (im->path == H5PACK_READ_HDF5)
        return read_hdf5(s, i, im, off, dst, cost, err, err_len);
    char why[256];
    int rc = h5pack_stored_get(s->st, &im->tiles, k, dst, sc, cost, why, sizeof why);
    if (rc)
        return h5pack_tilesrc_fail(s, rc, err, err_len, "image %llu: the tile at (%llu, %llu): %s", (unsigned long long)i,
                                   (unsigned long long)off[0], (unsigned long long)off[1], why);
    return 0;
}

int h5pack_tilesrc_map(tile_source *s, uint64_t tile, const uint8_t **data, chunk_read_cost *cost)
{
    const tile_image *im = &s->img[h5pack_tilesrc_image_of(s, tile)];
    const uint8_t *v = im->path == H5PACK_READ_HDF5 ? NULL : h5pack_stored_view(s->st, &im->tiles, tile - im->first_tile, cost);
    if (!v)
        return TILESRC_NOT_MAPPED; /* e.g. truncated since open: the read reports it */
    *data = v;
    return 0;
}

void h5pack_tilesrc_map_release(tile_source *s, uint64_t tile)
{
    const tile_image *im = &s->img[h5pack_tilesrc_image_of(s, tile)];
    if (im->path != H5PACK_READ_HDF5)
        h5pack_stored_unview(s->st, &im->tiles, tile - im->first_tile);
}
