/* plot_svg.c - the hit-rate and bytes-read plots as SVG text (see plot.h). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "plot.h"
#include "sizes.h"

void plot_xml_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '&')
            fputs("&amp;", f);
        else if (*s == '<')
            fputs("&lt;", f);
        else if (*s == '>')
            fputs("&gt;", f);
        else if (*s == '"')
            fputs("&quot;", f);
        else if ((unsigned char)*s >= 0x20 || *s == '\t')
            fputc(*s, f);
    }
}

static void svg_axes(FILE *f, const plot_frame *fr, const plot_series *s, int n)
{
    int x0 = fr->left, x1 = fr->width - fr->right, y0 = fr->top, y1 = fr->height - fr->bottom;
    fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#000\"/>\n", x0, y0,
            x1 - x0, y1 - y0);
    for (int t = 0; t <= 10; t += 2) {
        double y = plot_py(fr, fr->ymax * t / 10.0);
        char tick[32];
        plot_y_tick_label(fr, t, tick, sizeof tick);
        fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", x0, y, x1, y);
        fprintf(f, "<text x=\"%d\" y=\"%.1f\" font-size=\"12\" text-anchor=\"end\">%s</text>\n", x0 - 6, y + 4,
                tick);
    }
    /* x ticks at every cache size that occurs */
    for (int i = 0; i < n; i++)
        for (int k = 0; k < s[i].n; k++) {
            int seen = 0;
            for (int j = 0; j < i && !seen; j++)
                for (int m = 0; m < s[j].n; m++)
                    seen |= s[j].x[m] == s[i].x[k];
            if (seen)
                continue;
            char lbl[32];
            h5pack_format_bytes((uint64_t)s[i].x[k], lbl, sizeof lbl);
            double x = plot_px(fr, s[i].x[k]);
            fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#000\"/>\n", x, y1, x, y1 + 5);
            fprintf(f, "<text x=\"%.1f\" y=\"%d\" font-size=\"12\" text-anchor=\"middle\">%s</text>\n", x, y1 + 20,
                    lbl);
        }
    fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"13\" text-anchor=\"middle\">cache size (log scale)</text>\n",
            (x0 + x1) / 2, fr->height - 15);
    fprintf(f, "<text x=\"18\" y=\"%d\" font-size=\"13\" text-anchor=\"middle\" transform=\"rotate(-90 18 %d)\">"
               "%s</text>\n", (y0 + y1) / 2, (y0 + y1) / 2, plot_y_title(fr));
}

static void svg_series(FILE *f, const plot_frame *fr, const plot_series *s, int i)
{
    unsigned c = plot_color(s->color);
    const char *dash = s->dash == 1 ? " stroke-dasharray=\"8 4\"" : s->dash == 2 ? " stroke-dasharray=\"3 3\"" : "";
    fprintf(f, "<polyline fill=\"none\" stroke=\"#%06x\" stroke-width=\"2\"%s points=\"", c, dash);
    for (int k = 0; k < s->n; k++)
        fprintf(f, "%s%.1f,%.1f", k ? " " : "", plot_px(fr, s->x[k]), plot_py(fr, s->y[k]));
    fprintf(f, "\"/>\n");
    for (int k = 0; k < s->n; k++) {
        fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"#%06x\"><title>", plot_px(fr, s->x[k]),
                plot_py(fr, s->y[k]), c);
        plot_xml_text(f, s->label);
        if (fr->y == PLOT_Y_RATE)
            fprintf(f, ": %.4f</title></circle>\n", s->y[k]);
        else
            fprintf(f, ": %.0f bytes</title></circle>\n", s->y[k]);
    }
    int ly = fr->top + 10 + PLOT_SVG_LEGEND_PITCH * i, lx = fr->width - fr->right + PLOT_SVG_LEGEND_GAP;
    fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#%06x\" stroke-width=\"2\"%s/>\n", lx, ly,
            lx + 30, ly, c, dash);
    fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"%d\">", fr->width - fr->right + PLOT_SVG_LEGEND_TEXT, ly + 4,
            PLOT_SVG_LEGEND_SIZE);
    plot_xml_text(f, s->label);
    fprintf(f, "</text>\n");
}

int plot_write_svg(const char *path, const char *title, plot_axis y, const plot_series *s, int n, char *err,
                   size_t err_len)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        snprintf(err, err_len, "cannot write %s: %s", path, strerror(errno));
        return -1;
    }
    plot_frame fr;
    plot_frame_init(&fr, y, s, n, PLOT_SVG);
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
               "font-family=\"sans-serif\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"#fff\"/>\n",
            fr.width, fr.height, fr.width, fr.height);
    char fitted[1200]; /* a long path in the title: its middle elided, so it stays inside the image */
    plot_fit_text(title, PLOT_SVG, 15, fr.width - 20, fitted, sizeof fitted);
    fprintf(f, "<text x=\"%d\" y=\"25\" font-size=\"15\" text-anchor=\"middle\">", fr.width / 2);
    plot_xml_text(f, fitted);
    fprintf(f, "</text>\n");
    svg_axes(f, &fr, s, n);
    for (int i = 0; i < n; i++)
        svg_series(f, &fr, &s[i], i);
    fprintf(f, "</svg>\n");
    if (fclose(f) != 0) {
        snprintf(err, err_len, "cannot write %s: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}
