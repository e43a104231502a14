/* plot_timeline.c - the timeline's panels as SVG (see plot_timeline.h): time on a shared linear x axis,
 * one panel per unit, the hit-rate plot's colours (plot.h). A missing value ends a line; it never draws
 * as 0. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "plot.h"
#include "plot_timeline.h"

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

static void svg_axes(FILE *out, const frame *f, const panel *p, int last)
{
    int x0 = LEFT, x1 = W - RIGHT, y0 = f->top, y1 = f->top + PANEL_H;
    fprintf(out, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#000\"/>\n", x0, y0,
            x1 - x0, PANEL_H);
    double step = p->fraction ? 0.2 : nice_step(f->ymax);
    for (double v = 0; v <= f->ymax * (1 + 1e-9); v += step) {
        double y = py(f, v);
        fprintf(out, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", x0, y, x1, y);
        if (p->fraction)
            fprintf(out, "<text x=\"%d\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">%.0f%%</text>\n", x0 - 6,
                    y + 4, 100 * v);
        else
            fprintf(out, "<text x=\"%d\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">%g</text>\n", x0 - 6, y + 4,
                    v);
    }
    double tstep = nice_step(f->t1 - f->t0);
    for (double t = ceil(f->t0 / tstep) * tstep; t <= f->t1 * (1 + 1e-9); t += tstep) {
        double x = px(f, t);
        fprintf(out, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#000\"/>\n", x, y1, x, y1 + 4);
        if (last)
            fprintf(out, "<text x=\"%.1f\" y=\"%d\" font-size=\"11\" text-anchor=\"middle\">%g</text>\n", x,
                    y1 + 17, t);
    }
    fprintf(out, "<text x=\"16\" y=\"%d\" font-size=\"12\" text-anchor=\"middle\" transform=\"rotate(-90 16 %d)\">"
                 "%s</text>\n", (y0 + y1) / 2, (y0 + y1) / 2, p->ylabel);
    if (last)
        fprintf(out, "<text x=\"%d\" y=\"%d\" font-size=\"13\" text-anchor=\"middle\">time since open (s)</text>\n",
                (x0 + x1) / 2, y1 + 36);
}

/* A polyline per run of finite values. */
static void svg_line(FILE *out, const frame *f, const double *t, const line_spec *s, size_t n, int index)
{
    unsigned c = plot_color(s->color);
    int open = 0;
    for (size_t k = 0; k < n; k++) {
        if (!isfinite(s->y[k])) {
            if (open)
                fprintf(out, "\"/>\n");
            open = 0;
            continue;
        }
        double y = s->y[k] < 0 ? 0 : s->y[k] > f->ymax ? f->ymax : s->y[k];
        if (!open && (k + 1 == n || !isfinite(s->y[k + 1]))) { /* a lone value: a dot, a line would not show */
            fprintf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" fill=\"#%06x\"/>\n", px(f, t[k]), py(f, y), c);
            continue;
        }
        if (!open)
            fprintf(out, "<polyline fill=\"none\" stroke=\"#%06x\" stroke-width=\"1.5\" points=\"", c);
        fprintf(out, "%s%.1f,%.1f", open ? " " : "", px(f, t[k]), py(f, y));
        open = 1;
    }
    if (open)
        fprintf(out, "\"/>\n");
    int ly = f->top + 12 + 20 * index, lx = W - RIGHT + 16;
    fprintf(out, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#%06x\" stroke-width=\"2\"/>\n", lx, ly,
            lx + 24, ly, c);
    fprintf(out, "<text x=\"%d\" y=\"%d\" font-size=\"12\">%s</text>\n", lx + 30, ly + 4, s->label);
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
    double step = nice_step(m > 0 ? m : 1);
    return ceil((m > 0 ? m : 1) / step) * step;
}

static int build_panels(const timeline_csv *c, panel *p)
{
    p[0] = (panel){"samples/s", 0, 1, {{"samples/s", 0, c->samples_per_s}}};
    p[1] = (panel){"MB/s", 0, 1, {{"read from storage", 3, c->read_mb}}};
    if (c->has_delivered)
        p[1].s[p[1].n++] = (line_spec){"delivered", 2, c->delivered_mb};
    p[2] = (panel){"fraction", 1, 2, {{"stall", 1, c->stall}, {"hit rate", 4, c->hit_rate}}};
    if (c->has_device_idle)
        p[2].s[p[2].n++] = (line_spec){"device idle", 7, c->device_idle};
    return 3;
}

int plot_timeline_write(const char *path, const char *title, const timeline_csv *c, char *err, size_t err_len)
{
    const char *dot = strrchr(path, '.');
    if (!dot || strcmp(dot, ".svg") != 0) {
        snprintf(err, err_len, "%s: the timeline plot is written as SVG: give a .svg file name", path);
        return -1;
    }
    FILE *out = fopen(path, "w");
    if (!out) {
        snprintf(err, err_len, "cannot write %s: %s", path, strerror(errno));
        return -1;
    }
    panel p[3];
    int np = build_panels(c, p);
    int height = TOP + np * PANEL_H + (np - 1) * GAP + BOTTOM;
    fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                 "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
                 "font-family=\"sans-serif\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"#fff\"/>\n",
            W, height, W, height);
    fprintf(out, "<text x=\"%d\" y=\"25\" font-size=\"15\" text-anchor=\"middle\">", W / 2);
    plot_xml_text(out, title);
    fprintf(out, "</text>\n");
    /* rows end at t_s: the first row's interval starts at t_s - dt_s, about 0 (the open) */
    frame f = {0, c->t[c->n - 1] > 0 ? c->t[c->n - 1] : 1, 1, TOP};
    for (int i = 0; i < np; i++) {
        f.top = TOP + i * (PANEL_H + GAP);
        f.ymax = panel_max(&p[i], c->n);
        svg_axes(out, &f, &p[i], i == np - 1);
        for (int k = 0; k < p[i].n; k++)
            svg_line(out, &f, c->t, &p[i].s[k], c->n, k);
    }
    fprintf(out, "</svg>\n");
    if (fclose(out) != 0) {
        snprintf(err, err_len, "cannot write %s: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}
