/* csv_reader.h - splitting a CSV text into records and fields (RFC 4180, read leniently where it is safe).
 *
 * Fields are separated by commas; a record ends at LF, CRLF or a lone CR outside quotes. A field may be
 * quoted ("a, b" and "say ""hi""" with doubled quotes inside); a quoted field may span lines. Spaces and
 * tabs around a field are dropped (inside quotes they are kept). A UTF-8 byte order mark at the start is
 * skipped. Records that are empty or hold only spaces are skipped (they are no data). Errors name the
 * line: an unterminated quote, text after a closing quote, a NUL byte. */
#ifndef H5PACK_CSV_READER_H
#define H5PACK_CSV_READER_H

#include <stddef.h>

typedef struct csv_reader {
    const char *text;    /* the whole file (need not be NUL-terminated) */
    size_t len, pos;
    size_t line;         /* 1-based line of the next byte */
    char *buf;           /* the current record's fields, each NUL-terminated */
    size_t buf_len, buf_cap;
    size_t *offsets;     /* field starts in buf */
    const char **fields; /* the current record's fields (pointers into buf) */
    size_t n_fields, field_cap;
} csv_reader;

typedef struct csv_record {
    size_t line;         /* line the record starts on */
    size_t n_fields;
    const char **fields; /* valid until the next csv_next call */
} csv_record;

/* Reads TEXT (LEN bytes). Nothing is copied: TEXT must outlive the reader. */
void csv_open(csv_reader *r, const char *text, size_t len);

/* The next non-empty record: 1, or 0 at the end, or -1 with "line L: reason" in ERR. */
int csv_next(csv_reader *r, csv_record *rec, char *err, size_t err_len);

void csv_close(csv_reader *r);

#endif
