/* mask_nearest.c - nearest-neighbour resampling of masks over a crop box, as PIL (mask_nearest.h). */
#include "mask_nearest.h"

#include <string.h>

#include "mask_nearest_vbmi.h"

/* PIL's COORD(): truncation, with everything left of 0 at -1. */
static int32_t pil_coord(double v)
{
    return v < 0.0 ? -1 : (int32_t)v;
}

void h5pack_mask_nearest_table(int32_t x, int32_t width, uint32_t out_w, uint32_t src_w, int32_t *tab)
{
    /* PIL computes the box extent in float (exact for our integer boxes) and the scale in double */
    double scale = (double)(float)width / out_w, pos = (double)x + scale * 0.5;
    for (uint32_t i = 0; i < out_w; i++, pos += scale) {
        int32_t c = pil_coord(pos);
        tab[i] = c >= 0 && (uint32_t)c < src_w ? c : -1;
    }
}

size_t h5pack_mask_dtype_bytes(h5pack_mask_dtype dtype)
{
    return dtype == H5PACK_MASK_DTYPE_INT64 ? sizeof(int64_t) : sizeof(uint8_t);
}

static void mirror(int32_t *cols, uint32_t n)
{
    for (uint32_t a = 0, b = n ? n - 1 : 0; a < b; a++, b--) {
        int32_t t = cols[a];
        cols[a] = cols[b], cols[b] = t;
    }
}

/* One output row from source row ROW (NULL: outside the source, all 0). INSIDE: every column is in the
 * source (a crop box within the image, the usual case): a plain gather, no test per pixel. */
static void put_row(const uint8_t *row, const int32_t *cols, uint32_t out_w, int inside, h5pack_mask_dtype dtype,
                    void *out)
{
    if (dtype == H5PACK_MASK_DTYPE_INT64) {
        int64_t *o = out;
        if (row && inside)
            for (uint32_t i = 0; i < out_w; i++)
                o[i] = row[cols[i]];
        else
            for (uint32_t i = 0; i < out_w; i++)
                o[i] = row && cols[i] >= 0 ? row[cols[i]] : 0;
    } else {
        uint8_t *o = out;
        if (row && inside)
            for (uint32_t i = 0; i < out_w; i++)
                o[i] = row[cols[i]];
        else
            for (uint32_t i = 0; i < out_w; i++)
                o[i] = row && cols[i] >= 0 ? row[cols[i]] : 0;
    }
}

static int all_inside(const int32_t *cols, uint32_t n)
{
    int32_t low = 0;
    for (uint32_t i = 0; i < n; i++)
        low = cols[i] < low ? cols[i] : low;
    return low >= 0;
}

void h5pack_mask_nearest(const uint8_t *src, uint32_t src_h, uint32_t src_w, const h5pack_crop_box *box,
                         uint32_t out_h, uint32_t out_w, h5pack_mask_dtype dtype, void *out, int32_t *cols)
{
    size_t row_bytes = (size_t)out_w * h5pack_mask_dtype_bytes(dtype);
    h5pack_mask_nearest_table(box->x, box->width, out_w, src_w, cols);
    if (box->flip) /* PIL flips the resized mask: output column i is resized column out_w - 1 - i */
        mirror(cols, out_w);
    int inside = all_inside(cols, out_w);
    mask_vbmi_plan plan; /* uint8 rows of a box inside the image: byte permutes where the CPU has them */
    int vbmi = inside && dtype == H5PACK_MASK_DTYPE_UINT8 && h5pack_mask_vbmi_supported() &&
               h5pack_mask_vbmi_plan(cols, out_w, src_w, &plan) == 0;
    /* rows follow the same running sum as PIL's, one row at a time; an upscaled box repeats source rows,
     * whose output rows are copies of the one before */
    double scale = (double)(float)box->height / out_h, pos = (double)box->y + scale * 0.5;
    int32_t previous = -2;
    for (uint32_t r = 0; r < out_h; r++, pos += scale) {
        int32_t y = pil_coord(pos);
        uint8_t *dst = (uint8_t *)out + r * row_bytes;
        if (y == previous) {
            memcpy(dst, dst - row_bytes, row_bytes);
            continue;
        }
        const uint8_t *row = y >= 0 && (uint32_t)y < src_h ? src + (size_t)y * src_w : NULL;
        if (vbmi && row)
            h5pack_mask_vbmi_row(row, &plan, dst);
        else
            put_row(row, cols, out_w, inside, dtype, dst);
        previous = y;
    }
}
