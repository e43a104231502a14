/* test_plot_fit.c - the layout behind issue 41 item 6 ("the simulate --plot legend is cut off at the right
 * edge"), in stats/plot/plot.c: plot_frame_init leaves room right of the plot area for the widest legend
 * label in each format (SVG: plot_text_estimate, PNG: the 5x7 font's width) and for 24 lines; plot_fit_text
 * elides the middle of a title at UTF-8 character boundaries (also when the caller's snprintf cut the last
 * character short), keeps its two ends and fits the width asked. */
#include <string.h>

#include "check.h"
#include "plot.h"
#include "raster.h"

/* 1 when S is well-formed UTF-8. */
static int valid_utf8(const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        int n = *p < 0x80 ? 1 : (*p & 0xe0) == 0xc0 ? 2 : (*p & 0xf0) == 0xe0 ? 3 : (*p & 0xf8) == 0xf0 ? 4 : 0;
        if (!n)
            return 0;
        for (int i = 1; i < n; i++)
            if ((p[i] & 0xc0) != 0x80)
                return 0;
        p += n;
    }
    return 1;
}

static void check_frame(const char *label, int n, int format)
{
    plot_series s[PLOT_MAX_SERIES];
    memset(s, 0, sizeof s);
    for (int i = 0; i < n; i++) {
        snprintf(s[i].label, sizeof s[i].label, "%s", label);
        s[i].n = 2, s[i].x[0] = 1 << 20, s[i].x[1] = 16 << 20, s[i].y[0] = 0.5, s[i].y[1] = 0.9;
    }
    plot_frame f;
    plot_frame_init(&f, PLOT_Y_RATE, s, n, format);
    double w = format == PLOT_SVG ? plot_text_estimate(label, PLOT_SVG_LEGEND_SIZE)
                                  : plot_text_width(label, PLOT_PNG_LEGEND_SCALE);
    int text_x = f.width - f.right + (format == PLOT_SVG ? PLOT_SVG_LEGEND_TEXT : PLOT_PNG_LEGEND_TEXT);
    CHECK_MSG(text_x + w + 8 <= f.width, "%s legend '%s' ends at %.0f, page %d wide",
              format == PLOT_SVG ? "SVG" : "PNG", label, text_x + w, f.width);
    int pitch = format == PLOT_SVG ? PLOT_SVG_LEGEND_PITCH : PLOT_PNG_LEGEND_PITCH;
    CHECK_MSG(f.top + 20 + pitch * n <= f.height - f.bottom, "a legend of %d lines below the plot area", n);
    CHECK_EQ_INT(f.width - f.left - f.right, 550); /* the plot area keeps its width */
    if (strlen(label) <= 14)
        CHECK_EQ_INT(f.width, 860);
}

int main(void)
{
    const char *labels[] = {"chunk / lru", "sequential / belady", "sequential / belady / 1000 (file)",
                            "random / hdf5 / 18446744073709551615 (file)", "WWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWW"};
    for (size_t i = 0; i < sizeof labels / sizeof *labels; i++)
        for (int n = 1; n <= PLOT_MAX_SERIES; n += 23)
            for (int format = PLOT_SVG; format <= PLOT_PNG; format++)
                check_frame(labels[i], n, format);

    /* plot_text_estimate: DejaVu Sans' advances, 1 em per non-ASCII character */
    CHECK_NEAR(plot_text_estimate("0", 100), 64, 1e-9);
    CHECK_NEAR(plot_text_estimate("W\xc3\xa9", 10), 9.9 + 10, 1e-9);

    char out[200];
    plot_fit_text("short title", PLOT_SVG, 15, 800, out, sizeof out);
    CHECK(strcmp(out, "short title") == 0);
    /* a long path with two-byte characters everywhere: elided, valid, ends kept, inside the width */
    char title[600] = "chunk hit rate: /data/";
    while (strlen(title) < 500)
        strcat(title, "donn\xc3\xa9" "es_");
    strcat(title, "/train.h5 (batch 64)");
    for (int format = PLOT_SVG; format <= PLOT_PNG; format++) {
        int size = format == PLOT_SVG ? 15 : 2;
        for (double max_w = 40; max_w <= 1200; max_w += 97) {
            plot_fit_text(title, format, size, max_w, out, sizeof out);
            double w = format == PLOT_SVG ? plot_text_estimate(out, size) : plot_text_width(out, size);
            CHECK_MSG(valid_utf8(out), "'%s' is not UTF-8", out);
            CHECK_MSG(strstr(out, "..."), "'%s' elided", out);
            CHECK_MSG(w <= max_w, "'%s' is %.0f wide, %.0f asked", out, w, max_w);
            if (max_w >= 400)
                CHECK_MSG(strncmp(out, "chunk hit rate", 14) == 0 && strstr(out, "(batch 64)"), "'%s' keeps its ends",
                          out);
        }
    }
    /* the caller's snprintf cut the last character short (a lone lead byte, or two of three bytes) */
    plot_fit_text("title \xc3", PLOT_SVG, 15, 800, out, sizeof out);
    CHECK_MSG(strcmp(out, "title ") == 0, "'%s'", out);
    plot_fit_text("title \xe2\x82", PLOT_PNG, 2, 800, out, sizeof out);
    CHECK_MSG(strcmp(out, "title ") == 0, "'%s'", out);
    plot_fit_text("title \xe2\x82\xac", PLOT_SVG, 15, 800, out, sizeof out);
    CHECK_MSG(strcmp(out, "title \xe2\x82\xac") == 0, "a whole euro sign is kept: '%s'", out);
    /* an output buffer smaller than the title: still elided and valid */
    char small[24];
    plot_fit_text(title, PLOT_SVG, 15, 5000, small, sizeof small);
    CHECK_MSG(valid_utf8(small) && strstr(small, "...") && strlen(small) < sizeof small, "'%s'", small);
    printf("legend room and title fitting: ok\n");
    return 0;
}
