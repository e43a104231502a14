/* cmd_plot.c - `h5pack-stats plot FILE.csv -o OUT.svg|OUT.png`: draws a reader timeline (H5PACK_TIMELINE,
 * or `run --timeline`) over time, as SVG or PNG by the output's extension. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "plot.h"
#include "plot_timeline.h"

int cmd_plot(int argc, char **argv)
{
    const char *csv = NULL, *out = NULL;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage_plot(stdout);
            return 0;
        } else if ((strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0) && i + 1 < argc) {
            out = argv[++i];
        } else if (a[0] == '-' || csv) {
            return usage_error("plot", a);
        } else {
            csv = a;
        }
    }
    if (!csv)
        return usage_error("plot", NULL);
    if (!out) {
        fprintf(stderr, "h5pack-stats plot: missing -o OUT.svg (or OUT.png)\ntry: h5pack-stats plot --help\n");
        return 1;
    }
    char err[512];
    if (plot_format_of(out, err, sizeof err) < 0) { /* before reading a long CSV for nothing */
        fprintf(stderr, "h5pack-stats plot: %s\n", err);
        return 1;
    }
    timeline_csv c;
    if (timeline_csv_read(csv, &c, err, sizeof err) != 0) {
        fprintf(stderr, "h5pack-stats plot: %s\n", err);
        return 2;
    }
    char title[300];
    snprintf(title, sizeof title, "h5pack timeline: %s (%zu rows)", csv, c.n);
    int rc = plot_timeline_write(out, title, &c, err, sizeof err);
    timeline_csv_free(&c);
    if (rc) {
        fprintf(stderr, "h5pack-stats plot: %s\n", err);
        return 2;
    }
    return 0;
}
