/* mask.h - segmentation masks (--masks): one PNG per image, read as PIL's np.asarray(Image.open(f)) gives
 * it (8- or 16-bit gray, palette indices, not colours), resized with PIL's NEAREST in the image's geometry.
 * Colour and gray+alpha PNGs are refused with a message that says how to convert them. */
#ifndef H5PACK_MASK_H
#define H5PACK_MASK_H

#include <stddef.h>
#include <stdint.h>

#include "image.h"

/* A decoded mask: one value per pixel, row-major, widened to 16 bits whatever the file's depth. */
typedef struct mask_image {
    uint16_t *values;
    uint32_t width, height;
} mask_image;

/* Bytes each value of PATH's mask needs once stored (1: 8 bits or less, gray or palette; 2: 16-bit gray),
 * from its header only: 0 with *BYTES set, or -1 with the reason in WHY (not a PNG, a colour or
 * gray+alpha PNG, a damaged header, an unreadable file). */
int mask_probe(const char *path, uint32_t *bytes, char *why, size_t why_len);

/* Decodes PATH into *OUT (free it with mask_free). IMAGE_OK, or the status with the reason in WHY
 * (IMAGE_TOO_LARGE above MAX_PIXELS, checked before any pixel memory is allocated). */
image_status mask_load(const char *path, uint64_t max_pixels, mask_image *out, char *why, size_t why_len);

void mask_free(mask_image *m);

/* Fits SRC to H x W with MODE as the images are fitted (image_fit_geometry: the whole mask resized to the
 * image's virtual size, then the same window and padding), sampled as PIL's resize(size, NEAREST) samples,
 * padding 0. DST gets H x W values of BYTES (1 or 2, little-endian) each. 0, or -1 without memory for the
 * sampling tables. */
int mask_fit(const mask_image *src, uint32_t h, uint32_t w, resize_mode mode, uint32_t bytes, uint8_t *dst);

#endif
