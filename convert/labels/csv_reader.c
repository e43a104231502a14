/* csv_reader.c - records and fields of a CSV text (see csv_reader.h for the dialect). */
#include "csv_reader.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void csv_open_sep(csv_reader *r, const char *text, size_t len, char sep)
{
    memset(r, 0, sizeof *r);
    r->text = text;
    r->len = len;
    r->line = 1;
    r->sep = sep == ';' || sep == '\t' || sep == CSV_SEP_BLANKS ? sep : ',';
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0)
        r->pos = 3; /* UTF-8 byte order mark (Excel writes one) */
}

void csv_open(csv_reader *r, const char *text, size_t len)
{
    csv_open_sep(r, text, len, ',');
}

const char *csv_sep_name(char sep)
{
    switch (sep) {
    case ';': return "semicolon";
    case '\t': return "tab";
    case CSV_SEP_BLANKS: return "space";
    default: return "comma";
    }
}

void csv_close(csv_reader *r)
{
    free(r->buf);
    free(r->offsets);
    free(r->fields);
    memset(r, 0, sizeof *r);
}

static int push_byte(csv_reader *r, char c)
{
    if (r->buf_len == r->buf_cap) {
        size_t cap = r->buf_cap ? r->buf_cap * 2 : 256;
        char *grown = realloc(r->buf, cap);
        if (!grown)
            return -1;
        r->buf = grown;
        r->buf_cap = cap;
    }
    r->buf[r->buf_len++] = c;
    return 0;
}

static int push_field_start(csv_reader *r)
{
    if (r->n_fields == r->field_cap) {
        size_t cap = r->field_cap ? r->field_cap * 2 : 16;
        size_t *grown = realloc(r->offsets, cap * sizeof *grown);
        if (!grown)
            return -1;
        r->offsets = grown;
        r->field_cap = cap;
    }
    r->offsets[r->n_fields++] = r->buf_len;
    return 0;
}

static int at_end(const csv_reader *r)
{
    return r->pos >= r->len;
}

/* Padding around a field: spaces, and tabs unless the tab separates fields. */
static int is_blank(const csv_reader *r, char c)
{
    return c == ' ' || (c == '\t' && r->sep != '\t');
}

static void skip_blanks(csv_reader *r)
{
    while (!at_end(r) && is_blank(r, r->text[r->pos]))
        r->pos++;
}

/* A line break at pos (LF, CRLF, lone CR): its length, else 0. */
static size_t line_break_len(const csv_reader *r)
{
    if (at_end(r))
        return 0;
    char c = r->text[r->pos];
    if (c == '\n')
        return 1;
    if (c == '\r')
        return r->pos + 1 < r->len && r->text[r->pos + 1] == '\n' ? 2 : 1;
    return 0;
}

static int fail(char *err, size_t len, size_t line, const char *what)
{
    snprintf(err, len, "line %zu: %s", line, what);
    return -1;
}

/* A quoted field, pos just after the opening quote; line breaks inside are kept as written. */
static int read_quoted(csv_reader *r, char *err, size_t len)
{
    size_t opened = r->line;
    for (;;) {
        if (at_end(r))
            return fail(err, len, opened, "unterminated quoted field (it runs to the end of the file)");
        char c = r->text[r->pos];
        size_t br = line_break_len(r);
        if (c == '"' && r->pos + 1 < r->len && r->text[r->pos + 1] == '"') {
            r->pos += 2;
            if (push_byte(r, '"') != 0)
                return fail(err, len, r->line, "out of memory");
            continue;
        }
        if (c == '"') {
            r->pos++;
            return 0;
        }
        if (c == '\0')
            return fail(err, len, r->line, "NUL byte in the text");
        for (size_t i = 0; i < (br ? br : 1); i++)
            if (push_byte(r, r->text[r->pos++]) != 0)
                return fail(err, len, r->line, "out of memory");
        r->line += br != 0;
    }
}

static int read_unquoted(csv_reader *r, char *err, size_t len)
{
    size_t start = r->buf_len;
    while (!at_end(r) && r->text[r->pos] != r->sep && !line_break_len(r)) {
        if (r->text[r->pos] == '\0')
            return fail(err, len, r->line, "NUL byte in the text");
        if (push_byte(r, r->text[r->pos++]) != 0)
            return fail(err, len, r->line, "out of memory");
    }
    while (r->buf_len > start && is_blank(r, r->buf[r->buf_len - 1]))
        r->buf_len--;
    return 0;
}

/* One field; *QUOTED says whether it was quoted (an empty quoted field is data, not an empty line). */
static int read_field(csv_reader *r, int *quoted, char *err, size_t len)
{
    if (push_field_start(r) != 0)
        return fail(err, len, r->line, "out of memory");
    skip_blanks(r);
    *quoted = !at_end(r) && r->text[r->pos] == '"';
    int rc = *quoted ? (r->pos++, read_quoted(r, err, len)) : read_unquoted(r, err, len);
    if (rc != 0)
        return rc;
    if (*quoted) {
        skip_blanks(r);
        if (!at_end(r) && r->text[r->pos] != r->sep && !line_break_len(r))
            return fail(err, len, r->line, "text after a closing quote (a quote inside a quoted field is "
                                            "written twice: \"\")");
    }
    return push_byte(r, '\0') == 0 ? 0 : fail(err, len, r->line, "out of memory");
}

/* Consumes the line break at pos, if any. */
static void end_line(csv_reader *r)
{
    size_t br = line_break_len(r);
    r->pos += br;
    r->line += br != 0;
}

/* CSV_SEP_BLANKS: one record of blank-separated words (no quoting), up to and including its line break. */
static int read_words(csv_reader *r, int *empty, char *err, size_t len)
{
    r->buf_len = 0;
    r->n_fields = 0;
    for (skip_blanks(r); !at_end(r) && !line_break_len(r); skip_blanks(r)) {
        if (push_field_start(r) != 0)
            return fail(err, len, r->line, "out of memory");
        for (char c; !at_end(r) && !is_blank(r, c = r->text[r->pos]) && !line_break_len(r); r->pos++) {
            if (c == '\0')
                return fail(err, len, r->line, "NUL byte in the text");
            if (push_byte(r, c) != 0)
                return fail(err, len, r->line, "out of memory");
        }
        if (push_byte(r, '\0') != 0)
            return fail(err, len, r->line, "out of memory");
    }
    end_line(r);
    *empty = r->n_fields == 0;
    return 0;
}

/* One record into buf/offsets, up to and including its line break. */
static int read_record(csv_reader *r, int *empty, char *err, size_t len)
{
    if (r->sep == CSV_SEP_BLANKS)
        return read_words(r, empty, err, len);
    int quoted = 0;
    r->buf_len = 0;
    r->n_fields = 0;
    for (;;) {
        if (read_field(r, &quoted, err, len) != 0)
            return -1;
        if (!at_end(r) && r->text[r->pos] == r->sep) {
            r->pos++;
            continue;
        }
        end_line(r);
        break;
    }
    *empty = r->n_fields == 1 && !quoted && r->buf[0] == '\0';
    return 0;
}

static int publish(csv_reader *r, csv_record *rec, size_t line)
{
    const char **f = realloc(r->fields, r->n_fields * sizeof *f);
    if (!f)
        return -1;
    r->fields = f;
    for (size_t i = 0; i < r->n_fields; i++)
        f[i] = r->buf + r->offsets[i];
    rec->line = line;
    rec->n_fields = r->n_fields;
    rec->fields = f;
    return 0;
}

size_t csv_skip_lines(csv_reader *r, size_t n)
{
    size_t done = 0;
    for (; done < n && !at_end(r); done++) {
        while (!at_end(r) && !line_break_len(r))
            r->pos++;
        end_line(r);
    }
    return done;
}

int csv_next(csv_reader *r, csv_record *rec, char *err, size_t err_len)
{
    while (!at_end(r)) {
        size_t line = r->line;
        int empty = 0;
        if (read_record(r, &empty, err, err_len) != 0)
            return -1;
        if (empty)
            continue;
        if (publish(r, rec, line) != 0)
            return fail(err, err_len, line, "out of memory");
        return 1;
    }
    return 0;
}
