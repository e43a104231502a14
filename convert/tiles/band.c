/* band.c - opening an image for band decoding: sniff the format, hand over to its reader (band.h). */
#include "band.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "image_internal.h"

struct band_reader {
    FILE *f;
    void *state;
    const band_ops *ops;
};

image_status band_open(const char *path, const decode_opts *opts, band_reader **out, uint32_t *h, uint32_t *w,
                       char *why, size_t why_len)
{
    *out = NULL;
    band_reader *b = calloc(1, sizeof *b);
    if (!b)
        return IMAGE_NOMEM;
    if (!(b->f = fopen(path, "rb"))) {
        image_why(why, why_len, "cannot open: %s", strerror(errno));
        free(b);
        return IMAGE_IO;
    }
    uint8_t magic[16];
    size_t n = fread(magic, 1, sizeof magic, b->f);
    rewind(b->f);
    image_status st = IMAGE_UNSUPPORTED;
    switch (image_sniff(magic, n)) {
    case IMAGE_FORMAT_JPEG: st = band_open_jpeg(b->f, opts, &b->state, &b->ops, h, w, why, why_len); break;
    case IMAGE_FORMAT_PNG: st = band_open_png(b->f, opts, &b->state, &b->ops, h, w, why, why_len); break;
    default: st = image_unknown_why(magic, n, why, why_len);
    }
    if (st != IMAGE_OK) {
        fclose(b->f);
        free(b);
        return st;
    }
    *out = b;
    return IMAGE_OK;
}

image_status band_read(band_reader *b, uint8_t *dst, uint32_t rows, char *why, size_t why_len)
{
    return b->ops->read(b->state, dst, rows, why, why_len);
}

void band_close(band_reader *b)
{
    if (!b)
        return;
    b->ops->close(b->state);
    fclose(b->f);
    free(b);
}
