/* mask_nearest.h - one mask taken through its image's geometry: the crop box, a nearest-neighbour resize
 * and the flip, with exactly the pixels PIL gives for
 *     mask.resize((out_w, out_h), Image.NEAREST, box=(x, y, x + width, y + height)), then FLIP_LEFT_RIGHT,
 * which is what torchvision's segmentation references do with a PIL mask. Masks are class indices: they
 * are never blended, normalised or rounded, only picked. */
#ifndef H5PACK_MASK_NEAREST_H
#define H5PACK_MASK_NEAREST_H

#include <stddef.h>
#include <stdint.h>

#include "h5pack.h"

/* The source column of each of the OUT_W output columns for a box of WIDTH columns from column X (also
 * the rows: the same rule), into TAB; -1 where it falls outside 0 .. SRC_W - 1 (padding). PIL's rule: a
 * position starting at x + scale / 2 that grows by scale = width / out_w per column, in double, truncated
 * (the running sum, not (i + 0.5) * scale: the two differ at exact boundaries, and PIL's is the sum). */
void h5pack_mask_nearest_table(int32_t x, int32_t width, uint32_t out_w, uint32_t src_w, int32_t *tab);

/* Resamples SRC (SRC_H x SRC_W uint8, row-major) over BOX (a crop box of h5pack.h: y, x, height, width,
 * flip) into OUT (OUT_H x OUT_W elements of DTYPE, row-major); source pixels outside SRC read 0 (the
 * padding of a pad-and-crop box). COLS: OUT_W ints of scratch. */
void h5pack_mask_nearest(const uint8_t *src, uint32_t src_h, uint32_t src_w, const h5pack_crop_box *box,
                         uint32_t out_h, uint32_t out_w, h5pack_mask_dtype dtype, void *out, int32_t *cols);

/* Bytes of one element of DTYPE. */
size_t h5pack_mask_dtype_bytes(h5pack_mask_dtype dtype);

#endif
