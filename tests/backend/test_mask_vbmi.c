/* test_mask_vbmi.c - mask rows picked with byte permutes (reader/augment/mask_nearest_vbmi.h) equal the
 * plain gather out[i] = row[cols[i]]: random column tables (growing, shrinking as when flipped, steps of
 * 0..2 bytes, every offset), rows of 1..600 bytes that end where their allocation ends, outputs of 1..300
 * pixels; tables that span more than 128 bytes per 64 outputs are refused. "skipped" where the CPU has
 * no AVX-512 VBMI (the scalar rows are then the only ones, checked by reader_masks). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "mask_nearest_vbmi.h"
#include "rng.h"

static void one_case(rng_state *g)
{
    uint32_t src_w = 1 + (uint32_t)rng_below(g, 600), out_w = 1 + (uint32_t)rng_below(g, 300);
    int32_t *cols = malloc(out_w * sizeof *cols);
    uint8_t *row = malloc(src_w), want[300], got[300];
    CHECK(cols && row);
    for (uint32_t x = 0; x < src_w; x++)
        row[x] = (uint8_t)rng_below(g, 256);
    int32_t c = (int32_t)rng_below(g, src_w);
    int down = rng_below(g, 2) == 0;
    for (uint32_t i = 0; i < out_w; i++) { /* a walk of 0..2 bytes a pixel, kept inside the row */
        cols[i] = c;
        int32_t next = c + (down ? -1 : 1) * (int32_t)rng_below(g, 3);
        c = next < 0 ? 0 : next >= (int32_t)src_w ? (int32_t)src_w - 1 : next;
    }
    mask_vbmi_plan plan;
    int spans_ok = 1;
    for (uint32_t b = 0; b * 64 < out_w; b++) {
        int32_t lo = cols[b * 64], hi = lo;
        for (uint32_t i = b * 64; i < out_w && i < b * 64 + 64; i++)
            lo = cols[i] < lo ? cols[i] : lo, hi = cols[i] > hi ? cols[i] : hi;
        spans_ok &= hi - lo < 128;
    }
    int rc = h5pack_mask_vbmi_plan(cols, out_w, src_w, &plan);
    CHECK_EQ_INT(rc, spans_ok ? 0 : -1);
    if (rc == 0) {
        memset(got, 0xAB, sizeof got);
        h5pack_mask_vbmi_row(row, &plan, got);
        for (uint32_t i = 0; i < out_w; i++)
            want[i] = row[cols[i]];
        CHECK_MSG(memcmp(got, want, out_w) == 0, "src_w %u out_w %u down %d", src_w, out_w, down);
        CHECK_MSG(out_w == sizeof got || got[out_w] == 0xAB, "wrote past %u outputs", out_w);
    }
    free(cols), free(row);
}

int main(void)
{
    if (!h5pack_mask_vbmi_supported()) {
        printf("skipped: no AVX-512 VBMI on this CPU (or H5PACK_NO_AVX512)\n");
        return 77;
    }
    rng_state g = {2026};
    for (int t = 0; t < 20000; t++)
        one_case(&g);
    int32_t wide[130]; /* one block spanning 129 bytes: refused */
    for (int i = 0; i < 130; i++)
        wide[i] = i < 63 ? i * 2 : 128;
    mask_vbmi_plan plan;
    CHECK_EQ_INT(h5pack_mask_vbmi_plan(wide, 64, 200, &plan), -1);
    printf("mask rows by byte permutes equal the plain gather (20,000 random rows)\n");
    return 0;
}
