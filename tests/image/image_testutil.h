/* image_testutil.h - small helpers shared by the image tests: synthetic pixels, JPEG via TurboJPEG,
 * PNG via libpng (to memory), and decoding with a status + reason. Header only (static functions). */
#ifndef H5PACK_IMAGE_TESTUTIL_H
#define H5PACK_IMAGE_TESTUTIL_H

#include "check.h"
#include "image.h"

#include <png.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <turbojpeg.h>
#include <zlib.h>

typedef struct blob {
    uint8_t *data;
    size_t len;
} blob;

/* Smooth pattern with some structure: gradients and a square (C channels, deterministic). */
static inline uint8_t *make_pixels(uint32_t w, uint32_t h, uint32_t c)
{
    uint8_t *px = malloc((size_t)w * h * c);
    CHECK(px != NULL);
    for (uint32_t y = 0; y < h; y++)
        for (uint32_t x = 0; x < w; x++)
            for (uint32_t k = 0; k < c; k++) {
                int square = x > w / 4 && x < w / 2 && y > h / 4 && y < h / 2;
                px[((size_t)y * w + x) * c + k] = (uint8_t)(square ? 40 + 60 * k : (x * 255 / w + y * (k + 1)) % 256);
            }
    return px;
}

/* JPEG of W x H (3 channels, or 1 when SUBSAMP is TJSAMP_GRAY; CMYK input makes a YCCK JPEG). */
static inline blob make_jpeg_pf(uint32_t w, uint32_t h, int pf, int subsamp, int quality, int flags)
{
    uint32_t c = (uint32_t)tjPixelSize[pf];
    uint8_t *px = make_pixels(w, h, c);
    tjhandle tj = tjInitCompress();
    unsigned char *jpeg = NULL;
    unsigned long size = 0;
    CHECK(tj != NULL);
    CHECK_MSG(tjCompress2(tj, px, (int)w, 0, (int)h, pf, &jpeg, &size, subsamp, quality, flags) == 0, "tjCompress2: %s",
              tjGetErrorStr2(tj));
    blob b = {malloc(size), size};
    CHECK(b.data != NULL);
    memcpy(b.data, jpeg, size);
    tjFree(jpeg);
    tjDestroy(tj);
    free(px);
    return b;
}

static inline blob make_jpeg(uint32_t w, uint32_t h)
{
    return make_jpeg_pf(w, h, TJPF_RGB, TJSAMP_420, 90, 0);
}

/* PNG of W x H with libpng's simplified writer (FORMAT: PNG_FORMAT_RGB, _RGBA, _GRAY, ...). */
static inline blob make_png_fmt(uint32_t w, uint32_t h, uint32_t format)
{
    png_image img;
    memset(&img, 0, sizeof img);
    img.version = PNG_IMAGE_VERSION;
    img.width = w;
    img.height = h;
    img.format = format;
    uint8_t *px = make_pixels(w, h, PNG_IMAGE_SAMPLE_CHANNELS(format));
    png_alloc_size_t size = 0;
    CHECK(png_image_write_to_memory(&img, NULL, &size, 0, px, 0, NULL));
    blob b = {malloc(size), size};
    CHECK(b.data != NULL);
    CHECK_MSG(png_image_write_to_memory(&img, b.data, &size, 0, px, 0, NULL), "png write: %s", img.message);
    b.len = size;
    free(px);
    return b;
}

static inline blob make_png(uint32_t w, uint32_t h)
{
    return make_png_fmt(w, h, PNG_FORMAT_RGB);
}

static inline blob blob_copy(const uint8_t *data, size_t len)
{
    blob b = {malloc(len ? len : 1), len};
    CHECK(b.data != NULL);
    if (len)
        memcpy(b.data, data, len);
    return b;
}

/* Offset of the first occurrence of NEEDLE (N bytes) in B, or -1. */
static inline long blob_find(const blob *b, const void *needle, size_t n)
{
    for (size_t i = 0; i + n <= b->len; i++)
        if (memcmp(b->data + i, needle, n) == 0)
            return (long)i;
    return -1;
}

/* Recomputes the CRC of the PNG chunk whose 4-byte type starts at TYPE_OFF. */
static inline void png_fix_crc(blob *b, long type_off)
{
    const uint8_t *p = b->data + type_off - 4;
    uint32_t len = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
    uint32_t crc = (uint32_t)crc32(0, b->data + type_off, 4 + len);
    uint8_t *q = b->data + type_off + 4 + len;
    q[0] = (uint8_t)(crc >> 24), q[1] = (uint8_t)(crc >> 16), q[2] = (uint8_t)(crc >> 8), q[3] = (uint8_t)crc;
}

static inline void put_be16(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 8), p[1] = (uint8_t)v;
}

static inline void put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24), p[1] = (uint8_t)(v >> 16), p[2] = (uint8_t)(v >> 8), p[3] = (uint8_t)v;
}

static inline decode_opts default_opts(void)
{
    decode_opts o = {.channels = 3, .mode = RESIZE_CROP, .max_pixels = 1ull << 28};
    return o;
}

/* Decodes B with O; returns the status, WHY gets the reason; the pixels are freed. */
static inline image_status decode_status(const blob *b, const decode_opts *o, char *why, size_t why_len)
{
    image_u8 img;
    image_status st = image_decode(b->data, b->len, o, &img, why, why_len);
    if (st == IMAGE_OK) {
        CHECK(img.pixels != NULL && img.width > 0 && img.height > 0 && img.channels == o->channels);
    } else {
        CHECK(img.pixels == NULL);
        CHECK_MSG(why[0] != '\0', "status %d without a reason", (int)st);
    }
    image_free(&img);
    return st;
}

#endif
