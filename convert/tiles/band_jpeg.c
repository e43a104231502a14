/* band_jpeg.c - JPEG rows through libjpeg's scanline API (band.h).
 *
 * libjpeg-turbo's defaults are TurboJPEG's defaults (accurate integer IDCT, fancy upsampling), so the
 * rows are the pixels image_decode_jpeg (tjDecompress2) and PIL give. CMYK/YCCK is read as CMYK and
 * converted as there. A baseline JPEG streams: memory is a few rows of MCUs. A progressive one keeps its
 * whole coefficient array (2 bytes per sample); libjpeg may allocate up to BAND_JPEG_MEMORY for it, and a
 * larger one fails with libjpeg's "insufficient memory" and is skipped with that reason. */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>

#include "band.h"
#include "image_internal.h"

#define BAND_JPEG_MEMORY ((long)512 << 20)

typedef struct jpeg_error {
    struct jpeg_error_mgr mgr;
    jmp_buf jump;
    char msg[JMSG_LENGTH_MAX];
    int warning; /* the jump came from a warning that is not harmless (a truncated file, ...) */
} jpeg_error;

typedef struct jpeg_band {
    struct jpeg_decompress_struct cinfo;
    jpeg_error err;
    uint32_t channels, out_components;
    uint8_t *row; /* one decoded row (CMYK needs 4 bytes a pixel before its conversion) */
} jpeg_band;

static void on_jpeg_error(j_common_ptr cinfo)
{
    jpeg_error *e = (jpeg_error *)cinfo->err;
    (*cinfo->err->format_message)(cinfo, e->msg);
    longjmp(e->jump, 1);
}

/* Warnings: harmless ones (extraneous bytes, ...) are ignored, as image_decode_jpeg does; the others (a
 * file that ends early, which libjpeg would fill with gray) end the decode. */
static void on_jpeg_message(j_common_ptr cinfo)
{
    jpeg_error *e = (jpeg_error *)cinfo->err;
    char msg[JMSG_LENGTH_MAX];
    (*cinfo->err->format_message)(cinfo, msg);
    if (image_jpeg_message_status(msg, 1, "data", NULL, 0) == IMAGE_OK)
        return;
    memcpy(e->msg, msg, sizeof msg);
    e->warning = 1;
    longjmp(e->jump, 1);
}

/* The status and reason of the jump just taken. */
static image_status jumped(const jpeg_error *e, const char *stage, char *why, size_t why_len)
{
    if (strstr(e->msg, "nsufficient memory")) {
        image_why(why, why_len, "JPEG too large to decode in bands (a progressive JPEG keeps all its "
                  "coefficients; at most %ld MiB): %s", BAND_JPEG_MEMORY >> 20, e->msg);
        return IMAGE_TOO_LARGE;
    }
    return image_jpeg_message_status(e->msg, e->warning, stage, why, why_len);
}

static image_status jpeg_read_band(void *state, uint8_t *dst, uint32_t rows, char *why, size_t why_len)
{
    jpeg_band *j = state;
    size_t w = j->cinfo.output_width;
    if (setjmp(j->err.jump))
        return jumped(&j->err, "data", why, why_len);
    for (uint32_t r = 0; r < rows; r++) {
        uint8_t *out = dst + (size_t)r * w * j->channels;
        JSAMPROW line = j->out_components == j->channels ? out : j->row;
        if (jpeg_read_scanlines(&j->cinfo, &line, 1) != 1) {
            char at[64];
            snprintf(at, sizeof at, "row %u of %u", j->cinfo.output_scanline, j->cinfo.output_height);
            return image_decode_failure("JPEG", 1, at, why, why_len);
        }
        if (line == j->row) { /* CMYK -> RGB or gray, as image_decode_jpeg */
            image_cmyk_to_channels(j->row, w, j->channels);
            memcpy(out, j->row, w * j->channels);
        }
    }
    return IMAGE_OK;
}

static void jpeg_close_band(void *state)
{
    jpeg_band *j = state;
    jpeg_destroy_decompress(&j->cinfo);
    free(j->row);
    free(j);
}

static const band_ops jpeg_ops = {jpeg_read_band, jpeg_close_band};

/* After the header: output colour space and the checks, then the decompressor started. */
static image_status start(jpeg_band *j, const decode_opts *opts, char *why, size_t why_len)
{
    struct jpeg_decompress_struct *c = &j->cinfo;
    int cmyk = c->jpeg_color_space == JCS_CMYK || c->jpeg_color_space == JCS_YCCK;
    c->out_color_space = cmyk ? JCS_CMYK : opts->channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
    c->mem->max_memory_to_use = BAND_JPEG_MEMORY;
    image_status st = image_check_pixels("JPEG", c->image_width, c->image_height, opts, why, why_len);
    if (st != IMAGE_OK)
        return st;
    jpeg_start_decompress(c);
    j->out_components = (uint32_t)c->output_components;
    j->channels = opts->channels;
    if (!(j->row = malloc((size_t)c->output_width * j->out_components))) {
        image_why(why, why_len, "cannot allocate a JPEG row of %u pixels", c->output_width);
        return IMAGE_NOMEM;
    }
    return IMAGE_OK;
}

image_status band_open_jpeg(FILE *f, const decode_opts *opts, void **state, const band_ops **ops, uint32_t *h,
                            uint32_t *w, char *why, size_t why_len)
{
    jpeg_band *j = calloc(1, sizeof *j);
    if (!j)
        return IMAGE_NOMEM;
    j->cinfo.err = jpeg_std_error(&j->err.mgr);
    j->err.mgr.error_exit = on_jpeg_error;
    j->err.mgr.output_message = on_jpeg_message;
    if (setjmp(j->err.jump)) {
        image_status st = jumped(&j->err, "header", why, why_len);
        jpeg_close_band(j);
        return st;
    }
    jpeg_create_decompress(&j->cinfo);
    jpeg_stdio_src(&j->cinfo, f);
    jpeg_read_header(&j->cinfo, TRUE);
    image_status st = start(j, opts, why, why_len);
    if (st != IMAGE_OK) {
        jpeg_close_band(j);
        return st;
    }
    *h = j->cinfo.output_height, *w = j->cinfo.output_width;
    *state = j, *ops = &jpeg_ops;
    return IMAGE_OK;
}
