/* csv_reader.h - splitting a CSV text into records and fields (RFC 4180, read leniently where it is safe).
 *
 * Fields are separated by one separator character: a comma (the default), a semicolon or a tab. A record
 * ends at LF, CRLF or a lone CR outside quotes. A field may be quoted ("a, b" and "say ""hi""" with doubled
 * quotes inside); a quoted field may span lines. Spaces around a field are dropped, and tabs too unless
 * the tab is the separator (inside quotes both are kept).
 *
 * CSV_SEP_BLANKS is the whitespace dialect of CelebA's list_attr_celeba.txt: any run of spaces and tabs
 * separates two fields, blanks at the start and end of a line are ignored, and quotes are plain text.
 *
 * A UTF-8 byte order mark at the start is skipped. Records that are empty or hold only blanks are skipped
 * (they are no data). Errors name the line: an unterminated quote, text after a closing quote, a NUL. */
#ifndef H5PACK_CSV_READER_H
#define H5PACK_CSV_READER_H

#include <stddef.h>

#define CSV_SEP_BLANKS ' ' /* runs of spaces and tabs, no quoting */

typedef struct csv_reader {
    const char *text;    /* the whole file (need not be NUL-terminated) */
    size_t len, pos;
    size_t line;         /* 1-based line of the next byte */
    char *buf;           /* the current record's fields, each NUL-terminated */
    size_t buf_len, buf_cap;
    size_t *offsets;     /* field starts in buf */
    const char **fields; /* the current record's fields (pointers into buf) */
    size_t n_fields, field_cap;
    char sep;            /* ',', ';', '\t' or CSV_SEP_BLANKS */
} csv_reader;

typedef struct csv_record {
    size_t line;         /* line the record starts on */
    size_t n_fields;
    const char **fields; /* valid until the next csv_next call */
} csv_record;

/* Reads TEXT (LEN bytes), comma-separated. Nothing is copied: TEXT must outlive the reader. */
void csv_open(csv_reader *r, const char *text, size_t len);

/* The same with separator SEP: ',', ';', '\t' or CSV_SEP_BLANKS (any other value reads as ','). */
void csv_open_sep(csv_reader *r, const char *text, size_t len, char sep);

/* Skips N lines as they are, unparsed (a count line above the header). Returns how many there were
 * (fewer than N when the text ends first). Call it before the first csv_next. */
size_t csv_skip_lines(csv_reader *r, size_t n);

/* The next non-empty record: 1, or 0 at the end, or -1 with "line L: reason" in ERR. */
int csv_next(csv_reader *r, csv_record *rec, char *err, size_t err_len);

void csv_close(csv_reader *r);

/* "comma", "semicolon", "tab" or "space" (for messages). */
const char *csv_sep_name(char sep);

#endif
