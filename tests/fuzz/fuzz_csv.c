/* fuzz_csv.c - libFuzzer target for the --labels table: the input bytes are a label file, read by the
 * CSV reader (convert/labels/csv_reader.h) and the label table builder (convert/labels/csv_labels.h) in every separator
 * mode (comma, semicolon, tab, space = runs of blanks, and the default chosen by a ".tsv" name), so any
 * CSV/TSV/txt file can join the corpus as it is. The number of lines skipped above the header (0..2) is
 * derived from the input's length and last byte.
 *
 * Invariants checked (abort() otherwise): a failure always has a non-empty reason in the documented form
 * ("line L: ..." from the reader, "PATH..." from the table) and leaves an empty table; a record has at
 * least one field and never goes back in lines; in space mode no field is empty or holds a blank; a
 * success has at least one row and one named, non-empty, distinct label column, non-empty keys, rows on
 * increasing lines, integer values inside [min, max] or finite float32-range floats, and exactly as many
 * rows and fields as the reader sees (header + rows, each row the image name + K values). Leaks and reads
 * past the input (which is not NUL-terminated) are the sanitizers' part. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "csv_labels.h"
#include "csv_reader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void require(int cond)
{
    if (!cond)
        abort(); /* libFuzzer and the replay driver report the crashing input */
}

/* What the reader saw: records after SKIP lines, the header's and first row's field counts. */
typedef struct reader_view {
    int failed;
    size_t records, header_fields, row_fields, lines_max;
} reader_view;

static reader_view read_all(const char *text, size_t len, char sep, size_t skip)
{
    reader_view v = {0};
    csv_reader r;
    csv_record rec;
    char err[256];
    size_t last_line = 0;
    int rc;
    err[0] = '\0';
    csv_open_sep(&r, text, len, sep);
    csv_skip_lines(&r, skip);
    while ((rc = csv_next(&r, &rec, err, sizeof err)) == 1) {
        require(rec.n_fields >= 1 && rec.fields != NULL && rec.line >= 1 && rec.line > last_line);
        last_line = rec.line;
        for (size_t i = 0; i < rec.n_fields; i++) {
            size_t n = strlen(rec.fields[i]);
            require(n <= len);
            if (sep == CSV_SEP_BLANKS)
                require(n > 0 && !memchr(rec.fields[i], ' ', n) && !memchr(rec.fields[i], '\t', n));
        }
        if (v.records == 0)
            v.header_fields = rec.n_fields;
        else if (v.records == 1)
            v.row_fields = rec.n_fields;
        v.records++;
    }
    require(rc == 0 || (rc == -1 && strncmp(err, "line ", 5) == 0 && strlen(err) > 5));
    v.failed = rc != 0;
    v.lines_max = r.line;
    csv_close(&r);
    return v;
}

static void check_names(const label_table *t)
{
    require(t->n_columns >= 1 && t->names && t->key_name && t->path);
    for (size_t j = 0; j < t->n_columns; j++) {
        require(t->names[j] && t->names[j][0]);
        for (size_t i = 0; i < j && t->n_columns <= 256; i++) /* quadratic: small tables only */
            require(strcmp(t->names[i], t->names[j]) != 0);
    }
}

static void check_table(const label_table *t, const reader_view *v)
{
    check_names(t);
    require(t->n_rows >= 1 && t->keys && t->lines && t->values);
    require(!v->failed && v->records == t->n_rows + 1 && v->row_fields == t->n_columns + 1);
    require(v->header_fields == t->n_columns + 1 || v->header_fields == t->n_columns);
    require(v->header_fields != t->n_columns || t->key_name[0] == '\0'); /* names-only header: no key name */
    for (size_t i = 0; i < t->n_rows; i++) {
        require(t->keys[i] && t->keys[i][0] && strncmp(t->keys[i], "./", 2) != 0);
        require(t->lines[i] >= 1 && t->lines[i] <= v->lines_max && (i == 0 || t->lines[i] > t->lines[i - 1]));
        for (size_t j = 0; j < t->n_columns; j++) {
            label_value x = t->values[i * t->n_columns + j];
            if (t->is_float)
                require(isfinite(x.f) && fabs(x.f) <= FLT_MAX);
            else
                require(x.i >= t->min && x.i <= t->max);
        }
    }
    int bytes = 0, is_signed = 0;
    const char *type = label_table_type(t, &bytes, &is_signed);
    require(type && (bytes == 1 || bytes == 2 || bytes == 4 || bytes == 8));
    require(!t->is_float || (strcmp(type, "float32") == 0 && bytes == 4));
}

/* One mode: the table from TEXT as PATH with FMT, checked against the reader's view of the same text. */
static void fuzz_mode(const char *text, size_t len, const char *path, label_csv_format fmt)
{
    char err[512];
    label_table t;
    err[0] = '\0';
    char sep = label_csv_sep_for(path, fmt.sep);
    require(sep == ',' || sep == ';' || sep == '\t' || sep == CSV_SEP_BLANKS);
    reader_view v = read_all(text, len, sep, fmt.skip_lines);
    if (label_table_parse(path, text, len, &fmt, &t, err, sizeof err) != 0) {
        require(err[0] != '\0' && strncmp(err, path, strlen(path)) == 0);
        require(t.names == NULL && t.keys == NULL && t.values == NULL && t.n_rows == 0 && t.path == NULL);
        return;
    }
    require(t.sep == sep);
    check_table(&t, &v);
    label_table_free(&t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    size_t skip = (size * 7u + (size ? data[size - 1] : 0u)) % 3u;
    static const char seps[] = {',', ';', '\t', CSV_SEP_BLANKS};
    for (size_t i = 0; i < sizeof seps; i++)
        fuzz_mode(text, size, "fuzz.csv", (label_csv_format){.sep = seps[i], .skip_lines = skip});
    fuzz_mode(text, size, "fuzz.csv", (label_csv_format){.sep = 0, .skip_lines = 0}); /* default: comma */
    fuzz_mode(text, size, "fuzz.tsv", (label_csv_format){.sep = 0, .skip_lines = skip}); /* default: tab */
    return 0;
}
