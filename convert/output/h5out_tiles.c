/* h5out_tiles.c - storage "tiled" (h5out.h, docs/format.md "Huge images in tiles"): the tiles group, one
 * dataset per image chunked in tiles. Unfiltered tiles lie at computable addresses and are written with
 * pwrite in pieces that cover whole 2 MiB blocks (block_gather.h: the page cache then holds the file in
 * huge folios);
 * filtered ones with H5Dwrite_chunk. Several packing threads write their images at once: every HDF5 call
 * here holds the writer's tile lock. */
#include <errno.h>
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "block_gather.h"
#include "format.h"
#include "h5glue.h"
#include "h5out.h"
#include "h5out_impl.h"
#include "writeback.h"

int h5out_create_tiled(const char *path, const h5out_geometry *g, h5out **out, char *err, size_t err_len)
{
    h5out *o = h5out_new(path, g, err, err_len);
    if (!o)
        return -1;
    hid_t gcpl = H5Pcreate(H5P_GROUP_CREATE);
    if (gcpl < 0 || H5Pset_obj_track_times(gcpl, 0) < 0 ||
        (o->tiles = H5Gcreate2(o->file, H5PACK_DS_TILES, H5P_DEFAULT, gcpl, H5P_DEFAULT)) < 0) {
        if (gcpl >= 0)
            H5Pclose(gcpl);
        h5out_fail(err, err_len, "%s: cannot create the tiles group", path);
        h5out_close(o, NULL, 0);
        return -1;
    }
    H5Pclose(gcpl);
    pthread_mutex_init(&o->tile_mu, NULL);
    o->tile_mu_ready = 1;
    o->wb = h5out_start_writeback(o);
    *out = o;
    return 0;
}

/* Chunked (min(T,h), min(T,w), C): HDF5 wants chunks no larger than a fixed-size dataset. Unfiltered:
 * allocated at creation, so every tile has a computable address, as for the images dataset. */
static hid_t tile_dcpl(const h5out_geometry *g, uint32_t h, uint32_t w)
{
    hsize_t chunk[3] = {h < g->tile ? h : g->tile, w < g->tile ? w : g->tile, g->channels};
    return h5out_chunked_dcpl(g, 3, chunk);
}

/* T's tiles go through pwrite when their addresses are known (T->base), else (or without memory for
 * gathering them) through H5Dwrite_chunk. */
static void start_run(h5out *o, h5out_tiled *t, uint32_t h, uint32_t w)
{
    uint32_t T = o->g.tile, ch = h < T ? h : T, cw = w < T ? w : T;
    uint64_t grid[2] = {(h + T - 1) / T, (w + T - 1) / T}, extent[2] = {T, T};
    t->nx = (uint32_t)grid[1];
    t->tile_bytes = (size_t)ch * cw * o->g.channels;
    int64_t base = h5out_implicit_base(o, t->dset, grid, extent, t->tile_bytes);
    if (base < 0)
        return;
    t->run = block_gather_new(o->fd, (uint64_t)base, (uint64_t)base + grid[0] * grid[1] * t->tile_bytes);
    t->base = t->run ? base : -1;
}

int h5out_tile_begin(h5out *o, const char *name, uint32_t h, uint32_t w, h5out_tiled *t, char *err, size_t err_len)
{
    hsize_t dims[3] = {h, w, o->g.channels};
    t->base = -1;
    snprintf(t->name, sizeof t->name, "%s", name);
    pthread_mutex_lock(&o->tile_mu);
    h5out_capture_errors(); /* per thread: a packing thread's HDF5 messages go into ours, not to stderr */
    hid_t dcpl = tile_dcpl(&o->g, h, w), space = H5Screate_simple(3, dims, NULL);
    t->dset = dcpl >= 0 && space >= 0 ? H5Dcreate2(o->tiles, name, H5T_STD_U8LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT) : -1;
    if (dcpl >= 0)
        H5Pclose(dcpl);
    if (space >= 0)
        H5Sclose(space);
    int rc = t->dset < 0 ? h5out_fail(err, err_len, "%s: cannot create tiles/%s (%ux%u)", o->path, name, h, w) : 0;
    if (rc == 0)
        start_run(o, t, h, w);
    pthread_mutex_unlock(&o->tile_mu);
    return rc;
}

/* What messages call T's image: its source file when the caller named it (the dataset's name is a
 * temporary one while it is written). */
static const char *tile_owner(const h5out_tiled *t)
{
    return t->source ? t->source : t->name;
}

/* The bytes pwrite has put in the file: counted, and noted for the writeback. */
static void count_written(h5out *o, size_t written)
{
    if (written == 0)
        return;
    pthread_mutex_lock(&o->tile_mu);
    o->tile_bytes += written;
    pthread_mutex_unlock(&o->tile_mu);
    writeback_note(o->wb, written);
}

static int write_through_run(h5out *o, h5out_tiled *t, uint32_t ty, uint32_t tx, const void *data, size_t size,
                             char *err, size_t err_len)
{
    size_t written = 0;
    uint64_t at = (uint64_t)t->base + ((uint64_t)ty * t->nx + tx) * t->tile_bytes;
    int rc = size == t->tile_bytes ? block_gather_write(t->run, data, size, at, &written) : (errno = EINVAL, -1);
    count_written(o, written);
    if (rc != 0)
        snprintf(err, err_len, "%s: cannot write tile (%u, %u) of %s: %s", o->path, ty, tx, tile_owner(t),
                 strerror(errno));
    return rc;
}

int h5out_tile_write(h5out *o, h5out_tiled *t, uint32_t ty, uint32_t tx, const void *data, size_t size, char *err,
                     size_t err_len)
{
    if (t->base >= 0)
        return write_through_run(o, t, ty, tx, data, size, err, err_len);
    hsize_t offset[3] = {(hsize_t)ty * o->g.tile, (hsize_t)tx * o->g.tile, 0};
    int rc = 0;
    pthread_mutex_lock(&o->tile_mu);
    if (H5Dwrite_chunk((hid_t)t->dset, H5P_DEFAULT, 0, offset, size, data) < 0)
        rc = h5out_fail(err, err_len, "%s: cannot write tile (%u, %u) of %s", o->path, ty, tx, tile_owner(t));
    else
        o->tile_bytes += size;
    pthread_mutex_unlock(&o->tile_mu);
    if (rc == 0)
        writeback_note(o->wb, size);
    return rc;
}

int h5out_tile_end(h5out *o, h5out_tiled *t, int keep, char *err, size_t err_len)
{
    int rc = 0;
    if (t->base >= 0) {
        size_t written = 0;
        if (keep && block_gather_flush(t->run, &written) != 0)
            rc = -1, snprintf(err, err_len, "%s: cannot write the tiles of %s: %s", o->path, tile_owner(t),
                              strerror(errno));
        count_written(o, written);
        block_gather_free(t->run);
        t->run = NULL, t->base = -1;
    }
    pthread_mutex_lock(&o->tile_mu);
    if (t->dset >= 0 && H5Dclose((hid_t)t->dset) < 0 && rc == 0)
        rc = h5out_fail(err, err_len, "%s: cannot close tiles/%s", o->path, t->name);
    t->dset = -1;
    if (rc == 0 && !keep && H5Ldelete(o->tiles, t->name, H5P_DEFAULT) < 0)
        rc = h5out_fail(err, err_len, "%s: cannot remove the unfinished tiles/%s", o->path, t->name);
    pthread_mutex_unlock(&o->tile_mu);
    return rc;
}

int h5out_tile_rename(h5out *o, const char *from, uint64_t index, char *err, size_t err_len)
{
    char to[32];
    snprintf(to, sizeof to, "%llu", (unsigned long long)index);
    pthread_mutex_lock(&o->tile_mu);
    int rc = H5Lmove(o->tiles, from, o->tiles, to, H5P_DEFAULT, H5P_DEFAULT) < 0
                 ? h5out_fail(err, err_len, "%s: cannot rename tiles/%s to tiles/%s", o->path, from, to)
                 : 0;
    pthread_mutex_unlock(&o->tile_mu);
    return rc;
}
