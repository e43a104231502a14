/* surface_png.c - the PNG output of a plot_surface (surface.h): the shared rasteriser (raster.h) at
 * PLOT_PNG_ZOOM pixels per unit. Font sizes map to glyph scales so that the 5x7 glyphs stand about as
 * tall as the SVG text (size 11-12 -> 2x at zoom 2, 13-16 -> 3x). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "raster.h"
#include "surface.h"

static plot_canvas *canvas(plot_surface *s)
{
    return (plot_canvas *)s->impl;
}

/* Canvas pixels of a plot unit, clamped far outside any canvas so that the conversion is defined. */
static int px(double v)
{
    double p = v * PLOT_PNG_ZOOM;
    return (int)lround(p < -1e6 ? -1e6 : p > 1e6 ? 1e6 : p);
}

/* Liang-Barsky: shortens the segment to the part inside [LO, HI] on both axes; 0 when none is. A plot
 * of a hand-made CSV may place points anywhere, and the rasteriser walks every step of a segment. */
static int clip_segment(double *x0, double *y0, double *x1, double *y1, double lo, double hix, double hiy)
{
    double dx = *x1 - *x0, dy = *y1 - *y0, a = 0, b = 1;
    double p[4] = {-dx, dx, -dy, dy}, q[4] = {*x0 - lo, hix - *x0, *y0 - lo, hiy - *y0};
    for (int i = 0; i < 4; i++) {
        if (p[i] == 0) {
            if (q[i] < 0)
                return 0; /* parallel to this edge and outside it */
            continue;
        }
        double r = q[i] / p[i];
        if (p[i] < 0 && r > a)
            a = r;
        else if (p[i] > 0 && r < b)
            b = r;
    }
    if (a > b)
        return 0;
    *x1 = *x0 + b * dx, *y1 = *y0 + b * dy;
    *x0 += a * dx, *y0 += a * dy;
    return 1;
}

static int thickness(double width)
{
    int t = (int)lround(width * PLOT_PNG_ZOOM);
    return t > 0 ? t : 1;
}

static void png_line(plot_surface *s, double x0, double y0, double x1, double y1, unsigned color, double width)
{
    const plot_canvas *c = canvas(s);
    double margin = 2 * width; /* a thick line's square stamps reach this far past the segment */
    if (!(isfinite(x0) && isfinite(y0) && isfinite(x1) && isfinite(y1)) ||
        !clip_segment(&x0, &y0, &x1, &y1, -margin, (double)c->w / PLOT_PNG_ZOOM + margin,
                      (double)c->h / PLOT_PNG_ZOOM + margin))
        return;
    plot_draw_line(canvas(s), px(x0), px(y0), px(x1), px(y1), color, thickness(width), 0);
}

static void png_rect(plot_surface *s, double x, double y, double w, double h, unsigned color)
{
    png_line(s, x, y, x + w, y, color, 1), png_line(s, x, y + h, x + w, y + h, color, 1);
    png_line(s, x, y, x, y + h, color, 1), png_line(s, x + w, y, x + w, y + h, color, 1);
}

static void png_polyline(plot_surface *s, const double *xy, size_t n, unsigned color, double width)
{
    for (size_t k = 0; k + 1 < n; k++)
        png_line(s, xy[2 * k], xy[2 * k + 1], xy[2 * k + 2], xy[2 * k + 3], color, width);
}

static void png_dot(plot_surface *s, double x, double y, double r, unsigned color)
{
    plot_fill_disc(canvas(s), px(x), px(y), px(r), color);
}

static void png_text(plot_surface *s, double x, double y, const char *text, int size, int anchor, int up)
{
    int scale = (size * PLOT_PNG_ZOOM + 5) / 10, w = plot_text_width(text, scale);
    int shift = anchor == PLOT_ANCHOR_MIDDLE ? w / 2 : anchor == PLOT_ANCHOR_END ? w : 0;
    int tall = PLOT_GLYPH_ROWS * scale; /* the glyphs sit on the baseline */
    if (up)
        plot_draw_text_up(canvas(s), px(x) - tall, px(y) + shift, text, scale, 0x000000);
    else
        plot_draw_text(canvas(s), px(x) - shift, px(y) - tall, text, scale, 0x000000);
}

static int png_finish(plot_surface *s, char *err, size_t err_len)
{
    int rc = plot_canvas_write_png(canvas(s), s->path, err, err_len);
    plot_canvas_free(canvas(s));
    free(canvas(s));
    return rc;
}

static const plot_surface_ops png_ops = {.rect = png_rect, .line = png_line, .polyline = png_polyline,
                                         .dot = png_dot, .text = png_text, .finish = png_finish};

int plot_surface_open_png(plot_surface *s, const char *path, int width, int height, char *err, size_t err_len)
{
    plot_canvas *c = malloc(sizeof *c);
    if (!c || plot_canvas_init(c, width * PLOT_PNG_ZOOM, height * PLOT_PNG_ZOOM) != 0) {
        free(c);
        snprintf(err, err_len, "%s: out of memory for a %d x %d image", path, width * PLOT_PNG_ZOOM,
                 height * PLOT_PNG_ZOOM);
        return -1;
    }
    *s = (plot_surface){.ops = &png_ops, .path = path, .impl = c};
    return 0;
}
