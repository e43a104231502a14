/* image.h - decoding JPEG/PNG bytes into pixels and fitting them to the target size.
 * Used by the packer; the decoders are libjpeg-turbo (TurboJPEG API) and libpng. Never by hand. */
#ifndef H5PACK_IMAGE_H
#define H5PACK_IMAGE_H

#include <stddef.h>
#include <stdint.h>

/* Interleaved pixels, rows of width*channels bytes (HWC). */
typedef struct image_u8 {
    uint8_t *pixels;
    uint32_t width, height, channels;
} image_u8;

typedef enum image_status {
    IMAGE_OK = 0,
    IMAGE_UNSUPPORTED, /* not JPEG/PNG content (GIF, BMP, WebP, ...) or an encoding we do not decode */
    IMAGE_CORRUPT,     /* truncated or damaged data */
    IMAGE_TOO_LARGE,   /* width*height above max_pixels: rejected before allocating */
    IMAGE_IO,          /* could not read the file */
    IMAGE_NOMEM
} image_status;

/* Short reason of a status, e.g. "unsupported format" (static text). */
const char *image_status_text(image_status s);

typedef enum resize_mode {
    RESIZE_CROP = 0,    /* scale the shorter side to fit, centre crop (default) */
    RESIZE_STRETCH = 1, /* scale each axis independently */
    RESIZE_PAD = 2      /* scale the longer side to fit, centre, pad with 0 */
} resize_mode;

typedef enum image_format { IMAGE_FORMAT_UNKNOWN = 0, IMAGE_FORMAT_JPEG, IMAGE_FORMAT_PNG } image_format;

/* Format from the first bytes (magic numbers), not from the file name. */
image_format image_sniff(const uint8_t *data, size_t len);

/* What becomes of a PNG's alpha (an alpha channel or tRNS transparency): --alpha. */
typedef enum image_alpha {
    IMAGE_ALPHA_DROP = 0, /* dropped, as PIL's convert('RGB') / convert('L') (torchvision's loader) */
    IMAGE_ALPHA_BLACK,    /* composited on black: c*a/255, rounded like PIL */
    IMAGE_ALPHA_WHITE     /* composited on white: 255 - (255-c)*a/255, Image.alpha_composite's result */
} image_alpha;

typedef struct decode_opts {
    uint32_t channels;     /* 3 (RGB) or 1 (gray) */
    uint32_t target_h;     /* 0 = no target: full-size decode */
    uint32_t target_w;
    resize_mode mode;      /* with the target: lets JPEG use DCT scaling (M/8) while the scaled image
                              still needs downscaling (never upscaling) to reach the target */
    uint64_t max_pixels;   /* reject width*height above this before allocating */
    int dct_scaling;       /* 1: a JPEG may be decoded at a reduced M/8 scale for the target (--jpeg-scale
                              dct: faster for sources several times the target, pixels close to PIL's);
                              0 (default): full-size decode, so decode + fit equals PIL's exactly */
    image_alpha alpha;     /* PNG alpha: dropped (default, 0) or composited on black or white */
} decode_opts;

/* Decodes DATA (LEN bytes) into *out (caller frees with image_free). On failure returns the status and
 * writes a one-line reason (decoder's message included) into WHY. EXIF orientation is NOT applied (as
 * PIL's Image.open and torchvision's ImageFolder do not): documented in docs/images.md. PNG alpha is
 * dropped or composited as opts->alpha says, CMYK/YCCK JPEG become RGB, 16-bit PNG keeps the high byte.
 * With a target and dct_scaling, a JPEG may come back DCT-scaled (never below what the target needs): call
 * image_fit() afterwards. */
image_status image_decode(const uint8_t *data, size_t len, const decode_opts *opts, image_u8 *out, char *why,
                          size_t why_len);

/* Reads PATH whole and decodes it (IMAGE_IO with strerror text on read failure). */
image_status image_load(const char *path, const decode_opts *opts, image_u8 *out, char *why, size_t why_len);

/* Fits SRC to H x W with MODE using an antialiased filter close to PIL's resize(..., BILINEAR)
 * (triangle filter whose support grows with the downscale factor). DST gets SRC's channel count.
 * Returns IMAGE_OK or IMAGE_NOMEM. */
image_status image_fit(const image_u8 *src, uint32_t h, uint32_t w, resize_mode mode, image_u8 *dst);

void image_free(image_u8 *img);

/* The size an image will decode to, from its header only (the first 64 KiB of the file; the whole file
 * when a JPEG's header runs longer), for packing images of several sizes: 0 with *H, *W set, or -1 when
 * the header gives no usable size (not JPEG/PNG, damaged, empty, or above opts->max_pixels). A -1 says
 * nothing final: the image's decode then gives the reason it is skipped. */
int image_probe_size(const char *path, const decode_opts *opts, uint32_t *h, uint32_t *w);

/* The size an H x W image is stored at with --max-side N (0: as it is): when its longer side exceeds N,
 * the longer side becomes N and the shorter one keeps the aspect, rounded half up, at least 1. */
void image_max_side_size(uint32_t h, uint32_t w, uint32_t max_side, uint32_t *out_h, uint32_t *out_w);

/* The size an H x W image is stored at with --short-side S: torchvision's Resize(S) rule
 * (transforms.functional._compute_resized_output_size): the shorter side becomes S, the longer one
 * int(S * long / short), truncated; a square's sides both S. Smaller images grow to it as well, as
 * torchvision's do. A longer side past UINT32_MAX is clamped there (such an image is skipped as too large). */
void image_short_side_size(uint32_t h, uint32_t w, uint32_t short_side, uint32_t *out_h, uint32_t *out_w);

#endif
