/* image_probe.c - an image's size from its header (see image.h): JPEG through TurboJPEG's header reader,
 * PNG from its IHDR chunk, which the PNG format puts first. */
#include "image_internal.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <turbojpeg.h>
#include <unistd.h>

#define PROBE_PREFIX_BYTES (64u << 10)

/* The header read as the decoder reads it: a harmless warning (junk bytes between markers, an unknown JFIF
 * revision, ...) still gives the size, since the decode accepts it too (and PIL opens such a file). */
static int jpeg_header_size(const uint8_t *data, size_t len, uint32_t *h, uint32_t *w)
{
    tjhandle tj = tjInitDecompress();
    int width = 0, height = 0, subsamp = 0, colorspace = 0, rc = -1;
    if (tj) {
        rc = tjDecompressHeader3(tj, data, (unsigned long)len, &width, &height, &subsamp, &colorspace);
        if (rc != 0 && tjGetErrorCode(tj) == TJERR_WARNING &&
            image_jpeg_message_status(tjGetErrorStr2(tj), 1, "header", NULL, 0) == IMAGE_OK)
            rc = 0;
        tjDestroy(tj);
    }
    rc = rc == 0 && width > 0 && height > 0 ? 0 : -1;
    if (rc == 0)
        *h = (uint32_t)height, *w = (uint32_t)width;
    return rc;
}

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Signature (8), then the IHDR chunk: length 13, "IHDR", width, height (big-endian, 1..2^31-1). */
static int png_header_size(const uint8_t *data, size_t len, uint32_t *h, uint32_t *w)
{
    if (len < 24 || be32(data + 8) != 13 || memcmp(data + 12, "IHDR", 4) != 0)
        return -1;
    uint32_t width = be32(data + 16), height = be32(data + 20);
    if (width == 0 || height == 0 || width > 0x7fffffffu || height > 0x7fffffffu)
        return -1;
    *h = height, *w = width;
    return 0;
}

/* The size from the first bytes of FD (or from the whole file: a JPEG whose markers before the frame
 * header, EXIF or ICC, run past the prefix). */
static int probe_fd(int fd, size_t file_bytes, uint32_t *h, uint32_t *w)
{
    uint8_t *buf = NULL;
    size_t n = 0;
    int rc = -1;
    size_t want = file_bytes < PROBE_PREFIX_BYTES ? file_bytes : PROBE_PREFIX_BYTES;
    if (want == 0 || image_read_fd(fd, want, &buf, &n, NULL, 0) != IMAGE_OK || n == 0) {
        free(buf);
        return -1;
    }
    image_format format = image_sniff(buf, n);
    if (format == IMAGE_FORMAT_PNG)
        rc = png_header_size(buf, n, h, w);
    else if (format == IMAGE_FORMAT_JPEG && (rc = jpeg_header_size(buf, n, h, w)) != 0 && n < file_bytes) {
        free(buf), buf = NULL;
        if (image_read_fd(fd, file_bytes, &buf, &n, NULL, 0) == IMAGE_OK)
            rc = jpeg_header_size(buf, n, h, w);
    }
    free(buf);
    return rc;
}

int image_probe_size(const char *path, const decode_opts *opts, uint32_t *h, uint32_t *w)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK), rc = -1;
    struct stat sb;
    uint32_t ph = 0, pw = 0;
    if (fd < 0)
        return -1;
    if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && probe_fd(fd, (size_t)sb.st_size, &ph, &pw) == 0 &&
        image_check_pixels("image", pw, ph, opts, NULL, 0) == IMAGE_OK) {
        *h = ph, *w = pw;
        rc = 0;
    }
    close(fd);
    return rc;
}

void image_max_side_size(uint32_t h, uint32_t w, uint32_t max_side, uint32_t *out_h, uint32_t *out_w)
{
    uint32_t longer = h > w ? h : w;
    if (max_side == 0 || longer <= max_side) {
        *out_h = h, *out_w = w;
        return;
    }
    uint64_t shorter = h > w ? w : h;
    uint64_t scaled = (2 * shorter * max_side + longer) / (2 * (uint64_t)longer); /* half up */
    if (scaled < 1)
        scaled = 1;
    if (h >= w)
        *out_h = max_side, *out_w = (uint32_t)scaled;
    else
        *out_h = (uint32_t)scaled, *out_w = max_side;
}

void image_short_side_size(uint32_t h, uint32_t w, uint32_t short_side, uint32_t *out_h, uint32_t *out_w)
{
    if (short_side == 0 || h == 0 || w == 0) {
        *out_h = h, *out_w = w;
        return;
    }
    /* torchvision: short, long = (w, h) if w <= h else (h, w); new_long = int(S * long / short). Integer
     * division gives the same value: S * long < 2^47 is exact in a double, and the quotient's rounding
     * error (below quotient * 2^-53 < 2^-6 / short) is smaller than its distance to any integer it is not
     * (at least 1 / short), so the rounded quotient never crosses an integer. */
    uint32_t shorter = w <= h ? w : h, longer = w <= h ? h : w;
    uint64_t scaled = (uint64_t)short_side * longer / shorter;
    uint32_t grown = scaled > UINT32_MAX ? UINT32_MAX : (uint32_t)scaled;
    if (w <= h)
        *out_h = grown, *out_w = short_side;
    else
        *out_h = short_side, *out_w = grown;
}
