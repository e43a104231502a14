/* timeline_csv.c - reads a timeline CSV back for `h5pack-stats plot` (see plot_timeline.h). The header
 * names the columns, so files of older and newer libraries (more or fewer columns) read the same way;
 * `mb_per_s` is taken for `read_mb_per_s` (the earlier h5pack-stats timeline's name). */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "plot_timeline.h"

#define MAX_COLS 64
#define MAX_LINE 4096

enum { C_T, C_SPS, C_READ, C_DELIV, C_STALL, C_HIT, C_IDLE, C_N };
static const char *const col_names[C_N] = {"t_s", "samples_per_s", "read_mb_per_s", "delivered_mb_per_s",
                                          "stall_fraction", "hit_rate", "device_idle_fraction"};
static const int col_required[C_N] = {1, 1, 1, 0, 1, 1, 0};

/* Splits LINE (newline removed) at commas in place. Returns the number of fields, -1 over MAX_COLS. */
static int split(char *line, char **f)
{
    int n = 0;
    for (char *s = line;; s++) {
        if (n == MAX_COLS)
            return -1;
        f[n++] = s;
        s = strchr(s, ',');
        if (!s)
            return n;
        *s = '\0';
    }
}

/* The next line of F into LINE (MAX_LINE bytes), its end of line removed. Returns its length, -1 at the
 * end of the file, -2 for a line that cannot be a timeline row (ERR says why: over MAX_LINE - 1 bytes,
 * read no further; a NUL byte inside; CR line ends without LF; a read error). */
static long next_line(FILE *f, char *line, const char *path, long lineno, char *err, size_t err_len)
{
    size_t len = 0;
    int ch, nul = 0;
    while ((ch = getc_unlocked(f)) != EOF && ch != '\n') {
        if (len == MAX_LINE - 1) {
            snprintf(err, err_len, "%s:%ld: line longer than %d bytes", path, lineno, MAX_LINE - 1);
            return -2;
        }
        nul |= ch == '\0';
        line[len++] = (char)ch;
    }
    if (ferror(f)) {
        snprintf(err, err_len, "%s:%ld: read error: %s", path, lineno, strerror(errno));
        return -2;
    }
    if (ch == EOF && len == 0)
        return -1;
    if (len && line[len - 1] == '\r')
        len--;
    line[len] = '\0';
    if (nul)
        snprintf(err, err_len, "%s:%ld: a NUL byte: not a text CSV", path, lineno);
    else if (strchr(line, '\r'))
        snprintf(err, err_len, "%s:%ld: a CR inside the line: lines must end with LF or CR LF", path, lineno);
    else
        return (long)len;
    return -2;
}

static int header_columns(char *line, const char *path, int *idx, char **f, int *n_cols, char *err,
                          size_t err_len)
{
    int n = split(line, f);
    if (n < 0) {
        snprintf(err, err_len, "%s:1: more than %d columns: not a timeline CSV", path, MAX_COLS);
        return -1;
    }
    for (int c = 0; c < C_N; c++) {
        idx[c] = -1;
        for (int k = 0; k < n; k++)
            if (strcmp(f[k], col_names[c]) == 0 || (c == C_READ && strcmp(f[k], "mb_per_s") == 0))
                idx[c] = k;
        if (idx[c] < 0 && col_required[c]) {
            snprintf(err, err_len, "%s:1: no column '%s' in the header: not a timeline CSV (h5pack's columns: "
                     "t_s,dt_s,epoch,...; docs/stats.md, \"Timeline\")", path, col_names[c]);
            return -1;
        }
    }
    *n_cols = n;
    return 0;
}

/* "nan" and "" are no value; anything else must be a whole number. */
static int parse_value(const char *s, double *v)
{
    if (!*s || strcmp(s, "nan") == 0 || strcmp(s, "NaN") == 0) {
        *v = NAN;
        return 0;
    }
    char *end;
    errno = 0;
    *v = strtod(s, &end);
    /* ERANGE: an overflow (HUGE_VAL) is refused; an underflow (5e-324) is a tiny number, kept */
    return end == s || *end || (errno == ERANGE && fabs(*v) > DBL_MIN) ? -1 : 0;
}

static int grow(timeline_csv *c, size_t *cap)
{
    size_t n = *cap ? 2 * *cap : 256;
    double **cols[C_N] = {&c->t, &c->samples_per_s, &c->read_mb, &c->delivered_mb, &c->stall, &c->hit_rate,
                          &c->device_idle};
    for (int k = 0; k < C_N; k++) {
        double *p = realloc(*cols[k], n * sizeof **cols[k]);
        if (!p)
            return -1;
        *cols[k] = p;
    }
    *cap = n;
    return 0;
}

/* Every field must be a number (all of the timeline's columns are); the plotted ones are kept. */
static int read_row(char *line, const char *path, long lineno, const int *idx, char *const *names, int n_cols,
                    timeline_csv *c, char *err, size_t err_len)
{
    char *f[MAX_COLS];
    int n = split(line, f);
    if (n != n_cols) {
        snprintf(err, err_len, "%s:%ld: %d fields, the header has %d", path, lineno, n < 0 ? MAX_COLS : n, n_cols);
        return -1;
    }
    double v[MAX_COLS];
    for (int k = 0; k < n; k++)
        if (parse_value(f[k], &v[k])) {
            snprintf(err, err_len, "%s:%ld: column '%.40s': '%.40s' is not a number", path, lineno, names[k], f[k]);
            return -1;
        }
    double *dst[C_N] = {c->t, c->samples_per_s, c->read_mb, c->delivered_mb, c->stall, c->hit_rate, c->device_idle};
    for (int k = 0; k < C_N; k++)
        dst[k][c->n] = idx[k] >= 0 ? v[idx[k]] : NAN;
    if (!isfinite(c->t[c->n]) || c->t[c->n] < 0 || (c->n && c->t[c->n] < c->t[c->n - 1])) {
        snprintf(err, err_len, "%s:%ld: t_s must be a number >= 0 not below the previous row's", path, lineno);
        return -1;
    }
    c->has_delivered |= isfinite(c->delivered_mb[c->n]);
    c->has_device_idle |= isfinite(c->device_idle[c->n]);
    c->n++;
    return 0;
}

static int read_lines(FILE *f, const char *path, timeline_csv *c, char *err, size_t err_len)
{
    char *line = malloc(MAX_LINE), *names[MAX_COLS], head[MAX_LINE];
    size_t cap = 0;
    int idx[C_N], n_cols = 0, rc = -1;
    if (!line) {
        snprintf(err, err_len, "%s: out of memory", path);
        return -1;
    }
    long len = next_line(f, line, path, 1, err, err_len);
    if (len == -1)
        snprintf(err, err_len, "%s: empty file: not a timeline CSV", path);
    if (len < 0)
        goto done;
    memcpy(head, line, (size_t)len + 1);
    if (header_columns(head, path, idx, names, &n_cols, err, err_len))
        goto done;
    for (long lineno = 2; (len = next_line(f, line, path, lineno, err, err_len)) != -1; lineno++) {
        if (len == -2)
            goto done;
        if (len == 0)
            continue; /* a blank line (a trailing one, say) */
        if (c->n == cap && grow(c, &cap)) {
            snprintf(err, err_len, "%s: out of memory", path);
            goto done;
        }
        if (read_row(line, path, lineno, idx, names, n_cols, c, err, err_len))
            goto done;
    }
    if (!c->n)
        snprintf(err, err_len, "%s: a header and no rows: nothing to plot", path);
    else
        rc = 0;
done:
    free(line);
    return rc;
}

int timeline_csv_read(const char *path, timeline_csv *out, char *err, size_t err_len)
{
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "r");
    struct stat st;
    if (f && fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        fclose(f);
        snprintf(err, err_len, "%s: a directory, not a timeline CSV", path);
        return -1;
    }
    if (!f) {
        snprintf(err, err_len, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    int rc = read_lines(f, path, out, err, err_len);
    if (!rc && ferror(f)) {
        snprintf(err, err_len, "%s: read error", path);
        rc = -1;
    }
    fclose(f);
    if (rc)
        timeline_csv_free(out);
    return rc;
}

void timeline_csv_free(timeline_csv *c)
{
    free(c->t), free(c->samples_per_s), free(c->read_mb), free(c->delivered_mb), free(c->stall);
    free(c->hit_rate), free(c->device_idle);
    memset(c, 0, sizeof *c);
}
