/* band_png.c - PNG rows through libpng's row API (band.h), with decode_png.c's transforms: 8-bit,
 * palette and gray expanded, tRNS as alpha, alpha dropped or composited as --alpha says
 * (image_png_to_channels), so the rows are the pixels image_decode_png and PIL give. An interlaced PNG
 * delivers its rows only after its last pass: it is decoded whole when that fits BAND_PNG_WHOLE_BYTES,
 * and refused above. */
#include <png.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "band.h"
#include "image_internal.h"

#define BAND_PNG_WHOLE_BYTES ((size_t)512 << 20)

typedef struct png_band {
    FILE *f;        /* at its end after a failure: the file is truncated */
    png_structp png;
    png_infop info;
    char msg[200];
    uint32_t width, height, next_row, src_channels, channels;
    image_alpha alpha;
    uint8_t *row;   /* one row as libpng gives it */
    uint8_t *whole; /* interlaced: every row (src_channels bytes a pixel) */
} png_band;

static void on_png_error(png_structp png, png_const_charp msg)
{
    png_band *b = png_get_error_ptr(png);
    snprintf(b->msg, sizeof b->msg, "%s", msg);
    png_longjmp(png, 1);
}

static void on_png_warning(png_structp png, png_const_charp msg)
{
    (void)png, (void)msg; /* a bad ancillary chunk is dropped by libpng, as image_decode_png ignores it */
}

static image_status png_read_band(void *state, uint8_t *dst, uint32_t rows, char *why, size_t why_len)
{
    png_band *b = state;
    size_t src_row = (size_t)b->width * b->src_channels, out_row = (size_t)b->width * b->channels;
    if (setjmp(png_jmpbuf(b->png))) {
        char at[256];
        snprintf(at, sizeof at, "row %u: %s", b->next_row, b->msg);
        return image_decode_failure("PNG", feof(b->f), at, why, why_len); /* at its end: truncated */
    }
    for (uint32_t r = 0; r < rows; r++, b->next_row++) {
        if (b->whole)
            memcpy(b->row, b->whole + (size_t)b->next_row * src_row, src_row);
        else
            png_read_row(b->png, b->row, NULL);
        image_png_to_channels(b->row, b->width, b->src_channels, b->channels, b->alpha);
        memcpy(dst + (size_t)r * out_row, b->row, out_row);
    }
    return IMAGE_OK;
}

static void png_close_band(void *state)
{
    png_band *b = state;
    png_destroy_read_struct(&b->png, &b->info, NULL);
    free(b->row);
    free(b->whole);
    free(b);
}

static const band_ops png_ops = {png_read_band, png_close_band};

/* decode_png.c's transforms for 8-bit output (and gray kept gray unless RGB is wanted). */
static void set_transforms(png_band *b, int bit_depth, int color_type)
{
    if (bit_depth == 16)
        png_set_strip_16(b->png);
    if (color_type == PNG_COLOR_TYPE_PALETTE)
        png_set_palette_to_rgb(b->png);
    if (color_type == PNG_COLOR_TYPE_GRAY && bit_depth < 8)
        png_set_expand_gray_1_2_4_to_8(b->png);
    if (png_get_valid(b->png, b->info, PNG_INFO_tRNS))
        png_set_tRNS_to_alpha(b->png);
    if (b->channels == 3 && !(color_type & PNG_COLOR_MASK_COLOR))
        png_set_gray_to_rgb(b->png);
}

/* The rows' buffers; an interlaced image is read whole here (bounded by BAND_PNG_WHOLE_BYTES). */
static image_status prepare_rows(png_band *b, int interlaced, char *why, size_t why_len)
{
    size_t rowbytes = png_get_rowbytes(b->png, b->info);
    b->src_channels = png_get_channels(b->png, b->info);
    if (rowbytes != (size_t)b->width * b->src_channels) {
        image_why(why, why_len, "unexpected PNG row size %zu for width %u", rowbytes, b->width);
        return IMAGE_CORRUPT;
    }
    size_t row_alloc = (size_t)b->width * (b->src_channels > 3 ? b->src_channels : 3);
    if (!(b->row = malloc(row_alloc)))
        return IMAGE_NOMEM;
    if (!interlaced)
        return IMAGE_OK;
    if (rowbytes > BAND_PNG_WHOLE_BYTES / b->height) {
        image_why(why, why_len, "interlaced PNG of %ux%u: its rows come only after its last pass, and the whole "
                  "image (%zu MiB) is more than %zu MiB", b->width, b->height, rowbytes * b->height >> 20,
                  BAND_PNG_WHOLE_BYTES >> 20);
        return IMAGE_TOO_LARGE;
    }
    png_bytep *rows = malloc(b->height * sizeof *rows);
    if (!rows || !(b->whole = malloc(rowbytes * b->height))) {
        free(rows);
        return IMAGE_NOMEM;
    }
    for (uint32_t y = 0; y < b->height; y++)
        rows[y] = b->whole + (size_t)y * rowbytes;
    png_read_image(b->png, rows); /* errors longjmp to the caller's setjmp; ROWS is lost then (rare) */
    free(rows);
    return IMAGE_OK;
}

image_status band_open_png(FILE *f, const decode_opts *opts, void **state, const band_ops **ops, uint32_t *h,
                           uint32_t *w, char *why, size_t why_len)
{
    png_band *b = calloc(1, sizeof *b);
    if (!b)
        return IMAGE_NOMEM;
    b->channels = opts->channels, b->alpha = opts->alpha, b->f = f;
    b->png = png_create_read_struct(PNG_LIBPNG_VER_STRING, b, on_png_error, on_png_warning);
    b->info = b->png ? png_create_info_struct(b->png) : NULL;
    if (!b->png || !b->info) {
        png_close_band(b);
        return IMAGE_NOMEM;
    }
    if (setjmp(png_jmpbuf(b->png))) {
        image_status st = image_decode_failure("PNG", feof(f), b->msg, why, why_len);
        png_close_band(b);
        return st;
    }
    png_init_io(b->png, f);
    image_png_setup(b->png);
    png_read_info(b->png, b->info);
    png_uint_32 pw = 0, ph = 0;
    int bit_depth = 0, color_type = 0, interlace = 0;
    png_get_IHDR(b->png, b->info, &pw, &ph, &bit_depth, &color_type, &interlace, NULL, NULL);
    image_status st = image_check_pixels("PNG", pw, ph, opts, why, why_len);
    if (st == IMAGE_OK) {
        b->width = pw, b->height = ph;
        set_transforms(b, bit_depth, color_type);
        if (interlace != PNG_INTERLACE_NONE)
            png_set_interlace_handling(b->png);
        png_read_update_info(b->png, b->info);
        st = prepare_rows(b, interlace != PNG_INTERLACE_NONE, why, why_len);
    }
    if (st != IMAGE_OK) {
        png_close_band(b);
        return st;
    }
    *h = b->height, *w = b->width;
    *state = b, *ops = &png_ops;
    return IMAGE_OK;
}
