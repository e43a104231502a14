/* csv_labels.h - the --labels table: a CSV file whose first column names an image and whose other
 * columns are its numeric labels (CelebA's 40 attributes of 1/-1, regression targets, ...).
 *
 * Separators: see label_csv_format (comma, semicolon, tab, or runs of blanks as in CelebA's original
 * list_attr_celeba.txt). The first non-empty record after the skipped lines is the header: the image
 * column's name, then one name per label column (each non-empty and distinct). Every later record is one
 * image's row with exactly as many fields - or with exactly one field more, for every row, when the header
 * names the label columns only (CelebA's layout: the image column has no name). A
 * value written as an integer (optional sign, digits) is an integer; one with a decimal point or an
 * exponent (0.5, 1.0, 1e-3) makes the whole table floating point, as pandas.read_csv decides a column's
 * type from how it is written. Errors name FILE:LINE (and :COLUMN, 1-based, counting the image column,
 * for a bad value). Stored types: label_table_type(). */
#ifndef H5PACK_CSV_LABELS_H
#define H5PACK_CSV_LABELS_H

#include <stddef.h>
#include <stdint.h>

#include "csv_reader.h"

typedef union label_value {
    int64_t i; /* integer tables */
    double f;  /* floating-point tables */
} label_value;

/* How the file is written. */
typedef struct label_csv_format {
    char sep;          /* ',' ';' '\t', CSV_SEP_BLANKS (' ': runs of spaces and tabs, no quoting), or 0:
                          from the file name (tab for ".tsv", else comma) */
    size_t skip_lines; /* lines before the header, skipped unread (CelebA: 1, the image count) */
} label_csv_format;

#define LABEL_CSV_FORMAT_DEFAULTS {.sep = 0, .skip_lines = 0}

typedef struct label_table {
    char *path;           /* the CSV file as given (named in messages) */
    char *key_name;       /* header of the image column ("" when the header names the label columns only) */
    size_t n_columns;     /* K: label columns */
    char **names;         /* K column names (UTF-8 as written) */
    size_t n_rows;
    char **keys;          /* per row: the image column, "./" prefixes removed */
    size_t *lines;        /* per row: the line it starts on */
    label_value *values;  /* n_rows x K, row-major */
    int is_float;         /* values[].f (stored float32), else values[].i */
    int64_t min, max;     /* integer tables: smallest and largest value */
    char sep;             /* the separator the file was read with */
} label_table;

/* Reads and checks PATH, written as FMT says (NULL: LABEL_CSV_FORMAT_DEFAULTS). Returns 0, or -1 with
 * "PATH:LINE[:COLUMN]: reason" in ERR (and *T empty). */
int label_table_load(const char *path, const label_csv_format *fmt, label_table *t, char *err, size_t err_len);

/* The same for TEXT (LEN bytes, need not be NUL-terminated) already in memory; PATH names it in messages
 * and decides the default separator. */
int label_table_parse(const char *path, const char *text, size_t len, const label_csv_format *fmt, label_table *t,
                      char *err, size_t err_len);

/* The separator a table is read with: SEP, or for 0 the default for PATH (".tsv", any case: tab). */
char label_csv_sep_for(const char *path, char sep);

void label_table_free(label_table *t);

/* The stored type: "float32" for floating-point tables; else the smallest of uint8, uint16, uint32 (no
 * negative value) or int8, int16, int32, then int64, that holds every value. BYTES and IS_SIGNED may be
 * NULL (floats: 4 bytes, signed). */
const char *label_table_type(const label_table *t, int *bytes, int *is_signed);

#endif
