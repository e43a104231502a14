/* packer_tiles.c - `h5pack --tiles`: every image in packed order into its own tiled dataset, one at a
 * time, each decoded band by band (tiles/tile_pack.h), so memory holds a band and a tile whatever the
 * images' sizes. Skips, names, labels and the report are the other storages'. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "packer_impl.h"
#include "safeout.h"
#include "tile_pack.h"

/* The file's geometry: channels, tile, filters (sizes come from the images). */
static h5out_geometry tiled_geometry(const pack_ctx *c)
{
    return (h5out_geometry){.n = c->scan.n_entries, .channels = c->o->channels, .nhwc = 1, .tile = c->o->tile,
                            .gzip_level = c->o->compress == COMPRESS_GZIP ? c->o->gzip_level : 0,
                            .checksum = c->o->checksum};
}

/* Records image POS as converted: its row, shape and sums. */
static void keep(pack_ctx *c, size_t pos, const tile_image *t)
{
    pipeline_result *r = &c->pres;
    r->kept[r->converted] = c->order[pos];
    r->shapes[2 * r->converted] = t->height, r->shapes[2 * r->converted + 1] = t->width;
    r->converted++;
    r->pixels += (uint64_t)t->height * t->width;
    for (uint32_t ch = 0; ch < c->o->channels; ch++)
        r->sum[ch] += t->sum[ch], r->sum_sq[ch] += t->sum_sq[ch];
    c->job.height = t->height > c->job.height ? t->height : c->job.height; /* the largest, for the attributes */
    c->job.width = t->width > c->job.width ? t->width : c->job.width;
}

/* One image: packed, skipped (into the skip list; --strict stops) or the run's end. */
static pack_status tile_one(pack_ctx *c, h5out_geometry *g, size_t pos, char *err, size_t len)
{
    const scan_entry *e = &c->scan.entries[c->order[pos]];
    char *path = malloc(strlen(c->o->src_dir) + strlen(e->relpath) + 2), why[640] = "";
    if (!path) {
        snprintf(err, len, "out of memory");
        return PACK_ERROR;
    }
    sprintf(path, "%s/%s", c->o->src_dir, e->relpath);
    tile_image t;
    tile_outcome out = tile_pack_image(c->out, g, c->pres.converted, path, &c->job.opts, &t, why, sizeof why, err, len);
    free(path);
    if (out == TILE_FAILED)
        return PACK_ERROR;
    if (out == TILE_PACKED) {
        keep(c, pos, &t);
        return PACK_OK;
    }
    if (skip_list_add(&c->pres.skipped, e->name, why) != 0) {
        snprintf(err, len, "out of memory");
        return PACK_ERROR;
    }
    if (c->o->strict) {
        snprintf(err, len, "--strict: %s: %s", e->name, why);
        return PACK_STRICT;
    }
    return PACK_OK;
}

pack_status pack_tiles(pack_ctx *c, char *err, size_t len)
{
    h5out_geometry g = tiled_geometry(c);
    size_t n = c->scan.n_entries;
    if (safeout_create_temp(c->o->out_path, c->temp[0], TEMP_PATH_LEN, err, len) != 0)
        return PACK_ERROR;
    c->have_temp[0] = 1;
    if (h5out_create_tiled(c->temp[0], &g, &c->out, err, len) != 0)
        return PACK_ERROR;
    c->pres.kept = malloc((n ? n : 1) * sizeof *c->pres.kept);
    c->pres.shapes = malloc((n ? n : 1) * 2 * sizeof *c->pres.shapes);
    if (!c->pres.kept || !c->pres.shapes) {
        snprintf(err, len, "out of memory");
        return PACK_ERROR;
    }
    c->job.height = c->job.width = 0;
    progress_init(&c->prog, c->o->verbosity >= 1);
    pack_status st = PACK_OK;
    for (size_t pos = 0; pos < n && st == PACK_OK; pos++) {
        st = tile_one(c, &g, pos, err, len);
        progress_update(&c->prog, pos + 1, n, c->pres.converted);
    }
    progress_finish(&c->prog);
    if (st == PACK_OK && c->pres.converted == 0) {
        snprintf(err, len, "no image could be converted (%zu skipped)", c->pres.skipped.count);
        st = PACK_ERROR;
    }
    c->pres.chunks_written = 0, c->pres.bytes_written = h5out_images_storage(c->out);
    h5out_set_largest(c->out, c->job.height, c->job.width); /* the attributes height and width */
    return st;
}
