/* fuzz_image - libFuzzer target: image bytes -> image_decode -> image_fit.
 * Inputs are plain image files (any JPEG/PNG can join the corpus); the decode options (channels, resize
 * mode, target size, whether DCT scaling applies) are derived from the input's length and last byte, so
 * every option path is reached without a prefix that would spoil the files. Memory is bounded by a
 * 4-megapixel max_pixels. Invariants checked: a failure always has a reason and no pixels; a success has
 * pixels of the asked channel count; the fit has exactly the target size. */
#include "image.h"

#include <stdint.h>
#include <stdlib.h>

#define FUZZ_MAX_PIXELS (4u << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int cond)
{
    if (!cond)
        abort(); /* libFuzzer and the replay driver report the crashing input */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint32_t sel = (uint32_t)(size * 31u + (size ? data[size - 1] : 0u));
    decode_opts o = {.channels = (sel & 1) ? 1 : 3, .mode = (resize_mode)((sel >> 1) % 3),
                     .max_pixels = FUZZ_MAX_PIXELS};
    uint32_t th = 1 + ((sel >> 3) & 63) * 3, tw = 1 + ((sel >> 9) & 63) * 3;
    if (sel & 4) { /* target known to the decoder: JPEG may use DCT scaling (or decode at full size) */
        o.target_h = th;
        o.target_w = tw;
        o.dct_scaling = !(sel & (1u << 15));
    }
    image_u8 img;
    char why[512];
    why[0] = '\0';
    image_status st = image_decode(data, size, &o, &img, why, sizeof why);
    if (st != IMAGE_OK) {
        check(img.pixels == NULL && why[0] != '\0');
        return 0;
    }
    check(img.pixels && img.width && img.height && img.channels == o.channels);
    check((uint64_t)img.width * img.height <= FUZZ_MAX_PIXELS);
    image_u8 fitted;
    if (image_fit(&img, th, tw, o.mode, &fitted) == IMAGE_OK) {
        check(fitted.width == tw && fitted.height == th && fitted.channels == img.channels);
        image_free(&fitted);
    }
    image_free(&img);
    return 0;
}
