/* plot_timeline.h - `h5pack-stats plot`: the reader's timeline CSV (docs/stats.md, "Timeline") read back and
 * drawn as stacked panels over time (samples/s; MB/s read and delivered; stall fraction, hit rate and
 * device idle in 0..1), as SVG or PNG. The CSV reader checks every line and names FILE:LINE on a bad one. */
#ifndef H5PACK_STATS_PLOT_TIMELINE_H
#define H5PACK_STATS_PLOT_TIMELINE_H

#include <stddef.h>

/* The columns the plot uses, one array per column, n rows; NAN where a value is "nan" or empty or the
 * column is absent (optional ones). */
typedef struct timeline_csv {
    size_t n;
    double *t, *samples_per_s, *read_mb, *delivered_mb, *stall, *hit_rate, *device_idle;
    int has_delivered, has_device_idle; /* the column exists and has a number somewhere */
} timeline_csv;

/* Reads PATH. Returns 0, or -1 with "PATH:LINE: reason" (or "PATH: reason") in ERR. */
int timeline_csv_read(const char *path, timeline_csv *out, char *err, size_t err_len);
void timeline_csv_free(timeline_csv *c);

/* Writes the panels to PATH: SVG or PNG by its extension (.svg / .png, any case; the PNG has twice the
 * SVG's pixel size). Returns 0, or -1 with the reason in ERR (an unknown extension names the file). */
int plot_timeline_write(const char *path, const char *title, const timeline_csv *c, char *err, size_t err_len);

#endif
