/* mask_png.c - mask PNGs with libpng's classic API: the header (mask_probe) and the values (mask_load).
 *
 * The values are those of np.asarray(PIL.Image.open(f)): 8-bit gray as written, 16-bit gray as written
 * (PIL's mode "I"), palette PNGs their indices (the palette and any tRNS are ignored), 2- and 4-bit gray
 * scaled to 0..255 as PIL scales them (x85, x17), 1-bit gray 0 or 1 (PIL's mode "1", read as bool).
 * Colour (RGB, RGBA) and gray+alpha PNGs are refused: a mask holds one value per pixel. */
#include "mask.h"

#include <errno.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "image_internal.h"

typedef struct mask_job {
    png_structp png;
    png_infop info;
    FILE *f;
    char msg[200];     /* libpng's error message */
    uint16_t *values;  /* the result */
    uint8_t *row;      /* one row as libpng gives it */
    png_bytep *rows;   /* interlaced masks: every row at once */
    uint8_t *pixels;
} mask_job;

static void on_error(png_structp png, png_const_charp msg)
{
    mask_job *job = png_get_error_ptr(png);
    snprintf(job->msg, sizeof job->msg, "%s", msg ? msg : "unknown libpng error");
    png_longjmp(png, 1);
}

static void on_warning(png_structp png, png_const_charp msg)
{
    (void)png, (void)msg; /* ancillary-chunk problems: libpng recovers, as PIL does */
}

/* Opens PATH and a libpng reader on it. 0, or -1 with WHY. */
static int job_open(mask_job *job, const char *path, char *why, size_t why_len)
{
    uint8_t sig[8];
    memset(job, 0, sizeof *job);
    if (!(job->f = fopen(path, "rb"))) {
        snprintf(why, why_len, "cannot read it: %s", strerror(errno));
        return -1;
    }
    size_t got = fread(sig, 1, sizeof sig, job->f);
    if (got < sizeof sig || png_sig_cmp(sig, 0, sizeof sig) != 0) {
        snprintf(why, why_len, "not a PNG file: masks are PNG files of 8- or 16-bit gray or palette indices "
                 "(values up to 65535; values beyond 16 bits cannot be stored: map them to class indices first)");
        return -1;
    }
    job->png = png_create_read_struct(PNG_LIBPNG_VER_STRING, job, on_error, on_warning);
    job->info = job->png ? png_create_info_struct(job->png) : NULL;
    if (!job->info) {
        snprintf(why, why_len, "cannot create a libpng reader");
        return -1;
    }
    return 0;
}

static void job_close(mask_job *job)
{
    png_destroy_read_struct(job->png ? &job->png : NULL, job->info ? &job->info : NULL, NULL);
    if (job->f)
        fclose(job->f);
    free(job->row);
    free(job->rows);
    free(job->pixels);
}

/* Why a PNG of COLOR_TYPE cannot be a mask, or NULL when it can. */
static const char *refused_kind(int color_type)
{
    switch (color_type) {
    case PNG_COLOR_TYPE_RGB:
    case PNG_COLOR_TYPE_RGB_ALPHA:
        return "an RGB PNG: a mask holds one value per pixel (a class index); convert it to gray with PIL's "
               "Image.open(f).convert('L').save(f), or map its colours to class indices (e.g. numpy: index = "
               "lut[r, g, b]) and save them as mode 'L' or as a palette PNG";
    case PNG_COLOR_TYPE_GRAY_ALPHA:
        return "a gray+alpha PNG: a mask holds one value per pixel; drop the alpha with PIL's "
               "Image.open(f).convert('L').save(f)";
    default:
        return NULL;
    }
}

/* The header, checked: *BYTES per stored value. Called under the job's setjmp. */
static int read_header(mask_job *job, uint32_t *bytes, png_uint_32 *w, png_uint_32 *h, char *why, size_t why_len)
{
    int bit_depth = 0, color_type = 0;
    png_init_io(job->png, job->f);
    png_set_sig_bytes(job->png, 8);
    image_png_setup(job->png);
    png_read_info(job->png, job->info);
    png_get_IHDR(job->png, job->info, w, h, &bit_depth, &color_type, NULL, NULL, NULL);
    const char *refused = refused_kind(color_type);
    if (refused) {
        snprintf(why, why_len, "%s", refused);
        return -1;
    }
    *bytes = bit_depth == 16 ? 2 : 1;
    return 0;
}

/* The header under the job's setjmp: 0, or -1 with WHY. */
static int probe_guarded(mask_job *job, uint32_t *bytes, char *why, size_t why_len)
{
    png_uint_32 w = 0, h = 0;
    if (setjmp(png_jmpbuf(job->png))) {
        snprintf(why, why_len, "corrupt PNG: %s", job->msg);
        return -1;
    }
    return read_header(job, bytes, &w, &h, why, why_len);
}

int mask_probe(const char *path, uint32_t *bytes, char *why, size_t why_len)
{
    mask_job job;
    int rc = job_open(&job, path, why, why_len) == 0 ? probe_guarded(&job, bytes, why, why_len) : -1;
    job_close(&job);
    return rc;
}

/* libpng's row of WIDTH samples (8 bits each, or 16 big-endian) into VALUES; 1-bit gray's 255 is 1. */
static void widen_row(const uint8_t *row, uint32_t width, int bit_depth, int color_type, uint16_t *values)
{
    for (uint32_t x = 0; x < width; x++) {
        if (bit_depth == 16)
            values[x] = (uint16_t)(row[2 * x] << 8 | row[2 * x + 1]);
        else if (bit_depth == 1 && color_type == PNG_COLOR_TYPE_GRAY)
            values[x] = row[x] ? 1 : 0;
        else
            values[x] = row[x];
    }
}

/* Decodes the rows after the header (under the job's setjmp). */
static image_status read_values(mask_job *job, uint64_t max_pixels, mask_image *out, char *why, size_t why_len)
{
    uint32_t bytes = 0;
    png_uint_32 w = 0, h = 0;
    if (read_header(job, &bytes, &w, &h, why, why_len) != 0)
        return IMAGE_UNSUPPORTED;
    decode_opts limit = {.max_pixels = max_pixels};
    image_status st = image_check_pixels("PNG", w, h, &limit, why, why_len);
    if (st != IMAGE_OK)
        return st;
    int bit_depth = png_get_bit_depth(job->png, job->info), color_type = png_get_color_type(job->png, job->info);
    if (color_type == PNG_COLOR_TYPE_PALETTE)
        png_set_packing(job->png); /* indices, one per byte */
    else if (bit_depth < 8)
        png_set_expand_gray_1_2_4_to_8(job->png); /* scaled to 0..255, as PIL's L;2 and L;4 */
    int passes = png_set_interlace_handling(job->png);
    png_read_update_info(job->png, job->info);
    size_t rowbytes = png_get_rowbytes(job->png, job->info);
    job->values = malloc((size_t)w * h * sizeof *job->values);
    job->pixels = passes > 1 ? malloc(rowbytes * h) : NULL;
    job->rows = passes > 1 ? malloc(h * sizeof *job->rows) : NULL;
    job->row = passes > 1 ? NULL : malloc(rowbytes);
    if (!job->values || (passes > 1 ? !job->pixels || !job->rows : !job->row)) {
        snprintf(why, why_len, "cannot allocate a %ux%u mask", (unsigned)h, (unsigned)w);
        return IMAGE_NOMEM;
    }
    for (uint32_t y = 0; passes > 1 && y < h; y++)
        job->rows[y] = job->pixels + (size_t)y * rowbytes;
    if (passes > 1)
        png_read_image(job->png, job->rows);
    for (uint32_t y = 0; y < h; y++) {
        if (passes == 1)
            png_read_row(job->png, job->row, NULL);
        widen_row(passes > 1 ? job->rows[y] : job->row, w, bit_depth, color_type, job->values + (size_t)y * w);
    }
    out->values = job->values, out->width = w, out->height = h;
    job->values = NULL;
    return IMAGE_OK;
}

/* The values under the job's setjmp. */
static image_status load_guarded(mask_job *job, uint64_t max_pixels, mask_image *out, char *why, size_t why_len)
{
    if (setjmp(png_jmpbuf(job->png))) {
        snprintf(why, why_len, "corrupt PNG: %s", job->msg);
        return IMAGE_CORRUPT;
    }
    return read_values(job, max_pixels, out, why, why_len);
}

image_status mask_load(const char *path, uint64_t max_pixels, mask_image *out, char *why, size_t why_len)
{
    mask_job job;
    memset(out, 0, sizeof *out);
    image_status st = IMAGE_UNSUPPORTED;
    if (job_open(&job, path, why, why_len) == 0)
        st = load_guarded(&job, max_pixels, out, why, why_len);
    free(job.values);
    job_close(&job);
    return st;
}

void mask_free(mask_image *m)
{
    free(m->values);
    memset(m, 0, sizeof *m);
}
