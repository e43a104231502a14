/* plot.c - plot layout shared by the SVG and PNG writers, and the choice between them (by extension) for
 * every plot of the tool. */
#include "plot.h"
#include "sizes.h"
#include "surface.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* The largest y of any series (bytes read), or 1 for a rate; never 0 so the axis has a height. */
static double y_top(plot_axis y, const plot_series *s, int n)
{
    double top = 0;
    for (int i = 0; y == PLOT_Y_BYTES && i < n; i++)
        for (int k = 0; k < s[i].n; k++)
            top = s[i].y[k] > top ? s[i].y[k] : top;
    return y == PLOT_Y_RATE ? 1.0 : top > 0 ? top * 1.05 : 1.0;
}

void plot_frame_init(plot_frame *f, plot_axis y, const plot_series *s, int n)
{
    f->width = 860, f->height = 520, f->left = y == PLOT_Y_BYTES ? 110 : 70, f->right = 240, f->top = 50;
    f->bottom = 60, f->y = y, f->ymax = y_top(y, s, n);
    if (f->top + 20 + 24 * n > f->height - f->bottom) /* room for the legend (24 px a line in the PNG) */
        f->height = f->top + 20 + 24 * n + f->bottom;
    f->xmin = INFINITY, f->xmax = -INFINITY;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < s[i].n; k++) {
            double lx = log2(s[i].x[k] > 1 ? s[i].x[k] : 1);
            f->xmin = lx < f->xmin ? lx : f->xmin;
            f->xmax = lx > f->xmax ? lx : f->xmax;
        }
    if (!(f->xmin < f->xmax)) { /* one size (or none): centre it */
        double c = isfinite(f->xmin) ? f->xmin : 20;
        f->xmin = c - 1, f->xmax = c + 1;
    }
}

double plot_px(const plot_frame *f, double x)
{
    double lx = log2(x > 1 ? x : 1);
    double w = f->width - f->left - f->right;
    return f->left + 10 + (w - 20) * (lx - f->xmin) / (f->xmax - f->xmin);
}

double plot_py(const plot_frame *f, double y)
{
    double h = f->height - f->top - f->bottom;
    return f->top + h * (1.0 - y / f->ymax);
}

void plot_y_tick_label(const plot_frame *f, int t, char *buf, size_t len)
{
    if (f->y == PLOT_Y_RATE)
        snprintf(buf, len, "%d%%", t * 10);
    else
        h5pack_format_bytes((uint64_t)(f->ymax * t / 10.0 + 0.5), buf, len);
}

const char *plot_y_title(const plot_frame *f)
{
    return f->y == PLOT_Y_RATE ? "chunk hit rate" : "bytes read";
}

unsigned plot_color(int i)
{
    static const unsigned colors[] = {0x1f77b4, 0xd62728, 0x2ca02c, 0xff7f0e, 0x9467bd,
                                      0x8c564b, 0xe377c2, 0x17becf, 0x7f7f7f};
    return colors[i % 9];
}

int plot_format_of(const char *path, char *err, size_t err_len)
{
    const char *dot = strrchr(path, '.');
    if (dot && strcasecmp(dot, ".svg") == 0)
        return PLOT_SVG;
    if (dot && strcasecmp(dot, ".png") == 0)
        return PLOT_PNG;
    snprintf(err, err_len, "%s: unknown plot format (use a .svg or .png file name)", path);
    return -1;
}

int plot_write(const char *path, const char *title, plot_axis y, const plot_series *s, int n, char *err,
               size_t err_len)
{
    int format = plot_format_of(path, err, err_len);
    if (format < 0)
        return -1;
    return format == PLOT_SVG ? plot_write_svg(path, title, y, s, n, err, err_len)
                              : plot_write_png(path, title, y, s, n, err, err_len);
}

int plot_surface_open(plot_surface *s, const char *path, int width, int height, char *err, size_t err_len)
{
    int format = plot_format_of(path, err, err_len);
    if (format < 0)
        return -1;
    return format == PLOT_SVG ? plot_surface_open_svg(s, path, width, height, err, err_len)
                              : plot_surface_open_png(s, path, width, height, err, err_len);
}
