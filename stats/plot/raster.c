/* raster.c - the RGB rasteriser and PNG writer of h5pack-stats' plots (see raster.h). */
#include <errno.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "raster.h"

int plot_canvas_init(plot_canvas *c, int w, int h)
{
    c->w = w, c->h = h;
    c->rgb = malloc((size_t)w * (size_t)h * 3);
    if (!c->rgb)
        return -1;
    memset(c->rgb, 0xff, (size_t)w * (size_t)h * 3);
    return 0;
}

void plot_canvas_free(plot_canvas *c)
{
    free(c->rgb);
    c->rgb = NULL;
}

unsigned plot_canvas_get(const plot_canvas *c, int x, int y)
{
    if (x < 0 || y < 0 || x >= c->w || y >= c->h)
        return 0;
    const uint8_t *p = c->rgb + 3 * ((size_t)y * (size_t)c->w + (size_t)x);
    return (unsigned)p[0] << 16 | (unsigned)p[1] << 8 | p[2];
}

static void put(plot_canvas *c, int x, int y, unsigned color)
{
    if (x < 0 || y < 0 || x >= c->w || y >= c->h)
        return;
    uint8_t *p = c->rgb + 3 * ((size_t)y * (size_t)c->w + (size_t)x);
    p[0] = (uint8_t)(color >> 16), p[1] = (uint8_t)(color >> 8), p[2] = (uint8_t)color;
}

void plot_fill_rect(plot_canvas *c, int x, int y, int w, int h, unsigned color)
{
    for (int j = y; j < y + h; j++)
        for (int i = x; i < x + w; i++)
            put(c, i, j, color);
}

void plot_fill_disc(plot_canvas *c, int cx, int cy, int r, unsigned color)
{
    for (int j = -r; j <= r; j++)
        for (int i = -r; i <= r; i++)
            if (i * i + j * j <= r * r + r) /* + r: rounder small discs */
                put(c, cx + i, cy + j, color);
}

/* Bresenham, stamping a THICK square per step. */
void plot_draw_line(plot_canvas *c, int x0, int y0, int x1, int y1, unsigned color, int thick, int dash)
{
    int dx = abs(x1 - x0), sx = x0 < x1 ? 1 : -1, dy = -abs(y1 - y0), sy = y0 < y1 ? 1 : -1, err = dx + dy;
    for (int step = 0;; step++) {
        if (dash <= 0 || step % (dash + dash / 2) < dash)
            plot_fill_rect(c, x0 - thick / 2, y0 - thick / 2, thick, thick, color);
        if (x0 == x1 && y0 == y1)
            break;
        int e2 = 2 * err;
        if (e2 >= dy)
            err += dy, x0 += sx;
        if (e2 <= dx)
            err += dx, y0 += sy;
    }
}

/* 5x7 glyphs, one byte per row (bit 4 = leftmost column). */
typedef struct glyph {
    char ch;
    uint8_t rows[7];
} glyph;

static const glyph font[] = {
    {'0', {14, 17, 19, 21, 25, 17, 14}}, {'1', {4, 12, 4, 4, 4, 4, 14}},    {'2', {14, 17, 1, 2, 4, 8, 31}},
    {'3', {31, 2, 4, 2, 1, 17, 14}},     {'4', {2, 6, 10, 18, 31, 2, 2}},   {'5', {31, 16, 30, 1, 1, 17, 14}},
    {'6', {6, 8, 16, 30, 17, 17, 14}},   {'7', {31, 1, 2, 4, 8, 8, 8}},     {'8', {14, 17, 17, 14, 17, 17, 14}},
    {'9', {14, 17, 17, 15, 1, 2, 12}},   {'a', {0, 0, 14, 1, 15, 17, 15}},  {'b', {16, 16, 22, 25, 17, 17, 30}},
    {'c', {0, 0, 14, 16, 16, 17, 14}},   {'d', {1, 1, 13, 19, 17, 17, 15}}, {'e', {0, 0, 14, 17, 31, 16, 14}},
    {'f', {6, 9, 8, 28, 8, 8, 8}},       {'g', {0, 15, 17, 17, 15, 1, 14}}, {'h', {16, 16, 22, 25, 17, 17, 17}},
    {'i', {4, 0, 12, 4, 4, 4, 14}},      {'j', {2, 0, 6, 2, 2, 18, 12}},    {'k', {16, 16, 18, 20, 24, 20, 18}},
    {'l', {12, 4, 4, 4, 4, 4, 14}},      {'m', {0, 0, 26, 21, 21, 17, 17}}, {'n', {0, 0, 22, 25, 17, 17, 17}},
    {'o', {0, 0, 14, 17, 17, 17, 14}},   {'p', {0, 0, 30, 17, 30, 16, 16}}, {'q', {0, 0, 13, 19, 15, 1, 1}},
    {'r', {0, 0, 22, 25, 16, 16, 16}},   {'s', {0, 0, 14, 16, 14, 1, 30}},  {'t', {8, 8, 28, 8, 8, 9, 6}},
    {'u', {0, 0, 17, 17, 17, 19, 13}},   {'v', {0, 0, 17, 17, 17, 10, 4}},  {'w', {0, 0, 17, 17, 21, 21, 10}},
    {'x', {0, 0, 17, 10, 4, 10, 17}},    {'y', {0, 0, 17, 17, 15, 1, 14}},  {'z', {0, 0, 31, 2, 4, 8, 31}},
    {'B', {30, 17, 17, 30, 17, 17, 30}}, {'G', {14, 17, 16, 23, 17, 17, 15}}, {'K', {17, 18, 20, 24, 20, 18, 17}},
    {'M', {17, 27, 21, 21, 17, 17, 17}}, {'T', {31, 4, 4, 4, 4, 4, 4}},     {'P', {30, 17, 17, 30, 16, 16, 16}},
    {'%', {24, 25, 2, 4, 8, 19, 3}},     {'.', {0, 0, 0, 0, 0, 12, 12}},    {'/', {0, 1, 2, 4, 8, 16, 0}},
    {':', {0, 12, 12, 0, 12, 12, 0}},    {'(', {2, 4, 8, 8, 8, 4, 2}},      {')', {8, 4, 2, 2, 2, 4, 8}},
    {'-', {0, 0, 0, 31, 0, 0, 0}},       {'_', {0, 0, 0, 0, 0, 0, 31}},     {',', {0, 0, 0, 0, 12, 4, 8}},
    {'+', {0, 4, 4, 31, 4, 4, 0}},       {'=', {0, 0, 31, 0, 31, 0, 0}},
};

static const glyph *find_glyph(char ch)
{
    for (size_t i = 0; i < sizeof font / sizeof *font; i++)
        if (font[i].ch == ch)
            return &font[i];
    if (ch >= 'A' && ch <= 'Z') /* capitals without a glyph of their own look like small letters */
        return find_glyph((char)(ch - 'A' + 'a'));
    return NULL;
}

int plot_text_width(const char *s, int scale)
{
    size_t n = strlen(s);
    return n ? (int)(6 * n - 1) * scale : 0;
}

int plot_draw_text(plot_canvas *c, int x, int y, const char *s, int scale, unsigned color)
{
    int x0 = x;
    for (; *s; s++, x += 6 * scale) {
        const glyph *g = find_glyph(*s);
        for (int r = 0; g && r < PLOT_GLYPH_ROWS; r++)
            for (int col = 0; col < 5; col++)
                if (g->rows[r] & (16 >> col))
                    plot_fill_rect(c, x + col * scale, y + r * scale, scale, scale, color);
    }
    return x - x0;
}

void plot_draw_text_up(plot_canvas *c, int x, int y, const char *s, int scale, unsigned color)
{
    for (int k = 0; s[k]; k++) {
        const glyph *g = find_glyph(s[k]);
        for (int r = 0; g && r < PLOT_GLYPH_ROWS; r++)
            for (int col = 0; col < 5; col++)
                if (g->rows[r] & (16 >> col)) /* glyph column -> up, glyph row -> right */
                    plot_fill_rect(c, x + r * scale, y - (6 * k + col + 1) * scale, scale, scale, color);
    }
}

int plot_canvas_write_png(const plot_canvas *c, const char *path, char *err, size_t err_len)
{
    FILE *f = fopen(path, "wb");
    if (!f) {
        snprintf(err, err_len, "cannot write %s: %s", path, strerror(errno));
        return -1;
    }
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    volatile int rc = -1; /* survives a longjmp from libpng */
    if (png && info && setjmp(png_jmpbuf(png)) == 0) {
        png_init_io(png, f);
        png_set_IHDR(png, info, (png_uint_32)c->w, (png_uint_32)c->h, 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
                     PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
        png_write_info(png, info);
        for (int y = 0; y < c->h; y++)
            png_write_row(png, c->rgb + 3 * (size_t)y * (size_t)c->w);
        png_write_end(png, NULL);
        rc = 0;
    }
    png_destroy_write_struct(&png, &info);
    if (fclose(f) != 0)
        rc = -1;
    if (rc != 0)
        snprintf(err, err_len, "cannot write %s: PNG encoding or write failed", path);
    return rc;
}
