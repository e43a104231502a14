/* decode_png.c - PNG bytes -> RGB or gray pixels with libpng's classic API.
 *
 * - IHDR is read first and width*height checked against max_pixels before any pixel allocation
 *   (libpng's own 1,000,000-pixel width/height limits are lifted so that our limit decides).
 * - Every PNG kind becomes 8-bit: 1/2/4-bit gray expanded to 0..255, palette expanded, 16-bit reduced
 *   to its high byte (what PIL does for 16-bit RGB), interlaced images de-interlaced.
 * - Alpha (an alpha channel or tRNS transparency) is dropped by default, as PIL's convert('RGB') and
 *   convert('L') drop it (torchvision's loader), or composited on black or white (opts->alpha, --alpha).
 * - Colour to gray (channels 1) uses PIL's convert('L') weights; gAMA/iCCP are ignored, as PIL does.
 * - A bad CRC in any chunk before the image data (ancillary ones too: PIL refuses those files), a damaged
 *   zlib stream or data that ends early is IMAGE_CORRUPT with libpng's message. Chunks after the image
 *   data (IEND included) are not read, as PIL does not check them: the pixels are complete and checked
 *   when the last row is decoded. Other warnings (an ancillary chunk libpng finds invalid and drops) are
 *   ignored. */
#include "image_internal.h"

#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct png_job {
    png_structp png;
    png_infop info;
    const uint8_t *data;
    size_t len, pos;
    int ran_out;            /* the reader asked for bytes past the end */
    char msg[200];          /* libpng's error message */
    const decode_opts *opts;
    image_status st;        /* our own failure (too large, no memory) before libpng's */
    char *why;
    size_t why_len;
    uint8_t *pixels;
    png_bytep *rows;
    uint32_t width, height, src_channels;
} png_job;

static void on_png_error(png_structp png, png_const_charp msg)
{
    png_job *job = png_get_error_ptr(png);
    snprintf(job->msg, sizeof job->msg, "%s", msg ? msg : "unknown libpng error");
    png_longjmp(png, 1);
}

static void on_png_warning(png_structp png, png_const_charp msg)
{
    (void)png; /* ancillary-chunk problems: libpng recovers, as PIL does */
    (void)msg;
}

static void read_from_memory(png_structp png, png_bytep dst, size_t n)
{
    png_job *job = png_get_io_ptr(png);
    if (n > job->len - job->pos) {
        job->ran_out = 1;
        png_error(png, "unexpected end of data");
    }
    memcpy(dst, job->data + job->pos, n);
    job->pos += n;
}

/* 8-bit output with gray kept gray unless RGB is wanted; alpha kept for image_png_to_channels (--alpha). */
static void set_transforms(png_job *job, int bit_depth, int color_type)
{
    png_structp png = job->png;
    if (bit_depth == 16)
        png_set_strip_16(png);
    if (color_type == PNG_COLOR_TYPE_PALETTE)
        png_set_palette_to_rgb(png);
    if (color_type == PNG_COLOR_TYPE_GRAY && bit_depth < 8)
        png_set_expand_gray_1_2_4_to_8(png);
    if (png_get_valid(png, job->info, PNG_INFO_tRNS))
        png_set_tRNS_to_alpha(png);
    if (job->opts->channels == 3 && !(color_type & PNG_COLOR_MASK_COLOR))
        png_set_gray_to_rgb(png);
    png_set_interlace_handling(png);
    png_read_update_info(png, job->info);
}

static image_status allocate_rows(png_job *job)
{
    size_t rowbytes = png_get_rowbytes(job->png, job->info);
    job->src_channels = png_get_channels(job->png, job->info);
    if (rowbytes != (size_t)job->width * job->src_channels) {
        image_why(job->why, job->why_len, "unexpected PNG row size %zu for width %u", rowbytes, job->width);
        return IMAGE_CORRUPT;
    }
    job->pixels = malloc(rowbytes * job->height);
    job->rows = malloc(sizeof *job->rows * job->height);
    if (!job->pixels || !job->rows) {
        image_why(job->why, job->why_len, "cannot allocate %ux%u PNG pixels", job->width, job->height);
        return IMAGE_NOMEM;
    }
    for (uint32_t y = 0; y < job->height; y++)
        job->rows[y] = job->pixels + (size_t)y * rowbytes;
    return IMAGE_OK;
}

/* Runs libpng up to the last row; libpng errors come back here through longjmp. */
static image_status run_libpng(png_job *job)
{
    if (setjmp(png_jmpbuf(job->png)))
        return IMAGE_CORRUPT; /* job->msg holds libpng's message */
    png_set_read_fn(job->png, job, read_from_memory);
    image_png_setup(job->png);
    png_read_info(job->png, job->info);
    png_uint_32 w = 0, h = 0;
    int bit_depth = 0, color_type = 0;
    png_get_IHDR(job->png, job->info, &w, &h, &bit_depth, &color_type, NULL, NULL, NULL);
    job->st = image_check_pixels("PNG", w, h, job->opts, job->why, job->why_len);
    if (job->st != IMAGE_OK)
        return job->st;
    job->width = w;
    job->height = h;
    set_transforms(job, bit_depth, color_type);
    if ((job->st = allocate_rows(job)) != IMAGE_OK)
        return job->st;
    png_read_image(job->png, job->rows);
    return IMAGE_OK;
}

/* One colour sample C of alpha A as MODE says: kept (PIL's convert drops alpha), or composited on black or
 * white; both are c*a/255 + bg*(255-a)/255 rounded to nearest, Image.alpha_composite's result exactly. */
static inline uint8_t alpha_sample(uint8_t c, uint8_t a, image_alpha mode)
{
    if (mode == IMAGE_ALPHA_BLACK)
        return image_muldiv255(c, a);
    if (mode == IMAGE_ALPHA_WHITE)
        return (uint8_t)(255u - image_muldiv255(255u - c, a));
    return c;
}

/* In place: SRC_CHANNELS (1..4, alpha last when 2 or 4) -> CHANNELS (1 or 3), alpha handled as MODE says. */
void image_png_to_channels(uint8_t *px, size_t npix, uint32_t src_channels, uint32_t channels, image_alpha mode)
{
    int alpha = src_channels == 2 || src_channels == 4;
    uint32_t color = alpha ? src_channels - 1 : src_channels;
    for (size_t i = 0; i < npix; i++) {
        const uint8_t *s = px + i * src_channels; /* reads stay ahead of writes */
        uint8_t c[3];
        for (uint32_t k = 0; k < color; k++)
            c[k] = alpha ? alpha_sample(s[k], s[color], mode) : s[k];
        if (channels == 1)
            px[i] = color == 3 ? image_rgb_to_luma(c[0], c[1], c[2]) : c[0];
        else
            memcpy(px + 3 * i, c, 3); /* color == 3 here: gray was expanded by libpng */
    }
}

void image_png_setup(png_structp png)
{
    png_set_user_limits(png, 0x7fffffffu, 0x7fffffffu);
    /* A bad CRC in an ancillary chunk is an error, not a warning that drops the chunk: PIL refuses such a
     * file ("broken PNG file (bad header checksum in b'tEXt')"), so torchvision never trains on it. */
    png_set_crc_action(png, PNG_CRC_DEFAULT, PNG_CRC_ERROR_QUIT);
}

static image_status libpng_failure(const png_job *job, char *why, size_t why_len)
{
    return image_decode_failure("PNG", job->ran_out, job->msg, why, why_len);
}

image_status image_decode_png(const uint8_t *data, size_t len, const decode_opts *opts, image_u8 *out, char *why,
                              size_t why_len)
{
    png_job job = {.data = data, .len = len, .opts = opts, .st = IMAGE_OK, .why = why, .why_len = why_len};
    image_status st = IMAGE_NOMEM;
    job.png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &job, on_png_error, on_png_warning);
    job.info = job.png ? png_create_info_struct(job.png) : NULL;
    if (!job.info) {
        image_why(why, why_len, "cannot create a libpng reader");
        goto fail;
    }
    st = run_libpng(&job);
    if (st != IMAGE_OK) {
        if (job.st == IMAGE_OK)
            st = libpng_failure(&job, why, why_len);
        goto fail;
    }
    image_png_to_channels(job.pixels, (size_t)job.width * job.height, job.src_channels, opts->channels, opts->alpha);
    out->pixels = job.pixels;
    out->width = job.width;
    out->height = job.height;
    out->channels = opts->channels;
    job.pixels = NULL;
fail:
    free(job.pixels);
    free(job.rows);
    png_destroy_read_struct(job.png ? &job.png : NULL, job.info ? &job.info : NULL, NULL);
    return st;
}
