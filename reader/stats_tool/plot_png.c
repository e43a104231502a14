/* plot_png.c - the hit-rate plot as PNG (see plot.h): a small RGB rasteriser (thick lines, dashes,
 * markers, a 5x7 pixel font scaled 2x) and libpng to encode it. */
#include <errno.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plot.h"
#include "sizes.h"

typedef struct canvas {
    int w, h;
    uint8_t *rgb;
} canvas;

static void put(canvas *c, int x, int y, unsigned color)
{
    if (x < 0 || y < 0 || x >= c->w || y >= c->h)
        return;
    uint8_t *p = c->rgb + 3 * ((size_t)y * (size_t)c->w + (size_t)x);
    p[0] = (uint8_t)(color >> 16), p[1] = (uint8_t)(color >> 8), p[2] = (uint8_t)color;
}

static void fill_rect(canvas *c, int x, int y, int w, int h, unsigned color)
{
    for (int j = y; j < y + h; j++)
        for (int i = x; i < x + w; i++)
            put(c, i, j, color);
}

/* Bresenham, stamping a THICK square per step; DASH > 0 draws DASH steps on, DASH/2 off. */
static void line(canvas *c, int x0, int y0, int x1, int y1, unsigned color, int thick, int dash)
{
    int dx = abs(x1 - x0), sx = x0 < x1 ? 1 : -1, dy = -abs(y1 - y0), sy = y0 < y1 ? 1 : -1, err = dx + dy;
    for (int step = 0;; step++) {
        if (dash <= 0 || step % (dash + dash / 2) < dash)
            fill_rect(c, x0 - thick / 2, y0 - thick / 2, thick, thick, color);
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

/* Text at (x, y) = top left, glyph cells of 6x8 pixels scaled by S. Returns the width drawn. */
static int text(canvas *c, int x, int y, const char *s, int scale, unsigned color)
{
    int x0 = x;
    for (; *s; s++, x += 6 * scale) {
        const glyph *g = find_glyph(*s);
        for (int r = 0; g && r < 7; r++)
            for (int col = 0; col < 5; col++)
                if (g->rows[r] & (16 >> col))
                    fill_rect(c, x + col * scale, y + r * scale, scale, scale, color);
    }
    return x - x0;
}

static void draw_axes(canvas *c, const plot_frame *fr, const plot_series *s, int n)
{
    int x0 = fr->left, x1 = fr->width - fr->right, y0 = fr->top, y1 = fr->height - fr->bottom;
    for (int t = 0; t <= 10; t += 2) {
        int y = (int)(plot_py(fr, t / 10.0) + 0.5);
        line(c, x0, y, x1, y, 0xdddddd, 1, 0);
        char lbl[8];
        snprintf(lbl, sizeof lbl, "%d%%", t * 10);
        text(c, x0 - 8 - 12 * (int)strlen(lbl), y - 7, lbl, 2, 0x000000);
    }
    line(c, x0, y0, x1, y0, 0, 1, 0), line(c, x0, y1, x1, y1, 0, 1, 0);
    line(c, x0, y0, x0, y1, 0, 1, 0), line(c, x1, y0, x1, y1, 0, 1, 0);
    for (int i = 0; i < n; i++)
        for (int k = 0; k < s[i].n; k++) {
            char lbl[32];
            h5pack_format_bytes((uint64_t)s[i].x[k], lbl, sizeof lbl);
            int x = (int)(plot_px(fr, s[i].x[k]) + 0.5);
            line(c, x, y1, x, y1 + 5, 0, 1, 0);
            text(c, x - 6 * (int)strlen(lbl), y1 + 10, lbl, 2, 0x000000);
        }
    text(c, (x0 + x1) / 2 - 6 * 21, fr->height - 22, "cache size (log scale)", 2, 0x000000);
}

static void draw_series(canvas *c, const plot_frame *fr, const plot_series *s, int i)
{
    unsigned color = plot_color(s->color);
    int dash = s->dash == 1 ? 10 : s->dash == 2 ? 4 : 0;
    for (int k = 0; k + 1 < s->n; k++)
        line(c, (int)plot_px(fr, s->x[k]), (int)plot_py(fr, s->y[k]), (int)plot_px(fr, s->x[k + 1]),
             (int)plot_py(fr, s->y[k + 1]), color, 2, dash);
    for (int k = 0; k < s->n; k++)
        fill_rect(c, (int)plot_px(fr, s->x[k]) - 3, (int)plot_py(fr, s->y[k]) - 3, 7, 7, color);
    int ly = fr->top + 10 + 24 * i, lx = fr->width - fr->right + 12;
    line(c, lx, ly, lx + 24, ly, color, 2, dash);
    text(c, lx + 30, ly - 7, s->label, 2, 0x000000);
}

static int encode_png(const char *path, const canvas *c, char *err, size_t err_len)
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

int plot_write_png(const char *path, const char *title, const plot_series *s, int n, char *err, size_t err_len)
{
    plot_frame fr;
    plot_frame_init(&fr, s, n);
    canvas c = {fr.width, fr.height, malloc((size_t)fr.width * (size_t)fr.height * 3)};
    if (!c.rgb) {
        snprintf(err, err_len, "%s: out of memory", path);
        return -1;
    }
    memset(c.rgb, 0xff, (size_t)c.w * (size_t)c.h * 3);
    char t[80];
    snprintf(t, sizeof t, "%s", title); /* at 12 px per character, 70 fit */
    text(&c, 20, 14, t, 2, 0x000000);
    draw_axes(&c, &fr, s, n);
    for (int i = 0; i < n; i++)
        draw_series(&c, &fr, &s[i], i);
    int rc = encode_png(path, &c, err, err_len);
    free(c.rgb);
    return rc;
}
