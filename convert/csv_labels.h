/* csv_labels.h - the --labels table: a CSV file whose first column names an image and whose other
 * columns are its numeric labels (CelebA's 40 attributes of 1/-1, regression targets, ...).
 *
 * The first non-empty record is the header: the image column's name, then one name per label column
 * (each non-empty and distinct). Every later record is one image's row with exactly as many fields. A
 * value written as an integer (optional sign, digits) is an integer; one with a decimal point or an
 * exponent (0.5, 1.0, 1e-3) makes the whole table floating point, as pandas.read_csv decides a column's
 * type from how it is written. Errors name FILE:LINE (and :COLUMN, 1-based, counting the image column,
 * for a bad value). Stored types: label_table_type(). */
#ifndef H5PACK_CSV_LABELS_H
#define H5PACK_CSV_LABELS_H

#include <stddef.h>
#include <stdint.h>

typedef union label_value {
    int64_t i; /* integer tables */
    double f;  /* floating-point tables */
} label_value;

typedef struct label_table {
    char *path;           /* the CSV file as given (named in messages) */
    char *key_name;       /* header of the image column */
    size_t n_columns;     /* K: label columns */
    char **names;         /* K column names (UTF-8 as written) */
    size_t n_rows;
    char **keys;          /* per row: the image column, "./" prefixes removed */
    size_t *lines;        /* per row: the line it starts on */
    label_value *values;  /* n_rows x K, row-major */
    int is_float;         /* values[].f (stored float32), else values[].i */
    int64_t min, max;     /* integer tables: smallest and largest value */
} label_table;

/* Reads and checks PATH. Returns 0, or -1 with "PATH:LINE[:COLUMN]: reason" in ERR. */
int label_table_load(const char *path, label_table *t, char *err, size_t err_len);

void label_table_free(label_table *t);

/* The stored type: "float32" for floating-point tables; else the smallest of uint8, uint16, uint32 (no
 * negative value) or int8, int16, int32, then int64, that holds every value. BYTES and IS_SIGNED may be
 * NULL (floats: 4 bytes, signed). */
const char *label_table_type(const label_table *t, int *bytes, int *is_signed);

#endif
