/* plot_timeline.c - the timeline's panels (see plot_timeline.h): time on a shared linear x axis, one panel
 * per unit, the hit-rate plot's colours (plot.h). Laid out once on a plot_surface (surface.h), which writes
 * SVG or PNG by the file's extension. A missing value ends a line; it never draws as 0. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "plot.h"
#include "plot_timeline.h"
#include "surface.h"

#define W 900
#define LEFT 80
#define RIGHT 190
#define TOP 50
#define PANEL_H 170
#define GAP 40
#define BOTTOM 50

typedef struct line_spec {
    const char *label;
    int color;
    const double *y;
} line_spec;

typedef struct panel {
    const char *ylabel;
    int fraction; /* 0..1 with percent ticks; else 0..a round maximum */
    int n;
    line_spec s[3];
} panel;

typedef struct frame {
    double t0, t1, ymax;
    int top; /* this panel's top */
} frame;

/* 1, 2 or 5 times a power of ten, at least X / 5 (a tick step giving at most 5 steps up to X). */
static double nice_step(double x)
{
    if (!(x > 0))
        return 1;
    double p = pow(10, floor(log10(x / 5))), m = x / 5 / p;
    return p * (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10);
}

static double px(const frame *f, double t)
{
    return LEFT + (W - LEFT - RIGHT) * (t - f->t0) / (f->t1 - f->t0);
}

static double py(const frame *f, double y)
{
    return f->top + PANEL_H * (1.0 - y / f->ymax);
}

/* Tick K of a STEP-spaced axis from FIRST, while it stays within END: a counted loop, since adding STEP
 * to a huge FIRST may change nothing (a CSV may hold any finite value). */
#define MAX_TICKS 64

static int tick(double first, double step, double end, int k, double *v)
{
    *v = first + k * step;
    return k < MAX_TICKS && *v <= end + fabs(end) * 1e-9;
}

static void draw_axes(plot_surface *out, const frame *f, const panel *p, int last)
{
    int x0 = LEFT, x1 = W - RIGHT, y0 = f->top, y1 = f->top + PANEL_H;
    double step = p->fraction ? 0.2 : nice_step(f->ymax), v;
    for (int k = 0; tick(0, step, f->ymax, k, &v); k++) {
        double y = py(f, v);
        char lbl[32];
        snprintf(lbl, sizeof lbl, p->fraction ? "%.0f%%" : "%g", p->fraction ? 100 * v : v);
        out->ops->line(out, x0, y, x1, y, 0xdddddd, 1);
        out->ops->text(out, x0 - 6, y + 4, lbl, 11, PLOT_ANCHOR_END, 0);
    }
    out->ops->rect(out, x0, y0, x1 - x0, PANEL_H, 0x000000); /* over the grid's end lines */
    double tstep = nice_step(f->t1 - f->t0), t;
    for (int k = 0; tick(ceil(f->t0 / tstep) * tstep, tstep, f->t1, k, &t); k++) {
        double x = px(f, t);
        char lbl[32];
        snprintf(lbl, sizeof lbl, "%g", t);
        out->ops->line(out, x, y1, x, y1 + 4, 0x000000, 1);
        if (last)
            out->ops->text(out, x, y1 + 17, lbl, 11, PLOT_ANCHOR_MIDDLE, 0);
    }
    out->ops->text(out, 16, (y0 + y1) / 2, p->ylabel, 12, PLOT_ANCHOR_MIDDLE, 1);
    if (last)
        out->ops->text(out, (x0 + x1) / 2, y1 + 36, "t_s: reader time since open (s)", 13, PLOT_ANCHOR_MIDDLE, 0);
}

/* Appends (X, Y) to the run in XY, merging points that fall in the same pixel column: each column keeps
 * its lowest and highest value in time order, so a run of 300,000 rows (days at one row a second) draws
 * as about two points per pixel, spikes included, instead of a polyline too large for an SVG viewer. */
static void add_point(double *xy, size_t *run, double x, double y, double *col_x, size_t *col_start)
{
    int same_column = *run > *col_start && (long)x == (long)*col_x;
    if (!same_column) {
        *col_start = *run, *col_x = x;
        xy[2 * *run] = x, xy[2 * *run + 1] = y, ++*run;
        return;
    }
    size_t n = *run - *col_start; /* 1 or 2 points kept for this column: its extremes so far */
    double *a = &xy[2 * *col_start], *b = n == 2 ? &xy[2 * (*col_start + 1)] : NULL;
    double lo = b && b[1] > a[1] ? b[1] : a[1], hi = b && b[1] < a[1] ? b[1] : a[1]; /* screen y grows down */
    if (y <= lo && y >= hi)
        return; /* inside the extremes kept */
    if (!b) {
        xy[2 * *run] = x, xy[2 * *run + 1] = y, ++*run;
        return;
    }
    /* replace the extreme it passes, keeping the other one first */
    double *passed = y > lo ? (a[1] == lo ? a : b) : (a[1] == hi ? a : b), *kept = passed == a ? b : a;
    double kx = kept[0], ky = kept[1];
    a[0] = kx, a[1] = ky, b[0] = x, b[1] = y;
}

/* A polyline per run of finite values (XY: room for 2 * N coordinates), a dot for a lone value. */
static void draw_line(plot_surface *out, const frame *f, const double *t, const line_spec *s, size_t n, int index,
                      double *xy)
{
    unsigned c = plot_color(s->color);
    size_t run = 0, col_start = 0;
    double col_x = 0;
    for (size_t k = 0; k <= n; k++) {
        if (k < n && isfinite(s->y[k])) {
            double y = s->y[k] < 0 ? 0 : s->y[k] > f->ymax ? f->ymax : s->y[k];
            add_point(xy, &run, px(f, t[k]), py(f, y), &col_x, &col_start);
            continue;
        }
        if (run == 1) /* a line would not show */
            out->ops->dot(out, xy[0], xy[1], 2.5, c);
        else if (run > 1)
            out->ops->polyline(out, xy, run, c, 1.5);
        run = 0, col_start = 0;
    }
    int ly = f->top + 12 + 20 * index, lx = W - RIGHT + 16;
    out->ops->line(out, lx, ly, lx + 24, ly, c, 2);
    out->ops->text(out, lx + 30, ly + 4, s->label, 12, PLOT_ANCHOR_START, 0);
}

static double panel_max(const panel *p, size_t n)
{
    if (p->fraction)
        return 1.0;
    double m = 0;
    for (int i = 0; i < p->n; i++)
        for (size_t k = 0; k < n; k++)
            if (isfinite(p->s[i].y[k]) && p->s[i].y[k] > m)
                m = p->s[i].y[k];
    double step = nice_step(m > 0 ? m : 1), top = ceil((m > 0 ? m : 1) / step) * step;
    return isfinite(top) ? top : m; /* rounding up near DBL_MAX overflows */
}

static line_spec series(const char *label, int color, const double *y)
{
    return (line_spec){.label = label, .color = color, .y = y};
}

static int build_panels(const timeline_csv *c, panel *p)
{
    p[0] = (panel){.ylabel = "samples/s", .n = 1, .s = {series("samples/s", 0, c->samples_per_s)}};
    p[1] = (panel){.ylabel = "MB/s", .n = 1, .s = {series("read from storage", 3, c->read_mb)}};
    if (c->has_delivered)
        p[1].s[p[1].n++] = series("delivered", 2, c->delivered_mb);
    p[2] = (panel){.ylabel = "fraction", .fraction = 1, .n = 2,
                   .s = {series("stall", 1, c->stall), series("hit rate", 4, c->hit_rate)}};
    if (c->has_device_idle)
        p[2].s[p[2].n++] = series("device idle", 7, c->device_idle);
    return 3;
}

int plot_timeline_write(const char *path, const char *title, const timeline_csv *c, char *err, size_t err_len)
{
    panel p[3];
    int np = build_panels(c, p);
    int height = TOP + np * PANEL_H + (np - 1) * GAP + BOTTOM;
    double *xy = malloc(2 * (c->n ? c->n : 1) * sizeof *xy);
    if (!xy) {
        snprintf(err, err_len, "%s: out of memory for %zu rows", path, c->n);
        return -1;
    }
    plot_surface out;
    if (plot_surface_open(&out, path, W, height, err, err_len) != 0) {
        free(xy);
        return -1;
    }
    /* a long CSV path in the title: its middle elided so that it stays inside the page (in the PNG the
     * size-15 text is drawn at glyph scale (15 * zoom + 5) / 10, as surface_png.c maps sizes) */
    char fitted[1200];
    if (plot_format_of(path, err, err_len) == PLOT_PNG)
        plot_fit_text(title, PLOT_PNG, (15 * PLOT_PNG_ZOOM + 5) / 10, (W - 20) * PLOT_PNG_ZOOM, fitted, sizeof fitted);
    else
        plot_fit_text(title, PLOT_SVG, 15, W - 20, fitted, sizeof fitted);
    out.ops->text(&out, W / 2, 25, fitted, 15, PLOT_ANCHOR_MIDDLE, 0);
    /* rows end at t_s: the first row's interval starts at t_s - dt_s, about 0 (the open) */
    frame f = {.t0 = 0, .t1 = c->t[c->n - 1] > 0 ? c->t[c->n - 1] : 1, .ymax = 1, .top = TOP};
    for (int i = 0; i < np; i++) {
        f.top = TOP + i * (PANEL_H + GAP);
        f.ymax = panel_max(&p[i], c->n);
        draw_axes(&out, &f, &p[i], i == np - 1);
        for (int k = 0; k < p[i].n; k++)
            draw_line(&out, &f, c->t, &p[i].s[k], c->n, k, xy);
    }
    free(xy);
    return out.ops->finish(&out, err, err_len);
}
