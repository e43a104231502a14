/* csv_labels.c - loading the --labels CSV into a table of numeric labels (see csv_labels.h). */
#include "csv_labels.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <strings.h>

#include "csv_reader.h"
#include "errtext.h"

/* ERR gets the reason (errtext.h); returns -1. */
static int fail(char *err, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    h5pack_verrf(0, err, len, fmt, ap);
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
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        fclose(f);
        fail(err, err_len, "%s: a directory, not a CSV file", path);
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

/* Where the header stands while reading: the layout is known only at the first row. */
typedef struct header_state {
    size_t line;        /* the header's line, 0 before it */
    size_t fields;      /* its field count (all kept in t->names until decided) */
    int decided;        /* the first row has fixed the layout */
    int names_only;     /* the header names the label columns only: rows have one field more */
    size_t row_cap;     /* rows allocated */
} header_state;

/* The header record: every field is kept as a name; the first row decides what they name. */
static int take_header(label_table *t, header_state *h, const csv_record *rec, char *err, size_t len)
{
    h->line = rec->line;
    h->fields = rec->n_fields;
    t->names = calloc(rec->n_fields, sizeof *t->names);
    if (!t->names)
        return fail(err, len, "%s: out of memory", t->path);
    for (size_t j = 0; j < rec->n_fields; j++) {
        if (!(t->names[j] = strdup(rec->fields[j])))
            return fail(err, len, "%s: out of memory", t->path);
        t->n_columns = j + 1; /* names[0..j] are owned */
    }
    return 0;
}

typedef struct named_column {
    const char *name;
    size_t col; /* 1-based column of the header line */
} named_column;

static int by_name_then_column(const void *a, const void *b)
{
    const named_column *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : (x->col > y->col) - (x->col < y->col);
}

/* Every label name non-empty and distinct; FIRST_COL is the header column of names[0]. Sorting keeps a
 * header of many thousand columns linear-logarithmic. */
static int check_names(const label_table *t, const header_state *h, size_t first_col, char *err, size_t len)
{
    for (size_t j = 0; j < t->n_columns; j++)
        if (!t->names[j][0])
            return fail(err, len, "%s:%zu:%zu: label column %zu has no name", t->path, h->line, j + first_col, j + 1);
    named_column *sorted = malloc(t->n_columns * sizeof *sorted);
    if (!sorted)
        return fail(err, len, "%s: out of memory", t->path);
    for (size_t j = 0; j < t->n_columns; j++)
        sorted[j] = (named_column){.name = t->names[j], .col = j + first_col};
    qsort(sorted, t->n_columns, sizeof *sorted, by_name_then_column);
    int rc = 0;
    for (size_t j = 1; j < t->n_columns && rc == 0; j++)
        if (strcmp(sorted[j - 1].name, sorted[j].name) == 0)
            rc = fail(err, len, "%s:%zu:%zu: column name '%s' appears twice (columns %zu and %zu)", t->path, h->line,
                      sorted[j].col, sorted[j].name, sorted[j - 1].col, sorted[j].col);
    free(sorted);
    return rc;
}

/* The first row fixes the layout: as many fields as the header (its first field names the image column),
 * or one more (the header names the label columns only, as CelebA's list_attr_celeba.txt). */
static int decide_layout(label_table *t, header_state *h, const csv_record *rec, char *err, size_t len)
{
    const char *sep = csv_sep_name(t->sep);
    h->decided = 1;
    /* CelebA's files start with a row count: taken as a header, it would name one label column "202599" */
    int count_line = h->fields == 1 && t->names[0][0] && strspn(t->names[0], "0123456789") == strlen(t->names[0]);
    if (count_line && rec->n_fields == 2)
        return fail(err, len, "%s:%zu: the header is the number '%s' (a label column with that name?): is it a row "
                    "count? --labels-skip %zu skips it", t->path, h->line, t->names[0], h->line);
    if (rec->n_fields == h->fields + 1 && h->fields >= 1) {
        h->names_only = 1;
        if (!(t->key_name = strdup("")))
            return fail(err, len, "%s: out of memory", t->path);
        return check_names(t, h, 1, err, len);
    }
    if (rec->n_fields != h->fields) {
        return fail(err, len, "%s:%zu: %zu fields, but the header has %zu (a row has as many fields as the header, "
                    "or one more when the header names the label columns only; separator: %s)%s", t->path,
                    rec->line, rec->n_fields, h->fields, sep,
                    count_line ? "; is the header line a row count? --labels-skip 1 skips it" : "");
    }
    if (h->fields < 2)
        return fail(err, len, "%s:%zu: the header needs the image column and at least one label column (read "
                    "%s-separated: --labels-sep sets the separator)", t->path, h->line, sep);
    t->key_name = t->names[0]; /* the image column's name leaves the label names */
    memmove(t->names, t->names + 1, (h->fields - 1) * sizeof *t->names);
    t->n_columns = h->fields - 1;
    return check_names(t, h, 2, err, len);
}

static int grow_rows(label_table *t, size_t *cap)
{
    if (t->n_rows < *cap)
        return 0;
    size_t c = *cap ? *cap * 2 : t->n_columns <= 64 ? 1024 : 16; /* a wide table starts small */
    if (c > SIZE_MAX / sizeof(label_value) / t->n_columns)
        return -1;
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
    /* numpy prints float32's largest value as 3.4028235e+38, a hair above FLT_MAX: values that round to
     * a finite float32 (below FLT_MAX + half its ulp, 2^103) are kept, as that float */
    if (fabs(d) >= (double)FLT_MAX + 0x1p103)
        return "out of the float32 range";
    if (fabs(d) > FLT_MAX)
        d = copysign((double)FLT_MAX, d);
    if (!t->is_float)
        switch_to_float(t, index);
    v->f = d;
    return NULL;
}

/* A row of the wrong length, once the layout is known. */
static int wrong_length(const label_table *t, const header_state *h, const csv_record *rec, char *err, size_t len)
{
    if (!h->names_only)
        return fail(err, len, "%s:%zu: %zu fields, but the header has %zu (separator: %s)", t->path, rec->line,
                    rec->n_fields, h->fields, csv_sep_name(t->sep));
    return fail(err, len, "%s:%zu: %zu fields, but rows have %zu: the image name, then the %zu label columns that "
                "the header (line %zu) names (separator: %s)", t->path, rec->line, rec->n_fields, h->fields + 1,
                h->fields, h->line, csv_sep_name(t->sep));
}

static int take_row(label_table *t, header_state *h, const csv_record *rec, char *err, size_t len)
{
    if (!h->decided && decide_layout(t, h, rec, err, len) != 0)
        return -1;
    size_t k = t->n_columns;
    if (rec->n_fields != k + 1)
        return wrong_length(t, h, rec, err, len);
    const char *key = strip_dot_slash(rec->fields[0]);
    if (!key[0])
        return fail(err, len, "%s:%zu:1: empty image name", t->path, rec->line);
    if (grow_rows(t, &h->row_cap) != 0 || !(t->keys[t->n_rows] = strdup(key)))
        return fail(err, len, "%s: out of memory", t->path);
    t->lines[t->n_rows] = rec->line;
    t->n_rows++; /* now owns its key, even if a value below fails */
    size_t base = (t->n_rows - 1) * k;
    for (size_t j = 0; j < k; j++) {
        const char *why = parse_value(t, rec->fields[j + 1], base + j, &t->values[base + j]);
        int decimal_comma = t->sep == ';' && strchr(rec->fields[j + 1], ',');
        if (why)
            return fail(err, len, "%s:%zu:%zu: column '%s': %s: '%s' (expected an integer such as 1 or -1, or a "
                                  "decimal such as 0.25%s)", t->path, rec->line, j + 2, t->names[j], why,
                        rec->fields[j + 1], decimal_comma ? ", with a decimal point, not a comma" : "");
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

char label_csv_sep_for(const char *path, char sep)
{
    if (sep)
        return sep;
    size_t n = path ? strlen(path) : 0;
    return n >= 4 && strcasecmp(path + n - 4, ".tsv") == 0 ? '\t' : ',';
}

static int parse_records(label_table *t, csv_reader *r, char *err, size_t len)
{
    header_state h = {0};
    csv_record rec;
    char why[256];
    int got, rc = 0;
    while (rc == 0 && (got = csv_next(r, &rec, why, sizeof why)) == 1)
        rc = h.line ? take_row(t, &h, &rec, err, len) : take_header(t, &h, &rec, err, len);
    if (rc != 0)
        return rc;
    if (got < 0)
        return fail(err, len, "%s:%s", t->path, why + strlen("line ")); /* "PATH:L: reason" */
    if (!h.line)
        return fail(err, len, "%s: empty file (expected a header row: image column, then label columns)", t->path);
    if (t->n_rows == 0)
        return fail(err, len, "%s: no rows under the header", t->path);
    return 0;
}

int label_table_parse(const char *path, const char *text, size_t text_len, const label_csv_format *fmt,
                      label_table *t, char *err, size_t len)
{
    static const label_csv_format defaults = LABEL_CSV_FORMAT_DEFAULTS;
    fmt = fmt ? fmt : &defaults;
    memset(t, 0, sizeof *t);
    t->sep = label_csv_sep_for(path, fmt->sep);
    if (!(t->path = strdup(path)))
        return fail(err, len, "%s: out of memory", path);
    csv_reader r;
    csv_open_sep(&r, text, text_len, t->sep);
    size_t skipped = csv_skip_lines(&r, fmt->skip_lines);
    int rc = skipped < fmt->skip_lines
                 ? fail(err, len, "%s: --labels-skip %zu, but the file has only %zu lines", path, fmt->skip_lines,
                        skipped)
                 : parse_records(t, &r, err, len);
    csv_close(&r);
    if (rc == 0)
        find_range(t);
    else
        label_table_free(t);
    return rc;
}

int label_table_load(const char *path, const label_csv_format *fmt, label_table *t, char *err, size_t err_len)
{
    size_t len = 0;
    memset(t, 0, sizeof *t);
    char *text = read_file(path, &len, err, err_len);
    if (!text)
        return -1;
    int rc = label_table_parse(path, text, len, fmt, t, err, err_len);
    free(text);
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
