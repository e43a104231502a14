/* dump_rrc.c - prints, one JSON object per line, random resized crop boxes drawn by the reader
 * (h5pack_aug_rrc_box) together with the raw 64-bit draws it had available, for
 * check_rrc_torchvision.py to replay through a transcription of torchvision's get_params. Cases cover
 * square, wide and tall images, the default ranges, narrow and odd ranges, and ranges that force the
 * central fallback. */
#include <inttypes.h>
#include <stdio.h>

#include "augment_geom.h"

static void dump(uint32_t H, uint32_t W, double s0, double s1, double r0, double r1, uint64_t seed)
{
    aug_crop_params cp = {H5PACK_CROP_RANDOM_RESIZED, s0, s1, r0, r1, 0.875};
    rng_state r = {seed}, copy = r;
    aug_box b = h5pack_aug_rrc_box(H, W, &cp, &r);
    printf("{\"H\": %u, \"W\": %u, \"scale\": [%.17g, %.17g], \"ratio\": [%.17g, %.17g], \"draws\": [", H, W, s0, s1, r0,
           r1);
    for (int k = 0; k < 2 * AUG_RRC_ATTEMPTS + 2; k++)
        printf("%s\"%016" PRIx64 "\"", k ? ", " : "", rng_next(&copy));
    printf("], \"box\": [%d, %d, %d, %d]}\n", b.y, b.x, b.h, b.w);
}

int main(void)
{
    const uint32_t sizes[][2] = {{256, 256}, {256, 320}, {375, 500}, {500, 333}, {32, 32}, {7, 300}, {1, 1}};
    const double ranges[][4] = {{0.08, 1.0, 3.0 / 4.0, 4.0 / 3.0}, {0.35, 1.0, 3.0 / 4.0, 4.0 / 3.0},
                                {0.25, 0.26, 0.5, 2.0}, {0.9, 1.0, 1.0, 1.0}, {1.5, 2.0, 3.0 / 4.0, 4.0 / 3.0}};
    uint64_t seed = 1;
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (size_t g = 0; g < sizeof ranges / sizeof ranges[0]; g++)
            for (int k = 0; k < 300; k++)
                dump(sizes[s][0], sizes[s][1], ranges[g][0], ranges[g][1], ranges[g][2], ranges[g][3],
                     rng_mix64(seed++));
    return 0;
}
