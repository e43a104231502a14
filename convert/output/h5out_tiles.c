/* h5out_tiles.c - storage "tiled" (h5out.h, docs/format.md "Huge images in tiles"): the tiles group, one
 * dataset per image chunked in tiles, whole tiles written with H5Dwrite_chunk. */
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

int h5out_tile_begin(h5out *o, uint64_t index, uint32_t h, uint32_t w, char *err, size_t err_len)
{
    hsize_t dims[3] = {h, w, o->g.channels};
    snprintf(o->tile_name, sizeof o->tile_name, "%llu", (unsigned long long)index);
    hid_t dcpl = tile_dcpl(&o->g, h, w), space = H5Screate_simple(3, dims, NULL);
    if (dcpl >= 0 && space >= 0)
        o->tile_image = H5Dcreate2(o->tiles, o->tile_name, H5T_STD_U8LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    if (dcpl >= 0)
        H5Pclose(dcpl);
    if (space >= 0)
        H5Sclose(space);
    if (o->tile_image < 0)
        return h5out_fail(err, err_len, "%s: cannot create tiles/%s (%ux%u)", o->path, o->tile_name, h, w);
    return 0;
}

int h5out_tile_write(h5out *o, uint32_t ty, uint32_t tx, const void *data, size_t size, char *err, size_t err_len)
{
    hsize_t offset[3] = {(hsize_t)ty * o->g.tile, (hsize_t)tx * o->g.tile, 0};
    if (H5Dwrite_chunk(o->tile_image, H5P_DEFAULT, 0, offset, size, data) < 0)
        return h5out_fail(err, err_len, "%s: cannot write tile (%u, %u) of tiles/%s", o->path, ty, tx, o->tile_name);
    o->tile_bytes += size;
    writeback_note(o->wb, size);
    return 0;
}

int h5out_tile_end(h5out *o, int keep, char *err, size_t err_len)
{
    int rc = 0;
    if (o->tile_image >= 0 && H5Dclose(o->tile_image) < 0)
        rc = h5out_fail(err, err_len, "%s: cannot close tiles/%s", o->path, o->tile_name);
    o->tile_image = -1;
    if (rc == 0 && !keep && H5Ldelete(o->tiles, o->tile_name, H5P_DEFAULT) < 0)
        rc = h5out_fail(err, err_len, "%s: cannot remove the unfinished tiles/%s", o->path, o->tile_name);
    return rc;
}
