/* image.c - what is in the bytes (magic numbers, not the file name), dispatch to the JPEG or PNG
 * decoder, reading a file whole, and the status texts. */
#include "image_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "errtext.h"

/* Files above this many bytes plus 8 bytes per allowed pixel are not read: no real JPEG/PNG within
 * max_pixels is that big, and reading it whole would be the memory bomb max_pixels guards against. */
#define IMAGE_FILE_SLACK_BYTES (64u << 20)

const char *image_status_text(image_status s)
{
    switch (s) {
    case IMAGE_OK: return "ok";
    case IMAGE_UNSUPPORTED: return "unsupported format";
    case IMAGE_CORRUPT: return "corrupt image";
    case IMAGE_TOO_LARGE: return "image too large";
    case IMAGE_IO: return "read error";
    case IMAGE_NOMEM: return "out of memory";
    }
    return "unknown status";
}

void image_why(char *why, size_t why_len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    h5pack_verrf(0, why, why_len, fmt, ap);
    va_end(ap);
}

static int starts_with(const uint8_t *data, size_t len, const void *magic, size_t n)
{
    return len >= n && memcmp(data, magic, n) == 0;
}

image_format image_sniff(const uint8_t *data, size_t len)
{
    if (!data)
        return IMAGE_FORMAT_UNKNOWN;
    if (starts_with(data, len, "\xff\xd8\xff", 3))
        return IMAGE_FORMAT_JPEG;
    if (starts_with(data, len, "\x89PNG\r\n\x1a\n", 8))
        return IMAGE_FORMAT_PNG;
    return IMAGE_FORMAT_UNKNOWN;
}

/* ISO base media (HEIF/AVIF) files: "ftyp" box at offset 4, brand at 8. */
static const char *sniff_isobmff(const uint8_t *data, size_t len)
{
    if (len < 12 || memcmp(data + 4, "ftyp", 4) != 0)
        return NULL;
    if (memcmp(data + 8, "avif", 4) == 0 || memcmp(data + 8, "avis", 4) == 0)
        return "AVIF";
    if (memcmp(data + 8, "heic", 4) == 0 || memcmp(data + 8, "heix", 4) == 0 || memcmp(data + 8, "mif1", 4) == 0)
        return "HEIF";
    return "ISO media (MP4/QuickTime)";
}

const char *image_sniff_other(const uint8_t *data, size_t len)
{
    if (!data)
        return NULL;
    if (starts_with(data, len, "GIF87a", 6) || starts_with(data, len, "GIF89a", 6))
        return "GIF";
    if (len >= 12 && memcmp(data, "RIFF", 4) == 0 && memcmp(data + 8, "WEBP", 4) == 0)
        return "WebP";
    if (starts_with(data, len, "BM", 2) && len >= 14)
        return "BMP";
    if (starts_with(data, len, "II*\0", 4) || starts_with(data, len, "MM\0*", 4))
        return "TIFF";
    if (starts_with(data, len, "\0\0\0\x0cjP  \r\n\x87\n", 12) || starts_with(data, len, "\xff\x4f\xff\x51", 4))
        return "JPEG 2000";
    if (starts_with(data, len, "\xff\x0a", 2) || starts_with(data, len, "\0\0\0\x0cJXL \r\n\x87\n", 12))
        return "JPEG XL";
    if (starts_with(data, len, "\0\0\1\0", 4))
        return "ICO";
    if (starts_with(data, len, "%PDF", 4))
        return "PDF";
    if (starts_with(data, len, "<svg", 4) || starts_with(data, len, "<?xml", 5))
        return "SVG/XML";
    return sniff_isobmff(data, len);
}

image_status image_check_pixels(const char *fmt_name, uint64_t width, uint64_t height, const decode_opts *opts,
                                char *why, size_t why_len)
{
    uint64_t pixels = width * height; /* both < 2^32: no overflow */
    if (width == 0 || height == 0) {
        image_why(why, why_len, "%s header gives an empty image (%llux%llu)", fmt_name, (unsigned long long)width,
                  (unsigned long long)height);
        return IMAGE_CORRUPT;
    }
    if (opts->max_pixels && pixels > opts->max_pixels) {
        image_why(why, why_len, "%s is %llux%llu = %llu pixels, above the limit of %llu (--max-pixels)", fmt_name,
                  (unsigned long long)width, (unsigned long long)height, (unsigned long long)pixels,
                  (unsigned long long)opts->max_pixels);
        return IMAGE_TOO_LARGE;
    }
    return IMAGE_OK;
}

image_status image_decode_failure(const char *format, int truncated, const char *detail, char *why, size_t why_len)
{
    if (truncated)
        image_why(why, why_len, "truncated %s: the data ends before the image is complete (%s)", format, detail);
    else
        image_why(why, why_len, "corrupt %s (%s)", format, detail);
    return IMAGE_CORRUPT;
}

image_status image_unknown_why(const uint8_t *data, size_t len, char *why, size_t why_len)
{
    const char *other = image_sniff_other(data, len);
    if (len == 0) {
        image_why(why, why_len, "empty file (0 bytes)");
        return IMAGE_CORRUPT;
    }
    if (other) {
        image_why(why, why_len, "%s content, not JPEG/PNG", other);
        return IMAGE_UNSUPPORTED;
    }
    char hex[3 * 8 + 1] = "";
    for (size_t i = 0; i < len && i < 8; i++)
        snprintf(hex + (i ? 3 * i - 1 : 0), sizeof hex - 3 * i, "%s%02x", i ? " " : "", data[i]);
    image_why(why, why_len, "not JPEG/PNG content (unrecognised first bytes: %s)", hex);
    return IMAGE_UNSUPPORTED;
}

image_status image_decode(const uint8_t *data, size_t len, const decode_opts *opts, image_u8 *out, char *why,
                          size_t why_len)
{
    memset(out, 0, sizeof *out);
    if (why && why_len)
        why[0] = '\0';
    if (!opts || (opts->channels != 1 && opts->channels != 3)) {
        image_why(why, why_len, "channels must be 1 or 3");
        return IMAGE_UNSUPPORTED;
    }
    switch (image_sniff(data, len)) {
    case IMAGE_FORMAT_JPEG: return image_decode_jpeg(data, len, opts, out, why, why_len);
    case IMAGE_FORMAT_PNG: return image_decode_png(data, len, opts, out, why, why_len);
    default: return image_unknown_why(data, len, why, why_len);
    }
}

image_status image_read_fd(int fd, size_t size, uint8_t **buf_out, size_t *len_out, char *why, size_t why_len)
{
    uint8_t *buf = malloc(size ? size : 1);
    if (!buf) {
        image_why(why, why_len, "cannot allocate %zu bytes to read the file", size);
        return IMAGE_NOMEM;
    }
    size_t got = 0;
    while (got < size) {
        ssize_t n = pread(fd, buf + got, size - got, (off_t)got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            image_why(why, why_len, "read failed: %s", strerror(errno));
            free(buf);
            return IMAGE_IO;
        }
        if (n == 0)
            break; /* file shrank while reading: decode what is there */
        got += (size_t)n;
    }
    *buf_out = buf;
    *len_out = got;
    return IMAGE_OK;
}

image_status image_load(const char *path, const decode_opts *opts, image_u8 *out, char *why, size_t why_len)
{
    memset(out, 0, sizeof *out);
    uint8_t *buf = NULL;
    size_t len = 0;
    image_status st = IMAGE_IO;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK); /* a FIFO must not block us */
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) != 0) {
        image_why(why, why_len, "cannot open: %s", strerror(errno));
        goto fail;
    }
    if (!S_ISREG(sb.st_mode)) {
        image_why(why, why_len, "not a regular file");
        goto fail;
    }
    uint64_t max_pixels = opts ? opts->max_pixels : 0;
    uint64_t limit = IMAGE_FILE_SLACK_BYTES + 8u * max_pixels;
    if (max_pixels && (uint64_t)sb.st_size > limit) {
        image_why(why, why_len, "file is %lld bytes, more than any image within --max-pixels needs (%llu)",
                  (long long)sb.st_size, (unsigned long long)limit);
        st = IMAGE_TOO_LARGE;
        goto fail;
    }
    st = image_read_fd(fd, (size_t)sb.st_size, &buf, &len, why, why_len);
    if (st != IMAGE_OK)
        goto fail;
    st = image_decode(buf, len, opts, out, why, why_len);
fail:
    if (fd >= 0)
        close(fd);
    free(buf);
    return st;
}

void image_free(image_u8 *img)
{
    if (!img)
        return;
    free(img->pixels);
    memset(img, 0, sizeof *img);
}
