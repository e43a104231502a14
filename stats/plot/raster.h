/* raster.h - the small RGB rasteriser behind every PNG plot of h5pack-stats (simulate --plot, plot):
 * thick and dashed lines, filled rectangles and discs, a built-in 5x7 pixel font (horizontal or turned
 * to read upwards), and libpng to write the canvas. Drawing clips to the canvas. */
#ifndef H5PACK_STATS_RASTER_H
#define H5PACK_STATS_RASTER_H

#include <stddef.h>
#include <stdint.h>

typedef struct plot_canvas {
    int w, h;
    uint8_t *rgb; /* w * h RGB triples, row by row */
} plot_canvas;

/* A white W x H canvas. 0, or -1 when out of memory. */
int plot_canvas_init(plot_canvas *c, int w, int h);
void plot_canvas_free(plot_canvas *c);
/* 0xRRGGBB at (x, y), or 0 outside the canvas (for tests and callers that inspect it). */
unsigned plot_canvas_get(const plot_canvas *c, int x, int y);

void plot_fill_rect(plot_canvas *c, int x, int y, int w, int h, unsigned color);
void plot_fill_disc(plot_canvas *c, int cx, int cy, int r, unsigned color);
/* A line stamped THICK x THICK pixels per step; DASH > 0 draws DASH steps on, DASH/2 off. */
void plot_draw_line(plot_canvas *c, int x0, int y0, int x1, int y1, unsigned color, int thick, int dash);

/* Glyph cells are 6 x 8 pixels scaled by SCALE (the glyph 5 x 7, its top row at the cell's top). */
#define PLOT_GLYPH_ROWS 7
/* Width S takes: 6 * SCALE per character, less the last character's empty column. */
int plot_text_width(const char *s, int scale);
/* S with its top left at (x, y). Capitals without a glyph of their own use the small letter; other
 * characters without a glyph leave a blank. Returns the width drawn. */
int plot_draw_text(plot_canvas *c, int x, int y, const char *s, int scale, unsigned color);
/* S turned 90 degrees counter-clockwise (reads upwards): it starts at y (its bottom) and the glyphs'
 * tops face x (their tops at x, their baselines at x + 7 * SCALE). */
void plot_draw_text_up(plot_canvas *c, int x, int y, const char *s, int scale, unsigned color);

/* Writes C to PATH as an 8-bit RGB PNG. 0, or -1 with "cannot write PATH: reason" in ERR. */
int plot_canvas_write_png(const plot_canvas *c, const char *path, char *err, size_t err_len);

#endif
