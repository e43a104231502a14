/* plot.h - the plots of `simulate --plot` (hit rate, y 0..1) and `--plot-bytes` (bytes read, y from 0 to
 * the largest value) against cache size (x, log scale) with one line per series (order / policy, and the chunk size with --chunk). SVG is written as text; PNG
 * through libpng from a small rasteriser (lines, markers, legend swatches and a built-in 5x7 pixel font). */
#ifndef H5PACK_STATS_PLOT_H
#define H5PACK_STATS_PLOT_H

#include <stddef.h>
#include <stdio.h>

#define PLOT_MAX_POINTS 32
#define PLOT_MAX_SERIES 24 /* legend entries that fit the frame (it grows with them, down and to the right) */

typedef struct plot_series {
    char label[64];
    int color; /* palette index (simulate: the policy; with --chunk, the chunk size) */
    int dash;  /* 0 solid, 1 long dashes, 2 short dashes (simulate: the order; with --chunk, the policy) */
    int n;
    double x[PLOT_MAX_POINTS]; /* cache bytes */
    double y[PLOT_MAX_POINTS]; /* hit rate, or bytes read (plot_axis) */
} plot_series;

/* What the y axis shows: a rate in [0, 1] (ticks in percent) or a byte count (ticks as sizes, 0 .. max). */
typedef enum plot_axis { PLOT_Y_RATE = 0, PLOT_Y_BYTES = 1 } plot_axis;

/* Writes PATH as SVG or PNG, chosen by its extension (.svg / .png, any case). Returns 0, or -1 with
 * the reason in ERR (unknown extension, cannot write). */
int plot_write(const char *path, const char *title, plot_axis y, const plot_series *s, int n, char *err,
               size_t err_len);

/* The format PATH's extension names: PLOT_SVG or PLOT_PNG (.svg / .png, any case), or -1 with
 * "PATH: unknown plot format (...)" in ERR. Every plot of the tool chooses its format here. */
enum { PLOT_SVG = 0, PLOT_PNG = 1 };
int plot_format_of(const char *path, char *err, size_t err_len);

/* The legend, right of the plot area, one line per series: a swatch PLOT_<FORMAT>_LEGEND_GAP after the
 * area's right edge, the label PLOT_<FORMAT>_LEGEND_TEXT after it (SVG units / PNG pixels), lines
 * PLOT_<FORMAT>_LEGEND_PITCH apart from top + 10. The frame's right margin holds the widest label. */
#define PLOT_SVG_LEGEND_GAP 20
#define PLOT_SVG_LEGEND_TEXT 58 /* the swatch is 30 long */
#define PLOT_SVG_LEGEND_PITCH 22
#define PLOT_SVG_LEGEND_SIZE 12 /* font size of the labels */
#define PLOT_PNG_LEGEND_GAP 12
#define PLOT_PNG_LEGEND_TEXT 42 /* the swatch is 24 long */
#define PLOT_PNG_LEGEND_PITCH 24
#define PLOT_PNG_LEGEND_SCALE 2 /* glyph scale of the labels (12 pixels a character) */

/* Shared layout: pixel position of a data point. */
typedef struct plot_frame {
    int width, height, left, right, top, bottom; /* plot area: [left, width-right] x [top, height-bottom] */
    double xmin, xmax;                           /* log2 of the cache sizes */
    double ymax;                                 /* the top of the y axis: 1 for a rate */
    plot_axis y;
} plot_frame;

/* The layout of S's plot in FORMAT (PLOT_SVG or PLOT_PNG): 860 x 520 with a plot area 550 wide (510 for
 * bytes), taller for many series and wider for long labels, so that the whole legend lies inside. */
void plot_frame_init(plot_frame *f, plot_axis y, const plot_series *s, int n, int format);
/* Width of TEXT in the SVG's sans-serif at font SIZE: the advance widths of DejaVu Sans (the usual
 * sans-serif on Linux, wider than Arial, Helvetica and Liberation Sans), rounded up; any other character
 * (UTF-8) counts as 1 em. The layout's upper estimate of how wide a viewer draws the text. */
double plot_text_estimate(const char *text, double size);
/* TEXT into OUT (LEN bytes), its middle replaced by "..." (at UTF-8 character boundaries) where it would
 * be wider than MAX_W: SVG units at font SIZE (plot_text_estimate) for PLOT_SVG, pixels at glyph scale
 * SIZE (plot_text_width) for PLOT_PNG. Titles that name long paths stay inside the image. */
void plot_fit_text(const char *text, int format, int size, double max_w, char *out, size_t len);
/* Label and name of the y axis: tick T of 0..10 (every second one is drawn) and the axis title. */
void plot_y_tick_label(const plot_frame *f, int t, char *buf, size_t len);
const char *plot_y_title(const plot_frame *f);
double plot_px(const plot_frame *f, double x);
double plot_py(const plot_frame *f, double y);
/* 0xRRGGBB colour of series I. */
unsigned plot_color(int i);

/* Writes S as XML character data (&, <, >, " escaped; control characters dropped). */
void plot_xml_text(FILE *f, const char *s);

int plot_write_svg(const char *path, const char *title, plot_axis y, const plot_series *s, int n, char *err,
                   size_t err_len);
int plot_write_png(const char *path, const char *title, plot_axis y, const plot_series *s, int n, char *err,
                   size_t err_len);

#endif
