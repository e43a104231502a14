/* surface_svg.c - the SVG output of a plot_surface (surface.h): one element per call, written as it
 * comes; write errors are caught at the end (ferror, fclose). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "plot.h"
#include "surface.h"

static FILE *out(plot_surface *s)
{
    return (FILE *)s->impl;
}

static void svg_rect(plot_surface *s, double x, double y, double w, double h, unsigned color)
{
    fprintf(out(s), "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#%06x\"/>\n",
            x, y, w, h, color);
}

static void svg_line(plot_surface *s, double x0, double y0, double x1, double y1, unsigned color, double width)
{
    fprintf(out(s), "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#%06x\"", x0, y0, x1, y1, color);
    if (width != 1)
        fprintf(out(s), " stroke-width=\"%g\"", width);
    fprintf(out(s), "/>\n");
}

static void svg_polyline(plot_surface *s, const double *xy, size_t n, unsigned color, double width)
{
    fprintf(out(s), "<polyline fill=\"none\" stroke=\"#%06x\" stroke-width=\"%g\" points=\"", color, width);
    for (size_t k = 0; k < n; k++)
        fprintf(out(s), "%s%.1f,%.1f", k ? " " : "", xy[2 * k], xy[2 * k + 1]);
    fprintf(out(s), "\"/>\n");
}

static void svg_dot(plot_surface *s, double x, double y, double r, unsigned color)
{
    fprintf(out(s), "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%g\" fill=\"#%06x\"/>\n", x, y, r, color);
}

static void svg_text(plot_surface *s, double x, double y, const char *text, int size, int anchor, int up)
{
    static const char *anchors[] = {"start", "middle", "end"};
    fprintf(out(s), "<text x=\"%.1f\" y=\"%.1f\" font-size=\"%d\"", x, y, size);
    if (anchor != PLOT_ANCHOR_START)
        fprintf(out(s), " text-anchor=\"%s\"", anchors[anchor]);
    if (up)
        fprintf(out(s), " transform=\"rotate(-90 %.1f %.1f)\"", x, y);
    fputc('>', out(s));
    plot_xml_text(out(s), text);
    fprintf(out(s), "</text>\n");
}

static int svg_finish(plot_surface *s, char *err, size_t err_len)
{
    fprintf(out(s), "</svg>\n");
    int bad = ferror(out(s));
    int saved = errno;
    if (fclose(out(s)) != 0 || bad) {
        snprintf(err, err_len, "cannot write %s: %s", s->path, strerror(bad ? saved : errno));
        return -1;
    }
    return 0;
}

static const plot_surface_ops svg_ops = {.rect = svg_rect, .line = svg_line, .polyline = svg_polyline,
                                         .dot = svg_dot, .text = svg_text, .finish = svg_finish};

int plot_surface_open_svg(plot_surface *s, const char *path, int width, int height, char *err, size_t err_len)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        snprintf(err, err_len, "cannot write %s: %s", path, strerror(errno));
        return -1;
    }
    *s = (plot_surface){.ops = &svg_ops, .path = path, .impl = f};
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
               "font-family=\"sans-serif\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"#fff\"/>\n",
            width, height, width, height);
    return 0;
}
