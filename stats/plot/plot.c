/* plot.c - plot layout shared by the SVG and PNG writers, and the choice between them (by extension) for
 * every plot of the tool. */
#include "plot.h"
#include "raster.h"
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

/* Advance widths of DejaVu Sans, hundredths of an em rounded up, for ' ' .. '~'. */
static const unsigned char dejavu_sans[95] = {
    32, 41, 46, 84, 64, 96, 78, 28, 40, 40, 50, 84, 32, 37, 32, 34, 64, 64, 64, 64, 64, 64, 64, 64,
    64, 64, 34, 34, 84, 84, 84, 54, 100, 69, 69, 70, 78, 64, 58, 78, 76, 30, 30, 66, 56, 87, 75, 79,
    61, 79, 70, 64, 62, 74, 69, 99, 69, 62, 69, 40, 34, 40, 84, 50, 50, 62, 64, 55, 64, 62, 36, 64,
    64, 28, 28, 58, 28, 98, 64, 62, 64, 64, 42, 53, 40, 64, 60, 82, 60, 60, 53, 64, 34, 64, 84};

double plot_text_estimate(const char *text, double size)
{
    double em = 0;
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
        if (*p >= 0x20 && *p < 0x7f)
            em += dejavu_sans[*p - 0x20] / 100.0;
        else if (*p >= 0xc0) /* the first byte of a UTF-8 character; continuation bytes add nothing */
            em += 1.0;
    }
    return em * size;
}

static double text_width(const char *text, int format, int size)
{
    return format == PLOT_SVG ? plot_text_estimate(text, size) : plot_text_width(text, size);
}

void plot_fit_text(const char *text, int format, int size, double max_w, char *out, size_t len)
{
    if (!len)
        return;
    size_t n = strlen(text);
    /* a caller's snprintf may have cut the last UTF-8 character short: drop what is left of it */
    size_t lead = n;
    while (lead > 0 && n - lead < 4 && ((unsigned char)text[lead - 1] & 0xc0) == 0x80)
        lead--;
    if (lead > 0 && (unsigned char)text[lead - 1] >= 0xc0) {
        unsigned char c = (unsigned char)text[lead - 1];
        size_t want = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
        if (n - (lead - 1) < want)
            n = lead - 1;
    }
    snprintf(out, len, "%.*s", (int)n, text);
    if (strlen(out) == n && text_width(out, format, size) <= max_w)
        return;
    /* keep HEAD bytes of the start and as many of the end, fewer until it fits (or nothing but "...") */
    for (size_t keep = n / 2; ; keep--) {
        size_t head = keep, tail = n - keep;
        while (head > 0 && ((unsigned char)text[head] & 0xc0) == 0x80) /* not inside a UTF-8 character */
            head--;
        while (tail < n && ((unsigned char)text[tail] & 0xc0) == 0x80)
            tail++;
        if (head + 3 + (n - tail) < len) {
            snprintf(out, len, "%.*s...%.*s", (int)head, text, (int)(n - tail), text + tail);
            if (text_width(out, format, size) <= max_w || keep == 0)
                return;
        }
        if (keep == 0) {
            snprintf(out, len, "...");
            return;
        }
    }
}

void plot_frame_init(plot_frame *f, plot_axis y, const plot_series *s, int n, int format)
{
    f->left = y == PLOT_Y_BYTES ? 110 : 70, f->right = 240, f->top = 50, f->bottom = 60;
    int area = 860 - f->left - f->right; /* the plot area's width, whatever the legend needs */
    /* the legend's widest label, after the swatch, and a margin after it */
    double widest = 0;
    for (int i = 0; i < n; i++) {
        double w = format == PLOT_SVG ? plot_text_estimate(s[i].label, PLOT_SVG_LEGEND_SIZE)
                                      : plot_text_width(s[i].label, PLOT_PNG_LEGEND_SCALE);
        widest = w > widest ? w : widest;
    }
    int need = (int)ceil(widest) + (format == PLOT_SVG ? PLOT_SVG_LEGEND_TEXT : PLOT_PNG_LEGEND_TEXT) + 12;
    f->right = need > f->right ? need : f->right;
    f->width = f->left + area + f->right, f->height = 520;
    f->y = y, f->ymax = y_top(y, s, n);
    int pitch = format == PLOT_SVG ? PLOT_SVG_LEGEND_PITCH : PLOT_PNG_LEGEND_PITCH;
    if (f->top + 20 + pitch * n > f->height - f->bottom) /* room for the legend's lines */
        f->height = f->top + 20 + pitch * n + f->bottom;
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
