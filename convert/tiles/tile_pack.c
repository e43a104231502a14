/* tile_pack.c - one image into tiles, band by band (see tile_pack.h). */
#include "tile_pack.h"

#include <libdeflate.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "band.h"
#include "chunk_filter.h"
#include "decodejob.h"

typedef struct tiler {
    h5out *o;
    h5out_tiled out;
    const h5out_geometry *g;
    uint32_t h, w, ch, cw, C; /* image; chunk (tile) height and width; channels */
    uint8_t *band, *tile, *filtered;
    struct libdeflate_compressor *comp;
} tiler;

/* Tile (TY, TX) from the band's ROWS rows, zero-padded to the whole chunk, filtered, written. */
static int write_tile(tiler *t, uint32_t ty, uint32_t tx, uint32_t rows, char *err, size_t err_len)
{
    uint32_t x0 = tx * t->cw, cols = t->w - x0 < t->cw ? t->w - x0 : t->cw;
    size_t row_bytes = (size_t)t->cw * t->C, tile_bytes = row_bytes * t->ch;
    memset(t->tile, 0, tile_bytes);
    for (uint32_t r = 0; r < rows; r++)
        memcpy(t->tile + r * row_bytes, t->band + ((size_t)r * t->w + x0) * t->C, (size_t)cols * t->C);
    const uint8_t *data = t->tile;
    size_t n = tile_bytes;
    if (t->g->gzip_level > 0 || t->g->checksum) {
        n = chunk_filter_apply(t->g->gzip_level, t->g->checksum, &t->comp, t->tile, tile_bytes, t->filtered);
        if (n == 0) {
            snprintf(err, err_len, "cannot compress a tile: compressor unavailable (out of memory?)");
            return -1;
        }
        data = t->filtered;
    }
    return h5out_tile_write(t->o, &t->out, ty, tx, data, n, err, err_len);
}

static int allocate(tiler *t)
{
    size_t tile_bytes = (size_t)t->ch * t->cw * t->C;
    t->band = malloc((size_t)t->ch * t->w * t->C);
    t->tile = malloc(tile_bytes);
    t->filtered = malloc(chunk_filter_bound(tile_bytes));
    return t->band && t->tile && t->filtered ? 0 : -1;
}

static void release(tiler *t)
{
    free(t->band), free(t->tile), free(t->filtered);
    if (t->comp)
        libdeflate_free_compressor(t->comp);
}

/* Every band: decoded, summed, its row of tiles written. */
static tile_outcome pack_bands(tiler *t, band_reader *b, tile_image *done, char *why, size_t why_len, char *err,
                               size_t err_len)
{
    for (uint32_t ty = 0; (uint64_t)ty * t->ch < t->h; ty++) {
        uint32_t rows = t->h - ty * t->ch < t->ch ? t->h - ty * t->ch : t->ch;
        char detail[300] = "";
        image_status st = band_read(b, t->band, rows, detail, sizeof detail);
        if (st != IMAGE_OK) {
            snprintf(why, why_len, "%s: %s", image_status_text(st), detail);
            return TILE_SKIPPED;
        }
        uint64_t s[3] = {0}, q[3] = {0};
        channel_sums(t->band, (size_t)rows * t->w, t->C, s, q);
        for (uint32_t c = 0; c < t->C; c++)
            done->sum[c] += s[c], done->sum_sq[c] += q[c];
        for (uint32_t tx = 0; (uint64_t)tx * t->cw < t->w; tx++)
            if (write_tile(t, ty, tx, rows, err, err_len) != 0)
                return TILE_FAILED;
    }
    return TILE_PACKED;
}

tile_outcome tile_pack_image(h5out *o, const h5out_geometry *g, const char *name, const char *path,
                             const decode_opts *opts, tile_image *done, char *why, size_t why_len, char *err,
                             size_t err_len)
{
    memset(done, 0, sizeof *done);
    band_reader *b = NULL;
    char detail[300] = "";
    image_status st = band_open(path, opts, &b, &done->height, &done->width, detail, sizeof detail);
    if (st != IMAGE_OK) {
        snprintf(why, why_len, "%s: %s", image_status_text(st), detail);
        return TILE_SKIPPED;
    }
    tiler t = {.o = o, .out = {.dset = -1, .source = path}, .g = g, .h = done->height, .w = done->width,
               .C = g->channels};
    t.ch = t.h < g->tile ? t.h : g->tile, t.cw = t.w < g->tile ? t.w : g->tile;
    tile_outcome out = TILE_FAILED;
    if (allocate(&t) != 0)
        snprintf(err, err_len, "out of memory for a band of %u x %u pixels", t.ch, t.w);
    else if (h5out_tile_begin(o, name, t.h, t.w, &t.out, err, err_len) == 0) {
        out = pack_bands(&t, b, done, why, why_len, err, err_len);
        if (h5out_tile_end(o, &t.out, out == TILE_PACKED, err, err_len) != 0)
            out = TILE_FAILED;
    }
    release(&t);
    band_close(b);
    return out;
}
