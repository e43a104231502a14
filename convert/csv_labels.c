/* csv_labels.c - loading the --labels CSV into a table of numeric labels (see csv_labels.h). */
#include "csv_labels.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csv_reader.h"

static int fail(char *err, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int fail(char *err, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, len, fmt, ap);
    va_end(ap);
    return -1;
}

/* The whole file, NUL-terminated (the reader does not need the NUL; messages do). */
static char *read_file(const char *path, size_t *len, char *err, size_t err_len)
{
    FILE *f = fopen(path, "rb");
    char *text = NULL;
    size_t cap = 0, n = 0;
    if (!f) {
        fail(err, err_len, "%s: %s", path, strerror(errno));
        return NULL;
    }
    for (;;) {
        if (cap - n < 65536) {
            cap = cap ? cap * 2 : 1 << 20;
            char *grown = realloc(text, cap + 1);
            if (!grown) {
                free(text), fclose(f);
                fail(err, err_len, "%s: out of memory", path);
                return NULL;
            }
            text = grown;
        }
        size_t got = fread(text + n, 1, cap - n, f);
        n += got;
        if (got == 0)
            break;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(text);
        fail(err, err_len, "%s: read error", path);
        return NULL;
    }
    text[n] = '\0';
    *len = n;
    return text;
}

/* "./a/./b.jpg" is "a/./b.jpg": only leading "./" go (scan paths never start with one). */
static const char *strip_dot_slash(const char *key)
{
    while (key[0] == '.' && key[1] == '/')
        key += 2 + strspn(key + 2, "/");
    return key;
}

static int take_header(label_table *t, const csv_record *rec, char *err, size_t len)
{
    if (rec->n_fields < 2)
        return fail(err, len, "%s:%zu: the header needs the image column and at least one label column "
                              "(comma-separated)", t->path, rec->line);
    t->n_columns = rec->n_fields - 1;
    t->names = calloc(t->n_columns, sizeof *t->names);
    if (!t->names || !(t->key_name = strdup(rec->fields[0])))
        return fail(err, len, "%s: out of memory", t->path);
    for (size_t j = 0; j < t->n_columns; j++) {
        const char *name = rec->fields[j + 1];
        if (!name[0])
            return fail(err, len, "%s:%zu:%zu: label column %zu has no name", t->path, rec->line, j + 2, j + 1);
        for (size_t i = 0; i < j; i++)
            if (strcmp(t->names[i], name) == 0)
                return fail(err, len, "%s:%zu:%zu: column name '%s' appears twice (columns %zu and %zu)", t->path,
                            rec->line, j + 2, name, i + 2, j + 2);
        if (!(t->names[j] = strdup(name)))
            return fail(err, len, "%s: out of memory", t->path);
    }
    return 0;
}

static int grow_rows(label_table *t, size_t *cap)
{
    if (t->n_rows < *cap)
        return 0;
    size_t c = *cap ? *cap * 2 : 1024;
    char **keys = realloc(t->keys, c * sizeof *keys);
    if (keys)
        t->keys = keys;
    size_t *lines = realloc(t->lines, c * sizeof *lines);
    if (lines)
        t->lines = lines;
    label_value *values = keys && lines ? realloc(t->values, c * t->n_columns * sizeof *values) : NULL;
    if (!values)
        return -1;
    t->values = values;
    *cap = c;
    return 0;
}

/* Optional sign then digits only. */
static int looks_integer(const char *s)
{
    s += *s == '+' || *s == '-';
    return *s && strspn(s, "0123456789") == strlen(s);
}

/* The table turns floating point: every value read so far becomes a double. */
static void switch_to_float(label_table *t, size_t values_so_far)
{
    for (size_t i = 0; i < values_so_far; i++)
        t->values[i].f = (double)t->values[i].i;
    t->is_float = 1;
}

/* Parses S into *V (integer, or double when the table is or turns floating point). WHY on failure. */
static const char *parse_value(label_table *t, const char *s, size_t index, label_value *v)
{
    char *end = NULL;
    if (!s[0])
        return "empty value";
    errno = 0;
    if (looks_integer(s)) {
        long long x = strtoll(s, &end, 10);
        if (errno == ERANGE)
            return "integer out of the int64 range";
        if (t->is_float)
            v->f = (double)x;
        else
            v->i = x;
        return NULL;
    }
    double d = strtod(s, &end);
    if (end == s || *end || strpbrk(s, "xX"))
        return "not a number";
    if (!isfinite(d))
        return "not a finite number";
    if (fabs(d) > FLT_MAX)
        return "out of the float32 range";
    if (!t->is_float)
        switch_to_float(t, index);
    v->f = d;
    return NULL;
}

static int take_row(label_table *t, const csv_record *rec, size_t *cap, char *err, size_t len)
{
    size_t k = t->n_columns;
    if (rec->n_fields != k + 1)
        return fail(err, len, "%s:%zu: %zu fields, but the header has %zu", t->path, rec->line, rec->n_fields,
                    k + 1);
    const char *key = strip_dot_slash(rec->fields[0]);
    if (!key[0])
        return fail(err, len, "%s:%zu:1: empty image name", t->path, rec->line);
    if (grow_rows(t, cap) != 0 || !(t->keys[t->n_rows] = strdup(key)))
        return fail(err, len, "%s: out of memory", t->path);
    t->lines[t->n_rows] = rec->line;
    t->n_rows++; /* now owns its key, even if a value below fails */
    size_t base = (t->n_rows - 1) * k;
    for (size_t j = 0; j < k; j++) {
        const char *why = parse_value(t, rec->fields[j + 1], base + j, &t->values[base + j]);
        if (why)
            return fail(err, len, "%s:%zu:%zu: column '%s': %s: '%s' (expected an integer such as 1 or -1, or a "
                                  "decimal such as 0.25)", t->path, rec->line, j + 2, t->names[j], why,
                        rec->fields[j + 1]);
    }
    return 0;
}

static void find_range(label_table *t)
{
    size_t n = t->n_rows * t->n_columns;
    t->min = t->max = 0;
    for (size_t i = 0; i < n && !t->is_float; i++) {
        int64_t v = t->values[i].i;
        if (i == 0 || v < t->min)
            t->min = v;
        if (i == 0 || v > t->max)
            t->max = v;
    }
}

static int parse_text(label_table *t, const char *text, size_t text_len, char *err, size_t len)
{
    csv_reader r;
    csv_record rec;
    char why[256];
    size_t cap = 0;
    int got, rc = 0, have_header = 0;
    csv_open(&r, text, text_len);
    while (rc == 0 && (got = csv_next(&r, &rec, why, sizeof why)) == 1) {
        if (!have_header)
            rc = take_header(t, &rec, err, len), have_header = 1;
        else
            rc = take_row(t, &rec, &cap, err, len);
    }
    if (rc == 0 && got < 0)
        rc = fail(err, len, "%s:%s", t->path, why + strlen("line ")); /* "PATH:L: reason" */
    if (rc == 0 && !have_header)
        rc = fail(err, len, "%s: empty file (expected a header row: image column, then label columns)", t->path);
    else if (rc == 0 && t->n_rows == 0)
        rc = fail(err, len, "%s: no rows under the header", t->path);
    csv_close(&r);
    return rc;
}

int label_table_load(const char *path, label_table *t, char *err, size_t err_len)
{
    size_t len = 0;
    memset(t, 0, sizeof *t);
    if (!(t->path = strdup(path)))
        return fail(err, err_len, "%s: out of memory", path);
    char *text = read_file(path, &len, err, err_len);
    int rc = text ? parse_text(t, text, len, err, err_len) : -1;
    free(text);
    if (rc == 0)
        find_range(t);
    else
        label_table_free(t);
    return rc;
}

void label_table_free(label_table *t)
{
    for (size_t j = 0; t->names && j < t->n_columns; j++)
        free(t->names[j]);
    for (size_t i = 0; i < t->n_rows; i++)
        free(t->keys[i]);
    free(t->names), free(t->keys), free(t->lines), free(t->values);
    free(t->key_name), free(t->path);
    memset(t, 0, sizeof *t);
}

const char *label_table_type(const label_table *t, int *bytes, int *is_signed)
{
    static const struct { int64_t lo, hi; int bytes, sign; const char *name; } types[] = {
        {0, UINT8_MAX, 1, 0, "uint8"},        {INT8_MIN, INT8_MAX, 1, 1, "int8"},
        {0, UINT16_MAX, 2, 0, "uint16"},      {INT16_MIN, INT16_MAX, 2, 1, "int16"},
        {0, UINT32_MAX, 4, 0, "uint32"},      {INT32_MIN, INT32_MAX, 4, 1, "int32"},
        {INT64_MIN, INT64_MAX, 8, 1, "int64"}};
    int b = 4, s = 1;
    const char *name = "float32";
    for (size_t i = 0; !t->is_float && i < sizeof types / sizeof types[0]; i++)
        if (t->min >= types[i].lo && t->max <= types[i].hi) {
            b = types[i].bytes, s = types[i].sign, name = types[i].name;
            break;
        }
    if (bytes)
        *bytes = b;
    if (is_signed)
        *is_signed = s;
    return name;
}
