/* image_probe.c - an image's size from its header (see image.h): JPEG through TurboJPEG's header reader,
 * PNG from its IHDR chunk, which the PNG format puts first. */
#include "image_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <turbojpeg.h>
#include <unistd.h>

#define PROBE_PREFIX_BYTES (64u << 10)

/* Reads up to LEN bytes from the start of FD into BUF; returns the count, or -1. */
static ssize_t read_prefix(int fd, uint8_t *buf, size_t len)
{
    size_t got = 0;
    while (got < len) {
        ssize_t n = pread(fd, buf + got, len - got, (off_t)got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        if (n == 0)
            break;
        got += (size_t)n;
    }
    return (ssize_t)got;
}

static int jpeg_header_size(const uint8_t *data, size_t len, uint32_t *h, uint32_t *w)
{
    tjhandle tj = tjInitDecompress();
    int width = 0, height = 0, subsamp = 0, colorspace = 0;
    int rc = tj && tjDecompressHeader3(tj, data, (unsigned long)len, &width, &height, &subsamp, &colorspace) == 0 &&
                     width > 0 && height > 0 ? 0 : -1;
    if (tj)
        tjDestroy(tj);
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

/* A JPEG whose markers before the frame header (EXIF, ICC) run past the prefix: the whole file. */
static int jpeg_whole_file_size(int fd, size_t file_bytes, uint32_t *h, uint32_t *w)
{
    uint8_t *all = malloc(file_bytes ? file_bytes : 1);
    int rc = -1;
    if (all && read_prefix(fd, all, file_bytes) == (ssize_t)file_bytes)
        rc = jpeg_header_size(all, file_bytes, h, w);
    free(all);
    return rc;
}

static int probe_fd(int fd, size_t file_bytes, uint32_t *h, uint32_t *w)
{
    uint8_t prefix[PROBE_PREFIX_BYTES];
    ssize_t n = read_prefix(fd, prefix, sizeof prefix);
    if (n <= 0)
        return -1;
    switch (image_sniff(prefix, (size_t)n)) {
    case IMAGE_FORMAT_PNG:
        return png_header_size(prefix, (size_t)n, h, w);
    case IMAGE_FORMAT_JPEG:
        if (jpeg_header_size(prefix, (size_t)n, h, w) == 0)
            return 0;
        return (size_t)n < file_bytes ? jpeg_whole_file_size(fd, file_bytes, h, w) : -1;
    default:
        return -1;
    }
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
