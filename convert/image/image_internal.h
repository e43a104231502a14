/* image_internal.h - private glue between image.c (sniffing, dispatch) and the per-format decoders and
 * the resizer. Not used outside convert/image*.c, decode_*.c and resize*.c (tests may include it). */
#ifndef H5PACK_IMAGE_INTERNAL_H
#define H5PACK_IMAGE_INTERNAL_H

#include "image.h"

#include <stdarg.h>

/* Writes a printf-style reason into WHY (if any room). */
void image_why(char *why, size_t why_len, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* The first SIZE bytes of the file FD (fewer when it is shorter) into a new buffer (*LEN_OUT of them),
 * read from offset 0 whatever FD's position. IMAGE_NOMEM or IMAGE_IO with the reason in WHY. */
image_status image_read_fd(int fd, size_t size, uint8_t **buf_out, size_t *len_out, char *why, size_t why_len);

/* Name of a non-JPEG/PNG format recognised from its magic bytes ("GIF", "BMP", "WebP", ...), or NULL. */
const char *image_sniff_other(const uint8_t *data, size_t len);

/* Why a FORMAT ("JPEG", "PNG") image failed, whole or band by band, in one wording for both: TRUNCATED
 * (the file ended first) or corrupt, with the decoder's DETAIL. IMAGE_CORRUPT. */
image_status image_decode_failure(const char *format, int truncated, const char *detail, char *why, size_t why_len);

/* Why a file whose first LEN bytes are DATA is no JPEG/PNG (empty, another format by name, else its first
 * bytes): IMAGE_CORRUPT for an empty file, else IMAGE_UNSUPPORTED. The whole-image and band decoders both
 * say it so. */
image_status image_unknown_why(const uint8_t *data, size_t len, char *why, size_t why_len);

/* The decoders behind image_decode (DATA already sniffed as their format; OUT zeroed on failure). */
image_status image_decode_jpeg(const uint8_t *data, size_t len, const decode_opts *opts, image_u8 *out, char *why,
                               size_t why_len);
image_status image_decode_png(const uint8_t *data, size_t len, const decode_opts *opts, image_u8 *out, char *why,
                              size_t why_len);

/* In place: NPIX PNG pixels of SRC_CHANNELS (1..4, alpha last when 2 or 4) -> CHANNELS (1 or 3), alpha
 * dropped as PIL's convert() does or composited on black or white (MODE; decode_png.c; also the tiles' band
 * reader). */
void image_png_to_channels(uint8_t *px, size_t npix, uint32_t src_channels, uint32_t channels, image_alpha mode);

/* The libpng reader's settings both PNG decoders share: no size limit of libpng's own (max_pixels decides),
 * a bad CRC in an ancillary chunk an error (as PIL). PNG is libpng's png_structp (png.h not needed here). */
struct png_struct_def;
void image_png_setup(struct png_struct_def *png);

/* libjpeg's message MSG (a WARNING libjpeg recovered from, or an error) as a status: IMAGE_OK for the
 * harmless warnings, IMAGE_UNSUPPORTED or IMAGE_CORRUPT with the reason (STAGE: "header", "data"). */
image_status image_jpeg_message_status(const char *msg, int warning, const char *stage, char *why, size_t why_len);

/* In place: NPIX Adobe CMYK pixels -> RGB or gray (CHANNELS), as PIL's convert (decode_jpeg.c; bands). */
void image_cmyk_to_channels(uint8_t *buf, size_t npix, uint32_t channels);

/* Checks WIDTH x HEIGHT against opts->max_pixels; writes the reason and returns IMAGE_TOO_LARGE if above. */
image_status image_check_pixels(const char *fmt_name, uint64_t width, uint64_t height, const decode_opts *opts,
                                char *why, size_t why_len);

/* Smallest source size (h, w) that fit MODE can still reach (h, w target) by downscaling only: used to
 * choose a JPEG DCT scale. True when (src_h, src_w) still needs no upscaling. */
int image_fit_needs_no_upscale(uint32_t src_h, uint32_t src_w, uint32_t th, uint32_t tw, resize_mode mode);

/* Gray from RGB with the ITU-R 601 weights PIL's convert('L') uses, rounded as PIL does. */
static inline uint8_t image_rgb_to_luma(uint8_t r, uint8_t g, uint8_t b)
{
    return (uint8_t)(((uint32_t)r * 19595u + (uint32_t)g * 38470u + (uint32_t)b * 7471u + 0x8000u) >> 16);
}

/* a*b/255 rounded as PIL's MULDIV255 (used for CMYK -> RGB and compositing on black or white). */
static inline uint8_t image_muldiv255(uint32_t a, uint32_t b)
{
    uint32_t t = a * b + 128u;
    return (uint8_t)(((t >> 8) + t) >> 8);
}

/* The geometry of a fit: the source is resized to (rh, rw) (as a whole, virtually), then the window
 * (oy, ox, wh, ww) of that resized image lands at (dy, dx) of the (h, w) destination (the rest is 0). */
typedef struct fit_geometry {
    uint32_t rh, rw;         /* size the whole source is (virtually) resized to */
    uint32_t oy, ox, wh, ww; /* window of the resized image that is kept */
    uint32_t dy, dx;         /* where the window goes in the destination */
} fit_geometry;

void image_fit_geometry(uint32_t src_h, uint32_t src_w, uint32_t h, uint32_t w, resize_mode mode, fit_geometry *g);

#endif
