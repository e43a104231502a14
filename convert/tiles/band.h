/* band.h - an image decoded band by band (a few rows at a time), so that memory holds one band and not
 * the image: what `h5pack --tiles` packs huge images with (docs/format.md, "Huge images in tiles").
 * The pixels are the ones the whole-image decoders give (image.h: PIL's decode; CMYK and alpha handled
 * the same way), as HWC rows of opts->channels bytes per pixel. JPEG through libjpeg's scanline API,
 * PNG through libpng's row API. */
#ifndef H5PACK_BAND_H
#define H5PACK_BAND_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "image.h"

typedef struct band_reader band_reader;

/* Opens PATH and reads its header: *H x *W. opts->max_pixels bounds the size. IMAGE_OK, or the status
 * with the reason in WHY (nothing to close then). */
image_status band_open(const char *path, const decode_opts *opts, band_reader **out, uint32_t *h, uint32_t *w,
                       char *why, size_t why_len);

/* The next ROWS rows into DST (ROWS * W * channels bytes). IMAGE_OK, or the status with the reason. */
image_status band_read(band_reader *b, uint8_t *dst, uint32_t rows, char *why, size_t why_len);

void band_close(band_reader *b);

/* The format-specific halves (band_jpeg.c, band_png.c), behind band_open's sniffing. */
typedef struct band_ops {
    image_status (*read)(void *state, uint8_t *dst, uint32_t rows, char *why, size_t why_len);
    void (*close)(void *state);
} band_ops;

image_status band_open_jpeg(FILE *f, const decode_opts *opts, void **state, const band_ops **ops, uint32_t *h,
                            uint32_t *w, char *why, size_t why_len);
image_status band_open_png(FILE *f, const decode_opts *opts, void **state, const band_ops **ops, uint32_t *h,
                           uint32_t *w, char *why, size_t why_len);

#endif
