/* h5out_tiles.c - storage "tiled" (h5out.h, docs/format.md "Huge images in tiles"): the tiles group, one
 * dataset per image chunked in tiles, whole tiles written with H5Dwrite_chunk. Several packing threads
 * write their images at once: every HDF5 call here holds the writer's tile lock. */
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int h5out_tile_begin(h5out *o, const char *name, uint32_t h, uint32_t w, h5out_tiled *t, char *err, size_t err_len)
{
    hsize_t dims[3] = {h, w, o->g.channels};
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
    pthread_mutex_unlock(&o->tile_mu);
    return rc;
}

int h5out_tile_write(h5out *o, h5out_tiled *t, uint32_t ty, uint32_t tx, const void *data, size_t size, char *err,
                     size_t err_len)
{
    hsize_t offset[3] = {(hsize_t)ty * o->g.tile, (hsize_t)tx * o->g.tile, 0};
    int rc = 0;
    pthread_mutex_lock(&o->tile_mu);
    if (H5Dwrite_chunk((hid_t)t->dset, H5P_DEFAULT, 0, offset, size, data) < 0)
        rc = h5out_fail(err, err_len, "%s: cannot write tile (%u, %u) of tiles/%s", o->path, ty, tx, t->name);
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
    pthread_mutex_lock(&o->tile_mu);
    if (t->dset >= 0 && H5Dclose((hid_t)t->dset) < 0)
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
