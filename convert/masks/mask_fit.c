/* mask_fit.c - a mask fitted as its image is (resize_geometry.c), sampled as PIL's NEAREST samples.
 *
 * PIL's resize(size, NEAREST) (Pillow's ImagingScaleAffine, used for modes L, P, I and 1) takes for output
 * column x the source column int(x0 + x * scale) where scale = src / dst as a double and x0 = scale / 2,
 * the sum accumulated column by column in doubles, not recomputed as (x + 0.5) * scale: the two differ at
 * some exact boundaries (checked with PIL for every size pair up to 60 and a few larger), so the table is
 * built by the same additions. Crop mode is the whole mask resized to the image's virtual size, then the
 * image's window; pad mode the resized mask at the image's place on zeros: PIL's resize followed by crop
 * or paste, as torchvision's segmentation transforms do with PIL masks. */
#include "mask.h"

#include <stdlib.h>
#include <string.h>

#include "image_internal.h"

/* For the resized axis of RESIZED samples from SOURCE ones, the source index of samples FIRST ..
 * FIRST+COUNT-1 into TABLE (-1 where PIL finds none inside the source: the output keeps 0 there). */
static void nearest_table(uint32_t source, uint32_t resized, uint32_t first, uint32_t count, int64_t *table)
{
    double scale = (double)source / (double)resized, at = scale * 0.5;
    for (uint32_t x = 0; x < first; x++)
        at += scale;
    for (uint32_t x = 0; x < count; x++, at += scale) {
        int64_t i = at < 0.0 ? -1 : (int64_t)at;
        table[x] = i < (int64_t)source ? i : -1;
    }
}

static void store_value(uint8_t *dst, size_t i, uint32_t bytes, uint16_t v)
{
    if (bytes == 1) {
        dst[i] = (uint8_t)v;
    } else {
        dst[2 * i] = (uint8_t)(v & 0xff);
        dst[2 * i + 1] = (uint8_t)(v >> 8);
    }
}

int mask_fit(const mask_image *src, uint32_t h, uint32_t w, resize_mode mode, uint32_t bytes, uint8_t *dst)
{
    fit_geometry g;
    image_fit_geometry(src->height, src->width, h, w, mode, &g);
    int64_t *cols = malloc(((size_t)g.ww + g.wh) * sizeof *cols), *rows = cols + g.ww;
    if (!cols)
        return -1;
    nearest_table(src->width, g.rw, g.ox, g.ww, cols);
    nearest_table(src->height, g.rh, g.oy, g.wh, rows);
    memset(dst, 0, (size_t)h * w * bytes); /* pad mode's border, and PIL's 0 outside the source */
    for (uint32_t y = 0; y < g.wh; y++) {
        if (rows[y] < 0)
            continue;
        const uint16_t *in = src->values + (size_t)rows[y] * src->width;
        size_t out = (size_t)(g.dy + y) * w + g.dx;
        for (uint32_t x = 0; x < g.ww; x++)
            if (cols[x] >= 0)
                store_value(dst, out + x, bytes, in[cols[x]]);
    }
    free(cols);
    return 0;
}
