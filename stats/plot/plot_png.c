/* plot_png.c - the hit-rate and bytes-read plots as PNG (see plot.h), drawn with the shared rasteriser (raster.h: thick
 * lines, dashes, markers, the 5x7 pixel font scaled 2x). */
#include <stdio.h>
#include <string.h>

#include "plot.h"
#include "raster.h"
#include "sizes.h"

static void draw_axes(plot_canvas *c, const plot_frame *fr, const plot_series *s, int n)
{
    int x0 = fr->left, x1 = fr->width - fr->right, y0 = fr->top, y1 = fr->height - fr->bottom;
    for (int t = 0; t <= 10; t += 2) {
        int y = (int)(plot_py(fr, fr->ymax * t / 10.0) + 0.5);
        plot_draw_line(c, x0, y, x1, y, 0xdddddd, 1, 0);
        char lbl[32];
        plot_y_tick_label(fr, t, lbl, sizeof lbl);
        plot_draw_text(c, x0 - 8 - 12 * (int)strlen(lbl), y - 7, lbl, 2, 0x000000);
    }
    plot_draw_line(c, x0, y0, x1, y0, 0, 1, 0), plot_draw_line(c, x0, y1, x1, y1, 0, 1, 0);
    plot_draw_line(c, x0, y0, x0, y1, 0, 1, 0), plot_draw_line(c, x1, y0, x1, y1, 0, 1, 0);
    for (int i = 0; i < n; i++)
        for (int k = 0; k < s[i].n; k++) {
            char lbl[32];
            h5pack_format_bytes((uint64_t)s[i].x[k], lbl, sizeof lbl);
            int x = (int)(plot_px(fr, s[i].x[k]) + 0.5);
            plot_draw_line(c, x, y1, x, y1 + 5, 0, 1, 0);
            plot_draw_text(c, x - 6 * (int)strlen(lbl), y1 + 10, lbl, 2, 0x000000);
        }
    plot_draw_text(c, (x0 + x1) / 2 - 6 * 21, fr->height - 22, "cache size (log scale)", 2, 0x000000);
}

static void draw_series(plot_canvas *c, const plot_frame *fr, const plot_series *s, int i)
{
    unsigned color = plot_color(s->color);
    int dash = s->dash == 1 ? 10 : s->dash == 2 ? 4 : 0;
    for (int k = 0; k + 1 < s->n; k++)
        plot_draw_line(c, (int)plot_px(fr, s->x[k]), (int)plot_py(fr, s->y[k]), (int)plot_px(fr, s->x[k + 1]),
                       (int)plot_py(fr, s->y[k + 1]), color, 2, dash);
    for (int k = 0; k < s->n; k++)
        plot_fill_rect(c, (int)plot_px(fr, s->x[k]) - 3, (int)plot_py(fr, s->y[k]) - 3, 7, 7, color);
    int ly = fr->top + 10 + PLOT_PNG_LEGEND_PITCH * i, lx = fr->width - fr->right + PLOT_PNG_LEGEND_GAP;
    plot_draw_line(c, lx, ly, lx + 24, ly, color, 2, dash);
    plot_draw_text(c, fr->width - fr->right + PLOT_PNG_LEGEND_TEXT, ly - 7, s->label, PLOT_PNG_LEGEND_SCALE, 0x000000);
}

int plot_write_png(const char *path, const char *title, plot_axis y, const plot_series *s, int n, char *err,
                   size_t err_len)
{
    plot_frame fr;
    plot_frame_init(&fr, y, s, n, PLOT_PNG);
    plot_canvas c;
    if (plot_canvas_init(&c, fr.width, fr.height) != 0) {
        snprintf(err, err_len, "%s: out of memory", path);
        return -1;
    }
    char t[1200]; /* a long path in the title: its middle elided, so it stays inside the image */
    plot_fit_text(title, PLOT_PNG, 2, fr.width - 40, t, sizeof t);
    plot_draw_text(&c, 20, 14, t, 2, 0x000000);
    draw_axes(&c, &fr, s, n);
    for (int i = 0; i < n; i++)
        draw_series(&c, &fr, &s[i], i);
    int rc = plot_canvas_write_png(&c, path, err, err_len);
    plot_canvas_free(&c);
    return rc;
}
