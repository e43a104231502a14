/* surface.h - one drawing interface, two outputs: a plot laid out once in SVG user units (a width x height
 * page, y downwards, text placed by its baseline as SVG does) is written as SVG text or rasterised to PNG
 * (raster.h) at PLOT_PNG_ZOOM pixels per unit, so the 5x7 font scales to about the SVG text's size.
 * Used by the timeline plot (plot_timeline.c). */
#ifndef H5PACK_STATS_SURFACE_H
#define H5PACK_STATS_SURFACE_H

#include <stddef.h>

#define PLOT_PNG_ZOOM 2

enum { PLOT_ANCHOR_START, PLOT_ANCHOR_MIDDLE, PLOT_ANCHOR_END };

typedef struct plot_surface plot_surface;

typedef struct plot_surface_ops {
    /* an unfilled rectangle outline, 1 unit wide */
    void (*rect)(plot_surface *s, double x, double y, double w, double h, unsigned color);
    void (*line)(plot_surface *s, double x0, double y0, double x1, double y1, unsigned color, double width);
    /* N points, XY = x0, y0, x1, y1, ... (N >= 2) */
    void (*polyline)(plot_surface *s, const double *xy, size_t n, unsigned color, double width);
    void (*dot)(plot_surface *s, double x, double y, double r, unsigned color);
    /* TEXT of font SIZE with its baseline at Y; anchored at X by ANCHOR; UP: turned to read upwards
     * (anchored along y, baseline at x) */
    void (*text)(plot_surface *s, double x, double y, const char *text, int size, int anchor, int up);
    /* writes the file and frees the surface; 0, or -1 with the reason in ERR */
    int (*finish)(plot_surface *s, char *err, size_t err_len);
} plot_surface_ops;

struct plot_surface {
    const plot_surface_ops *ops;
    const char *path;
    void *impl; /* FILE * for SVG, plot_canvas * for PNG */
};

/* Starts a WIDTH x HEIGHT plot (white background) in PATH, SVG or PNG by its extension (plot_format_of).
 * 0, or -1 with the reason in ERR (unknown extension, cannot write, no memory): nothing to finish then. */
int plot_surface_open(plot_surface *s, const char *path, int width, int height, char *err, size_t err_len);

/* The two outputs (plot_surface_open picks one). */
int plot_surface_open_svg(plot_surface *s, const char *path, int width, int height, char *err, size_t err_len);
int plot_surface_open_png(plot_surface *s, const char *path, int width, int height, char *err, size_t err_len);

#endif
