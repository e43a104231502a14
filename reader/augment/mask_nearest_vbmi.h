/* mask_nearest_vbmi.h - the rows of mask_nearest.c with AVX-512 VBMI byte permutes: 64 output pixels of a
 * row per two-table permute (vpermi2b) when their source columns lie within 128 bytes, as they do for
 * any box up to twice as wide as the output. Same bytes as the scalar rows: the columns are the same
 * table, only the picking differs. */
#ifndef H5PACK_MASK_NEAREST_VBMI_H
#define H5PACK_MASK_NEAREST_VBMI_H

#include <stdint.h>

#define MASK_VBMI_MAX_BLOCKS 64 /* output rows of up to 4096 pixels */

/* One row's picking, made once per mask from its column table (the same for every row). */
typedef struct mask_vbmi_plan {
    uint32_t blocks;                              /* ceil(out_w / 64) */
    uint32_t out_w;
    int32_t base[MASK_VBMI_MAX_BLOCKS];          /* each block's first source byte */
    uint32_t avail[MASK_VBMI_MAX_BLOCKS];        /* source bytes from base to the row's end (<= 128 used) */
    uint8_t index[MASK_VBMI_MAX_BLOCKS][64];     /* each output's byte in the block's 128 */
} mask_vbmi_plan;

/* 1 when this CPU and build run it (AVX-512 F, BW and VBMI; not with H5PACK_NO_AVX512). Asked once. */
int h5pack_mask_vbmi_supported(void);

/* The plan for COLS (OUT_W source columns, each in 0 .. SRC_W - 1): 0, or -1 when a block's columns span
 * more than 128 bytes or the row is too wide (then the scalar rows do it). */
int h5pack_mask_vbmi_plan(const int32_t *cols, uint32_t out_w, uint32_t src_w, mask_vbmi_plan *plan);

/* OUT[i] = ROW[cols[i]] for the plan's row. Reads no byte of ROW past its SRC_W. */
void h5pack_mask_vbmi_row(const uint8_t *row, const mask_vbmi_plan *plan, uint8_t *out);

#endif
