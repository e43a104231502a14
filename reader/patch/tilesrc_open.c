/* tilesrc_open.c - opens a tiled file (tilesrc.h): checks the storage attribute, the version, the tile
 * size, every image's dataset against image_shapes and its chunk shape, and picks each image's read path. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errtext.h"
#include "format.h"
#include "tilesrc_impl.h"

int h5pack_tilesrc_fail(const tile_source *s, int code, char *err, size_t err_len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    h5pack_verrf_at(code, err, err_len, s->path, fmt, ap);
    va_end(ap);
    return code;
}

static int fail_h5(const tile_source *s, int code, char *err, size_t err_len, const char *what)
{
    char h5msg[400];
    h5pack_h5_error_text(h5msg, sizeof h5msg);
    return h5pack_tilesrc_fail(s, code, err, err_len, "%s (HDF5: %s)", what, h5msg);
}

static int open_file(tile_source *s, char *err, size_t err_len)
{
    int rc = h5pack_store_open(s->path, &s->st, err, err_len);
    if (rc)
        return rc;
    s->g.file_bytes = s->st->size;
    if (h5pack_store_is_hdf5(s->st) != 1)
        return h5pack_tilesrc_fail(s, H5PACK_EFORMAT, err, err_len, "not an HDF5 file");
    if ((s->file = h5pack_store_h5_open(s->st)) < 0)
        return fail_h5(s, H5PACK_ECORRUPT, err, err_len, "cannot open the file");
    hsize_t ub = 0;
    hid_t fcpl = H5Fget_create_plist(s->file);
    if (fcpl >= 0)
        H5Pget_userblock(fcpl, &ub), H5Pclose(fcpl);
    s->userblock = ub;
    return 0;
}

/* The root attributes: storage "tiled", a version this library reads, the tile size and channels. */
static int read_attributes(tile_source *s, char *err, size_t err_len)
{
    char storage[32] = "", why[64] = "";
    int64_t version = 0, tile = 0, channels = 0;
    if (h5pack_h5_read_string_attr(s->file, H5PACK_ATTR_STORAGE, storage, sizeof storage) != 1 ||
        strcmp(storage, H5PACK_STORAGE_TEXT_TILED))
        return h5pack_tilesrc_fail(s, H5PACK_EFORMAT, err, err_len,
                                   "not a file of images in tiles (storage attribute \"%s\"; h5pack --tiles makes one)",
                                   storage);
    if (h5pack_h5_read_int_attr(s->file, H5PACK_ATTR_FORMAT_VERSION, &version, why, sizeof why) != 1 ||
        version > H5PACK_FORMAT_VERSION)
        return h5pack_tilesrc_fail(s, H5PACK_EFORMAT, err, err_len,
                                   "format version %lld, this library reads up to %d: update h5pack", (long long)version,
                                   H5PACK_FORMAT_VERSION);
    if (h5pack_h5_read_int_attr(s->file, H5PACK_ATTR_TILE, &tile, why, sizeof why) != 1 || tile < 16 || tile > 8192 ||
        h5pack_h5_read_int_attr(s->file, H5PACK_ATTR_CHANNELS, &channels, why, sizeof why) != 1 || channels < 1 ||
        channels > H5PACK_MAX_CHANNELS)
        return h5pack_tilesrc_fail(s, H5PACK_EFORMAT, err, err_len, "bad \"%s\" or \"%s\" attribute (tile %lld, "
                                   "channels %lld)", H5PACK_ATTR_TILE, H5PACK_ATTR_CHANNELS, (long long)tile,
                                   (long long)channels);
    s->g.tile = (uint32_t)tile, s->g.channels = (uint32_t)channels;
    s->g.format_version = (int)version;
    s->g.tile_bytes = (uint64_t)tile * (uint64_t)tile * (uint64_t)channels;
    s->g.has_stats = h5pack_h5_read_doubles_attr(s->file, H5PACK_ATTR_MEAN, s->g.mean, s->g.channels) &&
                     h5pack_h5_read_doubles_attr(s->file, H5PACK_ATTR_STD, s->g.std, s->g.channels);
    return 0;
}

/* image_shapes (N, 2) int64 into s->img[i].h / .w. */
static int read_shapes(tile_source *s, char *err, size_t err_len)
{
    hid_t d = h5pack_h5_path_exists(s->file, H5PACK_DS_IMAGE_SHAPES) ? H5Dopen2(s->file, H5PACK_DS_IMAGE_SHAPES, H5P_DEFAULT) : -1;
    hid_t space = d >= 0 ? H5Dget_space(d) : -1;
    hsize_t dims[2] = {0, 0};
    int ok = space >= 0 && H5Sget_simple_extent_ndims(space) == 2 && H5Sget_simple_extent_dims(space, dims, NULL) == 2 &&
             dims[1] == 2 && dims[0] >= 1 && dims[0] < ((hsize_t)1 << 32);
    int64_t *hw = ok ? malloc((size_t)dims[0] * 2 * sizeof *hw) : NULL;
    s->img = ok ? calloc((size_t)dims[0], sizeof *s->img) : NULL;
    s->dset = ok ? malloc((size_t)dims[0] * sizeof *s->dset) : NULL;
    ok = ok && hw && s->img && s->dset && H5Dread(d, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, hw) >= 0;
    if (space >= 0)
        H5Sclose(space);
    if (d >= 0)
        H5Dclose(d);
    if (!ok) {
        free(hw);
        return h5pack_tilesrc_fail(s, H5PACK_EFORMAT, err, err_len, "no readable %s (N, 2) dataset with N >= 1",
                                   H5PACK_DS_IMAGE_SHAPES);
    }
    s->g.n_images = dims[0];
    for (uint64_t i = 0; i < s->g.n_images; i++)
        s->dset[i] = -1;
    for (uint64_t i = 0; i < s->g.n_images && ok; i++) {
        ok = hw[2 * i] >= 1 && hw[2 * i] <= UINT32_MAX && hw[2 * i + 1] >= 1 && hw[2 * i + 1] <= UINT32_MAX;
        s->img[i].h = (uint32_t)hw[2 * i], s->img[i].w = (uint32_t)hw[2 * i + 1];
    }
    free(hw);
    return ok ? 0 : h5pack_tilesrc_fail(s, H5PACK_EFORMAT, err, err_len, "%s holds a size below 1", H5PACK_DS_IMAGE_SHAPES);
}

/* The filters of DCPL: 0 none, 1 deflate (shuffle allowed: a no-op on bytes; *DEFLATE_INDEX its
 * position), 2 anything else. */
static int filter_kind(hid_t dcpl, int *deflate_index)
{
    int n = H5Pget_nfilters(dcpl), deflate = 0;
    *deflate_index = -1;
    for (int f = 0; f < n; f++) {
        unsigned flags = 0, cd[8];
        size_t ncd = 8;
        H5Z_filter_t id = H5Pget_filter2(dcpl, (unsigned)f, &flags, &ncd, cd, 0, NULL, NULL);
        if (id == H5Z_FILTER_DEFLATE)
            deflate = 1, *deflate_index = f;
        else if (id != H5Z_FILTER_SHUFFLE)
            return 2;
    }
    return deflate;
}

typedef struct tile_grid {
    const tile_image *im;
    uint32_t tile;
} tile_grid;

/* HDF5's offset of tile K of an image: row by row over its grid. */
static void tile_offset(const void *ctx, uint64_t k, hsize_t *offset)
{
    const tile_grid *t = ctx;
    offset[0] = (hsize_t)(k / t->im->nx) * t->tile, offset[1] = (hsize_t)(k % t->im->nx) * t->tile, offset[2] = 0;
}

/* Where IM's tiles lie (stored.h): HDF5's implicit index for unfiltered tiles, else every tile located;
 * KIND 2 (a filter other than deflate) or a failed locate leaves them to HDF5. */
static h5pack_read_path find_tiles(const tile_source *s, hid_t d, tile_image *im, int kind, int deflate_index)
{
    tile_grid grid = {im, s->g.tile};
    uint64_t n = (uint64_t)im->ny * im->nx, bytes = (uint64_t)im->ch * im->cw * s->g.channels;
    if (kind == 2)
        return H5PACK_READ_HDF5;
    if (kind == 0 && h5pack_stored_find_implicit(d, n, bytes, s->userblock, tile_offset, &grid, &im->tiles))
        return H5PACK_READ_IMPLICIT;
    if (h5pack_stored_locate(s->file, d, n, bytes, deflate_index, s->st->size, tile_offset, &grid, &im->tiles) == 0)
        return kind == 1 ? H5PACK_READ_RAW_DEFLATE : H5PACK_READ_LOCATED;
    return H5PACK_READ_HDF5;
}

/* Read paths from fastest to slowest (the list's values put LOCATED last). */
static int slowness(h5pack_read_path p)
{
    return p == H5PACK_READ_IMPLICIT ? 0 : p == H5PACK_READ_LOCATED ? 1 : p == H5PACK_READ_RAW_DEFLATE ? 2 : 3;
}

/* Opens tiles/<i>, checks its shape and chunks against image_shapes and the tile size, picks its path. */
static int open_image(tile_source *s, uint64_t i, hid_t dapl, char *err, size_t err_len)
{
    tile_image *im = &s->img[i];
    char name[64];
    snprintf(name, sizeof name, "%s/%llu", H5PACK_DS_TILES, (unsigned long long)i);
    hid_t d = h5pack_h5_path_exists(s->file, name) ? H5Dopen2(s->file, name, dapl) : -1;
    if (d < 0)
        return h5pack_tilesrc_fail(s, H5PACK_ECORRUPT, err, err_len, "no readable dataset %s for image %llu", name,
                                   (unsigned long long)i);
    s->dset[i] = d;
    hid_t space = H5Dget_space(d), dcpl = H5Dget_create_plist(d), type = H5Dget_type(d);
    hsize_t dims[3] = {0, 0, 0}, cdims[3] = {0, 0, 0};
    im->ch = im->h < s->g.tile ? im->h : s->g.tile, im->cw = im->w < s->g.tile ? im->w : s->g.tile;
    int ok = space >= 0 && dcpl >= 0 && type >= 0 && H5Sget_simple_extent_ndims(space) == 3 &&
             H5Sget_simple_extent_dims(space, dims, NULL) == 3 && H5Pget_layout(dcpl) == H5D_CHUNKED &&
             H5Pget_chunk(dcpl, 3, cdims) == 3 && H5Tget_class(type) == H5T_INTEGER && H5Tget_size(type) == 1 &&
             dims[0] == im->h && dims[1] == im->w && dims[2] == s->g.channels && cdims[0] == im->ch &&
             cdims[1] == im->cw && cdims[2] == s->g.channels;
    int deflate_index = -1, kind = ok ? filter_kind(dcpl, &deflate_index) : 2;
    for (hid_t *h = (hid_t[]){space, dcpl, type}, *e = h + 3; h < e; h++)
        if (*h >= 0)
            H5Idec_ref(*h);
    if (!ok)
        return h5pack_tilesrc_fail(s, H5PACK_EFORMAT, err, err_len, "%s is not (%u, %u, %u) uint8 in tiles of (%u, %u, %u)",
                                   name, im->h, im->w, s->g.channels, im->ch, im->cw, s->g.channels);
    im->ny = (im->h + s->g.tile - 1) / s->g.tile, im->nx = (im->w + s->g.tile - 1) / s->g.tile;
    im->path = find_tiles(s, d, im, kind, deflate_index);
    s->g.compressed |= kind == 1;
    s->g.stored_bytes += im->path == H5PACK_READ_HDF5 ? (uint64_t)im->h * im->w * s->g.channels
                                               : h5pack_stored_bytes(&im->tiles, 0, im->tiles.n);
    return 0;
}

static int open_images(tile_source *s, char *err, size_t err_len)
{
    hid_t dapl = H5Pcreate(H5P_DATASET_ACCESS); /* our cache holds tiles: HDF5's would copy them once more */
    if (dapl >= 0)
        H5Pset_chunk_cache(dapl, 0, 0, 1.0);
    int rc = 0;
    uint64_t first = 0;
    for (uint64_t i = 0; i < s->g.n_images && !rc; i++) {
        rc = open_image(s, i, dapl >= 0 ? dapl : H5P_DEFAULT, err, err_len);
        tile_image *im = &s->img[i];
        im->first_tile = first;
        first += (uint64_t)im->ny * im->nx;
        s->g.max_h = im->h > s->g.max_h ? im->h : s->g.max_h;
        s->g.max_w = im->w > s->g.max_w ? im->w : s->g.max_w;
        s->g.pixel_bytes += (uint64_t)im->h * im->w * s->g.channels;
        s->g.path = i == 0 || slowness(im->path) > slowness(s->g.path) ? im->path : s->g.path;
    }
    s->g.n_tiles = first;
    if (dapl >= 0)
        H5Pclose(dapl);
    return rc;
}

/* Rows of the 1-D or 2-D dataset NAME, or -1 when it is absent or unreadable. */
static int64_t dataset_rows(hid_t file, const char *name)
{
    hid_t d = h5pack_h5_path_exists(file, name) ? H5Dopen2(file, name, H5P_DEFAULT) : -1;
    hid_t space = d >= 0 ? H5Dget_space(d) : -1;
    hsize_t dims[2] = {0, 0};
    int rank = space >= 0 ? H5Sget_simple_extent_ndims(space) : -1;
    int64_t rows = rank >= 1 && rank <= 2 && H5Sget_simple_extent_dims(space, dims, NULL) == rank ? (int64_t)dims[0] : -1;
    if (space >= 0)
        H5Sclose(space);
    if (d >= 0)
        H5Dclose(d);
    return rows;
}

/* image_shapes, the tiles group and filenames describe the same images: a file that disagrees (written by
 * another tool, or edited) is refused rather than read as its first images only. */
static int check_counts(tile_source *s, char *err, size_t err_len)
{
    H5G_info_t gi;
    hid_t g = H5Gopen2(s->file, H5PACK_DS_TILES, H5P_DEFAULT);
    int ok = g >= 0 && H5Gget_info(g, &gi) >= 0;
    if (g >= 0)
        H5Gclose(g);
    if (ok && gi.nlinks != s->g.n_images)
        return h5pack_tilesrc_fail(s, H5PACK_EFORMAT, err, err_len, "%s lists %llu images but %s holds %llu",
                                   H5PACK_DS_IMAGE_SHAPES, (unsigned long long)s->g.n_images, H5PACK_DS_TILES,
                                   (unsigned long long)gi.nlinks);
    int64_t names = dataset_rows(s->file, H5PACK_DS_FILENAMES);
    if (names >= 0 && (uint64_t)names != s->g.n_images)
        return h5pack_tilesrc_fail(s, H5PACK_EFORMAT, err, err_len, "%s lists %llu images but %s has %lld",
                                   H5PACK_DS_IMAGE_SHAPES, (unsigned long long)s->g.n_images, H5PACK_DS_FILENAMES,
                                   (long long)names);
    return 0;
}

static int open_all(tile_source *s, const char *labels, char *err, size_t err_len)
{
    int rc = open_file(s, err, err_len);
    if (!rc)
        rc = read_attributes(s, err, err_len);
    if (!rc)
        rc = read_shapes(s, err, err_len);
    if (!rc)
        rc = check_counts(s, err, err_len);
    if (!rc)
        rc = open_images(s, err, err_len);
    if (!rc)
        rc = h5pack_labelset_load(s->file, s->path, s->g.n_images, labels, &s->labels, err, err_len);
    if (!rc) {
        s->g.has_labels = s->labels.has_labels, s->g.labels_are_float = s->labels.labels_are_float;
        s->g.label_columns = s->labels.label_columns, s->g.n_classes = s->labels.n_classes;
        s->g.label_rank = s->labels.label_rank;
    }
    return rc;
}

static void close_in_lock(tile_source *s)
{
    for (uint64_t i = 0; s->dset && i < s->g.n_images; i++)
        if (s->dset[i] >= 0)
            H5Dclose(s->dset[i]);
    for (uint64_t i = 0; s->img && i < s->g.n_images; i++)
        h5pack_stored_free(&s->img[i].tiles);
    if (s->file >= 0)
        H5Fclose(s->file);
    h5pack_store_close(s->st); /* after HDF5, which reads through it */
    h5pack_labelset_free(&s->labels);
    free(s->dset), free(s->img), free(s->path);
    free(s);
}

int h5pack_tilesrc_open(const char *path, const char *labels, tile_source **out, char *err, size_t err_len)
{
    *out = NULL;
    tile_source *s = calloc(1, sizeof *s);
    if (!s || !(s->path = strdup(path))) {
        free(s);
        return h5pack_errf(H5PACK_ENOMEM, err, err_len, "%s: out of memory", path);
    }
    s->file = -1;
    h5pack_h5_quiet q;
    h5pack_h5_enter(&q);
    int rc = open_all(s, labels, err, err_len);
    if (rc)
        close_in_lock(s);
    h5pack_h5_leave(&q);
    if (!rc) {
        h5pack_store_advise_large(s->st); /* patches read tiles across many images' rows: large folios */
        *out = s;
    }
    return rc;
}

int h5pack_tilesrc_is_tiled(const char *path)
{
    char storage[32] = "", err[64];
    store *st = NULL;
    if (h5pack_store_open(path, &st, err, sizeof err) != 0)
        return 0;
    /* h5pack writes tiles in the latest format, whose metadata HDF5 checksums: an older file (which could
     * crash HDF5 if damaged: chunksrc_probe.c) is not one, and is not opened here */
    h5pack_h5_quiet q;
    h5pack_h5_enter(&q);
    hid_t f = h5pack_store_superblock_version(st) >= 2 ? h5pack_store_h5_open(st) : -1;
    if (f >= 0) {
        h5pack_h5_read_string_attr(f, H5PACK_ATTR_STORAGE, storage, sizeof storage);
        H5Fclose(f);
    }
    h5pack_h5_leave(&q);
    h5pack_store_close(st);
    return !strcmp(storage, H5PACK_STORAGE_TEXT_TILED);
}

struct store *h5pack_tilesrc_store(const tile_source *s)
{
    return s->st;
}

int h5pack_tilesrc_has_views(const tile_source *s)
{
    return h5pack_store_has_views(s->st);
}

void h5pack_tilesrc_close(tile_source *s)
{
    if (!s)
        return;
    h5pack_h5_quiet q;
    h5pack_h5_enter(&q);
    close_in_lock(s);
    h5pack_h5_leave(&q);
}

const tile_geometry *h5pack_tilesrc_geometry(const tile_source *s)
{
    return &s->g;
}

const tile_image *h5pack_tilesrc_image(const tile_source *s, uint64_t i)
{
    return &s->img[i];
}

const void *h5pack_tilesrc_label_rows(const tile_source *s)
{
    return s->labels.labels_are_float ? (const void *)s->labels.floats : (const void *)s->labels.ints;
}

size_t h5pack_tilesrc_label_bytes(const tile_geometry *g)
{
    return g->has_labels ? (size_t)g->label_columns * (g->labels_are_float ? 4 : 8) : 0;
}

uint64_t h5pack_tilesrc_image_of(const tile_source *s, uint64_t tile)
{
    uint64_t lo = 0, hi = s->g.n_images; /* the last image whose first_tile <= tile */
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (s->img[mid].first_tile <= tile)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}
